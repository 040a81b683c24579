/* gpuqual stress: load every chosen GPU with GEMMs at once, record telemetry,
 * summarise each GPU as seed 001 §7 does and judge the node
 * (docs/method-stress.md). Exit code: 0 pass, 4 warn, 1 fail, 5 interrupted
 * (summary still written). */
#include <jansson.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/stress.h"
#include "exec/stress_run.h"
#include "cli/commands.h"
#include "cli/common.h"
#include "cli/progress.h"
#include "cli/frame.h"
#include "cli/outputs.h"
#include "cli/textfiles.h"
#include "core/interrupt.h"
#include "core/units.h"
#include "measure/journal.h"
#include "render/render.h"
#include "render/analysis_render.h"
#include "render/command_text.h"

typedef struct stress_opts {
    gq_common c;
    double duration;
    double interval;
    const char *precision;
    bool with_transfers;
    const char *csv;
    double clock_spread_warn; /* percent */
} stress_opts;

#define OFF(f) offsetof(stress_opts, f)
/* clang-format off */
static const gq_opt stress_own_opts[] = {
    {.name = "duration",
     .shortname = 'd',
     .type = GQ_OPT_DURATION,
     .off = OFF(duration),
     .def = "5m",
     .arg = "TIME",
     .help = "how long to load the GPUs: 90s, 5m, 1h"},
    {.name = "precision",
     .type = GQ_OPT_ENUM,
     .off = OFF(precision),
     .def = "bf16",
     .arg = "TYPE",
     .help = "GEMM element type (bf16/fp16 on the tensor cores)",
     .choices = "bf16,fp16,fp32,fp64"},
    {.name = "interval",
     .type = GQ_OPT_DURATION,
     .off = OFF(interval),
     .def = "1s",
     .arg = "TIME",
     .help = "telemetry sampling interval, 0.1 s up to the duration"},
    {.name = "with-transfers",
     .type = GQ_OPT_FLAG,
     .off = OFF(with_transfers),
     .help = "also copy host<->GPU on every GPU during the load (catches links that train down)"},
    {.name = "csv",
     .type = GQ_OPT_STR,
     .off = OFF(csv),
     .arg = "FILE",
     .help = "write the telemetry time series to FILE as CSV"},
    {.name = "clock-spread-warn",
     .type = GQ_OPT_DOUBLE,
     .off = OFF(clock_spread_warn),
     .def = "5",
     .arg = "PCT",
     .help = "warn when average SM clocks of same-model GPUs differ by more than PCT %",
     .lo = 0,
     .hi = 100},
    GQ_OPT_END,
};
/* clang-format on */
#undef OFF

static const gq_opt *const tabs[] = {gq_common_output_opts, gq_common_backend_opts, stress_own_opts,
                                     gq_common_prom_opt};
#define NTABS ((int)(sizeof tabs / sizeof tabs[0]))

/* ---- progress ------------------------------------------------------------- */

/* The one bar (cli/progress.h) in tenths of a second of the run, with the
 * GPUs' telemetry as its step. */
static void on_progress(void *arg, const gq_stress_result *r, double elapsed)
{
    gq_progress *p = arg;
    if (!p->on)
        return;
    double power = 0, tmax = NAN, tflops = 0;
    int live = 0;
    for (int k = 0; k < r->ngpu; k++) {
        const gq_stress_gpu *g = &r->gpu[k];
        if (g->status == GQ_OK)
            live++;
        if (!g->npoints)
            continue;
        const gq_stress_point *pt = &g->pts[g->npoints - 1];
        if (pt->has_sample && isfinite(pt->s.power_w))
            power += pt->s.power_w;
        if (pt->has_sample && isfinite(pt->s.temp_c) && !(pt->s.temp_c <= tmax))
            tmax = pt->s.temp_c;
        if (isfinite(pt->tflops))
            tflops += pt->tflops;
    }
    gq_progress_set_total(p, gq_progress_tenths(r->duration_s));
    gq_progress_step(p, "%d/%d GPUs  %.0f W  max %.0f C  %.0f TFLOP/s", live, r->ngpu, power,
                     isfinite(tmax) ? tmax : 0, tflops);
    gq_progress_update(p, gq_progress_tenths(elapsed));
}

/* ---- the journal ---------------------------------------------------------- */

/* --journal FILE: every telemetry sample as a "sample" line, written as its
 * tick ends; a write failure stops the load (exit 1). */
typedef struct stress_journal {
    gq_journal j;
    int sent[GQ_MAX_GPUS]; /* samples of GPU slot k already written */
} stress_journal;

static int journal_tick(void *arg, const gq_stress_result *r, gq_err *err)
{
    stress_journal *sj = arg;
    for (int k = 0; k < r->ngpu; k++) {
        const gq_stress_gpu *g = &r->gpu[k];
        for (; sj->sent[k] < g->npoints; sj->sent[k]++) {
            json_t *s = gq_stress_sample_to_json(g->gpu, &g->pts[sj->sent[k]]);
            if (!s)
                return gq_err_set(err, GQ_E_NOMEM, "journal: out of memory");
            int rc = gq_journal_event(&sj->j, "sample", s, err);
            json_decref(s);
            if (rc)
                return rc;
        }
    }
    return GQ_OK;
}

