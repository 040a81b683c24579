/* Comparing saved runs: keys, deltas against the first run, regressions in
 * the right direction for each kind of figure, figures missing in a run. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "analysis/compare.h"
#include "render/analysis_render.h"

static gq_record rec(const char *test, int gpu, bool h2d, double v, bool latency)
{
    gq_record r;
    memset(&r, 0, sizeof r);
    snprintf(r.test, sizeof r.test, "%s", test);
    r.method = latency ? GQ_METHOD_SM : GQ_METHOD_CE;
    r.src = h2d ? (gq_endpoint){GQ_EP_HOST, GQ_NUMA_LOCAL} : (gq_endpoint){GQ_EP_GPU, gpu};
    r.dst = h2d ? (gq_endpoint){GQ_EP_GPU, gpu} : (gq_endpoint){GQ_EP_HOST, GQ_NUMA_LOCAL};
    r.direction = h2d ? GQ_DIR_H2D : GQ_DIR_D2H;
    r.bytes = 256u << 20;
    r.is_latency = latency;
    r.value.median = v;
    r.valid = true;
    r.flow_tag = 0;
    return r;
}

static const gq_cmp_fig *fig(const gq_compare *c, const char *needle)
{
    for (int i = 0; i < c->nfig; i++)
        if (strstr(c->fig[i].key, needle))
            return &c->fig[i];
    return NULL;
}

static void test_deltas_and_regressions(void **state)
{
    (void)state;
    gq_recordset a = {0}, b = {0};
    gq_record r;
    r = rec("host_to_device_set", 0, true, 55.0, false);
    gq_records_push(&a, &r);
    r.value.median = 50.0; /* -9.1%: a regression at 5% */
    gq_records_push(&b, &r);
    r = rec("device_to_host_set", 0, false, 55.3, false);
    gq_records_push(&a, &r);
    r.value.median = 57.0; /* better: never a regression */
    gq_records_push(&b, &r);
    r = rec("host_device_latency_sm", 0, true, 1200, true);
    gq_records_push(&a, &r);
    r.value.median = 1300; /* latency up 8.3%: a regression */
    gq_records_push(&b, &r);
    r = rec("host_to_device_set", 1, true, 55.0, false);
    gq_records_push(&a, &r);
    r.value.median = 53.0; /* -3.6%: within the threshold */
    gq_records_push(&b, &r);
    r = rec("device_to_host_set", 5, false, 40.0, false); /* only in B */
    gq_records_push(&b, &r);
    r = rec("device_to_host_set", 6, false, 40.0, false); /* invalid in A: not compared */
    r.valid = false;
    r.flags = GQ_FLAG_IMPOSSIBLE;
    gq_records_push(&a, &r);
    r.valid = true;
    r.flags = 0;
    gq_records_push(&b, &r);

    gq_compare c;
    gq_err e = {0};
    gq_compare_init(&c, 5);
    assert_int_equal(gq_compare_add(&c, "a.json", &a, NULL, &e), GQ_OK);
    assert_int_equal(gq_compare_add(&c, "b.json", &b, NULL, &e), GQ_OK);
    gq_compare_finish(&c);
    const gq_cmp_fig *f = fig(&c, "host_to_device_set ce host:local->gpu:0");
    assert_non_null(f);
    assert_true(fabs(f->delta_pct[1] - (-100.0 * 5 / 55)) < 1e-9);
    assert_true(f->regression[1]);
    assert_true(isnan(f->delta_pct[0]));
    assert_false(fig(&c, "device_to_host_set ce gpu:0")->regression[1]);
    f = fig(&c, "host_device_latency_sm");
    assert_false(f->higher_is_better);
    assert_true(f->regression[1]);
    assert_false(fig(&c, "gpu:1")->regression[1]);
    assert_int_equal(fig(&c, "gpu:5")->present, 1);
    assert_int_equal(fig(&c, "gpu:6")->present, 1);
    assert_int_equal(c.nregressions, 2);
    assert_int_equal(c.ncompared, 4);
    json_t *j = gq_compare_to_json(&c);
    assert_int_equal(json_integer_value(json_object_get(j, "regressions")), 2);
    assert_int_equal(json_array_size(json_object_get(j, "figures")), 4);
    assert_int_equal(json_array_size(json_object_get(j, "only_in")), 2);
    json_decref(j);
    /* a looser threshold: only the latency (8.3%) and h2d (9.1%) stay above 8 */
    gq_compare_free(&c);
    gq_compare_init(&c, 9);
    gq_compare_add(&c, "a.json", &a, NULL, &e);
    gq_compare_add(&c, "b.json", &b, NULL, &e);
    gq_compare_finish(&c);
    assert_int_equal(c.nregressions, 1);
    char *out = NULL;
    size_t len = 0;
    FILE *mf = open_memstream(&out, &len);
    gq_compare_print(mf, &c, true, true);
    fclose(mf);
    assert_non_null(strstr(out, "REGRESSION"));
    assert_non_null(strstr(out, "| figure | unit |"));
    free(out);
    gq_compare_free(&c);
    gq_records_free(&a);
    gq_records_free(&b);
}

