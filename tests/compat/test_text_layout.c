/* nvbandwidth's text, line for line: what health-check scripts written for
 * nvbandwidth read. On sim h200x2, `nvbandwidth --bufferSize 64` (a link to
 * gpuqual) prints, from the first "Running" line to the end, the same lines
 * as nvbandwidth v0.8's saved real output
 * (bench/reference/h200x2-nvbandwidth-v0.8.txt) once every number is
 * replaced by "#": the same titles, column headers, numeric row labels, N/A
 * cells, SUM lines and closing note, in the same order; every field after a
 * row label is a number or N/A; the first line starts "nvbandwidth Version:"
 * and names gpuqual. */
#include <ctype.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "compat_util.h"

static bool numeric(const char *w)
{
    char *e;
    if (!*w)
        return false;
    strtod(w, &e);
    return *e == 0;
}

/* The line's words, numbers as "#", joined by one space. */
static void skeleton(const char *line, size_t len, char *out, size_t n)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%.*s", (int)len, line);
    size_t used = 0;
    out[0] = 0;
    for (char *w = strtok(buf, " \t"); w && used < n; w = strtok(NULL, " \t"))
        used += (size_t)snprintf(out + used, n - used, "%s%s", used ? " " : "", numeric(w) ? "#" : w);
}

typedef struct lines {
    char **v;
    int n;
} lines;

/* The skeletons from the first "Running" line on. */
static lines skeletons(const char *text)
{
    lines l = {calloc(4096, sizeof(char *)), 0};
    const char *p = strstr(text, "\nRunning ");
    assert_non_null(p);
    for (p++; *p && l.n < 4096;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        char sk[1024];
        skeleton(p, len, sk, sizeof sk);
        l.v[l.n++] = strdup(sk);
        if (!nl)
            break;
        p = nl + 1;
    }
    return l;
}

static void lines_free(lines *l)
{
    for (int i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
}

static void test_same_lines_as_nvbandwidth(void **state)
{
    (void)state;
    proc_out p = run_nvbw("GQ_SIM=h200x2", "--bufferSize 512");
    assert_int_equal(p.rc, 0);
    assert_string_equal(p.err, "");
    assert_true(!strncmp(p.out, "nvbandwidth Version: ", 21));
    const char *nl = strchr(p.out, '\n');
    assert_non_null(nl);
    char first[256];
    snprintf(first, sizeof first, "%.*s", (int)(nl - p.out), p.out);
    assert_non_null(strstr(first, "gpuqual"));
    assert_non_null(strstr(first, "(simulated)"));
    char *ref = slurp(REF_DIR "/h200x2-nvbandwidth-v0.8.txt");
    assert_non_null(ref);
    lines a = skeletons(p.out), b = skeletons(ref);
    for (int i = 0; i < a.n && i < b.n; i++)
        if (strcmp(a.v[i], b.v[i]))
            fail_msg("line %d after the first Running: gpuqual '%s', nvbandwidth '%s'", i, a.v[i], b.v[i]);
    assert_int_equal(a.n, b.n);
    /* every row: a numeric label, then numbers or N/A */
    int rows = 0;
    for (int i = 0; i < a.n; i++) {
        if (a.v[i][0] != '#' || !strchr(a.v[i], ' '))
            continue;
        rows++;
        char buf[1024];
        snprintf(buf, sizeof buf, "%s", a.v[i]);
        for (char *w = strtok(buf, " "); w; w = strtok(NULL, " "))
            if (strcmp(w, "#") && strcmp(w, "N/A"))
                fail_msg("row '%s': '%s' is not a number", a.v[i], w);
    }
    assert_true(rows >= 35);
    lines_free(&a);
    lines_free(&b);
    free(ref);
    proc_free(&p);
}

static int teardown(void **state)
{
    (void)state;
    nvbw_dir_remove();
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_lines_as_nvbandwidth),
    };
    return cmocka_run_group_tests(tests, NULL, teardown);
}
