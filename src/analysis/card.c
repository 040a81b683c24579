#include "analysis/card.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/bottlenecks.h"
#include "analysis/domains.h"
#include "analysis/placement.h"
#include "analysis/probes.h"
#include "analysis/sweepfit.h"
#include "measure/catalog.h"
#include "core/units.h"

/* ---- steps ---------------------------------------------------------------- */

const char *gq_card_step_status_name(gq_card_step_status s)
{
    static const char *const n[] = {"planned", "done", "skipped", "interrupted", "failed"};
    return (unsigned)s < 5 ? n[s] : "?";
}

void gq_card_opts_default(gq_card_opts *o)
{
    memset(o, 0, sizeof *o);
    o->level = GQ_LEVEL_STANDARD;
    o->budget_s = gq_card_level_budget_s(o->level);
    o->stress_s = gq_card_level_stress_s(o->level);
    o->offload = -1;
    o->bytes = 256 * GQ_MiB;
    o->verify = true;
}

/* ---- planning ------------------------------------------------------------- */

double gq_card_estimate_measurement(int nflows, int rounds, double round_s, uint64_t bytes)
{
    /* Setup: allocating and pinning the buffers (a few GB/s) and the untimed
     * verification copy. */
    double setup = 0.05 + nflows * ((double)bytes / 4e9 + 0.01);
    double r = nflows > 1 ? rounds + 2 : rounds + 1;
    return r * round_s + setup;
}

static const struct {
    int rounds;
    double round_s;
    int sweep_points;
} quality[] = {{5, 0.10, 10}, {5, 0.05, 10}, {3, 0.05, 6}, {3, 0.03, 5}};
#define NQUALITY ((int)(sizeof quality / sizeof quality[0]))

int gq_card_sweep_sizes(int n, uint64_t *out)
{
    if (n < 2)
        n = 2;
    if (n > 19)
        n = 19;
    for (int k = 0; k < n; k++) {
        int e = 12 + (int)lround((double)k * 18 / (n - 1));
        out[k] = 1ull << e;
    }
    return n;
}

static bool p2p_possible(const gq_topo *t, int a, int b)
{
    return t->p2p_cuda[a][b] != 0;
}

long gq_card_p2p_path_class(const gq_topo *t, int a, int b)
{
    int nv = t->nvlinks[a][b] > 0 ? t->nvlinks[a][b] : 0;
    return (long)t->level[a][b] * 1000 + nv;
}

long gq_card_host_path_class(const gq_topo *t, int g)
{
    const gq_gpu_info *G = &t->gpu[g];
    return (long)(G->numa_node + 1) * 100000 + (G->pcie_gen_max + 1) * 100 + (G->pcie_width_max + 1);
}

int gq_card_driver_staged_pairs(const gq_topo *t, const int *gpus, int n, int *src, int *dst, int max)
{
    long keys[GQ_MAX_GPUS];
    int k = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            int a = gpus[i], b = gpus[j];
            if (i == j || p2p_possible(t, a, b) || k >= max || k >= GQ_MAX_GPUS)
                continue;
            long key = gq_card_host_path_class(t, a) * 10000000L + gq_card_host_path_class(t, b);
            bool seen = false;
            for (int q = 0; q < k && !seen; q++)
                seen = keys[q] == key;
            if (seen)
                continue;
            keys[k] = key;
            src[k] = a;
            dst[k++] = b;
        }
    return k;
}

/* Count distinct keys (at most GQ_CARD_MAX_SWEEP_PATHS - 1). */
static int add_key(long *keys, int n, long k)
{
    for (int i = 0; i < n; i++)
        if (keys[i] == k)
            return n;
    if (n < GQ_CARD_MAX_SWEEP_PATHS - 1)
        keys[n++] = k;
    return n;
}

