/* The stress section read back (gq_stress_from_json): a card resumed from its
 * journal carries the completed stress run typed, read from the journal's
 * section, and writes its "stress" section and stress.csv from it; both must
 * be what the run measured wrote, unknowns, errors, transfers and findings
 * included. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "analysis/stress.h"
#include "doc/analysis_json.h"
#include "measure/journal.h"
#include "topo/topo.h"
#include "../test_util.h"

/* GPU k of r: n points with every kind of cell, some unknown. */
static void add_gpu(gq_stress_result *r, int k, int dev, int n)
{
    gq_stress_gpu *g = &r->gpu[k];
    g->gpu = dev;
    snprintf(g->name, sizeof g->name, "GPU model %d", k % 2);
    snprintf(g->uuid, sizeof g->uuid, "GPU-%08d", dev);
    g->power_limit_w = 700;
    g->pcie_gen_max = 5;
    g->pcie_width_max = 16;
    g->started = true;
    g->lost_t = -1;
    g->has_baseline = true;
    gq_stress_sample_unknown(&g->baseline);
    g->baseline.ecc_corrected = 3;
    g->baseline.pcie_replay = 7;
    g->baseline.remapped_rows = 0;
    for (int i = 0; i < n; i++) {
        gq_stress_point p;
        memset(&p, 0, sizeof p);
        gq_stress_sample_unknown(&p.s);
        p.t = i == 0 ? -0.25 : i * 0.1 + 1.0 / 3;
        p.loaded = i > 0;
        p.has_sample = i != 2; /* one failed sample */
        if (p.has_sample) {
            p.s.temp_c = 60 + i + 0.125 * k;
            p.s.mem_temp_c = i == 3 ? NAN : 70.5;
            p.s.power_w = 650.0 / 7 * (i + 1);
            p.s.power_limit_w = 700;
            p.s.sm_clock_mhz = 1980 - 15 * i;
            p.s.mem_clock_mhz = 2619;
            p.s.util_pct = i ? 100 : 0;
            p.s.clock_reasons = i == 4 ? GQ_STRESS_U64_UNKNOWN
                                       : GQ_CLK_SW_POWER_CAP | (i == 5 ? GQ_CLK_HW_THERMAL | 0x10000ull : 0);
            /* every slowdown reason somewhere: GPU 2 a hardware power brake alone, GPU 0 the
             * hardware slowdown and the software thermal limit */
            if (i == 6)
                p.s.clock_reasons = k == 2   ? GQ_CLK_HW_POWER_BRAKE
                                    : k == 0 ? GQ_CLK_HW_SLOWDOWN | GQ_CLK_SW_THERMAL
                                             : p.s.clock_reasons;
            p.s.pcie_gen = i == 1 ? -1 : 5;
            p.s.pcie_width = 16;
            p.s.pcie_replay = i == 3 ? GQ_STRESS_U64_UNKNOWN : 7 + (uint64_t)i;
            p.s.ecc_corrected = 3 + (uint64_t)(i > 4);
            p.s.ecc_uncorrected = 0;
            p.s.remapped_rows = i == 1 ? -1 : 0;
        }
        p.s.lost = k == 1 && i == n - 1;
        p.gemms = (uint64_t)i * 40;
        p.faulty = k == 2 && i > 3 ? 2 : 0;
        p.tflops = i ? 700.0 / 3 + i : NAN;
        assert_int_equal(gq_stress_point_push(g, &p), GQ_OK);
    }
    g->gemms = (uint64_t)(n - 1) * 40;
    g->faulty = k == 2 ? 4 : 0;
    if (k == 1) {
        g->lost = true;
        g->lost_t = 0.8;
        g->status = GQ_E_BACKEND;
        snprintf(g->error, sizeof g->error, "GPU %d fell off the bus \"quoted\"", dev);
    }
    if (k == 0) {
        g->xfer_bytes[0] = g->xfer_bytes[1] = 1e9;
        g->xfer_s[0] = 0.04;
        g->xfer_s[1] = 0.05;
    }
    if (k == 2) {
        g->xfer_status = GQ_E_BACKEND;
        snprintf(g->xfer_error, sizeof g->xfer_error, "pinned allocation failed");
    }
    r->ngpu = k + 1;
}

static char *dump(const json_t *j)
{
    char *s = json_dumps(j, JSON_COMPACT);
    assert_non_null(s);
    return s;
}

