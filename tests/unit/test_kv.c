/* KV-handoff arithmetic: the seeds' worked examples are the golden figures. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "analysis/kv.h"
#include "doc/kv_config.h"
#include "core/units.h"
#include "render/command_text.h"
#include "../test_util.h"

#define HF GQ_TEST_DATA "/data/hf/"

/* seed 001 §4: 80 layers, 8 KV heads, dim 128, BF16 -> 327,680 B/token;
 * 8,000 tokens -> 2.62144 GB; ~49 / 69 / 119 ms at 53 / 38 / 22 GB/s. */
static void seed001_example(void **state)
{
    (void)state;
    gq_kv_shape s = {.layers = 80, .kv_heads = 8, .head_dim = 128, .dtype = GQ_KV_BF16};
    assert_int_equal(gq_kv_shape_check(&s, NULL), GQ_OK);
    assert_int_equal(gq_kv_bytes_per_token(&s), 327680);
    uint64_t payload = 0;
    assert_int_equal(gq_kv_payload(&s, 8000, &payload, NULL), GQ_OK);
    assert_int_equal(payload, UINT64_C(2621440000));
    assert_near((double)payload / GQ_GB, 2.62144, 1e-9);
    /* The seed rounds to whole milliseconds. */
    assert_int_equal((int)(gq_kv_time_ms(payload, 53) + 0.5), 49);
    assert_int_equal((int)(gq_kv_time_ms(payload, 38) + 0.5), 69);
    assert_int_equal((int)(gq_kv_time_ms(payload, 22) + 0.5), 119);
    assert_near(gq_kv_time_ms(payload, 53), 2621.44 / 53, 1e-9);
}

/* seed 000: 1 GiB at 26.3 down and 25.3 up, one after the other ->
 * 1/(1/26.3 + 1/25.3) = 12.9 GB/s, about 83 ms. */
static void seed000_serial(void **state)
{
    (void)state;
    double g = gq_kv_serial_gbps(26.3, 25.3);
    assert_near(g, 26.3 * 25.3 / (26.3 + 25.3), 1e-12);
    assert_near(g, 12.9, 0.05);
    double ms = gq_kv_time_ms(GQ_GiB, g);
    assert_int_equal((int)(ms + 0.5), 83);
    /* The time of the serial handoff is the sum of the two copies' times. */
    assert_near(ms, gq_kv_time_ms(GQ_GiB, 26.3) + gq_kv_time_ms(GQ_GiB, 25.3), 1e-9);
}

/* seed 001 §5: a 640 MiB offload payload takes roughly 12 ms at 58 GB/s and
 * 19 ms at 36 GB/s. */
static void seed001_offload(void **state)
{
    (void)state;
    uint64_t payload = 640 * GQ_MiB;
    assert_int_equal((int)(gq_kv_time_ms(payload, 58) + 0.5), 12);
    assert_int_equal((int)(gq_kv_time_ms(payload, 36) + 0.5), 19);
}

static void pipelined_is_min_of_concurrent(void **state)
{
    (void)state;
    /* seed 000: one GPU both ways at once, 16.5 + 19.7 GB/s. */
    assert_near(gq_kv_pipelined_gbps(19.7, 16.5), 16.5, 1e-12);
    assert_near(gq_kv_pipelined_gbps(16.5, 19.7), 16.5, 1e-12);
    assert_near(gq_kv_pipelined_gbps(0, 19.7), 0, 0);
    assert_near(gq_kv_serial_gbps(-1, 19.7), 0, 0);
    assert_near(gq_kv_time_ms(1000, 0), 0, 0);
}

