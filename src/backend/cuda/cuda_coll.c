/* Collectives through NCCL (nccl_dl.c loads it at run time): the ops'
 * coll_probe and coll_run (contract in backend/backend.h).
 *
 * coll_run, for req->groups run at once, from this one thread:
 *  - peer access on between each group's GPUs where possible (peers_on);
 *  - one NCCL communicator set per group (ncclCommInitAll over the group's
 *    GPUs, rank r on gpus[r]), a stream and an event per rank; kept per GPU
 *    list until the backend's fini (initialization takes ~0.1-1 s);
 *  - float32 buffers per rank, sized as nccl-tests sizes them for the op
 *    (req->bytes is nccl-tests' "size" column), kept with the communicator
 *    between calls (grown when a call needs more, at least the span: a sweep
 *    allocates once, as nccl-tests does; gq_cuda_coll_trim frees them before
 *    anything else allocates GPU memory), send buffers filled with
 *    small whole numbers (kernels.h, gq_k_coll_fill), so every output
 *    element has one exact expected value;
 *  - as nccl-tests (startColl), iteration i's buffers lie req->bytes x
 *    (i % (span / bytes)) into a span, so small sizes are not served from a
 *    warm L2: one slice per iteration up to gq_coll_slices(req), each send
 *    slice filled the same way;
 *  - `warmup` iterations, then every output poisoned (NaN) again, then a
 *    barrier: every stream of every group synchronized;
 *  - t_start (CLOCK_MONOTONIC, the clock of the copies), then `iters`
 *    iterations per group back to back on its streams, enqueued iteration by
 *    iteration across the groups (ncclGroupStart/End around one group's
 *    ranks), then an event on each rank's stream; the events are polled
 *    without sleeping, and a group's t_end is when its last rank's event
 *    completed (so nccl-tests' time per iteration is (t_end - t_start) /
 *    iters, as its host timer gives it); with several groups, one whose
 *    timed part is over runs untimed iterations, one at a time, until every
 *    group's is (the seam's overlap contract), and they drain before the check;
 *  - after the timed part, every rank's output is checked on its GPU
 *    (gq_k_coll_check), in every slice the timed part wrote.
 * Out of place, as nccl-tests' "out-of-place" columns: the output of every
 * iteration is the same, and the poison makes a skipped one show. */
#include "backend/cuda/cuda_priv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cuda/cuda_group.h"
#include "backend/cuda/kernels.h"
#include "backend/cuda/nccl_dl.h"
#include "core/interrupt.h"
#include "core/units.h"

/* kernels.cu numbers the ops as the seam does */
_Static_assert(GQ_COLL_ALL_REDUCE == 0 && GQ_COLL_ALL_GATHER == 1 && GQ_COLL_REDUCE_SCATTER == 2 &&
                   GQ_COLL_ALL_TO_ALL == 3 && GQ_COLL_BROADCAST == 4,
               "kernels.cu's K_* op numbers");

typedef struct cuda_comm {
    int n;
    int gpus[GQ_MAX_GPUS];
    gq_ncclComm_t comm[GQ_MAX_GPUS];
    cudaStream_t st[GQ_MAX_GPUS];
    cudaEvent_t ev[GQ_MAX_GPUS];
    bool dead; /* aborted in this call (a hang, an error): dropped from the cache at its end */
    /* Each rank's buffers, kept between calls. A fresh cudaMalloc per call read 7-14 % under
     * nccl-tests at 8-256 MiB on an H100, and buffers allocated once matched it within 2 %
     * (bench/results/collectives-h100x1-2026-12-07-buffers). */
    float *ksend[GQ_MAX_GPUS], *krecv[GQ_MAX_GPUS];
    unsigned long long *kres[GQ_MAX_GPUS];
    uint64_t kcap_send, kcap_recv; /* elements every rank's kept buffers hold (0: none) */
    struct cuda_comm *next;
} cuda_comm;

/* A timed part still running after this long is taken for a hang (1 GiB
 * all-reduces over 8 GPUs staged through host memory take well under a
 * second each); its communicators are aborted. */
#define COLL_HANG_S 300.0

/* One group's buffers in one run. */
typedef struct coll_bufs {
    float *send[GQ_MAX_GPUS], *recv[GQ_MAX_GPUS];
    unsigned long long *dres[GQ_MAX_GPUS];
    uint64_t slices; /* gq_coll_slices: slice i starts i x count elements in */
    uint64_t next;   /* the next untimed iteration's index (after the timed part) */
    bool failed;     /* res->status set; the group is left out from then on */
} coll_bufs;

