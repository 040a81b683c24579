/* Whole-node stress (issue 7, seed 001 §7): load every chosen GPU with GEMMs at
 * once, sample telemetry at a fixed interval, then summarise each GPU as seed
 * 001's table does and judge the node with the rules of docs/method-stress.md.
 *
 * Three layers, usable apart:
 *  - gq_stress_run() (exec/stress_run.h): drives a backend's stress_start/poll/stop and sample
 *    hooks (and, with_transfers, host<->GPU flows through prepare/run) and
 *    fills a gq_stress_result with one time series per GPU. It never prints;
 *    progress goes through a callback.
 *  - gq_stress_summarize(): pure function of a result and the rules: per-GPU
 *    averages over loaded samples, error deltas, findings and verdicts.
 *    Tests build results by hand with gq_stress_point_push().
 *  - gq_stress_to_json() (doc/analysis_json.h): the "stress" section of a saved document, with the
 *    time series in columns for the card's plots, and gq_stress_from_json() reading one back (a card
 *    resumed from its journal re-uses its completed stress run so).
 *
 * Verdicts (docs/method-stress.md): fail on any faulty element, uncorrected
 * ECC error, GPU lost or errored, thermal slowdown (SW or HW thermal, HW
 * slowdown, HW power brake) or a PCIe link below its max gen/width while
 * loaded; warn on clock spread across same-model GPUs above
 * rules.clock_spread_warn and on softer evidence (corrected ECC, replays,
 * new remapped rows, no telemetry, a load that never reached the utilisation
 * threshold, transfers that could not run); power capping alone is info.
 */
#ifndef GQ_ANALYSIS_STRESS_H
#define GQ_ANALYSIS_STRESS_H

#include <stdbool.h>
#include <stdint.h>

#include "core/types.h"
#include "core/status.h"
#include "topo/topo.h"

/* Reason bits: GQ_CLK_* in core/types.h (NVML's values). */
/* The reasons that mean the GPU protects itself (fail), as opposed to the
 * power cap, which is expected near the limit (info). */
#define GQ_CLK_THERMAL_MASK                                                                                  \
    (GQ_CLK_SW_THERMAL | GQ_CLK_HW_THERMAL | GQ_CLK_HW_SLOWDOWN | GQ_CLK_HW_POWER_BRAKE)

/* Unknown value of a gq_sample's uint64_t counters (same as nvml.h's). */
#define GQ_STRESS_U64_UNKNOWN UINT64_MAX

#define GQ_STRESS_MAX_FINDINGS 256

/* Finding levels, in increasing severity. A GPU's and the node's verdict is
 * the most severe finding, with info counting as pass. */
typedef enum gq_stress_level {
    GQ_STRESS_PASS = 0,
    GQ_STRESS_INFO = 1,
    GQ_STRESS_WARN = 2,
    GQ_STRESS_FAIL = 3,
} gq_stress_level;

/* One row of a GPU's time series. */
typedef struct gq_stress_point {
    double t;        /* seconds since the load was started on all GPUs (baseline: < 0) */
    bool loaded;     /* the load was running on this GPU when sampled */
    bool has_sample; /* s holds telemetry (false: sample failed or unsupported) */
    gq_sample s;     /* telemetry; unknown fields as in gq_sample */
    uint64_t gemms;  /* cumulative GEMMs completed */
    uint64_t faulty; /* cumulative faulty result elements */
    double tflops;   /* achieved since the previous point; NAN unknown */
} gq_stress_point;

/* What happened on one GPU. */
typedef struct gq_stress_gpu {
    int gpu; /* device index (topology) */
    char name[96];
    char uuid[80];
    double power_limit_w;             /* from the topology; 0 unknown */
    int pcie_gen_max, pcie_width_max; /* from the topology; -1 unknown */
    bool has_baseline;                /* a sample before the load started */
    gq_sample baseline;
    int npoints, cap;
    gq_stress_point *pts;   /* owned; freed by gq_stress_result_free() */
    bool started;           /* stress_start succeeded */
    int status;             /* GQ_OK or the first error of this GPU's load */
    char error[512];        /* as long as an error message (gq_err) */
    bool lost;              /* fell off the bus / stopped answering */
    double lost_t;          /* when lost or errored, seconds since start; -1 never */
    uint64_t gemms, faulty; /* final */
    int sample_errors;      /* samples that failed (not counting unsupported) */
    char sample_error[200];
    bool telemetry_unsupported; /* the backend cannot sample this GPU at all */
    /* --with-transfers: bytes moved and time, per direction. */
    double xfer_bytes[2], xfer_s[2]; /* [0] host->GPU, [1] GPU->host */
    int xfer_status;
    char xfer_error[200];
} gq_stress_gpu;

typedef struct gq_stress_result {
    double duration_s, interval_s; /* asked */
    double elapsed_s;              /* the load actually ran */
    gq_precision precision;
    bool with_transfers;
    bool interrupted;
    bool simulated;
    char xfer_error[200]; /* with_transfers: why the transfers could not run or stopped */
    int ngpu;
    gq_stress_gpu gpu[GQ_MAX_GPUS];
} gq_stress_result;

/* Called after every sampling tick (from the thread that called
 * gq_stress_run). elapsed_s is seconds since the load started. */
typedef void (*gq_stress_progress_fn)(void *arg, const gq_stress_result *r, double elapsed_s);

