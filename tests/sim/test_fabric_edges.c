/* The fabric's solver and routes at their edges: a problem solved twice (the
 * scratch sums start again), max-min shares by hand, demands, inactive flows;
 * a route into exactly as many hops as there are; routes refused. Written for
 * the survivors of bench/mutation. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "backend/sim/sim.h"
#include "../test_util.h"

/* Two links (10 and 4); flow 0 crosses both, flow 1 the first, flow 2 the second. */
static gq_sim_problem *three_flows(void)
{
    gq_sim_problem *p = gq_sim_problem_alloc(2, 3, 4);
    assert_non_null(p);
    p->cap[0] = 10;
    p->cap[1] = 4;
    p->first[0] = 0;
    p->ent[0] = (gq_sim_entry){.c = 0, .a = 1, .w = 1};
    p->ent[1] = (gq_sim_entry){.c = 1, .a = 1, .w = 1};
    p->first[1] = 2;
    p->ent[2] = (gq_sim_entry){.c = 0, .a = 1, .w = 1};
    p->first[2] = 3;
    p->ent[3] = (gq_sim_entry){.c = 1, .a = 1, .w = 1};
    p->first[3] = 4;
    for (int f = 0; f < 3; f++)
        p->active[f] = true;
    return p;
}

static void solve_twice(void **state)
{
    (void)state;
    gq_sim_problem *p = three_flows();
    gq_sim_solve(p);
    /* link 1 (4) is shared by flows 0 and 2: 2 each; flow 1 gets the rest of link 0 */
    assert_near(p->rate[0], 2, 1e-12);
    assert_near(p->rate[2], 2, 1e-12);
    assert_near(p->rate[1], 8, 1e-12);
    /* again, with flow 2 off: flow 0 takes link 1 alone */
    p->active[2] = false;
    gq_sim_solve(p);
    assert_near(p->rate[0], 4, 1e-12);
    assert_near(p->rate[1], 6, 1e-12);
    assert_near(p->rate[2], 0, 0);
    /* and a third time with everything on: the first answer again */
    p->active[2] = true;
    gq_sim_solve(p);
    assert_near(p->rate[0], 2, 1e-12);
    assert_near(p->rate[1], 8, 1e-12);
    /* a demand below the fair share frees capacity for the others */
    p->demand[2] = 1;
    gq_sim_solve(p);
    assert_near(p->rate[2], 1, 1e-12);
    assert_near(p->rate[0], 3, 1e-12);
    assert_near(p->rate[1], 7, 1e-12);
    gq_sim_problem_free(p);
}

/* A weight is a share of the bottleneck: 3:1 on one link of 8. */
static void weights(void **state)
{
    (void)state;
    gq_sim_problem *p = gq_sim_problem_alloc(1, 2, 2);
    p->cap[0] = 8;
    p->first[0] = 0;
    p->ent[0] = (gq_sim_entry){.c = 0, .a = 1, .w = 3};
    p->first[1] = 1;
    p->ent[1] = (gq_sim_entry){.c = 0, .a = 1, .w = 1};
    p->first[2] = 2;
    p->active[0] = p->active[1] = true;
    gq_sim_solve(p);
    assert_near(p->rate[0], 6, 1e-12);
    assert_near(p->rate[1], 2, 1e-12);
    /* a flow that costs twice its rate (a = 2) on the link */
    p->ent[0] = (gq_sim_entry){.c = 0, .a = 2, .w = 1};
    gq_sim_solve(p);
    assert_near(2 * p->rate[0] + p->rate[1], 8, 1e-12);
    gq_sim_problem_free(p);
}

/* Flows that cross nothing are bound by nothing: rate 0, and the solver stops. */
static void unbound_flows(void **state)
{
    (void)state;
    gq_sim_problem *p = gq_sim_problem_alloc(1, 3, 1);
    p->cap[0] = 5;
    p->first[0] = 0;
    p->first[1] = 0;
    p->first[2] = 0;
    p->ent[0] = (gq_sim_entry){.c = 0, .a = 1, .w = 1};
    p->first[3] = 1; /* flows 0 and 1 have no entries, flow 2 crosses constraint 0 */
    p->active[0] = p->active[1] = p->active[2] = true;
    p->rate[0] = p->rate[1] = 99;
    gq_sim_solve(p);
    assert_near(p->rate[2], 5, 1e-12);
    assert_true(p->rate[0] == 0 && p->rate[1] == 0);
    gq_sim_problem_free(p);
}

/* The solver's tie band at its boundary: flows whose shares are within a
 * relative 1e-9 of the smallest are fixed in the same filling step, the rest
 * in a later one. Two flows on two separate links, the second link wider by
 * a factor 1 + d: d just inside the band (and exactly at its edge) takes one
 * step; d just outside takes two; either way each flow gets its own link. */
static void tie_band_boundary(void **state)
{
    (void)state;
    static const struct {
        double d;
        int steps;
    } cases[] = {{0.0, 1}, {0.9e-9, 1}, {1e-9, 1}, {1.1e-9, 2}, {1e-6, 2}};
    gq_sim_problem *p = gq_sim_problem_alloc(2, 2, 2);
    assert_non_null(p);
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        p->cap[0] = 4.0;
        p->cap[1] = 4.0 * (1.0 + cases[k].d);
        p->first[0] = 0;
        p->ent[0] = (gq_sim_entry){.c = 0, .a = 1, .w = 1};
        p->first[1] = 1;
        p->ent[1] = (gq_sim_entry){.c = 1, .a = 1, .w = 1};
        p->first[2] = 2;
        p->active[0] = p->active[1] = true;
        gq_sim_solve(p);
        if (p->iterations != cases[k].steps)
            fail_msg("links 4 and 4 x (1 + %g): %d filling steps, want %d", cases[k].d, p->iterations,
                     cases[k].steps);
        assert_true(p->rate[0] == p->cap[0]);
        assert_true(p->rate[1] == p->cap[1]);
    }
    gq_sim_problem_free(p);
}

