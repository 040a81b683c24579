/* Shared bottlenecks, inferred from records alone (docs/method-domains.md).
 *
 * Host paths, per direction (h2d, d2h):
 *   - alone[g]: GPU g's rate when it copied with nothing else running;
 *   - every group that ran concurrently is an *observation*: the GPUs, their
 *     valid aggregate (overlap rule met), and the aggregate *expected* from
 *     what is known so far: each GPU's alone rate, capped by every bottleneck
 *     already found among its GPUs (nested budgets, smallest first);
 *   - groups are taken from the smallest to the largest. A group whose
 *     aggregate is well below its expectation (by more than min_drop, 20%,
 *     plus twice the spread of the figures involved) reveals a new bottleneck: its
 *     GPUs share a budget, and the aggregate is the measured shared capacity;
 *   - a bottleneck whose capacity is no larger than that of a bigger one
 *     containing it (within min_drop) is the bigger one seen from fewer GPUs:
 *     it is folded into it as evidence.
 * GPU-to-GPU: each concurrent group of pairs is compared with the sum of the
 * same pairs measured one at a time; a group well below that sum is a P2P
 * bottleneck, "cross-domain" when every pair crosses between domains.
 * Each bottleneck is then checked against the topology tree: the same PCIe
 * switch, root port or host bridge (the lowest tree node whose GPUs are
 * exactly the bottleneck's), the same NUMA node, the CPU interconnect for
 * cross-node P2P; otherwise it is "inferred from measurement only" (as in a
 * VM that shows one NUMA node and a flat tree).
 * Only usable records count (gq_domains_usable); the others are listed in
 * `ignored` with the reason. A group measured again with more rounds (the
 * same test over the same flows and size) counts by that run only; a repeat
 * with as many rounds is one more observation.
 * Every decision is made on intervals (gq_record_interval): a run is held
 * back when its aggregate's whole interval is below the whole interval of
 * expected x (1 - min_drop), free when wholly above; otherwise the decision
 * is open (`open`): exec measures the groups it rests on again with more
 * rounds (gq_bottlenecks_open_groups), and what stays open is reported as
 * undetermined, never decided by the median alone.
 */
#ifndef GQ_ANALYSIS_BOTTLENECKS_H
#define GQ_ANALYSIS_BOTTLENECKS_H

#include <stdbool.h>
#include <stdint.h>

#include "analysis/domains.h"
#include "core/record.h"
#include "topo/topo.h"

#define GQ_BN_MAX 64
#define GQ_BN_MAX_EVIDENCE 8
#define GQ_BN_MAX_PAIRS (GQ_MAX_GPUS / 2)

typedef enum gq_bn_explain {
    GQ_EXPLAIN_MEASUREMENT_ONLY = 0, /* nothing in the tree accounts for it */
    GQ_EXPLAIN_PCIE_SWITCH,          /* a PCIe switch (bridge below a root port) */
    GQ_EXPLAIN_ROOT_PORT,            /* a root port (bridge directly below a host bridge) */
    GQ_EXPLAIN_HOST_BRIDGE,          /* a host bridge (root complex) */
    GQ_EXPLAIN_NUMA_NODE,            /* the GPUs of one NUMA node (socket) */
    GQ_EXPLAIN_CPU_INTERCONNECT,     /* P2P crossing NUMA nodes (SYS) */
} gq_bn_explain;

/* "measurement_only", "pcie_switch", "root_port", "host_bridge", "numa_node", "cpu_interconnect". */
const char *gq_bn_explain_name(gq_bn_explain e);

/* What a PCIe tree node is, for explanations: a host bridge; a bridge with
 * two or more children, or below another bridge, is a PCIe switch; a bridge
 * with one child right below a host bridge is a root port. */
gq_bn_explain gq_bn_pci_kind(const gq_topo *t, int node);
/* "PCIe switch", "root port", "host bridge" for those kinds. */
const char *gq_bn_pci_kind_text(gq_bn_explain e);

/* P2P observation kinds. */
typedef enum gq_bn_p2p_kind { GQ_P2P_WITHIN = 0, GQ_P2P_ACROSS, GQ_P2P_MIXED } gq_bn_p2p_kind;
const char *gq_bn_p2p_kind_name(gq_bn_p2p_kind k); /* "within", "across", "mixed" */

/* One concurrent group as the analysis saw it. */
typedef struct gq_bn_obs {
    int group;  /* records' group id */
    int record; /* index of its aggregate record */
    char test[64];
    bool p2p;
    gq_direction direction; /* h2d, d2h, or p2p */
    uint64_t bytes;
    int ngpus;
    int gpus[GQ_MAX_GPUS]; /* ascending */
    int npairs;            /* p2p: the pairs, src -> dst */
    int pair_src[GQ_BN_MAX_PAIRS], pair_dst[GQ_BN_MAX_PAIRS];
    gq_bn_p2p_kind p2p_kind;
    double rate[GQ_MAX_GPUS]; /* host: per GPU index; p2p: per pair; NAN unknown */
    double aggregate_gbps;
    double sum_alone_gbps; /* host: sum of the alone rates; p2p: sum of isolated pair rates */
    double expected_gbps;  /* host: with the bottlenecks known before it; p2p: = sum_alone */
    double overlap;
    bool contended; /* aggregate well below expected */
    /* The decision on intervals (docs/method-domains.md, "Decisions on
     * intervals"): the aggregate's interval from its rounds, and the
     * interval of the level it is held to (expected x (1 - min_drop), from
     * the intervals of the figures the expectation adds up). undecided: the
     * two overlap, so whether the run was held back is not known; it is then
     * not taken as a budget. */
    double aggregate_lo_gbps, aggregate_hi_gbps;
    double limit_lo_gbps, limit_hi_gbps;
    bool undecided;
} gq_bn_obs;

