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
#include "analysis/placement_internal.h"

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

/* The structured replica search (18 GPUs, beyond the exhaustive limit) on two
 * interleaved P2P domains, {0-4,9-12} and {5-8,13-17}: index blocks and round
 * robin both span the two, so the blocks taken in domain order win, and the
 * replicas come out in that order: replica 1 is the lower domain, replica 2 the
 * other. */
static void replicas_by_domain(void **state)
{
    (void)state;
    gq_place_model *m = flat_model(18);
    m->ndomains = 2;
    for (int g = 0; g < 18; g++)
        m->domains[(g >= 5 && g <= 8) || g >= 13] |= (gq_gpuset)1 << g;
    gq_place_result *res = solve(m, (gq_place_roles){.replicas = 2});
    assert_false(res->exhaustive);
    assert_int_equal(res->chosen.nreplicas, 2);
    for (int r = 0; r < 2; r++) {
        const gq_place_replica *rep = &res->chosen.replicas[r];
        assert_int_equal(rep->ngpus, 9);
        for (int i = 0; i < rep->ngpus; i++)
            if (gq_place_domain_of(m, rep->gpus[i]) != r)
                fail_msg("replica %d holds GPU %d of domain %d", r + 1, rep->gpus[i],
                         gq_place_domain_of(m, rep->gpus[i]));
    }
    free(res);
    free(m);
}

/* A replica measured below its prediction by more than the tolerance is slow,
 * and named with both figures; one measured above it is not. */
static void replica_slow_one_way(void **state)
{
    (void)state;
    gq_place_map *c = calloc(1, sizeof *c);
    assert_non_null(c);
    char buf[256];
    c->nreplicas = 2;
    c->replicas[0].predicted_gbps = 50;
    c->replicas[0].measured_gbps = 60;
    c->replicas[1].predicted_gbps = 50;
    c->replicas[1].measured_gbps = 40;
    assert_int_equal(gq_place_slow_flows(c, 0.05, buf, sizeof buf), 1);
    assert_string_equal(buf, "replica 1 40.0 (predicted 50.0)");
    c->replicas[1].measured_gbps = 48;
    assert_int_equal(gq_place_slow_flows(c, 0.05, buf, sizeof buf), 0);
    assert_string_equal(buf, "");
    free(c);
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
    /* offload within the tolerance too: the slowest replica decides, by more than the tolerance */
    b.offload_measured = 29;
    a.nreplicas = b.nreplicas = 2;
    a.replicas_measured_min = 106;
    b.replicas_measured_min = 100;
    assert_true(gq_place_attempt_better(&a, &b, 0.05));
    assert_false(gq_place_attempt_better(&b, &a, 0.05));
    a.replicas_measured_min = 105;
    assert_false(gq_place_attempt_better(&a, &b, 0.05));
    /* no replicas: equal */
    a.nreplicas = 0;
    a.replicas_measured_min = 200;
    assert_false(gq_place_attempt_better(&a, &b, 0.05));
}

/* How many units of each kind of limit each kind of flow uses: host limits
 * count the host leg at their GPU (a staged handoff has both legs, so a
 * duplex budget holding both of its GPUs counts it twice); GPU-to-GPU limits
 * count only their own kind of flow, from a GPU of `a` to one of `b`. GPUs 0
 * and 1 are in `a`, 2 in `b`; -1 is the host end. */
