/* The sanity guard at its edges: which link each bound names, links known on
 * one side only, trees whose interesting node is at index 0 or at the deepest
 * possible level. Written for the survivors of bench/mutation (each test says
 * which mutant it is there for). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
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

static gq_flow flow(gq_ep_kind sk, int si, gq_ep_kind dk, int di, gq_method m)
{
    return (gq_flow){.src = {sk, si}, .dst = {dk, di}, .method = m, .bytes = 1};
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
    double v[] = {gbps, gbps, gbps};
    r.value = gq_stat_compute(v, 3);
    return r;
}

static bool near(double a, double b)
{
    return fabs(a - b) < 1e-9;
}

static int setup(void **state)
{
    gq_topo_init(&t);
    t.ngpu = 2;
    return 0;
}

/* Both ends know their NVLink rate and they differ (a link trained down on
 * one side, or two GPU models): the pair's capacity is that of the slower
 * end, whichever GPU is the source, and the reason names that rate. */
static void test_nvlink_rates_differ_slower_end(void **state)
{
    t.nvlinks[0][1] = t.nvlinks[1][0] = 4;
    char why[200];
    for (int slow = 0; slow < 2; slow++) {
        t.gpu[slow].nvlink_gbps_per_link = 20.0;
        t.gpu[1 - slow].nvlink_gbps_per_link = 25.0;
        for (int dir = 0; dir < 2; dir++) {
            gq_flow f = flow(GQ_EP_GPU, dir, GQ_EP_GPU, 1 - dir, GQ_METHOD_CE);
            double c = gq_sanity_flow_capacity(&t, &f, why, sizeof why);
            if (!near(c, 4 * 20.0))
                fail_msg("slow end GPU %d, flow %d->%d: capacity %.1f, want %.1f (%s)", slow, dir, 1 - dir, c,
                         4 * 20.0, why);
            assert_non_null(strstr(why, "4 NVLinks x 20.0 GB/s"));
        }
    }
}

/* NVLink rate known on one GPU only: that rate, not "unknown" (the && of the
 * two rates made ||); neither known: no bound, and the reason says so. */
static void test_nvlink_rate_from_one_side(void **state)
{
    t.nvlinks[0][1] = t.nvlinks[1][0] = 4;
    t.gpu[1].nvlink_gbps_per_link = 25.0;
    gq_flow f = flow(GQ_EP_GPU, 0, GQ_EP_GPU, 1, GQ_METHOD_CE);
    char why[200];
    assert_true(near(gq_sanity_flow_capacity(&t, &f, why, sizeof why), 100.0));
    assert_non_null(strstr(why, "4 NVLinks x 25.0 GB/s"));
    t.gpu[1].nvlink_gbps_per_link = 0;
    t.gpu[0].nvlink_gbps_per_link = 20.0;
    assert_true(near(gq_sanity_flow_capacity(&t, &f, why, sizeof why), 80.0));
    t.gpu[0].nvlink_gbps_per_link = 0;
    strcpy(why, "stale");
    assert_true(gq_sanity_flow_capacity(&t, &f, why, sizeof why) == 0.0);
    assert_string_equal(why, "4 NVLinks of unknown rate");
}

/* A PCIe pair whose first GPU's link is unknown: the second GPU's link bounds
 * it (cap <= 0 made cap < 0 left it unbounded). */
static void test_pcie_pair_first_link_unknown(void **state)
{
    gpu_link(1, 3, 8);
    gq_flow f = flow(GQ_EP_GPU, 0, GQ_EP_GPU, 1, GQ_METHOD_CE);
    char why[200];
    assert_true(near(gq_sanity_flow_capacity(&t, &f, why, sizeof why), gq_pcie_gbps(3, 8)));
    assert_non_null(strstr(why, "Gen3 x8 link of GPU 1"));
}

/* A rate below 1 GB/s is still a rate (pcie_gbps > 0, not > 1), and with the
 * generation unknown the reason does not invent "Gen0". */