static int journal_open(gq_ctx *ctx, const gq_stress_opts *so, stress_journal *sj)
{
    stress_opts *o = ctx->opts;
    json_t *jo = gq_cli_journal_options(&o->c);
    if (!jo)
        return gq_err_set(&ctx->err, GQ_E_NOMEM, "out of memory");
    /* the copy options do not shape a stress load */
    json_object_del(jo, "buffer_size");
    json_object_del(jo, "rounds");
    json_object_del(jo, "method");
    json_object_set_new(jo, "duration_s", json_real(so->duration_s));
    json_object_set_new(jo, "interval_s", json_real(so->interval_s));
    json_object_set_new(jo, "precision", json_string(gq_precision_name(so->precision)));
    json_object_set_new(jo, "with_transfers", json_boolean(so->with_transfers));
    gq_journal_id id;
    gq_cli_journal_id(&id, "stress", &o->c, ctx->topo, jo);
    int rc = gq_journal_open(&sj->j, o->c.journal, &id, &ctx->err);
    json_decref(jo);
    return rc;
}

/* ---- output --------------------------------------------------------------- */

static int write_csv_file(const gq_stress_result *r, const char *path, gq_err *err)
{
    gq_outfile o;
    int rc = gq_outfile_open(&o, path, err);
    if (rc)
        return rc;
    gq_stress_write_csv(o.f, r);
    return gq_outfile_commit(&o, err);
}

/* ---- the command ---------------------------------------------------------- */

/* The stress options from the command line (the GPUs come once they are known). */
static int stress_opts_from(const stress_opts *o, gq_stress_opts *so, gq_err *err)
{
    gq_stress_opts_default(so);
    so->duration_s = o->duration;
    so->interval_s = o->interval;
    so->with_transfers = o->with_transfers;
    so->ngpus = 1; /* checked again once the GPUs are known */
    int rc = gq_stress_parse_precision(o->precision, &so->precision, err);
    return rc ? rc : gq_stress_opts_check(so, err);
}

static int stress_prepare(gq_ctx *ctx)
{
    stress_opts *o = ctx->opts;
    gq_stress_opts so;
    int rc;
    if ((rc = stress_opts_from(o, &so, &ctx->err)))
        return rc;
    /* A bad --sim-fault (or other backend option) is refused before anything
     * runs, by the backend's option hook. */
    if ((rc = gq_cli_check_backend_opts(&o->c, &ctx->err)))
        return rc;
    /* Refuse unwritable outputs before any GPU is loaded. */
    if ((rc = gq_outfile_check(ctx->json_path, &ctx->err)))
        return rc;
    if ((rc = gq_outfile_check(o->csv, &ctx->err)))
        return rc;
    if (o->c.journal && (rc = gq_cli_check_writable(o->c.journal, &ctx->err)))
        return gq_err_prefix(&ctx->err, "--journal");
    return GQ_OK;
}

/* The JSON document of the run into ctx->doc. */
static int stress_doc(gq_ctx *ctx, const gq_stress_result *res, const gq_stress_summary *sum)
{
    json_t *options = gq_opts_to_json(ctx->cmd->opts.tabs, ctx->cmd->opts.ntab, ctx->opts);
    json_t *sections = json_object();
    json_t *st = gq_stress_to_json(res, sum);
    int rc = GQ_OK;
    if (options && sections && st) {
        json_object_set_new(sections, "stress", st);
        st = NULL;
        gq_doc d = {.kind = "stress",
                    .version = gq_version,
                    .git = gq_git_rev,
                    .options = options,
                    .topo = ctx->topo,
                    .records = NULL,
                    .sections = sections,
                    .simulated = res->simulated,
                    .incomplete = res->interrupted};
        ctx->doc = gq_doc_to_json(&d);
    }
    if (!ctx->doc)
        rc = gq_err_set(&ctx->err, GQ_E_NOMEM, "out of memory");
    json_decref(st);
    json_decref(options);
    json_decref(sections);
    return rc;
}

static void stress_print(gq_ctx *ctx, const gq_stress_result *res, const gq_stress_summary *sum)
{
    const char *format = ctx->format;
    if (!strcmp(format, "json"))
        ctx->doc_stdout = true;
    else if (!strcmp(format, "csv"))
        gq_stress_write_csv(stdout, res);
    else if (!strcmp(format, "markdown"))
        gq_render_stress_table(stdout, res, sum, true);
    else if (!strcmp(format, "prometheus")) {
        gq_err err = {0};
        if (gq_cli_prom_stress("-", sum, ctx->topo, &err))
            gq_cli_error("%s", err.msg);
    } else
        gq_render_stress_table(stdout, res, sum, false);
    fflush(stdout);
}

