/* Seed 004 reproduced on the built-in a100x6 (6 x A100 PCIe with NVLink
 * bridges 0-3, 1-2, 4-5): the p2pBandwidthLatencyTest matrices, one
 * direction and both, P2P enabled and disabled, and the latency matrices.
 * Every published cell within 5% (the NVLink cells within the published
 * 190-275 range, since the seed's own cells differ by direction), and the
 * NVLink pairs stand out as they do in the seed.
 */
#include "simtest.h"

#define TOL 0.05

static bool nv_pair(int a, int b)
{
    int lo = a < b ? a : b, hi = a < b ? b : a;
    return (lo == 0 && hi == 3) || (lo == 1 && hi == 2) || (lo == 4 && hi == 5);
}

/* The seed's matrices (GB/s), row = source. */
static const double uni_disabled[6][6] = {
    {0, 11.01, 11.00, 11.07, 11.08, 11.06}, {11.21, 0, 9.72, 11.19, 11.14, 11.20},
    {11.23, 9.88, 0, 11.13, 11.08, 11.11},  {11.32, 11.24, 11.35, 0, 11.12, 11.14},
    {11.23, 11.26, 11.24, 11.35, 0, 9.86},  {11.27, 11.27, 11.25, 11.36, 9.89, 0},
};
static const double uni_enabled[6][6] = {
    {0, 10.05, 10.05, 275.34, 8.55, 8.55}, {10.04, 0, 196.25, 8.69, 8.56, 8.72},
    {10.04, 216.16, 0, 9.86, 8.70, 8.50},  {200.30, 8.93, 8.93, 0, 10.06, 10.06},
    {9.48, 8.90, 8.90, 10.05, 0, 189.87},  {9.61, 8.90, 8.90, 10.05, 275.24, 0},
};
static const double bi_disabled[6][6] = {
    {0, 15.46, 15.45, 15.94, 15.82, 15.81}, {15.88, 0, 10.44, 15.90, 15.71, 15.74},
    {15.85, 10.41, 0, 15.87, 15.72, 15.72}, {15.94, 15.83, 15.83, 0, 15.83, 15.72},
    {15.86, 15.70, 15.71, 15.88, 0, 10.37}, {15.90, 15.76, 15.75, 15.90, 10.37, 0},
};
static const double bi_enabled[6][6] = {
    {0, 19.35, 19.34, 516.02, 18.80, 18.85}, {19.34, 0, 515.66, 18.90, 19.01, 19.02},
    {19.35, 517.03, 0, 18.90, 19.01, 19.01}, {515.34, 18.91, 18.92, 0, 19.28, 19.28},
    {18.81, 19.01, 19.00, 19.28, 0, 515.37}, {18.82, 19.00, 19.02, 19.28, 517.31, 0},
};

/* Cross-socket P2P over PCIe varies more in the seed (8.5-9.9) than one model
 * rate can follow: those cells are checked against the published range. */
static void check_cell(double got, double want, int a, int b, bool p2p, const char *what)
{
    bool cross = (a < 3) != (b < 3);
    if (p2p && !nv_pair(a, b) && cross && want < 12)
        st_within(got, 8.50, 9.86, TOL, "%s %d->%d (cross-socket range)", what, a, b);
    else if (p2p && nv_pair(a, b) && want < 300)
        st_within(got, 189.87, 275.34, TOL, "%s %d->%d (NVLink range)", what, a, b);
    else
        st_near(got, want, TOL, "%s %d->%d", what, a, b);
}

