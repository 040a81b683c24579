/* The measurement harness: runs a measurement's flows in rounds (group mode,
 * calibration, timed rounds, the data check) and a latency test; the records
 * of a measurement are built by harness_emit.c.
 */
#include "measure/harness.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "measure/harness_internal.h"
#include "measure/sanity.h"
#include "core/interrupt.h"
#include "core/units.h"

#define MAX_REPS 10000000

void gq_harness_opts_default(gq_harness_opts *o)
{
    memset(o, 0, sizeof *o);
    o->rounds = 5;
    o->verify = true;
    o->warmup_reps = 1;
    o->round_s = GQ_HARNESS_ROUND_S;
    o->clean = gq_cleanroom_installed();
}

double gq_harness_overlap(const double *start, const double *end, int n)
{
    if (n <= 1)
        return 1.0;
    double max_start = start[0], min_end = end[0];
    for (int i = 1; i < n; i++) {
        if (start[i] > max_start)
            max_start = start[i];
        if (end[i] < min_end)
            min_end = end[i];
    }
    double shared = min_end - max_start;
    if (shared < 0)
        shared = 0;
    double ov = 1.0;
    for (int i = 0; i < n; i++) {
        double own = end[i] - start[i];
        if (own <= 0)
            return 0.0;
        double r = shared / own;
        if (r < ov)
            ov = r;
    }
    return ov;
}

gq_direction gq_flow_direction(const gq_flow *f)
{
    bool sh = f->src.kind == GQ_EP_HOST, dh = f->dst.kind == GQ_EP_HOST;
    if (sh && !dh)
        return GQ_DIR_H2D;
    if (!sh && dh)
        return GQ_DIR_D2H;
    if (!sh && !dh && f->src.index == f->dst.index)
        return GQ_DIR_LOCAL;
    return GQ_DIR_P2P;
}

/* Bytes are counted once per copy, local copies included: nvbandwidth's
 * device_local_copy reports copy size / time (2091.5 GB/s on an H200, whose
 * HBM then moves ~4.2 TB/s reading plus writing), while p2pBandwidthLatencyTest's
 * diagonal doubles it. gpuqual keeps nvbandwidth's meaning for its name. */
static double byte_factor(const gq_flow *f)
{
    (void)f;
    return 1.0;
}

static int next_group(const gq_recordset *out)
{
    int g = 0;
    for (int i = 0; i < out->n; i++)
        if (out->v[i].group >= g)
            g = out->v[i].group + 1;
    return g;
}

static bool round_stats_ok(const double *v, int n, double target)
{
    if (n <= 0)
        return true;
    gq_stat s = gq_stat_compute(v, n);
    return s.spread <= target;
}

/* The overlap of a round: among the reported flows (the ones whose figures
 * are summed), and the share of their common window during which every
 * interfering (unreported) flow ran, whichever is smaller. Flows that failed
 * (ok[i] false) are left out: their records are invalid for that.
 * duration_s > 0: the round ran by duration, and by the backend contract
 * every flow kept copying until the common deadline; an interferer is then
 * known to run until the deadline even where its last counted copy ended
 * earlier (its own rate is not reported, only its presence matters). */
static double round_overlap(const gq_measurement *m, const gq_flow_result *res, const bool *ok,
                            double duration_s)
{
    double st[GQ_MAX_FLOWS], en[GQ_MAX_FLOWS];
    int nw = 0, ni = 0;
    double i_start = -HUGE_VAL, i_end = HUGE_VAL, t0 = HUGE_VAL;
    for (int i = 0; i < m->nflows; i++)
        if (ok[i] && res[i].t_start < t0)
            t0 = res[i].t_start;
    for (int i = 0; i < m->nflows; i++) {
        if (!ok[i])
            continue;
        if (m->report[i]) {
            st[nw] = res[i].t_start;
            en[nw] = res[i].t_end;
            nw++;
        } else {
            ni++;
            double end = res[i].t_end;
            if (duration_s > 0 && t0 + duration_s > end)
                end = t0 + duration_s;
            if (res[i].t_start > i_start)
                i_start = res[i].t_start;
            if (end < i_end)
                i_end = end;
        }
    }
    if (nw == 0)
        return -1;
    double ov = gq_harness_overlap(st, en, nw);
    if (ni > 0) {
        double s0 = st[0], e0 = en[0];
        for (int k = 1; k < nw; k++) {
            s0 = st[k] > s0 ? st[k] : s0;
            e0 = en[k] < e0 ? en[k] : e0;
        }
        if (e0 > s0) {
            double cs = i_start > s0 ? i_start : s0, ce = i_end < e0 ? i_end : e0;
            double cov = ce > cs ? (ce - cs) / (e0 - s0) : 0.0;
            if (cov < ov)
                ov = cov;
        }
    }
    return ov;
}

