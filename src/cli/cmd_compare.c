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
#include "core/units.h"
#include "render/render.h"
#include "render/analysis_render.h"

typedef struct compare_cli {
    const char *threshold;
    const char *format;
    const char *json_path;
    bool all;
} compare_cli;

#define OFF(f) offsetof(compare_cli, f)
/* clang-format off */
static const gq_opt compare_opts[] = {
    {.name = "threshold",
     .shortname = 't',
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

static void help(void)
{
    printf(
        "usage: gpuqual compare A.json B.json [C.json ...] [--threshold 5%%] [--all] [--format FMT]\n\n"
        "Line up the same figures from several saved runs or nodes (the first is the baseline), show the\n"
        "deltas, and flag regressions: bandwidth or clocks lower, latency or temperature higher, by more\n"
        "than the threshold. E.g. one node before and after a BIOS change, or eight nodes of one purchase.\n"
        "Exit codes: 0 no regression, 1 a regression was found, 2 bad input.\n\noptions:\n");
    gq_opts_help(stdout, tabs, 1);
}

#define MAXFILES 64

int gq_cmd_compare(int argc, char **argv)
{
    compare_cli o;
    gq_err err = {0};
    bool want_help = false;
    const char *pos[MAXFILES + 1];
    int npos = 0, rc = GQ_OK, exit_code = 0;
    gq_compare *c = calloc(1, sizeof *c);
    json_t *doc = NULL, *sec = NULL;
    memset(&o, 0, sizeof o);
    if (!c) {
        gq_cli_error("out of memory");
        return 1;
    }
    gq_compare_init(c, 5);
    if ((rc = gq_opts_parse(tabs, 1, &o, argc, argv, 2, pos, MAXFILES + 1, &npos, &want_help, &err)))
        goto fail;
    if (want_help) {
        help();
        goto out;
    }
    char tb[64];
    snprintf(tb, sizeof tb, "%s", o.threshold);
    size_t tl = strlen(tb);
    if (tl && tb[tl - 1] == '%')
        tb[tl - 1] = 0;
    double th;
    gq_err e2;
    if (gq_parse_double(tb, &th, &e2) || !(th > 0) || th >= 1000) {
        rc = gq_err_set(&err, GQ_E_USAGE, "--threshold '%s': expected a percentage above 0, e.g. 5%% or 2.5",
                        o.threshold);
        goto fail;
    }
    c->threshold_pct = th;
    if (npos < 2) {
        rc =
            gq_err_set(&err, GQ_E_USAGE,
                       "compare needs at least two saved runs (got %d): gpuqual compare A.json B.json", npos);
        goto fail;
    }
    if (npos > MAXFILES) {
        rc = gq_err_set(&err, GQ_E_USAGE, "compare: at most %d files", MAXFILES);
        goto fail;
    }
    if ((rc = gq_cli_check_writable(o.json_path, &err)))
        goto fail;
    for (int i = 0; i < npos; i++) {
        json_t *root = NULL;
        gq_recordset rs = {0};
        if ((rc = gq_doc_load(pos[i], &root, &rs, &err)))
            goto fail;
        rc = gq_compare_add(c, pos[i], &rs, root, &err);
        json_decref(root);
        gq_records_free(&rs);
        if (rc)
            goto fail;
    }
    gq_compare_finish(c);
    if (c->ncompared == 0) {
        rc = gq_err_set(&err, GQ_E_USAGE, "the files share no figure to compare (different tests or GPUs)");
        goto fail;
    }
    if (o.json_path || !strcmp(o.format, "json")) {
        sec = json_object();
        json_object_set_new(sec, "compare", gq_compare_to_json(c));
        gq_doc d = {.kind = "compare", .version = gq_version, .git = gq_git_rev, .sections = sec};
        doc = gq_doc_to_json(&d);
        if (!doc) {
            rc = gq_err_set(&err, GQ_E_NOMEM, "out of memory");
            goto fail;
        }
        if (o.json_path && (rc = gq_json_write_file(doc, o.json_path, &err)))
            goto fail;
    }
    if (!strcmp(o.format, "json")) {
        json_dumpf(doc, stdout, JSON_INDENT(2));
        fputc('\n', stdout);
    } else {
        gq_compare_print(stdout, c, !strcmp(o.format, "markdown"), o.all);
    }
    exit_code = c->nregressions ? GQ_EXIT_FAIL : GQ_EXIT_OK;
    goto out;
fail:
    gq_cli_error("%s", err.msg[0] ? err.msg : "compare failed");
    exit_code = gq_status_exit_code(rc);
out:
    json_decref(doc);
    json_decref(sec);
    gq_compare_free(c);
    free(c);
    return exit_code;
}
