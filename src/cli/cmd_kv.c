/* gpuqual kv: the KV-cache handoff. Bytes per token from the model's shape
 * (flags or a Hugging Face config.json), the payload for --tokens, estimates
 * from rates (measured now, read from a saved run with --input, or assumed
 * with --*-gbps), and the handoff itself measured between --from and --to:
 * direct P2P, host-staged serial (D2H, then H2D) and host-staged pipelined
 * with a chunk-size sweep (docs/method-placement.md, "KV handoff"). */
#include <jansson.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/infile.h"
#include "analysis/kv.h"
#include "doc/kv_config.h"
#include "doc/kv_doc.h"
#include "doc/saved_doc.h"
#include "cli/commands.h"
#include "cli/outputs.h"
#include "cli/common.h"
#include "cli/progress.h"
#include "core/json.h"
#include "cli/frame.h"
#include "cli/options.h"
#include "exec/kv_handoff.h"
#include "measure/harness.h"
#include "measure/journal.h"
#include "core/units.h"
#include "render/render.h"
#include "render/command_text.h"

#define MAX_CHUNKS GQ_KV_MAX_CHUNKS

typedef struct kv_opts {
    gq_common c;
    const char *config;
    int layers, kv_heads, head_dim;
    bool layers_seen, kv_heads_seen, head_dim_seen;
    const char *kv_dtype;
    const char *tokens;
    int from, to;
    const char *input;
    double p2p_gbps, down_gbps, up_gbps, pipelined_gbps;
    const char *chunks;
    bool estimate_only;
    /* what prepare() and run() keep */
    struct gq_kv_result *k;
    json_t *saved;
    gq_recordset rs, saved_rs;
    char machine[96];
} kv_opts;

#define OFF(f) offsetof(kv_opts, f)
/* clang-format off */
static const gq_opt kv_own_opts[] = {
    {.name = "config",
     .type = GQ_OPT_STR,
     .off = OFF(config),
     .arg = "FILE",
     .help = "Hugging Face config.json: num_hidden_layers, num_key_value_heads, head_dim (or hidden_size / "
             "num_attention_heads), torch_dtype; kv_lora_rank + qk_rope_head_dim (multi-head latent "
             "attention); sliding_window and the layers that use it (at most " GQ_INFILE_TEXT_MAX_TEXT ")"},
    {.name = "layers",
     .type = GQ_OPT_INT,
     .off = OFF(layers),
     .arg = "N",
     .help = "transformer layers",
     .seen_off = OFF(layers_seen),
     .lo = 1,
     .hi = 1e9},
    {.name = "kv-heads",
     .type = GQ_OPT_INT,
     .off = OFF(kv_heads),
     .arg = "N",
     .help = "KV heads per layer",
     .seen_off = OFF(kv_heads_seen),
     .lo = 1,
     .hi = 1e9},
    {.name = "head-dim",
     .type = GQ_OPT_INT,
     .off = OFF(head_dim),
     .arg = "N",
     .help = "head dimension",
     .seen_off = OFF(head_dim_seen),
     .lo = 1,
     .hi = 1e9},
    {.name = "kv-dtype",
     .type = GQ_OPT_STR,
     .off = OFF(kv_dtype),
     .arg = "TYPE",
     .help = "KV cache element type: fp32, bf16, fp16, fp8 (e4m3), fp8_e5m2 or int8 (overrides torch_dtype)"},
    {.name = "tokens",
     .type = GQ_OPT_STR,
     .off = OFF(tokens),
     .arg = "N",
     .help = "tokens handed off (8000, 8k = 8,000, 1.5M = 1,500,000): payload = bytes/token x N, windowed "
             "layers keeping at most their window"},
    {.name = "from",
     .type = GQ_OPT_INT,
     .off = OFF(from),
     .def = "0",
     .arg = "GPU",
     .help = "GPU that sends the KV cache (the prefill GPU)",
     .lo = 0,
     .hi = GQ_MAX_GPUS - 1},
    {.name = "to",
     .type = GQ_OPT_INT,
     .off = OFF(to),
     .def = "1",
     .arg = "GPU",
     .help = "GPU that receives it (the decode GPU)",
     .lo = 0,
     .hi = GQ_MAX_GPUS - 1},
    {.name = "input",
     .type = GQ_OPT_STR,
     .off = OFF(input),
     .arg = "FILE",
     .help =
         "take the rates from a saved run (run, domains or card JSON, at most " GQ_INFILE_DOC_MAX_TEXT ") instead of measuring; "
         "no GPU needed; '-' reads stdin"},
    {.name = "p2p-gbps",
     .type = GQ_OPT_DOUBLE,
     .off = OFF(p2p_gbps),
     .def = "0",
     .arg = "GB/s",
     .help = "assume this direct P2P rate (what-if; overrides a measured or saved one)",
     .lo = 0,
     .hi = 1e5},
    {.name = "down-gbps",
     .type = GQ_OPT_DOUBLE,
     .off = OFF(down_gbps),
     .def = "0",
     .arg = "GB/s",
     .help = "assume this GPU->host rate of --from, alone",
     .lo = 0,
     .hi = 1e5},
    {.name = "up-gbps",
     .type = GQ_OPT_DOUBLE,
     .off = OFF(up_gbps),
     .def = "0",
     .arg = "GB/s",
     .help = "assume this host->GPU rate of --to, alone",
     .lo = 0,
     .hi = 1e5},
    {.name = "pipelined-gbps",
     .type = GQ_OPT_DOUBLE,
     .off = OFF(pipelined_gbps),
     .def = "0",
     .arg = "GB/s",
     .help = "assume this rate for both legs running at once (the slower of the two)",
     .lo = 0,
     .hi = 1e5},
    {.name = "chunks",
     .type = GQ_OPT_STR,
     .off = OFF(chunks),
     .def = "1,2,4,8,16,32",
     .arg = "MiB,...",
     .help = "chunk sizes of the pipelined staged handoff to sweep"},
    {.name = "estimate-only",
     .type = GQ_OPT_FLAG,
     .off = OFF(estimate_only),
     .help = "measure the rates but not the handoff itself"},
    GQ_OPT_END,
};
/* clang-format on */
#undef OFF

