/* gpuqual report RUN.json [-o card.html|card.md|card.json]: render a saved
 * run as the acceptance card. A card document is rendered as saved (judged
 * again with --expect FILE); any other gpuqual document (run, domains,
 * sweep, ...) is composed into a card from its records first, with the same
 * code as `gpuqual card` (docs/card.md). A fleet document is rendered as the
 * fleet (cli/report_fleet.c). */
#include <jansson.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/infile.h"
#include "analysis/card.h"
#include "doc/card_compose.h"
#include "doc/saved_doc.h"
#include "analysis/expect.h"
#include "cli/commands.h"
#include "cli/card_opts.h"
#include "cli/common.h"
#include "cli/fleet_gather.h"
#include "cli/frame.h"
#include "cli/outputs.h"
#include "render/card_render.h"
#include "render/render.h"

typedef struct report_cli {
    const char *output;
    const char *format;
    const char *expect;
    bool quiet;
    gq_optlist set; /* --set, in order */
    bool have_ex;   /* --expect or --set given */
    gq_expect *ex;  /* --expect, loaded, then --set */
} report_cli;

#define OFF(f) offsetof(report_cli, f)
/* clang-format off */
static const gq_opt report_opts[] = {
    {.name = "output",
     .shortname = 'o',
     .type = GQ_OPT_STR,
     .off = OFF(output),
     .arg = "FILE",
     .help = "write the card to FILE; its extension picks the format (.html, .md, .json) unless --format is "
             "given"},
    {.name = "format",
     .type = GQ_OPT_ENUM,
     .off = OFF(format),
     .arg = "FMT",
     .help = "summary (terminal), markdown, html or json (default: from -o, else summary)",
     .choices = "summary,markdown,html,json"},
    {.name = "expect",
     .shortname = 'e',
     .type = GQ_OPT_STR,
     .off = OFF(expect),
     .arg = "FILE",
     .help = "judge the saved figures again against an expectations file (at most " GQ_INFILE_TEXT_MAX_TEXT ")"},
    {.name = "set", .type = GQ_OPT_KV, .off = OFF(set), .arg = "[MODEL:]CHECK.LEVEL=VALUE", .help = GQ_CARD_SET_HELP},
    {.name = "quiet", .shortname = 'q', .type = GQ_OPT_FLAG, .off = OFF(quiet), .help = "no warnings"},
    GQ_OPT_END,
};
/* clang-format on */
#undef OFF
static const gq_opt *const tabs[] = {report_opts};

static const char *format_from_ext(const char *path)
{
    const char *dot = strrchr(path, '.');
    if (!dot)
        return NULL;
    if (!strcmp(dot, ".html") || !strcmp(dot, ".htm"))
        return "html";
    if (!strcmp(dot, ".md") || !strcmp(dot, ".markdown"))
        return "markdown";
    if (!strcmp(dot, ".json"))
        return "json";
    if (!strcmp(dot, ".txt"))
        return "summary";
    return NULL;
}

/* The options checked and the expectations loaded, before any work. */
static int report_prepare(gq_ctx *ctx)
{
    report_cli *o = ctx->opts;
    gq_err *err = &ctx->err;
    if (ctx->npos != 1)
        return gq_err_set(err, GQ_E_USAGE,
                          ctx->npos
                              ? "report: one saved run at a time (got %d files); use 'gpuqual compare' "
                                "for several"
                              : "report: which saved run? usage: gpuqual report RUN.json [-o card.html]",
                          ctx->npos);
    ctx->format = o->format;
    if (!ctx->format && o->output && strcmp(o->output, "-")) {
        if (!(ctx->format = format_from_ext(o->output)))
            return gq_err_set(
                err, GQ_E_USAGE,
                "report: cannot tell the format of '%s' from its extension; use .html, .md or .json, or "
                "--format",
                o->output);
    }
    if (!ctx->format)
        ctx->format = "summary";
    ctx->quiet = o->quiet;
    if (o->output && strcmp(o->output, "-"))
        ctx->out_path = o->output;
    if (!o->expect && !o->set.n)
        return GQ_OK;
    if (!(o->ex = calloc(1, sizeof *o->ex)))
        return gq_err_set(err, GQ_E_NOMEM, "out of memory");
    return gq_card_cli_expect(o->expect, &o->set, o->ex, &o->have_ex, err);
}

/* Warn about expectations that match no GPU of the run. */
static void unmatched_expectations(const report_cli *o, const json_t *card)
{
    const char *names[GQ_MAX_GPUS];
    int n = gq_card_gpu_names(card, names, GQ_MAX_GPUS);
    n = n < GQ_MAX_GPUS ? n : GQ_MAX_GPUS;
    for (int m = 0; m < o->ex->nmodels; m++) {
        bool hit = false;
        for (int k = 0; k < n; k++)
            hit |= gq_expect_match(o->ex, names[k]) == m;
        if (!hit)
            gq_cli_warn("%s: the expectations for '%s' match no GPU of this run",
                        o->expect ? o->expect : "--set", o->ex->models[m].match);
    }
}

/* Compose a card from the records (and the topology saved with them). */
static int compose(gq_ctx *ctx, json_t *root, const gq_saved_sections *sec, const gq_recordset *rs)
{
    report_cli *o = ctx->opts;
    const char *path = ctx->pos[0];
    const json_t *tj = sec->topology;
    if (!tj)
        return gq_err_set(&ctx->err, GQ_E_USAGE,
                          "'%s' has no saved topology, so no card can be composed from it", path);
    gq_err te = {0};
    if (gq_topo_from_json(tj, ctx->topo, &te) != GQ_OK)
        return gq_err_set(&ctx->err, GQ_E_USAGE, "'%s': its saved topology cannot be read: %s", path,
                          te.msg[0] ? te.msg : "not a topology object");
    if (rs->n == 0)
        return gq_err_set(&ctx->err, GQ_E_USAGE, "'%s' holds no records to make a card from", path);
    gq_card_inputs in = {
        .topo = ctx->topo, .rs = rs, .stress = sec->stress, .expect = o->ex, .complete = !sec->incomplete};
    json_t *composed = gq_card_compose(&in, &ctx->err);
    if (!composed)
        return ctx->err.code ? ctx->err.code : GQ_E_NOMEM;
    gq_saved_merge_sections(root, composed);
    json_decref(composed);
    return GQ_OK;
}

