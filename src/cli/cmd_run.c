/* gpuqual run: transfer tests by name (the catalog, measure/catalog.h), timed
 * by the harness, journalled as they finish, rendered at the end.
 *
 * Exit codes: 0 every figure valid or flagged only for overlap, spread,
 * NUMA placement; 1 any figure failed (error, verify_failed, impossible);
 * 2 bad input (nothing runs); 3 no GPU; 5 nothing measured (every requested test
 * was skipped); 130 interrupted (what finished is
 * written, marked incomplete, and the journal is kept).
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/infile.h"
#include "cli/commands.h"
#include "cli/common.h"
#include "cli/frame.h"
#include "cli/outputs.h"
#include "cli/progress.h"
#include "cli/textfiles.h"
#include "exec/plan_run.h"
#include "measure/catalog.h"
#include "measure/harness.h"
#include "measure/journal.h"
#include "core/units.h"
#include "render/render.h"

#define MAX_TESTS 128
#define MAX_POS 64

typedef struct run_opts {
    gq_common c; /* rounds, buffer_size, verify from the shared tables */
    gq_optlist tests;
    gq_optlist prefixes;
    bool list;
    int copies;
    double duration;
    double round_time;
    const char *spread;
    const char *host_numa;
    const char *resume;  /* --resume JOURNAL */
    bool other_revision; /* --resume-other-revision */
    /* checked by run_prepare */
    const gq_test *sel[MAX_TESTS];
    int nsel;
    double spread_frac;
    int host_numa_node;
    bool tracing;
    double t_cmd; /* when prepare ended (GQ_TRACE's "open" and "total") */
} run_opts;

#define OFF(f) offsetof(run_opts, f)

/* clang-format off */
static const gq_opt run_tab[] = {
    {.name = "test",
     .shortname = 't',
     .type = GQ_OPT_LIST,
     .off = OFF(tests),
     .arg = "NAME[,NAME...]",
     .help = "tests to run, by name, separated by commas (default: every test); --list shows them"},
    {.name = "prefix",
     .shortname = 'p',
     .type = GQ_OPT_LIST,
     .off = OFF(prefixes),
     .arg = "PREFIX",
     .help = "run every test whose name starts with one of these prefixes, separated by commas"},
    {.name = "list",
     .type = GQ_OPT_FLAG,
     .off = OFF(list),
     .help = "list every test with one line, then exit"},
    {.name = "copies",
     .shortname = 'l',
     .type = GQ_OPT_INT,
     .off = OFF(copies),
     .def = "0",
     .arg = "N",
     .help = "copies per flow per round (nvbandwidth's loop count); 0 = enough for ~0.1 s",
     .lo = 0,
     .hi = 10000000},
    {.name = "duration",
     .type = GQ_OPT_DURATION,
     .off = OFF(duration),
     .arg = "TIME",
     .help = "copy for this long per round (e.g. 3s) instead of a count"},
    {.name = "round-time",
     .type = GQ_OPT_DURATION,
     .off = OFF(round_time),
     .arg = "TIME",
     .help = "auto mode (no --copies, no --duration): about this long per round, 10ms to 10s (default 0.1s)"},
    {.name = "spread-target",
     .type = GQ_OPT_STR,
     .off = OFF(spread),
     .arg = "PCT",
     .help = "stop a measurement early once every spread is at most this (e.g. 0.5%), after 3 rounds"},
    {.name = "resume",
     .type = GQ_OPT_STR,
     .off = OFF(resume),
     .arg = "JOURNAL",
     .help = "continue the run of this journal (at most " GQ_INFILE_DOC_MAX_TEXT "): re-use every finished measurement, measure "
             "the rest, append to it"},
    {.name = "resume-other-revision",
     .type = GQ_OPT_FLAG,
     .off = OFF(other_revision),
     .help = "with --resume: continue a journal written by another gpuqual version or git revision (refused "
             "without it)"},
    {.name = "host-numa",
     .type = GQ_OPT_STR,
     .off = OFF(host_numa),
     .def = "local",
     .arg = "N|local|all",
     .help = "NUMA node of the pinned host buffers; all = every node in turn (GPU x node matrix)"},
    GQ_OPT_END,
};
/* clang-format on */
#undef OFF

