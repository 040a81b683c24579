/* Bottleneck inference on records and trees as saved documents may hold
 * them: a group whose records are not next to each other, open folds in
 * both host directions, P2P pairs across two NUMA nodes, and a PCIe tree
 * whose root is a bridge, not a host bridge. Written for the survivors of
 * mutation round 4 (issue 30); helpers as in test_bottlenecks.c. */
#include "bottlenecks_util.h"

static const int S0[] = {0, 1, 2, 3}, S1[] = {4, 5, 6, 7};

/* Four GPUs per socket at 25.2 alone share 25.8 when all four copy. */
static void socket_records(void)
{
    for (int g = 0; g < 8; g++)
        host_uniform(&g, 1, GQ_DIR_H2D, 25.2);
    host_uniform(S0, 4, GQ_DIR_H2D, 25.8 / 4);
    host_uniform(S1, 4, GQ_DIR_H2D, 25.8 / 4);
}

/* Record `from` moved to the end of RS, the others kept in order. */
static void move_to_end(int from)
{
    gq_record r = RS.v[from];
    memmove(&RS.v[from], &RS.v[from + 1], (size_t)(RS.n - from - 1) * sizeof r);
    RS.v[RS.n - 1] = r;
}

/* A group is its group id, wherever its records stand: the first socket's
 * run with its first flow and its aggregate moved behind the second
 * socket's run still gives both budgets, each with the run as evidence. */
static void group_not_contiguous(void **state)
{
    (void)state;
    socket_records();
    /* records 0-7: alone; 8-12: S0's four flows and aggregate; 13-17: S1's */
    assert_int_equal(RS.n, 18);
    assert_true(RS.v[12].aggregate && RS.v[12].group == RS.v[8].group);
    move_to_end(12); /* the aggregate */
    move_to_end(8);  /* GPU 0's flow */
    assert_int_equal(RS.v[RS.n - 1].group, RS.v[8].group);
    assert_int_not_equal(RS.v[8].group, RS.v[11].group);
    gq_bottlenecks b;
    assert_int_equal(gq_bottlenecks_infer(&RS, NULL, NULL, NULL, &b, NULL), 0);
    assert_int_equal(b.n, 2);
    int i0 = gq_bottlenecks_find(&b, GQ_DIR_H2D, S0, 4), i1 = gq_bottlenecks_find(&b, GQ_DIR_H2D, S1, 4);
    assert_true(i0 >= 0 && i1 >= 0);
    assert_true(fabs(b.v[i0].capacity_gbps - 25.8) < 0.01);
    assert_true(fabs(b.v[i0].sum_alone_gbps - 100.8) < 0.01);
    assert_true(fabs(b.v[i1].capacity_gbps - 25.8) < 0.01);
    assert_int_equal(b.nopen, 0);
    gq_bottlenecks_free(&b);
}

/* fold_open_named's case (test_bottlenecks_edges.c) in direction d: {0,1}
 * at 10 (9.5-10.5) inside {0-3} at 12 (11-12.8). */
static void open_fold_case(gq_direction d)
{
    for (int g = 0; g < 4; g++)
        host_uniform(&g, 1, d, 25.0);
    const int two[] = {0, 1};
    host_uniform(two, 2, d, 5.0);
    RS.v[RS.n - 1].value.min = 9.5;
    RS.v[RS.n - 1].value.max = 10.5;
    host_uniform(S0, 4, d, 12.0 / 4);
    RS.v[RS.n - 1].value.min = 11.0;
    RS.v[RS.n - 1].value.max = 12.8;
}

/* Two open folds, one per direction: each is its own open decision (one
 * open fold does not stand for another). */
static void open_folds_both_directions(void **state)
{
    (void)state;
    open_fold_case(GQ_DIR_H2D);
    open_fold_case(GQ_DIR_D2H);
    gq_bottlenecks b;
    assert_int_equal(gq_bottlenecks_infer(&RS, NULL, NULL, NULL, &b, NULL), 0);
    assert_int_equal(b.nopen, 2);
    bool h2d = false, d2h = false;
    for (int i = 0; i < b.nopen; i++) {
        assert_int_equal(b.open[i].kind, GQ_BN_OPEN_FOLD);
        h2d |= b.open[i].direction == GQ_DIR_H2D &&
               strstr(b.open[i].text, "whether GPUs 0,1 have a host-to-GPU budget of their own") != NULL;
        d2h |= b.open[i].direction == GQ_DIR_D2H &&
               strstr(b.open[i].text, "whether GPUs 0,1 have a GPU-to-host budget of their own") != NULL;
    }
    assert_true(h2d);
    assert_true(d2h);
    gq_bottlenecks_free(&b);
}

/* Four GPUs, 0 and 1 on NUMA node 0, 2 and 3 on node 1, every pair SYS. */
static void two_numa_topo(void)
{
    gq_topo_init(&T);
    T.ngpu = 4;
    T.numa_nodes = 2;
    T.sockets = 2;
    for (int a = 0; a < 4; a++) {
        T.gpu[a].index = a;
        T.gpu[a].numa_node = a / 2;
        for (int c = 0; c < 4; c++)
            T.level[a][c] = a == c ? GQ_LEVEL_X : GQ_LEVEL_SYS;
    }
}

