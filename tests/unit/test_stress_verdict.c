/* Stress verdict rules (docs/method-stress.md) on crafted sample series: every
 * rule, its boundaries, and what must NOT trip it (power capping alone, idle
 * link downshift, errors that were there before the run). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "analysis/card.h"
#include "analysis/stress.h"
#include "doc/card_codec.h"
#include "render/analysis_render.h"
#include "../test_util.h"

/* A GPU loaded for n samples at 1 Hz: temperature, power and clock steady,
 * the given reasons on every sample, PCIe Gen5 x16, clean counters. */
static void make_gpu(gq_stress_result *r, int k, const char *name, int n, double temp, double power,
                     double clock, uint64_t reasons)
{
    gq_stress_gpu *g = &r->gpu[k];
    g->gpu = k;
    snprintf(g->name, sizeof g->name, "%s", name);
    g->power_limit_w = 600;
    g->pcie_gen_max = 5;
    g->pcie_width_max = 16;
    g->started = true;
    g->status = GQ_OK;
    g->lost_t = -1;
    gq_stress_sample_unknown(&g->baseline);
    g->has_baseline = true;
    g->baseline.temp_c = 35;
    g->baseline.power_w = 60;
    g->baseline.util_pct = 0;
    g->baseline.clock_reasons = GQ_CLK_GPU_IDLE;
    g->baseline.pcie_gen = 1; /* idle links slow down: never a finding */
    g->baseline.pcie_width = 16;
    g->baseline.pcie_replay = 10;
    g->baseline.ecc_corrected = 0;
    g->baseline.ecc_uncorrected = 0;
    g->baseline.remapped_rows = 0;
    for (int i = 0; i < n; i++) {
        gq_stress_point p;
        memset(&p, 0, sizeof p);
        p.t = i;
        p.loaded = true;
        p.has_sample = true;
        p.s = g->baseline;
        p.s.temp_c = temp;
        p.s.mem_temp_c = temp + 8;
        p.s.power_w = power;
        p.s.power_limit_w = 600;
        p.s.sm_clock_mhz = clock;
        p.s.mem_clock_mhz = 14001;
        p.s.util_pct = 100;
        p.s.clock_reasons = reasons;
        p.s.pcie_gen = 5;
        p.gemms = (uint64_t)(i + 1) * 50;
        p.tflops = 400;
        assert_int_equal(gq_stress_point_push(g, &p), GQ_OK);
    }
    g->gemms = (uint64_t)n * 50;
    if (k >= r->ngpu)
        r->ngpu = k + 1;
}

static gq_stress_result *new_result(void)
{
    gq_stress_result *r = calloc(1, sizeof *r);
    assert_non_null(r);
    r->duration_s = 300;
    r->interval_s = 1;
    r->elapsed_s = 300;
    return r;
}

static gq_stress_summary *judge(const gq_stress_result *r, const gq_stress_rules *rules)
{
    gq_stress_summary *s = calloc(1, sizeof *s);
    assert_non_null(s);
    gq_stress_summarize(r, rules, s);
    return s;
}

static const gq_stress_finding *find_rule(const gq_stress_summary *s, const char *rule)
{
    for (int i = 0; i < s->nfindings; i++)
        if (!strcmp(s->findings[i].rule, rule))
            return &s->findings[i];
    return NULL;
}

static void done(gq_stress_result *r, gq_stress_summary *s)
{
    gq_stress_result_free(r);
    free(r);
    free(s);
}

/* Seed 001 §7: eight GPUs near 600 W, power-capped in nearly every sample,
 * 66-68 C, clocks within 1.9%: pass, with power capping as information. */
static void seed001_clean_node_passes(void **state)
{
    (void)state;
    gq_stress_result *r = new_result();
    static const double clocks[8] = {2208, 2215, 2230, 2249, 2221, 2240, 2212, 2233};
    for (int k = 0; k < 8; k++)
        make_gpu(r, k, "NVIDIA RTX PRO 6000 Blackwell Server Edition", 300, 66.5 + 0.2 * k, 595, clocks[k],
                 GQ_CLK_SW_POWER_CAP);
    gq_stress_summary *s = judge(r, NULL);
    assert_int_equal(s->verdict, GQ_STRESS_PASS);
    for (int k = 0; k < 8; k++) {
        assert_int_equal(s->gpu[k].verdict, GQ_STRESS_PASS);
        assert_false(s->gpu[k].thermal_slowdown);
        assert_near(s->gpu[k].power_capped_pct, 100, 1e-9);
    }
    const gq_stress_finding *f = find_rule(s, "power-cap");
    assert_non_null(f);
    assert_int_equal(f->level, GQ_STRESS_INFO);
    assert_null(find_rule(s, "thermal-slowdown"));
    assert_null(find_rule(s, "clock-spread"));
    assert_near(s->clock_spread, (2249.0 - 2208.0) / 2208.0, 1e-9); /* ~1.9% */
    assert_near(s->power_total_avg_w, 8 * 595, 1e-6);
    done(r, s);
}