void gq_card_full_sweep_counts(const gq_topo *t, const int *gpus, int n, int *p2p, int *host)
{
    long keys[GQ_CARD_MAX_SWEEP_PATHS];
    int np = 0, nh = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            if (i != j && p2p_possible(t, gpus[i], gpus[j]))
                np = add_key(keys, np, gq_card_p2p_path_class(t, gpus[i], gpus[j]));
    /* each class may split into pairs within and across measured domains */
    *p2p = np ? 2 * np + 1 : 0;
    if (*p2p > GQ_CARD_MAX_SWEEP_PATHS)
        *p2p = GQ_CARD_MAX_SWEEP_PATHS;
    for (int i = 0; i < n; i++)
        nh = add_key(keys, nh, gq_card_host_path_class(t, gpus[i]));
    *host = nh + 1;
}

/* ---- each step's estimate (gq_card_est_NAME: analysis/card_steps.h) ------- */

double gq_card_est_identity(const gq_card_est_ctx *c)
{
    (void)c;
    return 0.2;
}

/* quick: the pairs with P2P only; full: both directions of the matrix (read and write); standard and
 * full: the driver's staged copy beside the pipelined one, one pair per class */
double gq_card_est_matrix(const gq_card_est_ctx *c)
{
    const gq_card_opts *o = c->o;
    int n = c->n;
    double e = o->level == GQ_LEVEL_QUICK ? c->npairs * c->one
               : n > 1                    ? n * (n - 1) * c->one * (o->level == GQ_LEVEL_FULL ? 2 : 1)
                                          : 0;
    if (o->level != GQ_LEVEL_QUICK && n > 1) {
        int ds[GQ_MAX_GPUS], dd[GQ_MAX_GPUS];
        e += gq_card_driver_staged_pairs(c->t, o->gpus, n, ds, dd, GQ_MAX_GPUS) * c->one;
    }
    return e;
}

double gq_card_est_host(const gq_card_est_ctx *c)
{
    return 2 * c->n * c->one;
}

/* Contention: planned with the domains the tree suggests. */
double gq_card_est_contention(const gq_card_est_ctx *c)
{
    const gq_card_opts *o = c->o;
    gq_domains dom;
    gq_probes_assume_domains(c->t, o->gpus, c->n, &dom);
    gq_probe_plan pp = {0};
    gq_err e;
    double est = 0;
    if (gq_probes_plan_contention(&pp, c->t, o->gpus, c->n, &dom, &e) == GQ_OK)
        for (int i = 0; i < pp.n; i++) {
            const gq_probe *p = &pp.v[i];
            if (p->kind == GQ_PROBE_HOST_ALONE)
                continue;
            int nf = p->npairs ? p->npairs : p->ngpus;
            est += gq_card_estimate_measurement(nf, c->rounds, c->round_s, o->bytes);
        }
    gq_probe_plan_free(&pp);
    return est;
}

double gq_card_est_bidir(const gq_card_est_ctx *c)
{
    return c->n > 0 ? gq_card_estimate_measurement(2 * c->n, c->rounds, c->round_s, c->o->bytes) : 0;
}

/* standard: the fastest and the slowest path; full: every distinct path (one per class of P2P pair
 * and of host path, and the fastest of each kind) */
double gq_card_est_sweep(const gq_card_est_ctx *c)
{
    const gq_card_opts *o = c->o;
    uint64_t sizes[32];
    int np = gq_card_sweep_sizes(c->sweep_points, sizes);
    double sw = 0;
    for (int k = 0; k < np; k++)
        sw += gq_card_estimate_measurement(1, 3, c->round_s, sizes[k]);
    int full_p2p = 0, full_host = 0;
    if (o->level == GQ_LEVEL_FULL)
        gq_card_full_sweep_counts(c->t, o->gpus, c->n, &full_p2p, &full_host);
    return o->no_sweep ? 0 : (o->level == GQ_LEVEL_FULL ? full_p2p + full_host : 2) * sw;
}

