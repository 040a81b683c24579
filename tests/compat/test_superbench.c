/* SuperBench's nvbandwidth benchmark against `gpuqual nvbandwidth`.
 *
 * The rules below were written from reading microsoft/superbenchmark,
 * superbench/benchmarks/micro_benchmarks/nvbandwidth.py at commit 700d650
 * (its parser is unchanged since 266019e; 700d650 may put `numactl
 * --cpunodebind=N --membind=N` before the command): it lists the tests with `nvbandwidth --list` and keeps
 * the names matching `(\d+),\s+([\w_]+):` (a non-zero exit or anything on
 * stderr gives no tests); it runs `nvbandwidth --bufferSize N [--testcase A
 * B ...] [--skipVerification] [--disableAffinity] [--useMean] --testSamples
 * N`; it reads the text line by line, stripped: "Running X." starts a test
 * (X lower-cased, the dot cut), a line starting with "memcpy" or "memory
 * latency" is a matrix title (bw if it says bandwidth, else lat; the row and
 * column kinds are the three letters before "(row)" and "(column)"), the
 * first line starting with a digit is the column header, the next ones are
 * rows (label, then one value per column; N/A skipped), each cell a metric
 * <test>_<row><label>_<col><header>_<bw|lat>; "SUM X V" (V with a decimal
 * point) is the metric <test>_sum_<type> and resets the state (so a second
 * matrix of the same test is not read, and its SUM line becomes _sum_None);
 * "ERROR: Testcase X not found!" marks X unsupported; a listed test neither
 * run nor unsupported is waived. The tests implement those rules here and
 * hold gpuqual's output to the saved real output of nvbandwidth v0.8
 * (bench/reference/h200x2-nvbandwidth-v0.8.txt). */
#include <ctype.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "compat_util.h"

#define MAXM 4096

typedef struct sb_parse {
    char *metric[MAXM];
    double value[MAXM];
    int n;
    char executed[64][96];
    int nexec;
    char unsupported[16][96];
    int nunsup;
    /* the parser's state */
    char test[96];
    const char *type; /* "bw", "lat" or NULL (Python's None) */
    char header[64][16];
    int nheader;
    char row[8], col[8];
} sb_parse;

static void add_metric(sb_parse *p, const char *name, double v)
{
    for (int i = 0; i < p->n; i++)
        if (!strcmp(p->metric[i], name)) {
            p->value[i] = v; /* a dict: a later value replaces */
            return;
        }
    if (p->n < MAXM) {
        p->metric[p->n] = strdup(name);
        p->value[p->n++] = v;
    }
}

/* line[idx - 3:idx].lower() with idx = line.find(mark): Python's slice,
 * so a title without the mark (-1) gives the three characters before the
 * last one. */
static void lower3(const char *line, const char *mark, char *out)
{
    const char *m = strstr(line, mark);
    long len = (long)strlen(line), idx = m ? (long)(m - line) : -1;
    long a = idx - 3, b = idx;
    if (a < 0)
        a += len;
    if (b < 0)
        b += len;
    a = a < 0 ? 0 : a;
    int n = 0;
    for (long i = a; i < b && n < 7; i++)
        out[n++] = (char)tolower((unsigned char)line[i]);
    out[n] = 0;
}

/* Python's str.split(): words separated by runs of whitespace. */
static int split(char *s, char **w, int max)
{
    int n = 0;
    for (char *t = strtok(s, " \t"); t && n < max; t = strtok(NULL, " \t"))
        w[n++] = t;
    return n;
}