static const gq_opt *const tabs[] = {gq_common_output_opts, gq_common_backend_opts, gq_common_measure_opts,
                                     kv_own_opts};
#define NTABS ((int)(sizeof tabs / sizeof tabs[0]))

/* ---- rates -------------------------------------------------------------- */

typedef gq_kv_rate rate;
typedef gq_kv_rates rates;

static bool is_gpu(gq_endpoint e, int g)
{
    return e.kind == GQ_EP_GPU && e.index == g;
}

typedef struct grp_ix {
    int group, ix;
} grp_ix;

static int cmp_grp(const void *a, const void *b)
{
    const grp_ix *x = a, *y = b;
    if (x->group != y->group)
        return x->group < y->group ? -1 : 1;
    return (x->ix > y->ix) - (x->ix < y->ix);
}

static bool is_flow(const gq_record *r)
{
    return !r->aggregate && !r->sum && !r->is_latency;
}

/* Rates of a saved run: the one-flow measurements of the three paths, and the
 * smallest group in which --from copied down while --to copied up. Records
 * are visited group by group (a saved card holds thousands). */
static void rates_from_records(const gq_recordset *rs, const char *path, int from, int to, rates *out)
{
    grp_ix *order = calloc((size_t)rs->n + 1, sizeof *order);
    if (!order)
        return;
    for (int i = 0; i < rs->n; i++)
        order[i] = (grp_ix){.group = rs->v[i].group, .ix = i};
    qsort(order, (size_t)rs->n, sizeof *order, cmp_grp);
    int best_group_size = 1 << 30, best_d = -1, best_u = -1;
    for (int a = 0, b; a < rs->n; a = b) {
        int flows = 0, d = -1, u = -1;
        for (b = a; b < rs->n && order[b].group == order[a].group; b++) {
            const gq_record *r = &rs->v[order[b].ix];
            flows += is_flow(r);
            if (gq_kv_record_ok(r) && r->direction == GQ_DIR_D2H && is_gpu(r->src, from))
                d = order[b].ix;
            if (gq_kv_record_ok(r) && r->direction == GQ_DIR_H2D && is_gpu(r->dst, to))
                u = order[b].ix;
        }
        if (flows >= 2 && d >= 0 && u >= 0 && flows < best_group_size) {
            best_group_size = flows;
            best_d = d;
            best_u = u;
        }
        if (flows != 1)
            continue;
        for (int k = a; k < b; k++) {
            int i = order[k].ix;
            const gq_record *r = &rs->v[i];
            if (!gq_kv_record_ok(r) || strstr(r->test, "bidirectional"))
                continue;
            if (r->direction == GQ_DIR_P2P && is_gpu(r->src, from) && is_gpu(r->dst, to) &&
                (r->method == GQ_METHOD_CE || r->method == GQ_METHOD_SM) && r->value.median > out->p2p.gbps)
                gq_kv_set_rate(&out->p2p, r->value.median, "%s: record %d (%s)", path, i, r->test);
            if (r->direction == GQ_DIR_D2H && is_gpu(r->src, from) && r->value.median > out->down.gbps)
                gq_kv_set_rate(&out->down, r->value.median, "%s: record %d (%s)", path, i, r->test);
            if (r->direction == GQ_DIR_H2D && is_gpu(r->dst, to) && r->value.median > out->up.gbps)
                gq_kv_set_rate(&out->up, r->value.median, "%s: record %d (%s)", path, i, r->test);
        }
    }
    if (best_d >= 0) {
        gq_kv_set_rate(&out->cdown, rs->v[best_d].value.median,
                       "%s: records %d and %d (%s, %d flows at once)", path, best_d, best_u,
                       rs->v[best_d].test, best_group_size);
        gq_kv_set_rate(&out->cup, rs->v[best_u].value.median, "%s", out->cdown.source);
    }
    free(order);
}

