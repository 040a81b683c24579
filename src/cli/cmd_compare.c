/* gpuqual compare A.json B.json [C.json ...] [--threshold 5%]: line up the
 * same figures from several saved runs or nodes, with deltas against the
 * first, and flag regressions beyond the threshold (analysis/compare.h).
 * Exit codes: 0 no regression, 1 at least one regression, 2 bad input. */
#include <jansson.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/infile.h"
#include "analysis/compare.h"
#include "cli/commands.h"
#include "cli/common.h"
#include "cli/frame.h"
#include "cli/outputs.h"
#include "core/units.h"
#include "render/render.h"
#include "render/analysis_render.h"

typedef struct compare_cli {
    const char *threshold;
    const char *format;
    const char *json_path;
    bool all;
    bool across_models;
    double temp_threshold_c;
    double threshold_pct; /* --threshold, parsed */
} compare_cli;

#define OFF(f) offsetof(compare_cli, f)
/* clang-format off */
static const gq_opt compare_opts[] = {
    {.name = "threshold",
     .type = GQ_OPT_STR,
     .off = OFF(threshold),
     .def = "5%",
     .arg = "PCT",
     .help = "a figure worse than the first run's by more than this is a regression (e.g. 5% or 2.5)"},
    {.name = "format",
     .type = GQ_OPT_ENUM,
     .off = OFF(format),
     .def = "table",
     .arg = "FMT",
     .help = "table, markdown or json",
     .choices = "table,markdown,json"},
    {.name = "json",
     .type = GQ_OPT_STR,
     .off = OFF(json_path),
     .arg = "FILE",
     .help = "also write the comparison as a gpuqual document to FILE"},
    {.name = "temp-threshold",
     .type = GQ_OPT_DOUBLE,
     .off = OFF(temp_threshold_c),
     .def = "5",
     .arg = "C",
     .help = "a temperature higher than the first run's by more than this many degrees C is a regression",
     .lo = 0.1,
     .hi = 100},
    {.name = "across-models",
     .type = GQ_OPT_FLAG,
     .off = OFF(across_models),
     .help = "compare runs on different GPU models or with stresses of different lengths; every affected "
             "line says so, and its differences are not regressions"},
    {.name = "all",
     .shortname = 'a',
     .type = GQ_OPT_FLAG,
     .off = OFF(all),
     .help = "list every figure, not only the regressions"},
    GQ_OPT_END,
};
/* clang-format on */
#undef OFF
static const gq_opt *const tabs[] = {compare_opts};

#define MAXFILES 64

static int compare_prepare(gq_ctx *ctx)
{
    compare_cli *o = ctx->opts;
    char tb[64];
    snprintf(tb, sizeof tb, "%s", o->threshold);
    size_t tl = strlen(tb);
    if (tl && tb[tl - 1] == '%')
        tb[tl - 1] = 0;
    gq_err e2;
    if (gq_parse_double(tb, &o->threshold_pct, &e2) || !(o->threshold_pct > 0) || o->threshold_pct >= 1000)
        return gq_err_set(&ctx->err, GQ_E_USAGE,
                          "--threshold '%s': expected a percentage above 0 and below 1000, e.g. 5%% or 2.5",
                          o->threshold);
    if (ctx->npos < 2)
        return gq_err_set(&ctx->err, GQ_E_USAGE,
                          "compare needs at least two saved runs (got %d): gpuqual compare A.json B.json",
                          ctx->npos);
    if (ctx->npos > MAXFILES)
        return gq_err_set(&ctx->err, GQ_E_USAGE,
                          "compare: %d files given, at most %d can be compared at once", ctx->npos, MAXFILES);
    int nstdin = 0;
    for (int i = 0; i < ctx->npos; i++)
        nstdin += !strcmp(ctx->pos[i], "-");
    if (nstdin > 1)
        return gq_err_set(&ctx->err, GQ_E_USAGE,
                          "compare: '-' (stdin) is given %d times; stdin can be read once, give files for "
                          "the other runs",
                          nstdin);
    ctx->format = o->format;
    ctx->json_path = o->json_path;
    return GQ_OK;
}

