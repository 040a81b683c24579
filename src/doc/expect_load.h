/* Loading expectations (analysis/expect.h's gq_expect) from a file or text,
 * JSON or YAML: the codec of the expectations document. */
#ifndef GQ_DOC_EXPECT_LOAD_H
#define GQ_DOC_EXPECT_LOAD_H

#include "analysis/expect.h"
#include "core/status.h"

/* Parse an expectations document from text / from a file into *ex (caller's
 * storage). GQ_E_USAGE for malformed JSON, unknown keys (with a did-you-mean),
 * wrong types, and warn/fail thresholds in the wrong order; GQ_E_IO when the
 * file cannot be read. The message names the file, the model and the key. */
int gq_expect_parse(const char *text, const char *name, gq_expect *ex, gq_err *err);
int gq_expect_load(const char *path, gq_expect *ex, gq_err *err);

#endif
