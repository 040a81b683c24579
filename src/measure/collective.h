/* The collectives harness: NCCL's all-reduce, all-gather, reduce-scatter,
 * all-to-all and broadcast over groups of GPUs, timed and figured as
 * nccl-tests does (src/common.cu and one file per collective), with the
 * rules every gpuqual figure keeps.
 *
 * nccl-tests' definitions, kept exactly:
 *  - "size" (bytes of float32) is, per op: all-reduce and broadcast, each
 *    rank's buffer; all-gather, the whole gathered output; reduce-scatter,
 *    the whole input; all-to-all, each rank's send buffer. For all-gather,
 *    reduce-scatter and all-to-all each rank's share is count/n rounded down
 *    to a multiple of 4 elements (16 bytes), so the size run is that share
 *    x n; gq_coll_size() applies the same rounding.
 *  - "count" is elements: size/4 for all-reduce and broadcast; the per-rank
 *    share (size/4/n) for the others.
 *  - time = the timed iterations' time / iters, after `warmup` untimed ones;
 *    algbw = size / time (GB/s, 10^9 B/s); busbw = algbw x factor:
 *    all-reduce 2(n-1)/n, all-gather, reduce-scatter and all-to-all (n-1)/n,
 *    broadcast 1.
 *
 * gpuqual's rules on top: R rounds of (warmup, barrier, iters); the figure
 * is the median over rounds of the per-iteration time; groups run at once
 * are counted only when each group's timed window ran under the load of
 * every other group for GQ_OVERLAP_MIN (99 %, as copies) of its length (see
 * gq_coll_overlap); every rank's data is checked after the
 * timed part; a bus bandwidth above the group's physical limit (for each
 * GPU its fastest possible egress: its NVLinks together, or its PCIe link,
 * whichever is faster; the smallest over the group) is refused as
 * impossible, as measure/sanity.c does for copies.
 *
 * One gq_record per group and size: test "coll_<op>", aggregate, gpus = the
 * group in rank order, bytes = size, value = busbw (GB/s), window_s = the
 * median time per iteration (s), capacity_gbps = the group's limit, flow_tag
 * = the group's index in its run, group = the run's id. algbw is
 * bytes / window_s (docs/json.md).
 */
#ifndef GQ_MEASURE_COLLECTIVE_H
#define GQ_MEASURE_COLLECTIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend/backend.h"
#include "core/record.h"
#include "core/status.h"
#include "topo/topo.h"

/* "all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast". */
const char *gq_coll_op_name(gq_coll_op op);
/* The op named s (the names above; "alltoall" too); GQ_E_USAGE otherwise,
 * with a message naming the accepted names. */
int gq_coll_op_parse(const char *s, gq_coll_op *op, gq_err *err);
/* The record test name, "coll_all_reduce", ...; and the op of such a test
 * name (-1 when it is none). */
const char *gq_coll_test_name(gq_coll_op op);
int gq_coll_op_of_test(const char *test);
/* nccl-tests' columns: redop ("sum" for all-reduce and reduce-scatter,
 * "none" otherwise) and root (0 for broadcast, -1 otherwise). */
const char *gq_coll_redop(gq_coll_op op);
int gq_coll_root(gq_coll_op op);

/* busbw / algbw for n ranks (nccl-tests' GetBw). 0 for n < 1. */
double gq_coll_busbw_factor(gq_coll_op op, int n);
/* algbw and busbw in GB/s of `size` bytes in `sec` seconds per iteration. */
double gq_coll_algbw(uint64_t size, double sec);
double gq_coll_busbw(gq_coll_op op, int n, uint64_t size, double sec);

/* The size nccl-tests runs when asked for `bytes` over groups of the sizes
 * in ns[0..ngroups): a multiple of 4 (all-reduce, broadcast) or, for the
 * others, each rank's share rounded down to 16 bytes for every group (one
 * size for all groups run at once: a multiple of 16 x each group's n). 0 when
 * nothing is left. */
uint64_t gq_coll_size(gq_coll_op op, uint64_t bytes, const int *ns, int ngroups);
/* nccl-tests' count column for a size over n ranks. */
uint64_t gq_coll_count(gq_coll_op op, uint64_t size, int n);

/* The group's physical limit on bus bandwidth in GB/s, from discovery: for
 * each GPU its fastest possible egress (nvlinks_total x nvlink_gbps_per_link,
 * or its PCIe link), the smallest over the group; 0 when unknown for some
 * GPU or for a group of one (no bus). why (n bytes, may be NULL) names the
 * binding GPU and link. */
double gq_coll_group_limit(const gq_topo *t, const gq_coll_group *g, char *why, size_t n);

/* Check a group list against the machine: every GPU exists, no GPU twice,
 * at least one rank per group, groups within GQ_COLL_MAX_GROUPS. One line in
 * err naming the group. */
int gq_coll_check_groups(const gq_coll_group *g, int ngroups, int ngpu, gq_err *err);

/* Parse groups: "0,1,2,3" is one group; groups separated by spaces or ';'
 * ("0,1 2,3") run at once. Appends to g[*ngroups]. `what` names the option
 * in messages. Ranges "0-3" are accepted. */
int gq_coll_parse_groups(const char *spec, const char *what, gq_coll_group *g, int *ngroups, gq_err *err);

typedef struct gq_coll_opts {
    int rounds; /* 1..GQ_MAX_ROUNDS */
    int warmup, iters;
    bool verify;
    int id; /* the records' group (measurement id) */
    /* called after each round; may be NULL */
    void (*progress)(void *arg, const char *test, int round, int rounds);
    void *progress_arg;
} gq_coll_opts;

/* Measure req->op at req->bytes (already a gq_coll_size) over req's groups
 * at once, o->rounds rounds; one record per group appended to rs (in group
 * order). A group whose run failed, whose data was wrong, whose windows
 * missed the overlap rule in every round or whose busbw is above its limit
 * gets an invalid record with the flag that says why. Returns GQ_OK, or
 * GQ_E_UNSUPP when the backend has no collectives, GQ_E_INTR when
 * interrupted (nothing appended), GQ_E_NOMEM. */
int gq_coll_measure(gq_backend *be, const gq_topo *topo, const gq_coll_req *req, const gq_coll_opts *o,
                    gq_recordset *rs, gq_err *err);

/* The overlap rule for groups run at once. As an interfering copy does
 * (backend.h, gq_flow.interferer), a group that has finished its timed
 * iterations keeps the fabric loaded (it runs on, untimed) until every group
 * has finished its own, so the end of a window is always under load and
 * groups of unequal speed need not end together; what can miss is the start:
 * the part of a group's window before the last group started. Returns the
 * smallest share over groups of its own window from the last start on (1.0:
 * every window under the others' load; 1.0 for one group). The sim backend
 * keeps every group's flows on the fabric for the whole run, which is that
 * contract; a backend that lets a fast group stop early breaks it. */
double gq_coll_overlap(const double *start, const double *end, int n);

/* Whether the backend can run collectives: its coll_probe, or "this backend
 * has no collectives" when it has no hooks. Never fails. */
void gq_coll_probe(gq_backend *be, gq_coll_info *info);

/* Figures of a collective record: algbw (GB/s) and time per iteration (us),
 * 0 when unknown. */
double gq_coll_record_algbw(const gq_record *r);
double gq_coll_record_time_us(const gq_record *r);

#endif