static void matrices(uint64_t seed)
{
    gq_backend *be = st_open("a100x6", seed, -1);
    double uni[6][6], bi[6][6];
    for (int p2p = 0; p2p <= 1; p2p++) {
        gq_method m = p2p ? GQ_METHOD_CE : GQ_METHOD_DRIVER_STAGED;
        for (int a = 0; a < 6; a++)
            for (int b = 0; b < 6; b++) {
                if (a == b)
                    continue;
                st_out o;
                gq_flow f[2] = {st_p2p(a, b, m), st_p2p(b, a, m)};
                f[0].exec_gpu = a; /* p2pBandwidthLatencyTest writes */
                f[1].exec_gpu = b;
                st_run(be, f, 1, 1.0, 0, &o);
                uni[a][b] = o.gbps[0];
                check_cell(uni[a][b], p2p ? uni_enabled[a][b] : uni_disabled[a][b], a, b, p2p,
                           p2p ? "unidirectional, P2P enabled" : "unidirectional, P2P disabled");
                st_run(be, f, 2, 1.0, 0, &o);
                bi[a][b] = o.sum;
                check_cell(bi[a][b], p2p ? bi_enabled[a][b] : bi_disabled[a][b], a, b, p2p,
                           p2p ? "bidirectional, P2P enabled" : "bidirectional, P2P disabled");
            }
        /* With P2P, the NVLink pairs stand out in their rows by far. */
        if (p2p)
            for (int a = 0; a < 6; a++)
                for (int b = 0; b < 6; b++)
                    for (int c = 0; c < 6; c++)
                        if (nv_pair(a, b) && c != a && !nv_pair(a, c)) {
                            assert_true(uni[a][b] > 15 * uni[a][c]);
                            assert_true(bi[a][b] > 20 * bi[a][c]);
                        }
        /* Without P2P the bridges do not help: the NVLink pairs are no
         * faster, and pairs behind one PCIe switch (1-2, 4-5) are slower. */
        if (!p2p) {
            assert_true(uni[1][2] < uni[1][0] && uni[4][5] < uni[4][3]);
            assert_true(bi[1][2] < 0.75 * bi[1][0] && bi[5][4] < 0.75 * bi[5][3]);
        }
    }
    st_close(be);
}

static void test_bandwidth_matrices(void **state)
{
    (void)state;
    for (size_t k = 0; k < ST_NSEEDS; k++)
        matrices(st_seeds[k]);
}

static void test_latency(void **state)
{
    (void)state;
    for (size_t k = 0; k < ST_NSEEDS; k++) {
        gq_backend *be = st_open("a100x6", st_seeds[k], -1);
        gq_err e = {0};
        for (int a = 0; a < 6; a++)
            for (int b = 0; b < 6; b++) {
                double on, off;
                gq_latency_req q = {
                    .kind = GQ_LAT_COPY, .target = {GQ_EP_GPU, b}, .exec_gpu = a, .p2p = true, .iters = 100};
                assert_int_equal(be->ops->latency(be, &q, &on, &e), GQ_OK);
                q.p2p = false;
                assert_int_equal(be->ops->latency(be, &q, &off, &e), GQ_OK);
                on /= 1000, off /= 1000; /* us */
                if (a == b) {
                    st_within(on, 2.26, 2.46, TOL, "latency %d->%d (local)", a, b);
                    continue;
                }
                st_within(on, 2.22, 2.58, TOL, "latency %d->%d, P2P enabled", a, b);
                st_within(off, 13.72, 21.75, TOL, "latency %d->%d, P2P disabled", a, b);
                assert_true(off > 5 * on);
            }
        st_close(be);
    }
}

static void test_discovery(void **state)
{
    (void)state;
    gq_backend *be = st_open("a100x6", 1, -1);
    gq_topo *t = calloc(1, sizeof *t);
    gq_topo_init(t);
    gq_err e = {0};
    assert_int_equal(be->ops->discover(be, t, &e), GQ_OK);
    assert_int_equal(t->ngpu, 6);
    assert_false(t->is_vm);
    assert_int_equal(t->numa_nodes, 2);
    assert_int_equal(t->sockets, 2);
    assert_string_equal(t->gpu[0].pci_bus_id, "0000:3b:00.0");
    assert_string_equal(t->gpu[5].pci_bus_id, "0000:db:00.0");
    for (int a = 0; a < 6; a++) {
        assert_int_equal(t->gpu[a].numa_node, a < 3 ? 0 : 1);
        assert_int_equal(t->gpu[a].nvlinks_total, 12);
        assert_true(fabs(t->gpu[a].nvlink_gbps_per_link - 25.0) < 1e-9);
        for (int b = 0; b < 6; b++) {
            if (a == b)
                continue;
            assert_int_equal(t->p2p_cuda[a][b], 1);
            assert_int_equal(t->nvlinks[a][b], nv_pair(a, b) ? 12 : 0);
            if (nv_pair(a, b))
                assert_int_equal(t->level[a][b], GQ_LEVEL_NV);
            else if ((a < 3) != (b < 3))
                assert_int_equal(t->level[a][b], GQ_LEVEL_SYS);
            else
                assert_int_equal(t->level[a][b], GQ_LEVEL_PHB);
        }
    }
    /* under NVLink, the PCIe path: 1 and 2 share a switch */
    assert_int_equal(t->pci_level[1][2], GQ_LEVEL_PIX);
    assert_int_equal(t->pci_level[0][3], GQ_LEVEL_SYS);
    free(t);
    st_close(be);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bandwidth_matrices),
        cmocka_unit_test(test_latency),
        cmocka_unit_test(test_discovery),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
