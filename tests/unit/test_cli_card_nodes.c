/* The node summaries typed for --prom and --junit (doc/card_summary.h,
 * gq_card_nodes): what a summary leaves out stays none, so each renderer
 * keeps its own word for it (a fleet node's checks have no text: JUnit says
 * "failed"; a card's check with an empty text says nothing), and a node whose
 * card did not run (cli/textfiles.h, gq_cli_failed_node). */
#include <jansson.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cli/textfiles.h"
#include "doc/card_summary.h"
#include "render/junit.h"
#include "render/prometheus.h"

static char *buf;
static size_t len;

static void render_junit(const gq_card_nodes *l)
{
    free(buf);
    buf = NULL;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    gq_junit_nodes(f, l, GQ_JUNIT_WARN_SKIPPED);
    fclose(f);
}

/* A fleet node's summary: no text, a null figure and reason, a rank. */
static void test_absent_is_none(void **state)
{
    (void)state;
    json_t *nodes = json_pack("[{s:s, s:i, s:s, s:i, s:b, s:[{s:s, s:s, s:s, s:s, s:n, s:n, s:s}, "
                              "{s:s, s:s, s:s, s:s, s:s}, i]}, s]",
                              "hostname", "n1", "rank", 3, "verdict", "fail", "exit_code", 1, "complete", 1,
                              "checks", "id", "h2d", "subject", "gpu:0", "verdict", "fail", "evidence",
                              "measured", "evidence_reason", "figure", "unit", "GB/s", "id", "d2h", "verdict",
                              "fail", "evidence", "measured", "text", "", "step", "host", 7, "not a node");
    assert_non_null(nodes);
    gq_card_nodes l;
    gq_card_nodes_init(&l);
    assert_int_equal(gq_card_nodes_from_json(nodes, &l), 0);
    assert_int_equal(l.n, 2);
    const gq_card_node *n = &l.node[0];
    assert_string_equal(n->hostname, "n1");
    assert_true(n->has_rank);
    assert_int_equal(n->rank, 3);
    assert_int_equal(n->exit_code, 1);
    assert_true(n->complete);
    assert_true(isnan(n->elapsed_s));
    assert_null(n->error);
    assert_int_equal(n->nchecks, 3);
    assert_null(n->checks[0].text);
    assert_null(n->checks[0].reason);
    assert_null(n->checks[0].step);
    assert_true(isnan(n->checks[0].figure));
    assert_true(isnan(n->checks[0].time_s));
    assert_string_equal(n->checks[1].text, "");
    assert_string_equal(n->checks[1].step, "host");
    assert_null(n->checks[1].subject);
    /* a check that is not an object: every field none */
    assert_null(n->checks[2].id);
    assert_null(n->checks[2].verdict);
    assert_true(isnan(n->checks[2].figure));
    /* a node that is not an object: no hostname, no rank, no checks */
    assert_null(l.node[1].hostname);
    assert_false(l.node[1].has_rank);
    assert_int_equal(l.node[1].nchecks, 0);
    render_junit(&l);
    assert_non_null(strstr(buf, "name=\"h2d gpu:0\">\n      <failure type=\"fail\" message=\"failed\"/>"));
    assert_non_null(strstr(buf, "name=\"d2h\">\n      <failure type=\"fail\" message=\"\"/>"));
    assert_non_null(strstr(buf, "name=\"check\">\n      <skipped message=\"not measured (unknown)\"/>"));
    assert_non_null(strstr(buf, "<testsuite name=\"gpuqual card n1 rank 3\" tests=\"3\" failures=\"2\""));
    assert_non_null(strstr(buf, "<testsuite name=\"gpuqual card node\" tests=\"0\""));
    gq_card_nodes_free(&l);
    assert_int_equal(l.n, 0);
    /* not an array: no node */
    assert_int_equal(gq_card_nodes_from_json(json_object_get(json_array_get(nodes, 0), "hostname"), &l), 0);
    assert_int_equal(l.n, 0);
    json_decref(nodes);
}

static void test_from_doc(void **state)
{
    (void)state;
    json_t *doc = json_pack("{s:s, s:{s:s}}", "kind", "run", "host", "hostname", "h");
    gq_card_node n;
    memset(&n, 0, sizeof n);
    assert_int_equal(gq_card_node_from_doc(doc, &n), 1); /* no card section */
    json_object_set_new(doc, "card",
                        json_pack("{s:s, s:i, s:f, s:[{s:s, s:s, s:s}], s:[{s:s, s:f}]}", "verdict", "pass",
                                  "exit_code", 0, "elapsed_s", 9.5, "checks", "id", "c", "verdict", "pass",
                                  "step", "identity", "plan", "step", "identity", "elapsed_s", 2.0));
    gq_card_nodes l;
    gq_card_nodes_init(&l);
    gq_card_node *p = gq_card_nodes_add(&l);
    assert_non_null(p);
    assert_int_equal(gq_card_node_from_doc(doc, p), 0);
    assert_string_equal(p->hostname, "h"); /* the document's host */
    assert_true(p->complete);
    assert_true(p->elapsed_s == 9.5);
    assert_int_equal(p->nchecks, 1);
    assert_string_equal(p->checks[0].evidence, "measured"); /* card_version 1: a pass was measured */
    assert_true(p->checks[0].time_s == 2.0);
    assert_string_equal(p->checks[0].text, "");
    gq_card_nodes_free(&l);
    json_decref(doc);
}

static void test_failed_node(void **state)
{
    (void)state;
    gq_card_nodes l;
    gq_card_nodes_init(&l);
    gq_card_node *n = gq_card_nodes_add(&l);
    assert_int_equal(gq_cli_failed_node(n, NULL, "timed out"), 0);
    assert_string_equal(n->hostname, "unknown");
    assert_string_equal(n->verdict, "fail");
    assert_int_equal(n->exit_code, 1);
    assert_false(n->complete);
    assert_string_equal(n->error, "the card did not run: timed out");
    n = gq_card_nodes_add(&l);
    assert_int_equal(gq_cli_failed_node(n, "h2", NULL), 0);
    assert_string_equal(n->error, "the card did not run: rank 0 received nothing from this node");
    render_junit(&l);
    assert_non_null(strstr(buf, "<testsuites name=\"gpuqual\" tests=\"2\" failures=\"2\" errors=\"0\">"));
    assert_non_null(strstr(buf,
                           "classname=\"gpuqual.card.h2\" name=\"card\">\n      <failure type=\"error\" "
                           "message=\"the card did not run: rank 0 received nothing from this node\"/>"));
    gq_card_nodes_free(&l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_absent_is_none),
        cmocka_unit_test(test_from_doc),
        cmocka_unit_test(test_failed_node),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    free(buf);
    return rc;
}
