/* The host inference (analysis/bottlenecks_internal.h): the budgets the
 * host runs of each direction reveal, their folding, and the asymmetry
 * inside the largest run. */
#include "analysis/bottlenecks.h"

#include "analysis/bottlenecks_internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- host inference --------------------------------------------------------- */

typedef struct known {
    mask_t set;
    double cap, lo, hi; /* the measured capacity and its interval */
    int obs;            /* the observation that measured it */
} known;

static double cap_at(const known *k, at_t at)
{
    return at == AT_LO ? k->lo : at == AT_HI ? k->hi : k->cap;
}

/* Expected aggregate of the active GPUs `act`: alone rates, capped by the
 * known budgets, nested ones first. Budgets are handled as a laminar family
 * (parent: the budget whose inside is being evaluated, -1 for the top); an
 * overlapping budget only caps the GPUs not already under a larger one. */
static bool strictly_inside(mask_t a, mask_t b)
{
    return !(a & ~b) && a != b;
}

static double expect(mask_t act, const double *alone, const known *k, int nk, int parent, at_t at)
{
    double total = 0;
    mask_t covered = 0;
    int order[GQ_BN_MAX];
    int no = 0;
    for (int i = 0; i < nk; i++) {
        if (i == parent || !(k[i].set & act) || (parent >= 0 && !strictly_inside(k[i].set, k[parent].set)))
            continue;
        bool inside = false;
        for (int j = 0; j < nk && !inside; j++)
            inside = j != i && j != parent && (k[j].set & act) &&
                     (parent < 0 || strictly_inside(k[j].set, k[parent].set)) &&
                     strictly_inside(k[i].set, k[j].set);
        if (!inside)
            order[no++] = i;
    }
    /* larger tops first */
    for (int a = 1; a < no; a++)
        for (int b2 = a; b2 > 0 && popcount(k[order[b2]].set) > popcount(k[order[b2 - 1]].set); b2--) {
            int t = order[b2];
            order[b2] = order[b2 - 1];
            order[b2 - 1] = t;
        }
    for (int t = 0; t < no; t++) {
        const known *T = &k[order[t]];
        mask_t part = T->set & act & ~covered;
        if (!part)
            continue;
        double inner = expect(part, alone, k, nk, order[t], at), cap = cap_at(T, at);
        total += inner < cap ? inner : cap;
        covered |= part;
    }
    for (int g = 0; g < 64; g++)
        if ((act & ~covered) & bit(g))
            total += alone[g];
    return total;
}

int gq_bn_add_evidence(gq_bottleneck *bn, int obs)
{
    for (int i = 0; i < bn->nevidence; i++)
        if (bn->evidence[i] == obs)
            return 0;
    if (bn->nevidence < GQ_BN_MAX_EVIDENCE)
        bn->evidence[bn->nevidence++] = obs;
    return 0;
}

gq_bottleneck *gq_bn_find_or_add(gq_bottlenecks *b, bool p2p, gq_direction d, mask_t set, bool *added)
{
    *added = false;
    for (int i = 0; i < b->n; i++)
        if (b->v[i].p2p == p2p && b->v[i].direction == d && mask_of(b->v[i].gpus, b->v[i].ngpus) == set)
            return &b->v[i];
    if (b->n >= GQ_BN_MAX)
        return NULL;
    gq_bottleneck *bn = &b->v[b->n++];
    memset(bn, 0, sizeof *bn);
    bn->p2p = p2p;
    bn->direction = d;
    bn->ngpus = mask_list(set, bn->gpus);
    *added = true;
    return bn;
}

static int cmp_obs_size(const void *a, const void *b)
{
    const gq_bn_obs *x = *(const gq_bn_obs *const *)a, *y = *(const gq_bn_obs *const *)b;
    if (x->ngpus != y->ngpus)
        return x->ngpus - y->ngpus;
    return (x->group > y->group) - (x->group < y->group);
}

double gq_bn_rec_spread(const gq_recordset *rs, int i)
{
    double s = i >= 0 ? rs->v[i].value.spread : 0;
    return s > 0 && isfinite(s) ? s : 0;
}

/* An observation's aggregate and its interval. */
void gq_bn_obs_interval(const gq_recordset *rs, gq_bn_obs *ob)
{
    gq_interval iv = gq_record_interval(&rs->v[ob->record]);
    ob->aggregate_lo_gbps = iv.lo;
    ob->aggregate_hi_gbps = iv.hi;
}

/* Three-way: 1 when [lo, hi] is wholly below [llo, lhi], 0 when wholly at or
 * above it, -1 when the two overlap (open). */
