/* The sweep fit's robust weighting where it decides: an outlier in the first
 * position and in the middle position of the input, an even number of points
 * (the median of the residuals is the mean of the two middle ones), and a
 * moderate outlier that a correct residual scale rejects and a scale twice as
 * large would keep. Written for the survivors of bench/mutation. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "analysis/sweepfit.h"
#include "core/units.h"
#include "../test_util.h"

#define A_US 10.0
#define BW 20.0

/* The rate of a copy of b bytes under t = A_US + b/BW, its time scaled by (1 + e). */
static double rate(uint64_t b, double e)
{
    double t_us = (A_US + (double)b / (BW * 1e3)) * (1 + e);
    return (double)b / (t_us * 1e3);
}

/* n points of 1..n MiB; the point of the middle size (n/2 + 1 MiB, away from
 * the ends where a point has leverage) is `outlier` slow and is placed at array
 * index outlier_at (the two sizes swap places in the input). */
static void fit(const double *e, int n, int outlier_at, double outlier, gq_sweepfit *f)
{
    uint64_t s[16];
    double g[16];
    int mid = n / 2;
    for (int i = 0; i < n; i++) {
        int k = i == outlier_at ? mid : i == mid ? outlier_at : i;
        s[i] = (uint64_t)(k + 1) * GQ_MiB;
        g[i] = rate(s[i], k == mid ? outlier : e[k]);
    }
    assert_int_equal(gq_sweepfit_compute(s, g, n, f, NULL), 0);
}

/* Under 0.5 % of noise on seven points; the middle size 60 % slow. Wherever it sits
 * in the input it is the one outlier, and the fit is the model's within the noise. */
static void outlier_anywhere(void **state)
{
    (void)state;
    static const double e[7] = {0.004, -0.003, 0.001, -0.005, 0.002, 0.003, -0.002};
    for (int at = 0; at < 7; at++) {
        gq_sweepfit f;
        fit(e, 7, at, 0.6, &f);
        if (f.noutliers != 1 || fabs(f.bw_gbps - BW) > 0.03 * BW)
            fail_msg("outlier at %d: %d outliers, %.3f GB/s", at, f.noutliers, f.bw_gbps);
        assert_int_equal(f.npoints, 7);
        assert_int_equal(f.nsizes, 7);
    }
}

/* Eight points (an even count): +-2 % noise and one point 9 % slow. The MAD
 * scale is 1.4826 x 0.02 ~ 0.030; the slow point is ~3 scales out, inside
 * Tukey's 4.685: kept. Twice that scale would keep it as well, so the second
 * case has +-1 % noise and a point 12 % slow: ~8 scales out, rejected; with a
 * doubled scale it would be ~4, kept. */
static void even_count_scale(void **state)
{
    (void)state;
    static const double e2[8] = {0.02, -0.02, 0.02, -0.02, 0.02, -0.02, 0.02, -0.02};
    gq_sweepfit f;
    fit(e2, 8, 4, 0.09, &f);
    assert_int_equal(f.noutliers, 0);
    static const double e1[8] = {0.01, -0.01, 0.01, -0.01, 0.01, -0.01, 0.01, -0.01};
    fit(e1, 8, 4, 0.12, &f);
    assert_int_equal(f.noutliers, 1);
    assert_true(fabs(f.bw_gbps - BW) < 0.02 * BW);
    assert_true(f.rms_rel < 0.02);
    assert_true(f.rms_rel > 0.005); /* the +-1 % noise of the points kept */
}

/* Four points are enough for the robust fit: the slow one is an outlier. */
static void four_points(void **state)
{
    (void)state;
    static const double e[4] = {0.002, -0.001, 0, 0.001};
    gq_sweepfit f;
    fit(e, 4, 2, 0.8, &f);
    assert_int_equal(f.npoints, 4);
    assert_int_equal(f.noutliers, 1);
    assert_true(fabs(f.bw_gbps - BW) < 0.02 * BW);
}

/* Times that would need a negative fixed cost: the fit goes through the origin
 * (a = 0) and B is the weighted slope through it. */
static void negative_intercept_clamped(void **state)
{
    (void)state;
    uint64_t s[8];
    double g[8];
    for (int i = 0; i < 8; i++) {
        s[i] = (uint64_t)(i + 1) * GQ_MiB;
        double t_us = (double)s[i] / (BW * 1e3) - 3.0;
        g[i] = (double)s[i] / (t_us * 1e3);
    }
    gq_sweepfit f;
    assert_int_equal(gq_sweepfit_compute(s, g, 8, &f, NULL), 0);
    assert_true(f.a_us == 0);
    assert_true(f.half_bytes == 0);
    assert_true(f.bw_gbps > BW && f.bw_gbps < 1.05 * BW);
}

