/* Placement: map serving roles (prefill/decode pairs, KV offload workers,
 * replicas) onto GPUs from MEASURED paths, explain each choice with the
 * figures behind it, then verify by running exactly the concurrent pattern the
 * mapping implies, next to the naive mapping (GPUs in index order).
 *
 * The path model (gq_place_model) is built from records only (never from a
 * simulator's ground truth): the one-at-a-time P2P / host-staged matrices, each
 * GPU's host rates alone, and the shared limits that concurrent measurements
 * revealed (a group whose flows fell below their alone rates shares a budget
 * of at most what they moved together). Performance domains and bottlenecks
 * saved by `gpuqual domains` are added when present.
 *
 * Prediction (gq_place_predict) shares capacity by max-min fairness
 * (progressive filling) over those limits: each flow is capped by its alone
 * rate and by every limit it passes through. A host-staged handoff (no P2P) is
 * one flow that uses its source's D2H budget and its destination's H2D budget
 * at the same rate.
 *
 * Choice (gq_place_solve) is exhaustive when the candidates are few (8 GPUs:
 * always) and greedy plus pairwise swaps beyond. Candidates whose predicted
 * figure is within the model's tolerance of the best are treated as equal,
 * because a difference smaller than the measurement spread is not evidence;
 * among equals, pairs keep closest to index order (lowest prefill set first,
 * so a cell is a contiguous block: seed 001's {0,1}->{2,3}, {4,5}->{6,7}),
 * offload workers spread across the groups the machine shows (budgets,
 * domains, then aligned index blocks: seed 001's 0,2,4,6), and replicas keep
 * to one domain each and to separate host budgets.
 *
 * Nothing here prints. gq_place_verify (exec/place_verify.h) runs the chosen
 * pattern through the harness.
 *
 * The implementation, one job a file: placement_model.c (the model from
 * records, and learning from verification), placement_doc.c (the model's
 * additions from a saved domains document), placement_predict.c,
 * placement_search.c (choosing candidates), placement_solve.c (the mapping
 * with its explanations), placement_judge.c (verification's judging steps);
 * placement_internal.h is what they share. The JSON codec of the result is
 * doc/placement_json.c.
 */
#ifndef GQ_ANALYSIS_PLACEMENT_H
#define GQ_ANALYSIS_PLACEMENT_H

#include <stdbool.h>
#include <stdint.h>

#include "analysis/bottlenecks.h"
#include "analysis/domains.h"
#include "core/types.h"
#include "measure/measurement.h"
#include "core/record.h"
#include "topo/topo.h"

#define GQ_PLACE_MAX_LIMITS 256
#define GQ_PLACE_MAX_PAIRS GQ_MAX_GPUS
#define GQ_PLACE_TOLERANCE 0.05 /* default: relative difference treated as a tie */
#define GQ_PLACE_WARN_MISS 0.10 /* a measured flow this far (relative) from its prediction is a warning */
#define GQ_PLACE_MAX_WARNINGS 8

typedef uint64_t gq_gpuset; /* bit i = GPU i (GQ_MAX_GPUS == 64) */

/* What a shared limit constrains. */
typedef enum gq_limit_kind {
    GQ_LIMIT_H2D = 0, /* host->GPU traffic of the GPUs in `a` */
    GQ_LIMIT_D2H,     /* GPU->host traffic of the GPUs in `a` */
    GQ_LIMIT_DUPLEX,  /* both host directions together, GPUs in `a` */
    GQ_LIMIT_P2P,     /* P2P flows from a GPU in `a` to a GPU in `b` */
    GQ_LIMIT_STAGED,  /* host-staged handoffs from a GPU in `a` to a GPU in `b` */
} gq_limit_kind;

/* Limits on GPU-to-GPU traffic (P2P or staged handoffs) rather than on a
 * set of GPUs' host paths. */
bool gq_place_limit_is_gpu(gq_limit_kind k);

