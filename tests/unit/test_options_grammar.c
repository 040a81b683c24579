/* The option parser's grammar (src/core/options.c, in the library): lists,
 * KEY=VALUE, repeats, bundling, "--", per-command --format values, default
 * overrides, the iterator, help wrapping, the table of short flags, and a
 * compatibility grammar that mimics another tool's command line. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/options.h"

typedef struct gopts {
    gq_optlist tests;
    gq_optlist set;
    int rounds;
    uint64_t size;
    double threshold;
    bool quiet, all, json;
    const char *format;
    const char *out;
} gopts;

#define O(f) offsetof(gopts, f)
/* clang-format off */
static const gq_opt tab[] = {
    {.name = "test", .shortname = 't', .type = GQ_OPT_LIST, .off = O(tests), .arg = "NAME", .help = "tests to run"},
    {.name = "set", .type = GQ_OPT_KV, .off = O(set), .arg = "CHECK.KEY=VALUE", .help = "change a check's limit"},
    {.name = "rounds", .shortname = 'i', .type = GQ_OPT_INT, .off = O(rounds), .def = "5", .arg = "N",
     .help = "rounds per measurement", .lo = 1, .hi = 64},
    {.name = "buffer-size", .shortname = 'b', .type = GQ_OPT_SIZE, .off = O(size), .def = "512", .arg = "SIZE",
     .help = "bytes per copy", .unit = GQ_MiB, .lo = 1, .hi = 1e15},
    {.name = "threshold", .type = GQ_OPT_PERCENT, .off = O(threshold), .def = "5%", .arg = "PCT",
     .help = "regression threshold", .lo = 0.1, .hi = 100},
    {.name = "quiet", .shortname = 'q', .type = GQ_OPT_FLAG, .off = O(quiet), .help = "no progress"},
    {.name = "all", .shortname = 'a', .type = GQ_OPT_FLAG, .off = O(all), .help = "every figure"},
    {.name = "format", .type = GQ_OPT_ENUM, .off = O(format), .def = "table", .arg = "FMT",
     .help = "output on stdout", .choices = "table,json,csv,markdown"},
    {.name = "output", .shortname = 'o', .type = GQ_OPT_STR, .off = O(out), .arg = "FILE", .help = "write to FILE"},
    GQ_OPT_END,
};
/* clang-format on */
static const gq_opt *const tabs[] = {tab};
static const char *const overrides[] = {"buffer-size=64", NULL};
static const gq_optset set = {
    .name = "demo", .tabs = tabs, .ntab = 1, .defaults = overrides, .formats = "table,json"};

static const char *pos[8];
static int npos;
static bool help;

static int parse_with(const gq_optset *s, gopts *o, gq_err *err, va_list ap)
{
    char *argv[32] = {"gpuqual", "demo"};
    int argc = 2;
    for (char *a; (a = va_arg(ap, char *)) != NULL && argc < 31;)
        argv[argc++] = a;
    memset(o, 0, sizeof *o);
    memset(err, 0, sizeof *err);
    return gq_optset_parse(s, o, argc, argv, 2, pos, 8, &npos, &help, err);
}

static int parse(gopts *o, gq_err *err, ...)
{
    va_list ap;
    va_start(ap, err);
    int rc = parse_with(&set, o, err, ap);
    va_end(ap);
    return rc;
}

static void test_lists_accumulate(void **state)
{
    (void)state;
    gopts o;
    gq_err e;
    assert_int_equal(parse(&o, &e, "-t", "a", "-t", "b", "--test=c,d", NULL), GQ_OK);
    assert_int_equal(o.tests.n, 4);
    assert_string_equal(o.tests.item[0], "a");
    assert_string_equal(o.tests.item[1], "b");
    assert_string_equal(o.tests.item[2], "c");
    assert_string_equal(o.tests.item[3], "d");
    assert_int_equal(parse(&o, &e, "-t", "a,,b", NULL), GQ_E_USAGE);
    assert_non_null(strstr(e.msg, "empty item"));
    assert_int_equal(parse(&o, &e, "-t", "", NULL), GQ_E_USAGE);
}