static const gq_opt *const tabs[] = {run_tab,
                                     gq_common_rounds_opt,
                                     gq_common_buffer_size_opt,
                                     gq_common_verify_opt,
                                     gq_common_output_opts,
                                     gq_common_backend_opts,
                                     gq_common_prom_opt};

static void list_tests(FILE *f)
{
    int n;
    const gq_test *c = gq_catalog(&n);
    for (int i = 0; i < n; i++)
        fprintf(f, "%-48s %s\n", c[i].name, c[i].description);
}

/* "0.5%" -> 0.005, "0.005" -> 0.005 */
static int parse_spread(const char *s, double *out, gq_err *err)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%s", s);
    size_t l = strlen(buf);
    bool pct = l > 0 && buf[l - 1] == '%';
    if (pct)
        buf[l - 1] = 0;
    double v;
    gq_err e;
    if (gq_parse_double(buf, &v, &e) || !(v > 0) || (pct ? v >= 100 : v >= 1))
        return gq_err_set(
            err, GQ_E_USAGE,
            "--spread-target '%s': expected a percentage like 0.5%% or a fraction like 0.005 (> 0)", s);
    *out = pct ? v / 100.0 : v;
    return GQ_OK;
}

static int parse_host_numa(const char *s, int *out, gq_err *err)
{
    if (!strcmp(s, "local")) {
        *out = GQ_NUMA_LOCAL;
        return GQ_OK;
    }
    if (!strcmp(s, "all")) {
        *out = GQ_HOST_NUMA_ALL;
        return GQ_OK;
    }
    long v;
    gq_err e;
    if (gq_parse_int(s, 0, GQ_MAX_NUMA - 1, &v, &e))
        return gq_err_set(err, GQ_E_USAGE,
                          "--host-numa '%s': expected a NUMA node number (0-%d), local or all", s,
                          GQ_MAX_NUMA - 1);
    *out = (int)v;
    return GQ_OK;
}

typedef struct progress_ctx {
    gq_progress *bar;
    long base;
    int item, nitems;
    int rounds;
    bool quiet;
    bool journal_auto;
    bool journal_gone;
    char *journal_error; /* a named journal's failure, reported at the end */
} progress_ctx;

static void on_round(void *arg, const char *test, int round, int rounds)
{
    progress_ctx *p = arg;
    gq_progress_step(p->bar, "%s (%d/%d) round %d/%d", test, p->item, p->nitems, round, rounds);
    gq_progress_update(p->bar, p->base + round);
}

static void before_item(void *arg, const gq_exec_step *s)
{
    progress_ctx *p = arg;
    p->base = (long)(s->done - 1) * p->rounds;
    p->item = s->done;
    p->nitems = s->total;
    gq_progress_step(p->bar, "%s (%d/%d)", s->plan->test, p->item, p->nitems);
}

static gq_exec_next after_item(void *arg, gq_exec_step *s, int rc, const gq_err *e)
{
    progress_ctx *p = arg;
    gq_progress_update(p->bar, (long)s->done * p->rounds);
    if (rc == GQ_E_INTR)
        return GQ_EXEC_NEXT;
    if (rc == GQ_E_IO && !p->journal_gone) {
        gq_progress_clear(p->bar);
        /* a journal the user named and did not get fails the run at the end,
         * in one line (the measurements go on and are written); the
         * automatic one only warns */
        if (!p->journal_auto)
            snprintf(p->journal_error, sizeof((gq_err *)0)->msg, "%s", e->msg);
        else
            gq_cli_warn("%s; continuing without the journal", e->msg);
        p->journal_gone = true;
    } else if (rc == GQ_E_NOMEM) {
        return GQ_EXEC_ABORT;
    } else if (rc != GQ_OK && !p->quiet) {
        gq_progress_clear(p->bar);
        gq_cli_warn("%s", e->msg);
    }
    return GQ_EXEC_NEXT;
}