static void test_gpu_link_text_and_small_rate(void **state)
{
    t.gpu[0].pcie_gbps = 0.5;
    gq_flow f = flow(GQ_EP_HOST, 0, GQ_EP_GPU, 0, GQ_METHOD_CE);
    char why[200];
    assert_true(near(gq_sanity_flow_capacity(&t, &f, why, sizeof why), 0.5));
    assert_string_equal(why, "PCIe link of GPU 0, 0.5 GB/s");
    t.gpu[0].pcie_gen_cur = 0; /* width known, generation not */
    t.gpu[0].pcie_width_cur = 16;
    gq_sanity_flow_capacity(&t, &f, why, sizeof why);
    assert_string_equal(why, "PCIe link of GPU 0, 0.5 GB/s");
    t.gpu[0].pcie_width_cur = 0;
    t.gpu[0].pcie_gen_cur = 4; /* generation known, width not */
    gq_sanity_flow_capacity(&t, &f, why, sizeof why);
    assert_string_equal(why, "PCIe link of GPU 0, 0.5 GB/s");
    gpu_link(0, 4, 16);
    gq_sanity_flow_capacity(&t, &f, why, sizeof why);
    assert_string_equal(why, "PCIe Gen4 x16 link of GPU 0, 31.5 GB/s");
}

/* Host-staged between equal host paths: the first GPU's path is named (<, not <=). */
static void test_staged_tie_names_the_source(void **state)
{
    gpu_link(0, 4, 16);
    gpu_link(1, 4, 16);
    gq_flow f = flow(GQ_EP_GPU, 0, GQ_EP_GPU, 1, GQ_METHOD_STAGED);
    char why[200];
    assert_true(near(gq_sanity_flow_capacity(&t, &f, why, sizeof why), gq_pcie_gbps(4, 16)));
    assert_string_equal(why, "host-staged through PCIe Gen4 x16 link of GPU 0, 31.5 GB/s");
    gpu_link(0, 5, 16); /* now GPU 1's path is the lower */
    gq_sanity_flow_capacity(&t, &f, why, sizeof why);
    assert_string_equal(why, "host-staged through PCIe Gen4 x16 link of GPU 1, 31.5 GB/s");
}

/* Two GPUs under one switch with a narrow uplink: P2P between them stays under
 * the switch, so the uplink is not on the path (the lowest common ancestor is
 * the switch; a negated ancestor test walked to the root). The GPU nodes are at
 * index 0 and 1 (ka < 0, not < 1, means "no node"). */
static void test_p2p_under_one_switch_skips_the_uplink(void **state)
{
    gpu_link(0, 4, 16);
    gpu_link(1, 4, 16);
    t.npci = 4;
    t.pci[0] = (gq_pci_node){.kind = GQ_PCI_GPU, .parent = 2, .gpu = 0, .link_gbps = 20.0};
    t.pci[1] = (gq_pci_node){.kind = GQ_PCI_GPU, .parent = 2, .gpu = 1};
    t.pci[2] = (gq_pci_node){
        .kind = GQ_PCI_BRIDGE, .parent = 3, .gpu = -1, .bus_id = "0000:16:00.0", .link_gbps = 8.0};
    t.pci[3] = (gq_pci_node){.kind = GQ_PCI_HOSTBRIDGE, .parent = -1, .gpu = -1};
    gq_flow f = flow(GQ_EP_GPU, 0, GQ_EP_GPU, 1, GQ_METHOD_CE);
    char why[200];
    /* GPU 0's node link (20 GB/s) is below its 31.5 GB/s negotiated link; the 8 GB/s uplink is not crossed */
    assert_true(near(gq_sanity_flow_capacity(&t, &f, why, sizeof why), 20.0));
    assert_string_equal(why, "PCIe GPU link #0, 20.0 GB/s");
    /* from the host, the uplink is crossed */
    gq_flow h = flow(GQ_EP_HOST, 0, GQ_EP_GPU, 1, GQ_METHOD_CE);
    assert_true(near(gq_sanity_flow_capacity(&t, &h, why, sizeof why), 8.0));
    assert_string_equal(why, "PCIe uplink 0000:16:00.0, 8.0 GB/s");
}

