/* The domains document's JSON (src/doc/domains_json.c): a boundary left
 * open is written with its GPUs, gap, interval and pairs; domain_analysis
 * read back refuses a value of the wrong type with one line naming it. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include <cmocka.h>

#include "doc/analysis_json.h"

static gq_domains d;

static void test_open_boundary_written(void **state)
{
    (void)state;
    memset(&d, 0, sizeof d);
    d.nopen = 1;
    gq_domain_open *u = &d.open[0];
    u->gpus = 1ull << 0 | 1ull << 3 | 1ull << 63;
    u->lo_gbps = 10;
    u->hi_gbps = 40;
    u->worst_pct = 20;
    u->best_pct = 60;
    u->npairs = 2;
    u->pair_a[0] = 0;
    u->pair_b[0] = 3;
    u->pair_a[1] = 3;
    u->pair_b[1] = 63;
    snprintf(u->text, sizeof u->text, "GPUs 0, 3 and 63: open");
    json_t *j = gq_domains_to_json(&d);
    assert_non_null(j);
    json_t *und = json_object_get(json_object_get(j, "domain_analysis"), "undetermined");
    assert_int_equal(json_array_size(und), 1);
    char *s = json_dumps(json_array_get(und, 0), JSON_COMPACT | JSON_PRESERVE_ORDER);
    assert_string_equal(s, "{\"decision\":\"domain_boundary\",\"gpus\":[0,3,63],\"gap_gbps\":[10.0,40.0],"
                           "\"gap_interval_pct\":[20.0,60.0],\"pairs\":[[0,3],[3,63]],"
                           "\"text\":\"GPUs 0, 3 and 63: open\"}");
    free(s);
    json_decref(j);
}

static int read_doc(const char *text, gq_err *err)
{
    json_error_t je;
    json_t *doc = json_loads(text, 0, &je);
    if (!doc)
        fail_msg("bad test JSON: %s", je.text);
    int rc = gq_domains_from_json("f.json", doc, 4, &d, err);
    json_decref(doc);
    return rc;
}

static void test_analysis_refused(void **state)
{
    (void)state;
    gq_err err = {0};
    assert_int_equal(read_doc("{\"domains\":[[0,1]],\"domain_analysis\":\"x\"}", &err), GQ_E_USAGE);
    assert_string_equal(err.msg, "f.json: domain_analysis: is \"x\", expected an object");
    assert_int_equal(read_doc("{\"domains\":[[0,1]],\"domain_analysis\":{\"split\":\"yes\"}}", &err),
                     GQ_E_USAGE);
    assert_non_null(strstr(err.msg, "f.json: domain_analysis.split: is \"yes\""));
    assert_int_equal(read_doc("{\"domains\":[[0,1]],\"domain_analysis\":{\"chained\":[true,false]}}", &err),
                     GQ_E_USAGE);
    assert_string_equal(
        err.msg, "f.json: domain_analysis.chained: is a list, expected a list of one boolean per domain");
    assert_int_equal(read_doc("{\"domains\":[[0,1]],\"domain_analysis\":{\"chained\":5}}", &err), GQ_E_USAGE);
    assert_string_equal(err.msg,
                        "f.json: domain_analysis.chained: is 5, expected a list of one boolean per domain");
    assert_int_equal(read_doc("{\"domains\":[[0,1],[2]],\"domain_analysis\":{\"chained\":[true,5]}}", &err),
                     GQ_E_USAGE);
    assert_non_null(strstr(err.msg, "f.json: domain_analysis.chained[1]: is 5"));
    assert_int_equal(
        read_doc("{\"domains\":[[0,1],[2]],\"domain_analysis\":{\"chained\":[false,true]}}", &err), GQ_OK);
    assert_false(d.chained[0]);
    assert_true(d.chained[1]);
    assert_int_equal(d.ndomains, 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_open_boundary_written),
        cmocka_unit_test(test_analysis_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
