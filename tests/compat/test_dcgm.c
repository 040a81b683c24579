/* DCGM's nvbandwidth plugin against `gpuqual nvbandwidth`.
 *
 * The rules below were written from reading NVIDIA/DCGM,
 * nvvs/plugin_src/nvbandwidth (NVBandwidthPlugin.cpp, NVBandwidthResult.cpp)
 * and nvvs/src/Plugin.cpp (LaunchExecutable) at commit 72fa3fe: the plugin
 * finds a regular file named nvbandwidth, sets CUDA_VISIBLE_DEVICES to the
 * GPUs' UUIDs separated by commas, runs `nvbandwidth -j -v` plus "-t NAME"
 * for each test of its parameter, and fails on a non-zero exit. From stdout
 * it keeps the text from the first line that is "{" alone (tabs allowed) to
 * the last line that is "}" alone, and reads it as JSON: "nvbandwidth" must
 * hold "CUDA Runtime Version" (an integer), "Driver Version", "git_version"
 * (strings) and "testcases" (an array); every test case needs "name" and
 * "status" strings, the status one of error, waived, not found, passed (any
 * case), and a "bandwidth_matrix", when present, must be a non-empty array of
 * non-empty rows whose cells are "N/A" or a number as text; one test case
 * that fails these fails the whole result, and a status of error fails the
 * plugin. The tests implement those rules here and hold gpuqual's JSON to
 * the saved real JSON of nvbandwidth v0.8
 * (bench/reference/h200x2-nvbandwidth-v0.8.json): the same test names,
 * statuses, descriptions and matrix shapes. */
#include <ctype.h>
#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cmocka.h>

#include "compat_util.h"

/* A line (with its newline) that holds only c, after tabs. */
static bool only_char(const char *line, size_t len, char c)
{
    if (len == 0)
        return false;
    size_t first = 0;
    while (first < len && line[first] == '\t')
        first++;
    size_t last = len;
    while (last > 0 && (line[last - 1] == '\t' || line[last - 1] == '\n'))
        last--;
    return first < len && line[first] == c && last == first + 1;
}

/* The plugin's sanitizing: from the first "{" line to the last "}" line. */
static char *sanitize(const char *out)
{
    const char *start = NULL, *end = NULL;
    for (const char *p = out; *p;) {
        const char *nl = strchr(p, '\n');
        if (!nl)
            break;
        if (only_char(p, (size_t)(nl - p + 1), '{')) {
            start = p;
            break;
        }
        p = nl + 1;
    }
    for (const char *p = out; *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        if (only_char(p, len, '}') && (!start || p > start))
            end = p + 1;
        if (!nl)
            break;
        p = nl + 1;
    }
    if (!start || !end)
        return NULL;
    return strndup(start, (size_t)(end - start));
}

typedef struct dcgm_result {
    bool ok;    /* the JSON passed the plugin's reader */
    bool error; /* a test case's status is error */
} dcgm_result;

static bool status_ok(const char *s, bool *is_error)
{
    *is_error = !strcasecmp(s, "error");
    return *is_error || !strcasecmp(s, "waived") || !strcasecmp(s, "not found") || !strcasecmp(s, "passed");
}

static bool matrix_ok(const json_t *m)
{
    if (!json_is_array(m) || json_array_size(m) == 0)
        return false;
    size_t i, k;
    const json_t *row, *cell;
    json_array_foreach(m, i, row)
    {
        if (!json_is_array(row) || json_array_size(row) == 0)
            return false;
        json_array_foreach(row, k, cell)
        {
            const char *s = json_string_value(cell);
            if (!s)
                return false;
            if (!strcmp(s, "N/A"))
                continue;
            char *e;
            strtof(s, &e);
            if (e == s) /* std::stof throws on no number */
                return false;
        }
    }
    return true;
}

