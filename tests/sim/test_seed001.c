/* Seed 001 reproduced on the built-in rtxpro6000x8 (8 x RTX PRO 6000 in a
 * KVM guest): the pairwise P2P read matrix and its two domains, the
 * bidirectional pair totals, four concurrent pairs within and across the
 * domains, host traffic for one GPU and for all eight (with the 0-3 / 4-7
 * asymmetry), the {0,1,4,5} and {0,2,4,6} subsets, the buffer sweep and the
 * five-minute stress. Golden: each published number within 5% (the sweep
 * 3 %, its across row 4 %), noise on, several seeds. The seed publishes its
 * pairwise matrices as ranges (§3: 52.6-53.8 within, 36.5-40.5 between,
 * 70-75 bidirectional across) and its all-eight host figures as per-group
 * ranges (§5): those cells are held to the range, widened by 5 %. Checks of
 * the simulator against its own figures are marked "consistency" (not
 * golden). And what the guest's discovery shows: one NUMA node, PHB
 * everywhere, P2P OK.
 */
#include "simtest.h"

#include "analysis/stress.h"
#include "exec/stress_run.h"
#include "topo/topo.h"

#define TOL 0.05

static bool same_domain(int a, int b)
{
    return (a < 4) == (b < 4);
}

static void check_pairs(uint64_t seed)
{
    gq_backend *be = st_open("rtxpro6000x8", seed, ST_GOLDEN_NOISE);
    st_out o;
    for (int a = 0; a < 8; a++)
        for (int b = 0; b < 8; b++) {
            if (a == b)
                continue;
            gq_flow f[2] = {st_p2p(a, b, GQ_METHOD_CE)};
            st_run(be, f, 1, 1.0, 0, &o);
            if (same_domain(a, b))
                st_within(o.gbps[0], 52.6, 53.8, TOL, "P2P read %d->%d within a domain", a, b);
            else
                st_within(o.gbps[0], 36.5, 40.5, TOL, "P2P read %d->%d across domains", a, b);
            double read = o.gbps[0];
            f[0].exec_gpu = a; /* writes show the same grouping */
            st_run(be, f, 1, 1.0, 0, &o);
            /* consistency (not golden): the seed gives no write figures,
             * only "Writes showed the same grouping" */
            st_near(o.gbps[0], read, 0.03, "consistency: P2P write %d->%d like the simulated read", a, b);
            if (b < a)
                continue;
            f[0] = st_p2p(a, b, GQ_METHOD_CE);
            f[1] = st_p2p(b, a, GQ_METHOD_CE);
            st_run(be, f, 2, 1.0, 0, &o);
            if (same_domain(a, b))
                st_near(o.sum, 101, TOL, "bidirectional total %d<->%d within", a, b);
            else
                st_within(o.sum, 70, 75, TOL, "bidirectional total %d<->%d across", a, b);
        }
    st_close(be);
}

static void test_pairwise(void **state)
{
    (void)state;
    for (size_t k = 0; k < ST_NSEEDS; k++)
        check_pairs(st_seeds[k]);
}

/* Section 4: four simultaneous pairs. */
static void test_concurrent_pairs(void **state)
{
    (void)state;
    static const int within[4][2] = {{0, 1}, {2, 3}, {4, 5}, {6, 7}};
    static const double within_gbps[4] = {52.75, 53.71, 52.75, 53.03};
    static const int across[4][2] = {{0, 4}, {1, 5}, {2, 6}, {3, 7}};
    static const double across_gbps[4] = {21.12, 20.60, 24.28, 24.95};
    for (size_t k = 0; k < ST_NSEEDS; k++) {
        gq_backend *be = st_open("rtxpro6000x8", st_seeds[k], ST_GOLDEN_NOISE);
        gq_flow f[4];
        st_out in, out;
        for (int i = 0; i < 4; i++)
            f[i] = st_p2p(within[i][0], within[i][1], GQ_METHOD_CE);
        /* 4 s: copies of 512 MiB take 10-25 ms, and a window ends at the
         * last copy that finished, so a short round cannot reach 99% overlap */
        st_run(be, f, 4, 4.0, 0, &in);
        for (int i = 0; i < 4; i++)
            f[i] = st_p2p(across[i][0], across[i][1], GQ_METHOD_CE);
        st_run(be, f, 4, 4.0, 0, &out);
        for (int i = 0; i < 4; i++) {
            st_near(in.gbps[i], within_gbps[i], TOL, "within pair %d->%d", within[i][0], within[i][1]);
            st_near(out.gbps[i], across_gbps[i], TOL, "across pair %d->%d", across[i][0], across[i][1]);
        }
        st_near(in.sum, 212.24, TOL, "sum of four pairs within domains");
        st_near(out.sum, 90.95, TOL, "sum of four pairs across domains");
        assert_true(in.overlap >= 0.99 && out.overlap >= 0.99);
        /* "Across-domain aggregate bandwidth was about 43% of the within-domain result." */
        st_near(out.sum / in.sum, 0.43, 0.08, "across / within");
        /* Each across pair falls below the seed's isolated 36.5-40.5. */
        for (int i = 0; i < 4; i++)
            assert_true(out.gbps[i] < 36.5);
        st_close(be);
    }
}

