/* Which of two a bottleneck analysis keeps, on crafted records and trees:
 * - the PCIe uplink a P2P budget is put on: of the bridges above the sending
 *   GPUs (and none of the receiving ones) that can account for the figure,
 *   the narrowest; of the sending and receiving sides, the narrower; and,
 *   where none accounts for it, the narrowest crossed is the one named;
 * - whether a run refused by the overlap rule is replaced by another run:
 *   only by a valid run of the same test, size and every one of its flows
 *   (a run that repeats one of them twice does not stand for it), and a later
 *   refused run of the same flows stands for an earlier one. */
#include "bottlenecks_util.h"

/* Four GPUs, 0 and 1 on NUMA node 0 under bridge B1 (0000:11:00.0, uplink
 * b1 GB/s), itself under bridge B2 (0000:10:00.0, b2 GB/s) under host
 * bridge 0000:00; 2 and 3 on NUMA node 1 under host bridge 0000:80, or,
 * when b3 > 0, under bridge B3 (0000:91:00.0, b3 GB/s) below it. Every pair
 * is SYS. */
static void tree(double b1, double b2, double b3)
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
    int h0 = add_pci(GQ_PCI_HOSTBRIDGE, -1, -1, "0000:00", 0);
    int h1 = add_pci(GQ_PCI_HOSTBRIDGE, -1, -1, "0000:80", 0);
    int B2 = add_pci(GQ_PCI_BRIDGE, h0, -1, "0000:10:00.0", b2);
    int B1 = add_pci(GQ_PCI_BRIDGE, B2, -1, "0000:11:00.0", b1);
    int B3 = b3 > 0 ? add_pci(GQ_PCI_BRIDGE, h1, -1, "0000:91:00.0", b3) : h1;
    add_pci(GQ_PCI_GPU, B1, 0, "0000:12:00.0", 63.0);
    add_pci(GQ_PCI_GPU, B1, 1, "0000:13:00.0", 63.0);
    add_pci(GQ_PCI_GPU, B3, 2, "0000:92:00.0", 63.0);
    add_pci(GQ_PCI_GPU, B3, 3, "0000:93:00.0", 63.0);
}

/* Pairs 0->2 and 1->3, 10 GB/s each alone (within every uplink of the trees:
 * the sanity guard refuses a figure above its path), `each` when together. */
static void cross_pairs(double each)
{
    const int src[] = {0, 1}, dst[] = {2, 3};
    double one = 10.0;
    for (int i = 0; i < 2; i++)
        p2p_group(&src[i], &dst[i], &one, 1);
    const double both[] = {each, each};
    p2p_group(src, dst, both, 2);
}

static const int ALL4[] = {0, 1, 2, 3};

static int p2p_budget(gq_bottlenecks *b)
{
    assert_int_equal(gq_bottlenecks_infer(&RS, &T, NULL, NULL, b, NULL), 0);
    int i = gq_bottlenecks_find(b, GQ_DIR_P2P, ALL4, 4);
    assert_true(i >= 0);
    assert_true(fabs(b->v[i].capacity_gbps - RS.v[RS.n - 1].value.median) < 1e-9); /* the run together */
    return i;
}

/* 15 GB/s together: both B1 (16) and B2 (20) can account for it (15 is
 * within 0.6 .. 1.05 of each); the narrower, B1, is the one named. */
