/* Consistency of the simulator's noise model (src/backend/sim/noise.c,
 * docs/method.md "The simulator's noise"), measured through the backend as a
 * caller sees it: each part exists and scales with --sim-noise (FRAC), the
 * round-to-round spread of a figure is the jitter, host paths drift more
 * from seed to seed than P2P paths, and those more than copies inside a GPU,
 * the workers' start skew grows with FRAC, slow rounds come at about their
 * rate, latency and telemetry scale too, FRAC 0 is bit-quiet whatever the
 * seed, and the same seed gives the same figures. Also the topology's start
 * skew hook (`noise P % skew TIME rounds P %`), which tests use to exercise
 * the harness's overlap re-run.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "simtest.h"

#define SQRT6 2.449489742783178

/* A flow of `mib` MiB, so that a run by duration counts many copies. */
static gq_flow sized(gq_flow f, int mib)
{
    f.bytes = (uint64_t)mib * GQ_MiB;
    return f;
}

/* Rates (GB/s) of n flows over `calls` runs by duration on an open backend:
 * out[c * n + i]. By duration a flow's rate is its copy rate exactly (the
 * window ends at its last whole copy), so the noise factor shows unrounded. */
static void rates(gq_backend *be, const gq_flow *f, int n, int calls, double *out, double *starts)
{
    st_out o;
    for (int c = 0; c < calls; c++) {
        st_run(be, f, n, 0.2, 0, &o);
        for (int i = 0; i < n; i++) {
            out[c * n + i] = o.gbps[i];
            if (starts)
                starts[c * n + i] = o.start[i];
        }
    }
}

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median_of(const double *v, int n)
{
    double *w = malloc(sizeof *w * (size_t)n);
    assert_non_null(w);
    memcpy(w, v, sizeof *w * (size_t)n);
    qsort(w, (size_t)n, sizeof *w, cmp_dbl);
    double m = n % 2 ? w[n / 2] : 0.5 * (w[n / 2 - 1] + w[n / 2]);
    free(w);
    return m;
}

/* Standard deviation of log(v / median) over the samples not below the
 * median by more than `cut` (slow rounds left out); *nslow counts those. */
static double log_sd(const double *v, int n, double cut, int *nslow)
{
    double m = median_of(v, n), s = 0, s2 = 0;
    int k = 0, slow = 0;
    for (int i = 0; i < n; i++) {
        double x = log(v[i] / m);
        if (x < -cut) {
            slow++;
            continue;
        }
        s += x;
        s2 += x * x;
        k++;
    }
    if (nslow)
        *nslow = slow;
    double mean = s / k;
    return sqrt(s2 / k - mean * mean);
}

/* ---- round to round ------------------------------------------------------------ */

/* The spread of a figure from round to round is the jitter: one host flow alone
 * has an amplitude of 0.4 x FRAC, two that share the GPU's link 1.0 x FRAC
 * (most of it common to both), and both double with FRAC. */
static void jitter_scales(void **state)
{
    (void)state;
    enum { CALLS = 1500 };
    double *v = malloc(sizeof *v * CALLS * 2);
    assert_non_null(v);
    double sd_alone[2], sd_shared[2];
    for (int k = 0; k < 2; k++) {
        double frac = 0.01 * (k + 1);
        gq_backend *be = st_open("h200x2", 5, frac);
        gq_flow one[1] = {sized(st_h2d(0), 4)};
        rates(be, one, 1, CALLS, v, NULL);
        sd_alone[k] = log_sd(v, CALLS, 1.2 * frac, NULL);
        gq_flow both[2] = {sized(st_h2d(0), 4), sized(st_d2h(0), 4)};
        rates(be, both, 2, CALLS, v, NULL);
        double *h2d = malloc(sizeof *h2d * CALLS);
        assert_non_null(h2d);
        for (int c = 0; c < CALLS; c++)
            h2d[c] = v[2 * c];
        sd_shared[k] = log_sd(h2d, CALLS, 2.2 * frac, NULL);
        free(h2d);
        st_close(be);
        /* triangular: sd = amplitude / sqrt 6; a shared flow's mix of the run's
         * draw (0.8) and its own (0.2) has sqrt(0.8^2 + 0.2^2) of that */
        st_near(sd_alone[k], gq_sim_noise_bw[GQ_SIM_PC_HOST].jitter[0] * frac / SQRT6, 0.15,
                "sd of a host flow alone, FRAC %.2f", frac);
        st_near(sd_shared[k],
                gq_sim_noise_bw[GQ_SIM_PC_HOST].jitter[1] * frac / SQRT6 *
                    sqrt(GQ_SIM_JITTER_CORR * GQ_SIM_JITTER_CORR +
                         (1 - GQ_SIM_JITTER_CORR) * (1 - GQ_SIM_JITTER_CORR)),
                0.15, "sd of a host flow sharing its link, FRAC %.2f", frac);
    }
    st_near(sd_alone[1] / sd_alone[0], 2.0, 0.1, "alone: sd at 2%% / sd at 1%%");
    st_near(sd_shared[1] / sd_shared[0], 2.0, 0.1, "shared: sd at 2%% / sd at 1%%");
    assert_true(sd_shared[0] > 1.5 * sd_alone[0]);
    free(v);
}

