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
    /* as the ranks do: the card into its summary, through its JSON, into the fleet */
    gq_node_summary *s = calloc(1, sizeof *s), *back = calloc(1, sizeof *back);
    assert_non_null(s);
    assert_non_null(back);
    assert_int_equal(gq_node_summary_from_card(d, &rs, rank, "fleet/n-rank0", s, &err), 0);
    json_t *j = gq_node_summary_to_json(s, "test");
    assert_int_equal(gq_node_summary_from_json("rank", j, back, &err), 0);
    assert_int_equal(back->nfig, s->nfig);
    assert_int_equal(back->verdict, s->verdict);
    assert_int_equal(gq_fleet_add_summary(f, "n", back, &err), 0);
    gq_node_summary_free(s);
    gq_node_summary_free(back);
    free(s);
    free(back);
    json_decref(j);
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
    gq_node_summary *s = calloc(1, sizeof *s);
    assert_non_null(s);
    assert_int_equal(gq_node_summary_from_card(d, &rs, rank, "fleet/n", s, &err), 0);
    assert_int_equal(gq_fleet_add_summary(f, "n", s, &err), 0);
    gq_node_summary_free(s);
    free(s);
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
    /* the fleet's verdict and exit code, as the fleet computed them */
    assert_true(json_is_integer(json_object_get(j, "exit_code")));
    assert_int_equal(json_integer_value(json_object_get(j, "exit_code")), f.exit_code);
    assert_string_equal(json_string_value(json_object_get(j, "verdict")), f.verdict);
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
    {
        /* as a rank does: the card cannot be summarised, so the node is an error */
        json_t *d = doc("PASS", true, 60, 1700);
        gq_node_summary *s = calloc(1, sizeof *s);
        gq_err serr = {0};
        assert_int_equal(gq_node_summary_from_card(d, NULL, 1, "", s, &serr), GQ_E_USAGE);
        assert_int_equal(gq_fleet_add_error(&f, 1, "n", serr.msg, &err), 0);
        free(s);
        json_decref(d);
    }
    assert_int_equal(gq_fleet_finish(&f, &err), 0);
    assert_string_equal(f.node[1].verdict, "error");
    assert_non_null(strstr(f.node[1].error, "card.verdict: is \"PASS\""));
    assert_int_equal(f.node[1].exit_code, 1);
    assert_int_equal(f.exit_code, 1);
    gq_fleet_free(&f);
}

/* The summary's decoder fails closed, naming the key. */
static void summary_refused(json_t *j, const char *want)
{
    gq_node_summary *s = calloc(1, sizeof *s);
    gq_err err = {0};
    assert_int_equal(gq_node_summary_from_json("rank 2", j, s, &err), GQ_E_USAGE);
    if (!strstr(err.msg, want))
        fail_msg("message '%s' does not hold '%s'", err.msg, want);
    json_decref(j);
    free(s);
}

static json_t *good_summary(void)
{
    json_t *d = doc("warn", true, 60, 1700);
    gq_recordset rs = h2d(55);
    gq_node_summary *s = calloc(1, sizeof *s);
    gq_err err = {0};
    assert_int_equal(gq_node_summary_from_card(d, &rs, 2, "dir", s, &err), 0);
    json_t *j = gq_node_summary_to_json(s, "test");
    assert_string_equal(json_string_value(json_object_get(j, "kind")), "fleet-node");
    json_t *n = json_object_get(j, "node");
    assert_string_equal(json_string_value(json_object_get(n, "verdict")), "warn");
    assert_int_equal(json_integer_value(json_object_get(n, "exit_code")), 4);
    assert_true(json_is_number(
        json_object_get(json_object_get(n, "figures"), "host_to_device_set ce host:local->gpu:0 256 MiB")));
    assert_true(
        json_is_number(json_object_get(json_object_get(n, "figures"), "stress max temperature gpu:0")));
    gq_node_summary_free(s);
    free(s);
    gq_records_free(&rs);
    json_decref(d);
    return j;
}