static const char *op_fn[GQ_COLL_NOPS] = {"ncclAllReduce", "ncclAllGather", "ncclReduceScatter",
                                          "ncclSend/ncclRecv", "ncclBroadcast"};

int gq_cuda_coll_probe(gq_backend *be, gq_coll_info *info)
{
    (void)be;
    memset(info, 0, sizeof *info);
    const gq_nccl *nc = NULL;
    gq_err e = {0};
    if (gq_nccl_load(&nc, &e) != GQ_OK) {
        info->available = false;
        snprintf(info->why, sizeof info->why, "%s", e.msg);
        snprintf(info->library, sizeof info->library, "%.150s", gq_nccl_libname());
    } else {
        info->available = true;
        snprintf(info->library, sizeof info->library, "%s", nc->library);
    }
    return GQ_OK;
}

/* Free a communicator set's kept buffers (its communicators stay). */
static void comm_bufs_drop(cuda_comm *c)
{
    for (int r = 0; r < c->n; r++) {
        if (!c->ksend[r] && !c->krecv[r] && !c->kres[r])
            continue;
        if (cudaSetDevice(c->gpus[r]) == cudaSuccess) {
            cudaFree(c->ksend[r]);
            cudaFree(c->krecv[r]);
            cudaFree(c->kres[r]);
        }
        c->ksend[r] = c->krecv[r] = NULL;
        c->kres[r] = NULL;
    }
    c->kcap_send = c->kcap_recv = 0;
}

void gq_cuda_coll_trim(cuda_be *b)
{
    pthread_mutex_lock(&b->coll_mu);
    for (cuda_comm *c = b->comms; c; c = c->next)
        comm_bufs_drop(c);
    pthread_mutex_unlock(&b->coll_mu);
}

static void comm_free(const gq_nccl *nc, cuda_comm *c)
{
    comm_bufs_drop(c);
    for (int r = 0; r < c->n; r++) {
        if (cudaSetDevice(c->gpus[r]) != cudaSuccess)
            continue;
        if (c->ev[r])
            cudaEventDestroy(c->ev[r]);
        if (c->st[r])
            cudaStreamDestroy(c->st[r]);
        if (c->comm[r] && nc)
            nc->comm_destroy(c->comm[r]);
    }
    free(c);
}

void gq_cuda_coll_fini(cuda_be *b)
{
    const gq_nccl *nc = NULL;
    gq_err e = {0};
    if (!b->comms)
        return;
    if (gq_nccl_load(&nc, &e) != GQ_OK) /* loaded already when there are communicators */
        nc = NULL;
    while (b->comms) {
        cuda_comm *c = b->comms;
        b->comms = c->next;
        comm_free(nc, c);
    }
}

/* The communicator set of a GPU list (rank order matters: it is the ring's). */
static int comm_get(cuda_be *b, const gq_nccl *nc, const gq_coll_group *g, cuda_comm **out, gq_err *err)
{
    int rc = GQ_OK;
    for (cuda_comm *c = b->comms; c; c = c->next)
        if (c->n == g->ngpus && !memcmp(c->gpus, g->gpus, sizeof(int) * (size_t)g->ngpus)) {
            *out = c;
            return GQ_OK;
        }
    cuda_comm *c = calloc(1, sizeof *c);
    if (!c)
        return gq_err_set(err, GQ_E_NOMEM, "out of memory");
    c->n = g->ngpus;
    memcpy(c->gpus, g->gpus, sizeof(int) * (size_t)g->ngpus);
    gq_ncclResult_t r = nc->comm_init_all(c->comm, c->n, c->gpus);
    if (r != gq_ncclSuccess) {
        memset(c->comm, 0, sizeof c->comm);
        rc = gq_err_set(err, GQ_E_BACKEND, "ncclCommInitAll over %d GPU(s): %s", c->n,
                        gq_nccl_strerror(nc, r));
        goto out;
    }
    for (int i = 0; i < c->n; i++) {
        CK(cudaSetDevice(c->gpus[i]));
        CK(cudaStreamCreateWithFlags(&c->st[i], cudaStreamNonBlocking));
        CK(cudaEventCreateWithFlags(&c->ev[i], cudaEventDisableTiming));
    }
    c->next = b->comms;
    b->comms = c;
    *out = c;
    return GQ_OK;
out:
    comm_free(nc, c);
    return rc;
}

