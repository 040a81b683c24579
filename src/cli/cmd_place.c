/* gpuqual place: map prefill/decode pairs, KV offload workers and replicas
 * onto GPUs from measured paths, explain each choice, then run the patterns
 * the mapping implies (and the naive, index-order mapping's) and report
 * predicted against measured (docs/method-placement.md).
 *
 * Figures come from a saved `domains`/`card` run (--input; no GPU needed to
 * plan) or from a live discovery: the domains pipeline's probes (pairwise
 * matrix, host paths alone and in groups, concurrent pairs within and across
 * domains), plus both host directions at once over each host budget when
 * some handoffs must be host-staged. */
#include <jansson.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/infile.h"
#include "analysis/bottlenecks.h"
#include "analysis/card.h"
#include "analysis/domains.h"
#include "analysis/placement.h"
#include "doc/saved_doc.h"
#include "exec/discovery.h"
#include "exec/place_verify.h"
#include "exec/plan_run.h"
#include "analysis/probes.h"
#include "cli/commands.h"
#include "cli/outputs.h"
#include "cli/common.h"
#include "cli/frame.h"
#include "cli/options.h"
#include "cli/place_tp.h"
#include "cli/progress.h"
#include "measure/harness.h"
#include "measure/journal.h"
#include "core/units.h"
#include "render/render.h"
#include "render/analysis_render.h"
#include "render/command_text.h"

typedef struct place_opts {
    gq_common c;
    int prefill, decode, offload, replicas;
    const char *input;
    bool verify, verify_seen;
    double tolerance;  /* percent */
    int tp, tp_budget; /* --tp N: tensor-parallel groups (cli/place_tp.c) */
    /* what prepare() and run() keep */
    bool verify_run; /* run the verification (with --input: only when --verify is given) */
    gq_place_roles roles;
    int ngpu;
    json_t *saved, *sections;
    gq_recordset rs;
    gq_topo *saved_topo;
    bool have_saved_topo;
    gq_place_model *model;
    gq_place_result *res;
    char machine[128];
} place_opts;

#define OFF(f) offsetof(place_opts, f)
/* clang-format off */
static const gq_opt place_own_opts[] = {
    {.name = "prefill",
     .shortname = 'P',
     .type = GQ_OPT_INT,
     .off = OFF(prefill),
     .def = "0",
     .arg = "N",
     .help = "prefill workers (each hands its KV cache to a decode worker)",
     .lo = 0,
     .hi = GQ_MAX_GPUS},
    {.name = "decode",
     .shortname = 'D',
     .type = GQ_OPT_INT,
     .off = OFF(decode),
     .def = "0",
     .arg = "M",
     .help = "decode workers",
     .lo = 0,
     .hi = GQ_MAX_GPUS},
    {.name = "offload",
     .type = GQ_OPT_INT,
     .off = OFF(offload),
     .def = "0",
     .arg = "K",
     .help = "KV offload workers: GPUs whose host paths must not collide when they copy at once",
     .lo = 0,
     .hi = GQ_MAX_GPUS},
    {.name = "replicas",
     .type = GQ_OPT_INT,
     .off = OFF(replicas),
     .def = "0",
     .arg = "R",
     .help = "independent replicas, spread across separate host budgets (with --prefill: whole cells each)",
     .lo = 0,
     .hi = GQ_MAX_GPUS},
    {.name = "input",
     .type = GQ_OPT_STR,
     .off = OFF(input),
     .arg = "FILE",
     .help =
         "plan from a saved 'gpuqual domains' or 'gpuqual card' JSON (at most " GQ_INFILE_DOC_MAX_TEXT ") instead of measuring "
         "(no GPU needed; '-' reads stdin)"},
    {.name = "verify",
     .type = GQ_OPT_FLAG,
     .off = OFF(verify),
     .def = "1",
     .seen_off = OFF(verify_seen),
     .help = "run the mapping's pattern and the naive one's, and report measured against predicted (with "
             "--input: "
             "only when given)"},
    {.name = "tolerance",
     .type = GQ_OPT_DOUBLE,
     .off = OFF(tolerance),
     .def = "5",
     .arg = "PCT",
     .help = "predictions closer than this are a tie (broken by index order / spread)",
     .lo = 0,
     .hi = 50},
    {.name = "tp", .type = GQ_OPT_INT, .off = OFF(tp), .def = "0", .arg = "N", .lo = 0, .hi = GQ_MAX_GPUS,
     .help = "tensor-parallel groups of N GPUs, chosen from all-reduce measured on candidate groups (NCCL), "
             "verified all at once against the naive contiguous groups"},
    {.name = "tp-budget", .type = GQ_OPT_INT, .off = OFF(tp_budget), .def = "80", .arg = "G", .lo = 1,
     .hi = 500, .help = "with --tp: candidate groups measured alone, at most"},
    GQ_OPT_END,
};
/* clang-format on */
#undef OFF