static void p2p_narrowest_uplink_named(void **state)
{
    (void)state;
    tree(16.0, 20.0, 0);
    cross_pairs(7.5);
    gq_bottlenecks b;
    int i = p2p_budget(&b);
    assert_int_equal(b.v[i].explained, GQ_EXPLAIN_PCIE_SWITCH);
    assert_string_equal(b.v[i].node, "0000:11:00.0");
    assert_true(b.v[i].link_gbps == 16.0);
    assert_non_null(strstr(b.v[i].explanation, "the uplink of PCIe switch 0000:11:00.0"));
    assert_null(strstr(b.v[i].explanation, "0000:10:00.0"));
    gq_bottlenecks_free(&b);
    /* the same with the wider bridge below the narrower one: still the narrower */
    tree(20.0, 16.0, 0);
    assert_int_equal(gq_bottlenecks_infer(&RS, &T, NULL, NULL, &b, NULL), 0);
    i = gq_bottlenecks_find(&b, GQ_DIR_P2P, ALL4, 4);
    assert_true(i >= 0);
    assert_string_equal(b.v[i].node, "0000:10:00.0");
    assert_true(b.v[i].link_gbps == 16.0);
    gq_bottlenecks_free(&b);
}

/* One pair held back alone, from GPU 0: 0->2 gets 5 GB/s beside 1->3 (7.3,
 * about its 8 alone), so the budget is over GPUs 0 and 2 with GPU 0 its only
 * sender; B1 (8.2) accounts for 5, and is named (mutation round 9,
 * bottlenecks_explain.c:194: the walk over the senders starts at GPU 0). */
static void p2p_one_pair_from_gpu0(void **state)
{
    (void)state;
    tree(8.2, 20.0, 0);
    const int src[] = {0, 1}, dst[] = {2, 3};
    const double one = 8.0, both[] = {5.0, 7.3};
    for (int i = 0; i < 2; i++)
        p2p_group(&src[i], &dst[i], &one, 1);
    p2p_group(src, dst, both, 2);
    gq_bottlenecks b;
    assert_int_equal(gq_bottlenecks_infer(&RS, &T, NULL, NULL, &b, NULL), 0);
    const int pair[] = {0, 2};
    int i = gq_bottlenecks_find(&b, GQ_DIR_P2P, pair, 2);
    assert_true(i >= 0);
    if (b.v[i].explained != GQ_EXPLAIN_PCIE_SWITCH || strcmp(b.v[i].node, "0000:11:00.0"))
        fail_msg("the budget of 0->2 is not put on B1: %s", b.v[i].explanation);
    assert_non_null(strstr(b.v[i].explanation, "the uplink of PCIe switch 0000:11:00.0"));
    gq_bottlenecks_free(&b);
}

/* The receiving side's bridge B3 (15.5) is narrower than the sending side's
 * B1 (16): both are named in the text, and the budget is put on B3; with B3
 * wider (18), on B1. */
static void p2p_narrower_side_named(void **state)
{
    (void)state;
    tree(16.0, 20.0, 15.5);
    cross_pairs(7.5);
    gq_bottlenecks b;
    int i = p2p_budget(&b);
    assert_string_equal(b.v[i].node, "0000:91:00.0");
    assert_true(b.v[i].link_gbps == 15.5);
    assert_non_null(strstr(b.v[i].explanation, "the uplinks of PCIe switch 0000:11:00.0 and PCIe switch "
                                               "0000:91:00.0"));
    gq_bottlenecks_free(&b);
    tree(16.0, 20.0, 18.0);
    assert_int_equal(gq_bottlenecks_infer(&RS, &T, NULL, NULL, &b, NULL), 0);
    i = gq_bottlenecks_find(&b, GQ_DIR_P2P, ALL4, 4);
    assert_true(i >= 0);
    assert_string_equal(b.v[i].node, "0000:11:00.0");
    assert_true(b.v[i].link_gbps == 16.0);
    gq_bottlenecks_free(&b);
}

/* 5 GB/s together: no bridge accounts for it (below 0.6 of 16), so the pairs
 * are put on the CPU interconnect, and the text names the narrowest uplink
 * they cross: B1 at 16, not B2 at 32, nor B3 at 40 on the other side; with
 * B3 the narrowest (12), B3. */
