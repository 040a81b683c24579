/* gpuqual: entry point; the commands are in commands.c. Built twice: the
 * program `gpuqual`, without MPI, and where Open MPI is, `gpuqual-fleet`
 * (GQ_HAVE_MPI, its own cmd_fleet.c) that `gpuqual fleet` runs in its place
 * (the Debian package gpuqual-fleet). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "backend/backend.h"
#include "cli/commands.h"
#include "cli/outwrap.h"
#include "cli/common.h"
#include "cli/manpage.h"

#ifndef GQ_HAVE_MPI
/* gpuqual-fleet beside this program (the build directory, /usr/bin): true
 * and its path in buf when it is there and executable. */
static bool fleet_program(char *buf, size_t n)
{
    char self[4096];
    ssize_t k = readlink("/proc/self/exe", self, sizeof self - 1);
    if (k <= 0)
        return false;
    self[k] = 0;
    char *slash = strrchr(self, '/');
    if (!slash)
        return false;
    *slash = 0;
    if (snprintf(buf, n, "%s/gpuqual-fleet", self) >= (int)n)
        return false;
    return access(buf, X_OK) == 0;
}
#endif

static void features(FILE *f)
{
    fprintf(f, "gpuqual %s (git %s)\n", gq_version, gq_git_rev);
    fprintf(f, "backends:");
    for (const char *const *n = gq_backend_names(); *n; n++)
        fprintf(f, " %s", *n);
    fprintf(f, "\n");
#ifdef GQ_HAVE_CUDA
    fprintf(f, "cuda: yes (built with CUDA runtime %d, linked statically)\n", GQ_CUDART_VERSION);
    fprintf(f, "cublas: loaded at run time with dlopen(\"%s\") by stress\n", GQ_CUBLAS_SONAME);
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
    fprintf(f, "mpi: yes (this is gpuqual-fleet, built with Open MPI)\n");
#else
    char fleet[4096];
    if (fleet_program(fleet, sizeof fleet))
        fprintf(f, "mpi: yes, through %s (package gpuqual-fleet); gpuqual itself has no MPI\n", fleet);
    else
        fprintf(f, "mpi: no; gpuqual fleet needs the gpuqual-fleet package (Open MPI)\n");
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
    for (const gq_command *c = gq_commands; c->name; c++)
        fprintf(f, "  %-11s %s\n", c->name, c->frame->summary);
    fprintf(f,
            "\nWith no GPU, add --sim NAME to run on a simulated machine (rtx4090x8, rtxpro6000x8, a100x6, "
            "h200x2).\n"
            "Units: GB/s = 10^9 bytes/s; buffer sizes in KiB/MiB/GiB.\n"
            "Each command's --help lists the exit statuses it can end with.\n\n");
    gq_frame_cmd all = {.exits = gq_exits_all};
    gq_frame_exit_help(f, &all, gq_opts_help_width);
}

/* "topo, run, ..." for the one-line message when no command is given. */
static const char *command_list(void)
{
    static char buf[512];
    size_t u = 0;
    buf[0] = 0;
    for (const gq_command *c = gq_commands; c->name && u < sizeof buf; c++)
        u += (size_t)snprintf(buf + u, sizeof buf - u, "%s%s", u ? ", " : "", c->name);
    return buf;
}

static const gq_command *find_cmd(const char *name)
{
    for (const gq_command *c = gq_commands; c->name; c++)
        if (!strcmp(c->name, name))
            return c;
    return NULL;
}

static int unknown_cmd(const char *name)
{
    const char *cands[32];
    int n = 0;
    for (const gq_command *c = gq_commands; c->name; c++)
        cands[n++] = c->name;
    cands[n] = NULL;
    const char *best = gq_closest(name, cands);
    if (best)
        gq_cli_error("unknown command '%s'; did you mean '%s'?", name, best);
    else
        gq_cli_error("unknown command '%s'; run 'gpuqual --help' for the list", name);
    return 2;
}

/* Called through a link named nvbandwidth: nvbandwidth's command line. */
static bool called_as_nvbandwidth(const char *argv0)
{
    const char *base = strrchr(argv0, '/');
    return !strcmp(base ? base + 1 : argv0, "nvbandwidth");
}

