/* KV arithmetic and model configs at their edges: the 2^63 limit exactly, every
 * dtype name, integer fields given as reals or bounds, the fallbacks between
 * config fields, and the dtype fields' order. Written for bench/mutation. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "analysis/kv.h"
#include "doc/kv_config.h"
#include "core/units.h"
#include "../test_util.h"

static void payload_at_2_63(void **state)
{
    (void)state;
    /* 1 layer, 1 head, dim 1, fp8: 2 bytes a token */
    gq_kv_shape s = {.layers = 1, .kv_heads = 1, .head_dim = 1, .dtype = GQ_KV_FP8_E5M2};
    assert_int_equal(gq_kv_bytes_per_token(&s), 2);
    uint64_t p = 0;
    assert_int_equal(gq_kv_payload(&s, 1L << 62, &p, NULL), GQ_OK);
    assert_true(p == UINT64_C(1) << 63);
    gq_err e = {0};
    assert_int_equal(gq_kv_payload(&s, (1L << 62) + 1, &p, &e), GQ_E_USAGE);
    assert_non_null(strstr(e.msg, "overflows 2^63"));
    assert_int_equal(gq_kv_payload(&s, 1, &p, NULL), GQ_OK);
    assert_true(p == 2);
    /* bytes per token at the limit: 2 x 2^31 x 2^30 x 1 = 2^62 fits, x 4 does not */
    gq_kv_shape b = {.layers = 1L << 31, .kv_heads = 1L << 30, .head_dim = 1, .dtype = GQ_KV_FP8_E4M3};
    assert_true(gq_kv_bytes_per_token(&b) == UINT64_C(1) << 62);
    b.head_dim = 2;
    assert_true(gq_kv_bytes_per_token(&b) == UINT64_C(1) << 63);
    b.head_dim = 4;
    assert_int_equal(gq_kv_bytes_per_token(&b), 0);
    /* a shape that is not checked: 0 */
    gq_kv_shape z = {.layers = 1, .kv_heads = 0, .head_dim = 1, .dtype = GQ_KV_FP32};
    assert_int_equal(gq_kv_bytes_per_token(&z), 0);
    z.kv_heads = 1;
    z.head_dim = -1;
    assert_int_equal(gq_kv_bytes_per_token(&z), 0);
    z.head_dim = 1;
    z.layers = 0;
    assert_int_equal(gq_kv_bytes_per_token(&z), 0);
    z.layers = 3;
    assert_int_equal(gq_kv_bytes_per_token(&z), 24);
    /* one layer's K and V alone at the limit: 2 x 2^31 x 2^31 x 1 = 2^63 fits, a head more does not */
    gq_kv_shape l = {.layers = 1, .kv_heads = 1L << 31, .head_dim = 1L << 31, .dtype = GQ_KV_FP8_E4M3};
    assert_true(gq_kv_layer_bytes(&l) == UINT64_C(1) << 63);
    l.kv_heads++;
    assert_true(gq_kv_layer_bytes(&l) == 0);
    assert_true(gq_kv_bytes_per_token(&l) == 0);
}

