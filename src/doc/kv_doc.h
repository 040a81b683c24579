/* The codec of `gpuqual kv`'s section: the model, payload, rates, estimates
 * and measured handoffs of a gq_kv_result, as `gpuqual kv --json` saves
 * them. */
#ifndef GQ_DOC_KV_DOC_H
#define GQ_DOC_KV_DOC_H

#include <jansson.h>

#include "analysis/kv.h"

/* New reference, or NULL when out of memory. */
json_t *gq_kv_result_to_json(const gq_kv_result *k);

#endif
