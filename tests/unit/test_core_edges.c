/* src/core edges no other test reaches: the clean-up list run at a signal,
 * a one-word text ellipsized into a small buffer, reading JSON from a FILE,
 * empty numbers, names of values out of their enums, option bounds and
 * arguments, and YAML the reader refuses. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include <cmocka.h>

#include "core/interrupt.h"
#include "core/json.h"
#include "core/options.h"
#include "core/record.h"
#include "core/status.h"
#include "core/types.h"
#include "core/units.h"
#include "core/yaml.h"

/* The signal handler's clean-up unlinks the files still listed, and only those. */
static void test_cleanup_run(void **state)
{
    (void)state;
    char a[] = "/tmp/gq-cleanup-a-XXXXXX", b[] = "/tmp/gq-cleanup-b-XXXXXX";
    int fa = mkstemp(a), fb = mkstemp(b);
    assert_true(fa >= 0 && fb >= 0);
    close(fa);
    close(fb);
    int sa = gq_cleanup_add(a), sb = gq_cleanup_add(b);
    assert_true(sa >= 0 && sb >= 0 && sa != sb);
    gq_cleanup_remove(sb);
    gq_cleanup_run();
    assert_int_equal(access(a, F_OK), -1);
    assert_int_equal(access(b, F_OK), 0);
    unlink(b);
    gq_cleanup_remove(sa);
}

/* One word longer than max: whole when the buffer holds it and "...", else
 * cut to the buffer. */
static void test_ellipsize_one_word(void **state)
{
    (void)state;
    char buf[32];
    assert_string_equal(gq_ellipsize(buf, sizeof buf, "abcdefghij klm", 5), "abcdefghij...");
    assert_string_equal(gq_ellipsize(buf, 10, "abcdefghijklmnop", 5), "abcdef...");
    assert_string_equal(gq_ellipsize(buf, 14, "abcdefghij", 5), "abcdefghij...");
    assert_string_equal(gq_ellipsize(buf, 13, "abcdefghij", 5), "abcdefghi...");
    assert_string_equal(gq_ellipsize(buf, 4, "abcdefghij", 2), "...");
    /* the last boundary within max, still too long for the buffer */
    assert_string_equal(gq_ellipsize(buf, 6, "ab cd ef gh", 8), "ab...");
}

static void test_json_loadf(void **state)
{
    (void)state;
    FILE *f = tmpfile();
    assert_non_null(f);
    fputs("{\"a\": [1, 2]}", f);
    rewind(f);
    json_error_t je;
    json_t *j = gq_json_loadf(f, 0, &je);
    fclose(f);
    assert_non_null(j);
    assert_int_equal(json_array_size(json_object_get(j, "a")), 2);
    json_decref(j);
}

static void test_names_and_numbers(void **state)
{
    (void)state;
    gq_err err = {0};
    double d = 7;
    long l = 7;
    assert_int_equal(gq_parse_double("", &d, &err), GQ_E_USAGE);
    assert_string_equal(err.msg, "empty number, expected a decimal number");
    assert_int_equal(gq_parse_double(NULL, &d, &err), GQ_E_USAGE);
    assert_int_equal(gq_parse_int("", 0, 9, &l, &err), GQ_E_USAGE);
    assert_string_equal(err.msg, "empty value, expected a whole number");
    assert_true(d == 7 && l == 7);
    assert_string_equal(gq_direction_name((gq_direction)9), "?");
    assert_string_equal(gq_method_name((gq_method)9), "?");
    assert_string_equal(gq_method_name(GQ_METHOD_DRIVER_STAGED), "driver_staged");
    assert_string_equal(gq_precision_name((gq_precision)9), "?");
    assert_string_equal(gq_precision_name(GQ_PREC_FP64), "fp64");
    assert_string_equal(gq_opt_kind_name(GQ_OPT_DOUBLE), "double");
    assert_string_equal(gq_opt_kind_name(GQ_OPT_DURATION), "duration");
    assert_string_equal(gq_opt_kind_name((gq_opt_type)99), "?");
    /* a record without a figure has no interval: the median alone */
    gq_record r;
    memset(&r, 0, sizeof r);
    r.value.median = NAN;
    r.value.n = 3;
    r.value.min = 1;
    r.value.max = 9;
    gq_interval iv = gq_record_interval(&r);
    assert_true(isnan(iv.lo) && isnan(iv.hi));
    assert_true(iv.conf == 0);
    assert_int_equal(iv.n, 3);
}

typedef struct {
    int n;
    const char *s;
    bool q;
} opts;

