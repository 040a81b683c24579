/* Explanations that can be true (issue 28, item 4), on simulated machines:
 * a device is named as a bottleneck's cause only when its uplink can carry
 * the figure and no more. g5sock20 (tests/data/topologies/) puts 20 GB/s of
 * P2P between two sockets behind Gen5 switches whose uplinks carry 63 GB/s:
 * the socket link is named, never the switches. And on every test machine,
 * every bottleneck put down to a PCIe node has an uplink that accounts for
 * its capacity. The analysis reads only records. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_discovery_util.h"

#include "analysis/bottlenecks_internal.h"

#define TOPO(name) GQ_TEST_DATA "/data/topologies/" name ".topo"

static void g5sock20_socket_link_named(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 5; seed++) {
        gq_discovery d;
        disc_run(TOPO("g5sock20"), 0.01, seed, 5, &d, NULL);
        char got[1024];
        assert_string_equal(disc_domains_str(d.domains, got, sizeof got), "{0-3}{4-7}");
        const gq_bottlenecks *b = d.bottlenecks;
        int i = disc_find(b, GQ_DIR_P2P, "0-7");
        if (i < 0)
            fail_msg("seed %d: no p2p 0-7 among %s", (int)seed, disc_bottlenecks_str(b, got, sizeof got));
        const gq_bottleneck *bn = &b->v[i];
        if (fabs(bn->capacity_gbps - 20) > 2)
            fail_msg("seed %d: p2p 0-7 at %.1f GB/s, expected about 20", (int)seed, bn->capacity_gbps);
        if (bn->explained != GQ_EXPLAIN_CPU_INTERCONNECT)
            fail_msg("seed %d: p2p 0-7 at %.1f GB/s explained by %s (%s), expected the CPU interconnect",
                     (int)seed, bn->capacity_gbps, gq_bn_explain_name(bn->explained), bn->explanation);
        assert_non_null(strstr(bn->explanation, "cannot account for"));
        for (const char *set = "0-3"; set; set = strcmp(set, "0-3") ? NULL : "4-7") {
            int h = disc_find(b, GQ_DIR_H2D, set);
            assert_true(h >= 0);
            assert_int_equal(b->v[h].explained, GQ_EXPLAIN_PCIE_SWITCH);
        }
        gq_discovery_free(&d);
    }
}

/* Every PCIe node named as a cause, on every machine of tests/data, carries
 * the bottleneck's figure: at least GQ_BN_LINK_EFF_MIN of its uplink and no
 * more than the uplink. */
static void named_devices_account(void **state)
{
    (void)state;
    static const char *const machines[] = {TOPO("g5sock20"), TOPO("sw16x2"),    TOPO("sw2bad"),
                                           TOPO("sw1x4"),    TOPO("nvswitch8"), "rtx4090x8"};
    for (size_t m = 0; m < sizeof machines / sizeof machines[0]; m++) {
        gq_discovery d;
        disc_run(machines[m], 0.01, 3, 5, &d, NULL);
        int named = 0;
        for (int i = 0; i < d.bottlenecks->n; i++) {
            const gq_bottleneck *bn = &d.bottlenecks->v[i];
            if (bn->explained != GQ_EXPLAIN_PCIE_SWITCH && bn->explained != GQ_EXPLAIN_ROOT_PORT &&
                bn->explained != GQ_EXPLAIN_HOST_BRIDGE)
                continue;
            named++;
            if (bn->link_gbps > 0 && !gq_bn_link_accounts(bn->link_gbps, bn->capacity_gbps))
                fail_msg("%s: %s named for %.1f GB/s, its uplink carries %.1f (%s)", machines[m], bn->node,
                         bn->capacity_gbps, bn->link_gbps, bn->explanation);
        }
        assert_true(named > 0); /* each of these machines has a switch budget */
        gq_discovery_free(&d);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(g5sock20_socket_link_named),
        cmocka_unit_test(named_devices_account),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
