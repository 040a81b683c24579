/* The sanity guard: theoretical capacity of each path from the discovered
 * topology, and figures above it flagged impossible (seed 000's 37 GB/s
 * through one Gen4 x16 uplink). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "measure/sanity.h"

static gq_topo t;

static void gpu_link(int g, int gen, int width)
{
    t.gpu[g].pcie_gen_cur = gen;
    t.gpu[g].pcie_width_cur = width;
    t.gpu[g].pcie_gbps = gq_pcie_gbps(gen, width);
}

/* Seed 000's machine, one socket: host bridge -> switch (Gen4 x16 uplink) -> GPUs 0-3. */
static void seed000_socket(void)
{
    gq_topo_init(&t);
    t.ngpu = 4;
    for (int g = 0; g < 4; g++)
        gpu_link(g, 4, 16);
    t.npci = 6;
    t.pci[0] = (gq_pci_node){.kind = GQ_PCI_HOSTBRIDGE, .parent = -1, .gpu = -1, .label = "HostBridge"};
    t.pci[1] = (gq_pci_node){.kind = GQ_PCI_BRIDGE,
                             .parent = 0,
                             .gpu = -1,
                             .bus_id = "0000:16:00.0",
                             .link_gbps = gq_pcie_gbps(4, 16)};
    for (int g = 0; g < 4; g++)
        t.pci[2 + g] = (gq_pci_node){.kind = GQ_PCI_GPU, .parent = 1, .gpu = g};
}

static gq_flow flow(gq_ep_kind sk, int si, gq_ep_kind dk, int di, gq_method m)
{
    return (gq_flow){.src = {sk, si}, .dst = {dk, di}, .method = m, .bytes = 1};
}

static int setup(void **state)
{
    gq_topo_init(&t);
    t.ngpu = 2;
    return 0;
}

static void test_host_path_is_gpu_link(void **state)
{
    gpu_link(0, 5, 16);
    gq_flow f = flow(GQ_EP_HOST, 0, GQ_EP_GPU, 0, GQ_METHOD_CE);
    char why[200];
    double c = gq_sanity_flow_capacity(&t, &f, why, sizeof why);
    assert_true(fabs(c - 63.0154) < 1e-3);
    assert_non_null(strstr(why, "Gen5 x16"));
    f = flow(GQ_EP_GPU, 0, GQ_EP_HOST, 0, GQ_METHOD_SM);
    assert_true(fabs(gq_sanity_flow_capacity(&t, &f, NULL, 0) - c) < 1e-9);
}

static void test_unknown_is_zero(void **state)
{
    gq_flow f = flow(GQ_EP_HOST, 0, GQ_EP_GPU, 1, GQ_METHOD_CE);
    assert_true(gq_sanity_flow_capacity(&t, &f, NULL, 0) == 0.0);
    gq_flow local = flow(GQ_EP_GPU, 0, GQ_EP_GPU, 0, GQ_METHOD_CE);
    gpu_link(0, 5, 16);
    assert_true(gq_sanity_flow_capacity(&t, &local, NULL, 0) == 0.0);
}

static void test_upstream_link_binds(void **state)
{
    gpu_link(0, 4, 16);
    t.npci = 3;
    t.pci[0] = (gq_pci_node){.kind = GQ_PCI_HOSTBRIDGE, .parent = -1, .gpu = -1};
    t.pci[1] = (gq_pci_node){.kind = GQ_PCI_BRIDGE,
                             .parent = 0,
                             .gpu = -1,
                             .bus_id = "0000:3a:00.0",
                             .link_gbps = gq_pcie_gbps(4, 8)};
    t.pci[2] = (gq_pci_node){.kind = GQ_PCI_GPU, .parent = 1, .gpu = 0};
    gq_flow f = flow(GQ_EP_HOST, 0, GQ_EP_GPU, 0, GQ_METHOD_CE);
    char why[200];
    double c = gq_sanity_flow_capacity(&t, &f, why, sizeof why);
    assert_true(fabs(c - gq_pcie_gbps(4, 8)) < 1e-9);
    assert_non_null(strstr(why, "0000:3a:00.0"));
}

static void test_nvlink(void **state)
{
    gpu_link(0, 5, 16);
    gpu_link(1, 5, 16);
    t.nvlinks[0][1] = t.nvlinks[1][0] = 18;
    t.gpu[0].nvlink_gbps_per_link = t.gpu[1].nvlink_gbps_per_link = 25.0;
    gq_flow f = flow(GQ_EP_GPU, 0, GQ_EP_GPU, 1, GQ_METHOD_CE);
    char why[200];
    assert_true(fabs(gq_sanity_flow_capacity(&t, &f, why, sizeof why) - 450.0) < 1e-9);
    assert_non_null(strstr(why, "18 NVLinks"));
    /* both directions at once: the sum of the two bounds */
    gq_flow both[2] = {f, flow(GQ_EP_GPU, 1, GQ_EP_GPU, 0, GQ_METHOD_CE)};
    assert_true(fabs(gq_sanity_group_capacity(&t, both, 2, NULL, 0) - 900.0) < 1e-9);
    /* rate unknown: no bound rather than a wrong one */
    t.gpu[0].nvlink_gbps_per_link = t.gpu[1].nvlink_gbps_per_link = 0;
    assert_true(gq_sanity_flow_capacity(&t, &f, NULL, 0) == 0.0);
}

