/* Bottleneck inference on crafted records: seed 000's per-socket budget,
 * seed 001's finer host sharing and cross-domain P2P bottleneck, the flat
 * H200 pair, invalid and impossible records kept out, and the explanations
 * against the topology tree. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "analysis/bottlenecks.h"
#include "core/units.h"
#include "render/analysis_render.h"

#include "bottlenecks_util.h"

/* Seed 000's machine: two sockets, each a host bridge -> root port ->
 * switch (Gen4 x16 uplink, 31.5 GB/s) -> four GPUs. */
static void rtx4090_topo(bool with_tree)
{
    gq_topo_init(&T);
    T.ngpu = 8;
    T.numa_nodes = 2;
    T.sockets = 2;
    for (int g = 0; g < 8; g++) {
        T.gpu[g].index = g;
        T.gpu[g].numa_node = g / 4;
    }
    if (!with_tree)
        return;
    for (int s = 0; s < 2; s++) {
        int hb = add_pci(GQ_PCI_HOSTBRIDGE, -1, -1, s ? "0000:80:00.0" : "0000:00:00.0", 0);
        int rp = add_pci(GQ_PCI_BRIDGE, hb, -1, s ? "0000:80:01.0" : "0000:00:01.0", 31.5);
        int up = add_pci(GQ_PCI_BRIDGE, rp, -1, s ? "0000:81:00.0" : "0000:01:00.0", 31.5);
        for (int k = 0; k < 4; k++) {
            char bus[32];
            snprintf(bus, sizeof bus, "0000:%02x:%02x.0", s ? 0x82 : 0x02, k);
            int dn = add_pci(GQ_PCI_BRIDGE, up, -1, bus, 31.5);
            snprintf(bus, sizeof bus, "0000:%02x:00.0", (s ? 0x90 : 0x10) + k);
            add_pci(GQ_PCI_GPU, dn, s * 4 + k, bus, 31.5);
        }
    }
}

static const int S0[] = {0, 1, 2, 3}, S1[] = {4, 5, 6, 7}, ALL8[] = {0, 1, 2, 3, 4, 5, 6, 7};

/* Seed 000's table, host to GPU: 25.2 alone; 25.3 for two on a socket,
 * 25.8 for four; 50.5 one per socket; 50.7 two per socket; 51.6 all 8. */
static void seed000_records(bool with_pairs)
{
    for (int g = 0; g < 8; g++)
        host_uniform(&g, 1, GQ_DIR_H2D, 25.2);
    if (with_pairs) {
        const int p[][2] = {{0, 1}, {2, 3}, {4, 5}, {6, 7}};
        for (int i = 0; i < 4; i++)
            host_uniform(p[i], 2, GQ_DIR_H2D, 25.3 / 2);
    }
    host_uniform(S0, 4, GQ_DIR_H2D, 25.8 / 4);
    host_uniform(S1, 4, GQ_DIR_H2D, 25.8 / 4);
    const int x[] = {0, 4};
    host_uniform(x, 2, GQ_DIR_H2D, 50.5 / 2);
    const int y[] = {0, 1, 4, 5};
    host_uniform(y, 4, GQ_DIR_H2D, 50.7 / 4);
    host_uniform(ALL8, 8, GQ_DIR_H2D, 51.6 / 8);
}

static void seed000(void **state)
{
    (void)state;
    rtx4090_topo(true);
    seed000_records(false);
    gq_bottlenecks b;
    assert_int_equal(gq_bottlenecks_infer(&RS, &T, NULL, NULL, &b, NULL), 0);
    assert_int_equal(b.n, 2);
    int i0 = gq_bottlenecks_find(&b, GQ_DIR_H2D, S0, 4), i1 = gq_bottlenecks_find(&b, GQ_DIR_H2D, S1, 4);
    assert_true(i0 >= 0 && i1 >= 0);
    assert_true(fabs(b.v[i0].capacity_gbps - 25.8) < 0.01);
    assert_true(fabs(b.v[i0].sum_alone_gbps - 100.8) < 0.01);
    assert_int_equal(b.v[i0].explained, GQ_EXPLAIN_PCIE_SWITCH);
    assert_string_equal(b.v[i0].node, "0000:01:00.0");
    assert_true(fabs(b.v[i0].link_gbps - 31.5) < 1e-9);
    assert_true(b.v[i0].nevidence >= 1);
    assert_false(b.one_numa_visible);
    /* the all-8 run is explained by the two sockets: it is no bottleneck */
    assert_int_equal(gq_bottlenecks_find(&b, GQ_DIR_H2D, ALL8, 8), -1);
    gq_bottlenecks_free(&b);
}

