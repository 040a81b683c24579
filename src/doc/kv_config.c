/* A model's config.json (Hugging Face) read into the KV shape of
 * analysis/kv.h: the codec of that document (doc/kv_config.h). */
#include "doc/kv_config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "core/infile.h"
#include "core/interrupt.h"
#include "core/json.h"

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