static void dtype_names_all(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        gq_kv_dtype d;
    } cases[] = {
        {"float", GQ_KV_FP32},
        {"half", GQ_KV_FP16},
        {"float8_e4m3", GQ_KV_FP8_E4M3},
        {"float8_e5m2", GQ_KV_FP8_E5M2},
        {"TORCH.FLOAT16", GQ_KV_FP16},
        {"Float32", GQ_KV_FP32},
        {"torch.fp8_e5m2", GQ_KV_FP8_E5M2},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gq_kv_dtype d = GQ_KV_DTYPE_NONE;
        if (gq_kv_dtype_parse(cases[i].name, "x", &d, NULL) != GQ_OK || d != cases[i].d)
            fail_msg("%s", cases[i].name);
    }
    gq_kv_dtype d = GQ_KV_FP32;
    gq_err e = {0};
    assert_int_equal(gq_kv_dtype_parse(NULL, "cfg", &d, &e), GQ_E_USAGE);
    assert_non_null(strstr(e.msg, "cfg: empty dtype"));
    /* 31 characters is the longest name looked at; longer is unknown */
    assert_int_equal(gq_kv_dtype_parse("torch.bfloat16_________________", "x", &d, &e), GQ_E_USAGE);
    assert_int_equal(gq_kv_dtype_parse("bfloat16________________________", "x", &d, &e), GQ_E_USAGE);
    assert_non_null(strstr(e.msg, "expected fp32, bf16"));
    assert_int_equal(gq_kv_dtype_parse("torch.", "x", &d, &e), GQ_E_USAGE);
    /* only "torch." is a prefix, not "torch" followed by anything */
    assert_int_equal(gq_kv_dtype_parse("torch_bfloat16", "x", &d, &e), GQ_E_USAGE);
    assert_int_equal(gq_kv_dtype_parse("xyzzyplugh", "x", &d, &e), GQ_E_USAGE);
    assert_null(strstr(e.msg, "did you mean"));
    assert_int_equal(d, GQ_KV_FP32); /* untouched on error */

    assert_int_equal(gq_kv_dtype_bytes(GQ_KV_DTYPE_NONE), 0);
    assert_int_equal(gq_kv_dtype_bytes(GQ_KV_FP16), 2);
    assert_int_equal(gq_kv_dtype_bytes(GQ_KV_FP8_E5M2), 1);
    assert_string_equal(gq_kv_dtype_name(GQ_KV_FP32), "fp32");
    assert_string_equal(gq_kv_dtype_name(GQ_KV_BF16), "bf16");
    assert_string_equal(gq_kv_dtype_name(GQ_KV_FP16), "fp16");
    assert_string_equal(gq_kv_dtype_name(GQ_KV_FP8_E4M3), "fp8_e4m3");
    assert_string_equal(gq_kv_dtype_name(GQ_KV_DTYPE_NONE), "none");
}

static int parse(const char *json, gq_kv_shape *s, bool *has, gq_err *e)
{
    json_error_t je;
    json_t *root = json_loads(json, 0, &je);
    if (!root)
        fail_msg("bad test JSON: %s", je.text);
    int rc = gq_kv_config_parse(root, "cfg.json", s, has, e);
    json_decref(root);
    return rc;
}

static void expect_error(const char *json, const char *text)
{
    gq_kv_shape s;
    bool has;
    gq_err e = {0};
    int rc = parse(json, &s, &has, &e);
    if (rc != GQ_E_USAGE || !strstr(e.msg, text))
        fail_msg("%s: rc %d, '%s' (wanted '%s')", json, rc, e.msg, text);
}

