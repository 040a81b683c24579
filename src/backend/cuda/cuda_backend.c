/* The CUDA backend's ops: init, discovery (cuda_discover.c), and the transfer
 * side: prepare / run / release of a group of concurrent flows.
 *
 * How run() keeps windows honest (DESIGN.md rules 2 and 3):
 *  - every flow's first stream is blocked by a one-thread spin kernel polling
 *    a host-mapped latch, and the first copies are queued behind it;
 *  - one worker thread per flow (pinned to its GPU's local CPUs) first
 *    poisons its destination when verifying, meets the others at a barrier,
 *    then queues, and waits at a second barrier; the starting thread then
 *    reads CLOCK_MONOTONIC (t_start, common to all flows) and opens the latch;
 *  - each worker waits for its copies' completion events in order and reads
 *    the same clock as each completes; t_end is the completion of the last
 *    copy it counts, and bytes_done counts exactly the copies completed by
 *    then. In duration mode a worker stops queuing at the deadline and counts
 *    only copies completed by the deadline; the ones still in flight run to
 *    the end (so they still load the fabric) but are not counted.
 *
 * Copies are grouped into "units" (one completion event per unit) of about
 * 32 MiB so that small buffers do not cost one host wake-up per copy, and at
 * most a few hundred operations are queued behind the closed latch (a stream
 * queue that fills up would block the queuing thread before the release).
 */
#include "backend/cuda/cuda_priv.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cuda/kernels.h"
#include "core/interrupt.h"
#include "core/units.h"
#include "core/workers.h"

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

static cuda_be *priv(const gq_backend *be)
{
    return (cuda_be *)be->priv;
}

/* ---- test-only hook (see cuda_internal.h) --------------------------------- */

int gq_cuda_test_corrupt_dst(gq_backend *be, uint64_t offset, int count, gq_err *err)
{
    if (count < 0)
        return gq_err_set(err, GQ_E_USAGE, "count %d: expected 0 (disarm) or more", count);
    cuda_be *b = priv(be);
    atomic_store(&b->test_corrupt_off, offset);
    atomic_store(&b->test_corrupt_left, count);
    return GQ_OK;
}

int gq_cuda_test_corrupt_pending(const gq_backend *be)
{
    return atomic_load(&priv(be)->test_corrupt_left);
}

/* ---- peer access --------------------------------------------------------- */

int gq_cuda_peer_set(cuda_be *b, int a, int c, bool on, gq_err *err)
{
    int rc = GQ_OK;
    if (a == c || b->peer[a][c] == (on ? 1 : 0))
        return GQ_OK;
    CK(cudaSetDevice(a));
    cudaError_t e = on ? cudaDeviceEnablePeerAccess(c, 0) : cudaDeviceDisablePeerAccess(c);
    if (e == cudaErrorPeerAccessAlreadyEnabled || e == cudaErrorPeerAccessNotEnabled) {
        (void)cudaGetLastError();
        e = cudaSuccess;
    }
    CK(e);
    b->peer[a][c] = on ? 1 : 0;
out:
    return rc;
}

/* ---- init / fini / discover / info ---------------------------------------- */

static int cuda_init(gq_backend *be, const gq_backend_opts *o, const void *bopts, gq_err *err)
{
    (void)o;
    (void)bopts;
    int rc = GQ_OK, n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess)
        return gq_err_set(err, GQ_E_NODEV, "no usable CUDA device: %s (%s)", cudaGetErrorString(e),
                          cudaGetErrorName(e));
    if (n < 1)
        return gq_err_set(err, GQ_E_NODEV, "no CUDA device found");
    cuda_be *b = calloc(1, sizeof *b);
    if (!b)
        return gq_err_set(err, GQ_E_NOMEM, "out of memory");
    pthread_mutex_init(&b->pool_mu, NULL);
    b->ngpu = n > GQ_MAX_GPUS ? GQ_MAX_GPUS : n;
    b->numa_nodes = gq_cuda_numa_count();
    b->tune = (gq_cuda_tune){
        .host_alloc = GQ_CUDA_HOST_AUTO,
        .sm_blocks_per_sm = 0,
        .stage_bufs = 4,
        .chase_window = 128,
        .chase_sms = 0,
        .sm_unit_bytes = 16 * GQ_GiB,
        .chase_bytes = 2 * GQ_MiB,
        .chase_restart = 1,
    };
    memset(b->peer, -1, sizeof b->peer);
    atomic_init(&b->test_corrupt_left, 0); /* the test-only hook starts disarmed */
    atomic_init(&b->test_corrupt_off, 0);
    for (int d = 0; d < b->ngpu; d++) {
        cuda_dev *v = &b->dev[d];
        CK(cudaSetDevice(d));
        CK(cudaDeviceGetAttribute(&v->sm_count, cudaDevAttrMultiProcessorCount, d));
        CK(cudaDeviceGetPCIBusId(v->busid, (int)sizeof v->busid, d));
        gq_cuda_sysfs_dev(v->busid, &v->numa, v->cpulist, sizeof v->cpulist);
        v->copy_blocks_max = gq_k_copy_max_blocks_per_sm();
    }
    void *latch = NULL;
    CK(cudaHostAlloc(&latch, 64, cudaHostAllocPortable | cudaHostAllocMapped));
    memset(latch, 0, 64);
    b->latch = latch;
    b->latch_timed_out = (int *)latch + 1;
    be->priv = b;
    return GQ_OK;
out:
    pthread_mutex_destroy(&b->pool_mu);
    free(b);
    return rc;
}

static void cuda_fini(gq_backend *be)
{
    cuda_be *b = priv(be);
    if (!b)
        return;
    gq_cuda_stress_fini(be);
    gq_cuda_host_pool_drain(b);
    if (b->latch)
        cudaFreeHost((void *)b->latch);
    pthread_mutex_destroy(&b->pool_mu);
    free(b);
    be->priv = NULL;
}

static int cuda_discover(gq_backend *be, gq_topo *t, gq_err *err)
{
    (void)be;
    return gq_cuda_discover(t, err);
}