static void limit_use_every_kind(void **state)
{
    (void)state;
    static const struct {
        gq_limit_kind lim;
        gq_pflow_kind kind;
        int src, dst, use;
    } row[] = {
        {GQ_LIMIT_H2D, GQ_PF_H2D, -1, 0, 1},      {GQ_LIMIT_H2D, GQ_PF_H2D, -1, 2, 0},
        {GQ_LIMIT_H2D, GQ_PF_D2H, 0, -1, 0},      {GQ_LIMIT_H2D, GQ_PF_STAGED, 2, 1, 1},
        {GQ_LIMIT_H2D, GQ_PF_STAGED, 0, 2, 0},    {GQ_LIMIT_H2D, GQ_PF_P2P, 2, 0, 0},
        {GQ_LIMIT_D2H, GQ_PF_D2H, 1, -1, 1},      {GQ_LIMIT_D2H, GQ_PF_D2H, 2, -1, 0},
        {GQ_LIMIT_D2H, GQ_PF_H2D, -1, 0, 0},      {GQ_LIMIT_D2H, GQ_PF_STAGED, 0, 2, 1},
        {GQ_LIMIT_D2H, GQ_PF_STAGED, 2, 0, 0},    {GQ_LIMIT_D2H, GQ_PF_P2P, 0, 2, 0},
        {GQ_LIMIT_DUPLEX, GQ_PF_H2D, -1, 0, 1},   {GQ_LIMIT_DUPLEX, GQ_PF_D2H, 1, -1, 1},
        {GQ_LIMIT_DUPLEX, GQ_PF_STAGED, 0, 1, 2}, {GQ_LIMIT_DUPLEX, GQ_PF_STAGED, 0, 2, 1},
        {GQ_LIMIT_DUPLEX, GQ_PF_STAGED, 2, 1, 1}, {GQ_LIMIT_DUPLEX, GQ_PF_P2P, 0, 1, 0},
        {GQ_LIMIT_P2P, GQ_PF_P2P, 0, 2, 1},       {GQ_LIMIT_P2P, GQ_PF_P2P, 2, 0, 0},
        {GQ_LIMIT_P2P, GQ_PF_P2P, 0, 1, 0},       {GQ_LIMIT_P2P, GQ_PF_STAGED, 0, 2, 0},
        {GQ_LIMIT_STAGED, GQ_PF_STAGED, 1, 2, 1}, {GQ_LIMIT_STAGED, GQ_PF_STAGED, 2, 1, 0},
        {GQ_LIMIT_STAGED, GQ_PF_STAGED, 0, 1, 0}, {GQ_LIMIT_STAGED, GQ_PF_P2P, 0, 2, 0},
        {GQ_LIMIT_STAGED, GQ_PF_H2D, -1, 2, 0},   {GQ_LIMIT_STAGED, GQ_PF_STAGED, -1, 2, 0},
    };
    for (size_t r = 0; r < sizeof row / sizeof row[0]; r++) {
        gq_place_limit l = {.kind = row[r].lim, .a = 0x3, .b = 0x4, .capacity_gbps = 10};
        gq_pflow f = {.kind = row[r].kind, .src = row[r].src, .dst = row[r].dst};
        int u = gq_place_limit_use(&l, &f);
        if (u != row[r].use)
            fail_msg("row %zu: limit kind %d, flow kind %d %d->%d: uses %d, expected %d", r, row[r].lim,
                     row[r].kind, row[r].src, row[r].dst, u, row[r].use);
    }
}

/* A learned limit on staged handoffs binds the prediction: two GPUs without
 * P2P, 20 GB/s staged alone, a staged limit of 12 from GPU 0 to GPU 1: the
 * handoff 0->1 is predicted at 12, bound by that limit; 1->0 is not in it. */
static void staged_limit_binds(void **state)
{
    (void)state;
    gq_place_model *m = flat_model(2);
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) {
            m->p2p[i][j] = 0;
            m->no_p2p[i][j] = i != j;
            m->staged[i][j] = i != j ? 20 : 0;
        }
    gq_pflow f[2] = {{GQ_PF_STAGED, 0, 1}, {GQ_PF_STAGED, 1, 0}};
    gq_pflow_pred out[2];
    assert_true(gq_place_predict(m, f, 1, out) == 20);
    gq_err e = {0};
    assert_int_equal(gq_place_model_add_limit(m, GQ_LIMIT_STAGED, 0x1, 0x2, 12, "test", &e), GQ_OK);
    assert_true(gq_place_predict(m, f, 1, out) == 12);
    assert_true(out[0].gbps == 12 && out[0].alone == 20);
    assert_int_equal(out[0].binding, 0);
    assert_true(gq_place_predict(m, &f[1], 1, out) == 20);
    free(m);
}

/* An attempt's offload figure is the sum of both directions when both were
 * measured, a direction at exactly 0 GB/s included; -1 (not measured) when
 * either is. */
static void attempt_offload_sum(void **state)
{
    (void)state;
    static gq_place_map c;
    gq_place_attempt a;
    static const struct {
        double h2d, d2h, want;
    } row[] = {{20, 15, 35}, {20, 0, 20}, {0, 15, 15}, {0, 0, 0}, {-1, 15, -1}, {20, -1, -1}, {-1, -1, -1}};
    for (size_t r = 0; r < sizeof row / sizeof row[0]; r++) {
        memset(&c, 0, sizeof c);
        c.nworkers = 1;
        c.workers[0].gpu = 3;
        c.offload_predicted_h2d = 22;
        c.offload_predicted_d2h = 18;
        c.offload_measured_h2d = row[r].h2d;
        c.offload_measured_d2h = row[r].d2h;
        gq_place_summarize_attempt(&c, &a);
        if (a.offload_measured != row[r].want)
            fail_msg("h2d %g, d2h %g: offload measured %g, expected %g", row[r].h2d, row[r].d2h,
                     a.offload_measured, row[r].want);
        assert_true(a.offload_predicted == 40);
        assert_int_equal(a.nworkers, 1);
        assert_int_equal(a.workers[0], 3);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pairs_reach),
        cmocka_unit_test(replicas_reach),
        cmocka_unit_test(replicas_by_domain),
        cmocka_unit_test(replica_slow_one_way),
        cmocka_unit_test(gain_when_naive_predicts_nothing),
        cmocka_unit_test(attempt_within_tolerance),
        cmocka_unit_test(limit_use_every_kind),
        cmocka_unit_test(staged_limit_binds),
        cmocka_unit_test(attempt_offload_sum),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
