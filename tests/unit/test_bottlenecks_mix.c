/* A run that mixes a pair running free with pairs held back by a shared link
 * is not one bottleneck (issue 28, item 4): one pair inside a domain at its
 * own 50 GB/s beside three pairs that share a 40 GB/s link is a 40 GB/s
 * budget over the three, never an 89.9 GB/s "bottleneck" over all eight GPUs
 * that no link of the machine carries. */
#include "bottlenecks_util.h"

static void mix_topo(void)
{
    gq_topo_init(&T);
    T.ngpu = 8;
    T.numa_nodes = 2;
    T.sockets = 2;
    for (int g = 0; g < 8; g++) {
        T.gpu[g].index = g;
        T.gpu[g].numa_node = g < 4 ? 0 : 1;
    }
}

static gq_domains mix_domains(void)
{
    /* {0,1} joined fast; the rest one GPU each */
    gq_domains dom;
    memset(&dom, 0, sizeof dom);
    for (int g = 0; g < GQ_MAX_GPUS; g++)
        dom.domain_of[g] = -1;
    dom.domain_of[0] = dom.domain_of[1] = 0;
    dom.member[0][0] = 0;
    dom.member[0][1] = 1;
    dom.size[0] = 2;
    for (int g = 2; g < 8; g++) {
        dom.domain_of[g] = g - 1;
        dom.member[g - 1][0] = g;
        dom.size[g - 1] = 1;
    }
    dom.ndomains = 7;
    return dom;
}

static void free_pair_beside_held_back(void **state)
{
    (void)state;
    mix_topo();
    const int src[] = {0, 2, 3, 4}, dst[] = {1, 5, 6, 7};
    const double alone[] = {50.0, 30.0, 30.0, 30.0};
    for (int p = 0; p < 4; p++) { /* each pair one at a time */
        int g = G++;
        p2p_flow(g, src[p], dst[p], alone[p]);
    }
    const double run[] = {49.9, 13.3, 13.4, 13.3}; /* 89.9 together */
    p2p_group(src, dst, run, 4);

    gq_domains dom = mix_domains();
    gq_bottlenecks b;
    assert_int_equal(gq_bottlenecks_infer(&RS, &T, &dom, NULL, &b, NULL), 0);
    const int all[] = {0, 1, 2, 3, 4, 5, 6, 7}, held[] = {2, 3, 4, 5, 6, 7};
    assert_int_equal(gq_bottlenecks_find(&b, GQ_DIR_P2P, all, 8), -1);
    int i = gq_bottlenecks_find(&b, GQ_DIR_P2P, held, 6);
    assert_true(i >= 0);
    assert_true(fabs(b.v[i].capacity_gbps - 40.0) < 0.01);
    assert_true(fabs(b.v[i].sum_alone_gbps - 90.0) < 0.01);
    assert_true(b.v[i].cross_domain);
    assert_int_equal(b.n, 1);
    /* its explanation names the three pairs' GPUs only */
    assert_non_null(strstr(b.v[i].explanation, "GPUs 2-7"));
    gq_bottlenecks_free(&b);
}

/* When every pair of the run is held back, the budget is the whole run, as
 * before: four pairs sharing one 40 GB/s link. */
static void all_held_back(void **state)
{
    (void)state;
    mix_topo();
    const int src[] = {0, 2, 3, 4}, dst[] = {1, 5, 6, 7};
    for (int p = 0; p < 4; p++) {
        int g = G++;
        p2p_flow(g, src[p], dst[p], 30.0);
    }
    const double run[] = {10.0, 10.0, 10.1, 9.9};
    p2p_group(src, dst, run, 4);
    gq_domains dom = mix_domains();
    gq_bottlenecks b;
    assert_int_equal(gq_bottlenecks_infer(&RS, &T, &dom, NULL, &b, NULL), 0);
    const int all[] = {0, 1, 2, 3, 4, 5, 6, 7};
    int i = gq_bottlenecks_find(&b, GQ_DIR_P2P, all, 8);
    assert_true(i >= 0);
    assert_true(fabs(b.v[i].capacity_gbps - 40.0) < 0.01);
    assert_false(b.v[i].cross_domain); /* 0->1 is inside a domain */
    gq_bottlenecks_free(&b);
}

