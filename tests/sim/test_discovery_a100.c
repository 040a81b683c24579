/* Discovery on the simulated seed-004 machine (6 x A100 PCIe with NVLink
 * bridges): the NVLink pairs {0,3}, {1,2}, {4,5} are the domains. A
 * consistency test (the analysis of simulated measurements, not a golden
 * check against published figures; test_seed004.c holds those). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_discovery_util.h"

static void consistency_a100x6_domains(void **state)
{
    (void)state;
    gq_discovery d;
    disc_run("a100x6", 0, 1, 5, &d, NULL);
    char buf[512];
    assert_string_equal(disc_domains_str(d.domains, buf, sizeof buf), "{0,3}{1,2}{4,5}");
    assert_true(d.domains->split);
    /* NVLink pairs are an order of magnitude above the PCIe pairs (seed 004) */
    assert_true(d.domains->within_min_gbps > 5 * d.domains->across_max_gbps);
    assert_false(d.domains->no_p2p);
    /* the pairs inside the domains ran concurrently and kept their rates */
    int within = 0;
    for (int i = 0; i < d.bottlenecks->nobs; i++)
        if (d.bottlenecks->obs[i].p2p && d.bottlenecks->obs[i].p2p_kind == GQ_P2P_WITHIN) {
            within++;
            assert_false(d.bottlenecks->obs[i].contended);
        }
    assert_int_equal(within, 1);
    gq_discovery_free(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(consistency_a100x6_domains)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
