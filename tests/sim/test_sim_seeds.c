/* Consistency tests (the simulator against itself; none of these is a
 * golden check against a published figure, see test_seed00N.c for those).
 * The seeds' qualitative answers do not depend on the simulator's noise: for
 * 20 different --sim-seed values, seed 000's per-socket limit, seed 001's
 * domains (within / across pair ratio, concurrent pairs, the 0-3 / 4-7 host
 * asymmetry), seed 004's NVLink pairs and the reference machine's
 * NVLink-versus-PCIe gap all hold. Also: noise changes the figures (they are
 * not the noiseless ones) but never by more than its amplitude.
 */
#include "simtest.h"

#define NSEEDS 20

static uint64_t seed_at(int i)
{
    return 1000003ull * (uint64_t)i + 17;
}

static void consistency_seed000_socket_limit(void **state)
{
    (void)state;
    for (int i = 0; i < NSEEDS; i++) {
        gq_backend *be = st_open("rtx4090x8", seed_at(i), -1);
        gq_flow f[4] = {st_h2d(0)};
        st_out one, four, split;
        st_run(be, f, 1, 1.0, 0, &one);
        for (int g = 0; g < 4; g++)
            f[g] = st_h2d(g);
        st_run(be, f, 4, 1.0, 0, &four);
        f[0] = st_h2d(0), f[1] = st_h2d(1), f[2] = st_h2d(4), f[3] = st_h2d(5);
        st_run(be, f, 4, 1.0, 0, &split);
        /* one socket: four GPUs no more than ~one; two sockets: twice */
        assert_true(four.sum < 1.05 * one.sum);
        assert_true(split.sum > 1.9 * four.sum);
        st_close(be);
    }
}

static void consistency_seed001_domains(void **state)
{
    (void)state;
    for (int i = 0; i < NSEEDS; i++) {
        gq_backend *be = st_open("rtxpro6000x8", seed_at(i), -1);
        st_out w, x, in, out, all;
        gq_flow f[8] = {st_p2p(2, 3, GQ_METHOD_CE)};
        st_run(be, f, 1, 1.0, 0, &w);
        f[0] = st_p2p(2, 5, GQ_METHOD_CE);
        st_run(be, f, 1, 1.0, 0, &x);
        double ratio = w.gbps[0] / x.gbps[0];
        assert_true(ratio > 1.25 && ratio < 1.5);
        f[0] = st_p2p(0, 1, GQ_METHOD_CE), f[1] = st_p2p(2, 3, GQ_METHOD_CE);
        f[2] = st_p2p(4, 5, GQ_METHOD_CE), f[3] = st_p2p(6, 7, GQ_METHOD_CE);
        st_run(be, f, 4, 1.0, 0, &in);
        f[0] = st_p2p(0, 4, GQ_METHOD_CE), f[1] = st_p2p(1, 5, GQ_METHOD_CE);
        f[2] = st_p2p(2, 6, GQ_METHOD_CE), f[3] = st_p2p(3, 7, GQ_METHOD_CE);
        st_run(be, f, 4, 1.0, 0, &out);
        assert_true(in.sum > 2.0 * out.sum);
        for (int g = 0; g < 8; g++)
            f[g] = st_h2d(g);
        st_run(be, f, 8, 1.0, 0, &all);
        for (int a = 0; a < 4; a++)
            for (int b = 4; b < 8; b++)
                assert_true(all.gbps[a] < 0.8 * all.gbps[b]);
        st_close(be);
    }
}

static void consistency_seed004_nvlink_pairs(void **state)
{
    (void)state;
    for (int i = 0; i < NSEEDS; i++) {
        gq_backend *be = st_open("a100x6", seed_at(i), -1);
        /* each GPU's fastest peer is its bridge partner */
        static const int partner[6] = {3, 2, 1, 0, 5, 4};
        for (int a = 0; a < 6; a++) {
            double best = 0;
            int arg = -1;
            for (int b = 0; b < 6; b++) {
                if (a == b)
                    continue;
                gq_flow f = st_p2p(a, b, GQ_METHOD_CE);
                st_out o;
                st_run(be, &f, 1, 0.2, 0, &o);
                if (o.gbps[0] > best)
                    best = o.gbps[0], arg = b;
            }
            assert_int_equal(arg, partner[a]);
        }
        st_close(be);
    }
}

static void consistency_noise_bounded(void **state)
{
    (void)state;
    gq_backend *be = st_open("h200x2", 1, 0);
    gq_flow f = st_h2d(0);
    st_out o;
    st_run(be, &f, 1, 1.0, 0, &o);
    double quiet = o.gbps[0];
    st_close(be);
    int differ = 0;
    for (int i = 0; i < NSEEDS; i++) {
        be = st_open("h200x2", seed_at(i), 0.01);
        st_run(be, &f, 1, 1.0, 0, &o);
        /* 1% noise: within what the model can do to a host flow alone in one
         * run, its drift, jitter and deepest slow round (noise.c), plus the
         * copy-count rounding of the window */
        const gq_sim_noise_params *p = &gq_sim_noise_bw[GQ_SIM_PC_HOST];
        double most = 0.01 * (p->drift_common + p->drift_path + p->jitter[0] + GQ_SIM_SLOW_MAX);
        assert_true(fabs(log(o.gbps[0] / quiet)) <= most + 1e-4);
        differ += fabs(o.gbps[0] - quiet) > 1e-6 * quiet;
        st_close(be);
    }
    assert_true(differ >= NSEEDS - 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(consistency_seed000_socket_limit),
        cmocka_unit_test(consistency_seed001_domains),
        cmocka_unit_test(consistency_seed004_nvlink_pairs),
        cmocka_unit_test(consistency_noise_bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