/* ---- measurement -------------------------------------------------------- */

typedef gq_kv_meas meas;

static int parse_chunks(const char *s, uint64_t *out, int *n, gq_err *err)
{
    *n = 0;
    const char *p = s;
    while (*p) {
        const char *c = strchr(p, ',');
        size_t l = c ? (size_t)(c - p) : strlen(p);
        char item[32];
        if (l == 0 || l >= sizeof item)
            return gq_err_set(err, GQ_E_USAGE, "--chunks '%s': expected sizes in MiB such as 1,2,4,8", s);
        memcpy(item, p, l);
        item[l] = 0;
        gq_err e;
        if (*n >= MAX_CHUNKS)
            return gq_err_set(err, GQ_E_USAGE, "--chunks '%s': at most %d sizes", s, MAX_CHUNKS);
        if (gq_parse_size(item, GQ_MiB, &out[*n], &e))
            return gq_err_set(err, GQ_E_USAGE, "--chunks '%s': %s", s, e.msg);
        (*n)++;
        if (!c)
            break;
        p = c + 1;
        if (!*p)
            return gq_err_set(err, GQ_E_USAGE, "--chunks '%s': empty item at the end", s);
    }
    if (!*n)
        return gq_err_set(err, GQ_E_USAGE, "--chunks: empty list; expected sizes in MiB such as 1,2,4,8");
    return GQ_OK;
}

/* ---- output ------------------------------------------------------------- */

typedef gq_kv_result kv_result;

/* ---- the command -------------------------------------------------------- */