static void averages_use_loaded_samples_only(void **state)
{
    (void)state;
    gq_stress_result *r = new_result();
    make_gpu(r, 0, "G", 10, 60, 500, 2000, GQ_CLK_SW_POWER_CAP);
    /* Ramp-up samples below the utilisation threshold: counted for the
     * maximum temperature but not in the averages. */
    gq_stress_gpu *g = &r->gpu[0];
    for (int i = 0; i < 2; i++) {
        g->pts[i].s.util_pct = 40;
        g->pts[i].s.temp_c = 75;
        g->pts[i].s.power_w = 100;
        g->pts[i].s.clock_reasons = 0;
    }
    g->pts[5].s.temp_c = 70;
    gq_stress_summary *s = judge(r, NULL);
    const gq_stress_gpu_summary *S = &s->gpu[0];
    assert_int_equal(S->nsamples, 10);
    assert_int_equal(S->nloaded, 8);
    assert_near(S->temp_avg_c, (7 * 60 + 70) / 8.0, 1e-9);
    assert_near(S->temp_max_c, 75, 1e-9);
    assert_near(S->power_avg_w, 500, 1e-9);
    assert_near(S->sm_clock_avg_mhz, 2000, 1e-9);
    assert_near(S->power_capped_pct, 100, 1e-9);
    assert_near(S->mem_temp_max_c, 68, 1e-9);
    assert_near(S->tflops_avg, 400, 1e-9);
    assert_int_equal(S->pcie_gen_min, 5);
    assert_int_equal(S->pcie_width_min, 16);
    assert_int_equal(s->verdict, GQ_STRESS_PASS);
    /* One GPU: no spread. */
    assert_true(isnan(s->clock_spread));
    done(r, s);
}

static void power_cap_alone_is_info(void **state)
{
    (void)state;
    gq_stress_result *r = new_result();
    make_gpu(r, 0, "G", 60, 70, 599, 1900, GQ_CLK_SW_POWER_CAP);
    gq_stress_summary *s = judge(r, NULL);
    assert_int_equal(s->verdict, GQ_STRESS_PASS);
    assert_int_equal(s->gpu[0].verdict, GQ_STRESS_PASS);
    /* power capping, and (one GPU) that nothing compares it with a peer: both info */
    assert_int_equal(s->nfindings, 2);
    assert_int_equal(s->findings[0].level, GQ_STRESS_INFO);
    assert_string_equal(s->findings[0].rule, "power-cap");
    assert_int_equal(s->findings[1].level, GQ_STRESS_INFO);
    assert_string_equal(s->findings[1].rule, "no-peers");
    done(r, s);
}

static void each_thermal_reason_fails(void **state)
{
    (void)state;
    static const uint64_t bits[] = {GQ_CLK_SW_THERMAL, GQ_CLK_HW_THERMAL, GQ_CLK_HW_SLOWDOWN,
                                    GQ_CLK_HW_POWER_BRAKE};
    for (size_t b = 0; b < sizeof bits / sizeof bits[0]; b++) {
        gq_stress_result *r = new_result();
        make_gpu(r, 0, "G", 100, 70, 590, 1900, GQ_CLK_SW_POWER_CAP);
        make_gpu(r, 1, "G", 100, 70, 590, 1900, GQ_CLK_SW_POWER_CAP);
        /* One sample of 100 is enough. */
        r->gpu[1].pts[50].s.clock_reasons |= bits[b];
        gq_stress_summary *s = judge(r, NULL);
        assert_int_equal(s->verdict, GQ_STRESS_FAIL);
        assert_int_equal(s->gpu[0].verdict, GQ_STRESS_PASS);
        assert_int_equal(s->gpu[1].verdict, GQ_STRESS_FAIL);
        const gq_stress_finding *f = find_rule(s, "thermal-slowdown");
        assert_non_null(f);
        assert_int_equal(f->gpu, 1);
        assert_near(s->gpu[1].thermal_pct, 1, 1e-9);
        assert_int_equal(s->gpu[1].thermal_slowdown,
                         (bits[b] & (GQ_CLK_SW_THERMAL | GQ_CLK_HW_THERMAL)) != 0);
        assert_int_equal(s->gpu[1].hw_slowdown, bits[b] == GQ_CLK_HW_SLOWDOWN);
        assert_int_equal(s->gpu[1].power_brake, bits[b] == GQ_CLK_HW_POWER_BRAKE);
        done(r, s);
    }
}

/* Each reason the GPU slows itself down for reaches the card: the stress
 * section as gq_stress_to_json writes it, read back by the card's facts
 * (gq_card_facts_from_json), marks that GPU slowed down and no other, also a
 * GPU whose only reason is the hardware power brake. */