static int finish(int rc)
{
    /* Output that never reached stdout (a full disk, a closed pipe) must not
     * end as success. */
    errno = 0;
    if ((fflush(stdout) != 0 || ferror(stdout)) && (rc == 0 || rc == 4 || rc == 5)) {
        /* One line: a command that already said why it failed is not told twice. */
        if (!gq_cli_errors)
            gq_cli_error("writing the output to stdout failed: %s", errno ? strerror(errno)
                                                                    : gq_outwrap_errno()
                                                                        ? strerror(gq_outwrap_errno())
                                                                        : "write error");
        rc = 2;
    }
    return rc;
}

int main(int argc, char **argv)
{
    gq_backend_register_builtin();
    gq_opts_help_width = gq_frame_help_width();
    gq_outwrap_plain_stderr(); /* a terminal without UTF-8 reads ASCII (core/ascii.h) */
    if (argc >= 1 && called_as_nvbandwidth(argv[0])) {
        /* the frame reads options from argv[2]: put the command's name in argv[1] */
        char **av = calloc((size_t)argc + 2, sizeof *av);
        if (!av)
            return 1;
        av[0] = argv[0];
        av[1] = "nvbandwidth";
        for (int i = 1; i < argc; i++)
            av[i + 1] = argv[i];
        gq_cli_install_signals();
        int rc = finish(gq_frame_main(&gq_frame_nvbandwidth, argc + 1, av));
        free(av);
        return rc;
    }
    if (argc < 2) {
        gq_cli_error("no command given; expected one of %s (gpuqual --help describes them)", command_list());
        return 2;
    }
    const char *cmd = argv[1];
#ifndef GQ_HAVE_MPI
    /* fleet is gpuqual-fleet's (Open MPI): run it in this process's place, the
     * same arguments and environment (mpirun's ranks stay ranks). Without it,
     * fleet's own code says in one line what to install. */
    char fleet[4096];
    if (!strcmp(cmd, "fleet") && fleet_program(fleet, sizeof fleet)) {
        fflush(NULL);
        execv(fleet, argv);
        gq_cli_error("could not run %s for fleet: %s", fleet, strerror(errno));
        return 1;
    }
#endif
    bool is_help = !strcmp(cmd, "--help") || !strcmp(cmd, "-h"),
         is_version = !strcmp(cmd, "--version") || !strcmp(cmd, "-V") || !strcmp(cmd, "version");
    if ((is_help || is_version) && argc > 2) {
        gq_cli_error("unexpected argument '%s' after %s; it takes none%s", argv[2], cmd,
                     is_help ? " (gpuqual help COMMAND shows one command's options)" : "");
        return 2;
    }
    if (!strcmp(cmd, "help") && argc > 3) {
        gq_cli_error("unexpected argument '%s' after 'help %s'; give one command: gpuqual help %s", argv[3],
                     argv[2], argv[2]);
        return 2;
    }
    if (is_help || (!strcmp(cmd, "help") && argc < 3)) {
        gq_outwrap_begin(gq_opts_help_width); /* a terminal's width, as every command's help */
        usage(stdout);
        gq_outwrap_end();
        return 0;
    }
    if (is_version) {
        features(stdout);
        return 0;
    }
    /* Hidden, for the build: the man pages and the completion scripts (cli/manpage.h). */
    if (!strcmp(cmd, "--man")) {
        if (gq_cli_man(stdout, argc > 2 ? argv[2] : NULL) == 0)
            return 0;
        return unknown_cmd(argv[2]);
    }
    if (!strcmp(cmd, "--completion")) {
        if (argc > 2 && gq_cli_completion(stdout, argv[2]) == 0)
            return 0;
        gq_cli_error("--completion: expected bash or zsh");
        return 2;
    }
    if (!strcmp(cmd, "help")) {
        const gq_command *c = find_cmd(argv[2]);
        if (!c)
            return unknown_cmd(argv[2]);
        char *hargv[] = {argv[0], (char *)c->name, "--help", NULL};
        return gq_frame_main(c->frame, 3, hargv);
    }
    if (cmd[0] == '-') {
        gq_cli_error("unknown option '%s' before the command; usage: gpuqual <command> [options]", cmd);
        return 2;
    }
    const gq_command *c = find_cmd(cmd);
    if (!c)
        return unknown_cmd(cmd);
    gq_cli_install_signals();
    return finish(gq_frame_main(c->frame, argc, argv));
}
