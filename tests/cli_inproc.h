/* Running one command in-process, as the shell would run it, for the unit
 * tests that must reach inside it (a wrapped allocator, a stand-in backend):
 * include after <cmocka.h>. */
#ifndef GQ_TESTS_CLI_INPROC_H
#define GQ_TESTS_CLI_INPROC_H

#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cli/common.h"
#include "cli/frame.h"

/* Reads what FD holds (from its start) into BUF (N bytes, NUL-terminated). */
static inline void gq_test_drain(int fd, char *buf, size_t n)
{
    size_t k = 0;
    ssize_t r;
    lseek(fd, 0, SEEK_SET);
    while (k < n - 1 && (r = read(fd, buf + k, n - 1 - k)) > 0)
        k += (size_t)r;
    buf[k] = 0;
}

/* Runs cmd with argv (NULL-terminated) with stdout and stderr in memory
 * files, new ones each run (a stream's cached offset must not outlive its
 * file); returns the exit code, stderr's text in err and, when out is not
 * NULL, stdout's in out. */
static inline int gq_test_run_cmd(const gq_frame_cmd *cmd, char **argv, char *err, size_t n, char *out,
                                  size_t nout)
{
    int argc = 0;
    while (argv[argc])
        argc++;
    int ofd = memfd_create("gq-test-out", MFD_CLOEXEC), efd = memfd_create("gq-test-err", MFD_CLOEXEC);
    assert_true(ofd >= 0 && efd >= 0);
    fflush(stdout);
    fflush(stderr);
    int save_err = dup(STDERR_FILENO), save_out = dup(STDOUT_FILENO);
    dup2(efd, STDERR_FILENO);
    dup2(ofd, STDOUT_FILENO);
    gq_cli_errors = 0; /* as in a fresh process */
    int code = gq_frame_main(cmd, argc, argv);
    fflush(stdout);
    fflush(stderr);
    dup2(save_err, STDERR_FILENO);
    dup2(save_out, STDOUT_FILENO);
    close(save_err);
    close(save_out);
    gq_test_drain(efd, err, n);
    if (out)
        gq_test_drain(ofd, out, nout);
    close(efd);
    close(ofd);
    return code;
}

#endif
