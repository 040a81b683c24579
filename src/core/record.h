/* Records: the results of measurements, and the only thing analysis and
 * renderers read. One record per reported figure (one flow's rate, one
 * aggregate, one direction sum, one latency).
 *
 * JSON contract (docs/json.md), kept stable because later tools rely on it:
 *   test, method (ce|sm|staged|driver_staged), src, dst ("gpu:N"/"host:N"),
 *   direction (h2d|d2h|p2p|local), bytes, rounds,
 *   gbps {median,min,max,spread}  or  latency_ns {median,min,max,spread},
 *   valid, flags [..], and for aggregates: aggregate:true, gpus:[..], overlap;
 *   for direction sums: sum:true.
 */
#ifndef GQ_CORE_RECORD_H
#define GQ_CORE_RECORD_H

#include <stdbool.h>
#include <stdint.h>

#include "core/status.h"
#include "core/types.h"

#define GQ_MAX_ROUNDS 64

typedef enum gq_direction { GQ_DIR_H2D = 0, GQ_DIR_D2H, GQ_DIR_P2P, GQ_DIR_LOCAL } gq_direction;

/* Flags (bitmask; rendered as strings). */
#define GQ_FLAG_IMPOSSIBLE 0x01u     /* above the path's theoretical capacity */
#define GQ_FLAG_OVERLAP 0x02u        /* aggregate whose windows overlap < 99% */
#define GQ_FLAG_VERIFY_FAILED 0x04u  /* data pattern mismatch */
#define GQ_FLAG_ERROR 0x08u          /* backend error; see error */
#define GQ_FLAG_SPREAD 0x10u         /* spread above target after all rounds */
#define GQ_FLAG_NUMA_MISPLACED 0x20u /* host pages not on the requested node */
#define GQ_FLAG_INCOMPLETE 0x40u     /* fewer rounds than asked (interrupted) */
#define GQ_FLAG_OVERLAP_RETRIED                                                                              \
    0x80u /* a round whose windows overlapped < 99% was re-run (informational)                               \
           */
/* Something else used a GPU of the measurement while it ran (the clean room,
 * measure/cleanroom.h): not valid for an aggregate or a verdict. */
#define GQ_FLAG_CONTAMINATED 0x100u

/* What the clean room saw around one measurement (measure/cleanroom.h); each
 * item becomes one entry of the record's "contaminated" summary through
 * gq_record_contaminate. */
#define GQ_CONTAM_MAX 4
typedef struct gq_contam_item {
    char kind[16]; /* "process", "utilization", "memory", "lock", "sim" */
    int gpu;
    int pid; /* 0 when none */
    char name[48];
    char detail[128];
} gq_contam_item;

typedef struct gq_contam {
    int n; /* items kept (at most GQ_CONTAM_MAX) */
    gq_contam_item item[GQ_CONTAM_MAX];
} gq_contam;

/* One line: "GPU 0: process 4242 (gpu_burn), 20480 MiB; GPU 1: 63% utilization". */
void gq_contam_summary(const gq_contam *c, char *buf, size_t n);
/* Add an item unless an equal one (kind, gpu, pid) is there; false when full. */
bool gq_contam_add(gq_contam *c, const gq_contam_item *it);

typedef struct gq_stat {
    double median, min, max, spread; /* spread = (max - min) / median */
    int n;
} gq_stat;

