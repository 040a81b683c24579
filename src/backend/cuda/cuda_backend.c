/* The CUDA backend's ops: init, discovery (cuda_discover.c), and the transfer
 * side: prepare / run / release of a group of concurrent flows. This file
 * holds init, the info hooks, peer access and prepare / release; run() is in
 * cuda_run.c, and the group state both share in cuda_group.h.
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

#include "backend/cuda/cuda_group.h"
#include "backend/cuda/kernels.h"
#include "core/interrupt.h"
#include "core/units.h"
#include "core/workers.h"

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
    pthread_mutex_init(&b->coll_mu, NULL);
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
    pthread_mutex_destroy(&b->coll_mu);
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
    gq_cuda_coll_fini(b);
    gq_cuda_host_pool_drain(b);
    if (b->latch)
        cudaFreeHost((void *)b->latch);
    pthread_mutex_destroy(&b->coll_mu);
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
    gq_cuda_coll_trim(b); /* the collectives' kept buffers are not in use between their calls */
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
    gq_cuda_coll_trim(b);
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

const gq_backend_ops gq_backend_cuda_ops = {
    .version = GQ_BACKEND_OPS_VERSION,
    .name = "cuda",
    .flags = 0,
    .init = cuda_init,
    .fini = cuda_fini,
    .discover = cuda_discover,
    .prepare = cuda_prepare,
    .run = gq_cuda_run,
    .release = cuda_release,
    .latency = gq_cuda_latency,
    .mem_info = cuda_mem_info,
    .host_mem_avail = cuda_host_mem_avail,
    .now = cuda_now,
    .stress_start = gq_cuda_stress_start,
    .stress_poll = gq_cuda_stress_poll,
    .stress_stop = gq_cuda_stress_stop,
    .sample = gq_cuda_sample,
    .observe = gq_cuda_observe,
    .coll_probe = gq_cuda_coll_probe,
    .coll_run = gq_cuda_coll_run,
};
