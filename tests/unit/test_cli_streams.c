/* Saved runs read from streams (cli/outputs.h): report, compare, place
 * --input and kv --input take "-" for stdin, and a pipe or a FIFO as they take
 * a file. Each stream's output is held to the same command on the file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

static char dir[64];
static char doc[128], jrn[128];

/* Runs "sh -c CMD" with stdout and stderr into DIR/out.txt and DIR/err.txt;
 * returns the exit code and the outputs (the caller frees them). */
static int sh(const char *cmd, char **out, char **err)
{
    char full[2048];
    snprintf(full, sizeof full, "cd '%s' && ( %s ) >'%s/out.txt' 2>'%s/err.txt'", dir, cmd, dir, dir);
    int st = system(full);
    assert_true(st != -1 && WIFEXITED(st));
    const char *names[2] = {"out.txt", "err.txt"};
    char **bufs[2] = {out, err};
    for (int k = 0; k < 2; k++) {
        char p[160];
        snprintf(p, sizeof p, "%s/%s", dir, names[k]);
        FILE *f = fopen(p, "r");
        assert_non_null(f);
        char *b = calloc(1, 1 << 20);
        assert_non_null(b);
        size_t n = fread(b, 1, (1 << 20) - 1, f);
        b[n] = 0;
        fclose(f);
        *bufs[k] = b;
    }
    return WEXITSTATUS(st);
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/gq-streams-XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    snprintf(doc, sizeof doc, "%s/r.json", dir);
    snprintf(jrn, sizeof jrn, "%s/j.jsonl", dir);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "%s run --sim h200x2 -i 2 -q --json '%s' --journal '%s' >/dev/null 2>&1",
             GQ_BIN, doc, jrn);
    return system(cmd) == 0 ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* `report` of a stream prints what `report` of the file prints, exit code included. */
static void same_as_file(const char *stream_cmd, const char *file_cmd, int want_exit)
{
    char *o1, *e1, *o2, *e2;
    int r1 = sh(stream_cmd, &o1, &e1), r2 = sh(file_cmd, &o2, &e2);
    if (r1 != want_exit || r2 != want_exit || strcmp(o1, o2))
        fail_msg("'%s' (exit %d) against '%s' (exit %d), want exit %d: %s", stream_cmd, r1, file_cmd, r2,
                 want_exit, e1);
    assert_true(strlen(o1) > 100); /* a card, not a line */
    free(o1);
    free(e1);
    free(o2);
    free(e2);
}

static void test_report_streams(void **state)
{
    (void)state;
    char s[512], f[512];
    snprintf(f, sizeof f, "%s report r.json", GQ_BIN);
    snprintf(s, sizeof s, "cat r.json | %s report -", GQ_BIN);
    same_as_file(s, f, 0);
    snprintf(s, sizeof s, "cat r.json | %s report /dev/stdin", GQ_BIN);
    same_as_file(s, f, 0);
    snprintf(s, sizeof s, "rm -f fifo && mkfifo fifo && (cat r.json >fifo &) && %s report fifo", GQ_BIN);
    same_as_file(s, f, 0);
    /* a journal is recognised by its first line, then read again: it too through a pipe */
    snprintf(f, sizeof f, "%s report j.jsonl", GQ_BIN);
    snprintf(s, sizeof s, "cat j.jsonl | %s report -", GQ_BIN);
    same_as_file(s, f, 0); /* the journal of a run that ended whole reads as its document */
}

static void test_other_readers(void **state)
{
    (void)state;
    char cmd[512], *out, *err;
    snprintf(cmd, sizeof cmd, "cat r.json | %s compare - r.json", GQ_BIN);
    assert_int_equal(sh(cmd, &out, &err), 0);
    assert_non_null(strstr(out, " figures in every run, 0 regressions"));
    free(out);
    free(err);
    snprintf(cmd, sizeof cmd, "cat r.json | %s place --input - --prefill 1 --decode 1", GQ_BIN);
    assert_int_equal(sh(cmd, &out, &err), 0);
    assert_non_null(strstr(out, "domains: {0,1}"));
    free(out);
    free(err);
    snprintf(cmd, sizeof cmd,
             "cat r.json | %s kv --input - --kv-dtype bf16 --layers 80 --kv-heads 8 --head-dim 128 "
             "--tokens 8k",
             GQ_BIN);
    assert_int_equal(sh(cmd, &out, &err), 0);
    assert_non_null(strstr(out, "KV handoff GPU 0 -> GPU 1"));
    free(out);
    free(err);
}

/* Refusals: one line, exit 2, the stream named as the user gave it. */
static void refused(const char *cmd, const char *text)
{
    char *out, *err;
    int rc = sh(cmd, &out, &err);
    char *nl = strchr(err, '\n');
    if (rc != 2 || !strstr(err, text) || strstr(err, "/proc/self") || !nl || nl[1])
        fail_msg("'%s': exit %d, want 2 and one line with '%s': %s", cmd, rc, text, err);
    free(out);
    free(err);
}

static void test_refusals(void **state)
{
    (void)state;
    char cmd[512];
    snprintf(cmd, sizeof cmd, "%s report - </dev/null", GQ_BIN);
    refused(cmd, "'<stdin>' is not JSON");
    snprintf(cmd, sizeof cmd, "echo '{\"tool\":\"gpuqual\",' | %s report -", GQ_BIN);
    refused(cmd, "'<stdin>' is not JSON (line 2");
    /* stopped at the first byte, not after reading 1 GiB of zeros */
    snprintf(cmd, sizeof cmd, "%s report /dev/zero", GQ_BIN);
    refused(cmd, "'/dev/zero' is not JSON");
    /* an endless stream that starts with blanks: the first other byte of any
     * read chunk (here the 'x' of " xy"), not only a chunk's first byte, stops
     * the read; never spooled up to the document limit */
    snprintf(cmd, sizeof cmd, "yes ' xy' | %s report -", GQ_BIN);
    refused(cmd, "'<stdin>' is not JSON (line 1: '[' or '{' expected near 'xy')");
    snprintf(cmd, sizeof cmd, "cat r.json | %s compare - -", GQ_BIN);
    refused(cmd, "'-' (stdin) is given 2 times; stdin can be read once");
    snprintf(
        cmd, sizeof cmd,
        "printf '{\"tool\":\"gpuqual\",\"schema_version\":99}' | %s place --input - --prefill 1 --decode 1",
        GQ_BIN);
    refused(cmd, "'<stdin>' has schema_version 99, newer than this gpuqual reads");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_report_streams),
        cmocka_unit_test(test_other_readers),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