static bool result_ok(const gq_flow_result *x)
{
    return x->status == GQ_OK && x->t_end > x->t_start && x->bytes_done > 0;
}

/* Fold one run's results into the state. */
static void take_round(hctx *c, const gq_flow_result *res, double duration_s)
{
    const gq_measurement *m = c->m;
    int r = c->rounds;
    bool ok[GQ_MAX_FLOWS];
    double agg[NDIR] = {0}, sum = 0, maxwin = 0;
    bool bad_dir[NDIR] = {0}, bad_sum = false;
    for (int i = 0; i < m->nflows; i++) {
        const gq_flow *f = &m->flows[i];
        flow_state *fs = &c->fs[i];
        const gq_flow_result *x = &res[i];
        int d = (int)gq_flow_direction(f);
        ok[i] = !fs->dead;
        if (ok[i] && x->status != GQ_OK) {
            fs->dead = true;
            snprintf(fs->error, sizeof fs->error, "%s", x->error[0] ? x->error : gq_status_name(x->status));
            ok[i] = false;
        }
        if (ok[i] && !result_ok(x)) {
            fs->dead = true;
            snprintf(fs->error, sizeof fs->error, "no copy completed inside the window of round %d", r + 1);
            ok[i] = false;
        }
        if (ok[i]) {
            double win = x->t_end - x->t_start;
            double rate = (double)x->bytes_done * byte_factor(f) / win / GQ_GB;
            fs->rate[fs->n] = rate;
            fs->window[fs->n] = win;
            fs->n++;
            if (x->host_numa_actual != -1 || fs->numa_actual == -1)
                fs->numa_actual = x->host_numa_actual;
            if (win > maxwin)
                maxwin = win;
            if (m->report[i]) {
                agg[d] += rate;
                sum += rate;
            }
        } else if (m->report[i]) {
            bad_dir[d] = true;
            bad_sum = true;
        }
    }
    double ov = round_overlap(m, res, ok, duration_s);
    if (ov >= 0 && ov < c->min_overlap)
        c->min_overlap = ov;
    for (int d = 0; d < NDIR; d++) {
        c->agg[d][r] = agg[d];
        c->agg_broken[d] |= bad_dir[d];
    }
    c->sum[r] = sum;
    c->sum_broken |= bad_sum;
    c->aggwin[r] = maxwin;
    c->rounds++;
}

static bool all_spreads_met(const hctx *c, double target)
{
    const gq_measurement *m = c->m;
    for (int i = 0; i < m->nflows; i++)
        if (m->report[i] && !c->fs[i].dead && !round_stats_ok(c->fs[i].rate, c->fs[i].n, target))
            return false;
    if (m->aggregate || m->direction_sums) {
        for (int d = 0; d < NDIR; d++)
            if ((c->dir_present & (1u << d)) && !round_stats_ok(c->agg[d], c->rounds, target))
                return false;
        if (!round_stats_ok(c->sum, c->rounds, target))
            return false;
    }
    return true;
}

static bool all_dead(const hctx *c)
{
    for (int i = 0; i < c->m->nflows; i++)
        if (!c->fs[i].dead)
            return false;
    return true;
}

/* Auto mode: how long a round runs, given the (slowest measured) copy
 * time: GQ_HARNESS_ROUND_COPIES copies, but between half the target and
 * the target. Fast paths (NVLink, local copies) then run half rounds of
 * dozens of copies; host paths keep full ones. */
static double round_len(double T, double t_copy)
{
    double r = GQ_HARNESS_ROUND_COPIES * t_copy;
    return r < 0.5 * T ? 0.5 * T : r > T ? T : r;
}

/* Rounds by duration for a concurrent group whose counted rounds end apart:
 * each reported window ends at its last completed piece before the
 * deadline, and pieces of at most GQ_HARNESS_GRAIN of the round make the
 * windows end together within that, at any round length. ctime[i] is flow
 * i's copy time (0: unknown). Sets ro and grain and returns true when the
 * duration plan promises more overlap than ov_count (the overlap counting
 * gave); false leaves them as they were: a measured flow without a copy
 * time (it failed) gives nothing to size its pieces from, or counting still
 * does better. */