static int cuda_mem_info(gq_backend *be, int gpu, uint64_t *free_bytes, uint64_t *total_bytes, gq_err *err)
{
    cuda_be *b = priv(be);
    int rc = GQ_OK;
    size_t fr = 0, tot = 0;
    if (gpu < 0 || gpu >= b->ngpu)
        return gq_err_set(err, GQ_E_USAGE, "GPU %d does not exist: this machine has %d (0-%d)", gpu, b->ngpu,
                          b->ngpu - 1);
    CK(cudaSetDevice(gpu));
    CK(cudaMemGetInfo(&fr, &tot));
    *free_bytes = fr;
    *total_bytes = tot;
out:
    return rc;
}

static int cuda_host_mem_avail(gq_backend *be, int numa, uint64_t *bytes, gq_err *err)
{
    cuda_be *b = priv(be);
    if (numa >= 0 && numa >= b->numa_nodes)
        return gq_err_set(err, GQ_E_USAGE, "host NUMA node %d does not exist: this machine has %d (0-%d)",
                          numa, b->numa_nodes, b->numa_nodes - 1);
    return gq_cuda_host_avail(numa, bytes, err);
}

static double cuda_now(gq_backend *be)
{
    (void)be;
    return gq_now_mono();
}

void gq_cuda_tune_get(const gq_backend *be, gq_cuda_tune *t)
{
    *t = priv(be)->tune;
}

int gq_cuda_tune_set(gq_backend *be, const gq_cuda_tune *t, gq_err *err)
{
    if (t->host_alloc < GQ_CUDA_HOST_AUTO || t->host_alloc > GQ_CUDA_HOST_REGISTER)
        return gq_err_set(err, GQ_E_USAGE, "host_alloc %d: expected 0 (auto), 1 (cuda) or 2 (register)",
                          t->host_alloc);
    if (t->sm_blocks_per_sm < 0 || t->sm_blocks_per_sm > 64)
        return gq_err_set(err, GQ_E_USAGE, "sm_blocks_per_sm %d: expected 0 (occupancy) to 64",
                          t->sm_blocks_per_sm);
    if (t->stage_bufs < 2 || t->stage_bufs > MAX_STAGE_BUFS)
        return gq_err_set(err, GQ_E_USAGE, "stage_bufs %d: expected 2 to %d", t->stage_bufs, MAX_STAGE_BUFS);
    if (t->chase_window < 128 || t->chase_window % 128)
        return gq_err_set(err, GQ_E_USAGE, "chase_window %llu: expected a multiple of 128 bytes",
                          (unsigned long long)t->chase_window);
    if (t->chase_sms < 0 || t->chase_sms > 1)
        return gq_err_set(err, GQ_E_USAGE, "chase_sms %d: expected 0 (every SM in turn) or 1 (one SM)",
                          t->chase_sms);
    if (t->chase_bytes != 0 && (t->chase_bytes < 4096 || t->chase_bytes % 128 || t->chase_bytes > GQ_GiB))
        return gq_err_set(err, GQ_E_USAGE,
                          "chase_bytes %llu: expected 0 or a multiple of 128 bytes from 4 KiB to 1 GiB",
                          (unsigned long long)t->chase_bytes);
    if (t->chase_restart < 0 || t->chase_restart > 1)
        return gq_err_set(err, GQ_E_USAGE, "chase_restart %d: expected 0 or 1", t->chase_restart);
    if (t->sm_unit_bytes == 0)
        return gq_err_set(err, GQ_E_USAGE, "sm_unit_bytes 0: expected at least 1 byte");
    priv(be)->tune = *t;
    return GQ_OK;
}

/* ---- prepare --------------------------------------------------------------- */

static int add_need(gq_group *g, int a, int c, bool on, gq_err *err)
{
    for (int i = 0; i < g->npeer; i++) {
        peer_need *p = &g->peer[i];
        if (p->a == a && p->c == c) {
            if (p->on != on)
                return gq_err_set(
                    err, GQ_E_USAGE,
                    "flows of one group need peer access from GPU %d to GPU %d both on (P2P) and "
                    "off (driver_staged): run them in separate groups",
                    a, c);
            return GQ_OK;
        }
    }
    g->peer[g->npeer++] = (peer_need){a, c, on};
    return GQ_OK;
}

static int check_flow(const cuda_be *b, const gq_flow *f, int i, gq_err *err)
{
    char s1[24], s2[24];
    const gq_endpoint *ep[2] = {&f->src, &f->dst};
    for (int k = 0; k < 2; k++)
        if (ep[k]->kind == GQ_EP_GPU && (ep[k]->index < 0 || ep[k]->index >= b->ngpu))
            return gq_err_set(err, GQ_E_USAGE, "flow %d: GPU %d does not exist: this machine has %d (0-%d)",
                              i, ep[k]->index, b->ngpu, b->ngpu - 1);
    if (f->bytes == 0)
        return gq_err_set(err, GQ_E_USAGE, "flow %d: size 0; a copy needs at least 1 byte", i);
    if (f->src.kind == GQ_EP_HOST && f->dst.kind == GQ_EP_HOST)
        return gq_err_set(err, GQ_E_USAGE, "flow %d: host to host is not a GPU data path", i);
    bool d2d = f->src.kind == GQ_EP_GPU && f->dst.kind == GQ_EP_GPU;
    bool p2p = d2d && f->src.index != f->dst.index;
    if ((f->method == GQ_METHOD_STAGED || f->method == GQ_METHOD_DRIVER_STAGED) && !p2p)
        return gq_err_set(err, GQ_E_USAGE, "flow %d (%s -> %s): method %s needs two different GPUs", i,
                          gq_endpoint_str(f->src, s1, sizeof s1), gq_endpoint_str(f->dst, s2, sizeof s2),
                          gq_method_name(f->method));
    if (f->method == GQ_METHOD_CE || f->method == GQ_METHOD_SM) {
        bool on_end = (f->src.kind == GQ_EP_GPU && f->exec_gpu == f->src.index) ||
                      (f->dst.kind == GQ_EP_GPU && f->exec_gpu == f->dst.index);
        if (!on_end)
            return gq_err_set(err, GQ_E_USAGE, "flow %d (%s -> %s): exec_gpu %d is not one of its GPUs", i,
                              gq_endpoint_str(f->src, s1, sizeof s1), gq_endpoint_str(f->dst, s2, sizeof s2),
                              f->exec_gpu);
    }
    if ((unsigned)f->method > GQ_METHOD_DRIVER_STAGED)
        return gq_err_set(err, GQ_E_USAGE, "flow %d: unknown method %d", i, (int)f->method);
    return GQ_OK;
}

