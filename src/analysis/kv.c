#include "analysis/kv.h"

#include <math.h>
#include <stdio.h>
#include <stdarg.h>
#include <string.h>
#include <strings.h>

#include "core/interrupt.h"
#include "core/units.h"

static const struct {
    const char *name;
    gq_kv_dtype dtype;
} dtype_names[] = {
    {.name = "fp32", .dtype = GQ_KV_FP32},
    {.name = "float32", .dtype = GQ_KV_FP32},
    {.name = "float", .dtype = GQ_KV_FP32},
    {.name = "bf16", .dtype = GQ_KV_BF16},
    {.name = "bfloat16", .dtype = GQ_KV_BF16},
    {.name = "fp16", .dtype = GQ_KV_FP16},
    {.name = "float16", .dtype = GQ_KV_FP16},
    {.name = "half", .dtype = GQ_KV_FP16},
    /* Serving engines' "fp8" KV cache means e4m3 unless told otherwise. */
    {.name = "fp8", .dtype = GQ_KV_FP8_E4M3},
    {.name = "fp8_e4m3", .dtype = GQ_KV_FP8_E4M3},
    {.name = "e4m3", .dtype = GQ_KV_FP8_E4M3},
    {.name = "float8_e4m3fn", .dtype = GQ_KV_FP8_E4M3},
    {.name = "float8_e4m3", .dtype = GQ_KV_FP8_E4M3},
    {.name = "fp8_e5m2", .dtype = GQ_KV_FP8_E5M2},
    {.name = "e5m2", .dtype = GQ_KV_FP8_E5M2},
    {.name = "float8_e5m2", .dtype = GQ_KV_FP8_E5M2},
    {.name = "int8", .dtype = GQ_KV_INT8},
};
#define NDTYPE_NAMES (sizeof dtype_names / sizeof dtype_names[0])

int gq_kv_dtype_parse(const char *name, const char *what, gq_kv_dtype *out, gq_err *err)
{
    if (!name || !*name)
        return gq_err_set(err, GQ_E_USAGE,
                          "%s: empty dtype; expected fp32, bf16, fp16, fp8_e4m3, fp8_e5m2 or int8", what);
    char low[32];
    size_t n = strlen(name);
    if (n < sizeof low) {
        for (size_t i = 0; i <= n; i++)
            low[i] = (char)((name[i] >= 'A' && name[i] <= 'Z') ? name[i] - 'A' + 'a' : name[i]);
        /* "torch.bfloat16" appears in configs written by some tools. */
        const char *l = strncmp(low, "torch.", 6) ? low : low + 6;
        for (size_t i = 0; i < NDTYPE_NAMES; i++)
            if (!strcmp(l, dtype_names[i].name)) {
                *out = dtype_names[i].dtype;
                return GQ_OK;
            }
    }
    const char *cands[NDTYPE_NAMES + 1];
    for (size_t i = 0; i < NDTYPE_NAMES; i++)
        cands[i] = dtype_names[i].name;
    cands[NDTYPE_NAMES] = NULL;
    const char *best = gq_closest(name, cands);
    return gq_err_set(err, GQ_E_USAGE,
                      "%s: unknown dtype '%s'%s%s%s; expected fp32, bf16, fp16, fp8_e4m3, fp8_e5m2 or int8",
                      what, name, best ? " (did you mean '" : "", best ? best : "", best ? "'?)" : "");
}

int gq_kv_dtype_bytes(gq_kv_dtype d)
{
    switch (d) {
    case GQ_KV_FP32: return 4;
    case GQ_KV_BF16:
    case GQ_KV_FP16: return 2;
    case GQ_KV_FP8_E4M3:
    case GQ_KV_FP8_E5M2:
    case GQ_KV_INT8: return 1;
    case GQ_KV_DTYPE_NONE: break;
    }
    return 0;
}

const char *gq_kv_dtype_name(gq_kv_dtype d)
{
    switch (d) {
    case GQ_KV_FP32: return "fp32";
    case GQ_KV_BF16: return "bf16";
    case GQ_KV_FP16: return "fp16";
    case GQ_KV_FP8_E4M3: return "fp8_e4m3";
    case GQ_KV_FP8_E5M2: return "fp8_e5m2";
    case GQ_KV_INT8: return "int8";
    case GQ_KV_DTYPE_NONE: break;
    }
    return "none";
}

int gq_kv_shape_check(const gq_kv_shape *s, gq_err *err)
{
    if (s->layers <= 0)
        return gq_err_set(err, GQ_E_USAGE, "--layers %ld: the model needs at least 1 layer", s->layers);
    if (s->mla_rank > 0 || s->mla_rope > 0) {
        if (s->mla_rank <= 0 || s->mla_rope <= 0)
            return gq_err_set(err, GQ_E_USAGE,
                              "multi-head latent attention needs kv_lora_rank and qk_rope_head_dim both > 0");
    } else {
        if (s->kv_heads <= 0)
            return gq_err_set(err, GQ_E_USAGE, "--kv-heads %ld: the model needs at least 1 KV head",
                              s->kv_heads);
        if (s->head_dim <= 0)
            return gq_err_set(err, GQ_E_USAGE, "--head-dim %ld: the head dimension must be at least 1",
                              s->head_dim);
    }
    if (s->window < 0 || s->window_layers < 0 || s->window_layers > s->layers ||
        (s->window_layers && !s->window))
        return gq_err_set(err, GQ_E_USAGE,
                          "the sliding window (%ld tokens on %ld of %ld layers) does not fit the model",
                          s->window, s->window_layers, s->layers);
    if (gq_kv_dtype_bytes(s->dtype) == 0)
        return gq_err_set(err, GQ_E_USAGE,
                          "no KV dtype: give --kv-dtype fp32|bf16|fp16|fp8_e4m3|fp8_e5m2|int8");
    return GQ_OK;
}