static const gq_opt *const tabs[] = {gq_common_output_opts, gq_common_backend_opts, gq_common_measure_opts,
                                     place_own_opts};
/* Place's --verify runs the verification patterns (its own option); its
 * copies are always checked. " GQ_INFILE_DOC_MAX_TEXT " per copy. */
static const char *const place_defaults[] = {"buffer-size=256", NULL};
static const char *const place_bounds[] = {"buffer-size=4096..1099511627776", NULL};
#define NTABS ((int)(sizeof tabs / sizeof tabs[0]))

/* ---- live discovery ----------------------------------------------------- */

typedef struct live {
    gq_backend *be;
    const gq_topo *topo;
    gq_harness_opts ho;
    gq_recordset *rs;
    gq_journal *j;
    uint64_t bytes;
    gq_progress *prog;
} live;

/* The bar's total: n measurements of the harness's rounds each. */
static void set_total(live *l, long n)
{
    gq_progress_set_total(l->prog, n * l->ho.rounds);
}

/* The handoff measurements' progress: the bar's total and what runs next. */
static void place_step(void *arg, long total, const char *what)
{
    live *l = arg;
    set_total(l, total);
    gq_progress_step(l->prog, "%s", what);
}

/* The discovery pipeline's measure hook: one probe, on the bar. */
static int place_measure(void *arg, const gq_probe *pr, int done, int total, gq_measurement *m,
                         const gq_harness_opts *ho, gq_err *err)
{
    live *l = arg;
    (void)done;
    set_total(l, total);
    char what[128];
    if (pr)
        gq_progress_step(l->prog, "%s %s", gq_probe_kind_name(pr->kind), gq_probe_str(pr, what, sizeof what));
    return gq_exec_one(l->be, l->topo, m, ho ? ho : &l->ho, l->j, l->rs, err);
}

/* The discovery pipeline (exec/discovery.h: matrix, clustering, contention
 * probes, bottlenecks), then what a placement needs besides
 * (exec/place_verify.h). Its sections (domains, bottlenecks, ...) go into
 * *sections. */
static int discover(live *l, const int *sel, int nsel, json_t *sections, gq_err *err)
{
    int rc = GQ_OK;
    gq_discovery *D = calloc(1, sizeof *D);
    if (!D)
        return gq_err_set(err, GQ_E_NOMEM, "out of memory");
    /* The discovery pipeline with place's options: every measurement through
     * place_measure (the first that fails stops it), no settle passes, the
     * domains clustered without naming links. */
    gq_discovery_opts dso;
    gq_discovery_opts_default(&dso);
    dso.bytes = l->bytes;
    dso.method = GQ_METHOD_CE;
    dso.harness = l->ho;
    dso.journal = l->j;
    dso.measure = place_measure;
    dso.measure_arg = l;
    dso.settle = false;
    dso.cluster_with_topo = false;
    if ((rc = gq_discovery_begin(D, l->be, l->topo, sel, nsel, &dso, l->rs, err)) ||
        (rc = gq_discovery_matrix(D, false, err)) || (rc = gq_discovery_domains(D, err)) ||
        (rc = gq_discovery_contention(D, true, false, err)) || (rc = gq_discovery_infer(D, err)))
        goto out;
    /* what a placement needs besides: both host directions at once where
     * staged handoffs are, the driver's own staged copy */
    if ((rc = gq_place_measure_handoffs(l->be, l->topo, D, sel, nsel, l->bytes, &l->ho, l->j, l->rs,
                                        place_step, l, err)))
        goto out;
    json_t *dj = gq_domains_to_json(D->domains), *bj = gq_bottlenecks_to_json(D->bottlenecks, NULL);
    if (!dj || !bj) {
        json_decref(dj);
        json_decref(bj);
        rc = gq_err_set(err, GQ_E_NOMEM, "out of memory");
        goto out;
    }
    json_object_update(sections, dj);
    json_object_update(sections, bj);
    json_object_set_new(sections, "matrix", gq_pairmatrix_to_json(D->matrix));
    json_decref(dj);
    json_decref(bj);
out:
    D->rs = NULL;
    gq_discovery_free(D);
    free(D);
    return rc;
}