static void config_fields(void **state)
{
    (void)state;
    gq_kv_shape s;
    bool has = true;
    /* reals that are integers are taken; 1e9 is the largest count */
    assert_int_equal(
        parse("{\"num_hidden_layers\": 80.0, \"num_key_value_heads\": 1000000000, \"head_dim\": 1}", &s, &has,
              NULL),
        GQ_OK);
    assert_int_equal(s.layers, 80);
    assert_int_equal(s.kv_heads, 1000000000);
    assert_int_equal(s.head_dim, 1);
    assert_false(has);
    assert_int_equal(s.dtype, GQ_KV_DTYPE_NONE);
    expect_error("{\"num_hidden_layers\": 1000000001, \"num_key_value_heads\": 8, \"head_dim\": 128}",
                 "field 'num_hidden_layers' is 1000000001; it must be a positive integer");
    expect_error("{\"num_hidden_layers\": 0, \"num_key_value_heads\": 8, \"head_dim\": 128}",
                 "field 'num_hidden_layers' is 0");
    expect_error("{\"num_hidden_layers\": 80.5}",
                 "'num_hidden_layers' must be a positive integer, not a fraction");
    expect_error("{\"num_hidden_layers\": \"80\"}", "not a string");
    expect_error("{\"num_hidden_layers\": true}", "not a boolean");
    expect_error("{\"num_hidden_layers\": [80]}", "not a list");
    expect_error("{\"num_hidden_layers\": {}}", "not an object");
    expect_error("{\"num_hidden_layers\": 8, \"head_dim\": -2}", "field 'head_dim' is -2");
    /* null is absent */
    expect_error("{\"num_hidden_layers\": null}", "missing field 'num_hidden_layers'");
    expect_error("[]", "not a Hugging Face config");
    expect_error("{\"num_hidden_layers\": 8, \"head_dim\": 64}", "missing fields 'num_key_value_heads' and");

    /* KV heads fall back to attention heads; head_dim to hidden / heads */
    assert_int_equal(parse("{\"num_hidden_layers\": 4, \"num_attention_heads\": 16, \"hidden_size\": 2048}",
                           &s, &has, NULL),
                     GQ_OK);
    assert_int_equal(s.kv_heads, 16);
    assert_int_equal(s.head_dim, 128);
    /* given num_key_value_heads wins over num_attention_heads; given head_dim over hidden/heads */
    assert_int_equal(
        parse("{\"num_hidden_layers\": 4, \"num_attention_heads\": 16, \"num_key_value_heads\": 2, "
              "\"hidden_size\": 2048, \"head_dim\": 256}",
              &s, &has, NULL),
        GQ_OK);
    assert_int_equal(s.kv_heads, 2);
    assert_int_equal(s.head_dim, 256);
    expect_error("{\"num_hidden_layers\": 4, \"num_attention_heads\": 16, \"hidden_size\": 2050}",
                 "hidden_size 2050 is not a multiple of num_attention_heads 16");
    expect_error("{\"num_hidden_layers\": 4, \"num_attention_heads\": 16}", "missing field 'hidden_size'");
    expect_error("{\"num_hidden_layers\": 4, \"num_key_value_heads\": 2, \"hidden_size\": 2048}",
                 "missing field 'num_attention_heads'");
    /* multi-head latent attention is refused; a null kv_lora_rank is not MLA */
    expect_error(
        "{\"num_hidden_layers\": 4, \"num_key_value_heads\": 2, \"head_dim\": 64, \"kv_lora_rank\": 512}",
        "multi-head latent attention");
    assert_int_equal(parse("{\"num_hidden_layers\": 4, \"num_key_value_heads\": 2, \"head_dim\": 64, "
                           "\"kv_lora_rank\": null}",
                           &s, &has, NULL),
                     GQ_OK);
}

static void config_text_and_dtype(void **state)
{
    (void)state;
    gq_kv_shape s;
    bool has = false;
    /* a multimodal config: the text model's fields, the dtype at the top */
    assert_int_equal(parse("{\"torch_dtype\": \"bfloat16\", \"text_config\": {\"num_hidden_layers\": 6, "
                           "\"num_key_value_heads\": 4, \"head_dim\": 32}}",
                           &s, &has, NULL),
                     GQ_OK);
    assert_int_equal(s.layers, 6);
    assert_true(has);
    assert_int_equal(s.dtype, GQ_KV_BF16);
    /* the text model's own dtype comes first; "dtype" when "torch_dtype" is null */
    assert_int_equal(
        parse("{\"torch_dtype\": \"float32\", \"text_config\": {\"num_hidden_layers\": 6, "
              "\"num_key_value_heads\": 4, \"head_dim\": 32, \"torch_dtype\": null, \"dtype\": \"fp16\"}}",
              &s, &has, NULL),
        GQ_OK);
    assert_int_equal(s.dtype, GQ_KV_FP16);
    /* the root's own layers win over text_config */
    assert_int_equal(
        parse("{\"num_hidden_layers\": 2, \"num_key_value_heads\": 1, \"head_dim\": 8, "
              "\"text_config\": {\"num_hidden_layers\": 6, \"num_key_value_heads\": 4, \"head_dim\": 32}}",
              &s, &has, NULL),
        GQ_OK);
    assert_int_equal(s.layers, 2);
    assert_false(has);
    /* text_config that is not an object is ignored */
    expect_error("{\"text_config\": 5}", "missing field 'num_hidden_layers'");
    /* a dtype that is not a string, named by its field */
    expect_error("{\"num_hidden_layers\": 2, \"num_key_value_heads\": 1, \"head_dim\": 8, \"dtype\": 16}",
                 "cfg.json: field 'dtype' must be a string");
    expect_error(
        "{\"num_hidden_layers\": 2, \"num_key_value_heads\": 1, \"head_dim\": 8, \"torch_dtype\": 16}",
        "field 'torch_dtype' must be a string");
    expect_error(
        "{\"num_hidden_layers\": 2, \"num_key_value_heads\": 1, \"head_dim\": 8, \"torch_dtype\": \"int3\"}",
        "cfg.json: torch_dtype: unknown dtype 'int3'");
}

