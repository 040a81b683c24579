/* SVG figures on inputs no other test gives: a control character in a
 * title, bars and lines refused for what they lack, and a log x axis whose
 * points all sit at one power of two. Written for issue 30 (lines no test
 * ran). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "render/svg.h"

static char *bars(const gq_svg_bars *b, int *rc, gq_err *e)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    *rc = gq_svg_write_bars(f, b, e);
    fclose(f);
    return buf;
}

static char *lines(const gq_svg_lines *l, int *rc, gq_err *e)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    *rc = gq_svg_write_lines(f, l, e);
    fclose(f);
    return buf;
}

/* A control character (not allowed in XML 1.0 text) is written as a space;
 * a tab stays. */
static void control_character(void **state)
{
    (void)state;
    const char *cats[] = {"GPU\x01"
                          "0"},
               *series[] = {"h2d"};
    double vals[] = {12.5};
    gq_svg_bars b = {.id = "b",
                     .title = "bars\x1b[1m of\tGPUs",
                     .unit = "GB/s",
                     .ncat = 1,
                     .nser = 1,
                     .cats = cats,
                     .series = series,
                     .vals = vals};
    int rc;
    gq_err e = {0};
    char *s = bars(&b, &rc, &e);
    assert_int_equal(rc, GQ_OK);
    assert_non_null(strstr(s, "bars [1m of\tGPUs"));
    assert_non_null(strstr(s, "GPU 0"));
    assert_null(strchr(s, '\x01'));
    assert_null(strchr(s, '\x1b'));
    free(s);
}

static void bars_refused(void **state)
{
    (void)state;
    const char *cats[] = {"a"}, *series[] = {"s"};
    double vals[] = {1};
    gq_svg_bars b = {.ncat = 1, .nser = 1, .cats = cats, .series = series, .vals = vals, .nref = 1};
    int rc;
    gq_err e = {0};
    char *s = bars(&b, &rc, &e); /* a reference line without its values */
    assert_int_equal(rc, GQ_E_USAGE);
    assert_string_equal(e.msg, "bars: needs 1..512 categories and 1..64 series with values");
    assert_true(!s || !s[0]);
    free(s);
}

static void lines_refused(void **state)
{
    (void)state;
    double x[] = {1, 2}, y[] = {3, 4};
    const double *xs[] = {x}, *ys[] = {y};
    const char *series[] = {"s"};
    int npts[] = {2};
    gq_svg_lines l = {.nser = 0, .series = series, .npts = npts, .xs = xs, .ys = ys};
    int rc;
    gq_err e = {0};
    char *s = lines(&l, &rc, &e);
    assert_int_equal(rc, GQ_E_USAGE);
    assert_string_equal(e.msg, "lines: needs 1..64 series with points");
    free(s);
    const double *noxs[] = {NULL};
    l.nser = 1;
    l.xs = noxs;
    e = (gq_err){0};
    s = lines(&l, &rc, &e);
    assert_int_equal(rc, GQ_E_USAGE);
    assert_string_equal(e.msg, "lines: series 0 has no points array");
    assert_true(!s || !s[0]);
    free(s);
}

/* Every x at 4 on a log axis: the axis runs from 4 to 8 (one power of two),
 * not from 4 to 4. */
static void log_x_one_power(void **state)
{
    (void)state;
    double x[] = {4, 4}, y[] = {3, 5};
    const double *xs[] = {x}, *ys[] = {y};
    const char *series[] = {"s"};
    int npts[] = {2};
    gq_svg_lines l = {.id = "l",
                      .title = "t",
                      .x_label = "size",
                      .unit = "GB/s",
                      .nser = 1,
                      .series = series,
                      .npts = npts,
                      .xs = xs,
                      .ys = ys,
                      .log_x = true,
                      .markers = true};
    int rc;
    gq_err e = {0};
    char *s = lines(&l, &rc, &e);
    assert_int_equal(rc, GQ_OK);
    if (!strstr(s, "rotate(-40 70.0 324)\">4.00</text>") ||
        !strstr(s, "rotate(-40 740.0 324)\">8.00</text>") ||
        !strstr(s, "<circle class=\"gq-pt\" cx=\"70.0\" cy=\"310.0\""))
        fail_msg("the x axis is not 4 to 8 with the points at its left end:\n%s", s);
    free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(control_character),
        cmocka_unit_test(bars_refused),
        cmocka_unit_test(lines_refused),
        cmocka_unit_test(log_x_one_power),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
