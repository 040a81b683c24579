/* gpuqual kv on simulated machines: the handoff measured three ways next to
 * its estimates (h200x2: NVLink P2P; rtx4090x8: no P2P, host-staged only),
 * a payload that does not fit refused before anything runs, and the same
 * estimates from a saved run without a GPU. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include <cmocka.h>

#include "test_place_util.h"
#include "../test_util.h"

#define SEED001_SHAPE "--layers 80 --kv-heads 8 --head-dim 128 --kv-dtype bf16 --tokens 8000"

static const json_t *kv(const json_t *doc)
{
    return json_object_get(doc, "kv");
}

static double med(const json_t *m, const char *what)
{
    return jnum(json_object_get(m, what), "median");
}

static void h200_three_ways(void **state)
{
    (void)state;
    json_t *doc = NULL;
    assert_int_equal(gq_run_json("kv " SEED001_SHAPE " --sim h200x2 --format json", &doc), 0);
    assert_non_null(doc);
    const json_t *k = kv(doc);
    assert_int_equal(json_integer_value(json_object_get(k, "payload_bytes")), 2621440000LL);
    const json_t *meas = json_object_get(k, "measured"), *est = json_object_get(k, "estimates");
    const char *names[3] = {"direct", "staged_serial", "staged_pipelined"};
    for (int i = 0; i < 3; i++) {
        const json_t *m = json_object_get(meas, names[i]);
        assert_true(json_is_true(json_object_get(m, "valid")));
        double g = med(m, "gbps"), ms = med(m, "ms");
        assert_true(g > 0 && ms > 0);
        /* ms and GB/s describe the same payload */
        assert_near(2621.44 / g, ms, 0.02 * ms);
        /* the estimate sits next to it, and the measurement is near it */
        double e = jnum(json_object_get(est, names[i]), "gbps");
        assert_near(jnum(m, "estimate_gbps"), e, 1e-3);
        if (fabs(g - e) > 0.15 * e)
            fail_msg("%s: measured %.1f GB/s, estimated %.1f", names[i], g, e);
    }
    /* direct over NVLink beats staging by far; pipelining beats serial */
    assert_true(med(json_object_get(meas, "direct"), "gbps") >
                4 * med(json_object_get(meas, "staged_pipelined"), "gbps"));
    assert_true(med(json_object_get(meas, "staged_pipelined"), "gbps") >
                1.5 * med(json_object_get(meas, "staged_serial"), "gbps"));
    /* the sweep: one entry per chunk size, the best one reported */
    const json_t *pipe = json_object_get(meas, "staged_pipelined");
    assert_int_equal(json_array_size(json_object_get(pipe, "chunks")), 6);
    double best = 0;
    size_t i;
    const json_t *c;
    json_array_foreach(json_object_get(pipe, "chunks"), i, c) best = fmax(best, med(c, "gbps"));
    assert_near(best, med(pipe, "gbps"), 1e-6);
    /* serial estimate is 1/(1/down + 1/up) of the measured rates */
    const json_t *rates = json_object_get(k, "rates");
    double d = jnum(json_object_get(rates, "down"), "gbps"), u = jnum(json_object_get(rates, "up"), "gbps");
    assert_near(jnum(json_object_get(est, "staged_serial"), "gbps"), 1 / (1 / d + 1 / u), 1e-3);
    json_decref(doc);
}