static void slowdown_reasons_reach_the_card(void **state)
{
    (void)state;
    static const uint64_t bits[] = {GQ_CLK_SW_THERMAL, GQ_CLK_HW_THERMAL, GQ_CLK_HW_SLOWDOWN,
                                    GQ_CLK_HW_POWER_BRAKE};
    json_t *card = json_pack("{s:{s:[{s:i,s:s},{s:i,s:s}]}}", "identity", "gpus", "index", 0, "name", "G",
                             "index", 1, "name", "G");
    assert_non_null(card);
    for (size_t b = 0; b < sizeof bits / sizeof bits[0]; b++) {
        gq_stress_result *r = new_result();
        make_gpu(r, 0, "G", 20, 70, 590, 1900, GQ_CLK_SW_POWER_CAP);
        make_gpu(r, 1, "G", 20, 70, 590, 1900, GQ_CLK_SW_POWER_CAP);
        r->gpu[1].pts[10].s.clock_reasons |= bits[b];
        gq_stress_summary *s = judge(r, NULL);
        json_t *j = gq_stress_to_json(r, s);
        assert_non_null(j);
        gq_card_facts *f = calloc(1, sizeof *f);
        assert_non_null(f);
        gq_card_facts_from_json(card, j, NULL, f);
        assert_true(f->stress_ran);
        if (!f->gpu[1].thermal_slowdown)
            fail_msg("clock reason 0x%llx: the card does not see GPU 1 slowed down",
                     (unsigned long long)bits[b]);
        assert_false(f->gpu[0].thermal_slowdown);
        assert_int_equal(f->gpu[1].stress_verdict, GQ_V_FAIL);
        free(f);
        json_decref(j);
        done(r, s);
    }
    json_decref(card);
}

/* Reasons that are not the GPU protecting itself never fail. */
static void benign_reasons_pass(void **state)
{
    (void)state;
    gq_stress_result *r = new_result();
    make_gpu(r, 0, "G", 30, 70, 590, 1900,
             GQ_CLK_SW_POWER_CAP | GQ_CLK_APP_CLOCKS | GQ_CLK_SYNC_BOOST | GQ_CLK_DISPLAY_CLOCKS);
    gq_stress_summary *s = judge(r, NULL);
    assert_int_equal(s->verdict, GQ_STRESS_PASS);
    done(r, s);
}

static void faulty_elements_fail(void **state)
{
    (void)state;
    gq_stress_result *r = new_result();
    make_gpu(r, 0, "G", 30, 70, 590, 1900, 0);
    make_gpu(r, 1, "G", 30, 70, 590, 1900, 0);
    r->gpu[1].faulty = 1;
    gq_stress_summary *s = judge(r, NULL);
    assert_int_equal(s->verdict, GQ_STRESS_FAIL);
    assert_int_equal(s->gpu[0].verdict, GQ_STRESS_PASS);
    assert_int_equal(s->gpu[1].verdict, GQ_STRESS_FAIL);
    assert_non_null(find_rule(s, "faulty-result"));
    done(r, s);
}

static void ecc_uncorrected_delta_fails_but_old_errors_do_not(void **state)
{
    (void)state;
    gq_stress_result *r = new_result();
    make_gpu(r, 0, "G", 30, 70, 590, 1900, 0);
    make_gpu(r, 1, "G", 30, 70, 590, 1900, 0);
    /* GPU 0 had 3 uncorrected errors before the run and none during it. */
    r->gpu[0].baseline.ecc_uncorrected = 3;
    for (int i = 0; i < 30; i++)
        r->gpu[0].pts[i].s.ecc_uncorrected = 3;
    /* GPU 1 gets one during the run. */
    for (int i = 20; i < 30; i++)
        r->gpu[1].pts[i].s.ecc_uncorrected = 1;
    gq_stress_summary *s = judge(r, NULL);
    assert_int_equal(s->gpu[0].ecc_uncorrected, 0);
    assert_int_equal(s->gpu[0].verdict, GQ_STRESS_PASS);
    assert_int_equal(s->gpu[1].ecc_uncorrected, 1);
    assert_int_equal(s->gpu[1].verdict, GQ_STRESS_FAIL);
    assert_non_null(find_rule(s, "ecc-uncorrected"));
    assert_int_equal(s->verdict, GQ_STRESS_FAIL);
    done(r, s);
}

static void soft_errors_warn(void **state)
{
    (void)state;
    gq_stress_result *r = new_result();
    make_gpu(r, 0, "G", 30, 70, 590, 1900, 0);
    make_gpu(r, 1, "G", 30, 70, 590, 1900, 0);
    make_gpu(r, 2, "G", 30, 70, 590, 1900, 0);
    r->gpu[0].pts[29].s.ecc_corrected = 4;
    r->gpu[1].pts[29].s.pcie_replay = 17; /* baseline 10 */
    r->gpu[2].pts[29].s.remapped_rows = 1;
    gq_stress_summary *s = judge(r, NULL);
    assert_int_equal(s->gpu[0].ecc_corrected, 4);
    assert_int_equal(s->gpu[1].pcie_replay, 7);
    assert_int_equal(s->gpu[2].remapped_delta, 1);
    for (int k = 0; k < 3; k++)
        assert_int_equal(s->gpu[k].verdict, GQ_STRESS_WARN);
    assert_non_null(find_rule(s, "ecc-corrected"));
    assert_non_null(find_rule(s, "pcie-replay"));
    assert_non_null(find_rule(s, "remapped-rows"));
    assert_int_equal(s->verdict, GQ_STRESS_WARN);
    done(r, s);
}