typedef struct gq_place_limit {
    gq_limit_kind kind;
    gq_gpuset a, b;
    double capacity_gbps;
    char evidence[200]; /* "measured: 0,1 h2d together 78.1 GB/s (alone 57.9 each), group 12" */
} gq_place_limit;

/* Paths as measured. Rates in GB/s; 0 = not measured / not possible. */
typedef struct gq_place_model {
    int ngpu;
    double p2p[GQ_MAX_GPUS][GQ_MAX_GPUS];           /* direct P2P copy alone (CE/SM) */
    double staged[GQ_MAX_GPUS][GQ_MAX_GPUS];        /* GPU->host->GPU alone, gpuqual's pipelined staging */
    double driver_staged[GQ_MAX_GPUS][GQ_MAX_GPUS]; /* the driver's own staged copy alone (cudaMemcpyPeer
                                                       without P2P); 0 not measured */
    bool no_p2p[GQ_MAX_GPUS][GQ_MAX_GPUS];          /* discovery or the records say P2P is impossible */
    double h2d[GQ_MAX_GPUS], d2h[GQ_MAX_GPUS];      /* each GPU alone */
    int ndomains;
    gq_gpuset domains[GQ_MAX_GPUS]; /* performance domains (from `domains`, or one per GPU set) */
    int nlimits;
    gq_place_limit limits[GQ_PLACE_MAX_LIMITS];
    double tolerance; /* relative; ties within it */
    char source[160]; /* where the figures came from */
} gq_place_model;

/* Build the model from records (saved or just measured). `dom` and `bn`
 * (each may be NULL) are the performance domains and the shared budgets a
 * domains analysis found (decoded from a saved document by
 * doc/analysis_json.h's gq_place_model_build, which takes the
 * document); domains or budgets naming a GPU beyond ngpu are left out.
 * `topo` (may be NULL) supplies P2P possibility. Invalid records
 * (impossible, overlap, error) are ignored. GQ_E_USAGE when the records hold
 * nothing to place with (no P2P/staged matrix and no host rates), naming
 * what is missing. The caller owns *m (large: allocate it). */
int gq_place_model_build_typed(gq_place_model *m, int ngpu, const gq_recordset *rs, const gq_domains *dom,
                               const gq_bottlenecks *bn, const gq_topo *topo, gq_err *err);

/* Add a limit (for tests and for callers with their own evidence). */
int gq_place_model_add_limit(gq_place_model *m, gq_limit_kind kind, gq_gpuset a, gq_gpuset b, double cap,
                             const char *evidence, gq_err *err);

/* ---- prediction ------------------------------------------------------- */

typedef enum gq_pflow_kind {
    GQ_PF_P2P = 0, /* src GPU -> dst GPU directly */
    GQ_PF_STAGED,  /* src GPU -> host -> dst GPU, pipelined (both legs at one rate) */
    GQ_PF_H2D,     /* host -> GPU `dst` */
    GQ_PF_D2H,     /* GPU `src` -> host */
} gq_pflow_kind;

typedef struct gq_pflow {
    gq_pflow_kind kind;
    int src, dst; /* GPU indices; -1 for the host end */
} gq_pflow;

typedef struct gq_pflow_pred {
    double gbps;  /* predicted rate with the whole pattern running */
    double alone; /* its cap alone */
    int binding;  /* index of the limit that stopped it; -1 its own path; -2 no figure */
    int sharing;  /* flows of the pattern that share that limit */
} gq_pflow_pred;

/* Predict every flow of a concurrent pattern. Returns the aggregate (GB/s).
 * out[] has n entries. */
double gq_place_predict(const gq_place_model *m, const gq_pflow *flows, int n, gq_pflow_pred *out);

/* ---- roles and the mapping ------------------------------------------- */

typedef struct gq_place_roles {
    int prefill, decode; /* counts; 0 = none */
    int offload;         /* KV offload workers (chosen among all usable GPUs) */
    int replicas;        /* 0 = none */
    gq_gpuset usable;    /* GPUs that may be used (0 = all of the model's) */
} gq_place_roles;