static void test_key_value(void **state)
{
    (void)state;
    gopts o;
    gq_err e;
    assert_int_equal(parse(&o, &e, "--set", "nvlink.min=300", "--set=pcie.min=20,5", NULL), GQ_OK);
    assert_int_equal(o.set.n, 2);
    char key[32];
    const char *v;
    assert_int_equal(gq_kv_split(o.set.item[0], key, sizeof key, &v, &e), GQ_OK);
    assert_string_equal(key, "nvlink.min");
    assert_string_equal(v, "300");
    assert_string_equal(o.set.item[1], "pcie.min=20,5"); /* no comma splitting for KEY=VALUE */
    assert_int_equal(parse(&o, &e, "--set", "novalue", NULL), GQ_E_USAGE);
    assert_non_null(strstr(e.msg, "expected KEY=VALUE"));
    assert_int_equal(parse(&o, &e, "--set", "=5", NULL), GQ_E_USAGE);
}

static void test_repeated_single_value(void **state)
{
    (void)state;
    gopts o;
    gq_err e;
    assert_int_equal(parse(&o, &e, "-i", "3", "--rounds=4", NULL), GQ_E_USAGE);
    assert_string_equal(e.msg, "--rounds is given twice; give it once");
    assert_null(strchr(e.msg, '\n'));
    assert_int_equal(parse(&o, &e, "-q", "-q", "--quiet", NULL), GQ_OK); /* flags may repeat */
    assert_true(o.quiet);
}

static void test_values_forms(void **state)
{
    (void)state;
    gopts o;
    gq_err e;
    assert_int_equal(parse(&o, &e, "--rounds=7", NULL), GQ_OK);
    assert_int_equal(o.rounds, 7);
    assert_int_equal(parse(&o, &e, "--rounds", "8", NULL), GQ_OK);
    assert_int_equal(o.rounds, 8);
    assert_int_equal(parse(&o, &e, "-i9", NULL), GQ_OK);
    assert_int_equal(o.rounds, 9);
    assert_int_equal(parse(&o, &e, "--threshold", "2.5%", NULL), GQ_OK);
    assert_true(fabs(o.threshold - 2.5) < 1e-12);
    assert_int_equal(parse(&o, &e, "--threshold", "3", NULL), GQ_OK);
    assert_true(fabs(o.threshold - 3) < 1e-12);
}

static void test_errors(void **state)
{
    (void)state;
    gopts o;
    gq_err e;
    assert_int_equal(parse(&o, &e, "--round", "3", NULL), GQ_E_USAGE);
    assert_non_null(strstr(e.msg, "unknown option '--round'; did you mean --rounds?"));
    assert_int_equal(parse(&o, &e, "-i", "65", NULL), GQ_E_USAGE); /* bad bound */
    assert_non_null(strstr(e.msg, "1..64"));
    assert_int_equal(parse(&o, &e, "--threshold", "200%", NULL), GQ_E_USAGE);
    assert_non_null(strstr(e.msg, "out of range"));
    assert_int_equal(parse(&o, &e, "--format", "xml", NULL), GQ_E_USAGE); /* bad enum */
    assert_non_null(strstr(e.msg, "is not one of"));
    assert_int_equal(parse(&o, &e, "-z", NULL), GQ_E_USAGE);
}

static void test_bundling(void **state)
{
    (void)state;
    gopts o;
    gq_err e;
    assert_int_equal(parse(&o, &e, "-qt", "x", NULL), GQ_OK);
    assert_true(o.quiet);
    assert_int_equal(o.tests.n, 1);
    assert_string_equal(o.tests.item[0], "x");
    assert_int_equal(parse(&o, &e, "-qatx", NULL), GQ_OK);
    assert_true(o.quiet && o.all);
    assert_string_equal(o.tests.item[0], "x");
    assert_int_equal(parse(&o, &e, "-qi3", NULL), GQ_OK);
    assert_int_equal(o.rounds, 3);
    /* a value-taking flag in the middle of a bundle of flags */
    assert_int_equal(parse(&o, &e, "-qia", "3", NULL), GQ_E_USAGE);
    assert_non_null(strstr(e.msg, "-i takes a value, so it comes last"));
    assert_int_equal(parse(&o, &e, "-qz", NULL), GQ_E_USAGE);
    assert_non_null(strstr(e.msg, "'-z'"));
}

