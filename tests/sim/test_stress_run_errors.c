/* The stress runner's error paths (exec/stress_run.c): the simulated backend's
 * hooks behind a wrapper that fails one of them on cue, so that each refusal
 * and each per-GPU or per-transfer failure is seen with its message, on its
 * GPU only, while the rest of the run goes on. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>

#include <cmocka.h>

#include "analysis/stress.h"
#include "analysis/stress_internal.h"
#include "exec/stress_run.h"
#include "backend/backend.h"
#include "backend/sim/sim.h"
#include "core/units.h"
#include "../test_util.h"

/* What the wrapper does; reset by open_sim(). A *_gpu of -1 fails no GPU. */
static struct {
    const gq_backend_ops *sim;
    int sample_calls[GQ_MAX_GPUS];
    int sample_gpu, sample_from, sample_rc; /* fail sample() of sample_gpu from its sample_from'th call */
    int poll_gpu, poll_from, poll_calls;    /* stress_poll() of poll_gpu fails from its poll_from'th call */
    int start_gpu, stop_gpu;                /* stress_start() / stress_stop() of that GPU fail */
    bool prepare_fails, run_fails;
    int run_fails_from;  /* run() fails from its run_fails_from'th call (0: never) */
    bool flow_fails;     /* run() succeeds but flows 0 and 3 fail */
    bool all_flows_fail; /* run() succeeds but every flow fails */
    int runs;
} F;

static int w_sample(gq_backend *be, int gpu, gq_sample *s, gq_err *err)
{
    int n = ++F.sample_calls[gpu];
    if (gpu == F.sample_gpu && n >= F.sample_from)
        return gq_err_set(err, F.sample_rc, "sample %d of GPU %d failed", n, gpu);
    return F.sim->sample(be, gpu, s, err);
}

static int w_poll(gq_backend *be, int gpu, uint64_t *gemms, uint64_t *faulty, double *tf, gq_err *err)
{
    if (gpu == F.poll_gpu && ++F.poll_calls >= F.poll_from)
        return gq_err_set(err, GQ_E_BACKEND, "GEMM kernel of GPU %d aborted", gpu);
    return F.sim->stress_poll(be, gpu, gemms, faulty, tf, err);
}

static int w_start(gq_backend *be, int gpu, gq_precision p, gq_err *err)
{
    if (gpu == F.start_gpu)
        return gq_err_set(err, GQ_E_NOMEM, "no memory for the GEMM on GPU %d", gpu);
    return F.sim->stress_start(be, gpu, p, err);
}

static int w_stop(gq_backend *be, int gpu, gq_err *err)
{
    int rc = F.sim->stress_stop(be, gpu, err);
    if (gpu == F.stop_gpu)
        return gq_err_set(err, GQ_E_BACKEND, "GPU %d did not stop", gpu);
    return rc;
}

static int w_prepare(gq_backend *be, const gq_flow *flows, int nflows, gq_group **out, gq_err *err)
{
    if (F.prepare_fails)
        return gq_err_set(err, GQ_E_NOMEM, "no pinned host memory for %d copies", nflows);
    return F.sim->prepare(be, flows, nflows, out, err);
}

static int w_run(gq_backend *be, gq_group *g, const gq_run_opts *o, gq_flow_result *res, gq_err *err)
{
    F.runs++;
    if (F.run_fails || (F.run_fails_from && F.runs >= F.run_fails_from))
        return gq_err_set(err, GQ_E_BACKEND, "copy engine hung");
    int rc = F.sim->run(be, g, o, res, err);
    if (rc == GQ_OK && F.flow_fails) {
        res[0].status = GQ_E_BACKEND;
        snprintf(res[0].error, sizeof res[0].error, "DMA fault %d", F.runs);
        res[3].status = GQ_E_FAIL;
        res[3].error[0] = 0;
    }
    for (int i = 0; rc == GQ_OK && F.all_flows_fail && i < 4; i++) {
        res[i].status = GQ_E_BACKEND;
        snprintf(res[i].error, sizeof res[i].error, "flow %d failed", i);
    }
    return rc;
}

typedef struct fx {
    gq_backend be;
    gq_backend_ops ops;
    gq_topo topo;
    gq_stress_result r;
    gq_stress_opts o;
    gq_err e;
} fx;