static bool plan_duration(const gq_measurement *m, const double *ctime, double T, double ov_count,
                          gq_run_opts *ro, uint64_t *grain)
{
    double piece_max = 0;
    uint64_t g[GQ_MAX_FLOWS] = {0};
    for (int i = 0; i < m->nflows; i++)
        if (m->report[i] && !(ctime[i] > 0))
            return false;
    for (int i = 0; i < m->nflows; i++) {
        if (!m->report[i])
            continue;
        uint64_t bytes = m->flows[i].bytes;
        double rate = (double)bytes / ctime[i];
        double want = rate * GQ_HARNESS_GRAIN * T;
        uint64_t p =
            want < (double)GQ_HARNESS_MIN_PIECE ? GQ_HARNESS_MIN_PIECE : (uint64_t)want / GQ_MiB * GQ_MiB;
        /* the backend moves staged copies in whole staging chunks */
        uint64_t q = gq_flow_piece_quantum(&m->flows[i]);
        p = (p + q - 1) / q * q;
        double pt = ctime[i];
        if (p < bytes) {
            g[i] = p;
            pt = (double)p / rate;
        }
        if (pt > piece_max)
            piece_max = pt;
    }
    double D = piece_max / (1.0 - GQ_OVERLAP_MIN) * 2.0;
    D = D < T ? T : D > GQ_HARNESS_MAX_ROUND_S ? GQ_HARNESS_MAX_ROUND_S : D;
    if (!(1.0 - piece_max / D > ov_count))
        return false;
    memcpy(grain, g, (size_t)m->nflows * sizeof *grain);
    ro->reps = 0;
    ro->duration_s = D;
    ro->grain = grain;
    return true;
}

/* Auto mode for a concurrent group. Windows end at a copy's completion, so
 * with a count of copies they end together when the flows' copy times are
 * equal or when they share a bottleneck (a flow that finishes first hands its
 * share to the others); by duration, their ends are quantised by the copy
 * time c_i. One copy per flow gives the copy times; a round with a count
 * sized to round_s gives the overlap counting achieves. When that is short
 * of the rule and a duration round (long enough that the reported flows'
 * longest copy is 0.8% of it, up to GQ_HARNESS_MAX_ROUND_S) promises more,
 * the rounds run by duration. */
static int choose_group_mode(gq_backend *be, gq_group *g, const gq_measurement *m, gq_flow_result *res,
                             double T, gq_run_opts *ro, uint64_t *grain, bool *have_round, gq_err *rerr)
{
    int rc;
    gq_run_opts one = {.reps = 1};
    if ((rc = be->ops->run(be, g, &one, res, rerr)) != GQ_OK)
        return rc;
    double rep_max = 0, ctime[GQ_MAX_FLOWS];
    int nrep = 0;
    for (int i = 0; i < m->nflows; i++) {
        nrep += m->report[i];
        ctime[i] = 0;
        if (!result_ok(&res[i]))
            continue;
        double c = (res[i].t_end - res[i].t_start) / (res[i].copies_done > 0 ? res[i].copies_done : 1);
        ctime[i] = c;
        if (m->report[i] && c > rep_max)
            rep_max = c;
    }
    if (rep_max > 0)
        T = round_len(T, rep_max);
    double reps = rep_max > 0 ? ceil(T / rep_max) : 1;
    ro->reps = (int)(reps < 1 ? 1 : reps > MAX_REPS ? MAX_REPS : reps);
    ro->duration_s = 0;
    if ((rc = be->ops->run(be, g, ro, res, rerr)) != GQ_OK)
        return rc;
    bool ok[GQ_MAX_FLOWS];
    for (int i = 0; i < m->nflows; i++)
        ok[i] = result_ok(&res[i]);
    double ov_count = round_overlap(m, res, ok, 0);
    /* The counted round is a round like the ones that follow: it counts. */
    *have_round = ov_count >= 0.995 || rep_max <= 0;
    if (*have_round)
        return GQ_OK;
    /* One reported flow (the rest interfere): by duration its window is
     * exact (it ends at its last copy completed by the deadline) and the
     * interferers run until the deadline, so the overlap is whole whatever
     * the round's length; no long round is needed for quantisation, only
     * enough copies (GQ_HARNESS_MIN_COPIES) for a steady rate. */
    if (nrep == 1) {
        double D = GQ_HARNESS_MIN_COPIES * rep_max;
        ro->reps = 0;
        ro->duration_s = D < T ? T : D > GQ_HARNESS_MAX_ROUND_S ? GQ_HARNESS_MAX_ROUND_S : D;
        return GQ_OK;
    }
    /* a measured flow that gave no copy time (it failed): nothing to size
     * its pieces from; the counted round stands, and the flow's failure is
     * in its records */
    if (!plan_duration(m, ctime, T, ov_count, ro, grain))
        *have_round = true;
    return GQ_OK;
}

