/* Small fail-closed readers the document decoders share: each checks one
 * value and, when it is wrong, sets one line "FILE: KEY: is X, expected Y"
 * (GQ_E_USAGE). path names the file; key is the value's full key path
 * (bottlenecks[2].gpus). */
#ifndef GQ_DOC_DECODE_H
#define GQ_DOC_DECODE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "core/status.h"

/* The largest bandwidth a document may hold anywhere (the sanity guard's
 * GQ_SANITY_MAX_GBPS). */
#define GQ_DEC_MAX_GBPS 100000.0

/* "FILE: KEY: is <what v is>, expected <expected>". Returns GQ_E_USAGE. */
int gq_dec_bad(const char *path, const char *key, const json_t *v, const char *expected, gq_err *err);

/* A non-empty list of GPU indices, each below ngpu (GQ_MAX_GPUS when
 * ngpu < 0) and named once, into out[] (*n of them). */
int gq_dec_gpus(const char *path, const char *key, const json_t *v, int ngpu, int *out, int *n, gq_err *err);

/* A finite number in [lo, hi]; null (and absent, when optional) gives NAN
 * when nullable, else is refused. */
int gq_dec_num(const char *path, const char *key, const json_t *v, bool nullable, double lo, double hi,
               double *out, gq_err *err);

/* A string (null and absent give "" when nullable) into buf. */
int gq_dec_str(const char *path, const char *key, const json_t *v, bool nullable, char *buf, size_t n,
               gq_err *err);

/* One of names[0..count-1], exact case; its index into *out. */
int gq_dec_enum(const char *path, const char *key, const json_t *v, const char *const *names, int count,
                int *out, gq_err *err);

/* A boolean; absent or null gives def. */
int gq_dec_bool(const char *path, const char *key, const json_t *v, bool def, bool *out, gq_err *err);

#endif
