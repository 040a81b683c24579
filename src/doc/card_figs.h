/* A card document as its renderers read it, typed (render/card_render.h):
 * the typed card (gq_card, doc/card_codec.h) and, beside it, everything the
 * Markdown card, the terminal summary and the HTML page print of the saved
 * document: its head (run facts), the card section's identity, plan,
 * matrices, concurrent pairs, host paths and subsets, sweeps and their fits,
 * latency, domains, placement and collectives, the document's bottlenecks,
 * and its stress section (per GPU, the node, the findings and the time
 * series). Decoded once by gq_card_doc_from_json (doc/card_figs_json.c), the
 * only place these fields are read by key; the renderers read no JSON.
 *
 * Fields read as the renderers read them from the JSON before: a number is
 * NAN when absent or not a number; a string is NULL when absent or not a
 * string (the renderer prints its own default), and kept whole otherwise; a
 * flag is true only where the document says true (an "invalid" flag: only
 * where "valid" is false); a list has 0 entries when absent or not a list, and
 * an entry that is not an object reads as one with every field absent. A GPU
 * index is the entry's integer, 0 when it is not one. Lists are read whole
 * unless a bound is named (the most the renderers print). Everything is owned
 * by the gq_card_doc (one allocation list), freed by gq_card_doc_free. */
#ifndef GQ_DOC_CARD_FIGS_H
#define GQ_DOC_CARD_FIGS_H

#include <stdbool.h>

#include "analysis/card.h"
#include "core/status.h"
#include "core/types.h"

/* The bounds the renderers read lists to. */
#define GQ_CF_MAX_NUMS GQ_MAX_GPUS   /* per-GPU figures (a side's gbps, a subset's per_gpu, host lists) */
#define GQ_CF_MAX_SWEEP 128          /* points of a sweep */
#define GQ_CF_MAX_SERIES GQ_MAX_GPUS /* GPUs of the stress series */
#define GQ_CF_MAX_SAMPLES 4096       /* samples of one GPU's stress series */

/* A list of numbers: each entry's value, NAN where not a number. */
typedef struct gq_cf_nums {
    int n;
    double *v;
} gq_cf_nums;

/* A list of GPU indices: each entry's integer (0 where not an integer), and
 * whether it is one. */
typedef struct gq_cf_ints {
    int n;
    long long *v;
    bool *is_int;
} gq_cf_ints;

/* A square matrix {id, title, unit, staged, gpus, values}: n is 0 unless
 * "gpus" and "values" are lists of 1..GQ_MAX_GPUS entries, each row a list of
 * n; label[i] is gpus[i] when an integer, else i; vals n*n, row-major, NAN
 * where not a number. */
typedef struct gq_cf_matrix {
    bool present; /* an object */
    const char *id, *title, *unit;
    bool staged;
    int n;
    long long label[GQ_MAX_GPUS];
    double *vals;
} gq_cf_matrix;

typedef struct gq_cf_id_gpu {
    long long index;  /* "index" as an integer */
    double index_num; /* "index" as a number */
    const char *name, *uuid, *vbios, *serial, *ecc_mode, *mig_mode, *persistence_mode;
    double memory_mib, power_limit_w, nvlinks, numa_node;
    double gen, width, gen_max, width_max; /* pcie */
    bool under_load;
} gq_cf_id_gpu;

typedef struct gq_cf_identity {
    bool present; /* an object */
    int ngpus;
    gq_cf_id_gpu *gpus;
    const char *driver, *cuda_driver_str, *cuda_runtime_str, *cpu, *gpuqual;
    double numa_nodes;
    bool vm;
} gq_cf_identity;

typedef struct gq_cf_plan_step {
    const char *title; /* "title", else "step" */
    const char *status, *note;
    double est_s, elapsed_s;
} gq_cf_plan_step;

/* One side of the concurrent pairs (within, across domains). */
typedef struct gq_cf_pairs_side {
    bool present; /* an object */
    int npairs;
    long long (*pair)[2];           /* each entry's first and second integer */
    gq_cf_nums gbps, isolated_gbps; /* at most GQ_CF_MAX_NUMS */
    double aggregate_gbps;
    bool invalid;
} gq_cf_pairs_side;

typedef struct gq_cf_pairs {
    bool present;             /* an object */
    gq_cf_pairs_side side[2]; /* within, across */
    double ratio;
} gq_cf_pairs;

typedef struct gq_cf_subset {
    gq_cf_ints gpus;
    const char *direction, *why;
    gq_cf_nums per_gpu; /* at most GQ_CF_MAX_NUMS */
    double aggregate_gbps, sum_alone_gbps;
    bool invalid, contended;
} gq_cf_subset;

typedef struct gq_cf_host {
    bool present; /* an object */
    gq_cf_ints gpus;
    gq_cf_nums alone_h2d, alone_d2h, all_h2d, all_d2h; /* at most GQ_CF_MAX_NUMS */
    bool have_all;                                     /* "all" is an object */
    double all_h2d_aggregate_gbps, all_d2h_aggregate_gbps;
    bool all_h2d_invalid, all_d2h_invalid;
    bool have_bidir; /* "bidir" is an object */
    double bidir_h2d_aggregate_gbps, bidir_d2h_aggregate_gbps, bidir_sum_gbps;
    int nsubsets;
    gq_cf_subset *subsets;
} gq_cf_host;