static int stress_exit_code(const gq_stress_result *res, const gq_stress_summary *sum)
{
    if (sum->verdict == GQ_STRESS_FAIL)
        return GQ_EXIT_FAIL;
    if (res->interrupted)
        return GQ_EXIT_INCOMPLETE;
    if (sum->verdict == GQ_STRESS_WARN)
        return GQ_EXIT_WARN;
    return GQ_EXIT_OK;
}

/* Load, judge and write the outputs of one stress run. */
static int stress_judge_and_write(gq_ctx *ctx, gq_stress_result *res, gq_stress_summary *sum)
{
    stress_opts *o = ctx->opts;
    gq_stress_rules rules;
    gq_stress_rules_default(&rules);
    rules.clock_spread_warn = o->clock_spread_warn / 100.0;
    gq_stress_summarize(res, &rules, sum);
    int rc;
    if ((ctx->json_path || !strcmp(ctx->format, "json")) && (rc = stress_doc(ctx, res, sum)))
        return rc;
    if (o->csv && (rc = write_csv_file(res, o->csv, &ctx->err)))
        return rc;
    if ((rc = gq_cli_prom_stress(o->c.prom_path, sum, ctx->topo, &ctx->err)))
        return rc;
    stress_print(ctx, res, sum);
    ctx->exit_code = stress_exit_code(res, sum);
    return GQ_OK;
}

static int stress_run(gq_ctx *ctx)
{
    stress_opts *o = ctx->opts;
    gq_stress_opts so;
    gq_progress prog = {0};
    gq_stress_result *res = calloc(1, sizeof *res);
    gq_stress_summary *sum = calloc(1, sizeof *sum);
    stress_journal *sj = NULL;
    int rc = GQ_OK;
    if (!res || !sum) {
        rc = gq_err_set(&ctx->err, GQ_E_NOMEM, "out of memory");
        goto out;
    }
    if (!ctx->quiet)
        for (int i = 0; i < ctx->topo->nwarnings; i++)
            gq_cli_warn("%s", ctx->topo->warnings[i]);
    if ((rc = stress_opts_from(o, &so, &ctx->err)))
        goto out;
    so.ngpus = o->c.ngpus_sel;
    memcpy(so.gpus, o->c.gpus_sel, sizeof so.gpus);
    if (o->c.journal) {
        if (!(sj = calloc(1, sizeof *sj))) {
            rc = gq_err_set(&ctx->err, GQ_E_NOMEM, "out of memory");
            goto out;
        }
        if ((rc = journal_open(ctx, &so, sj)))
            goto out;
        so.on_tick = journal_tick;
        so.tick_arg = sj;
    }
    gq_progress_init(&prog, gq_progress_wanted(ctx->quiet, ctx->format), 1);
    so.progress = on_progress;
    so.progress_arg = &prog;
    rc = gq_stress_run(&ctx->be, ctx->topo, &so, res, &ctx->err);
    gq_progress_clear(&prog);
    if (rc == GQ_E_INTR)
        rc = GQ_OK;
    if (!rc)
        rc = stress_judge_and_write(ctx, res, sum);
out:
    if (sj) {
        if (sj->j.f)
            gq_journal_close(&sj->j);
        free(sj);
    }
    if (res)
        gq_stress_result_free(res);
    free(res);
    free(sum);
    return rc;
}

static const gq_exit_doc stress_exits[] = {
    {0, "the verdict is pass"},
    {1, "the verdict is fail"},
    GQ_EXITDOC_USAGE,
    GQ_EXITDOC_NODEV,
    {4, "the verdict is warn"},
    {5, "incomplete: interrupted (Ctrl-C); the summary is still written"},
    GQ_EXITDOC_BUSY,
    GQ_EXITDOC_END,
};

const gq_frame_cmd gq_frame_stress = {
    .name = "stress",
    .summary = "load every GPU with GEMMs, record telemetry, judge the node",
    .usage =
        "usage: gpuqual stress [--duration 5m] [--gpus LIST] [--precision bf16|fp16|fp32|fp64]\n"
        "                      [--interval 1s] [--with-transfers] [--csv FILE] [--journal FILE] [options]\n\n"
        "Load every chosen GPU at once with a cuBLAS GEMM in a loop (results checked against the\n"
        "first one), sample temperature, power, clocks, clock-event reasons, PCIe link, replay and\n"
        "ECC counters, then summarise each GPU and judge the node (docs/method-stress.md):\n"
        "faulty results, uncorrected ECC, a lost GPU, thermal slowdown or a link trained down under\n"
        "load fail; clock spread across same-model GPUs warns; power capping alone is information.\n\n",
    .opts = {.name = "stress", .formats = "table,json,csv,markdown,prometheus", .tabs = tabs, .ntab = NTABS},
    .opts_size = sizeof(stress_opts),
    .exits = stress_exits,
    .examples = "  gpuqual stress --duration 10m --csv stress.csv\n"
                "  gpuqual stress --duration 30s --sim h200x2 --format markdown\n",
    .needs = GQ_FRAME_BACKEND | GQ_FRAME_MEASURES,
    .prepare = stress_prepare,
    .run = stress_run,
};
