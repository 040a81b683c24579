/* The overlap of worker windows (DESIGN.md rule 3): min over workers of
 * shared / own, shared = min end - max start. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "measure/harness.h"

static void test_identical_windows(void **state)
{
    double s[] = {1.0, 1.0, 1.0}, e[] = {4.0, 4.0, 4.0};
    assert_true(gq_harness_overlap(s, e, 3) == 1.0);
}

static void test_one_worker(void **state)
{
    double s[] = {2.0}, e[] = {3.0};
    assert_true(gq_harness_overlap(s, e, 1) == 1.0);
}

static void test_late_start_98(void **state)
{
    /* one worker starts 20 ms late in a 1 s window: 98%, below the rule */
    double s[] = {0.0, 0.02}, e[] = {1.0, 1.0};
    double ov = gq_harness_overlap(s, e, 2);
    assert_true(fabs(ov - 0.98) < 1e-12);
    assert_true(ov < GQ_OVERLAP_MIN);
}

static void test_early_end_995(void **state)
{
    double s[] = {0.0, 0.0, 0.0}, e[] = {1.0, 0.995, 1.0};
    double ov = gq_harness_overlap(s, e, 3);
    assert_true(fabs(ov - 0.995) < 1e-12);
    assert_true(ov >= GQ_OVERLAP_MIN);
}

static void test_staggered(void **state)
{
    /* seed 000's mistake: workers that copied one after the other */
    double s[] = {0.0, 1.0}, e[] = {1.0, 2.0};
    assert_true(gq_harness_overlap(s, e, 2) == 0.0);
    double s2[] = {0.0, 0.5}, e2[] = {1.0, 1.5};
    assert_true(fabs(gq_harness_overlap(s2, e2, 2) - 0.5) < 1e-12);
}

static void test_empty_window(void **state)
{
    double s[] = {0.0, 0.5}, e[] = {1.0, 0.5};
    assert_true(gq_harness_overlap(s, e, 2) == 0.0);
}

static void test_directions(void **state)
{
    gq_flow f = {.src = {GQ_EP_HOST, 0}, .dst = {GQ_EP_GPU, 1}};
    assert_int_equal(gq_flow_direction(&f), GQ_DIR_H2D);
    f = (gq_flow){.src = {GQ_EP_GPU, 1}, .dst = {GQ_EP_HOST, GQ_NUMA_LOCAL}};
    assert_int_equal(gq_flow_direction(&f), GQ_DIR_D2H);
    f = (gq_flow){.src = {GQ_EP_GPU, 1}, .dst = {GQ_EP_GPU, 2}};
    assert_int_equal(gq_flow_direction(&f), GQ_DIR_P2P);
    f = (gq_flow){.src = {GQ_EP_GPU, 3}, .dst = {GQ_EP_GPU, 3}};
    assert_int_equal(gq_flow_direction(&f), GQ_DIR_LOCAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_identical_windows), cmocka_unit_test(test_one_worker),
        cmocka_unit_test(test_late_start_98),     cmocka_unit_test(test_early_end_995),
        cmocka_unit_test(test_staggered),         cmocka_unit_test(test_empty_window),
        cmocka_unit_test(test_directions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
