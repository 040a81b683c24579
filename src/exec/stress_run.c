/* The stress run (exec/stress_run.h): drives a backend's stress hooks and
 * samples telemetry while the load runs; the verdict is analysis/stress.h's. */
#include "exec/stress_run.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/interrupt.h"
#include "core/units.h"

/* Copy a message into a fixed field, cut at its size. */
static void copy_msg(char *dst, size_t n, const char *src)
{
    size_t l = strnlen(src ? src : "", n - 1);
    memcpy(dst, src ? src : "", l);
    dst[l] = 0;
}

/* ---- the run ------------------------------------------------------------ */

/* Host<->GPU traffic during the load: one H2D and one D2H flow per GPU,
 * run back to back in chunks of about a second. */
typedef struct xfer_ctx {
    gq_backend *be;
    gq_group *g;
    int nflows;
    gq_flow flows[2 * GQ_MAX_GPUS];
    gq_flow_result res[2 * GQ_MAX_GPUS];
    gq_stress_result *r;
    atomic_bool stop;
    bool thread_running;
    pthread_t th;
    int status; /* whole-run failure */
    char error[200];
} xfer_ctx;

/* Accumulate one chunk's results into the GPUs' counters. The tag of flow
 * 2k+d is k (the GPU's slot in r) and d the direction. */
static void xfer_account(xfer_ctx *x)
{
    for (int i = 0; i < x->nflows; i++) {
        const gq_flow_result *fr = &x->res[i];
        gq_stress_gpu *g = &x->r->gpu[i / 2];
        int d = i % 2;
        if (fr->status != GQ_OK) {
            if (g->xfer_status == GQ_OK) {
                g->xfer_status = fr->status;
                copy_msg(g->xfer_error, sizeof g->xfer_error, fr->error[0] ? fr->error : "transfer failed");
            }
            continue;
        }
        double w = fr->t_end - fr->t_start;
        if (w > 0) {
            g->xfer_bytes[d] += (double)fr->bytes_done;
            g->xfer_s[d] += w;
        }
    }
}

static int xfer_chunk(xfer_ctx *x, double seconds)
{
    gq_run_opts ro = {.reps = 0, .duration_s = seconds, .verify = false};
    gq_err e = {0};
    int rc = x->be->ops->run(x->be, x->g, &ro, x->res, &e);
    if (rc != GQ_OK) {
        x->status = rc;
        copy_msg(x->error, sizeof x->error, e.msg);
        return rc;
    }
    xfer_account(x);
    return GQ_OK;
}

static void *xfer_thread(void *arg)
{
    xfer_ctx *x = arg;
    while (!atomic_load(&x->stop) && !gq_interrupt_requested())
        if (xfer_chunk(x, 1.0) != GQ_OK)
            break;
    return NULL;
}

static int xfer_setup(xfer_ctx *x, gq_backend *be, gq_stress_result *r, const int *dev, uint64_t bytes)
{
    memset(x, 0, sizeof *x);
    x->be = be;
    x->r = r;
    atomic_init(&x->stop, false);
    /* Every GPU gets its two flows, even one whose load did not start, so
     * that flow 2k+d belongs to slot k. */
    x->nflows = 2 * r->ngpu;
    for (int k = 0; k < r->ngpu; k++)
        for (int d = 0; d < 2; d++) {
            gq_flow *f = &x->flows[2 * k + d];
            gq_endpoint host = {.kind = GQ_EP_HOST, .index = GQ_NUMA_LOCAL};
            gq_endpoint gpu = {.kind = GQ_EP_GPU, .index = dev[k]};
            f->src = d == 0 ? host : gpu;
            f->dst = d == 0 ? gpu : host;
            f->method = GQ_METHOD_CE;
            f->exec_gpu = dev[k];
            f->bytes = bytes;
            f->tag = 2 * k + d;
        }
    gq_err e = {0};
    int rc = be->ops->prepare(be, x->flows, x->nflows, &x->g, &e);
    if (rc != GQ_OK) {
        x->status = rc;
        copy_msg(x->error, sizeof x->error, e.msg);
        x->g = NULL;
    }
    return rc;
}

static void xfer_finish(xfer_ctx *x)
{
    if (x->thread_running) {
        atomic_store(&x->stop, true);
        pthread_join(x->th, NULL);
        x->thread_running = false;
    }
    if (x->g) {
        x->be->ops->release(x->be, x->g);
        x->g = NULL;
    }
}

static double be_now(gq_backend *be)
{
    return be->ops->now ? be->ops->now(be) : gq_now_mono();
}

/* Sleep until `until` on the backend clock, in slices so that Ctrl-C is
 * seen within ~50 ms. */
