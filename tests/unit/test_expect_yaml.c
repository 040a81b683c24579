/* Expectations in YAML (src/core/yaml.c read into the same checks as JSON)
 * and --set overrides (gq_expect_set): every shipped YAML example reads as its
 * JSON twin; YAML's hazards (aliases, anchors, duplicate keys, several
 * documents, non-scalar keys) are refused with the file and line; a quoted
 * number stays a string; --set changes one threshold, records what it
 * replaced, and refuses what would break the order of warn and fail. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "analysis/expect.h"
#include "doc/expect_load.h"
#include "core/yaml.h"

static gq_expect ex_a, ex_b;

static void same_expect(const gq_expect *a, const gq_expect *b)
{
    assert_string_equal(a->description, b->description);
    assert_true(a->agree_pct == b->agree_pct);
    assert_true(a->agree_fail_pct == b->agree_fail_pct);
    assert_int_equal(a->nmodels, b->nmodels);
    for (int m = 0; m < a->nmodels; m++) {
        assert_string_equal(a->models[m].match, b->models[m].match);
        assert_string_equal(a->models[m].description, b->models[m].description);
        for (int k = 0; k < GQ_EXK_COUNT; k++) {
            const gq_threshold *x = &a->models[m].th[k], *y = &b->models[m].th[k];
            assert_int_equal(x->set, y->set);
            assert_int_equal(x->has_warn, y->has_warn);
            if (x->set) {
                assert_true(x->fail == y->fail);
                if (x->has_warn)
                    assert_true(x->warn == y->warn);
            }
        }
    }
}

static void examples_yaml_equal_json(void **state)
{
    (void)state;
    static const char *const names[] = {"a100x6", "h200", "rtx4090x8", "rtxpro6000x8", NULL};
    for (int i = 0; names[i]; i++) {
        char j[512], y[512];
        gq_err e = {0};
        snprintf(j, sizeof j, "%s/expect/%s.expect", GQ_EXAMPLES, names[i]);
        snprintf(y, sizeof y, "%s/expect/%s.yaml", GQ_EXAMPLES, names[i]);
        if (gq_expect_load(j, &ex_a, &e))
            fail_msg("%s: %s", j, e.msg);
        if (gq_expect_load(y, &ex_b, &e))
            fail_msg("%s: %s", y, e.msg);
        assert_true(ex_a.nmodels >= 1);
        same_expect(&ex_a, &ex_b);
    }
}

static void refused(const char *text, const char *name, const char *want)
{
    gq_err e = {0};
    int rc = gq_expect_parse(text, name, &ex_a, &e);
    if (rc != GQ_E_USAGE || !strstr(e.msg, want))
        fail_msg("'%s': rc %d, message '%s', want '%s'", text, rc, e.msg, want);
    assert_null(strchr(e.msg, '\n'));
}

static void yaml_hazards_refused(void **state)
{
    (void)state;
    const char *ok = "gpuqual_expect: 1\nmodels:\n  - match: H200\n    h2d_gbps_min: 48\n";
    gq_err e = {0};
    assert_int_equal(gq_expect_parse(ok, "e.yaml", &ex_a, &e), GQ_OK);
    assert_true(ex_a.models[0].th[GQ_EXK_H2D_GBPS_MIN].fail == 48);
    refused("gpuqual_expect: 1\nmodels:\n  - &a\n    match: H200\n  - *a\n", "e.yaml",
            "e.yaml: line 3: anchors");
    refused("gpuqual_expect: 1\nx: &a 1\n", "e.yaml", "line 2: anchors (&name) are not accepted");
    refused("gpuqual_expect: 1\ngpuqual_expect: 1\n", "e.yaml", "line 2: duplicate key 'gpuqual_expect'");
    refused("gpuqual_expect: 1\n---\ngpuqual_expect: 1\n", "e.yaml", "more than one YAML document");
    refused("? [a, b]\n: 1\n", "e.yaml", "a mapping key must be a plain or quoted scalar");
    refused("gpuqual_expect: 1\nmodels: [\n", "e.yaml", "e.yaml: not valid YAML at line");
    refused("# only a comment\n", "e.yaml", "the YAML document is empty");
    /* a quoted number is a string, and the expectations say so */
    refused("gpuqual_expect: 1\nmodels:\n  - match: H200\n    h2d_gbps_min: \"48\"\n", "e.yaml",
            "h2d_gbps_min");
    /* hex is not a number in an expectations file */
    refused("gpuqual_expect: 1\nmodels:\n  - match: H200\n    h2d_gbps_min: 0x30\n", "e.yaml",
            "h2d_gbps_min");
    /* nesting beyond 64 levels */
    char deep[400] = "";
    for (int i = 0; i < 70; i++)
        strcat(deep, "[");
    refused(deep, "e.yaml", "nested deeper than 64");
    /* a line break inside an echoed name never splits the one-line message (found by fuzz_yaml) */
    refused("{\"gpuqual_expect\": 1, \"models\": [{\"match\": \"H200\\nX\", \"h2d_gbps_mn\": 48}]}", "e.json",
            "model 'H200 X': unknown key 'h2d_gbps_mn'");
    /* unknown keys keep their did-you-mean in YAML too */
    refused("gpuqual_expect: 1\nmodels:\n  - match: H200\n    h2d_gbps_mn: 48\n", "e.yaml", "h2d_gbps_min");
}

