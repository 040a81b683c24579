/* The acceptance card (issue 8, seed 001 §9): the whole qualification of a
 * node in one run, planned to fit a time budget, composed into one document.
 *
 * Three layers, usable apart:
 *  - gq_card_plan_make(): which steps run and at what quality (rounds, round
 *    length, sweep points) so that the estimate fits the budget. Pure; refuses
 *    a budget too small for even the identity checks, saying what fits.
 *  - gq_card_execute() (exec/card_run.h): runs the plan's steps through the harness, the stress
 *    analysis and the placement verification; keeps every record; stops
 *    cleanly on Ctrl-C (what was measured is kept, the run is marked
 *    incomplete). Never prints: progress goes through a callback.
 *  - gq_card_compose() (doc/card_compose.h): pure function of the topology, the records and the
 *    saved sections (stress, placement): derives the figures (matrices,
 *    concurrent pairs, host paths, sweeps, latency), the domains and
 *    bottlenecks, judges them (analysis/expect.h), and writes the "card"
 *    section with seed 001 §9's rows and the findings in plain sentences.
 *    `gpuqual report` runs the same function on saved documents. The figures
 *    are composed in card_compose.c (typed), written by doc/card_compose.c, the facts and the
 *    typed views of the sections (gq_card_views) read in doc/card_facts_json.c and
 *    doc/card_views_json.c, the verdicts, rows and findings (one function per row) judged from
 *    them in card_judge.c, card_rows.c and card_findings.c.
 *
 * Steps (in order; analysis/card_steps.h lists them, one line each): identity,
 * matrix (one ordered pair at a time; P2P read, host-staged where P2P is
 * absent), host (each GPU alone, both directions), contention (host groups
 * from the tree and the domains, all GPUs at once, pairs inside domains;
 * concurrent GPU pairs within and across domains), bidir (both host
 * directions at once on every GPU), sweep (fastest and slowest path, 4 KiB ..
 * 1 GiB), latency (host<->GPU, GPU<->GPU), placement (solve for the roles,
 * then run the implied pattern and the naive one), collectives (place --tp 2),
 * stress. The test names in records are listed in docs/card.md.
 */
#ifndef GQ_ANALYSIS_CARD_H
#define GQ_ANALYSIS_CARD_H

#include <stdbool.h>
#include <stdint.h>

#include "analysis/card_types.h"
#include "analysis/domains.h"
#include "analysis/expect.h"
#include "analysis/placement.h"
#include "analysis/stress.h"
#include "core/types.h"
#include "measure/catalog_ids.h"
#include "measure/journal.h"
#include "core/record.h"
#include "topo/topo.h"

#define GQ_CARD_VERSION 2

/* Record "test" names the card uses: the catalog's test ids
 * (measure/catalog.h). Probes are measured as `gpuqual domains` measures them
 * (analysis/probes.h: gq_probe_measurement): host paths as
 * host_to_device_set / device_to_host_set (one flow = a GPU alone), matrix
 * cells as device_to_device_memcpy_read_ce or device_to_device_staged,
 * concurrent pairs as concurrent_pairs_read_ce. */
#define GQ_CARD_TEST_MATRIX GQ_TID_D2D_READ_CE
#define GQ_CARD_TEST_STAGED GQ_TID_D2D_STAGED
#define GQ_CARD_TEST_DRIVER_STAGED GQ_TID_D2D_DRIVER_STAGED
#define GQ_CARD_TEST_H2D GQ_TID_HOST_TO_DEVICE_CE
#define GQ_CARD_TEST_D2H GQ_TID_DEVICE_TO_HOST_CE
#define GQ_CARD_TEST_H2D_SET GQ_TID_H2D_SET
#define GQ_CARD_TEST_D2H_SET GQ_TID_D2H_SET
#define GQ_CARD_TEST_BIDIR_SET GQ_TID_BIDIR_SET
#define GQ_CARD_TEST_PAIRS GQ_TID_PAIRS_READ_CE
#define GQ_CARD_TEST_SWEEP_PREFIX GQ_TID_SWEEP_PREFIX
#define GQ_CARD_TEST_HOST_LAT GQ_TID_HOST_LATENCY_SM
#define GQ_CARD_TEST_P2P_LAT GQ_TID_D2D_LATENCY_SM

