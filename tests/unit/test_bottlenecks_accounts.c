/* A device is named as a bottleneck's cause only when its capacity can
 * account for the figure (issue 28, item 4), on crafted records and trees:
 * a host budget of 20 GB/s behind a switch whose uplink carries 63 GB/s is
 * not the switch's (the host bridge's or the NUMA node's when they group
 * exactly those GPUs, else measurement only, naming the switch passed over); the same budget at
 * 52 GB/s is the switch's; a P2P budget between two such switches on one
 * socket that no device accounts for is measurement only, saying so; and the
 * bounds of what a link accounts for. */
#include "bottlenecks_util.h"
#include "analysis/bottlenecks_internal.h"

/* Two sockets, each host bridge -> Gen5 switch (63 GB/s) -> four GPUs; with
 * one_socket, all eight on socket 0 under the two switches. */
static void tree(bool one_socket)
{
    gq_topo_init(&T);
    T.ngpu = 8;
    T.numa_nodes = 2;
    T.sockets = 2;
    for (int g = 0; g < 8; g++) {
        T.gpu[g].index = g;
        T.gpu[g].numa_node = one_socket ? 0 : g / 4;
    }
    int hb0 = add_pci(GQ_PCI_HOSTBRIDGE, -1, -1, "0000:00", 0), hb1 = hb0;
    if (!one_socket)
        hb1 = add_pci(GQ_PCI_HOSTBRIDGE, -1, -1, "0000:80", 0);
    for (int s = 0; s < 2; s++) {
        int sw = add_pci(GQ_PCI_BRIDGE, s ? hb1 : hb0, -1, s ? "0000:90:00.0" : "0000:10:00.0", 63.0);
        for (int k = 0; k < 4; k++) {
            char bus[32];
            snprintf(bus, sizeof bus, "0000:%02x:00.0", (s ? 0x91 : 0x11) + k);
            add_pci(GQ_PCI_GPU, sw, s * 4 + k, bus, 63.0);
        }
    }
}

static const int S0[] = {0, 1, 2, 3}, S1[] = {4, 5, 6, 7};

static void host_records(double budget)
{
    for (int g = 0; g < 8; g++)
        host_uniform(&g, 1, GQ_DIR_H2D, 52.0);
    host_uniform(S0, 4, GQ_DIR_H2D, budget / 4);
    host_uniform(S1, 4, GQ_DIR_H2D, 52.0);
}

/* 20 GB/s behind a 63 GB/s uplink: not the switch, but the host bridge above
 * it (its root complex, whose capacity discovery does not read), which
 * groups exactly these GPUs. */
static void host_budget_too_small_for_switch(void **state)
{
    (void)state;
    tree(false);
    host_records(20.0);
    gq_bottlenecks b;
    assert_int_equal(gq_bottlenecks_infer(&RS, &T, NULL, NULL, &b, NULL), 0);
    int i = gq_bottlenecks_find(&b, GQ_DIR_H2D, S0, 4);
    assert_true(i >= 0);
    assert_int_equal(b.v[i].explained, GQ_EXPLAIN_HOST_BRIDGE);
    assert_string_equal(b.v[i].node, "0000:00");
    /* without the host bridge in the tree, the NUMA node */
    gq_bottlenecks_free(&b);
    T.pci[1].parent = -1; /* the switch becomes a root */
    for (int n = 0; n < T.npci; n++)
        if (T.pci[n].parent == 0)
            T.pci[n].parent = -1;
    assert_int_equal(gq_bottlenecks_infer(&RS, &T, NULL, NULL, &b, NULL), 0);
    i = gq_bottlenecks_find(&b, GQ_DIR_H2D, S0, 4);
    assert_true(i >= 0);
    assert_int_equal(b.v[i].explained, GQ_EXPLAIN_NUMA_NODE);
    assert_string_equal(b.v[i].node, "numa:0");
    gq_bottlenecks_free(&b);
}

/* The same 20 GB/s when the switch's GPUs are not a NUMA node's: measurement
 * only, and the explanation names the switch it passed over. */
