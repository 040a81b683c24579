/* The nvidia-smi topo -m levels derived from a crafted PCIe tree (two GPUs
 * behind one switch, nested switches, root ports of one host bridge, host
 * bridges on one and on two NUMA nodes), NVLink over PCIe, levels NVML gave
 * kept, PCIe capacities, bus id parsing and GPU selection. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "topo/discover.h"
#include "topo/pcitree.h"
#include "topo/topo.h"

static gq_topo T;

static int node(gq_pci_kind kind, int parent, int gpu, int numa)
{
    gq_pci_node *n = &T.pci[T.npci];
    n->kind = kind;
    n->parent = parent;
    n->gpu = gpu;
    n->numa_node = numa;
    snprintf(n->label, sizeof n->label, "%s", kind == GQ_PCI_GPU ? "GPU" : "node");
    return T.npci++;
}

/* HostBridge A (NUMA 0): root port -> switch (up) -> 2 downstream ports -> GPU0, GPU1;
 *                        root port -> GPU2
 * HostBridge B (NUMA 0): root port -> GPU3
 * HostBridge C (NUMA 1): root port -> switch -> down -> nested switch -> down -> GPU4;
 *                                              switch -> down -> GPU5
 * GPU6 is not in the tree. */
static void crafted(int numa_nodes)
{
    gq_topo_init(&T);
    T.ngpu = 7;
    T.numa_nodes = numa_nodes;
    int a = node(GQ_PCI_HOSTBRIDGE, -1, -1, 0);
    int rp = node(GQ_PCI_BRIDGE, a, -1, 0);
    int up = node(GQ_PCI_BRIDGE, rp, -1, 0);
    int d0 = node(GQ_PCI_BRIDGE, up, -1, 0);
    node(GQ_PCI_GPU, d0, 0, 0);
    int d1 = node(GQ_PCI_BRIDGE, up, -1, 0);
    node(GQ_PCI_GPU, d1, 1, 0);
    int rp2 = node(GQ_PCI_BRIDGE, a, -1, 0);
    node(GQ_PCI_GPU, rp2, 2, 0);
    int b = node(GQ_PCI_HOSTBRIDGE, -1, -1, 0);
    int rpb = node(GQ_PCI_BRIDGE, b, -1, 0);
    node(GQ_PCI_GPU, rpb, 3, 0);
    int c = node(GQ_PCI_HOSTBRIDGE, -1, -1, 1);
    int rpc = node(GQ_PCI_BRIDGE, c, -1, 1);
    int upc = node(GQ_PCI_BRIDGE, rpc, -1, 1);
    int dc = node(GQ_PCI_BRIDGE, upc, -1, 1);
    int up2 = node(GQ_PCI_BRIDGE, dc, -1, 1);
    int dc2 = node(GQ_PCI_BRIDGE, up2, -1, 1);
    node(GQ_PCI_GPU, dc2, 4, 1);
    int dc3 = node(GQ_PCI_BRIDGE, upc, -1, 1);
    node(GQ_PCI_GPU, dc3, 5, 1);
}

static gq_link_level L(int i, int j)
{
    return (gq_link_level)T.level[i][j];
}

static void test_levels_from_tree(void **state)
{
    (void)state;
    crafted(2);
    gq_topo_derive_levels(&T);
    for (int i = 0; i < T.ngpu; i++)
        assert_int_equal(L(i, i), GQ_LEVEL_X);
    assert_int_equal(L(0, 1), GQ_LEVEL_PIX); /* one switch */
    assert_int_equal(L(1, 0), GQ_LEVEL_PIX);
    assert_int_equal(L(0, 2), GQ_LEVEL_PHB);  /* two root ports of host bridge A */
    assert_int_equal(L(0, 3), GQ_LEVEL_NODE); /* host bridges A and B, both NUMA 0 */
    assert_int_equal(L(3, 0), GQ_LEVEL_NODE);
    assert_int_equal(L(0, 4), GQ_LEVEL_SYS); /* NUMA 0 and NUMA 1 */
    assert_int_equal(L(2, 5), GQ_LEVEL_SYS);
    assert_int_equal(L(4, 5), GQ_LEVEL_PXB); /* GPU 4 sits behind a second switch */
    assert_int_equal(L(5, 4), GQ_LEVEL_PXB);
    /* Not in the tree and no NUMA node known on a 2-node machine: unknown. */
    assert_int_equal(L(6, 0), GQ_LEVEL_UNKNOWN);
    assert_int_equal(L(0, 6), GQ_LEVEL_UNKNOWN);
    /* pci_level carries the same PCIe answers. */
    assert_int_equal(T.pci_level[0][1], GQ_LEVEL_PIX);
    assert_int_equal(T.pci_level[4][5], GQ_LEVEL_PXB);
}

