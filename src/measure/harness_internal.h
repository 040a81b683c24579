/* The harness's private state across the files of one measurement:
 * harness.c runs the rounds (calibration, timing, verification, latency) and
 * harness_emit.c turns the state into records. Nothing outside src/measure
 * includes this.
 */
#ifndef GQ_MEASURE_HARNESS_INTERNAL_H
#define GQ_MEASURE_HARNESS_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "measure/harness.h"

#define NDIR 4

/* Per-flow state across rounds. */
typedef struct flow_state {
    double rate[GQ_MAX_ROUNDS];
    double window[GQ_MAX_ROUNDS];
    int n;
    bool dead; /* failed once: no more samples */
    char error[200];
    bool verify_failed;
    uint64_t bad_offset;
    int numa_actual;
} flow_state;

typedef struct hctx {
    const gq_measurement *m;
    flow_state fs[GQ_MAX_FLOWS];
    double agg[NDIR][GQ_MAX_ROUNDS]; /* per-direction aggregate of reported flows */
    bool agg_broken[NDIR];
    double sum[GQ_MAX_ROUNDS];
    bool sum_broken;
    double aggwin[GQ_MAX_ROUNDS]; /* longest window of the round */
    int rounds;                   /* completed rounds */
    double min_overlap;
    int overlap_retries;   /* rounds re-run because their windows overlapped < GQ_OVERLAP_MIN */
    bool mode_switched;    /* a counted round failed the overlap rule: the rest run by duration */
    char whole_error[200]; /* run() failed as a whole */
    bool interrupted;
    unsigned dir_present; /* directions among reported flows */
    gq_contam contam;     /* the clean room's observations, before and after the rounds */
} hctx;

/* Build and push every record of the measurement (harness_emit.c). */
int gq_harness_emit(const hctx *c, gq_backend *be, const gq_topo *topo, const gq_harness_opts *o,
                    gq_recordset *out, gq_journal *j, int group, double t0, gq_err *jerr, bool *jfailed);

/* Record helpers shared by both files (harness_emit.c). */
void gq_hrec_add_flow_gpus(gq_record *r, const gq_flow *f);
void gq_hrec_set_error(gq_record *r, unsigned flag, const char *msg);
void gq_hrec_fill_value(gq_record *r, const double *samples, int n);
int gq_hrec_host_numa_req(const gq_flow *f);

#endif
