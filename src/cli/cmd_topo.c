/* gpuqual topo: what the machine is (GPUs, links, P2P, NUMA, PCIe tree), from
 * CUDA discovery, the simulator, or a saved snapshot. */
#include <jansson.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/common.h"
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
     .help = "replay discovery from a snapshot FILE instead of asking the GPUs (no GPU needed)"},
    GQ_OPT_END,
};
/* clang-format on */
#undef OFF

static const gq_opt *const tabs[] = {gq_common_output_opts, gq_common_backend_opts, topo_own_opts};
#define NTABS ((int)(sizeof tabs / sizeof tabs[0]))

static void help(void)
{
    printf("usage: gpuqual topo [options]\n\n"
           "Show the GPUs (name, UUID, memory, bus id, PCIe link now and max with its per-direction\n"
           "GB/s, NUMA node, local CPUs, power limit), the links between them (NVLinks, PCIe level\n"
           "as in nvidia-smi topo -m, P2P from CUDA and NVML), the driver and CUDA versions, the host\n"
           "(CPU, sockets, NUMA nodes, VM) and the PCIe tree. Exit 0 when a GPU was found, 3 when\n"
           "there is no GPU or driver (so `gpuqual topo -q` tests for one).\n\n"
           "options:\n");
    gq_opts_help(stdout, tabs, NTABS);
}

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

int gq_cmd_topo(int argc, char **argv)
{
    topo_opts o;
    gq_err err = {0};
    gq_backend be = {0};
    bool opened = false, want_help = false;
    const char *pos[1];
    int npos = 0, rc = GQ_OK;
    json_t *doc = NULL, *snap = NULL, *options = NULL;
    gq_topo *all = calloc(1, sizeof *all), *shown = calloc(1, sizeof *shown);

    memset(&o, 0, sizeof o);
    if (!all || !shown) {
        rc = gq_err_set(&err, GQ_E_NOMEM, "out of memory");
        goto fail;
    }
    if ((rc = gq_opts_parse(tabs, NTABS, &o, argc, argv, 2, pos, 0, &npos, &want_help, &err)))
        goto fail;
    if (want_help) {
        help();
        goto out;
    }
    if (strcmp(o.c.format, "table") != 0 && strcmp(o.c.format, "json") != 0) {
        rc = gq_err_set(&err, GQ_E_USAGE, "topo: --format %s is not available here; use table or json",
                        o.c.format);
        goto fail;
    }
    if (o.from_snapshot && o.c.sim) {
        rc = gq_err_set(&err, GQ_E_USAGE,
                        "--from-snapshot and --sim both say which machine to show; give one of them");
        goto fail;
    }
    if (o.c.sim_fault && !o.c.sim) {
        rc = gq_err_set(&err, GQ_E_USAGE,
                        "--sim-fault needs --sim: faults can only be injected into a simulation");
        goto fail;
    }
    /* Refuse unwritable outputs before any discovery is done. */
    if ((rc = gq_cli_check_writable(o.c.json_path, &err)) ||
        (rc = gq_cli_check_writable(o.save_snapshot, &err)))
        goto fail;

    if (o.from_snapshot) {
        if ((rc = gq_snapshot_load(o.from_snapshot, all, &err)))
            goto fail;
        if ((rc = gq_parse_gpu_list(o.c.gpus, all->ngpu, o.c.gpus_sel, &o.c.ngpus_sel, &err)))
            goto fail;
    } else {
        if ((rc = gq_cli_open(&o.c, &be, all, &err)))
            goto fail;
        opened = true;
    }
    if ((rc = gq_topo_select(all, o.c.gpus_sel, o.c.ngpus_sel, shown, &err)))
        goto fail;

    if (o.save_snapshot) {
        /* The whole machine, whatever --gpus shows. */
        if (!(snap = gq_snapshot_to_json(all))) {
            rc = gq_err_set(&err, GQ_E_NOMEM, "out of memory");
            goto fail;
        }
        if ((rc = gq_json_write_file(snap, o.save_snapshot, &err)))
            goto fail;
    }
    bool need_doc = o.c.json_path || !strcmp(o.c.format, "json");
    if (need_doc) {
        options = gq_opts_to_json(tabs, NTABS, &o);
        if (!options || !(doc = gq_render_topo_json(shown, options))) {
            rc = gq_err_set(&err, GQ_E_NOMEM, "out of memory");
            goto fail;
        }
    }
    if (o.c.json_path && (rc = gq_json_write_file(doc, o.c.json_path, &err)))
        goto fail;
    if (!o.c.quiet) {
        for (int i = 0; i < shown->nwarnings; i++)
            gq_cli_warn("%s", shown->warnings[i]);
        if (!strcmp(o.c.format, "json")) {
            json_dumpf(doc, stdout, JSON_INDENT(2));
            fputc('\n', stdout);
        } else {
            gq_render_topo_table(stdout, shown);
        }
        fflush(stdout);
    }
    goto out;

fail:
    if (rc == GQ_E_NODEV) {
        if (!o.c.quiet)
            no_gpu_message(&err);
    } else {
        gq_cli_error("%s", err.msg);
    }
out:
    json_decref(doc);
    json_decref(snap);
    json_decref(options);
    if (opened)
        gq_backend_close(&be);
    free(all);
    free(shown);
    return gq_status_exit_code(rc);
}
