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
 * Rates are GB/s (10^9 B/s); times are milliseconds. Pure functions apart from
 * gq_kv_config_load(), which reads a file. Nothing here prints.
 *
 * What the formula does not cover: models with multi-head latent attention
 * (DeepSeek's kv_lora_rank) store a compressed latent, not K and V per head;
 * gq_kv_config_parse() refuses them rather than give a wrong figure.
 */
#ifndef GQ_ANALYSIS_KV_H
#define GQ_ANALYSIS_KV_H

#include <jansson.h>
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
} gq_kv_dtype;

/* A model's KV shape. All counts > 0 once checked. */
typedef struct gq_kv_shape {
    long layers;
    long kv_heads;
    long head_dim;
    gq_kv_dtype dtype;
} gq_kv_shape;

/* Parse a dtype name, case-insensitive: fp32/float32, bf16/bfloat16,
 * fp16/float16/half, fp8 (= fp8_e4m3), fp8_e4m3/e4m3/float8_e4m3fn,
 * fp8_e5m2/e5m2/float8_e5m2. Unknown names: GQ_E_USAGE with a message that
 * lists the accepted names (and the closest one). `what` names the source in
 * the message (e.g. "--kv-dtype" or "config.json torch_dtype"). */
int gq_kv_dtype_parse(const char *name, const char *what, gq_kv_dtype *out, gq_err *err);
/* Bytes per element (4, 2, 2, 1, 1); 0 for GQ_KV_DTYPE_NONE. */
int gq_kv_dtype_bytes(gq_kv_dtype d);
/* Canonical name ("fp32", "bf16", "fp16", "fp8_e4m3", "fp8_e5m2", "none"). */
const char *gq_kv_dtype_name(gq_kv_dtype d);

/* Check that every count is > 0 and a dtype is set; GQ_E_USAGE naming the
 * first bad field otherwise (as a flag name: --layers, --kv-heads, ...). */
int gq_kv_shape_check(const gq_kv_shape *s, gq_err *err);

/* Bytes per token of a checked shape. Returns 0 when it would overflow. */
uint64_t gq_kv_bytes_per_token(const gq_kv_shape *s);

/* payload = bytes/token x tokens. tokens must be > 0; GQ_E_USAGE on a bad
 * shape, tokens <= 0, or overflow past 2^63 bytes. */
int gq_kv_payload(const gq_kv_shape *s, long tokens, uint64_t *bytes, gq_err *err);

/* Read the KV shape from a Hugging Face config object. Fields:
 *   num_hidden_layers (required), num_attention_heads (required unless both
 *   num_key_value_heads and head_dim are present), num_key_value_heads
 *   (default: num_attention_heads), head_dim (default: hidden_size /
 *   num_attention_heads, which must divide evenly), torch_dtype (or "dtype",
 *   the newer name) as the default KV dtype.
 * Multimodal configs that keep the language model under "text_config" are
 * read from there. A null value counts as absent. `path` only labels messages.
 * *has_dtype tells whether a dtype was found (a config without torch_dtype is
 * fine when the caller has --kv-dtype); s->dtype is GQ_KV_DTYPE_NONE then.
 * Errors (GQ_E_USAGE) name the file and the missing or mistyped field. */
int gq_kv_config_parse(const json_t *root, const char *path, gq_kv_shape *s, bool *has_dtype, gq_err *err);

/* Load and parse a config.json file. A missing or unreadable file is GQ_E_IO;
 * malformed JSON is GQ_E_USAGE with the line and column. */
int gq_kv_config_load(const char *path, gq_kv_shape *s, bool *has_dtype, gq_err *err);

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
