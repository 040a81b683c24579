/* Comparing saved runs: the same figures from several runs or nodes lined
 * up, with deltas against the first (the baseline) and regressions flagged
 * beyond a threshold (docs/card.md "Comparing runs").
 *
 * A figure is identified by its key: the record's test, method, endpoints,
 * GPU set (aggregates), "sum" for direction sums, and buffer size, e.g.
 * "host_to_device_set ce host:local->gpu:3 256 MiB". Card documents add the
 * stress figures per GPU (max temperature, average SM clock) and the
 * verdict. A figure present in only some runs is listed apart, not compared.
 * Bandwidth and clocks regress when they fall by more than the threshold;
 * latency and temperature when they rise by more than it. Invalid records
 * (impossible, overlap, error) are not compared.
 */
#ifndef GQ_ANALYSIS_COMPARE_H
#define GQ_ANALYSIS_COMPARE_H

#include <stdbool.h>

#include "core/record.h"
#include "core/status.h"
#include "core/types.h"

#define GQ_CMP_MAX_RUNS 64

typedef struct gq_cmp_fig {
    char key[200];
    char unit[8]; /* "GB/s", "ns", "°C", "MHz" */
    bool higher_is_better;
    double v[GQ_CMP_MAX_RUNS];         /* NAN: absent in that run */
    double delta_pct[GQ_CMP_MAX_RUNS]; /* against run 0; NAN for run 0 and absent values */
    bool regression[GQ_CMP_MAX_RUNS];
    int present; /* runs that have it */
} gq_cmp_fig;

typedef struct gq_compare {
    double threshold_pct; /* > 0 */
    int nruns;
    char label[GQ_CMP_MAX_RUNS][256]; /* file name */
    char host[GQ_CMP_MAX_RUNS][64];
    char when[GQ_CMP_MAX_RUNS][40];
    char kind[GQ_CMP_MAX_RUNS][24];
    char verdict[GQ_CMP_MAX_RUNS][8]; /* card verdict or "" */
    int nfig, capfig;
    gq_cmp_fig *fig;  /* owned */
    int nregressions; /* figures with a regression in some run */
    int ncompared;    /* figures present in every run */
} gq_compare;

/* What a saved document adds to its records, decoded by its reader
 * (render/analysis_render.h gq_cmp_doc_from_json): where and when it ran,
 * its card's verdict, and the stress figures per GPU (NAN: not measured). */
typedef struct gq_cmp_stress_gpu {
    int gpu;
    double temp_max_c, sm_clock_avg_mhz, power_avg_w;
} gq_cmp_stress_gpu;

typedef struct gq_cmp_doc {
    char host[64];
    char when[40];
    char kind[24];
    char verdict[12]; /* the card's, "" when none */
    int nstress;
    gq_cmp_stress_gpu stress[GQ_MAX_GPUS];
} gq_cmp_doc;

void gq_compare_init(gq_compare *c, double threshold_pct);
void gq_compare_free(gq_compare *c);

/* Add one run: its label, its records, and what its document adds (may be
 * NULL). GQ_E_USAGE beyond GQ_CMP_MAX_RUNS, GQ_E_NOMEM. */
int gq_compare_add(gq_compare *c, const char *label, const gq_recordset *rs, const gq_cmp_doc *doc,
                   gq_err *err);

/* Deltas and regressions (after the last add). */
void gq_compare_finish(gq_compare *c);

/* The key of a record (into buf). */
const char *gq_compare_key(const gq_record *r, char *buf, size_t n);

#endif
