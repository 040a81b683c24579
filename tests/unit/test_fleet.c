/* The fleet's analysis: figures lined up across nodes, medians, outliers in
 * the right direction, flagged nodes and the fleet's verdict and exit code. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "analysis/fleet.h"
#include "render/analysis_render.h"

/* A card document with one GPU's stress figures and one host bandwidth record. */
static json_t *doc(const char *verdict, bool complete, double temp, double clock)
{
    return json_pack("{s:{s:s, s:b, s:s}, s:{s:[{s:i, s:f, s:f}]}}", "card", "verdict", verdict, "complete",
                     complete, "hostname", "sim", "stress", "gpus", "gpu", 0, "temp_max_c", temp,
                     "sm_clock_avg_mhz", clock);
}

static gq_recordset h2d(double gbps)
{
    gq_recordset rs = {0};
    gq_record r;
    memset(&r, 0, sizeof r);
    snprintf(r.test, sizeof r.test, "host_to_device_set");
    r.method = GQ_METHOD_CE;
    r.src = (gq_endpoint){GQ_EP_HOST, GQ_NUMA_LOCAL};
    r.dst = (gq_endpoint){GQ_EP_GPU, 0};
    r.direction = GQ_DIR_H2D;
    r.bytes = 256u << 20;
    r.value.median = gbps;
    r.valid = true;
    assert_int_equal(gq_records_push(&rs, &r), 0);
    return rs;
}

static void add(gq_fleet *f, int rank, const char *verdict, bool complete, double temp, double clock,
                double bw)
{
    json_t *d = doc(verdict, complete, temp, clock);
    gq_recordset rs = h2d(bw);
    gq_err err = {0};
    assert_int_equal(gq_fleet_add_card(f, rank, "n", d, &rs, &err), 0);
    gq_records_free(&rs);
    json_decref(d);
}

static void test_outliers_both_directions(void **state)
{
    (void)state;
    gq_fleet f;
    gq_err err = {0};
    gq_fleet_init(&f, 5);
    add(&f, 0, "pass", true, 60, 1700, 55);
    add(&f, 1, "pass", true, 61, 1690, 40);     /* slow host path */
    add(&f, 2, "pass", true, 80, 1705, 55.5);   /* hot */
    add(&f, 3, "pass", true, 60.5, 1698, 54.8); /* within 5 % */
    assert_int_equal(gq_fleet_finish(&f, &err), 0);
    assert_int_equal(f.ncompared, 3);
    assert_int_equal(f.nout, 2);
    assert_int_equal(f.out[0].node, 1);
    assert_true(f.out[0].delta_pct < -5);
    assert_string_equal(f.fig[f.out[0].fig].unit, "GB/s");
    assert_int_equal(f.out[1].node, 2);
    /* temperatures in degrees: 80 against the median 60.75 is +19.25 °C, no % */
    assert_true(isnan(f.out[1].delta_pct));
    assert_true(fabs(f.out[1].delta_abs - 19.25) < 1e-9);
    assert_true(fabs(f.out[1].median - 60.75) < 1e-9); /* mean of the middle two of four */
    assert_false(f.node[0].flagged);
    assert_true(f.node[1].flagged);
    assert_true(f.node[2].flagged);
    assert_false(f.node[3].flagged);
    assert_string_equal(f.verdict, "warn");
    assert_int_equal(f.exit_code, 4);
    json_t *j = gq_fleet_to_json(&f);
    assert_non_null(j);
    assert_int_equal(json_array_size(json_object_get(j, "outliers")), 2);
    assert_int_equal(json_array_size(json_object_get(j, "flagged")), 2);
    json_decref(j);
    gq_fleet_free(&f);
}

/* A node of a mixed fleet: its GPU model and stress duration. */
static void add_model(gq_fleet *f, int rank, const char *model, double stress_s, double temp, double bw)
{
    json_t *d =
        json_pack("{s:{s:s, s:b, s:s}, s:[{s:i, s:s}], s:{s:f, s:[{s:i, s:f, s:f}]}}", "card", "verdict",
                  "pass", "complete", true, "hostname", "sim", "gpus", "index", 0, "name", model, "stress",
                  "duration_s", stress_s, "gpus", "gpu", 0, "temp_max_c", temp, "sm_clock_avg_mhz", 1700.0);
    gq_recordset rs = h2d(bw);
    gq_err err = {0};
    assert_int_equal(gq_fleet_add_card(f, rank, "n", d, &rs, &err), 0);
    gq_records_free(&rs);
    json_decref(d);
}

