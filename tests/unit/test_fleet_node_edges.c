/* A fleet node summary read back (src/doc/fleet_node.c): optional lists may
 * be absent, a check without evidence reads as "unknown", and each value of
 * the wrong type is refused with one line naming it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include <cmocka.h>

#include "doc/analysis_json.h"
#include "doc/fleet_doc.h"

#define HEAD "{\"kind\":\"fleet-node\",\"schema_version\":2,\"node\":{\"hostname\":\"h\",\"rank\":0,"
#define REQ "\"verdict\":\"pass\",\"exit_code\":0"

static gq_node_summary s;

static int read_node(const char *text, gq_err *err)
{
    json_error_t je;
    json_t *j = json_loads(text, 0, &je);
    if (!j)
        fail_msg("bad test JSON %s: %s", text, je.text);
    int rc = gq_node_summary_from_json("rank 3", j, &s, err);
    json_decref(j);
    return rc;
}

static const struct {
    const char *text, *want;
} refused[] = {
    {"{\"kind\":\"fleet-node\",\"schema_version\":1,\"node\":{}}",
     "rank 3: schema_version: is 1, expected 2"},
    {"{\"kind\":\"fleet-node\",\"schema_version\":2,\"node\":\"x\"}",
     "rank 3: node: is \"x\", expected an object"},
    {HEAD REQ "}}", "rank 3: node.complete: is missing, expected true or false"},
    {HEAD REQ ",\"complete\":true,\"checks\":\"x\"}}",
     "rank 3: node.checks: is \"x\", expected a list of at most 256 checks"},
    {HEAD REQ ",\"complete\":true,\"checks\":[\"x\"]}}",
     "rank 3: node.checks[0]: is \"x\", expected an object {id, subject, verdict, ...}"},
    {HEAD REQ ",\"complete\":true,\"figures\":\"x\"}}",
     "rank 3: node.figures: is \"x\", expected an object {key: number}"},
    {HEAD REQ ",\"complete\":true,\"identity\":\"x\"}}",
     "rank 3: node.identity: is \"x\", expected a list of at most 64 GPUs"},
};

static void test_refused(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
        gq_err err = {0};
        int rc = read_node(refused[i].text, &err);
        if (rc != GQ_E_USAGE || strcmp(err.msg, refused[i].want))
            fail_msg("%s: rc %d '%s', want '%s'", refused[i].text, rc, err.msg, refused[i].want);
    }
    gq_err err = {0};
    assert_int_equal(read_node(HEAD REQ ",\"complete\":true,\"checks\":[{\"id\":\"a\",\"verdict\":\"pass\","
                                        "\"evidence_reason\":5}]}}",
                               &err),
                     GQ_E_USAGE);
    assert_non_null(strstr(err.msg, "rank 3: node.checks[0].evidence_reason: is 5"));
}

static void test_accepted(void **state)
{
    (void)state;
    gq_err err = {0};
    assert_int_equal(read_node(HEAD REQ ",\"complete\":false}}", &err), GQ_OK);
    assert_int_equal(s.nchecks, 0);
    assert_false(s.complete);
    gq_node_summary_free(&s);
    assert_int_equal(
        read_node(HEAD REQ ",\"complete\":true,\"checks\":null,\"figures\":null,\"identity\":null}}", &err),
        GQ_OK);
    gq_node_summary_free(&s);
    assert_int_equal(read_node(HEAD REQ ",\"complete\":true,\"checks\":[{\"id\":\"a\",\"verdict\":\"pass\"},"
                                        "{\"id\":\"b\",\"verdict\":\"warn\",\"evidence\":\"measured\","
                                        "\"evidence_reason\":null}]}}",
                               &err),
                     GQ_OK);
    assert_int_equal(s.nchecks, 2);
    assert_string_equal(s.checks[0].evidence, "unknown");
    assert_string_equal(s.checks[1].evidence, "measured");
    assert_string_equal(s.checks[1].reason, "");
    gq_node_summary_free(&s);
    /* a card document without its card section */
    json_t *doc = json_pack("{s:i}", "schema_version", 2);
    gq_recordset rs = {0};
    assert_int_equal(gq_node_summary_from_card(doc, &rs, 0, "", &s, &err), GQ_E_USAGE);
    assert_string_equal(err.msg, "the card document has no card section");
    json_decref(doc);
}

/* A saved fleet document: its section, its nodes and its threshold are
 * required; a node entry that is not an object is refused by index. */
static void test_fleet_doc(void **state)
{
    (void)state;
    static const struct {
        const char *text, *want;
    } bad[] = {
        {"{\"fleet\":[]}", "f.json: fleet: expected the fleet section (an object)"},
        {"{\"fleet\":{\"nodes\":[]}}", "f.json: fleet.nodes: expected a list of 1 or more nodes"},
        {"{\"fleet\":{\"nodes\":[1],\"threshold_pct\":0}}",
         "f.json: fleet.threshold_pct: expected a number above 0 and below 1000"},
        {"{\"fleet\":{\"nodes\":[1],\"threshold_pct\":\"5\"}}",
         "f.json: fleet.threshold_pct: expected a number above 0 and below 1000"},
    };
    gq_fleet_doc d;
    gq_err err = {0};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        json_t *j = json_loads(bad[i].text, 0, NULL);
        assert_non_null(j);
        int rc = gq_fleet_doc_read(j, "f.json", &d, &err);
        json_decref(j);
        if (rc != GQ_E_USAGE || strcmp(err.msg, bad[i].want))
            fail_msg("%s: rc %d '%s', want '%s'", bad[i].text, rc, err.msg, bad[i].want);
    }
    json_t *j = json_loads("{\"fleet\":{\"nodes\":[1],\"threshold_pct\":5,\"threshold_c\":3}}", 0, NULL);
    assert_int_equal(gq_fleet_doc_read(j, "f.json", &d, &err), GQ_OK);
    assert_int_equal(d.n, 1);
    assert_true(d.threshold_pct == 5 && d.threshold_c == 3);
    json_t *p = NULL;
    bool is_error = false;
    assert_int_equal(gq_fleet_doc_payload(&d, "f.json", 0, &p, &is_error, &err), GQ_E_USAGE);
    assert_string_equal(err.msg, "f.json: fleet.nodes[0]: expected an object");
    assert_null(p);
    json_decref(j);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_accepted),
        cmocka_unit_test(test_fleet_doc),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
