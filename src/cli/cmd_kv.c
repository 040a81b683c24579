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

#include "analysis/kv.h"
#include "cli/commands.h"
#include "cli/common.h"
#include "exec/kv_handoff.h"
#include "measure/harness.h"
#include "measure/journal.h"
#include "core/units.h"
#include "render/render.h"

#define MAX_CHUNKS GQ_KV_MAX_CHUNKS

typedef struct kv_opts {
    gq_common c;
    const char *config;
    int layers, kv_heads, head_dim;
    bool layers_seen, kv_heads_seen, head_dim_seen;
    const char *kv_dtype;
    int tokens;
    bool tokens_seen;
    int from, to;
    const char *input;
    double p2p_gbps, down_gbps, up_gbps, pipelined_gbps;
    const char *chunks;
    int rounds;
    bool estimate_only;
} kv_opts;

#define OFF(f) offsetof(kv_opts, f)
/* clang-format off */
static const gq_opt kv_own_opts[] = {
    {.name = "config",
     .type = GQ_OPT_STR,
     .off = OFF(config),
     .arg = "FILE",
     .help = "Hugging Face config.json: num_hidden_layers, num_key_value_heads, head_dim (or hidden_size / "
             "num_attention_heads), torch_dtype"},
    {.name = "layers",
     .type = GQ_OPT_INT,
     .off = OFF(layers),
     .arg = "N",
     .help = "transformer layers",
     .seen_off = OFF(layers_seen)},
    {.name = "kv-heads",
     .type = GQ_OPT_INT,
     .off = OFF(kv_heads),
     .arg = "N",
     .help = "KV heads per layer",
     .seen_off = OFF(kv_heads_seen)},
    {.name = "head-dim",
     .type = GQ_OPT_INT,
     .off = OFF(head_dim),
     .arg = "N",
     .help = "head dimension",
     .seen_off = OFF(head_dim_seen)},
    {.name = "kv-dtype",
     .type = GQ_OPT_STR,
     .off = OFF(kv_dtype),
     .arg = "TYPE",
     .help = "KV cache element type: fp32, bf16, fp16, fp8 (e4m3) or fp8_e5m2 (overrides torch_dtype)"},
    {.name = "tokens",
     .shortname = 't',
     .type = GQ_OPT_INT,
     .off = OFF(tokens),
     .arg = "N",
     .help = "tokens handed off: payload = bytes/token x N",
     .seen_off = OFF(tokens_seen)},
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
         "take the rates from a saved run (run, domains or card JSON) instead of measuring; no GPU needed"},
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
    {.name = "rounds",
     .shortname = 'i',
     .type = GQ_OPT_INT,
     .off = OFF(rounds),
     .def = "5",
     .arg = "N",
     .help = "rounds per measurement (median, min, max, spread)",
     .lo = 1,
     .hi = GQ_MAX_ROUNDS},
    {.name = "estimate-only",
     .type = GQ_OPT_FLAG,
     .off = OFF(estimate_only),
     .help = "measure the rates but not the handoff itself"},
    GQ_OPT_END,
};
/* clang-format on */
#undef OFF

static const gq_opt *const tabs[] = {gq_common_output_opts, gq_common_backend_opts, kv_own_opts};
#define NTABS ((int)(sizeof tabs / sizeof tabs[0]))

static void help(void)
{
    printf("usage: gpuqual kv (--config config.json | --layers N --kv-heads N --head-dim N --kv-dtype TYPE)\n"
           "                  --tokens N [--from GPU] [--to GPU] [--input RUN.json] [options]\n\n"
           "The KV-cache handoff from a prefill GPU (--from) to a decode GPU (--to):\n"
           "  bytes/token = 2 x layers x KV heads x head dim x dtype bytes; payload = bytes/token x tokens.\n"
           "Estimates: direct = payload / P2P rate; staged serial = payload x (1/down + 1/up);\n"
           "staged pipelined = payload / min(down, up) measured while both run at once.\n"
           "Measured (unless --input, --*-gbps or --estimate-only): the payload copied directly (P2P),\n"
           "staged serially (whole payload down, then up) and staged pipelined for each --chunks size,\n"
           "each in ms and GB/s next to its estimate. GB/s = 10^9 bytes/s.\n"
           "Examples:\n"
           "  gpuqual kv --layers 80 --kv-heads 8 --head-dim 128 --kv-dtype bf16 --tokens 8000 --sim h200x2\n"
           "  gpuqual kv --config Llama-3-70B/config.json --kv-dtype fp8 --tokens 32000 --from 0 --to 4\n"
           "  gpuqual kv --config config.json --tokens 8000 --input card.json --from 2 --to 6\n\n"
           "options:\n");
    gq_opts_help(stdout, tabs, NTABS);
}

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