int gq_bn_below(double lo, double hi, double llo, double lhi)
{
    if (hi < llo)
        return 1;
    if (lo >= lhi)
        return 0;
    return -1;
}

void gq_bn_gpus_text(const int *g, int n, char *buf, size_t len)
{
    gq_domains_set_str(g, n, buf, len);
}

/* Record a decision left open. */
void gq_bn_add_open(gq_bottlenecks *b, gq_bn_open_kind kind, const gq_bn_obs *ob, int other, double flo,
                    double fhi, double llo, double lhi, const char *fmt, ...)
{
    if (b->nopen >= GQ_BN_MAX)
        return;
    gq_bn_open *u = &b->open[b->nopen++];
    memset(u, 0, sizeof *u);
    u->kind = kind;
    u->obs = (int)(ob - b->obs);
    u->group = ob->group;
    u->other = other;
    u->p2p = ob->p2p;
    u->direction = ob->direction;
    u->ngpus = ob->ngpus;
    memcpy(u->gpus, ob->gpus, sizeof u->gpus);
    u->figure_lo_gbps = flo;
    u->figure_hi_gbps = fhi;
    u->limit_lo_gbps = llo;
    u->limit_hi_gbps = lhi;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(u->text, sizeof u->text, fmt, ap);
    va_end(ap);
}

static bool fold_noted(const gq_bottlenecks *b, const gq_bottleneck *s, const gq_bottleneck *t)
{
    for (int i = 0; i < b->nopen; i++)
        if (b->open[i].kind == GQ_BN_OPEN_FOLD && b->open[i].obs == s->evidence[0] &&
            b->open[i].other == t->evidence[0])
            return true;
    return false;
}

/* Folds each host budget of direction dir into a larger one containing it when the larger one is
 * no wider, noting the folds left open. */
static void host_fold(gq_bottlenecks *b, gq_direction dir, const gq_bn_opts *o)
{
    /* The small set only saw the large set's budget. */
    bool changed = true;
    while (changed) {
        changed = false;
        for (int i = 0; i < b->n && !changed; i++) {
            gq_bottleneck *s = &b->v[i];
            if (s->p2p || s->direction != dir)
                continue;
            mask_t ms = mask_of(s->gpus, s->ngpus);
            for (int j = 0; j < b->n && !changed; j++) {
                gq_bottleneck *t = &b->v[j];
                if (j == i || t->p2p || t->direction != dir)
                    continue;
                mask_t mt = mask_of(t->gpus, t->ngpus);
                if ((ms & ~mt) || ms == mt)
                    continue;
                /* on intervals: no wider when t's whole interval is within
                 * (1 + min_drop) of s's; wider when wholly above; else open:
                 * named as undetermined, and s folded into t (an open
                 * decision is no budget of its own) */
                double g = 1 + o->min_drop;
                int wider = gq_bn_below(s->capacity_lo_gbps * g, s->capacity_hi_gbps * g, t->capacity_lo_gbps,
                                        t->capacity_hi_gbps);
                if (wider < 0 && s->nevidence > 0 && t->nevidence > 0 && !fold_noted(b, s, t)) {
                    char gs[96], gt[96];
                    gq_bn_gpus_text(s->gpus, s->ngpus, gs, sizeof gs);
                    gq_bn_gpus_text(t->gpus, t->ngpus, gt, sizeof gt);
                    gq_bn_add_open(
                        b, GQ_BN_OPEN_FOLD, &b->obs[s->evidence[0]], t->evidence[0], t->capacity_lo_gbps,
                        t->capacity_hi_gbps, s->capacity_lo_gbps * g, s->capacity_hi_gbps * g,
                        "whether GPUs %s have a %s budget of their own (%.1f-%.1f GB/s) inside the one of "
                        "GPUs %s (%.1f-%.1f GB/s)",
                        gs, dir == GQ_DIR_H2D ? "host-to-GPU" : "GPU-to-host", s->capacity_lo_gbps,
                        s->capacity_hi_gbps, gt, t->capacity_lo_gbps, t->capacity_hi_gbps);
                }
                if (wider <= 0) {
                    for (int e = 0; e < s->nevidence; e++)
                        gq_bn_add_evidence(t, s->evidence[e]);
                    memmove(s, s + 1, (size_t)(b->n - i - 1) * sizeof *s);
                    b->n--;
                    changed = true;
                }
            }
        }
    }
}

/* An undecided run ob of direction slot: whether its GPUs share a budget (held open), or the budget
 * k[inner] found inside them. */
