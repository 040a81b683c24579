/* State shared by the transfer-side files of the CUDA backend
 * (cuda_backend.c, cuda_run.c, cuda_host.c, cuda_latency.c). Includes CUDA
 * headers: only files in src/backend/cuda include this. */
#ifndef GQ_BACKEND_CUDA_PRIV_H
#define GQ_BACKEND_CUDA_PRIV_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "backend/backend.h"
#include "backend/cuda/cuda_internal.h"

/* Record a failed CUDA call as "file:line: call: error string" (returns
 * GQ_E_BACKEND, or GQ_E_NOMEM for an out-of-memory error). */
int gq_cuda_fail(gq_err *err, cudaError_t e, const char *call, const char *file, int line);

/* The one CHECK macro for CUDA calls: on error, fill *err (a gq_err * in
 * scope), set rc (an int in scope) and jump to the function's `out` label. */
#define CK(call)                                                                                             \
    do {                                                                                                     \
        cudaError_t ck_e_ = (call);                                                                          \
        if (ck_e_ != cudaSuccess) {                                                                          \
            rc = gq_cuda_fail(err, ck_e_, #call, __FILE__, __LINE__);                                        \
            goto out;                                                                                        \
        }                                                                                                    \
    } while (0)

typedef struct cuda_dev {
    int sm_count;
    int copy_blocks_max; /* blocks per SM the copy kernel fits */
    int numa;            /* sysfs numa_node; -1 when the platform does not say */
    char busid[32];      /* "0000:00:06.0" */
    char cpulist[256];   /* sysfs local_cpulist; "" unknown */
} cuda_dev;

/* A pinned host buffer. */
typedef struct cuda_hbuf {
    void *p;    /* host address */
    void *dptr; /* device-usable address (mapped) */
    uint64_t bytes;
    int node;               /* requested NUMA node */
    int mode;               /* GQ_CUDA_HOST_CUDA or GQ_CUDA_HOST_REGISTER */
    int actual;             /* page placement read back: node, -1 unknown, -2 mixed */
    struct cuda_hbuf *next; /* pool link */
} cuda_hbuf;

typedef struct cuda_be {
    int ngpu;
    int numa_nodes; /* >= 1 */
    cuda_dev dev[GQ_MAX_GPUS];
    gq_cuda_tune tune;
    /* Start latch, host-mapped and visible to every device. */
    volatile int *latch;
    int *latch_timed_out;
    /* peer[i][j]: access from i to j; -1 unknown, 0 off, 1 on. */
    signed char peer[GQ_MAX_GPUS][GQ_MAX_GPUS];
    /* Pool of free pinned host buffers (pinning 512 MiB takes ~0.1 s), kept
     * small so that peak RSS stays low. */
    pthread_mutex_t pool_mu;
    cuda_hbuf *pool;
    uint64_t host_pooled, host_in_use;
    /* Test-only hook (gq_cuda_test_corrupt_dst): data checks left to
     * corrupt (0 in production: nothing but tests/gpu arms it) and where. */
    atomic_int test_corrupt_left;
    _Atomic uint64_t test_corrupt_off;
    /* Collectives (cuda_coll.c): NCCL communicators, one set per GPU list,
     * kept for the backend's lifetime; coll_mu serializes coll_run. */
    pthread_mutex_t coll_mu;
    struct cuda_comm *comms;
} cuda_be;

/* Take one armed corruption of the test-only hook, if any is left (cuda_run.c). */
bool gq_cuda_test_corrupt_take(cuda_be *b);

/* Host memory (cuda_host.c). */
int gq_cuda_host_get(cuda_be *b, uint64_t bytes, int node, cuda_hbuf **out, gq_err *err);
void gq_cuda_host_put(cuda_be *b, cuda_hbuf *h);
void gq_cuda_host_pool_drain(cuda_be *b);
/* Resolve GQ_NUMA_LOCAL against a GPU; GQ_E_USAGE for a node that does not exist. */
int gq_cuda_numa_resolve(const cuda_be *b, int node, int gpu, int *out, gq_err *err);
int gq_cuda_numa_count(void);
void gq_cuda_sysfs_dev(const char *busid, int *numa, char *cpulist, size_t n);
int gq_cuda_host_avail(int node, uint64_t *bytes, gq_err *err);

/* Peer access (cuda_backend.c): make access from a to b on or off. */
int gq_cuda_peer_set(cuda_be *b, int a, int c, bool on, gq_err *err);

/* Collectives (cuda_coll.c): the ops' coll_probe and coll_run hooks
 * (contract in backend/backend.h), and the communicators' teardown, which
 * the backend's fini calls. */
int gq_cuda_coll_probe(gq_backend *be, gq_coll_info *info);
int gq_cuda_coll_run(gq_backend *be, const gq_coll_req *req, gq_coll_result *res, gq_err *err);
void gq_cuda_coll_fini(cuda_be *b);
/* Free the collectives' kept buffers (cuda_coll.c), so that what allocates
 * GPU memory next, or asks how much is free, finds it free: called by the
 * copies' prepare, latency, stress and the free-memory query. */
void gq_cuda_coll_trim(cuda_be *b);

/* Latency (cuda_latency.c). */
int gq_cuda_latency(gq_backend *be, const gq_latency_req *r, double *ns, gq_err *err);

#endif
