/* NVML, loaded at run time (after nvtop and LIKWID): gpuqual never links
 * libnvidia-ml and never includes nvml.h. The library is opened with
 * dlopen("libnvidia-ml.so.1") (then "libnvidia-ml.so"), and the few entry
 * points used here are resolved with dlsym. Every entry point is optional: a
 * driver that lacks one gives "unknown" for what it would have read.
 *
 * Two users:
 *  - discovery (gq_nvml_fill_topo): identity, PCIe link, power limit,
 *    NVLink, P2P status, common ancestor, driver versions;
 *  - telemetry during stress (gq_nvml_sample): one sample of one GPU.
 *
 * Thread safety: open/close are serialised by a mutex; the device queries may
 * be called from several threads at once (NVML itself is thread-safe).
 */
#ifndef GQ_TOPO_NVML_H
#define GQ_TOPO_NVML_H

#include <stdbool.h>
#include <stdint.h>

#include "core/status.h"
#include "core/types.h"
#include "topo/topo.h"

/* A GPU as NVML knows it (an nvmlDevice_t). Valid between a gq_nvml_open()
 * and the matching gq_nvml_close(); owned by NVML, never freed. */
typedef struct gq_nvml_dev_s *gq_nvml_dev;

/* Unknown value of the uint64_t counters of a gq_sample (pcie_replay,
 * ecc_corrected, ecc_uncorrected, clock_reasons). */
#define GQ_SAMPLE_U64_UNKNOWN UINT64_MAX

/* Load libnvidia-ml and initialise NVML. Reference counted: every
 * successful open needs one gq_nvml_close(). Returns GQ_OK, or GQ_E_UNSUPP
 * with one line in *err saying why (library absent, nvmlInit failed with
 * NVML's error string). Loading is tried again on the next open after a
 * failure. */
int gq_nvml_open(gq_err *err);
void gq_nvml_close(void);

/* Handle of a GPU by its PCI bus id ("0000:00:06.0", any case, 4- or 8-digit
 * domain). NVML's order (PCI order) can differ from CUDA's,
 * so callers holding a CUDA ordinal look the GPU up by topo->gpu[i].pci_bus_id.
 * GQ_E_FAIL with NVML's error string when not found. */
int gq_nvml_device_by_bus_id(const char *bus_id, gq_nvml_dev *d, gq_err *err);

/* Discovery. For every t->gpu[i] (identified by pci_bus_id, already filled),
 * fills from NVML: uuid, name and mem_bytes where still empty, PCIe gen/width
 * current and max, enforced power limit, active NVLinks; for every pair:
 * p2p_nvml (read capability), pci_level (common ancestor) and nvlinks; and
 * driver_version and cuda_driver_version (when still unknown). Sets
 * t->nvml_loaded. Never fails: when NVML is absent or a GPU is not found, it
 * adds one line to t->warnings and leaves those fields unknown. Opens and
 * closes NVML itself. */
void gq_nvml_fill_topo(gq_topo *t);

/* One telemetry sample of a GPU: temperature (GPU and memory), power usage
 * and enforced limit, SM and memory clocks, utilisation, clocks-event reason
 * bitmask (nvmlDeviceGetCurrentClocksEventReasons, or the older
 * ...ThrottleReasons on drivers before R535), PCIe gen/width, PCIe replay
 * counter, volatile ECC totals (corrected, uncorrected), and remapped rows
 * (correctable + uncorrectable). Each field that cannot be read is set to
 * its unknown value: NAN for doubles, -1 for ints, GQ_SAMPLE_U64_UNKNOWN for
 * the counters. s->t is gq_now_mono(). s->lost is set when NVML answers
 * NVML_ERROR_GPU_IS_LOST. Needs NVML open; returns GQ_E_UNSUPP otherwise. */
int gq_nvml_sample(gq_nvml_dev d, gq_sample *s, gq_err *err);

/* The processes holding a context on a GPU, from the driver's compute and
 * graphics lists (the _v3 entry points; a process in both is listed once).
 * Up to max into out[]; *n listed, *total in all. This process is among
 * them once it has a context there. GQ_E_UNSUPP when NVML is not open or
 * the driver cannot list processes (some vGPU and MIG setups). */
#define GQ_NVML_MAX_PROCS 64
typedef struct gq_nvml_proc {
    unsigned pid;
    unsigned long long used_bytes; /* ULLONG_MAX when the driver does not say */
    bool graphics;
} gq_nvml_proc;
int gq_nvml_processes(gq_nvml_dev d, gq_nvml_proc *out, int max, int *n, int *total, gq_err *err);

/* Utilization (%, over the driver's last sample period) and memory in use
 * (MiB, by every process); -1 for what cannot be read. */
int gq_nvml_load(gq_nvml_dev d, double *util_pct, double *mem_used_mib, gq_err *err);

/* sizeof and field offsets (0 pid, 1 usedGpuMemory, 2 gpuInstanceId, 3
 * computeInstanceId) of the nvmlProcessInfo_t declared here, for the layout
 * test. */
size_t gq_nvml_process_info_size(void);
size_t gq_nvml_process_info_offset(int field);

#endif
