/* Value parsing at its bounds (core/units.c, core/infile.c) and the record
 * codec's timestamp on absurd input: what the bad-input table in tests/cli/
 * relies on, tested at the function. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <jansson.h>

#include "core/infile.h"
#include "core/units.h"
#include "measure/record_json.h"

static void test_duration_bounds(void **state)
{
    (void)state;
    double d;
    gq_err e = {0};
    assert_int_equal(gq_parse_duration("1ms", &d, &e), GQ_OK);
    assert_true(fabs(d - 0.001) < 1e-12);
    assert_int_equal(gq_parse_duration("168h", &d, &e), GQ_OK);
    assert_true(d == 7 * 86400.0);
    const char *bad[] = {"0.5ms",  "1e-300s", "169h", "1e308h", "604801", "0x10",
                         "0X1p4s", "inf",     "nan",  "-1s",    ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        memset(&e, 0, sizeof e);
        assert_int_equal(gq_parse_duration(bad[i], &d, &e), GQ_E_USAGE);
        assert_non_null(strstr(e.msg, bad[i][0] ? bad[i] : "empty"));
        assert_null(strchr(e.msg, '\n'));
    }
    assert_int_equal(gq_parse_duration("1e308h", &d, &e), GQ_E_USAGE);
    assert_non_null(strstr(e.msg, "168h maximum"));
    assert_int_equal(gq_parse_duration("0.1ms", &d, &e), GQ_E_USAGE);
    assert_non_null(strstr(e.msg, "1ms minimum"));
}

/* Sizes as messages and help print them: exact, in the largest unit that
 * divides them, never with an exponent (1 TiB was "1024 GiB", 10^15 B
 * "9.76562e+11 KiB"). */
static void test_fmt_size(void **state)
{
    (void)state;
    char b[40];
    assert_string_equal(gq_fmt_size(1, b, sizeof b), "1 B");
    assert_string_equal(gq_fmt_size(4096, b, sizeof b), "4 KiB");
    assert_string_equal(gq_fmt_size(3 * GQ_MiB / 2, b, sizeof b), "1.5 MiB");
    assert_string_equal(gq_fmt_size(3 * GQ_KiB / 2, b, sizeof b), "1536 B");
    assert_string_equal(gq_fmt_size(GQ_GiB + GQ_GiB / 4, b, sizeof b), "1.25 GiB");
    assert_string_equal(gq_fmt_size(1024 * GQ_GiB, b, sizeof b), "1 TiB");
    assert_string_equal(gq_fmt_size(1536 * GQ_GiB, b, sizeof b), "1.5 TiB");
    assert_string_equal(gq_fmt_size(1000000000000000ull, b, sizeof b), "976562500000 KiB");
    assert_string_equal(gq_fmt_size(1234567 * GQ_KiB, b, sizeof b), "1234567 KiB");
}

static void test_no_hex(void **state)
{
    (void)state;
    uint64_t b;
    double v;
    gq_err e = {0};
    assert_int_equal(gq_parse_size("16", 1, &b, &e), GQ_OK);
    assert_int_equal(b, 16);
    assert_int_equal(gq_parse_size("0x10", 1, &b, &e), GQ_E_USAGE);
    assert_non_null(strstr(e.msg, "hexadecimal"));
    assert_int_equal(gq_parse_size("0X10M", 1, &b, &e), GQ_E_USAGE);
    assert_int_equal(gq_parse_double("0x1p-2", &v, &e), GQ_E_USAGE);
    assert_non_null(strstr(e.msg, "hexadecimal"));
    assert_int_equal(gq_parse_double("-0x10", &v, &e), GQ_E_USAGE);
    assert_int_equal(gq_parse_double("0.25", &v, &e), GQ_OK);
    assert_true(v == 0.25);
    long l;
    assert_int_equal(gq_parse_int("0x10", 0, 100, &l, &e), GQ_E_USAGE);
}