static void host_budget_measurement_only(void **state)
{
    (void)state;
    tree(true);
    host_records(20.0);
    gq_bottlenecks b;
    assert_int_equal(gq_bottlenecks_infer(&RS, &T, NULL, NULL, &b, NULL), 0);
    int i = gq_bottlenecks_find(&b, GQ_DIR_H2D, S0, 4);
    assert_true(i >= 0);
    assert_int_equal(b.v[i].explained, GQ_EXPLAIN_MEASUREMENT_ONLY);
    assert_non_null(strstr(b.v[i].explanation, "0000:10:00.0"));
    assert_non_null(strstr(b.v[i].explanation, "cannot account for that figure"));
    gq_bottlenecks_free(&b);
}

/* 52 GB/s behind the same uplink: the switch (52 of 63 is what such a link delivers). */
static void host_budget_switch(void **state)
{
    (void)state;
    tree(false);
    for (int g = 0; g < 8; g++)
        host_uniform(&g, 1, GQ_DIR_H2D, 52.0);
    host_uniform(S0, 4, GQ_DIR_H2D, 13.0);
    gq_bottlenecks b;
    assert_int_equal(gq_bottlenecks_infer(&RS, &T, NULL, NULL, &b, NULL), 0);
    int i = gq_bottlenecks_find(&b, GQ_DIR_H2D, S0, 4);
    assert_true(i >= 0);
    assert_int_equal(b.v[i].explained, GQ_EXPLAIN_PCIE_SWITCH);
    assert_string_equal(b.v[i].node, "0000:10:00.0");
    gq_bottlenecks_free(&b);
}

/* The bounds of what a link accounts for: from GQ_BN_LINK_EFF_MIN of its
 * rate up to GQ_BN_LINK_OVER_MAX of it, both included (20 x 1.05 is 21.0
 * exactly in double); a link of unknown rate, or a figure that is not finite,
 * is not refused. */
static void link_accounts_bounds(void **state)
{
    (void)state;
    assert_true(20.0 * GQ_BN_LINK_OVER_MAX == 21.0);
    assert_true(gq_bn_link_accounts(20.0, 21.0));
    assert_false(gq_bn_link_accounts(20.0, 21.01));
    assert_true(gq_bn_link_accounts(20.0, 20.0 * GQ_BN_LINK_EFF_MIN));
    assert_false(gq_bn_link_accounts(20.0, 20.0 * GQ_BN_LINK_EFF_MIN - 0.01));
    assert_true(gq_bn_link_accounts(0.0, 500.0));
    assert_true(gq_bn_link_accounts(20.0, INFINITY));
}

/* P2P between the two switches of one socket at 20 GB/s together: the
 * switches' uplinks cannot account for it and no socket link is crossed. */
static void p2p_no_device_accounts(void **state)
{
    (void)state;
    tree(true);
    const int src[] = {0, 1, 2, 3}, dst[] = {4, 5, 6, 7};
    for (int p = 0; p < 4; p++) {
        int g = G++;
        p2p_flow(g, src[p], dst[p], 30.0);
    }
    const double run[] = {5.0, 5.0, 5.0, 5.0};
    p2p_group(src, dst, run, 4);
    gq_bottlenecks b;
    assert_int_equal(gq_bottlenecks_infer(&RS, &T, NULL, NULL, &b, NULL), 0);
    const int all[] = {0, 1, 2, 3, 4, 5, 6, 7};
    int i = gq_bottlenecks_find(&b, GQ_DIR_P2P, all, 8);
    assert_true(i >= 0);
    assert_int_equal(b.v[i].explained, GQ_EXPLAIN_MEASUREMENT_ONLY);
    assert_non_null(strstr(b.v[i].explanation, "no device on their path can account for the figure"));
    assert_non_null(strstr(b.v[i].explanation, "63.0 GB/s"));
    gq_bottlenecks_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(host_budget_too_small_for_switch, setup, teardown),
        cmocka_unit_test_setup_teardown(host_budget_measurement_only, setup, teardown),
        cmocka_unit_test_setup_teardown(host_budget_switch, setup, teardown),
        cmocka_unit_test_setup_teardown(link_accounts_bounds, setup, teardown),
        cmocka_unit_test_setup_teardown(p2p_no_device_accounts, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