static void yaml_scalars(void **state)
{
    (void)state;
    json_t *v = NULL;
    gq_err e = {0};
    const char *t = "a: 1\nb: 2.5\nc: true\nd: ~\ne: '7'\nf: text\ng: -3e2\nh: 1.2.3\n";
    assert_int_equal(gq_yaml_to_json(t, strlen(t), "s.yaml", &v, &e), GQ_OK);
    assert_true(json_is_integer(json_object_get(v, "a")));
    assert_true(json_real_value(json_object_get(v, "b")) == 2.5);
    assert_true(json_is_true(json_object_get(v, "c")));
    assert_true(json_is_null(json_object_get(v, "d")));
    assert_string_equal(json_string_value(json_object_get(v, "e")), "7");
    assert_string_equal(json_string_value(json_object_get(v, "f")), "text");
    assert_true(json_real_value(json_object_get(v, "g")) == -300);
    assert_string_equal(json_string_value(json_object_get(v, "h")), "1.2.3");
    json_decref(v);
    /* JSON text still goes to the JSON reader; YAML is chosen by name or content */
    assert_int_equal(gq_yaml_looks_like("x.expect", "{\"a\": 1}"), 0);
    assert_int_equal(gq_yaml_looks_like("x.expect", "# c\n  gpuqual_expect: 1"), 1);
    assert_int_equal(gq_yaml_looks_like("x.YML", "{}"), 1);
}

static void set_overrides(void **state)
{
    (void)state;
    gq_err e = {0};
    char path[512];
    snprintf(path, sizeof path, "%s/expect/h200.yaml", GQ_EXAMPLES);
    assert_int_equal(gq_expect_load(path, &ex_a, &e), GQ_OK);
    /* h200: h2d_gbps_min {warn 53, fail 48} */
    assert_int_equal(gq_expect_set(&ex_a, "h2d_gbps.fail=50", &e), GQ_OK);
    assert_true(ex_a.models[0].th[GQ_EXK_H2D_GBPS_MIN].fail == 50);
    assert_true(ex_a.models[0].th[GQ_EXK_H2D_GBPS_MIN].warn == 53);
    assert_int_equal(ex_a.noverrides, 1);
    assert_string_equal(ex_a.overrides[0].key, "h2d_gbps_min");
    assert_string_equal(ex_a.overrides[0].was, "48");
    /* fail above warn would break the order of a minimum */
    assert_int_equal(gq_expect_set(&ex_a, "h2d_gbps_min.fail=60", &e), GQ_E_USAGE);
    assert_non_null(strstr(e.msg, "a minimum needs warn >= fail"));
    assert_true(ex_a.models[0].th[GQ_EXK_H2D_GBPS_MIN].fail == 50); /* unchanged */
    /* by model */
    assert_int_equal(gq_expect_set(&ex_a, "h200:temp_c.warn=80", &e), GQ_OK);
    assert_true(ex_a.models[0].th[GQ_EXK_TEMP_C_MAX].warn == 80);
    assert_int_equal(gq_expect_set(&ex_a, "A100:temp_c.warn=80", &e), GQ_E_USAGE);
    assert_non_null(strstr(e.msg, "no model matches 'A100'; the expectations have 'H200'"));
    /* relative agreement */
    assert_int_equal(gq_expect_set(&ex_a, "agree.fail=25", &e), GQ_OK);
    assert_true(ex_a.agree_fail_pct == 25);
    assert_int_equal(gq_expect_set(&ex_a, "agree.warn=30", &e), GQ_E_USAGE);
    /* agreement is across every model: a model prefix, or a percentage out of (0, 100], is refused
     * and changes nothing */
    int before = ex_a.noverrides;
    assert_int_equal(gq_expect_set(&ex_a, "h200:agree.fail=24", &e), GQ_E_USAGE);
    assert_non_null(strstr(e.msg, "agree applies to every model; drop 'h200:'"));
    assert_int_equal(gq_expect_set(&ex_a, "agree.fail=0", &e), GQ_E_USAGE);
    assert_non_null(strstr(e.msg, "a percentage above 0 and at most 100"));
    assert_int_equal(gq_expect_set(&ex_a, "agree.fail=101", &e), GQ_E_USAGE);
    assert_true(ex_a.agree_fail_pct == 25);
    assert_int_equal(ex_a.noverrides, before);
    /* malformed */
    assert_int_equal(gq_expect_set(&ex_a, "h2d_gbps=50", &e), GQ_E_USAGE);
    assert_non_null(strstr(e.msg, "expected [MODEL:]CHECK.warn=VALUE"));
    assert_int_equal(gq_expect_set(&ex_a, "h2d_gbps.max=50", &e), GQ_E_USAGE);
    assert_non_null(strstr(e.msg, "use warn or fail"));
    assert_int_equal(gq_expect_set(&ex_a, "h2d_gbps.fail=fast", &e), GQ_E_USAGE);
    assert_int_equal(gq_expect_set(&ex_a, "h2d_gbps.fail=0x30", &e), GQ_E_USAGE);
    assert_int_equal(gq_expect_set(&ex_a, "h2d_gpbs.fail=50", &e), GQ_E_USAGE);
    assert_non_null(strstr(e.msg, "h2d_gbps_min"));
    assert_int_equal(gq_expect_set(&ex_a, "pcie_width.fail=15.5", &e), GQ_E_USAGE);
    assert_non_null(strstr(e.msg, "whole number"));
    /* no expectations file: a catch-all model */
    gq_expect_init(&ex_b);
    assert_int_equal(gq_expect_set(&ex_b, "p2p_gbps.warn=300", &e), GQ_OK);
    assert_int_equal(ex_b.nmodels, 1);
    assert_int_equal(gq_expect_match(&ex_b, "NVIDIA H100 80GB HBM3"), 0);
    assert_true(ex_b.models[0].th[GQ_EXK_P2P_GBPS_MIN].has_warn);
    assert_true(isinf(ex_b.models[0].th[GQ_EXK_P2P_GBPS_MIN].fail));
    assert_string_equal(ex_b.overrides[0].was, "unset");
}