/* gq_card_step_id, the evidence states, levels and verdicts: analysis/card_types.h. */

typedef enum gq_card_step_status {
    GQ_CSS_PLANNED = 0,
    GQ_CSS_DONE,
    GQ_CSS_SKIPPED, /* did not fit the budget, or nothing to do (note says which) */
    GQ_CSS_INTERRUPTED,
    GQ_CSS_FAILED,
} gq_card_step_status;

const char *gq_card_step_status_name(gq_card_step_status s);

typedef struct gq_card_step {
    bool run;     /* planned to run */
    double est_s; /* estimate at the chosen quality */
    double elapsed_s;
    gq_card_step_status status;
    gq_ev_reason reason; /* why it did not run (skipped, interrupted, failed); GQ_EVR_NONE when done */
    char note[600];
} gq_card_step;

typedef struct gq_card_opts {
    gq_card_level level; /* which steps the card is made of (default standard) */
    double budget_s;     /* > 0 */
    /* The level's own budget when budget_s is the default raised to fit the
     * machine (gq_card_default_budget_s, no --budget given); 0 otherwise. */
    double level_budget_s;
    double stress_s;     /* 0: no stress */
    int prefill, decode; /* roles; both 0: the default split (half and half) */
    int offload;         /* KV offload workers; -1: default (half the GPUs) */
    uint64_t bytes;      /* buffer per copy for bandwidth steps; default 256 MiB */
    bool verify;         /* data pattern check after timed parts (default on) */
    int ngpus;           /* selected GPUs, in order */
    int gpus[GQ_MAX_GPUS];
    /* Force steps off (tests, --no-stress, --no-placement): the card says the user turned them off. */
    bool no_sweep, no_latency, no_placement;
    bool no_roles; /* every role left out (--prefill 0 --decode 0 --offload 0): the placement is turned off */
    /* Judge the card even when a GPU was busy (--allow-busy): its
     * contaminated figures are still left out, and the verdict says so. */
    bool allow_busy;
    /* The harness's timing trace (measure/harness.h), or NULL: every
     * measurement's phases and the window log of a round that failed the
     * overlap rule (the CLI sets it under GQ_TRACE=1). */
    void (*trace)(void *arg, const char *test, const char *phase, double seconds, const char *note);
    void *trace_arg;
    /* The expectations the card will be judged by (NULL: the defaults): the
     * step runner measures again the host runs a threshold or agreement
     * check would be undetermined on (gq_expect_open_host). */
    const gq_expect *expect;
} gq_card_opts;

void gq_card_opts_default(gq_card_opts *o);

/* What a step's estimate (gq_card_est_NAME, one per line of
 * analysis/card_steps.h) is given: the machine and the options, the quality's
 * rounds, round length and sweep points, and two figures most steps share.
 * It returns the step's seconds at that quality, 0 when the step has nothing
 * to run (its note then says why); a level that does not run the step never
 * asks. */
typedef struct gq_card_est_ctx {
    const gq_topo *t;
    const gq_card_opts *o;
    int n; /* o->ngpus */
    int rounds;
    double round_s;
    int sweep_points;
    double one; /* one flow alone: gq_card_estimate_measurement(1, rounds, round_s, o->bytes) */
    int npairs; /* ordered pairs of the selected GPUs with P2P */
} gq_card_est_ctx;
#define GQ_CARD_EST_DECL_(ID, NAME, ...) double gq_card_est_##NAME(const gq_card_est_ctx *c);
GQ_CARD_STEPS(GQ_CARD_EST_DECL_)
#undef GQ_CARD_EST_DECL_

typedef struct gq_card_plan {
    gq_card_step step[GQ_CS_COUNT];
    int rounds;       /* harness rounds per measurement */
    double round_s;   /* target seconds per round */
    int sweep_points; /* sizes per sweep */
    double est_total_s;
    double min_s;  /* the smallest card: identity + host alone (+ stress) */
    double full_s; /* everything at the best quality */
    int quality;   /* 0 best .. */
    gq_card_level level;
} gq_card_plan;