static void real_wait_until(gq_backend *be, double until)
{
    for (;;) {
        double left = until - be_now(be);
        if (left <= 0 || gq_interrupt_requested())
            return;
        if (left > 0.05)
            left = 0.05;
        struct timespec ts = {.tv_sec = 0, .tv_nsec = (long)(left * 1e9)};
        nanosleep(&ts, NULL);
    }
}

static void gpu_fail(gq_stress_gpu *g, int rc, const char *msg, double t)
{
    if (g->status != GQ_OK)
        return;
    g->status = rc ? rc : GQ_E_BACKEND;
    copy_msg(g->error, sizeof g->error, msg && *msg ? msg : gq_status_name(g->status));
    g->lost_t = t;
}

/* One sampling tick for one GPU. */
static int tick_gpu(gq_backend *be, int dev, gq_stress_gpu *g, double t, bool *running)
{
    gq_stress_point p;
    memset(&p, 0, sizeof p);
    p.t = t;
    p.loaded = *running;
    p.tflops = NAN;
    gq_stress_sample_unknown(&p.s);
    gq_err e = {0};
    if (!g->telemetry_unsupported && !g->lost) {
        gq_sample s;
        gq_stress_sample_unknown(&s);
        int rc = be->ops->sample(be, dev, &s, &e);
        if (rc == GQ_OK) {
            p.s = s;
            p.has_sample = true;
            if (s.lost) {
                g->lost = true;
                gpu_fail(g, GQ_E_BACKEND, "the GPU stopped answering (fell off the bus)", t);
            }
        } else if (rc == GQ_E_UNSUPP) {
            g->telemetry_unsupported = true;
            copy_msg(g->sample_error, sizeof g->sample_error, e.msg);
        } else {
            if (g->sample_errors++ == 0)
                copy_msg(g->sample_error, sizeof g->sample_error, e.msg);
        }
    }
    if (*running && g->status == GQ_OK) {
        uint64_t gemms = 0, faulty = 0;
        double tf = NAN;
        memset(&e, 0, sizeof e);
        int rc = be->ops->stress_poll(be, dev, &gemms, &faulty, &tf, &e);
        if (rc == GQ_OK) {
            g->gemms = p.gemms = gemms;
            g->faulty = p.faulty = faulty;
            p.tflops = tf;
        } else {
            gpu_fail(g, rc, e.msg, t);
        }
    } else {
        p.gemms = g->gemms;
        p.faulty = g->faulty;
    }
    if (*running && g->status != GQ_OK) {
        /* Stop this GPU's load now; the others continue. */
        memset(&e, 0, sizeof e);
        be->ops->stress_stop(be, dev, &e);
        *running = false;
    }
    return gq_stress_point_push(g, &p);
}

/* The result before the load: each GPU's identity from the topology, its
 * device index in dev[], and its telemetry baseline. */
static void result_init(gq_backend *be, const gq_topo *topo, const gq_stress_opts *o, gq_stress_result *r,
                        int *dev)
{
    const gq_backend_ops *ops = be->ops;
    memset(r, 0, sizeof *r);
    r->duration_s = o->duration_s;
    r->interval_s = o->interval_s;
    r->precision = o->precision;
    r->with_transfers = o->with_transfers;
    r->simulated = gq_backend_simulated(be);
    r->ngpu = o->ngpus;
    for (int k = 0; k < o->ngpus; k++) {
        const gq_gpu_info *gi = &topo->gpu[o->gpus[k]];
        gq_stress_gpu *g = &r->gpu[k];
        dev[k] = gi->index >= 0 ? gi->index : o->gpus[k];
        g->gpu = dev[k];
        copy_msg(g->name, sizeof g->name, gi->name);
        copy_msg(g->uuid, sizeof g->uuid, gi->uuid);
        g->power_limit_w = gi->power_limit_w;
        g->pcie_gen_max = gi->pcie_gen_max;
        g->pcie_width_max = gi->pcie_width_max;
        g->lost_t = -1;
        gq_err e = {0};
        gq_sample s;
        gq_stress_sample_unknown(&s);
        int src = ops->sample(be, dev[k], &s, &e);
        if (src == GQ_OK) {
            g->baseline = s;
            g->has_baseline = true;
        } else if (src == GQ_E_UNSUPP) {
            g->telemetry_unsupported = true;
            copy_msg(g->sample_error, sizeof g->sample_error, e.msg);
        }
    }
}

/* The tick loop: wait for each sample time (virtual or real), sample every
 * GPU, report, until the duration or an interrupt (r->interrupted). GQ_OK, or
 * the error that stopped it (out of memory, the on_tick callback's). */
