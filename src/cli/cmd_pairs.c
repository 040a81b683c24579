/* gpuqual pairs: GPU pairs copying at the same time (seed 001 section 4).
 * Each listed pair is reported with the aggregate of the pairing and its
 * overlap; --vs runs a second pairing in the same invocation and sets the two
 * side by side. Pairs without P2P are staged through host memory. */
#include <jansson.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/domains.h"
#include "analysis/probes.h"
#include "cli/commands.h"
#include "cli/common.h"
#include "cli/progress.h"
#include "exec/plan_run.h"
#include "measure/harness.h"
#include "measure/journal.h"
#include "core/units.h"
#include "render/render.h"

#define MAXP GQ_PROBE_MAX_PAIRS

typedef struct pairing {
    const char *label; /* "pairs" or "--vs" */
    const char *spec;
    int n;
    int src[MAXP], dst[MAXP];
    bool staged[MAXP];
    int rec[MAXP];   /* per-flow record of the concurrent run, -1 none */
    int alone[MAXP]; /* record of the pair alone (--isolated), -1 none */
    int agg;         /* aggregate record, -1 none (one pair) */
    bool measured;
} pairing;

typedef struct pairs_opts {
    gq_common c; /* method, buffer_size, rounds from the shared tables */
    const char *vs;
    bool read, write;
    bool isolated;
    /* parsed by pairs_prepare */
    pairing pg[2];
    int npg;
} pairs_opts;

#define OFF(f) offsetof(pairs_opts, f)
/* clang-format off */
static const gq_opt pairs_own_opts[] = {
    {.name = "vs", .type = GQ_OPT_STR, .off = OFF(vs), .arg = "PAIRS",
     .help = "a second pairing to run and set beside the first, e.g. 0:4,1:5,2:6,3:7"},
    {.name = "read", .type = GQ_OPT_FLAG, .off = OFF(read),
     .help = "the destination GPU pulls the data (default; nvbandwidth's read)"},
    {.name = "write", .type = GQ_OPT_FLAG, .off = OFF(write), .help = "the source GPU pushes the data"},
    {.name = "isolated", .type = GQ_OPT_FLAG, .off = OFF(isolated),
     .help = "also measure each pair alone, to compare with its rate under contention"},
    GQ_OPT_END,
};
/* clang-format on */
#undef OFF

static const gq_opt *const tabs[] = {gq_common_output_opts, gq_common_backend_opts,    pairs_own_opts,
                                     gq_common_method_opt,  gq_common_buffer_size_opt, gq_common_rounds_opt};
#define NTABS ((int)(sizeof tabs / sizeof tabs[0]))

static void rate_str(const gq_recordset *rs, int i, char *buf, size_t n)
{
    if (i < 0)
        snprintf(buf, n, "-");
    else if (!rs->v[i].valid)
        snprintf(buf, n, "invalid");
    else
        snprintf(buf, n, "%.2f", rs->v[i].value.median);
}

