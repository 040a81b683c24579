/* gpuqual run: transfer tests by name (the catalog, measure/catalog.h), timed
 * by the harness, journalled as they finish, rendered at the end.
 *
 * Exit codes: 0 every figure valid or flagged only for overlap, spread,
 * NUMA placement; 1 any figure failed (error, verify_failed, impossible);
 * 2 bad input (nothing runs); 3 no GPU; 130 interrupted (what finished is
 * written, marked incomplete, and the journal is kept).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/common.h"
#include "cli/progress.h"
#include "exec/plan_run.h"
#include "measure/catalog.h"
#include "measure/harness.h"
#include "measure/journal.h"
#include "core/units.h"
#include "render/render.h"

#define MAX_TESTS 128
#define MAX_POS 64

typedef struct run_opts {
    gq_common c;
    const char *tests;
    const char *prefix;
    bool list;
    uint64_t buffer;
    int rounds;
    int copies;
    double duration;
    double round_time;
    const char *spread;
    bool verify;
    const char *host_numa;
} run_opts;

#define OFF(f) offsetof(run_opts, f)

/* clang-format off */
static const gq_opt run_tab[] = {
    {.name = "test",
     .shortname = 't',
     .type = GQ_OPT_STR,
     .off = OFF(tests),
     .arg = "NAME[,NAME...]",
     .help = "tests to run, by name (default: every test); --list shows them"},
    {.name = "prefix",
     .shortname = 'p',
     .type = GQ_OPT_STR,
     .off = OFF(prefix),
     .arg = "PREFIX",
     .help = "run every test whose name starts with PREFIX"},
    {.name = "list",
     .type = GQ_OPT_FLAG,
     .off = OFF(list),
     .help = "list every test with one line, then exit"},
    {.name = "buffer-size",
     .shortname = 'b',
     .type = GQ_OPT_SIZE,
     .off = OFF(buffer),
     .def = "512",
     .arg = "MiB",
     .help = "bytes per copy; a bare number is MiB (4K, 64MiB, 1G also work)",
     .unit = GQ_MiB},
    {.name = "rounds",
     .shortname = 'i',
     .type = GQ_OPT_INT,
     .off = OFF(rounds),
     .def = "5",
     .arg = "N",
     .help = "rounds per measurement: median, min, max and spread over them",
     .lo = 1,
     .hi = GQ_MAX_ROUNDS},
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
    {.name = "verify",
     .type = GQ_OPT_FLAG,
     .off = OFF(verify),
     .def = "1",
     .help = "check the data pattern after the timed part; a mismatch fails the test"},
    {.name = "host-numa",
     .type = GQ_OPT_STR,
     .off = OFF(host_numa),
     .def = "local",
     .arg = "N|local|all",
     .help = "NUMA node of the pinned host buffers; all = every node in turn (GPU x node matrix)"},
    GQ_OPT_END,
};
/* clang-format on */

static const gq_opt *const tabs[] = {run_tab, gq_common_output_opts, gq_common_backend_opts};
#define NTABS ((int)(sizeof tabs / sizeof tabs[0]))

static void usage(FILE *f)
{
    fprintf(
        f, "usage: gpuqual run [-t NAME[,NAME...]] [-p PREFIX] [options]\n"
           "       gpuqual run --list\n\n"
           "Runs transfer tests by name: nvbandwidth's (same names and meanings; concurrent tests also\n"
           "report the measured aggregate and its overlap), p2pBandwidthLatencyTest's matrices, host-staged\n"
           "GPU-to-GPU copies and GPU sets. Figures are medians over rounds in GB/s (10^9 bytes/s).\n\n"
           "options:\n");
    gq_opts_help(f, tabs, NTABS);
}

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
    json_object_set_new(j, "buffer_bytes", json_integer((json_int_t)o->buffer));
    json_object_set_new(j, "rounds", json_integer(o->rounds));
    json_object_set_new(j, "copies", o->copies > 0 ? json_integer(o->copies) : json_string("auto"));
    json_object_set_new(j, "duration_s", o->duration > 0 ? json_real(o->duration) : json_null());
    json_object_set_new(j, "round_target_s",
                        json_real(o->round_time > 0 ? o->round_time : GQ_HARNESS_ROUND_S));
    json_object_set_new(j, "spread_target", spread > 0 ? json_real(spread) : json_null());
    json_object_set_new(j, "verify", json_boolean(o->verify));
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
    json_object_set_new(j, "sim_noise", json_real(c->sim_noise));
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
                              gq_fmt_size(o->buffer, a, sizeof a), plans[p].test,
                              gq_fmt_size(gmax, b, sizeof b), who, fmt_mem(gfree[who], c, sizeof c));
        if (hknown && hmax > hostavail)
            return gq_err_set(
                err, GQ_E_USAGE,
                "--buffer-size %s is too large: %s needs %s of pinned host memory, %s can be had",
                gq_fmt_size(o->buffer, a, sizeof a), plans[p].test, gq_fmt_size(hmax, b, sizeof b),
                fmt_mem(hostavail, c, sizeof c));
    }
    return GQ_OK;
}