/* Peer access on between the group's GPUs where the hardware allows it,
 * through the copies' own bookkeeping (gq_cuda_peer_set), before NCCL runs:
 * NCCL's older transport (without cuMem) enables peer access itself, which
 * would leave the copies believing it off, and it relies on it staying on
 * (the copies may turn it off between two collectives). Harmless where
 * NCCL maps its buffers with cuMem: that ignores this setting. */
static void peers_on(cuda_be *b, const gq_coll_group *g)
{
    for (int i = 0; i < g->ngpus; i++)
        for (int j = 0; j < g->ngpus; j++) {
            int a = g->gpus[i], c = g->gpus[j], can = 0;
            if (a == c || cudaDeviceCanAccessPeer(&can, a, c) != cudaSuccess || !can) {
                (void)cudaGetLastError();
                continue;
            }
            gq_err e = {0};
            if (gq_cuda_peer_set(b, a, c, true, &e) != GQ_OK)
                (void)
                    cudaGetLastError(); /* NCCL decides for itself then; a real fault shows in NCCL's calls */
        }
}

/* Element counts of one rank's buffers, as nccl-tests' *GetCollByteCount
 * give them for a "size" of req->bytes (chunk: the per-rank block). */
static void coll_counts(gq_coll_op op, uint64_t bytes, int n, uint64_t *send, uint64_t *recv, uint64_t *chunk)
{
    uint64_t count = bytes / 4, base = count / (uint64_t)n;
    switch (op) {
    case GQ_COLL_ALL_GATHER: *send = base, *recv = count, *chunk = base; break;
    case GQ_COLL_REDUCE_SCATTER: *send = count, *recv = base, *chunk = base; break;
    case GQ_COLL_ALL_TO_ALL: *send = count, *recv = count, *chunk = base; break;
    default: *send = count, *recv = count, *chunk = count; break; /* all-reduce, broadcast */
    }
}

/* One iteration (index iter) of the op over a group: its ranks between
 * ncclGroupStart and ncclGroupEnd, on slice iter % slices of their buffers. */
static gq_ncclResult_t coll_enqueue(const gq_nccl *nc, const cuda_comm *c, const coll_bufs *bf, gq_coll_op op,
                                    uint64_t bytes, uint64_t iter)
{
    uint64_t ns, nr, chunk;
    coll_counts(op, bytes, c->n, &ns, &nr, &chunk);
    uint64_t shift = bytes / 4 * (iter % (bf->slices ? bf->slices : 1)); /* elements */
    gq_ncclResult_t r = nc->group_start(), first = gq_ncclSuccess;
    if (r != gq_ncclSuccess)
        return r;
    for (int k = 0; k < c->n && first == gq_ncclSuccess; k++) {
        gq_nccl_stream_t s = c->st[k];
        const float *sb = bf->send[k] + shift;
        float *rb = bf->recv[k] + shift;
        switch (op) {
        case GQ_COLL_ALL_REDUCE:
            first = nc->all_reduce(sb, rb, ns, gq_ncclFloat32, gq_ncclSum, c->comm[k], s);
            break;
        case GQ_COLL_ALL_GATHER: first = nc->all_gather(sb, rb, chunk, gq_ncclFloat32, c->comm[k], s); break;
        case GQ_COLL_REDUCE_SCATTER:
            first = nc->reduce_scatter(sb, rb, chunk, gq_ncclFloat32, gq_ncclSum, c->comm[k], s);
            break;
        case GQ_COLL_ALL_TO_ALL: /* nccl-tests' alltoall before NCCL 2.28: a send and a receive per peer */
            for (int p = 0; p < c->n && first == gq_ncclSuccess; p++) {
                first = nc->send(sb + (uint64_t)p * chunk, chunk, gq_ncclFloat32, p, c->comm[k], s);
                if (first == gq_ncclSuccess)
                    first = nc->recv(rb + (uint64_t)p * chunk, chunk, gq_ncclFloat32, p, c->comm[k], s);
            }
            break;
        default: /* broadcast from rank 0 */
            first = nc->broadcast(sb, rb, ns, gq_ncclFloat32, 0, c->comm[k], s);
            break;
        }
    }
    r = nc->group_end(); /* always closes the group, even after a failed call */
    return first != gq_ncclSuccess ? first : r;
}