/* ---- output ------------------------------------------------------------- */

/* ---- the command -------------------------------------------------------- */

static int load_input(gq_ctx *ctx);

static int place_prepare(gq_ctx *ctx)
{
    place_opts *o = ctx->opts;
    gq_err *err = &ctx->err;
    int rc;
    o->roles = (gq_place_roles){
        .prefill = o->prefill, .decode = o->decode, .offload = o->offload, .replicas = o->replicas};
    if (o->tp && (o->prefill || o->decode || o->offload || o->replicas || o->input))
        return gq_err_set(err, GQ_E_USAGE,
                          "--tp places tensor-parallel groups alone: give it without --prefill, --decode, "
                          "--offload, --replicas and --input");
    /* Counts first, against no machine yet: bad roles fail before anything runs. */
    if (!o->tp && (rc = gq_place_roles_check(&o->roles, 0, err)))
        return rc;
    o->verify_run = o->input ? (o->verify_seen && o->verify) : o->verify;
    if ((rc = gq_outfile_check(ctx->json_path, err)))
        return rc;
    o->saved_topo = calloc(1, sizeof *o->saved_topo);
    o->model = calloc(1, sizeof *o->model);
    o->res = calloc(1, sizeof *o->res);
    if (!o->saved_topo || !o->model || !o->res || !(o->sections = json_object()))
        return gq_err_set(err, GQ_E_NOMEM, "out of memory");
    /* Planning from a saved run needs no GPU unless it is verified. */
    ctx->no_backend = o->input && !o->verify_run;
    return o->input ? load_input(ctx) : GQ_OK;
}

/* The saved run of --input: its GPUs, its domains and bottlenecks. */
static int load_input(gq_ctx *ctx)
{
    place_opts *o = ctx->opts;
    gq_err *err = &ctx->err;
    int rc;
    if ((rc = gq_cli_doc_input(o->input, &o->saved, &o->rs, err)))
        return rc;
    o->ngpu = gq_saved_ngpu(o->saved, &o->rs, o->saved_topo, &o->have_saved_topo);
    gq_saved_head head;
    gq_saved_head_read(o->saved, &head);
    const char *kind = head.kind[0] ? head.kind : NULL;
    if (o->ngpu <= 0)
        return gq_err_set(err, GQ_E_USAGE,
                          "'%s' (a saved '%s' run) names no GPU; save 'gpuqual domains' or "
                          "'gpuqual card' with --json and pass that",
                          o->input, kind ? kind : "?");
    if (o->c.gpus && (rc = gq_parse_gpu_list(o->c.gpus, o->ngpu, o->c.gpus_sel, &o->c.ngpus_sel, err)))
        return rc;
    if (!o->c.gpus)
        gq_parse_gpu_list(NULL, o->ngpu, o->c.gpus_sel, &o->c.ngpus_sel, NULL);
    gq_saved_copy_sections(o->sections, o->saved, (const char *const[]){"domains", "bottlenecks", NULL});
    snprintf(o->machine, sizeof o->machine, "%s (saved %s run%s)", o->input, kind ? kind : "?",
             head.simulated ? ", simulated" : "");
    return GQ_OK;
}

/* The machine opened by the frame: the same as --input's, and room for the buffers. */
static int place_check(gq_ctx *ctx)
{
    place_opts *o = ctx->opts;
    int rc;
    if (o->input && ctx->topo->ngpu != o->ngpu)
        return gq_err_set(&ctx->err, GQ_E_USAGE,
                          "'%s' has %d GPUs but this machine has %d; --verify needs the same "
                          "machine",
                          o->input, o->ngpu, ctx->topo->ngpu);
    o->ngpu = ctx->topo->ngpu;
    if ((rc = gq_cli_check_buffer(&ctx->be, &o->c, "--buffer-size", o->c.buffer_size, &ctx->err)))
        return rc;
    if (!o->input)
        snprintf(o->machine, sizeof o->machine, "%s%s", ctx->topo->source,
                 ctx->topo->simulated ? " (simulated)" : "");
    return GQ_OK;
}

static bool saved_simulated(const json_t *saved)
{
    gq_saved_head head;
    gq_saved_head_read(saved, &head);
    return head.simulated;
}

