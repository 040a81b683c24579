/* The sim backend's run hook: an event-driven simulation in virtual time of
 * a prepared group (sim_backend.c builds the max-min problems). Rates are
 * re-solved whenever the set of running flows changes; by duration, every
 * flow copies until a common deadline. See sim_backend.c for the model.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/sim/sim_internal.h"
#include "core/units.h"

/* Solve the sharing for the flows marked in act[]; rates in B/s into r[]. */
static void solve_active(const sim_priv *s, gq_group *g, const bool *act, double *r)
{
    if (g->ndriver) {
        gq_sim_problem *L = g->legs;
        for (int i = 0; i < g->n; i++) {
            L->active[i] = act[i] && g->kind[i] != K_DRIVER;
            if (g->leg0[i] >= 0)
                L->active[g->leg0[i]] = L->active[g->leg0[i] + 1] = act[i];
        }
        gq_sim_solve(L);
        for (int i = 0; i < g->n; i++) {
            if (g->kind[i] != K_DRIVER)
                continue;
            double a = L->rate[g->leg0[i]], b = L->rate[g->leg0[i] + 1];
            double d = (a > 0 && b > 0) ? s->m->driver_factor / (1.0 / a + 1.0 / b) : 0;
            g->main->demand[i] = d;
            cap_min(&g->main->demand[i], g->flowcap[i]);
        }
    }
    for (int i = 0; i < g->n; i++)
        g->main->active[i] = act[i];
    gq_sim_solve(g->main);
    for (int i = 0; i < g->n; i++)
        r[i] = g->main->rate[i];
}

/* The rate flow i streams at in a round: the solved rate r times its noise
 * factor nf, never above the theoretical rate of the narrowest PCIe link on
 * its path (99.5 % of it): noise moves a figure, physics bounds it. */
static double noisy_rate(const gq_group *g, int i, double r, double nf)
{
    double x = r * nf, top = g->phys[i] * 0.995;
    return g->phys[i] > 0 && x > top && r <= top ? top : x;
}

/* Seconds per copy of flow i at streaming rate r (noise applied). */
static double copy_time(const gq_group *g, int i, double r)
{
    const gq_flow *f = &g->flows[i];
    double t = (double)f->bytes / r + g->cost[i];
    if (f->method == GQ_METHOD_STAGED) {
        uint64_t chunk = f->chunk_bytes ? f->chunk_bytes : 8 * GQ_MiB;
        if (chunk > f->bytes)
            chunk = f->bytes;
        t += (double)chunk / r; /* pipeline fill */
    }
    return t;
}

/* Per-flow state of one run. */
typedef struct run_state {
    int n;
    bool *act;     /* still copying */
    double *r;     /* streaming rate, B/s */
    double *speed; /* copies per second */
    double *prog;  /* copies done so far (fractional) */
    double *start; /* when the flow's worker left the barrier */
    double *nf;    /* noise factor */
} run_state;

static void run_state_free(run_state *rs)
{
    free(rs->act);
    free(rs->r);
    free(rs->speed);
    free(rs->prog);
    free(rs->start);
    free(rs->nf);
}

static int run_state_alloc(run_state *rs, int n)
{
    rs->n = n;
    rs->act = calloc((size_t)n, sizeof *rs->act);
    rs->r = calloc((size_t)n, sizeof *rs->r);
    rs->speed = calloc((size_t)n, sizeof *rs->speed);
    rs->prog = calloc((size_t)n, sizeof *rs->prog);
    rs->start = calloc((size_t)n, sizeof *rs->start);
    rs->nf = calloc((size_t)n, sizeof *rs->nf);
    return !rs->act || !rs->r || !rs->speed || !rs->prog || !rs->start || !rs->nf ? -1 : 0;
}

/* Start times, noise factors and each result's fixed fields; t0 is when the
 * workers are released. The noise model is noise.c's: each worker leaves
 * the barrier within FRAC x 10 ms, and each flow's rate is scaled by its
 * path's drift for this seed, its jitter in this call and, now and then, a
 * slow round. The topology's skew hook makes one worker late on purpose. */
static void start_flows(const sim_priv *s, const gq_group *g, const gq_run_opts *o, uint64_t call, double t0,
                        run_state *rs, gq_flow_result *res)
{
    int late = gq_sim_late_flow(s->seed, s->m->skew_share, rs->n, call);
    for (int i = 0; i < rs->n; i++) {
        uint64_t flow = gq_sim_hash(g->key[i], 0x666c6f77ull);
        rs->start[i] =
            t0 + gq_sim_start_delay(s->seed, s->noise, flow, call) + (i == late ? s->m->skew_s : 0);
        rs->nf[i] = gq_sim_flow_noise(s->seed, s->noise, s->m->drift_share, (gq_sim_path_class)g->cls[i],
                                      g->shared[i] ? g->nshared : 0, g->path[i], flow, call, NULL);
        rs->act[i] = true;
        memset(&res[i], 0, sizeof res[i]);
        res[i].tag = g->flows[i].tag;
        res[i].status = GQ_OK;
        res[i].host_numa_actual = g->host_numa[i];
        res[i].verified = o->verify;
        res[i].verify_ok = true;
    }
}