/* a round chases GQ_CATALOG_CHASE_ITERS loads of ~1.2 us to host memory */
double gq_card_est_latency(const gq_card_est_ctx *c)
{
    return c->o->no_latency ? 0 : (c->n + c->npairs) * ((c->rounds + 0.1) * GQ_CARD_LAT_ROUND_S + 0.05);
}

double gq_card_est_placement(const gq_card_est_ctx *c)
{
    return c->o->no_placement || c->n < 2
               ? 0
               : 6 * gq_card_estimate_measurement(c->n, c->rounds, c->round_s, c->o->bytes);
}

/* place --tp 2 on the even GPUs, on the matrix step's pairwise copies: at most GQ_CARD_COLL_BUDGET
 * groups' all-reduce alone and the two verifications at once, each R rounds of 5 +
 * GQ_CARD_COLL_ITERS iterations of GQ_CARD_COLL_BYTES costed at 10 GB/s (a PCIe Gen4 pair without
 * P2P; faster links take less), plus 0.1 s of setup */
double gq_card_est_collectives(const gq_card_est_ctx *c)
{
    int ne = c->n - c->n % 2;
    return ne < 2 ? 0
                  : (GQ_CARD_COLL_BUDGET + 2) *
                        (c->rounds * (5 + GQ_CARD_COLL_ITERS) * (double)GQ_CARD_COLL_BYTES / 10e9 + 0.1);
}

double gq_card_est_stress(const gq_card_est_ctx *c)
{
    return c->o->stress_s > 0 ? c->o->stress_s + 2.0 : 0;
}

static double (*const est_fn[GQ_CS_COUNT])(const gq_card_est_ctx *) = {
#define EST_(ID, NAME, ...) [GQ_CS_##ID] = gq_card_est_##NAME,
    GQ_CARD_STEPS(EST_)
#undef EST_
};

/* Step estimates at one quality level: each step's own, 0 where its level does not run it. */
static void estimate(const gq_topo *t, const gq_card_opts *o, int q, double est[GQ_CS_COUNT])
{
    gq_card_est_ctx c = {.t = t,
                         .o = o,
                         .n = o->ngpus,
                         .rounds = quality[q].rounds,
                         .round_s = quality[q].round_s,
                         .sweep_points = quality[q].sweep_points};
    c.one = gq_card_estimate_measurement(1, c.rounds, c.round_s, o->bytes);
    for (int i = 0; i < c.n; i++) /* ordered pairs with P2P */
        for (int j = 0; j < c.n; j++)
            if (i != j && p2p_possible(t, o->gpus[i], o->gpus[j]))
                c.npairs++;
    for (int s = 0; s < GQ_CS_COUNT; s++)
        est[s] = gq_card_level_has(o->level, (gq_card_step_id)s) ? est_fn[s](&c) : 0;
}

double gq_card_default_budget_s(const gq_topo *t, const gq_card_opts *o)
{
    double own = gq_card_level_budget_s(o->level);
    if (o->ngpus < 1)
        return own;
    double est[GQ_CS_COUNT], total = 0;
    estimate(t, o, NQUALITY - 1, est);
    for (int s = 0; s < GQ_CS_COUNT; s++)
        if (est[s] > 0)
            total += est[s];
    total = ceil(total);
    if (total > GQ_CARD_DEFAULT_BUDGET_MAX_X * own)
        total = GQ_CARD_DEFAULT_BUDGET_MAX_X * own;
    return total > own ? total : own;
}

static void fmt_dur(double s, char *buf, size_t n)
{
    if (s < 90)
        snprintf(buf, n, "%.0fs", ceil(s));
    else if (s < 3600)
        snprintf(buf, n, "%.0fm%02.0fs", floor(ceil(s) / 60), fmod(ceil(s), 60)); /* 119.5 s: 2m00s */
    else
        snprintf(buf, n, "%.1fh", s / 3600);
}

/* The refusal of a budget below the smallest card (min), naming the budget
 * that fits the whole card (full). */