static void print_table(FILE *f, const pairs_opts *o, const gq_topo *topo, const gq_recordset *rs,
                        pairing *pg, int npg)
{
    char b1[64], b2[64], sz[32];
    fprintf(f, "pairs: %s, %s, %s per copy, %d rounds; the pairs of a pairing copy at the same time%s\n",
            o->write ? "write (source pushes)" : "read (destination pulls)", o->c.method,
            gq_fmt_size(o->c.buffer_size, sz, sizeof sz), o->c.rounds, topo->simulated ? " (simulated)" : "");
    fprintf(f, "GB/s = 10^9 B/s\n\n");
    for (int p = 0; p < npg; p++) {
        char head[64];
        snprintf(head, sizeof head, "%s%.50s", p ? "--vs " : "", pg[p].spec);
        fprintf(f, "  %-38s", head);
    }
    fprintf(f, "\n");
    for (int p = 0; p < npg; p++)
        fprintf(f, "  %-10s %9s %7s %9s   ", "pair", "GB/s", "spread", o->isolated ? "alone" : "");
    fprintf(f, "\n");
    int rows = 0;
    for (int p = 0; p < npg; p++)
        rows = pg[p].n > rows ? pg[p].n : rows;
    for (int r = 0; r < rows; r++) {
        for (int p = 0; p < npg; p++) {
            if (r >= pg[p].n) {
                fprintf(f, "  %-38s", "");
                continue;
            }
            char name[24], sp[16] = "-";
            snprintf(name, sizeof name, "%d->%d%s", pg[p].src[r], pg[p].dst[r], pg[p].staged[r] ? "*" : "");
            rate_str(rs, pg[p].rec[r], b1, sizeof b1);
            if (pg[p].rec[r] >= 0 && rs->v[pg[p].rec[r]].value.n > 0)
                snprintf(sp, sizeof sp, "%.1f%%", 100 * rs->v[pg[p].rec[r]].value.spread);
            if (o->isolated)
                rate_str(rs, pg[p].alone[r], b2, sizeof b2);
            else
                b2[0] = 0;
            fprintf(f, "  %-10s %9s %7s %9s   ", name, b1, sp, b2);
        }
        fprintf(f, "\n");
    }
    for (int p = 0; p < npg; p++) {
        char line[64];
        int a = pg[p].agg;
        if (a < 0 && pg[p].n == 1 && pg[p].rec[0] >= 0)
            a = pg[p].rec[0];
        if (a < 0)
            snprintf(line, sizeof line, "aggregate   -");
        else if (rs->v[a].valid)
            snprintf(line, sizeof line, "aggregate %8.2f (overlap %.1f%%)", rs->v[a].value.median,
                     rs->v[a].overlap >= 0 ? 100 * rs->v[a].overlap : 100.0);
        else if (rs->v[a].overlap >= 0)
            snprintf(line, sizeof line, "aggregate  invalid (overlap %.1f%%)", 100 * rs->v[a].overlap);
        else /* no overlap was measured (-1): e.g. a contaminated or failed copy */
            snprintf(line, sizeof line, "aggregate  invalid (overlap unknown)");
        fprintf(f, "  %-38s", line);
    }
    fprintf(f, "\n");
    if (npg == 2 && pg[0].agg >= 0 && pg[1].agg >= 0 && rs->v[pg[0].agg].valid && rs->v[pg[1].agg].valid &&
        rs->v[pg[0].agg].value.median > 0)
        fprintf(f, "\n  --vs aggregate is %.0f%% of the first pairing's\n",
                100 * rs->v[pg[1].agg].value.median / rs->v[pg[0].agg].value.median);
    bool any_staged = false;
    for (int p = 0; p < npg; p++)
        for (int r = 0; r < pg[p].n; r++)
            any_staged |= pg[p].staged[r];
    if (any_staged)
        fprintf(f, "  * no P2P between these GPUs: staged through host memory\n");
    for (int i = 0; i < rs->n; i++)
        if (!rs->v[i].valid) {
            char e1[32], e2[32];
            fprintf(f, "  invalid: %s %s -> %s%s: %s\n", rs->v[i].test,
                    gq_endpoint_str(rs->v[i].src, e1, sizeof e1),
                    gq_endpoint_str(rs->v[i].dst, e2, sizeof e2), rs->v[i].aggregate ? " (aggregate)" : "",
                    rs->v[i].error);
        }
}

static json_t *pairing_json(const pairing *p, const gq_recordset *rs)
{
    json_t *j = json_object(), *a = json_array();
    for (int k = 0; k < p->n; k++) {
        json_t *e = json_pack("{s:i,s:i,s:b}", "src", p->src[k], "dst", p->dst[k], "staged", p->staged[k]);
        const gq_record *r = p->rec[k] >= 0 ? &rs->v[p->rec[k]] : NULL;
        json_object_set_new(e, "gbps", r && r->valid ? json_real(r->value.median) : json_null());
        json_object_set_new(e, "spread", r && r->value.n ? json_real(r->value.spread) : json_null());
        json_object_set_new(e, "valid", json_boolean(r && r->valid));
        json_object_set_new(e, "record", p->rec[k] >= 0 ? json_integer(p->rec[k]) : json_null());
        if (p->alone[k] >= 0) {
            const gq_record *al = &rs->v[p->alone[k]];
            json_object_set_new(e, "alone_gbps", al->valid ? json_real(al->value.median) : json_null());
        }
        json_array_append_new(a, e);
    }
    json_object_set_new(j, "label", json_string(p->label));
    json_object_set_new(j, "spec", json_string(p->spec));
    json_object_set_new(j, "pairs", a);
    const gq_record *ag =
        p->agg >= 0 ? &rs->v[p->agg] : (p->n == 1 && p->rec[0] >= 0 ? &rs->v[p->rec[0]] : NULL);
    json_object_set_new(j, "aggregate_gbps", ag && ag->valid ? json_real(ag->value.median) : json_null());
    json_object_set_new(j, "overlap", ag && ag->overlap >= 0 ? json_real(ag->overlap) : json_null());
    json_object_set_new(j, "valid", json_boolean(ag && ag->valid));
    json_object_set_new(j, "measured", json_boolean(p->measured));
    return j;
}

