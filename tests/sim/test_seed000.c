/* Seed 000 reproduced on the built-in rtx4090x8. Golden, every published
 * number held to its own figure within 5%, with noise on, for several seeds:
 * the whole results table (host to GPU only, and both directions at once,
 * for 1 GPU, 2 and 4 on one socket, 2 one per socket, 4 two per socket,
 * all 8) and single-GPU D2H 26.3 and H2D 25.3 GB/s with the buffer anywhere.
 * Consistency (the simulator against itself, not golden): the qualitative
 * findings as relations (one socket carries about 25 GB/s however many of
 * its GPUs copy, the sockets do not share it, both directions do not double
 * it). The driver-staged copy is held to the seed's back-of-envelope
 * estimate (12.9 GB/s), which the seed computed, not measured.
 */
#include "simtest.h"

#define TOL 0.05

typedef struct row {
    const char *what;
    int n;
    int gpus[8];
    double h2d;                /* total, host to GPU only */
    double both_h2d, both_d2h; /* totals, both directions at once */
} row;

static const row table[] = {
    {.what = "1 GPU", .n = 1, .gpus = {0}, .h2d = 25.2, .both_h2d = 16.5, .both_d2h = 19.7},
    {.what = "2 on one socket", .n = 2, .gpus = {0, 1}, .h2d = 25.3, .both_h2d = 17.9, .both_d2h = 18.6},
    {.what = "4 on one socket",
     .n = 4,
     .gpus = {0, 1, 2, 3},
     .h2d = 25.8,
     .both_h2d = 18.3,
     .both_d2h = 18.3},
    {.what = "2, one per socket", .n = 2, .gpus = {0, 4}, .h2d = 50.5, .both_h2d = 33.0, .both_d2h = 39.3},
    {.what = "4, two per socket",
     .n = 4,
     .gpus = {0, 1, 4, 5},
     .h2d = 50.7,
     .both_h2d = 35.8,
     .both_d2h = 37.3},
    {.what = "all 8",
     .n = 8,
     .gpus = {0, 1, 2, 3, 4, 5, 6, 7},
     .h2d = 51.6,
     .both_h2d = 36.7,
     .both_d2h = 36.6},
};

/* A concurrent run by duration whose windows miss the overlap rule (99 %) is
 * run again, at most twice, as the harness does (docs/method.md): with noise
 * on, a flow's slow round can end its last whole copy well before the
 * others'. */
static void run_overlapping(gq_backend *be, const gq_flow *f, int n, st_out *o, const char *what)
{
    for (int tries = 0; tries < 3; tries++) {
        st_run(be, f, n, 1.0, 0, o);
        if (o->overlap >= 0.99)
            return;
    }
    fail_msg("%s: the windows overlapped %.4f < 0.99 in three runs", what, o->overlap);
}

static void check_table(uint64_t seed)
{
    gq_backend *be = st_open("rtx4090x8", seed, ST_GOLDEN_NOISE);
    st_out o;
    for (size_t r = 0; r < sizeof table / sizeof table[0]; r++) {
        const row *w = &table[r];
        gq_flow f[16];
        for (int i = 0; i < w->n; i++)
            f[i] = st_h2d(w->gpus[i]);
        run_overlapping(be, f, w->n, &o, w->what);
        st_near(o.sum, w->h2d, TOL, "seed %llu, %s, host to GPU", (unsigned long long)seed, w->what);
        for (int i = 0; i < w->n; i++) {
            f[2 * i] = st_h2d(w->gpus[i]);
            f[2 * i + 1] = st_d2h(w->gpus[i]);
        }
        st_run(be, f, 2 * w->n, 1.0, 0, &o);
        double h = 0, d = 0;
        for (int i = 0; i < w->n; i++) {
            h += o.gbps[2 * i];
            d += o.gbps[2 * i + 1];
        }
        st_near(h, w->both_h2d, TOL, "seed %llu, %s, both ways: to GPU", (unsigned long long)seed, w->what);
        st_near(d, w->both_d2h, TOL, "seed %llu, %s, both ways: to host", (unsigned long long)seed, w->what);
    }
    st_close(be);
}

static void test_table(void **state)
{
    (void)state;
    for (size_t k = 0; k < ST_NSEEDS; k++)
        check_table(st_seeds[k]);
}

/* "In an earlier run on GPU 5 ... the buffer on the GPU's own NUMA node, the
 * CPU threads and the buffer both on the other socket ... all gave 25.3 GB/s
 * host to device and 26.3 GB/s device to host." */
