/* KV sizing of the models people serve, from their config.json files in
 * tests/data/hf/ (README.md there says where each came from). Every figure
 * below is worked out by hand in the comment above it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "analysis/kv.h"
#include "doc/kv_config.h"
#include "../test_util.h"

#define HF GQ_TEST_DATA "/data/hf/"

static gq_kv_shape load(const char *file)
{
    gq_kv_shape s;
    bool has_dtype = false;
    gq_err e = {0};
    char path[512];
    snprintf(path, sizeof path, "%s%s", HF, file);
    if (gq_kv_config_load(path, &s, &has_dtype, &e) != GQ_OK || !has_dtype)
        fail_msg("%s: %s", file, e.msg);
    return s;
}

static uint64_t payload(const gq_kv_shape *s, long tokens)
{
    uint64_t b = 0;
    gq_err e = {0};
    if (gq_kv_payload(s, tokens, &b, &e) != GQ_OK)
        fail_msg("payload of %ld tokens: %s", tokens, e.msg);
    return b;
}

/* Llama-3.1-8B: 32 layers, 8 KV heads, head dim 4096 / 32 = 128, bf16:
 * 2 x 32 x 8 x 128 x 2 = 131,072 B/token; no window, so 8,000 tokens are
 * 131,072 x 8,000 = 1,048,576,000 B. */
static void llama31_8b(void **state)
{
    (void)state;
    gq_kv_shape s = load("llama-3.1-8b.json");
    assert_int_equal(gq_kv_bytes_per_token(&s), 131072);
    assert_int_equal(s.window, 0);
    assert_int_equal(payload(&s, 8000), UINT64_C(1048576000));
}

/* Llama-3-70B: 80 layers, 8 KV heads, 8192 / 64 = 128, bf16:
 * 2 x 80 x 8 x 128 x 2 = 327,680 B/token; int8 halves it: 163,840. */
static void llama3_70b_int8(void **state)
{
    (void)state;
    gq_kv_shape s = load("llama3-70b.json");
    assert_int_equal(gq_kv_bytes_per_token(&s), 327680);
    s.dtype = GQ_KV_INT8;
    assert_int_equal(gq_kv_bytes_per_token(&s), 163840);
    assert_int_equal(payload(&s, 1000), UINT64_C(163840000));
}

/* Qwen2.5-72B declares sliding_window 131072 with use_sliding_window false:
 * no window. 2 x 80 x 8 x 128 x 2 = 327,680 B/token, and 200,000 tokens are
 * 327,680 x 200,000 = 65,536,000,000 B. The rule is held even when the
 * config would put every layer in the window (max_window_layers 0). */
static void qwen25_72b_window_unused(void **state)
{
    (void)state;
    gq_kv_shape s = load("qwen2.5-72b.json");
    assert_int_equal(gq_kv_bytes_per_token(&s), 327680);
    assert_int_equal(s.window, 0);
    assert_int_equal(payload(&s, 200000), UINT64_C(65536000000));

    json_error_t je;
    json_t *root = json_load_file(HF "qwen2.5-72b.json", 0, &je);
    assert_non_null(root);
    json_object_set_new(root, "max_window_layers", json_integer(0));
    bool has_dtype;
    assert_int_equal(gq_kv_config_parse(root, "qwen", &s, &has_dtype, NULL), GQ_OK);
    assert_int_equal(s.window, 0);
    assert_int_equal(payload(&s, 200000), UINT64_C(65536000000));
    /* Switched on, layers 0-79 from max_window_layers 0 all keep 131,072:
     * 2 x 8 x 128 x 2 = 4,096 B per layer x 80 x 131,072 = 42,949,672,960 B. */
    json_object_set_new(root, "use_sliding_window", json_true());
    assert_int_equal(gq_kv_config_parse(root, "qwen", &s, &has_dtype, NULL), GQ_OK);
    assert_int_equal(s.window, 131072);
    assert_int_equal(s.window_layers, 80);
    assert_int_equal(payload(&s, 200000), UINT64_C(42949672960));
    json_decref(root);
}