static dcgm_result dcgm_read(const char *stdout_text, json_t **doc)
{
    dcgm_result r = {0};
    *doc = NULL;
    char *j = sanitize(stdout_text);
    if (!j)
        return r;
    json_error_t e;
    json_t *root = json_loads(j, 0, &e);
    free(j);
    json_t *nvb = json_object_get(root, "nvbandwidth");
    if (!json_is_integer(json_object_get(nvb, "CUDA Runtime Version")) ||
        !json_is_string(json_object_get(nvb, "Driver Version")) ||
        !json_is_string(json_object_get(nvb, "git_version")) ||
        !json_is_array(json_object_get(nvb, "testcases"))) {
        json_decref(root);
        return r;
    }
    size_t i;
    json_t *tc;
    json_array_foreach(json_object_get(nvb, "testcases"), i, tc)
    {
        const char *name = json_string_value(json_object_get(tc, "name"));
        const char *st = json_string_value(json_object_get(tc, "status"));
        bool err = false;
        json_t *m = json_object_get(tc, "bandwidth_matrix");
        if (!name || !st || !status_ok(st, &err) || (json_is_array(m) && !matrix_ok(m))) {
            json_decref(root);
            return r;
        }
        r.error |= err;
    }
    r.ok = true;
    *doc = root;
    return r;
}

static json_t *cases_of(json_t *doc)
{
    return json_object_get(json_object_get(doc, "nvbandwidth"), "testcases");
}

static json_t *case_named(json_t *doc, const char *name)
{
    size_t i;
    json_t *tc;
    json_array_foreach(cases_of(doc), i,
                       tc) if (!strcmp(json_string_value(json_object_get(tc, "name")), name)) return tc;
    return NULL;
}

static void same_shape(json_t *a, json_t *b, const char *name)
{
    json_t *ma = json_object_get(a, "bandwidth_matrix"), *mb = json_object_get(b, "bandwidth_matrix");
    if (json_array_size(ma) != json_array_size(mb))
        fail_msg("%s: %zu rows, nvbandwidth %zu", name, json_array_size(ma), json_array_size(mb));
    for (size_t i = 0; i < json_array_size(ma); i++)
        if (json_array_size(json_array_get(ma, i)) != json_array_size(json_array_get(mb, i)))
            fail_msg("%s: row %zu differs in length", name, i);
}

/* The GPU UUIDs DCGM puts in CUDA_VISIBLE_DEVICES. */
#define DCGM_ENV                                                                                             \
    "CUDA_VISIBLE_DEVICES=GPU-8b7f4c1e-2a65-4d1b-9c3e-5f0a1b2c3d4e,GPU-1c2d3e4f-5a6b-7c8d-9e0f-a1b2c3d4e5f6"

static void test_all_tests_match_reference_h200x2(void **state)
{
    (void)state;
    proc_out p = run_nvbw("GQ_SIM=h200x2 " DCGM_ENV, "-j -v");
    assert_int_equal(p.rc, 0);
    assert_string_equal(p.err, "");
    json_t *got;
    dcgm_result r = dcgm_read(p.out, &got);
    assert_true(r.ok);
    assert_false(r.error);
    char *reftext = slurp(REF_DIR "/h200x2-nvbandwidth-v0.8.json");
    assert_non_null(reftext);
    json_t *ref;
    dcgm_result rr = dcgm_read(reftext, &ref);
    assert_true(rr.ok);
    assert_int_equal(json_array_size(cases_of(got)), json_array_size(cases_of(ref)));
    size_t i;
    json_t *tc;
    json_array_foreach(cases_of(ref), i, tc)
    {
        const char *name = json_string_value(json_object_get(tc, "name"));
        json_t *g = json_array_get(cases_of(got), i);
        assert_string_equal(json_string_value(json_object_get(g, "name")), name);
        assert_string_equal(json_string_value(json_object_get(g, "status")),
                            json_string_value(json_object_get(tc, "status")));
        assert_string_equal(json_string_value(json_object_get(g, "bandwidth_description")),
                            json_string_value(json_object_get(tc, "bandwidth_description")));
        same_shape(g, tc, name);
        /* -v's fields */
        assert_true(json_is_number(json_object_get(g, "min")));
        assert_true(json_is_number(json_object_get(g, "max")));
        assert_true(json_number_value(json_object_get(g, "sum")) > 0);
    }
    json_decref(got);
    json_decref(ref);
    free(reftext);
    proc_free(&p);
}