static void test_unknown_numa_one_node_machine(void **state)
{
    (void)state;
    crafted(1);
    for (int n = 0; n < T.npci; n++)
        T.pci[n].numa_node = -1; /* a VM: the platform reports no node */
    gq_topo_derive_levels(&T);
    /* Different host bridges on the only NUMA node there is. */
    assert_int_equal(L(0, 4), GQ_LEVEL_NODE);
    assert_int_equal(L(0, 3), GQ_LEVEL_NODE);
    /* The GPU's own node decides when the bridges do not say. */
    crafted(2);
    for (int n = 0; n < T.npci; n++)
        T.pci[n].numa_node = -1;
    T.gpu[0].numa_node = 0;
    T.gpu[4].numa_node = 1;
    T.gpu[3].numa_node = 0;
    gq_topo_derive_levels(&T);
    assert_int_equal(L(0, 4), GQ_LEVEL_SYS);
    assert_int_equal(L(0, 3), GQ_LEVEL_NODE);
    assert_int_equal(L(3, 5), GQ_LEVEL_UNKNOWN); /* GPU 5's node is unknown */
}

static void test_nvlink_and_nvml_levels(void **state)
{
    (void)state;
    crafted(2);
    T.nvlinks[0][4] = T.nvlinks[4][0] = 12;
    T.nvlinks[0][1] = T.nvlinks[1][0] = 0;
    T.pci_level[2][3] = T.pci_level[3][2] = GQ_LEVEL_SYS; /* what NVML said wins over the tree */
    gq_topo_derive_levels(&T);
    assert_int_equal(L(0, 4), GQ_LEVEL_NV);
    assert_int_equal(L(4, 0), GQ_LEVEL_NV);
    assert_int_equal(T.pci_level[0][4], GQ_LEVEL_SYS); /* the PCIe path under the NVLinks */
    assert_int_equal(L(0, 1), GQ_LEVEL_PIX);
    assert_int_equal(L(2, 3), GQ_LEVEL_SYS);
}

static void test_pcie_capacity(void **state)
{
    (void)state;
    assert_true(fabs(gq_pcie_gbps(4, 16) - 31.5) < 0.05);
    assert_true(fabs(gq_pcie_gbps(5, 16) - 63.0) < 0.05);
    assert_true(fabs(gq_pcie_gbps(3, 16) - 15.75) < 0.05);
    assert_true(fabs(gq_pcie_gbps(4, 8) - 15.75) < 0.05);
    assert_true(fabs(gq_pcie_gbps(1, 16) - 4.0) < 1e-9); /* 8b/10b */
    assert_true(gq_pcie_gbps(0, 16) == 0.0);
    assert_true(gq_pcie_gbps(5, -1) == 0.0);
    assert_true(gq_pcie_gbps(7, 16) == 0.0);
    assert_int_equal(gq_pcie_gen_from_gts(32.0), 5);
    assert_int_equal(gq_pcie_gen_from_gts(16.0), 4);
    assert_int_equal(gq_pcie_gen_from_gts(2.5), 1);
    assert_int_equal(gq_pcie_gen_from_gts(0.0), -1);
    assert_int_equal(gq_pcie_gen_from_gts(12.0), -1);
    /* Derived fields: the GB/s of the negotiated link, and the NVLink rate by architecture. */
    gq_topo_init(&T);
    T.ngpu = 2;
    T.gpu[0].pcie_gen_cur = 5;
    T.gpu[0].pcie_width_cur = 16;
    T.gpu[0].cc_major = 9;
    T.gpu[0].cc_minor = 0;
    T.gpu[0].nvlinks_total = 18;
    T.gpu[1].pcie_gen_cur = 4;
    T.gpu[1].pcie_width_cur = 8;
    T.gpu[1].cc_major = 8;
    T.gpu[1].cc_minor = 9;
    T.gpu[1].nvlinks_total = 0;
    gq_topo_finish(&T);
    assert_true(fabs(T.gpu[0].pcie_gbps - 63.0) < 0.05);
    assert_true(fabs(T.gpu[1].pcie_gbps - 15.75) < 0.05);
    assert_true(T.gpu[0].nvlink_gbps_per_link == 25.0);
    assert_true(T.gpu[1].nvlink_gbps_per_link == 0.0);
    assert_true(gq_nvlink_gbps_per_link(10, 0) == 50.0);
    assert_true(gq_nvlink_gbps_per_link(8, 0) == 25.0);
    assert_true(gq_nvlink_gbps_per_link(6, 0) == 20.0); /* P100 SXM2, NVLink 1 */
    assert_true(gq_nvlink_gbps_per_link(6, 1) == 0.0);  /* P40: no NVLink */
    assert_true(gq_nvlink_gbps_per_link(7, 5) == 0.0);  /* T4 */
    assert_true(gq_nvlink_gbps_per_link(7, 0) ==
                25.0); /* V100 SXM2, NVLink 2 (mutation round 9, topo.c:150) */
    assert_true(gq_nvlink_gbps_per_link(9, 0) == 25.0); /* H100/H200, NVLink 4 */
    /* A GPU whose link NVML does not report (gen and width 0) takes the rate
     * of its PCI node's upstream link (hwloc); a P100 with NVLinks and no
     * per-link rate gets NVLink 1's. */
    gq_topo_init(&T);
    T.ngpu = 2;
    T.gpu[0].cc_major = 6;
    T.gpu[0].cc_minor = 0;
    T.gpu[0].nvlinks_total = 4;
    T.gpu[1].pcie_gen_cur = 3;
    T.gpu[1].pcie_width_cur = 16;
    T.npci = 2;
    for (int n = 0; n < 2; n++) {
        T.pci[n].kind = GQ_PCI_GPU;
        T.pci[n].gpu = 1 - n;
        T.pci[n].parent = -1;
        T.pci[n].link_gbps = 7.0 + n;
    }
    gq_topo_finish(&T);
    assert_true(T.gpu[0].pcie_gbps == 8.0);
    assert_true(fabs(T.gpu[1].pcie_gbps - 15.75) < 0.05);
    assert_true(T.gpu[0].nvlink_gbps_per_link == 20.0);
}