static void test_summary_refusals(void **state)
{
    (void)state;
    json_t *j = good_summary();
    json_object_set_new(json_object_get(j, "node"), "verdict", json_string("PASS"));
    summary_refused(
        j, "rank 2: node.verdict: is \"PASS\", expected one of \"pass\", \"warn\", \"fail\", \"incomplete\"");
    j = good_summary();
    json_object_del(json_object_get(j, "node"), "verdict");
    summary_refused(j, "node.verdict: is missing");
    j = good_summary();
    json_object_set_new(json_object_get(j, "node"), "complete", json_string("yes"));
    summary_refused(j, "node.complete: is \"yes\", expected true or false");
    j = good_summary();
    json_object_set_new(json_object_get(json_object_get(j, "node"), "figures"), "x", json_string("1"));
    summary_refused(j, "node.figures[\"x\"]: is \"1\", expected a number");
    /* a figure above 1e300 is refused (issue 30: fleet_node.c) */
    j = good_summary();
    json_object_set_new(json_object_get(json_object_get(j, "node"), "figures"), "x", json_real(1.5e300));
    summary_refused(j, "node.figures[\"x\"]: is 1.5e+300, expected a number -1e+300..1e+300 or null");
    j = good_summary();
    json_array_append_new(json_object_get(json_object_get(j, "node"), "identity"),
                          json_pack("{s:i}", "index", 0));
    json_array_append_new(json_object_get(json_object_get(j, "node"), "identity"),
                          json_pack("{s:i}", "index", 0));
    summary_refused(j, "node.identity[1].index: GPU 0 is repeated");
    j = good_summary();
    json_object_set_new(j, "kind", json_string("card"));
    summary_refused(j, "rank 2: kind: is \"card\", expected \"fleet-node\"");
    /* a card whose verdict gpuqual does not write is no summary at all */
    json_t *d = doc("FAIL", true, 60, 1700);
    gq_node_summary *s = calloc(1, sizeof *s);
    gq_err err = {0};
    assert_int_equal(gq_node_summary_from_card(d, NULL, 0, "", s, &err), GQ_E_USAGE);
    assert_non_null(strstr(err.msg, "card.verdict: is \"FAIL\""));
    free(s);
    json_decref(d);
}

/* Each GPU's identity read from the card document's gpus[] (the PCIe link
 * under its document names pcie_gen / pcie_width, -1 where it is not a
 * number), kept through the summary's JSON; the host name falls back to "?". */
static void test_identity_from_card(void **state)
{
    (void)state;
    json_t *d = json_pack("{s:{s:s, s:b}, s:[{s:i, s:s, s:s, s:s, s:i, s:i, s:i, s:i}, {s:i, s:s, s:i}]}",
                          "card", "verdict", "warn", "complete", true, "gpus", "index", 0, "uuid", "GPU-a",
                          "serial", "S1", "vbios", "V1", "pcie_gen_max", 5, "pcie_width_max", 16, "pcie_gen",
                          4, "pcie_width", 8, "index", 3, "pcie_width", "x16", "pcie_gen_max", 4);
    assert_non_null(d);
    gq_err err = {0};
    gq_node_summary *s = calloc(1, sizeof *s), *back = calloc(1, sizeof *back);
    assert_non_null(s);
    assert_non_null(back);
    assert_int_equal(gq_node_summary_from_card(d, NULL, 7, "dir", s, &err), 0);
    assert_int_equal(s->rank, 7);
    assert_int_equal(s->exit_code, 4);
    assert_string_equal(s->hostname, "?");
    assert_int_equal(s->nident, 2);
    assert_int_equal(s->ident[0].index, 0);
    assert_string_equal(s->ident[0].uuid, "GPU-a");
    assert_string_equal(s->ident[0].serial, "S1");
    assert_string_equal(s->ident[0].vbios, "V1");
    assert_int_equal(s->ident[0].pcie_gen_max, 5);
    assert_int_equal(s->ident[0].pcie_width_max, 16);
    assert_int_equal(s->ident[0].pcie_gen_cur, 4);
    assert_int_equal(s->ident[0].pcie_width_cur, 8);
    assert_int_equal(s->ident[1].index, 3);
    assert_int_equal(s->ident[1].pcie_gen_max, 4);
    assert_int_equal(s->ident[1].pcie_width_max, -1);
    assert_int_equal(s->ident[1].pcie_gen_cur, -1);
    assert_int_equal(s->ident[1].pcie_width_cur, -1); /* a string is not a width */
    json_t *j = gq_node_summary_to_json(s, "test");
    assert_int_equal(gq_node_summary_from_json("rank", j, back, &err), 0);
    assert_int_equal(back->nident, 2);
    assert_int_equal(back->ident[0].pcie_gen_max, 5);
    assert_int_equal(back->ident[0].pcie_width_max, 16);
    assert_int_equal(back->ident[0].pcie_gen_cur, 4);
    assert_int_equal(back->ident[0].pcie_width_cur, 8);
    assert_int_equal(back->ident[1].pcie_width_cur, -1);
    assert_string_equal(back->ident[0].serial, "S1");
    json_decref(j);
    gq_node_summary_free(s);
    gq_node_summary_free(back);
    free(s);
    free(back);
    json_decref(d);
}

