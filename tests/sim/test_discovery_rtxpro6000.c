/* Discovery on the simulated seed-001 machine (8 x RTX PRO 6000 in a VM that
 * shows one NUMA node and a flat topology): domains {0-3} and {4-7}, a
 * bottleneck between them, and host-path sharing finer than the domains
 * ({0,1} and {2,3}), none of which the topology explains. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_discovery_util.h"

static void rtxpro6000x8(void **state)
{
    (void)state;
    gq_discovery d;
    gq_topo topo;
    disc_run("rtxpro6000x8", 0, 1, 5, &d, &topo);
    char buf[512];
    const gq_bottlenecks *b = d.bottlenecks;

    assert_string_equal(disc_domains_str(d.domains, buf, sizeof buf), "{0-3}{4-7}");
    assert_true(d.domains->split);
    /* seed 001: 52.6-53.8 within, 36.5-40.5 between */
    assert_true(d.domains->within_min_gbps > 50 && d.domains->across_max_gbps < 42);

    /* the bottleneck between the domains: four pairs across get far less
     * than the same pairs one at a time; within, each keeps its rate */
    int cross = -1;
    for (int i = 0; i < b->n; i++)
        if (b->v[i].p2p && b->v[i].cross_domain)
            cross = i;
    assert_true(cross >= 0);
    assert_int_equal(b->v[cross].ndomains, 2);
    assert_true(b->v[cross].capacity_gbps < 0.75 * b->v[cross].sum_alone_gbps);
    int within = 0;
    for (int i = 0; i < b->nobs; i++)
        if (b->obs[i].p2p && b->obs[i].p2p_kind == GQ_P2P_WITHIN) {
            assert_int_equal(b->obs[i].npairs, 4);
            assert_false(b->obs[i].contended);
            within++;
        }
    assert_int_equal(within, 1); /* the one group of four pairs within */

    /* finer host sharing: {0,1} and {2,3} host to GPU; not {0,2}, not 4-7 pairs */
    int s01 = disc_find(b, GQ_DIR_H2D, "0,1"), s23 = disc_find(b, GQ_DIR_H2D, "2,3");
    assert_true(s01 >= 0 && s23 >= 0);
    assert_true(b->v[s01].capacity_gbps < 0.8 * b->v[s01].sum_alone_gbps);
    assert_int_equal(disc_find(b, GQ_DIR_H2D, "0,2"), -1);
    assert_int_equal(disc_find(b, GQ_DIR_H2D, "4,5"), -1);
    assert_int_equal(disc_find(b, GQ_DIR_H2D, "6,7"), -1);
    /* a VM with one NUMA node and no shared switch: measurement only */
    assert_true(b->one_numa_visible);
    assert_int_equal(b->v[s01].explained, GQ_EXPLAIN_MEASUREMENT_ONLY);
    /* with all eight copying host to GPU, 0-3 are slower than 4-7 */
    assert_true(b->asym_obs[0] >= 0);
    assert_string_equal(gq_domains_set_str(b->slow[0], b->nslow[0], buf, sizeof buf), "0-3");
    gq_discovery_free(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(rtxpro6000x8)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