static void rtx4090_no_p2p(void **state)
{
    (void)state;
    json_t *doc = NULL;
    assert_int_equal(
        gq_run_json("kv " SEED001_SHAPE " --sim rtx4090x8 --from 0 --to 4 --chunks 4,8 --format json", &doc),
        0);
    assert_non_null(doc);
    const json_t *k = kv(doc);
    assert_true(json_is_true(json_object_get(json_object_get(k, "rates"), "p2p_impossible")));
    const json_t *meas = json_object_get(k, "measured");
    assert_true(json_is_null(json_object_get(meas, "direct")));
    assert_true(
        json_is_null(json_object_get(json_object_get(json_object_get(k, "estimates"), "direct"), "gbps")));
    assert_true(json_is_true(json_object_get(json_object_get(meas, "staged_serial"), "valid")));
    assert_true(json_is_true(json_object_get(json_object_get(meas, "staged_pipelined"), "valid")));
    assert_int_equal(json_array_size(json_object_get(json_object_get(meas, "staged_pipelined"), "chunks")),
                     2);
    json_decref(doc);
}

/* 100,000 tokens of seed 001's model are 32.8 GB: more than a 24 GB card. */
static void payload_too_big(void **state)
{
    (void)state;
    assert_int_equal(gq_run_json("kv --layers 80 --kv-heads 8 --head-dim 128 --kv-dtype bf16 --tokens 100000 "
                                 "--sim rtx4090x8",
                                 NULL),
                     2);
    /* but estimating it is fine */
    assert_int_equal(gq_run_json("kv --layers 80 --kv-heads 8 --head-dim 128 --kv-dtype bf16 --tokens 100000 "
                                 "--sim rtx4090x8 --estimate-only",
                                 NULL),
                     0);
}

static void estimates_from_saved_run(void **state)
{
    (void)state;
    char path[] = "/tmp/gq-kv-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    char args[512];
    json_t *live = NULL, *saved = NULL;
    snprintf(args, sizeof args, "kv " SEED001_SHAPE " --sim h200x2 --estimate-only --format json --json %s",
             path);
    assert_int_equal(gq_run_json(args, &live), 0);
    snprintf(args, sizeof args, "kv " SEED001_SHAPE " --input %s --format json", path);
    assert_int_equal(gq_run_json(args, &saved), 0);
    assert_non_null(live);
    assert_non_null(saved);
    const char *names[3] = {"direct", "staged_serial", "staged_pipelined"};
    for (int i = 0; i < 3; i++) {
        double a = jnum(json_object_get(json_object_get(kv(live), "estimates"), names[i]), "gbps");
        double b = jnum(json_object_get(json_object_get(kv(saved), "estimates"), names[i]), "gbps");
        assert_true(a > 0);
        assert_near(a, b, 1e-3);
    }
    assert_true(json_is_null(json_object_get(kv(saved), "measured")));
    json_decref(live);
    json_decref(saved);
    unlink(path);
}

/* A saved run of a machine without P2P between GPUs 0 and 4 (rtx4090x8):
 * --input says P2P is impossible there too, and gives no direct estimate. */
static void saved_run_without_p2p(void **state)
{
    (void)state;
    char path[] = "/tmp/gq-kv-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    char args[512];
    json_t *saved = NULL;
    snprintf(args, sizeof args,
             "kv " SEED001_SHAPE " --sim rtx4090x8 --from 0 --to 4 --estimate-only --format json --json %s",
             path);
    assert_int_equal(gq_run_json(args, NULL), 0);
    snprintf(args, sizeof args, "kv " SEED001_SHAPE " --input %s --from 0 --to 4 --format json", path);
    assert_int_equal(gq_run_json(args, &saved), 0);
    assert_non_null(saved);
    const json_t *k = kv(saved);
    assert_true(json_is_true(json_object_get(json_object_get(k, "rates"), "p2p_impossible")));
    assert_true(
        json_is_null(json_object_get(json_object_get(json_object_get(k, "estimates"), "direct"), "gbps")));
    assert_true(jnum(json_object_get(json_object_get(k, "estimates"), "staged_serial"), "gbps") > 0);
    json_decref(saved);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(h200_three_ways),       cmocka_unit_test(rtx4090_no_p2p),
        cmocka_unit_test(payload_too_big),       cmocka_unit_test(estimates_from_saved_run),
        cmocka_unit_test(saved_run_without_p2p),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