static int too_small(const gq_card_opts *o, double min, double full, gq_err *err)
{
    char a[32], b[32], c[32];
    fmt_dur(o->budget_s, a, sizeof a);
    fmt_dur(min, b, sizeof b);
    fmt_dur(full, c, sizeof c);
    if (o->stress_s > 0)
        return gq_err_set(
            err, GQ_E_USAGE,
            "--budget %s is too small: identity and each GPU's host paths need about %s with the "
            "%.0f s stress (--budget %s fits the whole card; or shorten --stress / use --no-stress)",
            a, b, o->stress_s, c);
    return gq_err_set(
        err, GQ_E_USAGE,
        "--budget %s is too small: identity and each GPU's host paths need about %s on %d GPU%s "
        "(--budget %s fits the whole card)",
        a, b, o->ngpus, o->ngpus == 1 ? "" : "s", c);
}

/* The best quality q (0 best) at which the steps fit the budget, dropping
 * optional steps (est[s] = -1) from the first of drop_order when no quality
 * fits; est gets each step's estimate at q, *total their sum. */
static int fit_quality(const gq_topo *t, const gq_card_opts *o, double *est, double *total)
{
    /* Optional steps (DROP > 0), dropped from the lowest DROP first when nothing else fits. */
    gq_card_step_id drop_order[GQ_CS_COUNT];
    int ndrop = 0;
    for (int s = 0; s < GQ_CS_COUNT; s++) {
        int d = gq_card_step_drop((gq_card_step_id)s), k;
        if (d <= 0)
            continue;
        for (k = ndrop++; k > 0 && gq_card_step_drop(drop_order[k - 1]) > d; k--)
            drop_order[k] = drop_order[k - 1];
        drop_order[k] = (gq_card_step_id)s;
    }
    int q, dropped = 0;
    for (dropped = 0; dropped <= ndrop; dropped++) {
        for (q = 0; q < NQUALITY; q++) {
            estimate(t, o, q, est);
            for (int d = 0; d < dropped; d++)
                if (est[drop_order[d]] > 0) /* a step that would run: cut for the budget */
                    est[drop_order[d]] = -1;
            *total = 0;
            for (int s = 0; s < GQ_CS_COUNT; s++)
                if (est[s] > 0)
                    *total += est[s];
            if (*total <= o->budget_s)
                break;
        }
        if (q < NQUALITY)
            break;
    }
    if (q >= NQUALITY)
        q = NQUALITY - 1; /* cannot happen: min fits */
    return q;
}

/* The note and reason of step s, which does not run (est_s < 0: cut for the
 * budget a, as written). */
static void skip_note(const gq_card_opts *o, int s, double est_s, const char *a, gq_card_step *st)
{
    const char *why = "nothing to measure";
    gq_ev_reason r = GQ_EVR_NOT_APPLICABLE;
    if (est_s < 0) {
        snprintf(st->note, sizeof st->note, "did not fit the %s budget", a);
        st->reason = GQ_EVR_BUDGET;
        return;
    }
    if (!gq_card_level_has(o->level, (gq_card_step_id)s)) {
        why = o->level == GQ_LEVEL_QUICK ? "not in the quick level" : "not in this level";
        r = GQ_EVR_LEVEL;
    } else if (s == GQ_CS_STRESS) {
        why = "--no-stress";
        r = GQ_EVR_USER;
    } else if ((s == GQ_CS_SWEEP && o->no_sweep) || (s == GQ_CS_LATENCY && o->no_latency) ||
               (s == GQ_CS_PLACEMENT && o->no_placement)) {
        why = s == GQ_CS_PLACEMENT && o->no_roles ? "turned off: no roles to place (--prefill 0 --decode 0 "
                                                    "--offload 0)"
                                                  : "turned off";
        r = GQ_EVR_USER;
    } else if (gq_card_step_needs_pair((gq_card_step_id)s) && o->ngpus < 2) {
        why = "one GPU: no pair to measure";
        r = GQ_EVR_ONE_GPU;
    } else if (s == GQ_CS_MATRIX && o->level == GQ_LEVEL_QUICK) {
        why = "no pair has P2P (the quick level measures P2P pairs only)";
    }
    snprintf(st->note, sizeof st->note, "%s", why);
    st->reason = r;
}