/* Warm-up and the choice of count or duration (see gq_harness_opts_default). */
static int calibrate(gq_backend *be, const gq_topo *topo, gq_group *g, const gq_measurement *m,
                     const gq_harness_opts *o, gq_flow_result *res, gq_run_opts *ro, uint64_t *grain,
                     bool *have_round, gq_err *rerr)
{
    *have_round = false;
    double T = o->round_s > 0 ? o->round_s : GQ_HARNESS_ROUND_S;
    int rc;
    if (o->reps > 0 || o->duration_s > 0) {
        ro->reps = o->reps > 0 ? o->reps : 0;
        ro->duration_s = o->reps > 0 ? 0 : o->duration_s;
        gq_run_opts w = {.reps = o->warmup_reps};
        return o->warmup_reps > 0 ? be->ops->run(be, g, &w, res, rerr) : GQ_OK;
    }
    if (m->nflows > 1)
        return choose_group_mode(be, g, m, res, T, ro, grain, have_round, rerr);
    gq_run_opts w = {.reps = o->warmup_reps > 0 ? o->warmup_reps : 1};
    if ((rc = be->ops->run(be, g, &w, res, rerr)) != GQ_OK)
        return rc;
    double t_copy = 0;
    if (result_ok(&res[0]) && res[0].copies_done > 0)
        t_copy = (res[0].t_end - res[0].t_start) / res[0].copies_done;
    double cap = gq_sanity_flow_capacity(topo, &m->flows[0], NULL, 0);
    if (cap > 0) {
        double t_cap = (double)m->flows[0].bytes * byte_factor(&m->flows[0]) / (cap * GQ_GB);
        if (t_cap > t_copy)
            t_copy = t_cap;
    }
    if (t_copy > 0)
        T = round_len(T, t_copy);
    double reps = t_copy > 0 ? ceil(T / t_copy) : 1;
    ro->reps = (int)(reps < 1 ? 1 : reps > MAX_REPS ? MAX_REPS : reps);
    ro->duration_s = 0;
    return GQ_OK;
}

/* The overlap of a round that fails the rule (among at least two reported
 * flows, or with interferers), or -1 when it keeps the rule. */
static double short_overlap(const hctx *c, const gq_flow_result *res, double duration_s)
{
    const gq_measurement *m = c->m;
    if (m->nflows < 2)
        return -1;
    bool ok[GQ_MAX_FLOWS];
    for (int i = 0; i < m->nflows; i++)
        ok[i] = result_ok(&res[i]);
    double ov = round_overlap(m, res, ok, duration_s);
    return ov >= 0 && ov < GQ_OVERLAP_MIN ? ov : -1;
}

static void trace(const gq_harness_opts *o, const char *test, const char *phase, double *tp, const char *fmt,
                  ...) __attribute__((format(printf, 5, 6)));

/* The window log of a round that failed the overlap rule, on the trace:
 * each flow's window (start and end in ms from the first start), its copies
 * and its rate, so that the cause (a late start, an early end, a slow flow)
 * can be read off (GQ_TRACE=1). */
static void trace_windows(const gq_harness_opts *o, const hctx *c, const gq_flow_result *res, double ov,
                          const char *what)
{
    if (!o->trace)
        return;
    const gq_measurement *m = c->m;
    char note[GQ_HARNESS_TRACE_NOTE];
    size_t l = 0;
    double t0 = HUGE_VAL;
    for (int i = 0; i < m->nflows; i++)
        if (res[i].t_end > res[i].t_start && res[i].t_start < t0)
            t0 = res[i].t_start;
    l += (size_t)snprintf(note, sizeof note, "round %d overlap %.2f%%, %s:", c->rounds + 1,
                          floor(ov * 10000.0) / 100.0, what);
    for (int i = 0; i < m->nflows && l < sizeof note; i++) {
        const gq_flow_result *x = &res[i];
        double w = x->t_end - x->t_start;
        l += (size_t)snprintf(note + l, sizeof note - l, " [%d %s%s %.3f..%.3f ms %d copies %.2f GB/s]", i,
                              gq_direction_name(gq_flow_direction(&m->flows[i])),
                              m->report[i] ? "" : " interferer", 1e3 * (x->t_start - t0),
                              1e3 * (x->t_end - t0), x->copies_done,
                              w > 0 ? (double)x->bytes_done / w / GQ_GB : 0.0);
    }
    double tp = gq_now_mono();
    trace(o, m->test, "overlap", &tp, "%s", note);
}