/* A figure's cell holds its value whole: a latency of 1e30 ns (no sanity
 * bound caps latencies) prints all of its 31 digits, not a shorter number. */
static void test_huge_value_whole(void **state)
{
    (void)state;
    gq_recordset a = {0}, b = {0};
    gq_record r = rec("host_device_latency_sm", 0, true, 1200, true);
    gq_records_push(&a, &r);
    r.value.median = 1e30;
    gq_records_push(&b, &r);
    gq_compare c;
    gq_err e = {0};
    gq_compare_init(&c, 5);
    assert_int_equal(gq_compare_add(&c, "a.json", &a, NULL, &e), GQ_OK);
    assert_int_equal(gq_compare_add(&c, "b.json", &b, NULL, &e), GQ_OK);
    gq_compare_finish(&c);
    assert_int_equal(c.nregressions, 1);
    char want[64];
    snprintf(want, sizeof want, "%.0f (+", 1e30);
    assert_int_equal(strlen(want), 31 + 3);
    char *out = NULL;
    size_t len = 0;
    FILE *mf = open_memstream(&out, &len);
    gq_compare_print(mf, &c, false, false);
    fclose(mf);
    if (!strstr(out, want))
        fail_msg("no '%s' in:\n%s", want, out);
    free(out);
    gq_compare_free(&c);
    gq_records_free(&a);
    gq_records_free(&b);
}

static void test_keys(void **state)
{
    (void)state;
    char k1[200], k2[200];
    gq_record r = rec("host_to_device_set", 0, true, 1, false);
    gq_compare_key(&r, k1, sizeof k1);
    assert_string_equal(k1, "host_to_device_set ce host:local->gpu:0 256 MiB");
    r.aggregate = true;
    r.ngpus = 2;
    r.gpus[0] = 0;
    r.gpus[1] = 1;
    gq_compare_key(&r, k2, sizeof k2);
    assert_string_not_equal(k1, k2);
    assert_non_null(strstr(k2, "aggregate[0,1] h2d"));
    /* the same figure twice in one run is kept twice */
    gq_recordset a = {0};
    r = rec("x", 0, true, 1, false);
    gq_records_push(&a, &r);
    r.value.median = 2;
    gq_records_push(&a, &r);
    gq_compare c;
    gq_err e = {0};
    gq_compare_init(&c, 5);
    gq_compare_add(&c, "a", &a, NULL, &e);
    assert_int_equal(c.nfig, 2);
    gq_compare_free(&c);
    gq_records_free(&a);
}

/* A card's typed identity: its GPU model, its stress with GPU 0's maximum
 * temperature and average clock. */
static gq_cmp_doc *root(const char *model, double stress_s, double temp, double clock)
{
    gq_cmp_doc *d = calloc(1, sizeof *d);
    assert_non_null(d);
    snprintf(d->kind, sizeof d->kind, "card");
    snprintf(d->model, sizeof d->model, "%s", model);
    d->stress_s = stress_s;
    d->nstress = 1;
    d->stress[0].gpu = 0;
    d->stress[0].temp_max_c = temp;
    d->stress[0].sm_clock_avg_mhz = clock;
    d->stress[0].power_avg_w = NAN;
    return d;
}

/* Temperatures are compared in degrees: 38 -> 53 °C is +15 °C, past 5 °C;
 * 80 -> 85 °C is +5 °C, not past it (though +6.25 %): not a regression. */
