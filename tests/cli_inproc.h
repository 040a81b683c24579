/* Running one command in-process, as the shell would run it, for the unit
 * tests that must reach inside it (a wrapped allocator, a stand-in backend):
 * include after <cmocka.h>. */
#ifndef GQ_TESTS_CLI_INPROC_H
#define GQ_TESTS_CLI_INPROC_H

#include <stdio.h>
#include <unistd.h>

#include "cli/common.h"
#include "cli/frame.h"

/* Runs cmd with argv (NULL-terminated) with stdout and stderr in temporary
 * files; returns the exit code, stderr's text in err and, when out is not
 * NULL, stdout's in out. */
static inline int gq_test_run_cmd(const gq_frame_cmd *cmd, char **argv, char *err, size_t n, char *out,
                                  size_t nout)
{
    int argc = 0;
    while (argv[argc])
        argc++;
    fflush(stdout);
    fflush(stderr);
    FILE *ef = tmpfile(), *of = tmpfile();
    assert_non_null(ef);
    assert_non_null(of);
    int save_err = dup(STDERR_FILENO), save_out = dup(STDOUT_FILENO);
    dup2(fileno(ef), STDERR_FILENO);
    dup2(fileno(of), STDOUT_FILENO);
    gq_cli_errors = 0; /* as in a fresh process */
    int code = gq_frame_main(cmd, argc, argv);
    fflush(stdout);
    fflush(stderr);
    dup2(save_err, STDERR_FILENO);
    dup2(save_out, STDOUT_FILENO);
    close(save_err);
    close(save_out);
    rewind(ef);
    size_t k = fread(err, 1, n - 1, ef);
    err[k] = 0;
    if (out) {
        rewind(of);
        k = fread(out, 1, nout - 1, of);
        out[k] = 0;
    }
    fclose(ef);
    fclose(of);
    return code;
}

#endif
