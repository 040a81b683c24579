/* gpuqual domains: find performance domains and shared bottlenecks from
 * measurements alone (docs/method-domains.md):
 *   1. the pairwise P2P read matrix, one pair at a time (host-staged where
 *      there is no P2P);
 *   2. domains, clustered from that matrix;
 *   3. contention probes chosen from the domains and the PCIe/NUMA tree;
 *   4. bottlenecks inferred from the probes.
 * --plan-only prints what would run and how long it would take. */
#include <jansson.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/bottlenecks.h"
#include "exec/discovery.h"
#include "analysis/domains.h"
#include "analysis/probes.h"
#include "cli/commands.h"
#include "cli/common.h"
#include "cli/progress.h"
#include "measure/harness.h"
#include "measure/journal.h"
#include "core/options.h"
#include "core/units.h"
#include "doc/saved_doc.h"
#include "render/render.h"
#include "render/analysis_render.h"
#include "render/command_text.h"

typedef struct domains_opts {
    gq_common c; /* method, buffer_size, rounds from the shared tables */
    bool plan_only;
    double min_gap;  /* percent */
    double min_drop; /* percent */
} domains_opts;

#define OFF(f) offsetof(domains_opts, f)
/* clang-format off */
static const gq_opt domains_own_opts[] = {
    {.name = "plan-only", .type = GQ_OPT_FLAG, .off = OFF(plan_only),
     .help = "print the planned measurements and an estimated time; measure nothing"},
    {.name = "min-gap", .type = GQ_OPT_DOUBLE, .off = OFF(min_gap), .def = "10", .arg = "PCT",
     .help = "smallest relative gap between pair bandwidths that can separate domains", .lo = 1, .hi = 1000},
    {.name = "min-drop", .type = GQ_OPT_DOUBLE, .off = OFF(min_drop), .def = "20", .arg = "PCT",
     .help = "how far below expectation a concurrent run must fall to show a shared bottleneck", .lo = 1, .hi = 90},
    GQ_OPT_END,
};
/* clang-format on */
#undef OFF

static const gq_opt *const tabs[] = {gq_common_output_opts,     gq_common_backend_opts, gq_common_method_opt,
                                     gq_common_buffer_size_opt, gq_common_rounds_opt,   domains_own_opts};
#define NTABS ((int)(sizeof tabs / sizeof tabs[0]))
static const char *const defaults[] = {"buffer-size=64", NULL};

/* ---- progress ---------------------------------------------------------------- */

static void on_progress(void *arg, int done, int total, const gq_probe *pr)
{
    gq_progress *bar = arg;
    char what[256];
    gq_progress_set_total(bar, total);
    gq_progress_step(bar, "probe %d/%d %s %s %s", done, total, gq_probe_kind_name(pr->kind),
                     gq_direction_name(pr->direction), gq_probe_str(pr, what, sizeof what));
    gq_progress_update(bar, done - 1);
}

/* ---- output ---------------------------------------------------------------------- */

static json_t *plan_json(const gq_probe_plan *p, int n, int rounds, double round_s, bool with_probes)
{
    json_t *j = json_object(), *cnt = json_object(), *probes = json_array();
    for (int k = 0; k < GQ_PROBE_NKINDS; k++)
        json_object_set_new(cnt, gq_probe_kind_name((gq_probe_kind)k), json_integer(p->count[k]));
    json_object_set_new(j, "gpus", json_integer(n));
    json_object_set_new(j, "counts", cnt);
    json_object_set_new(j, "total", json_integer(p->n));
    json_object_set_new(j, "bound", json_integer(gq_probes_bound(n)));
    json_object_set_new(j, "n_squared", json_integer((json_int_t)n * n));
    json_object_set_new(j, "per_n_squared", json_real(n ? (double)p->n / ((double)n * n) : 0));
    json_object_set_new(j, "growth",
                        json_pack("[{s:i,s:I},{s:i,s:I}]", "gpus", 2 * n, "bound",
                                  (json_int_t)gq_probes_bound(2 * n), "gpus", 4 * n, "bound",
                                  (json_int_t)gq_probes_bound(4 * n)));
    json_object_set_new(j, "estimated_s", json_real(gq_probes_estimate_s(p, rounds, round_s)));
    for (int i = 0; with_probes && i < p->n; i++) {
        const gq_probe *pr = &p->v[i];
        if (pr->kind == GQ_PROBE_MATRIX)
            continue;
        json_t *e = json_object();
        json_object_set_new(e, "kind", json_string(gq_probe_kind_name(pr->kind)));
        json_object_set_new(e, "direction", json_string(gq_direction_name(pr->direction)));
        if (pr->npairs) {
            json_t *a = json_array();
            for (int k = 0; k < pr->npairs; k++)
                json_array_append_new(a, json_pack("{s:i,s:i,s:b}", "src", pr->src[k], "dst", pr->dst[k],
                                                   "staged", pr->staged[k]));
            json_object_set_new(e, "pairs", a);
        } else {
            json_t *a = json_array();
            for (int k = 0; k < pr->ngpus; k++)
                json_array_append_new(a, json_integer(pr->gpus[k]));
            json_object_set_new(e, "gpus", a);
        }
        json_object_set_new(e, "why", json_string(pr->why));
        json_array_append_new(probes, e);
    }
    json_object_set_new(j, "probes", probes);
    return j;
}

