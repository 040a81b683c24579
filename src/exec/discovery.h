/* The one discovery pipeline: probe plan -> pair matrix -> clustering into
 * domains -> contention probes -> bottlenecks, measured through the harness
 * on any backend. `gpuqual domains` runs it whole (gq_discovery_run), `gpuqual
 * place` too with its own options, and the card runs its stages one card step
 * at a time (gq_discovery_begin, then _matrix, _domains, _settle_domains,
 * _contention, _settle, _infer). The analysis steps read only the records it
 * produced.
 */
#ifndef GQ_EXEC_DISCOVERY_H
#define GQ_EXEC_DISCOVERY_H

#include <stdbool.h>

#include "analysis/bottlenecks.h"
#include "analysis/domains.h"
#include "analysis/probes.h"
#include "backend/backend.h"
#include "measure/harness.h"
#include "measure/journal.h"

/* A concurrent run whose aggregate fails only the overlap rule is run once
 * more by duration, with rounds long enough that one copy is 0.8% of a
 * round, at most this long. */
#define GQ_DISCOVERY_MAX_RETRY_S 10.0

typedef struct gq_discovery_opts {
    uint64_t bytes;          /* per copy; default 64 MiB: at the asymptotic rate (seed 001's sweep
                              * flattens from 16 MiB) yet short enough for concurrent windows to
                              * overlap by 99% within seconds */
    gq_method method;        /* GPU-to-GPU copies: ce or sm (reads) */
    gq_harness_opts harness; /* rounds etc. */
    gq_domains_opts domains;
    gq_bn_opts bottlenecks; /* .bytes is set to `bytes` */
    gq_journal *journal;    /* may be NULL */
    /* called before each measurement (done: its number, from 1); may be
     * NULL. total: the matrix plus the contention probes on the domains the
     * tree suggests (what --plan-only shows) until the measured domains are
     * known, then the plan's real count. */
    void (*progress)(void *arg, int done, int total, const gq_probe *pr);
    void *progress_arg;
    /* How one measurement is run; NULL: the plan runner (exec/plan_run.h),
     * with a retry by duration after a concurrent run that failed only the
     * overlap rule, and a failed measurement left in the records. Otherwise
     * the caller measures m into the pipeline's records, with ho (NULL: its
     * own options; else the rounds of a settle pass), pr the probe it is (NULL
     * for a group measured again), done/total as for progress; a non-zero
     * return stops the stage, which returns it (GQ_E_INTR too). */
    int (*measure)(void *arg, const gq_probe *pr, int done, int total, gq_measurement *m,
                   const gq_harness_opts *ho, gq_err *err);
    void *measure_arg;
    bool settle;            /* measure again the groups open decisions rest on (default true) */
    bool cluster_with_topo; /* domains.topo = the machine when unset (default true) */
    bool assume_on_error; /* clustering that fails (but for out of memory) gives the domains the tree suggests
                             (default false) */
    const char *const *matrix_tests; /* the tests the pair matrix reads (NULL-terminated); NULL: all */
    /* contention probes planned on their own, not after the probes already
     * in the plan (the planner leaves out a split probe whose pairs a probe
     * of the plan already has; the card plans each step's probes apart) */
    bool contention_apart;
} gq_discovery_opts;

void gq_discovery_opts_default(gq_discovery_opts *o);

/* Decisions left open (docs/method-domains.md, "Decisions on intervals"):
 * the groups they rest on are measured again with more rounds, pass p
 * (from 0) with GQ_SETTLE_ROUNDS_X << p times the rounds (at most
 * GQ_MAX_ROUNDS), at most GQ_SETTLE_PASSES passes of at most
 * GQ_SETTLE_MAX_GROUPS groups each; what is still open after that is
 * reported as undetermined. */
#define GQ_SETTLE_ROUNDS_X 3
#define GQ_SETTLE_PASSES 2
#define GQ_SETTLE_MAX_GROUPS 24

/* The rounds to measure group `group` of rs again with, in settle pass
 * `pass`, for a plan of `rounds` rounds: more rounds narrow an interval; a
 * run the overlap rule refused is repeated with as many rounds as before
 * (more rounds would only give it more chances to be refused again). */
