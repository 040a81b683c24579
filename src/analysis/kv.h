/* KV-cache handoff arithmetic: how many bytes a model's KV cache holds per
 * token, how big a handoff of N tokens is, and how long it should take on
 * measured rates (seed 001 §4, seed 000 "What this means for moving a KV
 * cache").
 *
 *   bytes/token = 2 (K and V) x layers x kv_heads x head_dim x dtype bytes
 *   payload     = bytes/token x tokens
 *   direct      = payload / P2P rate
 *   staged, serial    = payload / (1 / (1/down + 1/up))   (D2H, then H2D)
 *   staged, pipelined = payload / min(down', up')         (chunks overlap;
 *       down' and up' are the rates measured while BOTH directions run at once,
 *       because one direction does not keep its one-way rate while the other is
 *       busy: seed 000 point 3)
 *
 * Rates are GB/s (10^9 B/s); times are milliseconds. Pure functions (a model's
 * config.json is read by doc/kv_config.h). Nothing here prints.
 *
 * Models people serve differ from that formula in two ways, both handled:
 *   - multi-head latent attention (DeepSeek-V2/V3, Kimi-K2: kv_lora_rank)
 *     keeps one latent per layer and token, not K and V per head:
 *       bytes/token = layers x (kv_lora_rank + qk_rope_head_dim) x dtype bytes
 *   - sliding windows: a windowed layer keeps only the last `window` tokens,
 *       payload = layer bytes x (full layers x tokens
 *                                + windowed layers x min(tokens, window))
 * What a config does not let gpuqual size (an unknown layer type, a window
 * whose layers the config does not say) is refused naming the missing field.
 */
#ifndef GQ_ANALYSIS_KV_H
#define GQ_ANALYSIS_KV_H

#include <stdbool.h>
#include <stdint.h>

#include "core/record.h"
#include "core/status.h"

typedef enum gq_kv_dtype {
    GQ_KV_DTYPE_NONE = 0, /* not given */
    GQ_KV_FP32,
    GQ_KV_BF16,
    GQ_KV_FP16,
    GQ_KV_FP8_E4M3,
    GQ_KV_FP8_E5M2,
    GQ_KV_INT8, /* 1 byte; per-block scales, where an engine keeps them, are not counted */
} gq_kv_dtype;

/* A model's KV shape. All counts > 0 once checked (kv_heads and head_dim
 * only without MLA). */
typedef struct gq_kv_shape {
    long layers;
    long kv_heads;
    long head_dim;
    gq_kv_dtype dtype;
    /* multi-head latent attention: both > 0, or both 0 (K and V per head) */
    long mla_rank; /* kv_lora_rank */
    long mla_rope; /* qk_rope_head_dim */
    /* sliding window: window_layers of the layers keep only the last `window`
     * tokens; window 0 = every layer keeps every token */
    long window;
    long window_layers;
    char window_rule[160]; /* how the windowed layers were found ("" = no window) */
} gq_kv_shape;

/* Parse a dtype name, case-insensitive: fp32/float32, bf16/bfloat16,
 * fp16/float16/half, fp8 (= fp8_e4m3), fp8_e4m3/e4m3/float8_e4m3fn,
 * fp8_e5m2/e5m2/float8_e5m2, int8. Unknown names: GQ_E_USAGE with a message that
 * lists the accepted names (and the closest one). `what` names the source in
 * the message (e.g. "--kv-dtype" or "config.json torch_dtype"). */
int gq_kv_dtype_parse(const char *name, const char *what, gq_kv_dtype *out, gq_err *err);
/* Bytes per element (4, 2, 2, 1, 1, 1); 0 for GQ_KV_DTYPE_NONE. */
int gq_kv_dtype_bytes(gq_kv_dtype d);
/* Canonical name ("fp32", "bf16", "fp16", "fp8_e4m3", "fp8_e5m2", "int8", "none"). */
const char *gq_kv_dtype_name(gq_kv_dtype d);

