/* GPU test of the CUDA backend's transfer side, through the ops struct.
 * Needs a GPU (never run in CI); tests/gpu/run.sh builds and runs it.
 *
 *   test_cuda_backend [--quick] [--size MIB] [--rounds N] [--no-tuning] [--tuning-all] [--no-latency]
 *
 * For every path: runs the flows of one measurement for N rounds (default 5)
 * and checks that each rate is positive, below the path's theoretical
 * capacity, and that the data pattern verified; prints one table of figures
 * with the targets and the reference beside them. Targets are
 * reported (MEETS / MISSES), not asserted: figures differ between hosts.
 * A figure with a reference is bounded: at least 90 % of it (a latency at
 * most reference / 0.9), the reference being nvbandwidth's JSON from the
 * same call (GQ_REF_JSON) or the saved one for this machine (bench/reference;
 * p2pBandwidthLatencyTest's for the P2P-disabled and copy-latency figures);
 * without one the bounds are skipped and the reason printed (gpu_ref.h).
 * The tuning section's figures (knobs away from their defaults) show the
 * reference but are not bounded.
 * A destination corrupted on purpose (the backend's test-only hook,
 * gq_cuda_test_corrupt_dst) must fail the data check at the corrupted byte,
 * and the same flow untouched must pass it.
 * The tuning section measures the backend's knobs (host allocation, SM grid,
 * staging ring, chase order) so that the defaults can be chosen from data.
 * Exit status: 0 when every check passed, 1 otherwise.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "backend/backend.h"
#include "backend/cuda/cuda_internal.h"
#include "core/record.h"
#include "core/units.h"
#include "gpu_ref.h"
#include "topo/topo.h"

#define MAXF 8

extern const gq_backend_ops gq_backend_cuda_ops;

static int failures, checks;
static int opt_rounds = 5;
static uint64_t opt_bytes = 512 * GQ_MiB;
static bool opt_quick, opt_tuning = true, opt_tuning_all, opt_latency = true;
static gpu_ref *ref;   /* NULL: no reference, bounds skipped */
static bool in_tuning; /* figures of knobs away from their defaults: not bounded */
static int bounds_checked, bounds_failed;

/* The reference's figure for one of nvbandwidth's cells (gpu_ref.h), 0 = none. */
/* The nvbandwidth test whose figure the next add_fig() is held to (set by
 * refn(), which is evaluated as add_fig's argument; NULL for other references):
 * its documented variation widens the bound (gpu_ref_variation). */
static const char *fig_ref_test;

static double refn(const char *test, int row, int col)
{
    double v = 0;
    fig_ref_test = test;
    return ref && gpu_ref_nvbw(ref, test, row, col, &v) ? v : 0;
}

/* p2pBandwidthLatencyTest's figure (GB/s, or ns for its latency matrices), 0 = none. */
static double refp(const char *matrix, int row, int col)
{
    double v = 0;
    return ref && gpu_ref_p2p(ref, matrix, row, col, &v) ? v : 0;
}
#define P2P_UNI_OFF "Unidirectional P2P=Disabled Bandwidth Matrix"
#define P2P_BI_OFF "Bidirectional P2P=Disabled Bandwidth Matrix"
#define P2P_LAT_OFF "P2P=Disabled Latency Matrix"
#define P2P_LAT_ON "P2P=Enabled Latency (P2P Writes) Matrix"