/* Four H200 nodes at 55 GB/s and three A100 nodes at 25: a single median
 * (55) would make every A100 an outlier. Grouped by model, none is, and the
 * one slow A100 (20 GB/s against its group's 25) is. A 300 s stress runs
 * hotter than a 60 s one: its node is grouped apart, not an outlier. */
static void test_groups(void **state)
{
    (void)state;
    gq_fleet f;
    gq_err err = {0};
    gq_fleet_init(&f, 5);
    for (int i = 0; i < 4; i++)
        add_model(&f, i, "NVIDIA H200", 60, 60, 55);
    add_model(&f, 4, "NVIDIA A100-SXM4-80GB", 60, 60, 25);
    add_model(&f, 5, "NVIDIA A100-SXM4-80GB", 60, 60, 25);
    add_model(&f, 6, "NVIDIA A100-SXM4-80GB", 60, 60, 20);
    add_model(&f, 7, "NVIDIA H200", 300, 75, 55);
    assert_int_equal(gq_fleet_finish(&f, &err), 0);
    assert_int_equal(f.ngroups, 3);
    assert_int_equal(f.node[0].group, f.node[3].group);
    assert_true(f.node[4].group != f.node[0].group);
    assert_true(f.node[7].group != f.node[0].group);
    assert_int_equal(f.groups[f.node[4].group].nnodes, 3);
    assert_int_equal(f.nout, 1);
    assert_int_equal(f.out[0].node, 6);
    assert_true(fabs(f.out[0].median - 25) < 1e-9);
    assert_true(fabs(f.out[0].delta_pct + 20) < 1e-9);
    assert_false(f.node[4].flagged);
    assert_false(f.node[7].flagged);
    json_t *j = gq_fleet_to_json(&f);
    assert_int_equal(json_array_size(json_object_get(j, "groups")), 3);
    json_decref(j);
    gq_fleet_free(&f);
}

static void test_verdicts(void **state)
{
    (void)state;
    gq_fleet f;
    gq_err err = {0};
    /* all pass and alike: pass, 0 */
    gq_fleet_init(&f, 5);
    add(&f, 0, "pass", true, 60, 1700, 55);
    add(&f, 1, "pass", true, 60, 1700, 55);
    assert_int_equal(gq_fleet_finish(&f, &err), 0);
    assert_int_equal(f.exit_code, 0);
    assert_int_equal(f.nflagged, 0);
    gq_fleet_free(&f);
    /* an incomplete card: 5, and the node is flagged */
    gq_fleet_init(&f, 5);
    add(&f, 0, "pass", true, 60, 1700, 55);
    add(&f, 1, "warn", false, 60, 1700, 55);
    assert_int_equal(gq_fleet_finish(&f, &err), 0);
    assert_string_equal(f.node[1].verdict, "incomplete");
    assert_int_equal(f.exit_code, 5);
    assert_true(f.node[1].flagged);
    gq_fleet_free(&f);
    /* a failed card or a card that did not run: 1 */
    gq_fleet_init(&f, 5);
    add(&f, 0, "fail", true, 60, 1700, 55);
    assert_int_equal(gq_fleet_add_error(&f, 1, "m", "no GPU", &err), 0);
    assert_int_equal(gq_fleet_finish(&f, &err), 0);
    assert_int_equal(f.exit_code, 1);
    assert_string_equal(f.node[1].verdict, "error");
    assert_string_equal(f.node[1].label, "m-rank1");
    assert_int_equal(f.ncompared, 0); /* one node with figures: no median */
    gq_fleet_free(&f);
    /* a node whose card has no verdict gpuqual writes is an error, never a pass: 1 */
    gq_fleet_init(&f, 5);
    add(&f, 0, "pass", true, 60, 1700, 55);
    add(&f, 1, "PASS", true, 60, 1700, 55);
    assert_int_equal(gq_fleet_finish(&f, &err), 0);
    assert_string_equal(f.node[1].verdict, "error");
    assert_int_equal(f.node[1].exit_code, 1);
    assert_int_equal(f.exit_code, 1);
    gq_fleet_free(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_outliers_both_directions),
        cmocka_unit_test(test_verdicts),
        cmocka_unit_test(test_groups),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
