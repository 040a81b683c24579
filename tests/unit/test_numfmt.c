/* The display-number formatter (render/numfmt.h): each style's digits, the
 * whole numbers from 100 up, "–" for what was not measured, and no exponent
 * notation for very small values. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "render/numfmt.h"

static const char *fmt(double v, gq_num_style s)
{
    static char buf[32];
    return gq_fmt_num(v, s, buf, sizeof buf);
}

static void test_figure(void **state)
{
    (void)state;
    assert_string_equal(fmt(1234.4, GQ_NUM_FIGURE), "1234");
    assert_string_equal(fmt(394.2, GQ_NUM_FIGURE), "394");
    assert_string_equal(fmt(52.71, GQ_NUM_FIGURE), "52.7");
    assert_string_equal(fmt(9.861, GQ_NUM_FIGURE), "9.86");
    assert_string_equal(fmt(0.1234, GQ_NUM_FIGURE), "0.123");
    assert_string_equal(fmt(5, GQ_NUM_FIGURE), "5");
    assert_string_equal(fmt(12, GQ_NUM_FIGURE), "12");
    assert_string_equal(fmt(0, GQ_NUM_FIGURE), "0");
    assert_string_equal(fmt(-2.5, GQ_NUM_FIGURE), "-2.50");
}

static void test_chart(void **state)
{
    (void)state;
    assert_string_equal(fmt(1234.4, GQ_NUM_CHART), "1234");
    assert_string_equal(fmt(5, GQ_NUM_CHART), "5.00");
    assert_string_equal(fmt(12, GQ_NUM_CHART), "12.0");
    assert_string_equal(fmt(0, GQ_NUM_CHART), "0");
    assert_string_equal(fmt(0.5, GQ_NUM_CHART), "0.5");
}

static void test_runs(void **state)
{
    (void)state;
    assert_string_equal(fmt(394.2, GQ_NUM_RUNS), "394");
    assert_string_equal(fmt(52.714, GQ_NUM_RUNS), "52.71");
    assert_string_equal(fmt(5, GQ_NUM_RUNS), "5.00");
    assert_string_equal(fmt(0, GQ_NUM_RUNS), "0.00");
}

static void test_unknown_and_small(void **state)
{
    (void)state;
    for (int s = GQ_NUM_FIGURE; s <= GQ_NUM_RUNS; s++) {
        assert_string_equal(fmt(NAN, (gq_num_style)s), "–");
        assert_string_equal(fmt(INFINITY, (gq_num_style)s), "–");
        assert_string_equal(fmt(-INFINITY, (gq_num_style)s), "–");
    }
    assert_string_equal(fmt(0.00123, GQ_NUM_FIGURE), "0.00123");
    assert_string_equal(fmt(3e-05, GQ_NUM_FIGURE), "0.0000300");
    assert_string_equal(fmt(3e-05, GQ_NUM_CHART), "0.0000300");
    assert_string_equal(fmt(1e-15, GQ_NUM_FIGURE), "0.000000000000");
}

/* Durations in the unit a person reads (the card's "took"), and the tick rule. */
static void test_duration_and_ticks(void **state)
{
    (void)state;
    char b[32];
    assert_string_equal(gq_fmt_duration(0.00000124, b, sizeof b), "1.24 µs");
    assert_string_equal(gq_fmt_duration(3.5e-8, b, sizeof b), "35 ns");
    assert_string_equal(gq_fmt_duration(0.0373, b, sizeof b), "37.3 ms");
    assert_string_equal(gq_fmt_duration(2.5, b, sizeof b), "2.50 s");
    assert_string_equal(gq_fmt_duration(300, b, sizeof b), "5 min");
    assert_string_equal(gq_fmt_duration(250, b, sizeof b), "4 min 10 s");
    assert_string_equal(gq_fmt_duration(3900, b, sizeof b), "1 h 5 min");
    assert_string_equal(gq_fmt_duration(0, b, sizeof b), "0 s");
    assert_string_equal(gq_fmt_duration(NAN, b, sizeof b), "–");
    assert_string_equal(gq_fmt_duration(-1, b, sizeof b), "–");
    /* every tick of an axis shows the decimals its step needs */
    assert_int_equal(gq_fmt_tick_decimals(50), 0);
    assert_int_equal(gq_fmt_tick_decimals(0.5), 1);
    assert_int_equal(gq_fmt_tick_decimals(0.25), 2);
    assert_int_equal(gq_fmt_tick_decimals(2e-3), 3);
    int d = gq_fmt_tick_decimals(2.5);
    assert_string_equal(gq_fmt_tick(0, d, b, sizeof b), "0.0");
    assert_string_equal(gq_fmt_tick(7.5, d, b, sizeof b), "7.5");
    assert_string_equal(gq_fmt_tick(10, d, b, sizeof b), "10.0");
    assert_string_equal(gq_fmt_tick(NAN, d, b, sizeof b), "–");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_figure),
        cmocka_unit_test(test_chart),
        cmocka_unit_test(test_runs),
        cmocka_unit_test(test_unknown_and_small),
        cmocka_unit_test(test_duration_and_ticks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