/* The document: options, the topology (live or saved), records and sections. */
static int place_document(gq_ctx *ctx, bool incomplete)
{
    place_opts *o = ctx->opts;
    json_t *options = gq_optset_to_json(&ctx->cmd->opts, o);
    gq_doc d = {.kind = "place",
                .version = gq_version,
                .git = gq_git_rev,
                .options = options,
                .topo = ctx->opened          ? ctx->topo
                        : o->have_saved_topo ? o->saved_topo
                                             : NULL,
                .records = &o->rs,
                .sections = o->sections,
                .simulated = ctx->opened ? gq_backend_simulated(&ctx->be) : saved_simulated(o->saved),
                .incomplete = incomplete};
    ctx->doc = gq_doc_to_json(&d);
    json_decref(options);
    return ctx->doc ? GQ_OK : gq_err_set(&ctx->err, GQ_E_NOMEM, "out of memory");
}

/* Interrupted while measuring WHAT, before any WITHOUT could be chosen: no
 * result, but what was measured is kept (--json FILE, --format json, the
 * journal), marked incomplete, and the command exits 130. GQ_E_INTR, or the
 * document's error. */
static int place_interrupted(gq_ctx *ctx, const char *what, const char *without)
{
    place_opts *o = ctx->opts;
    bool json = !strcmp(ctx->format, "json");
    int rc;
    if ((ctx->json_path || json) && (rc = place_document(ctx, true)))
        return rc;
    ctx->doc_stdout = json;
    gq_cli_error("interrupted while measuring %s: no %s; %d figures kept%s%s%s%s", what, without, o->rs.n,
                 ctx->json_path ? " in " : "", ctx->json_path ? ctx->json_path : "",
                 ctx->journal ? ", journal: " : "", ctx->journal ? ctx->journal->path : "");
    ctx->exit_code = GQ_EXIT_INTR;
    return GQ_E_INTR;
}

/* Measure the paths live (the domains probes). GQ_E_INTR: interrupted, what
 * was measured goes to --json, and the command exits 130. */
static int measure_paths(gq_ctx *ctx, const gq_harness_opts *ho)
{
    place_opts *o = ctx->opts;
    gq_progress prog = {0};
    live l = {.be = &ctx->be,
              .topo = ctx->topo,
              .ho = *ho,
              .rs = &o->rs,
              .j = ctx->journal,
              .bytes = o->c.buffer_size,
              .prog = &prog};
    gq_progress_init(&prog, gq_progress_wanted(ctx->quiet, ctx->format), 1);
    l.ho.progress = gq_progress_on_round;
    l.ho.progress_arg = &prog;
    int rc = discover(&l, o->c.gpus_sel, o->c.ngpus_sel, o->sections, &ctx->err);
    gq_progress_clear(&prog);
    if (rc != GQ_E_INTR)
        return rc;
    return place_interrupted(ctx, "the paths", "placement");
}

/* The model from the figures, the mapping, and its verification. */
static int place_solve(gq_ctx *ctx, const gq_harness_opts *ho)
{
    place_opts *o = ctx->opts;
    int rc;
    if ((rc = gq_place_model_build(o->model, o->ngpu, &o->rs, o->input ? o->saved : o->sections,
                                   ctx->opened          ? ctx->topo
                                   : o->have_saved_topo ? o->saved_topo
                                                        : NULL,
                                   &ctx->err)))
        return rc;
    o->model->tolerance = o->tolerance / 100.0;
    if (o->input)
        snprintf(o->model->source, sizeof o->model->source, "%s", o->input);
    if ((rc = gq_place_solve(o->model, &o->roles, o->res, &ctx->err)) || !o->verify_run)
        return rc;
    rc = gq_place_verify(&ctx->be, ctx->topo, o->model, o->res, o->c.buffer_size, ho, &o->rs, ctx->journal,
                         &ctx->err);
    if (rc == GQ_E_INTR) {
        ctx->exit_code = GQ_EXIT_INTR; /* README: place interrupted exits 130; said after the table */
        rc = GQ_OK;
    }
    return rc;
}

