/* Shared between bottlenecks.c (the inference), bottlenecks_host.c and
 * bottlenecks_p2p.c (the host and P2P budgets) and bottlenecks_explain.c
 * (what in the topology explains each bottleneck). */
#ifndef GQ_ANALYSIS_BOTTLENECKS_INTERNAL_H
#define GQ_ANALYSIS_BOTTLENECKS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/bottlenecks.h"

/* A link accounts for a shared capacity when the capacity is between
 * GQ_BN_LINK_EFF_MIN and GQ_BN_LINK_OVER_MAX of its theoretical rate
 * (docs/method-domains.md, "Explained by the tree"). */
#define GQ_BN_LINK_EFF_MIN 0.6
#define GQ_BN_LINK_OVER_MAX 1.05
bool gq_bn_link_accounts(double link_gbps, double cap_gbps);

/* A host budget: the lowest PCIe node whose measured GPUs (univ) are exactly
 * the budget's, or its NUMA node, else measurement only (one_numa: the
 * platform shows one NUMA node). */
void gq_bn_explain_host(gq_bottleneck *bn, const gq_topo *t, uint64_t univ, bool one_numa);

/* A P2P budget, from the pairs of the run that revealed it: the switch or
 * root port uplinks every pair crosses, else the CPU interconnect when every
 * pair crosses sockets, else measurement only with the reason. */
void gq_bn_explain_p2p(gq_bottleneck *bn, const gq_bn_obs *ob, const gq_topo *t);

/* ---- GPU sets ---- */

typedef uint64_t mask_t; /* GQ_MAX_GPUS == 64: one bit per GPU */

static inline mask_t bit(int g)
{
    return (g >= 0 && g < 64) ? (mask_t)1 << g : 0;
}

static inline int popcount(mask_t m)
{
    return __builtin_popcountll(m);
}

static inline mask_t mask_of(const int *g, int n)
{
    mask_t m = 0;
    for (int i = 0; i < n; i++)
        m |= bit(g[i]);
    return m;
}

static inline int mask_list(mask_t m, int *out)
{
    int n = 0;
    for (int g = 0; g < 64; g++)
        if (m & bit(g))
            out[n++] = g;
    return n;
}

/* ---- shared by the inference files ---- */

/* Which figure of each interval an expectation adds up. */
typedef enum { AT_MID = 0, AT_LO, AT_HI } at_t;

typedef double iso_matrix[GQ_MAX_GPUS][GQ_MAX_GPUS];

/* The isolated pair rates: medians, spreads and intervals. */
typedef struct iso_set {
    iso_matrix v, sp, lo, hi;
} iso_set;

/* bottlenecks_host.c: helpers the P2P inference and the whole inference share. */
int gq_bn_add_evidence(gq_bottleneck *bn, int obs);
gq_bottleneck *gq_bn_find_or_add(gq_bottlenecks *b, bool p2p, gq_direction d, mask_t set, bool *added);
double gq_bn_rec_spread(const gq_recordset *rs, int i);
/* An observation's aggregate and its interval. */
void gq_bn_obs_interval(const gq_recordset *rs, gq_bn_obs *ob);
/* Three-way: 1 when [lo, hi] is wholly below [llo, lhi], 0 when wholly at or
 * above it, -1 when the two overlap (open). */
int gq_bn_below(double lo, double hi, double llo, double lhi);
void gq_bn_gpus_text(const int *g, int n, char *buf, size_t len);
/* Record a decision left open. */
void gq_bn_add_open(gq_bottlenecks *b, gq_bn_open_kind kind, const gq_bn_obs *ob, int other, double flo,
                    double fhi, double llo, double lhi, const char *fmt, ...);
/* The host budgets of direction slot (0 h2d, 1 d2h). */
int gq_bn_infer_host(gq_bottlenecks *b, const gq_recordset *rs, int slot, const gq_bn_opts *o);
/* Asymmetry inside the largest host run of each direction. */
void gq_bn_host_asymmetry(gq_bottlenecks *out, const gq_bn_opts *o);
/* bottlenecks_p2p.c: the P2P budgets, against the isolated pair rates is; GQ_E_NOMEM when out of
 * memory. */
int gq_bn_infer_p2p(gq_bottlenecks *out, const gq_recordset *rs, const gq_domains *dom, const gq_bn_opts *o,
                    iso_set *is);

#endif