/* A node's name: bus id, else its label, else its index. */
static void test_pci_names(void **state)
{
    gpu_link(0, 4, 16);
    t.npci = 3;
    t.pci[0] =
        (gq_pci_node){.kind = GQ_PCI_HOSTBRIDGE, .parent = -1, .gpu = -1, .label = "HB0", .link_gbps = 12.0};
    t.pci[1] =
        (gq_pci_node){.kind = GQ_PCI_BRIDGE, .parent = 0, .gpu = -1, .label = "SW-A", .link_gbps = 16.0};
    t.pci[2] = (gq_pci_node){.kind = GQ_PCI_GPU, .parent = 1, .gpu = 0};
    gq_flow f = flow(GQ_EP_HOST, 0, GQ_EP_GPU, 0, GQ_METHOD_CE);
    char why[200];
    assert_true(near(gq_sanity_flow_capacity(&t, &f, why, sizeof why), 12.0));
    assert_string_equal(why, "PCIe host bridge HB0, 12.0 GB/s");
    t.pci[0].link_gbps = 0;
    assert_true(near(gq_sanity_flow_capacity(&t, &f, why, sizeof why), 16.0));
    assert_string_equal(why, "PCIe uplink SW-A, 16.0 GB/s");
    t.pci[1].label[0] = 0;
    gq_sanity_flow_capacity(&t, &f, why, sizeof why);
    assert_string_equal(why, "PCIe uplink #1, 16.0 GB/s");
}

/* The group bound names the highest binding link, also when that link is node 0
 * (best >= 0, best < 0) and when a deeper binding link comes after it. */
static void test_group_names_the_highest_binding_link(void **state)
{
    gpu_link(0, 4, 16);
    gpu_link(1, 4, 16);
    t.npci = 5;
    t.pci[0] = (gq_pci_node){
        .kind = GQ_PCI_BRIDGE, .parent = 1, .gpu = -1, .bus_id = "0000:10:00.0", .link_gbps = 10.0};
    t.pci[1] = (gq_pci_node){.kind = GQ_PCI_HOSTBRIDGE, .parent = -1, .gpu = -1};
    t.pci[2] = (gq_pci_node){
        .kind = GQ_PCI_BRIDGE, .parent = 0, .gpu = -1, .bus_id = "0000:20:00.0", .link_gbps = 20.0};
    t.pci[3] = (gq_pci_node){.kind = GQ_PCI_GPU, .parent = 2, .gpu = 0};
    t.pci[4] = (gq_pci_node){.kind = GQ_PCI_GPU, .parent = 2, .gpu = 1};
    gq_flow h2d[2] = {flow(GQ_EP_HOST, 0, GQ_EP_GPU, 0, GQ_METHOD_CE),
                      flow(GQ_EP_HOST, 0, GQ_EP_GPU, 1, GQ_METHOD_CE)};
    char why[300];
    assert_true(near(gq_sanity_group_capacity(&t, h2d, 2, why, sizeof why), 10.0));
    assert_string_equal(why, "h2d: PCIe uplink 0000:10:00.0, 10.0 GB/s");
}

/* GPUs with no node in the tree: the sum of their links, the first one named. */
static void test_group_without_tree_names_the_first_gpu(void **state)
{
    gpu_link(0, 4, 16);
    gpu_link(1, 3, 16);
    gq_flow d2h[2] = {flow(GQ_EP_GPU, 0, GQ_EP_HOST, 0, GQ_METHOD_CE),
                      flow(GQ_EP_GPU, 1, GQ_EP_HOST, 0, GQ_METHOD_CE)};
    char why[300];
    assert_true(near(gq_sanity_group_capacity(&t, d2h, 2, why, sizeof why),
                     gq_pcie_gbps(4, 16) + gq_pcie_gbps(3, 16)));
    assert_string_equal(why, "d2h: PCIe Gen4 x16 link of GPU 0, 31.5 GB/s");
    /* one GPU's link unknown: no bound at all */
    t.gpu[1].pcie_gbps = 0;
    t.gpu[1].pcie_gen_cur = 0;
    assert_true(gq_sanity_group_capacity(&t, d2h, 2, why, sizeof why) == 0.0);
    /* no flows: nothing, and the reason is cleared */
    strcpy(why, "stale");
    assert_true(gq_sanity_group_capacity(&t, d2h, 0, why, sizeof why) == 0.0);
    assert_string_equal(why, "");
}

