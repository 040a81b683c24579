/* A saved fleet document (`gpuqual fleet --json`) read back fail closed for
 * `gpuqual report fleet.json`: its fleet section's nodes and thresholds, and
 * each node entry as the payload its rank sent, so the report goes through
 * rank 0's gather step again. */
#ifndef GQ_DOC_FLEET_DOC_H
#define GQ_DOC_FLEET_DOC_H

#include <jansson.h>
#include <stdbool.h>

#include "core/status.h"

typedef struct gq_fleet_doc {
    const json_t *nodes; /* borrowed: fleet.nodes, 1 .. 2^24 entries */
    int n;
    double threshold_pct; /* above 0, below 1000 */
    double threshold_c;   /* 0: not given or out of range (0..1000) */
} gq_fleet_doc;

/* The fleet section of root; GQ_E_USAGE naming path and the field when it
 * is missing or not what it must be. */
int gq_fleet_doc_read(const json_t *root, const char *path, gq_fleet_doc *out, gq_err *err);

/* Node entry i as its rank's payload (*p, new reference); *is_error when the
 * entry is an error (the rank sent no card). GQ_E_USAGE for an entry that is
 * not an object, GQ_E_NOMEM. */
int gq_fleet_doc_payload(const gq_fleet_doc *d, const char *path, int i, json_t **p, bool *is_error,
                         gq_err *err);

#endif