/* The CSV of r, as text. */
static char *csv_of(const gq_stress_result *r)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    assert_non_null(f);
    gq_stress_write_csv(f, r);
    assert_int_equal(fclose(f), 0);
    return buf;
}

/* Two doubles equal, or both unknown (NAN). */
static void same_num(double a, double b, const char *what)
{
    if (!(isnan(a) && isnan(b)) && a != b) {
        print_error("%s: %.17g read back, %.17g written\n", what, a, b);
        fail();
    }
}

/* One GPU's summary read back field by field as it was written. */
static void same_gpu_summary(const gq_stress_gpu_summary *b, const gq_stress_gpu_summary *a)
{
    assert_int_equal(b->gpu, a->gpu);
    assert_string_equal(b->name, a->name);
    assert_int_equal(b->nsamples, a->nsamples);
    assert_int_equal(b->nloaded, a->nloaded);
    same_num(b->temp_avg_c, a->temp_avg_c, "temp_avg_c");
    same_num(b->temp_max_c, a->temp_max_c, "temp_max_c");
    same_num(b->mem_temp_max_c, a->mem_temp_max_c, "mem_temp_max_c");
    same_num(b->power_avg_w, a->power_avg_w, "power_avg_w");
    same_num(b->power_max_w, a->power_max_w, "power_max_w");
    same_num(b->power_limit_w, a->power_limit_w, "power_limit_w");
    same_num(b->sm_clock_avg_mhz, a->sm_clock_avg_mhz, "sm_clock_avg_mhz");
    same_num(b->mem_clock_avg_mhz, a->mem_clock_avg_mhz, "mem_clock_avg_mhz");
    same_num(b->util_avg_pct, a->util_avg_pct, "util_avg_pct");
    same_num(b->power_capped_pct, a->power_capped_pct, "power_capped_pct");
    same_num(b->thermal_pct, a->thermal_pct, "thermal_pct");
    assert_int_equal(b->thermal_slowdown, a->thermal_slowdown);
    assert_int_equal(b->hw_slowdown, a->hw_slowdown);
    assert_int_equal(b->power_brake, a->power_brake);
    /* the section names the reasons NVML documents (GQ_CLK_*, 0x1 to 0x100); a bit without a name
     * (0x10000 above) is not kept */
    assert_int_equal(b->reasons_seen, a->reasons_seen & 0x1ffull);
    assert_int_equal(b->pcie_gen_min, a->pcie_gen_min);
    assert_int_equal(b->pcie_width_min, a->pcie_width_min);
    assert_int_equal(b->pcie_gen_max, a->pcie_gen_max);
    assert_int_equal(b->pcie_width_max, a->pcie_width_max);
    assert_int_equal(b->link_down, a->link_down);
    assert_int_equal(b->ecc_corrected, a->ecc_corrected);
    assert_int_equal(b->ecc_uncorrected, a->ecc_uncorrected);
    assert_int_equal(b->pcie_replay, a->pcie_replay);
    assert_int_equal(b->remapped_rows, a->remapped_rows);
    assert_int_equal(b->remapped_delta, a->remapped_delta);
    assert_int_equal(b->gemms, a->gemms);
    assert_int_equal(b->faulty, a->faulty);
    same_num(b->tflops_avg, a->tflops_avg, "tflops_avg");
    same_num(b->xfer_gbps[0], a->xfer_gbps[0], "xfer_gbps[0]");
    same_num(b->xfer_gbps[1], a->xfer_gbps[1], "xfer_gbps[1]");
    assert_int_equal(b->lost, a->lost);
    assert_int_equal(b->errored, a->errored);
    assert_int_equal(b->verdict, a->verdict);
}

/* Written, saved as text (as the journal keeps it), read back and written
 * again: the same section byte for byte, and the same CSV. */
