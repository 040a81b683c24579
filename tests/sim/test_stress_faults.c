/* Stress through the simulated backend: a clean node passes (power capping is
 * information, not a fault), and each injected fault (--sim-fault) gives its
 * verdict on its own GPU only, while the other GPUs keep running. Also: the
 * run is in virtual time, Ctrl-C stops every GPU and keeps the summary, and
 * a bad fault spec is refused. These are behaviour tests of the simulated
 * stress, not golden checks: test_seed001.c holds seed 001's published
 * stress figures. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>

#include <cmocka.h>

#include "analysis/stress.h"
#include "exec/stress_run.h"
#include "backend/backend.h"
#include "backend/sim/sim.h"
#include "backend/sim/sim_stress.h"
#include "core/interrupt.h"
#include "core/units.h"
#include "../test_util.h"

typedef struct run {
    gq_backend be;
    gq_topo *topo;
    gq_stress_result *r;
    gq_stress_summary *s;
    int rc;
} run;

/* Open the sim on `machine` with `faults`, stress all GPUs for `duration`
 * virtual seconds, summarise. */
static run *stress(const char *machine, const char *faults, double duration, gq_stress_opts *extra)
{
    run *x = calloc(1, sizeof *x);
    assert_non_null(x);
    x->topo = calloc(1, sizeof *x->topo);
    x->r = calloc(1, sizeof *x->r);
    x->s = calloc(1, sizeof *x->s);
    assert_non_null(x->topo);
    assert_non_null(x->r);
    assert_non_null(x->s);
    gq_backend_register_builtin();
    gq_backend_opts bo;
    gq_sim_opts(&bo, machine, 1, -1, faults);
    gq_err e = {0};
    int rc = gq_backend_open(&x->be, "sim", &bo, &e);
    if (rc)
        fail_msg("open sim %s: %s", machine, e.msg);
    gq_topo_init(x->topo);
    assert_int_equal(x->be.ops->discover(&x->be, x->topo, &e), GQ_OK);
    gq_stress_opts o;
    if (extra)
        o = *extra;
    else {
        gq_stress_opts_default(&o);
        o.ngpus = x->topo->ngpu;
        for (int i = 0; i < o.ngpus; i++)
            o.gpus[i] = i;
    }
    o.duration_s = duration;
    x->rc = gq_stress_run(&x->be, x->topo, &o, x->r, &e);
    gq_stress_summarize(x->r, NULL, x->s);
    return x;
}

static void done(run *x)
{
    gq_backend_close(&x->be);
    gq_stress_result_free(x->r);
    free(x->r);
    free(x->s);
    free(x->topo);
    free(x);
}

static const gq_stress_finding *finding(const gq_stress_summary *s, const char *rule, int gpu)
{
    for (int i = 0; i < s->nfindings; i++)
        if (!strcmp(s->findings[i].rule, rule) && s->findings[i].gpu == gpu)
            return &s->findings[i];
    return NULL;
}

/* Every GPU but `bad` passes; `bad` fails with `rule`. */
static void only_gpu_fails(const run *x, int bad, const char *rule)
{
    assert_int_equal(x->rc, GQ_OK);
    assert_int_equal(x->s->verdict, GQ_STRESS_FAIL);
    /* every GPU of the machine was judged, the bad one among them */
    assert_true(x->s->ngpu > 1);
    bool seen_bad = false;
    for (int k = 0; k < x->s->ngpu; k++)
        seen_bad |= x->s->gpu[k].gpu == bad;
    if (!seen_bad)
        fail_msg("GPU %d is not among the %d GPUs judged", bad, x->s->ngpu);
    for (int k = 0; k < x->s->ngpu; k++) {
        if (x->s->gpu[k].gpu == bad) {
            assert_int_equal(x->s->gpu[k].verdict, GQ_STRESS_FAIL);
            const gq_stress_finding *f = finding(x->s, rule, bad);
            if (!f)
                fail_msg("GPU %d has no '%s' finding", bad, rule);
            assert_int_equal(f->level, GQ_STRESS_FAIL);
        } else {
            if (x->s->gpu[k].verdict != GQ_STRESS_PASS)
                fail_msg("GPU %d: verdict %s, expected pass", x->s->gpu[k].gpu,
                         gq_stress_level_name(x->s->gpu[k].verdict));
            /* ... and it kept running to the end. */
            assert_true(x->s->gpu[k].gemms > 0);
            assert_true(x->r->gpu[k].pts[x->r->gpu[k].npoints - 1].loaded);
        }
    }
}