/* With pair probes the pairs are found first, then folded into the socket
 * budget, which is no wider than theirs. */
static void seed000_pairs_folded(void **state)
{
    (void)state;
    rtx4090_topo(true);
    seed000_records(true);
    gq_bottlenecks b;
    assert_int_equal(gq_bottlenecks_infer(&RS, &T, NULL, NULL, &b, NULL), 0);
    assert_int_equal(b.n, 2);
    int i0 = gq_bottlenecks_find(&b, GQ_DIR_H2D, S0, 4);
    assert_true(i0 >= 0);
    assert_true(b.v[i0].nevidence >= 2); /* the pair runs plus the socket run */
    const int p[] = {0, 1};
    assert_int_equal(gq_bottlenecks_find(&b, GQ_DIR_H2D, p, 2), -1);
    gq_bottlenecks_free(&b);
}

/* Without a PCIe tree the NUMA node explains the same sets. */
static void seed000_numa_only(void **state)
{
    (void)state;
    rtx4090_topo(false);
    seed000_records(false);
    gq_bottlenecks b;
    assert_int_equal(gq_bottlenecks_infer(&RS, &T, NULL, NULL, &b, NULL), 0);
    int i1 = gq_bottlenecks_find(&b, GQ_DIR_H2D, S1, 4);
    assert_true(i1 >= 0);
    assert_int_equal(b.v[i1].explained, GQ_EXPLAIN_NUMA_NODE);
    assert_string_equal(b.v[i1].node, "numa:1");
    gq_bottlenecks_free(&b);
}

/* Seed 000's measurement mistake: 37 GB/s for two GPUs of one socket, above
 * what one Gen4 x16 uplink carries, flagged impossible by the sanity guard.
 * It must be ignored (and listed), not taken as capacity. */
static void impossible_ignored(void **state)
{
    (void)state;
    rtx4090_topo(true);
    seed000_records(false);
    int g = G++;
    host_flow(g, 0, GQ_DIR_H2D, 18.5);
    host_flow(g, 1, GQ_DIR_H2D, 18.5);
    const int p[] = {0, 1};
    aggregate(g, p, 2, GQ_DIR_H2D, 37.0, true);
    RS.v[RS.n - 1].valid = false;
    RS.v[RS.n - 1].flags |= GQ_FLAG_IMPOSSIBLE;
    snprintf(RS.v[RS.n - 1].error, sizeof RS.v[0].error, "37.0 GB/s is above the 31.5 GB/s of the uplink");
    /* and an impossible alone figure for GPU 5: ignored, the earlier one stays */
    int g2 = G++;
    host_flow(g2, 5, GQ_DIR_H2D, 40.0);
    RS.v[RS.n - 1].valid = false;
    RS.v[RS.n - 1].flags |= GQ_FLAG_IMPOSSIBLE;
    gq_bottlenecks b;
    assert_int_equal(gq_bottlenecks_infer(&RS, &T, NULL, NULL, &b, NULL), 0);
    assert_int_equal(b.nignored, 2);
    assert_non_null(strstr(b.ignored[0].why, "impossible"));
    assert_true(fabs(b.alone[0][5] - 25.2) < 1e-9);
    assert_int_equal(gq_bottlenecks_find(&b, GQ_DIR_H2D, p, 2), -1);
    int i0 = gq_bottlenecks_find(&b, GQ_DIR_H2D, S0, 4);
    assert_true(i0 >= 0 && b.v[i0].capacity_gbps < 31.5);
    for (int i = 0; i < b.nobs; i++)
        assert_int_not_equal(b.obs[i].group, g);
    json_t *j = gq_bottlenecks_to_json(&b, &RS);
    assert_int_equal(json_array_size(json_object_get(j, "ignored")), 2);
    json_decref(j);
    gq_bottlenecks_free(&b);
}