static void routes(void **state)
{
    (void)state;
    gq_sim_machine *m = NULL;
    gq_err e = {0};
    assert_int_equal(gq_sim_load("a100x6", &m, &e), GQ_OK);
    int a = -1, b = -1;
    for (int i = 0; i < m->ngpu && a < 0; i++)
        for (int j = 0; j < m->ngpu; j++)
            if (i != j && gq_sim_nvlink_between(m, i, j) >= 0) {
                a = i;
                b = j;
                break;
            }
    assert_true(a >= 0);
    gq_sim_hop h[GQ_SIM_MAX_HOPS];
    /* an NVLink bridge is one hop, and a room of one hop holds it */
    assert_int_equal(gq_sim_route(m, m->gpus[a].node, m->gpus[b].node, true, h, 1), 1);
    /* over PCIe the path is longer than one hop: refused, not truncated */
    int n = gq_sim_route(m, m->gpus[a].node, m->gpus[b].node, false, h, GQ_SIM_MAX_HOPS);
    assert_true(n > 1);
    assert_int_equal(gq_sim_route(m, m->gpus[a].node, m->gpus[b].node, false, h, n), n);
    assert_int_equal(gq_sim_route(m, m->gpus[a].node, m->gpus[b].node, false, h, n - 1), -1);
    /* to itself: no hops; out of range or no room: -1 */
    assert_int_equal(gq_sim_route(m, m->gpus[a].node, m->gpus[a].node, false, h, 1), 0);
    assert_int_equal(gq_sim_route(m, -1, m->gpus[a].node, false, h, 4), -1);
    assert_int_equal(gq_sim_route(m, m->gpus[a].node, m->nnode, false, h, 4), -1);
    assert_int_equal(gq_sim_route(m, m->gpus[a].node, m->gpus[b].node, true, h, 0), -1);
    gq_sim_machine_free(m);
}

/* The noise: triangular on [-1, 1], centred on 0, reproducible from its key. */
static void noise_shape(void **state)
{
    (void)state;
    double sum = 0, lo = 1, hi = -1;
    int above_half = 0, below_half = 0, n = 200000;
    for (int i = 0; i < n; i++) {
        double u = gq_sim_noise_unit(gq_sim_hash(42, (uint64_t)i));
        sum += u;
        lo = u < lo ? u : lo;
        hi = u > hi ? u : hi;
        above_half += u > 0.5;
        below_half += u < -0.5;
    }
    assert_true(lo >= -1 && hi <= 1);
    assert_true(fabs(sum / n) < 0.01);
    /* P(u > 1/2) = 1/8 for the mean of two uniforms on [-1, 1]... as u1 + u2 - 1 */
    assert_true(fabs((double)above_half / n - 0.125) < 0.01);
    assert_true(fabs((double)below_half / n - 0.125) < 0.01);
    assert_true(gq_sim_noise_unit(7) == gq_sim_noise_unit(7));
    assert_true(gq_sim_hash(1, 2) != gq_sim_hash(2, 1));
}

/* The memory nearest a node; no node, no memory. */
static void nearest_memory(void **state)
{
    (void)state;
    gq_sim_machine *m = NULL;
    gq_err e = {0};
    assert_int_equal(gq_sim_load("rtx4090x8", &m, &e), GQ_OK);
    int mem = gq_sim_nearest_memory(m, m->gpus[0].node, -1);
    assert_true(mem >= 0 && mem < m->nnode);
    assert_int_equal(m->nodes[mem].kind, GQ_SIM_MEMORY);
    assert_int_equal(gq_sim_nearest_memory(m, -1, -1), -1);
    assert_int_equal(gq_sim_nearest_memory(m, m->nnode, -1), -1);
    gq_sim_machine_free(m);
}

/* Written for the survivors of bench/mutation (seed 165809224): a route with
 * the first node out of range and a valid second one is refused; the nearest
 * memory of node 0 is searched like any other node's. */
static void node_zero_and_range(void **state)
{
    (void)state;
    gq_sim_machine *m = NULL;
    gq_err e = {0};
    assert_int_equal(gq_sim_load("rtx4090x8", &m, &e), GQ_OK);
    gq_sim_hop h[GQ_SIM_MAX_HOPS];
    assert_int_equal(gq_sim_route(m, m->nnode, m->gpus[0].node, false, h, GQ_SIM_MAX_HOPS), -1);
    assert_int_equal(gq_sim_route(m, m->nnode + 5, 0, false, h, GQ_SIM_MAX_HOPS), -1);
    int n0 = gq_sim_nearest_memory(m, 0, -1);
    int want = -1;
    /* what the search from node 0 finds: some memory node other than node 0 */
    for (int k = 1; k < m->nnode && want < 0; k++)
        if (m->nodes[k].kind == GQ_SIM_MEMORY)
            want = k;
    if (want >= 0)
        assert_true(n0 >= 1 && m->nodes[n0].kind == GQ_SIM_MEMORY);
    gq_sim_machine_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(solve_twice),
        cmocka_unit_test(weights),
        cmocka_unit_test(routes),
        cmocka_unit_test(unbound_flows),
        cmocka_unit_test(tie_band_boundary),
        cmocka_unit_test(noise_shape),
        cmocka_unit_test(nearest_memory),
        cmocka_unit_test(node_zero_and_range),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