/* gq_parse_size at its edges: each refusal is its own one line, naming the
 * value; a number strtod cannot hold (overflow, underflow, a lone '.') is
 * "not a size", never a size of 0 or infinity read on. */
static void test_size_edges(void **state)
{
    (void)state;
    static const struct {
        const char *in;
        uint64_t unit;
        int rc;
        uint64_t want;
        const char *msg;
    } c[] = {
        {"1", 1, GQ_OK, 1, NULL},
        {"0.5K", 1, GQ_OK, 512, NULL},
        {"4", GQ_MiB, GQ_OK, 4 * GQ_MiB, NULL},
        {"4B", GQ_MiB, GQ_OK, 4, NULL},
        {"64KB", 1, GQ_OK, 64000, NULL}, /* KB, MB, GB are decimal; K, KiB binary */
        {"64K", 1, GQ_OK, 65536, NULL},
        {"3MB", 1, GQ_OK, 3000000, NULL},
        {"16t", 1, GQ_OK, 16 * 1024 * GQ_GiB, NULL},
        {".", 1, GQ_E_USAGE, 0, "'.' is not a size, expected e.g. 512, 4K, 64MiB or 1G"},
        {"1e999", 1, GQ_E_USAGE, 0, "'1e999' is not a size, expected e.g. 512, 4K, 64MiB or 1G"},
        {"1e-400", 1, GQ_E_USAGE, 0, "'1e-400' is not a size, expected e.g. 512, 4K, 64MiB or 1G"},
        {"1e999K", 1, GQ_E_USAGE, 0, "'1e999K' is not a size, expected e.g. 512, 4K, 64MiB or 1G"},
        {"-1", 1, GQ_E_USAGE, 0, "'-1' is not a size, expected e.g. 512, 4K, 64MiB or 1G"},
        {"0", 1, GQ_E_USAGE, 0, "size '0' must be greater than zero"},
        {"0.4", 1, GQ_E_USAGE, 0, "size '0.4' must be greater than zero"},
        {"1.5", 1, GQ_E_USAGE, 0, "size '1.5' is not a whole number of bytes"},
        {"20000000T", 1, GQ_E_USAGE, 0, "size '20000000T' is too large"},
        {"4Q", 1, GQ_E_USAGE, 0, "'4Q': unknown size unit 'Q', expected B, K/KiB, M/MiB, G/GiB"},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        uint64_t b = 12345;
        gq_err e = {0};
        int rc = gq_parse_size(c[i].in, c[i].unit, &b, &e);
        if (rc != c[i].rc)
            fail_msg("'%s': status %d, want %d (%s)", c[i].in, rc, c[i].rc, e.msg);
        if (rc == GQ_OK && b != c[i].want)
            fail_msg("'%s': %llu bytes, want %llu", c[i].in, (unsigned long long)b,
                     (unsigned long long)c[i].want);
        if (rc != GQ_OK) {
            if (strcmp(e.msg, c[i].msg))
                fail_msg("'%s': '%s', want '%s'", c[i].in, e.msg, c[i].msg);
            assert_int_equal(b, 12345); /* nothing written on a refusal */
        }
    }
}

static void test_infile_directory(void **state)
{
    (void)state;
    gq_err e = {0};
    assert_int_equal(gq_infile_check(GQ_TEST_DATA, "a JSON file", &e), GQ_E_USAGE);
    assert_non_null(strstr(e.msg, "is a directory, expected a JSON file"));
    /* a missing file is left to the caller's open, which names its errno */
    assert_int_equal(gq_infile_check("/nonexistent/x.json", "a JSON file", &e), GQ_OK);
    assert_int_equal(gq_infile_check(GQ_TEST_DATA "/data/bad/run-ok.json", "a JSON file", &e), GQ_OK);
    /* /dev/stdin and the like are read like any file */
    assert_int_equal(gq_infile_check("/dev/null", "a JSON file", &e), GQ_OK);
    /* an empty name is refused by name, before any stat() */
    memset(&e, 0, sizeof e);
    assert_int_equal(gq_infile_check("", "a JSON file", &e), GQ_E_USAGE);
    assert_string_equal(e.msg, "empty file name, expected a JSON file");
    memset(&e, 0, sizeof e);
    assert_int_equal(gq_infile_check_size("", "a JSON file", GQ_INFILE_TEXT_MAX, &e), GQ_E_USAGE);
    assert_string_equal(e.msg, "empty file name, expected a JSON file");
}