/* The model's shape: config.json first, flags override its fields. */
static int kv_shape(const kv_opts *o, gq_kv_shape *s, gq_err *err)
{
    bool has_dtype = false;
    int rc;
    if (o->config && (rc = gq_kv_config_load(o->config, s, &has_dtype, err)))
        return rc;
    if (!o->config && !(o->layers_seen && o->kv_heads_seen && o->head_dim_seen))
        return gq_err_set(err, GQ_E_USAGE,
                          "kv: give the model's shape: --config config.json, or --layers, "
                          "--kv-heads and --head-dim (missing --%s)",
                          !o->layers_seen     ? "layers"
                          : !o->kv_heads_seen ? "kv-heads"
                                              : "head-dim");
    if (o->layers_seen && s->window_layers > 0)
        return gq_err_set(err, GQ_E_USAGE,
                          "kv: --layers cannot override a config with windowed layers (%s); edit the config "
                          "instead",
                          s->window_rule);
    if ((o->kv_heads_seen || o->head_dim_seen) && s->mla_rank > 0)
        return gq_err_set(
            err, GQ_E_USAGE,
            "kv: --%s does not apply: the config uses multi-head latent attention (kv_lora_rank "
            "%ld), which has no KV heads",
            o->kv_heads_seen ? "kv-heads" : "head-dim", s->mla_rank);
    if (o->layers_seen)
        s->layers = o->layers;
    if (o->kv_heads_seen)
        s->kv_heads = o->kv_heads;
    if (o->head_dim_seen)
        s->head_dim = o->head_dim;
    if (o->kv_dtype && (rc = gq_kv_dtype_parse(o->kv_dtype, "--kv-dtype", &s->dtype, err)))
        return rc;
    if (!o->kv_dtype && !has_dtype)
        return gq_err_set(err, GQ_E_USAGE,
                          "kv: no KV dtype: give --kv-dtype fp32|bf16|fp16|fp8_e4m3|fp8_e5m2|int8%s",
                          o->config ? " (the config has no torch_dtype)" : "");
    return GQ_OK;
}

/* The rates of a saved run (--input). */
static int kv_load_input(gq_ctx *ctx)
{
    kv_opts *o = ctx->opts;
    kv_result *k = o->k;
    gq_topo *topo = ctx->topo;
    int rc;
    if ((rc = gq_cli_doc_input(o->input, &o->saved, &o->saved_rs, &ctx->err)))
        return rc;
    int ngpu = 0;
    bool have_topo = gq_saved_topology(o->saved, topo);
    if (have_topo)
        ngpu = topo->ngpu;
    bool from_records = ngpu == 0; /* no topology section: every record says (not the first alone) */
    for (int i = 0; i < o->saved_rs.n && from_records; i++)
        for (int x = 0; x < 2; x++) {
            gq_endpoint e = x ? o->saved_rs.v[i].dst : o->saved_rs.v[i].src;
            if (e.kind == GQ_EP_GPU && e.index + 1 > ngpu)
                ngpu = e.index + 1;
        }
    if (ngpu == 0)
        return gq_err_set(&ctx->err, GQ_E_USAGE,
                          "kv: '%s' names no GPU; pass a saved 'gpuqual run', 'domains' or 'card' JSON",
                          o->input);
    if (o->from >= ngpu || o->to >= ngpu)
        return gq_err_set(&ctx->err, GQ_E_USAGE, "kv: GPU %d is not in '%s' (it has GPUs 0-%d)",
                          o->from >= ngpu ? o->from : o->to, o->input, ngpu - 1);
    k->r.p2p_impossible = have_topo && topo->ngpu > 0 && topo->p2p_cuda[o->from][o->to] == 0;
    rates_from_records(&o->saved_rs, o->input, o->from, o->to, &k->r);
    snprintf(o->machine, sizeof o->machine, "%s (saved run)", o->input);
    return GQ_OK;
}