/* ---- the command ------------------------------------------------------------------ */

/* ---- the command ------------------------------------------------------------------ */

static int domains_prepare(gq_ctx *ctx)
{
    domains_opts *o = ctx->opts;
    if (ctx->npos > 0)
        return gq_err_set(&ctx->err, GQ_E_USAGE, "domains: unexpected argument '%s'; choose GPUs with --gpus",
                          ctx->pos[0]);
    if (o->plan_only && !strcmp(o->c.format, "csv"))
        return gq_err_set(&ctx->err, GQ_E_USAGE,
                          "domains: --plan-only measures nothing, so there are no records for "
                          "--format csv; use table or json");
    return GQ_OK;
}

static double round_seconds(const gq_harness_opts *ho)
{
    return ho->round_s > 0 ? ho->round_s : GQ_HARNESS_ROUND_S;
}

/* --plan-only: the planned runs on the domains the tree suggests, and the
 * estimated time; nothing is measured. */
static int plan_only(gq_ctx *ctx, const gq_harness_opts *ho)
{
    domains_opts *o = ctx->opts;
    int n = o->c.ngpus_sel;
    const int *gpus = o->c.gpus_sel;
    double round_s = round_seconds(ho);
    gq_probe_plan plan = {0};
    gq_domains *dom = calloc(1, sizeof *dom);
    json_t *options = NULL, *sections = NULL;
    int rc = dom ? GQ_OK : gq_err_set(&ctx->err, GQ_E_NOMEM, "out of memory");
    if (!rc) {
        gq_probes_assume_domains(ctx->topo, gpus, n, dom);
        if (!(rc = gq_probes_plan_matrix(&plan, ctx->topo, gpus, n, &ctx->err)))
            rc = gq_probes_plan_contention(&plan, ctx->topo, gpus, n, dom, &ctx->err);
    }
    if (!rc && (o->c.json_path || !strcmp(o->c.format, "json"))) {
        options = gq_opts_to_json(tabs, NTABS, o);
        sections = gq_domains_to_json(dom);
        json_t *pj = plan_json(&plan, n, o->c.rounds, round_s, true);
        if (options && sections && pj) {
            /* the domains here are assumed, not measured: keep them out of the "domains" contract */
            gq_saved_domains_as_assumed(sections, pj);
            json_object_set_new(sections, "plan", pj);
            json_object_set_new(sections, "plan_only", json_true());
            pj = NULL;
            gq_doc d = {.kind = "domains",
                        .version = gq_version,
                        .git = gq_git_rev,
                        .options = options,
                        .topo = ctx->topo,
                        .sections = sections,
                        .simulated = gq_backend_simulated(&ctx->be)};
            ctx->doc = gq_doc_to_json(&d);
        }
        json_decref(pj);
        if (!ctx->doc)
            rc = gq_err_set(&ctx->err, GQ_E_NOMEM, "out of memory");
    }
    ctx->doc_stdout = !strcmp(o->c.format, "json");
    if (!rc && !ctx->doc_stdout)
        gq_render_probe_plan(stdout, &plan, n, dom, o->c.rounds, round_s, false);
    json_decref(options);
    json_decref(sections);
    gq_probe_plan_free(&plan);
    free(dom);
    return rc;
}