/* Every part is linear in FRAC: with the same seed the draws are the same,
 * so each round's figure moves from the quiet one by exactly twice as much
 * (in log) at twice the noise: jitter, drift and slow rounds alike, alone
 * and shared, host and GPU paths (to within the copies' fixed cost). */
static void every_part_linear(void **state)
{
    (void)state;
    enum { CALLS = 300, N = 4 };
    gq_flow f[N] = {sized(st_h2d(0), 8), sized(st_d2h(0), 8), sized(st_p2p(2, 3, GQ_METHOD_CE), 8),
                    sized(st_p2p(5, 5, GQ_METHOD_CE), 16)};
    double *v[3];
    for (int k = 0; k < 3; k++) {
        v[k] = malloc(sizeof *v[k] * CALLS * N);
        assert_non_null(v[k]);
        gq_backend *be = st_open("rtxpro6000x8", 17, 0.01 * k);
        rates(be, f, N, CALLS, v[k], NULL);
        st_close(be);
    }
    int moved = 0;
    for (int c = 0; c < CALLS * N; c++) {
        double one = log(v[1][c] / v[0][c]), two = log(v[2][c] / v[0][c]);
        moved += fabs(one) > 1e-4;
        if (!(fabs(two - 2 * one) <= 0.03 * fabs(one) + 1e-9))
            fail_msg("round %d flow %d: %.6f at 1 %%, %.6f at 2 %%", c / N, c % N, one, two);
    }
    assert_true(moved > CALLS * N * 9 / 10);
    for (int k = 0; k < 3; k++)
        free(v[k]);
}

/* ---- run to run -------------------------------------------------------------- */

/* The drift of a path: the mean of a few rounds, seed after seed. */
static void drift_sd(const char *machine, double frac, const gq_flow *f, int n, double *sd)
{
    enum { SEEDS = 160, CALLS = 6 };
    double *mean = calloc((size_t)SEEDS * (size_t)n, sizeof *mean), v[CALLS * 8];
    assert_non_null(mean);
    assert_true(n <= 8);
    for (int s = 0; s < SEEDS; s++) {
        gq_backend *be = st_open(machine, 1000 + (uint64_t)s * 7919, frac);
        rates(be, f, n, CALLS, v, NULL);
        st_close(be);
        for (int i = 0; i < n; i++) {
            double x[CALLS];
            for (int c = 0; c < CALLS; c++)
                x[c] = v[c * n + i];
            mean[s * n + i] = log(median_of(x, CALLS));
        }
    }
    for (int i = 0; i < n; i++) {
        double a = 0, a2 = 0;
        for (int s = 0; s < SEEDS; s++) {
            a += mean[s * n + i];
            a2 += mean[s * n + i] * mean[s * n + i];
        }
        a /= SEEDS;
        sd[i] = sqrt(a2 / SEEDS - a * a);
    }
    free(mean);
}

static double drift_model(gq_sim_path_class c, double frac)
{
    const gq_sim_noise_params *p = &gq_sim_noise_bw[c];
    return frac * sqrt(p->drift_common * p->drift_common + p->drift_path * p->drift_path) / SQRT6;
}

/* From seed to seed a host path moves more than a P2P path over PCIe, which
 * moves more than a copy inside a GPU, each by its drift, and twice as much
 * at twice the noise. Each flow runs alone (three runs of one flow each). */