static void test_p2p_without_nvlink(void **state)
{
    gpu_link(0, 4, 16);
    gpu_link(1, 5, 16);
    t.nvlinks[0][1] = t.nvlinks[1][0] = 0;
    gq_flow f = flow(GQ_EP_GPU, 0, GQ_EP_GPU, 1, GQ_METHOD_CE);
    assert_true(fabs(gq_sanity_flow_capacity(&t, &f, NULL, 0) - gq_pcie_gbps(4, 16)) < 1e-9);
}

static void test_p2p_through_the_tree(void **state)
{
    seed000_socket();
    /* same switch: the shared uplink is not on the path */
    gq_flow f = flow(GQ_EP_GPU, 0, GQ_EP_GPU, 1, GQ_METHOD_CE);
    assert_true(fabs(gq_sanity_flow_capacity(&t, &f, NULL, 0) - gq_pcie_gbps(4, 16)) < 1e-9);
    /* a GPU behind a narrower switch uplink elsewhere: that uplink is on the path */
    t.ngpu = 5;
    gpu_link(4, 4, 16);
    t.pci[6] = (gq_pci_node){.kind = GQ_PCI_BRIDGE,
                             .parent = 0,
                             .gpu = -1,
                             .bus_id = "0000:80:00.0",
                             .link_gbps = gq_pcie_gbps(3, 16)};
    t.pci[7] = (gq_pci_node){.kind = GQ_PCI_GPU, .parent = 6, .gpu = 4};
    t.npci = 8;
    f = flow(GQ_EP_GPU, 0, GQ_EP_GPU, 4, GQ_METHOD_CE);
    char why[200];
    assert_true(fabs(gq_sanity_flow_capacity(&t, &f, why, sizeof why) - gq_pcie_gbps(3, 16)) < 1e-9);
    assert_non_null(strstr(why, "0000:80:00.0"));
}

static void test_staged(void **state)
{
    gpu_link(0, 5, 16);
    gpu_link(1, 4, 16);
    t.nvlinks[0][1] = t.nvlinks[1][0] = 18;
    t.gpu[0].nvlink_gbps_per_link = t.gpu[1].nvlink_gbps_per_link = 25.0;
    gq_flow f = flow(GQ_EP_GPU, 0, GQ_EP_GPU, 1, GQ_METHOD_STAGED);
    char why[200];
    /* through host memory: NVLink does not count, the slower host link does */
    assert_true(fabs(gq_sanity_flow_capacity(&t, &f, why, sizeof why) - gq_pcie_gbps(4, 16)) < 1e-9);
    assert_non_null(strstr(why, "host-staged"));
    f.method = GQ_METHOD_DRIVER_STAGED;
    assert_true(fabs(gq_sanity_flow_capacity(&t, &f, NULL, 0) - gq_pcie_gbps(4, 16)) < 1e-9);
}

static void test_group_tree_bound(void **state)
{
    seed000_socket();
    gq_flow h2d[4];
    for (int g = 0; g < 4; g++)
        h2d[g] = flow(GQ_EP_HOST, 0, GQ_EP_GPU, g, GQ_METHOD_CE);
    char why[200];
    double c = gq_sanity_group_capacity(&t, h2d, 4, why, sizeof why);
    assert_true(fabs(c - gq_pcie_gbps(4, 16)) < 1e-9); /* one uplink for the four */
    assert_non_null(strstr(why, "0000:16:00.0"));
    /* both directions: each direction has its own uplink budget */
    gq_flow mix[2] = {flow(GQ_EP_HOST, 0, GQ_EP_GPU, 0, GQ_METHOD_CE),
                      flow(GQ_EP_GPU, 1, GQ_EP_HOST, 0, GQ_METHOD_CE)};
    assert_true(fabs(gq_sanity_group_capacity(&t, mix, 2, NULL, 0) - 2 * gq_pcie_gbps(4, 16)) < 1e-9);
    /* no tree known: the sum of the GPU links */
    t.npci = 0;
    assert_true(fabs(gq_sanity_group_capacity(&t, h2d, 2, NULL, 0) - 2 * gq_pcie_gbps(4, 16)) < 1e-9);
}