/* Copies per completion event, and queue depth, from the copy's size. */
static void size_units(cflow *c)
{
    uint64_t per = UNIT_BYTES / c->f.bytes;
    int cpu = per < 1 ? 1 : per > UNIT_MAX_COPIES ? UNIT_MAX_COPIES : (int)per;
    int ops;
    switch (c->f.method) {
    case GQ_METHOD_SM: ops = 2; break;
    case GQ_METHOD_STAGED: {
        int per_copy = 3 * c->nchunks;
        int cap = (PRE_OPS - 1) / per_copy;
        if (cpu > cap)
            cpu = cap < 1 ? 1 : cap;
        ops = cpu * per_copy + 1;
        break;
    }
    default: ops = cpu * c->fold + 1; break;
    }
    c->copies_per_unit = cpu;
    c->ops_per_unit = ops;
    /* Deep enough that the GPU never waits for the queuing thread, shallow
     * enough that little work runs on past a duration-mode deadline. */
    int depth = INFLIGHT_OPS / ops;
    uint64_t by_bytes = (INFLIGHT_BYTES + (uint64_t)cpu * c->f.bytes - 1) / ((uint64_t)cpu * c->f.bytes);
    if ((uint64_t)depth > by_bytes)
        depth = (int)by_bytes;
    c->depth = depth < 2 ? 2 : depth > RING - 1 ? RING - 1 : depth;
}

static int dev_alloc(int dev, uint64_t bytes, void **p, gq_err *err)
{
    int rc = GQ_OK;
    CK(cudaSetDevice(dev));
    CK(cudaMalloc(p, bytes));
out:
    return rc;
}

static int stream_on(int dev, cudaStream_t *s, gq_err *err)
{
    int rc = GQ_OK;
    CK(cudaSetDevice(dev));
    CK(cudaStreamCreateWithFlags(s, cudaStreamNonBlocking));
out:
    return rc;
}

static void flow_free(cuda_be *b, cflow *c)
{
    /* Only this flow's streams: a device-wide sync could wait on other work
     * (a stress load) sharing the GPU. */
    cudaStream_t ss[4] = {c->s, c->s2, c->sc, c->sf};
    for (int k = 0; k < 4; k++)
        if (ss[k])
            cudaStreamSynchronize(ss[k]);
    for (int k = 0; k < 4; k++)
        if (ss[k])
            cudaStreamDestroy(ss[k]);
    for (int k = 0; k < RING; k++)
        if (c->ring[k])
            cudaEventDestroy(c->ring[k]);
    for (int k = 0; k < MAX_STAGE_BUFS; k++) {
        if (c->d2h[k])
            cudaEventDestroy(c->d2h[k]);
        if (c->h2d[k])
            cudaEventDestroy(c->h2d[k]);
    }
    if (c->dsrc)
        cudaFree(c->dsrc);
    if (c->ddst)
        cudaFree(c->ddst);
    if (c->dres)
        cudaFree(c->dres);
    if (!c->hshared)
        gq_cuda_host_put(b, c->hsrc);
    gq_cuda_host_put(b, c->hdst);
    gq_cuda_host_put(b, c->stage);
    (void)cudaGetLastError();
}

/* Fold an interfering flow with a host end: its data is not checked, so a
 * copy of `bytes` may be FOLD_MAX transfers over a buffer a quarter the size
 * (nvbandwidth's interferers are twice the measured size: with 512 MiB
 * buffers that alone doubled the pinned memory of a test). */
static int fold_of(const gq_flow *f)
{
    if (!f->interferer || f->split_with || (f->method != GQ_METHOD_CE && f->method != GQ_METHOD_SM) ||
        (f->src.kind != GQ_EP_HOST && f->dst.kind != GQ_EP_HOST))
        return 1;
    for (int k = FOLD_MAX; k > 1; k /= 2)
        if (f->bytes % (16ull * (uint64_t)k) == 0 && f->bytes / (uint64_t)k >= FOLD_MIN_BYTES)
            return k;
    return 1;
}

static bool may_share_src(const gq_flow *f)
{
    return f->src.kind == GQ_EP_HOST && (f->interferer || f->share_src);
}

/* An earlier flow's host source buffer of the same size and node that may
 * be shared (interferers, share_src), or -1. Only sources (read-only) are
 * shared: two GPUs writing the same host lines contend for them (measured
 * on 2 x H200: host_to_all_bidirectional CE fell from 29.5 to 11 GB/s with
 * the interferers' destinations shared). */
static int shared_host(const cflow *prev, int n, uint64_t bytes, int node)
{
    for (int i = 0; i < n; i++) {
        const cflow *p = &prev[i];
        if (!may_share_src(&p->f) || p->hshared || !p->hsrc)
            continue;
        if (p->xbytes == bytes && p->hsrc->node == node && p->host_node == node)
            return i;
    }
    return -1;
}