static void test_single_gpu_any_placement(void **state)
{
    (void)state;
    for (size_t k = 0; k < ST_NSEEDS; k++) {
        gq_backend *be = st_open("rtx4090x8", st_seeds[k], ST_GOLDEN_NOISE);
        st_out o;
        for (int numa = -1; numa <= 1; numa++) {
            gq_flow f = st_h2d(5);
            f.src.index = numa;
            st_run(be, &f, 1, 1.0, 0, &o);
            st_near(o.gbps[0], 25.3, TOL, "GPU 5 H2D, host buffer on node %d", numa);
            assert_int_equal(o.res[0].host_numa_actual, numa < 0 ? 1 : numa);
            f = st_d2h(5);
            f.dst.index = numa;
            st_run(be, &f, 1, 1.0, 0, &o);
            st_near(o.gbps[0], 26.3, TOL, "GPU 5 D2H, host buffer on node %d", numa);
        }
        st_close(be);
    }
}

/* Consistency: findings 1-3 as relations between simulated figures. */
static void test_consistency_findings(void **state)
{
    (void)state;
    gq_backend *be = st_open("rtx4090x8", 3, ST_GOLDEN_NOISE);
    st_out one, two, four, across;
    gq_flow f[8];
    f[0] = st_h2d(2);
    st_run(be, f, 1, 1.0, 0, &one);
    f[1] = st_h2d(3);
    st_run(be, f, 2, 1.0, 0, &two);
    f[0] = st_h2d(0), f[1] = st_h2d(1), f[2] = st_h2d(2), f[3] = st_h2d(3);
    st_run(be, f, 4, 1.0, 0, &four);
    /* 1. a second or fourth GPU on the socket adds (almost) nothing; each gets its share */
    assert_true(two.sum < one.sum * 1.05);
    assert_true(four.sum < one.sum * 1.05);
    for (int i = 0; i < 4; i++)
        st_near(four.gbps[i], four.sum / 4, 0.02, "each of 4 gets a quarter (GPU %d)", i);
    /* 2. the sockets do not share the limit */
    f[0] = st_h2d(1), f[1] = st_h2d(6);
    st_run(be, f, 2, 1.0, 0, &across);
    assert_true(across.sum > 1.9 * one.sum);
    /* 3. both directions do not double it: one GPU moves ~36, not ~51 */
    f[0] = st_h2d(4), f[1] = st_d2h(4);
    st_run(be, f, 2, 1.0, 0, &two);
    assert_true(two.sum < 1.5 * one.sum && two.sum > 1.3 * one.sum);
    assert_true(two.gbps[1] > two.gbps[0]); /* to host gets more than to GPU */
    st_close(be);
}

/* Without P2P, a GPU-to-GPU copy goes through host memory: the driver's
 * serial staging on GPUs of different sockets comes to the seed's KV-staging
 * estimate 1 / (1/26.3 + 1/25.3) = 12.9 GB/s. */
static void test_driver_staging(void **state)
{
    (void)state;
    gq_backend *be = st_open("rtx4090x8", 11, ST_GOLDEN_NOISE);
    gq_topo *t = calloc(1, sizeof *t);
    gq_topo_init(t);
    gq_err e = {0};
    assert_int_equal(be->ops->discover(be, t, &e), GQ_OK);
    assert_int_equal(t->p2p_cuda[0][5], 0);
    assert_int_equal(t->p2p_nvml[0][5], GQ_P2P_CNS);
    st_out o;
    gq_flow f = st_p2p(1, 6, GQ_METHOD_CE);
    st_run(be, &f, 1, 1.0, 0, &o);
    st_near(o.gbps[0], 12.9, TOL, "GPU 1 -> GPU 6 without P2P (driver staged)");
    f.method = GQ_METHOD_DRIVER_STAGED;
    st_run(be, &f, 1, 1.0, 0, &o);
    st_near(o.gbps[0], 12.9, TOL, "GPU 1 -> GPU 6, driver staged");
    /* consistency: gpuqual's pipelined staging is far better than serial legs */
    f.method = GQ_METHOD_STAGED;
    st_run(be, &f, 1, 1.0, 0, &o);
    assert_true(o.gbps[0] > 1.7 * 12.9);
    /* an SM copy needs peer access, which these GPUs do not have */
    f.method = GQ_METHOD_SM;
    gq_group *g = NULL;
    assert_int_equal(be->ops->prepare(be, &f, 1, &g, &e), GQ_E_UNSUPP);
    assert_non_null(strstr(e.msg, "CNS"));
    free(t);
    st_close(be);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_single_gpu_any_placement),
        cmocka_unit_test(test_consistency_findings),
        cmocka_unit_test(test_driver_staging),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