/* A chain as deep as the tree can be (GQ_MAX_PCI_NODES nodes, the GPU at the
 * bottom): the deepest level is processed too (the loop starts at maxn - 1). */
static void test_deepest_possible_tree(void **state)
{
    gpu_link(0, 4, 16);
    t.npci = GQ_MAX_PCI_NODES;
    for (int k = 0; k < GQ_MAX_PCI_NODES; k++)
        t.pci[k] = (gq_pci_node){.kind = k ? GQ_PCI_BRIDGE : GQ_PCI_HOSTBRIDGE, .parent = k - 1, .gpu = -1};
    t.pci[GQ_MAX_PCI_NODES - 1].kind = GQ_PCI_GPU;
    t.pci[GQ_MAX_PCI_NODES - 1].gpu = 0;
    t.pci[GQ_MAX_PCI_NODES - 1].link_gbps = 5.0;
    gq_flow h = flow(GQ_EP_HOST, 0, GQ_EP_GPU, 0, GQ_METHOD_CE);
    assert_true(near(gq_sanity_group_capacity(&t, &h, 1, NULL, 0), 5.0));
}

/* The reason is cleared when a record has no capacity (why[0], not why[1]). */
static void test_record_capacity_clears_the_reason(void **state)
{
    gq_record r = crafted(10);
    r.is_latency = true;
    char why[64] = "stale";
    assert_true(gq_sanity_record_capacity(&t, NULL, &r, why, sizeof why) == 0.0);
    assert_string_equal(why, "");
    /* a capacity recorded with the record is taken as it is */
    r.is_latency = false;
    r.capacity_gbps = 12.5;
    strcpy(why, "stale");
    assert_true(near(gq_sanity_record_capacity(&t, NULL, &r, why, sizeof why), 12.5));
    assert_string_equal(why, "");
}

/* check_all leaves records already flagged impossible alone: counted once, the
 * message not repeated. */
static void test_check_all_skips_flagged(void **state)
{
    gpu_link(0, 4, 16);
    gq_recordset rs = {0};
    gq_record r = crafted(60);
    gq_records_push(&rs, &r);
    assert_int_equal(gq_sanity_check_all(&t, &rs), 1);
    char first[sizeof rs.v[0].error];
    snprintf(first, sizeof first, "%s", rs.v[0].error);
    assert_non_null(strstr(first, "impossible: 60.00 GB/s is above the 31.5 GB/s capacity"));
    assert_int_equal(gq_sanity_check_all(&t, &rs), 0);
    assert_string_equal(rs.v[0].error, first);
    /* an earlier error is kept, the verdict appended */
    gq_record e = crafted(60);
    strcpy(e.error, "window overlap");
    gq_records_push(&rs, &e);
    assert_int_equal(gq_sanity_check_all(&t, &rs), 1);
    assert_non_null(strstr(rs.v[1].error, "window overlap; impossible: 60.00 GB/s"));
    gq_records_free(&rs);
}

/* ---- written for the survivors of bench/mutation (seed 165809224) ---------- */

/* A PCIe pair whose second GPU's link is unknown: the first GPU's link bounds
 * it; a second link below 1 GB/s is still the lower one. */
static void test_pcie_pair_second_link(void **state)
{
    gpu_link(0, 4, 16);
    gq_flow f = flow(GQ_EP_GPU, 0, GQ_EP_GPU, 1, GQ_METHOD_CE);
    char why[200];
    assert_true(near(gq_sanity_flow_capacity(&t, &f, why, sizeof why), gq_pcie_gbps(4, 16)));
    assert_string_equal(why, "PCIe Gen4 x16 link of GPU 0, 31.5 GB/s");
    t.gpu[1].pcie_gbps = 0.5;
    assert_true(near(gq_sanity_flow_capacity(&t, &f, why, sizeof why), 0.5));
    assert_string_equal(why, "PCIe link of GPU 1, 0.5 GB/s");
}