static gq_record crafted(double gbps)
{
    gq_record r;
    memset(&r, 0, sizeof r);
    strcpy(r.test, "host_to_device_set");
    r.src = (gq_endpoint){GQ_EP_HOST, 0};
    r.dst = (gq_endpoint){GQ_EP_GPU, 0};
    r.direction = GQ_DIR_H2D;
    r.dirs = 1u << GQ_DIR_H2D;
    r.valid = true;
    r.exec_gpu = 0;
    double v[] = {gbps, gbps, gbps};
    r.value = gq_stat_compute(v, 3);
    return r;
}

/* The seed's mistake as data: 37 GB/s for two GPUs of one socket. */
static void test_seed000_mistake_is_caught(void **state)
{
    seed000_socket();
    gq_recordset rs = {0};
    gq_record agg = crafted(37.0);
    agg.aggregate = true;
    agg.dst = (gq_endpoint){GQ_EP_GPU, GQ_EP_MANY};
    agg.ngpus = 2;
    agg.gpus[0] = 0;
    agg.gpus[1] = 1;
    gq_records_push(&rs, &agg);
    gq_record ok = crafted(25.3); /* the honest figure */
    ok.aggregate = true;
    ok.ngpus = 2;
    ok.gpus[0] = 2;
    ok.gpus[1] = 3;
    gq_records_push(&rs, &ok);
    assert_int_equal(gq_sanity_check_all(&t, &rs), 1);
    assert_false(rs.v[0].valid);
    assert_true(rs.v[0].flags & GQ_FLAG_IMPOSSIBLE);
    assert_non_null(strstr(rs.v[0].error, "31.5"));
    assert_true(fabs(rs.v[0].capacity_gbps - gq_pcie_gbps(4, 16)) < 1e-9);
    assert_true(rs.v[1].valid);
    gq_records_free(&rs);
}

static void test_tolerance_and_latency(void **state)
{
    seed000_socket();
    gq_record r = crafted(gq_pcie_gbps(4, 16) * 1.005);
    assert_false(gq_sanity_apply(&r, gq_pcie_gbps(4, 16), "x"));
    assert_true(r.valid);
    r = crafted(gq_pcie_gbps(4, 16) * 1.02);
    assert_true(gq_sanity_apply(&r, gq_pcie_gbps(4, 16), "x"));
    r = crafted(5000);
    r.is_latency = true;
    assert_false(gq_sanity_apply(&r, 31.5, "x"));
    r = crafted(5000);
    assert_false(gq_sanity_apply(&r, 0, "unknown"));
}

static void test_p2p_sum_from_members(void **state)
{
    gpu_link(0, 5, 16);
    gpu_link(1, 5, 16);
    t.nvlinks[0][1] = t.nvlinks[1][0] = 18;
    t.gpu[0].nvlink_gbps_per_link = t.gpu[1].nvlink_gbps_per_link = 25.0;
    gq_recordset rs = {0};
    gq_record a = crafted(390), b = crafted(390), s = crafted(950);
    a.src = (gq_endpoint){GQ_EP_GPU, 1};
    a.dst = (gq_endpoint){GQ_EP_GPU, 0};
    b.src = (gq_endpoint){GQ_EP_GPU, 0};
    b.dst = (gq_endpoint){GQ_EP_GPU, 1};
    a.direction = b.direction = s.direction = GQ_DIR_P2P;
    a.dirs = b.dirs = s.dirs = 1u << GQ_DIR_P2P;
    s.src = b.src;
    s.dst = b.dst;
    s.sum = true;
    a.group = b.group = s.group = 7;
    gq_records_push(&rs, &a);
    gq_records_push(&rs, &b);
    gq_records_push(&rs, &s);
    assert_true(fabs(gq_sanity_record_capacity(&t, &rs, &rs.v[2], NULL, 0) - 900.0) < 1e-9);
    assert_int_equal(gq_sanity_check_all(&t, &rs), 1); /* 950 > 900 */
    assert_true(rs.v[2].flags & GQ_FLAG_IMPOSSIBLE);
    gq_records_free(&rs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_host_path_is_gpu_link, setup),
        cmocka_unit_test_setup(test_unknown_is_zero, setup),
        cmocka_unit_test_setup(test_upstream_link_binds, setup),
        cmocka_unit_test_setup(test_nvlink, setup),
        cmocka_unit_test_setup(test_p2p_without_nvlink, setup),
        cmocka_unit_test_setup(test_p2p_through_the_tree, setup),
        cmocka_unit_test_setup(test_staged, setup),
        cmocka_unit_test_setup(test_group_tree_bound, setup),
        cmocka_unit_test_setup(test_seed000_mistake_is_caught, setup),
        cmocka_unit_test_setup(test_tolerance_and_latency, setup),
        cmocka_unit_test_setup(test_p2p_sum_from_members, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