static int run_ticks(gq_backend *be, const gq_stress_opts *o, gq_stress_result *r, const int *dev,
                     bool *running, xfer_ctx *x, bool virt, double t0, gq_err *err)
{
    const gq_backend_ops *ops = be->ops;
    double vt = 0;
    int rc;
    for (long tick = 0;; tick++) {
        double target = (double)tick * o->interval_s;
        if (target > o->duration_s + 1e-9)
            target = o->duration_s;
        if (virt) {
            if (target > vt) {
                if (x && x->g && x->status == GQ_OK)
                    xfer_chunk(x, target - vt);
                ops->wait(be, target - vt);
                vt = target;
            }
        } else {
            real_wait_until(be, t0 + target);
        }
        if (gq_interrupt_requested()) {
            r->interrupted = true;
            break;
        }
        double t = virt ? vt : be_now(be) - t0;
        for (int k = 0; k < r->ngpu; k++)
            if ((rc = tick_gpu(be, dev[k], &r->gpu[k], t, &running[k])) != GQ_OK)
                return gq_err_set(err, rc, "out of memory for the time series");
        r->elapsed_s = t;
        if (o->progress)
            o->progress(o->progress_arg, r, t);
        if (o->on_tick && (rc = o->on_tick(o->tick_arg, r, err)) != GQ_OK)
            return rc;
        if (target >= o->duration_s)
            break;
    }
    return GQ_OK;
}

/* Final counters of every GPU still running, then stop it. Workers also
 * watch the interrupt flag, so a Ctrl-C has already stopped them all at once. */
static void stop_all(gq_backend *be, gq_stress_result *r, const int *dev, bool *running)
{
    const gq_backend_ops *ops = be->ops;
    for (int k = 0; k < r->ngpu; k++) {
        if (!running[k])
            continue;
        gq_stress_gpu *g = &r->gpu[k];
        gq_err e = {0};
        uint64_t gemms, faulty;
        double tf;
        if (ops->stress_poll(be, dev[k], &gemms, &faulty, &tf, &e) == GQ_OK) {
            g->gemms = gemms;
            g->faulty = faulty;
        }
        memset(&e, 0, sizeof e);
        int src = ops->stress_stop(be, dev[k], &e);
        if (src != GQ_OK)
            gpu_fail(g, src, e.msg, r->elapsed_s);
        running[k] = false;
    }
}

int gq_stress_run(gq_backend *be, const gq_topo *topo, const gq_stress_opts *o, gq_stress_result *r,
                  gq_err *err)
{
    const gq_backend_ops *ops = be->ops;
    if (!ops->stress_start || !ops->stress_poll || !ops->stress_stop || !ops->sample)
        return gq_err_set(err, GQ_E_UNSUPP, "the %s backend cannot run a stress load in this build",
                          ops->name);
    bool virt = (ops->flags & GQ_BE_VIRTUAL_TIME) != 0;
    if (virt && !ops->wait)
        return gq_err_set(err, GQ_E_UNSUPP, "the %s backend has virtual time but no wait hook", ops->name);
    int rc = gq_stress_opts_check(o, err);
    if (rc)
        return rc;
    int dev[GQ_MAX_GPUS];
    bool running[GQ_MAX_GPUS] = {0};
    for (int k = 0; k < o->ngpus; k++) {
        int pos = o->gpus[k];
        if (pos < 0 || pos >= topo->ngpu)
            return gq_err_set(err, GQ_E_USAGE, "GPU %d does not exist (this machine has GPUs 0-%d)", pos,
                              topo->ngpu - 1);
    }
    result_init(be, topo, o, r, dev);

    /* Start every GPU before anything else so the loads begin together. */
    for (int k = 0; k < r->ngpu; k++) {
        gq_err e = {0};
        int src = ops->stress_start(be, dev[k], o->precision, &e);
        if (src == GQ_OK) {
            r->gpu[k].started = true;
            running[k] = true;
        } else {
            gpu_fail(&r->gpu[k], src, e.msg, 0);
        }
    }
    double t0 = be_now(be);

    xfer_ctx *x = NULL;
    if (o->with_transfers) {
        x = calloc(1, sizeof *x);
        if (!x) {
            rc = gq_err_set(err, GQ_E_NOMEM, "out of memory");
            goto stop;
        }
        if (xfer_setup(x, be, r, dev, o->xfer_bytes ? o->xfer_bytes : 64 * GQ_MiB) == GQ_OK && !virt) {
            if (pthread_create(&x->th, NULL, xfer_thread, x) == 0)
                x->thread_running = true;
            else {
                x->status = GQ_E_FAIL;
                snprintf(x->error, sizeof x->error, "cannot start the transfer thread");
            }
        }
    }
    rc = run_ticks(be, o, r, dev, running, x, virt, t0, err);

stop:
    if (x) {
        xfer_finish(x);
        if (x->status != GQ_OK)
            copy_msg(r->xfer_error, sizeof r->xfer_error, x->error);
        free(x);
    }
    stop_all(be, r, dev, running);
    if (rc == GQ_OK && r->interrupted)
        rc = gq_err_set(err, GQ_E_INTR, "interrupted after %.0f s of %.0f s", r->elapsed_s, r->duration_s);
    return rc;
}