/* Run one probe and return the index of its first new record. */
static int measure(gq_backend *be, const gq_topo *topo, const gq_probe *pr, const pairs_opts *o,
                   const gq_harness_opts *ho, gq_measurement *m, gq_recordset *rs, gq_journal *j, int *first,
                   gq_err *err)
{
    gq_method meth = !strcmp(o->c.method, "sm") ? GQ_METHOD_SM : GQ_METHOD_CE;
    gq_probe_measurement(pr, o->c.buffer_size, meth, !o->write, m);
    *first = rs->n;
    return gq_exec_one(be, topo, m, ho, j, rs, err);
}

static void pick_records(const gq_recordset *rs, int first, pairing *p, bool alone, int k)
{
    for (int i = first; i < rs->n; i++) {
        const gq_record *r = &rs->v[i];
        if (r->sum)
            continue;
        if (r->aggregate) {
            if (!alone)
                p->agg = i;
            continue;
        }
        if (alone)
            p->alone[k] = i;
        else if (r->flow_tag >= 0 && r->flow_tag < p->n)
            p->rec[r->flow_tag] = i;
    }
}

static int pairs_prepare(gq_ctx *ctx)
{
    pairs_opts *o = ctx->opts;
    gq_err *err = &ctx->err;
    pairing *pg = o->pg;
    int rc;
    if (ctx->npos == 0)
        return gq_err_set(err, GQ_E_USAGE,
                          "pairs: give the pairs to run at the same time, e.g. gpuqual pairs 0:1,2:3");
    if (ctx->npos > 1)
        return gq_err_set(err, GQ_E_USAGE,
                          "pairs: give one list of pairs separated by commas (got '%s' and '%s'), "
                          "e.g. 0:1,2:3",
                          ctx->pos[0], ctx->pos[1]);
    if (o->read && o->write)
        return gq_err_set(err, GQ_E_USAGE, "pairs: --read and --write exclude each other; give one of them");
    pg[0].label = "pairs";
    pg[0].spec = ctx->pos[0];
    if ((rc = gq_probes_parse_pairs(pg[0].spec, "pairs", true, 0, pg[0].src, pg[0].dst, MAXP, &pg[0].n, err)))
        return rc;
    o->npg = 1;
    if (o->vs) {
        pg[1].label = "--vs";
        pg[1].spec = o->vs;
        if ((rc = gq_probes_parse_pairs(o->vs, "--vs", true, 0, pg[1].src, pg[1].dst, MAXP, &pg[1].n, err)))
            return rc;
        o->npg = 2;
    }
    if (o->c.gpus)
        return gq_err_set(err, GQ_E_USAGE,
                          "--gpus does not apply to pairs: the pairs themselves name the GPUs");
    return GQ_OK;
}

/* The pairs against the machine: every GPU exists; staged where no P2P. */
static int check_pairings(gq_ctx *ctx)
{
    pairs_opts *o = ctx->opts;
    for (int p = 0; p < o->npg; p++) {
        pairing *pg = &o->pg[p];
        int n, rc = gq_probes_parse_pairs(pg->spec, pg->label, true, ctx->topo->ngpu, pg->src, pg->dst, MAXP,
                                          &n, &ctx->err);
        if (rc)
            return rc;
        for (int k = 0; k < pg->n; k++) {
            pg->staged[k] = ctx->topo->p2p_cuda[pg->src[k]][pg->dst[k]] == 0;
            pg->rec[k] = pg->alone[k] = -1;
        }
        pg->agg = -1;
    }
    return GQ_OK;
}

/* One measurement's outcome: GQ_E_INTR to stop, another error to fail,
 * GQ_OK to go on (a failed one is warned about and fails at the end). */