/* The domains document: options, records, domains, bottlenecks, matrix, plan. */
static json_t *domains_doc(gq_ctx *ctx, const gq_discovery *disc, double round_s)
{
    domains_opts *o = ctx->opts;
    json_t *doc = NULL, *options = gq_opts_to_json(tabs, NTABS, o),
           *sections = gq_domains_to_json(disc->domains);
    json_t *bj = gq_bottlenecks_to_json(disc->bottlenecks, &disc->records);
    json_t *mj = gq_pairmatrix_to_json(disc->matrix);
    json_t *pj = plan_json(&disc->plan, o->c.ngpus_sel, o->c.rounds, round_s, true);
    if (options && sections && bj && mj && pj) {
        json_object_update(sections, bj);
        json_object_set_new(sections, "matrix", mj);
        json_object_set_new(sections, "plan", pj);
        json_object_set_new(sections, "plan_only", json_false());
        mj = pj = NULL;
        gq_doc d = {.kind = "domains",
                    .version = gq_version,
                    .git = gq_git_rev,
                    .options = options,
                    .topo = ctx->topo,
                    .records = &disc->records,
                    .sections = sections,
                    .simulated = gq_backend_simulated(&ctx->be),
                    .incomplete = disc->interrupted};
        doc = gq_doc_to_json(&d);
    }
    json_decref(bj);
    json_decref(mj);
    json_decref(pj);
    json_decref(options);
    json_decref(sections);
    return doc;
}

/* The table: matrix, domains, host-path note and the contention probes. */
static void print_results(const gq_ctx *ctx, const gq_discovery *disc)
{
    const domains_opts *o = ctx->opts;
    int n = o->c.ngpus_sel;
    char sz[32];
    printf("gpuqual domains: %d GPU%s%s, %d measurements of %s, %d rounds each%s\n\n", n, n == 1 ? "" : "s",
           ctx->topo->simulated ? " (simulated)" : "", disc->plan.n,
           gq_fmt_size(o->c.buffer_size, sz, sizeof sz), o->c.rounds,
           disc->interrupted ? " (INTERRUPTED: partial)" : "");
    if (n == 1)
        printf("One GPU: nothing to pair, so no matrix and no domains to find; host paths below.\n\n");
    else
        gq_render_pair_matrix(stdout, disc->matrix);
    if (n > 1)
        gq_render_domains_text(stdout, disc->domains);
    if (disc->bottlenecks->one_numa_visible)
        printf("The platform shows one NUMA node%s: host-path sharing can only be inferred from "
               "measurement.\n\n",
               ctx->topo->is_vm ? " (a VM)" : "");
    gq_render_contention(stdout, disc->bottlenecks, &disc->records);
}

/* Measure: the matrix, domains, contention probes and bottlenecks. */
static int discover(gq_ctx *ctx, const gq_harness_opts *ho)
{
    domains_opts *o = ctx->opts;
    gq_discovery disc;
    memset(&disc, 0, sizeof disc);
    gq_discovery_opts dso;
    gq_discovery_opts_default(&dso);
    dso.bytes = o->c.buffer_size;
    dso.method = !strcmp(o->c.method, "sm") ? GQ_METHOD_SM : GQ_METHOD_CE;
    dso.harness = *ho;
    gq_domains_opts_default(&dso.domains);
    dso.domains.min_rel_gap = o->min_gap / 100.0;
    gq_bn_opts_default(&dso.bottlenecks);
    dso.bottlenecks.min_drop = o->min_drop / 100.0;
    dso.bottlenecks.bytes = o->c.buffer_size;
    dso.journal = ctx->journal;
    gq_progress bar;
    gq_progress_init(&bar, gq_progress_wanted(o->c.quiet, o->c.format), 1);
    dso.progress = on_progress;
    dso.progress_arg = &bar;
    int rc = gq_discovery_run(&ctx->be, ctx->topo, o->c.gpus_sel, o->c.ngpus_sel, &dso, &disc, &ctx->err);
    if (!rc && !disc.interrupted) {
        gq_progress_step(&bar, "probe %d/%d done", disc.plan.n, disc.plan.n);
        gq_progress_update(&bar, bar.total);
    }
    gq_progress_clear(&bar);
    if (!rc && (o->c.json_path || !strcmp(o->c.format, "json")) &&
        !(ctx->doc = domains_doc(ctx, &disc, round_seconds(ho))))
        rc = gq_err_set(&ctx->err, GQ_E_NOMEM, "out of memory");
    if (!rc) {
        ctx->doc_stdout = !strcmp(o->c.format, "json");
        if (!strcmp(o->c.format, "csv"))
            gq_render_csv(stdout, &disc.records);
        else if (!ctx->doc_stdout)
            print_results(ctx, &disc);
        if (disc.interrupted) {
            if (ctx->journal)
                gq_cli_warn("interrupted; finished measurements are in %s", ctx->journal->path);
            ctx->exit_code = GQ_EXIT_INCOMPLETE;
        } else {
            for (int i = 0; i < disc.records.n; i++)
                if (gq_record_failed(&disc.records.v[i]))
                    ctx->exit_code = GQ_EXIT_FAIL;
        }
    }
    gq_discovery_free(&disc);
    return rc;
}

