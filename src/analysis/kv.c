#include "core/infile.h"
#include "core/json.h"
#include "analysis/kv.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
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

/* A string field, or NULL when absent or null. */
static const char *get_str(const json_t *o, const char *field)
{
    const json_t *v = json_object_get(o, field);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

/* Which layers keep only the window, from `layer_types` when the config lists
 * it. Returns GQ_OK with *found = false when there is no list. */
static int window_from_layer_types(const json_t *o, const char *path, gq_kv_shape *s, bool *found,
                                   gq_err *err)
{
    const json_t *lt = json_object_get(o, "layer_types");
    *found = false;
    if (!lt || json_is_null(lt))
        return GQ_OK;
    if (!json_is_array(lt) || (long)json_array_size(lt) != s->layers)
        return gq_err_set(err, GQ_E_USAGE,
                          "%s: field 'layer_types' must list one string per layer (%ld); it has %s", path,
                          s->layers, json_is_array(lt) ? "a different count" : "another type");
    long n = 0;
    for (size_t i = 0; i < json_array_size(lt); i++) {
        const char *t = json_string_value(json_array_get(lt, i));
        if (t && !strcmp(t, "sliding_attention"))
            n++;
        else if (!t || strcmp(t, "full_attention"))
            return gq_err_set(err, GQ_E_USAGE,
                              "%s: layer_types[%zu] is '%s'; gpuqual sizes only 'full_attention' and "
                              "'sliding_attention' layers",
                              path, i, t ? t : "not a string");
    }
    if (n && !s->window)
        return gq_err_set(err, GQ_E_USAGE,
                          "%s: layer_types lists %ld sliding_attention layers but the config has no "
                          "'sliding_window' (the window in tokens)",
                          path, n);
    s->window_layers = n;
    snprintf(s->window_rule, sizeof s->window_rule, "layer_types: %ld of %ld layers sliding_attention", n,
             s->layers);
    *found = true;
    return GQ_OK;
}

/* The sliding window: its size, and which layers use it (layer_types, else
 * the architecture's rule; docs/method-placement.md lists them). */
static int parse_window(const json_t *o, const char *path, gq_kv_shape *s, gq_err *err)
{
    int rc;
    long w;
    const json_t *use = json_object_get(o, "use_sliding_window");
    if ((rc = get_count(o, "sliding_window", path, &w, err)))
        return rc;
    if (json_is_false(use))
        w = 0; /* declared but not used (Qwen2.5) */
    s->window = w;
    bool found;
    if ((rc = window_from_layer_types(o, path, s, &found, err)) || found || !w)
        return rc;
    const char *mt = get_str(o, "model_type");
    const char *m = mt ? mt : "";
    long l = s->layers;
    if (!strcmp(m, "mistral") || !strcmp(m, "mixtral")) {
        s->window_layers = l;
        snprintf(s->window_rule, sizeof s->window_rule, "%s: every layer", m);
    } else if (!strcmp(m, "gemma2")) {
        s->window_layers = (l + 1) / 2; /* layers 0, 2, 4, ... */
        snprintf(s->window_rule, sizeof s->window_rule, "gemma2: every other layer from layer 0 (%ld of %ld)",
                 s->window_layers, l);
    } else if (!strcmp(m, "gemma3") || !strcmp(m, "gemma3_text")) {
        long pat;
        if ((rc = get_count(o, "sliding_window_pattern", path, &pat, err)))
            return rc;
        if (!pat && (rc = get_count(o, "_sliding_window_pattern", path, &pat, err)))
            return rc;
        if (!pat)
            pat = 6; /* the Gemma 3 default */
        s->window_layers = l - l / pat;
        snprintf(s->window_rule, sizeof s->window_rule,
                 "%s: every layer but each %ld-th (sliding_window_pattern; %ld of %ld)", m, pat,
                 s->window_layers, l);
    } else if (!strcmp(m, "qwen2") || !strcmp(m, "qwen2_moe") || !strcmp(m, "qwen3") ||
               !strcmp(m, "qwen3_moe")) {
        long first = 0;
        const json_t *mwl = json_object_get(o, "max_window_layers");
        if (!(json_is_integer(mwl) && json_integer_value(mwl) == 0) && /* 0: every layer */
            (rc = get_count(o, "max_window_layers", path, &first, err)))
            return rc;
        if (!mwl || json_is_null(mwl))
            return gq_err_set(err, GQ_E_USAGE,
                              "%s: %s uses sliding_window %ld from layer 'max_window_layers' on, and that "
                              "field is missing",
                              path, m, w);
        s->window_layers = first < l ? l - first : 0;
        snprintf(s->window_rule, sizeof s->window_rule,
                 "%s: layers from max_window_layers %ld on (%ld of %ld)", m, first, s->window_layers, l);
    } else {
        return gq_err_set(err, GQ_E_USAGE,
                          "%s: sliding_window %ld is set but the config does not say which layers use it: "
                          "missing field 'layer_types' (model_type '%s' has no rule in gpuqual)",
                          path, w, m);
    }
    return GQ_OK;
}

/* Multi-head latent attention: kv_lora_rank + qk_rope_head_dim per layer. */
static int parse_mla(const json_t *o, const char *path, gq_kv_shape *s, gq_err *err)
{
    int rc;
    if ((rc = get_count(o, "kv_lora_rank", path, &s->mla_rank, err)) ||
        (rc = get_count(o, "qk_rope_head_dim", path, &s->mla_rope, err)))
        return rc;
    if (!s->mla_rope)
        return gq_err_set(err, GQ_E_USAGE,
                          "%s: the model uses multi-head latent attention (kv_lora_rank %ld) and lacks field "
                          "'qk_rope_head_dim' (its cache per layer is kv_lora_rank + qk_rope_head_dim)",
                          path, s->mla_rank);
    return GQ_OK;
}

/* K and V per head: the KV heads and the head dimension. */
static int parse_heads(const json_t *o, const char *path, gq_kv_shape *s, gq_err *err)
{
    int rc;
    long heads, kv_heads, head_dim, hidden;
    if ((rc = get_count(o, "num_attention_heads", path, &heads, err)) ||
        (rc = get_count(o, "num_key_value_heads", path, &kv_heads, err)) ||
        (rc = get_count(o, "head_dim", path, &head_dim, err)) ||
        (rc = get_count(o, "hidden_size", path, &hidden, err)))
        return rc;
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
    s->kv_heads = kv_heads;
    s->head_dim = head_dim;
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
    if ((rc = get_count(o, "num_hidden_layers", path, &s->layers, err)))
        return rc;
    if (!s->layers)
        return gq_err_set(err, GQ_E_USAGE, "%s: missing field 'num_hidden_layers' (the number of layers)",
                          path);
    const json_t *lora = json_object_get(o, "kv_lora_rank");
    if ((rc = lora && !json_is_null(lora) ? parse_mla(o, path, s, err) : parse_heads(o, path, s, err)) ||
        (rc = parse_window(o, path, s, err)))
        return rc;

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
    int crc = gq_infile_check_size(path, "a model's config.json", GQ_INFILE_TEXT_MAX, err);
    if (crc)
        return gq_err_prefix(err, "model config");
    FILE *f = fopen(path, "r");
    if (!f)
        return gq_err_set(err, GQ_E_IO, "cannot read model config '%s': %s", path, strerror(errno));
    json_error_t je;
    bool over = false;
    json_t *root = gq_json_loadf_max(f, JSON_REJECT_DUPLICATES, GQ_INFILE_TEXT_MAX, &over, &je);
    fclose(f);
    if (!root && over)
        return gq_err_set(err, GQ_E_USAGE, "model config '%s' holds more than %s; is it the right file?",
                          path, GQ_INFILE_TEXT_MAX_TEXT);
    if (!root && gq_interrupt_requested())
        return gq_err_set(err, GQ_E_INTR, "reading model config '%s' was interrupted", path);
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