/* Where the event loop of a run by reps stands. */
typedef struct reps_loop {
    int left;     /* flows still active */
    int measured; /* measured flows still active; -1: the rest run by their count */
    double tend_all;
} reps_loop;

/* Rates and copy speeds of the active flows at time t, and the time of the
 * next completion (INFINITY if none); a flow with no bandwidth fails. */
static double next_finish(const sim_priv *s, gq_group *g, const gq_run_opts *o, run_state *rs,
                          gq_flow_result *res, double t, bool until_measured, reps_loop *lp)
{
    solve_active(s, g, rs->act, rs->r);
    double tn = INFINITY;
    for (int i = 0; i < rs->n; i++) {
        if (!rs->act[i])
            continue;
        if (!(rs->r[i] > 0)) {
            rs->act[i] = false;
            lp->left--;
            if (!g->flows[i].interferer && lp->measured > 0)
                lp->measured--;
            res[i].status = GQ_E_BACKEND;
            snprintf(res[i].error, sizeof res[i].error, "sim: the flow got no bandwidth");
            res[i].t_start = res[i].t_end = rs->start[i];
            continue;
        }
        rs->speed[i] = 1.0 / copy_time(g, i, noisy_rate(g, i, rs->r[i], rs->nf[i]));
        if (until_measured && g->flows[i].interferer)
            continue;
        double from = t > rs->start[i] ? t : rs->start[i];
        double fin = from + ((double)o->reps - rs->prog[i]) / rs->speed[i];
        if (fin < tn)
            tn = fin;
    }
    return tn;
}

/* Advance every active flow from t to tn; flows that finish by tn are done. */
static void advance_flows(const gq_group *g, const gq_run_opts *o, run_state *rs, gq_flow_result *res,
                          double t, double tn, bool until_measured, reps_loop *lp)
{
    for (int i = 0; i < rs->n; i++) {
        if (!rs->act[i])
            continue;
        double from = t > rs->start[i] ? t : rs->start[i];
        if (until_measured && g->flows[i].interferer) {
            if (tn > from)
                rs->prog[i] += (tn - from) * rs->speed[i];
            continue;
        }
        double fin = from + ((double)o->reps - rs->prog[i]) / rs->speed[i];
        if (fin <= tn * (1.0 + 1e-12)) {
            if (!g->flows[i].interferer)
                lp->measured--;
            rs->prog[i] = o->reps;
            rs->act[i] = false;
            lp->left--;
            res[i].t_start = rs->start[i];
            res[i].t_end = fin;
            res[i].copies_done = o->reps;
            res[i].bytes_done = (uint64_t)o->reps * g->flows[i].bytes;
            if (fin > lp->tend_all)
                lp->tend_all = fin;
        } else if (tn > from) {
            rs->prog[i] += (tn - from) * rs->speed[i];
        }
    }
}

/* The measured flows are done at t: the interferers finish the copy they are in. */
static void finish_interferers(const gq_group *g, run_state *rs, gq_flow_result *res, double t, reps_loop *lp)
{
    for (int i = 0; i < rs->n; i++) {
        if (!rs->act[i] || !g->flows[i].interferer)
            continue;
        double k = ceil(rs->prog[i] - 1e-9);
        if (k < 1)
            k = 1;
        double fin = t + (k - rs->prog[i]) / rs->speed[i];
        rs->act[i] = false;
        lp->left--;
        res[i].t_start = rs->start[i];
        res[i].t_end = fin;
        res[i].copies_done = (int)k;
        res[i].bytes_done = (uint64_t)k * g->flows[i].bytes;
        if (fin > lp->tend_all)
            lp->tend_all = fin;
    }
}

/* A run by reps; returns when the last flow ended. */
static double run_by_reps(const sim_priv *s, gq_group *g, const gq_run_opts *o, run_state *rs,
                          gq_flow_result *res, double t0)
{
    /* Event-driven: re-solve whenever a flow finishes its copies. The
     * start skew shifts windows but is not an event (sharing is solved as
     * if all had started). */
    /* Interferers copy until every measured flow has finished (the
     * backend contract), then complete the copy they are in. */
    reps_loop lp = {.left = rs->n, .measured = 0, .tend_all = t0};
    for (int i = 0; i < rs->n; i++)
        lp.measured += !g->flows[i].interferer;
    if (lp.measured == 0)
        lp.measured = -1; /* no measured flow: interferers run by their count */
    double t = t0;
    while (lp.left > 0) {
        const bool until_measured = lp.measured > 0; /* for this whole step */
        double tn = next_finish(s, g, o, rs, res, t, until_measured, &lp);
        if (!isfinite(tn)) {
            if (lp.measured != 0)
                break;
            tn = t; /* the last measured flow got no bandwidth: end the interferers now */
        }
        advance_flows(g, o, rs, res, t, tn, until_measured, &lp);
        t = tn;
        if (lp.measured == 0) {
            finish_interferers(g, rs, res, t, &lp);
            lp.measured = -1; /* done: the rest run by count */
        }
    }
    return lp.tend_all;
}

