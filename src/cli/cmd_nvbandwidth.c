/* gpuqual nvbandwidth: a drop-in for nvbandwidth v0.8. It takes
 * nvbandwidth's options (its grammar: -t a b c, repeated flags, long names
 * in any case, -name as --name) and prints nvbandwidth's text or JSON line
 * for line (render/nvbw.h), measured with gpuqual's harness. Reached as
 * `gpuqual nvbandwidth ...` or through a link named `nvbandwidth`
 * (main.c). gpuqual's own --sim and --gpus may come too; GQ_SIM=NAME picks
 * a simulated machine for callers that cannot pass flags.
 *
 * Exit codes, as nvbandwidth's: 0 when the tests ran (an id that names no
 * test is an "ERROR: ..." line on stdout, and a test without a GPU pair with
 * peer access is "Waived"), 1 for invalid arguments (nvbandwidth's "ERROR:
 * Invalid Arguments" on stdout), for -t with -p and for prefixes that match
 * nothing (one line on stderr, as nvbandwidth writes it). gpuqual's own:
 * 1 when a figure failed (its test's status is "Error"), 3 no GPU,
 * 130 interrupted (the test cut short is shown with status "Error" and why;
 * the tests after it are not run). Nothing goes to stderr otherwise: no
 * progress, no warnings. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/common.h"
#include "cli/frame.h"
#include "exec/plan_run.h"
#include "measure/catalog.h"
#include "measure/harness.h"
#include "render/nvbw.h"

#define NVBW_DEFAULT_MIB 512 /* nvbandwidth v0.8's defaultBufferSize */
#define MAX_IDS GQ_OPTLIST_MAX

typedef struct nvbw_opts {
    gq_common c; /* --sim, --gpus and the simulator's options (not --journal: nothing is journalled) */
    gq_optlist tests;
    gq_optlist prefixes;
    int buffer_mib;
    int samples;
    int loop_count;
    bool list, verbose, skip_verify, no_affinity, use_mean, json, perf;
    bool parsed; /* the options parsed: a later usage error is gpuqual's own line */
    bool both;   /* -t with -p */
} nvbw_opts;

#define OFF(f) offsetof(nvbw_opts, f)

/* clang-format off */
static const gq_opt nvbw_tab[] = {
    {.name = "bufferSize", .shortname = 'b', .type = GQ_OPT_INT, .off = OFF(buffer_mib), .def = "512",
     .arg = "MiB", .help = "memcpy buffer size in MiB", .lo = 1, .hi = 1048576},
    {.name = "list", .shortname = 'l', .type = GQ_OPT_FLAG, .off = OFF(list),
     .help = "list the tests with their index, then exit"},
    {.name = "testcase", .shortname = 't', .type = GQ_OPT_LIST, .off = OFF(tests), .arg = "ID...",
     .help = "tests to run, by name or by index in nvbandwidth v0.8's list (-l); several after one flag, "
             "and the flag repeated"},
    {.name = "testcasePrefixes", .shortname = 'p', .type = GQ_OPT_LIST, .off = OFF(prefixes),
     .arg = "PREFIX...", .help = "run the tests whose names start with one of these prefixes"},
    {.name = "verbose", .shortname = 'v', .type = GQ_OPT_FLAG, .off = OFF(verbose),
     .help = "also the per-sample lines and MIN/MAX/AVG lines (JSON: min, max, average)"},
    {.name = "skipVerification", .shortname = 's', .type = GQ_OPT_FLAG, .off = OFF(skip_verify),
     .help = "skip the data check after the copies"},
    {.name = "disableAffinity", .shortname = 'd', .type = GQ_OPT_FLAG, .off = OFF(no_affinity),
     .help = "accepted for nvbandwidth's callers; gpuqual keeps its own placement of host buffers and "
             "threads"},
    {.name = "testSamples", .shortname = 'i', .type = GQ_OPT_INT, .off = OFF(samples), .def = "3",
     .arg = "N", .help = "samples (timed rounds) per figure", .lo = 1, .hi = GQ_MAX_ROUNDS},
    {.name = "useMean", .shortname = 'm', .type = GQ_OPT_FLAG, .off = OFF(use_mean),
     .help = "report the mean of the samples instead of the median"},
    {.name = "json", .shortname = 'j', .type = GQ_OPT_FLAG, .off = OFF(json),
     .help = "print nvbandwidth's JSON instead of its text"},
    {.name = "loopCount", .type = GQ_OPT_INT, .off = OFF(loop_count), .arg = "N",
     .help = "copies per sample; without it gpuqual sizes each sample (about 0.1 s) so that concurrent "
             "copies overlap", .lo = 1, .hi = 10000000},
    {.name = "perfFormatter", .type = GQ_OPT_FLAG, .off = OFF(perf),
     .help = "\"&&&& PERF\" lines in place of SUM lines"},
    GQ_OPT_END,
};
/* clang-format on */
#undef OFF

