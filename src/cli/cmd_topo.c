/* gpuqual topo: what the machine is (GPUs, links, P2P, NUMA, PCIe tree), from
 * CUDA discovery, the simulator, or a saved snapshot. */
#include <jansson.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/infile.h"
#include "cli/commands.h"
#include "cli/common.h"
#include "cli/frame.h"
#include "render/render.h"
#include "render/topo_render.h"
#include "topo/snapshot.h"

typedef struct topo_opts {
    gq_common c;
    const char *save_snapshot;
    const char *from_snapshot;
} topo_opts;

#define OFF(f) offsetof(topo_opts, f)
/* clang-format off */
static const gq_opt topo_own_opts[] = {
    {.name = "save-snapshot",
     .type = GQ_OPT_STR,
     .off = OFF(save_snapshot),
     .arg = "FILE",
     .help = "record what discovery found into FILE, to replay it later with --from-snapshot"},
    {.name = "from-snapshot",
     .type = GQ_OPT_STR,
     .off = OFF(from_snapshot),
     .arg = "FILE",
     .help = "replay discovery from a snapshot FILE (at most " GQ_INFILE_TEXT_MAX_TEXT ") instead of asking the GPUs (no GPU "
             "needed)"},
    GQ_OPT_END,
};
/* clang-format on */
#undef OFF

static const gq_opt *const tabs[] = {gq_common_output_opts, gq_common_backend_opts, topo_own_opts};
#define NTABS ((int)(sizeof tabs / sizeof tabs[0]))

/* One line for "no GPU": what was wrong, then how to go on without one. */
static void no_gpu_message(const gq_err *e)
{
    char what[sizeof e->msg + 64];
    if (strstr(e->msg, "no NVIDIA GPU or driver found"))
        snprintf(what, sizeof what, "%s", e->msg);
    else
        snprintf(what, sizeof what, "no NVIDIA GPU or driver found (%s)", e->msg);
    if (strstr(what, "--sim"))
        gq_cli_error("%s", what);
    else
        gq_cli_error(
            "%s; use --sim NAME (e.g. --sim h200x2) for a simulated machine, or --from-snapshot FILE", what);
}

static void topo_fail(gq_ctx *ctx, int rc)
{
    if (rc != GQ_E_NODEV)
        gq_cli_error("%s", ctx->err.msg);
    else if (!ctx->quiet)
        no_gpu_message(&ctx->err);
}

static int topo_prepare(gq_ctx *ctx)
{
    topo_opts *o = ctx->opts;
    if (o->from_snapshot && o->c.sim)
        return gq_err_set(&ctx->err, GQ_E_USAGE,
                          "--from-snapshot and --sim both say which machine to show; give one of them");
    if (o->c.sim_fault && !o->c.sim)
        return gq_err_set(&ctx->err, GQ_E_USAGE,
                          "--sim-fault needs --sim: faults can only be injected into a simulation");
    ctx->no_backend = o->from_snapshot != NULL;
    if (o->save_snapshot && ctx->json_path && gq_outfile_check(ctx->json_path, &ctx->err))
        return GQ_E_IO;
    return gq_outfile_check(o->save_snapshot, &ctx->err);
}

static int topo_run(gq_ctx *ctx)
{
    topo_opts *o = ctx->opts;
    gq_topo *all = ctx->topo, *shown = calloc(1, sizeof *shown);
    json_t *snap = NULL, *options = NULL;
    int rc = GQ_OK;
    if (!shown)
        return gq_err_set(&ctx->err, GQ_E_NOMEM, "out of memory");
    if (o->from_snapshot &&
        ((rc = gq_snapshot_load(o->from_snapshot, all, &ctx->err)) ||
         (rc = gq_parse_gpu_list(o->c.gpus, all->ngpu, o->c.gpus_sel, &o->c.ngpus_sel, &ctx->err))))
        goto out;
    if ((rc = gq_topo_select(all, o->c.gpus_sel, o->c.ngpus_sel, shown, &ctx->err)))
        goto out;
    if (o->save_snapshot) {
        /* The whole machine, whatever --gpus shows. */
        if (!(snap = gq_snapshot_to_json(all))) {
            rc = gq_err_set(&ctx->err, GQ_E_NOMEM, "out of memory");
            goto out;
        }
        if ((rc = gq_doc_write_file(snap, o->save_snapshot, &ctx->err)))
            goto out;
    }
    bool json = !strcmp(ctx->format, "json");
    if (ctx->json_path || json) {
        options = gq_opts_to_json(tabs, NTABS, o);
        if (!options || !(ctx->doc = gq_render_topo_json(shown, options))) {
            rc = gq_err_set(&ctx->err, GQ_E_NOMEM, "out of memory");
            goto out;
        }
    }
    if (!ctx->quiet) {
        for (int i = 0; i < shown->nwarnings; i++)
            gq_cli_warn("%s", shown->warnings[i]);
        ctx->doc_stdout = json;
        if (!strcmp(ctx->format, "csv"))
            gq_render_topo_csv(stdout, shown);
        else if (!json)
            gq_render_topo_table(stdout, shown);
    }
out:
    json_decref(snap);
    json_decref(options);
    free(shown);
    return rc;
}

static const gq_exit_doc topo_exits[] = {
    {0, "a GPU was found (so `gpuqual topo -q` tests for one)"},
    {1, "an error while discovering"},
    GQ_EXITDOC_USAGE,
    GQ_EXITDOC_NODEV,
    GQ_EXITDOC_END,
};

const gq_frame_cmd gq_frame_topo = {
    .name = "topo",
    .summary = "show GPUs, links, P2P, NUMA and the PCIe tree (like nvidia-smi topo -m)",
    .usage = "usage: gpuqual topo [options]\n\n"
             "Show the GPUs (name, UUID, memory, bus id, PCIe link now and max with its per-direction\n"
             "GB/s, NUMA node, local CPUs, power limit), the links between them (NVLinks, PCIe level\n"
             "as in nvidia-smi topo -m, P2P from CUDA and NVML), the driver and CUDA versions, the host\n"
             "(CPU, sockets, NUMA nodes, VM) and the PCIe tree; each GPU's VBIOS, serial and ECC, MIG and\n"
             "persistence modes (\"not supported\" where NVML says so). --format csv: one line per GPU.\n\n",
    .opts = {.name = "topo",
             .tabs = tabs,
             .ntab = NTABS,
             .formats = "table,json,csv",
             /* topo measures nothing and takes no GPU lock: the lock options would do nothing */
             .omit = "journal,wait-busy,sim-lock"},
    .opts_size = sizeof(topo_opts),
    .exits = topo_exits,
    .examples = "  gpuqual topo\n"
                "  gpuqual topo --format json --sim rtxpro6000x8\n"
                "  gpuqual topo -q && echo \"a GPU is there\"\n",
    .needs = GQ_FRAME_BACKEND,
    .prepare = topo_prepare,
    .run = topo_run,
    .fail = topo_fail,
};