/* The h200x2 sim behind the wrapper; both GPUs, 10 virtual seconds. */
static fx *open_sim(void)
{
    fx *x = calloc(1, sizeof *x);
    assert_non_null(x);
    memset(&F, 0, sizeof F);
    F.sample_gpu = F.poll_gpu = F.start_gpu = F.stop_gpu = -1;
    gq_backend_register_builtin();
    gq_backend_opts bo;
    gq_sim_opts(&bo, "h200x2", 1, -1, NULL);
    assert_int_equal(gq_backend_open(&x->be, "sim", &bo, &x->e), GQ_OK);
    gq_topo_init(&x->topo);
    assert_int_equal(x->be.ops->discover(&x->be, &x->topo, &x->e), GQ_OK);
    F.sim = x->be.ops;
    x->ops = *x->be.ops;
    x->ops.sample = w_sample;
    x->ops.stress_poll = w_poll;
    x->ops.stress_start = w_start;
    x->ops.stress_stop = w_stop;
    x->ops.prepare = w_prepare;
    x->ops.run = w_run;
    x->be.ops = &x->ops;
    gq_stress_opts_default(&x->o);
    x->o.ngpus = 2;
    x->o.gpus[0] = 0;
    x->o.gpus[1] = 1;
    x->o.duration_s = 10;
    x->o.interval_s = 1;
    return x;
}

static void close_sim(fx *x)
{
    x->be.ops = F.sim;
    gq_stress_result_free(&x->r);
    gq_backend_close(&x->be);
    free(x);
}

static int go(fx *x)
{
    memset(&x->e, 0, sizeof x->e);
    return gq_stress_run(&x->be, &x->topo, &x->o, &x->r, &x->e);
}

/* The text of the run's finding `rule` about `gpu`, "" when none (its level in *lvl). */
static const char *finding(fx *x, const char *rule, int gpu, gq_stress_level *lvl)
{
    static char text[640];
    gq_stress_summary *s = calloc(1, sizeof *s);
    assert_non_null(s);
    gq_stress_summarize(&x->r, NULL, s);
    text[0] = 0;
    for (int i = 0; i < s->nfindings; i++)
        if (!strcmp(s->findings[i].rule, rule) && s->findings[i].gpu == gpu) {
            snprintf(text, sizeof text, "%s", s->findings[i].text);
            *lvl = s->findings[i].level;
        }
    free(s);
    return text;
}

static void missing_hooks_refused(void **state)
{
    (void)state;
    fx *x = open_sim();
    const char *name = x->ops.name;
    x->ops.name = "nohooks";
    x->ops.stress_stop = NULL;
    assert_int_equal(go(x), GQ_E_UNSUPP);
    assert_string_equal(x->e.msg, "the nohooks backend cannot run a stress load in this build");
    x->ops.stress_stop = w_stop;
    x->ops.sample = NULL;
    assert_int_equal(go(x), GQ_E_UNSUPP);
    assert_non_null(strstr(x->e.msg, "cannot run a stress load"));
    x->ops.sample = w_sample;
    /* virtual time without a wait hook */
    x->ops.wait = NULL;
    assert_int_equal(go(x), GQ_E_UNSUPP);
    assert_string_equal(x->e.msg, "the nohooks backend has virtual time but no wait hook");
    x->ops.name = name;
    x->ops.wait = F.sim->wait;
    /* nothing was started */
    for (int g = 0; g < 2; g++)
        assert_int_equal(F.sample_calls[g], 0);
    close_sim(x);
}

static void gpu_out_of_range_refused(void **state)
{
    (void)state;
    fx *x = open_sim();
    x->o.gpus[1] = 2;
    assert_int_equal(go(x), GQ_E_USAGE);
    assert_string_equal(x->e.msg, "GPU 2 does not exist (this machine has GPUs 0-1)");
    x->o.gpus[1] = -1;
    assert_int_equal(go(x), GQ_E_USAGE);
    assert_string_equal(x->e.msg, "GPU -1 does not exist (this machine has GPUs 0-1)");
    /* the last one is fine */
    x->o.gpus[1] = 1;
    x->o.duration_s = 1;
    assert_int_equal(go(x), GQ_OK);
    close_sim(x);
}

/* A GPU whose load does not start fails at 0 s with the backend's message;
 * the other runs to the end. */