/* GQ_TRACE=1: per-phase wall times on stderr (where the time of a run goes). */
static bool trace_on(void)
{
    const char *v = getenv("GQ_TRACE");
    return v && *v && strcmp(v, "0") != 0;
}

static void trace_line(const char *test, const char *phase, double s, const char *note)
{
    fprintf(stderr, "trace: %8.3f s  %-46s %-9s %s\n", s, test, phase, note ? note : "");
}

/* VmRSS and VmHWM (peak) of this process in MiB, from /proc/self/status;
 * -1 where unknown. */
static void rss_mib(long *rss, long *hwm)
{
    *rss = *hwm = -1;
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return;
    char line[128];
    while (fgets(line, sizeof line, f)) {
        long kib;
        if (sscanf(line, "VmRSS: %ld", &kib) == 1)
            *rss = kib / 1024;
        else if (sscanf(line, "VmHWM: %ld", &kib) == 1)
            *hwm = kib / 1024;
    }
    fclose(f);
}

static void on_trace(void *arg, const char *test, const char *phase, double seconds, const char *note)
{
    progress_ctx *p = arg;
    gq_progress_clear(p->bar);
    if (!strcmp(phase, "release") || !strcmp(phase, "latency")) {
        long rss, hwm;
        char buf[160];
        rss_mib(&rss, &hwm);
        snprintf(buf, sizeof buf, "%s%srss %ld MiB, peak %ld MiB", note, note[0] ? "; " : "", rss, hwm);
        trace_line(test, phase, seconds, buf);
        return;
    }
    trace_line(test, phase, seconds, note);
}

static json_t *options_json(const run_opts *o, const gq_test *const *sel, int nsel, double spread,
                            const gq_common *c, const char *journal)
{
    json_t *j = json_object();
    json_t *t = json_array();
    for (int i = 0; i < nsel; i++)
        json_array_append_new(t, json_string(sel[i]->name));
    json_object_set_new(j, "tests", t);
    json_object_set_new(j, "buffer_bytes", json_integer((json_int_t)o->c.buffer_size));
    json_object_set_new(j, "rounds", json_integer(o->c.rounds));
    json_object_set_new(j, "copies", o->copies > 0 ? json_integer(o->copies) : json_string("auto"));
    json_object_set_new(j, "duration_s", o->duration > 0 ? json_real(o->duration) : json_null());
    json_object_set_new(j, "round_target_s",
                        json_real(o->round_time > 0 ? o->round_time : GQ_HARNESS_ROUND_S));
    json_object_set_new(j, "spread_target", spread > 0 ? json_real(spread) : json_null());
    json_object_set_new(j, "verify", json_boolean(o->c.verify));
    json_object_set_new(j, "host_numa", json_string(o->host_numa));
    json_t *g = json_array();
    for (int i = 0; i < c->ngpus_sel; i++)
        json_array_append_new(g, json_integer(c->gpus_sel[i]));
    json_object_set_new(j, "gpus", g);
    json_object_set_new(j, "format", json_string(c->format));
    json_object_set_new(j, "json", c->json_path ? json_string(c->json_path) : json_null());
    json_object_set_new(j, "journal", journal ? json_string(journal) : json_null());
    json_object_set_new(j, "sim", c->sim ? json_string(c->sim) : json_null());
    json_object_set_new(j, "sim_seed", json_integer(c->sim_seed));
    json_object_set_new(j, "sim_noise", json_real(c->sim_noise_given ? c->sim_noise : -1));
    json_object_set_new(j, "sim_fault", c->sim_fault ? json_string(c->sim_fault) : json_null());
    json_object_set_new(j, "overlap_min", json_real(GQ_OVERLAP_MIN));
    return j;
}