static int flow_setup(cuda_be *b, cflow *c, const cflow *prev, int idx, gq_err *err)
{
    int rc = GQ_OK;
    const gq_flow *f = &c->f;
    c->sdev = f->src.kind == GQ_EP_GPU ? f->src.index : -1;
    c->ddev = f->dst.kind == GQ_EP_GPU ? f->dst.index : -1;
    bool staged = f->method == GQ_METHOD_STAGED;
    c->exec = staged ? c->sdev
              : f->method == GQ_METHOD_DRIVER_STAGED && (f->exec_gpu < 0 || f->exec_gpu >= b->ngpu)
                  ? c->sdev
                  : f->exec_gpu;
    c->cdev = c->ddev >= 0 ? c->ddev : c->exec;
    c->fdev = c->sdev >= 0 ? c->sdev : c->exec;
    c->seed = 0x6A09E667u ^ (uint32_t)(idx + 1) * 0x9E3779B9u;
    c->host_node = -1;
    int gpu_end = c->sdev >= 0 ? c->sdev : c->ddev;
    const cuda_dev *xd = &b->dev[c->exec];
    int bps = b->tune.sm_blocks_per_sm > 0 && b->tune.sm_blocks_per_sm < xd->copy_blocks_max
                  ? b->tune.sm_blocks_per_sm
                  : xd->copy_blocks_max;
    c->grid = xd->sm_count * bps;
    c->aux_grid = xd->sm_count * 4;
    c->fold = fold_of(f);
    c->xbytes = f->bytes / (uint64_t)c->fold;

    if (f->src.kind == GQ_EP_HOST || f->dst.kind == GQ_EP_HOST) {
        const gq_endpoint *h = f->src.kind == GQ_EP_HOST ? &f->src : &f->dst;
        if ((rc = gq_cuda_numa_resolve(b, h->index, gpu_end, &c->host_node, err)) != GQ_OK)
            goto out;
    }
    /* Flows of a group that read host memory and may share (interferers,
     * share_src) share one source buffer per size and node: the source is
     * only read, and DMA reads of the same pages load the link as reads of
     * distinct pages do. A sharer takes the owner's pattern seed, so that
     * its destination is checked against what it really copied. */
    int sh = may_share_src(f) ? shared_host(prev, idx, c->xbytes, c->host_node) : -1;
    if (f->src.kind == GQ_EP_HOST) {
        if (sh >= 0) {
            c->hsrc = prev[sh].hsrc;
            c->hshared = true;
            c->seed = prev[sh].seed;
        } else if ((rc = gq_cuda_host_get(b, c->xbytes, c->host_node, &c->hsrc, err)) != GQ_OK) {
            goto out;
        }
        c->src = c->hsrc->dptr;
    } else {
        if ((rc = dev_alloc(c->sdev, c->xbytes, &c->dsrc, err)) != GQ_OK)
            goto out;
        c->src = c->dsrc;
    }
    if (f->dst.kind == GQ_EP_HOST) {
        if ((rc = gq_cuda_host_get(b, c->xbytes, c->host_node, &c->hdst, err)) != GQ_OK)
            goto out;
        c->dst = c->hdst->dptr;
    } else {
        if ((rc = dev_alloc(c->ddev, c->xbytes, &c->ddst, err)) != GQ_OK)
            goto out;
        c->dst = c->ddst;
    }
    if (staged) {
        c->nbuf = b->tune.stage_bufs;
        c->chunk = gq_flow_stage_chunk(f);
        uint64_t n = (f->bytes + c->chunk - 1) / c->chunk;
        c->nchunks = (int)n;
        if ((rc = gq_cuda_numa_resolve(b, GQ_NUMA_LOCAL, c->sdev, &c->host_node, err)) != GQ_OK)
            goto out;
        if ((rc = gq_cuda_host_get(b, c->chunk * (uint64_t)c->nbuf, c->host_node, &c->stage, err)) != GQ_OK)
            goto out;
        if ((rc = stream_on(c->ddev, &c->s2, err)) != GQ_OK)
            goto out;
        CK(cudaSetDevice(c->sdev));
        for (int k = 0; k < c->nbuf; k++)
            CK(cudaEventCreateWithFlags(&c->d2h[k], cudaEventDisableTiming));
        CK(cudaSetDevice(c->ddev));
        for (int k = 0; k < c->nbuf; k++)
            CK(cudaEventCreateWithFlags(&c->h2d[k], cudaEventDisableTiming));
    }
    if ((rc = stream_on(c->exec, &c->s, err)) != GQ_OK || (rc = stream_on(c->cdev, &c->sc, err)) != GQ_OK ||
        (rc = stream_on(c->fdev, &c->sf, err)) != GQ_OK)
        goto out;
    CK(cudaSetDevice(staged ? c->ddev : c->exec));
    for (int k = 0; k < RING; k++)
        CK(cudaEventCreateWithFlags(&c->ring[k], cudaEventDisableTiming));
    CK(cudaSetDevice(c->cdev));
    CK(cudaMalloc((void **)&c->dres, 2 * sizeof(unsigned long long)));
    size_units(c);

    /* The source pattern is written once; copies never modify it. A shared
     * source already holds its owner's pattern. */
    if (!c->hshared) {
        CK(cudaSetDevice(c->fdev));
        CK(gq_k_fill(c->src, c->xbytes, c->seed, b->dev[c->fdev].sm_count * 4, c->sf));
        CK(cudaStreamSynchronize(c->sf));
    }
out:
    return rc;
}

/* k > 1 SM flows executing on one GPU each get floor(SMs / k) SMs' worth of
 * blocks (at least one SM): a grid over every SM would hold the whole GPU
 * until it drains, so the flows' kernels would take turns instead of
 * running together (measured: 19-20 GB/s per direction for host <-> GPU
 * both ways, where nvbandwidth's 42 comes from copies that run at once).
 * A single flow keeps the whole GPU. */
static void share_sms(const cuda_be *b, gq_group *g)
{
    int k[GQ_MAX_GPUS] = {0};
    /* a split-warp pair is one kernel: it counts once */
    for (int i = 0; i < g->n; i++)
        if (g->f[i].f.method == GQ_METHOD_SM && !g->f[i].split_secondary && g->f[i].exec >= 0 &&
            g->f[i].exec < GQ_MAX_GPUS)
            k[g->f[i].exec]++;
    for (int i = 0; i < g->n; i++) {
        cflow *c = &g->f[i];
        if (c->f.method != GQ_METHOD_SM || c->split_secondary || c->exec < 0 || c->exec >= GQ_MAX_GPUS ||
            k[c->exec] < 2)
            continue;
        const cuda_dev *xd = &b->dev[c->exec];
        int sms = xd->sm_count / k[c->exec];
        c->grid = (c->grid / (xd->sm_count > 0 ? xd->sm_count : 1)) * (sms < 1 ? 1 : sms);
        c->sm_shared = true;
    }
}