static int kv_prepare(gq_ctx *ctx)
{
    kv_opts *o = ctx->opts;
    gq_err *err = &ctx->err;
    int rc;
    kv_result *k = o->k = calloc(1, sizeof *o->k);
    if (!k)
        return gq_err_set(err, GQ_E_NOMEM, "out of memory");
    if ((rc = kv_shape(o, &k->shape, err)))
        return rc;
    if (!o->tokens)
        return gq_err_set(err, GQ_E_USAGE,
                          "kv: --tokens N is required (the tokens whose KV cache is handed off)");
    if ((rc = gq_kv_tokens_parse(o->tokens, "--tokens", &k->tokens, err)))
        return rc;
    if ((rc = gq_kv_payload(&k->shape, k->tokens, &k->payload, err)))
        return rc;
    k->bpt = gq_kv_bytes_per_token(&k->shape);
    k->from = o->from;
    k->to = o->to;
    k->best_chunk = -1;
    if (o->from == o->to)
        return gq_err_set(err, GQ_E_USAGE, "kv: --from %d and --to %d are the same GPU; a handoff needs two",
                          o->from, o->to);
    if ((rc = parse_chunks(o->chunks, k->chunk, &k->nchunks, err)))
        return rc;
    if ((rc = gq_outfile_check(ctx->json_path, err)))
        return rc;
    bool assumed = o->p2p_gbps > 0 || o->down_gbps > 0 || o->up_gbps > 0 || o->pipelined_gbps > 0;
    /* Measured only without --input and --*-gbps. */
    ctx->no_backend = o->input || assumed;
    return o->input ? kv_load_input(ctx) : GQ_OK;
}

/* The most tokens whose payload fits in room bytes (a binary search: a
 * sliding window makes the payload grow more slowly past the window). */
static unsigned long long fit_tokens(const kv_result *k, uint64_t room)
{
    long long lo = 0, hi = (long long)k->tokens; /* payload(lo) fits, payload(hi) does not */
    while (hi - lo > 1) {
        long long mid = lo + (hi - lo) / 2;
        uint64_t p = 0;
        if (gq_kv_payload(&k->shape, mid, &p, NULL) == GQ_OK && p <= room)
            lo = mid;
        else
            hi = mid;
    }
    return (unsigned long long)lo;
}

/* The whole payload must fit where it is copied to and from. */
static int kv_check_memory(gq_ctx *ctx)
{
    kv_opts *o = ctx->opts;
    gq_backend *be = &ctx->be;
    uint64_t payload = o->k->payload;
    if (o->estimate_only)
        return GQ_OK;
    if (be->ops->mem_info)
        for (int x = 0; x < 2; x++) {
            int g = x ? o->to : o->from;
            uint64_t fr = 0, tot = 0;
            if (be->ops->mem_info(be, g, &fr, &tot, NULL) == GQ_OK && fr > 0 && payload > fr)
                return gq_err_set(&ctx->err, GQ_E_USAGE,
                                  "kv: the payload (%.1f GiB) does not fit in GPU %d's free memory (%.1f GiB "
                                  "free of %.1f GiB); use at most %llu --tokens, or --estimate-only",
                                  (double)payload / GQ_GiB, g, (double)fr / GQ_GiB, (double)tot / GQ_GiB,
                                  fit_tokens(o->k, fr));
        }
    uint64_t av = 0;
    if (be->ops->host_mem_avail && be->ops->host_mem_avail(be, -1, &av, NULL) == GQ_OK && av > 0 &&
        payload > av)
        return gq_err_set(&ctx->err, GQ_E_USAGE,
                          "kv: the payload (%.1f GiB) is more than the pinned host memory to be had "
                          "(%.1f GiB) for the serial staged handoff; use at most %llu --tokens, or "
                          "--estimate-only",
                          (double)payload / GQ_GiB, (double)av / GQ_GiB, fit_tokens(o->k, av));
    return GQ_OK;
}

/* This machine: --from and --to exist, and the payload fits. */
static int kv_check(gq_ctx *ctx)
{
    kv_opts *o = ctx->opts;
    gq_topo *topo = ctx->topo;
    if (o->from >= topo->ngpu || o->to >= topo->ngpu)
        return gq_err_set(&ctx->err, GQ_E_USAGE, "kv: GPU %d does not exist (this machine has GPUs 0-%d)",
                          o->from >= topo->ngpu ? o->from : o->to, topo->ngpu - 1);
    snprintf(o->machine, sizeof o->machine, "%s%s", topo->source, topo->simulated ? " (simulated)" : "");
    o->k->r.p2p_impossible = topo->p2p_cuda[o->from][o->to] == 0;
    return kv_check_memory(ctx);
}