static const char *fmt_mem(uint64_t b, char *buf, size_t n)
{
    if (b >= GQ_GiB)
        snprintf(buf, n, "%.1f GiB", (double)b / GQ_GiB);
    else
        snprintf(buf, n, "%.1f MiB", (double)b / GQ_MiB);
    return buf;
}

/* Reject a buffer that cannot fit, before anything runs. */
static int check_memory(gq_backend *be, const gq_topo *topo, const run_opts *o, const gq_plan *plans,
                        int nplans, int host_numa, gq_err *err)
{
    uint64_t gfree[GQ_MAX_GPUS];
    bool gknown[GQ_MAX_GPUS] = {0};
    uint64_t hostavail = 0;
    bool hknown = false;
    char a[32], b[32], c[32];
    if (be->ops->host_mem_avail) {
        gq_err e = {0};
        hknown = be->ops->host_mem_avail(be, host_numa >= 0 ? host_numa : -1, &hostavail, &e) == GQ_OK;
    }
    for (int i = 0; i < o->c.ngpus_sel; i++) {
        int g = o->c.gpus_sel[i];
        uint64_t tot = 0;
        gq_err e = {0};
        if (be->ops->mem_info && be->ops->mem_info(be, g, &gfree[g], &tot, &e) == GQ_OK)
            gknown[g] = true;
    }
    for (int p = 0; p < nplans; p++) {
        uint64_t gmax = 0, hmax = 0;
        int who = -1;
        gq_plan_memory(&plans[p], topo->ngpu, &gmax, &who, &hmax);
        if (who >= 0 && gknown[who] && gmax > gfree[who])
            return gq_err_set(err, GQ_E_USAGE,
                              "--buffer-size %s is too large: %s needs %s on GPU %d, which has %s free",
                              gq_fmt_size(o->c.buffer_size, a, sizeof a), plans[p].test,
                              gq_fmt_size(gmax, b, sizeof b), who, fmt_mem(gfree[who], c, sizeof c));
        if (hknown && hmax > hostavail)
            return gq_err_set(
                err, GQ_E_USAGE,
                "--buffer-size %s is too large: %s needs %s of pinned host memory, %s can be had",
                gq_fmt_size(o->c.buffer_size, a, sizeof a), plans[p].test, gq_fmt_size(hmax, b, sizeof b),
                fmt_mem(hostavail, c, sizeof c));
    }
    return GQ_OK;
}

/* The tests the command line names: -t lists and bare names, joined, and
 * every -p prefix; in catalog order, each once. */
static int select_tests(run_opts *o, const gq_ctx *ctx, gq_err *err)
{
    char names[4096] = "";
    size_t used = 0;
    for (int i = 0; i < o->tests.n && used < sizeof names; i++)
        used +=
            (size_t)snprintf(names + used, sizeof names - used, "%s%s", used ? "," : "", o->tests.item[i]);
    for (int i = 0; i < ctx->npos && used < sizeof names; i++)
        used += (size_t)snprintf(names + used, sizeof names - used, "%s%s", used ? "," : "", ctx->pos[i]);
    int rc = gq_catalog_select(names[0] ? names : NULL, o->prefixes.n ? o->prefixes.item[0] : NULL, o->sel,
                               MAX_TESTS, &o->nsel, err);
    if (rc || o->prefixes.n < 2)
        return rc;
    int ncat;
    const gq_test *cat = gq_catalog(&ncat);
    bool take[MAX_TESTS] = {0};
    for (int i = 0; i < o->nsel; i++)
        take[o->sel[i] - cat] = true;
    for (int k = 1; k < o->prefixes.n; k++) {
        const gq_test *more[MAX_TESTS];
        int nmore;
        if ((rc = gq_catalog_select(NULL, o->prefixes.item[k], more, MAX_TESTS, &nmore, err)))
            return rc;
        for (int i = 0; i < nmore; i++)
            take[more[i] - cat] = true;
    }
    o->nsel = 0;
    for (int i = 0; i < ncat && i < MAX_TESTS; i++)
        if (take[i])
            o->sel[o->nsel++] = &cat[i];
    return GQ_OK;
}