/* An NCCL call failed for a group: "ncclAllReduce (warmup): <NCCL's text>". */
static void group_fail(gq_coll_result *res, coll_bufs *bf, const char *what, const char *when,
                       const char *why)
{
    if (bf->failed)
        return;
    bf->failed = true;
    res->status = GQ_E_BACKEND;
    snprintf(res->error, sizeof res->error, "%s%s: %s", what, when, why);
}

static int check_req(const cuda_be *b, const gq_coll_req *q, gq_err *err)
{
    if ((int)q->op < 0 || q->op >= GQ_COLL_NOPS)
        return gq_err_set(err, GQ_E_USAGE, "collective op %d: expected 0..%d", (int)q->op, GQ_COLL_NOPS - 1);
    if (q->ngroups < 1 || q->ngroups > GQ_COLL_MAX_GROUPS)
        return gq_err_set(err, GQ_E_USAGE, "%d groups: expected 1..%d", q->ngroups, GQ_COLL_MAX_GROUPS);
    if (q->iters < 1 || q->warmup < 0)
        return gq_err_set(err, GQ_E_USAGE, "%d iterations, %d warmup: expected >= 1 and >= 0", q->iters,
                          q->warmup);
    bool used[GQ_MAX_GPUS] = {false};
    for (int g = 0; g < q->ngroups; g++) {
        const gq_coll_group *gr = &q->groups[g];
        if (gr->ngpus < 1 || gr->ngpus > b->ngpu)
            return gq_err_set(err, GQ_E_USAGE, "group %d has %d GPUs: expected 1..%d", g + 1, gr->ngpus,
                              b->ngpu);
        if (q->bytes == 0 || q->bytes % (4ull * (uint64_t)gr->ngpus))
            return gq_err_set(err, GQ_E_USAGE,
                              "%llu bytes: expected a multiple of 4 x %d GPUs, at least that",
                              (unsigned long long)q->bytes, gr->ngpus);
        for (int r = 0; r < gr->ngpus; r++) {
            int d = gr->gpus[r];
            if (d < 0 || d >= b->ngpu)
                return gq_err_set(err, GQ_E_USAGE, "GPU %d in group %d: expected 0..%d", d, g + 1,
                                  b->ngpu - 1);
            if (used[d])
                return gq_err_set(err, GQ_E_USAGE, "GPU %d is in two groups (or twice in one)", d);
            used[d] = true;
        }
    }
    return GQ_OK;
}

/* Elements of a rank's receive allocation: every slice's output. */
static uint64_t recv_alloc(const gq_coll_req *q, const coll_bufs *bf, uint64_t nr)
{
    return q->bytes / 4 * (bf->slices - 1) + nr;
}

/* The communicator set's kept buffers, grown to hold send and recv
 * elements per rank (at least the span's, so a sweep allocates once). */
static int comm_bufs_get(cuda_comm *c, uint64_t send, uint64_t recv, const gq_coll_req *q, gq_err *err)
{
    int rc = GQ_OK;
    if (c->kcap_send >= send && c->kcap_recv >= recv)
        return GQ_OK;
    uint64_t span = (q->span > q->bytes ? q->span : q->bytes) / 4;
    comm_bufs_drop(c);
    send = send > span ? send : span;
    recv = recv > span ? recv : span;
    for (int k = 0; k < c->n; k++) {
        CK(cudaSetDevice(c->gpus[k]));
        CK(cudaMalloc((void **)&c->ksend[k], send * 4));
        CK(cudaMalloc((void **)&c->krecv[k], recv * 4));
        CK(cudaMalloc((void **)&c->kres[k], 2 * sizeof(unsigned long long)));
    }
    c->kcap_send = send;
    c->kcap_recv = recv;
    return GQ_OK;
out:
    comm_bufs_drop(c); /* all or nothing */
    return rc;
}

/* Fill and poison one group's buffers: gq_coll_slices(q) slices q->bytes
 * apart (nccl-tests' shift), each send slice filled alike. */
