/* Discovery on the simulated seed-000 machine (8 x RTX 4090, no P2P): every
 * GPU-to-GPU copy is host-staged, and each socket's four GPUs share about
 * 25 GB/s host to GPU behind one PCIe switch uplink. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_discovery_util.h"

static void rtx4090x8(void **state)
{
    (void)state;
    gq_discovery d;
    gq_topo topo;
    disc_run("rtx4090x8", 0, 1, 5, &d, &topo);
    char buf[512];

    /* no P2P: the matrix is all host-staged and there are no P2P domains */
    assert_true(d.domains->no_p2p);
    assert_string_equal(disc_domains_str(d.domains, buf, sizeof buf), "{0}{1}{2}{3}{4}{5}{6}{7}");
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 8; j++)
            if (i != j)
                assert_true(d.matrix->staged[i][j]);

    /* the per-socket budgets, in both directions, and nothing else */
    assert_string_equal(disc_bottlenecks_str(d.bottlenecks, buf, sizeof buf),
                        "h2d:0-3 h2d:4-7 d2h:0-3 d2h:4-7");
    for (int s = 0; s < 2; s++) {
        int i = disc_find(d.bottlenecks, GQ_DIR_H2D, s ? "4-7" : "0-3");
        assert_true(i >= 0);
        const gq_bottleneck *bn = &d.bottlenecks->v[i];
        /* seed 000: 25.2-25.8 GB/s per socket whatever the number of GPUs */
        assert_true(bn->capacity_gbps > 24.0 && bn->capacity_gbps < 27.0);
        assert_true(bn->sum_alone_gbps > 3.5 * bn->capacity_gbps);
        /* the tree explains it: the four GPUs sit behind one switch */
        assert_int_equal(bn->explained, GQ_EXPLAIN_PCIE_SWITCH);
        assert_true(bn->link_gbps > 31.0 && bn->link_gbps < 32.0);
        assert_true(bn->nevidence >= 1);
    }
    /* the two sockets do not share: all eight move about twice one socket */
    int all = -1;
    for (int i = 0; i < d.bottlenecks->nobs; i++)
        if (!d.bottlenecks->obs[i].p2p && d.bottlenecks->obs[i].direction == GQ_DIR_H2D &&
            d.bottlenecks->obs[i].ngpus == 8)
            all = i;
    assert_true(all >= 0);
    assert_false(d.bottlenecks->obs[all].contended);
    assert_true(d.bottlenecks->obs[all].aggregate_gbps > 48 && d.bottlenecks->obs[all].aggregate_gbps < 54);
    assert_int_equal(d.bottlenecks->nignored, 0);
    gq_discovery_free(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(rtx4090x8)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