static void clean_node_passes_with_power_cap_as_info(void **state)
{
    (void)state;
    double w0 = gq_now_mono();
    run *x = stress("rtx4090x8", NULL, 300, NULL);
    double wall = gq_now_mono() - w0;
    assert_int_equal(x->rc, GQ_OK);
    assert_int_equal(x->s->ngpu, 8);
    assert_int_equal(x->s->verdict, GQ_STRESS_PASS);
    /* Virtual time: 5 minutes of samples, in well under a second. */
    assert_true(wall < 1.0);
    assert_near(x->r->elapsed_s, 300, 1e-6);
    for (int k = 0; k < 8; k++) {
        const gq_stress_gpu_summary *g = &x->s->gpu[k];
        assert_int_equal(x->r->gpu[k].npoints, 301);
        assert_int_equal(g->verdict, GQ_STRESS_PASS);
        assert_false(g->thermal_slowdown);
        assert_false(g->link_down);
        assert_int_equal(g->faulty, 0);
        /* Held at the limit: capped in (nearly) every loaded sample, power
         * within 2% of the limit, temperature settled well below throttling. */
        assert_true(g->power_capped_pct > 95);
        assert_true(g->power_avg_w > 0.97 * g->power_limit_w && g->power_avg_w <= g->power_limit_w);
        assert_true(g->temp_max_c > 55 && g->temp_max_c < 80);
        assert_true(g->tflops_avg > 0);
        const gq_stress_finding *f = finding(x->s, "power-cap", g->gpu);
        assert_non_null(f);
        assert_int_equal(f->level, GQ_STRESS_INFO);
    }
    /* Seed-like spread: small, below the 5% warning. */
    assert_true(isfinite(x->s->clock_spread));
    assert_true(x->s->clock_spread < 0.05);
    done(x);
}

static void thermal_fault_fails_its_gpu(void **state)
{
    (void)state;
    run *x = stress("rtx4090x8", "gpu3:thermal", 120, NULL);
    only_gpu_fails(x, 3, "thermal-slowdown");
    assert_true(x->s->gpu[3].thermal_slowdown);
    assert_true(x->s->gpu[3].temp_max_c >= 85);
    assert_true(x->s->gpu[3].thermal_pct > 0);
    done(x);
}

static void ecc_fault_fails_its_gpu(void **state)
{
    (void)state;
    run *x = stress("rtx4090x8", "gpu1:ecc", 60, NULL);
    only_gpu_fails(x, 1, "ecc-uncorrected");
    assert_true(x->s->gpu[1].ecc_uncorrected >= 1);
    assert_int_equal(x->s->gpu[0].ecc_uncorrected, 0);
    done(x);
}

static void faulty_result_fault_fails_its_gpu(void **state)
{
    (void)state;
    run *x = stress("rtx4090x8", "gpu2:faulty-result", 60, NULL);
    only_gpu_fails(x, 2, "faulty-result");
    assert_true(x->s->gpu[2].faulty > 0);
    done(x);
}

static void link_fault_fails_its_gpu(void **state)
{
    (void)state;
    run *x = stress("rtx4090x8", "gpu0:link-x8", 60, NULL);
    only_gpu_fails(x, 0, "link-down");
    assert_int_equal(x->s->gpu[0].pcie_width_min, 8);
    assert_true(x->s->gpu[0].pcie_width_max > 8);
    /* Idle before the load it was at full width: the baseline. */
    assert_int_equal(x->r->gpu[0].baseline.pcie_width, x->s->gpu[0].pcie_width_max);
    done(x);
}

static void lost_gpu_fails_others_continue(void **state)
{
    (void)state;
    run *x = stress("rtx4090x8", "gpu4:lost", 60, NULL);
    only_gpu_fails(x, 4, "gpu-lost");
    assert_true(x->s->gpu[4].lost);
    assert_true(x->r->gpu[4].lost_t >= 10 && x->r->gpu[4].lost_t < 12);
    done(x);
}