static void unknown_counters_are_not_errors(void **state)
{
    (void)state;
    gq_stress_result *r = new_result();
    make_gpu(r, 0, "G", 30, 70, 590, 1900, GQ_STRESS_U64_UNKNOWN);
    gq_stress_gpu *g = &r->gpu[0];
    g->has_baseline = false;
    for (int i = 0; i < 30; i++) {
        g->pts[i].s.ecc_corrected = g->pts[i].s.ecc_uncorrected = g->pts[i].s.pcie_replay =
            GQ_STRESS_U64_UNKNOWN;
        g->pts[i].s.remapped_rows = -1;
    }
    gq_stress_summary *s = judge(r, NULL);
    assert_int_equal(s->gpu[0].ecc_uncorrected, -1);
    assert_int_equal(s->gpu[0].pcie_replay, -1);
    assert_int_equal(s->gpu[0].remapped_delta, -1);
    assert_true(isnan(s->gpu[0].power_capped_pct));
    assert_int_equal(s->verdict, GQ_STRESS_PASS);
    assert_int_equal(s->nfindings, 1); /* only "no-peers": one GPU */
    assert_string_equal(s->findings[0].rule, "no-peers");
    done(r, s);
}

static void link_trained_down_under_load_fails(void **state)
{
    (void)state;
    gq_stress_result *r = new_result();
    make_gpu(r, 0, "G", 30, 70, 590, 1900, 0);
    make_gpu(r, 1, "G", 30, 70, 590, 1900, 0);
    make_gpu(r, 2, "G", 30, 70, 590, 1900, 0);
    /* GPU 0: x8 while loaded. */
    for (int i = 10; i < 30; i++)
        r->gpu[0].pts[i].s.pcie_width = 8;
    /* GPU 1: Gen4 while loaded. */
    r->gpu[1].pts[15].s.pcie_gen = 4;
    /* GPU 2: Gen1 only while its utilisation was low (ramp): not a finding. */
    r->gpu[2].pts[0].s.pcie_gen = 1;
    r->gpu[2].pts[0].s.util_pct = 5;
    gq_stress_summary *s = judge(r, NULL);
    assert_true(s->gpu[0].link_down);
    assert_int_equal(s->gpu[0].pcie_width_min, 8);
    assert_int_equal(s->gpu[0].verdict, GQ_STRESS_FAIL);
    assert_true(s->gpu[1].link_down);
    assert_int_equal(s->gpu[1].pcie_gen_min, 4);
    assert_int_equal(s->gpu[1].verdict, GQ_STRESS_FAIL);
    assert_false(s->gpu[2].link_down);
    assert_int_equal(s->gpu[2].verdict, GQ_STRESS_PASS);
    assert_non_null(find_rule(s, "link-down"));
    done(r, s);
}

/* Without the link's maximum from discovery, the best width seen is the
 * reference: x16 idle then x8 loaded still fails. */
static void link_max_from_observation(void **state)
{
    (void)state;
    gq_stress_result *r = new_result();
    make_gpu(r, 0, "G", 30, 70, 590, 1900, 0);
    r->gpu[0].pcie_gen_max = r->gpu[0].pcie_width_max = -1;
    for (int i = 0; i < 30; i++)
        r->gpu[0].pts[i].s.pcie_width = 8;
    gq_stress_summary *s = judge(r, NULL);
    assert_int_equal(s->gpu[0].pcie_width_max, 16); /* from the baseline */
    assert_true(s->gpu[0].link_down);
    assert_int_equal(s->verdict, GQ_STRESS_FAIL);
    done(r, s);
}

/* The same for the generation, where the samples are faster than the
 * baseline: Gen1 at idle (a link that slows down when idle), Gen5 loaded;
 * the best seen, Gen5, is the maximum, and the link is not down (mutation
 * round 9, stress.c:271). */
static void link_gen_max_from_samples(void **state)
{
    (void)state;
    gq_stress_result *r = new_result();
    make_gpu(r, 0, "G", 30, 70, 590, 1900, 0);
    r->gpu[0].pcie_gen_max = r->gpu[0].pcie_width_max = -1;
    gq_stress_summary *s = judge(r, NULL);
    assert_int_equal(r->gpu[0].baseline.pcie_gen, 1);
    assert_int_equal(s->gpu[0].pcie_gen_max, 5);
    assert_false(s->gpu[0].link_down);
    done(r, s);
}

