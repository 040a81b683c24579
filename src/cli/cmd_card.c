/* gpuqual card: the acceptance card (docs/card.md). Plans the whole
 * qualification to a time budget, runs it, judges it, and writes every
 * artefact into one directory: card.json, card.md, card.html,
 * nvbandwidth.json, stress.csv, journal.jsonl. A one-screen summary goes to
 * stdout. Exit: 0 pass, 4 warn, 1 fail, 5 incomplete, 2 bad input. */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "analysis/card.h"
#include "exec/card_run.h"
#include "analysis/expect.h"
#include "analysis/stress.h"
#include "cli/commands.h"
#include "cli/card_opts.h"
#include "cli/common.h"
#include "cli/progress.h"
#include "core/interrupt.h"
#include "measure/journal.h"
#include "core/units.h"
#include "render/card_render.h"
#include "render/render.h"
#include "render/analysis_render.h"

typedef gq_card_cli card_cli;

#define OFF(f) offsetof(card_cli, f)
/* clang-format off */
static const gq_opt card_own_opts[] = {
    {.name = "output",
     .shortname = 'o',
     .type = GQ_OPT_STR,
     .off = OFF(outdir),
     .arg = "DIR",
     .help = "directory for every artefact (default ./gpuqual-card-<host>-<time>)"},
    GQ_OPT_END,
};
/* clang-format on */
#undef OFF

static const gq_opt *const tabs[] = {gq_common_output_opts, gq_common_backend_opts, gq_card_cli_opts,
                                     card_own_opts};
#define NTABS ((int)(sizeof tabs / sizeof tabs[0]))

static void help(void)
{
    printf(
        "usage: gpuqual card [--budget 5m] [--expect FILE] [-o DIR] [--stress 60s | --no-stress]\n"
        "                    [--prefill N --decode M] [--gpus LIST] [--sim NAME] [options]\n\n"
        "The acceptance card: identity and links, pairwise matrices, concurrent pairs\n"
        "within and across domains, host paths (each GPU alone, the bottleneck subsets, all at once),\n"
        "buffer sweeps on the fastest and slowest path, latency, a stress run, domains and bottlenecks,\n"
        "a verified placement, and the verdicts, planned to fit --budget.\n\n"
        "Writes DIR/card.json, card.md, card.html, nvbandwidth.json, stress.csv and journal.jsonl, and a\n"
        "one-screen summary on stdout (--format markdown or json prints the card instead).\n"
        "Exit codes: 0 pass, 4 warn, 1 fail, 5 incomplete (interrupted: the card shows what was measured),\n"
        "2 bad input, 3 no GPU. Details: docs/card.md.\n\noptions:\n");
    gq_opts_help(stdout, tabs, NTABS);
}

/* Directory: created here when missing (its parent must exist); an existing
 * one must be a writable directory. *created says whether to remove it when
 * the run is refused before anything was measured. */
static int prepare_dir(const char *dir, bool *created, gq_err *err)
{
    struct stat st;
    *created = false;
    if (stat(dir, &st) == 0) {
        if (!S_ISDIR(st.st_mode))
            return gq_err_set(err, GQ_E_IO, "-o '%s': exists and is not a directory", dir);
        if (access(dir, W_OK | X_OK) != 0)
            return gq_err_set(err, GQ_E_IO, "-o '%s': directory is not writable", dir);
        return GQ_OK;
    }
    if (mkdir(dir, 0777) != 0)
        return gq_err_set(err, GQ_E_IO, "-o '%s': cannot create the directory: %s", dir, strerror(errno));
    *created = true;
    return GQ_OK;
}

typedef struct prog {
    gq_progress bar;
} prog;

static void on_progress(void *arg, const gq_card_progress *p)
{
    prog *P = arg;
    char left[32];
    double l = p->left_s;
    if (l < 60)
        snprintf(left, sizeof left, "%.0fs", l);
    else
        snprintf(left, sizeof left, "%.0fm%02.0fs", floor(l / 60), fmod(l, 60));
    gq_progress_step(&P->bar, "step %d/%d %s, ~%s left", p->step_index, p->nsteps, p->title, left);
    gq_progress_update(&P->bar, (long)(p->done_s * 10));
}