static void rates(void **state)
{
    (void)state;
    /* one after the other: 1 / (1/20 + 1/30) = 12 */
    assert_near(gq_kv_serial_gbps(20, 30), 12.0, 1e-12);
    assert_near(gq_kv_serial_gbps(20, 0), 0, 0);
    assert_near(gq_kv_serial_gbps(NAN, 5), 0, 0);
    assert_near(gq_kv_pipelined_gbps(20, -1), 0, 0);
    assert_near(gq_kv_pipelined_gbps(NAN, 3), 0, 0);
    assert_near(gq_kv_pipelined_gbps(20, 0.5), 0.5, 0); /* a slow link is still a link */
    assert_near(gq_kv_pipelined_gbps(0.25, 20), 0.25, 0);
    assert_near(gq_kv_serial_gbps(0.5, 0.5), 0.25, 1e-15);
    /* 2.5 GB at 25 GB/s: 100 ms */
    assert_near(gq_kv_time_ms(2500000000ULL, 25), 100.0, 1e-9);
    assert_near(gq_kv_time_ms(1000, -3), 0, 0);
    assert_true(gq_kv_time_ms(1000, 0) == 0.0); /* not infinity */
    assert_true(gq_kv_time_ms(0, 0) == 0.0);    /* not NaN */
    assert_near(gq_kv_time_ms(1000000000ULL, 0.5), 2000.0, 1e-9);
}

static void config_load_errors(void **state)
{
    (void)state;
    gq_kv_shape s;
    bool has;
    gq_err e = {0};
    assert_int_equal(gq_kv_config_load("/nonexistent/config.json", &s, &has, &e), GQ_E_IO);
    assert_non_null(strstr(e.msg, "cannot read model config '/nonexistent/config.json'"));
}

/* A record of one round, or of a rate below 1 GB/s, is still a rate
 * (written for the survivors of bench/mutation, seed 165809224). */
static void record_ok_small(void **state)
{
    (void)state;
    gq_record r;
    memset(&r, 0, sizeof r);
    r.valid = true;
    r.value.n = 1;
    r.value.median = 0.5;
    assert_true(gq_kv_record_ok(&r));
    r.value.n = 0;
    assert_false(gq_kv_record_ok(&r));
    r.value.n = 1;
    r.value.median = 0;
    assert_false(gq_kv_record_ok(&r));
}

/* gq_kv_shape_check at its edges: multi-head latent attention needs both of
 * its fields (either one alone is refused, naming both), and then needs no
 * KV heads; the sliding window must fit the model (a window of 0 tokens on
 * no layer is none). Each refusal is the exact one line. */