static void check(bool ok, const char *what, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void check(bool ok, const char *what, const char *fmt, ...)
{
    checks++;
    if (ok)
        return;
    failures++;
    va_list ap;
    va_start(ap, fmt);
    printf("FAIL %s: ", what);
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
}

/* ---- the table ------------------------------------------------------------ */

typedef struct fig {
    char name[80];
    gq_stat v;
    const char *unit;
    double target; /* 0 = none */
    bool lower_better;
    double ref;         /* nvbandwidth / p2pBandwidthLatencyTest (gpu_ref.h); 0 = none */
    double cap;         /* theoretical capacity; 0 = n/a */
    double bound;       /* the bound held to ref (gpu_ref_bound_for); 0 = none */
    const char *vs_ref; /* the bound's verdict: "ok", "BELOW", "ABOVE", "tuning", "" (no reference) */
} fig;

static fig figs[256];
static int nfigs;

static void add_fig(const char *name, gq_stat v, const char *unit, double target, bool lower, double ref,
                    double cap)
{
    if (nfigs == (int)(sizeof figs / sizeof figs[0]))
        return;
    fig *f = &figs[nfigs++];
    snprintf(f->name, sizeof f->name, "%s", name);
    f->v = v;
    f->unit = unit;
    f->target = target;
    f->lower_better = lower;
    f->ref = ref;
    f->cap = cap;
    f->bound = ref > 0 ? gpu_ref_bound_for(fig_ref_test, ref, lower) : 0;
    f->vs_ref = "";
    if (ref > 0 && in_tuning) {
        f->vs_ref = "tuning";
    } else if (ref > 0) {
        double b = f->bound;
        bool ok = lower ? v.median <= b : v.median >= b;
        bounds_checked++;
        bounds_failed += !ok;
        f->vs_ref = ok ? "ok" : lower ? "ABOVE" : "BELOW";
        check(ok, name, "%.2f %s %s the bound %.2f (%.1f %% of the reference %.2f)", v.median, unit,
              lower ? "above" : "below", b, 100 * b / ref, ref);
    }
    fig_ref_test = NULL;
    /* As it comes, so that a run cut short still shows what it measured. */
    printf("  %-50s %10.2f %s  [%.2f .. %.2f] spread %.3f%%\n", f->name, v.median, unit, v.min, v.max,
           100 * v.spread);
    fflush(stdout);
}

static void print_table(void)
{
    printf("\n%-50s %10s %10s %10s %8s %6s %9s %9s %9s %8s  %-9s %s\n", "figure", "median", "min", "max",
           "spread%", "unit", "target", "reference", "bound", "capacity", "vs target", "vs bound");
    for (int i = 0; i < nfigs; i++) {
        fig *f = &figs[i];
        const char *verdict = "";
        if (f->target > 0)
            verdict =
                (f->lower_better ? f->v.median <= f->target : f->v.median >= f->target) ? "MEETS" : "MISSES";
        printf("%-50s %10.2f %10.2f %10.2f %8.3f %6s %9.1f %9.2f %9.2f %8.1f  %-9s %s\n", f->name,
               f->v.median, f->v.min, f->v.max, 100 * f->v.spread, f->unit, f->target, f->ref,
               f->ref > 0 ? f->bound : 0.0, f->cap, verdict, f->vs_ref);
    }
}

/* ---- measuring ---------------------------------------------------------------- */

typedef struct mres {
    int n;
    gq_stat flow[MAXF];
    gq_stat sum;
    double overlap_min;
    int host_numa_actual[MAXF];
    bool ok;
} mres;

static double overlap(const gq_flow_result *r, int n)
{
    double ms = -1e300, me = 1e300;
    for (int i = 0; i < n; i++) {
        ms = r[i].t_start > ms ? r[i].t_start : ms;
        me = r[i].t_end < me ? r[i].t_end : me;
    }
    double shared = me - ms > 0 ? me - ms : 0, o = 1;
    for (int i = 0; i < n; i++) {
        double own = r[i].t_end - r[i].t_start;
        if (own > 0 && shared / own < o)
            o = shared / own;
    }
    return o;
}

/* Run flows for opt_rounds rounds of about window_s each (duration mode when
 * by_time), checking each round. cap[i]: capacity of flow i's path, GB/s. */
static bool measure(gq_backend *be, const char *name, const gq_flow *fl, int n, const double *cap,
                    bool by_time, mres *m)
{
    gq_err err = {0};
    gq_group *g = NULL;
    memset(m, 0, sizeof *m);
    m->n = n;
    m->overlap_min = 1;
    int rc = be->ops->prepare(be, fl, n, &g, &err);
    check(rc == GQ_OK, name, "prepare: %s", err.msg);
    if (rc != GQ_OK)
        return false;
    gq_flow_result res[MAXF];
    /* Warm-up, and a first rate to size the rounds from. */
    gq_run_opts wo = {.reps = 2, .verify = false};
    rc = be->ops->run(be, g, &wo, res, &err);
    check(rc == GQ_OK, name, "warm-up run: %s", err.msg);
    double est = 1e30;
    for (int i = 0; rc == GQ_OK && i < n; i++) {
        check(res[i].status == GQ_OK, name, "warm-up flow %d: %s", i, res[i].error);
        double w = res[i].t_end - res[i].t_start;
        double r = w > 0 ? (double)res[i].bytes_done / w : 1e9;
        est = r < est ? r : est;
    }
    const double window = opt_quick ? 0.05 : 0.2;
    long reps = (long)(window * est / (double)fl[0].bytes);
    reps = reps < 2 ? 2 : reps > 100000 ? 100000 : reps;
    double vals[MAXF][GQ_MAX_ROUNDS], sums[GQ_MAX_ROUNDS];
    bool ok = rc == GQ_OK;
    for (int round = 0; ok && round < opt_rounds; round++) {
        gq_run_opts o = {.reps = by_time ? 0 : (int)reps, .duration_s = by_time ? window : 0, .verify = true};
        rc = be->ops->run(be, g, &o, res, &err);
        check(rc == GQ_OK, name, "run: %s", err.msg);
        if (rc != GQ_OK) {
            ok = false;
            break;
        }
        sums[round] = 0;
        for (int i = 0; i < n; i++) {
            const gq_flow_result *r = &res[i];
            double w = r->t_end - r->t_start;
            double gbps = w > 0 ? (double)r->bytes_done / w / 1e9 : 0;
            vals[i][round] = gbps;
            sums[round] += gbps;
            check(r->status == GQ_OK, name, "flow %d round %d: %s", i, round, r->error);
            check(r->verified && r->verify_ok, name,
                  "flow %d round %d: verification %s (first bad byte %llu)", i, round,
                  r->verified ? "failed" : "did not run", (unsigned long long)r->bad_offset);
            check(gbps > 0, name, "flow %d round %d: rate %.3f GB/s is not positive", i, round, gbps);
            check(cap[i] <= 0 || gbps < cap[i], name,
                  "flow %d round %d: %.2f GB/s above the path capacity %.1f", i, round, gbps, cap[i]);
            check(r->bytes_done == (uint64_t)r->copies_done * fl[i].bytes, name,
                  "flow %d: bytes_done %llu is not copies x bytes", i, (unsigned long long)r->bytes_done);
            if (!by_time)
                check(r->copies_done == o.reps, name, "flow %d: %d copies done, %d asked", i, r->copies_done,
                      o.reps);
            else
                check(w <= window * 1.0001 + 1e-4 || r->copies_done == 1, name,
                      "flow %d: window %.4f s longer than the duration %.3f s", i, w, window);
            bool host = fl[i].src.kind == GQ_EP_HOST || fl[i].dst.kind == GQ_EP_HOST ||
                        fl[i].method == GQ_METHOD_STAGED;
            check(host ? r->host_numa_actual != -2 : r->host_numa_actual == -1, name,
                  "flow %d: host pages placement %d (-2 = spread over nodes)", i, r->host_numa_actual);
            m->host_numa_actual[i] = r->host_numa_actual;
            ok = ok && r->status == GQ_OK && r->verify_ok;
        }
        double ov = overlap(res, n);
        m->overlap_min = ov < m->overlap_min ? ov : m->overlap_min;
    }
    if (ok) {
        for (int i = 0; i < n; i++)
            m->flow[i] = gq_stat_compute(vals[i], opt_rounds);
        m->sum = gq_stat_compute(sums, opt_rounds);
    }
    be->ops->release(be, g);
    m->ok = ok;
    return ok;
}

static gq_flow mk(gq_ep_kind sk, int si, gq_ep_kind dk, int di, gq_method m, int exec, uint64_t bytes)
{
    return (gq_flow){.src = {sk, si}, .dst = {dk, di}, .method = m, .exec_gpu = exec, .bytes = bytes};
}

/* One group, one run with the given options, each flow's result checked
 * for status and (when asked) its data; returns false when anything failed. */
static bool run_once(gq_backend *be, const char *name, const gq_flow *fl, int n, const gq_run_opts *o,
                     gq_flow_result *res)
{
    gq_err err = {0};
    gq_group *g = NULL;
    int rc = be->ops->prepare(be, fl, n, &g, &err);
    check(rc == GQ_OK, name, "prepare: %s", err.msg);
    if (rc != GQ_OK)
        return false;
    gq_run_opts w = {.reps = 1};
    rc = be->ops->run(be, g, &w, res, &err); /* warm-up */
    if (rc == GQ_OK)
        rc = be->ops->run(be, g, o, res, &err);
    check(rc == GQ_OK, name, "run: %s", err.msg);
    bool ok = rc == GQ_OK;
    for (int i = 0; ok && i < n; i++) {
        check(res[i].status == GQ_OK, name, "flow %d: %s", i, res[i].error);
        if (o->verify && !fl[i].interferer)
            check(res[i].verified && res[i].verify_ok, name, "flow %d: verification %s (first bad byte %llu)",
                  i, res[i].verified ? "failed" : "did not run", (unsigned long long)res[i].bad_offset);
        ok = ok && res[i].status == GQ_OK && (!o->verify || fl[i].interferer || res[i].verify_ok);
    }
    be->ops->release(be, g);
    return ok;
}

static double rate_of(const gq_flow_result *r)
{
    double w = r->t_end - r->t_start;
    return w > 0 ? (double)r->bytes_done / w / 1e9 : 0;
}

/* ---- capacities ------------------------------------------------------------------ */

static gq_topo topo;
static bool have_topo;

static double pcie_cap(int g)
{
    if (have_topo && g < topo.ngpu && topo.gpu[g].pcie_gbps > 0)
        return topo.gpu[g].pcie_gbps;
    return gq_pcie_gbps(5, 16); /* what the reference machine negotiates */
}

static double nvlink_cap(int a, int b)
{
    if (have_topo && topo.nvlinks[a][b] > 0 && topo.gpu[a].nvlink_gbps_per_link > 0)
        return topo.nvlinks[a][b] * topo.gpu[a].nvlink_gbps_per_link;
    return 18 * 25.0; /* NVLink 4, 18 links (H200 SXM) */
}

#define HBM_CAP 4800.0 /* H200 HBM3e, read + write together */

/* ---- the data check must fail on a corrupted destination ------------------------ */

/* One flow, run twice with its data checked: first with the backend's
 * test-only hook armed to flip the byte at `off` of the destination after the
 * copy (the check must fail, first bad byte `want`), then untouched (it must pass). */
static void corrupt_case(gq_backend *be, const char *name, gq_flow f, uint64_t off, uint64_t want)
{
    gq_err err = {0};
    gq_group *g = NULL;
    int rc = be->ops->prepare(be, &f, 1, &g, &err);
    check(rc == GQ_OK, name, "prepare: %s", err.msg);
    if (rc != GQ_OK)
        return;
    gq_run_opts o = {.reps = 1, .verify = true};
    gq_flow_result r;
    char got[160] = "did not run";
    check(gq_cuda_test_corrupt_dst(be, off, 1, &err) == GQ_OK, name, "arming the hook: %s", err.msg);
    rc = be->ops->run(be, g, &o, &r, &err);
    check(rc == GQ_OK && r.status == GQ_OK, name, "corrupted run: %s", rc != GQ_OK ? err.msg : r.error);
    if (rc == GQ_OK && r.status == GQ_OK) {
        check(gq_cuda_test_corrupt_pending(be) == 0, name, "the hook was not used: no data check ran");
        check(r.verified && !r.verify_ok, name, "a corrupted destination passed the data check (verified %d)",
              r.verified);
        check(r.verify_ok || r.bad_offset == want, name, "first bad byte %llu; byte %llu was corrupted",
              (unsigned long long)r.bad_offset, (unsigned long long)want);
        snprintf(got, sizeof got, "%s (first bad byte %llu)", r.verify_ok ? "PASSED" : "failed",
                 (unsigned long long)r.bad_offset);
    }
    gq_cuda_test_corrupt_dst(be, 0, 0, &err); /* disarm, whatever happened */
    rc = be->ops->run(be, g, &o, &r, &err);
    check(rc == GQ_OK && r.status == GQ_OK, name, "untouched run: %s", rc != GQ_OK ? err.msg : r.error);
    bool ok = rc == GQ_OK && r.status == GQ_OK && r.verified && r.verify_ok;
    check(rc != GQ_OK || r.status != GQ_OK || ok, name, "untouched: verification %s (first bad byte %llu)",
          r.verified ? "failed" : "did not run", (unsigned long long)r.bad_offset);
    printf("%-50s corrupted byte %llu: data check %s; untouched: %s\n", name, (unsigned long long)want, got,
           ok ? "passed" : "FAILED");
    be->ops->release(be, g);
}

/* ---- one path at a time --------------------------------------------------------- */

static void one(gq_backend *be, const char *name, gq_flow f, double cap, double target, double ref)
{
    mres m;
    if (measure(be, name, &f, 1, &cap, false, &m))
        add_fig(name, m.flow[0], "GB/s", target, false, ref, cap);
}

static void latency(gq_backend *be, const char *name, gq_latency_req r, double target, double ref, int rounds)
{
    double v[GQ_MAX_ROUNDS];
    gq_err err = {0};
    for (int i = 0; i < rounds; i++) {
        int rc = be->ops->latency(be, &r, &v[i], &err);
        check(rc == GQ_OK, name, "latency: %s", err.msg);
        if (rc != GQ_OK)
            return;
        check(v[i] > 0 && v[i] < 1e6, name, "latency %.1f ns is not plausible", v[i]);
    }
    add_fig(name, gq_stat_compute(v, rounds), "ns", target, true, ref, 0);
}

static void tune(gq_backend *be, void (*edit)(gq_cuda_tune *, int), int arg)
{
    gq_cuda_tune t;
    gq_err err = {0};
    gq_cuda_tune_get(be, &t);
    edit(&t, arg);
    check(gq_cuda_tune_set(be, &t, &err) == GQ_OK, "tune", "%s", err.msg);
}
static void t_host(gq_cuda_tune *t, int a)
{
    t->host_alloc = a;
}
static void t_blocks(gq_cuda_tune *t, int a)
{
    t->sm_blocks_per_sm = a;
}
static void t_stage(gq_cuda_tune *t, int a)
{
    t->stage_bufs = a;
}
static void t_window(gq_cuda_tune *t, int a)
{
    t->chase_window = (uint64_t)a;
}
static void t_sms(gq_cuda_tune *t, int a)
{
    t->chase_sms = a;
}
static void t_unit(gq_cuda_tune *t, int mib)
{
    t->sm_unit_bytes = (uint64_t)mib * GQ_MiB;
}

/* The first run's knobs: host allocation, SM grid, staging ring, chase order. */
static void tuning_all(gq_backend *be, int ngpu, uint64_t B)
{
    const gq_ep_kind H = GQ_EP_HOST, G = GQ_EP_GPU;
    const int L = GQ_NUMA_LOCAL;
    gq_cuda_tune def;
    gq_err err;
    gq_cuda_tune_get(be, &def);
    static const char *hn[] = {"auto", "cudaHostAlloc", "numa+register"};
    for (int a = 1; a <= 2; a++) {
        char n1[80];
        tune(be, t_host, a);
        snprintf(n1, sizeof n1, "tune host=%s: h2d ce gpu0", hn[a]);
        one(be, n1, mk(H, L, G, 0, GQ_METHOD_CE, 0, B), pcie_cap(0), 55.1,
            refn("host_to_device_memcpy_ce", 0, 0));
        snprintf(n1, sizeof n1, "tune host=%s: d2h ce gpu0", hn[a]);
        one(be, n1, mk(G, 0, H, L, GQ_METHOD_CE, 0, B), pcie_cap(0), 55.1,
            refn("device_to_host_memcpy_ce", 0, 0));
    }
    gq_cuda_tune_set(be, &def, &err);
    for (int bps = 1; bps <= 2; bps++) {
        char n1[80];
        tune(be, t_blocks, bps);
        snprintf(n1, sizeof n1, "tune sm blocks/SM=%d: h2d sm gpu0", bps);
        one(be, n1, mk(H, L, G, 0, GQ_METHOD_SM, 0, B), pcie_cap(0), 51,
            refn("host_to_device_memcpy_sm", 0, 0));
        if (ngpu >= 2) {
            snprintf(n1, sizeof n1, "tune sm blocks/SM=%d: d2d read sm 1->0", bps);
            one(be, n1, mk(G, 1, G, 0, GQ_METHOD_SM, 0, B), nvlink_cap(0, 1), 376,
                refn("device_to_device_memcpy_read_sm", 0, 1));
        }
    }
    gq_cuda_tune_set(be, &def, &err);
    if (ngpu >= 2)
        for (int bufs = 2; bufs <= 4; bufs++) {
            char n1[80];
            tune(be, t_stage, bufs);
            snprintf(n1, sizeof n1, "tune staged bufs=%d chunk=8 MiB 0->1", bufs);
            one(be, n1, mk(G, 0, G, 1, GQ_METHOD_STAGED, 0, B), pcie_cap(0), 50, refp(P2P_UNI_OFF, 0, 1));
        }
    gq_cuda_tune_set(be, &def, &err);
    for (int one_sm = 0; one_sm <= 1 && ngpu >= 2; one_sm++) {
        char n1[80];
        tune(be, t_sms, one_sm);
        snprintf(n1, sizeof n1, "tune chase on %s: 0 reads 1", one_sm ? "one SM" : "every SM");
        latency(be, n1, (gq_latency_req){.kind = GQ_LAT_POINTER_CHASE, .target = {G, 1}, .exec_gpu = 0}, 829,
                refn("device_to_device_latency_sm", 0, 1), 3);
    }
    gq_cuda_tune_set(be, &def, &err);
    static const int wins[] = {128, 4096, 65536, 2 * 1024 * 1024};
    for (int i = 0; i < 4; i++) {
        char n1[80];
        tune(be, t_window, wins[i]);
        snprintf(n1, sizeof n1, "tune chase window=%d B: host latency gpu0", wins[i]);
        latency(be, n1, (gq_latency_req){.kind = GQ_LAT_POINTER_CHASE, .target = {H, L}, .exec_gpu = 0}, 1198,
                refn("host_device_latency_sm", 0, 0), 3);
    }
    gq_cuda_tune_set(be, &def, &err);
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick"))
            opt_quick = true, opt_rounds = 3;
        else if (!strcmp(argv[i], "--no-tuning"))
            opt_tuning = false;
        else if (!strcmp(argv[i], "--tuning-all"))
            opt_tuning_all = true;
        else if (!strcmp(argv[i], "--no-latency"))
            opt_latency = false;
        else if (!strcmp(argv[i], "--size") && i + 1 < argc)
            opt_bytes = strtoull(argv[++i], NULL, 10) * GQ_MiB;
        else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
            opt_rounds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--tests") && i + 1 < argc)
            i++; /* test_gpu_catalog's option: run.sh passes the same arguments to every program */
        else {
            fprintf(
                stderr,
                "usage: %s [--quick] [--size MIB] [--rounds N] [--no-tuning] [--tuning-all] [--no-latency]\n",
                argv[0]);
            return 2;
        }
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (opt_rounds < 1 || opt_rounds > GQ_MAX_ROUNDS)
        opt_rounds = 5;
    double t_begin = gq_now_mono();
    gq_backend be;
    gq_err err = {0};
    /* Registered directly: the program needs nothing of the sim backend. */
    if (gq_backend_register(&gq_backend_cuda_ops, &err) != GQ_OK) {
        printf("FAIL register: %s\n", err.msg);
        return 1;
    }
    if (gq_backend_open(&be, "cuda", NULL, &err) != GQ_OK) {
        printf("FAIL open: %s\n", err.msg);
        return 1;
    }
    gq_topo_init(&topo);
    have_topo = be.ops->discover(&be, &topo, &err) == GQ_OK && topo.ngpu > 0;
    int ngpu = 0;
    if (have_topo) {
        ngpu = topo.ngpu;
    } else {
        printf("note: discovery failed (%s); capacities assumed: PCIe Gen5 x16, 18 NVLinks\n", err.msg);
        uint64_t fr, tot;
        while (ngpu < GQ_MAX_GPUS && be.ops->mem_info(&be, ngpu, &fr, &tot, &err) == GQ_OK)
            ngpu++;
    }
    printf("GPUs: %d; buffer %llu MiB; rounds %d\n", ngpu, (unsigned long long)(opt_bytes / GQ_MiB),
           opt_rounds);
    check(ngpu >= 1, "gpus", "no GPU");
    char ref_why[1024] = "discovery failed: the machine is unknown";
    bool ref_failed = false;
    if (have_topo)
        ref = gpu_ref_open(&topo, &ref_failed, ref_why, sizeof ref_why);
    if (ref)
        printf("reference: %s\n", gpu_ref_source(ref));
    else
        printf("bounds %s: %s\n", ref_failed ? "FAILED" : "skipped", ref_why);
    check(ref || !ref_failed, "reference", "%s", ref_why);
    const uint64_t B = opt_bytes;
    const gq_ep_kind H = GQ_EP_HOST, G = GQ_EP_GPU;
    const int L = GQ_NUMA_LOCAL;

    /* mem_info / host_mem_avail / now. */
    {
        uint64_t fr = 0, tot = 0, av = 0;
        check(be.ops->mem_info(&be, 0, &fr, &tot, &err) == GQ_OK && fr > 0 && fr <= tot, "mem_info", "%s",
              err.msg);
        check(be.ops->mem_info(&be, ngpu, &fr, &tot, &err) == GQ_E_USAGE, "mem_info",
              "GPU %d should not exist", ngpu);
        check(be.ops->host_mem_avail(&be, -1, &av, &err) == GQ_OK && av > 0, "host_mem_avail", "%s", err.msg);
        check(be.ops->host_mem_avail(&be, 0, &av, &err) == GQ_OK && av > 0, "host_mem_avail node 0", "%s",
              err.msg);
        double a = be.ops->now(&be), b2 = be.ops->now(&be);
        check(a > 0 && b2 >= a, "now", "clock went back");
        gq_flow bad = mk(G, ngpu, G, 0, GQ_METHOD_CE, 0, B);
        gq_group *g = NULL;
        check(be.ops->prepare(&be, &bad, 1, &g, &err) == GQ_E_USAGE, "prepare bad gpu", "accepted GPU %d",
              ngpu);
        printf("mem_info gpu0: free %.1f GiB of %.1f GiB; MemAvailable %.1f GiB\n", (double)fr / GQ_GiB,
               (double)tot / GQ_GiB, (double)av / GQ_GiB);
    }

    /* The data check fails where a destination was corrupted on purpose (the
     * backend's test-only hook), at the corrupted byte, and passes untouched:
     * a GPU destination, a host one, the tail of an odd size (offset past the
     * end: the hook flips the last byte), and a peer's memory. */
    {
        const uint64_t off = 21 * GQ_MiB + 12345, odd = 3 * GQ_MiB + 12345;
        corrupt_case(&be, "corrupt h2d ce gpu0 (GPU destination)",
                     mk(H, L, G, 0, GQ_METHOD_CE, 0, 64 * GQ_MiB), off, off);
        corrupt_case(&be, "corrupt d2h sm gpu0 (host destination)",
                     mk(G, 0, H, L, GQ_METHOD_SM, 0, 64 * GQ_MiB), off, off);
        corrupt_case(&be, "corrupt local sm gpu0 (last byte of an odd size)",
                     mk(G, 0, G, 0, GQ_METHOD_SM, 0, odd), UINT64_MAX, odd - 1);
        if (ngpu >= 2)
            corrupt_case(&be, "corrupt read ce 1->0 (peer copy)",
                         mk(G, 1, G, 0, GQ_METHOD_CE, 0, 64 * GQ_MiB), off, off);
    }

    /* Correctness at awkward sizes: tails that are not a multiple of 16 bytes,
     * staging chunks that do not divide the copy. */
    {
        const uint64_t odd = 3 * GQ_MiB + 12345;
        gq_flow fl[] = {
            mk(H, L, G, 0, GQ_METHOD_CE, 0, odd),
            mk(G, 0, H, L, GQ_METHOD_SM, 0, odd),
            mk(H, L, G, 0, GQ_METHOD_SM, 0, 4097),
            mk(G, 0, G, 0, GQ_METHOD_SM, 0, odd),
        };
        for (size_t i = 0; i < sizeof fl / sizeof fl[0]; i++) {
            mres m;
            double cap = 0;
            char name[64];
            snprintf(name, sizeof name, "odd size %zu (%s, %llu B)", i, gq_method_name(fl[i].method),
                     (unsigned long long)fl[i].bytes);
            measure(&be, name, &fl[i], 1, &cap, false, &m);
        }
        if (ngpu >= 2) {
            gq_flow st = mk(G, 0, G, 1, GQ_METHOD_STAGED, 0, odd);
            st.chunk_bytes = 1 * GQ_MiB + 4096;
            gq_flow st2 = mk(G, 1, G, 0, GQ_METHOD_STAGED, 1, 4 * GQ_KiB);
            gq_flow sm = mk(G, 1, G, 0, GQ_METHOD_SM, 0, odd);
            mres m;
            double cap = 0;
            measure(&be, "odd size staged (1 MiB+4 KiB chunks)", &st, 1, &cap, false, &m);
            measure(&be, "small staged 4 KiB", &st2, 1, &cap, false, &m);
            measure(&be, "odd size sm p2p read", &sm, 1, &cap, false, &m);
        }
        /* Duration mode, small copies (units of many copies). */
        gq_flow small = mk(H, L, G, 0, GQ_METHOD_CE, 0, 64 * GQ_KiB);
        mres m;
        double cap = pcie_cap(0);
        if (measure(&be, "duration mode 64 KiB h2d ce", &small, 1, &cap, true, &m))
            add_fig("h2d ce 64 KiB (duration mode)", m.flow[0], "GB/s", 0, false, 0, cap);
    }

    /* Host <-> device. */
    for (int gi = 0; gi < ngpu; gi++) {
        char n1[64];
        double pc = pcie_cap(gi);
        {
            mres m;
            gq_flow f = mk(H, L, G, gi, GQ_METHOD_CE, gi, B);
            if (measure(&be, "h2d ce", &f, 1, &pc, false, &m)) {
                snprintf(n1, sizeof n1, "host_to_device_memcpy_ce gpu%d", gi);
                add_fig(n1, m.flow[0], "GB/s", 55.1, false, refn("host_to_device_memcpy_ce", 0, gi), pc);
                printf("  host buffer pages of gpu%d's flow read back on NUMA node %d\n", gi,
                       m.host_numa_actual[0]);
            }
        }
        snprintf(n1, sizeof n1, "device_to_host_memcpy_ce gpu%d", gi);
        one(&be, n1, mk(G, gi, H, L, GQ_METHOD_CE, gi, B), pc, 55.1, refn("device_to_host_memcpy_ce", 0, gi));
        snprintf(n1, sizeof n1, "host_to_device_memcpy_sm gpu%d", gi);
        one(&be, n1, mk(H, L, G, gi, GQ_METHOD_SM, gi, B), pc, 51, refn("host_to_device_memcpy_sm", 0, gi));
        snprintf(n1, sizeof n1, "device_to_host_memcpy_sm gpu%d", gi);
        one(&be, n1, mk(G, gi, H, L, GQ_METHOD_SM, gi, B), pc, 51, refn("device_to_host_memcpy_sm", 0, gi));
        /* Both directions at once: two flows, each direction and the sum. */
        gq_flow bi[2] = {mk(H, L, G, gi, GQ_METHOD_CE, gi, B), mk(G, gi, H, L, GQ_METHOD_CE, gi, B)};
        double caps[2] = {pc, pc};
        mres m;
        if (measure(&be, "bidirectional host ce", bi, 2, caps, false, &m)) {
            /* nvbandwidth's *_bidirectional_memcpy_ce: the same two copies, one reported */
            snprintf(n1, sizeof n1, "bidir host ce gpu%d: h2d", gi);
            add_fig(n1, m.flow[0], "GB/s", 0, false, refn("host_to_device_bidirectional_memcpy_ce", 0, gi),
                    pc);
            snprintf(n1, sizeof n1, "bidir host ce gpu%d: d2h", gi);
            add_fig(n1, m.flow[1], "GB/s", 0, false, refn("device_to_host_bidirectional_memcpy_ce", 0, gi),
                    pc);
            snprintf(n1, sizeof n1, "bidir host ce gpu%d: sum (overlap %.3f)", gi, m.overlap_min);
            add_fig(n1, m.sum, "GB/s", 0, false, 0, 2 * pc);
        }
    }
    if (ngpu >= 2) {
        /* Both GPUs to/from host at once (all_to_host / host_to_all). */
        gq_flow a[2] = {mk(G, 0, H, L, GQ_METHOD_CE, 0, B), mk(G, 1, H, L, GQ_METHOD_CE, 1, B)};
        gq_flow h[2] = {mk(H, L, G, 0, GQ_METHOD_CE, 0, B), mk(H, L, G, 1, GQ_METHOD_CE, 1, B)};
        double caps[2] = {pcie_cap(0), pcie_cap(1)};
        mres m;
        if (measure(&be, "all_to_host ce", a, 2, caps, false, &m)) {
            add_fig("all_to_host ce: gpu0", m.flow[0], "GB/s", 0, false, refn("all_to_host_memcpy_ce", 0, 0),
                    caps[0]);
            add_fig("all_to_host ce: gpu1", m.flow[1], "GB/s", 0, false, refn("all_to_host_memcpy_ce", 0, 1),
                    caps[1]);
        }
        if (measure(&be, "host_to_all ce", h, 2, caps, false, &m)) {
            add_fig("host_to_all ce: gpu0", m.flow[0], "GB/s", 0, false, refn("host_to_all_memcpy_ce", 0, 0),
                    caps[0]);
            add_fig("host_to_all ce: gpu1", m.flow[1], "GB/s", 0, false, refn("host_to_all_memcpy_ce", 0, 1),
                    caps[1]);
        }
    }

    /* nvbandwidth's split-warp SM copy: one kernel, both directions, half
     * the buffer each; both flows report the kernel's window, each its own
     * bytes, and both destinations are checked. nvbandwidth's
     * host_to_device_bidirectional_memcpy_sm (and device_to_host_..., the same
     * kernel) is this per-direction rate. */
    for (int gi = 0; gi < ngpu; gi++) {
        gq_flow sp[2] = {mk(H, L, G, gi, GQ_METHOD_SM, gi, B / 2), mk(G, gi, H, L, GQ_METHOD_SM, gi, B / 2)};
        sp[0].split_with = 2;
        sp[1].split_with = 1;
        double caps[2] = {pcie_cap(gi), pcie_cap(gi)};
        mres m;
        char n1[80];
        snprintf(n1, sizeof n1, "split-warp host sm gpu%d", gi);
        if (measure(&be, n1, sp, 2, caps, false, &m)) {
            check(m.overlap_min == 1.0, n1, "the pair's windows differ (overlap %.6f)", m.overlap_min);
            snprintf(n1, sizeof n1, "split-warp host sm gpu%d: h2d", gi);
            add_fig(n1, m.flow[0], "GB/s", 0, false, refn("host_to_device_bidirectional_memcpy_sm", 0, gi),
                    pcie_cap(gi));
            snprintf(n1, sizeof n1, "split-warp host sm gpu%d: d2h", gi);
            add_fig(n1, m.flow[1], "GB/s", 0, false, refn("device_to_host_bidirectional_memcpy_sm", 0, gi),
                    pcie_cap(gi));
        }
        /* odd sizes: the tail of a copy that is not whole 16-byte elements */
        gq_flow so[2] = {mk(H, L, G, gi, GQ_METHOD_SM, gi, 3 * GQ_MiB + 12345),
                         mk(G, gi, H, L, GQ_METHOD_SM, gi, 3 * GQ_MiB + 12345)};
        so[0].split_with = 2;
        so[1].split_with = 1;
        double c0 = 0;
        double cz[2] = {c0, c0};
        snprintf(n1, sizeof n1, "split-warp odd size gpu%d", gi);
        measure(&be, n1, so, 2, cz, false, &m);
        /* two pairs on one GPU share its SMs: the strided kernel, each pair its cut of the grid */
        gq_flow two[4] = {sp[0], sp[1], mk(H, L, G, gi, GQ_METHOD_SM, gi, B / 4),
                          mk(G, gi, H, L, GQ_METHOD_SM, gi, B / 4)};
        two[2].split_with = 4;
        two[3].split_with = 3;
        double c4[4] = {pcie_cap(gi), pcie_cap(gi), pcie_cap(gi), pcie_cap(gi)};
        snprintf(n1, sizeof n1, "two split-warp pairs on gpu%d", gi);
        if (measure(&be, n1, two, 4, c4, true, &m))
            printf("two split-warp pairs on gpu%d: %.2f + %.2f each way (by duration)\n", gi,
                   m.flow[0].median, m.flow[2].median);
        gq_flow bad[2] = {sp[0], sp[1]};
        bad[1].split_with = 0;
        gq_group *gg = NULL;
        check(be.ops->prepare(&be, bad, 2, &gg, &err) == GQ_E_USAGE, "split-warp one-sided", "was accepted");
        if (gg)
            be.ops->release(&be, gg);
    }

    /* Duration runs with a grain: windows end on completed pieces, bytes
     * are whole pieces, and unequal flows end together. */
    {
        const uint64_t piece = 8 * GQ_MiB;
        uint64_t grain[4] = {piece, piece, piece, piece};
        gq_run_opts o = {.duration_s = 0.1, .verify = true, .grain = grain};
        gq_flow_result res[4];
        gq_flow bi[2] = {mk(H, L, G, 0, GQ_METHOD_CE, 0, B), mk(G, 0, H, L, GQ_METHOD_SM, 0, B)};
        if (run_once(&be, "grain: host ce h2d + sm d2h", bi, 2, &o, res)) {
            for (int i = 0; i < 2; i++) {
                check(res[i].bytes_done % piece == 0 && res[i].bytes_done > 0, "grain",
                      "flow %d: %llu bytes is not whole %llu-byte pieces", i,
                      (unsigned long long)res[i].bytes_done, (unsigned long long)piece);
                check(res[i].t_end <= res[i].t_start + o.duration_s + 1e-3, "grain",
                      "flow %d: window %.4f s past the deadline", i, res[i].t_end - res[i].t_start);
            }
            double ov = overlap(res, 2);
            check(ov >= 0.99, "grain", "overlap %.4f < 0.99 with 8 MiB pieces", ov);
            printf("grain 8 MiB, 0.1 s: h2d ce %.2f GB/s, d2h sm %.2f GB/s, overlap %.4f\n", rate_of(&res[0]),
                   rate_of(&res[1]), ov);
        }
        if (ngpu >= 2) {
            gq_flow ds[2] = {mk(G, 0, G, 1, GQ_METHOD_DRIVER_STAGED, 0, B),
                             mk(G, 1, G, 0, GQ_METHOD_DRIVER_STAGED, 1, B)};
            uint64_t g16[2] = {16 * GQ_MiB, 16 * GQ_MiB};
            gq_run_opts o2 = {.duration_s = 0.2, .verify = true, .grain = g16};
            if (run_once(&be, "grain: driver_staged both ways", ds, 2, &o2, res)) {
                double ov = overlap(res, 2);
                check(ov >= 0.99, "grain driver_staged", "overlap %.4f < 0.99 with 16 MiB pieces", ov);
                printf(
                    "grain 16 MiB, 0.2 s: driver_staged 0->1 %.2f, 1->0 %.2f GB/s, sum %.2f, overlap %.4f\n",
                    rate_of(&res[0]), rate_of(&res[1]), rate_of(&res[0]) + rate_of(&res[1]), ov);
            }
            gq_flow st = mk(G, 0, G, 1, GQ_METHOD_STAGED, 0, B);
            gq_flow sx[2] = {st, mk(G, 1, G, 0, GQ_METHOD_STAGED, 1, B)};
            if (run_once(&be, "grain: staged both ways", sx, 2, &o2, res)) {
                double ov = overlap(res, 2);
                check(ov >= 0.99, "grain staged", "overlap %.4f < 0.99", ov);
                printf("grain 16 MiB, 0.2 s: staged 0->1 %.2f, 1->0 %.2f GB/s, overlap %.4f\n",
                       rate_of(&res[0]), rate_of(&res[1]), ov);
            }
        }
    }

    /* A counted interferer runs until the measured flow is done, whatever
     * its own count, and its window covers the measured one. */
    {
        gq_flow fl[2] = {mk(H, L, G, 0, GQ_METHOD_CE, 0, B), mk(G, 0, H, L, GQ_METHOD_CE, 0, B)};
        fl[1].interferer = true;
        fl[1].bytes = B / 4; /* a short copy: by count alone it would end first */
        gq_run_opts o = {.reps = 8, .verify = true};
        gq_flow_result res[2];
        if (run_once(&be, "interferer until measured", fl, 2, &o, res)) {
            check(res[0].copies_done == 8, "interferer", "measured flow: %d copies, 8 asked",
                  res[0].copies_done);
            check(res[1].t_end >= res[0].t_end, "interferer",
                  "it ended at %.4f s, before the measured flow (%.4f s)", res[1].t_end - res[1].t_start,
                  res[0].t_end - res[0].t_start);
            /* by its own count (8 copies of a quarter the size) it would have stopped 4x earlier */
            check(res[1].copies_done > 8, "interferer", "%d copies: it stopped at its own count",
                  res[1].copies_done);
            check(res[1].t_end - res[0].t_end < 0.02, "interferer",
                  "it ran on %.1f ms past the measured flow", 1e3 * (res[1].t_end - res[0].t_end));
            printf("interferer until measured: h2d %.2f GB/s under d2h %.2f GB/s; interferer ended %.2f ms "
                   "after\n",
                   rate_of(&res[0]), rate_of(&res[1]), 1e3 * (res[1].t_end - res[0].t_end));
        }
    }

    /* A read-only host source shared by two flows (share_src): both
     * destinations still hold the pattern. */
    if (ngpu >= 2) {
        gq_flow fl[2] = {mk(H, L, G, 0, GQ_METHOD_CE, 0, B), mk(H, L, G, 1, GQ_METHOD_CE, 1, B)};
        fl[0].share_src = fl[1].share_src = true;
        gq_run_opts o = {.reps = 4, .verify = true};
        gq_flow_result res[2];
        if (run_once(&be, "shared host source", fl, 2, &o, res))
            printf("shared host source: h2d gpu0 %.2f, gpu1 %.2f GB/s\n", rate_of(&res[0]), rate_of(&res[1]));
    }

    /* GPU <-> GPU. nvbandwidth: read = the copy runs on the destination and
     * pulls; write = it runs on the source and pushes. */
    if (ngpu >= 2) {
        double nv = nvlink_cap(0, 1);
        /* nvbandwidth's cells: row = the GPU that executes the copy, column = the other */
        one(&be, "device_to_device_memcpy_read_ce 1->0", mk(G, 1, G, 0, GQ_METHOD_CE, 0, B), nv, 394,
            refn("device_to_device_memcpy_read_ce", 0, 1));
        one(&be, "device_to_device_memcpy_read_ce 0->1", mk(G, 0, G, 1, GQ_METHOD_CE, 1, B), nv, 394,
            refn("device_to_device_memcpy_read_ce", 1, 0));
        one(&be, "device_to_device_memcpy_write_ce 0->1", mk(G, 0, G, 1, GQ_METHOD_CE, 0, B), nv, 396,
            refn("device_to_device_memcpy_write_ce", 0, 1));
        one(&be, "device_to_device_memcpy_write_ce 1->0", mk(G, 1, G, 0, GQ_METHOD_CE, 1, B), nv, 396,
            refn("device_to_device_memcpy_write_ce", 1, 0));
        one(&be, "device_to_device_memcpy_read_sm 1->0", mk(G, 1, G, 0, GQ_METHOD_SM, 0, B), nv, 376,
            refn("device_to_device_memcpy_read_sm", 0, 1));
        one(&be, "device_to_device_memcpy_read_sm 0->1", mk(G, 0, G, 1, GQ_METHOD_SM, 1, B), nv, 376,
            refn("device_to_device_memcpy_read_sm", 1, 0));
        one(&be, "device_to_device_memcpy_write_sm 0->1", mk(G, 0, G, 1, GQ_METHOD_SM, 0, B), nv, 0,
            refn("device_to_device_memcpy_write_sm", 0, 1));
        gq_flow bi[2] = {mk(G, 1, G, 0, GQ_METHOD_CE, 0, B), mk(G, 0, G, 1, GQ_METHOD_CE, 1, B)};
        double caps[2] = {nv, nv};
        mres m;
        if (measure(&be, "bidirectional d2d read ce", bi, 2, caps, false, &m)) {
            /* nvbandwidth's matrices: rows 0-1 one direction, 2-3 the other, 4-5 the total */
            add_fig("d2d bidir read ce: 1->0", m.flow[0], "GB/s", 0, false,
                    refn("device_to_device_bidirectional_memcpy_read_ce", 0, 1), nv);
            add_fig("d2d bidir read ce: 0->1", m.flow[1], "GB/s", 0, false,
                    refn("device_to_device_bidirectional_memcpy_read_ce", 1, 0), nv);
            char n1[80];
            snprintf(n1, sizeof n1, "d2d bidir read ce: total (overlap %.3f)", m.overlap_min);
            add_fig(n1, m.sum, "GB/s", 779, false,
                    refn("device_to_device_bidirectional_memcpy_read_ce", 4, 1), 2 * nv);
        }
        gq_flow bw[2] = {mk(G, 0, G, 1, GQ_METHOD_CE, 0, B), mk(G, 1, G, 0, GQ_METHOD_CE, 1, B)};
        if (measure(&be, "bidirectional d2d write ce", bw, 2, caps, false, &m)) {
            char n1[80];
            snprintf(n1, sizeof n1, "d2d bidir write ce: total (overlap %.3f)", m.overlap_min);
            add_fig(n1, m.sum, "GB/s", 0, false, refn("device_to_device_bidirectional_memcpy_write_ce", 4, 1),
                    2 * nv);
        }
        double st_cap = pcie_cap(0) < pcie_cap(1) ? pcie_cap(0) : pcie_cap(1);
        /* gpuqual's pipelined staging against the driver's own staged copy with P2P
         * disabled (p2pBandwidthLatencyTest): it must not fall below 90 % of it */
        one(&be, "device_to_device_staged 0->1 (pipelined)", mk(G, 0, G, 1, GQ_METHOD_STAGED, 0, B), st_cap,
            50, refp(P2P_UNI_OFF, 0, 1));
        one(&be, "device_to_device_staged 1->0 (pipelined)", mk(G, 1, G, 0, GQ_METHOD_STAGED, 1, B), st_cap,
            50, refp(P2P_UNI_OFF, 1, 0));
        one(&be, "driver_staged 0->1 (P2P disabled)", mk(G, 0, G, 1, GQ_METHOD_DRIVER_STAGED, 0, B), st_cap,
            0, refp(P2P_UNI_OFF, 0, 1));
        gq_flow ds[2] = {mk(G, 0, G, 1, GQ_METHOD_DRIVER_STAGED, 0, B),
                         mk(G, 1, G, 0, GQ_METHOD_DRIVER_STAGED, 1, B)};
        double dcaps[2] = {st_cap, st_cap};
        if (measure(&be, "driver_staged bidirectional", ds, 2, dcaps, false, &m))
            add_fig("driver_staged bidir: sum", m.sum, "GB/s", 0, false, refp(P2P_BI_OFF, 0, 1), 2 * st_cap);
        /* A P2P group after a P2P-disabled one: peer access must come back. */
        one(&be, "read_ce again after driver_staged", mk(G, 1, G, 0, GQ_METHOD_CE, 0, B), nv, 0,
            refn("device_to_device_memcpy_read_ce", 0, 1));
        /* Conflicting peer needs in one group are refused. */
        gq_flow cf[2] = {mk(G, 0, G, 1, GQ_METHOD_CE, 0, B), mk(G, 0, G, 1, GQ_METHOD_DRIVER_STAGED, 0, B)};
        gq_group *gg = NULL;
        check(be.ops->prepare(&be, cf, 2, &gg, &err) == GQ_E_USAGE, "peer conflict", "was accepted");
    }
    /* Local copy: bytes copied per second, as nvbandwidth's device_local_copy
     * (2091 GB/s on the reference machine; the HBM moves twice that). */
    {
        mres m;
        double cap = HBM_CAP / 2;
        gq_flow f = mk(G, 0, G, 0, GQ_METHOD_CE, 0, B);
        if (measure(&be, "device_local_copy ce", &f, 1, &cap, false, &m))
            add_fig("device_local_copy ce gpu0", m.flow[0], "GB/s", 0, false, refn("device_local_copy", 0, 0),
                    cap);
        f.method = GQ_METHOD_SM;
        if (measure(&be, "device_local_copy sm", &f, 1, &cap, false, &m))
            add_fig("device_local_copy sm gpu0", m.flow[0], "GB/s", 0, false, 0, cap);
    }

    /* Latency. */
    const int lr = opt_quick ? 3 : 5;
    for (int gi = 0; opt_latency && gi < ngpu; gi++) {
        char n1[64];
        snprintf(n1, sizeof n1, "host_device_latency_sm gpu%d", gi);
        latency(&be, n1, (gq_latency_req){.kind = GQ_LAT_POINTER_CHASE, .target = {H, L}, .exec_gpu = gi},
                1198, refn("host_device_latency_sm", 0, gi), lr);
    }
    if (opt_latency && ngpu >= 2) {
        latency(&be, "device_to_device_latency_sm 0 reads 1",
                (gq_latency_req){.kind = GQ_LAT_POINTER_CHASE, .target = {G, 1}, .exec_gpu = 0}, 829,
                refn("device_to_device_latency_sm", 0, 1), lr);
        latency(&be, "device_to_device_latency_sm 1 reads 0",
                (gq_latency_req){.kind = GQ_LAT_POINTER_CHASE, .target = {G, 0}, .exec_gpu = 1}, 829,
                refn("device_to_device_latency_sm", 1, 0), lr);
        latency(&be, "copy latency 0->1 P2P enabled (4 B)",
                (gq_latency_req){.kind = GQ_LAT_COPY, .target = {G, 1}, .exec_gpu = 0, .p2p = true}, 0,
                refp(P2P_LAT_ON, 0, 1), lr);
        latency(&be, "copy latency 0->1 P2P disabled (4 B)",
                (gq_latency_req){.kind = GQ_LAT_COPY, .target = {G, 1}, .exec_gpu = 0, .p2p = false}, 0,
                refp(P2P_LAT_OFF, 0, 1), lr);
    }
    if (opt_latency) {
        latency(&be, "copy latency gpu0->host (4 B)",
                (gq_latency_req){.kind = GQ_LAT_COPY, .target = {H, L}, .exec_gpu = 0}, 0, 0, lr);
        latency(&be, "device local latency gpu0 (chase)",
                (gq_latency_req){.kind = GQ_LAT_POINTER_CHASE, .target = {G, 0}, .exec_gpu = 0}, 0, 0, lr);
    }

    /* Tuning: knobs against the default (the first H200 run's tuning table is
     * in bench/results/cuda-backend-*.md; --tuning-all repeats it). */
    if (opt_tuning) {
        in_tuning = true;
        int keep_rounds = opt_rounds;
        opt_rounds = opt_rounds < 3 ? opt_rounds : 3;
        gq_cuda_tune def;
        gq_cuda_tune_get(&be, &def);
        printf(
            "defaults: host_alloc %d, sm_blocks_per_sm %d, stage_bufs %d, chase_window %llu, chase_sms %d, "
            "sm_unit_bytes %llu\n",
            def.host_alloc, def.sm_blocks_per_sm, def.stage_bufs, (unsigned long long)def.chase_window,
            def.chase_sms, (unsigned long long)def.sm_unit_bytes);
        if (ngpu >= 2) {
            static const int units[] = {4096, 16384};
            for (int i = 0; i < 2; i++) {
                char n1[80];
                tune(&be, t_unit, units[i]);
                snprintf(n1, sizeof n1, "tune sm unit=%d MiB: d2d read sm 1->0", units[i]);
                one(&be, n1, mk(G, 1, G, 0, GQ_METHOD_SM, 0, B), nvlink_cap(0, 1), 376,
                    refn("device_to_device_memcpy_read_sm", 0, 1));
                snprintf(n1, sizeof n1, "tune sm unit=%d MiB: d2d read sm 0->1", units[i]);
                one(&be, n1, mk(G, 0, G, 1, GQ_METHOD_SM, 1, B), nvlink_cap(0, 1), 376,
                    refn("device_to_device_memcpy_read_sm", 1, 0));
            }
            gq_cuda_tune_set(&be, &def, &err);
        }
        if (opt_tuning_all)
            tuning_all(&be, ngpu, B);
        opt_rounds = keep_rounds;
        in_tuning = false;
    }

    gq_backend_close(&be);
    print_table();
    if (ref)
        printf("\nbounds: %d figures against %s: %d %s\n", bounds_checked, gpu_ref_source(ref), bounds_failed,
               bounds_failed ? "FAILED" : "failed");
    else
        printf("\nbounds %s: %s\n", ref_failed ? "FAILED" : "skipped", ref_why);
    gpu_ref_close(ref);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("\nwall %.1f s; peak RSS %.0f MiB; %d checks, %d failed\n", gq_now_mono() - t_begin,
           (double)ru.ru_maxrss / 1024, checks, failures);
    printf("%s\n", failures ? "RESULT: FAIL" : "RESULT: PASS");
    return failures ? 1 : 0;
}