static void drift_by_class(void **state)
{
    (void)state;
    double sd[2][3];
    for (int k = 0; k < 2; k++) {
        double frac = 0.01 * (k + 1);
        gq_flow h[1] = {sized(st_h2d(1), 4)}, p[1] = {sized(st_p2p(0, 1, GQ_METHOD_CE), 4)},
                l[1] = {sized(st_p2p(2, 2, GQ_METHOD_CE), 8)};
        drift_sd("rtxpro6000x8", frac, h, 1, &sd[k][0]);
        drift_sd("rtxpro6000x8", frac, p, 1, &sd[k][1]);
        drift_sd("rtxpro6000x8", frac, l, 1, &sd[k][2]);
        st_near(sd[k][0], drift_model(GQ_SIM_PC_HOST, frac), 0.25, "host drift sd, FRAC %.2f", frac);
        st_near(sd[k][1], drift_model(GQ_SIM_PC_P2P, frac), 0.25, "P2P drift sd, FRAC %.2f", frac);
        st_near(sd[k][2], drift_model(GQ_SIM_PC_LOCAL, frac), 0.25, "local copy drift sd, FRAC %.2f", frac);
        assert_true(sd[k][0] > 1.3 * sd[k][1]);
        assert_true(sd[k][1] > 1.3 * sd[k][2]);
    }
    for (int c = 0; c < 3; c++)
        st_near(sd[1][c] / sd[0][c], 2.0, 0.1, "class %d: drift sd at 2%% / at 1%%", c);
}

/* Drift has a part common to a class: two GPUs' host paths move together
 * from seed to seed much more than their own parts alone would make them. */
static void drift_common_part(void **state)
{
    (void)state;
    enum { SEEDS = 120 };
    const double frac = 0.01;
    gq_flow f[1];
    double a[SEEDS], b[SEEDS], v[4];
    for (int s = 0; s < SEEDS; s++) {
        gq_backend *be = st_open("rtxpro6000x8", 77 + (uint64_t)s, frac);
        f[0] = sized(st_h2d(0), 4);
        rates(be, f, 1, 1, v, NULL);
        a[s] = log(v[0]);
        f[0] = sized(st_h2d(5), 4);
        rates(be, f, 1, 1, v, NULL);
        b[s] = log(v[0]);
        st_close(be);
    }
    double ma = 0, mb = 0, sab = 0, saa = 0, sbb = 0;
    for (int s = 0; s < SEEDS; s++) {
        ma += a[s] / SEEDS;
        mb += b[s] / SEEDS;
    }
    for (int s = 0; s < SEEDS; s++) {
        sab += (a[s] - ma) * (b[s] - mb);
        saa += (a[s] - ma) * (a[s] - ma);
        sbb += (b[s] - mb) * (b[s] - mb);
    }
    /* common 1.5 and own 0.75 (and 0.4 of jitter): correlation about 0.7 */
    const gq_sim_noise_params *p = &gq_sim_noise_bw[GQ_SIM_PC_HOST];
    double c2 = p->drift_common * p->drift_common,
           want = c2 / (c2 + p->drift_path * p->drift_path + p->jitter[0] * p->jitter[0]);
    st_near(sab / sqrt(saa * sbb), want, 0.2, "correlation of two GPUs' host drift");
}

/* ---- start skew, slow rounds -------------------------------------------------- */

/* Each worker leaves the barrier within FRAC x 10 ms of the first: two
 * workers' starts are apart by a third of that on average. */
static void skew_scales(void **state)
{
    (void)state;
    enum { CALLS = 600 };
    double v[CALLS * 2], st[CALLS * 2], mean[2];
    for (int k = 0; k < 2; k++) {
        double frac = 0.01 * (k + 1), d = frac * GQ_SIM_SKEW_S, sum = 0, max = 0;
        gq_backend *be = st_open("h200x2", 11, frac);
        gq_flow f[2] = {sized(st_h2d(0), 4), sized(st_h2d(1), 4)};
        rates(be, f, 2, CALLS, v, st);
        st_close(be);
        for (int c = 0; c < CALLS; c++) {
            double x = fabs(st[2 * c] - st[2 * c + 1]);
            sum += x;
            if (x > max)
                max = x;
        }
        mean[k] = sum / CALLS;
        st_near(mean[k], d / 3, 0.12, "mean start skew of two workers, FRAC %.2f", frac);
        assert_true(max <= d && max > 0.8 * d);
    }
    st_near(mean[1] / mean[0], 2.0, 0.15, "skew at 2%% / at 1%%");
}

/* A slow round: a flow runs 2 to 6 x FRAC slower in a share of rounds, 0.5 %
 * for a host flow alone, 5 % for one of a pair that shares a link (the
 * run's 10 % spread over however many share). */