typedef struct gq_place_pair {
    int prefill, decode;
    gq_pflow_kind path;
    double predicted_gbps, measured_gbps; /* measured < 0: not verified */
    double alone_gbps;
    char why[480];
} gq_place_pair;

typedef struct gq_place_worker {
    int gpu;
    double predicted_h2d, predicted_d2h; /* with every worker of the set active */
    double measured_h2d, measured_d2h;   /* < 0: not verified */
    char why[480];
} gq_place_worker;

typedef struct gq_place_replica {
    int ngpus;
    int gpus[GQ_MAX_GPUS];
    int npairs; /* with prefill/decode: which pairs this replica holds */
    int pairs[GQ_PLACE_MAX_PAIRS];
    double predicted_gbps; /* host->GPU aggregate with every replica loading at once */
    double measured_gbps;  /* < 0: not verified */
    char why[480];
} gq_place_replica;

/* One mapping (chosen or naive) with its aggregates. */
typedef struct gq_place_map {
    int npairs;
    gq_place_pair pairs[GQ_PLACE_MAX_PAIRS];
    double pairs_predicted, pairs_measured;      /* aggregate of all pairs at once; measured < 0: not run */
    double pairs_measured_lo, pairs_measured_hi; /* its interval from the rounds (0: unknown) */
    double pairs_overlap;
    bool pairs_valid;
    int nworkers;
    gq_place_worker workers[GQ_MAX_GPUS];
    double offload_predicted_h2d, offload_predicted_d2h;
    double offload_measured_h2d, offload_measured_d2h;
    bool offload_valid;
    int nreplicas;
    gq_place_replica replicas[GQ_MAX_GPUS];
    double replicas_predicted_min, replicas_measured_min;
    bool replicas_valid;
} gq_place_map;

/* One verification attempt: what was tried, predicted and measured, and
 * what the measurement taught the model. */
#define GQ_PLACE_MAX_ATTEMPTS 4
typedef struct gq_place_attempt {
    int npairs;
    int prefill[GQ_PLACE_MAX_PAIRS], decode[GQ_PLACE_MAX_PAIRS];
    double pair_predicted[GQ_PLACE_MAX_PAIRS], pair_measured[GQ_PLACE_MAX_PAIRS];
    double pairs_predicted, pairs_measured;
    bool pairs_valid;
    int nworkers;
    int workers[GQ_MAX_GPUS];
    double offload_predicted, offload_measured; /* both directions summed */
    int nreplicas;
    double replicas_predicted_min, replicas_measured_min;
    int nlearned;      /* limits the attempt's measurements added to the model */
    char finding[480]; /* "pairs 0->2 and 1->3 ran at 31.0 GB/s against 53.9 predicted: ..." */
} gq_place_attempt;

/* A warning (the document's warnings[]): a prediction that missed, workers
 * that share a host budget. id is stable ("place_prediction_missed",
 * "place_offload_shared_budget"); text is one sentence. */
typedef struct gq_place_warning {
    char id[40];
    char text[480];
} gq_place_warning;

typedef struct gq_place_result {
    gq_place_roles roles;
    int nwarnings;
    gq_place_warning warnings[GQ_PLACE_MAX_WARNINGS];
    gq_place_map chosen, naive;
    bool all_staged;       /* every handoff of the chosen map goes through host memory */
    int staged_unmeasured; /* of those handoffs, the ones staged for want of a P2P figure (the pair's P2P
                              was not measured, or its figure was not usable), not for want of P2P */
    int nnotes;
    char notes[16][320]; /* findings in plain sentences ("every handoff is host-staged ...") */
    double gain_pairs;   /* measured aggregate / naive's; predicted ratio before verify; 0 n/a */
    /* gain_pairs' interval, from the two aggregates' intervals (the chosen
     * one's low end over the naive one's high end, and the reverse); 0 n/a.
     * A gain whose interval holds 1 is not established. */
    double gain_pairs_lo, gain_pairs_hi;
    double gain_offload, gain_replicas;
    bool verified;
    int nattempts;     /* verification attempts (1 when the first choice held) */
    int final_attempt; /* which attempt the chosen map is */
    gq_place_attempt attempts[GQ_PLACE_MAX_ATTEMPTS];
    int candidates; /* mappings compared */
    bool exhaustive;
} gq_place_result;