static void host_note_open(gq_bottlenecks *b, const gq_bn_obs *ob, int slot, int held, const known *k,
                           int inner, const gq_bn_opts *o)
{
    char gs[96], d[24];
    gq_bn_gpus_text(ob->gpus, ob->ngpus, gs, sizeof gs);
    snprintf(d, sizeof d, "%s", slot == 0 ? "host-to-GPU" : "GPU-to-host");
    if (held < 0)
        gq_bn_add_open(b, GQ_BN_OPEN_BUDGET, ob, -1, ob->aggregate_lo_gbps, ob->aggregate_hi_gbps,
                       ob->limit_lo_gbps, ob->limit_hi_gbps,
                       "whether GPUs %s share a %s budget: together they moved %.1f-%.1f GB/s, the level "
                       "that means a shared budget is %.1f-%.1f GB/s",
                       gs, d, ob->aggregate_lo_gbps, ob->aggregate_hi_gbps, ob->limit_lo_gbps,
                       ob->limit_hi_gbps);
    else
        gq_bn_add_open(b, GQ_BN_OPEN_BUDGET, ob, k[inner].obs, ob->aggregate_lo_gbps, ob->aggregate_hi_gbps,
                       k[inner].lo * (1 + o->min_drop), k[inner].hi * (1 + o->min_drop),
                       "whether GPUs %s share the %s budget of %.1f-%.1f GB/s found inside them: together "
                       "they moved %.1f-%.1f GB/s",
                       gs, d, k[inner].lo, k[inner].hi, ob->aggregate_lo_gbps, ob->aggregate_hi_gbps);
}

/* Run ob (GPUs set, alone sum) of direction dir held back: a budget found or confirmed, its figure
 * raised when the run got more (and in k, the known budgets); else a repeat of a budget's own set
 * confirms it. */
static void host_take_run(gq_bottlenecks *b, gq_direction dir, gq_bn_obs *ob, mask_t set, double sum,
                          known *k, int *nkp)
{
    int nk = *nkp;
    int ob_index = (int)(ob - b->obs);
    if (ob->contended) {
        bool added;
        gq_bottleneck *bn = gq_bn_find_or_add(b, false, dir, set, &added);
        if (!bn)
            return; /* more bottlenecks than GQ_BN_MAX: the rest are still observations */
        if (added) {
            bn->capacity_gbps = ob->aggregate_gbps;
            bn->capacity_lo_gbps = ob->aggregate_lo_gbps;
            bn->capacity_hi_gbps = ob->aggregate_hi_gbps;
            bn->sum_alone_gbps = sum;
            bn->expected_gbps = ob->expected_gbps;
            if (nk < GQ_BN_MAX)
                k[nk++] = (known){.set = set,
                                  .cap = ob->aggregate_gbps,
                                  .lo = ob->aggregate_lo_gbps,
                                  .hi = ob->aggregate_hi_gbps,
                                  .obs = ob_index};
        } else if (ob->aggregate_gbps > bn->capacity_gbps) {
            bn->capacity_gbps = ob->aggregate_gbps;
            bn->capacity_lo_gbps = ob->aggregate_lo_gbps;
            bn->capacity_hi_gbps = ob->aggregate_hi_gbps;
            for (int i = 0; i < nk; i++)
                if (k[i].set == set) {
                    k[i].cap = ob->aggregate_gbps;
                    k[i].lo = ob->aggregate_lo_gbps;
                    k[i].hi = ob->aggregate_hi_gbps;
                    k[i].obs = ob_index;
                }
        }
        gq_bn_add_evidence(bn, ob_index);
    } else {
        /* a repeat of a known budget's own set confirms it */
        for (int i = 0; i < b->n; i++)
            if (!b->v[i].p2p && b->v[i].direction == dir && mask_of(b->v[i].gpus, b->v[i].ngpus) == set)
                gq_bn_add_evidence(&b->v[i], ob_index);
    }
    *nkp = nk;
}