static void several_faults_at_once(void **state)
{
    (void)state;
    run *x = stress("rtx4090x8", "gpu3:thermal,gpu1:ecc,gpu2:faulty-result,gpu0:link-x8", 120, NULL);
    assert_int_equal(x->s->verdict, GQ_STRESS_FAIL);
    assert_non_null(finding(x->s, "thermal-slowdown", 3));
    assert_non_null(finding(x->s, "ecc-uncorrected", 1));
    assert_non_null(finding(x->s, "faulty-result", 2));
    assert_non_null(finding(x->s, "link-down", 0));
    for (int k = 4; k < 8; k++)
        assert_int_equal(x->s->gpu[k].verdict, GQ_STRESS_PASS);
    done(x);
}

static void unselected_faulty_gpu_is_not_judged(void **state)
{
    (void)state;
    gq_stress_opts o;
    gq_stress_opts_default(&o);
    o.ngpus = 2;
    o.gpus[0] = 0;
    o.gpus[1] = 1;
    run *x = stress("rtx4090x8", "gpu3:thermal", 120, &o);
    assert_int_equal(x->s->ngpu, 2);
    assert_int_equal(x->s->verdict, GQ_STRESS_PASS);
    done(x);
}

static void precisions_all_run(void **state)
{
    (void)state;
    double tf[4];
    for (int p = GQ_PREC_BF16; p <= GQ_PREC_FP64; p++) {
        gq_stress_opts o;
        gq_stress_opts_default(&o);
        o.ngpus = 1;
        o.precision = (gq_precision)p;
        run *x = stress("h200x2", NULL, 30, &o);
        assert_int_equal(x->rc, GQ_OK);
        assert_true(x->s->gpu[0].gemms > 2);
        tf[p] = x->s->gpu[0].tflops_avg;
        assert_true(tf[p] > 0);
        done(x);
    }
    /* Tensor-core types far above FP32. */
    assert_true(tf[GQ_PREC_BF16] > 5 * tf[GQ_PREC_FP32]);
}

static void stop_at(void *arg, const gq_stress_result *r, double elapsed)
{
    (void)r;
    if (elapsed >= *(double *)arg)
        gq_interrupt_request();
}

static void interrupt_stops_all_and_keeps_summary(void **state)
{
    (void)state;
    double at = 30;
    gq_stress_opts o;
    gq_stress_opts_default(&o);
    o.ngpus = 4;
    for (int i = 0; i < 4; i++)
        o.gpus[i] = i;
    o.progress = stop_at;
    o.progress_arg = &at;
    gq_interrupt_clear();
    run *x = stress("rtx4090x8", "gpu2:faulty-result", 300, &o);
    gq_interrupt_clear();
    assert_int_equal(x->rc, GQ_E_INTR);
    assert_true(x->r->interrupted);
    assert_near(x->r->elapsed_s, 30, 1e-6);
    assert_int_equal(x->r->gpu[0].npoints, 31);
    /* Judged on what ran: the fault seen before the interrupt still fails. */
    assert_int_equal(x->s->verdict, GQ_STRESS_FAIL);
    assert_non_null(finding(x->s, "interrupted", -1));
    /* Every load was stopped: starting again works. */
    gq_err e = {0};
    for (int i = 0; i < 4; i++) {
        assert_int_equal(x->be.ops->stress_start(&x->be, i, GQ_PREC_BF16, &e), GQ_OK);
        assert_int_equal(x->be.ops->stress_stop(&x->be, i, &e), GQ_OK);
    }
    done(x);
}

/* The tick hook (stress --journal writes its samples there): a failure at
 * t = 12 s stops every load at once and is returned; what ran is kept. */
static int fail_at(void *arg, const gq_stress_result *r, gq_err *err)
{
    int *ticks = arg;
    if (++*ticks == 13)
        return gq_err_set(err, GQ_E_FAIL, "cannot write journal 'j': No space left on device");
    assert_int_equal(r->gpu[0].npoints, *ticks);
    return GQ_OK;
}

static void tick_hook_failure_stops_all(void **state)
{
    (void)state;
    int ticks = 0;
    gq_stress_opts o;
    gq_stress_opts_default(&o);
    o.ngpus = 3;
    for (int i = 0; i < 3; i++)
        o.gpus[i] = i;
    o.on_tick = fail_at;
    o.tick_arg = &ticks;
    run *x = stress("rtx4090x8", NULL, 300, &o);
    assert_int_equal(x->rc, GQ_E_FAIL);
    assert_int_equal(ticks, 13);
    assert_near(x->r->elapsed_s, 12, 1e-6);
    assert_int_equal(x->r->gpu[2].npoints, 13);
    assert_false(x->r->interrupted);
    /* Every load was stopped: starting again works. */
    gq_err e = {0};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(x->be.ops->stress_start(&x->be, i, GQ_PREC_BF16, &e), GQ_OK);
        assert_int_equal(x->be.ops->stress_stop(&x->be, i, &e), GQ_OK);
    }
    done(x);
}