/* nvbandwidth's command line: boost program_options' style. */
static const gq_opt_grammar nvbw_grammar = {
    .multi_values = true,
    .single_dash_long = true,
    .case_fold = true,
    .whole_values = true,
};

static const gq_opt *const tabs[] = {gq_common_backend_opts, nvbw_tab};

static void info_of(const gq_ctx *ctx, gq_nvbw_info *in)
{
    const nvbw_opts *o = ctx->opts;
    memset(in, 0, sizeof *in);
    in->version = gq_version;
    in->git = gq_git_rev;
    in->simulated = o->c.sim || (ctx->opened && ctx->topo->simulated);
    in->verbose = o->verbose;
    in->perf = o->perf;
    if (o->buffer_mib < NVBW_DEFAULT_MIB)
        in->warning = "NOTE: You have chosen a buffer size that is smaller than the default buffer size. It "
                      "is suggested to use the default buffer size (64MB) to achieve maximal peak bandwidth.";
}

static int nvbw_prepare(gq_ctx *ctx)
{
    nvbw_opts *o = ctx->opts;
    o->parsed = true;
    const char *env = getenv("GQ_SIM");
    if (!o->c.sim && env && *env)
        o->c.sim = env;
    o->both = o->tests.n > 0 && o->prefixes.n > 0;
    if (o->list || o->both)
        ctx->no_backend = true;
    return GQ_OK;
}

/* The ids to run: -t's in order (each as often as given), the tests the
 * prefixes match in list order, or every test. Returns the count, or -1
 * when prefixes match nothing. */
static int ids_of(const nvbw_opts *o, const char **ids)
{
    int n = 0;
    if (o->tests.n) {
        for (int i = 0; i < o->tests.n; i++)
            ids[n++] = o->tests.item[i];
        return n;
    }
    for (int k = 0; k < GQ_NVBW_NTESTS; k++) {
        bool take = o->prefixes.n == 0;
        for (int i = 0; i < o->prefixes.n && !take; i++)
            take = !strncmp(gq_nvbw_cases[k].name, o->prefixes.item[i], strlen(o->prefixes.item[i]));
        if (take)
            ids[n++] = gq_nvbw_cases[k].name;
    }
    return n == 0 ? -1 : n;
}

/* One test: plan it, measure it, lay it out. Waived when the plan is empty
 * (no GPU pair with peer access: nvbandwidth's filter). */