/* Check that every count is > 0 and a dtype is set; GQ_E_USAGE naming the
 * first bad field otherwise (as a flag name: --layers, --kv-heads, ...). */
int gq_kv_shape_check(const gq_kv_shape *s, gq_err *err);

/* Bytes one layer keeps per token: 2 x kv_heads x head_dim x dtype bytes, or
 * (kv_lora_rank + qk_rope_head_dim) x dtype bytes with MLA. 0 on a bad shape. */
uint64_t gq_kv_layer_bytes(const gq_kv_shape *s);

/* Bytes per token while every layer keeps it (tokens <= window): layers x
 * layer bytes. Returns 0 when it would overflow. */
uint64_t gq_kv_bytes_per_token(const gq_kv_shape *s);

/* payload = layer bytes x (full layers x tokens + windowed layers x
 * min(tokens, window)). tokens must be > 0; GQ_E_USAGE on a bad shape,
 * tokens <= 0, or overflow past 2^63 bytes. */
int gq_kv_payload(const gq_kv_shape *s, long tokens, uint64_t *bytes, gq_err *err);

/* Parse a token count: digits with an optional fraction and an optional
 * suffix k (x 1,000) or M (x 1,000,000), case-insensitive: "8000", "8k",
 * "1.5M". The result must be a whole number from 1 to 10^12. `what` names the
 * source in the message ("--tokens"). */
int gq_kv_tokens_parse(const char *text, const char *what, long *out, gq_err *err);

/* Reading a model's config.json into a gq_kv_shape: doc/kv_config.h. */

/* Effective rates of the three handoff strategies, GB/s; 0 when an input is
 * missing (<= 0). */
double gq_kv_serial_gbps(double down_gbps, double up_gbps);
double gq_kv_pipelined_gbps(double down_concurrent_gbps, double up_concurrent_gbps);
/* Milliseconds to move `bytes` at `gbps`; 0 when gbps <= 0. */
double gq_kv_time_ms(uint64_t bytes, double gbps);

/* ---- the handoff's figures (measured by exec/kv_handoff.h) --------------- */

#define GQ_KV_MAX_CHUNKS 16

/* A rate and where it came from. */
typedef struct gq_kv_rate {
    double gbps;      /* 0 = unknown */
    char source[160]; /* "measured", "assumed (--p2p-gbps)", "FILE: record 12 (test)" */
} gq_kv_rate;

typedef struct gq_kv_rates {
    gq_kv_rate p2p, down, up, cdown, cup; /* cdown/cup: while both legs run at once */
    bool p2p_impossible;
} gq_kv_rates;

/* Set a rate and its source (printf-style). */
void gq_kv_set_rate(gq_kv_rate *r, double v, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* A one-flow record usable as a rate: valid, a figure, no error, overlap or
 * impossible flag. */
bool gq_kv_record_ok(const gq_record *r);

/* One measured copy pattern: GB/s and payload milliseconds over rounds. */
typedef struct gq_kv_meas {
    bool run, valid;
    gq_stat gbps; /* over rounds */
    gq_stat ms;   /* payload time over rounds */
    char error[200];
} gq_kv_meas;

/* Everything `gpuqual kv` figures out: the shape, the payload, the rates, the
 * estimates and what was measured. */
typedef struct gq_kv_result {
    gq_kv_shape shape;
    uint64_t bpt, payload;
    long tokens;
    int from, to;
    gq_kv_rates r;
    double est_direct, est_serial, est_pipe; /* GB/s, 0 = n/a */
    char why_direct[160], why_pipe[160];
    bool measured;
    gq_kv_meas direct, serial, serial_down, serial_up;
    int nchunks;
    uint64_t chunk[GQ_KV_MAX_CHUNKS];
    gq_kv_meas pipe[GQ_KV_MAX_CHUNKS];
    int best_chunk;
} gq_kv_result;

#endif