static int domains_run(gq_ctx *ctx)
{
    domains_opts *o = ctx->opts;
    int rc = gq_cli_check_buffer(&ctx->be, &o->c, "--buffer-size", o->c.buffer_size, &ctx->err);
    if (rc)
        return rc;
    if (!o->c.quiet)
        for (int i = 0; i < ctx->topo->nwarnings; i++)
            gq_cli_warn("%s", ctx->topo->warnings[i]);
    gq_harness_opts ho;
    gq_harness_opts_default(&ho);
    ho.rounds = o->c.rounds;
    return o->plan_only ? plan_only(ctx, &ho) : discover(ctx, &ho);
}

static const gq_exit_doc domains_exits[] = {
    {0, "every figure valid"},
    {1, "a figure failed or is invalid (an error, failed verification, an impossible figure)"},
    GQ_EXITDOC_USAGE,
    GQ_EXITDOC_NODEV,
    {5, "incomplete: interrupted; what was measured is written, marked incomplete"},
    GQ_EXITDOC_BUSY,
    GQ_EXITDOC_END,
};

const gq_frame_cmd gq_frame_domains = {
    .name = "domains",
    .summary = "discover performance domains and shared bottlenecks from measurements",
    .usage = "usage: gpuqual domains [--plan-only] [--gpus LIST] [--method ce|sm] [-b MiB] [options]\n\n"
             "Discover the effective topology from measurements alone:\n"
             "  1. the P2P read matrix, one pair at a time (host-staged where P2P is absent);\n"
             "  2. performance domains: GPUs joined by the pairs above the largest gap between pair\n"
             "     bandwidths that exceeds the measurement spread (a flat matrix is one domain), found\n"
             "     again inside each group (node, socket, switch), after setting aside a GPU whose every\n"
             "     pair is slow for a reason of its own (its link, no P2P);\n"
             "  3. contention probes chosen from the domains and the PCIe/NUMA tree, never all subsets:\n"
             "     each GPU alone, per switch / root port / NUMA node, per domain, pairs inside domains,\n"
             "     all at once (host to GPU and GPU to host), GPU pairs within against across domains,\n"
             "     and all the pairs crossing each split (socket, root complex, switch) at once;\n"
             "  4. bottlenecks: sets of GPUs that share a budget, with direction, measured capacity, the\n"
             "     runs that show it, and whether the topology tree explains it.\n"
             "The plan grows as N^2 with the GPU count; --plan-only shows it (planned runs / N^2, the\n"
             "bound for more GPUs) with an estimated time.\n"
             "Method: docs/method-domains.md. GB/s = 10^9 B/s.\n\n",
    .opts =
        {.name = "domains", .formats = "table,json,csv", .tabs = tabs, .ntab = NTABS, .defaults = defaults},
    .opts_size = sizeof(domains_opts),
    .exits = domains_exits,
    .examples = "  gpuqual domains --sim rtx4090x8\n"
                "  gpuqual domains --plan-only\n"
                "  gpuqual domains --json domains.json\n",
    .maxpos = 2,
    .needs = GQ_FRAME_BACKEND | GQ_FRAME_JOURNAL | GQ_FRAME_MEASURES,
    .prepare = domains_prepare,
    .run = domains_run,
};
