/* The PCIe side of discovery: the tree of host bridges, bridges/switches and
 * endpoints from hwloc, the GPUs' NUMA node, local CPUs and link from sysfs,
 * and the nvidia-smi topo -m level of each GPU pair derived from the tree
 * where NVML could not give it.
 */
#ifndef GQ_TOPO_PCITREE_H
#define GQ_TOPO_PCITREE_H

#include <hwloc.h>
#include <stdbool.h>
#include <stddef.h>

#include "core/status.h"
#include "topo/topo.h"

/* Normalise a PCI bus id to "dddd:bb:dd.f", lower case (NVML writes
 * "00000000:3B:00.0", CUDA "0000:3b:00.0"); a missing domain means 0 and a
 * missing function means 0. Returns false when `in` is not a bus id. */
bool gq_pci_bus_id_normalize(const char *in, char *out, size_t n);

/* Load an hwloc topology with PCI objects (the important ones: GPUs, NICs,
 * storage, and the bridges leading to them). xml == NULL: this machine;
 * otherwise an hwloc XML file (tests, and machines described by lstopo).
 * On success *out must be freed with hwloc_topology_destroy(). */
int gq_hwloc_load(hwloc_topology_t *out, const char *xml, gq_err *err);

/* Fill t->pci[] from hwloc: each root (host bridge) with its bridges and
 * endpoints below, parents before children. Endpoints whose bus id matches
 * t->gpu[i].pci_bus_id become GQ_PCI_GPU nodes with gpu = i; the link rate
 * of each node is hwloc's (GB/s per direction, 0 when it gave none). A tree
 * larger than GQ_MAX_PCI_NODES is cut, with a warning in t. Also sets
 * gpu[i].numa_node from hwloc where it is still unknown. */
void gq_pcitree_fill(gq_topo *t, hwloc_topology_t topo);

/* From sysfs (root "" = the real /sys; tests pass a fake tree): for each GPU,
 * numa_node (-1 stays -1, as VMs report), local_cpulist, and where NVML gave
 * none, the PCIe gen/width current and max (current_link_speed "32.0 GT/s
 * PCIe" -> gen 5). Missing files leave the fields unknown. */
void gq_pcitree_sysfs(gq_topo *t, const char *root);

/* After gq_pcitree_fill, from sysfs (root as above): each switch's uplink,
 * read from its upstream port's current_link_speed/width and
 * max_link_speed/width (the maximum also capped by the port above it), into
 * pci[n].link_gen, link_width, link_gen_max, link_width_max. Bridges that
 * are root ports or downstream ports, and files that cannot be read, stay 0
 * (unknown). */
void gq_pcitree_bridge_links(gq_topo *t, const char *root);

/* For every GPU pair whose pci_level is unknown, derive it from t->pci[]:
 *   common ancestor a bridge, each GPU at most one bridge below it   -> PIX
 *   common ancestor a bridge, deeper                                 -> PXB
 *   common ancestor a host bridge                                    -> PHB
 *   different host bridges on one NUMA node (or the only node)       -> NODE
 *   different host bridges on different NUMA nodes                   -> SYS
 * then set level[][]: X on the diagonal, NV where nvlinks > 0, else
 * pci_level. Pairs the tree does not place stay unknown. */
void gq_topo_derive_levels(gq_topo *t);

/* PCIe generation for a per-lane rate in GT/s (2.5 -> 1 ... 64 -> 6), -1
 * when it matches none. */
int gq_pcie_gen_from_gts(double gts);

#endif