static int write_text(const char *dir, const char *name, const json_t *doc,
                      int (*fn)(FILE *, const json_t *, gq_err *), gq_err *err)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    gq_outfile of;
    int rc = gq_outfile_open(&of, path, err);
    if (rc)
        return rc;
    if ((rc = fn(of.f, doc, err))) {
        gq_outfile_abort(&of);
        return rc;
    }
    return gq_outfile_commit(&of, err);
}

int gq_cmd_card(int argc, char **argv)
{
    card_cli o;
    gq_err err = {0};
    gq_backend be = {0};
    gq_journal jr = {0};
    bool opened = false, want_help = false, have_journal = false, created = false, measured = false;
    const char *pos[2];
    int npos = 0, rc = GQ_OK, exit_code = GQ_EXIT_OK;
    char dir[1024] = "";
    json_t *options = NULL, *composed = NULL, *doc = NULL, *nvb = NULL;
    gq_topo *topo = calloc(1, sizeof *topo);
    gq_expect *ex = calloc(1, sizeof *ex);
    gq_card_plan *plan = calloc(1, sizeof *plan);
    gq_card_opts *co = calloc(1, sizeof *co);
    gq_card_result res;
    memset(&res, 0, sizeof res);
    memset(&o, 0, sizeof o);
    prog P;
    memset(&P, 0, sizeof P);

    if (!topo || !ex || !plan || !co) {
        rc = gq_err_set(&err, GQ_E_NOMEM, "out of memory");
        goto fail;
    }
    if ((rc = gq_opts_parse(tabs, NTABS, &o, argc, argv, 2, pos, 2, &npos, &want_help, &err)))
        goto fail;
    if (want_help) {
        help();
        goto out;
    }
    if (npos > 0) {
        rc = gq_err_set(&err, GQ_E_USAGE,
                        "card: unexpected argument '%s'; the output directory is given with -o DIR", pos[0]);
        goto fail;
    }
    if (strcmp(o.c.format, "table") && strcmp(o.c.format, "json") && strcmp(o.c.format, "markdown")) {
        rc = gq_err_set(&err, GQ_E_USAGE,
                        "card: --format %s does not apply; use table (the summary), markdown or json",
                        o.c.format);
        goto fail;
    }
    if (o.expect) {
        if ((rc = gq_expect_load(o.expect, ex, &err)))
            goto fail;
    }
    if ((rc = gq_cli_check_writable(o.c.json_path, &err)))
        goto fail;
    if (o.outdir && !*o.outdir) {
        rc = gq_err_set(&err, GQ_E_USAGE, "-o: empty directory name");
        goto fail;
    }
    /* Check where the artefacts go before opening anything. */
    if (o.outdir) {
        char tmp[1024];
        snprintf(tmp, sizeof tmp, "%s", o.outdir);
        struct stat st;
        if (stat(tmp, &st) != 0) {
            char *slash = strrchr(tmp, '/');
            const char *parent = ".";
            if (slash) {
                *slash = 0;
                parent = *tmp ? tmp : "/";
            }
            if (access(parent, W_OK | X_OK) != 0) {
                rc = gq_err_set(&err, GQ_E_IO, "-o '%s': cannot create it: '%s' %s", o.outdir, parent,
                                access(parent, F_OK) ? "does not exist" : "is not writable");
                goto fail;
            }
        } else if (!S_ISDIR(st.st_mode)) {
            rc = gq_err_set(&err, GQ_E_IO, "-o '%s': exists and is not a directory", o.outdir);
            goto fail;
        } else if (access(o.outdir, W_OK | X_OK) != 0) {
            rc = gq_err_set(&err, GQ_E_IO, "-o '%s': directory is not writable", o.outdir);
            goto fail;
        }
    } else if (access(".", W_OK | X_OK) != 0) {
        rc = gq_err_set(&err, GQ_E_IO, "the current directory is not writable; choose one with -o DIR");
        goto fail;
    }

    if ((rc = gq_cli_open(&o.c, &be, topo, &err)))
        goto fail;
    opened = true;
    if ((rc = gq_cli_check_buffer(&be, &o.c, "--buffer-size", o.bytes, &err)))
        goto fail;

    gq_card_opts_default(co);
    co->budget_s = o.budget_s;
    co->stress_s = o.no_stress ? 0 : o.stress_s;
    co->prefill = o.prefill;
    co->decode = o.decode;
    co->offload = o.offload;
    co->bytes = o.bytes;
    co->verify = o.verify;
    co->ngpus = o.c.ngpus_sel;
    memcpy(co->gpus, o.c.gpus_sel, sizeof co->gpus);
    if ((o.prefill > 0) != (o.decode > 0)) {
        rc = gq_err_set(&err, GQ_E_USAGE, "--prefill and --decode go together (e.g. --prefill 4 --decode 4)");
        goto fail;
    }
    if (o.prefill + o.decode > co->ngpus) {
        rc = gq_err_set(&err, GQ_E_USAGE, "--prefill %d --decode %d needs %d GPUs; %d %s selected", o.prefill,
                        o.decode, o.prefill + o.decode, co->ngpus, co->ngpus == 1 ? "is" : "are");
        goto fail;
    }
    if (o.offload > co->ngpus) {
        rc = gq_err_set(&err, GQ_E_USAGE, "--offload %d needs %d GPUs; %d %s selected", o.offload, o.offload,
                        co->ngpus, co->ngpus == 1 ? "is" : "are");
        goto fail;
    }
    if ((rc = gq_card_plan_make(topo, co, plan, &err)))
        goto fail;

    /* Expectations that match no GPU: a warning, not an error. */
    if (o.expect)
        for (int m = 0; m < ex->nmodels; m++) {
            bool hit = false;
            for (int k = 0; k < co->ngpus; k++)
                hit |= gq_expect_match(ex, topo->gpu[co->gpus[k]].name) == m;
            if (!hit)
                gq_cli_warn("%s: the expectations for '%s' match no GPU here; they are not applied", o.expect,
                            ex->models[m].match);
        }

    if (o.outdir)
        snprintf(dir, sizeof dir, "%s", o.outdir);
    else {
        char ts[32];
        time_t now = time(NULL);
        struct tm tmv;
        localtime_r(&now, &tmv);
        strftime(ts, sizeof ts, "%Y%m%d-%H%M%S", &tmv);
        snprintf(dir, sizeof dir, "gpuqual-card-%s-%s", topo->hostname[0] ? topo->hostname : "host", ts);
    }
    if ((rc = prepare_dir(dir, &created, &err)))
        goto fail;
    char jpath[1200];
    snprintf(jpath, sizeof jpath, "%s/journal.jsonl", dir);
    if ((rc = gq_journal_open(&jr, o.c.journal ? o.c.journal : jpath, &err)))
        goto fail;
    have_journal = true;

    gq_progress_init(&P.bar, !o.c.quiet, (long)(plan->est_total_s * 10) + 1);
    measured = true;
    int xrc = gq_card_execute(&be, topo, co, plan, &jr, on_progress, &P, &res, &err);
    gq_progress_clear(&P.bar);
    if (xrc && xrc != GQ_E_INTR) {
        rc = xrc;
        goto fail;
    }
    bool complete = xrc == GQ_OK;

    gq_card_inputs in = {.topo = topo,
                         .rs = &res.rs,
                         .stress = res.stress_json,
                         .placement = res.placement_json,
                         .expect = o.expect ? ex : NULL,
                         .plan = plan,
                         .opts = co,
                         .elapsed_s = res.elapsed_s,
                         .complete = complete,
                         .stopped_at = complete ? NULL : gq_card_step_name(res.stopped_at),
                         .bytes = co->bytes};
    if (!(composed = gq_card_compose(&in, &err))) {
        rc = err.code ? err.code : GQ_E_NOMEM;
        goto fail;
    }
    if (res.stress_json)
        json_object_set(composed, "stress", res.stress_json);
    options = gq_opts_to_json(tabs, NTABS, &o);
    gq_doc d = {.kind = "card",
                .version = gq_version,
                .git = gq_git_rev,
                .options = options,
                .topo = topo,
                .records = &res.rs,
                .sections = composed,
                .simulated = gq_backend_simulated(&be),
                .incomplete = !complete};
    if (!(doc = gq_doc_to_json(&d))) {
        rc = gq_err_set(&err, GQ_E_NOMEM, "out of memory building card.json");
        goto fail;
    }
    char path[1200];
    snprintf(path, sizeof path, "%s/card.json", dir);
    if ((rc = gq_json_write_file(doc, path, &err)))
        goto fail;
    if ((rc = write_text(dir, "card.md", doc, gq_card_render_markdown, &err)) ||
        (rc = write_text(dir, "card.html", doc, gq_card_render_html, &err)))
        goto fail;
    nvb = gq_render_nvbandwidth_json(topo, &res.rs, gq_version);
    snprintf(path, sizeof path, "%s/nvbandwidth.json", dir);
    if (nvb && (rc = gq_json_write_file(nvb, path, &err)))
        goto fail;
    if (res.have_stress) {
        snprintf(path, sizeof path, "%s/stress.csv", dir);
        gq_outfile of;
        if ((rc = gq_outfile_open(&of, path, &err)))
            goto fail;
        gq_stress_write_csv(of.f, &res.stress);
        if ((rc = gq_outfile_commit(&of, &err)))
            goto fail;
    }
    /* The copy named by --json comes last: a failure to write it (a full
     * disk) leaves the directory's card whole, and says so. */
    if (o.c.json_path && (rc = gq_json_write_file(doc, o.c.json_path, &err))) {
        gq_cli_error("--json: %s; the card itself is complete in %s/", err.msg, dir);
        exit_code = GQ_EXIT_USAGE;
        goto out;
    }
    const json_t *card = json_object_get(doc, "card");
    if (!strcmp(o.c.format, "json")) {
        json_dumpf(doc, stdout, JSON_INDENT(2));
        fputc('\n', stdout);
    } else if (!strcmp(o.c.format, "markdown")) {
        gq_card_render_markdown(stdout, doc, &err);
    } else {
        gq_card_render_summary(stdout, doc, 0, &err);
        printf("artefacts: %s/ (card.html, card.md, card.json, nvbandwidth.json%s, journal.jsonl)\n", dir,
               res.have_stress ? ", stress.csv" : "");
    }
    fflush(stdout);
    if (!complete)
        gq_cli_warn("interrupted during %s: the card in %s/ holds what was measured and is marked incomplete",
                    gq_card_step_name(res.stopped_at), dir);
    exit_code = gq_card_exit_code(card);
    goto out;

fail:
    if (rc == GQ_E_INTR) {
        gq_cli_error("%s", err.msg);
        exit_code = GQ_EXIT_INCOMPLETE;
    } else {
        gq_cli_error("%s", err.msg[0] ? err.msg : "card failed");
        exit_code = gq_status_exit_code(rc);
    }
    /* Refused before anything was measured: leave nothing behind. */
    if (!measured && created && dir[0]) {
        if (have_journal) {
            gq_journal_close(&jr);
            have_journal = false;
            char jp[1200];
            snprintf(jp, sizeof jp, "%s/journal.jsonl", dir);
            unlink(jp);
        }
        rmdir(dir);
    }
out:
    if (have_journal)
        gq_journal_close(&jr);
    gq_card_result_free(&res);
    json_decref(options);
    json_decref(composed);
    json_decref(doc);
    json_decref(nvb);
    if (opened)
        gq_backend_close(&be);
    free(topo);
    free(ex);
    free(plan);
    free(co);
    return exit_code;
}