/* Host-staged with the second GPU's host path unknown: the first one's; with
 * both unknown, no bound and no reason. */
static void test_staged_second_path_unknown(void **state)
{
    gq_flow f = flow(GQ_EP_GPU, 0, GQ_EP_GPU, 1, GQ_METHOD_STAGED);
    char why[200];
    strcpy(why, "stale");
    assert_true(gq_sanity_flow_capacity(&t, &f, why, sizeof why) == 0.0);
    assert_string_equal(why, "");
    gpu_link(0, 4, 16);
    assert_true(near(gq_sanity_flow_capacity(&t, &f, why, sizeof why), gq_pcie_gbps(4, 16)));
    assert_string_equal(why, "host-staged through PCIe Gen4 x16 link of GPU 0, 31.5 GB/s");
}

/* A GPU that is not on the machine has no bound, alone or in a group. */
static void test_gpu_not_on_machine(void **state)
{
    gpu_link(0, 4, 16);
    gpu_link(1, 4, 16);
    gq_flow f = flow(GQ_EP_HOST, 0, GQ_EP_GPU, 5, GQ_METHOD_CE);
    assert_true(gq_sanity_flow_capacity(&t, &f, NULL, 0) == 0.0);
    gq_flow g[2] = {flow(GQ_EP_HOST, 0, GQ_EP_GPU, 0, GQ_METHOD_CE),
                    flow(GQ_EP_HOST, 0, GQ_EP_GPU, 5, GQ_METHOD_CE)};
    char why[300];
    assert_true(gq_sanity_group_capacity(&t, g, 2, why, sizeof why) == 0.0);
}

/* P2P between a GPU in the PCIe tree and one outside it: only the two GPUs'
 * links, not the first GPU's uplink (the pair has no common ancestor to walk to). */
static void test_p2p_one_gpu_outside_tree(void **state)
{
    gpu_link(0, 4, 16);
    gpu_link(1, 4, 16);
    t.npci = 3;
    t.pci[0] = (gq_pci_node){.kind = GQ_PCI_GPU, .parent = 1, .gpu = 0};
    t.pci[1] = (gq_pci_node){
        .kind = GQ_PCI_BRIDGE, .parent = 2, .gpu = -1, .bus_id = "0000:16:00.0", .link_gbps = 8.0};
    t.pci[2] = (gq_pci_node){.kind = GQ_PCI_HOSTBRIDGE, .parent = -1, .gpu = -1};
    gq_flow f = flow(GQ_EP_GPU, 0, GQ_EP_GPU, 1, GQ_METHOD_CE);
    assert_true(near(gq_sanity_flow_capacity(&t, &f, NULL, 0), gq_pcie_gbps(4, 16)));
    gq_flow r = flow(GQ_EP_GPU, 1, GQ_EP_GPU, 0, GQ_METHOD_CE);
    assert_true(near(gq_sanity_flow_capacity(&t, &r, NULL, 0), gq_pcie_gbps(4, 16)));
}

/* A latency record has no capacity. */
static void test_latency_record_no_capacity(void **state)
{
    gpu_link(0, 4, 16);
    gq_record r = crafted(20.0);
    assert_true(near(gq_sanity_record_capacity(&t, NULL, &r, NULL, 0), gq_pcie_gbps(4, 16)));
    r.is_latency = true;
    assert_true(gq_sanity_record_capacity(&t, NULL, &r, NULL, 0) == 0.0);
}

/* A group outside the tree is named by its first GPU with a known link, also
 * one below 1 GB/s. */
static void test_group_small_link_named(void **state)
{
    t.gpu[0].pcie_gbps = 0.5;
    t.gpu[1].pcie_gbps = 0.75;
    gq_flow h2d[2] = {flow(GQ_EP_HOST, 0, GQ_EP_GPU, 0, GQ_METHOD_CE),
                      flow(GQ_EP_HOST, 0, GQ_EP_GPU, 1, GQ_METHOD_CE)};
    char why[300];
    assert_true(near(gq_sanity_group_capacity(&t, h2d, 2, why, sizeof why), 1.25));
    assert_string_equal(why, "h2d: PCIe link of GPU 0, 0.5 GB/s");
}

