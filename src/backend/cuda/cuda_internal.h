/* Internal to the CUDA backend (src/backend/cuda). Only files in this folder
 * include CUDA headers. */
#ifndef GQ_BACKEND_CUDA_INTERNAL_H
#define GQ_BACKEND_CUDA_INTERNAL_H

#include "backend/backend.h"
#include "topo/nvml.h"

/* CUDA-runtime part of discovery: device count, names, memory, bus ids,
 * compute capability, cudaDeviceCanAccessPeer, runtime/driver versions; then
 * the host parts (NVML, hwloc, sysfs) through src/topo. GQ_E_NODEV when there
 * is no GPU or driver, with the CUDA error text. (cuda_discover.c) */
int gq_cuda_discover(gq_topo *t, gq_err *err);

/* Tuning knobs of the transfer side (cuda_backend.c), for tests/gpu and bench
 * experiments; the defaults are what was measured best on 2 x H200
 * (bench/results/cuda-backend-*.md). Free of CUDA types so that plain C test
 * programs can set them. */
typedef enum gq_cuda_host_alloc {
    GQ_CUDA_HOST_AUTO = 0,     /* REGISTER with libnuma and more than one node, else CUDA */
    GQ_CUDA_HOST_CUDA = 1,     /* cudaHostAlloc(portable | mapped) */
    GQ_CUDA_HOST_REGISTER = 2, /* numa_alloc_onnode (or mmap) + cudaHostRegister(portable | mapped) */
} gq_cuda_host_alloc;

/* Defaults: host_alloc AUTO, sm_blocks_per_sm 0, stage_bufs 4, chase_window
 * 128 (plain stride), chase_sms 0, sm_unit_bytes 16 GiB, chase_bytes 2 MiB,
 * chase_restart 1: the chase is nvbandwidth's (a 2 MiB buffer, node i ->
 * i + 128 B cyclic, every SM in turn starting at the chain's start). */
typedef struct gq_cuda_tune {
    int host_alloc;         /* gq_cuda_host_alloc */
    int sm_blocks_per_sm;   /* copy kernel blocks per SM; 0 = as many as fit (occupancy) */
    int stage_bufs;         /* STAGED: pinned staging buffers in the ring, 2..8 */
    uint64_t chase_window;  /* pointer chase: the chain visits 128-byte lines in random order
                             * within each window of this many bytes, windows in order;
                             * 128 = plain stride (nvbandwidth's order) */
    int chase_sms;          /* 0: the chase runs on every SM in turn and the loads are averaged
                             * (nvbandwidth does this); 1: on one SM */
    uint64_t sm_unit_bytes; /* SM copies with a copy count: bytes per kernel launch (the kernel
                             * loops over the buffer); a launch per copy when <= the buffer */
    uint64_t chase_bytes;   /* pointer chase: chain buffer size (a multiple of 128 bytes, >= 4 KiB);
                             * 0 = one fresh 128-byte line per load (up to 128 MiB) */
    int chase_restart;      /* 1: each SM's chase starts at the chain's start (nvbandwidth);
                             * 0: each SM continues where the previous one stopped */
} gq_cuda_tune;

/* Read / replace the knobs of an open "cuda" backend. Applies to groups
 * prepared and latencies measured afterwards. GQ_E_USAGE for a value out of
 * range (message names it). */
void gq_cuda_tune_get(const gq_backend *be, gq_cuda_tune *t);
int gq_cuda_tune_set(gq_backend *be, const gq_cuda_tune *t, gq_err *err);

/* TEST-ONLY HOOK: corrupt destinations on purpose, so that a GPU test can
 * show that the data check fails when the data is wrong (tests/gpu).
 *
 * After this call, the next `count` data checks of this backend (a run with
 * gq_run_opts.verify, per measured flow; the harness's data-check pass is
 * one such run; a collectives run with gq_coll_req.verify, per group) each
 * flip every bit of the byte at `offset` of the flow's destination (of a
 * collective: rank 0's output) (the last byte when offset >= its size)
 * after the copies or collectives have finished and before the check reads
 * it; the check must then report verify_ok = false (a copy: with bad_offset
 * at that byte). count 0 disarms.
 * Returns GQ_E_USAGE for a count < 0.
 *
 * It cannot be triggered by accident: it is a function only, with no
 * environment variable, option or file behind it, and nothing outside
 * tests/gpu calls it (the backend's own code never arms it; a fresh backend
 * starts disarmed). gq_cuda_test_corrupt_pending says how many armed checks
 * are left, so a test can see that its corruption was used. */
int gq_cuda_test_corrupt_dst(gq_backend *be, uint64_t offset, int count, gq_err *err);
int gq_cuda_test_corrupt_pending(const gq_backend *be);

/* Stress load and telemetry (cuda_stress.c), the ops' stress_start,
 * stress_poll, stress_stop and sample hooks (contract in backend/backend.h).
 * start returns at once: one host thread per GPU sets up and runs cuBLAS
 * GEMMs on deterministic random inputs until stop, comparing results with
 * the first; errors surface through poll and stop. sample reads NVML
 * (topo/nvml.h), opened on first use; GQ_E_UNSUPP when NVML is absent.
 * gq_cuda_stress_fini stops any load still running and closes NVML: the
 * backend's fini calls it. */
int gq_cuda_stress_start(gq_backend *be, int gpu, gq_precision p, gq_err *err);
int gq_cuda_stress_poll(gq_backend *be, int gpu, uint64_t *gemms, uint64_t *faulty, double *tflops,
                        gq_err *err);
int gq_cuda_stress_stop(gq_backend *be, int gpu, gq_err *err);
int gq_cuda_sample(gq_backend *be, int gpu, gq_sample *s, gq_err *err);
void gq_cuda_stress_fini(gq_backend *be);
/* The NVML handle of CUDA device gpu (matched by PCI bus id; NVML opened on
 * first use and closed by gq_cuda_stress_fini). GQ_E_UNSUPP when NVML is
 * absent or does not know the GPU. */
int gq_cuda_nvml_dev(gq_backend *be, int gpu, gq_nvml_dev *dev, gq_err *err);

/* The ops' observe hook (cuda_observe.c). */
int gq_cuda_observe(gq_backend *be, int gpu, gq_gpu_load *out, gq_err *err);

#endif