static void test_double_dash_and_formats(void **state)
{
    (void)state;
    gopts o;
    gq_err e;
    assert_int_equal(parse(&o, &e, "a", "--", "-q", "--rounds=3", NULL), GQ_OK);
    assert_int_equal(npos, 3);
    assert_string_equal(pos[1], "-q");
    assert_false(o.quiet);
    assert_int_equal(o.rounds, 5);
    assert_int_equal(o.size, 64 * GQ_MiB); /* the command's default override */
    assert_int_equal(parse(&o, &e, "--format", "json", NULL), GQ_OK);
    assert_int_equal(parse(&o, &e, "--format", "csv", NULL), GQ_E_USAGE);
    assert_string_equal(e.msg, "demo: --format csv is not available here; use table or json");
}

static void test_iterator_and_kinds(void **state)
{
    (void)state;
    int it = 0, n = 0;
    bool saw_list = false, saw_kv = false;
    for (const gq_opt *o = NULL; (o = gq_optset_next(&set, &it, o)); n++) {
        saw_list |= !strcmp(gq_opt_kind_name(o->type), "list");
        saw_kv |= !strcmp(gq_opt_kind_name(o->type), "key=value");
    }
    assert_int_equal(n, 9);
    assert_true(saw_list && saw_kv);
    assert_string_equal(gq_optset_default(&set, &tab[3]), "64");
    assert_string_equal(gq_optset_default(&set, &tab[2]), "5");
}

/* Every line fits the width unless it is one word that cannot; bounds,
 * values and defaults are shown whole. */
static void check_help(int width)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    gq_optset_help(f, &set, width);
    fclose(f);
    assert_non_null(strstr(buf, "(1..64)"));
    assert_non_null(strstr(buf, "[table,json]")); /* this command's --format values */
    assert_non_null(strstr(buf, "(default 64)"));
    assert_non_null(strstr(buf, "(repeatable)"));
    for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
        int len = (int)strlen(line);
        if (len > width) {
            const char *p = line;
            while (*p == ' ')
                p++;
            assert_null(strchr(p, ' ')); /* only a single overlong word may pass */
        }
    }
    free(buf);
}

static void test_help_wraps(void **state)
{
    (void)state;
    check_help(100);
    check_help(60);
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    gq_optset_help(f, &set, 10); /* never narrower than 60 */
    fclose(f);
    assert_non_null(strstr(buf, "rounds per measurement"));
    free(buf);
}

static void test_short_flag_table(void **state)
{
    (void)state;
    for (const gq_short_flag *a = gq_short_flags; a->c; a++)
        for (const gq_short_flag *b = a + 1; b->c; b++) {
            assert_true(a->c != b->c);
            assert_true(strcmp(a->name, b->name) != 0);
        }
    assert_int_equal(gq_short_for("quiet"), 'q');
    assert_int_equal(gq_short_for("no-such-option"), 0);
}

/* A compatibility grammar (nvbandwidth's command line): -t takes every
 * following word, long names in camelCase match case-insensitively, -j is a
 * flag, no bundling and no --no- forms. */
