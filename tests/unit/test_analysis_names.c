/* The analysis' enum names (issue 30, mutation testing): every value's name,
 * and what a value outside the enum gives; a node verdict's name read back. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "analysis/bottlenecks.h"
#include "analysis/fleet.h"
#include "analysis/tp_groups.h"

static void bottleneck_names(void **state)
{
    (void)state;
    assert_string_equal(gq_bn_explain_name(GQ_EXPLAIN_MEASUREMENT_ONLY), "measurement_only");
    assert_string_equal(gq_bn_explain_name(GQ_EXPLAIN_PCIE_SWITCH), "pcie_switch");
    assert_string_equal(gq_bn_explain_name(GQ_EXPLAIN_ROOT_PORT), "root_port");
    assert_string_equal(gq_bn_explain_name(GQ_EXPLAIN_HOST_BRIDGE), "host_bridge");
    assert_string_equal(gq_bn_explain_name(GQ_EXPLAIN_NUMA_NODE), "numa_node");
    assert_string_equal(gq_bn_explain_name(GQ_EXPLAIN_CPU_INTERCONNECT), "cpu_interconnect");
    assert_string_equal(gq_bn_explain_name((gq_bn_explain)99), "?");
    assert_string_equal(gq_bn_p2p_kind_name(GQ_P2P_WITHIN), "within");
    assert_string_equal(gq_bn_p2p_kind_name(GQ_P2P_ACROSS), "across");
    assert_string_equal(gq_bn_p2p_kind_name(GQ_P2P_MIXED), "mixed");
    assert_string_equal(gq_bn_p2p_kind_name((gq_bn_p2p_kind)99), "?");
    /* the PCI node's kind in a sentence; anything else a plain PCIe node */
    assert_string_equal(gq_bn_pci_kind_text(GQ_EXPLAIN_HOST_BRIDGE), "host bridge");
    assert_string_equal(gq_bn_pci_kind_text(GQ_EXPLAIN_ROOT_PORT), "root port");
    assert_string_equal(gq_bn_pci_kind_text(GQ_EXPLAIN_PCIE_SWITCH), "PCIe switch");
    assert_string_equal(gq_bn_pci_kind_text(GQ_EXPLAIN_MEASUREMENT_ONLY), "PCIe node");
    assert_string_equal(gq_bn_pci_kind_text(GQ_EXPLAIN_NUMA_NODE), "PCIe node");
}

static void node_verdict_names(void **state)
{
    (void)state;
    static const char *const names[] = {"pass", "warn", "fail", "incomplete"};
    for (int v = GQ_NODE_PASS; v <= GQ_NODE_INCOMPLETE; v++) {
        assert_string_equal(gq_node_verdict_name((gq_node_verdict)v), names[v]);
        assert_int_equal(gq_node_verdict_from_name(names[v]), v);
    }
    /* outside the enum: a failure, never a pass */
    assert_string_equal(gq_node_verdict_name((gq_node_verdict)99), "fail");
    assert_int_equal(gq_node_verdict_from_name("PASS"), -1);
    assert_int_equal(gq_node_verdict_from_name("?"), -1);
    assert_int_equal(gq_node_verdict_from_name(""), -1);
    assert_int_equal(gq_node_verdict_from_name(NULL), -1);
}

static void tp_origin_names(void **state)
{
    (void)state;
    assert_string_equal(gq_tp_origin_name(GQ_TP_NAIVE), "naive");
    assert_string_equal(gq_tp_origin_name(GQ_TP_ALL), "every group");
    assert_string_equal(gq_tp_origin_name(GQ_TP_COPY), "pairwise copy");
    assert_string_equal(gq_tp_origin_name(GQ_TP_DOMAIN), "domain");
    assert_string_equal(gq_tp_origin_name(GQ_TP_SWAP), "swap");
    assert_string_equal(gq_tp_origin_name((gq_tp_origin)99), "?");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bottleneck_names),
        cmocka_unit_test(node_verdict_names),
        cmocka_unit_test(tp_origin_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
