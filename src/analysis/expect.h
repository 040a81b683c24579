/* Expectations and verdicts for the acceptance card.
 *
 * An expectations file (docs/card.md "Expectations files") gives per-GPU-model
 * thresholds: minimum PCIe generation and width, minimum host<->GPU and P2P
 * GB/s, maximum latency and temperature, minimum clocks, maximum spread
 * between GPUs. It is JSON:
 *
 *   { "gpuqual_expect": 1, "description": "...",
 *     "relative": { "agree_pct": 5, "agree_fail_pct": 20 },
 *     "models": [ { "match": "H200", "h2d_gbps_min": 53,
 *                   "p2p_gbps_min": { "warn": 380, "fail": 350 }, ... } ] }
 *
 * A threshold is a number (fail beyond it) or {"warn": W, "fail": F} (warn
 * beyond W, fail beyond F). Unknown keys and wrong types are errors
 * (GQ_E_USAGE, naming the key and what would be right). A model that matches
 * no GPU is not an error: the judge reports it as an "info" check and the CLI
 * prints a warning.
 *
 * The judge turns facts (what the card measured, gathered by analysis/card.c
 * into a gq_card_facts) into checks, each pass/warn/fail/info/skip with the
 * figure and the threshold. Without expectations only relative checks apply:
 * GPUs of one model agree within a stated percentage, links at their maximum
 * generation and width, nothing impossible, nothing throttled, integrity.
 */
#ifndef GQ_ANALYSIS_EXPECT_H
#define GQ_ANALYSIS_EXPECT_H

#include <stdbool.h>

#include "analysis/card_types.h"
#include "core/status.h"
#include "topo/topo.h"

#define GQ_EXPECT_FORMAT 1

typedef enum gq_verdict {
    GQ_V_SKIP = 0, /* could not be checked (no figure) */
    GQ_V_INFO,     /* reported, not judged (e.g. power capping near the limit) */
    GQ_V_PASS,
    GQ_V_WARN,
    GQ_V_FAIL,
} gq_verdict;

/* "skip", "info", "pass", "warn", "fail". */
const char *gq_verdict_name(gq_verdict v);
/* Exit code of an overall verdict: 0 pass (or info/skip), 4 warn, 1 fail. */
int gq_verdict_exit_code(gq_verdict v);

/* Thresholds, one per key of the file. */
typedef enum gq_expect_key {
    GQ_EXK_COUNT_MIN = 0, /* GPUs of this model present */
    GQ_EXK_MEMORY_MIB_MIN,
    GQ_EXK_POWER_LIMIT_W_MIN,
    GQ_EXK_PCIE_GEN_MIN,
    GQ_EXK_PCIE_WIDTH_MIN,
    GQ_EXK_H2D_GBPS_MIN, /* each GPU alone */
    GQ_EXK_D2H_GBPS_MIN,
    GQ_EXK_P2P_GBPS_MIN,    /* every measured GPU pair of this model */
    GQ_EXK_NVLINK_GBPS_MIN, /* every pair joined by NVLink */
    GQ_EXK_HOST_LATENCY_NS_MAX,
    GQ_EXK_P2P_LATENCY_NS_MAX,
    GQ_EXK_TEMP_C_MAX,               /* under the stress load */
    GQ_EXK_SM_CLOCK_MHZ_MIN,         /* average under the stress load */
    GQ_EXK_SPREAD_PCT_MAX,           /* between GPUs of this model (overrides agree_pct) */
    GQ_EXK_ALLREDUCE_BUSBW_GBPS_MIN, /* the card's TP-2 groups all at once, the slowest group */
    GQ_EXK_COUNT
} gq_expect_key;

typedef struct gq_threshold {
    bool set;
    bool has_warn;
    double warn, fail;
} gq_threshold;

#define GQ_EXPECT_MAX_MODELS 32

typedef struct gq_expect_model {
    char match[96]; /* case-insensitive substring of the GPU name */
    char description[160];
    gq_threshold th[GQ_EXK_COUNT];
} gq_expect_model;