int gq_bn_infer_host(gq_bottlenecks *b, const gq_recordset *rs, int slot, const gq_bn_opts *o)
{
    gq_direction dir = slot == 0 ? GQ_DIR_H2D : GQ_DIR_D2H;
    gq_bn_obs **ord = malloc((size_t)(b->nobs > 0 ? b->nobs : 1) * sizeof *ord);
    if (!ord)
        return GQ_E_NOMEM;
    int n = 0;
    for (int i = 0; i < b->nobs; i++)
        if (!b->obs[i].p2p && b->obs[i].direction == dir)
            ord[n++] = &b->obs[i];
    qsort(ord, (size_t)n, sizeof *ord, cmp_obs_size);

    known k[GQ_BN_MAX];
    int nk = 0;
    for (int q = 0; q < n; q++) {
        gq_bn_obs *ob = ord[q];
        mask_t set = mask_of(ob->gpus, ob->ngpus);
        double sum = 0, sp = gq_bn_rec_spread(rs, ob->record);
        bool ok = true;
        for (int i = 0; i < ob->ngpus; i++) {
            double a = b->alone[slot][ob->gpus[i]];
            if (!isfinite(a)) {
                ok = false;
                break;
            }
            sum += a;
            if (b->alone_spread[slot][ob->gpus[i]] > sp)
                sp = b->alone_spread[slot][ob->gpus[i]];
        }
        if (!ok) {
            b->nskipped++;
            ob->expected_gbps = NAN;
            ob->sum_alone_gbps = NAN;
            continue;
        }
        (void)sp;
        ob->sum_alone_gbps = sum;
        ob->expected_gbps = expect(set, b->alone[slot], k, nk, -1, AT_MID);
        /* The decision on intervals: the aggregate's against expected x
         * (1 - min_drop), whose interval adds up the alone rates' and the
         * known budgets' intervals. */
        double f = 1 - o->min_drop;
        ob->limit_lo_gbps = expect(set, b->alone_lo[slot], k, nk, -1, AT_LO) * f;
        ob->limit_hi_gbps = expect(set, b->alone_hi[slot], k, nk, -1, AT_HI) * f;
        gq_bn_obs_interval(rs, ob);
        int held =
            gq_bn_below(ob->aggregate_lo_gbps, ob->aggregate_hi_gbps, ob->limit_lo_gbps, ob->limit_hi_gbps);
        /* A run that got no more than a budget strictly inside it already
         * gives, where its GPUs should have got well more, shares that budget
         * whole: a switch first seen from a domain of three of its GPUs. */
        int inner = -1;
        for (int i = 0; i < nk; i++)
            if (strictly_inside(k[i].set, set) && (inner < 0 || k[i].cap > k[inner].cap))
                inner = i;
        int no_more = 0;
        if (inner >= 0) {
            double g = 1 + o->min_drop;
            /* got no more than the inner budget allows ... */
            int got =
                gq_bn_below(k[inner].lo * g, k[inner].hi * g, ob->aggregate_lo_gbps, ob->aggregate_hi_gbps);
            got = got < 0 ? -1 : !got;
            /* ... where the GPUs should have got well more */
            int more =
                gq_bn_below(k[inner].lo * g, k[inner].hi * g, ob->limit_lo_gbps / f, ob->limit_hi_gbps / f);
            no_more = got == 0 || more == 0 ? 0 : got == 1 && more == 1 ? 1 : -1;
        }
        ob->contended = held == 1 || no_more == 1;
        ob->undecided = !ob->contended && (held < 0 || no_more < 0);
        if (ob->undecided)
            host_note_open(b, ob, slot, held, k, inner, o);
        host_take_run(b, dir, ob, set, sum, k, &nk);
    }
    free(ord);
    host_fold(b, dir, o);
    return GQ_OK;
}

/* Asymmetry inside the largest host run of each direction: which GPUs of it
 * ran slow, and the ranges of the slow and the fast. */
void gq_bn_host_asymmetry(gq_bottlenecks *out, const gq_bn_opts *o)
{
    for (int sl = 0; sl < 2; sl++) {
        gq_direction dir = sl == 0 ? GQ_DIR_H2D : GQ_DIR_D2H;
        int best = -1;
        for (int i = 0; i < out->nobs; i++)
            if (!out->obs[i].p2p && out->obs[i].direction == dir &&
                (best < 0 || out->obs[i].ngpus > out->obs[best].ngpus))
                best = i;
        out->asym_obs[sl] = -1;
        if (best < 0 || out->obs[best].ngpus < 2)
            continue;
        const gq_bn_obs *ob = &out->obs[best];
        double mx = 0;
        for (int k = 0; k < ob->ngpus; k++)
            if (isfinite(ob->rate[ob->gpus[k]]) && ob->rate[ob->gpus[k]] > mx)
                mx = ob->rate[ob->gpus[k]];
        out->asym_obs[sl] = best;
        out->slow_lo[sl] = out->fast_lo[sl] = INFINITY;
        out->slow_hi[sl] = out->fast_hi[sl] = -INFINITY;
        for (int k = 0; k < ob->ngpus; k++) {
            double r = ob->rate[ob->gpus[k]];
            if (!isfinite(r))
                continue;
            bool slow = r < (1 - o->min_drop) * mx;
            if (slow)
                out->slow[sl][out->nslow[sl]++] = ob->gpus[k];
            double *lo = slow ? &out->slow_lo[sl] : &out->fast_lo[sl],
                   *hi = slow ? &out->slow_hi[sl] : &out->fast_hi[sl];
            if (r < *lo)
                *lo = r;
            if (r > *hi)
                *hi = r;
        }
    }
}