static int cuda_prepare(gq_backend *be, const gq_flow *flows, int nflows, gq_group **out, gq_err *err)
{
    cuda_be *b = priv(be);
    int rc = GQ_OK;
    *out = NULL;
    if (nflows < 1)
        return gq_err_set(err, GQ_E_USAGE, "a group needs at least one flow");
    for (int i = 0; i < nflows; i++)
        if ((rc = check_flow(b, &flows[i], i, err)) != GQ_OK)
            return rc;
    if ((rc = gq_flows_check_splits(flows, nflows, err)) != GQ_OK)
        return rc;
    gq_group *g = calloc(1, sizeof *g);
    if (!g || !(g->f = calloc((size_t)nflows, sizeof *g->f)) ||
        !(g->peer = calloc((size_t)nflows * 2, sizeof *g->peer))) {
        if (g)
            free(g->f);
        free(g);
        return gq_err_set(err, GQ_E_NOMEM, "out of memory for a group of %d flows", nflows);
    }
    g->b = b;
    /* Peer access first: the fills below must not run against a state that
     * the group then changes. */
    for (int i = 0; i < nflows; i++) {
        const gq_flow *f = &flows[i];
        if (f->src.kind != GQ_EP_GPU || f->dst.kind != GQ_EP_GPU || f->src.index == f->dst.index)
            continue;
        int s = f->src.index, d = f->dst.index;
        if (f->method == GQ_METHOD_DRIVER_STAGED) {
            if ((rc = add_need(g, s, d, false, err)) || (rc = add_need(g, d, s, false, err)))
                goto out;
        } else if (f->method == GQ_METHOD_CE || f->method == GQ_METHOD_SM) {
            int can1 = 0, can2 = 0;
            CK(cudaDeviceCanAccessPeer(&can1, s, d));
            CK(cudaDeviceCanAccessPeer(&can2, d, s));
            if (!can1 || !can2) {
                rc = gq_err_set(err, GQ_E_UNSUPP,
                                "flow %d: GPU %d and GPU %d have no peer access (P2P); use method staged or "
                                "driver_staged",
                                i, s, d);
                goto out;
            }
            /* Both ways, as nvbandwidth does: the copy engine of either GPU
             * may then drive the copy. */
            if ((rc = add_need(g, s, d, true, err)) || (rc = add_need(g, d, s, true, err)))
                goto out;
        }
    }
    for (int i = 0; i < g->npeer; i++)
        if ((rc = gq_cuda_peer_set(b, g->peer[i].a, g->peer[i].c, g->peer[i].on, err)) != GQ_OK)
            goto out;
    for (int i = 0; i < nflows; i++) {
        g->f[i].f = flows[i];
        g->n = i + 1;
        if ((rc = flow_setup(b, &g->f[i], g->f, i, err)) != GQ_OK) {
            gq_err_prefix(err, "flow %d", i);
            goto out;
        }
    }
    for (int i = 0; i < nflows; i++) {
        g->f[i].partner = flows[i].split_with ? flows[i].split_with - 1 : -1;
        g->f[i].split_secondary = g->f[i].partner >= 0 && g->f[i].partner < i;
    }
    share_sms(b, g);
    *out = g;
    return GQ_OK;
out:
    for (int i = 0; i < g->n; i++)
        flow_free(b, &g->f[i]);
    free(g->peer);
    free(g->f);
    free(g);
    return rc;
}

static void cuda_release(gq_backend *be, gq_group *g)
{
    if (!g)
        return;
    for (int i = 0; i < g->n; i++)
        flow_free(priv(be), &g->f[i]);
    free(g->peer);
    free(g->f);
    free(g);
}

/* ---- run ------------------------------------------------------------------- */

/* Queue the staged pipeline for [off, off + len) of one copy (off on a chunk
 * boundary). Buffer b is reused only after the H2D copy that read it (event
 * h2d[b]) has finished; the H2D copy starts only after the D2H copy that
 * filled it (event d2h[b]). A stream waits on the record that precedes the
 * wait call, so queuing in this order from one thread is what makes the
 * pipeline correct. */
static int stage_range(cflow *c, uint64_t off, uint64_t len, gq_err *err)
{
    int rc = GQ_OK;
    const gq_flow *f = &c->f;
    uint64_t end = off + len > f->bytes ? f->bytes : off + len;
    for (uint64_t o = off; o < end; o += c->chunk) {
        int bi = (int)(c->stage_k++ % (uint64_t)c->nbuf);
        uint64_t n = end - o < c->chunk ? end - o : c->chunk;
        char *stage = (char *)c->stage->dptr + (uint64_t)bi * c->chunk;
        CK(cudaSetDevice(c->sdev));
        CK(cudaStreamWaitEvent(c->s, c->h2d[bi], 0));
        CK(cudaMemcpyAsync(stage, (char *)c->src + o, n, cudaMemcpyDeviceToHost, c->s));
        CK(cudaEventRecord(c->d2h[bi], c->s));
        CK(cudaSetDevice(c->ddev));
        CK(cudaStreamWaitEvent(c->s2, c->d2h[bi], 0));
        CK(cudaMemcpyAsync((char *)c->dst + o, stage, n, cudaMemcpyHostToDevice, c->s2));
        CK(cudaEventRecord(c->h2d[bi], c->s2));
    }
out:
    return rc;
}

/* Queue `xfers` transfers of xbytes (whole copies: xfers = copies x fold),
 * or, with len > 0, the one piece [off, off + len) of a copy; then the
 * unit's completion event. A split-warp primary moves its partner's piece
 * in the same kernel. */