/* One --set override, as given and what it replaced. */
#define GQ_EXPECT_MAX_OVERRIDES 16
typedef struct gq_expect_override {
    char spec[128]; /* "h2d_gbps.fail=50", as given */
    char key[40];   /* the expectation key it set: "h2d_gbps_min", "agree_pct" */
    char level[8];  /* "warn" or "fail" */
    double value;
    char was[64]; /* what it replaced: "48", "unset", ...; per model when several */
} gq_expect_override;

typedef struct gq_expect {
    char path[512]; /* where it was read from ("" when parsed from memory) */
    char description[256];
    double agree_pct;      /* relative: warn above (default 5) */
    double agree_fail_pct; /* relative: fail above (default 20) */
    int nmodels;
    gq_expect_model models[GQ_EXPECT_MAX_MODELS];
    int noverrides; /* --set, in the order given; the card records them */
    gq_expect_override overrides[GQ_EXPECT_MAX_OVERRIDES];
} gq_expect;

/* An empty set of expectations: relative checks at the default percentages. */
void gq_expect_init(gq_expect *ex);

/* Override one threshold from the command line: "[MODEL:]CHECK.LEVEL=VALUE".
 * CHECK is an expectation key with or without its _min/_max ending
 * ("h2d_gbps" or "h2d_gbps_min"), or "agree" (the relative agreement: warn
 * sets agree_pct, fail agree_fail_pct); LEVEL is warn or fail; VALUE a finite
 * number (a whole one for counts, generations and widths). MODEL names the
 * models it applies to (their "match", any case); without it, every model,
 * and with no model at all a catch-all one (match "") is added. The warn and
 * fail of a threshold must stay in order after the change. Recorded in
 * ex->overrides. GQ_E_USAGE with one line naming the spec and what is right. */
int gq_expect_set(gq_expect *ex, const char *spec, gq_err *err);

/* Loading a file into *ex: doc/expect_load.h (gq_expect_parse, gq_expect_load). */

/* Index of the first model matching a GPU name, or -1. */
int gq_expect_match(const gq_expect *ex, const char *gpu_name);

/* What the card measured, per GPU and per pair. NAN / -1 = not measured. */
typedef struct gq_gpu_facts {
    int index;
    char name[96];
    double mem_mib;
    double power_limit_w;
    int pcie_gen_cur, pcie_width_cur, pcie_gen_max, pcie_width_max;
    bool link_under_load;      /* gen/width above were read under load (stress telemetry) */
    double h2d_gbps, d2h_gbps; /* this GPU alone, median */
    /* their intervals from the rounds (gq_record_interval); NAN unknown: the
     * median itself */
    double h2d_lo, h2d_hi, d2h_lo, d2h_hi;
    double host_latency_ns;
    bool stressed; /* the stress run covered this GPU */
    double temp_max_c;
    double sm_clock_avg_mhz;
    double power_capped_pct; /* % of samples with power capping */
    bool thermal_slowdown;   /* SW/HW thermal slowdown or HW slowdown seen */
    int stress_verdict;      /* gq_verdict from the stress analysis; GQ_V_SKIP when none */
    char stress_reason[160]; /* its reason, when not pass */
} gq_gpu_facts;

/* A link above the GPUs: the uplink of a PCIe switch or root port on their
 * path to the root, as discovery read it (identity.uplinks). 0 unknown. */
#define GQ_CARD_MAX_UPLINKS 32
typedef struct gq_uplink_facts {
    char node[32]; /* bus id, or the label when there is none */
    char kind[16]; /* "pcie_switch", "root_port" */
    int ngpus;
    int gpus[GQ_MAX_GPUS]; /* the GPUs behind it (their indices) */
    int gen_cur, width_cur, gen_max, width_max;
    bool under_load; /* read under load (false: discovery's reading) */
} gq_uplink_facts;
#define GQ_FACTS_MAX_UNDETERMINED 16

