/* Records <-> JSON: the codec the journal and every saved document use
 * (the contract in core/record.h; field by field in docs/json.md). */
#ifndef GQ_MEASURE_RECORD_JSON_H
#define GQ_MEASURE_RECORD_JSON_H

#include <jansson.h>
#include <stddef.h>

#include "core/record.h"
#include "core/json.h"
#include "core/status.h"

/* to_json returns a new reference (NULL on allocation failure). from_json
 * rejects missing or mistyped required fields with a message naming the
 * field. */
json_t *gq_record_to_json(const gq_record *r);
int gq_record_from_json(const json_t *j, gq_record *r, gq_err *err);

/* "gpu:N", "host:N", "host:local", and "gpu:*" / "host:*" for GQ_EP_MANY. */
const char *gq_rec_endpoint(gq_endpoint e, char *buf, size_t n);

/* Unix seconds as "2026-11-30T12:34:56.789Z" (UTC, milliseconds). */
const char *gq_iso_time(double unix_s, char *buf, size_t n);

#endif