/* Consistency (the simulator's windows, not a published figure): by a
 * count of copies instead of a duration, the faster across pairs finish
 * first: the windows no longer overlap by 99% and the harness must not
 * report the aggregate (the seed's "measurement mistake"). */
static void test_consistency_unequal_pairs_by_count(void **state)
{
    (void)state;
    gq_backend *be = st_open("rtxpro6000x8", 5, ST_GOLDEN_NOISE);
    gq_flow f[4] = {st_p2p(0, 4, GQ_METHOD_CE), st_p2p(1, 5, GQ_METHOD_CE), st_p2p(2, 6, GQ_METHOD_CE),
                    st_p2p(3, 7, GQ_METHOD_CE)};
    st_out o;
    st_run(be, f, 4, 0, 20, &o);
    assert_true(o.overlap < 0.99);
    for (int i = 0; i < 4; i++)
        assert_int_equal(o.res[i].copies_done, 20);
    /* pairs within a domain run alike, so by count they still overlap */
    gq_flow g[2] = {st_p2p(0, 1, GQ_METHOD_CE), st_p2p(4, 5, GQ_METHOD_CE)};
    st_run(be, g, 2, 0, 20, &o);
    assert_true(o.overlap >= 0.99);
    st_close(be);
}

/* Section 5: host traffic. */
static void test_host(void **state)
{
    (void)state;
    for (size_t k = 0; k < ST_NSEEDS; k++) {
        gq_backend *be = st_open("rtxpro6000x8", st_seeds[k], ST_GOLDEN_NOISE);
        gq_flow f[8];
        st_out h, d;
        for (int g = 0; g < 8; g++) {
            f[0] = st_h2d(g);
            st_run(be, f, 1, 1.0, 0, &h);
            st_near(h.gbps[0], 57.9, TOL, "GPU %d alone, RAM->GPU", g);
            assert_int_equal(h.res[0].host_numa_actual, 0); /* the guest's only node */
            f[0] = st_d2h(g);
            st_run(be, f, 1, 1.0, 0, &d);
            st_near(d.gbps[0], 56.6, TOL, "GPU %d alone, GPU->RAM", g);
        }
        for (int g = 0; g < 8; g++)
            f[g] = st_h2d(g);
        st_run(be, f, 8, 1.0, 0, &h);
        for (int g = 0; g < 8; g++)
            f[g] = st_d2h(g);
        st_run(be, f, 8, 1.0, 0, &d);
        for (int g = 0; g < 8; g++) {
            if (g < 4) {
                st_within(h.gbps[g], 35.4, 35.9, TOL, "all eight, RAM->GPU %d", g);
                st_within(d.gbps[g], 28.3, 30.1, TOL, "all eight, GPU->RAM %d", g);
            } else {
                st_within(h.gbps[g], 48.0, 50.2, TOL, "all eight, RAM->GPU %d", g);
                st_within(d.gbps[g], 47.2, 50.4, TOL, "all eight, GPU->RAM %d", g);
            }
        }
        st_near(h.sum, 338.98, TOL, "all eight, RAM->GPU aggregate");
        st_near(d.sum, 312.18, TOL, "all eight, GPU->RAM aggregate");
        /* consistency: GPUs 0-3 are slower than 4-7 in both directions */
        for (int a = 0; a < 4; a++)
            for (int b = 4; b < 8; b++)
                assert_true(h.gbps[a] < h.gbps[b] && d.gbps[a] < d.gbps[b]);

        /* {0,1,4,5}: 0 and 1 about 39 GB/s, 4 and 5 about 58 */
        int s1[4] = {0, 1, 4, 5};
        for (int i = 0; i < 4; i++)
            f[i] = st_h2d(s1[i]);
        st_run(be, f, 4, 1.0, 0, &h);
        for (int i = 0; i < 4; i++)
            st_near(h.gbps[i], i < 2 ? 39 : 58, TOL, "{0,1,4,5} RAM->GPU %d", s1[i]);
        /* {0,2,4,6}: all at their one-GPU rates */
        int s2[4] = {0, 2, 4, 6};
        for (int i = 0; i < 4; i++)
            f[i] = st_h2d(s2[i]);
        st_run(be, f, 4, 1.0, 0, &h);
        for (int i = 0; i < 4; i++)
            f[i] = st_d2h(s2[i]);
        st_run(be, f, 4, 1.0, 0, &d);
        for (int i = 0; i < 4; i++) {
            st_near(h.gbps[i], 57.9, TOL, "{0,2,4,6} RAM->GPU %d", s2[i]);
            st_near(d.gbps[i], 56.6, TOL, "{0,2,4,6} GPU->RAM %d", s2[i]);
        }
        st_close(be);
    }
}