static json_t *num(double v)
{
    return v > 0 && isfinite(v) ? json_real(round(v * 1e4) / 1e4) : json_null();
}

static json_t *stat_json(const gq_stat *s)
{
    return json_pack("{s:o, s:o, s:o, s:o}", "median", num(s->median), "min", num(s->min), "max", num(s->max),
                     "spread", json_real(s->spread));
}

static json_t *meas_json(const meas *m, double estimate_gbps, uint64_t payload)
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

static json_t *rate_json(const rate *r)
{
    return json_pack("{s:o, s:s}", "gbps", num(r->gbps), "source", r->gbps > 0 ? r->source : "not available");
}

static json_t *kv_json(const kv_result *k)
{
    json_t *est = json_pack("{s:{s:o, s:o, s:s}, s:{s:o, s:o, s:s}, s:{s:o, s:o, s:s}}", "direct", "gbps",
                            num(k->est_direct), "ms", num(gq_kv_time_ms(k->payload, k->est_direct)),
                            "formula", "payload / P2P rate", "staged_serial", "gbps", num(k->est_serial),
                            "ms", num(gq_kv_time_ms(k->payload, k->est_serial)), "formula",
                            "payload x (1/down + 1/up)", "staged_pipelined", "gbps", num(k->est_pipe), "ms",
                            num(gq_kv_time_ms(k->payload, k->est_pipe)), "formula",
                            "payload / min(down, up) measured with both legs at once");
    json_t *o = json_pack(
        "{s:{s:I, s:I, s:I, s:s, s:i}, s:I, s:I, s:I, s:f, s:i, s:i, s:{s:o, s:o, s:o, s:o, s:o, s:b}, s:o}",
        "model", "layers", (json_int_t)k->shape.layers, "kv_heads", (json_int_t)k->shape.kv_heads, "head_dim",
        (json_int_t)k->shape.head_dim, "dtype", gq_kv_dtype_name(k->shape.dtype), "dtype_bytes",
        gq_kv_dtype_bytes(k->shape.dtype), "bytes_per_token", (json_int_t)k->bpt, "tokens",
        (json_int_t)k->tokens, "payload_bytes", (json_int_t)k->payload, "payload_gb",
        (double)k->payload / GQ_GB, "from", k->from, "to", k->to, "rates", "p2p", rate_json(&k->r.p2p),
        "down", rate_json(&k->r.down), "up", rate_json(&k->r.up), "down_concurrent", rate_json(&k->r.cdown),
        "up_concurrent", rate_json(&k->r.cup), "p2p_impossible", k->r.p2p_impossible, "estimates", est);
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

/* 2621440000 -> "2,621,440,000" */
static const char *grouped(uint64_t v, char *buf, size_t n)
{
    char tmp[32];
    int l = snprintf(tmp, sizeof tmp, "%llu", (unsigned long long)v), o = 0;
    for (int i = 0; i < l && (size_t)o + 2 < n; i++) {
        if (i && (l - i) % 3 == 0)
            buf[o++] = ',';
        buf[o++] = tmp[i];
    }
    buf[o] = 0;
    return buf;
}

static void fmt_est(char *buf, size_t n, double gbps, uint64_t payload)
{
    if (gbps > 0)
        snprintf(buf, n, "%8.1f %9.1f", gbps, gq_kv_time_ms(payload, gbps));
    else
        snprintf(buf, n, "%8s %9s", "n/a", "n/a");
}

static void fmt_meas(char *buf, size_t n, const meas *m)
{
    if (!m->run)
        snprintf(buf, n, "%8s %9s %7s", "-", "-", "");
    else if (!m->valid || m->gbps.n == 0)
        snprintf(buf, n, "%8s %9s  %.60s", "failed", "", m->error[0] ? m->error : "no valid round");
    else
        snprintf(buf, n, "%8.1f %9.1f %6.1f%%", m->gbps.median, m->ms.median, 100 * m->gbps.spread);
}

static void print_table(FILE *f, const kv_result *k, const char *machine, bool markdown)
{
    char a[32], b[32], est[64], got[128];
    const char *bar = markdown ? "| " : "";
    fprintf(f, "%sKV handoff GPU %d -> GPU %d%s%s\n\n", markdown ? "## " : "", k->from, k->to,
            machine[0] ? " on " : "", machine);
    char g1[32], g2[32], g3[32];
    fprintf(
        f, "%smodel: 2 (K and V) x %ld layers x %ld KV heads x %ld head dim x %d B (%s) = %s B/token (%s)\n",
        bar, k->shape.layers, k->shape.kv_heads, k->shape.head_dim, gq_kv_dtype_bytes(k->shape.dtype),
        gq_kv_dtype_name(k->shape.dtype), grouped(k->bpt, g1, sizeof g1), gq_fmt_size(k->bpt, a, sizeof a));
    fprintf(f, "%spayload: %s tokens = %s B = %.6g GB (%s)\n\n", bar,
            grouped((uint64_t)k->tokens, g2, sizeof g2), grouped(k->payload, g3, sizeof g3),
            (double)k->payload / GQ_GB, gq_fmt_size(k->payload, b, sizeof b));
    fprintf(f, "%srates (GB/s = 10^9 B/s):\n", markdown ? "" : "");
    const struct {
        const char *label;
        const rate *r;
    } rows[] = {{"P2P, alone", &k->r.p2p},
                {"GPU -> host, alone", &k->r.down},
                {"host -> GPU, alone", &k->r.up},
                {"GPU -> host, both legs at once", &k->r.cdown},
                {"host -> GPU, both legs at once", &k->r.cup}};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        if (rows[i].r->gbps > 0)
            fprintf(f, "  %-32s %8.1f  %s\n", rows[i].label, rows[i].r->gbps, rows[i].r->source);
        else if (rows[i].r == &k->r.p2p && k->r.p2p_impossible)
            fprintf(f, "  %-32s %8s  no P2P between GPU %d and GPU %d\n", rows[i].label, "n/a", k->from,
                    k->to);
        else
            fprintf(f, "  %-32s %8s\n", rows[i].label, "n/a");
    }
    fprintf(f, "\n  %-26s %8s %9s   %8s %9s %7s\n", "handoff", "estimate", "", "measured", "", "");
    fprintf(f, "  %-26s %8s %9s   %8s %9s %7s\n", "", "GB/s", "ms", "GB/s", "ms", "spread");
    fmt_est(est, sizeof est, k->est_direct, k->payload);
    fmt_meas(got, sizeof got, &k->direct);
    fprintf(f, "  %-26s %s   %s\n", "direct (P2P)", est,
            k->r.p2p_impossible && !k->direct.run ? "     n/a (no P2P)" : got);
    fmt_est(est, sizeof est, k->est_serial, k->payload);
    fmt_meas(got, sizeof got, &k->serial);
    fprintf(f, "  %-26s %s   %s\n", "staged, serial", est, got);
    fmt_est(est, sizeof est, k->est_pipe, k->payload);
    if (k->measured && k->best_chunk >= 0) {
        fmt_meas(got, sizeof got, &k->pipe[k->best_chunk]);
        char label[48];
        snprintf(label, sizeof label, "staged, pipelined (%s)",
                 gq_fmt_size(k->chunk[k->best_chunk], a, sizeof a));
        fprintf(f, "  %-26s %s   %s\n", label, est, got);
        for (int i = 0; i < k->nchunks; i++) {
            fmt_meas(got, sizeof got, &k->pipe[i]);
            snprintf(label, sizeof label, "  chunk %s", gq_fmt_size(k->chunk[i], a, sizeof a));
            fprintf(f, "  %-26s %8s %9s   %s\n", label, "", "", got);
        }
    } else {
        fmt_meas(got, sizeof got, k->measured ? &k->pipe[0] : &(meas){0});
        fprintf(f, "  %-26s %s   %s\n", "staged, pipelined", est, got);
    }
    if (k->why_pipe[0])
        fprintf(f, "\n  %s\n", k->why_pipe);
    if (!k->measured)
        fprintf(f, "\n  the handoff was not measured (%s)\n",
                k->r.p2p.source[0] && strstr(k->r.p2p.source, "assumed") ? "assumed rates"
                                                                         : "estimates only");
    fprintf(
        f,
        "\n  estimates are payload / rate; they leave out software overhead, block layout and overlap with "
        "compute.\n");
}