static void with_transfers_reports_rates(void **state)
{
    (void)state;
    gq_stress_opts o;
    gq_stress_opts_default(&o);
    o.ngpus = 2;
    o.gpus[0] = 0;
    o.gpus[1] = 1;
    o.with_transfers = true;
    run *x = stress("h200x2", NULL, 20, &o);
    assert_int_equal(x->rc, GQ_OK);
    for (int k = 0; k < 2; k++) {
        assert_true(x->s->gpu[k].xfer_gbps[0] > 1);
        assert_true(x->s->gpu[k].xfer_gbps[1] > 1);
    }
    assert_int_equal(x->s->verdict, GQ_STRESS_PASS);
    done(x);
}

/* The wall-clock path (what the CUDA backend takes): the sim's hooks behind
 * ops without virtual time, so the runner sleeps for real between samples
 * and runs the transfers on their own thread. */
static void real_time_path(void **state)
{
    (void)state;
    gq_backend_register_builtin();
    gq_backend be;
    gq_backend_opts bo;
    gq_sim_opts(&bo, "h200x2", 1, -1, NULL);
    gq_err e = {0};
    assert_int_equal(gq_backend_open(&be, "sim", &bo, &e), GQ_OK);
    gq_topo *t = calloc(1, sizeof *t);
    assert_non_null(t);
    gq_topo_init(t);
    assert_int_equal(be.ops->discover(&be, t, &e), GQ_OK);
    gq_backend_ops wall = *be.ops;
    wall.flags = GQ_BE_SIMULATED;
    wall.now = NULL;
    wall.wait = NULL;
    const gq_backend_ops *orig = be.ops;
    be.ops = &wall;

    gq_stress_opts o;
    gq_stress_opts_default(&o);
    o.ngpus = 2;
    o.gpus[0] = 0;
    o.gpus[1] = 1;
    o.duration_s = 1.5;
    o.interval_s = 0.5;
    o.with_transfers = true;
    gq_stress_result *r = calloc(1, sizeof *r);
    assert_non_null(r);
    double w0 = gq_now_mono();
    assert_int_equal(gq_stress_run(&be, t, &o, r, &e), GQ_OK);
    double wall_s = gq_now_mono() - w0;
    assert_true(wall_s >= 1.45 && wall_s < 3.0);
    for (int k = 0; k < 2; k++) {
        assert_int_equal(r->gpu[k].npoints, 4);
        assert_near(r->gpu[k].pts[3].t, 1.5, 0.2);
        assert_true(r->gpu[k].xfer_s[0] > 0 && r->gpu[k].xfer_s[1] > 0);
    }
    gq_stress_result_free(r);

    /* Ctrl-C half-way: the run ends within one sampling slice. */
    double at = 0.5;
    o.duration_s = 30;
    o.progress = stop_at;
    o.progress_arg = &at;
    gq_interrupt_clear();
    w0 = gq_now_mono();
    assert_int_equal(gq_stress_run(&be, t, &o, r, &e), GQ_E_INTR);
    gq_interrupt_clear();
    assert_true(gq_now_mono() - w0 < 2.5);
    assert_true(r->interrupted);
    gq_stress_result_free(r);
    free(r);
    be.ops = orig;
    gq_backend_close(&be);
    free(t);
}