/* --set without a model prefix changes every model, and its "was" lists what
 * each model had, in order ("unset" where a model had none); with a prefix
 * (any case) only that model. A value one model refuses changes no model. */
static void set_over_models(void **state)
{
    (void)state;
    gq_err e = {0};
    const char *t = "gpuqual_expect: 1\nmodels:\n"
                    "  - match: H200\n    h2d_gbps_min: { warn: 53, fail: 48 }\n"
                    "  - match: A100\n    h2d_gbps_min: { warn: 30, fail: 20 }\n"
                    "  - match: L40\n    temp_c_max: 90\n";
    assert_int_equal(gq_expect_parse(t, "e.yaml", &ex_a, &e), GQ_OK);
    assert_int_equal(ex_a.nmodels, 3);
    assert_int_equal(gq_expect_set(&ex_a, "h2d_gbps.fail=10", &e), GQ_OK);
    assert_string_equal(ex_a.overrides[0].was, "48, 20, unset");
    for (int m = 0; m < 3; m++)
        assert_true(ex_a.models[m].th[GQ_EXK_H2D_GBPS_MIN].fail == 10);
    assert_int_equal(gq_expect_set(&ex_a, "h2d_gbps.warn=25", &e), GQ_OK);
    assert_string_equal(ex_a.overrides[1].was, "53, 30, unset");
    assert_int_equal(gq_expect_set(&ex_a, "a100:h2d_gbps.fail=5", &e), GQ_OK);
    assert_string_equal(ex_a.overrides[2].was, "10");
    assert_true(ex_a.models[0].th[GQ_EXK_H2D_GBPS_MIN].fail == 10);
    assert_true(ex_a.models[1].th[GQ_EXK_H2D_GBPS_MIN].fail == 5);
    assert_true(ex_a.models[2].th[GQ_EXK_H2D_GBPS_MIN].fail == 10);
    /* no model of that name: every name is listed */
    assert_int_equal(gq_expect_set(&ex_a, "V100:h2d_gbps.fail=5", &e), GQ_E_USAGE);
    assert_non_null(strstr(e.msg, "no model matches 'V100'; the expectations have 'H200', 'A100', 'L40'"));
    /* fail 27 is above A100's warn 25 (a minimum needs warn >= fail) but not
     * H200's or L40's: refused, and H200 keeps its 10 */
    assert_int_equal(gq_expect_set(&ex_a, "h2d_gbps.fail=24", &e), GQ_OK);
    assert_int_equal(gq_expect_set(&ex_a, "h200:h2d_gbps.warn=40", &e), GQ_OK);
    assert_int_equal(gq_expect_set(&ex_a, "l40:h2d_gbps.warn=40", &e), GQ_OK);
    int before = ex_a.noverrides;
    assert_int_equal(gq_expect_set(&ex_a, "h2d_gbps.fail=27", &e), GQ_E_USAGE);
    assert_non_null(strstr(e.msg, "a minimum needs warn >= fail"));
    assert_int_equal(ex_a.noverrides, before);
    for (int m = 0; m < 3; m++)
        assert_true(ex_a.models[m].th[GQ_EXK_H2D_GBPS_MIN].fail == 24);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(examples_yaml_equal_json),
        cmocka_unit_test(yaml_hazards_refused),
        cmocka_unit_test(yaml_scalars),
        cmocka_unit_test(set_overrides),
        cmocka_unit_test(set_over_models),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