/* a * b into *r unless it would pass 2^63. */
static bool mul_ok(uint64_t a, uint64_t b, uint64_t *r)
{
    if (a != 0 && b > (UINT64_C(1) << 63) / a)
        return false;
    *r = a * b;
    return *r <= (UINT64_C(1) << 63);
}

uint64_t gq_kv_layer_bytes(const gq_kv_shape *s)
{
    uint64_t v, d = (uint64_t)gq_kv_dtype_bytes(s->dtype);
    if (s->mla_rank > 0 && s->mla_rope > 0) {
        /* one latent per token, shared by every head: no separate K and V */
        if (!mul_ok((uint64_t)s->mla_rank + (uint64_t)s->mla_rope, d, &v))
            return 0;
        return v;
    }
    if (s->kv_heads <= 0 || s->head_dim <= 0)
        return 0;
    v = 2;
    if (!mul_ok(v, (uint64_t)s->kv_heads, &v) || !mul_ok(v, (uint64_t)s->head_dim, &v) || !mul_ok(v, d, &v))
        return 0;
    return v;
}

uint64_t gq_kv_bytes_per_token(const gq_kv_shape *s)
{
    uint64_t v, l = gq_kv_layer_bytes(s);
    if (s->layers <= 0 || l == 0 || !mul_ok(l, (uint64_t)s->layers, &v))
        return 0;
    return v;
}

int gq_kv_payload(const gq_kv_shape *s, long tokens, uint64_t *bytes, gq_err *err)
{
    int rc = gq_kv_shape_check(s, err);
    if (rc)
        return rc;
    if (tokens <= 0)
        return gq_err_set(err, GQ_E_USAGE, "--tokens %ld: the handoff needs at least 1 token", tokens);
    uint64_t l = gq_kv_layer_bytes(s), full, win, sum;
    uint64_t kept = s->window > 0 && s->window < tokens ? (uint64_t)s->window : (uint64_t)tokens;
    uint64_t nwin = s->window > 0 ? (uint64_t)s->window_layers : 0;
    /* layer-tokens kept: full layers x tokens + windowed layers x min(tokens, window) */
    if (l == 0 || !mul_ok((uint64_t)s->layers - nwin, (uint64_t)tokens, &full) || !mul_ok(nwin, kept, &win) ||
        (sum = full + win) < full || !mul_ok(l, sum, bytes))
        return gq_err_set(err, GQ_E_USAGE,
                          "the KV payload of %ld tokens overflows 2^63 bytes; check the shape", tokens);
    return GQ_OK;
}

int gq_kv_tokens_parse(const char *text, const char *what, long *out, gq_err *err)
{
    const char *p = text ? text : "";
    double whole = 0, frac = 0, scale = 1;
    int digits = 0, fdigits = 0;
    for (; *p >= '0' && *p <= '9' && digits < 16; p++, digits++)
        whole = whole * 10 + (*p - '0');
    if (*p == '.')
        for (p++; *p >= '0' && *p <= '9' && fdigits < 9; p++, fdigits++) {
            scale /= 10;
            frac += (*p - '0') * scale;
        }
    double mult = 1;
    if (*p == 'k' || *p == 'K')
        mult = 1e3, p++;
    else if (*p == 'm' || *p == 'M')
        mult = 1e6, p++;
    double v = (whole + frac) * mult;
    if (!digits || *p || !(v >= 1) || v > 1e12 || fabs(v - round(v)) > 1e-6 * fmax(1, v))
        return gq_err_set(err, GQ_E_USAGE,
                          "%s '%s': expected a whole number of tokens from 1 to 10^12, optionally with k "
                          "(x 1,000) or M (x 1,000,000), e.g. 8000, 8k or 1.5M",
                          what, text ? text : "");
    *out = (long)llround(v);
    return GQ_OK;
}

double gq_kv_serial_gbps(double down_gbps, double up_gbps)
{
    if (!(down_gbps > 0) || !(up_gbps > 0))
        return 0;
    return 1.0 / (1.0 / down_gbps + 1.0 / up_gbps);
}

double gq_kv_pipelined_gbps(double down_concurrent_gbps, double up_concurrent_gbps)
{
    if (!(down_concurrent_gbps > 0) || !(up_concurrent_gbps > 0))
        return 0;
    return fmin(down_concurrent_gbps, up_concurrent_gbps);
}

double gq_kv_time_ms(uint64_t bytes, double gbps)
{
    if (!(gbps > 0))
        return 0;
    return (double)bytes / (gbps * GQ_GB) * 1e3;
}

void gq_kv_set_rate(gq_kv_rate *r, double v, const char *fmt, ...)
{
    va_list ap;
    r->gbps = v;
    va_start(ap, fmt);
    vsnprintf(r->source, sizeof r->source, fmt, ap);
    va_end(ap);
}

bool gq_kv_record_ok(const gq_record *r)
{
    return r->valid && !r->is_latency && !r->aggregate && !r->sum && r->value.n > 0 && r->value.median > 0 &&
           !(r->flags & (GQ_FLAG_IMPOSSIBLE | GQ_FLAG_ERROR | GQ_FLAG_OVERLAP));
}