/* A node that passed, with one figure. */
static void add_fig_node(gq_fleet *f, int rank, const char *key, double v)
{
    gq_node_summary *s = calloc(1, sizeof *s);
    assert_non_null(s);
    gq_node_summary_init(s);
    snprintf(s->hostname, sizeof s->hostname, "n%d", rank);
    s->rank = rank;
    s->verdict = GQ_NODE_PASS;
    s->exit_code = 0;
    s->complete = true;
    assert_int_equal(gq_node_summary_add_fig(s, key, v), 0);
    gq_err err = {0};
    assert_int_equal(gq_fleet_add_summary(f, NULL, s, &err), 0);
    gq_node_summary_free(s);
    free(s);
}

/* A key whose first word ends in "latency" is a latency: ns, lower is
 * better; the slowest node (20 against 10) is the outlier. The lowest value
 * of the first figure counts like any other: the node at 10 among 100s is
 * flagged, with the figure present on all three nodes. */
static void test_latency_key_and_first_value(void **state)
{
    (void)state;
    char unit[8];
    bool hi = true;
    gq_node_fig_unit("p2p_latency gpu:0 -> gpu:1", unit, sizeof unit, &hi);
    assert_string_equal(unit, "ns");
    assert_false(hi);
    gq_node_fig_unit("latency", unit, sizeof unit, &hi);
    assert_string_equal(unit, "ns");
    gq_node_fig_unit("latenc gpu:0", unit, sizeof unit, &hi);
    assert_string_equal(unit, "GB/s");
    assert_true(hi);
    gq_fleet f;
    gq_err err = {0};
    gq_fleet_init(&f, 5);
    add_fig_node(&f, 0, "p2p_latency gpu:0", 10);
    add_fig_node(&f, 1, "p2p_latency gpu:0", 10);
    add_fig_node(&f, 2, "p2p_latency gpu:0", 20);
    assert_int_equal(gq_fleet_finish(&f, &err), 0);
    assert_string_equal(f.fig[0].unit, "ns");
    assert_int_equal(f.nout, 1);
    assert_int_equal(f.out[0].node, 2);
    assert_true(fabs(f.out[0].delta_pct - 100) < 1e-9);
    assert_string_equal(f.verdict, "warn");
    assert_int_equal(f.exit_code, 4);
    gq_fleet_free(&f);
    gq_fleet_init(&f, 5);
    add_fig_node(&f, 0, "host_to_device_set gpu:0", 10);
    add_fig_node(&f, 1, "host_to_device_set gpu:0", 100);
    add_fig_node(&f, 2, "host_to_device_set gpu:0", 100);
    assert_int_equal(gq_fleet_finish(&f, &err), 0);
    assert_int_equal(f.fig[0].present, 3);
    assert_true(f.fig[0].median == 100);
    assert_int_equal(f.nout, 1);
    assert_int_equal(f.out[0].node, 0);
    assert_true(f.node[0].flagged);
    assert_int_equal(f.exit_code, 4);
    gq_fleet_free(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_summary_refusals),   cmocka_unit_test(test_outliers_both_directions),
        cmocka_unit_test(test_verdicts),           cmocka_unit_test(test_groups),
        cmocka_unit_test(test_identity_from_card), cmocka_unit_test(test_latency_key_and_first_value),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