/* The budget a level's default gives this machine: the level's own
 * (gq_card_level_budget_s: 1m, 5m, 15m), raised, where the machine needs more,
 * to the time every step of the level takes at the lowest quality (in whole
 * seconds), so that a default card never drops a step for the budget; but
 * never above GQ_CARD_DEFAULT_BUDGET_MAX_X times the level's own, so that a
 * default never turns into hours (64 GPUs need 17m41s at quick, an hour at
 * standard: they are INCOMPLETE at the default and take --budget). On the
 * simulated 8-GPU machines that is the level's own; a 16-GPU machine's matrix
 * of 240 pairs raises it (sw16x2: quick 1m40s, standard 5m07s). Uses o's level,
 * GPUs, buffer size, stress length and the steps turned off; o->budget_s is not
 * read. */
#define GQ_CARD_DEFAULT_BUDGET_MAX_X 4
double gq_card_default_budget_s(const gq_topo *t, const gq_card_opts *o);

/* Plan for topo and the selected GPUs. GQ_E_USAGE when even the smallest
 * card (identity, each GPU's host paths, and the stress run asked for) does
 * not fit the budget: the message gives the budget that fits it and the one
 * that fits the whole card. Steps that do not fit are planned as skipped with
 * a note. */
int gq_card_plan_make(const gq_topo *t, const gq_card_opts *o, gq_card_plan *out, gq_err *err);

/* Sizes of a sweep with n points (2..19), spread from 4 KiB to 1 GiB
 * (2^12..2^30), into out[]; returns the count. */
int gq_card_sweep_sizes(int n, uint64_t *out);

/* The full level sweeps every distinct path: one per class of path, where a
 * GPU pair's class is its link (the level, NV/PIX/.../SYS, and the NVLink
 * count; the card also tells pairs within a measured domain from pairs across)
 * and a host path's class is the GPU's NUMA node and PCIe link (the
 * generation and width it can do). Two paths of one class share a key. */
long gq_card_p2p_path_class(const gq_topo *t, int a, int b);
long gq_card_host_path_class(const gq_topo *t, int gpu);
/* The most sweep paths of one kind (pairs, or host paths) a card measures. */
#define GQ_CARD_MAX_SWEEP_PATHS 16

/* The paths the sweep step measures (analysis/card_sweep.c): {a, b} a GPU
 * pair, {g, -1} GPU g's host path. */
typedef struct gq_card_sweep_paths {
    int n;
    int v[GQ_CARD_MAX_SWEEP_PATHS][2];
    long cls[GQ_CARD_MAX_SWEEP_PATHS]; /* the class whose slowest member v[] is (full) */
    double rate[GQ_CARD_MAX_SWEEP_PATHS];
} gq_card_sweep_paths;

/* The P2P paths to sweep (the fastest and the slowest measured direct pair of
 * pm and, at the full level, the slowest of every class of pair, a class being
 * the pair's link and, where dom splits the GPUs into domains, whether the
 * pair is within one domain or across); when there are none, or at the full
 * level, the host paths too (the GPUs with the fastest and the slowest
 * host-to-GPU rate alone in rs, and at the full level the slowest of every
 * class of host path). */
void gq_card_sweep_paths_plan(const gq_topo *t, const gq_card_opts *o, const gq_recordset *rs,
                              const gq_pairmatrix *pm, const gq_domains *dom, gq_card_sweep_paths *P);
/* How many paths of each kind a full card sweeps on the GPUs gpus[0..n):
 * twice the classes with P2P (within and across domains) into *p2p and the host
 * classes into *host, each with one more for the fastest path (at most
 * GQ_CARD_MAX_SWEEP_PATHS each). */
void gq_card_full_sweep_counts(const gq_topo *t, const int *gpus, int n, int *p2p, int *host);

/* The host-staged pairs (no P2P) whose driver-staged copy the matrix step
 * measures beside gpuqual's pipelined one, at the standard and full levels:
 * the first ordered pair (in matrix order) of each class of staged path, a
 * class being the two GPUs' host path classes (gq_card_host_path_class).
 * Returns how many were written to src/dst (at most max). */