/* An aggregate whose windows did not overlap is no evidence either. */
static void overlap_invalid_ignored(void **state)
{
    (void)state;
    for (int g = 0; g < 4; g++)
        host_uniform(&g, 1, GQ_DIR_H2D, 50.0);
    int g = G++;
    for (int i = 0; i < 4; i++)
        host_flow(g, i, GQ_DIR_H2D, 12.0);
    aggregate(g, S0, 4, GQ_DIR_H2D, 48.0, false);
    gq_bottlenecks b;
    assert_int_equal(gq_bottlenecks_infer(&RS, NULL, NULL, NULL, &b, NULL), 0);
    assert_int_equal(b.n, 0);
    assert_int_equal(b.nobs, 0);
    assert_int_equal(b.nignored, 1);
    assert_non_null(strstr(b.ignored[0].why, "overlap"));
    /* and nothing replaces the refused run: its figure is missing, an open question */
    int miss = -1;
    for (int i = 0; i < b.nopen; i++)
        if (b.open[i].kind == GQ_BN_OPEN_MISSING)
            miss = miss < 0 ? i : -2;
    assert_true(miss >= 0);
    assert_int_equal(b.open[miss].group, g);
    assert_false(b.open[miss].p2p);
    assert_int_equal(b.open[miss].direction, GQ_DIR_H2D);
    assert_int_equal(b.open[miss].ngpus, 4);
    assert_non_null(strstr(b.open[miss].text, "refused by the overlap rule"));
    gq_bottlenecks_free(&b);
}

/* Seed 001: a VM with one NUMA node and a flat tree. Host to GPU 57.9
 * alone; 0,1 share (39 each when both run), so do 2,3; 0,2,4,6 run at full
 * rate; with all eight, 0-3 get ~35.5 and 4-7 ~49. P2P: 53 within domains,
 * 38 across one pair at a time; four concurrent pairs across get 91 in all. */
static void seed001(void **state)
{
    (void)state;
    gq_topo_init(&T);
    T.ngpu = 8;
    T.numa_nodes = 1;
    T.is_vm = true;
    int hb = add_pci(GQ_PCI_HOSTBRIDGE, -1, -1, "0000:00:00.0", 0);
    for (int g = 0; g < 8; g++) {
        char bus[32];
        snprintf(bus, sizeof bus, "0000:00:%02x.0", 6 + g);
        add_pci(GQ_PCI_GPU, hb, g, bus, 63.0);
        T.gpu[g].numa_node = -1;
    }
    for (int g = 0; g < 8; g++)
        host_uniform(&g, 1, GQ_DIR_H2D, 57.9);
    /* pairs within domains */
    for (int a = 0; a < 8; a++)
        for (int c = a + 1; c < 8; c++) {
            if ((a < 4) != (c < 4))
                continue;
            const int p[] = {a, c};
            bool shared = (a == 0 && c == 1) || (a == 2 && c == 3);
            host_uniform(p, 2, GQ_DIR_H2D, shared ? 39.0 : 57.9);
        }
    const double d0[] = {39, 39, 39, 39};
    host_group(S0, 4, GQ_DIR_H2D, d0);
    host_uniform(S1, 4, GQ_DIR_H2D, 57.9);
    const double all[] = {35.4, 35.9, 35.5, 35.8, 48.0, 50.2, 49.1, 49.3};
    host_group(ALL8, 8, GQ_DIR_H2D, all);
    /* P2P */
    for (int a = 0; a < 8; a++)
        for (int c = 0; c < 8; c++)
            if (a != c) {
                int g = G++;
                p2p_flow(g, a, c, ((a < 4) == (c < 4)) ? 53.0 : 38.0);
            }
    const int ws[] = {0, 2, 4, 6}, wd[] = {1, 3, 5, 7}, as[] = {0, 1, 2, 3}, ad[] = {4, 5, 6, 7};
    const double wr[] = {52.75, 53.71, 52.75, 53.03}, ar[] = {21.12, 20.60, 24.28, 24.95};
    p2p_group(ws, wd, wr, 4);
    p2p_group(as, ad, ar, 4);

    gq_domains dom;
    memset(&dom, 0, sizeof dom);
    dom.ndomains = 2;
    for (int g = 0; g < 8; g++) {
        dom.domain_of[g] = g / 4;
        dom.member[g / 4][dom.size[g / 4]++] = g;
    }
    for (int g = 8; g < GQ_MAX_GPUS; g++)
        dom.domain_of[g] = -1;

    gq_bottlenecks b;
    assert_int_equal(gq_bottlenecks_infer(&RS, &T, &dom, NULL, &b, NULL), 0);
    const int p01[] = {0, 1}, p23[] = {2, 3};
    int i01 = gq_bottlenecks_find(&b, GQ_DIR_H2D, p01, 2), i23 = gq_bottlenecks_find(&b, GQ_DIR_H2D, p23, 2);
    assert_true(i01 >= 0 && i23 >= 0);
    assert_true(fabs(b.v[i01].capacity_gbps - 78.0) < 0.01);
    assert_int_equal(b.v[i01].explained, GQ_EXPLAIN_MEASUREMENT_ONLY);
    assert_non_null(strstr(b.v[i01].explanation, "one NUMA node"));
    assert_true(b.one_numa_visible);
    /* 0-3 together: exactly the two pair budgets, so no budget of its own */
    assert_int_equal(gq_bottlenecks_find(&b, GQ_DIR_H2D, S0, 4), -1);
    /* no other pair shares */
    const int p02[] = {0, 2}, p45[] = {4, 5};
    assert_int_equal(gq_bottlenecks_find(&b, GQ_DIR_H2D, p02, 2), -1);
    assert_int_equal(gq_bottlenecks_find(&b, GQ_DIR_H2D, p45, 2), -1);
    /* all eight: 339 against 156 + 4 x 57.9 = 387.6 expected, 12.5% short:
     * not well below, so no budget of its own (the asymmetry is reported) */
    assert_int_equal(gq_bottlenecks_find(&b, GQ_DIR_H2D, ALL8, 8), -1);
    int oa = -1;
    for (int i = 0; i < b.nobs; i++)
        if (!b.obs[i].p2p && b.obs[i].ngpus == 8)
            oa = i;
    assert_true(oa >= 0);
    assert_true(fabs(b.obs[oa].expected_gbps - 387.6) < 0.01);
    assert_false(b.obs[oa].contended);
    /* with all eight copying, 0-3 are the slow ones (seed 001 section 5) */
    assert_true(b.asym_obs[0] >= 0);
    assert_int_equal(b.nslow[0], 4);
    for (int k = 0; k < 4; k++)
        assert_int_equal(b.slow[0][k], k);
    assert_true(b.slow_hi[0] < 36.0 && b.fast_lo[0] >= 48.0);
    /* P2P: across is a cross-domain bottleneck, within is not */
    int ip = gq_bottlenecks_find(&b, GQ_DIR_P2P, ALL8, 8);
    assert_true(ip >= 0);
    assert_true(b.v[ip].p2p && b.v[ip].cross_domain);
    assert_true(fabs(b.v[ip].capacity_gbps - 90.95) < 0.01);
    assert_true(fabs(b.v[ip].sum_alone_gbps - 152.0) < 0.01);
    assert_int_equal(b.v[ip].ndomains, 2);
    int within = 0, across = 0;
    for (int i = 0; i < b.nobs; i++)
        if (b.obs[i].p2p) {
            if (b.obs[i].p2p_kind == GQ_P2P_WITHIN) {
                within++;
                assert_false(b.obs[i].contended);
            } else {
                across++;
                assert_true(b.obs[i].contended);
            }
        }
    assert_int_equal(within, 1);
    assert_int_equal(across, 1);
    json_t *j = gq_bottlenecks_to_json(&b, &RS);
    json_t *bl = json_object_get(j, "bottlenecks");
    assert_true(json_is_array(bl) && json_array_size(bl) == (size_t)b.n);
    json_t *first = json_array_get(bl, 0);
    assert_non_null(json_object_get(first, "gpus"));
    assert_true(json_is_number(json_object_get(first, "capacity_gbps")));
    assert_true(json_is_array(json_object_get(first, "evidence")));
    assert_true(json_is_string(json_object_get(first, "explained_by")));
    json_decref(j);
    gq_bottlenecks_free(&b);
}