/* Everything the command line alone can tell, before the backend opens. */
static int run_prepare(gq_ctx *ctx)
{
    run_opts *o = ctx->opts;
    gq_err *err = &ctx->err;
    if (o->list) {
        ctx->no_backend = true;
        ctx->json_path = NULL;
        return GQ_OK;
    }
    int rc;
    if ((rc = select_tests(o, ctx, err)))
        return rc;
    if (o->spread && (rc = parse_spread(o->spread, &o->spread_frac, err)))
        return rc;
    o->host_numa_node = GQ_NUMA_LOCAL;
    if ((rc = parse_host_numa(o->host_numa, &o->host_numa_node, err)))
        return rc;
    if (o->copies > 0 && o->duration > 0)
        return gq_err_set(err, GQ_E_USAGE, "give either --copies or --duration, not both");
    if (o->round_time > 0 && (o->copies > 0 || o->duration > 0))
        return gq_err_set(
            err, GQ_E_USAGE,
            "--round-time sets the auto mode's rounds; it does not go with --copies or --duration");
    if (o->round_time != 0 && (o->round_time < 0.01 || o->round_time > 10))
        return gq_err_set(err, GQ_E_USAGE, "--round-time %g s: expected 10ms to 10s", o->round_time);
    if (o->c.json_path && (rc = gq_cli_check_writable(o->c.json_path, err)))
        return gq_err_prefix(err, "--json");
    if (o->c.journal && (rc = gq_cli_check_writable(o->c.journal, err)))
        return gq_err_prefix(err, "--journal");
    if (o->resume && o->c.journal)
        return gq_err_set(err, GQ_E_USAGE,
                          "--resume appends to the journal it continues; leave out --journal");
    o->tracing = trace_on();
    o->t_cmd = gq_now_mono();
    return GQ_OK;
}

/* What one run keeps between its steps. */
typedef struct run_state {
    gq_plan *plans;
    int nplans;
    long total_units;
    json_t *sections; /* "skipped" */
    gq_recordset rs;
    gq_journal jr;
    gq_journal *j;
    bool journal_auto;
    char journal_error[sizeof((gq_err *)0)->msg];
    bool interrupted;
    int nskipped;         /* tests planned with no measurement (their reason is warned) */
    char first_skip[256]; /* "NAME: reason" of the first of them */
} run_state;

/* Plan every test first: memory is checked against the largest measurement. */
static int plan_tests(gq_ctx *ctx, run_state *st)
{
    run_opts *o = ctx->opts;
    const gq_topo *topo = ctx->topo;
    if (o->host_numa_node >= 0 && o->host_numa_node >= topo->numa_nodes)
        return gq_err_set(
            &ctx->err, GQ_E_USAGE,
            "--host-numa %d: this machine has %d NUMA node%s (0..%d); use local, all or one of them",
            o->host_numa_node, topo->numa_nodes, topo->numa_nodes == 1 ? "" : "s", topo->numa_nodes - 1);
    gq_plan_opts po = {.bytes = o->c.buffer_size,
                       .host_numa = o->host_numa_node,
                       .numa_nodes = topo->numa_nodes,
                       .ngpus = o->c.ngpus_sel};
    memcpy(po.gpus, o->c.gpus_sel, sizeof po.gpus);
    st->plans = calloc((size_t)o->nsel, sizeof *st->plans);
    st->sections = json_object();
    json_t *skipped = json_array();
    json_object_set_new(st->sections, "skipped", skipped);
    if (!st->plans || !st->sections || !skipped)
        return gq_err_set(&ctx->err, GQ_E_FAIL, "out of memory");
    for (int i = 0; i < o->nsel; i++, st->nplans++) {
        int rc = gq_catalog_plan(o->sel[i], topo, &po, &st->plans[i], &ctx->err);
        if (rc)
            return rc;
        if (st->plans[i].n == 0) {
            json_t *s = json_object();
            json_object_set_new(s, "test", json_string(o->sel[i]->name));
            json_object_set_new(s, "reason", json_string(st->plans[i].note));
            json_array_append_new(skipped, s);
            gq_cli_warn("%s %s", o->sel[i]->name, st->plans[i].note);
            if (!st->nskipped++)
                snprintf(st->first_skip, sizeof st->first_skip, "%s %s", o->sel[i]->name, st->plans[i].note);
        }
        st->total_units += (long)st->plans[i].n * o->c.rounds;
    }
    if (check_memory(&ctx->be, topo, o, st->plans, st->nplans, o->host_numa_node, &ctx->err))
        return GQ_E_USAGE;
    return GQ_OK;
}