typedef struct gq_stress_opts {
    double duration_s; /* > 0 */
    double interval_s; /* 0.1 .. duration_s */
    gq_precision precision;
    bool with_transfers;
    uint64_t xfer_bytes; /* per copy for with_transfers; 0 = 64 MiB */
    int ngpus;
    int gpus[GQ_MAX_GPUS]; /* device indices into the topology */
    gq_stress_progress_fn progress;
    void *progress_arg;
    /* Called after every sampling tick, after progress (NULL: none): a
     * status other than GQ_OK (with *err set) stops the load on every GPU,
     * and gq_stress_run returns it with what was recorded kept in r. stress
     * --journal writes the tick's samples through it. */
    int (*on_tick)(void *arg, const gq_stress_result *r, gq_err *err);
    void *tick_arg;
} gq_stress_opts;

typedef struct gq_stress_rules {
    double clock_spread_warn; /* fraction; (max - min) / min of same-model averages; default 0.05 */
    double loaded_util_pct;   /* a sample counts as loaded at or above this utilisation; default 90 */
} gq_stress_rules;

typedef struct gq_stress_finding {
    gq_stress_level level;
    int gpu;        /* device index, -1 for the whole node */
    char rule[24];  /* "faulty-result", "thermal-slowdown", "power-cap", ... (docs/method-stress.md) */
    char text[640]; /* room for a whole error message and its lead-in */
} gq_stress_finding;

typedef struct gq_stress_gpu_summary {
    int gpu;
    char name[96];
    int nsamples; /* samples with telemetry taken while the load ran */
    int nloaded;  /* of those, at or above the utilisation threshold: the averages use these */
    double temp_avg_c, temp_max_c, mem_temp_max_c;
    double power_avg_w, power_max_w, power_limit_w;
    double sm_clock_avg_mhz, mem_clock_avg_mhz, util_avg_pct;
    double power_capped_pct;          /* % of loaded samples with the SW power cap reason */
    double thermal_pct;               /* % of samples under load with a thermal/slowdown reason */
    bool thermal_slowdown;            /* SW or HW thermal slowdown seen */
    bool hw_slowdown;                 /* HW slowdown seen */
    bool power_brake;                 /* HW power brake seen */
    uint64_t reasons_seen;            /* OR of the reasons of every sample under load */
    int pcie_gen_min, pcie_width_min; /* lowest seen while loaded; -1 unknown */
    int pcie_gen_max, pcie_width_max; /* what the link can do; -1 unknown */
    bool link_down;
    int64_t ecc_corrected, ecc_uncorrected, pcie_replay; /* deltas over the run; -1 unknown */
    int remapped_rows;                                   /* at the end; -1 unknown */
    int remapped_delta;                                  /* new during the run; -1 unknown */
    uint64_t gemms, faulty;
    double tflops_avg;   /* mean over loaded samples; NAN unknown */
    double xfer_gbps[2]; /* with transfers: host->GPU, GPU->host; NAN none */
    bool lost, errored;
    gq_stress_level verdict;
} gq_stress_gpu_summary;

typedef struct gq_stress_summary {
    gq_stress_rules rules;
    int ngpu;
    gq_stress_gpu_summary gpu[GQ_MAX_GPUS];
    double power_total_avg_w; /* sum of the per-GPU averages (GPU telemetry, not wall power) */
    double clock_spread; /* largest same-model spread of average SM clocks; NAN when < 2 GPUs of a model */
    char clock_spread_model[96];
    int nfindings, nfindings_dropped;
    gq_stress_finding findings[GQ_STRESS_MAX_FINDINGS];
    gq_stress_level verdict; /* the node's: pass, warn or fail (never info) */
    bool interrupted;        /* the run stopped before its duration (Ctrl-C): judged on what ran */
} gq_stress_summary;

void gq_stress_opts_default(gq_stress_opts *o);
void gq_stress_rules_default(gq_stress_rules *r);

/* Check durations and the GPU list: duration > 0, 0.1 s <= interval <=
 * duration. GQ_E_USAGE with one line naming the option (--duration,
 * --interval) otherwise. */
int gq_stress_opts_check(const gq_stress_opts *o, gq_err *err);

/* "bf16", "fp16", "fp32", "fp64" (case-insensitive). GQ_E_USAGE listing them. */
int gq_stress_parse_precision(const char *s, gq_precision *p, gq_err *err);

/* Append a point to a GPU's series (copies p). GQ_E_NOMEM. */
int gq_stress_point_push(gq_stress_gpu *g, const gq_stress_point *p);

/* Free the series; leaves r zeroed. */
void gq_stress_result_free(gq_stress_result *r);

/* A sample with every field unknown. */
void gq_stress_sample_unknown(gq_sample *s);

/* Summarise and judge. rules NULL = defaults. */
void gq_stress_summarize(const gq_stress_result *r, const gq_stress_rules *rules, gq_stress_summary *s);

/* "pass", "info", "warn", "fail". */
const char *gq_stress_level_name(gq_stress_level l);

/* Reason bits as names joined by ',' ("sw_power_cap,hw_thermal"); "none"
 * for 0, "unknown" for GQ_STRESS_U64_UNKNOWN. */
const char *gq_clock_reasons_str(uint64_t bits, char *buf, size_t n);

/* The bit of one of gq_clock_reasons_str's names ("sw_power_cap"); 0 for
 * any other string or NULL. */
uint64_t gq_clock_reason_bit(const char *name);

#endif