int gq_settle_rounds(const gq_recordset *rs, int group, int rounds, int pass);

/* The measurement that ran as group `group` of rs, to run it again: its
 * reported flows (ends, method, size, executing GPU) with the same test
 * name, an aggregate and direction sums where it had them. false when rs
 * has no flow of that group. */
bool gq_measurement_from_group(const gq_recordset *rs, int group, gq_measurement *m);

/* The groups behind the pairs of dom's open boundaries (both directions of
 * each pair, from the cells of m), each once, at most max; returns how many. */
int gq_domains_open_groups(const gq_domains *dom, const gq_pairmatrix *m, const gq_recordset *rs, int *groups,
                           int max);

typedef struct gq_discovery {
    gq_recordset records; /* every record measured (unless the caller gave its own to gq_discovery_begin) */
    gq_recordset *rs;     /* where the records go: &records or the caller's */
    gq_probe_plan plan;   /* every probe planned (matrix first) */
    gq_pairmatrix *matrix;
    gq_domains *domains;
    gq_bottlenecks *bottlenecks;
    bool interrupted; /* Ctrl-C: the analysis covers what finished */
    int retries;      /* concurrent runs measured again by duration after an overlap failure */
    int remeasured;   /* groups measured again because a decision on them was open */
    /* the run's context (gq_discovery_begin) */
    gq_backend *be;
    const gq_topo *topo;
    int gpus[GQ_MAX_GPUS], n;
    gq_discovery_opts o;
    gq_measurement *m; /* scratch (large) */
    int done;          /* probes measured so far (progress) */
} gq_discovery;

/* Run the pipeline over gpus[0..n). *out is initialised here; release it with
 * gq_discovery_free() whatever the return. A measurement that fails leaves
 * invalid records and the pipeline carries on; GQ_E_INTR is not returned
 * (out->interrupted says so). Returns GQ_OK, GQ_E_NOMEM, or a harness error
 * that stops everything (e.g. a journal that cannot be written). */
int gq_discovery_run(gq_backend *be, const gq_topo *topo, const int *gpus, int n, const gq_discovery_opts *o,
                     gq_discovery *out, gq_err *err);
void gq_discovery_free(gq_discovery *d);

/* The stages, for a caller that runs them apart (the card, one step each).
 * begin: *d initialised over gpus[0..n) with options o (copied; NULL: the
 * defaults), its records going to rs (NULL: d->records); release with
 * gq_discovery_free() whatever the return. */
int gq_discovery_begin(gq_discovery *d, gq_backend *be, const gq_topo *topo, const int *gpus, int n,
                       const gq_discovery_opts *o, gq_recordset *rs, gq_err *err);
/* The matrix: one GPU pair at a time, pairs without P2P left out when
 * p2p_only, every probe in d->plan. */
int gq_discovery_matrix(gq_discovery *d, bool p2p_only, gq_err *err);
/* d->matrix and d->domains from the records so far (o.matrix_tests). */
int gq_discovery_domains(gq_discovery *d, gq_err *err);
/* The boundaries the matrix leaves open: the groups nearest each measured
 * again (GQ_SETTLE_*), and the domains clustered again. */
int gq_discovery_settle_domains(gq_discovery *d, gq_err *err);
/* The contention probes on d->domains and the tree, planned again and added
 * to d->plan; only the host probes of each GPU alone when host_alone, only
 * the others when not, all of them when all. */
int gq_discovery_contention(gq_discovery *d, bool all, bool host_alone, gq_err *err);
/* The groups the open decisions of the bottleneck inference rest on, measured
 * again (GQ_SETTLE_*). */
int gq_discovery_settle(gq_discovery *d, gq_err *err);
/* Groups groups[0..n) measured again with the rounds of settle pass `pass`. */
int gq_discovery_remeasure(gq_discovery *d, const int *groups, int n, int pass, gq_err *err);
/* d->bottlenecks from the records so far (bytes: o.bytes). */
int gq_discovery_infer(gq_discovery *d, gq_err *err);

#endif