/* Run the plans with the progress bar, journalling each figure. */
static int measure_all(gq_ctx *ctx, run_state *st)
{
    run_opts *o = ctx->opts;
    json_t *jo = gq_cli_journal_options(&o->c), *tests = json_array();
    for (int i = 0; i < o->nsel; i++)
        json_array_append_new(tests, json_string(o->sel[i]->name));
    json_object_set_new(jo, "tests", tests);
    gq_journal_id id;
    gq_cli_journal_id(&id, "run", &o->c, ctx->topo, jo);
    id.other_revision = o->other_revision;
    gq_recordset done = {0};
    int *done_item = NULL;
    int rc = o->resume ? gq_journal_resume(&st->jr, o->resume, &id, &done, &done_item, &ctx->err)
                       : gq_journal_open(&st->jr, o->c.journal, &id, &ctx->err);
    json_decref(jo);
    if (rc) {
        gq_records_free(&done);
        free(done_item);
        return rc;
    }
    gq_exec_reuse reuse = {.rs = &done, .item = done_item};
    st->j = &st->jr;
    st->journal_auto = !o->c.journal && !o->resume;
    gq_progress bar;
    gq_progress_init(&bar, gq_progress_wanted(o->c.quiet, o->c.format), st->total_units);
    progress_ctx pc = {.bar = &bar,
                       .rounds = o->c.rounds,
                       .quiet = o->c.quiet,
                       .journal_auto = st->journal_auto,
                       .journal_error = st->journal_error};
    gq_harness_opts ho;
    gq_harness_opts_default(&ho);
    ho.rounds = o->c.rounds;
    ho.reps = o->copies;
    ho.duration_s = o->duration;
    if (o->round_time > 0)
        ho.round_s = o->round_time;
    ho.spread_target = o->spread_frac;
    ho.verify = o->c.verify;
    ho.progress = on_round;
    ho.progress_arg = &pc;
    if (o->tracing) {
        ho.trace = on_trace;
        ho.trace_arg = &pc;
    }
    gq_exec_opts xo = {
        .before = before_item, .after = after_item, .arg = &pc, .reuse = o->resume ? &reuse : NULL};
    gq_exec_result xr;
    rc = gq_exec_plans(&ctx->be, ctx->topo, st->plans, st->nplans, &ho, st->j, &xo, &st->rs, &xr, &ctx->err);
    gq_records_free(&done);
    free(done_item);
    if (o->resume && st->jr.tail_cut)
        gq_cli_warn("--resume: the last line of %s was unfinished (cut off mid-write) and was dropped; %d "
                    "measurement%s re-used, %d measured now",
                    o->resume, xr.reused, xr.reused == 1 ? "" : "s", xr.items);
    else if (o->resume)
        gq_cli_warn("--resume: %d measurement%s re-used from %s, %d measured now", xr.reused,
                    xr.reused == 1 ? "" : "s", o->resume, xr.items);
    /* the journal's mark that the run ended whole: report reads it as the run's document */
    if (!rc && !xr.interrupted && st->j && st->nskipped < o->nsel) {
        json_t *end = json_pack("{s:s,s:s,s:i}", "step", "run", "status", "done", "records", st->rs.n);
        gq_err je = {0};
        /* without it, the journal reads as an interrupted run: nothing is lost */
        if (end)
            (void)gq_journal_event(st->j, "step", end, &je);
        json_decref(end);
    }
    gq_progress_clear(&bar);
    st->interrupted = xr.interrupted;
    return rc ? GQ_E_FAIL : GQ_OK;
}