typedef struct gq_bottleneck {
    bool p2p;
    gq_direction direction; /* h2d, d2h, p2p */
    int ngpus;
    int gpus[GQ_MAX_GPUS]; /* ascending */
    double capacity_gbps;  /* the measured shared capacity (largest aggregate seen for this set) */
    double capacity_lo_gbps, capacity_hi_gbps; /* its interval, from the rounds of that aggregate */
    double sum_alone_gbps;                     /* what the GPUs get alone, summed (p2p: isolated pairs) */
    double expected_gbps;                      /* what was expected without this bottleneck */
    bool cross_domain;                         /* p2p: every pair crossed between domains */
    int ndomains;                              /* p2p: the domains the pairs touch */
    int domains[GQ_MAX_GPUS];
    int nevidence;
    int evidence[GQ_BN_MAX_EVIDENCE]; /* indices into obs[] */
    gq_bn_explain explained;
    char node[64];         /* the tree node or NUMA node that explains it ("" none) */
    double link_gbps;      /* that node's upstream link capacity, 0 unknown */
    char explanation[384]; /* one sentence */
} gq_bottleneck;

/* A decision the figures could not make (gq_bottlenecks.undecided). */
typedef enum gq_bn_open_kind {
    GQ_BN_OPEN_BUDGET = 0, /* obs: was the run held below its expectation? */
    GQ_BN_OPEN_FOLD, /* obs (inside) and other (containing): does the inner set have a budget of its own? */
    GQ_BN_OPEN_MISSING, /* group: a run whose aggregate failed the overlap rule, never measured valid */
} gq_bn_open_kind;

typedef struct gq_bn_open {
    gq_bn_open_kind kind;
    int obs;   /* the observation (for a fold: of the inner budget) */
    int other; /* for a fold: the observation of the containing budget; else -1 */
    int group; /* for a missing run: its group (obs is -1); else the group of obs */
    bool p2p;
    gq_direction direction;
    int ngpus;
    int gpus[GQ_MAX_GPUS];
    double figure_lo_gbps, figure_hi_gbps; /* the figure's interval */
    double limit_lo_gbps, limit_hi_gbps;   /* the interval of what it was held to */
    char text[256];                        /* one sentence: what could not be decided, with the intervals */
} gq_bn_open;

typedef struct gq_bn_ignored {
    int record;
    char why[240];
} gq_bn_ignored;

typedef struct gq_bottlenecks {
    int n;
    gq_bottleneck v[GQ_BN_MAX];
    int nobs, capobs;
    gq_bn_obs *obs;               /* owned */
    double alone[2][GQ_MAX_GPUS]; /* [0] h2d, [1] d2h, by GPU; NAN unknown */
    double alone_spread[2][GQ_MAX_GPUS];
    double alone_lo[2][GQ_MAX_GPUS], alone_hi[2][GQ_MAX_GPUS]; /* their intervals (gq_record_interval) */
    int alone_record[2][GQ_MAX_GPUS];
    uint64_t bytes[2]; /* buffer size the host analysis used, per direction */
    int nignored, capignored;
    gq_bn_ignored *ignored; /* owned: records kept out and why */
    int nskipped;           /* groups that could not be analysed (missing alone rate, mixed, ...) */
    int nsuperseded;        /* groups measured again later with more rounds (the later run counts) */
    int nopen;              /* decisions the intervals left open: "undetermined" in the output */
    gq_bn_open open[GQ_BN_MAX];
    bool one_numa_visible; /* the topology shows one NUMA node */
    /* Asymmetry in the largest host run of each direction (seed 001: with all
     * eight copying, GPUs 0-3 get less than 4-7): the GPUs whose rate is below
     * (1 - min_drop) x the fastest GPU of that run. asym_obs = -1: no such run. */
    int asym_obs[2];
    int nslow[2];
    int slow[2][GQ_MAX_GPUS];
    double slow_lo[2], slow_hi[2], fast_lo[2], fast_hi[2];
} gq_bottlenecks;

typedef struct gq_bn_opts {
    double min_drop; /* a group is contended below (1 - min_drop - 2*spread) x expected; default 0.20 */
    uint64_t bytes;  /* host figures of this buffer size only; 0 = the most common size */
} gq_bn_opts;

void gq_bn_opts_default(gq_bn_opts *o);

/* Infer bottlenecks. topo and dom may be NULL (no explanation / no P2P
 * classification). *out is initialised here and must be released with
 * gq_bottlenecks_free() whatever the return. Returns GQ_OK or GQ_E_NOMEM. */
int gq_bottlenecks_infer(const gq_recordset *rs, const gq_topo *topo, const gq_domains *dom,
                         const gq_bn_opts *o, gq_bottlenecks *out, gq_err *err);
void gq_bottlenecks_free(gq_bottlenecks *b);

/* The groups to measure again so that the open decisions can be made: each
 * open observation's own group and the one-flow groups its expectation rests
 * on (each GPU's run alone, each pair's run alone). Writes at most max group
 * ids into groups, each once; returns how many. */
int gq_bottlenecks_open_groups(const gq_bottlenecks *b, const gq_recordset *rs, int *groups, int max);

/* Index of the bottleneck with exactly these GPUs and direction, or -1. */
int gq_bottlenecks_find(const gq_bottlenecks *b, gq_direction dir, const int *gpus, int n);

#endif