static void test_bus_ids(void **state)
{
    (void)state;
    char b[32];
    assert_true(gq_pci_bus_id_normalize("00000000:3B:00.0", b, sizeof b));
    assert_string_equal(b, "0000:3b:00.0");
    assert_true(gq_pci_bus_id_normalize("3b:00.1", b, sizeof b));
    assert_string_equal(b, "0000:3b:00.1");
    assert_true(gq_pci_bus_id_normalize("0001:c1:1f.7", b, sizeof b));
    assert_string_equal(b, "0001:c1:1f.7");
    assert_false(gq_pci_bus_id_normalize("", b, sizeof b));
    assert_false(gq_pci_bus_id_normalize("GPU-0", b, sizeof b));
    assert_false(gq_pci_bus_id_normalize("0000:3b:00.0 ", b, sizeof b));
    assert_false(gq_pci_bus_id_normalize("0000:3b:20.0", b, sizeof b)); /* device > 31 */
    assert_false(gq_pci_bus_id_normalize("0000:3b:00.8", b, sizeof b)); /* function > 7 */
}

static void test_select(void **state)
{
    (void)state;
    static gq_topo out;
    gq_err e;
    crafted(2);
    for (int i = 0; i < T.ngpu; i++)
        snprintf(T.gpu[i].name, sizeof T.gpu[i].name, "GPU model %d", i);
    T.nvlinks[0][4] = T.nvlinks[4][0] = 12;
    gq_topo_derive_levels(&T);
    int sel[] = {4, 0};
    assert_int_equal(gq_topo_select(&T, sel, 2, &out, &e), GQ_OK);
    assert_int_equal(out.ngpu, 2);
    assert_int_equal(out.gpu[0].index, 4);
    assert_string_equal(out.gpu[0].name, "GPU model 4");
    assert_int_equal(out.gpu[1].index, 0);
    assert_int_equal(out.nvlinks[0][1], 12);
    assert_int_equal(out.level[0][1], GQ_LEVEL_NV);
    assert_int_equal(out.level[0][0], GQ_LEVEL_X);
    int gpus_in_tree = 0, others = 0;
    for (int n = 0; n < out.npci; n++) {
        if (out.pci[n].kind == GQ_PCI_GPU) {
            gpus_in_tree++;
            assert_true(out.pci[n].gpu == 0 || out.pci[n].gpu == 1);
        }
        if (out.pci[n].kind == GQ_PCI_OTHER)
            others++;
    }
    assert_int_equal(gpus_in_tree, 2);
    assert_int_equal(others, 4); /* GPUs 1, 2, 3, 5 are not selected */
    int bad[] = {7};
    assert_int_equal(gq_topo_select(&T, bad, 1, &out, &e), GQ_E_USAGE);
    assert_non_null(strstr(e.msg, "GPU 7 does not exist"));
}

static void test_warnings(void **state)
{
    (void)state;
    gq_topo_init(&T);
    gq_topo_warn(&T, "NVML not available (%s)", "x");
    gq_topo_warn(&T, "NVML not available (%s)", "x");
    assert_int_equal(T.nwarnings, 1);
    for (int i = 0; i < 2 * GQ_TOPO_MAX_WARN; i++)
        gq_topo_warn(&T, "warning %d", i);
    assert_int_equal(T.nwarnings, GQ_TOPO_MAX_WARN);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_levels_from_tree),
        cmocka_unit_test(test_unknown_numa_one_node_machine),
        cmocka_unit_test(test_nvlink_and_nvml_levels),
        cmocka_unit_test(test_pcie_capacity),
        cmocka_unit_test(test_bus_ids),
        cmocka_unit_test(test_select),
        cmocka_unit_test(test_warnings),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