static void dtypes(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        gq_kv_dtype d;
        int bytes;
    } cases[] = {
        {"fp32", GQ_KV_FP32, 4},         {"float32", GQ_KV_FP32, 4},  {"bf16", GQ_KV_BF16, 2},
        {"bfloat16", GQ_KV_BF16, 2},     {"BF16", GQ_KV_BF16, 2},     {"torch.bfloat16", GQ_KV_BF16, 2},
        {"fp16", GQ_KV_FP16, 2},         {"float16", GQ_KV_FP16, 2},  {"fp8", GQ_KV_FP8_E4M3, 1},
        {"fp8_e4m3", GQ_KV_FP8_E4M3, 1}, {"e4m3", GQ_KV_FP8_E4M3, 1}, {"float8_e4m3fn", GQ_KV_FP8_E4M3, 1},
        {"fp8_e5m2", GQ_KV_FP8_E5M2, 1}, {"e5m2", GQ_KV_FP8_E5M2, 1}, {"int8", GQ_KV_INT8, 1},
        {"INT8", GQ_KV_INT8, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gq_kv_dtype d = GQ_KV_DTYPE_NONE;
        assert_int_equal(gq_kv_dtype_parse(cases[i].name, "--kv-dtype", &d, NULL), GQ_OK);
        assert_int_equal(d, cases[i].d);
        assert_int_equal(gq_kv_dtype_bytes(d), cases[i].bytes);
    }
    gq_err e = {0};
    gq_kv_dtype d = GQ_KV_DTYPE_NONE;
    assert_int_equal(gq_kv_dtype_parse("bf17", "--kv-dtype", &d, &e), GQ_E_USAGE);
    assert_non_null(strstr(e.msg, "unknown dtype 'bf17'"));
    assert_non_null(strstr(e.msg, "did you mean 'bf16'"));
    assert_int_equal(gq_kv_dtype_parse("int4", "--kv-dtype", &d, &e), GQ_E_USAGE);
    assert_int_equal(gq_kv_dtype_parse("", "--kv-dtype", &d, &e), GQ_E_USAGE);
    assert_string_equal(gq_kv_dtype_name(GQ_KV_FP8_E5M2), "fp8_e5m2");
    /* fp8 halves the bf16 payload. */
    gq_kv_shape s = {.layers = 80, .kv_heads = 8, .head_dim = 128, .dtype = GQ_KV_FP8_E4M3};
    assert_int_equal(gq_kv_bytes_per_token(&s), 163840);
}

static void bad_shapes(void **state)
{
    (void)state;
    gq_err e = {0};
    uint64_t p;
    gq_kv_shape s = {.layers = 0, .kv_heads = 8, .head_dim = 128, .dtype = GQ_KV_BF16};
    assert_int_equal(gq_kv_payload(&s, 10, &p, &e), GQ_E_USAGE);
    assert_non_null(strstr(e.msg, "--layers"));
    s.layers = 80;
    s.kv_heads = -1;
    assert_int_equal(gq_kv_payload(&s, 10, &p, &e), GQ_E_USAGE);
    assert_non_null(strstr(e.msg, "--kv-heads"));
    s.kv_heads = 8;
    s.head_dim = 0;
    assert_int_equal(gq_kv_payload(&s, 10, &p, &e), GQ_E_USAGE);
    assert_non_null(strstr(e.msg, "--head-dim"));
    s.head_dim = 128;
    assert_int_equal(gq_kv_payload(&s, 0, &p, &e), GQ_E_USAGE);
    assert_non_null(strstr(e.msg, "--tokens"));
    assert_int_equal(gq_kv_payload(&s, -5, &p, &e), GQ_E_USAGE);
    s.dtype = GQ_KV_DTYPE_NONE;
    assert_int_equal(gq_kv_payload(&s, 10, &p, &e), GQ_E_USAGE);
    assert_non_null(strstr(e.msg, "--kv-dtype"));
    /* Overflow is refused, not wrapped. */
    gq_kv_shape big = {
        .layers = 1000000000, .kv_heads = 1000000000, .head_dim = 1000000000, .dtype = GQ_KV_FP32};
    assert_int_equal(gq_kv_bytes_per_token(&big), 0);
    assert_int_equal(gq_kv_payload(&big, 10, &p, &e), GQ_E_USAGE);
    assert_non_null(strstr(e.msg, "overflow"));
    gq_kv_shape large = {.layers = 1000, .kv_heads = 1000, .head_dim = 1000, .dtype = GQ_KV_FP32};
    assert_int_equal(gq_kv_payload(&large, 2000000000L, &p, &e), GQ_E_USAGE);
}