static int enqueue_unit(gq_group *g, cflow *c, int xfers, uint64_t off, uint64_t len, int unit, gq_err *err)
{
    int rc = GQ_OK;
    const gq_flow *f = &c->f;
    const cflow *pc = c->partner >= 0 ? &g->f[c->partner] : NULL;
    cudaStream_t done = c->s;
    bool piece = len > 0;
    /* what this unit moves: the piece, or `xfers` whole transfers */
    const uint64_t o = piece ? off : 0, n = piece ? len : c->xbytes;
    const int loops = piece ? 1 : xfers;
    char *dst = (char *)c->dst + o;
    const char *src = (const char *)c->src + o;
    CK(cudaSetDevice(c->exec));
    switch (f->method) {
    case GQ_METHOD_CE:
    case GQ_METHOD_DRIVER_STAGED:
        for (int k = 0; k < loops; k++) {
            if (c->sdev >= 0 && c->ddev >= 0 && c->sdev != c->ddev)
                CK(cudaMemcpyPeerAsync(dst, c->ddev, src, c->sdev, n, c->s));
            else
                CK(cudaMemcpyAsync(dst, src, n, cudaMemcpyDefault, c->s));
        }
        break;
    case GQ_METHOD_SM:
        if (!pc) {
            CK(gq_k_copy(dst, src, n, loops, c->grid, c->s));
        } else {
            /* a split pair alone on its GPU takes nvbandwidth's flat grid;
             * one sharing the GPU with other SM flows keeps its cut, strided grid */
            char *pdst = (char *)pc->dst + o;
            const char *psrc = (const char *)pc->src + o;
            if (!c->sm_shared)
                CK(gq_k_copy_split_flat(dst, src, pdst, psrc, n, loops, c->s));
            else
                CK(gq_k_copy_split(dst, src, pdst, psrc, n, loops, c->grid, c->s));
        }
        break;
    case GQ_METHOD_STAGED:
        if (piece) {
            CK(stage_range(c, off, len, err));
        } else {
            for (int k = 0; k < xfers; k++)
                CK(stage_range(c, 0, f->bytes, err));
        }
        done = c->s2;
        break;
    }
    CK(cudaEventRecord(c->ring[unit % RING], done));
out:
    return rc;
}

static void flow_error(gq_flow_result *r, const gq_err *e)
{
    if (r->status != GQ_OK)
        return;
    r->status = e->code ? e->code : GQ_E_BACKEND;
    if (r->status != GQ_E_BACKEND && r->status != GQ_E_NOMEM)
        r->status = GQ_E_BACKEND;
    snprintf(r->error, sizeof r->error, "%.*s", (int)sizeof r->error - 1, e->msg);
}

/* Take one armed corruption of the test-only hook, if any is left. */
static bool test_corrupt_take(cuda_be *b)
{
    int left = atomic_load(&b->test_corrupt_left);
    while (left > 0)
        if (atomic_compare_exchange_weak(&b->test_corrupt_left, &left, left - 1))
            return true;
    return false;
}

/* Check dst against the source pattern on the device that holds dst. */
static int verify_flow(cuda_be *b, cflow *c, gq_flow_result *r, gq_err *err)
{
    int rc = GQ_OK;
    unsigned long long h[2] = {0, 0};
    CK(cudaSetDevice(c->cdev));
    if (test_corrupt_take(b)) {
        /* Test-only (gq_cuda_test_corrupt_dst): the copies are done, the check not started. */
        uint64_t off = atomic_load(&b->test_corrupt_off);
        CK(gq_k_flip_byte(c->dst, off < c->f.bytes ? off : c->f.bytes - 1, c->sc));
    }
    CK(gq_k_check(c->dst, c->f.bytes, c->seed, c->dres, c->aux_grid, c->sc));
    CK(cudaMemcpyAsync(h, c->dres, sizeof h, cudaMemcpyDeviceToHost, c->sc));
    CK(cudaStreamSynchronize(c->sc));
    r->verified = true;
    r->verify_ok = h[0] == 0;
    r->bad_offset = h[0] ? h[1] : 0;
out:
    return rc;
}

/* How a worker queues in one run. A unit is one completion event: whole
 * transfers (xfers of them, `copies` whole copies), or one piece of a copy
 * (piece > 0: a duration run with a grain). */
typedef enum { Q_COUNT, Q_TIME, Q_UNTIL_MEASURED } q_mode;

typedef struct flow_state {
    q_mode mode;
    bool stop;
    int xfers;                      /* transfers per unit (whole-transfer units) */
    uint64_t piece;                 /* bytes per piece; 0 = whole-transfer units */
    uint64_t off;                   /* piece units: offset of the next piece in its copy */
    int depth;                      /* units in flight */
    long long xfers_enq, xfers_max; /* Q_COUNT: transfers queued / to queue */
    int units_enq, units_done;
    uint64_t ubytes[RING];
    int ucopies[RING]; /* whole copies a unit completes (pieces: 1 for a copy's last) */
    int uxfers[RING];
    uint64_t bytes_counted;
    long long copies_counted, xfers_counted;
    double deadline;
} flow_state;

/* Queue units until `depth` are in flight (pre: before the release, at most
 * PRE_OPS operations), or until there is nothing more to queue. */
static int top_up(gq_group *g, cflow *c, flow_state *st, bool pre, gq_err *err)
{
    int ops = 0;
    while (!st->stop && st->units_enq - st->units_done < st->depth) {
        if (st->mode == Q_COUNT && st->xfers_enq >= st->xfers_max)
            break;
        if (st->mode == Q_UNTIL_MEASURED && atomic_load(&g->measured_left) == 0) {
            st->stop = true;
            break;
        }
        if (st->mode == Q_TIME && !pre && (gq_now_mono() >= st->deadline || gq_interrupt_requested())) {
            st->stop = true;
            break;
        }
        int slot = st->units_enq % RING, ops_u;
        if (st->piece > 0) {
            uint64_t len = c->f.bytes - st->off < st->piece ? c->f.bytes - st->off : st->piece;
            ops_u = c->f.method == GQ_METHOD_STAGED ? 3 * (int)((len + c->chunk - 1) / c->chunk) + 1 : 2;
            if (pre && st->units_enq > 0 && ops + ops_u > PRE_OPS)
                break;
            int rc = enqueue_unit(g, c, 0, st->off, len, st->units_enq, err);
            if (rc != GQ_OK)
                return rc;
            st->ubytes[slot] = len;
            st->off += len;
            st->ucopies[slot] = st->off >= c->f.bytes;
            st->uxfers[slot] = 0;
            if (st->off >= c->f.bytes)
                st->off = 0;
        } else {
            int n = st->xfers;
            if (st->mode == Q_COUNT && st->xfers_enq + n > st->xfers_max)
                n = (int)(st->xfers_max - st->xfers_enq);
            ops_u = c->f.method == GQ_METHOD_SM       ? (c->partner >= 0 && !c->sm_shared ? n + 1 : 2)
                    : c->f.method == GQ_METHOD_STAGED ? 3 * c->nchunks * n + 1
                                                      : n + 1;
            if (pre && st->units_enq > 0 && ops + ops_u > PRE_OPS)
                break;
            int rc = enqueue_unit(g, c, n, 0, 0, st->units_enq, err);
            if (rc != GQ_OK)
                return rc;
            st->ubytes[slot] = (uint64_t)n * c->xbytes;
            st->ucopies[slot] =
                n / c->fold; /* exact for measured flows (fold 1); interferers count transfers */
            st->uxfers[slot] = n;
            st->xfers_enq += n;
        }
        st->units_enq++;
        ops += ops_u;
    }
    return GQ_OK;
}