static int render(gq_ctx *ctx, json_t *root)
{
    const char *fmt = ctx->format;
    if (!strcmp(fmt, "json")) {
        int rc = json_dumpf(root, ctx->out, JSON_INDENT(2)) != 0
                     ? gq_err_set(&ctx->err, GQ_E_IO, "cannot write the JSON")
                     : GQ_OK;
        fputc('\n', ctx->out);
        return rc;
    }
    gq_card_doc *cd = NULL;
    int rc = gq_card_doc_from_json(root, &cd, &ctx->err);
    if (rc)
        return rc;
    if (!strcmp(fmt, "html"))
        rc = gq_card_render_html(ctx->out, cd, &ctx->err);
    else if (!strcmp(fmt, "markdown"))
        rc = gq_card_render_markdown(ctx->out, cd, &ctx->err);
    else
        rc = gq_card_render_summary(ctx->out, cd, ctx->out == stdout ? gq_frame_help_width() : 0, &ctx->err);
    gq_card_doc_free(cd);
    return rc;
}

static int report_run(gq_ctx *ctx)
{
    report_cli *o = ctx->opts;
    json_t *root = NULL;
    gq_recordset rs = {0};
    int rc = gq_cli_doc_load(ctx->pos[0], &root, &rs, &ctx->err);
    if (rc)
        goto out;
    /* a fleet: its nodes and outliers (cli/report_fleet.c) */
    gq_saved_head head;
    gq_saved_head_read(root, &head);
    if (!strcmp(head.kind, "fleet")) {
        rc = o->expect ? gq_err_set(&ctx->err, GQ_E_USAGE,
                                    "report: --expect does not apply to a fleet; each node's card in its "
                                    "folder can be reported with --expect")
                       : gq_report_fleet(ctx, root, &ctx->exit_code);
        goto out;
    }
    gq_saved_sections sec;
    gq_saved_sections_read(root, &sec);
    json_t *card = sec.card;
    if (sec.card_present && !card) {
        rc = gq_err_set(&ctx->err, GQ_E_USAGE, "%s: card is not an object, expected the card section",
                        ctx->pos[0]);
        goto out;
    }
    if (!card) {
        if ((rc = compose(ctx, root, &sec, &rs)))
            goto out;
        gq_saved_sections_read(root, &sec);
        card = sec.card;
    } else if ((rc = gq_card_read(card, ctx->pos[0], &ctx->err))) {
        /* Fail closed, before anything is written: a card read back is never a pass by default. */
        goto out;
    } else if (o->have_ex &&
               (rc = gq_card_judge_json(card, sec.bottlenecks, sec.stress, &rs, o->ex, &ctx->err))) {
        goto out;
    }
    ctx->exit_code = gq_card_exit_code(card);
    if (ctx->exit_code < 0) /* the reader and the judge leave a verdict; never a pass without one */
        rc = gq_err_set(&ctx->err, GQ_E_USAGE, "%s: card.verdict is not one gpuqual writes", ctx->pos[0]);
    if (rc)
        goto out;
    if (o->have_ex && !o->quiet)
        unmatched_expectations(o, card);
    if ((rc = render(ctx, root)))
        goto out;
out:
    json_decref(root);
    gq_records_free(&rs);
    return rc;
}

static void report_done(gq_ctx *ctx)
{
    free(((report_cli *)ctx->opts)->ex);
}

static const gq_exit_doc report_exits[] = {
    {0, "the card's verdict is pass (a run or a fleet: read and rendered)"},
    {1, "the card's verdict is fail"},
    GQ_EXITDOC_USAGE,
    {4, "the card's verdict is warn"},
    {5, "the card's verdict is incomplete"},
    GQ_EXITDOC_END,
};

const gq_frame_cmd gq_frame_report = {
    .name = "report",
    .summary = "render a saved run as HTML, Markdown or a table",
    .usage =
        "usage: gpuqual report RUN.json [-o card.html|card.md|card.json] [--format FMT] [--expect FILE]\n\n"
        "Render a saved gpuqual document as the acceptance card: one self-contained HTML file with its\n"
        "figures, Markdown (the card's table and findings), the card JSON, or a terminal\n"
        "summary. Documents other than cards are composed into a card from their records. A fleet\n"
        "document (DIR/fleet.json of gpuqual fleet) is rendered as the fleet: its summary, Markdown,\n"
        "or HTML with a node × check heatmap, the flagged nodes and the outliers; it exits as the fleet.\n"
        "RUN.json may also be a run's journal, a card directory, '-' for stdin, a pipe or a FIFO; a\n"
        "document or journal larger than " GQ_INFILE_DOC_MAX_TEXT
        " is refused from its size, before it is read.\n\n",
    .opts = {.name = "report", .tabs = tabs, .ntab = 1},
    .opts_size = sizeof(report_cli),
    .exits = report_exits,
    .examples = "  gpuqual report card/card.json -o card.html\n"
                "  gpuqual report card/card.json --expect h200.expect\n",
    .maxpos = 4,
    .prepare = report_prepare,
    .run = report_run,
    .done = report_done,
};