static void start_failure_fails_that_gpu(void **state)
{
    (void)state;
    fx *x = open_sim();
    F.start_gpu = 1;
    assert_int_equal(go(x), GQ_OK);
    const gq_stress_gpu *g = &x->r.gpu[1];
    assert_false(g->started);
    assert_int_equal(g->status, GQ_E_NOMEM);
    assert_string_equal(g->error, "no memory for the GEMM on GPU 1");
    assert_true(g->lost_t == 0);
    assert_int_equal(g->gemms, 0);
    assert_true(x->r.gpu[0].started);
    assert_int_equal(x->r.gpu[0].status, GQ_OK);
    assert_true(x->r.gpu[0].gemms > 0);
    gq_stress_summary *s = calloc(1, sizeof *s);
    assert_non_null(s);
    gq_stress_summarize(&x->r, NULL, s);
    assert_int_equal(s->gpu[0].verdict, GQ_STRESS_PASS);
    assert_int_equal(s->gpu[1].verdict, GQ_STRESS_FAIL);
    free(s);
    close_sim(x);
}

/* The load's counters cannot be read from 4 s on: the GPU fails then with
 * the message, its load is stopped, its last counts are kept. */
static void poll_failure_fails_that_gpu(void **state)
{
    (void)state;
    fx *x = open_sim();
    F.poll_gpu = 0;
    F.poll_from = 5; /* ticks at 0..3 s read, 4 s fails */
    assert_int_equal(go(x), GQ_OK);
    const gq_stress_gpu *g = &x->r.gpu[0];
    assert_int_equal(g->status, GQ_E_BACKEND);
    assert_string_equal(g->error, "GEMM kernel of GPU 0 aborted");
    assert_near(g->lost_t, 4, 1e-9);
    assert_int_equal(F.poll_calls, 5); /* not polled again, not even at the end */
    assert_true(g->gemms > 0);
    assert_true(g->pts[3].loaded && !g->pts[5].loaded);
    assert_int_equal(x->r.gpu[1].status, GQ_OK);
    assert_true(x->r.gpu[1].pts[10].loaded);
    close_sim(x);
}

/* The final stop fails: that GPU fails at the end of the run. */
static void stop_failure_fails_that_gpu(void **state)
{
    (void)state;
    fx *x = open_sim();
    F.stop_gpu = 1;
    assert_int_equal(go(x), GQ_OK);
    assert_int_equal(x->r.gpu[1].status, GQ_E_BACKEND);
    assert_string_equal(x->r.gpu[1].error, "GPU 1 did not stop");
    assert_near(x->r.gpu[1].lost_t, 10, 1e-9);
    assert_int_equal(x->r.gpu[0].status, GQ_OK);
    assert_true(x->r.gpu[0].lost_t == -1);
    close_sim(x);
}

/* Telemetry the backend cannot give at all (before the load: no baseline),
 * or that stops being supported, or that fails now and then (counted, the
 * first message kept); the load itself is not failed by any of them. */
static void sample_failures(void **state)
{
    (void)state;
    fx *x = open_sim();
    F.sample_gpu = 1;
    F.sample_from = 1;
    F.sample_rc = GQ_E_UNSUPP;
    assert_int_equal(go(x), GQ_OK);
    const gq_stress_gpu *g = &x->r.gpu[1];
    assert_false(g->has_baseline);
    assert_true(g->telemetry_unsupported);
    assert_string_equal(g->sample_error, "sample 1 of GPU 1 failed");
    assert_int_equal(F.sample_calls[1], 1); /* never asked again */
    assert_int_equal(g->sample_errors, 0);
    assert_false(g->pts[2].has_sample);
    assert_int_equal(g->status, GQ_OK);
    assert_true(x->r.gpu[0].has_baseline);
    assert_false(x->r.gpu[0].telemetry_unsupported);
    assert_true(x->r.gpu[0].pts[2].has_sample);
    close_sim(x);

    /* unsupported from the 4th sample: the baseline and first ticks are kept */
    x = open_sim();
    F.sample_gpu = 0;
    F.sample_from = 4;
    F.sample_rc = GQ_E_UNSUPP;
    assert_int_equal(go(x), GQ_OK);
    g = &x->r.gpu[0];
    assert_true(g->has_baseline);
    assert_true(g->telemetry_unsupported);
    assert_string_equal(g->sample_error, "sample 4 of GPU 0 failed");
    assert_int_equal(F.sample_calls[0], 4);
    assert_true(g->pts[1].has_sample);
    assert_false(g->pts[2].has_sample);
    assert_int_equal(g->sample_errors, 0);
    assert_int_equal(g->status, GQ_OK);
    close_sim(x);

    /* failing from the 6th sample: every failure counted, the first message kept */
    x = open_sim();
    F.sample_gpu = 0;
    F.sample_from = 6;
    F.sample_rc = GQ_E_BACKEND;
    assert_int_equal(go(x), GQ_OK);
    g = &x->r.gpu[0];
    assert_false(g->telemetry_unsupported);
    assert_int_equal(F.sample_calls[0], 12); /* baseline + 11 ticks */
    assert_int_equal(g->sample_errors, 7);
    assert_string_equal(g->sample_error, "sample 6 of GPU 0 failed");
    assert_true(g->pts[3].has_sample);
    assert_false(g->pts[4].has_sample);
    assert_int_equal(g->status, GQ_OK);
    gq_stress_level lvl = GQ_STRESS_PASS;
    assert_string_equal(finding(x, "telemetry-error", 0, &lvl),
                        "GPU 0: 7 telemetry samples failed: sample 6 of GPU 0 failed");
    assert_int_equal(lvl, GQ_STRESS_WARN);
    assert_string_equal(finding(x, "telemetry-error", 1, &lvl), "");
    close_sim(x);
}