static void slow_rounds(void **state)
{
    (void)state;
    enum { CALLS = 8000 };
    const double frac = 0.01;
    double *v = malloc(sizeof *v * CALLS * 2);
    assert_non_null(v);
    int nslow;
    gq_backend *be = st_open("h200x2", 3, frac);
    gq_flow one[1] = {sized(st_h2d(1), 4)};
    rates(be, one, 1, CALLS, v, NULL);
    /* alone: jitter within +-0.4 FRAC, slow rounds at least 2 FRAC down */
    (void)log_sd(v, CALLS, 1.0 * frac, &nslow);
    double p = gq_sim_noise_bw[GQ_SIM_PC_HOST].slow_p[0];
    st_within((double)nslow / CALLS, p * 0.6, p * 1.4, 0, "share of slow rounds, host flow alone");
    /* shared: the flow's parts say which rounds are slow; none is missed */
    int slowed = 0;
    for (int c = 0; c < CALLS; c++) {
        gq_sim_noise_parts x;
        gq_sim_flow_noise(3, frac, 1.0, GQ_SIM_PC_HOST, 2, 42, 7, (uint64_t)c, &x);
        slowed += x.slowed;
        assert_true(!x.slowed || (x.slow >= GQ_SIM_SLOW_MIN && x.slow <= GQ_SIM_SLOW_MAX));
        assert_true(x.slowed || x.slow == 0);
    }
    p = gq_sim_noise_bw[GQ_SIM_PC_HOST].slow_p[1];
    st_within((double)slowed / CALLS, p * 0.8, p * 1.2, 0, "share of slow rounds, shared host flow");
    /* eight flows sharing: the run's slow rounds spread over them, a quarter each */
    slowed = 0;
    for (int c = 0; c < CALLS; c++) {
        gq_sim_noise_parts x;
        gq_sim_flow_noise(3, frac, 1.0, GQ_SIM_PC_HOST, 8, 42, 7, (uint64_t)c, &x);
        slowed += x.slowed;
    }
    st_within((double)slowed / CALLS, p / 4 * 0.7, p / 4 * 1.3, 0, "share of slow rounds, one of 8 sharing");
    st_close(be);
    free(v);
}

/* ---- latency, telemetry -------------------------------------------------------- */

static double latency_ns(gq_backend *be, int gpu, gq_endpoint target)
{
    gq_latency_req q = {.kind = GQ_LAT_POINTER_CHASE, .exec_gpu = gpu, .target = target, .iters = 1000};
    double ns = 0;
    gq_err e = {0};
    if (be->ops->latency(be, &q, &ns, &e))
        fail_msg("latency: %s", e.msg);
    return ns;
}

/* A latency figure moves from query to query by its jitter (host: 1.0 x
 * FRAC), twice as much at twice the noise, and not at all without noise. */
static void latency_scales(void **state)
{
    (void)state;
    enum { CALLS = 1500 };
    double v[CALLS], sd[2];
    for (int k = 0; k < 2; k++) {
        double frac = 0.01 * (k + 1);
        gq_backend *be = st_open("h200x2", 21, frac);
        for (int c = 0; c < CALLS; c++)
            v[c] = latency_ns(be, 0, (gq_endpoint){GQ_EP_HOST, GQ_NUMA_LOCAL});
        st_close(be);
        sd[k] = log_sd(v, CALLS, 1.0, NULL);
        st_near(sd[k], gq_sim_noise_lat[GQ_SIM_PC_HOST].jitter[0] * frac / SQRT6, 0.15,
                "host latency sd, FRAC %.2f", frac);
    }
    st_near(sd[1] / sd[0], 2.0, 0.1, "latency sd at 2%% / at 1%%");
    double q[3];
    for (int s = 0; s < 3; s++) {
        gq_backend *be = st_open("h200x2", 1 + (uint64_t)s * 1000, 0);
        q[s] = latency_ns(be, 1, (gq_endpoint){GQ_EP_GPU, 0});
        assert_true(latency_ns(be, 1, (gq_endpoint){GQ_EP_GPU, 0}) == q[s]);
        st_close(be);
    }
    assert_true(q[0] == q[1] && q[1] == q[2]);
}

/* Under a stress load the telemetry's readings scatter in proportion to the
 * noise scale, the topology's when --sim-noise is not given. */
