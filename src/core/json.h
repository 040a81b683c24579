/* The JSON conventions every layer shares. src/core's one library
 * dependency is jansson, for these alone.
 *
 * The number rule: a figure is written as a JSON real when it is finite and
 * known; NaN, an infinity, or a value the caller marks unknown is null, never
 * 0 and never a string. Readers treat null as "not measured". */
#ifndef GQ_CORE_JSON_H
#define GQ_CORE_JSON_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

/* A new reference: json_real(v) when v is finite, else json_null(). */
json_t *gq_json_num(double v);
/* What a value is, for messages: "an object", "a list", "a string", "a
 * number", "a boolean", "null", or "missing" for NULL. */
const char *gq_json_type_word(const json_t *v);
/* gq_json_num(v) when known is true, else json_null(). */
json_t *gq_json_num_if(double v, bool known);

/* json_loadf, reading f in blocks (fread) rather than a character at a time:
 * the same result, errors and line numbers, at a fraction of the cost on
 * large documents. f may be a pipe or a FIFO; ferror(f) says whether reading
 * failed. */
json_t *gq_json_loadf(FILE *f, size_t flags, json_error_t *je);
/* gq_json_loadf reading at most max bytes: a stream (a FIFO, a pipe) that
 * holds more fails, with *over set, without reading further. */
json_t *gq_json_loadf_max(FILE *f, size_t flags, long long max, bool *over, json_error_t *je);

#endif