int gq_card_driver_staged_pairs(const gq_topo *t, const int *gpus, int n, int *src, int *dst, int max);

/* One latency round: GQ_CATALOG_CHASE_ITERS (measure/catalog.h) loads of
 * about 1.2 us (host memory). */
#define GQ_CARD_LAT_ROUND_S (GQ_CATALOG_CHASE_ITERS * 1.2e-6)

/* The collectives step: `place --tp 2` on the selected GPUs (the first even
 * count of them), measuring at most GQ_CARD_COLL_BUDGET candidate groups
 * alone (the naive contiguous groups always), each all-reduce of
 * GQ_CARD_COLL_BYTES run GQ_CARD_COLL_ITERS timed iterations after 5 untimed
 * ones per round; the chosen groups are then run all at once. */
#define GQ_CARD_COLL_BUDGET 8
#define GQ_CARD_COLL_BYTES (64ull << 20)
#define GQ_CARD_COLL_ITERS 20
#define GQ_CARD_COLL_MAX_GROUPS (GQ_MAX_GPUS / 2)

/* What the collectives step keeps, typed: the chosen TP groups (as GPU sets,
 * bit i = GPU i), each group's all-reduce bus bandwidth alone and with every
 * chosen group at once (GB/s; < 0 invalid), the slowest of each, and the naive
 * contiguous groups' slowest at once. The card's "collectives" section
 * (docs/json-card.md) is written from it and read back into it. */
typedef struct gq_card_coll_view {
    bool present; /* a "collectives" section (an object) */
    int tp;
    uint64_t bytes;
    int measured; /* candidate groups measured alone */
    bool kept_naive;
    int ngroups;
    uint64_t set[GQ_CARD_COLL_MAX_GROUPS];
    double alone[GQ_CARD_COLL_MAX_GROUPS], once[GQ_CARD_COLL_MAX_GROUPS];
    double min_alone, min_once, naive_min_once; /* NAN: unknown */
} gq_card_coll_view;

/* The sections of the steps that have one of their own (analysis/card_steps.h:
 * GQ_CARD_SECTIONS), typed: what a run's steps measured (gq_card_result) and
 * what the judge reads back from a saved card (gq_card_views), one slot per
 * line. doc/card_codec.h writes and reads them. */
typedef struct gq_card_sections {
#define GQ_CARD_SECTION_SLOT_(ID, NAME, TYPE, FIELD) TYPE FIELD;
    GQ_CARD_SECTIONS(GQ_CARD_SECTION_SLOT_)
#undef GQ_CARD_SECTION_SLOT_
} gq_card_sections;

/* Estimated seconds of one measurement in the harness' auto mode: a flow
 * alone takes rounds+1 round lengths, a concurrent group rounds+2, plus the
 * setup of its buffers. */
double gq_card_estimate_measurement(int nflows, int rounds, double round_s, uint64_t bytes);

/* Progress, for the terminal bar. */
typedef struct gq_card_progress {
    gq_card_step_id step;
    int step_index, nsteps; /* among the steps that run */
    const char *title;
    double done_s, total_s; /* in estimated seconds */
    double elapsed_s;       /* wall time since the start */
    double left_s;          /* estimate of the time left */
} gq_card_progress;
typedef void (*gq_card_progress_fn)(void *arg, const gq_card_progress *p);

/* What a run produced. Release with gq_card_result_free(). */
typedef struct gq_card_result {
    gq_recordset rs;
    bool have_stress;
    gq_stress_result stress;
    /* With the stress run (have_stress): its summary (owned; NULL only when it
     * could not be allocated), what the "stress" section is written from
     * (doc/card_compose.h: gq_card_stress_json). A run re-used from a journal
     * carries both as the journal's section holds them. */
    gq_stress_summary *stress_summary;
    /* The placement step's solved model and result (owned), or NULL when it
     * did not solve; default_split: the roles were the default split (no
     * --prefill or --decode given). The card's document writes them as its
     * "placement" section (doc/card_compose.h: gq_card_placement_json). */
    gq_place_model *place_model;
    gq_place_result *place_result;
    bool place_default_split;
    /* The steps' own sections (sec.coll.present false when the collectives step did not run or
     * measure). */
    gq_card_sections sec;
    double elapsed_s;
    bool interrupted;
    gq_card_step_id stopped_at;
    int nfailed;    /* steps that failed with an error (the rest continued) */
    int remeasured; /* groups measured again because a decision on them was open */
    /* a resumed card (a journal with finished items): the measurements taken
     * from it and those measured now, and whether its completed stress run was
     * re-used (a stress run cut off part-way never is: it runs again whole) */
    int reused, measured;
    bool stress_reused;
    bool coll_reused; /* the collectives step's figures taken from the journal */
} gq_card_result;

