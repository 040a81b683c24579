/* gpuqual: entry point and command table. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "backend/backend.h"
#include "cli/commands.h"
#include "cli/common.h"

#ifndef GQ_VERSION
#define GQ_VERSION "0.0.0"
#endif
#ifndef GQ_GIT_REV
#define GQ_GIT_REV "unknown"
#endif

const char gq_version[] = GQ_VERSION;
const char gq_git_rev[] = GQ_GIT_REV;

/* One row per command; help text comes from here and from each command's
 * option table (gq_cmd_*_help prints usage + options). */
static const gq_command commands[] = {
    {.name = "topo",
     .fn = gq_cmd_topo,
     .summary = "show GPUs, links, P2P, NUMA and the PCIe tree (like nvidia-smi topo -m)"},
    {.name = "run",
     .fn = gq_cmd_run,
     .summary = "run transfer tests by name (nvbandwidth's names and more); --list shows them"},
    {.name = "sweep",
     .fn = gq_cmd_sweep,
     .summary = "buffer-size sweep; fits fixed cost and asymptotic bandwidth"},
    {.name = "pairs",
     .fn = gq_cmd_pairs,
     .summary = "run GPU pairs concurrently (e.g. 0:1,2:3) and compare pairings with --vs"},
    {.name = "domains",
     .fn = gq_cmd_domains,
     .summary = "discover performance domains and shared bottlenecks from measurements"},
    {.name = "kv",
     .fn = gq_cmd_kv,
     .summary = "KV-cache handoff: bytes per token, estimates, and the measured handoff"},
    {.name = "place",
     .fn = gq_cmd_place,
     .summary = "place prefill/decode/offload/replica roles on measured paths, then verify"},
    {.name = "stress",
     .fn = gq_cmd_stress,
     .summary = "load every GPU with GEMMs, record telemetry, judge the node"},
    {.name = "card", .fn = gq_cmd_card, .summary = "the acceptance card: qualify the whole node in one run"},
    {.name = "report", .fn = gq_cmd_report, .summary = "render a saved run as HTML, Markdown or a table"},
    {.name = "compare",
     .fn = gq_cmd_compare,
     .summary = "line up figures from several saved runs and flag regressions"},
    {.name = "fleet", .fn = gq_cmd_fleet, .summary = "qualify many nodes under MPI and name the outliers"},
    {0},
};

static void features(FILE *f)
{
    fprintf(f, "gpuqual %s (git %s)\n", gq_version, gq_git_rev);
    fprintf(f, "backends:");
    for (const char *const *n = gq_backend_names(); *n; n++)
        fprintf(f, " %s", *n);
    fprintf(f, "\n");
#ifdef GQ_HAVE_CUDA
    fprintf(f, "cuda: yes (built with CUDA runtime %d)\n", GQ_CUDART_VERSION);
#else
    fprintf(f, "cuda: no (simulated backend only)\n");
#endif
    fprintf(f, "nvml: loaded at run time with dlopen(\"libnvidia-ml.so.1\")%s\n",
#ifdef GQ_HAVE_CUDA
            ""
#else
            " (unused without CUDA)"
#endif
    );
#ifdef GQ_HAVE_MPI
    fprintf(f, "mpi: yes\n");
#else
    fprintf(f, "mpi: no (gpuqual fleet needs an MPI build)\n");
#endif
}

static void usage(FILE *f)
{
    fprintf(f,
            "gpuqual %s: qualify the data paths of a multi-GPU server\n\n"
            "usage: gpuqual <command> [options]\n"
            "       gpuqual help <command> | gpuqual <command> --help | gpuqual --version\n\n"
            "commands:\n",
            gq_version);
    for (const gq_command *c = commands; c->name; c++)
        fprintf(f, "  %-9s %s\n", c->name, c->summary);
    fprintf(
        f,
        "\nWith no GPU, add --sim NAME to run on a simulated machine (rtx4090x8, rtxpro6000x8, a100x6, "
        "h200x2).\n"
        "Units: GB/s = 10^9 bytes/s; buffer sizes in KiB/MiB/GiB.\n"
        "Exit codes: 0 ok/pass, 1 failure or fail verdict, 2 bad input, 3 no GPU/driver,\n"
        "            4 warn verdict, 5 incomplete (interrupted, partial results kept), 130 interrupted.\n");
}

static const gq_command *find_cmd(const char *name)
{
    for (const gq_command *c = commands; c->name; c++)
        if (!strcmp(c->name, name))
            return c;
    return NULL;
}

static int unknown_cmd(const char *name)
{
    const char *cands[32];
    int n = 0;
    for (const gq_command *c = commands; c->name; c++)
        cands[n++] = c->name;
    cands[n] = NULL;
    const char *best = gq_closest(name, cands);
    if (best)
        gq_cli_error("unknown command '%s'; did you mean '%s'?", name, best);
    else
        gq_cli_error("unknown command '%s'; run 'gpuqual --help' for the list", name);
    return 2;
}

int main(int argc, char **argv)
{
    gq_backend_register_builtin();
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(cmd, "--version") || !strcmp(cmd, "-V") || !strcmp(cmd, "version")) {
        features(stdout);
        return 0;
    }
    if (!strcmp(cmd, "help")) {
        if (argc < 3) {
            usage(stdout);
            return 0;
        }
        const gq_command *c = find_cmd(argv[2]);
        if (!c)
            return unknown_cmd(argv[2]);
        char *hargv[] = {argv[0], (char *)c->name, "--help", NULL};
        return c->fn(3, hargv);
    }
    if (cmd[0] == '-') {
        gq_cli_error("unknown option '%s' before the command; usage: gpuqual <command> [options]", cmd);
        return 2;
    }
    const gq_command *c = find_cmd(cmd);
    if (!c)
        return unknown_cmd(cmd);
    gq_cli_install_signals();
    int rc = c->fn(argc, argv);
    /* Output that never reached stdout (a full disk, a closed pipe) must not
     * end as success. */
    errno = 0;
    if ((fflush(stdout) != 0 || ferror(stdout)) && (rc == 0 || rc == 4 || rc == 5)) {
        gq_cli_error("writing the output to stdout failed: %s", errno ? strerror(errno) : "write error");
        rc = 2;
    }
    return rc;
}