/* Choose how this worker queues in this run. */
static void plan_run(const cuda_be *b, gq_group *g, const cflow *c, int i, const gq_run_opts *o,
                     flow_state *st)
{
    st->xfers = c->copies_per_unit * c->fold;
    st->depth = c->depth;
    if (o->reps <= 0) {
        st->mode = Q_TIME;
    } else if (c->f.interferer && atomic_load(&g->measured_left) > 0) {
        st->mode = Q_UNTIL_MEASURED;
    } else {
        st->mode = Q_COUNT;
        st->xfers_max = (long long)o->reps * c->fold;
    }
    if (c->f.interferer && c->f.method != GQ_METHOD_STAGED) {
        /* short units, little queued: the interferer stops soon after the
         * measured flows (what is queued cannot be taken back). A unit may
         * hold part of a folded copy: its copies are counted from its
         * transfers at the end. */
        uint64_t per = IFER_UNIT_BYTES / c->xbytes;
        st->xfers = per < 1 ? 1 : per > UNIT_MAX_COPIES ? UNIT_MAX_COPIES : (int)per;
        uint64_t unit = (uint64_t)st->xfers * c->xbytes;
        uint64_t d = (IFER_INFLIGHT + unit - 1) / unit;
        st->depth = d < 2 ? 2 : d > RING - 1 ? RING - 1 : (int)d;
        return;
    }
    /* a split-warp pair's kernel moves both: either flow's grain is the pair's */
    uint64_t grain = o->grain ? o->grain[i] : 0;
    if (o->grain && c->partner >= 0 &&
        (grain == 0 || (o->grain[c->partner] > 0 && o->grain[c->partner] < grain)))
        grain = o->grain[c->partner];
    if (st->mode == Q_TIME && grain > 0 && grain < c->f.bytes) {
        uint64_t q = gq_flow_piece_quantum(&c->f);
        uint64_t p = (grain + q - 1) / q * q;
        if (p < c->f.bytes) {
            st->piece = p;
            uint64_t d = INFLIGHT_BYTES / p;
            st->depth = d < 2 ? 2 : d > RING - 1 ? RING - 1 : (int)d;
        }
        return;
    }
    /* With counted copies a unit may be long: its end is observed exactly.
     * For the SM kernel that saves a launch and a grid drain per copy (about
     * 1% over NVLink), as nvbandwidth's loop count does. */
    if (c->f.method == GQ_METHOD_SM && st->mode == Q_COUNT) {
        uint64_t per = b->tune.sm_unit_bytes / c->f.bytes;
        int cpu = per < 1 ? 1 : per > UNIT_MAX_COPIES ? UNIT_MAX_COPIES : (int)per;
        if (cpu < c->copies_per_unit)
            cpu = c->copies_per_unit;
        st->xfers = cpu * c->fold;
        st->depth = 2;
    }
}

static void run_flow(void *arg, int i, gq_workers *w)
{
    gq_group *g = arg;
    cuda_be *b = g->b;
    cflow *c = &g->f[i];
    const gq_run_opts *o = g->opts;
    gq_flow_result *r = &g->res[i];
    gq_err e = {0}, *err = &e;
    int rc = GQ_OK;
    flow_state st = {0};
    plan_run(b, g, c, i, o, &st);
    /* The driver stages a P2P-disabled copy through host buffers of its own
     * and blocks the queuing thread until they drain, which cannot happen
     * behind a closed latch: those copies are queued after the release (the
     * window then starts a few microseconds before the first copy does). */
    const bool pre = c->f.method != GQ_METHOD_DRIVER_STAGED;

    int met = 0;                                      /* barriers passed */
    const bool check = o->verify && !c->f.interferer; /* interferers' data is not checked */
    if (check) {
        CK(cudaSetDevice(c->cdev));
        CK(gq_k_fill(c->dst, c->f.bytes, c->seed ^ POISON_XOR, c->aux_grid, c->sc));
        CK(cudaStreamSynchronize(c->sc));
    }
    /* No spin kernel runs before every flow's poisoning has finished: where
     * kernels of one GPU run one at a time (compute-sanitizer, a full GPU),
     * a fill queued behind a spinning latch would never start. */
    gq_workers_barrier(w);
    met++;
    if (c->split_secondary)
        goto out; /* the partner's kernel moves this flow's bytes */
    CK(cudaSetDevice(c->exec));
    CK(gq_k_spin(b->latch, b->latch_timed_out, LATCH_TIMEOUT_NS, c->s));
    if (pre)
        CK(top_up(g, c, &st, true, err));
out:
    /* A secondary can only fail before the first barrier (poisoning): its
     * result is written before the barriers that order the primary's reads. */
    if (c->split_secondary && rc != GQ_OK)
        flow_error(r, err);
    /* Every worker passes each barrier, failed or not: they count them all. */
    for (; met < 3; met++)
        gq_workers_barrier(w);
    if (c->split_secondary)
        return; /* cuda_run copies the partner's window and counts */
    const bool started = rc == GQ_OK;
    st.deadline = g->t0 + o->duration_s;
    r->t_start = g->t0;
    r->t_end = g->t0;
    if (started)
        rc = top_up(g, c, &st, false, err);
    while (started && rc == GQ_OK && st.units_done < st.units_enq) {
        int slot = st.units_done % RING;
        cudaError_t ce = cudaEventSynchronize(c->ring[slot]);
        double t = gq_now_mono();
        if (ce != cudaSuccess) {
            rc = gq_cuda_fail(err, ce, "cudaEventSynchronize", __FILE__, __LINE__);
            break;
        }
        st.units_done++;
        if (st.mode != Q_TIME || t <= st.deadline || st.bytes_counted == 0) {
            st.bytes_counted += st.ubytes[slot];
            st.copies_counted += st.ucopies[slot];
            st.xfers_counted += st.uxfers[slot];
            r->t_end = t;
        }
        if (st.mode == Q_TIME && t >= st.deadline)
            st.stop = true;
        rc = top_up(g, c, &st, false, err);
    }
    /* Interferers copying "until the measured flows are done" wait for this. */
    if (!c->f.interferer)
        atomic_fetch_sub(&g->measured_left, 1);
    /* Leave nothing running: later rounds and the check must see idle streams. */
    cudaStreamSynchronize(c->s);
    if (c->s2)
        cudaStreamSynchronize(c->s2);
    if (rc != GQ_OK) {
        flow_error(r, err);
        return;
    }
    r->copies_done = (int)(c->f.interferer && st.piece == 0 ? st.xfers_counted / c->fold : st.copies_counted);
    r->bytes_done = st.bytes_counted;
    if (check && (rc = verify_flow(b, c, r, err)) != GQ_OK)
        flow_error(r, err);
    if (check && c->partner >= 0 && g->res[c->partner].status == GQ_OK) {
        gq_err pe = {0};
        if (verify_flow(b, &g->f[c->partner], &g->res[c->partner], &pe) != GQ_OK)
            flow_error(&g->res[c->partner], &pe);
    }
}