typedef struct gq_cf_sweep {
    const char *label;
    bool have_fit; /* "fit" is an object */
    double fixed_us, asymptotic_gbps, half_bytes;
    gq_cf_nums bytes, gbps; /* at most GQ_CF_MAX_SWEEP */
} gq_cf_sweep;

typedef struct gq_cf_latency {
    bool present;   /* an object */
    bool have_host; /* "host" is an object */
    gq_cf_ints host_gpus;
    gq_cf_nums host_ns; /* at most GQ_CF_MAX_NUMS */
    gq_cf_matrix p2p;
} gq_cf_latency;

typedef struct gq_cf_stress_gpu {
    long long gpu;
    double temp_avg_c, temp_max_c, power_avg_w, power_limit_w, sm_clock_avg_mhz, power_capped_pct;
    double faulty_elements;
    bool thermal_slowdown;
    double gen_min_loaded, width_min_loaded; /* pcie */
    bool trained_down;
    double ecc_uncorrected, ecc_corrected; /* errors */
    const char *verdict, *error;
} gq_cf_stress_gpu;

typedef struct gq_cf_stress_finding {
    const char *level, *text;
} gq_cf_stress_finding;

/* One GPU's time series (series.gpus[k]), each list at most GQ_CF_MAX_SAMPLES. */
typedef struct gq_cf_series {
    long long gpu;
    gq_cf_nums t_s, temp_c, power_w, sm_clock_mhz;
} gq_cf_series;

typedef struct gq_cf_stress {
    bool present; /* an object */
    double elapsed_s;
    const char *precision;
    int ngpus;
    gq_cf_stress_gpu *gpus;
    bool have_node; /* "node" is an object */
    double power_total_avg_w, clock_spread;
    int nfindings;
    gq_cf_stress_finding *findings;
    int nseries; /* at most GQ_CF_MAX_SERIES */
    gq_cf_series *series;
} gq_cf_stress;

typedef struct gq_cf_domains {
    bool present; /* an object */
    int ndomains;
    gq_cf_ints *domains;
    bool split, no_p2p;
    double within_min_gbps, across_max_gbps;
} gq_cf_domains;

typedef struct gq_cf_bottleneck {
    gq_cf_ints gpus;
    const char *direction;
    const char *explanation; /* "explanation", else "explained_by" */
    double capacity_gbps, sum_alone_gbps;
} gq_cf_bottleneck;

typedef struct gq_cf_pl_pair {
    double prefill, decode, predicted_gbps, measured_gbps;
} gq_cf_pl_pair;

typedef struct gq_cf_placement {
    bool present; /* an object */
    int npairs;
    gq_cf_pl_pair *pairs;
    gq_cf_ints workers; /* "offload" (a list, or its "workers"): each entry's "gpu", or the entry */
    double gain;        /* "gain" as a number, else its "pairs" */
    int nnotes;
    const char **notes;
} gq_cf_placement;

typedef struct gq_cf_coll_group {
    gq_cf_ints gpus;
    double alone_busbw_gbps, at_once_busbw_gbps;
} gq_cf_coll_group;

typedef struct gq_card_doc {
    gq_card card; /* the typed card (gq_card_from_json) */
    /* the document's head */
    const char *timestamp, *version, *git;
    bool simulated, incomplete;
    /* the card section's run facts */
    const char *hostname, *stopped_at;
    double budget_s, planned_s, elapsed_s;
    int nplan;
    gq_cf_plan_step *plan;
    gq_cf_identity identity;
    int nmatrices;
    gq_cf_matrix *matrices;
    gq_cf_pairs pairs;
    gq_cf_host host;
    int nsweeps;
    gq_cf_sweep *sweeps;
    gq_cf_latency latency;
    gq_cf_domains domains;
    gq_cf_placement placement;
    int ngroups; /* collectives.groups */
    gq_cf_coll_group *groups;
    /* the document's sections beside the card */
    int nbottlenecks;
    gq_cf_bottleneck *bottlenecks;
    gq_cf_stress stress;
    /* what the decoder allocated, freed together */
    bool have_card;
    int nblocks, capblocks;
    void **blocks;
} gq_card_doc;

struct json_t;

/* The card document root decoded into a new *out (gq_card_doc_free it).
 * GQ_E_USAGE when root is not an object ("not a gpuqual document (expected a
 * JSON object)") or has no "card" object ("the document has no \"card\"
 * section (kind 'K')"); gq_card_from_json's refusal of the card section (its
 * file named "the card"); GQ_E_NOMEM. *out is NULL on error. */
int gq_card_doc_from_json(const struct json_t *root, gq_card_doc **out, gq_err *err);

void gq_card_doc_free(gq_card_doc *d);

#endif