static int outcome(gq_ctx *ctx, int mrc, const pairing *pg, int alone_k, bool *unmeasured)
{
    if (mrc == GQ_E_INTR || gq_cli_interrupted())
        return GQ_E_INTR;
    if (mrc == GQ_E_FAIL) { /* nothing was recorded for it: say so and fail at the end */
        if (alone_k < 0)
            gq_cli_warn("%s %s: %s", pg->label, pg->spec, ctx->err.msg);
        else
            gq_cli_warn("%s %s, pair %d alone: %s", pg->label, pg->spec, alone_k, ctx->err.msg);
        *unmeasured = true;
        return GQ_OK;
    }
    return mrc && mrc != GQ_E_BACKEND ? mrc : GQ_OK;
}

/* Each pairing at once, then (--isolated) each of its pairs alone. Returns
 * GQ_E_INTR when interrupted. */
static int measure_pairings(gq_ctx *ctx, gq_measurement *m, gq_recordset *rs, bool *unmeasured)
{
    pairs_opts *o = ctx->opts;
    gq_harness_opts ho;
    gq_harness_opts_default(&ho);
    ho.rounds = o->c.rounds;
    gq_progress bar;
    long nmeas = 0;
    for (int p = 0; p < o->npg; p++)
        nmeas += 1 + (o->isolated ? o->pg[p].n : 0);
    gq_progress_init(&bar, gq_progress_wanted(o->c.quiet, o->c.format), nmeas * o->c.rounds);
    ho.progress = gq_progress_on_round;
    ho.progress_arg = &bar;
    int rc = GQ_OK;
    for (int p = 0; p < o->npg && !rc; p++) {
        pairing *pg = &o->pg[p];
        gq_probe pr;
        memset(&pr, 0, sizeof pr);
        pr.kind = GQ_PROBE_P2P_WITHIN;
        pr.direction = GQ_DIR_P2P;
        pr.npairs = pg->n;
        memcpy(pr.src, pg->src, sizeof pr.src);
        memcpy(pr.dst, pg->dst, sizeof pr.dst);
        memcpy(pr.staged, pg->staged, sizeof pr.staged);
        int first;
        int mrc = measure(&ctx->be, ctx->topo, &pr, o, &ho, m, rs, ctx->journal, &first, &ctx->err);
        pick_records(rs, first, pg, false, 0);
        pg->measured = mrc == GQ_OK;
        rc = outcome(ctx, mrc, pg, -1, unmeasured);
        for (int k = 0; !rc && o->isolated && k < pg->n; k++) {
            gq_probe one;
            memset(&one, 0, sizeof one);
            one.kind = GQ_PROBE_MATRIX;
            one.direction = GQ_DIR_P2P;
            one.npairs = 1;
            one.src[0] = pg->src[k];
            one.dst[0] = pg->dst[k];
            one.staged[0] = pg->staged[k];
            mrc = measure(&ctx->be, ctx->topo, &one, o, &ho, m, rs, ctx->journal, &first, &ctx->err);
            pick_records(rs, first, pg, true, k);
            rc = outcome(ctx, mrc, pg, k, unmeasured);
        }
    }
    gq_progress_clear(&bar);
    return rc;
}

/* The pairs document: options, records, the pairings and their ratio. */
static json_t *pairs_doc(gq_ctx *ctx, const gq_recordset *rs, bool interrupted)
{
    pairs_opts *o = ctx->opts;
    const pairing *pg = o->pg;
    json_t *doc = NULL, *options = gq_opts_to_json(tabs, NTABS, o), *sections = json_object();
    json_t *arr = json_array();
    if (options && sections && arr) {
        for (int p = 0; p < o->npg; p++)
            json_array_append_new(arr, pairing_json(&pg[p], rs));
        json_object_set_new(sections, "pairings", arr);
        arr = NULL;
        if (o->npg == 2 && pg[0].agg >= 0 && pg[1].agg >= 0 && rs->v[pg[0].agg].valid &&
            rs->v[pg[1].agg].valid)
            json_object_set_new(sections, "vs_ratio",
                                json_real(rs->v[pg[1].agg].value.median / rs->v[pg[0].agg].value.median));
        gq_doc d = {.kind = "pairs",
                    .version = gq_version,
                    .git = gq_git_rev,
                    .options = options,
                    .topo = ctx->topo,
                    .records = rs,
                    .sections = sections,
                    .simulated = gq_backend_simulated(&ctx->be),
                    .incomplete = interrupted};
        doc = gq_doc_to_json(&d);
    }
    json_decref(arr);
    json_decref(options);
    json_decref(sections);
    return doc;
}