static int bufs_setup(cuda_be *b, cuda_comm *c, coll_bufs *bf, const gq_coll_req *q, gq_err *err)
{
    int rc = GQ_OK;
    uint64_t ns, nr, chunk, stride = q->bytes / 4;
    coll_counts(q->op, q->bytes, c->n, &ns, &nr, &chunk);
    bf->slices = gq_coll_slices(q);
    if ((rc = comm_bufs_get(c, stride * (bf->slices - 1) + ns, recv_alloc(q, bf, nr), q, err)) != GQ_OK)
        return rc;
    for (int k = 0; k < c->n; k++) {
        int d = c->gpus[k];
        int grid = b->dev[d].sm_count * 4;
        CK(cudaSetDevice(d));
        bf->send[k] = c->ksend[k];
        bf->recv[k] = c->krecv[k];
        bf->dres[k] = c->kres[k];
        for (uint64_t i = 0; i < bf->slices; i++)
            CK(gq_k_coll_fill(bf->send[k] + i * stride, ns, k,
                              q->op == GQ_COLL_ALL_REDUCE || q->op == GQ_COLL_BROADCAST ? ns : chunk, grid,
                              c->st[k]));
        CK(cudaMemsetAsync(bf->recv[k], 0xff, recv_alloc(q, bf, nr) * 4, c->st[k])); /* NaN everywhere */
    }
out:
    return rc;
}

/* Check every rank's output after the timed part, in every slice the timed
 * part wrote (slices 0 .. min(iters, slices) - 1; the warmup's outputs were
 * poisoned again before it). */
static int coll_verify(cuda_be *b, const cuda_comm *c, coll_bufs *bf, const gq_coll_req *q,
                       gq_coll_result *res, gq_err *err)
{
    int rc = GQ_OK;
    uint64_t ns, nr, chunk, stride = q->bytes / 4;
    coll_counts(q->op, q->bytes, c->n, &ns, &nr, &chunk);
    uint64_t chk_chunk = q->op == GQ_COLL_ALL_REDUCE || q->op == GQ_COLL_BROADCAST ? nr : chunk;
    uint64_t written = (uint64_t)q->iters < bf->slices ? (uint64_t)q->iters : bf->slices;
    uint64_t last = (uint64_t)(q->iters - 1) % bf->slices; /* the last timed iteration's slice */
    bool corrupt = gq_cuda_test_corrupt_take(b);           /* test-only: rank 0's output */
    for (int k = 0; k < c->n; k++) {
        CK(cudaSetDevice(c->gpus[k]));
        if (corrupt && k == 0) {
            uint64_t off = atomic_load(&b->test_corrupt_off);
            CK(gq_k_flip_byte(bf->recv[k], last * stride * 4 + (off < nr * 4 ? off : nr * 4 - 1), c->st[k]));
        }
        CK(gq_k_coll_check_slices(bf->recv[k], nr, stride, written, (int)q->op, k, c->n, chk_chunk,
                                  bf->dres[k], b->dev[c->gpus[k]].sm_count * 4, c->st[k]));
    }
    res->verified = true;
    res->verify_ok = true;
    for (int k = 0; k < c->n; k++) {
        unsigned long long h[2] = {0, 0};
        CK(cudaSetDevice(c->gpus[k]));
        CK(cudaMemcpyAsync(h, bf->dres[k], sizeof h, cudaMemcpyDeviceToHost, c->st[k]));
        CK(cudaStreamSynchronize(c->st[k]));
        if (h[0])
            res->verify_ok = false;
    }
out:
    return rc;
}

/* Abort a group's communicators: NCCL's kernels stop, so the streams drain
 * (ncclCommAbort; a plain destroy would wait for them forever). */
static void comm_kill(const gq_nccl *nc, cuda_comm *c)
{
    for (int k = 0; k < c->n; k++)
        if (c->comm[k]) {
            nc->comm_abort(c->comm[k]);
            c->comm[k] = NULL;
        }
    c->dead = true;
}

/* Wait for every group's end events; a group's t_end is when the last of
 * its ranks' events completed. An error NCCL reports on its own
 * (ncclCommGetAsyncError), an interrupt or a hang (COLL_HANG_S) aborts the
 * communicators of every group still running. */