/* Check roles against the model: counts >= 0, at least one role, enough
 * usable GPUs (prefill + decode; offload <= usable; replicas divide the pairs
 * or the GPUs). GQ_E_USAGE with one line ("--prefill 6 --decode 4 needs 10
 * GPUs; there are 8 to use"). ngpu <= 0 checks the counts alone (before the
 * machine is known). */
int gq_place_roles_check(const gq_place_roles *r, int ngpu, gq_err *err);

/* Choose the mapping and the naive one, with predictions and explanations. */
int gq_place_solve(const gq_place_model *m, const gq_place_roles *r, gq_place_result *out, gq_err *err);

/* The concurrent patterns a map implies, as harness measurements (flows in
 * pair / worker / replica order; tag = index). bytes per copy. Returns the
 * number of flows (0 when the map has none of that role). */
int gq_place_pairs_measurement(const gq_place_map *map, uint64_t bytes, gq_measurement *out);
int gq_place_offload_measurement(const gq_place_map *map, gq_direction dir, uint64_t bytes,
                                 gq_measurement *out);
int gq_place_replicas_measurement(const gq_place_map *map, uint64_t bytes, gq_measurement *out);

/* The judging steps of the verification (exec/place_verify.h runs it):
 * gq_place_learn adds to *m the shared limits that the flow records from
 * rs->v[first..] show (a group slower than predicted) and returns how many;
 * gq_place_slow_flows writes the flows slower than predicted by more than tol
 * into buf and returns how many; gq_place_summarize_attempt fills an attempt's
 * figures from a measured map; gq_place_same_map says whether two maps place
 * the roles alike; gq_place_attempt_better whether a measured better than b
 * (pairs first, then offload, then replicas); gq_place_note appends a note. */
int gq_place_learn(gq_place_model *m, const gq_recordset *rs, int first);
int gq_place_slow_flows(const gq_place_map *c, double tol, char *buf, size_t n);
void gq_place_summarize_attempt(const gq_place_map *c, gq_place_attempt *a);
bool gq_place_same_map(const gq_place_map *a, const gq_place_map *b);
bool gq_place_attempt_better(const gq_place_attempt *a, const gq_place_attempt *b, double tol);
void gq_place_note(gq_place_result *res, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Warnings. gq_place_warn appends one (dropped past GQ_PLACE_MAX_WARNINGS).
 * gq_place_missed_flows is gq_place_slow_flows both ways: flows measured more
 * than tol away from their prediction, faster or slower. gq_place_warn_missed
 * warns when a verified map's flows missed by more than GQ_PLACE_WARN_MISS
 * (label: "the chosen mapping", "the naive mapping"); returns how many
 * missed. gq_place_warn_budgets warns for every host budget of the model
 * (a limit on host traffic) that two or more of the chosen offload workers
 * share and that binds (their rates alone add up to more), naming the budget,
 * its capacity, its evidence and the GPUs; gq_place_solve calls it, and the
 * card may call it for its offload finding. Returns how many it added. */
void gq_place_warn(gq_place_result *res, const char *id, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int gq_place_missed_flows(const gq_place_map *c, double tol, char *buf, size_t n);
int gq_place_warn_missed(gq_place_result *res, const gq_place_map *c, const char *label);
int gq_place_warn_budgets(const gq_place_model *m, gq_place_result *res);

/* "0,1,2" into buf. */
const char *gq_gpuset_str(gq_gpuset s, char *buf, size_t n);

#endif
