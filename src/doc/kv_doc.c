/* `gpuqual kv`'s section of its document (doc/kv_doc.h). */
#include "doc/kv_doc.h"

#include <math.h>

#include "core/json.h"
#include "core/units.h"

/* The one JSON-number rule (core/json.h): a rate or time of 0 or less is "not available" (null);
 * figures keep 4 decimals. */
static json_t *num(double v)
{
    return gq_json_num_if(round(v * 1e4) / 1e4, v > 0);
}

static json_t *stat_json(const gq_stat *s)
{
    return json_pack("{s:o, s:o, s:o, s:o}", "median", num(s->median), "min", num(s->min), "max", num(s->max),
                     "spread", json_real(s->spread));
}

static json_t *meas_json(const gq_kv_meas *m, double estimate_gbps, uint64_t payload)
{
    if (!m->run)
        return json_null();
    json_t *o = json_pack("{s:b, s:o, s:o, s:o, s:o}", "valid", m->valid, "gbps", stat_json(&m->gbps), "ms",
                          stat_json(&m->ms), "estimate_gbps", num(estimate_gbps), "estimate_ms",
                          num(gq_kv_time_ms(payload, estimate_gbps)));
    if (m->error[0])
        json_object_set_new(o, "error", json_string(m->error));
    return o;
}

static json_t *rate_json(const gq_kv_rate *r)
{
    return json_pack("{s:o, s:s}", "gbps", num(r->gbps), "source", r->gbps > 0 ? r->source : "not available");
}

/* A count, or null when 0 (not this kind of model). */
static json_t *count_or_null(long v)
{
    return v > 0 ? json_integer((json_int_t)v) : json_null();
}

static json_t *model_json(const gq_kv_shape *s)
{
    bool mla = s->mla_rank > 0;
    return json_pack("{s:I, s:s, s:o, s:o, s:o, s:o, s:s, s:i, s:I, s:o, s:I, s:o}", "layers",
                     (json_int_t)s->layers, "attention", mla ? "mla" : "mha", "kv_heads",
                     count_or_null(mla ? 0 : s->kv_heads), "head_dim", count_or_null(mla ? 0 : s->head_dim),
                     "kv_lora_rank", count_or_null(s->mla_rank), "qk_rope_head_dim",
                     count_or_null(s->mla_rope), "dtype", gq_kv_dtype_name(s->dtype), "dtype_bytes",
                     gq_kv_dtype_bytes(s->dtype), "layer_bytes_per_token", (json_int_t)gq_kv_layer_bytes(s),
                     "sliding_window", count_or_null(s->window), "window_layers",
                     (json_int_t)(s->window > 0 ? s->window_layers : 0), "window_rule",
                     s->window > 0 ? json_string(s->window_rule) : json_null());
}

json_t *gq_kv_result_to_json(const gq_kv_result *k)
{
    json_t *est = json_pack("{s:{s:o, s:o, s:s}, s:{s:o, s:o, s:s}, s:{s:o, s:o, s:s}}", "direct", "gbps",
                            num(k->est_direct), "ms", num(gq_kv_time_ms(k->payload, k->est_direct)),
                            "formula", "payload / P2P rate", "staged_serial", "gbps", num(k->est_serial),
                            "ms", num(gq_kv_time_ms(k->payload, k->est_serial)), "formula",
                            "payload x (1/down + 1/up)", "staged_pipelined", "gbps", num(k->est_pipe), "ms",
                            num(gq_kv_time_ms(k->payload, k->est_pipe)), "formula",
                            "payload / min(down, up) measured with both legs at once");
    json_t *o = json_pack("{s:o, s:I, s:I, s:I, s:f, s:i, s:i, s:{s:o, s:o, s:o, s:o, s:o, s:b}, s:o}",
                          "model", model_json(&k->shape), "bytes_per_token", (json_int_t)k->bpt, "tokens",
                          (json_int_t)k->tokens, "payload_bytes", (json_int_t)k->payload, "payload_gb",
                          (double)k->payload / GQ_GB, "from", k->from, "to", k->to, "rates", "p2p",
                          rate_json(&k->r.p2p), "down", rate_json(&k->r.down), "up", rate_json(&k->r.up),
                          "down_concurrent", rate_json(&k->r.cdown), "up_concurrent", rate_json(&k->r.cup),
                          "p2p_impossible", k->r.p2p_impossible, "estimates", est);
    if (k->measured) {
        json_t *chunks = json_array();
        for (int i = 0; i < k->nchunks; i++) {
            json_t *c = meas_json(&k->pipe[i], k->est_pipe, k->payload);
            if (json_is_object(c))
                json_object_set_new(c, "chunk_bytes", json_integer((json_int_t)k->chunk[i]));
            json_array_append_new(chunks, c);
        }
        json_t *pipe =
            k->best_chunk >= 0 ? meas_json(&k->pipe[k->best_chunk], k->est_pipe, k->payload) : json_null();
        if (json_is_object(pipe)) {
            json_object_set_new(pipe, "best_chunk_bytes", json_integer((json_int_t)k->chunk[k->best_chunk]));
            json_object_set_new(pipe, "chunks", chunks);
        } else {
            json_decref(chunks);
        }
        json_t *serial = meas_json(&k->serial, k->est_serial, k->payload);
        if (json_is_object(serial)) {
            json_object_set_new(serial, "d2h", meas_json(&k->serial_down, k->r.down.gbps, k->payload));
            json_object_set_new(serial, "h2d", meas_json(&k->serial_up, k->r.up.gbps, k->payload));
        }
        json_object_set_new(o, "measured",
                            json_pack("{s:o, s:o, s:o}", "direct",
                                      meas_json(&k->direct, k->est_direct, k->payload), "staged_serial",
                                      serial, "staged_pipelined", pipe));
    } else {
        json_object_set_new(o, "measured", json_null());
    }
    return o;
}