void gq_card_result_free(gq_card_result *r);

/* ---- the typed card ---------------------------------------------------------
 * What the card concludes, as a struct: its rows (seed 001 §9's table), its
 * checks, its findings, each with the step it rests on and that step's
 * evidence, and the card's verdict. gq_card_judge fills it; the one codec
 * (doc/card_codec.h: gq_card_to_json, gq_card_from_json) writes and reads
 * it; the renderers print the table, the verdict and the findings from it. */
#define GQ_CARD_MAX_ROWS 16

typedef struct gq_card_row {
    char check[48];        /* "Host-memory traffic" */
    char measurement[512]; /* what was measured, in words */
    char result[512];
    gq_verdict verdict; /* worst check of the row; info: nothing to judge; skip: not measured */
    char decision[96];  /* the decision it supports */
    int step;           /* gq_card_step_id, -1: no step (application validation) */
    gq_evidence evidence;
    gq_ev_reason reason;
} gq_card_row;

typedef struct gq_card {
    gq_card_level level;
    gq_card_verdict verdict;
    char verdict_text[160];
    int exit_code;
    bool turned_off[GQ_CS_COUNT];
    gq_evidence step_ev[GQ_CS_COUNT]; /* each step's evidence, as the plan says */
    gq_ev_reason step_why[GQ_CS_COUNT];
    bool complete; /* the run finished (not interrupted) */
    /* GPUs the clean room saw busy (other work on them while the card
     * measured): their measurements are contaminated and left out. The card
     * is INCOMPLETE unless the user allowed it (--allow-busy, "allow_busy"
     * in the section), and then its verdict text says so. */
    bool allow_busy;
    int nbusy;
    int busy_records[GQ_MAX_GPUS]; /* by GPU index: contaminated records naming it (0: not busy) */
    char busy_what[GQ_MAX_GPUS][160];
    int counts[5];       /* checks by gq_verdict: skip, info, pass, warn, fail */
    gq_checklist checks; /* owned */
    bool have_expect;    /* expectations applied */
    char expect_file[512];
    char expect_description[256];
    int noverrides; /* --set, in the order given (gq_expect.overrides) */
    gq_expect_override overrides[GQ_EXPECT_MAX_OVERRIDES];
    int nrows;
    gq_card_row rows[GQ_CARD_MAX_ROWS];
    int nfindings, capfindings;
    char (*findings)[640]; /* owned; one plain sentence each */
    bool oom;              /* a finding was dropped for want of memory */
} gq_card;

/* A card with nothing judged yet (every step unknown, complete, standard). */
void gq_card_init(gq_card *c);
void gq_card_free(gq_card *c);
/* Appends a finding (cut at 639 bytes); GQ_E_NOMEM when it cannot grow. */
int gq_card_add_finding(gq_card *c, const char *text);

/* Each row's evidence and reason from its step's (c->step_ev); a row whose
 * evidence is not measured says "not measured (why)" and is skip. */
void gq_card_rest_rows(gq_card *c);

/* The counts of c->checks, and the card's verdict (gq_card_overall from the
 * worst check, c->complete, c->level and c->step_ev), verdict_text,
 * turned_off and exit_code; a busy GPU makes it INCOMPLETE ("INCOMPLETE: GPU
 * 1 busy") unless c->allow_busy, when the text adds "GPU 1 busy, allowed".
 * Returns the worst check verdict. */
gq_verdict gq_card_summarize(gq_card *c);

