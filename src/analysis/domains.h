/* Performance domains: groups of GPUs that exchange data with each other
 * faster than with the rest, found from a measured pairwise matrix alone
 * (docs/method-domains.md has the method and its reasons).
 *
 * Method, in short:
 *  1. Each unordered pair {i,j} gets one value: the mean of the measured
 *     directions i->j and j->i that are usable (valid, not impossible; by
 *     default only direct P2P cells, not host-staged ones), and the larger of
 *     their relative spreads. A pair with no usable cell is "missing": no edge.
 *  2. The pair values are sorted. A gap between the k-th and (k+1)-th value is
 *     a boundary when, on the pair values' intervals from their rounds
 *     (gq_record_interval; without one, the value +- half its spread), even
 *     the least favourable ends keep it at least min_rel_gap (10%) wide: the
 *     lowest end above it over the highest end below it. So it is larger
 *     than the measurement noise, and a noiseless simulation does not split
 *     on model details. It is no boundary when even the most favourable
 *     ends (the highest lower end below, the lowest upper end above) are
 *     less than min_rel_gap apart; between the two it is open: not split,
 *     and named in `open` (exec measures its nearest pairs again).
 *  3. Candidates are tried from the largest relative gap (log ratio) down. For
 *     each, the GPUs are joined by every pair at or above the gap (single
 *     linkage = connected components). The first candidate that gives more
 *     groups than the edges alone do is the boundary.
 *  4. With no such gap the matrix is flat and the domains are the connected
 *     components of all usable edges: one domain when every pair has P2P,
 *     singletons when none has (every GPU-to-GPU byte is host-staged).
 * A domain whose own pairs are not all above the boundary (joined through a
 * chain of fast pairs) is marked "chained".
 *
 * Two refinements (docs/method-domains.md, "A broken GPU, and the hierarchy"):
 *  - Before clustering, a GPU whose every pair is slow for a reason of its
 *    own is set aside as a finding about that GPU (a singleton domain): one
 *    with no direct P2P pair while other GPUs have some, or one whose fastest
 *    pair, raised by its spread, stays below the slowest pair among the other
 *    GPUs, lowered by its spread, by at least min_rel_gap (its link trained
 *    down, say). Repeated while a GPU qualifies and at least two remain.
 *  - The boundary is found again inside every group it makes (of 3+ GPUs),
 *    down the hierarchy of gaps that exceed the spread (node, socket,
 *    switch): the domains are the groups no significant gap splits further,
 *    and every group that was split is listed in `groups`.
 */
#ifndef GQ_ANALYSIS_DOMAINS_H
#define GQ_ANALYSIS_DOMAINS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/record.h"
#include "topo/topo.h"

/* A pairwise bandwidth matrix over n GPUs. Row/column k is GPU gpu[k].
 * gbps[i][j]: transfer from gpu[i] to gpu[j]; NAN when missing (not measured,
 * invalid, impossible, or the diagonal). */
typedef struct gq_pairmatrix {
    int n;
    int gpu[GQ_MAX_GPUS];
    double gbps[GQ_MAX_GPUS][GQ_MAX_GPUS];
    double spread[GQ_MAX_GPUS][GQ_MAX_GPUS]; /* relative, (max-min)/median; 0 = unknown */
    bool staged[GQ_MAX_GPUS][GQ_MAX_GPUS];   /* the cell was measured through host memory */
    int record[GQ_MAX_GPUS][GQ_MAX_GPUS];    /* index of the record behind the cell, -1 none */
    /* the cell's interval from its rounds (gq_record_interval); NAN unknown:
     * the cell's figure +- half its spread is used */
    double lo[GQ_MAX_GPUS][GQ_MAX_GPUS], hi[GQ_MAX_GPUS][GQ_MAX_GPUS];
} gq_pairmatrix;

/* Set n GPUs (gpus may be NULL: 0..n-1) and every cell to missing. */
void gq_pairmatrix_init(gq_pairmatrix *m, const int *gpus, int n);

/* Is a record fit for analysis? Valid, and none of the flags impossible,
 * error, overlap, verify_failed. When not, *why (may be NULL) names the reason
 * ("impossible", "invalid: <error>", ...; a static or record-owned string). */
bool gq_domains_usable(const gq_record *r, const char **why);

/* For every record i, out[i] = the number of per-flow records (neither
 * aggregate nor sum) in its group, i.e. how many flows ran together with it.
 * out must hold rs->n ints. Returns GQ_OK or GQ_E_NOMEM. */
int gq_domains_group_sizes(const gq_recordset *rs, int *out);

