/* `gpuqual fleet`'s JSON section and printed summary on fleets no simulated
 * run gives: a node whose card did not run (its error in the JSON), a fleet
 * of one node (the Markdown says it has no median), a temperature outlier
 * (its delta in °C) and more outliers than the terminal shows; the HTML
 * page's cells for checks not measured on some subjects; a control
 * character in a check's text in JUnit XML. Written for
 * issue 30 (lines no test ran). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "doc/card_summary.h"
#include "render/analysis_render.h"
#include "render/junit.h"

static char *print(const gq_fleet *f, bool md, int max_outliers)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *o = open_memstream(&buf, &len);
    assert_non_null(o);
    gq_fleet_print(o, f, md, max_outliers);
    fclose(o);
    return buf;
}

static void want(const char *out, const char *s)
{
    if (!strstr(out, s))
        fail_msg("no '%s' in:\n%s", s, out);
}

static void node(gq_fleet_node *n, int rank, const char *verdict, const char *error)
{
    memset(n, 0, sizeof *n);
    snprintf(n->label, sizeof n->label, "n%d-rank%d", rank, rank);
    snprintf(n->host, sizeof n->host, "n%d", rank);
    snprintf(n->card_host, sizeof n->card_host, "sim");
    snprintf(n->verdict, sizeof n->verdict, "%s", verdict);
    snprintf(n->error, sizeof n->error, "%s", error);
    n->rank = rank;
    n->stress_s = NAN;
    n->group = error[0] ? -1 : 0;
}

/* One node, whose card did not run. */
static void one_node_error(void **state)
{
    (void)state;
    gq_fleet_node nodes[1];
    node(&nodes[0], 0, "error", "the card did not run: no GPU");
    gq_fleet f = {.threshold_pct = 5, .threshold_c = 5, .nnodes = 1, .node = nodes, .exit_code = 1};
    snprintf(f.verdict, sizeof f.verdict, "fail");
    json_t *j = gq_fleet_to_json(&f);
    assert_non_null(j);
    json_t *n0 = json_array_get(json_object_get(j, "nodes"), 0);
    assert_string_equal(json_string_value(json_object_get(n0, "error")), "the card did not run: no GPU");
    assert_true(json_is_null(json_object_get(n0, "group")));
    json_decref(j);
    char *md = print(&f, true, 0);
    want(md, "| 0 | n0-rank0 | sim | error | 0 | the card did not run: no GPU |\n");
    want(md, "\nA fleet of one node has no median to compare against: only its card's verdict counts.\n");
    free(md);
    char *txt = print(&f, false, 0);
    if (strstr(txt, "A fleet of one node"))
        fail_msg("the terminal summary has the Markdown's note:\n%s", txt);
    free(txt);
}

/* Two nodes, three outliers (one a temperature): the terminal shows two and
 * says how many more there are; the Markdown shows all of them. */
static void outliers_more_and_absolute(void **state)
{
    (void)state;
    gq_fleet_node nodes[2];
    node(&nodes[0], 0, "pass", "");
    node(&nodes[1], 1, "warn", "");
    nodes[1].noutliers = 3;
    gq_fleet_fig figs[2] = {{.key = "stress/gpu0/temp_max_c", .unit = "°C", .absolute = true},
                            {.key = "host_to_device_set/gpu0", .unit = "GB/s", .higher_is_better = true}};
    gq_fleet_outlier outs[3] = {
        {.node = 1, .fig = 0, .value = 88, .median = 81, .delta_pct = NAN, .delta_abs = 7},
        {.node = 1, .fig = 1, .value = 40, .median = 50, .delta_pct = -20, .delta_abs = -10},
        {.node = 1, .fig = 1, .value = 41, .median = 50, .delta_pct = -18, .delta_abs = -9},
    };
    gq_fleet f = {.threshold_pct = 5,
                  .threshold_c = 5,
                  .nnodes = 2,
                  .node = nodes,
                  .nfig = 2,
                  .fig = figs,
                  .nout = 3,
                  .out = outs};
    snprintf(f.verdict, sizeof f.verdict, "warn");
    char *txt = print(&f, false, 2);
    want(txt, "(group 0 median 81.00, +7.0 °C)\n");
    want(txt, "(group 0 median 50.00, -20.0%)\n");
    want(txt, "  (1 more in fleet.json and fleet.md)\n");
    if (strstr(txt, "-18.0%"))
        fail_msg("the terminal shows more outliers than asked:\n%s", txt);
    free(txt);
    char *md = print(&f, true, 2);
    want(md, "| n1-rank1 | stress/gpu0/temp_max_c | 88.00 °C | 81.00 °C | +7.0 °C |\n");
    want(md, "| -18.0% |\n");
    if (strstr(md, "more in fleet.json") || strstr(md, "A fleet of one node"))
        fail_msg("the Markdown has a line it should not:\n%s", md);
    free(md);
    json_t *j = gq_fleet_to_json(&f);
    assert_null(json_object_get(json_array_get(json_object_get(j, "nodes"), 1), "error"));
    json_decref(j);
}

