/* No line of gpuqual's human-readable output is wider than 100 columns
 * (UTF-8 code points) when stdout is not a terminal, nor than the
 * terminal's width on one: every command's --help,
 * and the typical output of every command on the simulated machines. The
 * failure lists each offending command and line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <pty.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/outwrap.h"

#define WIDTH 100

static char tmpdir[64];

static int cols(const char *s, size_t n)
{
    int c = 0;
    for (size_t i = 0; i < n; i++)
        c += ((unsigned char)s[i] & 0xC0) != 0x80;
    return c;
}

/* Runs `gpuqual ARGS` (stderr dropped); appends every stdout line wider
 * than WIDTH, or cut short with "...", to report. Returns the number of such lines; fails the test
 * when the command does not run (exit 2 or 3, or a signal). */
static int check(const char *args, char **report, size_t *rlen)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s %s 2>/dev/null", GQ_BIN, args);
    char *line;
    /* @EX@: the examples folder; @TMP@: this test's folder */
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", cmd);
    for (const char *pat[] = {"@EX@", "@TMP@"}, **p = pat; p < pat + 2; p++)
        while ((line = strstr(buf, *p))) {
            char rest[1024];
            snprintf(rest, sizeof rest, "%s", line + strlen(*p));
            snprintf(line, sizeof buf - (size_t)(line - buf), "%s%s", p == pat ? GQ_EXAMPLES : tmpdir, rest);
        }
    FILE *f = popen(buf, "r");
    assert_non_null(f);
    char *l = NULL;
    size_t cap = 0;
    ssize_t n;
    int bad = 0, lineno = 0, nlines = 0;
    while ((n = getline(&l, &cap, f)) > 0) {
        lineno++;
        nlines++;
        if (l[n - 1] == '\n')
            l[--n] = 0;
        int c = cols(l, (size_t)n);
        /* a line cut short ("... 53...") instead of wrapped */
        bool cut = n >= 3 && !strcmp(l + n - 3, "...");
        if (c <= WIDTH && !cut)
            continue;
        bad++;
        char item[512];
        int k = snprintf(item, sizeof item, "  gpuqual %s: line %d, %d columns%s: %.120s\n", args, lineno, c,
                         cut ? ", cut short" : "", l);
        *report = realloc(*report, *rlen + (size_t)k + 1);
        memcpy(*report + *rlen, item, (size_t)k + 1);
        *rlen += (size_t)k;
    }
    free(l);
    int st = pclose(f);
    int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
    if (code == 2 || code == 3 || code >= 128)
        fail_msg("gpuqual %s did not run (exit %d)", args, code);
    if (nlines == 0)
        fail_msg("gpuqual %s printed nothing", args);
    return bad;
}

/* Whether this gpuqual has fleet: `gpuqual --version` says "mpi: yes" (the
 * sanitizer build of CI is made without MPI). */
static bool built_with_mpi(void)
{
    FILE *f = popen(GQ_BIN " --version", "r");
    assert_non_null(f);
    char line[256];
    bool yes = false;
    while (fgets(line, sizeof line, f))
        yes |= !strncmp(line, "mpi: yes", 8);
    pclose(f);
    return yes;
}

static void finish(int bad, char *report)
{
    if (bad)
        fail_msg("%d lines wider than %d columns or cut short:\n%s", bad, WIDTH, report);
    free(report);
}

static void test_help(void **state)
{
    (void)state;
    char *report = NULL;
    size_t rlen = 0;
    int bad = check("--help", &report, &rlen);
    for (const gq_command *c = gq_commands; c->name; c++) {
        char a[64];
        snprintf(a, sizeof a, "%s --help", c->name);
        bad += check(a, &report, &rlen);
    }
    finish(bad, report);
}

/* The typical output of each command on each simulated machine. */
static void test_outputs(void **state)
{
    (void)state;
    static const char *const sims[] = {"h200x2", "rtx4090x8", "rtxpro6000x8", "a100x6"};
    static const char *const per_sim[] = {
        "topo --sim %s",
        "run --list --sim %s",
        "run --sim %s -i 2",
        "domains --plan-only --sim %s",
        "domains --sim %s -i 2",
        "sweep --sim %s -i 2",
        "pairs 0:1 --sim %s -i 2",
        "place --sim %s --prefill 1 --decode 1 -b 1 -i 1",
        "kv --sim %s --layers 80 --kv-heads 8 --head-dim 128 --kv-dtype bf16 --tokens 8000 -i 2",
        "stress --sim %s -d 2s",
        "card --sim %s -o @TMP@/card-%s",
        "report @TMP@/card-%s/card.json",
        "compare @TMP@/card-%s/card.json @TMP@/card-%s/card.json",
    };
    static const char *const once[] = {
        "place --sim rtx4090x8 --prefill 4 --decode 4 -b 1 -i 1",
        "pairs 0:1,2:3 --vs 0:2,1:3 --sim rtxpro6000x8 -i 2",
        "topo --sim @EX@/topologies/big64.topo",
        "run --list --sim @EX@/topologies/big64.topo",
        "domains --plan-only --sim @EX@/topologies/big64.topo",
        "domains --sim @EX@/topologies/big64.topo -i 1",
        "place --sim @EX@/topologies/big64.topo --prefill 4 --decode 4 -b 1 -i 1",
        "stress --sim @EX@/topologies/big64.topo -d 2s",
        "card --sim @EX@/topologies/big64.topo -o @TMP@/card-big64",
        "run -t device_to_device_memcpy_read_ce --sim @EX@/topologies/big64.topo --gpus 0-11 -i 1",
        "run -t host_to_device_memcpy_ce --sim @EX@/topologies/big64.topo -i 1",
        /* a fleet of one node (no mpirun): its summary lines are the longest of any command */
        "fleet --sim h200x2 --stress 2s -o @TMP@/fleet",
        "report @TMP@/fleet/fleet.json",
    };
    char *report = NULL;
    size_t rlen = 0;
    int bad = 0;
    for (size_t s = 0; s < sizeof sims / sizeof *sims; s++)
        for (size_t k = 0; k < sizeof per_sim / sizeof *per_sim; k++) {
            char a[512];
            snprintf(a, sizeof a, per_sim[k], sims[s], sims[s], sims[s]);
            bad += check(a, &report, &rlen);
        }
    bool mpi = built_with_mpi();
    for (size_t k = 0; k < sizeof once / sizeof *once; k++)
        if (mpi || (strncmp(once[k], "fleet ", 6) && !strstr(once[k], "/fleet/"))) /* fleet needs MPI */
            bad += check(once[k], &report, &rlen);
    finish(bad, report);
}