typedef struct gq_record {
    char test[64];
    gq_method method;
    gq_endpoint src, dst;
    gq_direction direction;
    uint64_t bytes; /* per copy */
    int rounds;     /* rounds that produced a value */
    bool is_latency;
    gq_stat value;                 /* GB/s (10^9 B/s) or, for latency, ns */
    double samples[GQ_MAX_ROUNDS]; /* per-round values (value.n of them) */
    bool valid;
    unsigned flags;       /* GQ_FLAG_* */
    char error[200];      /* why it is invalid, when it is */
    double capacity_gbps; /* sanity bound used; 0 = unknown */

    /* Concurrent groups. */
    bool aggregate;
    bool sum; /* sum of the directions of a bidirectional test */
    int ngpus;
    int gpus[GQ_MAX_GPUS];
    double overlap; /* min over rounds of shared/own window; 1.0 = perfect; <0 n/a */
    int group;      /* measurement id within the run: records with the same group ran together */
    int flow_tag;   /* which flow of the group (-1 for aggregate/sum) */
    int exec_gpu;   /* GPU that executed the copy / chase (-1 for aggregates, n/a) */
    unsigned dirs;  /* directions covered: bit (1u << gq_direction); a sum has several */

    /* Placement/provenance. */
    int host_numa_req;    /* requested node (-1 local / n/a) */
    int host_numa_actual; /* from the page read-back: node, -1 unknown/n/a, -2 mixed */
    double window_s;      /* median window length */
    double timestamp;     /* unix seconds when measured */
    bool simulated;
    /* What else was seen on the GPUs or paths while this was measured: ""
     * when clean, else entries "KIND gpu G[ pid P][ NAME]: DETAIL" joined by
     * "; " (KIND process|utilization|memory|lock|sim). Written as the
     * record's "contaminated" array (docs/json.md); a contaminated record is
     * never valid. */
    char contaminated[240];
} gq_record;

typedef struct gq_recordset {
    gq_record *v;
    int n, cap;
} gq_recordset;

int gq_records_push(gq_recordset *rs, const gq_record *r); /* copies r; GQ_E_NOMEM */
void gq_records_free(gq_recordset *rs);

const char *gq_direction_name(gq_direction d); /* "h2d","d2h","p2p","local" */
/* Writes flag names comma-separated into buf. */
const char *gq_flags_str(unsigned flags, char *buf, size_t n);

/* Append one observation to r->contaminated (see there), and mark r
 * invalid with GQ_FLAG_CONTAMINATED. kind is one of the five names; pid < 0
 * and name NULL or "" when not known; spaces, ':' and ';' in name become
 * '_', and in detail ';' becomes ',' (entries are joined by "; "). GQ_E_USAGE
 * on an unknown kind; an entry that does not fit is cut. */
int gq_record_contaminate(gq_record *r, const char *kind, int gpu, int pid, const char *name,
                          const char *detail);
/* Append text as it is, an entry that names no GPU (a saved entry that was
 * cut at the summary's size), and mark r as gq_record_contaminate does. */
void gq_record_contaminate_raw(gq_record *r, const char *text);
/* The five kinds, and whether s is one of them (exact case). */
bool gq_contamination_kind_ok(const char *s);

/* A failed measurement, for exit codes: flagged error, verify_failed or
 * impossible. Overlap, spread and NUMA placement are reported, not failures. */
static inline bool gq_record_failed(const gq_record *r)
{
    return (r->flags & (GQ_FLAG_ERROR | GQ_FLAG_VERIFY_FAILED | GQ_FLAG_IMPOSSIBLE)) != 0;
}

/* Statistics over n values (n >= 1): median, min, max, spread. */
gq_stat gq_stat_compute(const double *v, int n);

/* How sure a record's median is, from its rounds (docs/method.md,
 * "Decisions on intervals"): the pair of order statistics of the per-round
 * samples, innermost first, that holds the true median with probability at
 * least GQ_INTERVAL_CONF whatever the distribution of a round (with 5
 * rounds: the lowest and the highest, 94 %; with 15: the 4th and the 12th,
 * 96 %). Fewer rounds than that confidence needs: the lowest and highest
 * anyway (conf says how sure). Without samples: [min, max] of the
 * statistics; without those: the median itself. More rounds narrow it; that
 * is what re-measuring an undecided figure buys. */
#define GQ_INTERVAL_CONF 0.90
typedef struct gq_interval {
    double lo, hi; /* GB/s or ns, lo <= median <= hi */
    double conf;   /* the probability the interval holds the median; 0 unknown */
    int n;         /* rounds it came from */
} gq_interval;
gq_interval gq_record_interval(const gq_record *r);

#endif
