/* analysis/tp_groups: candidates (naive, every group, by pairwise copy, by
 * domain, swaps) and the choice of a partition from measured busbw. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "analysis/tp_groups.h"

#define S(a, b) (((gq_tp_set)1 << (a)) | ((gq_tp_set)1 << (b)))

static gq_tp_state st;

static int find(gq_tp_set set)
{
    for (int k = 0; k < st.ncand; k++)
        if (st.cand[k].set == set)
            return k;
    return -1;
}

static void test_init_refuses(void **state)
{
    (void)state;
    int g[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    gq_err e = {0};
    assert_int_equal(gq_tp_init(&st, g, 8, 3, 80, &e), GQ_E_USAGE);
    assert_non_null(strstr(e.msg, "multiple of 3"));
    assert_int_equal(gq_tp_init(&st, g, 8, 1, 80, &e), GQ_E_USAGE);
    assert_int_equal(gq_tp_init(&st, g, 8, 16, 80, &e), GQ_E_USAGE);
}

/* 8 GPUs, pairs: 28 groups within a budget of 80: naive first, then all. */
static void test_exhaustive_and_best(void **state)
{
    (void)state;
    int g[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    gq_err e = {0};
    assert_int_equal(gq_tp_init(&st, g, 8, 2, 80, &e), GQ_OK);
    gq_tp_seed(&st, NULL, NULL);
    assert_int_equal(st.ncand, 28);
    assert_int_equal(st.cand[0].set, S(0, 1));
    assert_int_equal(st.cand[0].origin, GQ_TP_NAIVE);
    assert_int_equal(st.cand[4].origin, GQ_TP_ALL);
    /* no pairwise copy was given: every group's copy is unknown */
    for (int k = 0; k < st.ncand; k++)
        assert_true(st.cand[k].copy < 0);
    /* every pair 10 GB/s, except the "diagonal" pairs i, i+4 at 30 */
    for (int k = 0; k < st.ncand; k++)
        st.cand[k].busbw = 10;
    for (int i = 0; i < 4; i++)
        st.cand[find(S(i, i + 4))].busbw = 30;
    gq_tp_part p, n;
    assert_true(gq_tp_best(&st, &p));
    assert_int_equal(p.ngroups, 4);
    assert_true(fabs(p.min_busbw - 30) < 1e-9);
    for (int i = 0; i < 4; i++)
        assert_int_equal(st.cand[p.idx[i]].set, S(i, i + 4));
    gq_tp_naive(&st, &n);
    assert_true(fabs(n.min_busbw - 10) < 1e-9);
    /* an invalid group is never chosen */
    st.cand[find(S(2, 6))].busbw = -2;
    assert_true(gq_tp_best(&st, &p));
    assert_true(fabs(p.min_busbw - 10) < 1e-9);
    char buf[64];
    gq_tp_set_str(S(2, 6), buf, sizeof buf);
    assert_string_equal(buf, "2,6");
}

/* 8 GPUs in groups of 4 over a budget of 10 (70 groups do not fit): the
 * naive groups, the partition by pairwise copy and by domain; then swaps. */
static void test_budget_copy_domain_swaps(void **state)
{
    (void)state;
    int g[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    gq_err e = {0};
    assert_int_equal(gq_tp_init(&st, g, 8, 4, 10, &e), GQ_OK);
    /* copies: even GPUs among themselves fast (20), odd among themselves 15, else 5 */
    for (int a = 0; a < 8; a++)
        for (int b = 0; b < 8; b++)
            st.copy[a][b] = a == b ? -1 : (a % 2 == 0 && b % 2 == 0) ? 20 : (a % 2 && b % 2) ? 15 : 5;
    int parent[64];
    for (int i = 0; i < 64; i++)
        parent[i] = -1;
    for (int i = 0; i < 8; i++)
        parent[i] = i < 4 ? 7 : 3; /* GPUs 4-7 under the parent that sorts first */
    gq_tp_seed(&st, NULL, parent);
    gq_tp_set even = S(0, 2) | S(4, 6), odd = S(1, 3) | S(5, 7);
    int ke = find(even), ko = find(odd);
    assert_true(ke >= 2 && ko >= 2);
    assert_int_equal(st.cand[ke].origin, GQ_TP_COPY);
    assert_true(fabs(st.cand[ke].copy - 20) < 1e-9);
    assert_true(find(S(0, 1) | S(2, 3)) == 0);
    assert_int_equal(st.cand[0].origin, GQ_TP_NAIVE);
    /* the domain partition by parent is the naive one here: no new group */
    assert_int_equal(st.ncand, 4);
    /* measured: the naive groups 8, even 12, odd 9 */
    st.cand[0].busbw = st.cand[1].busbw = 8;
    st.cand[ke].busbw = 12;
    st.cand[ko].busbw = 9;
    gq_tp_part p;
    assert_true(gq_tp_best(&st, &p));
    assert_true(fabs(p.min_busbw - 9) < 1e-9);
    int added = gq_tp_swaps(&st, &p, 6);
    assert_int_equal(added, 6);
    assert_int_equal(st.cand[st.ncand - 1].origin, GQ_TP_SWAP);
    assert_true(st.cand[st.ncand - 1].busbw < 0); /* not measured yet */
    assert_int_equal(gq_tp_best_by_copy(&st), ke);
    assert_int_equal(gq_tp_best_by_busbw(&st), ke);
    /* the first candidate fastest: it stays the best against every later one */
    st.cand[0].busbw = 30;
    assert_int_equal(gq_tp_best_by_busbw(&st), 0);
}

/* NVLink pairs come together as a domain partition. */
static void test_nvlink_domain(void **state)
{
    (void)state;
    int g[6] = {0, 1, 2, 3, 4, 5};
    gq_err e = {0};
    static int nvl[64][64];
    memset(nvl, 0, sizeof nvl);
    nvl[0][3] = nvl[3][0] = nvl[1][2] = nvl[2][1] = nvl[4][5] = nvl[5][4] = 12;
    assert_int_equal(gq_tp_init(&st, g, 6, 2, 3, &e), GQ_OK); /* 15 pairs > budget 3 */
    gq_tp_seed(&st, (const int(*)[64])nvl, NULL);
    assert_true(find(S(0, 3)) >= 0 && find(S(1, 2)) >= 0);
    assert_int_equal(st.cand[find(S(0, 3))].origin, GQ_TP_DOMAIN);
}

/* Every swap candidate trades one GPU of a group for one of another group of
 * the partition: it has N GPUs, all from those two groups, and every such
 * trade is offered once. GPUs 3, 5, 6, 9 in pairs {3,5} {6,9}: the swaps are
 * {5,6} {3,9} {5,9} {3,6}; and in groups of 4 of 8 GPUs, each of the 16
 * trades gives two groups of 4 within the two. */
static void test_swaps_trade_one_gpu(void **state)
{
    (void)state;
    int g[4] = {3, 5, 6, 9};
    gq_err e = {0};
    assert_int_equal(gq_tp_init(&st, g, 4, 2, 1, &e), GQ_OK);
    assert_int_equal(gq_tp_add(&st, S(3, 5), GQ_TP_NAIVE), 0);
    assert_int_equal(gq_tp_add(&st, S(6, 9), GQ_TP_NAIVE), 1);
    gq_tp_part p = {.ngroups = 2, .idx = {0, 1}};
    assert_int_equal(gq_tp_swaps(&st, &p, 100), 4);
    assert_int_equal(st.ncand, 6);
    const gq_tp_set want[] = {S(5, 6), S(3, 9), S(5, 9), S(3, 6)};
    for (int k = 0; k < 4; k++) {
        assert_int_equal(st.cand[2 + k].set, want[k]);
        assert_int_equal(st.cand[2 + k].origin, GQ_TP_SWAP);
    }
    /* offered once: a second pass adds nothing */
    assert_int_equal(gq_tp_swaps(&st, &p, 100), 0);
    /* room is a bound: an odd room never gets the pair that would pass it */
    assert_int_equal(gq_tp_init(&st, g, 4, 2, 1, &e), GQ_OK);
    gq_tp_add(&st, S(3, 5), GQ_TP_NAIVE);
    gq_tp_add(&st, S(6, 9), GQ_TP_NAIVE);
    assert_int_equal(gq_tp_swaps(&st, &p, 3), 2);
    assert_int_equal(st.ncand, 4);
    assert_int_equal(gq_tp_swaps(&st, &p, 1), 0);
    assert_int_equal(st.ncand, 4);

    int g8[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    assert_int_equal(gq_tp_init(&st, g8, 8, 4, 1, &e), GQ_OK);
    gq_tp_set A = S(0, 1) | S(2, 3), B = S(4, 5) | S(6, 7);
    gq_tp_add(&st, A, GQ_TP_NAIVE);
    gq_tp_add(&st, B, GQ_TP_NAIVE);
    assert_int_equal(gq_tp_swaps(&st, &p, 100), 32);
    for (int k = 2; k < st.ncand; k++) {
        gq_tp_set c = st.cand[k].set;
        assert_int_equal(__builtin_popcountll(c), 4);
        assert_true((c & ~(A | B)) == 0);
        int fromA = __builtin_popcountll(c & A);
        assert_true(fromA == 3 || fromA == 1); /* one GPU traded */
    }
}

/* GPUs under one PCIe parent come together as a domain partition when the
 * parents do not follow GPU index order and the copies (all alike) do not
 * find that grouping (issue 30: tp_groups.c's partition by parent). */
static void test_parent_domain(void **state)
{
    (void)state;
    int g[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    gq_err e = {0};
    assert_int_equal(gq_tp_init(&st, g, 8, 4, 10, &e), GQ_OK);
    for (int a = 0; a < 8; a++)
        for (int b = 0; b < 8; b++)
            st.copy[a][b] = a == b ? -1 : 10;
    int parent[64];
    for (int i = 0; i < 64; i++)
        parent[i] = -1;
    for (int i = 0; i < 8; i++)
        parent[i] = i % 2 ? 5 : 2; /* even GPUs under one switch, odd under another */
    gq_tp_seed(&st, NULL, parent);
    gq_tp_set even = S(0, 2) | S(4, 6), odd = S(1, 3) | S(5, 7);
    int ke = find(even), ko = find(odd);
    assert_true(ke > 0 && ko > 0);
    assert_int_equal(st.cand[ke].origin, GQ_TP_DOMAIN);
    assert_int_equal(st.cand[ko].origin, GQ_TP_DOMAIN);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_init_refuses),
        cmocka_unit_test(test_exhaustive_and_best),
        cmocka_unit_test(test_budget_copy_domain_swaps),
        cmocka_unit_test(test_nvlink_domain),
        cmocka_unit_test(test_parent_domain),
        cmocka_unit_test(test_swaps_trade_one_gpu),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