/* Held-back pairs that leave domain 0 ({0,1}) for single-GPU domains, beside
 * a free pair: their budget crosses between domains, and says so. */
static void held_back_from_domain_zero(void **state)
{
    (void)state;
    mix_topo();
    const int src[] = {0, 1, 6}, dst[] = {4, 5, 7};
    const double alone[] = {30.0, 30.0, 50.0};
    for (int p = 0; p < 3; p++) {
        int g = G++;
        p2p_flow(g, src[p], dst[p], alone[p]);
    }
    const double run[] = {13.3, 13.4, 49.9};
    p2p_group(src, dst, run, 3);
    gq_domains dom = mix_domains();
    gq_bottlenecks b;
    assert_int_equal(gq_bottlenecks_infer(&RS, &T, &dom, NULL, &b, NULL), 0);
    const int held[] = {0, 1, 4, 5};
    int i = gq_bottlenecks_find(&b, GQ_DIR_P2P, held, 4);
    assert_true(i >= 0);
    assert_true(fabs(b.v[i].capacity_gbps - 26.7) < 0.01);
    assert_true(b.v[i].cross_domain);
    assert_non_null(strstr(b.v[i].explanation, "crossing between domains"));
    gq_bottlenecks_free(&b);
}

/* A budget found on the held-back pairs of a run (2->5, 3->6, 4->7 at 40
 * GB/s together, 0->1 free) caps those pairs in a later run of them with
 * another pair (8->9 at its rate alone): that run is expected at 40 + 50,
 * and got it, so it is no new evidence; the free pair 0->1 is no part of
 * the budget. */
static void held_back_budget_caps_later_run(void **state)
{
    (void)state;
    gq_topo_init(&T);
    T.ngpu = 10;
    for (int g = 0; g < 10; g++)
        T.gpu[g].index = g;
    const int src[] = {0, 2, 3, 4}, dst[] = {1, 5, 6, 7};
    const double alone[] = {50.0, 30.0, 30.0, 30.0};
    for (int p = 0; p < 4; p++) {
        int g = G++;
        p2p_flow(g, src[p], dst[p], alone[p]);
    }
    int g89 = G++;
    p2p_flow(g89, 8, 9, 50.0);
    const double run[] = {49.9, 13.3, 13.4, 13.3};
    p2p_group(src, dst, run, 4);
    const int src2[] = {2, 3, 4, 8}, dst2[] = {5, 6, 7, 9};
    const double run2[] = {13.3, 13.4, 13.3, 50.0};
    p2p_group(src2, dst2, run2, 4);
    gq_bottlenecks b;
    assert_int_equal(gq_bottlenecks_infer(&RS, &T, NULL, NULL, &b, NULL), 0);
    const int held[] = {2, 3, 4, 5, 6, 7};
    int i = gq_bottlenecks_find(&b, GQ_DIR_P2P, held, 6);
    assert_true(i >= 0);
    assert_true(fabs(b.v[i].capacity_gbps - 40.0) < 0.01);
    int later = -1;
    for (int k = 0; k < b.nobs; k++)
        if (b.obs[k].p2p && b.obs[k].npairs == 4 && b.obs[k].pair_src[3] == 8)
            later = k;
    assert_true(later >= 0);
    if (fabs(b.obs[later].expected_gbps - 90.0) > 0.01)
        fail_msg("the later run expected %.1f GB/s, want 90.0 (40 capped + 50)", b.obs[later].expected_gbps);
    assert_false(b.obs[later].contended);
    assert_int_equal(b.v[i].nevidence, 1);
    gq_bottlenecks_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(free_pair_beside_held_back, setup, teardown),
        cmocka_unit_test_setup_teardown(all_held_back, setup, teardown),
        cmocka_unit_test_setup_teardown(held_back_from_domain_zero, setup, teardown),
        cmocka_unit_test_setup_teardown(held_back_budget_caps_later_run, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