static int measure(gq_ctx *ctx, const gq_test *t, const gq_harness_opts *ho, gq_nvbw_result *res,
                   gq_recordset *rs, bool *interrupted)
{
    nvbw_opts *o = ctx->opts;
    gq_plan_opts po = {.bytes = (uint64_t)o->buffer_mib * GQ_MiB,
                       .host_numa = GQ_NUMA_LOCAL,
                       .numa_nodes = ctx->topo->numa_nodes,
                       .ngpus = o->c.ngpus_sel};
    memcpy(po.gpus, o->c.gpus_sel, sizeof po.gpus);
    gq_plan plan;
    int rc = gq_catalog_plan(t, ctx->topo, &po, &plan, &ctx->err);
    if (rc)
        return rc;
    if (plan.n == 0) {
        memset(res, 0, sizeof *res);
        snprintf(res->name, sizeof res->name, "%s", t->name);
        res->status = GQ_NVBW_WAIVED;
        gq_plan_free(&plan);
        return GQ_OK;
    }
    gq_exec_result xr;
    gq_exec_opts xo = {0};
    rc = gq_exec_plans(&ctx->be, ctx->topo, &plan, 1, ho, NULL, &xo, rs, &xr, &ctx->err);
    *interrupted = xr.interrupted;
    if (!rc)
        gq_nvbw_build(ctx->topo, rs, t->name, o->use_mean, res);
    if (!rc && xr.interrupted) { /* a test cut short never reads as passed */
        res->status = GQ_NVBW_ERROR;
        snprintf(res->msg, sizeof res->msg,
                 "interrupted (Ctrl-C) before the test finished: the cells it did not measure are N/A");
    }
    gq_plan_free(&plan);
    return rc;
}

/* -l, and -t with -p: what nvbandwidth does before it looks at the GPUs. */
static int early(gq_ctx *ctx, const gq_nvbw_info *in)
{
    nvbw_opts *o = ctx->opts;
    const char *both = "You cannot specify both testcase and testcasePrefix options at the same time";
    if (o->json && o->both) {
        json_t *doc = gq_nvbw_json(NULL, NULL, 0, in, both);
        gq_nvbw_json_print(stdout, doc);
        json_decref(doc);
    } else if (!o->json) {
        gq_nvbw_text_version(stdout, in);
        if (o->list)
            gq_nvbw_text_list(stdout);
        else
            fprintf(stderr, "%s\n", both);
    }
    ctx->exit_code = o->list ? 0 : 1;
    return GQ_OK;
}

static int nvbw_run(gq_ctx *ctx)
{
    nvbw_opts *o = ctx->opts;
    gq_nvbw_info in;
    info_of(ctx, &in);
    if (o->list || o->both)
        return early(ctx, &in);
    FILE *f = stdout;
    if (!o->json) {
        gq_nvbw_text_version(f, &in);
        if (in.warning)
            fprintf(f, "%s\n", in.warning);
        gq_nvbw_text_machine(f, ctx->topo);
    }
    const char *ids[MAX_IDS > GQ_NVBW_NTESTS ? MAX_IDS : GQ_NVBW_NTESTS];
    int nids = ids_of(o, ids);
    if (nids < 0) {
        const char *msg = "Specified list of testcase prefixes did not match any testcases";
        if (o->json) {
            json_t *doc = gq_nvbw_json(ctx->topo, NULL, 0, &in, msg);
            gq_nvbw_json_print(f, doc);
            json_decref(doc);
        } else
            fprintf(stderr, "%s\n", msg);
        ctx->exit_code = 1;
        return GQ_OK;
    }
    gq_harness_opts ho;
    gq_harness_opts_default(&ho);
    ho.rounds = o->samples;
    if (o->loop_count > 0)
        ho.reps = o->loop_count;
    ho.verify = !o->skip_verify;
    gq_nvbw_result *res = calloc((size_t)nids, sizeof *res);
    if (!res)
        return gq_err_set(&ctx->err, GQ_E_NOMEM, "out of memory");
    int rc = GQ_OK, failed = 0, n = 0;
    bool interrupted = false;
    for (; n < nids && !rc && !interrupted; n++) {
        char msg[160];
        gq_recordset rs = {0};
        int k = gq_nvbw_find(ids[n], msg, sizeof msg);
        const gq_test *t = k >= 0 ? gq_catalog_find(gq_nvbw_cases[k].name) : NULL;
        if (!t) {
            snprintf(res[n].name, sizeof res[n].name, "%s", ids[n]);
            res[n].status = GQ_NVBW_NOTFOUND;
            snprintf(res[n].msg, sizeof res[n].msg, "%s", k >= 0 ? "not in this build" : msg);
        } else {
            rc = measure(ctx, t, &ho, &res[n], &rs, &interrupted);
            failed += !rc && res[n].status == GQ_NVBW_ERROR;
        }
        if (!rc && !o->json) {
            gq_nvbw_text_result(f, &res[n], &in, &rs);
            fflush(f);
        }
        gq_records_free(&rs);
    }
    if (!rc && o->json) {
        json_t *doc = gq_nvbw_json(ctx->topo, res, n, &in, NULL);
        gq_nvbw_json_print(f, doc);
        json_decref(doc);
    } else if (!rc)
        gq_nvbw_text_note(f);
    free(res);
    if (rc)
        return rc;
    ctx->exit_code = interrupted ? GQ_EXIT_INTR : failed ? GQ_EXIT_FAIL : GQ_EXIT_OK;
    return GQ_OK;
}

