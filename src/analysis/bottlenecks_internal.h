/* Shared between bottlenecks.c (the inference) and bottlenecks_explain.c
 * (what in the topology explains each bottleneck). */
#ifndef GQ_ANALYSIS_BOTTLENECKS_INTERNAL_H
#define GQ_ANALYSIS_BOTTLENECKS_INTERNAL_H

#include <stdbool.h>
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

#endif