static void shape_check_edges(void **state)
{
    (void)state;
    static const char mla[] = "multi-head latent attention needs kv_lora_rank and qk_rope_head_dim both > 0";
    gq_err e = {0};
    gq_kv_shape s = {.layers = 61, .mla_rank = 512, .mla_rope = 64, .dtype = GQ_KV_BF16};
    assert_int_equal(gq_kv_shape_check(&s, &e), GQ_OK);
    assert_int_equal(gq_kv_bytes_per_token(&s), 61 * (512 + 64) * 2);
    s.mla_rope = 0;
    assert_int_equal(gq_kv_shape_check(&s, &e), GQ_E_USAGE);
    assert_string_equal(e.msg, mla);
    s.mla_rope = 64;
    s.mla_rank = 0;
    memset(&e, 0, sizeof e);
    assert_int_equal(gq_kv_shape_check(&s, &e), GQ_E_USAGE);
    assert_string_equal(e.msg, mla);
    /* a negative one with a positive other: refused as well */
    s.mla_rank = -1;
    memset(&e, 0, sizeof e);
    assert_int_equal(gq_kv_shape_check(&s, &e), GQ_E_USAGE);
    assert_string_equal(e.msg, mla);
    /* the payload refuses it the same way, before any arithmetic */
    uint64_t p = 0;
    memset(&e, 0, sizeof e);
    assert_int_equal(gq_kv_payload(&s, 10, &p, &e), GQ_E_USAGE);
    assert_string_equal(e.msg, mla);
    /* no MLA: heads and head_dim, each named */
    gq_kv_shape g = {.layers = 2, .kv_heads = 0, .head_dim = 8, .dtype = GQ_KV_FP16};
    memset(&e, 0, sizeof e);
    assert_int_equal(gq_kv_shape_check(&g, &e), GQ_E_USAGE);
    assert_string_equal(e.msg, "--kv-heads 0: the model needs at least 1 KV head");
    g.kv_heads = 1;
    g.head_dim = 0;
    memset(&e, 0, sizeof e);
    assert_int_equal(gq_kv_shape_check(&g, &e), GQ_E_USAGE);
    assert_string_equal(e.msg, "--head-dim 0: the head dimension must be at least 1");
    g.head_dim = 8;
    /* the window: on every layer fits, one more layer does not; layers without a window do not */
    g.window = 4;
    g.window_layers = 2;
    assert_int_equal(gq_kv_shape_check(&g, NULL), GQ_OK);
    g.window_layers = 3;
    memset(&e, 0, sizeof e);
    assert_int_equal(gq_kv_shape_check(&g, &e), GQ_E_USAGE);
    assert_string_equal(e.msg, "the sliding window (4 tokens on 3 of 2 layers) does not fit the model");
    g.window = 0;
    g.window_layers = 1;
    assert_int_equal(gq_kv_shape_check(&g, NULL), GQ_E_USAGE);
    g.window_layers = 0;
    assert_int_equal(gq_kv_shape_check(&g, NULL), GQ_OK);
    /* no window: every layer keeps every token (2 layers x 2 x 1 head x 8 x fp16 = 64 B/token) */
    assert_int_equal(gq_kv_payload(&g, 10, &p, NULL), GQ_OK);
    assert_true(p == 640);
    /* a window of 4 on both layers keeps 4 of the 10 tokens; on one layer, 10 + 4 */
    g.window = 4;
    g.window_layers = 2;
    assert_int_equal(gq_kv_payload(&g, 10, &p, NULL), GQ_OK);
    assert_true(p == 32 * 8);
    g.window_layers = 1;
    assert_int_equal(gq_kv_payload(&g, 10, &p, NULL), GQ_OK);
    assert_true(p == 32 * 14);
    /* a window no shorter than the tokens keeps them all */
    g.window = 10;
    assert_int_equal(gq_kv_payload(&g, 10, &p, NULL), GQ_OK);
    assert_true(p == 640);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(payload_at_2_63),       cmocka_unit_test(shape_check_edges),
        cmocka_unit_test(dtype_names_all),       cmocka_unit_test(config_fields),
        cmocka_unit_test(config_text_and_dtype), cmocka_unit_test(rates),
        cmocka_unit_test(config_load_errors),    cmocka_unit_test(record_ok_small),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