static void lost_or_errored_gpu_fails_others_pass(void **state)
{
    (void)state;
    gq_stress_result *r = new_result();
    make_gpu(r, 0, "G", 30, 70, 590, 1900, 0);
    make_gpu(r, 1, "G", 10, 70, 590, 1900, 0);
    make_gpu(r, 2, "G", 30, 70, 590, 1900, 0);
    make_gpu(r, 3, "G", 0, 70, 590, 1900, 0);
    r->gpu[1].lost = true;
    r->gpu[1].status = GQ_E_BACKEND;
    r->gpu[1].lost_t = 10;
    snprintf(r->gpu[1].error, sizeof r->gpu[1].error, "fell off the bus");
    r->gpu[2].status = GQ_E_BACKEND;
    r->gpu[2].lost_t = 12;
    snprintf(r->gpu[2].error, sizeof r->gpu[2].error, "CUBLAS_STATUS_EXECUTION_FAILED");
    r->gpu[3].started = false;
    r->gpu[3].status = GQ_E_NOMEM;
    /* a whole error message (gq_err's 512 bytes) reaches the finding uncut: the
     * cuBLAS-missing message, about 300 characters, was cut at 200 on the H200 */
    char msg[sizeof((gq_err *)0)->msg];
    memset(msg, 'x', sizeof msg - 6);
    memcpy(msg + sizeof msg - 6, "-end.", 6);
    snprintf(r->gpu[3].error, sizeof r->gpu[3].error, "%s", msg);
    gq_stress_summary *s = judge(r, NULL);
    bool whole = false;
    for (int i = 0; i < s->nfindings; i++)
        if (s->findings[i].gpu == 3 && strstr(s->findings[i].text, msg))
            whole = true;
    assert_true(whole);
    assert_int_equal(s->gpu[0].verdict, GQ_STRESS_PASS);
    assert_int_equal(s->gpu[1].verdict, GQ_STRESS_FAIL);
    assert_true(s->gpu[1].lost);
    assert_int_equal(s->gpu[2].verdict, GQ_STRESS_FAIL);
    assert_true(s->gpu[2].errored);
    assert_int_equal(s->gpu[3].verdict, GQ_STRESS_FAIL);
    assert_non_null(find_rule(s, "gpu-lost"));
    assert_non_null(find_rule(s, "gpu-error"));
    assert_int_equal(s->verdict, GQ_STRESS_FAIL);
    done(r, s);
}

static void clock_spread_warns_above_threshold(void **state)
{
    (void)state;
    gq_stress_result *r = new_result();
    make_gpu(r, 0, "A", 30, 70, 590, 2000, 0);
    make_gpu(r, 1, "A", 30, 70, 590, 1880, 0); /* 6.4% below */
    make_gpu(r, 2, "B", 30, 70, 590, 1000, 0); /* other model: not compared */
    gq_stress_summary *s = judge(r, NULL);
    assert_near(s->clock_spread, 120.0 / 1880.0, 1e-9);
    assert_string_equal(s->clock_spread_model, "A");
    const gq_stress_finding *f = find_rule(s, "clock-spread");
    assert_non_null(f);
    assert_int_equal(f->level, GQ_STRESS_WARN);
    assert_int_equal(f->gpu, -1);
    assert_int_equal(s->verdict, GQ_STRESS_WARN);
    /* Per-GPU verdicts stay pass: the spread is a node finding. */
    assert_int_equal(s->gpu[0].verdict, GQ_STRESS_PASS);
    free(s);

    gq_stress_rules rules;
    gq_stress_rules_default(&rules);
    rules.clock_spread_warn = 0.07;
    s = judge(r, &rules);
    assert_null(find_rule(s, "clock-spread"));
    assert_int_equal(s->verdict, GQ_STRESS_PASS);
    done(r, s);
}

static void no_telemetry_and_low_load_warn(void **state)
{
    (void)state;
    gq_stress_result *r = new_result();
    make_gpu(r, 0, "G", 30, 70, 590, 1900, 0);
    make_gpu(r, 1, "G", 30, 70, 590, 1900, 0);
    for (int i = 0; i < 30; i++)
        r->gpu[0].pts[i].has_sample = false;
    r->gpu[0].has_baseline = false;
    r->gpu[0].telemetry_unsupported = true;
    snprintf(r->gpu[0].sample_error, sizeof r->gpu[0].sample_error, "NVML not found");
    for (int i = 0; i < 30; i++)
        r->gpu[1].pts[i].s.util_pct = 50;
    gq_stress_summary *s = judge(r, NULL);
    assert_non_null(find_rule(s, "no-telemetry"));
    assert_non_null(find_rule(s, "low-load"));
    assert_int_equal(s->gpu[0].verdict, GQ_STRESS_WARN);
    assert_int_equal(s->gpu[1].verdict, GQ_STRESS_WARN);
    assert_int_equal(s->gpu[1].nloaded, 0);
    assert_true(isnan(s->gpu[1].temp_avg_c));
    assert_int_equal(s->verdict, GQ_STRESS_WARN);
    done(r, s);
}

static void no_progress_warns(void **state)
{
    (void)state;
    gq_stress_result *r = new_result();
    make_gpu(r, 0, "G", 3, 70, 590, 1900, 0);
    r->gpu[0].gemms = 0;
    gq_stress_summary *s = judge(r, NULL);
    assert_non_null(find_rule(s, "no-progress"));
    assert_int_equal(s->verdict, GQ_STRESS_WARN);
    done(r, s);
}

