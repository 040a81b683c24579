/* A prepared group of the CUDA backend, shared by cuda_backend.c (prepare,
 * release) and cuda_run.c (run): per-flow buffers, streams and events, and
 * the sizing constants of the queuing. Includes CUDA headers: only files in
 * src/backend/cuda include this. */
#ifndef GQ_BACKEND_CUDA_GROUP_H
#define GQ_BACKEND_CUDA_GROUP_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "backend/cuda/cuda_priv.h"
#include "core/units.h"

#define UNIT_BYTES (32ull * GQ_MiB)
#define UNIT_MAX_COPIES 128
#define PRE_OPS 256      /* per stream, queued behind the closed latch */
#define INFLIGHT_OPS 768 /* per stream, queued while running */
#define INFLIGHT_BYTES (1024ull * GQ_MiB)
#define RING 32 /* completion events per flow */
#define MAX_STAGE_BUFS 8
#define LATCH_TIMEOUT_NS 20000000000ull
#define POISON_XOR 0xA5A5A5A5u
/* Interfering flows with a host end move each copy as up to FOLD_MAX
 * transfers of at least FOLD_MIN_BYTES over one smaller buffer. */
#define FOLD_MAX 16
#define FOLD_MIN_BYTES (64ull * GQ_MiB)
/* Interferers queue about this many bytes per completion event, and keep
 * about IFER_INFLIGHT queued: when the measured flows finish, what is
 * queued still runs (it cannot be taken back), so it is kept short. */
#define IFER_UNIT_BYTES (128ull * GQ_MiB)
#define IFER_INFLIGHT (256ull * GQ_MiB)

typedef struct cflow {
    gq_flow f;
    int sdev, ddev; /* GPU of src / dst; -1 host */
    int exec;       /* device of stream s */
    int cdev;       /* device that fills src, poisons and checks dst: where dst is, or exec */
    int fdev;       /* device that fills src */
    cuda_hbuf *hsrc, *hdst, *stage;
    bool hshared;         /* hsrc belongs to an earlier flow of the group (interferer or share_src) */
    int partner;          /* split-warp partner's index, or -1 */
    bool split_secondary; /* the partner (lower index) queues the pair's kernel */
    int fold;             /* transfers per copy (interferers; else 1) */
    uint64_t xbytes;      /* bytes per transfer: f.bytes / fold */
    void *dsrc, *ddst;    /* cudaMalloc'd */
    void *src, *dst;      /* device-usable addresses */
    cudaStream_t s;       /* first stream: exec (STAGED: D2H on the src GPU) */
    cudaStream_t s2;      /* STAGED: H2D on the dst GPU */
    cudaStream_t sc;      /* side stream on cdev: poison and check */
    cudaStream_t sf;      /* side stream on fdev: fill (may equal sc's device) */
    cudaEvent_t ring[RING];
    cudaEvent_t d2h[MAX_STAGE_BUFS], h2d[MAX_STAGE_BUFS];
    unsigned long long *dres; /* check result on cdev */
    uint32_t seed;
    int copies_per_unit, ops_per_unit, depth;
    uint64_t chunk;
    int nchunks, nbuf;
    uint64_t stage_k;
    int grid, aux_grid;
    bool sm_shared; /* share_sms cut this flow's grid: other SM flows run on its GPU */
    int host_node;
} cflow;

typedef struct peer_need {
    int a, c;
    bool on;
} peer_need;

struct gq_group {
    cuda_be *b;
    int n;
    cflow *f;
    int npeer;
    peer_need *peer;
    /* Per run. */
    const gq_run_opts *opts;
    gq_flow_result *res;
    double t0;
    atomic_int measured_left; /* flows that are not interferers and have not finished */
};

static inline cuda_be *priv(const gq_backend *be)
{
    return (cuda_be *)be->priv;
}

/* The run hook (cuda_run.c). */
int gq_cuda_run(gq_backend *be, gq_group *g, const gq_run_opts *o, gq_flow_result *res, gq_err *err);

#endif