typedef struct nvb {
    gq_optlist testcase;
    uint64_t buffer;
    bool json, verbose;
    int samples;
} nvb;
#define N(f) offsetof(nvb, f)
/* clang-format off */
static const gq_opt nvb_tab[] = {
    {.name = "testcase", .shortname = 't', .type = GQ_OPT_LIST, .off = N(testcase), .help = "tests"},
    {.name = "bufferSize", .shortname = 'b', .type = GQ_OPT_SIZE, .off = N(buffer), .def = "512", .unit = GQ_MiB},
    {.name = "json", .shortname = 'j', .type = GQ_OPT_FLAG, .off = N(json)},
    {.name = "verbose", .shortname = 'v', .type = GQ_OPT_FLAG, .off = N(verbose)},
    {.name = "testSamples", .shortname = 'i', .type = GQ_OPT_INT, .off = N(samples), .def = "3", .lo = 1, .hi = 100},
    GQ_OPT_END,
};
/* clang-format on */
static const gq_opt *const nvb_tabs[] = {nvb_tab};
static const gq_opt_grammar nvb_grammar = {.multi_values = true, .case_fold = true, .single_dash_long = true};
static const gq_optset nvb_set = {
    .name = "nvbandwidth", .tabs = nvb_tabs, .ntab = 1, .grammar = &nvb_grammar};

static int nvb_parse(nvb *o, gq_err *e, int argc, char **argv)
{
    memset(o, 0, sizeof *o);
    memset(e, 0, sizeof *e);
    return gq_optset_parse(&nvb_set, o, argc, argv, 1, pos, 8, &npos, &help, e);
}

static void test_compat_grammar(void **state)
{
    (void)state;
    nvb o;
    gq_err e;
    char *a1[] = {"nvbandwidth", "-t", "a", "b", "c", "-j", "-b", "64", NULL};
    assert_int_equal(nvb_parse(&o, &e, 8, a1), GQ_OK);
    assert_int_equal(o.testcase.n, 3);
    assert_string_equal(o.testcase.item[2], "c");
    assert_true(o.json);
    assert_int_equal(o.buffer, 64 * GQ_MiB);
    assert_int_equal(npos, 0);
    char *a2[] = {"nvbandwidth", "--bufferSize", "8", "--testsamples=5", "-testcase", "x", NULL};
    assert_int_equal(nvb_parse(&o, &e, 6, a2), GQ_OK);
    assert_int_equal(o.buffer, 8 * GQ_MiB);
    assert_int_equal(o.samples, 5);
    assert_string_equal(o.testcase.item[0], "x");
    char *a3[] = {"nvbandwidth", "-jv", NULL}; /* no bundling in this grammar */
    assert_int_equal(nvb_parse(&o, &e, 2, a3), GQ_E_USAGE);
    char *a4[] = {"nvbandwidth", "-i", "2", "-i", "3", NULL}; /* repeats: the last wins here */
    assert_int_equal(nvb_parse(&o, &e, 5, a4), GQ_OK);
    assert_int_equal(o.samples, 3);
    char *a5[] = {"nvbandwidth", "--no-json", NULL};
    assert_int_equal(nvb_parse(&o, &e, 2, a5), GQ_E_USAGE);
}

/* The list limits: 64 items (GQ_OPTLIST_MAX) in a list or of KEY=VALUE are
 * taken, the 65th refused by name; the comma-split items share a store of
 * 2048 bytes; a key longer than the caller's buffer is refused. */