/* The rates and the handoff measured on this machine. */
static int kv_measure_live(gq_ctx *ctx)
{
    kv_opts *o = ctx->opts;
    gq_harness_opts ho;
    gq_harness_opts_default(&ho);
    ho.rounds = o->c.rounds;
    /* the rates (P2P unless impossible, down, up, both at once), then the
     * handoffs (direct unless impossible, down, up, one per chunk size) */
    int p2p = o->k->r.p2p_impossible ? 0 : 1;
    long nmeas = p2p + 3 + (o->estimate_only ? 0 : p2p + 2 + o->k->nchunks);
    gq_progress bar;
    gq_progress_init(&bar, gq_progress_wanted(ctx->quiet, ctx->format), nmeas * o->c.rounds);
    ho.progress = gq_progress_on_round;
    ho.progress_arg = &bar;
    int rc = gq_kv_measure(&ctx->be, ctx->topo, &ho, o->estimate_only, &o->rs, ctx->journal, o->k, &ctx->err);
    gq_progress_clear(&bar);
    if (rc == GQ_E_INTR) {
        ctx->exit_code = GQ_EXIT_INTR; /* README: kv interrupted exits 130 */
        rc = GQ_OK;
    }
    return rc;
}

/* The --*-gbps rates over the measured or saved ones, and the estimates. */
static void kv_estimate(const kv_opts *o, kv_result *k)
{
    if (o->p2p_gbps > 0)
        gq_kv_set_rate(&k->r.p2p, o->p2p_gbps, "assumed (--p2p-gbps)");
    if (o->down_gbps > 0)
        gq_kv_set_rate(&k->r.down, o->down_gbps, "assumed (--down-gbps)");
    if (o->up_gbps > 0)
        gq_kv_set_rate(&k->r.up, o->up_gbps, "assumed (--up-gbps)");
    if (o->pipelined_gbps > 0) {
        gq_kv_set_rate(&k->r.cdown, o->pipelined_gbps, "assumed (--pipelined-gbps)");
        gq_kv_set_rate(&k->r.cup, o->pipelined_gbps, "assumed (--pipelined-gbps)");
    }
    k->est_direct = k->r.p2p_impossible && !(o->p2p_gbps > 0) ? 0 : k->r.p2p.gbps;
    k->est_serial = gq_kv_serial_gbps(k->r.down.gbps, k->r.up.gbps);
    k->est_pipe = gq_kv_pipelined_gbps(k->r.cdown.gbps, k->r.cup.gbps);
    if (!(k->est_pipe > 0))
        snprintf(k->why_pipe, sizeof k->why_pipe,
                 "no pipelined estimate: it needs GPU %d -> host and host -> GPU %d measured at once",
                 o->from, o->to);
}

static int kv_document(gq_ctx *ctx)
{
    kv_opts *o = ctx->opts;
    json_t *options = gq_optset_to_json(&ctx->cmd->opts, o);
    json_t *sections = json_object();
    json_t *kj = gq_kv_result_to_json(o->k);
    if (options && sections && kj) {
        json_object_set_new(sections, "kv", kj);
        kj = NULL;
        gq_doc d = {.kind = "kv",
                    .version = gq_version,
                    .git = gq_git_rev,
                    .options = options,
                    .topo = (ctx->opened || o->input) && ctx->topo->ngpu > 0 ? ctx->topo : NULL,
                    .records = &o->rs,
                    .sections = sections,
                    .simulated = ctx->opened && gq_backend_simulated(&ctx->be),
                    .incomplete = ctx->exit_code == GQ_EXIT_INTR};
        ctx->doc = gq_doc_to_json(&d);
    }
    json_decref(kj);
    json_decref(options);
    json_decref(sections);
    return ctx->doc ? GQ_OK : gq_err_set(&ctx->err, GQ_E_NOMEM, "out of memory");
}