/* A counted round of a concurrent group ended its windows apart: its
 * flows' copy times differ by more than the rule allows, and counting will
 * not do better from round to round (each flow's rate moves on its own).
 * The remaining rounds run by duration, in pieces (plan_duration), sized
 * from this round's copy times; one reported flow with interferers runs by
 * duration whole (its window is exact, the interferers run to the
 * deadline). Returns whether the mode changed. */
static bool switch_to_duration(const hctx *c, const gq_flow_result *res, double T, double ov, gq_run_opts *ro,
                               uint64_t *grain)
{
    const gq_measurement *m = c->m;
    double ctime[GQ_MAX_FLOWS], rep_max = 0;
    int nrep = 0;
    for (int i = 0; i < m->nflows; i++) {
        ctime[i] = 0;
        nrep += m->report[i];
        if (!result_ok(&res[i]) || res[i].copies_done < 1)
            continue;
        ctime[i] = (res[i].t_end - res[i].t_start) / res[i].copies_done;
        if (m->report[i] && ctime[i] > rep_max)
            rep_max = ctime[i];
    }
    if (!(rep_max > 0))
        return false;
    if (nrep == 1) {
        double D = GQ_HARNESS_MIN_COPIES * rep_max;
        ro->reps = 0;
        ro->duration_s = D < T ? T : D > GQ_HARNESS_MAX_ROUND_S ? GQ_HARNESS_MAX_ROUND_S : D;
        ro->grain = NULL;
        return true;
    }
    return plan_duration(m, ctime, T, ov, ro, grain);
}

/* The timed rounds, until all are done, the spread target is met, every
 * flow failed, or an interruption is asked for. */
static int timed_rounds(gq_backend *be, gq_group *g, hctx *c, const gq_harness_opts *o, gq_flow_result *res,
                        gq_run_opts *ro, uint64_t *grain, gq_err *rerr)
{
    const gq_measurement *m = c->m;
    double T = o->round_s > 0 ? o->round_s : GQ_HARNESS_ROUND_S;
    bool auto_mode = o->reps <= 0 && !(o->duration_s > 0);
    bool auto_single = auto_mode && m->nflows == 1;
    int rc;
    while (c->rounds < o->rounds) {
        if (gq_interrupt_requested())
            break;
        memset(res, 0, (size_t)m->nflows * sizeof *res);
        for (int i = 0; i < m->nflows; i++)
            res[i].host_numa_actual = -1;
        ro->verify = false;
        if ((rc = be->ops->run(be, g, ro, res, rerr)) != GQ_OK)
            return rc;
        double ov = short_overlap(c, res, ro->reps > 0 ? 0 : ro->duration_s);
        if (ov >= 0 && auto_mode && ro->reps > 0 && !c->mode_switched &&
            switch_to_duration(c, res, T, ov, ro, grain)) {
            /* not counted: the round runs again by duration */
            trace_windows(o, c, res, ov, "rounds now by duration");
            c->mode_switched = true;
            continue;
        }
        if (ov >= 0 && c->overlap_retries < GQ_HARNESS_OVERLAP_RETRIES) {
            trace_windows(o, c, res, ov, "round run again");
            c->overlap_retries++;
            continue;
        }
        if (ov >= 0)
            trace_windows(o, c, res, ov, "round counted, its sum invalid");
        take_round(c, res, ro->reps > 0 ? 0 : ro->duration_s);
        if (o->progress)
            o->progress(o->progress_arg, m->test, c->rounds, o->rounds);
        if (all_dead(c))
            break;
        /* one flow: correct the count once the first real round is known */
        if (auto_single && c->fs[0].n > 0) {
            double win = c->fs[0].window[c->fs[0].n - 1];
            double Tt = win > 0 ? round_len(T, win / ro->reps) : T;
            if (win > 0 && (win < 0.5 * Tt || win > 2.0 * Tt)) {
                double reps = ceil(ro->reps * Tt / win);
                ro->reps = (int)(reps < 1 ? 1 : reps > MAX_REPS ? MAX_REPS : reps);
            }
        }
        if (o->spread_target > 0 && c->rounds >= 3 && all_spreads_met(c, o->spread_target))
            break;
    }
    c->interrupted = gq_interrupt_requested() && c->rounds < o->rounds;
    return GQ_OK;
}