/* The document and the output in the format asked for. */
/* Every requested test was skipped: nothing was measured, so the run is
 * incomplete (exit 5), not a pass. */
static bool nothing_measured(const run_opts *o, const run_state *st)
{
    return o->nsel > 0 && st->nskipped == o->nsel;
}

static int write_results(gq_ctx *ctx, run_state *st)
{
    run_opts *o = ctx->opts;
    const char *fmt = o->c.format;
    json_t *opts_json = options_json(o, o->sel, o->nsel, o->spread_frac, &o->c, o->c.journal);
    gq_doc d = {.kind = "run",
                .version = gq_version,
                .git = gq_git_rev,
                .options = opts_json,
                .topo = ctx->topo,
                .records = &st->rs,
                .sections = st->sections,
                .simulated = gq_backend_simulated(&ctx->be) || ctx->topo->simulated,
                .incomplete = st->interrupted || nothing_measured(o, st)};
    ctx->doc = gq_doc_to_json(&d);
    json_decref(opts_json);
    if (!ctx->doc)
        return gq_err_set(&ctx->err, GQ_E_FAIL, "out of memory building the results");
    gq_err err = {0};
    if (!strcmp(fmt, "table")) {
        if (gq_render_table(stdout, ctx->topo, &st->rs))
            return gq_err_set(&ctx->err, GQ_E_NOMEM, "out of memory writing the results table");
        if (st->interrupted) /* the table alone would read as the whole run */
            printf("\nINCOMPLETE: interrupted (Ctrl-C); what was measured before it is shown, the rest was "
                   "not run\n");
    } else if (!strcmp(fmt, "json")) {
        if (gq_doc_write_file(ctx->doc, "-", &err))
            gq_cli_error("%s", err.msg);
    } else if (!strcmp(fmt, "csv")) {
        gq_render_csv(stdout, &st->rs);
    } else if (!strcmp(fmt, "nvbandwidth-json")) {
        json_t *nv = gq_render_nvbandwidth_json(ctx->topo, &st->rs, gq_version);
        if (!nv || gq_doc_write_file(nv, "-", &err))
            gq_cli_error("cannot write nvbandwidth JSON");
        json_decref(nv);
    } else if (!strcmp(fmt, "prometheus")) {
        if (gq_cli_prom_run("-", &st->rs, ctx->topo, st->interrupted, &err))
            gq_cli_error("%s", err.msg);
    }
    fflush(stdout);
    return gq_cli_prom_run(o->c.prom_path, &st->rs, ctx->topo, st->interrupted, &ctx->err);
}

/* The exit code: interrupted, a failed figure, or a named journal lost. */
static int verdict(const run_opts *o, run_state *st)
{
    int code = GQ_EXIT_OK, nfailed = 0;
    const gq_journal *j = st->j;
    for (int i = 0; i < st->rs.n; i++)
        nfailed += gq_record_failed(&st->rs.v[i]);
    if (st->interrupted) {
        gq_cli_error("interrupted: %d figure%s kept, the results are marked incomplete; journal: %s",
                     st->rs.n, st->rs.n == 1 ? "" : "s", j ? j->path : "(none)");
        code = GQ_EXIT_INTR;
        st->journal_auto = false;
    } else if (nfailed) {
        gq_cli_error("%d figure%s failed (error, verify_failed or impossible); see their flags%s%s", nfailed,
                     nfailed == 1 ? "" : "s", j ? "; journal: " : "", j ? j->path : "");
        code = GQ_EXIT_FAIL;
        st->journal_auto = false;
    }
    if (!st->interrupted && code == GQ_EXIT_OK && nothing_measured(o, st)) {
        gq_cli_error("nothing was measured: %s%s; the run is incomplete", st->first_skip,
                     st->nskipped > 1 ? " (and every other requested test was skipped too)" : "");
        code = GQ_EXIT_INCOMPLETE;
    }
    if (st->journal_error[0] && !st->interrupted) {
        gq_cli_error("--journal %s was not written (%s); the results above and any --json file are complete",
                     o->c.journal, st->journal_error);
        if (code == GQ_EXIT_OK)
            code = GQ_EXIT_USAGE;
    }
    return code;
}