static void bad_fault_specs_refused(void **state)
{
    (void)state;
    gq_sim_faults f;
    gq_err e = {0};
    assert_int_equal(gq_sim_faults_parse("gpu3:thermal,gpu1:ecc,gpu2:faulty-result,gpu0:link-x8", 8, &f, &e),
                     GQ_OK);
    assert_int_equal(f.gpu[3], GQ_SIM_FAULT_THERMAL);
    assert_int_equal(f.gpu[1], GQ_SIM_FAULT_ECC);
    assert_int_equal(f.gpu[2], GQ_SIM_FAULT_FAULTY);
    assert_int_equal(f.gpu[0], GQ_SIM_FAULT_LINK_X8);
    assert_int_equal(f.gpu[4], 0);
    static const char *const bad[] = {"gpu3:melt", "gpu:ecc",   "3:ecc",     "gpu3",    "gpu-1:ecc",
                                      "gpu1:ecc,", ",gpu1:ecc", "gpu1x:ecc", "GPU1:ecc"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        memset(&e, 0, sizeof e);
        if (gq_sim_faults_parse(bad[i], 8, &f, &e) != GQ_E_USAGE)
            fail_msg("'%s' was accepted", bad[i]);
        assert_null(strchr(e.msg, '\n'));
        assert_non_null(strstr(e.msg, "gpuN:thermal"));
    }
    /* A GPU the machine does not have. */
    assert_int_equal(gq_sim_faults_parse("gpu9:ecc", 8, &f, &e), GQ_E_USAGE);
    assert_non_null(strstr(e.msg, "GPU 9 does not exist"));
    assert_int_equal(gq_sim_faults_parse("gpu9:ecc", 0, &f, &e), GQ_OK); /* machine not known yet */
    /* Through the backend: refused when it is opened. */
    gq_backend_register_builtin();
    gq_backend be;
    gq_backend_opts bo;
    gq_sim_opts(&bo, "rtx4090x8", 1, -1, "gpu3:melt");
    memset(&e, 0, sizeof e);
    assert_int_equal(gq_backend_open(&be, "sim", &bo, &e), GQ_E_USAGE);
    assert_non_null(strstr(e.msg, "gpu3:melt"));
}

/* A GPU's time series keeps its counters after its load stops: GEMMs and
 * faulty elements never go back, and every sample after the GPU fell off
 * the bus holds the counts it had reached (here gpu2 both gives faulty
 * results and is lost at 10 s, so its count is not 0 when it stops). */
static void counters_hold_after_the_load_stops(void **state)
{
    (void)state;
    run *x = stress("rtx4090x8", "gpu2:faulty-result,gpu2:lost", 30, NULL);
    assert_int_equal(x->rc, GQ_OK);
    const gq_stress_gpu *g = &x->r->gpu[2];
    assert_true(g->status != GQ_OK);
    assert_true(g->faulty > 0);
    assert_true(g->gemms > 0);
    int after = 0;
    for (int i = 0; i < g->npoints; i++) {
        const gq_stress_point *p = &g->pts[i];
        if (i > 0) {
            assert_true(p->gemms >= g->pts[i - 1].gemms);
            assert_true(p->faulty >= g->pts[i - 1].faulty);
        }
        if (p->t >= g->lost_t) {
            after++;
            if (p->gemms != g->gemms || p->faulty != g->faulty)
                fail_msg("t = %.1f s, after the load stopped: %llu GEMMs and %llu faulty, want %llu and %llu",
                         p->t, (unsigned long long)p->gemms, (unsigned long long)p->faulty,
                         (unsigned long long)g->gemms, (unsigned long long)g->faulty);
        }
    }
    assert_true(after >= 15); /* lost at 10-12 s of 30 */
    /* the others ran to the end, their last sample holding their final counts */
    const gq_stress_gpu *o = &x->r->gpu[0];
    assert_int_equal(o->status, GQ_OK);
    assert_int_equal(o->pts[o->npoints - 1].faulty, 0);
    assert_true(o->pts[o->npoints - 1].gemms > 0);
    done(x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(clean_node_passes_with_power_cap_as_info),
        cmocka_unit_test(thermal_fault_fails_its_gpu),
        cmocka_unit_test(ecc_fault_fails_its_gpu),
        cmocka_unit_test(faulty_result_fault_fails_its_gpu),
        cmocka_unit_test(link_fault_fails_its_gpu),
        cmocka_unit_test(lost_gpu_fails_others_continue),
        cmocka_unit_test(counters_hold_after_the_load_stops),
        cmocka_unit_test(several_faults_at_once),
        cmocka_unit_test(unselected_faulty_gpu_is_not_judged),
        cmocka_unit_test(precisions_all_run),
        cmocka_unit_test(interrupt_stops_all_and_keeps_summary),
        cmocka_unit_test(tick_hook_failure_stops_all),
        cmocka_unit_test(with_transfers_reports_rates),
        cmocka_unit_test(real_time_path),
        cmocka_unit_test(bad_fault_specs_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