/* Report a phase that began at *tp, and start the next one now. */
static void trace(const gq_harness_opts *o, const char *test, const char *phase, double *tp, const char *fmt,
                  ...)
{
    double now = gq_now_mono();
    if (o && o->trace) {
        char note[GQ_HARNESS_TRACE_NOTE];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(note, sizeof note, fmt, ap);
        va_end(ap);
        o->trace(o->trace_arg, test, phase, now - *tp, note);
    }
    *tp = now;
}

/* The data check: one untimed copy per flow with the pattern checked. */
static int verify_pass(gq_backend *be, gq_group *g, hctx *c, gq_flow_result *res, gq_err *rerr)
{
    const gq_measurement *m = c->m;
    gq_run_opts v = {.reps = 1, .verify = true};
    memset(res, 0, (size_t)m->nflows * sizeof *res);
    int rc = be->ops->run(be, g, &v, res, rerr);
    if (rc != GQ_OK)
        return rc;
    for (int i = 0; i < m->nflows; i++) {
        flow_state *fs = &c->fs[i];
        if (fs->dead)
            continue;
        if (res[i].status != GQ_OK) {
            fs->dead = true;
            snprintf(fs->error, sizeof fs->error, "data check run: %.180s",
                     res[i].error[0] ? res[i].error : gq_status_name(res[i].status));
        } else if (res[i].verified && !res[i].verify_ok) {
            fs->verify_failed = true;
            fs->bad_offset = res[i].bad_offset;
        }
    }
    return GQ_OK;
}

