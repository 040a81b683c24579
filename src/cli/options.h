/* The option parser lives in core (core/options.h) so fuzzers can link it;
 * what needs jansson (the options in force as JSON) stays here. */
#ifndef GQ_CLI_OPTIONS_H
#define GQ_CLI_OPTIONS_H

#include "core/options.h"

/* The options in force as a JSON object {name: value} for saved documents
 * (every option of the tables, defaults included). New reference. */
struct json_t;
struct json_t *gq_opts_to_json(const gq_opt *const *tabs, int ntab, const void *src);
/* The same for the options of a set (less its `omit`). */
struct json_t *gq_optset_to_json(const gq_optset *set, const void *src);

#endif
