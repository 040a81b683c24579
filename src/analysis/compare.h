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
 * latency when it rises by more than it. Temperatures are compared in
 * degrees: a rise of more than threshold_c (°C, absolute) regresses.
 * Invalid records (impossible, overlap, error) are not compared.
 *
 * Runs on different GPU models, or whose stress ran for different durations,
 * are not comparable: gq_compare_check refuses them unless across_models is
 * set; then every figure against such a run is marked `across` (the GPU
 * model for every figure, the stress duration for the stress figures), its
 * difference beyond the threshold is `differs`, never a regression.
 */
#ifndef GQ_ANALYSIS_COMPARE_H
#define GQ_ANALYSIS_COMPARE_H

#include <stdbool.h>

#include "core/record.h"
#include "core/status.h"
#include "core/types.h"

#define GQ_CMP_MAX_RUNS 64
#define GQ_CMP_TEMP_THRESHOLD_C 5.0 /* default: a rise of more than 5 °C */

/* Why a figure of a run is not comparable with the baseline's. */
typedef enum gq_cmp_across {
    GQ_CMP_SAME = 0,
    GQ_CMP_ACROSS_MODEL,  /* different GPU models */
    GQ_CMP_ACROSS_STRESS, /* a stress figure from a stress of another duration */
} gq_cmp_across;

typedef struct gq_cmp_fig {
    char key[200];
    char unit[8]; /* "GB/s", "ns", "°C", "MHz" */
    bool higher_is_better;
    double v[GQ_CMP_MAX_RUNS];         /* NAN: absent in that run */
    double delta_pct[GQ_CMP_MAX_RUNS]; /* against run 0; NAN for run 0, absent values and °C figures */
    double delta_abs[GQ_CMP_MAX_RUNS]; /* v - v[0] in the figure's unit; NAN as above */
    bool regression[GQ_CMP_MAX_RUNS];
    gq_cmp_across across[GQ_CMP_MAX_RUNS];
    bool differs[GQ_CMP_MAX_RUNS]; /* across, and worse beyond the threshold */
    bool absolute;                 /* compared in its unit (°C), not in % */
    bool stress;                   /* a stress figure (its run's stress duration matters) */
    int present;                   /* runs that have it */
} gq_cmp_fig;

typedef struct gq_compare {
    double threshold_pct; /* > 0 */
    int nruns;
    char label[GQ_CMP_MAX_RUNS][256]; /* file name */
    char host[GQ_CMP_MAX_RUNS][64];
    char when[GQ_CMP_MAX_RUNS][40];
    char kind[GQ_CMP_MAX_RUNS][24];
    char verdict[GQ_CMP_MAX_RUNS][12]; /* card verdict or "" */
    char model[GQ_CMP_MAX_RUNS][128];  /* GPU model(s): "NVIDIA H200", "" unknown */
    double stress_s[GQ_CMP_MAX_RUNS];  /* stress duration asked, NAN: no stress */
    double threshold_c;                /* °C; > 0 */
    bool across_models;                /* compare runs that are not comparable, marking them */
    int ndiffers;                      /* figures that differ beyond the threshold across runs */
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
    char model[128];  /* its GPU model(s): the distinct gpus[].name joined with " + " ("" unknown) */
    double stress_s;  /* the stress duration asked; 0 when it had no stress */
    int nstress;
    gq_cmp_stress_gpu stress[GQ_MAX_GPUS];
} gq_cmp_doc;

void gq_compare_init(gq_compare *c, double threshold_pct);
void gq_compare_free(gq_compare *c);

/* Add one run: its label, its records, and what its document adds (may be
 * NULL). GQ_E_USAGE beyond GQ_CMP_MAX_RUNS, GQ_E_NOMEM. */
int gq_compare_add(gq_compare *c, const char *label, const gq_recordset *rs, const gq_cmp_doc *doc,
                   gq_err *err);

/* Runs that are not comparable (GPU model, stress duration) unless
 * c->across_models: GQ_E_USAGE naming both runs and the difference. */
int gq_compare_check(const gq_compare *c, gq_err *err);

/* Deltas and regressions (after the last add). */
void gq_compare_finish(gq_compare *c);

/* Two stress durations the same (within 1 %, both absent counts as same)? */
bool gq_compare_same_stress(double a, double b);

/* The key of a record (into buf). */
const char *gq_compare_key(const gq_record *r, char *buf, size_t n);

#endif