/* Section 6: the buffer sweep, golden per point. Seed 001 §6, 0->1 within
 * a domain: 36.71, 49.53, 53.78, 54.51 GB/s at 1, 4, 16, 64 MiB; 0->4
 * across: 35.85, 40.16, 40.90, 38.72. The model is t = cost + size / rate
 * per transfer, and each point is held to 3 %. The across row falls from
 * 40.90 at 16 MiB to 38.72 at 64 MiB, which no t = a + s/B can follow (its
 * rate only rises with size): that row is held to 4 % (the best such fit
 * misses each of its four points by 2.6-2.9 %). */
#define SWEEP_TOL_WITHIN 0.03
#define SWEEP_TOL_ACROSS 0.04
static void test_sweep(void **state)
{
    (void)state;
    static const uint64_t mib[4] = {1, 4, 16, 64};
    static const double within[4] = {36.71, 49.53, 53.78, 54.51};
    static const double across[4] = {35.85, 40.16, 40.90, 38.72};
    for (size_t k = 0; k < ST_NSEEDS; k++) {
        gq_backend *be = st_open("rtxpro6000x8", st_seeds[k], ST_GOLDEN_NOISE);
        double w[4], x[4];
        for (int i = 0; i < 4; i++) {
            gq_flow f = st_p2p(0, 1, GQ_METHOD_CE);
            f.bytes = mib[i] * GQ_MiB;
            st_out o;
            st_run(be, &f, 1, 1.0, 0, &o);
            w[i] = o.gbps[0];
            st_near(w[i], within[i], SWEEP_TOL_WITHIN, "sweep 0->1, %llu MiB", (unsigned long long)mib[i]);
            f = st_p2p(0, 4, GQ_METHOD_CE);
            f.bytes = mib[i] * GQ_MiB;
            st_run(be, &f, 1, 1.0, 0, &o);
            x[i] = o.gbps[0];
            st_near(x[i], across[i], SWEEP_TOL_ACROSS, "sweep 0->4, %llu MiB", (unsigned long long)mib[i]);
        }
        /* Consistency (the simulator against itself, as the seed's text
         * reads the table): "At 1 MiB, the two paths were close; at larger
         * sizes their difference became clearer." */
        assert_true(fabs(w[0] - x[0]) < 0.1 * w[0]);
        assert_true(w[3] - x[3] > 0.2 * w[3]);
        st_close(be);
    }
}

/* Section 7: five minutes of all-GPU stress, golden against the seed's
 * per-GPU summaries (samples at >= 90 % utilisation): average temperature
 * 66.5-68.2 C, maximum 71 C, average power 594.4-597.2 W, average SM clock
 * 2,208-2,249 MHz, no thermal slowdown, power cap reported in 99-100 % of
 * the samples, all passed with zero ECC errors; about 4.77 kW in total;
 * average clocks about 1.9 % apart from lowest to highest. */