static void reasons_string(void **state)
{
    (void)state;
    char b[128];
    assert_string_equal(gq_clock_reasons_str(0, b, sizeof b), "none");
    assert_string_equal(gq_clock_reasons_str(GQ_STRESS_U64_UNKNOWN, b, sizeof b), "unknown");
    assert_string_equal(gq_clock_reasons_str(GQ_CLK_SW_POWER_CAP | GQ_CLK_HW_THERMAL, b, sizeof b),
                        "sw_power_cap,hw_thermal");
    assert_string_equal(gq_clock_reasons_str(0x1000 | GQ_CLK_GPU_IDLE, b, sizeof b), "gpu_idle,0x1000");
    /* NVML's values (nvml.h nvmlClocksEventReason*). */
    assert_int_equal(GQ_CLK_SW_POWER_CAP, 0x4);
    assert_int_equal(GQ_CLK_HW_SLOWDOWN, 0x8);
    assert_int_equal(GQ_CLK_SW_THERMAL, 0x20);
    assert_int_equal(GQ_CLK_HW_THERMAL, 0x40);
    assert_int_equal(GQ_CLK_HW_POWER_BRAKE, 0x80);
}

static void options_checked(void **state)
{
    (void)state;
    gq_stress_opts o;
    gq_err e = {0};
    gq_stress_opts_default(&o);
    o.ngpus = 1;
    assert_int_equal(gq_stress_opts_check(&o, &e), GQ_OK);
    o.interval_s = 0.05;
    assert_int_equal(gq_stress_opts_check(&o, &e), GQ_E_USAGE);
    assert_non_null(strstr(e.msg, "--interval"));
    o.interval_s = 301;
    assert_int_equal(gq_stress_opts_check(&o, &e), GQ_E_USAGE);
    assert_non_null(strstr(e.msg, "--duration"));
    o.interval_s = 300;
    assert_int_equal(gq_stress_opts_check(&o, &e), GQ_OK);
    o.duration_s = 0;
    assert_int_equal(gq_stress_opts_check(&o, &e), GQ_E_USAGE);
    gq_precision p;
    assert_int_equal(gq_stress_parse_precision("FP64", &p, &e), GQ_OK);
    assert_int_equal(p, GQ_PREC_FP64);
    assert_int_equal(gq_stress_parse_precision("fp8", &p, &e), GQ_E_USAGE);
    assert_non_null(strstr(e.msg, "bf16"));
}

static void json_section(void **state)
{
    (void)state;
    gq_stress_result *r = new_result();
    make_gpu(r, 0, "G", 12, 70, 590, 1900, GQ_CLK_SW_POWER_CAP);
    make_gpu(r, 1, "G", 12, 70, 590, 1900, GQ_CLK_SW_POWER_CAP | GQ_CLK_HW_THERMAL);
    r->gpu[1].pts[3].s.temp_c = NAN;
    gq_stress_summary *s = judge(r, NULL);
    json_t *j = gq_stress_to_json(r, s);
    assert_non_null(j);
    assert_string_equal(json_string_value(json_object_get(j, "verdict")), "fail");
    json_t *gpus = json_object_get(j, "gpus");
    assert_int_equal(json_array_size(gpus), 2);
    assert_string_equal(json_string_value(json_object_get(json_array_get(gpus, 1), "verdict")), "fail");
    assert_true(json_is_true(json_object_get(json_array_get(gpus, 1), "thermal_slowdown")));
    json_t *series = json_object_get(j, "series");
    json_t *cols = json_object_get(series, "columns");
    json_t *g1 = json_array_get(json_object_get(series, "gpus"), 1);
    assert_non_null(g1);
    assert_true(json_array_size(cols) >= 5); /* t, temp_c, power_w, sm_clock_mhz, ... */
    size_t i;
    json_t *c;
    json_array_foreach(cols, i, c)
        assert_int_equal(json_array_size(json_object_get(g1, json_string_value(c))), 12);
    /* Unknown values are null, never NaN (which JSON cannot carry). */
    assert_true(json_is_null(json_array_get(json_object_get(g1, "temp_c"), 3)));
    assert_true(json_is_true(json_array_get(json_object_get(g1, "thermal_slowdown"), 0)));
    assert_true(json_array_size(json_object_get(j, "findings")) >= 2);
    char *text = json_dumps(j, 0);
    assert_non_null(text);
    assert_null(strstr(text, "nan"));
    free(text);
    json_decref(j);
    done(r, s);
}

/* A GPU whose temperature follows T(t) = tinf - (tinf - 35) e^(-t/tau),
 * sampled at 1 Hz for n s, readings rounded as NVML gives them. */
static void heat_curve(gq_stress_result *r, int k, int n, double tinf, double tau, double slowdown)
{
    make_gpu(r, k, "H", n, 60, 500, 2000, GQ_CLK_SW_POWER_CAP);
    gq_stress_gpu *g = &r->gpu[k];
    for (int i = 0; i < n; i++) {
        g->pts[i].s.temp_c = round(tinf - (tinf - 35) * exp(-i / tau));
        g->pts[i].s.temp_slowdown_c = slowdown;
    }
}

/* Peers: four identical GPUs, one 12 °C hotter than the median: WARN naming
 * the figure, the GPU, its value and the median; within 10 °C: nothing. */