static int kv_run(gq_ctx *ctx)
{
    kv_opts *o = ctx->opts;
    kv_result *k = o->k;
    int rc;
    if (ctx->opened && (rc = kv_measure_live(ctx)))
        return rc;
    kv_estimate(o, k);
    bool json = !strcmp(ctx->format, "json");
    if ((ctx->json_path || json) && (rc = kv_document(ctx)))
        return rc;
    ctx->doc_stdout = json;
    if (!json)
        gq_render_kv_table(stdout, k, o->machine, !strcmp(ctx->format, "markdown"));
    fflush(stdout);
    if (ctx->exit_code == GQ_EXIT_INTR)
        gq_cli_interrupted_note(!json, ctx->journal ? ctx->journal->path : NULL);
    if (k->measured && ctx->exit_code == GQ_EXIT_OK) {
        bool bad = (k->direct.run && !k->direct.valid) || !k->serial.valid;
        for (int i = 0; i < k->nchunks; i++)
            bad |= k->pipe[i].run && !k->pipe[i].valid;
        if (bad)
            ctx->exit_code = GQ_EXIT_FAIL;
    }
    return GQ_OK;
}

static void kv_done(gq_ctx *ctx)
{
    kv_opts *o = ctx->opts;
    json_decref(o->saved);
    gq_records_free(&o->rs);
    gq_records_free(&o->saved_rs);
    free(o->k);
}

static const gq_exit_doc kv_exits[] = {
    {0, "the figures are valid (or nothing was measured)"},
    {1, "a figure failed or is invalid (an error, failed verification, an impossible figure)"},
    GQ_EXITDOC_USAGE,
    GQ_EXITDOC_NODEV,
    GQ_EXITDOC_BUSY,
    GQ_EXITDOC_INTR,
    GQ_EXITDOC_END,
};

const gq_frame_cmd gq_frame_kv = {
    .name = "kv",
    .summary = "KV-cache handoff: bytes per token, estimates, and the measured handoff",
    .usage =
        "usage: gpuqual kv (--config config.json | --layers N --kv-heads N --head-dim N --kv-dtype TYPE)\n"
        "                  --tokens N [--from GPU] [--to GPU] [--input RUN.json] [options]\n\n"
        "The KV-cache handoff from a prefill GPU (--from) to a decode GPU (--to):\n"
        "  bytes/token = 2 x layers x KV heads x head dim x dtype bytes (multi-head latent attention:\n"
        "  layers x (kv_lora_rank + qk_rope_head_dim) x dtype bytes); payload = bytes/token x tokens,\n"
        "  except that layers with a sliding window keep at most the window's tokens.\n"
        "Estimates: direct = payload / P2P rate; staged serial = payload x (1/down + 1/up);\n"
        "staged pipelined = payload / min(down, up) measured while both run at once.\n"
        "Measured (unless --input, --*-gbps or --estimate-only): the payload copied directly (P2P),\n"
        "staged serially (whole payload down, then up) and staged pipelined for each --chunks size,\n"
        "each in ms and GB/s next to its estimate. GB/s = 10^9 bytes/s.\n\n",
    .opts = {.name = "kv",
             .formats = "table,json,markdown",
             .tabs = tabs,
             .ntab = NTABS,
             .omit = "buffer-size,verify,method,gpus"},
    .opts_size = sizeof(kv_opts),
    .exits = kv_exits,
    .examples =
        "  gpuqual kv --layers 80 --kv-heads 8 --head-dim 128 --kv-dtype bf16 --tokens 8000 --sim h200x2\n"
        "  gpuqual kv --config Llama-3-70B/config.json --kv-dtype fp8 --tokens 32k --from 0 --to 4\n"
        "  gpuqual kv --config DeepSeek-V3/config.json --tokens 128k --estimate-only\n"
        "  gpuqual kv --config config.json --tokens 8000 --input card.json --from 2 --to 6\n",
    .needs = GQ_FRAME_BACKEND | GQ_FRAME_JOURNAL | GQ_FRAME_MEASURES,
    .prepare = kv_prepare,
    .check = kv_check,
    .run = kv_run,
    .done = kv_done,
};