static void section_reads_back_as_written(void **state)
{
    (void)state;
    gq_stress_result *r = calloc(1, sizeof *r), *back = calloc(1, sizeof *back);
    gq_stress_summary *s = calloc(1, sizeof *s), *sback = calloc(1, sizeof *sback);
    assert_true(r && back && s && sback);
    r->duration_s = 1;
    r->interval_s = 0.1;
    r->elapsed_s = 1.0 + 1e-9;
    r->precision = GQ_PREC_FP16;
    r->with_transfers = true;
    snprintf(r->xfer_error, sizeof r->xfer_error, "GPU 2's transfers stopped");
    for (int k = 0; k < 3; k++)
        add_gpu(r, k, 4 + k, 8);
    gq_stress_summarize(r, NULL, s);
    assert_true(s->nfindings > 2); /* lost, faulty, thermal, power cap, transfers */
    json_t *j = gq_stress_to_json(r, s);
    assert_non_null(j);
    char *text = dump(j);
    json_error_t je;
    json_t *loaded = json_loads(text, 0, &je);
    assert_non_null(loaded);
    gq_err e = {0};
    assert_int_equal(gq_stress_from_json(loaded, back, sback, &e), GQ_OK);
    json_t *again = gq_stress_to_json(back, sback);
    assert_non_null(again);
    char *text2 = dump(again);
    assert_string_equal(text2, text);
    assert_true(json_equal(again, j));
    char *c1 = csv_of(r), *c2 = csv_of(back);
    assert_string_equal(c2, c1);
    assert_non_null(strstr(c1, "\n5,")); /* the device index, not the slot */
    assert_int_equal(sback->verdict, s->verdict);
    assert_int_equal(sback->nfindings, s->nfindings);
    /* each GPU's summary field by field, the slowdown flags included (a key misspelled in the
     * reader would leave one false, and the resumed card would not count that GPU as slowed) */
    assert_true(s->gpu[2].power_brake);
    for (int k = 0; k < 3; k++)
        same_gpu_summary(&sback->gpu[k], &s->gpu[k]);
    assert_int_equal(back->gpu[1].npoints, 8);
    free(c1);
    free(c2);
    free(text);
    free(text2);
    json_decref(j);
    json_decref(loaded);
    json_decref(again);
    gq_stress_result_free(r);
    gq_stress_result_free(back);
    free(r);
    free(back);
    free(s);
    free(sback);
}

/* A section that is not one gpuqual writes is refused with one line naming
 * the part that is wrong (the card then measures its stress again). */