typedef struct gq_card_facts {
    int ngpu;
    gq_gpu_facts gpu[GQ_MAX_GPUS];
    int nuplinks;
    gq_uplink_facts uplink[GQ_CARD_MAX_UPLINKS];
    double p2p_gbps[GQ_MAX_GPUS][GQ_MAX_GPUS]; /* one pair alone, one direction */
    bool p2p_direct[GQ_MAX_GPUS][GQ_MAX_GPUS]; /* measured over P2P (else host-staged) */
    int nvlinks[GQ_MAX_GPUS][GQ_MAX_GPUS];     /* from discovery; -1 unknown */
    double p2p_lat_ns[GQ_MAX_GPUS][GQ_MAX_GPUS];
    /* Integrity of the whole run. */
    int n_records;
    int n_impossible;
    char impossible_example[240];
    int n_verify_failed;
    char verify_example[240];
    int n_errors;
    char error_example[240];
    int n_overlap_invalid;
    char overlap_example[240];
    bool stress_ran;
    /* The collectives step (the card's "collectives" section): the GPUs of its
     * chosen TP groups (bit = GPU index) and the slowest group's all-reduce
     * busbw alone and with every chosen group at once (GB/s; NAN: not
     * measured). */
    uint64_t coll_gpus;
    double coll_min_alone_gbps, coll_min_once_gbps;
    /* Decisions the analysis could not make on the figures' intervals, even
     * after measuring them again (the card's "undetermined" list): each is
     * judged WARN, never PASS or FAIL (docs/card.md). */
    int n_undetermined;
    char undetermined[GQ_FACTS_MAX_UNDETERMINED][256];
    /* Measurements the clean room flagged contaminated (measure/cleanroom.h:
     * something else ran on a GPU), by the GPU it names: how many records, and
     * what was seen first (a process when one was named). */
    int n_contaminated;
    int busy_records[GQ_MAX_GPUS];
    char busy_what[GQ_MAX_GPUS][160];
    /* What each step of the card gave: a check rests on its step's evidence
     * (gq_card_check_step) and is never judged on evidence not measured.
     * gq_card_facts_init leaves every step unknown. */
    gq_evidence step_ev[GQ_CS_COUNT];
    gq_ev_reason step_why[GQ_CS_COUNT];
} gq_card_facts;

/* Set every figure to "not measured". */
void gq_card_facts_init(gq_card_facts *f);

/* One judged check. */
typedef struct gq_check {
    char id[40];       /* "pcie_gen_min", "agree_h2d", "impossible", ... */
    char subject[128]; /* "gpu:0", "gpu:0->gpu:1", "model:H200", "node" */
    char source[16];   /* "expect", "relative", "integrity", "stress" */
    gq_verdict verdict;
    double figure;    /* NAN when none */
    double threshold; /* the threshold that decided it; NAN when none */
    char unit[16];
    char text[320]; /* one plain sentence with the figure and the threshold */
    /* Decided on an interval: the figure's ends (NAN when it has none). When
     * the ends fall on two sides of a threshold the check is undetermined:
     * verdict WARN, naming the interval, never PASS or FAIL by the median. */
    double figure_lo, figure_hi;
    bool undetermined;
    gq_card_step_id step; /* the step it rests on */
    gq_evidence evidence; /* that step's evidence; not measured: the verdict is skip */
    gq_ev_reason reason;
} gq_check;

typedef struct gq_checklist {
    gq_check *v;
    int n, cap;
} gq_checklist;

void gq_checklist_free(gq_checklist *cl);

/* The GPUs whose host-to-GPU (h2d[g]) and GPU-to-host (d2h[g]) figures alone
 * an undetermined threshold or agreement check of gq_expect_judge(ex, f)
 * rests on, by GPU position in f (every GPU of the model for an agreement);
 * returns how many flags it set. exec measures those runs again. */
int gq_expect_open_host(const gq_expect *ex, const gq_card_facts *f, bool *h2d, bool *d2h);
/* Worst of pass/warn/fail over the list (info and skip do not count); pass
 * when the list has nothing judged. */
gq_verdict gq_checklist_overall(const gq_checklist *cl);
/* Count of checks with verdict v. */
int gq_checklist_count(const gq_checklist *cl, gq_verdict v);

/* Sets c's step (by its id), its evidence and reason from the steps' ones;
 * a check whose evidence is not measured becomes skip, its text prefixed
 * with "Not measured (STEP EVIDENCE, REASON): ". */
void gq_check_rest_on(gq_check *c, const gq_evidence *step_ev, const gq_ev_reason *step_why);

/* Judge facts against expectations (ex may be NULL: relative checks with the
 * default percentages). Appends to *out. GQ_E_NOMEM only. */
int gq_expect_judge(const gq_expect *ex, const gq_card_facts *f, gq_checklist *out, gq_err *err);

#endif