static int coll_wait(const gq_nccl *nc, cuda_comm **cs, coll_bufs *bfs, const gq_coll_req *q,
                     gq_coll_result *res, double t0, gq_err *err)
{
    int rc = GQ_OK;
    bool done[GQ_COLL_MAX_GROUPS] = {false};
    int left = 0;
    for (int g = 0; g < q->ngroups; g++)
        if (!bfs[g].failed)
            left++;
        else
            done[g] = true;
    for (unsigned long spin = 0; left > 0; spin++) {
        /* each running group's events, polled once per spin: idle[g] when all completed */
        bool idle[GQ_COLL_MAX_GROUPS] = {false};
        for (int g = 0; g < q->ngroups; g++) {
            if (bfs[g].failed)
                continue;
            const cuda_comm *c = cs[g];
            int ready = 0;
            for (int k = 0; k < c->n && ready == k; k++) {
                cudaError_t e = cudaEventQuery(c->ev[k]);
                if (e == cudaSuccess)
                    ready++;
                else if (e != cudaErrorNotReady)
                    CK(e);
            }
            idle[g] = ready == c->n;
            if (idle[g] && !done[g]) {
                res[g].t_end = gq_now_mono();
                res[g].iters_done = q->iters;
                done[g] = true;
                left--;
            }
        }
        /* A group whose timed part is over keeps loading the fabric with untimed iterations,
         * one at a time, until every group's timed part is over (the overlap contract of
         * backend.h, as an interfering copy does): its window then lies under the others' load. */
        for (int g = 0; left > 0 && g < q->ngroups; g++) {
            if (!idle[g] || bfs[g].failed)
                continue;
            cuda_comm *c = cs[g];
            gq_ncclResult_t r = coll_enqueue(nc, c, &bfs[g], q->op, q->bytes, bfs[g].next++);
            if (r != gq_ncclSuccess) {
                rc = gq_err_set(err, GQ_E_BACKEND, "%s (group %d, untimed load): %s", op_fn[q->op], g + 1,
                                gq_nccl_strerror(nc, r));
                goto out;
            }
            for (int k = 0; k < c->n; k++) {
                CK(cudaSetDevice(c->gpus[k]));
                CK(cudaEventRecord(c->ev[k], c->st[k]));
            }
        }
        if (left == 0 || spin % 4096 != 4095)
            continue;
        /* every few thousand polls: NCCL's own errors (a peer lost), an interrupt, a hang */
        for (int g = 0; g < q->ngroups && rc == GQ_OK; g++)
            for (int k = 0; !done[g] && k < cs[g]->n; k++) {
                gq_ncclResult_t ae = gq_ncclSuccess;
                if (nc->comm_get_async_error(cs[g]->comm[k], &ae) == gq_ncclSuccess && ae != gq_ncclSuccess &&
                    ae != gq_ncclInProgress) {
                    rc = gq_err_set(err, GQ_E_BACKEND, "NCCL on GPU %d (group %d): %s", cs[g]->gpus[k], g + 1,
                                    gq_nccl_strerror(nc, ae));
                    break;
                }
            }
        double waited = gq_now_mono() - t0;
        if (rc == GQ_OK && gq_interrupt_requested())
            rc = gq_err_set(err, GQ_E_INTR, "interrupted during the collectives");
        else if (rc == GQ_OK && waited > COLL_HANG_S)
            rc = gq_err_set(err, GQ_E_BACKEND,
                            "%s: %d of %d group(s) not finished after %.0f s: taken for a hang", op_fn[q->op],
                            left, q->ngroups, waited);
        if (rc != GQ_OK)
            goto out;
    }
    /* the untimed iterations drain before the data check */
    for (int g = 0; g < q->ngroups; g++)
        for (int k = 0; !bfs[g].failed && k < cs[g]->n; k++) {
            CK(cudaSetDevice(cs[g]->gpus[k]));
            CK(cudaStreamSynchronize(cs[g]->st[k]));
        }
out:
    if (rc != GQ_OK)
        for (int g = 0; g < q->ngroups; g++)
            if (!done[g] || q->ngroups > 1)
                comm_kill(nc, cs[g]);
    return rc;
}