static void sb_line(sb_parse *p, const char *raw)
{
    char line[1024];
    while (isspace((unsigned char)*raw))
        raw++;
    snprintf(line, sizeof line, "%s", raw);
    for (size_t l = strlen(line); l && isspace((unsigned char)line[l - 1]);)
        line[--l] = 0;
    char name[96];
    if (sscanf(line, "ERROR: Testcase %95s not found!", name) == 1 && strstr(line, " not found!")) {
        for (char *c = name; *c; c++)
            *c = (char)tolower((unsigned char)*c);
        snprintf(p->unsupported[p->nunsup++ % 16], 96, "%s", name);
        return;
    }
    if (!strncmp(line, "Running", 7) && isspace((unsigned char)line[7])) {
        const char *t = line + 7;
        while (isspace((unsigned char)*t))
            t++;
        size_t l = strlen(t);
        snprintf(p->test, sizeof p->test, "%.*s", (int)(l ? l - 1 : 0), t);
        for (char *c = p->test; *c; c++)
            *c = (char)tolower((unsigned char)*c);
        snprintf(p->executed[p->nexec++ % 64], 96, "%s", p->test);
        return;
    }
    if (p->test[0] && (!strncmp(line, "memcpy", 6) || !strncmp(line, "memory latency", 14))) {
        p->type = strstr(line, "bandwidth") ? "bw" : "lat";
        lower3(line, "(row)", p->row);
        lower3(line, "(column)", p->col);
        return;
    }
    bool digit = isdigit((unsigned char)line[0]);
    if (p->test[0] && p->type && p->nheader == 0 && digit) {
        char *w[64];
        int n = split(line, w, 64);
        for (int i = 0; i < n; i++)
            snprintf(p->header[i], sizeof p->header[i], "%s", w[i]);
        p->nheader = n;
        return;
    }
    if (p->test[0] && p->type && digit) {
        char *w[65];
        int n = split(line, w, 65);
        for (int i = 1; i < n; i++) {
            if (!strcmp(w[i], "N/A"))
                continue;
            assert_true(i - 1 < p->nheader); /* Python: IndexError, the whole parse fails */
            char *end;
            double v = strtod(w[i], &end);
            assert_true(*end == 0); /* Python: float() raises */
            char m[300];
            snprintf(m, sizeof m, "%s_%s%s_%s%s_%s", p->test, p->row, w[0], p->col, p->header[i - 1],
                     p->type);
            add_metric(p, m, v);
        }
        return;
    }
    /* re.match(r'SUM (\S+) (\d+\.\d+)') */
    char key[128];
    int a = 0, b = 0;
    if (sscanf(line, "SUM %127s %n%*[0-9].%n", key, &a, &b) >= 1 && b > a &&
        isdigit((unsigned char)line[b])) {
        char m[300];
        snprintf(m, sizeof m, "%s_sum_%s", p->test, p->type ? p->type : "None");
        add_metric(p, m, strtod(line + a, NULL));
        p->test[0] = 0;
        p->type = NULL;
        p->nheader = 0;
        p->row[0] = p->col[0] = 0;
    }
}

static void sb_parse_text(sb_parse *p, const char *text)
{
    memset(p, 0, sizeof *p);
    char *copy = strdup(text);
    char *save = NULL;
    for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
        sb_line(p, l);
    free(copy);
}

static void sb_free(sb_parse *p)
{
    for (int i = 0; i < p->n; i++)
        free(p->metric[i]);
}

static int find_metric(const sb_parse *p, const char *m)
{
    for (int i = 0; i < p->n; i++)
        if (!strcmp(p->metric[i], m))
            return i;
    return -1;
}

/* `nvbandwidth --list` through the benchmark's rule: re.findall. */
static int sb_list(const char *env, char names[][96], int max)
{
    proc_out r = run_nvbw(env, "--list");
    assert_int_equal(r.rc, 0);
    assert_non_null(r.err);
    assert_string_equal(r.err, ""); /* anything on stderr: the benchmark gets no tests */
    int n = 0;
    for (const char *s = r.out; *s && n < max; s++) {
        if (!isdigit((unsigned char)*s) || (s > r.out && isdigit((unsigned char)s[-1])))
            continue;
        const char *q = s;
        while (isdigit((unsigned char)*q))
            q++;
        if (*q++ != ',' || !isspace((unsigned char)*q))
            continue;
        while (isspace((unsigned char)*q))
            q++;
        const char *w = q;
        while (isalnum((unsigned char)*q) || *q == '_')
            q++;
        if (q > w && *q == ':')
            snprintf(names[n++], 96, "%.*s", (int)(q - w), w);
    }
    proc_free(&r);
    return n;
}