static void config_llama70b(void **state)
{
    (void)state;
    gq_kv_shape s;
    bool has_dtype;
    gq_err e = {0};
    assert_int_equal(gq_kv_config_load(HF "llama3-70b.json", &s, &has_dtype, &e), GQ_OK);
    assert_int_equal(s.layers, 80);
    assert_int_equal(s.kv_heads, 8);
    assert_int_equal(s.head_dim, 8192 / 64);
    assert_true(has_dtype);
    assert_int_equal(s.dtype, GQ_KV_BF16);
    assert_int_equal(gq_kv_bytes_per_token(&s), 327680);
}

static void config_variants(void **state)
{
    (void)state;
    gq_kv_shape s;
    bool has_dtype;
    gq_err e = {0};
    /* head_dim given: 5120 / 64 = 80 would be wrong; 128 is right. */
    assert_int_equal(gq_kv_config_load(HF "head-dim.json", &s, &has_dtype, &e), GQ_OK);
    assert_int_equal(s.head_dim, 128);
    assert_int_equal(s.layers, 64);
    assert_int_equal(gq_kv_bytes_per_token(&s), 2 * 64 * 8 * 128 * 2);
    /* No num_key_value_heads: every attention head has its own KV. */
    assert_int_equal(gq_kv_config_load(HF "mha-fp32.json", &s, &has_dtype, &e), GQ_OK);
    assert_int_equal(s.kv_heads, 12);
    assert_int_equal(s.head_dim, 64);
    assert_int_equal(s.dtype, GQ_KV_FP32);
    assert_int_equal(gq_kv_bytes_per_token(&s), 2 * 12 * 12 * 64 * 4);
    /* No torch_dtype: fine, the caller must give one. */
    assert_int_equal(gq_kv_config_load(HF "no-dtype.json", &s, &has_dtype, &e), GQ_OK);
    assert_false(has_dtype);
    assert_int_equal(s.dtype, GQ_KV_DTYPE_NONE);
    assert_int_equal(gq_kv_shape_check(&s, &e), GQ_E_USAGE);
    /* Language model under text_config, dtype at the top. */
    assert_int_equal(gq_kv_config_load(HF "multimodal.json", &s, &has_dtype, &e), GQ_OK);
    assert_int_equal(s.layers, 34);
    assert_int_equal(s.kv_heads, 4);
    assert_int_equal(s.head_dim, 256);
    assert_int_equal(s.dtype, GQ_KV_BF16);
}

static void expect_config_error(const char *file, int code, const char *text)
{
    gq_kv_shape s;
    bool has_dtype;
    gq_err e = {0};
    char path[512];
    snprintf(path, sizeof path, "%s%s", HF, file);
    int rc = gq_kv_config_load(path, &s, &has_dtype, &e);
    if (rc != code || !strstr(e.msg, text) || !strstr(e.msg, file) || strchr(e.msg, '\n'))
        fail_msg("%s: rc %d (want %d), message '%s' (want '%s' and the file name)", file, rc, code, e.msg,
                 text);
}

