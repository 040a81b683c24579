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

#include "core/infile.h"
#include "analysis/card.h"
#include "exec/card_run.h"
#include "analysis/expect.h"
#include "analysis/stress.h"
#include "cli/commands.h"
#include "cli/card_opts.h"
#include "cli/common.h"
#include "cli/frame.h"
#include "cli/textfiles.h"
#include "cli/options.h"
#include "cli/progress.h"
#include "core/interrupt.h"
#include "cli/carddir.h"
#include "cli/outputs.h"
#include "core/runid.h"
#include "measure/journal.h"
#include "core/units.h"
#include "doc/card_codec.h"
#include "doc/saved_doc.h"
#include "render/card_render.h"
#include "render/render.h"
#include "render/analysis_render.h"

/* The card's options, then what a run keeps for fail() and done(). */
typedef struct card_cli {
    GQ_CARD_CLI_FIELDS
    const char *json_copy; /* --json FILE: written last, by run() */
    gq_expect *ex;
    gq_card_plan *plan;
    gq_card_opts *co;
    gq_card_result res;
    char dir[1024];       /* where the card is written: DIR.partial-RUNID/ until it is complete */
    char final_dir[1024]; /* -o DIR (or the default name) */
    char run_id[32];
    bool force;
    const char *resume;        /* --resume DIR */
    bool other_revision;       /* --resume-other-revision */
    char resume_partial[1024]; /* the interrupted card's DIR.partial-RUNID/ */
    gq_recordset done;         /* its finished measurements, re-used */
    int *done_item;
    bool created, measured, have_journal;
    gq_journal jr;
} card_cli;
_Static_assert(offsetof(card_cli, offload) == offsetof(gq_card_cli, offload),
               "card_cli begins with GQ_CARD_CLI_FIELDS");

