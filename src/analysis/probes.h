/* Probe planning for domain and bottleneck discovery: which measurements to
 * run, chosen from the GPU count, the topology tree and the domains, never
 * from all subsets (docs/method-domains.md, "Probes").
 *
 * Phase 1, the pairwise matrix: every ordered pair alone, P2P read where
 * discovery says P2P works, host-staged where it does not. N(N-1) probes.
 * Phase 2, contention, per host direction (h2d, d2h):
 *   - each GPU alone (N);
 *   - each group the tree gives: the GPUs below one PCIe switch, root port or
 *     host bridge, and the GPUs of one NUMA node (at most ~3N distinct sets);
 *   - each domain of 2 or more GPUs;
 *   - every GPU at once;
 *   - every pair inside a domain, and inside the smallest tree groups, to
 *     find sharing finer than the domains (seed 001's {0,1} and {2,3});
 *     at most N(N-1)/2.
 *   GPU-to-GPU: one probe with disjoint pairs inside every domain at once,
 *   and for every two domains of 2+ GPUs one probe pairing them k-th to k-th
 *   (seed 001's 0:4,1:5,2:6,3:7); then, for every split the measurements or
 *   the tree suggest (each group of the domain hierarchy into its halves;
 *   the GPUs below each PCIe switch, root port or host bridge, and of each
 *   NUMA node, against the rest), one probe in each direction where all the
 *   pairs crossing it copy at once (P2P where it exists, host-staged where
 *   not; GPUs the domains set aside stay out), to find a link that binds only
 *   when many pairs cross together (the socket interconnect behind several
 *   switches).
 * Sets are de-duplicated. The whole plan is at most N(N-1) + 2(4N + 1 +
 * N(N-1)/2) + 1 + N^2/8 + 8N measurements: O(N^2).
 */
#ifndef GQ_ANALYSIS_PROBES_H
#define GQ_ANALYSIS_PROBES_H

#include <stdbool.h>

#include "analysis/domains.h"
#include "measure/measurement.h"
#include "core/record.h"
#include "topo/topo.h"

#define GQ_PROBE_MAX_PAIRS (GQ_MAX_GPUS / 2)

typedef enum gq_probe_kind {
    GQ_PROBE_MATRIX = 0, /* one ordered GPU pair alone */
    GQ_PROBE_HOST_ALONE, /* one GPU and host memory */
    GQ_PROBE_HOST_GROUP, /* a set of GPUs with host memory at once */
    GQ_PROBE_HOST_PAIR,  /* two GPUs of a domain / tree group with host memory at once */
    GQ_PROBE_HOST_ALL,   /* every GPU with host memory at once */
    GQ_PROBE_P2P_WITHIN, /* concurrent pairs inside domains */
    GQ_PROBE_P2P_ACROSS, /* concurrent pairs between two domains */
    GQ_PROBE_P2P_SPLIT,  /* every pair crossing one split (socket, root complex, switch) at once */
    GQ_PROBE_NKINDS
} gq_probe_kind;

/* "matrix", "host_alone", "host_group", "host_pair", "host_all", "p2p_within", "p2p_across",
 * "p2p_split". */
const char *gq_probe_kind_name(gq_probe_kind k);

typedef struct gq_probe {
    gq_probe_kind kind;
    gq_direction direction; /* h2d or d2h for host probes; p2p otherwise */
    int ngpus;              /* host probes: the GPUs copying at once, ascending */
    int gpus[GQ_MAX_GPUS];
    int npairs; /* matrix and p2p probes: src -> dst pairs */
    int src[GQ_PROBE_MAX_PAIRS], dst[GQ_PROBE_MAX_PAIRS];
    bool staged[GQ_PROBE_MAX_PAIRS]; /* pair k has no P2P: staged through host memory */
    char why[96];                    /* "PCIe switch 0000:01:00.0", "NUMA node 1", "domain 0", ... */
} gq_probe;

typedef struct gq_probe_plan {
    int n, cap;
    gq_probe *v; /* owned */
    int count[GQ_PROBE_NKINDS];
} gq_probe_plan;

void gq_probe_plan_free(gq_probe_plan *p);

/* Phase 1: append the matrix probes over gpus[0..n). P2P is taken as possible
 * unless the topology says it is not (p2p_cuda == 0). GQ_E_NOMEM. */
int gq_probes_plan_matrix(gq_probe_plan *p, const gq_topo *t, const int *gpus, int n, gq_err *err);

/* Phase 2: append the contention probes. dom: the domains found (NULL: none
 * known; host probes come from the tree alone and no P2P probes are made).
 * Host probes for h2d then d2h. GQ_E_NOMEM. */
int gq_probes_plan_contention(gq_probe_plan *p, const gq_topo *t, const int *gpus, int n,
                              const gq_domains *dom, gq_err *err);

/* Domains as the tree suggests them, for planning before the matrix is
 * measured (--plan-only): the NVLink-connected components when any GPU has
 * NVLinks, else the P2P-capable GPUs of each NUMA node, else singletons. */
void gq_probes_assume_domains(const gq_topo *t, const int *gpus, int n, gq_domains *out);

/* The largest number of measurements the plan could have for n GPUs
 * whatever the domains (the bound in the header comment). */
long gq_probes_bound(int n);

/* Estimated seconds to run the plan with `rounds` rounds of round_s each:
 * a one-flow probe takes (rounds + 1) round lengths (warm-up calibration),
 * a concurrent one (rounds + 2) (its overlap calibration), plus setup. */
double gq_probes_estimate_s(const gq_probe_plan *p, int rounds, double round_s);

/* The harness measurement for a probe: host probes copy between each GPU and
 * host memory local to it (copy engine); GPU pairs copy src -> dst with
 * p2p_method (ce or sm) executed by dst when `read`, by src otherwise, or
 * staged through host memory where the pair has no P2P. Every flow is
 * reported; groups of 2+ flows get an aggregate. *m is overwritten (it is
 * large: allocate it). */
void gq_probe_measurement(const gq_probe *pr, uint64_t bytes, gq_method p2p_method, bool read,
                          gq_measurement *m);

/* Parse a pair list "0:1,2:3" (what: the option's name for messages, e.g.
 * "pairs" or "--vs"). Each item is SRC:DST with two different GPU indices;
 * a GPU may appear in one pair only when `disjoint`. ngpu > 0 also checks
 * that every GPU exists (0 skips that check, for parsing before discovery).
 * At most max pairs. GQ_E_USAGE with one line naming the bad item and what
 * would be right. */
int gq_probes_parse_pairs(const char *s, const char *what, bool disjoint, int ngpu, int *src, int *dst,
                          int max, int *n, gq_err *err);

/* "0:1,2:3" / "0,1,2,3" description of a probe's GPUs into buf. */
const char *gq_probe_str(const gq_probe *pr, char *buf, size_t n);

#endif