/* A Qwen2 config that uses its window from layer 70 on: 10 of 80 layers keep
 * 4,096 tokens. 4,096 B per layer-token; 32,000 tokens:
 * 70 x 32,000 + 10 x 4,096 = 2,240,000 + 40,960 = 2,280,960 layer-tokens
 * x 4,096 = 9,342,812,160 B. */
static void qwen2_window_from_max_window_layers(void **state)
{
    (void)state;
    gq_kv_shape s = load("qwen2-window-used.json");
    assert_int_equal(s.window, 4096);
    assert_int_equal(s.window_layers, 10);
    assert_int_equal(payload(&s, 32000), UINT64_C(9342812160));
}

/* Mistral-7B-v0.1: 32 layers, 8 KV heads, 128, bf16: 131,072 B/token, and
 * every layer keeps at most sliding_window 4,096 tokens. 32,000 tokens:
 * 131,072 x 4,096 = 536,870,912 B (not 131,072 x 32,000 = 4,194,304,000).
 * 1,000 tokens are inside the window: 131,072,000 B. */
static void mistral_7b_window(void **state)
{
    (void)state;
    gq_kv_shape s = load("mistral-7b-v0.1.json");
    assert_int_equal(gq_kv_bytes_per_token(&s), 131072);
    assert_int_equal(s.window, 4096);
    assert_int_equal(s.window_layers, 32);
    assert_int_equal(payload(&s, 32000), UINT64_C(536870912));
    assert_int_equal(payload(&s, 1000), UINT64_C(131072000));
}

/* Mixtral-8x7B-v0.1: no sliding_window field: 2 x 32 x 8 x 128 x 2 =
 * 131,072 B/token for every token: 32,000 tokens = 4,194,304,000 B. */
static void mixtral_8x7b(void **state)
{
    (void)state;
    gq_kv_shape s = load("mixtral-8x7b.json");
    assert_int_equal(gq_kv_bytes_per_token(&s), 131072);
    assert_int_equal(s.window, 0);
    assert_int_equal(payload(&s, 32000), UINT64_C(4194304000));
}

/* Gemma-2-9B: 42 layers, 8 KV heads, head_dim 256, float32 in the config:
 * 2 x 8 x 256 x 4 = 16,384 B per layer-token, x 42 = 688,128 B/token.
 * Layers 0, 2, ..., 40 (21) keep 4,096 tokens, the other 21 keep all.
 * With bf16 (8,192 B per layer-token) and 8,000 tokens:
 * 21 x 8,000 + 21 x 4,096 = 254,016 layer-tokens x 8,192 = 2,080,899,072 B. */
static void gemma2_9b_alternating(void **state)
{
    (void)state;
    gq_kv_shape s = load("gemma-2-9b.json");
    assert_int_equal(s.dtype, GQ_KV_FP32);
    assert_int_equal(gq_kv_bytes_per_token(&s), 688128);
    assert_int_equal(s.window, 4096);
    assert_int_equal(s.window_layers, 21);
    s.dtype = GQ_KV_BF16;
    assert_int_equal(payload(&s, 8000), UINT64_C(2080899072));
}

/* Gemma 3 (sliding_window_pattern 6, 48 layers): every 6th layer global,
 * 48 / 6 = 8 global, 40 keep 1,024 tokens. 2 x 8 x 256 x 2 = 8,192 B per
 * layer-token; 10,000 tokens: 8 x 10,000 + 40 x 1,024 = 120,960 layer-tokens
 * x 8,192 = 990,904,320 B. */
static void gemma3_pattern(void **state)
{
    (void)state;
    gq_kv_shape s = load("gemma3-pattern.json");
    assert_int_equal(s.window_layers, 40);
    assert_int_equal(payload(&s, 10000), UINT64_C(990904320));
}

/* layer_types decides for any architecture: 3 of 4 layers sliding (128),
 * 2 x 2 x 64 x 2 = 512 B per layer-token; 1,000 tokens:
 * 1 x 1,000 + 3 x 128 = 1,384 layer-tokens x 512 = 708,608 B. */
static void layer_types_listed(void **state)
{
    (void)state;
    gq_kv_shape s = load("layer-types.json");
    assert_int_equal(s.window_layers, 3);
    assert_int_equal(payload(&s, 1000), UINT64_C(708608));
}