static void peer_outlier_temperature(void **state)
{
    (void)state;
    gq_stress_result *r = new_result();
    make_gpu(r, 0, "P", 60, 60, 500, 2000, GQ_CLK_SW_POWER_CAP);
    make_gpu(r, 1, "P", 60, 61, 500, 2000, GQ_CLK_SW_POWER_CAP);
    make_gpu(r, 2, "P", 60, 62, 500, 2000, GQ_CLK_SW_POWER_CAP);
    make_gpu(r, 3, "P", 60, 73.5, 500, 2000, GQ_CLK_SW_POWER_CAP); /* median of 60,61,62,73.5 = 61.5: +12 */
    gq_stress_summary *s = judge(r, NULL);
    const gq_stress_finding *f = find_rule(s, "peer-outlier");
    assert_non_null(f);
    assert_int_equal(f->level, GQ_STRESS_WARN);
    assert_int_equal(f->gpu, 3);
    assert_non_null(strstr(f->text, "GPU 3: maximum temperature 74 °C against its peers' median 62 °C"));
    assert_int_equal(s->gpu[3].verdict, GQ_STRESS_WARN);
    assert_int_equal(s->gpu[0].verdict, GQ_STRESS_PASS);
    assert_int_equal(s->verdict, GQ_STRESS_WARN);
    done(r, s);
    /* 9.5 °C above the median: within the margin */
    r = new_result();
    make_gpu(r, 0, "P", 60, 60, 500, 2000, GQ_CLK_SW_POWER_CAP);
    make_gpu(r, 1, "P", 60, 61, 500, 2000, GQ_CLK_SW_POWER_CAP);
    make_gpu(r, 2, "P", 60, 62, 500, 2000, GQ_CLK_SW_POWER_CAP);
    make_gpu(r, 3, "P", 60, 71, 500, 2000, GQ_CLK_SW_POWER_CAP);
    s = judge(r, NULL);
    assert_null(find_rule(s, "peer-outlier"));
    assert_int_equal(s->verdict, GQ_STRESS_PASS);
    done(r, s);
}

/* Two GPUs: each against the other, at 15 °C; the same 12 °C is not an
 * outlier there, 16 °C is. Different models are never peers. */
static void peer_two_gpus_wider_margin(void **state)
{
    (void)state;
    gq_stress_result *r = new_result();
    make_gpu(r, 0, "P", 60, 60, 500, 2000, GQ_CLK_SW_POWER_CAP);
    make_gpu(r, 1, "P", 60, 72, 500, 2000, GQ_CLK_SW_POWER_CAP);
    gq_stress_summary *s = judge(r, NULL);
    assert_null(find_rule(s, "peer-outlier"));
    done(r, s);
    r = new_result();
    make_gpu(r, 0, "P", 60, 60, 500, 2000, GQ_CLK_SW_POWER_CAP);
    make_gpu(r, 1, "P", 60, 76, 500, 2000, GQ_CLK_SW_POWER_CAP);
    make_gpu(r, 2, "Q", 60, 40, 500, 2000, GQ_CLK_SW_POWER_CAP);
    s = judge(r, NULL);
    const gq_stress_finding *f = find_rule(s, "peer-outlier");
    assert_non_null(f);
    assert_int_equal(f->gpu, 1);
    assert_non_null(strstr(f->text, "against the other GPU's 60 °C (2 identical GPUs; margin 15 °C)"));
    /* GPU 2 (Q) is alone: info, not compared with the P pair */
    const gq_stress_finding *np = find_rule(s, "no-peers");
    assert_non_null(np);
    assert_int_equal(np->gpu, 2);
    assert_int_equal(np->level, GQ_STRESS_INFO);
    done(r, s);
}

/* Clock, power and TFLOP/s against the median. */
static void peer_clock_power_tflops(void **state)
{
    (void)state;
    gq_stress_result *r = new_result();
    for (int k = 0; k < 4; k++)
        make_gpu(r, k, "P", 60, 60, k == 2 ? 420 : 500, k == 1 ? 1880 : 2000, GQ_CLK_SW_POWER_CAP);
    for (int i = 0; i < 60; i++)
        r->gpu[3].pts[i].tflops = 360; /* 10% below 400 */
    gq_stress_summary *s = judge(r, NULL);
    int clock = 0, power = 0, tfl = 0;
    for (int i = 0; i < s->nfindings; i++) {
        const gq_stress_finding *f = &s->findings[i];
        if (strcmp(f->rule, "peer-outlier"))
            continue;
        clock += f->gpu == 1 && strstr(f->text, "average SM clock 1880 MHz") != NULL;
        power += f->gpu == 2 && strstr(f->text, "average power 420 W") != NULL;
        tfl += f->gpu == 3 && strstr(f->text, "average 360.0 TFLOP/s") != NULL;
    }
    assert_int_equal(clock, 1); /* 6% below 2000 */
    assert_int_equal(power, 1); /* 16% below 500 */
    assert_int_equal(tfl, 1);
    assert_int_equal(s->gpu[0].verdict, GQ_STRESS_PASS);
    done(r, s);
}

