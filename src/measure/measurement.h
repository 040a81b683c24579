/* What the harness measures: a group of flows run together (gq_measurement).
 * Its own header so that the analyses that plan measurements (probes,
 * placement) describe them without the harness.
 */
#ifndef GQ_MEASURE_MEASUREMENT_H
#define GQ_MEASURE_MEASUREMENT_H

#include <stdbool.h>

#include "core/flow.h"

#define GQ_MAX_FLOWS 512

typedef struct gq_measurement {
    char test[64]; /* record "test" field, e.g. "host_to_device_memcpy_ce" */
    int nflows;
    gq_flow flows[GQ_MAX_FLOWS];
    bool aggregate;      /* add an aggregate record over all flows (concurrent tests) */
    bool direction_sums; /* add per-direction aggregate + a sum record (bidirectional tests) */
    /* Flows with report[i] == false still run (e.g. the interfering direction of
     * nvbandwidth's *_bidirectional_* tests) but produce no per-flow record. */
    bool report[GQ_MAX_FLOWS];
} gq_measurement;

#endif