static void test_repeated_t(void **state)
{
    (void)state;
    proc_out p =
        run_nvbw("GQ_SIM=h200x2 " DCGM_ENV, "-j -v -t device_local_copy -t host_to_device_memcpy_ce");
    assert_int_equal(p.rc, 0);
    json_t *got;
    dcgm_result r = dcgm_read(p.out, &got);
    assert_true(r.ok);
    assert_int_equal(json_array_size(cases_of(got)), 2);
    assert_string_equal(json_string_value(json_object_get(json_array_get(cases_of(got), 0), "name")),
                        "device_local_copy");
    assert_string_equal(json_string_value(json_object_get(json_array_get(cases_of(got), 1), "name")),
                        "host_to_device_memcpy_ce");
    json_decref(got);
    proc_free(&p);
}

/* An id that names no test: status "ERROR", which the plugin reads as error. */
static void test_unknown_is_error(void **state)
{
    (void)state;
    proc_out p = run_nvbw("GQ_SIM=h200x2", "-j -v -t device_local_copy -t no_such_test");
    assert_int_equal(p.rc, 0);
    json_t *got;
    dcgm_result r = dcgm_read(p.out, &got);
    assert_true(r.ok);
    assert_true(r.error);
    json_decref(got);
    proc_free(&p);
}

static void check_eight(const char *sim, bool waives_peer)
{
    char env[64];
    snprintf(env, sizeof env, "GQ_SIM=%s", sim);
    proc_out p = run_nvbw(env, "-j -v -b 64 -i 1");
    assert_int_equal(p.rc, 0);
    assert_string_equal(p.err, "");
    json_t *got;
    dcgm_result r = dcgm_read(p.out, &got);
    assert_true(r.ok);
    assert_false(r.error);
    assert_int_equal(json_array_size(cases_of(got)), 35);
    int waived = 0;
    size_t i;
    json_t *tc;
    json_array_foreach(cases_of(got), i, tc)
    {
        const char *name = json_string_value(json_object_get(tc, "name"));
        bool w = !strcmp(json_string_value(json_object_get(tc, "status")), "Waived");
        waived += w;
        json_t *m = json_object_get(tc, "bandwidth_matrix");
        if (w) {
            assert_null(m); /* a waived test has no matrix: an empty one fails the plugin */
            continue;
        }
        size_t rows = json_array_size(m);
        bool square = strstr(name, "device_to_device") != NULL;
        bool bidir = strstr(name, "device_to_device_bidirectional") != NULL;
        if (rows != (bidir ? 24u : square ? 8u : 1u))
            fail_msg("%s on %s: %zu rows", name, sim, rows);
        for (size_t k = 0; k < rows; k++)
            assert_int_equal(json_array_size(json_array_get(m, k)), 8);
    }
    assert_int_equal(waived, waives_peer ? 17 : 0);
    /* nvbandwidth's filter: the peer tests, and only those */
    json_t *d2d = case_named(got, "device_to_device_latency_sm");
    assert_string_equal(json_string_value(json_object_get(d2d, "status")), waives_peer ? "Waived" : "Passed");
    json_decref(got);
    proc_free(&p);
}

static void test_eight_gpus_without_p2p(void **state)
{
    (void)state;
    check_eight("rtx4090x8", true);
}

static void test_eight_gpus_with_p2p(void **state)
{
    (void)state;
    check_eight("rtxpro6000x8", false);
}

static int teardown(void **state)
{
    (void)state;
    nvbw_dir_remove();
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_all_tests_match_reference_h200x2),
        cmocka_unit_test(test_repeated_t),
        cmocka_unit_test(test_unknown_is_error),
        cmocka_unit_test(test_eight_gpus_without_p2p),
        cmocka_unit_test(test_eight_gpus_with_p2p),
    };
    return cmocka_run_group_tests(tests, NULL, teardown);
}