/* DeepSeek-V3 (MLA): 61 layers x (kv_lora_rank 512 + qk_rope_head_dim 64)
 * x 2 (bf16) = 61 x 1,152 = 70,272 B/token; 128,000 tokens =
 * 8,994,816,000 B. The 128 KV heads x 128 of the config are not the cache. */
static void deepseek_v3_mla(void **state)
{
    (void)state;
    gq_kv_shape s = load("deepseek-v3.json");
    assert_int_equal(s.mla_rank, 512);
    assert_int_equal(s.mla_rope, 64);
    assert_int_equal(gq_kv_layer_bytes(&s), 1152);
    assert_int_equal(gq_kv_bytes_per_token(&s), 70272);
    assert_int_equal(payload(&s, 128000), UINT64_C(8994816000));
    /* fp8: 61 x 576 = 35,136 B/token. */
    s.dtype = GQ_KV_FP8_E4M3;
    assert_int_equal(gq_kv_bytes_per_token(&s), 35136);
}

static void tokens_suffixes(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        long want;
    } ok[] = {{"8000", 8000},    {"8k", 8000},  {"8K", 8000},     {"1.5M", 1500000},
              {"1.5m", 1500000}, {"0.5k", 500}, {"128k", 128000}, {"1", 1}};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        long v = 0;
        gq_err e = {0};
        if (gq_kv_tokens_parse(ok[i].text, "--tokens", &v, &e) != GQ_OK || v != ok[i].want)
            fail_msg("'%s': %ld (want %ld) %s", ok[i].text, v, ok[i].want, e.msg);
    }
    static const char *const bad[] = {"",        "k",  "0",   "-8k", "8kb",     "8 k",
                                      "1.2345k", "8G", "1.5", "2e3", "0.0001k", "1000001M"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        long v = 0;
        gq_err e = {0};
        if (gq_kv_tokens_parse(bad[i], "--tokens", &v, &e) != GQ_E_USAGE || !strstr(e.msg, "--tokens") ||
            !strstr(e.msg, "1.5M"))
            fail_msg("'%s' was accepted as %ld or the message is wrong: %s", bad[i], v, e.msg);
    }
}

/* A config that is a stream (a pipe, so no size to check first) is read up
 * to 16 MiB and refused there, naming the path and the limit: 17 MiB of one
 * JSON string. */
static void config_stream_over_the_limit(void **state)
{
    (void)state;
    int fd[2];
    assert_int_equal(pipe(fd), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fd[0]);
        static char a[1 << 16];
        memset(a, 'a', sizeof a);
        if (write(fd[1], "{\"a\":\"", 6) != 6)
            _exit(1);
        for (int i = 0; i < 17 * 16; i++) /* 17 MiB; the reader stops at 16 */
            if (write(fd[1], a, sizeof a) != (ssize_t)sizeof a)
                _exit(0);
        _exit(0);
    }
    close(fd[1]);
    char path[64], want[160];
    snprintf(path, sizeof path, "/dev/fd/%d", fd[0]);
    gq_kv_shape s;
    bool has_dtype = false;
    gq_err e = {0};
    assert_int_equal(gq_kv_config_load(path, &s, &has_dtype, &e), GQ_E_USAGE);
    close(fd[0]);
    waitpid(pid, NULL, 0);
    snprintf(want, sizeof want, "model config '%s' holds more than 16 MiB; is it the right file?", path);
    assert_string_equal(e.msg, want);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(llama31_8b),
        cmocka_unit_test(llama3_70b_int8),
        cmocka_unit_test(qwen25_72b_window_unused),
        cmocka_unit_test(qwen2_window_from_max_window_layers),
        cmocka_unit_test(mistral_7b_window),
        cmocka_unit_test(mixtral_8x7b),
        cmocka_unit_test(gemma2_9b_alternating),
        cmocka_unit_test(gemma3_pattern),
        cmocka_unit_test(layer_types_listed),
        cmocka_unit_test(deepseek_v3_mla),
        cmocka_unit_test(tokens_suffixes),
        cmocka_unit_test(config_stream_over_the_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