static const gq_opt tab[] = {
    {.name = "count", .type = GQ_OPT_INT, .off = offsetof(opts, n), .help = "a count"},
    {.name = "name", .type = GQ_OPT_STR, .off = offsetof(opts, s), .help = "a name"},
    {.name = "quiet", .shortname = 'q', .type = GQ_OPT_FLAG, .off = offsetof(opts, q), .help = "quiet"},
    GQ_OPT_END,
};
static const gq_opt *const tabs[] = {tab};

static int parse(const gq_optset *set, int argc, char **argv, int maxpos, gq_err *err)
{
    opts o = {0};
    const char *pos[4];
    int npos = 0;
    bool help = false;
    return gq_optset_parse(set, &o, argc, argv, 0, pos, maxpos, &npos, &help, err);
}

static void test_option_edges(void **state)
{
    (void)state;
    gq_optset set = {.name = "demo", .tabs = tabs, .ntab = 1};
    gq_err err = {0};
    char *big[] = {"--count", "99999999999"}, *small[] = {"--count", "-99999999999"};
    assert_int_equal(parse(&set, 2, big, 0, &err), GQ_E_USAGE);
    assert_string_equal(
        err.msg, "--count: 99999999999 is too large, expected a whole number within -2147483647..2147483647");
    assert_int_equal(parse(&set, 2, small, 0, &err), GQ_E_USAGE);
    assert_string_equal(
        err.msg,
        "--count: -99999999999 is too small, expected a whole number within -2147483647..2147483647");
    char *three[] = {"a", "b", "c"};
    assert_int_equal(parse(&set, 3, three, 2, &err), GQ_E_USAGE);
    assert_string_equal(err.msg, "unexpected argument 'c': demo takes at most 2 arguments");
    set.name = NULL;
    assert_int_equal(parse(&set, 3, three, 2, &err), GQ_E_USAGE);
    assert_string_equal(err.msg, "unexpected argument 'c': this command takes at most 2 arguments");
    assert_int_equal(parse(&set, 2, three, 2, &err), GQ_OK);
    char *bundle[] = {"-zq"};
    assert_int_equal(parse(&set, 1, bundle, 0, &err), GQ_E_USAGE);
    assert_true(strncmp(err.msg, "unknown option '-zq'", 20) == 0);
    char *qz[] = {"-qz"};
    assert_int_equal(parse(&set, 1, qz, 0, &err), GQ_E_USAGE);
    assert_string_equal(err.msg, "unknown option '-z' in '-qz'; see --help");
    static const char *const defs[] = {"count=many", NULL};
    set.defaults = defs;
    assert_int_equal(parse(&set, 0, NULL, 0, &err), GQ_E_USAGE);
    assert_true(strncmp(err.msg, "internal: bad default: --count: ", 32) == 0);
}

static void test_yaml_refusals(void **state)
{
    (void)state;
    json_t *j = NULL;
    gq_err err = {0};
    const char *alias = "a: 1\nb: *x\n";
    assert_int_equal(gq_yaml_to_json(alias, strlen(alias), "t.yaml", &j, &err), GQ_E_USAGE);
    assert_null(j);
    assert_non_null(strstr(err.msg, "line 2"));
    assert_non_null(strstr(err.msg, "aliases (*name) are not accepted; write the value out"));
    const char *key = "? [a, b]\n: 1\n";
    assert_int_equal(gq_yaml_to_json(key, strlen(key), "t.yaml", &j, &err), GQ_E_USAGE);
    assert_non_null(strstr(err.msg, "a mapping key must be a plain or quoted scalar"));
    const char *num = "a: 1\n2: b\n"; /* a plain 2 is a number, not a key */
    assert_int_equal(gq_yaml_to_json(num, strlen(num), "t.yaml", &j, &err), GQ_E_USAGE);
    assert_string_equal(err.msg, "t.yaml: line 2: a mapping key must be a plain or quoted scalar");
    const char *quoted = "\"2\": b\n";
    assert_int_equal(gq_yaml_to_json(quoted, strlen(quoted), "t.yaml", &j, &err), GQ_OK);
    assert_string_equal(json_string_value(json_object_get(j, "2")), "b");
    json_decref(j);
    const char *ok = "a: false\nb: TRUE\nc: ~\n";
    assert_int_equal(gq_yaml_to_json(ok, strlen(ok), "t.yaml", &j, &err), GQ_OK);
    assert_true(json_is_false(json_object_get(j, "a")));
    assert_true(json_is_true(json_object_get(j, "b")));
    assert_true(json_is_null(json_object_get(j, "c")));
    json_decref(j);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cleanup_run),  cmocka_unit_test(test_ellipsize_one_word),
        cmocka_unit_test(test_json_loadf),   cmocka_unit_test(test_names_and_numbers),
        cmocka_unit_test(test_option_edges), cmocka_unit_test(test_yaml_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