static void test_list_limits(void **state)
{
    (void)state;
    gopts o;
    gq_err e;
    char list[65 * 3 + 1] = "";
    for (int i = 0; i < 64; i++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%d", i ? "," : "", i);
    assert_int_equal(parse(&o, &e, "-t", list, NULL), GQ_OK);
    assert_int_equal(o.tests.n, 64);
    assert_string_equal(o.tests.item[63], "63");
    strcat(list, ",x");
    assert_int_equal(parse(&o, &e, "-t", list, NULL), GQ_E_USAGE);
    assert_string_equal(e.msg, "--test: too many items");
    /* one item at a time: the 65th */
    char *argv[2 + 2 * 65 + 1] = {"gpuqual", "demo"};
    char items[65][16];
    for (int i = 0; i < 65; i++) {
        snprintf(items[i], sizeof items[i], "k%d=%d", i, i);
        argv[2 + 2 * i] = "--set";
        argv[3 + 2 * i] = items[i];
    }
    memset(&o, 0, sizeof o);
    memset(&e, 0, sizeof e);
    assert_int_equal(gq_optset_parse(&set, &o, 2 + 2 * 64, argv, 2, pos, 8, &npos, &help, &e), GQ_OK);
    assert_int_equal(o.set.n, 64);
    assert_string_equal(o.set.item[63], "k63=63");
    memset(&o, 0, sizeof o);
    assert_int_equal(gq_optset_parse(&set, &o, 2 + 2 * 65, argv, 2, pos, 8, &npos, &help, &e), GQ_E_USAGE);
    assert_string_equal(e.msg, "--set: at most 64 of them");
    for (int i = 0; i < 65; i++)
        argv[2 + 2 * i] = "-t";
    memset(&o, 0, sizeof o);
    assert_int_equal(gq_optset_parse(&set, &o, 2 + 2 * 64, argv, 2, pos, 8, &npos, &help, &e), GQ_OK);
    memset(&o, 0, sizeof o);
    assert_int_equal(gq_optset_parse(&set, &o, 2 + 2 * 65, argv, 2, pos, 8, &npos, &help, &e), GQ_E_USAGE);
    assert_string_equal(e.msg, "--test: at most 64 items");
    /* the store: 40 items of 50 bytes (51 with the NUL) fill 2040 bytes; a 41st does not fit */
    char big[41 * 51 + 1] = "";
    for (int i = 0; i < 41; i++)
        snprintf(big + strlen(big), sizeof big - strlen(big), "%s%050d", i ? "," : "", i);
    big[40 * 51 - 1] = 0;
    assert_int_equal(parse(&o, &e, "-t", big, NULL), GQ_OK);
    assert_int_equal(o.tests.n, 40);
    big[40 * 51 - 1] = ',';
    assert_int_equal(parse(&o, &e, "-t", big, NULL), GQ_E_USAGE);
    assert_string_equal(e.msg, "--test: too many items");
    /* a 41st item of 7 bytes ends the store exactly (2040 + 8 = 2048); of 8, one byte past */
    snprintf(big + 40 * 51, sizeof big - 40 * 51, "1234567");
    assert_int_equal(parse(&o, &e, "-t", big, NULL), GQ_OK);
    assert_int_equal(o.tests.n, 41);
    assert_string_equal(o.tests.item[40], "1234567");
    snprintf(big + 40 * 51, sizeof big - 40 * 51, "12345678");
    assert_int_equal(parse(&o, &e, "-t", big, NULL), GQ_E_USAGE);
    assert_string_equal(e.msg, "--test: too many items");
    assert_int_equal(parse(&o, &e, "--set", "=5", NULL), GQ_E_USAGE);
    assert_string_equal(e.msg, "--set '=5': expected KEY=VALUE");
    assert_int_equal(parse(&o, &e, "-t", "a,,b", NULL), GQ_E_USAGE);
    assert_string_equal(e.msg, "--test 'a,,b': empty item");
    char key[4];
    const char *v = NULL;
    assert_int_equal(gq_kv_split("abc=1", key, sizeof key, &v, &e), GQ_OK);
    assert_string_equal(key, "abc");
    assert_string_equal(v, "1");
    assert_int_equal(gq_kv_split("abcd=1", key, sizeof key, &v, &e), GQ_E_USAGE);
    assert_string_equal(e.msg, "'abcd=1': the key is too long");
    assert_int_equal(gq_kv_split("=1", key, sizeof key, &v, &e), GQ_E_USAGE);
    assert_string_equal(e.msg, "'=1': expected KEY=VALUE");
    assert_int_equal(gq_kv_split("ab", key, sizeof key, &v, &e), GQ_E_USAGE);
    assert_string_equal(e.msg, "'ab': expected KEY=VALUE");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_list_limits),        cmocka_unit_test(test_lists_accumulate),
        cmocka_unit_test(test_key_value),          cmocka_unit_test(test_repeated_single_value),
        cmocka_unit_test(test_values_forms),       cmocka_unit_test(test_errors),
        cmocka_unit_test(test_bundling),           cmocka_unit_test(test_double_dash_and_formats),
        cmocka_unit_test(test_iterator_and_kinds), cmocka_unit_test(test_help_wraps),
        cmocka_unit_test(test_short_flag_table),   cmocka_unit_test(test_compat_grammar),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