static void transfer_failures(void **state)
{
    (void)state;
    /* the copies cannot be set up: the load runs without them */
    fx *x = open_sim();
    x->o.with_transfers = true;
    F.prepare_fails = true;
    assert_int_equal(go(x), GQ_OK);
    assert_string_equal(x->r.xfer_error, "no pinned host memory for 4 copies");
    assert_int_equal(F.runs, 0);
    assert_int_equal(x->r.gpu[0].status, GQ_OK);
    assert_true(x->r.gpu[0].gemms > 0);
    gq_stress_level lvl = GQ_STRESS_PASS;
    assert_string_equal(
        finding(x, "transfers", -1, &lvl),
        "--with-transfers: host<->GPU transfers could not run: no pinned host memory for 4 copies");
    assert_int_equal(lvl, GQ_STRESS_WARN);
    close_sim(x);

    /* the first run of the copies fails: no more are tried */
    x = open_sim();
    x->o.with_transfers = true;
    F.run_fails = true;
    assert_int_equal(go(x), GQ_OK);
    assert_string_equal(x->r.xfer_error, "copy engine hung");
    assert_int_equal(F.runs, 1);
    assert_true(x->r.gpu[1].xfer_s[0] == 0);
    assert_int_equal(x->r.gpu[1].status, GQ_OK);
    close_sim(x);

    /* single copies fail: their GPU and direction, the first message kept;
     * the other flows are counted */
    x = open_sim();
    x->o.with_transfers = true;
    F.flow_fails = true;
    assert_int_equal(go(x), GQ_OK);
    assert_int_equal(F.runs, 10);
    assert_string_equal(x->r.xfer_error, "");
    const gq_stress_gpu *g0 = &x->r.gpu[0], *g1 = &x->r.gpu[1];
    assert_int_equal(g0->xfer_status, GQ_E_BACKEND);
    assert_string_equal(g0->xfer_error, "DMA fault 1");
    assert_int_equal(g1->xfer_status, GQ_E_FAIL);
    assert_string_equal(g1->xfer_error, "transfer failed");
    assert_true(g0->xfer_s[0] == 0 && g0->xfer_bytes[0] == 0);
    assert_true(g0->xfer_s[1] > 0 && g0->xfer_bytes[1] > 0);
    assert_true(g1->xfer_s[0] > 0 && g1->xfer_bytes[0] > 0);
    assert_true(g1->xfer_s[1] == 0 && g1->xfer_bytes[1] == 0);
    close_sim(x);

    /* the copies fail half-way (virtual time: at the 4th chunk): stopped early */
    x = open_sim();
    x->o.with_transfers = true;
    F.run_fails_from = 4;
    assert_int_equal(go(x), GQ_OK);
    assert_int_equal(F.runs, 4);
    assert_string_equal(x->r.xfer_error, "copy engine hung");
    assert_true(x->r.gpu[0].xfer_s[0] > 0);
    gq_stress_level lvl2 = GQ_STRESS_PASS;
    assert_string_equal(finding(x, "transfers", -1, &lvl2),
                        "--with-transfers: host<->GPU transfers stopped early: copy engine hung");
    close_sim(x);

    /* every copy fails on its own: no run-wide error, but nothing moved */
    x = open_sim();
    x->o.with_transfers = true;
    F.all_flows_fail = true;
    assert_int_equal(go(x), GQ_OK);
    assert_int_equal(F.runs, 10);
    assert_string_equal(x->r.xfer_error, "");
    assert_string_equal(x->r.gpu[0].xfer_error, "flow 0 failed");
    assert_string_equal(x->r.gpu[1].xfer_error, "flow 2 failed");
    assert_string_equal(finding(x, "transfers", -1, &lvl2),
                        "--with-transfers: no host<->GPU transfer completed");
    assert_int_equal(lvl2, GQ_STRESS_WARN);
    close_sim(x);
    /* ... which is not said when they all ran */
    x = open_sim();
    x->o.with_transfers = true;
    assert_int_equal(go(x), GQ_OK);
    assert_string_equal(finding(x, "transfers", -1, &lvl2), "");
    close_sim(x);
}