static int compare_run(gq_ctx *ctx)
{
    compare_cli *o = ctx->opts;
    gq_compare *c = calloc(1, sizeof *c);
    int rc = GQ_OK;
    if (!c)
        return gq_err_set(&ctx->err, GQ_E_NOMEM, "out of memory");
    gq_compare_init(c, 5);
    c->threshold_pct = o->threshold_pct;
    c->threshold_c = o->temp_threshold_c;
    c->across_models = o->across_models;
    for (int i = 0; i < ctx->npos && !rc; i++) {
        json_t *root = NULL;
        gq_recordset rs = {0};
        if ((rc = gq_cli_doc_load(ctx->pos[i], &root, &rs, &ctx->err))) {
            gq_records_free(&rs); /* the records read before the bad one */
            break;
        }
        gq_cmp_doc d;
        if (!(rc = gq_cmp_doc_from_json(ctx->pos[i], root, &d, &ctx->err)))
            rc = gq_compare_add(c, ctx->pos[i], &rs, &d, &ctx->err);
        json_decref(root);
        gq_records_free(&rs);
    }
    if (rc || (rc = gq_compare_check(c, &ctx->err)))
        goto out;
    gq_compare_finish(c);
    if (c->ncompared == 0) {
        rc = gq_err_set(&ctx->err, GQ_E_USAGE,
                        "the files share no figure to compare (different tests or GPUs)");
        goto out;
    }
    bool json = !strcmp(ctx->format, "json");
    if (ctx->json_path || json) {
        json_t *sec = json_object();
        json_object_set_new(sec, "compare", gq_compare_to_json(c));
        gq_doc d = {.kind = "compare", .version = gq_version, .git = gq_git_rev, .sections = sec};
        ctx->doc = gq_doc_to_json(&d);
        json_decref(sec);
        if (!ctx->doc) {
            rc = gq_err_set(&ctx->err, GQ_E_NOMEM, "out of memory");
            goto out;
        }
    }
    ctx->doc_stdout = json;
    if (!json)
        gq_compare_print(stdout, c, !strcmp(ctx->format, "markdown"), o->all);
    ctx->exit_code = c->nregressions ? GQ_EXIT_FAIL : GQ_EXIT_OK;
out:
    gq_compare_free(c);
    free(c);
    return rc;
}

static const gq_exit_doc compare_exits[] = {
    {0, "no regression"},
    {1, "at least one regression"},
    GQ_EXITDOC_USAGE,
    GQ_EXITDOC_END,
};

const gq_frame_cmd gq_frame_compare = {
    .name = "compare",
    .summary = "line up figures from several saved runs and flag regressions",
    .usage =
        "usage: gpuqual compare A.json B.json [C.json ...] [--threshold 5%] [--all] [--format FMT]\n\n"
        "Line up the same figures from several saved runs or nodes (the first is the baseline), show the\n"
        "deltas, and flag regressions: bandwidth or clocks lower or latency higher by more than the\n"
        "threshold, temperatures higher by more than --temp-threshold degrees. E.g. one node before and\n"
        "after a BIOS change, or eight nodes of one purchase. Runs on different GPU models, or with\n"
        "stresses of different lengths, are refused unless --across-models (then every such line says so).\n"
        "Each run is a saved document, a journal or a card directory; one of them may be '-' (stdin).\n"
        "A document or journal larger than " GQ_INFILE_DOC_MAX_TEXT
        " is refused from its size, before it is read.\n\n",
    .opts = {.name = "compare", .tabs = tabs, .ntab = 1},
    .opts_size = sizeof(compare_cli),
    .exits = compare_exits,
    .examples = "  gpuqual compare before/card.json after/card.json\n"
                "  gpuqual compare a.json b.json c.json --threshold 2.5 --format markdown\n",
    .maxpos = GQ_FRAME_MAXPOS, /* more than MAXFILES, so that prepare names the limit */
    .prepare = compare_prepare,
    .run = compare_run,
};