static void stress_figures(uint64_t seed)
{
    gq_backend be;
    gq_backend_register_builtin();
    gq_backend_opts bo;
    gq_sim_opts(&bo, "rtxpro6000x8", seed, -1, NULL);
    gq_err e = {0};
    if (gq_backend_open(&be, "sim", &bo, &e))
        fail_msg("open sim: %s", e.msg);
    gq_topo *t = calloc(1, sizeof *t);
    gq_stress_result *r = calloc(1, sizeof *r);
    gq_stress_summary *s = calloc(1, sizeof *s);
    assert_true(t && r && s);
    gq_topo_init(t);
    assert_int_equal(be.ops->discover(&be, t, &e), GQ_OK);
    gq_stress_opts o;
    gq_stress_opts_default(&o);
    o.ngpus = 8;
    for (int i = 0; i < 8; i++)
        o.gpus[i] = i;
    o.duration_s = 300;
    assert_int_equal(gq_stress_run(&be, t, &o, r, &e), GQ_OK);
    gq_stress_summarize(r, NULL, s);
    assert_int_equal(s->ngpu, 8);
    assert_int_equal(s->verdict, GQ_STRESS_PASS);
    double tmax = 0;
    for (int k = 0; k < 8; k++) {
        const gq_stress_gpu_summary *g = &s->gpu[k];
        assert_true(g->nloaded > 0.95 * g->nsamples);
        /* temperatures in C: the published range, +-0.5 C */
        if (!(g->temp_avg_c >= 66.5 - 0.5 && g->temp_avg_c <= 68.2 + 0.5))
            fail_msg("seed %llu GPU %d: average temperature %.2f C, want 66.5-68.2 +-0.5",
                     (unsigned long long)seed, g->gpu, g->temp_avg_c);
        if (g->temp_max_c > tmax)
            tmax = g->temp_max_c;
        st_within(g->power_avg_w, 594.4, 597.2, 0.002, "seed %llu GPU %d: average power (W)",
                  (unsigned long long)seed, g->gpu);
        st_within(g->sm_clock_avg_mhz, 2208, 2249, 0.003, "seed %llu GPU %d: average SM clock (MHz)",
                  (unsigned long long)seed, g->gpu);
        assert_false(g->thermal_slowdown);
        if (g->power_capped_pct < 99)
            fail_msg("GPU %d: power cap in %.1f %% of samples, want 99-100", g->gpu, g->power_capped_pct);
        assert_int_equal(g->verdict, GQ_STRESS_PASS);
        assert_int_equal(g->ecc_corrected, 0);
        assert_int_equal(g->ecc_uncorrected, 0);
        assert_int_equal(g->faulty, 0);
    }
    /* the hottest GPU: 71 C, +-1 C (the samples are whole degrees) */
    if (!(tmax >= 70 && tmax <= 72))
        fail_msg("seed %llu: maximum temperature %.1f C, want 71 +-1", (unsigned long long)seed, tmax);
    st_near(s->power_total_avg_w / 1000, 4.77, 0.01, "seed %llu: total GPU power (kW)",
            (unsigned long long)seed);
    /* "roughly 1.9 %": no more than that (the clock range above bounds it too) */
    if (!(s->clock_spread > 0.005 && s->clock_spread <= 0.019 * 1.05))
        fail_msg("seed %llu: clock spread %.2f %%, want up to about 1.9 %%", (unsigned long long)seed,
                 100 * s->clock_spread);
    gq_backend_close(&be);
    gq_stress_result_free(r);
    free(r);
    free(s);
    free(t);
}

static void test_stress(void **state)
{
    (void)state;
    for (size_t k = 0; k < ST_NSEEDS; k++)
        stress_figures(st_seeds[k]);
}

/* What the guest shows: nothing of the hidden domains. */
static void test_discovery(void **state)
{
    (void)state;
    gq_backend *be = st_open("rtxpro6000x8", 1, ST_GOLDEN_NOISE);
    gq_topo *t = calloc(1, sizeof *t);
    gq_topo_init(t);
    gq_err e = {0};
    assert_int_equal(be->ops->discover(be, t, &e), GQ_OK);
    assert_true(t->simulated);
    assert_string_equal(t->source, "sim:rtxpro6000x8");
    assert_true(t->is_vm);
    assert_string_equal(t->hypervisor, "kvm");
    assert_int_equal(t->numa_nodes, 1);
    assert_int_equal(t->ngpu, 8);
    assert_int_equal(t->npci, 9); /* one host bridge and the eight GPUs: no bridges */
    assert_int_equal(t->pci[0].kind, GQ_PCI_HOSTBRIDGE);
    for (int i = 0; i < 8; i++) {
        assert_non_null(strstr(t->gpu[i].name, "RTX PRO 6000"));
        assert_int_equal(t->gpu[i].pcie_gen_cur, 5);
        assert_int_equal(t->gpu[i].pcie_width_cur, 16);
        assert_true(fabs(t->gpu[i].pcie_gbps - 63.0) < 0.1);
        assert_int_equal(t->gpu[i].numa_node, -1);
        assert_int_equal(t->gpu[i].nvlinks_total, 0);
        assert_int_equal(t->gpu[i].mem_bytes, 97887ull * GQ_MiB);
        assert_int_equal(t->pci[i + 1].parent, 0);
        for (int j = 0; j < 8; j++) {
            if (i == j)
                continue;
            assert_int_equal(t->level[i][j], GQ_LEVEL_PHB);
            assert_int_equal(t->p2p_nvml[i][j], GQ_P2P_OK);
            assert_int_equal(t->p2p_cuda[i][j], 1);
        }
    }
    free(t);
    st_close(be);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pairwise),
        cmocka_unit_test(test_concurrent_pairs),
        cmocka_unit_test(test_consistency_unequal_pairs_by_count),
        cmocka_unit_test(test_host),
        cmocka_unit_test(test_sweep),
        cmocka_unit_test(test_stress),
        cmocka_unit_test(test_discovery),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