/* A flow to a GPU not named (index < 0) has no capacity, nor has a group
 * one of whose members has such a flow; a figure that is not a number or
 * is infinite is not plausible. */
static void test_unnamed_gpu_and_not_finite(void **state)
{
    gpu_link(0, 4, 16);
    gq_record r = crafted(20.0);
    assert_true(near(gq_sanity_record_capacity(&t, NULL, &r, NULL, 0), gq_pcie_gbps(4, 16)));
    r.dst.index = -1;
    assert_true(gq_sanity_record_capacity(&t, NULL, &r, NULL, 0) == 0.0);
    gq_recordset rs = {0};
    gq_record agg = crafted(20.0), m = crafted(20.0);
    agg.aggregate = true;
    agg.group = m.group = 3;
    assert_int_equal(gq_records_push(&rs, &agg), GQ_OK);
    assert_int_equal(gq_records_push(&rs, &m), GQ_OK);
    assert_true(near(gq_sanity_record_capacity(&t, &rs, &rs.v[0], NULL, 0), gq_pcie_gbps(4, 16)));
    /* a member the other way is not the group's (agg moves host to device only) */
    gq_record back = crafted(20.0);
    back.group = 3;
    back.src = (gq_endpoint){GQ_EP_GPU, 0};
    back.dst = (gq_endpoint){GQ_EP_HOST, 0};
    back.direction = GQ_DIR_D2H;
    back.dst.index = -1;
    back.src.index = -1;
    assert_int_equal(gq_records_push(&rs, &back), GQ_OK);
    assert_true(near(gq_sanity_record_capacity(&t, &rs, &rs.v[0], NULL, 0), gq_pcie_gbps(4, 16)));
    m.dst.index = -1;
    assert_int_equal(gq_records_push(&rs, &m), GQ_OK);
    assert_true(gq_sanity_record_capacity(&t, &rs, &rs.v[0], NULL, 0) == 0.0);
    gq_records_free(&rs);
    char why[64];
    r = crafted(NAN);
    assert_false(gq_sanity_plausible(&r, why, sizeof why));
    assert_string_equal(why, "is not a number");
    r = crafted(INFINITY);
    assert_false(gq_sanity_plausible(&r, why, sizeof why));
    assert_string_equal(why, "is infinite");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_nvlink_rate_from_one_side, setup),
        cmocka_unit_test_setup(test_nvlink_rates_differ_slower_end, setup),
        cmocka_unit_test_setup(test_pcie_pair_first_link_unknown, setup),
        cmocka_unit_test_setup(test_gpu_link_text_and_small_rate, setup),
        cmocka_unit_test_setup(test_staged_tie_names_the_source, setup),
        cmocka_unit_test_setup(test_p2p_under_one_switch_skips_the_uplink, setup),
        cmocka_unit_test_setup(test_pci_names, setup),
        cmocka_unit_test_setup(test_group_names_the_highest_binding_link, setup),
        cmocka_unit_test_setup(test_group_without_tree_names_the_first_gpu, setup),
        cmocka_unit_test_setup(test_deepest_possible_tree, setup),
        cmocka_unit_test_setup(test_record_capacity_clears_the_reason, setup),
        cmocka_unit_test_setup(test_check_all_skips_flagged, setup),
        cmocka_unit_test_setup(test_pcie_pair_second_link, setup),
        cmocka_unit_test_setup(test_staged_second_path_unknown, setup),
        cmocka_unit_test_setup(test_gpu_not_on_machine, setup),
        cmocka_unit_test_setup(test_p2p_one_gpu_outside_tree, setup),
        cmocka_unit_test_setup(test_latency_record_no_capacity, setup),
        cmocka_unit_test_setup(test_group_small_link_named, setup),
        cmocka_unit_test_setup(test_unnamed_gpu_and_not_finite, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
