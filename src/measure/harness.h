/* The measurement harness: plan -> workers -> records (after nccl-tests'
 * BenchTime). A caller describes WHAT runs together (a gq_measurement: one
 * group of concurrent flows with labels); the harness owns HOW it is timed:
 * warm-up, rounds, the synchronized start (delegated to the backend's run()),
 * per-worker windows, the overlap rule, statistics, the sanity guard,
 * integrity checks, provenance and the journal.
 *
 * Measurement rules (DESIGN.md) enforced here:
 *  - each flow's rate = bytes completed in its own window / its window;
 *  - an aggregate (sum over flows of bytes_i / window_i) is valid only when,
 *    in every round, the window shared by all flows covers >= 99% of every
 *    flow's own window; otherwise it is recorded invalid with flag "overlap"
 *    and the overlap it had. The flows counted are the reported ones (those
 *    summed); interfering flows (report[i] == false) must instead run during
 *    >= 99% of the reported flows' shared window, or the reported figures,
 *    which claim to be measured under that interference, are invalid with
 *    flag "overlap" too. The overlap recorded is the smaller of the two;
 *  - directions are recorded apart; a bidirectional measurement adds a record
 *    with sum=true, labelled as a sum;
 *  - R rounds (default 5), median/min/max/spread; early stop once the spread
 *    target is met (after at least 3 rounds);
 *  - every figure is checked against its path's theoretical capacity
 *    (measure/sanity.h); above it: flag "impossible", valid=false.
 */
#ifndef GQ_CORE_HARNESS_H
#define GQ_CORE_HARNESS_H

#include <stdbool.h>

#include "backend/backend.h"
#include "measure/cleanroom.h"
#include "measure/journal.h"
#include "measure/measurement.h"
#include "core/record.h"
#include "topo/topo.h"

#define GQ_OVERLAP_MIN 0.99
/* A timed round of concurrent reported flows whose windows overlap less than
 * GQ_OVERLAP_MIN is not counted. A counted round (a fixed number of copies per
 * flow) that fails switches the measurement's remaining rounds to rounds by
 * duration in pieces, once: flows whose rates move apart from round to round
 * cannot end a count together. A round by duration that fails is run again, at
 * most this many times per measurement. The records then carry
 * GQ_FLAG_OVERLAP_RETRIED. A round that still fails after that is counted, and
 * its aggregate and sum are invalid. */
#define GQ_HARNESS_OVERLAP_RETRIES 2
/* Auto mode (neither reps nor duration given): target seconds per round. */
#define GQ_HARNESS_ROUND_S 0.1
/* Auto mode: a round holds this many copies of the slowest measured flow,
 * but lasts between half the target (round_s) and the target. */
#define GQ_HARNESS_ROUND_COPIES 10
/* Auto mode, concurrent groups: longest round the harness will choose to
 * reach the overlap rule when the copies are coarse. */
#define GQ_HARNESS_MAX_ROUND_S 6.0
/* Auto mode, one reported flow with interferers, by duration: at least this
 * many of its copies per round. */
#define GQ_HARNESS_MIN_COPIES 10
/* Auto mode, concurrent groups by duration: each reported flow's copies
 * are moved in pieces of about this share of a round (at least
 * GQ_HARNESS_MIN_PIECE bytes), so that the windows of unequal flows end
 * within one piece of the deadline together. */
#define GQ_HARNESS_GRAIN 0.002
#define GQ_HARNESS_MIN_PIECE (4ull * 1024 * 1024)
/* Longest note the trace hook is given (a round's window log). */
#define GQ_HARNESS_TRACE_NOTE 640