static int cuda_run(gq_backend *be, gq_group *g, const gq_run_opts *o, gq_flow_result *res, gq_err *err)
{
    cuda_be *b = priv(be);
    int rc = GQ_OK;
    if (o->reps <= 0 && !(o->duration_s > 0))
        return gq_err_set(err, GQ_E_USAGE, "a run needs reps > 0 or a duration > 0");
    memset(res, 0, sizeof *res * (size_t)g->n);
    int measured = 0;
    for (int i = 0; i < g->n; i++) {
        res[i].tag = g->f[i].f.tag;
        const cuda_hbuf *h = g->f[i].hsrc ? g->f[i].hsrc : g->f[i].hdst ? g->f[i].hdst : g->f[i].stage;
        res[i].host_numa_actual = h ? h->actual : -1;
        measured += !g->f[i].f.interferer && !g->f[i].split_secondary;
    }
    atomic_store(&g->measured_left, measured);
    /* Another group may have switched peer access since this one was prepared. */
    for (int i = 0; i < g->npeer; i++)
        if ((rc = gq_cuda_peer_set(b, g->peer[i].a, g->peer[i].c, g->peer[i].on, err)) != GQ_OK)
            return rc;
    /* Without the list the workers just run unpinned. */
    const char **cpl = calloc((size_t)(unsigned)g->n, sizeof *cpl);
    for (int i = 0; cpl && i < g->n; i++)
        cpl[i] = b->dev[g->f[i].exec].cpulist;
    g->opts = o;
    g->res = res;
    *b->latch = 0;
    *b->latch_timed_out = 0;
    atomic_thread_fence(memory_order_seq_cst);
    gq_workers *w = NULL;
    rc = gq_workers_start(&w, g->n, run_flow, g, cpl, err);
    free(cpl);
    if (rc != GQ_OK)
        return rc;
    gq_workers_barrier(w); /* every destination poisoned */
    gq_workers_barrier(w); /* every first stream blocked, first copies queued */
    /* Read the clock before the release: the window may start a hair early,
     * never late, so a rate is never overstated. */
    g->t0 = gq_now_mono();
    atomic_thread_fence(memory_order_seq_cst);
    *b->latch = 1;
    atomic_thread_fence(memory_order_seq_cst);
    gq_workers_barrier(w);
    gq_workers_join(w);
    /* A split-warp secondary moved its bytes in its partner's kernel: same
     * window, same count of its own (equal-sized) copies or pieces. */
    for (int i = 0; i < g->n; i++) {
        const cflow *c = &g->f[i];
        if (!c->split_secondary)
            continue;
        gq_flow_result *s = &res[i];
        const gq_flow_result *p = &res[c->partner];
        if (p->status != GQ_OK && s->status == GQ_OK) {
            s->status = p->status;
            snprintf(s->error, sizeof s->error, "split-warp partner: %.*s", (int)sizeof s->error - 24,
                     p->error);
        }
        s->t_start = p->t_start;
        s->t_end = p->t_end;
        s->copies_done = p->copies_done;
        s->bytes_done = p->bytes_done;
    }
    if (*b->latch_timed_out) {
        for (int i = 0; i < g->n; i++) {
            gq_err e;
            gq_err_set(&e, GQ_E_BACKEND, "the start latch timed out: GPU %d never saw the release",
                       g->f[i].exec);
            flow_error(&res[i], &e);
        }
    }
    return GQ_OK;
}

const gq_backend_ops gq_backend_cuda_ops = {
    .version = GQ_BACKEND_OPS_VERSION,
    .name = "cuda",
    .flags = 0,
    .init = cuda_init,
    .fini = cuda_fini,
    .discover = cuda_discover,
    .prepare = cuda_prepare,
    .run = cuda_run,
    .release = cuda_release,
    .latency = gq_cuda_latency,
    .mem_info = cuda_mem_info,
    .host_mem_avail = cuda_host_mem_avail,
    .now = cuda_now,
    .stress_start = gq_cuda_stress_start,
    .stress_poll = gq_cuda_stress_poll,
    .stress_stop = gq_cuda_stress_stop,
    .sample = gq_cuda_sample,
};