/* H200 x2: each GPU alone 55 GB/s, both at once 110: nothing shared. */
static void h200_none(void **state)
{
    (void)state;
    for (int d = 0; d < 2; d++) {
        gq_direction dir = d ? GQ_DIR_D2H : GQ_DIR_H2D;
        for (int g = 0; g < 2; g++)
            host_uniform(&g, 1, dir, 55.2);
        const int both[] = {0, 1};
        const double r[] = {54.9, 55.1};
        host_group(both, 2, dir, r);
    }
    gq_bottlenecks b;
    assert_int_equal(gq_bottlenecks_infer(&RS, NULL, NULL, NULL, &b, NULL), 0);
    assert_int_equal(b.n, 0);
    assert_int_equal(b.nobs, 2);
    assert_false(b.obs[0].contended);
    assert_false(b.obs[1].contended);
    gq_bottlenecks_free(&b);
}

/* A drop within the noise is not a bottleneck, and the decision is named as
 * open; the same drop measured tightly is a bottleneck. A mild drop (11%,
 * the H200's two GPUs to host at once) is interference, not a shared
 * budget. */
static void noise_guard(void **state)
{
    (void)state;
    for (int g = 0; g < 2; g++)
        host_uniform(&g, 1, GQ_DIR_H2D, 50.0);
    const int both[] = {0, 1};
    host_uniform(both, 2, GQ_DIR_H2D, 36.0); /* 72 of 100: 28% below */
    for (int i = 0; i < RS.n; i++) {         /* rounds 10% either side: 64.8-79.2 against 72-88 */
        RS.v[i].value.min = RS.v[i].value.median * 0.9;
        RS.v[i].value.max = RS.v[i].value.median * 1.1;
    }
    gq_bottlenecks b;
    assert_int_equal(gq_bottlenecks_infer(&RS, NULL, NULL, NULL, &b, NULL), 0);
    assert_int_equal(b.n, 0);
    assert_int_equal(b.nopen, 1);
    assert_int_equal(b.open[0].kind, GQ_BN_OPEN_BUDGET);
    assert_true(b.obs[0].undecided && !b.obs[0].contended);
    assert_true(fabs(b.open[0].figure_lo_gbps - 64.8) < 1e-6 && fabs(b.open[0].limit_hi_gbps - 88.0) < 1e-6);
    assert_non_null(strstr(b.open[0].text, "whether GPUs 0,1 share a host-to-GPU budget"));
    gq_bottlenecks_free(&b);
    for (int i = 0; i < RS.n; i++) {
        RS.v[i].value.min = RS.v[i].value.max = RS.v[i].value.median;
        RS.v[i].value.spread = 0.005;
    }
    assert_int_equal(gq_bottlenecks_infer(&RS, NULL, NULL, NULL, &b, NULL), 0);
    assert_int_equal(b.n, 1);
    assert_int_equal(b.v[0].explained, GQ_EXPLAIN_MEASUREMENT_ONLY);
    gq_bottlenecks_free(&b);
    RS.v[2].value.median = RS.v[3].value.median = 44.5;
    RS.v[4].value.median = 89.0;
    assert_int_equal(gq_bottlenecks_infer(&RS, NULL, NULL, NULL, &b, NULL), 0);
    assert_int_equal(b.n, 0);
    assert_int_equal(b.nobs, 1);
    assert_false(b.obs[0].contended);
    gq_bottlenecks_free(&b);
}