static char *ref_text(void)
{
    char *t = slurp(REF_DIR "/h200x2-nvbandwidth-v0.8.txt");
    assert_non_null(t);
    return t;
}

static void test_list_matches_reference_order(void **state)
{
    (void)state;
    char names[64][96];
    int n = sb_list("GQ_SIM=h200x2", names, 64);
    sb_parse ref;
    char *t = ref_text();
    sb_parse_text(&ref, t);
    assert_int_equal(n, 35);
    assert_int_equal(ref.nexec, 35);
    for (int i = 0; i < n; i++)
        assert_string_equal(names[i], ref.executed[i]);
    sb_free(&ref);
    free(t);
}

static void test_metrics_match_reference_h200x2(void **state)
{
    (void)state;
    /* the benchmark's default command: --bufferSize 64 --testSamples 3, every test */
    proc_out r = run_nvbw("GQ_SIM=h200x2", "--bufferSize 64 --testSamples 3");
    assert_int_equal(r.rc, 0);
    assert_string_equal(r.err, "");
    assert_true(!strncmp(r.out, "nvbandwidth Version: ", 21));
    sb_parse got, ref;
    sb_parse_text(&got, r.out);
    char *t = ref_text();
    sb_parse_text(&ref, t);
    assert_true(ref.n > 100);
    for (int i = 0; i < ref.n; i++) {
        int k = find_metric(&got, ref.metric[i]);
        if (k < 0)
            fail_msg("metric %s of nvbandwidth's output is missing from gpuqual's", ref.metric[i]);
        if (strstr(ref.metric[i], "_sum_None") == NULL && !(got.value[k] > 0))
            fail_msg("metric %s is %g", ref.metric[i], got.value[k]);
    }
    for (int i = 0; i < got.n; i++)
        if (find_metric(&ref, got.metric[i]) < 0)
            fail_msg("gpuqual gives metric %s, nvbandwidth does not", got.metric[i]);
    assert_int_equal(got.n, ref.n);
    assert_int_equal(got.nunsup, 0);
    assert_int_equal(got.nexec, 35);
    sb_free(&got);
    sb_free(&ref);
    free(t);
    proc_free(&r);
}

static void test_testcase_options(void **state)
{
    (void)state;
    proc_out r = run_nvbw("GQ_SIM=h200x2", "--bufferSize 64 --testcase host_to_device_memcpy_ce "
                                           "device_to_device_memcpy_read_ce not_a_test --skipVerification "
                                           "--disableAffinity --useMean --testSamples 2");
    assert_int_equal(r.rc, 0);
    assert_string_equal(r.err, "");
    sb_parse got;
    sb_parse_text(&got, r.out);
    assert_int_equal(got.nexec, 2);
    assert_string_equal(got.executed[0], "host_to_device_memcpy_ce");
    assert_string_equal(got.executed[1], "device_to_device_memcpy_read_ce");
    assert_int_equal(got.nunsup, 1);
    assert_string_equal(got.unsupported[0], "not_a_test");
    assert_true(find_metric(&got, "host_to_device_memcpy_ce_cpu0_gpu1_bw") >= 0);
    assert_true(find_metric(&got, "device_to_device_memcpy_read_ce_gpu1_gpu0_bw") >= 0);
    assert_true(find_metric(&got, "device_to_device_memcpy_read_ce_gpu0_gpu0_bw") < 0); /* N/A */
    assert_true(find_metric(&got, "device_to_device_memcpy_read_ce_sum_bw") >= 0);
    assert_int_equal(got.n, 2 + 1 + 2 + 1);
    sb_free(&got);
    proc_free(&r);
}

/* 8 x RTX 4090 without peer access: the tests nvbandwidth v0.8 filters on a
 * GPU pair with peer access (testcase.h, filter()) are waived, the others
 * give 8 columns. */
