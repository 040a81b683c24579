/* The sanity guard (DESIGN.md rule 7): every figure is compared with the
 * theoretical capacity of its path, and a figure above it is flagged
 * "impossible" and kept out of the analysis.
 *
 * Capacities are per direction, in GB/s (10^9 B/s), from what discovery
 * found (gq_topo) and never from a simulator's hidden model:
 *  - host <-> GPU: the GPU's negotiated PCIe link (gq_gpu_info.pcie_gbps, or
 *    gq_pcie_gbps(gen_cur, width_cur)) and every known upstream link of the
 *    PCIe tree (topo->pci[].link_gbps) between the GPU and the host bridge;
 *  - GPU <-> GPU with NVLinks joining them: nvlinks[i][j] x the per-link rate
 *    (the smaller of the two GPUs' nvlink_gbps_per_link);
 *  - GPU <-> GPU without NVLink: every PCIe link on the tree path between the
 *    two GPUs (at least the smaller of their own links);
 *  - host-staged (staged, driver_staged): the smaller of the two host paths;
 *  - a GPU-local copy: no bound (0), since the memory bandwidth is not known;
 *  - flows of one direction running together (an aggregate): for host flows
 *    the bound of the PCIe tree (each node carries at most its own link, and
 *    at most what its children carry), so two GPUs behind one Gen4 x16 uplink
 *    are bounded by 31.5 GB/s together; for other flows the sum of members;
 *  - a direction sum: the sum of the directions' bounds.
 * A capacity of 0 means unknown: nothing is flagged.
 *
 * Trade-off: the guard only catches figures above physics. A figure below
 * expectation is the verdicts' business (analysis/verdicts), not this one's.
 */
#ifndef GQ_ANALYSIS_SANITY_H
#define GQ_ANALYSIS_SANITY_H

#include <stdbool.h>
#include <stddef.h>

#include "core/flow.h"
#include "core/record.h"
#include "topo/topo.h"

/* Relative tolerance above capacity before a figure is impossible: timing
 * granularity, not physics. */
#define GQ_SANITY_TOL 0.01

/* Capacity of one flow's path. why (may be NULL, n bytes) names the binding
 * link, e.g. "PCIe uplink 0000:3a:00.0 (31.5 GB/s)". Returns 0 when unknown. */
double gq_sanity_flow_capacity(const gq_topo *t, const gq_flow *f, char *why, size_t n);

/* Capacity of flows that run at the same time and are summed (all of them
 * counted, whatever their direction: host flows are bounded per direction by
 * the tree, then the directions are added). 0 when any member is unknown and
 * nothing above it bounds it. */
double gq_sanity_group_capacity(const gq_topo *t, const gq_flow *flows, int n, char *why, size_t nwhy);

/* Capacity for a record, when it was not filled by the harness (records read
 * back, crafted records): per-flow records from src/dst/method/exec_gpu;
 * aggregates and sums of host flows from gpus[] and dirs; P2P aggregates and
 * sums from the member records of the same group in rs (may be NULL: then 0).
 * Uses r->capacity_gbps when it is already > 0. */
double gq_sanity_record_capacity(const gq_topo *t, const gq_recordset *rs, const gq_record *r, char *why,
                                 size_t n);

/* Flag r impossible (valid=false, flag, error text naming the capacity and
 * why) when its median is above capacity x (1 + GQ_SANITY_TOL). Latency
 * records and capacity 0 are never flagged. Sets r->capacity_gbps when it was
 * 0. Returns true when flagged. */
bool gq_sanity_apply(gq_record *r, double capacity, const char *why);

/* Whether a figure read back from a document can be a measurement at all,
 * whatever the machine: finite; for a bandwidth above 0, at most
 * GQ_SANITY_MAX_GBPS, and at most 1.5x the record's own capacity_gbps when
 * it names one; for a latency above 0. When not, why (n bytes) says what
 * is wrong ("1e+308 GB/s is above 100000 GB/s"). */
#define GQ_SANITY_MAX_GBPS 100000.0
bool gq_sanity_plausible(const gq_record *r, char *why, size_t n);

/* Check every bandwidth record of rs against its capacity (computed with
 * gq_sanity_record_capacity). Returns the number flagged impossible. */
int gq_sanity_check_all(const gq_topo *t, gq_recordset *rs);

#endif