/* The piece a flow's window may end at: its grain (or its split-warp
 * partner's smaller one) in whole quanta; the whole copy without a grain. */
static uint64_t window_piece(const gq_group *g, const gq_run_opts *o, int i)
{
    uint64_t bytes = g->flows[i].bytes;
    /* with a grain, the window may end at any completed piece; a
     * split-warp pair's kernel moves both flows in the same pieces */
    uint64_t gr = o->grain ? o->grain[i] : 0;
    int pj = g->flows[i].split_with - 1;
    if (o->grain && pj >= 0 && pj < g->n && (gr == 0 || (o->grain[pj] > 0 && o->grain[pj] < gr)))
        gr = o->grain[pj];
    if (gr > 0) {
        uint64_t q = gq_flow_piece_quantum(&g->flows[i]);
        gr = (gr + q - 1) / q * q;
    }
    return gr > 0 && gr < bytes && !g->flows[i].interferer ? gr : bytes;
}

/* A run by duration; returns its deadline. */
static double run_by_duration(const sim_priv *s, gq_group *g, const gq_run_opts *o, run_state *rs,
                              gq_flow_result *res, double t0)
{
    /* By duration: every flow copies until the common deadline, so the
     * sharing does not change; copies unfinished at the deadline are
     * not counted and the window ends at the last one that finished. */
    double deadline = t0 + o->duration_s;
    solve_active(s, g, rs->act, rs->r);
    for (int i = 0; i < rs->n; i++) {
        res[i].t_start = rs->start[i];
        if (!(rs->r[i] > 0)) {
            res[i].status = GQ_E_BACKEND;
            snprintf(res[i].error, sizeof res[i].error, "sim: the flow got no bandwidth");
            res[i].t_end = rs->start[i];
            continue;
        }
        double ct = copy_time(g, i, noisy_rate(g, i, rs->r[i], rs->nf[i]));
        uint64_t bytes = g->flows[i].bytes;
        uint64_t piece = window_piece(g, o, i);
        double pt = ct * (double)piece / (double)bytes;
        double avail = deadline - rs->start[i];
        double k = avail > 0 ? floor(avail / pt + 1e-9) : 0;
        if (k > 2e9)
            k = 2e9;
        res[i].copies_done = (int)floor(k * (double)piece / (double)bytes + 1e-9);
        res[i].bytes_done = (uint64_t)k * piece;
        res[i].t_end = k > 0 ? rs->start[i] + k * pt : deadline;
    }
    return deadline;
}

/* A split-warp pair is one kernel: both report the slower half's window
 * (the kernel ends when both halves have). Equal sizes: the slower one
 * has the longer time per byte. */
static void align_split_pairs(const gq_group *g, gq_flow_result *res)
{
    int n = g->n;
    for (int i = 0; i < n; i++) {
        int j = g->flows[i].split_with - 1;
        if (j <= i || j >= n || res[i].status != GQ_OK || res[j].status != GQ_OK)
            continue;
        double ri = res[i].bytes_done / (res[i].t_end - res[i].t_start + 1e-30);
        double rj = res[j].bytes_done / (res[j].t_end - res[j].t_start + 1e-30);
        gq_flow_result *slow = ri < rj ? &res[i] : &res[j], *fast = ri < rj ? &res[j] : &res[i];
        fast->t_start = slow->t_start;
        fast->t_end = slow->t_end;
        fast->copies_done = slow->copies_done;
        fast->bytes_done = slow->bytes_done;
    }
}

int gq_sim_be_run(gq_backend *be, gq_group *g, const gq_run_opts *o, gq_flow_result *res, gq_err *err)
{
    sim_priv *s = P(be);
    int rc = GQ_OK;
    if (o->reps <= 0 && !(o->duration_s > 0))
        return gq_err_set(err, GQ_E_USAGE, "a run needs reps > 0 or a duration > 0");
    run_state rs = {0};
    if (run_state_alloc(&rs, g->n)) {
        rc = gq_err_set(err, GQ_E_NOMEM, "out of memory");
        goto out;
    }
    if (!s->in_coll)
        gq_sim_measure_call(s);
    uint64_t call = ++s->calls;
    double t0 = s->clock + 20e-6; /* after the barrier and the launches */
    start_flows(s, g, o, call, t0, &rs, res);
    double tend_all =
        o->reps > 0 ? run_by_reps(s, g, o, &rs, res, t0) : run_by_duration(s, g, o, &rs, res, t0);
    align_split_pairs(g, res);
    s->clock = tend_all + 10e-6;
out:
    run_state_free(&rs);
    return rc;
}