/* The facts the records give (analysis/card_facts.c): integrity counts with
 * an example of each, and the GPUs other work kept busy (rs may be NULL:
 * nothing is added). The sections' facts are decoded by doc/card_codec.h's
 * gq_card_facts_from_json, which calls this. */
void gq_card_facts_records(const gq_recordset *rs, gq_card_facts *f);

/* What the card's health row and finding read of the stress section, typed
 * (doc/card_facts_json.c: gq_card_stress_from_json): whether there is a
 * section, its length and the node's power, and each listed GPU's hottest
 * temperature, average SM clock, share of samples power-capped and whether it
 * slowed down for heat (NAN: not known). */
typedef struct gq_card_stress_view {
    bool present; /* a stress section (an object) */
    double elapsed_s, power_total_avg_w;
    int ngpus; /* the entries of its "gpus" list (at most GQ_MAX_GPUS are read) */
    double temp_max_c[GQ_MAX_GPUS], sm_clock_avg_mhz[GQ_MAX_GPUS], power_capped_pct[GQ_MAX_GPUS];
    bool thermal_slowdown[GQ_MAX_GPUS];
} gq_card_stress_view;

/* What the card's latency row reads of the card's "latency" section: every
 * number of latency.host.ns and of the rows of latency.p2p.values, in order
 * (at most GQ_MAX_GPUS and GQ_MAX_GPUS^2 are read). */
typedef struct gq_card_latency_view {
    int nhost, np2p;
    double host_ns[GQ_MAX_GPUS];
    double p2p_ns[GQ_MAX_GPUS * GQ_MAX_GPUS];
} gq_card_latency_view;

/* What the card's sweep row and finding read of the card's "sweeps" list:
 * its length, and of each entry (at most GQ_CARD_VIEW_MAX_SWEEPS) its label
 * ("?" when none) and, when it has one, its fit (NAN: a figure it lacks). */
#define GQ_CARD_VIEW_MAX_SWEEPS 64
typedef struct gq_card_sweep_view {
    char label[512];
    bool have_fit;
    double fixed_us, asymptotic_gbps, half_bytes;
} gq_card_sweep_view;
typedef struct gq_card_sweeps_view {
    int count; /* entries in the list, all of them */
    int n;     /* entries read into v */
    gq_card_sweep_view v[GQ_CARD_VIEW_MAX_SWEEPS];
} gq_card_sweeps_view;

/* What the card's identity row and finding read of the card's "identity"
 * section: each GPU's model, memory, power limit and PCIe link, the driver
 * and CUDA version, the uplinks above the GPUs, and whether it is a VM with
 * one NUMA node. Numbers are NAN where the section lacks them; strings are
 * the defaults the row prints ("?") where absent. At most GQ_MAX_GPUS GPUs
 * and GQ_CARD_VIEW_MAX_UPLINKS uplinks are read; the counts are of all. */
#define GQ_CARD_VIEW_MAX_UPLINKS 128
typedef struct gq_card_gpu_view {
    bool have_name;
    char name[256];
    double memory_mib, power_limit_w;
    double gen, width, gen_max, width_max; /* pcie */
    bool under_load;
} gq_card_gpu_view;
typedef struct gq_card_uplink_view {
    double width, width_max;
    bool root_port; /* kind "root_port" (else a PCIe switch) */
    char node[128];
    int ngpus;
    int gpus[GQ_MAX_GPUS];
} gq_card_uplink_view;
typedef struct gq_card_identity_view {
    int ngpus_count, ngpus;
    gq_card_gpu_view gpu[GQ_MAX_GPUS];
    char driver[128], cuda_driver_str[64];
    bool vm;
    double numa_nodes;
    int nuplinks_count, nuplinks;
    gq_card_uplink_view uplink[GQ_CARD_VIEW_MAX_UPLINKS];
} gq_card_identity_view;

/* What the card's pairwise rows and findings read of the card's "domains"
 * section (doc/card_views_json.c): "split" and "no_p2p" (only true counts),
 * whether "pairs" is the integer 0 (no usable GPU pair figure), each domain's
 * integer GPU indices (the count is of all entries of "domains"; at most
 * GQ_CARD_VIEW_MAX_DOMAINS are read), and each entry of "set_aside" whose
 * "gpu" is an integer (at most GQ_MAX_GPUS), with its text (have_text false
 * when not a string; cut at GQ_CARD_VIEW_TEXT - 1 bytes). */