static int place_run(gq_ctx *ctx)
{
    place_opts *o = ctx->opts;
    int rc;
    if (o->tp) { /* tensor-parallel groups: cli/place_tp.c */
        rc = gq_place_tp(ctx, o->tp, o->tp_budget, o->c.buffer_size, &o->rs, o->sections);
        if (rc == GQ_E_INTR) { /* the figures measured so far are kept, the run marked incomplete */
            rc = place_interrupted(ctx, "the tensor-parallel groups", "grouping");
            return rc == GQ_E_INTR ? GQ_OK : rc;
        }
        if (!rc && (ctx->json_path || !strcmp(ctx->format, "json")) && !(rc = place_document(ctx, false)))
            ctx->doc_stdout = !strcmp(ctx->format, "json");
        return rc;
    }
    for (int i = 0; i < o->c.ngpus_sel; i++)
        o->roles.usable |= (gq_gpuset)1 << o->c.gpus_sel[i];
    if ((rc = gq_place_roles_check(&o->roles, o->ngpu, &ctx->err)))
        return rc;
    gq_harness_opts ho;
    gq_harness_opts_default(&ho);
    ho.rounds = o->c.rounds;
    if (!o->input && (rc = measure_paths(ctx, &ho)))
        return rc == GQ_E_INTR ? GQ_OK : rc;
    if ((rc = place_solve(ctx, &ho)))
        return rc;
    json_t *pj = gq_place_to_json(o->model, o->res);
    if (!pj)
        return gq_err_set(&ctx->err, GQ_E_NOMEM, "out of memory");
    json_object_update(o->sections, pj);
    json_decref(pj);
    bool json = !strcmp(ctx->format, "json");
    if ((ctx->json_path || json) && (rc = place_document(ctx, ctx->exit_code == GQ_EXIT_INTR)))
        return rc;
    ctx->doc_stdout = json;
    if (!json)
        gq_render_place_text(stdout, o->model, o->res, o->machine);
    fflush(stdout);
    if (ctx->exit_code == GQ_EXIT_INTR) /* the verification was cut short */
        gq_cli_interrupted_note(!json, ctx->journal ? ctx->journal->path : NULL);
    return GQ_OK;
}

static void place_done(gq_ctx *ctx)
{
    place_opts *o = ctx->opts;
    json_decref(o->sections);
    json_decref(o->saved);
    gq_records_free(&o->rs);
    free(o->saved_topo);
    free(o->model);
    free(o->res);
}

static const gq_exit_doc place_exits[] = {
    {0, "a placement was chosen"},
    {1, "a figure failed or is invalid (an error, failed verification, an impossible figure)"},
    GQ_EXITDOC_USAGE,
    GQ_EXITDOC_NODEV,
    GQ_EXITDOC_BUSY,
    {7, "--tp: no collectives here (NCCL not found)"},
    GQ_EXITDOC_INTR,
    GQ_EXITDOC_END,
};

const gq_frame_cmd gq_frame_place = {
    .name = "place",
    .summary = "place prefill/decode/offload/replica roles on measured paths, then verify",
    .usage = "usage: gpuqual place [--prefill N --decode M] [--offload K] [--replicas R]\n"
             "                     [--input domains.json|card.json] [--no-verify] [options]\n\n"
             "Choose GPUs for serving roles from measured paths and explain each choice:\n"
             "  prefill->decode pairs on the fastest paths while all hand off at once (with P2P domains\n"
             "  {0-3} and {4-7}: {0,1}->{2,3} and {4,5}->{6,7}, not 0-3 -> 4-7); KV offload workers whose\n"
             "  host paths do not collide (one per shared host budget); replicas on separate host budgets.\n"
             "Then verify: run exactly the concurrent pattern the mapping implies, and the naive mapping's\n"
             "(GPUs in index order), and report predicted against measured and the gain.\n"
             "Without --input it first measures what it needs (the 'gpuqual domains' probes).\n\n",
    .opts = {.name = "place",
             .formats = "table,json",
             .tabs = tabs,
             .ntab = NTABS,
             .defaults = place_defaults,
             .bounds = place_bounds,
             .omit = "verify,method"},
    .opts_size = sizeof(place_opts),
    .exits = place_exits,
    .examples = "  gpuqual place --prefill 4 --decode 4 --sim rtxpro6000x8\n"
                "  gpuqual place --tp 4 --sim rtx4090x8\n"
                "  gpuqual place --offload 4 --input domains.json\n",
    .needs = GQ_FRAME_BACKEND | GQ_FRAME_JOURNAL | GQ_FRAME_MEASURES,
    .prepare = place_prepare,
    .check = place_check,
    .run = place_run,
    .done = place_done,
};