static void predict_edges(void **state)
{
    (void)state;
    gq_sweepfit f = {.a_us = 10, .bw_gbps = 20};
    assert_true(gq_sweepfit_predict_gbps(NULL, 1024) == 0);
    assert_true(gq_sweepfit_predict_gbps(&f, 0) == 0);
    /* 20 MB at 20 GB/s is 1000 us, plus 10 us */
    assert_true(fabs(gq_sweepfit_predict_gbps(&f, 20000000) - 20000000 / (1010.0 * 1e3)) < 1e-12);
    f.bw_gbps = 0;
    assert_true(gq_sweepfit_predict_gbps(&f, 1024) == 0);
    f.bw_gbps = NAN;
    assert_true(gq_sweepfit_predict_gbps(&f, 1024) == 0);
}

/* Tukey's biweight runs to its fixed point, not one step: on twelve points
 * with +-3 % of noise and two points 10 % and 14 % slow, each step changes the
 * weights of the doubtful points and so the fit. The figures are the fixed
 * point's (another step moves them by under 1e-9); one Tukey step leaves the
 * fit elsewhere. */
static void tukey_to_fixed_point(void **state)
{
    (void)state;
    static const double e[12] = {0.03,  -0.02, 0.10, 0.01,   -0.03, 0.025,
                                 -0.01, 0.14,  0.02, -0.025, 0.015, -0.02};
    uint64_t s[12];
    double g[12];
    for (int i = 0; i < 12; i++) {
        s[i] = (uint64_t)(i + 1) * GQ_MiB;
        g[i] = rate(s[i], e[i]);
    }
    gq_sweepfit f;
    assert_int_equal(gq_sweepfit_compute(s, g, 12, &f, NULL), 0);
    assert_int_equal(f.noutliers, 0);
    assert_near(f.a_us, 11.783217806946697, 1e-6);    /* one Tukey step: 11.486 */
    assert_near(f.bw_gbps, 20.087205822265464, 1e-6); /* one Tukey step: 20.012 */
}

/* 256 points is the most a fit takes; 257 is refused. */
static void at_most_256(void **state)
{
    (void)state;
    static uint64_t s[257];
    static double g[257];
    for (int i = 0; i < 257; i++) {
        s[i] = (uint64_t)(i % 16 + 1) * GQ_MiB;
        g[i] = rate(s[i], 0);
    }
    gq_sweepfit f;
    assert_int_equal(gq_sweepfit_compute(s, g, 256, &f, NULL), 0);
    assert_int_equal(f.npoints, 256);
    assert_near(f.bw_gbps, BW, 1e-6);
    assert_int_equal(gq_sweepfit_compute(s, g, 257, &f, NULL), GQ_E_USAGE);
}

/* Copy times that do not grow with size (a slope of exactly 0) fit no bandwidth. */
static void flat_times(void **state)
{
    (void)state;
    const uint64_t s[] = {GQ_MiB, 2 * GQ_MiB};
    const double g[] = {1.0, 2.0};
    gq_sweepfit f;
    gq_err e = {0};
    assert_int_equal(gq_sweepfit_compute(s, g, 2, &f, &e), GQ_E_FAIL);
    assert_non_null(strstr(e.msg, "copy times do not grow with buffer size"));
}

/* A 256-point fit reads all 256 residuals for its scale: with +-3 % of noise
 * (a fixed pattern) and every 17th point 12 % slow, the fit below is the one
 * of the full scale (a scale from 255 of them lands elsewhere). */
static void scale_of_256(void **state)
{
    (void)state;
    static uint64_t s[256];
    static double g[256];
    for (int i = 0; i < 256; i++) {
        s[i] = (uint64_t)(i % 16 + 1) * GQ_MiB;
        double e = 0.03 * sin(0.7 * i + 0.3 * (i % 5));
        g[i] = rate(s[i], i % 17 == 0 ? 0.12 : e);
    }
    gq_sweepfit f;
    assert_int_equal(gq_sweepfit_compute(s, g, 256, &f, NULL), 0);
    assert_near(f.a_us, 9.7086471928645697, 1e-6); /* from 255 residuals: 9.70835 */
    assert_near(f.bw_gbps, 19.943568284158157, 1e-6);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(outlier_anywhere),
        cmocka_unit_test(even_count_scale),
        cmocka_unit_test(negative_intercept_clamped),
        cmocka_unit_test(four_points),
        cmocka_unit_test(predict_edges),
        cmocka_unit_test(tukey_to_fixed_point),
        cmocka_unit_test(at_most_256),
        cmocka_unit_test(flat_times),
        cmocka_unit_test(scale_of_256),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