#define GQ_CARD_VIEW_TEXT 640
#define GQ_CARD_VIEW_MAX_DOMAINS GQ_MAX_GPUS
typedef struct gq_card_domain_view {
    int n;
    int gpu[GQ_MAX_GPUS];
} gq_card_domain_view;
typedef struct gq_card_set_aside_view {
    int gpu;
    bool have_text;
    char text[GQ_CARD_VIEW_TEXT];
} gq_card_set_aside_view;
typedef struct gq_card_domains_view {
    bool split, no_p2p, no_pairs;
    int ndomains_count, ndomains;
    gq_card_domain_view domain[GQ_CARD_VIEW_MAX_DOMAINS];
    int nset_aside;
    gq_card_set_aside_view set_aside[GQ_MAX_GPUS];
} gq_card_domains_view;

/* What the card's pairwise rows and findings read of one entry of the card's
 * "matrices" list (doc/card_views_json.c): whether there is such an entry (of
 * any type), how many entries its "gpus" list has, its integer GPU indices in
 * order (at most GQ_MAX_GPUS), "staged" (only true counts) and its values by
 * row and column (NAN where not a number). */
typedef struct gq_card_matrix_view {
    bool present;
    int ngpus_count;
    int n;
    int gpu[GQ_MAX_GPUS];
    bool staged;
    double gbps[GQ_MAX_GPUS][GQ_MAX_GPUS];
} gq_card_matrix_view;

/* What the card's concurrent row and finding read of the card's "pairs"
 * section (doc/card_views_json.c): whether it is an object, its ratio, and of
 * each side (within and across domains) whether it is an object, how many
 * entries its "pairs" list has, its aggregate GB/s and the numbers of its
 * "isolated_gbps" list (at most GQ_CARD_VIEW_MAX_ISOLATED). NAN: absent. */
#define GQ_CARD_VIEW_MAX_ISOLATED GQ_MAX_GPUS
typedef struct gq_card_pairs_side_view {
    bool present; /* an object */
    int npairs;
    double aggregate_gbps;
    int nisolated;
    double isolated_gbps[GQ_CARD_VIEW_MAX_ISOLATED];
} gq_card_pairs_side_view;
typedef struct gq_card_pairs_view {
    bool present; /* an object */
    double ratio;
    gq_card_pairs_side_view within, across;
} gq_card_pairs_view;

/* What the card's host row and finding read of the card's "host" section
 * (doc/card_views_json.c): each GPU alone (alone.h2d and alone.d2h, by
 * position, as many as alone.h2d lists, at most GQ_MAX_GPUS), how many GPU
 * sets its subsets name (a set measured in both directions counts once; a
 * subset without "gpus" counts alone), the integer GPU indices of "gpus", and
 * whether "all" is an object, with its aggregates and per-GPU figures (by
 * position). NAN where a figure is absent or not a number. */
typedef struct gq_card_host_view {
    int nalone;
    double alone_h2d[GQ_MAX_GPUS], alone_d2h[GQ_MAX_GPUS];
    int nsets;
    int ngpus;
    int gpu[GQ_MAX_GPUS];
    bool have_all;
    double all_h2d_aggregate_gbps, all_d2h_aggregate_gbps;
    double all_h2d[GQ_MAX_GPUS], all_d2h[GQ_MAX_GPUS];
} gq_card_host_view;

/* What the card's host row and findings read of the document's "bottlenecks"
 * list (doc/card_views_json.c): of each entry, its direction (have_direction
 * false when not a string), its integer GPU indices, its explanation ("" when
 * none), capacity and what the GPUs move alone (NAN: absent). Strings are cut
 * at GQ_CARD_VIEW_TEXT - 1 bytes (a finding is no longer); at most
 * GQ_CARD_VIEW_MAX_BOTTLENECKS entries are read, count is of all. */