/* A group with a GPU never measured alone cannot be judged: skipped. A
 * bidirectional group (both directions at once) is not per-direction
 * evidence. */
static void skipped_groups(void **state)
{
    (void)state;
    host_uniform(S0, 1, GQ_DIR_H2D, 50.0); /* GPU 0 alone only */
    const int p[] = {0, 1};
    host_uniform(p, 2, GQ_DIR_H2D, 10.0);
    int g = G++;
    host_flow(g, 0, GQ_DIR_H2D, 10.0);
    host_flow(g, 0, GQ_DIR_D2H, 10.0);
    gq_bottlenecks b;
    assert_int_equal(gq_bottlenecks_infer(&RS, NULL, NULL, NULL, &b, NULL), 0);
    assert_int_equal(b.n, 0);
    assert_true(b.nskipped >= 2);
    gq_bottlenecks_free(&b);
}

/* Records of another buffer size (a sweep) do not mix with the host probes. */
static void other_sizes_apart(void **state)
{
    (void)state;
    for (int g = 0; g < 2; g++)
        host_uniform(&g, 1, GQ_DIR_H2D, 50.0);
    const int both[] = {0, 1};
    host_uniform(both, 2, GQ_DIR_H2D, 50.0);
    /* a 4 KiB figure of GPU 0, far lower */
    int g = G++;
    host_flow(g, 0, GQ_DIR_H2D, 2.0);
    RS.v[RS.n - 1].bytes = 4096;
    gq_bottlenecks b;
    assert_int_equal(gq_bottlenecks_infer(&RS, NULL, NULL, NULL, &b, NULL), 0);
    assert_true(fabs(b.alone[0][0] - 50.0) < 1e-9);
    assert_int_equal(b.bytes[0], BYTES);
    assert_int_equal(b.n, 0);
    gq_bottlenecks_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(seed000, setup, teardown),
        cmocka_unit_test_setup_teardown(seed000_pairs_folded, setup, teardown),
        cmocka_unit_test_setup_teardown(seed000_numa_only, setup, teardown),
        cmocka_unit_test_setup_teardown(impossible_ignored, setup, teardown),
        cmocka_unit_test_setup_teardown(overlap_invalid_ignored, setup, teardown),
        cmocka_unit_test_setup_teardown(seed001, setup, teardown),
        cmocka_unit_test_setup_teardown(h200_none, setup, teardown),
        cmocka_unit_test_setup_teardown(noise_guard, setup, teardown),
        cmocka_unit_test_setup_teardown(skipped_groups, setup, teardown),
        cmocka_unit_test_setup_teardown(other_sizes_apart, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
