/* YAML documents read as JSON values (libyaml's event parser), so that every
 * reader that walks a json_t (expectations files) takes YAML too, with its
 * comments, and checks it with the same rules and messages.
 *
 * What is read: one document of mappings, sequences and scalars. A plain
 * scalar is null ("", ~, null), a boolean (true/false, any case), an integer,
 * a finite real, else a string; a quoted scalar is always a string. Refused,
 * each with one line naming the file and the line: anchors and aliases (no
 * expansion bombs), more than one document, a key that is not a scalar, a
 * duplicate key, nesting deeper than 64, and what libyaml cannot parse.
 */
#ifndef GQ_CORE_YAML_H
#define GQ_CORE_YAML_H

#include <stddef.h>

#include <jansson.h>

#include "core/status.h"

/* Parse text[0..len) (name for messages) into a new JSON value in *out.
 * GQ_E_USAGE on any of the above; GQ_E_NOMEM. */
int gq_yaml_to_json(const char *text, size_t len, const char *name, json_t **out, gq_err *err);

/* Whether a file should be read as YAML: its name ends in .yaml or .yml, or
 * its first character that is not blank or a comment is not '{' or '['. */
int gq_yaml_looks_like(const char *path, const char *text);

#endif