static double power_sd(double frac, uint64_t seed, double *first)
{
    enum { N = 400 };
    gq_backend *be = st_open("h200x2", seed, frac);
    gq_err e = {0};
    if (be->ops->stress_start(be, 0, GQ_PREC_FP32, &e))
        fail_msg("stress_start: %s", e.msg);
    be->ops->wait(be, 30);
    double s = 0, s2 = 0;
    for (int i = 0; i < N; i++) {
        gq_sample x;
        be->ops->wait(be, 0.001);
        if (be->ops->sample(be, 0, &x, &e))
            fail_msg("sample: %s", e.msg);
        if (i == 0 && first)
            *first = x.sm_clock_mhz;
        s += x.sm_clock_mhz;
        s2 += x.sm_clock_mhz * x.sm_clock_mhz;
    }
    be->ops->stress_stop(be, 0, &e);
    st_close(be);
    double m = s / N;
    return sqrt(fmax(0, s2 / N - m * m)) / m;
}

static void telemetry_scales(void **state)
{
    (void)state;
    double a = power_sd(0.01, 4, NULL), b = power_sd(0.02, 4, NULL), c0, c1;
    assert_true(a > 0);
    st_near(b / a, 2.0, 0.15, "clock readings' scatter at 2%% / at 1%%");
    assert_true(power_sd(0, 4, &c0) == 0 && power_sd(0, 5, &c1) == 0 && c0 == c1);
    /* not given: the topology's noise (h200x2 says 1 %), the same readings */
    double t0, t1;
    power_sd(-1, 4, &t0);
    power_sd(GQ_SIM_NOISE_DEFAULT, 4, &t1);
    assert_true(t0 == t1);
}

/* ---- quiet, determinism ---------------------------------------------------------- */

/* FRAC 0: every seed gives the same figures and windows, bit for bit, round
 * by round; with noise on, the same seed gives the same figures again. */
static void quiet_and_deterministic(void **state)
{
    (void)state;
    gq_flow f[4] = {sized(st_h2d(0), 64), sized(st_d2h(3), 64), sized(st_p2p(1, 2, GQ_METHOD_CE), 64),
                    sized(st_p2p(4, 4, GQ_METHOD_CE), 64)};
    const char *machines[] = {"rtxpro6000x8", "rtx4090x8"};
    for (int mi = 0; mi < 2; mi++) {
        st_out ref[3], o;
        for (int s = 0; s < 4; s++) {
            gq_backend *be = st_open(machines[mi], 1 + (uint64_t)s * 31337, 0);
            for (int r = 0; r < 3; r++) {
                if (r == 2)
                    st_run(be, f, 4, 0, 5, &o); /* by count as well as by duration */
                else
                    st_run(be, f, 4, 0.3, 0, &o);
                if (s == 0)
                    ref[r] = o;
                for (int i = 0; i < 4; i++) {
                    assert_memory_equal(&o.start[i], &ref[r].start[i], sizeof(double));
                    assert_memory_equal(&o.end[i], &ref[r].end[i], sizeof(double));
                    assert_memory_equal(&o.gbps[i], &ref[r].gbps[i], sizeof(double));
                    assert_true(o.res[i].bytes_done == ref[r].res[i].bytes_done);
                }
            }
            st_close(be);
        }
        /* noise on: the same seed, the same figures; another seed, others */
        st_out a, b, c;
        gq_backend *be = st_open(machines[mi], 12, 0.01);
        st_run(be, f, 4, 0.3, 0, &a);
        st_close(be);
        be = st_open(machines[mi], 12, 0.01);
        st_run(be, f, 4, 0.3, 0, &b);
        st_close(be);
        be = st_open(machines[mi], 13, 0.01);
        st_run(be, f, 4, 0.3, 0, &c);
        st_close(be);
        for (int i = 0; i < 4; i++) {
            assert_memory_equal(&a.gbps[i], &b.gbps[i], sizeof(double));
            assert_memory_equal(&a.start[i], &b.start[i], sizeof(double));
            assert_true(a.gbps[i] != c.gbps[i]);
        }
    }
    /* the model itself: FRAC 0 multiplies by exactly 1 and delays nothing */
    for (uint64_t k = 0; k < 1000; k++) {
        assert_true(gq_sim_flow_noise(k, 0, 1.0, (gq_sim_path_class)(k % GQ_SIM_NPC), (int)(k % 4), k, k * 3,
                                      k, NULL) == 1.0);
        assert_true(gq_sim_start_delay(k, 0, k, k) == 0.0);
        assert_true(gq_sim_latency_noise(k, 0, GQ_SIM_PC_HOST, k, k) == 1.0);
    }
}

/* ---- the skew hook ----------------------------------------------------------------- */

