/* Placement at its edges: where the exhaustive search stops (the count
 * estimates for prefill/decode mappings and for replica partitions, each
 * just inside or just outside the limit), the predicted gain when the naive
 * mapping predicts nothing, and the tolerance an attempt must beat. Written
 * for the survivors of mutation round 4 (issue 30). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "analysis/placement.h"

/* n GPUs, every P2P path at 50 GB/s, every host path at 25. */
static gq_place_model *flat_model(int n)
{
    gq_place_model *m = calloc(1, sizeof *m);
    assert_non_null(m);
    m->ngpu = n;
    m->tolerance = 0.05;
    for (int i = 0; i < n; i++) {
        m->h2d[i] = m->d2h[i] = 25;
        for (int j = 0; j < n; j++)
            m->p2p[i][j] = i == j ? 0 : 50;
    }
    return m;
}

static gq_place_result *solve(const gq_place_model *m, gq_place_roles roles)
{
    gq_place_result *res = calloc(1, sizeof *res);
    assert_non_null(res);
    gq_err e = {0};
    if (gq_place_solve(m, &roles, res, &e) != GQ_OK)
        fail_msg("solve: %s", e.msg);
    return res;
}

/* The mapping count estimate against the limit (200000):
 * 2 prefill, 4 decode of 12 GPUs: C(12,2) C(10,4) = 13860 sets, each with
 * 4^2 = 16 ways to hand the 4 decode GPUs to the 2 prefill ones (the
 * larger role's count as the power): 221760, beyond, so the heuristic;
 * 3 prefill, 3 decode of 11 GPUs: C(11,3) C(8,3) = 9240 sets, 3! = 6 ways
 * each: 55440, within, so every mapping is compared (27 ways each, the
 * power, would be 249480: beyond). */
static void pairs_reach(void **state)
{
    (void)state;
    gq_place_model *m = flat_model(12);
    gq_place_result *res = solve(m, (gq_place_roles){.prefill = 2, .decode = 4});
    assert_false(res->exhaustive);
    free(res);
    free(m);
    m = flat_model(11);
    res = solve(m, (gq_place_roles){.prefill = 3, .decode = 3});
    assert_true(res->exhaustive);
    assert_int_equal(res->candidates, 55440);
    free(res);
    free(m);
}

/* Replica partitions against the limit (20000): 2 replicas of 9 on 18
 * GPUs are C(18,9) / 2! = 24310 partitions, beyond, so the structured
 * search; 2 of 8 on 16 GPUs are 6435, within. */
static void replicas_reach(void **state)
{
    (void)state;
    gq_place_model *m = flat_model(18);
    gq_place_result *res = solve(m, (gq_place_roles){.replicas = 2});
    assert_false(res->exhaustive);
    free(res);
    free(m);
    m = flat_model(16);
    res = solve(m, (gq_place_roles){.replicas = 2});
    assert_true(res->exhaustive);
    free(res);
    free(m);
}

/* No path carries anything (every rate 0): the naive mapping predicts 0,
 * and the gain is 0, "not known", never a division by zero. */
static void gain_when_naive_predicts_nothing(void **state)
{
    (void)state;
    gq_place_model *m = flat_model(2);
    for (int i = 0; i < 2; i++) {
        m->h2d[i] = m->d2h[i] = 0;
        for (int j = 0; j < 2; j++)
            m->p2p[i][j] = 0;
    }
    gq_place_result *res = solve(m, (gq_place_roles){.prefill = 1, .decode = 1});
    assert_true(res->naive.pairs_predicted == 0);
    assert_true(res->gain_pairs == 0);
    free(res);
    free(m);
}

/* A later attempt wins on its pairs aggregate only by more than the
 * tolerance: 101 against 100 at 5 % does not, 106 does; 96 against 100
 * does not lose either, so the offload figures decide. */
static void attempt_within_tolerance(void **state)
{
    (void)state;
    gq_place_attempt a = {.npairs = 1, .pairs_valid = true, .pairs_measured = 101};
    gq_place_attempt b = {.npairs = 1, .pairs_valid = true, .pairs_measured = 100};
    assert_false(gq_place_attempt_better(&a, &b, 0.05));
    a.pairs_measured = 106;
    assert_true(gq_place_attempt_better(&a, &b, 0.05));
    assert_false(gq_place_attempt_better(&b, &a, 0.05));
    a.pairs_measured = 96;
    a.nworkers = b.nworkers = 1;
    a.offload_measured = 30;
    b.offload_measured = 20;
    assert_true(gq_place_attempt_better(&a, &b, 0.05));
    assert_false(gq_place_attempt_better(&b, &a, 0.05));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pairs_reach),
        cmocka_unit_test(replicas_reach),
        cmocka_unit_test(gain_when_naive_predicts_nothing),
        cmocka_unit_test(attempt_within_tolerance),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