static void config_errors(void **state)
{
    (void)state;
    expect_config_error("does-not-exist.json", GQ_E_IO, "cannot read");
    expect_config_error("malformed.json", GQ_E_USAGE, "not valid JSON at line 5");
    expect_config_error("missing-layers.json", GQ_E_USAGE, "missing field 'num_hidden_layers'");
    expect_config_error("missing-head-dim.json", GQ_E_USAGE, "missing field 'hidden_size'");
    expect_config_error("string-layers.json", GQ_E_USAGE,
                        "'num_hidden_layers' must be a positive integer, not a string");
    expect_config_error("zero-heads.json", GQ_E_USAGE, "'num_key_value_heads' is 0");
    expect_config_error("bad-dtype.json", GQ_E_USAGE, "unknown dtype 'bfloat17'");
    expect_config_error("indivisible.json", GQ_E_USAGE, "not a multiple of num_attention_heads");
    expect_config_error("mla-no-rope.json", GQ_E_USAGE, "lacks field 'qk_rope_head_dim'");
    expect_config_error("window-unknown-arch.json", GQ_E_USAGE, "missing field 'layer_types'");
    expect_config_error("layer-types-linear.json", GQ_E_USAGE, "layer_types[0] is 'linear_attention'");
    expect_config_error("not-object.json", GQ_E_USAGE, "expected a JSON object");
}

/* The measured handoffs in kv's table: a measurement that ran but is not
 * valid (the clean room flagged it contaminated and kept its figures, or it
 * failed) reads "failed" with its error, never its figures; one valid
 * without a round reads "failed" too ("no valid round"); a valid one its
 * median GB/s, ms and spread. */
static void table_failed_measurements(void **state)
{
    (void)state;
    gq_kv_result *k = calloc(1, sizeof *k);
    assert_non_null(k);
    k->from = 0;
    k->to = 1;
    k->shape.layers = 80;
    k->shape.kv_heads = 8;
    k->shape.head_dim = 128;
    k->bpt = 327680;
    k->tokens = 1000;
    k->payload = 327680000;
    k->measured = true;
    k->best_chunk = -1;
    gq_stat figs = {.median = 47.25, .min = 47, .max = 48, .spread = 0.02, .n = 3};
    gq_stat ms = {.median = 6.93, .min = 6.8, .max = 7, .spread = 0.02, .n = 3};
    k->direct = (gq_kv_meas){.run = true, .valid = false, .gbps = figs, .ms = ms};
    snprintf(k->direct.error, sizeof k->direct.error, "contaminated: GPU 0: 100%% utilization");
    k->serial = (gq_kv_meas){.run = true, .valid = true, .gbps = {.n = 0}};
    figs.median = 21.5;
    k->pipe[0] = (gq_kv_meas){.run = true, .valid = true, .gbps = figs, .ms = ms};
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    gq_render_kv_table(f, k, "sim-h200x2", false);
    fclose(f);
    const char *d = strstr(out, "direct (P2P)"), *se = strstr(out, "staged, serial"),
               *pp = strstr(out, "staged, pipelined");
    assert_non_null(d);
    assert_non_null(se);
    assert_non_null(pp);
    char line[256];
    snprintf(line, sizeof line, "%.*s", (int)(strchr(d, '\n') - d), d);
    assert_non_null(strstr(line, "failed"));
    assert_non_null(strstr(line, "contaminated: GPU 0: 100% utilization"));
    assert_null(strstr(line, "47.2"));
    snprintf(line, sizeof line, "%.*s", (int)(strchr(se, '\n') - se), se);
    assert_non_null(strstr(line, "failed"));
    assert_non_null(strstr(line, "no valid round"));
    snprintf(line, sizeof line, "%.*s", (int)(strchr(pp, '\n') - pp), pp);
    assert_null(strstr(line, "failed"));
    assert_non_null(strstr(line, "21.5"));
    free(out);
    free(k);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(seed001_example), cmocka_unit_test(seed000_serial),
        cmocka_unit_test(seed001_offload), cmocka_unit_test(pipelined_is_min_of_concurrent),
        cmocka_unit_test(dtypes),          cmocka_unit_test(bad_shapes),
        cmocka_unit_test(config_llama70b), cmocka_unit_test(config_variants),
        cmocka_unit_test(config_errors),   cmocka_unit_test(table_failed_measurements),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