static void p2p_beyond_names_narrowest(void **state)
{
    (void)state;
    tree(16.0, 32.0, 40.0);
    cross_pairs(2.5);
    gq_bottlenecks b;
    int i = p2p_budget(&b);
    assert_int_equal(b.v[i].explained, GQ_EXPLAIN_CPU_INTERCONNECT);
    assert_non_null(strstr(b.v[i].explanation,
                           "the narrowest uplink they cross, PCIe switch 0000:11:00.0 at 16.0 GB/s, cannot "
                           "account for 5.0 GB/s"));
    gq_bottlenecks_free(&b);
    tree(16.0, 32.0, 12.0);
    assert_int_equal(gq_bottlenecks_infer(&RS, &T, NULL, NULL, &b, NULL), 0);
    i = gq_bottlenecks_find(&b, GQ_DIR_P2P, ALL4, 4);
    assert_true(i >= 0);
    assert_non_null(strstr(b.v[i].explanation, "PCIe switch 0000:91:00.0 at 12.0 GB/s, cannot account"));
    gq_bottlenecks_free(&b);
}

/* ---- runs refused by the overlap rule ---- */

/* A P2P run in group `g` of pairs src[i] -> dst[i]; its aggregate valid or
 * refused by the overlap rule. */
static int p2p_run(const int *src, const int *dst, int n, bool valid)
{
    int g = G++;
    int gpus[8], ng = 0;
    for (int i = 0; i < n; i++) {
        p2p_flow(g, src[i], dst[i], 20.0);
        gpus[ng++] = src[i];
        gpus[ng++] = dst[i];
    }
    aggregate(g, gpus, ng, GQ_DIR_P2P, 20.0 * n, valid);
    return g;
}

static int missing_opens(const gq_bottlenecks *b, int *group)
{
    int n = 0;
    for (int i = 0; i < b->nopen; i++)
        if (b->open[i].kind == GQ_BN_OPEN_MISSING) {
            n++;
            *group = b->open[i].group;
        }
    return n;
}

/* Pairs 0->1 and 2->3 refused; a valid run that repeats 0->1 twice is not
 * that run (2->3 is not in it): the figure stays missing. */
static void refused_not_replaced_by_repeat(void **state)
{
    (void)state;
    int g = p2p_run((const int[]){0, 2}, (const int[]){1, 3}, 2, false);
    p2p_run((const int[]){0, 0}, (const int[]){1, 1}, 2, true);
    gq_bottlenecks b;
    assert_int_equal(gq_bottlenecks_infer(&RS, NULL, NULL, NULL, &b, NULL), 0);
    int mg = -1;
    assert_int_equal(missing_opens(&b, &mg), 1);
    assert_int_equal(mg, g);
    gq_bottlenecks_free(&b);
}

/* The same refused run, then a valid run of the same pairs (listed the other
 * way round): replaced, nothing missing. A valid run of the same pairs at
 * another size, or of another pair, replaces nothing. */
static void refused_replaced_by_same_flows(void **state)
{
    (void)state;
    p2p_run((const int[]){0, 2}, (const int[]){1, 3}, 2, false);
    p2p_run((const int[]){2, 0}, (const int[]){3, 1}, 2, true);
    gq_bottlenecks b;
    int mg = -1;
    assert_int_equal(gq_bottlenecks_infer(&RS, NULL, NULL, NULL, &b, NULL), 0);
    assert_int_equal(missing_opens(&b, &mg), 0);
    gq_bottlenecks_free(&b);
    /* at another size */
    gq_records_free(&RS);
    G = 0;
    int g = p2p_run((const int[]){0, 2}, (const int[]){1, 3}, 2, false);
    int v = p2p_run((const int[]){0, 2}, (const int[]){1, 3}, 2, true);
    for (int i = 0; i < RS.n; i++)
        if (RS.v[i].group == v)
            RS.v[i].bytes = 2 * BYTES;
    assert_int_equal(gq_bottlenecks_infer(&RS, NULL, NULL, NULL, &b, NULL), 0);
    assert_int_equal(missing_opens(&b, &mg), 1);
    assert_int_equal(mg, g);
    gq_bottlenecks_free(&b);
    /* of another pair */
    gq_records_free(&RS);
    G = 0;
    g = p2p_run((const int[]){0, 2}, (const int[]){1, 3}, 2, false);
    p2p_run((const int[]){0, 2}, (const int[]){1, 1}, 2, true);
    assert_int_equal(gq_bottlenecks_infer(&RS, NULL, NULL, NULL, &b, NULL), 0);
    assert_int_equal(missing_opens(&b, &mg), 1);
    assert_int_equal(mg, g);
    gq_bottlenecks_free(&b);
}

