/* Rendering of a discovered topology (gpuqual topo). Reads a gq_topo only. */
#ifndef GQ_RENDER_TOPO_RENDER_H
#define GQ_RENDER_TOPO_RENDER_H

#include <jansson.h>
#include <stdio.h>

#include "topo/topo.h"

/* The terminal view: host and software lines, one row per GPU (index, name,
 * memory, bus id, PCIe gen/width now and max with the per-direction GB/s of
 * the negotiated link, NUMA node, local CPUs, power limit), UUIDs and
 * NVLinks, the nvidia-smi topo -m style matrix, the P2P matrix (CUDA's
 * answer / NVML's status), the PCIe tree with the GPUs that share a switch
 * or root port, a legend, and notes (one NUMA node shown, synthetic
 * snapshot, links trained down). Unknown fields read "unknown" (or "?" in a
 * matrix cell). */
void gq_render_topo_table(FILE *f, const gq_topo *t);

/* One CSV line per GPU after a header: identity (name, UUID, serial, VBIOS,
 * ECC, MIG and persistence modes), memory, PCIe link, NUMA, power limit,
 * NVLinks, and the host, driver and source. Unknown numbers are empty
 * fields; unknown serial/VBIOS and modes say "unknown". */
void gq_render_topo_csv(FILE *f, const gq_topo *t);

/* The JSON document of `gpuqual topo` (docs/json-topo.md): header with
 * "kind":"topo", "options" (borrowed; may be NULL, then {}), "incomplete":
 * false, and the topology keys. New reference, NULL on allocation failure. */
json_t *gq_render_topo_json(const gq_topo *t, const json_t *options);

#endif