int gq_cmd_run(int argc, char **argv)
{
    run_opts o;
    memset(&o, 0, sizeof o);
    const char *pos[MAX_POS];
    int npos = 0;
    bool help = false;
    gq_err err = {0};
    int exit_code = GQ_EXIT_OK;
    gq_backend be = {0};
    gq_topo *topo = NULL;
    gq_plan *plans = NULL;
    int nplans = 0;
    gq_recordset rs = {0};
    gq_journal jr = {0};
    gq_journal *j = NULL;
    bool journal_auto = false;
    char journal_error[sizeof((gq_err *)0)->msg] = "";
    json_t *doc = NULL, *opts_json = NULL, *sections = NULL;

    if (gq_opts_parse(tabs, NTABS, &o, argc, argv, 2, pos, MAX_POS, &npos, &help, &err)) {
        gq_cli_error("%s", err.msg);
        return GQ_EXIT_USAGE;
    }
    if (help) {
        usage(stdout);
        return GQ_EXIT_OK;
    }
    if (o.list) {
        list_tests(stdout);
        return GQ_EXIT_OK;
    }

    /* everything the command line alone can tell is checked before the backend opens */
    char names[4096] = "";
    size_t used = 0;
    if (o.tests)
        used += (size_t)snprintf(names, sizeof names, "%s", o.tests);
    for (int i = 0; i < npos && used < sizeof names; i++)
        used += (size_t)snprintf(names + used, sizeof names - used, "%s%s", used ? "," : "", pos[i]);
    const gq_test *sel[MAX_TESTS];
    int nsel = 0;
    if (gq_catalog_select(names[0] ? names : NULL, o.prefix, sel, MAX_TESTS, &nsel, &err)) {
        gq_cli_error("%s", err.msg);
        return GQ_EXIT_USAGE;
    }
    double spread = 0;
    if (o.spread && parse_spread(o.spread, &spread, &err)) {
        gq_cli_error("%s", err.msg);
        return GQ_EXIT_USAGE;
    }
    int host_numa = GQ_NUMA_LOCAL;
    if (parse_host_numa(o.host_numa, &host_numa, &err)) {
        gq_cli_error("%s", err.msg);
        return GQ_EXIT_USAGE;
    }
    if (o.copies > 0 && o.duration > 0) {
        gq_cli_error("give either --copies or --duration, not both");
        return GQ_EXIT_USAGE;
    }
    if (o.round_time > 0 && (o.copies > 0 || o.duration > 0)) {
        gq_cli_error("--round-time sets the auto mode's rounds; it does not go with --copies or --duration");
        return GQ_EXIT_USAGE;
    }
    if (o.round_time != 0 && (o.round_time < 0.01 || o.round_time > 10)) {
        gq_cli_error("--round-time %g s: expected 10ms to 10s", o.round_time);
        return GQ_EXIT_USAGE;
    }
    if (!strcmp(o.c.format, "markdown")) {
        gq_cli_error("--format markdown is not available for run; use table, json, csv, nvbandwidth-json or "
                     "prometheus (gpuqual report renders Markdown from a saved run)");
        return GQ_EXIT_USAGE;
    }
    if (o.c.json_path && gq_cli_check_writable(o.c.json_path, &err)) {
        gq_cli_error("--json: %s", err.msg);
        return GQ_EXIT_USAGE;
    }
    if (o.c.journal && gq_cli_check_writable(o.c.journal, &err)) {
        gq_cli_error("--journal: %s", err.msg);
        return GQ_EXIT_USAGE;
    }

    topo = malloc(sizeof *topo);
    if (!topo) {
        gq_cli_error("out of memory");
        return GQ_EXIT_FAIL;
    }
    const bool tracing = trace_on();
    double tt = gq_now_mono(), t_cmd = tt;
    int rc = gq_cli_open(&o.c, &be, topo, &err);
    if (tracing)
        trace_line("-", "open", gq_now_mono() - tt, "backend init + discovery");
    tt = gq_now_mono();
    if (rc) {
        gq_cli_error("%s", err.msg);
        free(topo);
        return gq_status_exit_code(rc);
    }
    for (int i = 0; i < topo->nwarnings && !o.c.quiet; i++)
        gq_cli_warn("%s", topo->warnings[i]);
    if (host_numa >= 0 && host_numa >= topo->numa_nodes) {
        gq_cli_error("--host-numa %d: this machine has %d NUMA node%s (0..%d); use local, all or one of them",
                     host_numa, topo->numa_nodes, topo->numa_nodes == 1 ? "" : "s", topo->numa_nodes - 1);
        exit_code = GQ_EXIT_USAGE;
        goto out;
    }

    /* plan everything first: memory is checked against the largest measurement */
    gq_plan_opts po = {
        .bytes = o.buffer, .host_numa = host_numa, .numa_nodes = topo->numa_nodes, .ngpus = o.c.ngpus_sel};
    memcpy(po.gpus, o.c.gpus_sel, sizeof po.gpus);
    plans = calloc((size_t)nsel, sizeof *plans);
    sections = json_object();
    json_t *skipped = json_array();
    json_object_set_new(sections, "skipped", skipped);
    if (!plans || !sections || !skipped) {
        gq_cli_error("out of memory");
        exit_code = GQ_EXIT_FAIL;
        goto out;
    }
    long total_units = 0;
    for (int i = 0; i < nsel; i++, nplans++) {
        if ((rc = gq_catalog_plan(sel[i], topo, &po, &plans[i], &err))) {
            gq_cli_error("%s", err.msg);
            exit_code = gq_status_exit_code(rc);
            goto out;
        }
        if (plans[i].n == 0) {
            json_t *s = json_object();
            json_object_set_new(s, "test", json_string(sel[i]->name));
            json_object_set_new(s, "reason", json_string(plans[i].note));
            json_array_append_new(skipped, s);
            gq_cli_warn("%s %s", sel[i]->name, plans[i].note);
        }
        total_units += (long)plans[i].n * o.rounds;
    }
    if (check_memory(&be, topo, &o, plans, nplans, host_numa, &err)) {
        gq_cli_error("%s", err.msg);
        exit_code = GQ_EXIT_USAGE;
        goto out;
    }

    if (tracing) {
        trace_line("-", "plan", gq_now_mono() - tt, "plans + memory check");
    }
    if ((rc = gq_journal_open(&jr, o.c.journal, &err))) {
        gq_cli_error("%s", err.msg);
        exit_code = gq_status_exit_code(rc);
        goto out;
    }
    j = &jr;
    journal_auto = !o.c.journal;

    gq_progress bar;
    gq_progress_init(&bar, !o.c.quiet, total_units);
    progress_ctx pc = {.bar = &bar,
                       .rounds = o.rounds,
                       .quiet = o.c.quiet,
                       .journal_auto = journal_auto,
                       .journal_error = journal_error};
    gq_harness_opts ho;
    gq_harness_opts_default(&ho);
    ho.rounds = o.rounds;
    ho.reps = o.copies;
    ho.duration_s = o.duration;
    if (o.round_time > 0)
        ho.round_s = o.round_time;
    ho.spread_target = spread;
    ho.verify = o.verify;
    ho.progress = on_round;
    ho.progress_arg = &pc;
    if (tracing) {
        ho.trace = on_trace;
        ho.trace_arg = &pc;
    }

    gq_exec_opts xo = {.before = before_item, .after = after_item, .arg = &pc};
    gq_exec_result xr;
    rc = gq_exec_plans(&be, topo, plans, nplans, &ho, j, &xo, &rs, &xr, &err);
    if (xr.journal_lost) {
        gq_journal_close(j);
        j = NULL;
    }
    gq_progress_clear(&bar);
    if (rc) {
        gq_cli_error("%s", err.msg);
        exit_code = GQ_EXIT_FAIL;
        goto out;
    }
    bool interrupted = xr.interrupted;
    tt = gq_now_mono();

    /* results */
    opts_json = options_json(&o, sel, nsel, spread, &o.c, o.c.journal);
    gq_doc d = {.kind = "run",
                .version = gq_version,
                .git = gq_git_rev,
                .options = opts_json,
                .topo = topo,
                .records = &rs,
                .sections = sections,
                .simulated = gq_backend_simulated(&be) || topo->simulated,
                .incomplete = interrupted};
    doc = gq_doc_to_json(&d);
    if (!doc) {
        gq_cli_error("out of memory building the results");
        exit_code = GQ_EXIT_FAIL;
        goto out;
    }
    if (o.c.json_path && gq_json_write_file(doc, o.c.json_path, &err)) {
        gq_cli_error("%s", err.msg);
        exit_code = GQ_EXIT_USAGE;
    }
    if (!strcmp(o.c.format, "table")) {
        gq_render_table(stdout, topo, &rs);
    } else if (!strcmp(o.c.format, "json")) {
        if (gq_json_write_file(doc, "-", &err))
            gq_cli_error("%s", err.msg);
    } else if (!strcmp(o.c.format, "csv")) {
        gq_render_csv(stdout, &rs);
    } else if (!strcmp(o.c.format, "nvbandwidth-json")) {
        json_t *nv = gq_render_nvbandwidth_json(topo, &rs, gq_version);
        if (!nv || gq_json_write_file(nv, "-", &err))
            gq_cli_error("cannot write nvbandwidth JSON");
        json_decref(nv);
    } else if (!strcmp(o.c.format, "prometheus")) {
        gq_render_prometheus(stdout, &rs);
    }
    fflush(stdout);
    if (tracing)
        trace_line("-", "output", gq_now_mono() - tt, "JSON + tables");

    int nfailed = 0;
    for (int i = 0; i < rs.n; i++)
        nfailed += gq_record_failed(&rs.v[i]);
    if (interrupted) {
        gq_cli_error("interrupted: %d figure%s kept, the results are marked incomplete; journal: %s", rs.n,
                     rs.n == 1 ? "" : "s", j ? j->path : "(none)");
        exit_code = GQ_EXIT_INTR;
        journal_auto = false;
    } else if (nfailed) {
        gq_cli_error("%d figure%s failed (error, verify_failed or impossible); see their flags%s%s", nfailed,
                     nfailed == 1 ? "" : "s", j ? "; journal: " : "", j ? j->path : "");
        if (exit_code == GQ_EXIT_OK)
            exit_code = GQ_EXIT_FAIL;
        journal_auto = false;
    }
    if (journal_error[0] && !interrupted) {
        gq_cli_error("--journal %s was not written (%s); the results above and any --json file are complete",
                     o.c.journal, journal_error);
        if (exit_code == GQ_EXIT_OK)
            exit_code = GQ_EXIT_USAGE;
    }
out:
    if (j) {
        gq_journal_close(j);
        /* an automatic journal is only kept when something went wrong */
        if (journal_auto && exit_code == GQ_EXIT_OK)
            remove(jr.path);
    }
    json_decref(doc);
    json_decref(opts_json);
    json_decref(sections);
    for (int i = 0; i < nplans; i++)
        gq_plan_free(&plans[i]);
    free(plans);
    gq_records_free(&rs);
    tt = gq_now_mono();
    gq_backend_close(&be);
    if (tracing) {
        trace_line("-", "close", gq_now_mono() - tt, "backend fini (pinned pool freed)");
        trace_line("-", "total", gq_now_mono() - t_cmd, "from backend open");
    }
    free(topo);
    return exit_code;
}
