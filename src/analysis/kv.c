#include "core/infile.h"
#include "analysis/kv.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

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
};
#define NDTYPE_NAMES (sizeof dtype_names / sizeof dtype_names[0])

int gq_kv_dtype_parse(const char *name, const char *what, gq_kv_dtype *out, gq_err *err)
{
    if (!name || !*name)
        return gq_err_set(err, GQ_E_USAGE, "%s: empty dtype; expected fp32, bf16, fp16, fp8_e4m3 or fp8_e5m2",
                          what);
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
                      "%s: unknown dtype '%s'%s%s%s; expected fp32, bf16, fp16, fp8_e4m3 or fp8_e5m2", what,
                      name, best ? " (did you mean '" : "", best ? best : "", best ? "'?)" : "");
}

int gq_kv_dtype_bytes(gq_kv_dtype d)
{
    switch (d) {
    case GQ_KV_FP32: return 4;
    case GQ_KV_BF16:
    case GQ_KV_FP16: return 2;
    case GQ_KV_FP8_E4M3:
    case GQ_KV_FP8_E5M2: return 1;
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
    case GQ_KV_DTYPE_NONE: break;
    }
    return "none";
}

int gq_kv_shape_check(const gq_kv_shape *s, gq_err *err)
{
    if (s->layers <= 0)
        return gq_err_set(err, GQ_E_USAGE, "--layers %ld: the model needs at least 1 layer", s->layers);
    if (s->kv_heads <= 0)
        return gq_err_set(err, GQ_E_USAGE, "--kv-heads %ld: the model needs at least 1 KV head", s->kv_heads);
    if (s->head_dim <= 0)
        return gq_err_set(err, GQ_E_USAGE, "--head-dim %ld: the head dimension must be at least 1",
                          s->head_dim);
    if (gq_kv_dtype_bytes(s->dtype) == 0)
        return gq_err_set(err, GQ_E_USAGE, "no KV dtype: give --kv-dtype fp32|bf16|fp16|fp8_e4m3|fp8_e5m2");
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

uint64_t gq_kv_bytes_per_token(const gq_kv_shape *s)
{
    if (s->layers <= 0 || s->kv_heads <= 0 || s->head_dim <= 0)
        return 0;
    uint64_t v = 2;
    if (!mul_ok(v, (uint64_t)s->layers, &v) || !mul_ok(v, (uint64_t)s->kv_heads, &v) ||
        !mul_ok(v, (uint64_t)s->head_dim, &v) || !mul_ok(v, (uint64_t)gq_kv_dtype_bytes(s->dtype), &v))
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
    uint64_t bpt = gq_kv_bytes_per_token(s);
    if (bpt == 0 || !mul_ok(bpt, (uint64_t)tokens, bytes))
        return gq_err_set(err, GQ_E_USAGE,
                          "the KV payload of %ld tokens overflows 2^63 bytes; check the shape", tokens);
    return GQ_OK;
}

/* Read a positive integer field. absent -> 0 with GQ_OK; a present field of
 * the wrong type or value is an error naming it. */
static int get_count(const json_t *o, const char *field, const char *path, long *out, gq_err *err)
{
    const json_t *v = json_object_get(o, field);
    *out = 0;
    if (!v || json_is_null(v))
        return GQ_OK;
    double d;
    if (json_is_integer(v))
        d = (double)json_integer_value(v);
    else if (json_is_real(v) && json_real_value(v) == floor(json_real_value(v)))
        d = json_real_value(v); /* 80.0 is still 80 */
    else
        return gq_err_set(err, GQ_E_USAGE, "%s: field '%s' must be a positive integer, not %s", path, field,
                          json_is_string(v)    ? "a string"
                          : json_is_real(v)    ? "a fraction"
                          : json_is_boolean(v) ? "a boolean"
                          : json_is_array(v)   ? "a list"
                          : json_is_object(v)  ? "an object"
                                               : "this value");
    if (d <= 0 || d > 1e9)
        return gq_err_set(err, GQ_E_USAGE, "%s: field '%s' is %.0f; it must be a positive integer", path,
                          field, d);
    *out = (long)d;
    return GQ_OK;
}

int gq_kv_config_parse(const json_t *root, const char *path, gq_kv_shape *s, bool *has_dtype, gq_err *err)
{
    int rc;
    memset(s, 0, sizeof *s);
    *has_dtype = false;
    if (!json_is_object(root))
        return gq_err_set(err, GQ_E_USAGE, "%s: not a Hugging Face config (expected a JSON object)", path);
    const json_t *o = root;
    const json_t *text = json_object_get(root, "text_config");
    if (!json_object_get(root, "num_hidden_layers") && json_is_object(text))
        o = text;
    if (json_object_get(o, "kv_lora_rank") && !json_is_null(json_object_get(o, "kv_lora_rank")))
        return gq_err_set(
            err, GQ_E_USAGE,
            "%s: the model uses multi-head latent attention (kv_lora_rank); its KV cache is a "
            "compressed latent, not 2 x layers x heads x dim, so gpuqual cannot size it from this",
            path);

    long layers, heads, kv_heads, head_dim, hidden;
    if ((rc = get_count(o, "num_hidden_layers", path, &layers, err)) ||
        (rc = get_count(o, "num_attention_heads", path, &heads, err)) ||
        (rc = get_count(o, "num_key_value_heads", path, &kv_heads, err)) ||
        (rc = get_count(o, "head_dim", path, &head_dim, err)) ||
        (rc = get_count(o, "hidden_size", path, &hidden, err)))
        return rc;
    if (!layers)
        return gq_err_set(err, GQ_E_USAGE, "%s: missing field 'num_hidden_layers' (the number of layers)",
                          path);
    if (!kv_heads) {
        if (!heads)
            return gq_err_set(
                err, GQ_E_USAGE,
                "%s: missing fields 'num_key_value_heads' and 'num_attention_heads' (need one for "
                "the KV head count)",
                path);
        kv_heads = heads; /* multi-head attention: every head has its own K and V */
    }
    if (!head_dim) {
        if (!hidden || !heads)
            return gq_err_set(err, GQ_E_USAGE,
                              "%s: missing field '%s' (the head dimension is 'head_dim', or 'hidden_size' / "
                              "'num_attention_heads')",
                              path, !hidden ? "hidden_size" : "num_attention_heads");
        if (hidden % heads)
            return gq_err_set(
                err, GQ_E_USAGE,
                "%s: hidden_size %ld is not a multiple of num_attention_heads %ld; give 'head_dim' "
                "(or --head-dim)",
                path, hidden, heads);
        head_dim = hidden / heads;
    }
    s->layers = layers;
    s->kv_heads = kv_heads;
    s->head_dim = head_dim;

    const char *dfield = "torch_dtype";
    const json_t *dt = json_object_get(o, dfield);
    if (!dt || json_is_null(dt)) {
        dfield = "dtype";
        dt = json_object_get(o, dfield);
    }
    if (!dt || json_is_null(dt)) {
        dt = json_object_get(root, "torch_dtype"); /* multimodal: often only at the top */
        dfield = "torch_dtype";
    }
    if (dt && !json_is_null(dt)) {
        if (!json_is_string(dt))
            return gq_err_set(err, GQ_E_USAGE, "%s: field '%s' must be a string such as \"bfloat16\"", path,
                              dfield);
        char what[300];
        snprintf(what, sizeof what, "%s: %s", path, dfield);
        if ((rc = gq_kv_dtype_parse(json_string_value(dt), what, &s->dtype, err)))
            return rc;
        *has_dtype = true;
    }
    return GQ_OK;
}

int gq_kv_config_load(const char *path, gq_kv_shape *s, bool *has_dtype, gq_err *err)
{
    int crc = gq_infile_check(path, "a model's config.json", err);
    if (crc)
        return gq_err_prefix(err, "model config");
    FILE *f = fopen(path, "r");
    if (!f)
        return gq_err_set(err, GQ_E_IO, "cannot read model config '%s': %s", path, strerror(errno));
    json_error_t je;
    json_t *root = json_loadf(f, JSON_REJECT_DUPLICATES, &je);
    fclose(f);
    if (!root)
        return gq_err_set(err, GQ_E_USAGE, "%s: not valid JSON at line %d column %d: %s", path, je.line,
                          je.column, je.text);
    int rc = gq_kv_config_parse(root, path, s, has_dtype, err);
    json_decref(root);
    return rc;
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