/* h200x2 with `noise` replaced by the given line, written to a file. */
static void skew_topology(const char *noise_line, char *path, size_t len)
{
    const gq_sim_builtin *b = NULL;
    for (int i = 0; i < gq_sim_nbuiltins; i++)
        if (!strcmp(gq_sim_builtins[i].name, "h200x2"))
            b = &gq_sim_builtins[i];
    assert_non_null(b);
    const char *at = strstr(b->text, "\nnoise ");
    assert_non_null(at);
    const char *eol = strchr(at + 1, '\n');
    assert_non_null(eol);
    snprintf(path, len, "/tmp/gq-test-skew-XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *fp = fdopen(fd, "w");
    assert_non_null(fp);
    fprintf(fp, "%.*s\n%s%.*s", (int)(at - b->text), b->text, noise_line,
            (int)(b->len - (size_t)(eol - b->text)), eol);
    assert_int_equal(fclose(fp), 0);
}

/* `noise 0 % skew 2 ms rounds 50 %`: in about half the runs one worker
 * leaves the barrier 2 ms after the others, which start together; without
 * `rounds`, in every run. */
static void skew_hook(void **state)
{
    (void)state;
    enum { CALLS = 400 };
    char path[64];
    double v[CALLS * 2], st[CALLS * 2];
    gq_flow f[2] = {sized(st_h2d(0), 4), sized(st_d2h(1), 4)};
    skew_topology("noise 0 % skew 2 ms rounds 50 %", path, sizeof path);
    gq_backend *be = st_open(path, 9, -1);
    rates(be, f, 2, CALLS, v, st);
    st_close(be);
    int late = 0;
    for (int c = 0; c < CALLS; c++) {
        double d = fabs(st[2 * c] - st[2 * c + 1]);
        if (d > 0) {
            st_near(d, 2e-3, 1e-9, "late start in run %d", c);
            late++;
        }
    }
    st_within((double)late / CALLS, 0.42, 0.58, 0, "share of runs with a late worker");
    unlink(path);
    skew_topology("noise 1 % skew 5 ms", path, sizeof path);
    be = st_open(path, 9, -1);
    rates(be, f, 2, 50, v, st);
    st_close(be);
    unlink(path);
    for (int c = 0; c < 50; c++) /* 5 ms, give or take the noise's own skew of 100 us */
        st_within(fabs(st[2 * c] - st[2 * c + 1]), 4.9e-3, 5.1e-3, 0, "late start in run %d", c);
    /* the ready-made machine for the harness's tests: 3 ms late in a fifth of the runs */
    be = st_open(GQ_TEST_DATA "/data/topo/h200x2-late-start.topo", 4, -1);
    rates(be, f, 2, CALLS, v, st);
    st_close(be);
    late = 0;
    for (int c = 0; c < CALLS; c++)
        late += fabs(st[2 * c] - st[2 * c + 1]) > 2.8e-3;
    st_within((double)late / CALLS, 0.15, 0.25, 0, "share of runs with a worker 3 ms late");
}

/* The hook's grammar: `rounds` needs `skew`; a skew is at most 1 s. */
static void skew_grammar(void **state)
{
    (void)state;
    static const struct {
        const char *text, *msg;
    } bad[] = {
        {"machine m\nnoise 1 % rounds 10 %\n",
         "t:2:18: 'rounds' says how often the skew comes; give 'skew TIME' too"},
        {"machine m\nnoise 1 % skew 2 s\n",
         "t:2:16: a start skew of 2 s is longer than a round; at most 1 s"},
        {"machine m\nnoise 1 % skew 1 ms rounds 120 %\n",
         "t:2:28: 'rounds' is 120 %; it must be between 0 % and 100 %"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        gq_sim_machine *m = NULL;
        gq_err e = {0};
        assert_int_equal(gq_sim_parse(bad[i].text, strlen(bad[i].text), "t", &m, &e), GQ_E_USAGE);
        assert_string_equal(e.msg, bad[i].msg);
        assert_null(m);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(quiet_and_deterministic),
        cmocka_unit_test(jitter_scales),
        cmocka_unit_test(every_part_linear),
        cmocka_unit_test(drift_by_class),
        cmocka_unit_test(drift_common_part),
        cmocka_unit_test(skew_scales),
        cmocka_unit_test(slow_rounds),
        cmocka_unit_test(latency_scales),
        cmocka_unit_test(telemetry_scales),
        cmocka_unit_test(skew_hook),
        cmocka_unit_test(skew_grammar),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