int gq_harness_measure(gq_backend *be, const gq_topo *topo, const gq_measurement *m, const gq_harness_opts *o,
                       gq_recordset *out, gq_journal *j, gq_err *err)
{
    if (!be || !be->ops || !m || !o || !out)
        return gq_err_set(err, GQ_E_FAIL, "harness: missing argument");
    if (m->nflows < 1 || m->nflows > GQ_MAX_FLOWS)
        return gq_err_set(err, GQ_E_FAIL, "harness: %s has %d flows, expected 1..%d", m->test, m->nflows,
                          GQ_MAX_FLOWS);
    if (o->rounds < 1 || o->rounds > GQ_MAX_ROUNDS)
        return gq_err_set(err, GQ_E_USAGE, "rounds %d is out of range, expected 1..%d", o->rounds,
                          GQ_MAX_ROUNDS);
    for (int i = 0; i < m->nflows; i++)
        if (m->flows[i].bytes == 0)
            return gq_err_set(err, GQ_E_FAIL, "harness: %s flow %d has a zero size", m->test, i);
    if (gq_interrupt_requested())
        return gq_err_set(err, GQ_E_INTR, "interrupted");

    int rc = GQ_OK, erc;
    gq_group *g = NULL;
    gq_err jerr = {0}, rerr = {0};
    bool jfailed = false;
    hctx *c = calloc(1, sizeof *c);
    gq_flow_result *res = calloc((size_t)m->nflows, sizeof *res);
    uint64_t *grain = calloc((size_t)m->nflows, sizeof *grain);
    if (!c || !res || !grain) {
        rc = gq_err_set(err, GQ_E_NOMEM, "harness: out of memory");
        goto out;
    }
    c->m = m;
    c->min_overlap = 1.0;
    for (int i = 0; i < m->nflows; i++) {
        c->fs[i].numa_actual = -1;
        if (m->report[i])
            c->dir_present |= 1u << gq_flow_direction(&m->flows[i]);
    }
    int group = next_group(out);
    double t0 = gq_now_unix();
    double tp = gq_now_mono();
    int cgpus[2 * GQ_MAX_FLOWS + GQ_MAX_FLOWS], ncg = 0;
    if (o->clean) {
        for (int i = 0; i < m->nflows; i++) {
            const gq_flow *f = &m->flows[i];
            if (f->exec_gpu >= 0)
                cgpus[ncg++] = f->exec_gpu;
            if (f->src.kind == GQ_EP_GPU)
                cgpus[ncg++] = f->src.index;
            if (f->dst.kind == GQ_EP_GPU)
                cgpus[ncg++] = f->dst.index;
        }
        gq_cleanroom_check(o->clean, cgpus, ncg, &c->contam);
    }

    if ((rc = be->ops->prepare(be, m->flows, m->nflows, &g, &rerr)) != GQ_OK) {
        g = NULL;
        snprintf(c->whole_error, sizeof c->whole_error, "%.199s", rerr.msg);
        gq_err_set(err, rc, "%s: %s", m->test, rerr.msg);
    } else {
        gq_run_opts ro = {0};
        bool have_round = false;
        trace(o, m->test, "prepare", &tp, "%d flows", m->nflows);
        rc = calibrate(be, topo, g, m, o, res, &ro, grain, &have_round, &rerr);
        if (ro.reps > 0)
            trace(o, m->test, "calibrate", &tp, "reps %d%s", ro.reps, have_round ? ", its round kept" : "");
        else
            trace(o, m->test, "calibrate", &tp, "duration %.3f s%s", ro.duration_s,
                  ro.grain ? ", in pieces" : "");
        if (rc == GQ_OK && have_round) {
            take_round(c, res, 0);
            if (o->progress)
                o->progress(o->progress_arg, m->test, c->rounds, o->rounds);
        }
        if (rc == GQ_OK) {
            rc = timed_rounds(be, g, c, o, res, &ro, grain, &rerr);
            trace(o, m->test, "rounds", &tp, "%d rounds", c->rounds);
        }
        if (rc == GQ_OK && o->verify && !c->interrupted && !all_dead(c)) {
            if ((rc = verify_pass(be, g, c, res, &rerr)) != GQ_OK)
                gq_err_prefix(&rerr, "data check run failed");
            trace(o, m->test, "verify", &tp, "%s", "");
        }
        if (rc != GQ_OK) {
            snprintf(c->whole_error, sizeof c->whole_error, "%.199s",
                     rerr.msg[0] ? rerr.msg : gq_status_name(rc));
            gq_err_set(err, rc, "%s: %s", m->test, c->whole_error);
        }
    }
    /* interrupted before a round finished: nothing was measured, nothing to keep */
    if (c->interrupted && c->rounds == 0 && !c->whole_error[0]) {
        rc = gq_err_set(err, GQ_E_INTR, "interrupted before the first round of %s", m->test);
        goto out;
    }
    if (o->clean)
        gq_cleanroom_check(o->clean, cgpus, ncg, &c->contam);
    if (o->clean && c->contam.n)
        o->clean->contaminated++;
    if ((erc = gq_harness_emit(c, be, topo, o, out, j, group, t0, &jerr, &jfailed)) != GQ_OK) {
        rc = gq_err_set(err, erc, "harness: out of memory");
        goto out;
    }
    if (rc == GQ_OK && c->interrupted)
        rc = gq_err_set(err, GQ_E_INTR, "interrupted after %d of %d rounds of %s", c->rounds, o->rounds,
                        m->test);
    if (rc == GQ_OK && jfailed)
        rc = gq_err_set(err, GQ_E_IO, "journal: %s", jerr.msg);
out:
    if (g) {
        tp = gq_now_mono();
        be->ops->release(be, g);
        trace(o, m->test, "release", &tp, "%s", "");
    }
    free(grain);
    free(res);
    free(c);
    return rc;
}