#define GQ_CARD_VIEW_MAX_BOTTLENECKS 64
typedef struct gq_card_bottleneck_view {
    bool have_direction;
    char direction[GQ_CARD_VIEW_TEXT];
    int ngpus;
    int gpu[GQ_MAX_GPUS];
    char explanation[GQ_CARD_VIEW_TEXT];
    double capacity_gbps, sum_alone_gbps;
} gq_card_bottleneck_view;
typedef struct gq_card_bottlenecks_view {
    int count, n;
    gq_card_bottleneck_view v[GQ_CARD_VIEW_MAX_BOTTLENECKS];
} gq_card_bottlenecks_view;

/* What the card's placement row and findings read of the card's "placement"
 * section (doc/card_views_json.c): whether it is an object, its roles
 * (roles.prefill, .decode, .offload), "default_split" and "all_staged" (only
 * true counts), "staged_unmeasured" (0 unless an integer), the gain, the
 * measured GB/s of offload_aggregate.h2d, .d2h and pairs_aggregate, and each
 * entry of "pairs" (prefill, decode) and "offload" (gpu) as GPU indices.
 * Numbers are NAN where the section lacks them; a GPU index is 0 where its
 * entry lacks a number and INT_MIN where the number is beyond int's range (as
 * the judge read them from the JSON before these views). The lists' counts are of all entries; at most
 * GQ_CARD_VIEW_MAX_PL_PAIRS pairs and GQ_CARD_VIEW_MAX_PL_OFFLOAD workers are
 * read (more than the row can print). */
#define GQ_CARD_VIEW_MAX_PL_PAIRS 128
#define GQ_CARD_VIEW_MAX_PL_OFFLOAD 256
typedef struct gq_card_placement_view {
    bool present; /* an object */
    double prefill, decode, offload;
    bool default_split, all_staged;
    long long staged_unmeasured;
    double gain;
    double offload_h2d_gbps, offload_d2h_gbps, pairs_gbps;
    int npairs_count, npairs;
    int pair_prefill[GQ_CARD_VIEW_MAX_PL_PAIRS], pair_decode[GQ_CARD_VIEW_MAX_PL_PAIRS];
    int noffload_count, noffload;
    int offload_gpu[GQ_CARD_VIEW_MAX_PL_OFFLOAD];
} gq_card_placement_view;

/* The sections the judge reads typed (doc/card_facts_json.c:
 * gq_card_views_from_json; the pairwise, host, placement and bottleneck
 * views in doc/card_views_json.c). */
typedef struct gq_card_views {
    /* the section's level (have_level false: absent or not a level name, a
     * schema-1 card: judged as standard), "complete" (only false is
     * incomplete) and "allow_busy" (only true allows) */
    bool have_level;
    gq_card_level level;
    bool complete, allow_busy;
    gq_card_stress_view stress;
    gq_card_latency_view latency;
    gq_card_sweeps_view sweeps;
    gq_card_identity_view identity;
    gq_card_sections sec; /* the steps' own sections ("collectives") */
    gq_card_placement_view placement;
    gq_card_pairs_view pairs;
    gq_card_host_view host;
    gq_card_bottlenecks_view bottlenecks; /* the document's, beside the card section */
    gq_card_domains_view domains;
    gq_card_matrix_view matrix;        /* the first of "matrices" */
    gq_card_matrix_view driver_staged; /* the last of "matrices" whose id is "driver_staged" */
} gq_card_views;

/* Judge a composed or saved card section (e.g. `report --expect`) into *out
 * (gq_card_init'ed here; gq_card_free it): the checks on its facts f
 * (gq_card_facts_from_json, doc/card_codec.h), their counts, the verdict from
 * them and the steps' evidence (f's, the section's level and "complete"), the
 * rows and the findings. views: every section the rows and findings read
 * (the card's, the stress section and the document's bottlenecks), typed
 * (gq_card_views_from_json, doc/card_codec.h); gq_card_to_json
 * (doc/card_codec.h) writes the result into the section. */
int gq_card_judge(const gq_card_views *views, const gq_card_facts *f, const gq_expect *ex, gq_card *out,
                  gq_err *err);

/* "skip", "info", "pass", "warn", "fail" exactly (gq_verdict_name). */
bool gq_verdict_parse(const char *s, gq_verdict *out);

#endif