/* Heading for slowdown: 60 s of a curve heading for 100 °C (tau 60 s) with a
 * slowdown at 88: WARN with the time left, from the first-order fit:
 * T(60) = round(100 - 65 e^-1) = 76; it reaches 88 at t = 60 ln(65/12) =
 * 101 s, so about 40 s after the last sample. A curve settling at 71 °C
 * (tau 26 s) is never named; nor is any curve over less than 30 s. */
static void heading_for_slowdown(void **state)
{
    (void)state;
    gq_stress_result *r = new_result();
    heat_curve(r, 0, 61, 100, 60, 88);
    gq_stress_summary *s = judge(r, NULL);
    const gq_stress_finding *f = find_rule(s, "heading-slowdown");
    assert_non_null(f);
    assert_int_equal(f->level, GQ_STRESS_WARN);
    assert_non_null(strstr(f->text, "GPU 0: 76 °C and still heating"));
    assert_non_null(strstr(f->text, "slowdown temperature 88 °C"));
    int secs = 0;
    const char *p = strstr(f->text, "in about ");
    assert_non_null(p);
    secs = atoi(p + 9);
    assert_in_range(secs, 25, 60);
    done(r, s);
    r = new_result();
    heat_curve(r, 0, 300, 71, 26, 88);
    s = judge(r, NULL);
    assert_null(find_rule(s, "heading-slowdown"));
    done(r, s);
    r = new_result();
    heat_curve(r, 0, 20, 100, 60, 88);
    s = judge(r, NULL);
    assert_null(find_rule(s, "heading-slowdown"));
    done(r, s);
}

/* The same curve whose last tick has no telemetry sample (its read failed)
 * and one before it a NaN temperature: the finding is made from the samples
 * there are, the last one read (76 °C) as now. */
static void heading_for_slowdown_missing_samples(void **state)
{
    (void)state;
    gq_stress_result *r = new_result();
    heat_curve(r, 0, 63, 100, 60, 88);
    r->gpu[0].pts[62].has_sample = false;
    r->gpu[0].pts[62].s.temp_c = NAN;
    r->gpu[0].pts[61].s.temp_c = NAN;
    r->gpu[0].pts[0].has_sample = false;
    r->gpu[0].pts[0].s.temp_c = NAN;
    gq_stress_summary *s = judge(r, NULL);
    const gq_stress_finding *f = find_rule(s, "heading-slowdown");
    assert_non_null(f);
    assert_non_null(strstr(f->text, "GPU 0: 76 °C and still heating"));
    done(r, s);
}

/* Heating faster in the last third than in the middle one (35 + t^2 / 100
 * °C): no asymptote to name, the time left from the last third's slope. */
static void heading_for_slowdown_still_accelerating(void **state)
{
    (void)state;
    gq_stress_result *r = new_result();
    heat_curve(r, 0, 61, 100, 60, 88);
    for (int i = 0; i < 61; i++)
        r->gpu[0].pts[i].s.temp_c = 35 + i * i / 100.0;
    gq_stress_summary *s = judge(r, NULL);
    const gq_stress_finding *f = find_rule(s, "heading-slowdown");
    assert_non_null(f);
    assert_int_equal(f->level, GQ_STRESS_WARN);
    assert_string_equal(f->text,
                        "GPU 0: 71 °C and still heating: it would reach its slowdown temperature 88 °C in "
                        "about 21 s under this load");
    done(r, s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(seed001_clean_node_passes),
        cmocka_unit_test(averages_use_loaded_samples_only),
        cmocka_unit_test(power_cap_alone_is_info),
        cmocka_unit_test(each_thermal_reason_fails),
        cmocka_unit_test(slowdown_reasons_reach_the_card),
        cmocka_unit_test(benign_reasons_pass),
        cmocka_unit_test(faulty_elements_fail),
        cmocka_unit_test(ecc_uncorrected_delta_fails_but_old_errors_do_not),
        cmocka_unit_test(soft_errors_warn),
        cmocka_unit_test(unknown_counters_are_not_errors),
        cmocka_unit_test(link_trained_down_under_load_fails),
        cmocka_unit_test(link_max_from_observation),
        cmocka_unit_test(link_gen_max_from_samples),
        cmocka_unit_test(lost_or_errored_gpu_fails_others_pass),
        cmocka_unit_test(clock_spread_warns_above_threshold),
        cmocka_unit_test(no_telemetry_and_low_load_warn),
        cmocka_unit_test(no_progress_warns),
        cmocka_unit_test(reasons_string),
        cmocka_unit_test(options_checked),
        cmocka_unit_test(json_section),
        cmocka_unit_test(peer_outlier_temperature),
        cmocka_unit_test(peer_two_gpus_wider_margin),
        cmocka_unit_test(peer_clock_power_tflops),
        cmocka_unit_test(heading_for_slowdown),
        cmocka_unit_test(heading_for_slowdown_still_accelerating),
        cmocka_unit_test(heading_for_slowdown_missing_samples),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