/* The size in a refusal, in the largest unit that keeps it >= 1 */
static void test_infile_size(void **state)
{
    (void)state;
    static const struct {
        long long bytes;
        const char *text;
    } c[] = {
        {1, "1 byte"},
        {1023, "1023 bytes"},
        {1024, "1.0 KiB"},
        {17LL << 20, "17 MiB"},
        {(2LL << 30) + (512LL << 20), "2.5 GiB"},
        {3LL << 40, "3.0 TiB"},
        {5000LL << 40, "5000 TiB"},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        char buf[32];
        assert_string_equal(gq_infile_size_text(c[i].bytes, buf, sizeof buf), c[i].text);
    }
    /* a sparse 17 MiB file over the 16 MiB limit */
    char path[] = "/tmp/gq-infile-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, 17LL << 20), 0);
    close(fd);
    gq_err e = {0};
    assert_int_equal(gq_infile_check_size(path, "a model's config.json", GQ_INFILE_TEXT_MAX, &e), GQ_E_USAGE);
    char want[256];
    snprintf(want, sizeof want,
             "'%s' is 17 MiB (17825792 bytes), over the 16 MiB limit for a model's config.json; is it the "
             "right file?",
             path);
    assert_string_equal(e.msg, want);
    assert_int_equal(gq_infile_check_size(path, "a JSON document", GQ_INFILE_DOC_MAX, &e), GQ_OK);
    unlink(path);
}

/* A record whose timestamp's seconds are 3.3e70 (once undefined behaviour in
 * the float -> int conversion; -fsanitize=float-cast-overflow catches it). */
static void test_timestamp_out_of_range(void **state)
{
    (void)state;
    json_error_t je;
    json_t *doc = json_load_file(GQ_TEST_DATA "/data/bad/run-ok.json", 0, &je);
    assert_non_null(doc);
    json_t *rec = json_array_get(json_object_get(doc, "records"), 0);
    assert_non_null(rec);
    gq_record r;
    gq_err e = {0};
    assert_int_equal(gq_record_from_json(rec, &r, &e), GQ_OK);
    const char *bad[] = {"2026-12-01T15:33:3.3e70Z", "2026-12-01T15:33:-1Z",  "2026-13-01T15:33:03Z",
                         "2026-12-01T24:33:03Z",     "2026-12-01T15:33:nanZ", "2026-12-01T15:60:03Z"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        json_object_set_new(rec, "timestamp", json_string(bad[i]));
        memset(&e, 0, sizeof e);
        assert_int_equal(gq_record_from_json(rec, &r, &e), GQ_E_USAGE);
        assert_non_null(strstr(e.msg, "timestamp"));
    }
    json_object_set_new(rec, "timestamp", json_string("2026-12-01T15:33:03.5Z"));
    assert_int_equal(gq_record_from_json(rec, &r, &e), GQ_OK);
    assert_true(fabs(r.timestamp - 1796139183.5) < 1e-3);
    json_decref(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_duration_bounds),
        cmocka_unit_test(test_fmt_size),
        cmocka_unit_test(test_no_hex),
        cmocka_unit_test(test_size_edges),
        cmocka_unit_test(test_infile_directory),
        cmocka_unit_test(test_infile_size),
        cmocka_unit_test(test_timestamp_out_of_range),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