/* Refused twice: one open decision, on the later run. */
static void refused_twice_one_open(void **state)
{
    (void)state;
    p2p_run((const int[]){0, 2}, (const int[]){1, 3}, 2, false);
    int g = p2p_run((const int[]){0, 2}, (const int[]){1, 3}, 2, false);
    gq_bottlenecks b;
    int mg = -1;
    assert_int_equal(gq_bottlenecks_infer(&RS, NULL, NULL, NULL, &b, NULL), 0);
    assert_int_equal(missing_opens(&b, &mg), 1);
    assert_int_equal(mg, g);
    gq_bottlenecks_free(&b);
}

/* The first PCI node of the tree (pci[0]) a root switch with no host bridge
 * above it, over the receiving GPUs 2 and 3 at 30 GB/s; the sending GPUs 0
 * and 1 under a 40 GB/s switch. Neither accounts for 5 GB/s together; the
 * narrowest uplink they cross, pci[0], is the one named. */
static void p2p_narrowest_is_first_node(void **state)
{
    (void)state;
    gq_topo_init(&T);
    T.ngpu = 4;
    for (int a = 0; a < 4; a++) {
        T.gpu[a].index = a;
        T.gpu[a].numa_node = 0;
        for (int c = 0; c < 4; c++)
            T.level[a][c] = a == c ? GQ_LEVEL_X : GQ_LEVEL_PHB;
    }
    int R = add_pci(GQ_PCI_BRIDGE, -1, -1, "0000:20:00.0", 30.0);
    assert_int_equal(R, 0);
    int h0 = add_pci(GQ_PCI_HOSTBRIDGE, -1, -1, "0000:00", 0);
    int B1 = add_pci(GQ_PCI_BRIDGE, h0, -1, "0000:11:00.0", 40.0);
    add_pci(GQ_PCI_GPU, B1, 0, "0000:12:00.0", 63.0);
    add_pci(GQ_PCI_GPU, B1, 1, "0000:13:00.0", 63.0);
    add_pci(GQ_PCI_GPU, R, 2, "0000:22:00.0", 63.0);
    add_pci(GQ_PCI_GPU, R, 3, "0000:23:00.0", 63.0);
    cross_pairs(2.5);
    gq_bottlenecks b;
    int i = p2p_budget(&b);
    if (!strstr(b.v[i].explanation, "0000:20:00.0 at 30.0 GB/s"))
        fail_msg("explanation '%s' does not name 0000:20:00.0 at 30.0 GB/s", b.v[i].explanation);
    gq_bottlenecks_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(p2p_narrowest_uplink_named, setup, teardown),
        cmocka_unit_test_setup_teardown(p2p_one_pair_from_gpu0, setup, teardown),
        cmocka_unit_test_setup_teardown(p2p_narrower_side_named, setup, teardown),
        cmocka_unit_test_setup_teardown(p2p_beyond_names_narrowest, setup, teardown),
        cmocka_unit_test_setup_teardown(refused_not_replaced_by_repeat, setup, teardown),
        cmocka_unit_test_setup_teardown(refused_replaced_by_same_flows, setup, teardown),
        cmocka_unit_test_setup_teardown(refused_twice_one_open, setup, teardown),
        cmocka_unit_test_setup_teardown(p2p_narrowest_is_first_node, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
