/* Discovery of everything that does not come from CUDA: host (CPU, NUMA,
 * VM), NVML (links, P2P status, power, versions), sysfs (NUMA node, local
 * CPUs, PCIe link) and the PCIe tree (hwloc). The CUDA backend fills the GPU
 * list (index, name, memory, bus id, compute capability, SMs, cudaDevice-
 * CanAccessPeer, versions) and then calls gq_topo_discover_local().
 */
#ifndef GQ_TOPO_DISCOVER_H
#define GQ_TOPO_DISCOVER_H

#include "topo/topo.h"

/* Fill the host and per-GPU fields for the GPUs already in t (each with its
 * pci_bus_id), then gq_topo_finish(). Never fails: what cannot be read stays
 * unknown, with one line in t->warnings per cause. */
void gq_topo_discover_local(gq_topo *t);

/* The same, with the sysfs files (GPUs' NUMA node, local CPUs, PCIe links;
 * the switches' uplinks) read under root, a directory standing for / (a
 * test's fake tree); "" is this machine's. hwloc, NVML and the host's facts
 * are this machine's either way. */
void gq_topo_discover_at(gq_topo *t, const char *root);

/* The derived fields, for any producer of a gq_topo (CUDA discovery, the
 * simulator): pcie_gbps from the negotiated gen/width (else hwloc's link
 * rate of the GPU's node), nvlink_gbps_per_link from the compute capability
 * where the GPU has NVLinks and no rate yet, and the levels
 * (gq_topo_derive_levels). */
void gq_topo_finish(gq_topo *t);

#endif
