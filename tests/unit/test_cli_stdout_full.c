/* Output to a full stdout (`gpuqual ... > /dev/full`): every command that
 * writes there fails with exit 2 and exactly one line on stderr that says
 * stdout and why (ENOSPC), never a bare "write error" and never two lines.
 * The program (GQ_BIN) runs with its stdout on /dev/full. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#define DOC GQ_TEST_DATA "/data/bad/run-ok.json"

/* Runs GQ_BIN with argv, stdout on /dev/full; returns the exit code and stderr in err. */
static int run_full(char *const argv[], char *err, size_t cap)
{
    int pe[2];
    if (pipe(pe))
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        int full = open("/dev/full", O_WRONLY);
        if (full < 0)
            _exit(126);
        dup2(full, 1);
        dup2(pe[1], 2);
        close(pe[0]);
        execv(GQ_BIN, argv);
        _exit(127);
    }
    close(pe[1]);
    size_t n = 0;
    ssize_t r;
    while (n + 1 < cap && (r = read(pe[0], err + n, cap - 1 - n)) > 0)
        n += (size_t)r;
    err[n] = 0;
    close(pe[0]);
    int st;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void expect_one_line(char *const argv[])
{
    char err[4096];
    int rc = run_full(argv, err, sizeof err);
    const char *nl = strchr(err, '\n');
    if (rc != 2 || !nl || nl[1] || !strstr(err, "stdout") || !strstr(err, "No space left on device"))
        fail_msg("gpuqual %s %s: exit %d, stderr: %s", argv[1], argv[2] ? argv[2] : "", rc, err);
}

static void test_full_stdout(void **state)
{
    (void)state;
    char *const cases[][12] = {
        {"gpuqual", "run", "--sim", "h200x2", "-t", "device_local_copy", "-i", "2", "-q", "--format", "json",
         NULL},
        {"gpuqual", "run", "--sim", "h200x2", "-t", "device_local_copy", "-i", "2", "-q", NULL},
        {"gpuqual", "report", DOC, "--format", "html", NULL},
        {"gpuqual", "report", DOC, "--format", "markdown", NULL},
        {"gpuqual", "report", DOC, "--format", "json", NULL},
        {"gpuqual", "report", DOC, NULL},
        {"gpuqual", "topo", "--sim", "h200x2", "--format", "json", NULL},
        {"gpuqual", "topo", "--sim", "h200x2", NULL},
        {"gpuqual", "compare", DOC, DOC, NULL},
        {"gpuqual", "compare", DOC, DOC, "--format", "json", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        expect_one_line(cases[i]);
    /* run's JSON document on stdout: the line says it was the JSON that
     * could not be written (gq_doc_write_file's error), not just "output" */
    char err[4096];
    assert_int_equal(run_full(cases[0], err, sizeof err), 2);
    if (strcmp(err, "gpuqual: writing the JSON to stdout failed: No space left on device\n"))
        fail_msg("run --format json > /dev/full: stderr: %s", err);
    char *const kv[] = {"gpuqual",    "kv",   "--layers", "8", "--kv-heads", "8",  "--head-dim", "128",
                        "--kv-dtype", "bf16", "--tokens", "8", "--p2p-gbps", "50", NULL};
    expect_one_line(kv);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_full_stdout),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