/* Fill m from the per-flow P2P records of groups that ran ONE flow (a
 * one-pair-at-a-time matrix). tests: NULL-terminated list of test names to
 * take (NULL = any test, except *_bidirectional_* tests whose interfering
 * direction is not recorded). Records that qualify but are not usable leave
 * the cell missing. When two records fill one cell the later one wins.
 * Returns the number of cells filled, or -1 when out of memory (the matrix
 * then holds no cell). */
int gq_pairmatrix_from_records(gq_pairmatrix *m, const gq_recordset *rs, const char *const *tests);

typedef struct gq_domains_opts {
    double min_rel_gap;  /* smallest relative gap that may be a boundary; default 0.10 */
    bool staged_edges;   /* count host-staged cells as edges; default false */
    bool no_set_aside;   /* do not set broken GPUs aside (default false) */
    const gq_topo *topo; /* NULL, or discovery's, to say why a GPU was set aside (its link) */
} gq_domains_opts;

/* One group of the hierarchy that a boundary split: its GPUs, the group it
 * lies in (-1: the top), its depth (0: the top) and its boundary. */
typedef struct gq_domain_group {
    uint64_t gpus; /* bit g: GPU index g */
    int parent, depth;
    double threshold_gbps, gap_lo_gbps, gap_hi_gbps;
} gq_domain_group;

void gq_domains_opts_default(gq_domains_opts *o);

/* A boundary the figures' intervals could not decide (docs/method-domains.md,
 * "Decisions on intervals"): within the group `gpus`, the pairs at or below
 * lo_gbps and those at or above hi_gbps (medians either side of the gap) are
 * split when even the least favourable ends of their intervals (worst_pct)
 * keep them min_rel_gap apart, and not when even the most favourable ends
 * (best_pct) fall short; between the two the boundary is open. The group is
 * then not split there. pairs: the GPU pairs nearest the gap on either side,
 * the ones to measure again. */
#define GQ_DOMAINS_MAX_OPEN 8
#define GQ_DOMAINS_OPEN_PAIRS 8
typedef struct gq_domain_open {
    uint64_t gpus; /* bit g: GPU index g */
    double lo_gbps, hi_gbps;
    double worst_pct, best_pct; /* the gap's relative size at the intervals' ends, % */
    int npairs;
    int pair_a[GQ_DOMAINS_OPEN_PAIRS], pair_b[GQ_DOMAINS_OPEN_PAIRS]; /* GPU indices */
    char text[256];
} gq_domain_open;

typedef struct gq_domains {
    int ndomains;
    int size[GQ_MAX_GPUS];                /* GPUs in domain d */
    int member[GQ_MAX_GPUS][GQ_MAX_GPUS]; /* GPU indices, ascending; domains ordered by first GPU */
    bool chained[GQ_MAX_GPUS];            /* domain d holds a pair below the boundary */
    int domain_of[GQ_MAX_GPUS];           /* by GPU index; -1 for GPUs not in the matrix */
    bool split;                           /* a significant gap was found */
    double threshold_gbps; /* pairs >= this are "fast" (the value just above the gap); 0 without split */
    double gap_lo_gbps, gap_hi_gbps;    /* the pair values either side of the boundary */
    double within_min_gbps;             /* slowest pair inside any domain; NAN if no domain has 2 GPUs */
    double across_max_gbps;             /* fastest pair between domains; NAN if none */
    double max_spread;                  /* largest spread among the pair values */
    int npairs;                         /* unordered pairs with a usable value */
    int nmissing;                       /* unordered pairs without */
    bool no_p2p;                        /* n >= 2, no pair has a usable direct value, and some pair was
                                           measured (staged, or at 0; else nothing is known of P2P) */
    int nset_aside;                     /* GPUs set aside before clustering (each its own domain) */
    int set_aside[GQ_MAX_GPUS];         /* their indices, in the order found */
    bool set_aside_no_p2p[GQ_MAX_GPUS]; /* [k]: set aside for having no P2P (else: slow pairs) */
    char set_aside_why[GQ_MAX_GPUS][200];
    int ngroups; /* groups split by a boundary, parents before children */
    gq_domain_group groups[GQ_MAX_GPUS];
    int nopen; /* boundaries left open (not split), each named */
    gq_domain_open open[GQ_DOMAINS_MAX_OPEN];
} gq_domains;

/* Cluster. Returns GQ_OK, or GQ_E_USAGE for an empty matrix (n < 1). */
int gq_domains_cluster(const gq_pairmatrix *m, const gq_domains_opts *o, gq_domains *out, gq_err *err);

/* "0-3", "0,3", "4-7,9" into buf (at least 8 bytes); gpus in any order (sorted
 * in a copy), at most GQ_MAX_GPUS of them are used. */
const char *gq_domains_set_str(const int *gpus, int n, char *buf, size_t len);

#endif
