/* gpuqual report RUN.json [-o card.html|card.md|card.json]: render a saved
 * run as the acceptance card. A card document is rendered as saved (judged
 * again with --expect FILE); any other gpuqual document (run, domains,
 * sweep, ...) is composed into a card from its records first, with the same
 * code as `gpuqual card` (docs/card.md). */
#include <jansson.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/card.h"
#include "analysis/expect.h"
#include "cli/commands.h"
#include "cli/common.h"
#include "render/card_render.h"
#include "render/render.h"

typedef struct report_cli {
    const char *output;
    const char *format;
    const char *expect;
    bool quiet;
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
     .help = "judge the saved figures again against an expectations file"},
    {.name = "quiet", .shortname = 'q', .type = GQ_OPT_FLAG, .off = OFF(quiet), .help = "no warnings"},
    GQ_OPT_END,
};
/* clang-format on */
#undef OFF
static const gq_opt *const tabs[] = {report_opts};

static void help(void)
{
    printf(
        "usage: gpuqual report RUN.json [-o card.html|card.md|card.json] [--format FMT] [--expect FILE]\n\n"
        "Render a saved gpuqual document as the acceptance card: one self-contained HTML file with its\n"
        "figures, Markdown (the card's table and findings), the card JSON, or a terminal\n"
        "summary. Documents other than cards are composed into a card from their records.\n"
        "Exit codes: 0 pass, 4 warn, 1 fail, 5 incomplete (the card's verdict); 2 bad input.\n\noptions:\n");
    gq_opts_help(stdout, tabs, 1);
}

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

int gq_cmd_report(int argc, char **argv)
{
    report_cli o;
    gq_err err = {0};
    bool want_help = false;
    const char *pos[4];
    int npos = 0, rc = GQ_OK, exit_code = 0;
    json_t *root = NULL, *composed = NULL;
    gq_recordset rs = {0};
    gq_topo *topo = calloc(1, sizeof *topo);
    gq_expect *ex = calloc(1, sizeof *ex);
    gq_outfile of = {0};
    bool of_open = false;
    memset(&o, 0, sizeof o);
    if (!topo || !ex) {
        rc = gq_err_set(&err, GQ_E_NOMEM, "out of memory");
        goto fail;
    }
    if ((rc = gq_opts_parse(tabs, 1, &o, argc, argv, 2, pos, 4, &npos, &want_help, &err)))
        goto fail;
    if (want_help) {
        help();
        goto out;
    }
    if (npos != 1) {
        rc = gq_err_set(&err, GQ_E_USAGE,
                        npos ? "report: one saved run at a time (got %d files); use 'gpuqual compare' "
                               "for several"
                             : "report: which saved run? usage: gpuqual report RUN.json [-o card.html]",
                        npos);
        goto fail;
    }
    const char *fmt = o.format;
    if (!fmt && o.output && strcmp(o.output, "-")) {
        fmt = format_from_ext(o.output);
        if (!fmt) {
            rc = gq_err_set(
                &err, GQ_E_USAGE,
                "report: cannot tell the format of '%s' from its extension; use .html, .md or .json, or "
                "--format",
                o.output);
            goto fail;
        }
    }
    if (!fmt)
        fmt = "summary";
    if (o.expect && (rc = gq_expect_load(o.expect, ex, &err)))
        goto fail;
    if (o.output && (rc = gq_cli_check_writable(o.output, &err)))
        goto fail;
    if ((rc = gq_doc_load(pos[0], &root, &rs, &err)))
        goto fail;
    json_t *card = json_object_get(root, "card");
    if (!json_is_object(card)) {
        /* Compose a card from the records (and the topology saved with them). */
        const json_t *tj = json_object_get(root, "topology");
        if (!tj || gq_topo_from_json(tj, topo, &err) != GQ_OK) {
            rc = gq_err_set(&err, GQ_E_USAGE,
                            "'%s' has no saved topology, so no card can be composed from it", pos[0]);
            goto fail;
        }
        if (rs.n == 0) {
            rc = gq_err_set(&err, GQ_E_USAGE, "'%s' holds no records to make a card from", pos[0]);
            goto fail;
        }
        gq_card_inputs in = {.topo = topo,
                             .rs = &rs,
                             .stress = json_object_get(root, "stress"),
                             .expect = o.expect ? ex : NULL,
                             .complete = !json_is_true(json_object_get(root, "incomplete"))};
        if (!(composed = gq_card_compose(&in, &err))) {
            rc = err.code ? err.code : GQ_E_NOMEM;
            goto fail;
        }
        const char *k;
        json_t *v;
        json_object_foreach(composed, k, v) json_object_set(root, k, v);
        card = json_object_get(root, "card");
    } else if (o.expect) {
        if ((rc = gq_card_judge(card, json_object_get(root, "bottlenecks"), json_object_get(root, "stress"),
                                &rs, ex, &err)))
            goto fail;
    }
    if (o.expect && !o.quiet) {
        int nrun = (int)json_array_size(json_object_get(json_object_get(card, "identity"), "gpus"));
        for (int m = 0; m < ex->nmodels; m++) {
            bool hit = false;
            for (int k = 0; k < nrun; k++) {
                const json_t *g =
                    json_array_get(json_object_get(json_object_get(card, "identity"), "gpus"), (size_t)k);
                hit |= gq_expect_match(ex, json_string_value(json_object_get(g, "name"))) == m;
            }
            if (!hit)
                gq_cli_warn("%s: the expectations for '%s' match no GPU of this run", o.expect,
                            ex->models[m].match);
        }
    }
    if ((rc = gq_outfile_open(&of, o.output ? o.output : "-", &err)))
        goto fail;
    of_open = true;
    if (!strcmp(fmt, "html"))
        rc = gq_card_render_html(of.f, root, &err);
    else if (!strcmp(fmt, "markdown"))
        rc = gq_card_render_markdown(of.f, root, &err);
    else if (!strcmp(fmt, "json")) {
        if (json_dumpf(root, of.f, JSON_INDENT(2)) != 0)
            rc = gq_err_set(&err, GQ_E_IO, "cannot write the JSON");
        fputc('\n', of.f);
    } else
        rc = gq_card_render_summary(of.f, root, 0, &err);
    if (rc) {
        gq_outfile_abort(&of);
        of_open = false;
        goto fail;
    }
    of_open = false;
    if ((rc = gq_outfile_commit(&of, &err)))
        goto fail;
    exit_code = gq_card_exit_code(card);
    goto out;
fail:
    if (of_open)
        gq_outfile_abort(&of);
    gq_cli_error("%s", err.msg[0] ? err.msg : "report failed");
    exit_code = gq_status_exit_code(rc);
out:
    json_decref(root);
    json_decref(composed);
    gq_records_free(&rs);
    free(topo);
    free(ex);
    return exit_code;
}