static void foreign_section_refused(void **state)
{
    (void)state;
    gq_stress_result *r = calloc(1, sizeof *r);
    gq_stress_summary *s = calloc(1, sizeof *s);
    assert_true(r && s);
    static const struct {
        const char *json, *word;
    } bad[] = {
        {"[]", "list of GPUs"},
        {"{\"gpus\":[{}],\"series\":{\"gpus\":[]},\"precision\":\"fp16\",\"verdict\":\"pass\"}",
         "list of GPUs"},
        {"{\"gpus\":[],\"series\":{\"gpus\":[]},\"precision\":\"fp8\",\"verdict\":\"pass\"}", "precision"},
        {"{\"gpus\":[],\"series\":{\"gpus\":[]},\"precision\":\"bf16\",\"verdict\":\"okay\"}", "verdict"},
        {"{\"gpus\":[{\"verdict\":\"x\"}],\"series\":{\"gpus\":[{}]},\"precision\":\"bf16\",\"verdict\":"
         "\"pass\"}",
         "GPU summary"},
        {"{\"gpus\":[],\"series\":{\"gpus\":[]},\"precision\":\"bf16\",\"verdict\":\"pass\","
         "\"findings\":[{\"level\":\"loud\"}]}",
         "finding's level"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        json_error_t je;
        json_t *j = json_loads(bad[i].json, 0, &je);
        assert_non_null(j);
        gq_err e = {0};
        assert_int_equal(gq_stress_from_json(j, r, s, &e), GQ_E_USAGE);
        if (!strstr(e.msg, bad[i].word))
            fail_msg("case %zu: '%s' does not name the %s", i, e.msg, bad[i].word);
        gq_stress_result_free(r);
        json_decref(j);
    }
    /* the smallest section gpuqual writes reads back */
    json_t *ok = json_loads(
        "{\"gpus\":[],\"series\":{\"gpus\":[]},\"precision\":\"fp64\",\"verdict\":\"warn\"}", 0, NULL);
    gq_err e = {0};
    assert_int_equal(gq_stress_from_json(ok, r, s, &e), GQ_OK);
    assert_int_equal(r->precision, GQ_PREC_FP64);
    assert_int_equal(s->verdict, GQ_STRESS_WARN);
    json_decref(ok);
    free(r);
    free(s);
}

/* A journalled stress run is re-used when it ran its whole duration, to the
 * microsecond: elapsed_s of exactly duration_s - 1e-6 is whole, a hair less
 * is not (then the stress is measured again). */
static void journal_stress_reusable_at_the_edge(void **state)
{
    (void)state;
    gq_topo *t = calloc(1, sizeof *t);
    assert_non_null(t);
    gq_topo_init(t);
    t->ngpu = 1;
    t->gpu[0].index = 0;
    int sel[1] = {0};
    const double dur = 10;
    const double edge = dur - 1e-6;
    const double less = nextafter(edge, 0);
    for (int c = 0; c < 2; c++) {
        json_t *sec = json_pack("{s:b, s:s, s:f, s:f, s:[{s:i}], s:{s:[{s:i, s:[f, f]}]}}", "interrupted", 0,
                                "verdict", "pass", "duration_s", dur, "elapsed_s", c ? less : edge, "gpus",
                                "gpu", 0, "series", "gpus", "gpu", 0, "t_s", 0.0, dur);
        assert_non_null(sec);
        gq_journal j;
        memset(&j, 0, sizeof j);
        j.done_steps = json_pack("{s:{s:s, s:o}}", "stress", "step", "stress", "stress", sec);
        assert_non_null(j.done_steps);
        const json_t *r = gq_stress_journal_reusable(&j, t, sel, 1, dur);
        if (c == 0)
            assert_ptr_equal(r, sec);
        else
            assert_null(r);
        /* another duration is never re-used */
        assert_null(gq_stress_journal_reusable(&j, t, sel, 1, dur + 1));
        json_decref(j.done_steps);
    }
    free(t);
}

/* A journalled stress run is re-used only when each GPU of the card is the
 * one it sampled (in its summary and its series) and its series has at
 * least two points, as many as the first GPU's, the last at the end. */
static void journal_stress_reusable_per_gpu(void **state)
{
    (void)state;
    gq_topo *t = calloc(1, sizeof *t);
    assert_non_null(t);
    gq_topo_init(t);
    t->ngpu = 2;
    t->gpu[0].index = 0;
    t->gpu[1].index = 1;
    int sel[2] = {0, 1};
    const double dur = 10;
    static const struct {
        int sum_gpu1, series_gpu1, npts1;
        double end1;
        bool reused;
    } cases[] = {
        {1, 1, 2, 10, true},  {0, 1, 2, 10, false}, {1, 0, 2, 10, false},
        {1, 1, 1, 10, false}, {1, 1, 2, 5, false},  {1, 1, 3, 10, false},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        json_t *ts1 = json_array();
        for (int k = 0; k < cases[c].npts1; k++)
            json_array_append_new(ts1, json_real(k == cases[c].npts1 - 1 ? cases[c].end1 : (double)k / 10));
        json_t *sec = json_pack("{s:b, s:s, s:f, s:f, s:[{s:i}, {s:i}], s:{s:[{s:i, s:[f, f]}, {s:i, s:o}]}}",
                                "interrupted", 0, "verdict", "pass", "duration_s", dur, "elapsed_s", dur,
                                "gpus", "gpu", 0, "gpu", cases[c].sum_gpu1, "series", "gpus", "gpu", 0, "t_s",
                                0.0, dur, "gpu", cases[c].series_gpu1, "t_s", ts1);
        assert_non_null(sec);
        gq_journal j;
        memset(&j, 0, sizeof j);
        j.done_steps = json_pack("{s:{s:s, s:o}}", "stress", "step", "stress", "stress", sec);
        const json_t *r = gq_stress_journal_reusable(&j, t, sel, 2, dur);
        if ((r != NULL) != cases[c].reused)
            fail_msg("case %zu: %s, expected %s", c, r ? "re-used" : "not re-used",
                     cases[c].reused ? "re-used" : "not");
        json_decref(j.done_steps);
    }
    /* one point, at the end, is not a series */
    json_t *sec = json_pack("{s:b, s:s, s:f, s:f, s:[{s:i}], s:{s:[{s:i, s:[f]}]}}", "interrupted", 0,
                            "verdict", "pass", "duration_s", dur, "elapsed_s", dur, "gpus", "gpu", 0,
                            "series", "gpus", "gpu", 0, "t_s", dur);
    gq_journal j;
    memset(&j, 0, sizeof j);
    j.done_steps = json_pack("{s:{s:s, s:o}}", "stress", "step", "stress", "stress", sec);
    assert_null(gq_stress_journal_reusable(&j, t, sel, 1, dur));
    json_decref(j.done_steps);
    free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(section_reads_back_as_written),
        cmocka_unit_test(foreign_section_refused),
        cmocka_unit_test(journal_stress_reusable_at_the_edge),
        cmocka_unit_test(journal_stress_reusable_per_gpu),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