static int run_run(gq_ctx *ctx)
{
    run_opts *o = ctx->opts;
    if (o->list) {
        list_tests(stdout);
        return GQ_OK;
    }
    double tt = gq_now_mono();
    if (o->tracing)
        trace_line("-", "open", tt - o->t_cmd, "backend init + discovery");
    for (int i = 0; i < ctx->topo->nwarnings && !o->c.quiet; i++)
        gq_cli_warn("%s", ctx->topo->warnings[i]);
    run_state st = {0};
    int rc = plan_tests(ctx, &st);
    if (!rc && o->tracing)
        trace_line("-", "plan", gq_now_mono() - tt, "plans + memory check");
    if (!rc)
        rc = measure_all(ctx, &st);
    tt = gq_now_mono();
    if (!rc)
        rc = write_results(ctx, &st);
    if (!rc && o->tracing)
        trace_line("-", "output", gq_now_mono() - tt, "JSON + tables");
    if (!rc)
        ctx->exit_code = verdict(o, &st);
    if (st.j) {
        gq_journal_close(st.j);
        /* an automatic journal is only kept when something went wrong */
        if (st.journal_auto && !rc && ctx->exit_code == GQ_EXIT_OK)
            remove(st.jr.path);
    }
    json_decref(st.sections);
    for (int i = 0; i < st.nplans; i++)
        gq_plan_free(&st.plans[i]);
    free(st.plans);
    gq_records_free(&st.rs);
    if (o->tracing)
        trace_line("-", "total", gq_now_mono() - o->t_cmd, "from backend open");
    return rc;
}

static const gq_exit_doc run_exits[] = {
    {0, "every figure valid, or flagged only for overlap, spread or NUMA placement"},
    {1, "a figure failed or is invalid (an error, failed verification, an impossible figure)"},
    GQ_EXITDOC_USAGE,
    GQ_EXITDOC_NODEV,
    {5, "nothing measured: every requested test was skipped (it says why)"},
    GQ_EXITDOC_BUSY,
    GQ_EXITDOC_INTR,
    GQ_EXITDOC_END,
};

const gq_frame_cmd gq_frame_run = {
    .name = "run",
    .summary = "run transfer tests by name (nvbandwidth's names and more); --list shows them",
    .usage =
        "usage: gpuqual run [-t NAME[,NAME...]] [-p PREFIX] [options]\n"
        "       gpuqual run --list\n\n"
        "Runs transfer tests by name: nvbandwidth's (same names and meanings; concurrent tests also\n"
        "report the measured aggregate and its overlap), p2pBandwidthLatencyTest's matrices, host-staged\n"
        "GPU-to-GPU copies and GPU sets. Figures are medians over rounds in GB/s (10^9 bytes/s).\n\n",
    .opts = {.name = "run",
             .formats = "table,json,csv,nvbandwidth-json,prometheus",
             .tabs = tabs,
             .ntab = (int)(sizeof tabs / sizeof tabs[0])},
    .opts_size = sizeof(run_opts),
    .exits = run_exits,
    .examples = "  gpuqual run --list\n"
                "  gpuqual run -t host_to_device_memcpy_ce,device_to_device_memcpy_read_ce --sim h200x2\n"
                "  gpuqual run --format csv --json run.json\n",
    .maxpos = MAX_POS,
    .needs = GQ_FRAME_BACKEND | GQ_FRAME_MEASURES,
    .prepare = run_prepare,
    .run = run_run,
};