int gq_cuda_coll_run(gq_backend *be, const gq_coll_req *req, gq_coll_result *res, gq_err *err)
{
    cuda_be *b = priv(be);
    const gq_nccl *nc = NULL;
    int rc = gq_nccl_load(&nc, err); /* GQ_E_NOLIB: the one line saying NCCL is missing */
    if (rc != GQ_OK)
        return rc;
    if ((rc = check_req(b, req, err)) != GQ_OK)
        return rc;
    int ng = req->ngroups;
    memset(res, 0, sizeof *res * (size_t)ng);
    cuda_comm *cs[GQ_COLL_MAX_GROUPS] = {NULL};
    coll_bufs *bfs = calloc((size_t)ng, sizeof *bfs);
    if (!bfs)
        return gq_err_set(err, GQ_E_NOMEM, "out of memory");
    pthread_mutex_lock(&b->coll_mu);
    for (int g = 0; g < ng; g++)
        peers_on(b, &req->groups[g]);
    for (int g = 0; g < ng && rc == GQ_OK; g++)
        rc = comm_get(b, nc, &req->groups[g], &cs[g], err);
    for (int g = 0; g < ng && rc == GQ_OK; g++)
        rc = bufs_setup(b, cs[g], &bfs[g], req, err);
    if (rc != GQ_OK)
        goto out;

    /* warmup, then the outputs poisoned again so that the timed part must write them */
    for (int w = 0; w < req->warmup; w++)
        for (int g = 0; g < ng; g++) {
            gq_ncclResult_t r = bfs[g].failed
                                    ? gq_ncclSuccess
                                    : coll_enqueue(nc, cs[g], &bfs[g], req->op, req->bytes, (uint64_t)w);
            if (r != gq_ncclSuccess) { /* its ranks may wait for one another: abort them */
                group_fail(&res[g], &bfs[g], op_fn[req->op], " (warmup)", gq_nccl_strerror(nc, r));
                comm_kill(nc, cs[g]);
            }
        }
    for (int g = 0; g < ng; g++) {
        const cuda_comm *c = cs[g];
        uint64_t ns, nr, chunk;
        coll_counts(req->op, req->bytes, c->n, &ns, &nr, &chunk);
        for (int k = 0; k < c->n; k++) {
            CK(cudaSetDevice(c->gpus[k]));
            CK(cudaMemsetAsync(bfs[g].recv[k], 0xff, recv_alloc(req, &bfs[g], nr) * 4, c->st[k]));
        }
    }
    /* the barrier: every stream of every group idle */
    for (int g = 0; g < ng; g++)
        for (int k = 0; k < cs[g]->n; k++) {
            CK(cudaSetDevice(cs[g]->gpus[k]));
            CK(cudaStreamSynchronize(cs[g]->st[k]));
        }

    double t0 = gq_now_mono();
    for (int g = 0; g < ng; g++) {
        res[g].t_start = t0;
        bfs[g].next = (uint64_t)req->iters; /* untimed iterations go on from there */
    }
    for (int it = 0; it < req->iters; it++)
        for (int g = 0; g < ng; g++) {
            if (bfs[g].failed)
                continue;
            gq_ncclResult_t r = coll_enqueue(nc, cs[g], &bfs[g], req->op, req->bytes, (uint64_t)it);
            if (r != gq_ncclSuccess) {
                group_fail(&res[g], &bfs[g], op_fn[req->op], "", gq_nccl_strerror(nc, r));
                comm_kill(nc, cs[g]);
            }
        }
    for (int g = 0; g < ng; g++)
        for (int k = 0; k < cs[g]->n; k++) {
            CK(cudaSetDevice(cs[g]->gpus[k]));
            CK(cudaEventRecord(cs[g]->ev[k], cs[g]->st[k]));
        }
    if ((rc = coll_wait(nc, cs, bfs, req, res, t0, err)) != GQ_OK)
        goto out;

    if (req->verify)
        for (int g = 0; g < ng; g++)
            if (!bfs[g].failed && (rc = coll_verify(b, cs[g], &bfs[g], req, &res[g], err)) != GQ_OK)
                goto out;
    /* a group that failed: the call's status too, with the group named */
    for (int g = 0; g < ng; g++)
        if (bfs[g].failed) {
            rc = gq_err_set(err, res[g].status, "group %d: %s", g + 1, res[g].error);
            break;
        }
out:
    for (int g = 0; g < ng; g++) /* aborted communicators leave the cache (their buffers with them) */
        if (cs[g] && cs[g]->dead) {
            for (cuda_comm **p = &b->comms; *p; p = &(*p)->next)
                if (*p == cs[g]) {
                    *p = cs[g]->next;
                    break;
                }
            comm_free(nc, cs[g]);
        }
    pthread_mutex_unlock(&b->coll_mu);
    free(bfs);
    if (rc != GQ_OK)
        for (int g = 0; g < ng; g++)
            if (res[g].status == GQ_OK) {
                res[g].status = rc;
                snprintf(res[g].error, sizeof res[g].error, "%s", err && err->msg[0] ? err->msg : "failed");
            }
    return rc;
}