static const char *const peer_tests[] = {
    "device_to_device_memcpy_read_ce",
    "device_to_device_memcpy_write_ce",
    "device_to_device_bidirectional_memcpy_read_ce",
    "device_to_device_bidirectional_memcpy_write_ce",
    "all_to_one_write_ce",
    "all_to_one_read_ce",
    "one_to_all_write_ce",
    "one_to_all_read_ce",
    "device_to_device_memcpy_read_sm",
    "device_to_device_memcpy_write_sm",
    "device_to_device_bidirectional_memcpy_read_sm",
    "device_to_device_bidirectional_memcpy_write_sm",
    "all_to_one_write_sm",
    "all_to_one_read_sm",
    "one_to_all_write_sm",
    "one_to_all_read_sm",
    "device_to_device_latency_sm",
};

static void test_waived_rtx4090x8(void **state)
{
    (void)state;
    char names[64][96];
    int n = sb_list("GQ_SIM=rtx4090x8", names, 64);
    assert_int_equal(n, 35);
    proc_out r = run_nvbw("GQ_SIM=rtx4090x8", "--bufferSize 64 --testSamples 1");
    assert_int_equal(r.rc, 0);
    assert_string_equal(r.err, "");
    sb_parse got;
    sb_parse_text(&got, r.out);
    int nwaived = 0;
    for (int i = 0; i < n; i++) {
        bool ran = false;
        for (int k = 0; k < got.nexec; k++)
            ran |= !strcmp(got.executed[k], names[i]);
        bool peer = false;
        for (size_t k = 0; k < sizeof peer_tests / sizeof *peer_tests; k++)
            peer |= !strcmp(peer_tests[k], names[i]);
        if (ran == peer)
            fail_msg("%s: %s on 8 GPUs without peer access", names[i], ran ? "ran" : "waived");
        nwaived += !ran;
    }
    assert_int_equal(nwaived, 17);
    assert_true(find_metric(&got, "host_to_device_memcpy_ce_cpu0_gpu7_bw") >= 0);
    /* its title has no "(row)": the benchmark names the row from "(GB/s)", for nvbandwidth too */
    assert_true(find_metric(&got, "device_local_copy_b/s0_gpu7_bw") >= 0);
    assert_true(find_metric(&got, "host_device_latency_sm_cpu0_gpu7_lat") >= 0);
    sb_free(&got);
    proc_free(&r);
}

/* 8 x RTX PRO 6000 with peer access: 8 x 8 GPU matrices, nothing waived. */
static void test_square_rtxpro6000x8(void **state)
{
    (void)state;
    proc_out r = run_nvbw("GQ_SIM=rtxpro6000x8",
                          "--bufferSize 64 --testSamples 1 --testcase device_to_device_memcpy_write_ce "
                          "device_to_device_latency_sm");
    assert_int_equal(r.rc, 0);
    sb_parse got;
    sb_parse_text(&got, r.out);
    assert_int_equal(got.nexec, 2);
    int cells = 0;
    for (int a = 0; a < 8; a++)
        for (int b = 0; b < 8; b++) {
            char m[128];
            snprintf(m, sizeof m, "device_to_device_memcpy_write_ce_gpu%d_gpu%d_bw", a, b);
            cells += find_metric(&got, m) >= 0;
            /* "Device to Device Latency ..." is not a title to the benchmark (nor for nvbandwidth's own) */
            snprintf(m, sizeof m, "device_to_device_latency_sm_gpu%d_gpu%d_lat", a, b);
            assert_true(find_metric(&got, m) < 0);
        }
    assert_int_equal(cells, 8 * 7);
    assert_true(find_metric(&got, "device_to_device_memcpy_write_ce_sum_bw") >= 0);
    sb_free(&got);
    proc_free(&r);
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
        cmocka_unit_test(test_list_matches_reference_order),
        cmocka_unit_test(test_metrics_match_reference_h200x2),
        cmocka_unit_test(test_testcase_options),
        cmocka_unit_test(test_waived_rtx4090x8),
        cmocka_unit_test(test_square_rtxpro6000x8),
    };
    return cmocka_run_group_tests(tests, NULL, teardown);
}
