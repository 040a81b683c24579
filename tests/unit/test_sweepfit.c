/* Sweep fit t = a + s/B: recovers known a and B from synthetic sweeps, with
 * noise and outliers; rejects sweeps with fewer than 2 sizes. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "analysis/sweepfit.h"
#include "core/units.h"

/* The default sweep: 4 KiB .. 1 GiB in powers of two (19 sizes). */
static int default_sizes(uint64_t *s)
{
    int n = 0;
    for (uint64_t b = 4 * GQ_KiB; b <= GQ_GiB; b *= 2)
        s[n++] = b;
    return n;
}

static double model_gbps(double a_us, double bw, uint64_t s)
{
    double t_us = a_us + (double)s / (bw * 1e3);
    return (double)s / (t_us * 1e3);
}

/* Deterministic pseudo-noise in [-1, 1]. */
static double jitter(unsigned i)
{
    unsigned x = i * 2654435761u + 12345u;
    x ^= x >> 13;
    x *= 0x5bd1e995u;
    x ^= x >> 15;
    return ((double)(x % 20001) / 10000.0) - 1.0;
}

static void exact_model(void **state)
{
    (void)state;
    uint64_t s[32];
    double g[32];
    int n = default_sizes(s);
    for (int i = 0; i < n; i++)
        g[i] = model_gbps(8.0, 55.0, s[i]);
    gq_sweepfit f;
    assert_int_equal(gq_sweepfit_compute(s, g, n, &f, NULL), 0);
    assert_true(fabs(f.a_us - 8.0) < 0.01);
    assert_true(fabs(f.bw_gbps - 55.0) < 0.01);
    assert_true(fabs(f.half_bytes - 8e-6 * 55e9) < 1e3); /* 440 kB */
    assert_int_equal(f.nsizes, n);
    assert_int_equal(f.noutliers, 0);
    assert_true(f.rms_rel < 1e-6);
    /* at n1/2 the model gives B/2 */
    assert_true(fabs(gq_sweepfit_predict_gbps(&f, (uint64_t)f.half_bytes) - 27.5) < 0.05);
}

static void noisy_model(void **state)
{
    (void)state;
    uint64_t s[32];
    double g[32];
    int n = default_sizes(s);
    for (int i = 0; i < n; i++)
        g[i] = model_gbps(2.5, 394.0, s[i]) * (1.0 + 0.02 * jitter((unsigned)i));
    gq_sweepfit f;
    assert_int_equal(gq_sweepfit_compute(s, g, n, &f, NULL), 0);
    assert_true(fabs(f.a_us - 2.5) / 2.5 < 0.08);
    assert_true(fabs(f.bw_gbps - 394.0) / 394.0 < 0.03);
}

static void outliers_rejected(void **state)
{
    (void)state;
    uint64_t s[32];
    double g[32];
    int n = default_sizes(s);
    for (int i = 0; i < n; i++)
        g[i] = model_gbps(10.0, 25.0, s[i]) * (1.0 + 0.005 * jitter((unsigned)i + 7));
    g[3] *= 0.3;  /* a small size that stalled */
    g[15] *= 0.5; /* a large size that collided with something */
    gq_sweepfit f;
    assert_int_equal(gq_sweepfit_compute(s, g, n, &f, NULL), 0);
    assert_true(fabs(f.a_us - 10.0) / 10.0 < 0.05);
    assert_true(fabs(f.bw_gbps - 25.0) / 25.0 < 0.02);
    assert_true(f.noutliers >= 2);
}

/* Seed 001 section 6, pair 0->1 within a domain: 1/4/16/64 MiB at
 * 36.71/49.53/53.78/54.51 GB/s. The asymptote must lie just above the
 * largest measured rate and the fixed cost be a few microseconds. */
static void seed001_within(void **state)
{
    (void)state;
    uint64_t s[] = {GQ_MiB, 4 * GQ_MiB, 16 * GQ_MiB, 64 * GQ_MiB};
    double g[] = {36.71, 49.53, 53.78, 54.51};
    gq_sweepfit f;
    assert_int_equal(gq_sweepfit_compute(s, g, 4, &f, NULL), 0);
    assert_true(f.bw_gbps > 54.0 && f.bw_gbps < 57.0);
    assert_true(f.a_us > 3.0 && f.a_us < 12.0);
    assert_true(f.half_bytes > 128e3 && f.half_bytes < 700e3);
}

static void too_few_sizes(void **state)
{
    (void)state;
    uint64_t s[] = {GQ_MiB, GQ_MiB, GQ_MiB};
    double g[] = {10, 11, 12};
    gq_sweepfit f;
    gq_err e = {0};
    assert_int_equal(gq_sweepfit_compute(s, g, 3, &f, &e), GQ_E_USAGE);
    assert_non_null(strstr(e.msg, "at least 2"));
    assert_int_equal(gq_sweepfit_compute(s, g, 1, &f, NULL), GQ_E_USAGE);
    assert_int_equal(gq_sweepfit_compute(s, g, 0, &f, NULL), GQ_E_USAGE);
    /* a zero or negative rate is no point at all */
    uint64_t s2[] = {GQ_MiB, 2 * GQ_MiB};
    double g2[] = {10, 0};
    assert_int_equal(gq_sweepfit_compute(s2, g2, 2, &f, NULL), GQ_E_USAGE);
    g2[1] = NAN;
    assert_int_equal(gq_sweepfit_compute(s2, g2, 2, &f, NULL), GQ_E_USAGE);
}

static void two_sizes_exact(void **state)
{
    (void)state;
    uint64_t s[] = {GQ_MiB, 64 * GQ_MiB};
    double g[] = {model_gbps(5, 50, s[0]), model_gbps(5, 50, s[1])};
    gq_sweepfit f;
    assert_int_equal(gq_sweepfit_compute(s, g, 2, &f, NULL), 0);
    assert_true(fabs(f.a_us - 5) < 1e-6 && fabs(f.bw_gbps - 50) < 1e-6);
}

/* Times that shrink with size cannot be a bandwidth. */
static void no_bandwidth(void **state)
{
    (void)state;
    uint64_t s[] = {GQ_MiB, 2 * GQ_MiB};
    double g[] = {1, 1000}; /* 2 MiB finishes sooner than 1 MiB */
    gq_sweepfit f;
    gq_err e = {0};
    assert_int_equal(gq_sweepfit_compute(s, g, 2, &f, &e), GQ_E_FAIL);
    assert_non_null(strstr(e.msg, "do not grow"));
}

/* A flat rate (pure bandwidth, no fixed cost) gives a = 0, never negative. */
static void zero_fixed_cost(void **state)
{
    (void)state;
    uint64_t s[32];
    double g[32];
    int n = default_sizes(s);
    for (int i = 0; i < n; i++)
        g[i] = 30.0 * (1 + 0.01 * jitter((unsigned)i));
    gq_sweepfit f;
    assert_int_equal(gq_sweepfit_compute(s, g, n, &f, NULL), 0);
    assert_true(f.a_us >= 0);
    assert_true(fabs(f.bw_gbps - 30.0) < 0.6);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(exact_model),       cmocka_unit_test(noisy_model),
        cmocka_unit_test(outliers_rejected), cmocka_unit_test(seed001_within),
        cmocka_unit_test(too_few_sizes),     cmocka_unit_test(two_sizes_exact),
        cmocka_unit_test(no_bandwidth),      cmocka_unit_test(zero_fixed_cost),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
