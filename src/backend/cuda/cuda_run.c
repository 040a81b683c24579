/* The CUDA backend's run hook: one worker thread per flow queues its copies
 * behind the start latch, the latch opens, and each worker counts the copies
 * completed in its window (see cuda_backend.c for how windows stay honest);
 * then the optional data check.
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
bool gq_cuda_test_corrupt_take(cuda_be *b)
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
    if (gq_cuda_test_corrupt_take(b)) {
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

int gq_cuda_run(gq_backend *be, gq_group *g, const gq_run_opts *o, gq_flow_result *res, gq_err *err)
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