#define OFF(f) offsetof(card_cli, f)
/* clang-format off */
static const gq_opt card_own_opts[] = {
    {.name = "resume",
     .type = GQ_OPT_STR,
     .off = OFF(resume),
     .arg = "DIR",
     .help = "continue the interrupted card of DIR (DIR.partial-RUNID/): re-use every finished measurement "
             "(latency included) and a completed stress run, measure the rest (a stress run cut off part-way "
             "runs again whole; its journal at most " GQ_INFILE_DOC_MAX_TEXT ")"},
    {.name = "resume-other-revision",
     .type = GQ_OPT_FLAG,
     .off = OFF(other_revision),
     .help = "with --resume: continue a card whose journal another gpuqual version or git revision wrote "
             "(refused without it)"},
    {.name = "force",
     .type = GQ_OPT_FLAG,
     .off = OFF(force),
     .help = "replace the card already in -o DIR (only once the new one is complete)"},
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

static const gq_opt *const tabs[] = {gq_common_output_opts,  gq_common_backend_opts, gq_card_cli_opts,
                                     gq_common_measure_opts, card_own_opts,          gq_common_prom_opt,
                                     gq_common_junit_opt};
#define NTABS ((int)(sizeof tabs / sizeof tabs[0]))

/* Directory: created here when missing (its parent must exist); an existing
 * one must be a writable directory. *created says whether to remove it when
 * the run is refused before anything was measured. */
typedef struct prog {
    gq_progress bar;
} prog;

static void on_progress(void *arg, const gq_card_progress *p)
{
    prog *P = arg;
    /* the bar shows the time left (from the same estimates) */
    gq_progress_step(&P->bar, "step %d/%d %s", p->step_index, p->nsteps, p->title);
    gq_progress_update(&P->bar, gq_progress_tenths(p->done_s));
}

static int card_prepare(gq_ctx *ctx)
{
    card_cli *o = ctx->opts;
    gq_err *err = &ctx->err;
    int rc;
    if (ctx->npos > 0)
        return gq_err_set(err, GQ_E_USAGE,
                          "card: unexpected argument '%s'; the output directory is given with -o DIR",
                          ctx->pos[0]);
    o->ex = calloc(1, sizeof *o->ex);
    o->plan = calloc(1, sizeof *o->plan);
    o->co = calloc(1, sizeof *o->co);
    if (!o->ex || !o->plan || !o->co)
        return gq_err_set(err, GQ_E_NOMEM, "out of memory");
    if ((rc = gq_card_cli_expect(o->expect, &o->set, o->ex, &o->have_ex, err)))
        return rc;
    if ((rc = gq_outfile_check(ctx->json_path, err)))
        return rc;
    /* The card writes its --json copy itself, last (run()). */
    o->json_copy = ctx->json_path;
    ctx->json_path = NULL;
    if (o->resume) {
        if (o->outdir || o->c.journal)
            return gq_err_set(
                err, GQ_E_USAGE,
                "--resume DIR continues the card in DIR and its journal; leave out -o and --journal");
        if ((rc = gq_carddir_find_partial(o->resume, o->final_dir, o->resume_partial, sizeof o->final_dir,
                                          o->run_id, err)))
            return rc;
        o->outdir = o->final_dir; /* the card it continues may replace the one in DIR */
        o->force = true;
    }
    if ((rc = gq_carddir_check_outdir(o->outdir, err)))
        return rc;
    return o->outdir ? gq_carddir_check(o->outdir, o->force, err) : GQ_OK;
}

/* The card's options for the machine found, and its plan. */
static int card_plan(gq_ctx *ctx)
{
    card_cli *o = ctx->opts;
    gq_card_opts *co = o->co;
    gq_err *err = &ctx->err;
    int rc;
    if ((rc = gq_cli_check_buffer(&ctx->be, &o->c, "--buffer-size", o->c.buffer_size, err)))
        return rc;
    if ((rc = gq_card_cli_plan((const gq_card_cli *)o, &o->c, ctx->topo, co, o->plan, err)))
        return rc;
    /* Expectations that match no GPU: a warning, not an error. */
    if (o->have_ex)
        for (int m = 0; m < o->ex->nmodels; m++) {
            bool hit = false;
            for (int k = 0; k < co->ngpus; k++)
                hit |= gq_expect_match(o->ex, ctx->topo->gpu[co->gpus[k]].name) == m;
            if (!hit)
                gq_cli_warn("%s: the expectations for '%s' match no GPU here; they are not applied",
                            o->expect ? o->expect : "--set", o->ex->models[m].match);
        }
    return GQ_OK;
}

/* The artefact directory (-o DIR or a new ./gpuqual-card-<host>-<time>) and
 * its journal (or --journal FILE). */
static int card_open_dir(gq_ctx *ctx)
{
    card_cli *o = ctx->opts;
    int rc;
    if (o->outdir)
        snprintf(o->dir, sizeof o->dir, "%s", o->outdir);
    else {
        char ts[32];
        time_t now = time(NULL);
        struct tm tmv;
        localtime_r(&now, &tmv);
        strftime(ts, sizeof ts, "%Y%m%d-%H%M%S", &tmv);
        snprintf(o->dir, sizeof o->dir, "gpuqual-card-%s-%s",
                 ctx->topo->hostname[0] ? ctx->topo->hostname : "host", ts);
    }
    snprintf(o->final_dir, sizeof o->final_dir, "%s", o->dir);
    if (o->resume) {
        snprintf(o->dir, sizeof o->dir, "%s", o->resume_partial);
    } else {
        snprintf(o->run_id, sizeof o->run_id, "%s", gq_run_id_current());
        /* the card is written beside DIR and swapped in once complete */
        if ((rc = gq_carddir_check(o->final_dir, o->force, &ctx->err)) ||
            (rc = gq_carddir_begin(o->final_dir, o->run_id, o->dir, sizeof o->dir, &ctx->err)))
            return rc;
        o->created = true;
    }
    char jpath[1200];
    snprintf(jpath, sizeof jpath, "%s/journal.jsonl", o->dir);
    json_t *jo = gq_cli_journal_options(&o->c), *own = gq_optset_to_json(&ctx->cmd->opts, o);
    /* the card's own options shape its plan; where it writes does not */
    static const char *const not_shape[] = {"resume",     "resume-other-revision",
                                            "force",      "output",
                                            "json",       "journal",
                                            "format",     "quiet",
                                            "prom",       "junit",
                                            "junit-warn", NULL};
    for (int i = 0; not_shape[i]; i++)
        json_object_del(own, not_shape[i]);
    char faults[512]; /* nor does a simulated Ctrl-C: --resume needs no interrupt@N again */
    const char *kept = gq_cli_sim_fault_identity(o->c.sim_fault, faults, sizeof faults);
    gq_saved_replace(own, "sim-fault", kept ? json_string(kept) : json_null());
    json_object_set_new(jo, "card", own);
    gq_journal_id id;
    gq_cli_journal_id(&id, "card", &o->c, ctx->topo, jo);
    id.run_id = o->run_id;
    id.layout = GQ_CARD_JOURNAL_LAYOUT;
    id.other_revision = o->other_revision;
    if (o->resume) {
        rc = gq_journal_resume(&o->jr, jpath, &id, &o->done, &o->done_item, &ctx->err);
        o->jr.reuse_rs = &o->done;
        o->jr.reuse_item = o->done_item;
    } else {
        rc = gq_journal_open(&o->jr, o->c.journal ? o->c.journal : jpath, &id, &ctx->err);
    }
    json_decref(jo);
    if (rc)
        return rc;
    o->have_journal = true;
    return GQ_OK;
}

/* The card's document and its artefacts in the directory. */
static int card_write(gq_ctx *ctx, bool complete)
{
    card_cli *o = ctx->opts;
    gq_card_cli_run run = {.topo = ctx->topo,
                           .res = &o->res,
                           .expect = o->have_ex ? o->ex : NULL,
                           .plan = o->plan,
                           .co = o->co,
                           .complete = complete,
                           .simulated = gq_backend_simulated(&ctx->be)};
    json_t *options = gq_optset_to_json(&ctx->cmd->opts, o);
    int rc = gq_card_cli_document(&run, options, &ctx->doc, &ctx->err);
    json_decref(options);
    return rc ? rc : gq_card_cli_write(o->dir, ctx->doc, &run, &ctx->err);
}

/* The summary (or the card as markdown or JSON) on stdout; GQ_E_NOMEM (with
 * ctx->err) when it could not be rendered. */
static int card_print(gq_ctx *ctx, bool complete)
{
    card_cli *o = ctx->opts;
    int rc = GQ_OK;
    if (!strcmp(ctx->format, "json")) {
        json_dumpf(ctx->doc, stdout, JSON_INDENT(2));
        fputc('\n', stdout);
    } else if (!strcmp(ctx->format, "markdown")) {
        gq_card_doc *cd = NULL;
        if (!(rc = gq_card_doc_from_json(ctx->doc, &cd, &ctx->err)))
            rc = gq_card_render_markdown(stdout, cd, &ctx->err);
        gq_card_doc_free(cd);
    } else {
        gq_card_doc *cd = NULL;
        if (!(rc = gq_card_doc_from_json(ctx->doc, &cd, &ctx->err)))
            rc = gq_card_render_summary(stdout, cd, gq_frame_help_width(), &ctx->err);
        gq_card_doc_free(cd);
        /* the journal is in DIR unless --journal put it elsewhere */
        if (o->c.journal)
            printf("artefacts: %s/ (card.html, card.md, card.json, nvbandwidth.json%s); journal: %s\n",
                   o->dir, o->res.have_stress ? ", stress.csv" : "", o->c.journal);
        else
            printf("artefacts: %s/ (card.html, card.md, card.json, nvbandwidth.json%s, journal.jsonl)\n",
                   o->dir, o->res.have_stress ? ", stress.csv" : "");
    }
    fflush(stdout);
    if (rc == GQ_E_NOMEM)
        return rc;
    if (!complete)
        gq_cli_warn("interrupted during %s: the card in %s/ holds what was measured and is marked incomplete",
                    gq_card_step_name(o->res.stopped_at), o->dir);
    return GQ_OK;
}

/* GQ_TRACE=1: each measurement's phases, and the window log of any round
 * that failed the overlap rule, on stderr (as `run` prints them). */
static void on_trace(void *arg, const char *test, const char *phase, double seconds, const char *note)
{
    prog *P = arg;
    gq_progress_clear(&P->bar);
    fprintf(stderr, "trace: %8.3f s  %-46s %-9s %s\n", seconds, test, phase, note ? note : "");
}

static int card_run(gq_ctx *ctx)
{
    card_cli *o = ctx->opts;
    int rc;
    if ((rc = card_plan(ctx)) || (rc = card_open_dir(ctx)))
        return rc;
    prog P;
    memset(&P, 0, sizeof P);
    gq_progress_init(&P.bar, !ctx->quiet, gq_progress_tenths(o->plan->est_total_s));
    o->measured = true;
    const char *tr = getenv("GQ_TRACE");
    if (tr && *tr && strcmp(tr, "0") != 0) {
        o->co->trace = on_trace;
        o->co->trace_arg = &P;
    }
    o->co->expect = o->have_ex ? o->ex : NULL;
    rc = gq_card_execute(&ctx->be, ctx->topo, o->co, o->plan, &o->jr, on_progress, &P, &o->res, &ctx->err);
    gq_progress_clear(&P.bar);
    if (rc && rc != GQ_E_INTR)
        return rc;
    if (o->resume) {
        const gq_card_step *st = &o->plan->step[GQ_CS_STRESS];
        gq_cli_warn("--resume: %s%d measurement%s re-used from %s/, %d measured now%s%s",
                    o->jr.tail_cut ? "the journal's last line was unfinished (cut off mid-write) and was "
                                     "dropped; "
                                   : "",
                    o->res.reused, o->res.reused == 1 ? "" : "s", o->resume_partial, o->res.measured,
                    o->res.stress_reused        ? "; the completed stress run re-used"
                    : st->status == GQ_CSS_DONE ? "; the stress run measured whole"
                                                : "",
                    o->res.coll_reused ? "; the collectives step's figures re-used" : "");
    }
    bool complete = rc == GQ_OK;
    if ((rc = card_write(ctx, complete)))
        return rc;
    if (complete) { /* the whole card replaces the earlier one at once */
        if (o->have_journal) {
            gq_journal_close(&o->jr);
            o->have_journal = false;
        }
        if ((rc = gq_carddir_commit(o->final_dir, o->dir, o->run_id, &ctx->err)))
            return rc;
        snprintf(o->dir, sizeof o->dir, "%s", o->final_dir);
    }
    /* The copy named by --json comes last: a failure to write it (a full
     * disk) leaves the directory's card whole, and says so. */
    if (o->json_copy && (rc = gq_doc_write_file(ctx->doc, o->json_copy, &ctx->err))) {
        gq_cli_error("--json: %s; the card itself is complete in %s/", ctx->err.msg, o->dir);
        ctx->exit_code = GQ_EXIT_USAGE;
        return GQ_OK;
    }
    json_t *docs[1] = {ctx->doc};
    if ((rc = gq_cli_card_files(o->c.prom_path, o->c.junit_path, "card", docs, NULL, NULL, 1, ctx->topo,
                                o->c.junit_warn, &ctx->err))) {
        gq_cli_error("%s; the card itself is complete in %s/", ctx->err.msg, o->dir);
        ctx->exit_code = GQ_EXIT_USAGE;
        return GQ_OK;
    }
    if (card_print(ctx, complete) == GQ_E_NOMEM) {
        gq_cli_error("%s; the card itself is %s in %s/", ctx->err.msg, complete ? "complete" : "written",
                     o->dir);
        ctx->exit_code = gq_status_exit_code(GQ_E_NOMEM);
        return GQ_OK;
    }
    /* A busy GPU is in the card's verdict (INCOMPLETE, or allowed): the
     * frame does not turn the exit into 6. */
    ctx->busy_judged = true;
    gq_saved_sections sec;
    gq_saved_sections_read(ctx->doc, &sec);
    /* >= 0: gq_card_cli_document refuses a card without a verdict */
    ctx->exit_code = gq_card_exit_code(sec.card);
    return GQ_OK;
}

static void card_fail(gq_ctx *ctx, int rc)
{
    card_cli *o = ctx->opts;
    if (rc == GQ_E_INTR) {
        gq_cli_error("%s", ctx->err.msg);
        ctx->exit_code = GQ_EXIT_INCOMPLETE;
    } else {
        gq_cli_error("%s", ctx->err.msg[0] ? ctx->err.msg : "card failed");
    }
    /* Refused before anything was measured: leave nothing behind. */
    if (!o->measured && o->created && o->dir[0]) {
        if (o->have_journal) {
            gq_journal_close(&o->jr);
            o->have_journal = false;
        }
        gq_carddir_discard(o->dir);
    }
}

static void card_done(gq_ctx *ctx)
{
    card_cli *o = ctx->opts;
    if (o->have_journal)
        gq_journal_close(&o->jr);
    gq_card_result_free(&o->res);
    gq_records_free(&o->done);
    free(o->done_item);
    free(o->ex);
    free(o->plan);
    free(o->co);
}

static const gq_exit_doc card_exits[] = {
    {0, "the verdict is pass"},
    {1, "the verdict is fail"},
    GQ_EXITDOC_USAGE,
    GQ_EXITDOC_NODEV,
    {4, "the verdict is warn"},
    {5, "incomplete: interrupted, a step cut by the budget, or other work on a GPU without --allow-busy (the "
        "card shows what was measured)"},
    {6, "busy: another gpuqual holds a GPU (after --wait-busy)"},
    GQ_EXITDOC_END,
};

const gq_frame_cmd gq_frame_card = {
    .name = "card",
    .summary = "the acceptance card: qualify the whole node in one run",
    .usage =
        "usage: gpuqual card [--level quick|standard|full] [--budget TIME] [--expect FILE] [-o DIR]\n"
        "                    [--stress TIME | --no-stress] [--no-placement] [--prefill N --decode M]\n"
        "                    [--gpus LIST] [--sim NAME] [options]\n\n"
        "The acceptance card, planned to fit --budget (default: the level's). Levels:\n"
        "  quick     identity and links, each GPU's host paths alone, the pairwise P2P read matrix where\n"
        "            P2P exists, a 30 s stress; budget 1m (a scheduler's prolog)\n"
        "  standard  quick's steps plus concurrent host and GPU traffic (shared budgets, domains), both "
        "host\n"
        "            directions at once, buffer sweeps on the fastest and slowest path, latency, a verified\n"
        "            placement, the TP-2 groups' all-reduce (NCCL; 2 GPUs or more), a 60 s stress; budget\n"
        "            5m (the default)\n"
        "  full      standard plus the write direction of the matrix, sweeps on every distinct P2P and host\n"
        "            path (one per kind of link, within and across measured domains),\n"
        "            a 5-minute stress; budget 15m\n"
        "Quality (rounds, round length, sweep points) is lowered to fit; a step of the level that still "
        "does\n"
        "not fit makes the card INCOMPLETE. A step turned off (--no-stress, --no-placement) is not run, and\n"
        "the verdict names it (\"PASS without stress\"). No check passes on evidence that was not "
        "measured.\n\n"
        "Writes DIR/card.json, card.md, card.html, nvbandwidth.json, stress.csv and journal.jsonl, and a\n"
        "one-screen summary on stdout (--format markdown or json prints the card instead). DIR is\n"
        "written as a set: the card goes to DIR.partial-RUNID/ and replaces DIR only once complete\n"
        "(an earlier card only with --force); an interrupted card stays there for --resume DIR, which\n"
        "re-uses every finished measurement and a completed stress run (one cut off part-way runs again\n"
        "whole: a partial stress is no evidence for the full duration) and measures the rest.\n"
        "Details: docs/card.md.\n\n",
    .opts = {.name = "card",
             .formats = "table,json,markdown",
             .tabs = tabs,
             .ntab = NTABS,
             .defaults = gq_card_defaults,
             .bounds = gq_card_bounds,
             .omit = GQ_CARD_OMIT},
    .opts_size = sizeof(card_cli),
    .exits = card_exits,
    .examples = "  gpuqual card -o card\n"
                "  gpuqual card --level quick --sim rtx4090x8 -o /tmp/card\n"
                "  gpuqual card --expect /usr/share/gpuqual/expect/h200.expect -o card --junit card.xml\n"
                "  gpuqual card --resume card\n",
    .maxpos = 2,
    .needs = GQ_FRAME_BACKEND | GQ_FRAME_MEASURES,
    .prepare = card_prepare,
    .run = card_run,
    .fail = card_fail,
    .done = card_done,
};