static void check(gq_card_node *n, const char *id, const char *subject, const char *verdict,
                  const char *evidence, const char *reason)
{
    gq_card_node_check *c = &n->checks[n->nchecks++];
    memset(c, 0, sizeof *c);
    c->id = strdup(id);
    c->subject = strdup(subject);
    c->verdict = strdup(verdict);
    c->evidence = evidence ? strdup(evidence) : NULL;
    c->reason = reason ? strdup(reason) : NULL;
    c->figure = c->time_s = NAN;
}

/* A heatmap cell with a subject not measured reads "not measured" and says
 * how many subjects were not, and why (the reason, else the evidence, else
 * "unknown"); the outliers table gives a
 * temperature's delta in °C. */
static void html_not_measured(void **state)
{
    (void)state;
    gq_fleet_node fn[2];
    node(&fn[0], 0, "pass", "");
    node(&fn[1], 1, "warn", "");
    gq_fleet_fig figs[2] = {{.key = "stress/gpu0/temp_max_c", .unit = "°C", .absolute = true},
                            {.key = "host_to_device_set/gpu0", .unit = "GB/s", .higher_is_better = true}};
    gq_fleet_outlier outs[2] = {
        {.node = 1, .fig = 0, .value = 88, .median = 81, .delta_pct = NAN, .delta_abs = 7},
        {.node = 1, .fig = 1, .value = 40, .median = 50, .delta_pct = -20, .delta_abs = -10},
    };
    gq_fleet f = {.threshold_pct = 5,
                  .threshold_c = 5,
                  .nnodes = 2,
                  .node = fn,
                  .nfig = 2,
                  .fig = figs,
                  .nout = 2,
                  .out = outs};
    snprintf(f.verdict, sizeof f.verdict, "warn");
    gq_card_nodes l;
    gq_card_nodes_init(&l);
    for (int i = 0; i < 2; i++) {
        gq_card_node *n = gq_card_nodes_add(&l);
        assert_non_null(n);
        n->checks = calloc(4, sizeof *n->checks);
        assert_non_null(n->checks);
    }
    check(&l.node[0], "h2d", "gpu:0", "pass", "measured", NULL);
    check(&l.node[1], "h2d", "gpu:0", "pass", "measured", NULL);
    check(&l.node[1], "h2d", "gpu:1", "pass", "skipped", "budget");
    check(&l.node[1], "d2h", "gpu:0", "warn", NULL, NULL);
    check(&l.node[1], "p2p", "gpu:0", "fail", "failed", NULL);
    char *buf = NULL;
    size_t len = 0;
    FILE *o = open_memstream(&buf, &len);
    assert_non_null(o);
    gq_err e = {0};
    assert_int_equal(gq_fleet_render_html(o, &f, &l, &e), 0);
    fclose(o);
    want(buf, "n1-rank1 h2d: not measured over 2 subjects; 1 not measured (budget)</title>");
    want(buf, "n0-rank0 h2d: pass over 1 subject</title>");
    want(buf, "n1-rank1 d2h: not measured over 1 subject; 1 not measured (unknown)</title>");
    want(buf, "n1-rank1 p2p: not measured over 1 subject; 1 not measured (failed)</title>");
    want(buf, "<td class=\"r\">88.00 °C</td><td class=\"r\">81.00 °C</td><td class=\"r\">+7.0 °C</td>");
    want(buf, "<td class=\"r\">-20.0%</td>");
    free(buf);
    gq_card_nodes_free(&l);
}

/* A control character in a check's text is a space in the JUnit XML (XML
 * 1.0 does not allow it); a tab stays. */
static void junit_control_character(void **state)
{
    (void)state;
    gq_card_nodes l;
    gq_card_nodes_init(&l);
    gq_card_node *n = gq_card_nodes_add(&l);
    assert_non_null(n);
    n->hostname = strdup("n0");
    n->verdict = strdup("fail");
    n->checks = calloc(1, sizeof *n->checks);
    assert_non_null(n->checks);
    check(n, "h2d", "gpu:0", "fail", "measured", NULL);
    n->checks[0].text = strdup("slow\x01link\tGen4\nretrained");
    char *buf = NULL;
    size_t len = 0;
    FILE *o = open_memstream(&buf, &len);
    assert_non_null(o);
    gq_junit_nodes(o, &l, GQ_JUNIT_WARN_SKIPPED);
    fclose(o);
    want(buf, "<failure type=\"fail\" message=\"slow link\tGen4&#10;retrained\"/>");
    assert_null(strchr(buf, '\x01'));
    free(buf);
    gq_card_nodes_free(&l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(one_node_error),
        cmocka_unit_test(outliers_more_and_absolute),
        cmocka_unit_test(html_not_measured),
        cmocka_unit_test(junit_control_character),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