/* The identity step's note: the level's budget raised for the machine, and
 * the quality lowered to fit the budget. */
static void identity_note(const gq_card_opts *o, const double *worst, int q, gq_card_plan *out)
{
    char *note = out->step[GQ_CS_IDENTITY].note;
    size_t nn = sizeof out->step[GQ_CS_IDENTITY].note;
    if (o->level_budget_s > 0 && o->budget_s > o->level_budget_s) {
        char own[32], raised[32];
        fmt_dur(o->level_budget_s, own, sizeof own);
        fmt_dur(o->budget_s, raised, sizeof raised);
        double need = 0;
        for (int s = 0; s < GQ_CS_COUNT; s++)
            need += worst[s] > 0 ? worst[s] : 0;
        snprintf(note, nn, "the %s level's %s budget raised to %s for %d GPUs (%s)",
                 gq_card_level_name(o->level), own, raised, o->ngpus,
                 o->budget_s >= ceil(need) ? "every step of the level at the lowest quality"
                                           : "the most a default is raised to: --budget gives more");
    }
    if (q > 0) {
        size_t l = strlen(note);
        snprintf(note + l, nn - l, "%squality lowered to fit the budget: %d rounds of %.2f s per measurement",
                 l ? "; " : "", out->rounds, out->round_s);
    }
}

int gq_card_plan_make(const gq_topo *t, const gq_card_opts *o, gq_card_plan *out, gq_err *err)
{
    memset(out, 0, sizeof *out);
    if (o->ngpus < 1)
        return gq_err_set(err, GQ_E_USAGE, "no GPU selected for the card");
    if (!(o->budget_s > 0))
        return gq_err_set(err, GQ_E_USAGE, "--budget must be > 0");
    double est[GQ_CS_COUNT], best[GQ_CS_COUNT], worst[GQ_CS_COUNT];
    estimate(t, o, 0, best);
    estimate(t, o, NQUALITY - 1, worst);
    double full = 0;
    for (int s = 0; s < GQ_CS_COUNT; s++)
        full += best[s];
    double min = 0; /* the steps never dropped: identity, host, stress */
    for (int s = 0; s < GQ_CS_COUNT; s++)
        if (!gq_card_step_drop((gq_card_step_id)s))
            min += worst[s];
    out->min_s = min;
    out->full_s = full;
    if (o->budget_s < min)
        return too_small(o, min, full, err);
    double total = 0;
    int q = fit_quality(t, o, est, &total);
    out->quality = q;
    out->level = o->level;
    out->rounds = quality[q].rounds;
    out->round_s = quality[q].round_s;
    out->sweep_points = quality[q].sweep_points;
    out->est_total_s = total;
    char a[32];
    fmt_dur(o->budget_s, a, sizeof a);
    for (int s = 0; s < GQ_CS_COUNT; s++) {
        gq_card_step *st = &out->step[s];
        st->est_s = est[s] > 0 ? est[s] : 0;
        st->run = est[s] > 0 || s == GQ_CS_IDENTITY;
        st->status = st->run ? GQ_CSS_PLANNED : GQ_CSS_SKIPPED;
        st->reason = GQ_EVR_NONE;
        if (st->run)
            continue;
        skip_note(o, s, est[s], a, st);
    }
    identity_note(o, worst, q, out);
    return GQ_OK;
}

void gq_card_result_free(gq_card_result *r)
{
    if (!r)
        return;
    gq_records_free(&r->rs);
    if (r->have_stress)
        gq_stress_result_free(&r->stress);
    free(r->stress_summary);
    free(r->place_model);
    free(r->place_result);
    memset(r, 0, sizeof *r);
}
