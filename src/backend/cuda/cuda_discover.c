/* CUDA-runtime part of discovery; the rest (NVML, hwloc, sysfs, host) is
 * src/topo's, called at the end. The only discovery file that includes a
 * CUDA header. */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <string.h>

#include "backend/cuda/cuda_internal.h"
#include "topo/discover.h"

/* "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", as nvidia-smi prints it, so
 * that the UUID is known even when NVML is absent. */
static void format_uuid(const cudaUUID_t *u, char *buf, size_t n)
{
    const unsigned char *b = (const unsigned char *)u->bytes;
    snprintf(buf, n, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
             b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
}

int gq_cuda_discover(gq_topo *t, gq_err *err)
{
    int n = 0;
    cudaError_t ce = cudaGetDeviceCount(&n);
    if (ce != cudaSuccess)
        return gq_err_set(err, GQ_E_NODEV, "no NVIDIA GPU or driver found (%s)", cudaGetErrorString(ce));
    if (n <= 0)
        return gq_err_set(err, GQ_E_NODEV, "no NVIDIA GPU or driver found (CUDA sees 0 devices)");
    if (n > GQ_MAX_GPUS) {
        gq_topo_warn(t, "CUDA sees %d GPUs; gpuqual handles the first %d", n, GQ_MAX_GPUS);
        n = GQ_MAX_GPUS;
    }
    t->ngpu = n;
    t->simulated = false;
    snprintf(t->source, sizeof t->source, "cuda");

    for (int i = 0; i < n; i++) {
        gq_gpu_info *g = &t->gpu[i];
        struct cudaDeviceProp p;
        memset(&p, 0, sizeof p);
        g->index = i;
        ce = cudaGetDeviceProperties(&p, i);
        if (ce != cudaSuccess) {
            gq_topo_warn(t, "GPU %d: cudaGetDeviceProperties failed (%s)", i, cudaGetErrorString(ce));
            continue;
        }
        snprintf(g->name, sizeof g->name, "%.*s", (int)sizeof g->name - 1, p.name);
        g->mem_bytes = (uint64_t)p.totalGlobalMem;
        snprintf(g->pci_bus_id, sizeof g->pci_bus_id, "%04x:%02x:%02x.0", (unsigned)p.pciDomainID,
                 (unsigned)p.pciBusID, (unsigned)p.pciDeviceID);
        g->cc_major = p.major;
        g->cc_minor = p.minor;
        g->sm_count = p.multiProcessorCount;
        format_uuid(&p.uuid, g->uuid, sizeof g->uuid);
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            int can = 0;
            if (i == j)
                continue;
            if (cudaDeviceCanAccessPeer(&can, i, j) == cudaSuccess)
                t->p2p_cuda[i][j] = can ? 1 : 0;
        }
    int v;
    if (cudaRuntimeGetVersion(&v) == cudaSuccess)
        t->cuda_runtime_version = v;
    if (cudaDriverGetVersion(&v) == cudaSuccess)
        t->cuda_driver_version = v;
    /* A query that failed above leaves its error for cudaGetLastError();
     * clear it so that the backend's next check reports its own. */
    (void)cudaGetLastError();

    gq_topo_discover_local(t);
    return GQ_OK;
}