typedef struct gq_harness_opts {
    int rounds;           /* >= 1; default 5 */
    int reps;             /* copies per flow per round; 0 = use duration_s */
    double duration_s;    /* per round when reps == 0 */
    double spread_target; /* stop early when spread <= this (0 = never) */
    bool verify;          /* data pattern check after the timed part */
    int warmup_reps;      /* untimed copies before round 1 (0 = none; auto mode always calibrates) */
    double round_s;       /* auto mode: target seconds per round (0 = GQ_HARNESS_ROUND_S) */
    /* progress callback: called after each round; may be NULL */
    void (*progress)(void *arg, const char *test, int round, int rounds);
    void *progress_arg;
    /* timing trace, may be NULL: called once per phase of each measurement
     * ("prepare", "calibrate", "rounds", "verify", "release"; "latency" for
     * a latency) with its wall seconds; note says what the phase chose (e.g.
     * "reps 38" or "duration 0.128 s"). The library never prints: the CLI
     * prints these under GQ_TRACE=1. */
    void (*trace)(void *arg, const char *test, const char *phase, double seconds, const char *note);
    void *trace_arg;
    /* The clean room (measure/cleanroom.h), or NULL: the GPUs of each
     * measurement are checked before it and after its rounds, and what was
     * seen marks every record of it contaminated (valid = false). */
    gq_cleanroom *clean;
} gq_harness_opts;

/* Default options: 5 rounds, verify on, one warm-up copy, auto mode (reps 0,
 * duration 0).
 *
 * Auto mode: a round lasts round_len = GQ_HARNESS_ROUND_COPIES copies of the
 * slowest measured flow, kept between round_s / 2 and round_s. A single
 * flow runs a count of copies sized to that: the copy time is estimated
 * from the warm-up copy and from the path's capacity (measure/sanity.h),
 * whichever is longer, and corrected after round 1. A concurrent group is
 * calibrated: one copy per flow gives the copy times, then a counted round
 * gives the overlap a common count achieves (windows end together for equal
 * flows and for flows sharing a bottleneck); when it meets the rule (99.5%)
 * that round is kept as round 1. When it does not, the rounds run by
 * duration, with each reported flow's copies moved in pieces of about
 * GQ_HARNESS_GRAIN of a round (gq_run_opts.grain), so that the windows end
 * within a piece of the deadline together; one reported flow with
 * interferers runs by duration without pieces (its window is exact). After
 * the timed rounds, when verify is on, one untimed copy per flow runs with
 * the pattern check. */
void gq_harness_opts_default(gq_harness_opts *o);

/* Run one measurement and append its records to *out (and to journal j when
 * non-NULL, flushed per record). Records: one per reported flow; with
 * m->aggregate, one aggregate per direction of the reported flows; with
 * m->direction_sums, a sum record over the reported flows (and, when they
 * have several directions, the per-direction aggregates too); group = one
 * more than the largest group already in *out.
 * Returns GQ_OK (per-flow failures are in the records: flag "error" with the
 * backend's text, "verify_failed" naming the first bad offset, "impossible"
 * naming the capacity; the other flows continue); GQ_E_INTR when interrupted
 * (records of completed rounds are appended, flagged "incomplete"; none when
 * no round completed); GQ_E_BACKEND (or prepare's status) when the group
 * could not be prepared or a run failed as a whole (then every record the
 * measurement would give is appended, invalid with flag "error" and the
 * error text, so that nothing is silently dropped); GQ_E_IO when a record
 * could not be written to the journal (the records are still in *out);
 * GQ_E_USAGE / GQ_E_FAIL for a malformed measurement or options (nothing
 * appended). */
int gq_harness_measure(gq_backend *be, const gq_topo *topo, const gq_measurement *m, const gq_harness_opts *o,
                       gq_recordset *out, gq_journal *j, gq_err *err);

/* Latency: one record with is_latency=true, value in ns over rounds. */
int gq_harness_latency(gq_backend *be, const gq_topo *topo, const char *test, const gq_latency_req *req,
                       const gq_harness_opts *o, gq_recordset *out, gq_journal *j, gq_err *err);

/* The overlap of a set of windows: (min end - max start) / (end - start) for
 * the longest window... precisely: min over flows i of shared / own_i, where
 * shared = max(0, min_j end_j - max_j start_j). 1.0 for one flow. */
double gq_harness_overlap(const double *start, const double *end, int n);

/* Direction of a flow from its endpoints. */
gq_direction gq_flow_direction(const gq_flow *f);

#endif