/* Concurrent pairs 0->2 and 1->3, 40 GB/s each alone, 20 together. */
static void cross_pairs(void)
{
    const int src[] = {0, 1}, dst[] = {2, 3};
    double one = 40.0;
    for (int i = 0; i < 2; i++)
        p2p_group(&src[i], &dst[i], &one, 1);
    const double half[] = {10.0, 10.0};
    p2p_group(src, dst, half, 2);
}

/* Pairs from NUMA node 0 to node 1: the CPU interconnect between the two
 * nodes, named; on a machine that shows one NUMA node (SYS pairs only) the
 * same explanation names no node. */
static void p2p_across_numa_named(void **state)
{
    (void)state;
    two_numa_topo();
    cross_pairs();
    const int all[] = {0, 1, 2, 3};
    gq_bottlenecks b;
    assert_int_equal(gq_bottlenecks_infer(&RS, &T, NULL, NULL, &b, NULL), 0);
    int i = gq_bottlenecks_find(&b, GQ_DIR_P2P, all, 4);
    assert_true(i >= 0);
    assert_int_equal(b.v[i].explained, GQ_EXPLAIN_CPU_INTERCONNECT);
    assert_string_equal(b.v[i].node, "numa:0-numa:1");
    gq_bottlenecks_free(&b);
    T.numa_nodes = 1;
    for (int a = 0; a < 4; a++)
        T.gpu[a].numa_node = -1;
    assert_int_equal(gq_bottlenecks_infer(&RS, &T, NULL, NULL, &b, NULL), 0);
    i = gq_bottlenecks_find(&b, GQ_DIR_P2P, all, 4);
    assert_true(i >= 0);
    assert_int_equal(b.v[i].explained, GQ_EXPLAIN_CPU_INTERCONNECT);
    assert_string_equal(b.v[i].node, "");
    gq_bottlenecks_free(&b);
}

/* A saved topology whose roots are bridges (parent -1, no host bridge
 * above them; the snapshot readers accept that): the walk up from the
 * sending GPUs stops at the root, whose uplink (of unknown rate) explains
 * the pairs. */
static void p2p_under_bridge_root(void **state)
{
    (void)state;
    two_numa_topo();
    int r0 = add_pci(GQ_PCI_BRIDGE, -1, -1, "0000:10:00.0", 0);
    int r1 = add_pci(GQ_PCI_BRIDGE, -1, -1, "0000:90:00.0", 0);
    for (int g = 0; g < 4; g++) {
        char bus[32];
        snprintf(bus, sizeof bus, "0000:%02x:00.0", (g < 2 ? 0x11 : 0x91) + g);
        add_pci(GQ_PCI_GPU, g < 2 ? r0 : r1, g, bus, 0);
    }
    cross_pairs();
    const int all[] = {0, 1, 2, 3};
    gq_bottlenecks b;
    assert_int_equal(gq_bottlenecks_infer(&RS, &T, NULL, NULL, &b, NULL), 0);
    int i = gq_bottlenecks_find(&b, GQ_DIR_P2P, all, 4);
    assert_true(i >= 0);
    assert_int_not_equal(b.v[i].explained, GQ_EXPLAIN_MEASUREMENT_ONLY);
    assert_int_not_equal(b.v[i].explained, GQ_EXPLAIN_CPU_INTERCONNECT);
    assert_string_equal(b.v[i].node, "0000:10:00.0");
    assert_non_null(strstr(b.v[i].explanation, "the uplinks of"));
    gq_bottlenecks_free(&b);
}

/* Two disjoint host budgets of different sizes, found smallest first: a
 * 2-GPU switch at 20 GB/s and a 4-GPU root at 40 GB/s. A run of all six at
 * 60 GB/s is what the two caps together expect, so it is no third budget:
 * the larger budget is applied, not lost behind the smaller one. */
static void two_budgets_smaller_first(void **state)
{
    (void)state;
    for (int g = 0; g < 6; g++)
        host_uniform(&g, 1, GQ_DIR_H2D, 25.0);
    const int two[] = {0, 1}, four[] = {2, 3, 4, 5}, six[] = {0, 1, 2, 3, 4, 5};
    host_uniform(two, 2, GQ_DIR_H2D, 10.0);
    host_uniform(four, 4, GQ_DIR_H2D, 10.0);
    host_uniform(six, 6, GQ_DIR_H2D, 10.0);
    gq_bottlenecks b;
    assert_int_equal(gq_bottlenecks_infer(&RS, NULL, NULL, NULL, &b, NULL), 0);
    int i2 = gq_bottlenecks_find(&b, GQ_DIR_H2D, two, 2), i4 = gq_bottlenecks_find(&b, GQ_DIR_H2D, four, 4);
    assert_true(i2 >= 0 && i4 >= 0);
    assert_true(fabs(b.v[i2].capacity_gbps - 20.0) < 0.01);
    assert_true(fabs(b.v[i4].capacity_gbps - 40.0) < 0.01);
    assert_int_equal(gq_bottlenecks_find(&b, GQ_DIR_H2D, six, 6), -1);
    assert_int_equal(b.n, 2);
    gq_bottlenecks_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(group_not_contiguous, setup, teardown),
        cmocka_unit_test_setup_teardown(open_folds_both_directions, setup, teardown),
        cmocka_unit_test_setup_teardown(p2p_across_numa_named, setup, teardown),
        cmocka_unit_test_setup_teardown(p2p_under_bridge_root, setup, teardown),
        cmocka_unit_test_setup_teardown(two_budgets_smaller_first, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
