/* Latency: nvbandwidth's pointer chase (one GPU thread, dependent loads
 * through a chain in the target memory, on every SM in turn; by default the
 * chain is nvbandwidth's: a 2 MiB buffer, each 128-byte line pointing to the
 * next, cyclic, and every SM starts at the chain's start), timed inside the
 * kernel (no launch overhead), and a p2pBandwidthLatencyTest-
 * style copy latency (many 4-byte copies queued behind the start latch, timed
 * with events, per copy). */
#include "backend/cuda/cuda_priv.h"

#include <stdlib.h>
#include <string.h>

#include "backend/cuda/kernels.h"

#define CHASE_STRIDE 128u          /* one L2 line per node: no two loads share a line */
#define CHASE_MAX_NODES (1u << 20) /* 128 MiB: 1M loads without repeating a line */
#define CHASE_MIN_NODES 4096u
#define CHASE_DEFAULT_ITERS 100000
#define CHASE_MIN_PER_SM 64
#define COPY_DEFAULT_ITERS 10000
#define COPY_BATCH 128 /* copies queued behind the closed latch at a time */
#define LATCH_TIMEOUT_NS 20000000000ull

static uint64_t xorshift(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

/* Node visiting order: windows of `win` nodes in order, nodes shuffled within
 * each window (Fisher-Yates), so that no stride is regular inside a window. */
static void chase_order(uint32_t *order, uint32_t n, uint32_t win)
{
    uint64_t s = 0x853C49E6748FEA9Bull;
    for (uint32_t k = 0; k < n; k++)
        order[k] = k;
    for (uint32_t w0 = 0; w0 < n; w0 += win) {
        uint32_t len = n - w0 < win ? n - w0 : win;
        for (uint32_t k = len; k > 1; k--) {
            uint32_t j = (uint32_t)(xorshift(&s) % k);
            uint32_t t = order[w0 + k - 1];
            order[w0 + k - 1] = order[w0 + j];
            order[w0 + j] = t;
        }
    }
}

static int chase(cuda_be *b, const gq_latency_req *r, double *ns, gq_err *err)
{
    int rc = GQ_OK;
    long long iters = r->iters > 0 ? r->iters : CHASE_DEFAULT_ITERS;
    int sms = b->dev[r->exec_gpu].sm_count > 0 ? b->dev[r->exec_gpu].sm_count : 1;
    long long per_sm = iters / sms < CHASE_MIN_PER_SM ? CHASE_MIN_PER_SM : iters / sms;
    long long loads = b->tune.chase_sms == 1 ? iters : per_sm * sms;
    /* chase_bytes 0: a line is never loaded twice (up to CHASE_MAX_NODES
     * loads). Otherwise nvbandwidth's fixed buffer, whose lines an SM may
     * revisit: neither host nor peer lines stay in the chasing GPU's caches
     * (nvbandwidth's figures, taken the same way, are the check). */
    uint32_t nodes = b->tune.chase_bytes       ? (uint32_t)(b->tune.chase_bytes / CHASE_STRIDE)
                     : loads < CHASE_MIN_NODES ? CHASE_MIN_NODES
                     : loads > CHASE_MAX_NODES ? CHASE_MAX_NODES
                                               : (uint32_t)loads;
    uint64_t bytes = (uint64_t)nodes * CHASE_STRIDE;
    uint32_t win = (uint32_t)(b->tune.chase_window / CHASE_STRIDE);
    uint32_t *order = NULL, *dorder = NULL;
    cuda_hbuf *hb = NULL;
    char *base = NULL; /* address the chasing GPU uses */
    void *dmem = NULL, **cur = NULL;
    int tdev = r->target.kind == GQ_EP_GPU ? r->target.index : -1;
    cudaStream_t s = NULL, ts = NULL;

    if (!(order = malloc((size_t)nodes * sizeof *order)))
        return gq_err_set(err, GQ_E_NOMEM, "out of memory for a chain of %u nodes", nodes);
    chase_order(order, nodes, win ? win : 1);
    if (tdev < 0) {
        int node;
        if ((rc = gq_cuda_numa_resolve(b, r->target.index, r->exec_gpu, &node, err)) != GQ_OK)
            goto out;
        if ((rc = gq_cuda_host_get(b, bytes, node, &hb, err)) != GQ_OK)
            goto out;
        base = hb->dptr;
        char *hp = hb->p;
        for (uint32_t k = 0; k < nodes; k++)
            *(char **)(hp + (uint64_t)order[k] * CHASE_STRIDE) =
                base + (uint64_t)order[(k + 1) % nodes] * CHASE_STRIDE;
    } else {
        if (tdev != r->exec_gpu) {
            int can = 0;
            CK(cudaDeviceCanAccessPeer(&can, r->exec_gpu, tdev));
            if (!can) {
                rc = gq_err_set(err, GQ_E_UNSUPP, "GPU %d cannot read GPU %d's memory (no P2P)", r->exec_gpu,
                                tdev);
                goto out;
            }
            if ((rc = gq_cuda_peer_set(b, r->exec_gpu, tdev, true, err)) != GQ_OK)
                goto out;
        }
        CK(cudaSetDevice(tdev));
        CK(cudaStreamCreateWithFlags(&ts, cudaStreamNonBlocking));
        CK(cudaMalloc(&dmem, bytes));
        CK(cudaMalloc((void **)&dorder, (size_t)nodes * sizeof *dorder));
        CK(cudaMemcpyAsync(dorder, order, (size_t)nodes * sizeof *order, cudaMemcpyHostToDevice, ts));
        CK(gq_k_chain(dmem, dorder, nodes, CHASE_STRIDE, ts));
        CK(cudaStreamSynchronize(ts));
        base = dmem;
    }
    CK(cudaSetDevice(r->exec_gpu));
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CK(cudaMalloc((void **)&cur, 2 * sizeof(unsigned long long)));
    unsigned long long *acc = (unsigned long long *)cur + 1;
    void *p0 = base + (uint64_t)order[nodes - 1] * CHASE_STRIDE;
    /* One load from the chain's far end loads the module and maps the memory
     * without warming the lines the measured chase starts on. */
    CK(cudaMemcpyAsync(cur, &p0, sizeof p0, cudaMemcpyHostToDevice, s));
    CK(gq_k_chase(cur, 1, 1, 0, acc, s));
    CK(cudaStreamSynchronize(s));
    p0 = base + (uint64_t)order[0] * CHASE_STRIDE;
    CK(cudaMemcpyAsync(cur, &p0, sizeof p0, cudaMemcpyHostToDevice, s));
    CK(cudaMemsetAsync(acc, 0, sizeof *acc, s));
    if (b->tune.chase_sms == 1) {
        CK(gq_k_chase(cur, (unsigned long long)loads, 1, 0, acc, s));
    } else {
        /* Every SM in turn (SMs sit at different distances from the memory
         * and its link), each from the chain's start as nvbandwidth does, or
         * continuing along the chain. */
        for (int t = 0; t < sms; t++) {
            if (t > 0 && b->tune.chase_restart)
                CK(cudaMemcpyAsync(cur, &p0, sizeof p0, cudaMemcpyHostToDevice, s));
            CK(gq_k_chase(cur, (unsigned long long)per_sm, sms, t, acc, s));
        }
    }
    unsigned long long tot = 0;
    CK(cudaMemcpyAsync(&tot, acc, sizeof tot, cudaMemcpyDeviceToHost, s));
    CK(cudaStreamSynchronize(s));
    *ns = (double)tot / (double)loads;
out:
    if (s)
        cudaStreamSynchronize(s);
    if (cur)
        cudaFree(cur);
    if (s)
        cudaStreamDestroy(s);
    if (ts)
        cudaStreamDestroy(ts);
    if (dmem)
        cudaFree(dmem);
    if (dorder)
        cudaFree(dorder);
    gq_cuda_host_put(b, hb);
    free(order);
    (void)cudaGetLastError();
    return rc;
}

static int copy_latency(cuda_be *b, const gq_latency_req *r, double *ns, gq_err *err)
{
    int rc = GQ_OK;
    long long iters = r->iters > 0 ? r->iters : COPY_DEFAULT_ITERS;
    int x = r->exec_gpu, tdev = r->target.kind == GQ_EP_GPU ? r->target.index : -1;
    cuda_hbuf *hb = NULL;
    void *src = NULL, *dst = NULL;
    cudaStream_t s = NULL;
    cudaEvent_t e0 = NULL, e1 = NULL;

    if (tdev >= 0 && tdev != x) {
        if (r->p2p) {
            int can = 0;
            CK(cudaDeviceCanAccessPeer(&can, x, tdev));
            if (!can) {
                rc = gq_err_set(err, GQ_E_UNSUPP, "GPU %d and GPU %d have no peer access (P2P)", x, tdev);
                goto out;
            }
        }
        if ((rc = gq_cuda_peer_set(b, x, tdev, r->p2p, err)) != GQ_OK ||
            (rc = gq_cuda_peer_set(b, tdev, x, r->p2p, err)) != GQ_OK)
            goto out;
        CK(cudaSetDevice(tdev));
        CK(cudaMalloc(&dst, 256));
    } else if (tdev < 0) {
        int node;
        if ((rc = gq_cuda_numa_resolve(b, r->target.index, x, &node, err)) != GQ_OK ||
            (rc = gq_cuda_host_get(b, 4096, node, &hb, err)) != GQ_OK)
            goto out;
        dst = hb->dptr;
    }
    CK(cudaSetDevice(x));
    CK(cudaMalloc(&src, 512));
    if (tdev == x)
        dst = (char *)src + 256;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    double total_ms = 0;
    for (long long done = -1; done < iters;) {
        /* The first batch (done == -1) is an untimed warm-up. */
        int n = done < 0 ? 8 : iters - done < COPY_BATCH ? (int)(iters - done) : COPY_BATCH;
        *b->latch = 0;
        *b->latch_timed_out = 0;
        __sync_synchronize();
        CK(gq_k_spin(b->latch, b->latch_timed_out, LATCH_TIMEOUT_NS, s));
        CK(cudaEventRecord(e0, s));
        for (int k = 0; k < n; k++) {
            if (tdev >= 0 && tdev != x)
                CK(cudaMemcpyPeerAsync(dst, tdev, src, x, 4, s));
            else
                CK(cudaMemcpyAsync(dst, src, 4, cudaMemcpyDefault, s));
        }
        CK(cudaEventRecord(e1, s));
        __sync_synchronize();
        *b->latch = 1;
        __sync_synchronize();
        CK(cudaEventSynchronize(e1));
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        if (done >= 0)
            total_ms += ms;
        done = done < 0 ? 0 : done + n;
    }
    *ns = total_ms * 1e6 / (double)iters;
out:
    if (s) {
        *b->latch = 1;
        cudaStreamSynchronize(s);
        cudaStreamDestroy(s);
    }
    if (e0)
        cudaEventDestroy(e0);
    if (e1)
        cudaEventDestroy(e1);
    if (src)
        cudaFree(src);
    if (dst && tdev >= 0 && tdev != x)
        cudaFree(dst);
    gq_cuda_host_put(b, hb);
    (void)cudaGetLastError();
    return rc;
}

int gq_cuda_latency(gq_backend *be, const gq_latency_req *r, double *ns, gq_err *err)
{
    cuda_be *b = be->priv;
    gq_cuda_coll_trim(b);
    if (r->exec_gpu < 0 || r->exec_gpu >= b->ngpu)
        return gq_err_set(err, GQ_E_USAGE, "GPU %d does not exist: this machine has %d (0-%d)", r->exec_gpu,
                          b->ngpu, b->ngpu - 1);
    if (r->target.kind == GQ_EP_GPU && (r->target.index < 0 || r->target.index >= b->ngpu))
        return gq_err_set(err, GQ_E_USAGE, "GPU %d does not exist: this machine has %d (0-%d)",
                          r->target.index, b->ngpu, b->ngpu - 1);
    switch (r->kind) {
    case GQ_LAT_POINTER_CHASE: return chase(b, r, ns, err);
    case GQ_LAT_COPY: return copy_latency(b, r, ns, err);
    }
    return gq_err_set(err, GQ_E_USAGE, "unknown latency kind %d", (int)r->kind);
}
