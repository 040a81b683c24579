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
                          "--threshold '%s': expected a percentage above 0, e.g. 5%% or 2.5", o->threshold);
    if (ctx->npos < 2)
        return gq_err_set(&ctx->err, GQ_E_USAGE,
                          "compare needs at least two saved runs (got %d): gpuqual compare A.json B.json",
                          ctx->npos);
    if (ctx->npos > MAXFILES)
        return gq_err_set(&ctx->err, GQ_E_USAGE, "compare: at most %d files", MAXFILES);
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
    for (int i = 0; i < ctx->npos && !rc; i++) {
        json_t *root = NULL;
        gq_recordset rs = {0};
        if ((rc = gq_cli_doc_load(ctx->pos[i], &root, &rs, &ctx->err)))
            break;
        rc = gq_compare_add(c, ctx->pos[i], &rs, root, &ctx->err);
        json_decref(root);
        gq_records_free(&rs);
    }
    if (rc)
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

const gq_frame_cmd gq_frame_compare = {
    .name = "compare",
    .summary = "line up figures from several saved runs and flag regressions",
    .usage =
        "usage: gpuqual compare A.json B.json [C.json ...] [--threshold 5%] [--all] [--format FMT]\n\n"
        "Line up the same figures from several saved runs or nodes (the first is the baseline), show the\n"
        "deltas, and flag regressions: bandwidth or clocks lower, latency or temperature higher, by more\n"
        "than the threshold. E.g. one node before and after a BIOS change, or eight nodes of one purchase.\n"
        "Exit codes: 0 no regression, 1 a regression was found, 2 bad input.\n\n",
    .opts = {.name = "compare", .tabs = tabs, .ntab = 1},
    .opts_size = sizeof(compare_cli),
    .maxpos = MAXFILES + 1,
    .prepare = compare_prepare,
    .run = compare_run,
};