static void test_temperature_in_degrees(void **state)
{
    (void)state;
    gq_compare c;
    gq_compare_init(&c, 5);
    gq_cmp_doc *a = root("NVIDIA H200", 60, 38, 1700), *b = root("NVIDIA H200", 60, 53, 1700);
    assert_int_equal(gq_compare_add(&c, "a", NULL, a, NULL), GQ_OK);
    assert_int_equal(gq_compare_add(&c, "b", NULL, b, NULL), GQ_OK);
    assert_int_equal(gq_compare_check(&c, NULL), GQ_OK);
    gq_compare_finish(&c);
    const gq_cmp_fig *t = fig(&c, "stress max temperature gpu:0");
    assert_non_null(t);
    assert_true(t->absolute);
    assert_true(isnan(t->delta_pct[1]));
    assert_true(fabs(t->delta_abs[1] - 15.0) < 1e-9);
    assert_true(t->regression[1]);
    gq_compare_free(&c);
    free(a);
    free(b);
    gq_compare_init(&c, 5);
    a = root("NVIDIA H200", 60, 80, 1700);
    b = root("NVIDIA H200", 60, 85, 1700);
    gq_compare_add(&c, "a", NULL, a, NULL);
    gq_compare_add(&c, "b", NULL, b, NULL);
    gq_compare_finish(&c);
    assert_false(fig(&c, "stress max temperature gpu:0")->regression[1]);
    assert_int_equal(c.nregressions, 0);
    gq_compare_free(&c);
    free(a);
    free(b);
}

/* Different GPU models, or stresses of different lengths, are refused;
 * with across_models every figure says why, and a worse one differs but does
 * not regress. */
static void test_across_models(void **state)
{
    (void)state;
    gq_compare c;
    gq_err e = {0};
    gq_compare_init(&c, 5);
    gq_cmp_doc *a = root("NVIDIA H200", 60, 40, 1700), *b = root("NVIDIA A100-SXM4-80GB", 60, 40, 1400);
    gq_compare_add(&c, "h200.json", NULL, a, NULL);
    gq_compare_add(&c, "a100.json", NULL, b, NULL);
    assert_int_equal(gq_compare_check(&c, &e), GQ_E_USAGE);
    assert_non_null(strstr(e.msg, "h200.json has NVIDIA H200 and a100.json has NVIDIA A100-SXM4-80GB"));
    assert_non_null(strstr(e.msg, "--across-models"));
    c.across_models = true;
    assert_int_equal(gq_compare_check(&c, NULL), GQ_OK);
    gq_compare_finish(&c);
    const gq_cmp_fig *clk = fig(&c, "stress average SM clock gpu:0");
    assert_int_equal(clk->across[1], GQ_CMP_ACROSS_MODEL);
    assert_true(clk->differs[1]); /* 1400 against 1700: -17.6 % */
    assert_false(clk->regression[1]);
    assert_int_equal(c.nregressions, 0);
    assert_int_equal(c.ndiffers, 1);
    gq_compare_free(&c);
    free(b);

    /* the same model, stresses of 60 s and 300 s: only the stress figures are across */
    gq_compare_init(&c, 5);
    b = root("NVIDIA H200", 300, 40, 1500);
    gq_compare_add(&c, "60s.json", NULL, a, NULL);
    gq_compare_add(&c, "300s.json", NULL, b, NULL);
    assert_int_equal(gq_compare_check(&c, &e), GQ_E_USAGE);
    assert_non_null(strstr(e.msg, "ran 60 s and that of 300s.json 300 s"));
    c.across_models = true;
    gq_compare_finish(&c);
    clk = fig(&c, "stress average SM clock gpu:0");
    assert_int_equal(clk->across[1], GQ_CMP_ACROSS_STRESS);
    assert_false(clk->regression[1]);
    assert_true(clk->differs[1]);
    gq_compare_free(&c);
    free(a);
    free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_deltas_and_regressions),
        cmocka_unit_test(test_huge_value_whole),
        cmocka_unit_test(test_keys),
        cmocka_unit_test(test_temperature_in_degrees),
        cmocka_unit_test(test_across_models),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