static int pairs_run(gq_ctx *ctx)
{
    pairs_opts *o = ctx->opts;
    gq_recordset rs = {0};
    bool unmeasured = false;
    gq_measurement *m = calloc(1, sizeof *m);
    if (!m)
        return gq_err_set(&ctx->err, GQ_E_NOMEM, "out of memory");
    int rc = gq_cli_check_buffer(&ctx->be, &o->c, "--buffer-size", o->c.buffer_size, &ctx->err);
    if (!rc)
        rc = check_pairings(ctx);
    if (!rc && !o->c.quiet)
        for (int i = 0; i < ctx->topo->nwarnings; i++)
            gq_cli_warn("%s", ctx->topo->warnings[i]);
    if (!rc)
        rc = measure_pairings(ctx, m, &rs, &unmeasured);
    bool interrupted = rc == GQ_E_INTR;
    if (interrupted)
        rc = GQ_OK;
    if (!rc && (o->c.json_path || !strcmp(o->c.format, "json")) &&
        !(ctx->doc = pairs_doc(ctx, &rs, interrupted)))
        rc = gq_err_set(&ctx->err, GQ_E_NOMEM, "out of memory");
    if (!rc) {
        ctx->doc_stdout = !strcmp(o->c.format, "json");
        if (!strcmp(o->c.format, "csv"))
            gq_render_csv(stdout, &rs);
        else if (!ctx->doc_stdout)
            print_table(stdout, o, ctx->topo, &rs, o->pg, o->npg);
        if (interrupted) {
            gq_cli_interrupted_note(!ctx->doc_stdout && strcmp(o->c.format, "csv"),
                                    ctx->journal ? ctx->journal->path : NULL);
            ctx->exit_code = GQ_EXIT_INCOMPLETE;
        } else {
            for (int i = 0; i < rs.n; i++)
                if (gq_record_failed(&rs.v[i]))
                    ctx->exit_code = GQ_EXIT_FAIL;
            if (unmeasured)
                ctx->exit_code = GQ_EXIT_FAIL;
        }
    }
    gq_records_free(&rs);
    free(m);
    return rc;
}

static const gq_exit_doc pairs_exits[] = {
    {0, "every figure valid"},
    {1, "a figure failed or is invalid (an error, failed verification, an impossible figure)"},
    GQ_EXITDOC_USAGE,
    GQ_EXITDOC_NODEV,
    {5, "incomplete: interrupted; what was measured is written, marked incomplete"},
    GQ_EXITDOC_BUSY,
    GQ_EXITDOC_END,
};

const gq_frame_cmd gq_frame_pairs = {
    .name = "pairs",
    .summary = "run GPU pairs concurrently (e.g. 0:1,2:3) and compare pairings with --vs",
    .usage = "usage: gpuqual pairs PAIRS [--vs PAIRS] [--read|--write] [--method ce|sm] [options]\n\n"
             "Run the listed GPU pairs at the same time, e.g. 'gpuqual pairs 0:1,2:3,4:5,6:7', and report\n"
             "each pair (SRC:DST, data from SRC to DST) plus the aggregate of all of them with its overlap\n"
             "(valid only when every copy window overlaps the others by 99%). --vs runs a second pairing\n"
             "in the same invocation and shows both side by side. A GPU may\n"
             "be in one pair of a pairing; pairs without P2P are staged through host memory.\n\n",
    .opts = {.name = "pairs", .formats = "table,json,csv", .tabs = tabs, .ntab = NTABS},
    .opts_size = sizeof(pairs_opts),
    .exits = pairs_exits,
    .examples = "  gpuqual pairs 0:1,2:3 --sim rtx4090x8\n"
                "  gpuqual pairs 0:1 --vs 2:3 --write\n",
    .maxpos = 4,
    .needs = GQ_FRAME_BACKEND | GQ_FRAME_JOURNAL | GQ_FRAME_MEASURES,
    .prepare = pairs_prepare,
    .run = pairs_run,
};