/* ---- the command -------------------------------------------------------- */

int gq_cmd_kv(int argc, char **argv)
{
    kv_opts o;
    gq_err err = {0};
    gq_backend be = {0};
    bool opened = false, want_help = false, jopen = false;
    const char *pos[1];
    int npos = 0, rc = GQ_OK, exit_code = GQ_EXIT_OK;
    json_t *doc = NULL, *options = NULL, *sections = NULL, *saved = NULL;
    gq_recordset rs = {0}, saved_rs = {0};
    gq_topo *topo = calloc(1, sizeof *topo);
    kv_result *k = calloc(1, sizeof *k);
    gq_journal jr = {0};
    char machine[96] = "";

    memset(&o, 0, sizeof o);
    if (!topo || !k) {
        rc = gq_err_set(&err, GQ_E_NOMEM, "out of memory");
        goto fail;
    }
    if ((rc = gq_opts_parse(tabs, NTABS, &o, argc, argv, 2, pos, 0, &npos, &want_help, &err)))
        goto fail;
    if (want_help) {
        help();
        goto out;
    }
    if (!strcmp(o.c.format, "nvbandwidth-json") || !strcmp(o.c.format, "csv") ||
        !strcmp(o.c.format, "prometheus")) {
        rc = gq_err_set(&err, GQ_E_USAGE, "kv: --format %s does not apply; use table, json or markdown",
                        o.c.format);
        goto fail;
    }

    /* The model's shape: config.json first, flags override its fields. */
    gq_kv_shape *s = &k->shape;
    bool has_dtype = false;
    if (o.config && (rc = gq_kv_config_load(o.config, s, &has_dtype, &err)))
        goto fail;
    if (!o.config && !(o.layers_seen && o.kv_heads_seen && o.head_dim_seen)) {
        rc = gq_err_set(&err, GQ_E_USAGE,
                        "kv: give the model's shape: --config config.json, or --layers, "
                        "--kv-heads and --head-dim (missing --%s)",
                        !o.layers_seen     ? "layers"
                        : !o.kv_heads_seen ? "kv-heads"
                                           : "head-dim");
        goto fail;
    }
    if (o.layers_seen)
        s->layers = o.layers;
    if (o.kv_heads_seen)
        s->kv_heads = o.kv_heads;
    if (o.head_dim_seen)
        s->head_dim = o.head_dim;
    if (o.kv_dtype && (rc = gq_kv_dtype_parse(o.kv_dtype, "--kv-dtype", &s->dtype, &err)))
        goto fail;
    if (!o.kv_dtype && !has_dtype) {
        rc = gq_err_set(&err, GQ_E_USAGE,
                        "kv: no KV dtype: give --kv-dtype fp32|bf16|fp16|fp8_e4m3|fp8_e5m2%s",
                        o.config ? " (the config has no torch_dtype)" : "");
        goto fail;
    }
    if (!o.tokens_seen) {
        rc = gq_err_set(&err, GQ_E_USAGE,
                        "kv: --tokens N is required (the tokens whose KV cache is handed off)");
        goto fail;
    }
    k->tokens = o.tokens;
    if ((rc = gq_kv_payload(s, k->tokens, &k->payload, &err)))
        goto fail;
    k->bpt = gq_kv_bytes_per_token(s);
    k->from = o.from;
    k->to = o.to;
    k->best_chunk = -1;
    if (o.from == o.to) {
        rc = gq_err_set(&err, GQ_E_USAGE, "kv: --from %d and --to %d are the same GPU; a handoff needs two",
                        o.from, o.to);
        goto fail;
    }
    if ((rc = parse_chunks(o.chunks, k->chunk, &k->nchunks, &err)))
        goto fail;
    if ((rc = gq_cli_check_writable(o.c.json_path, &err)))
        goto fail;

    bool assumed = o.p2p_gbps > 0 || o.down_gbps > 0 || o.up_gbps > 0 || o.pipelined_gbps > 0;
    bool live = !o.input && !assumed;
    if (o.input) {
        if ((rc = gq_doc_load(o.input, &saved, &saved_rs, &err)))
            goto fail;
        int ngpu = 0;
        json_t *tj = json_object_get(saved, "topology");
        if (tj && gq_topo_from_json(tj, topo, NULL) == GQ_OK)
            ngpu = topo->ngpu;
        for (int i = 0; i < saved_rs.n && !ngpu; i++) /* no topology section: the records say */
            for (int x = 0; x < 2; x++) {
                gq_endpoint e = x ? saved_rs.v[i].dst : saved_rs.v[i].src;
                if (e.kind == GQ_EP_GPU && e.index + 1 > ngpu)
                    ngpu = e.index + 1;
            }
        if (ngpu == 0) {
            rc = gq_err_set(&err, GQ_E_USAGE,
                            "kv: '%s' names no GPU; pass a saved 'gpuqual run', 'domains' or 'card' JSON",
                            o.input);
            goto fail;
        }
        if (o.from >= ngpu || o.to >= ngpu) {
            rc = gq_err_set(&err, GQ_E_USAGE, "kv: GPU %d is not in '%s' (it has GPUs 0-%d)",
                            o.from >= ngpu ? o.from : o.to, o.input, ngpu - 1);
            goto fail;
        }
        k->r.p2p_impossible = tj && topo->ngpu > 0 && topo->p2p_cuda[o.from][o.to] == 0;
        rates_from_records(&saved_rs, o.input, o.from, o.to, &k->r);
        snprintf(machine, sizeof machine, "%s (saved run)", o.input);
    } else if (live) {
        if ((rc = gq_cli_open(&o.c, &be, topo, &err)))
            goto fail;
        opened = true;
        if (o.from >= topo->ngpu || o.to >= topo->ngpu) {
            rc = gq_err_set(&err, GQ_E_USAGE, "kv: GPU %d does not exist (this machine has GPUs 0-%d)",
                            o.from >= topo->ngpu ? o.from : o.to, topo->ngpu - 1);
            goto fail;
        }
        snprintf(machine, sizeof machine, "%s%s", topo->source, topo->simulated ? " (simulated)" : "");
        k->r.p2p_impossible = topo->p2p_cuda[o.from][o.to] == 0;
        /* The whole payload must fit where it is copied to and from. */
        if (be.ops->mem_info && !o.estimate_only)
            for (int x = 0; x < 2; x++) {
                int g = x ? o.to : o.from;
                uint64_t fr = 0, tot = 0;
                char a[32], b[32], c[32];
                if (be.ops->mem_info(&be, g, &fr, &tot, NULL) == GQ_OK && fr > 0 && k->payload > fr) {
                    rc = gq_err_set(
                        &err, GQ_E_USAGE,
                        "kv: the payload (%s) does not fit in GPU %d's free memory (%s of %s); use "
                        "fewer --tokens or --estimate-only",
                        gq_fmt_size(k->payload, a, sizeof a), g, gq_fmt_size(fr, b, sizeof b),
                        gq_fmt_size(tot, c, sizeof c));
                    goto fail;
                }
            }
        if (be.ops->host_mem_avail && !o.estimate_only) {
            uint64_t av = 0;
            char a[32], b[32];
            if (be.ops->host_mem_avail(&be, -1, &av, NULL) == GQ_OK && av > 0 && k->payload > av) {
                rc = gq_err_set(
                    &err, GQ_E_USAGE,
                    "kv: the payload (%s) is more than the pinned host memory to be had (%s) for the "
                    "serial staged handoff; use fewer --tokens or --estimate-only",
                    gq_fmt_size(k->payload, a, sizeof a), gq_fmt_size(av, b, sizeof b));
                goto fail;
            }
        }
        if (o.c.journal) {
            if ((rc = gq_journal_open(&jr, o.c.journal, &err)))
                goto fail;
            jopen = true;
        }
        gq_harness_opts ho;
        gq_harness_opts_default(&ho);
        ho.rounds = o.rounds;
        rc = gq_kv_measure(&be, topo, &ho, o.estimate_only, &rs, jopen ? &jr : NULL, k, &err);
        if (rc == GQ_E_INTR) {
            exit_code = GQ_EXIT_INTR; /* README: kv interrupted exits 130 */
            rc = GQ_OK;
            gq_cli_warn("interrupted: reporting what was measured%s%s", jopen ? "; journal: " : "",
                        jopen ? jr.path : "");
        } else if (rc) {
            goto fail;
        }
    }
    if (o.p2p_gbps > 0)
        gq_kv_set_rate(&k->r.p2p, o.p2p_gbps, "assumed (--p2p-gbps)");
    if (o.down_gbps > 0)
        gq_kv_set_rate(&k->r.down, o.down_gbps, "assumed (--down-gbps)");
    if (o.up_gbps > 0)
        gq_kv_set_rate(&k->r.up, o.up_gbps, "assumed (--up-gbps)");
    if (o.pipelined_gbps > 0) {
        gq_kv_set_rate(&k->r.cdown, o.pipelined_gbps, "assumed (--pipelined-gbps)");
        gq_kv_set_rate(&k->r.cup, o.pipelined_gbps, "assumed (--pipelined-gbps)");
    }
    k->est_direct = k->r.p2p_impossible && !(o.p2p_gbps > 0) ? 0 : k->r.p2p.gbps;
    k->est_serial = gq_kv_serial_gbps(k->r.down.gbps, k->r.up.gbps);
    k->est_pipe = gq_kv_pipelined_gbps(k->r.cdown.gbps, k->r.cup.gbps);
    if (!(k->est_pipe > 0))
        snprintf(k->why_pipe, sizeof k->why_pipe,
                 "no pipelined estimate: it needs GPU %d -> host and host -> GPU %d measured at once", o.from,
                 o.to);

    bool need_doc = o.c.json_path || !strcmp(o.c.format, "json");
    if (need_doc) {
        options = gq_opts_to_json(tabs, NTABS, &o);
        sections = json_object();
        json_t *kj = kv_json(k);
        if (!options || !sections || !kj) {
            json_decref(kj);
            rc = gq_err_set(&err, GQ_E_NOMEM, "out of memory");
            goto fail;
        }
        json_object_set_new(sections, "kv", kj);
        gq_doc d = {.kind = "kv",
                    .version = gq_version,
                    .git = gq_git_rev,
                    .options = options,
                    .topo = (opened || o.input) && topo->ngpu > 0 ? topo : NULL,
                    .records = &rs,
                    .sections = sections,
                    .simulated = opened && gq_backend_simulated(&be),
                    .incomplete = exit_code == GQ_EXIT_INTR};
        if (!(doc = gq_doc_to_json(&d))) {
            rc = gq_err_set(&err, GQ_E_NOMEM, "out of memory");
            goto fail;
        }
        if (o.c.json_path && (rc = gq_json_write_file(doc, o.c.json_path, &err)))
            goto fail;
    }
    if (!strcmp(o.c.format, "json")) {
        json_dumpf(doc, stdout, JSON_INDENT(2));
        fputc('\n', stdout);
    } else {
        print_table(stdout, k, machine, !strcmp(o.c.format, "markdown"));
    }
    fflush(stdout);
    if (k->measured && exit_code == GQ_EXIT_OK) {
        bool bad = (k->direct.run && !k->direct.valid) || !k->serial.valid;
        for (int i = 0; i < k->nchunks; i++)
            bad |= k->pipe[i].run && !k->pipe[i].valid;
        if (bad)
            exit_code = GQ_EXIT_FAIL;
    }
    goto out;

fail:
    gq_cli_error("%s", err.msg);
    exit_code = gq_status_exit_code(rc);
out:
    if (jopen)
        gq_journal_close(&jr);
    json_decref(doc);
    json_decref(options);
    json_decref(sections);
    json_decref(saved);
    gq_records_free(&rs);
    gq_records_free(&saved_rs);
    if (opened)
        gq_backend_close(&be);
    free(topo);
    free(k);
    return exit_code;
}