/* --json - puts the document on stdout after the table: its long strings
 * stay on one line (wrapping them would break the JSON); the same for a
 * CSV file on stdout. */
static void test_json_on_stdout_not_wrapped(void **state)
{
    (void)state;
    FILE *f = popen(GQ_BIN " domains --sim rtxpro6000x8 -i 2 --json - 2>/dev/null", "r");
    assert_non_null(f);
    char *l = NULL;
    size_t cap = 0;
    ssize_t n;
    int long_strings = 0;
    while ((n = getline(&l, &cap, f)) > 0)
        if (cols(l, (size_t)n) > WIDTH + 1 && l[strspn(l, " ")] == '"')
            long_strings++;
    assert_int_equal(pclose(f), 0);
    assert_true(long_strings > 0);
    /* stress's CSV on stdout: one row per line, as its header says */
    f = popen(GQ_BIN " stress --sim h200x2 -d 2s --csv - 2>/dev/null", "r");
    assert_non_null(f);
    int header = 0;
    while ((n = getline(&l, &cap, f)) > 0)
        header += !strncmp(l, "gpu,t_s,", 8) && strstr(l, ",tflops");
    free(l);
    assert_int_equal(pclose(f), 0);
    assert_int_equal(header, 1);
}

/* On a terminal the width is the terminal's: 80 columns here. */
static void test_terminal_width(void **state)
{
    (void)state;
    static const char *const runs[][8] = {
        {"topo", "--sim", "a100x6", NULL},
        {"run", "--list", "--sim", "h200x2", NULL},
        {"run", "-t", "device_to_device_memcpy_read_ce", "--sim", "rtxpro6000x8", "-i", "1", NULL},
        {"domains", "--sim", "rtx4090x8", "-i", "2", NULL},
        {"run", "--help", NULL},
        {"--help", NULL},
    };
    for (size_t k = 0; k < sizeof runs / sizeof *runs; k++) {
        struct winsize ws = {.ws_row = 24, .ws_col = 80};
        int master;
        pid_t pid = forkpty(&master, NULL, NULL, &ws);
        assert_true(pid >= 0);
        if (pid == 0) {
            int null = open("/dev/null", O_WRONLY);
            dup2(null, STDERR_FILENO);
            const char *argv[10] = {GQ_BIN};
            for (int i = 0; runs[k][i]; i++)
                argv[i + 1] = runs[k][i];
            execv(GQ_BIN, (char *const *)argv);
            _exit(127);
        }
        char out[1 << 16];
        size_t n = 0;
        ssize_t r;
        while (n < sizeof out - 1 && (r = read(master, out + n, sizeof out - 1 - n)) > 0)
            n += (size_t)r;
        out[n] = 0;
        close(master);
        int st;
        waitpid(pid, &st, 0);
        assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
        int lines = 0;
        for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
            size_t len = strlen(line);
            if (len && line[len - 1] == '\r') /* the terminal's own \r\n */
                line[--len] = 0;
            lines++;
            if (cols(line, len) > 80)
                fail_msg("gpuqual %s %s on an 80-column terminal: %d columns: %s", runs[k][0],
                         runs[k][1] ? runs[k][1] : "", cols(line, len), line);
        }
        assert_true(lines > 3);
    }
}

/* The narrowest width that wraps is 20 columns: gq_outwrap_begin(19) leaves
 * stdout as it is; at 20 a long line is broken into lines of at most 20. */
static void test_narrowest_width(void **state)
{
    (void)state;
    char path[300];
    snprintf(path, sizeof path, "%s/narrow.txt", tmpdir);
    fflush(stdout);
    int saved = dup(STDOUT_FILENO);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(saved >= 0 && fd >= 0);
    dup2(fd, STDOUT_FILENO);
    close(fd);
    bool on19 = gq_outwrap_begin(19);
    if (on19)
        gq_outwrap_end();
    bool on20 = gq_outwrap_begin(20);
    printf("alpha beta gamma delta epsilon zeta eta theta iota kappa\n");
    if (on20)
        gq_outwrap_end();
    fflush(stdout);
    dup2(saved, STDOUT_FILENO);
    close(saved);
    assert_false(on19);
    assert_true(on20);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[256];
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        n++;
        line[strcspn(line, "\n")] = 0;
        if (strlen(line) > 20)
            fail_msg("a line of %zu columns at width 20: '%s'", strlen(line), line);
    }
    fclose(f);
    assert_true(n >= 3);
}

static int setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/gq-width-XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_help),
        cmocka_unit_test(test_outputs),
        cmocka_unit_test(test_terminal_width),
        cmocka_unit_test(test_json_on_stdout_not_wrapped),
        cmocka_unit_test(test_narrowest_width),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