int gq_harness_latency(gq_backend *be, const gq_topo *topo, const char *test, const gq_latency_req *req,
                       const gq_harness_opts *o, gq_recordset *out, gq_journal *j, gq_err *err)
{
    if (!be || !be->ops || !req || !o || !out)
        return gq_err_set(err, GQ_E_FAIL, "harness: missing argument");
    if (o->rounds < 1 || o->rounds > GQ_MAX_ROUNDS)
        return gq_err_set(err, GQ_E_USAGE, "rounds %d is out of range, expected 1..%d", o->rounds,
                          GQ_MAX_ROUNDS);
    if (gq_interrupt_requested())
        return gq_err_set(err, GQ_E_INTR, "interrupted");
    gq_record r;
    memset(&r, 0, sizeof r);
    snprintf(r.test, sizeof r.test, "%s", test);
    r.is_latency = true;
    r.valid = true;
    r.group = next_group(out);
    r.flow_tag = -1;
    r.exec_gpu = req->exec_gpu;
    r.overlap = -1;
    r.timestamp = gq_now_unix();
    r.simulated = gq_backend_simulated(be) || (topo && topo->simulated);
    gq_endpoint exec = {GQ_EP_GPU, req->exec_gpu};
    if (req->kind == GQ_LAT_POINTER_CHASE) {
        r.method = GQ_METHOD_SM;
        r.src = req->target; /* the memory the loads travel from */
        r.dst = exec;
    } else {
        r.method = req->p2p || req->target.kind == GQ_EP_HOST ? GQ_METHOD_CE : GQ_METHOD_DRIVER_STAGED;
        r.src = exec;
        r.dst = req->target;
    }
    gq_flow f = {.src = r.src, .dst = r.dst, .method = r.method, .exec_gpu = req->exec_gpu, .bytes = 1};
    r.direction = gq_flow_direction(&f);
    r.dirs = 1u << r.direction;
    r.host_numa_req = gq_hrec_host_numa_req(&f);
    r.host_numa_actual = -1;
    gq_hrec_add_flow_gpus(&r, &f);

    int rc = GQ_OK;
    double v[GQ_MAX_ROUNDS];
    int n = 0;
    bool interrupted = false;
    gq_contam cs = {0};
    int lgpus[2] = {req->exec_gpu, req->target.kind == GQ_EP_GPU ? req->target.index : req->exec_gpu};
    if (o->clean)
        gq_cleanroom_check(o->clean, lgpus, 2, &cs);
    if (!be->ops->latency) {
        rc = gq_err_set(err, GQ_E_UNSUPP, "%s: the %s backend cannot measure latency", test, be->ops->name);
        gq_hrec_set_error(&r, GQ_FLAG_ERROR, err ? err->msg : "latency not supported by this backend");
    } else {
        double tp = gq_now_mono();
        /* An untimed warm-up of a tenth of the loads: the first chase after
         * a change of target pays for cold translations (measured on 2 x
         * H200: 842.6 ns in round 1, 825.0 in the four after). */
        bool warm_failed = false;
        if (o->warmup_reps > 0) {
            gq_latency_req w = *req;
            if (w.iters > 10)
                w.iters /= 10;
            double ns = 0;
            gq_err lerr = {0};
            int lrc = be->ops->latency(be, &w, &ns, &lerr);
            if (lrc != GQ_OK || !(ns > 0)) {
                gq_hrec_set_error(&r, GQ_FLAG_ERROR,
                                  lrc != GQ_OK ? lerr.msg : "the backend returned no latency");
                warm_failed = true;
            }
        }
        for (int i = 0; i < o->rounds && !warm_failed; i++) {
            if (gq_interrupt_requested()) {
                interrupted = true;
                break;
            }
            double ns = 0;
            gq_err lerr = {0};
            int lrc = be->ops->latency(be, req, &ns, &lerr);
            if (lrc != GQ_OK || !(ns > 0)) {
                gq_hrec_set_error(&r, GQ_FLAG_ERROR,
                                  lrc != GQ_OK ? lerr.msg : "the backend returned no latency");
                break;
            }
            v[n++] = ns;
            if (o->progress)
                o->progress(o->progress_arg, test, n, o->rounds);
            if (o->spread_target > 0 && n >= 3 && round_stats_ok(v, n, o->spread_target))
                break;
        }
        trace(o, test, "latency", &tp, "%d rounds", n);
    }
    if (rc == GQ_OK && !interrupted && n == 0 && !(r.flags & GQ_FLAG_ERROR))
        gq_hrec_set_error(&r, GQ_FLAG_ERROR, "no round completed");
    if (interrupted && n == 0)
        return gq_err_set(err, GQ_E_INTR, "interrupted");
    gq_hrec_fill_value(&r, v, n);
    if (o->clean) {
        gq_cleanroom_check(o->clean, lgpus, 2, &cs);
        if (cs.n)
            o->clean->contaminated++;
        gq_cleanroom_mark(&r, &cs);
    }
    if (interrupted)
        r.flags |= GQ_FLAG_INCOMPLETE;
    if (o->spread_target > 0 && n > 0 && r.value.spread > o->spread_target)
        r.flags |= GQ_FLAG_SPREAD;
    int prc = gq_records_push(out, &r);
    if (prc)
        return gq_err_set(err, prc, "harness: out of memory");
    if (j) {
        gq_err jerr = {0};
        if (gq_journal_append(j, &r, &jerr) && rc == GQ_OK)
            rc = gq_err_set(err, GQ_E_IO, "journal: %s", jerr.msg);
    }
    if (rc == GQ_OK && interrupted)
        rc = gq_err_set(err, GQ_E_INTR, "interrupted after %d of %d rounds of %s", n, o->rounds, test);
    return rc;
}