/* Invalid arguments: nvbandwidth's block on stdout, exit 1. Anything
 * else: gpuqual's one line on stderr. */
static void nvbw_fail(gq_ctx *ctx, int rc)
{
    nvbw_opts *o = ctx->opts;
    if (rc != GQ_E_USAGE || o->parsed) {
        gq_cli_error("%s", ctx->err.msg[0] ? ctx->err.msg : "nvbandwidth failed");
        return;
    }
    gq_nvbw_info in = {.version = gq_version, .git = gq_git_rev, .simulated = o->c.sim != NULL};
    gq_nvbw_text_version(stdout, &in);
    printf("ERROR: Invalid Arguments \n%s :\n\n", ctx->err.msg);
    fputs(ctx->cmd->usage, stdout);
    printf("options:\n");
    gq_optset_help(stdout, &ctx->cmd->opts, gq_opts_help_width);
    printf("\n");
    ctx->exit_code = 1;
}

static const gq_exit_doc nvbandwidth_exits[] = {
    {0, "the tests ran (an unknown test is an ERROR line on stdout; a test without peer access is Waived)"},
    {1, "invalid arguments (nvbandwidth's \"ERROR: Invalid Arguments\"), or a figure failed"},
    GQ_EXITDOC_NODEV,
    GQ_EXITDOC_BUSY,
    GQ_EXITDOC_INTR,
    GQ_EXITDOC_END,
};

const gq_frame_cmd gq_frame_nvbandwidth = {
    .name = "nvbandwidth",
    .summary = "nvbandwidth v0.8's options, text and JSON, measured by gpuqual (a drop-in)",
    .usage = "usage: gpuqual nvbandwidth [--sim NAME] [--gpus LIST] [nvbandwidth's options]\n"
             "       nvbandwidth [nvbandwidth's options]   (through a link named nvbandwidth)\n\n"
             "Runs nvbandwidth v0.8's tests and prints its output line for line (text, or JSON with -j),\n"
             "so that tools written for nvbandwidth read it unchanged; the first line names gpuqual.\n"
             "Options follow nvbandwidth's grammar: -t a b c, repeated flags, -name or --name in any\n"
             "case. GQ_SIM=NAME picks a simulated machine. CUDA_VISIBLE_DEVICES (indices or GPU UUIDs)\n"
             "selects and orders the GPUs, as for nvbandwidth. gpuqual's extras (spread, overlap,\n"
             "aggregates) stay out of this output; `gpuqual run` shows them.\n\n",
    .opts = {.name = "nvbandwidth",
             .tabs = tabs,
             .ntab = (int)(sizeof tabs / sizeof tabs[0]),
             .grammar = &nvbw_grammar,
             .omit = "journal"},
    .opts_size = sizeof(nvbw_opts),
    .exits = nvbandwidth_exits,
    .examples = "  gpuqual nvbandwidth -l\n"
                "  gpuqual nvbandwidth -t host_to_device_memcpy_ce -j\n"
                "  GQ_SIM=h200x2 nvbandwidth -t 0 1 2\n",
    .maxpos = 0,
    .needs = GQ_FRAME_BACKEND | GQ_FRAME_MEASURES | GQ_FRAME_NOWRAP,
    .prepare = nvbw_prepare,
    .run = nvbw_run,
    .fail = nvbw_fail,
};