/* The options' limits and the summary's cap on findings. */
static void opts_limits_and_findings_cap(void **state)
{
    (void)state;
    gq_stress_opts o;
    gq_stress_opts_default(&o);
    o.ngpus = 1;
    gq_err e = {0};
    o.duration_s = 7 * 86400.0;
    o.interval_s = 60;
    assert_int_equal(gq_stress_opts_check(&o, &e), GQ_OK);
    o.duration_s = 7 * 86400.0 + 1;
    assert_int_equal(gq_stress_opts_check(&o, &e), GQ_E_USAGE);
    assert_string_equal(e.msg, "--duration 604801s is longer than the 168h maximum (7 days)");
    o.duration_s = 60;
    o.ngpus = 0;
    assert_int_equal(gq_stress_opts_check(&o, &e), GQ_E_USAGE);
    assert_string_equal(e.msg, "stress needs at least one GPU");
    o.ngpus = GQ_MAX_GPUS + 1;
    assert_int_equal(gq_stress_opts_check(&o, &e), GQ_E_USAGE);
    o.ngpus = GQ_MAX_GPUS;
    assert_int_equal(gq_stress_opts_check(&o, &e), GQ_OK);
    assert_string_equal(gq_stress_level_name((gq_stress_level)7), "?");
    assert_string_equal(gq_stress_level_name(GQ_STRESS_WARN), "warn");

    gq_stress_summary *s = calloc(1, sizeof *s);
    assert_non_null(s);
    for (int i = 0; i < GQ_STRESS_MAX_FINDINGS; i++)
        gq_stress_add_finding(s, GQ_STRESS_INFO, i % 8, "power-cap", "finding %d", i);
    assert_int_equal(s->nfindings, GQ_STRESS_MAX_FINDINGS);
    assert_int_equal(s->nfindings_dropped, 0);
    assert_string_equal(s->findings[GQ_STRESS_MAX_FINDINGS - 1].text, "finding 255");
    /* beyond the cap: counted, not kept, but still counted in the verdict (info never) */
    gq_stress_add_finding(s, GQ_STRESS_INFO, 0, "power-cap", "one more");
    assert_int_equal(s->nfindings_dropped, 1);
    assert_int_equal(s->verdict, GQ_STRESS_PASS);
    gq_stress_add_finding(s, GQ_STRESS_WARN, 0, "low-load", "two more");
    assert_int_equal(s->nfindings_dropped, 2);
    assert_int_equal(s->verdict, GQ_STRESS_WARN);
    gq_stress_add_finding(s, GQ_STRESS_FAIL, 0, "gpu-lost", "three more");
    assert_int_equal(s->verdict, GQ_STRESS_FAIL);
    gq_stress_add_finding(s, GQ_STRESS_WARN, 0, "low-load", "four more");
    assert_int_equal(s->verdict, GQ_STRESS_FAIL);
    assert_int_equal(s->nfindings_dropped, 4);
    assert_int_equal(s->nfindings, GQ_STRESS_MAX_FINDINGS);
    assert_string_equal(s->findings[GQ_STRESS_MAX_FINDINGS - 1].text, "finding 255");
    free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(missing_hooks_refused),
        cmocka_unit_test(gpu_out_of_range_refused),
        cmocka_unit_test(start_failure_fails_that_gpu),
        cmocka_unit_test(poll_failure_fails_that_gpu),
        cmocka_unit_test(stop_failure_fails_that_gpu),
        cmocka_unit_test(sample_failures),
        cmocka_unit_test(transfer_failures),
        cmocka_unit_test(opts_limits_and_findings_cap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
