/* The P2P inference (analysis/bottlenecks_internal.h): the budgets the
 * concurrent GPU-to-GPU runs reveal against the same pairs one at a time. */
#include "analysis/bottlenecks.h"

#include "analysis/bottlenecks_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* The sorted performance domains a new P2P bottleneck's GPUs belong to. */
static void p2p_domains(gq_bottleneck *bn, const gq_bn_obs *ob, const gq_domains *dom)
{
    for (int g = 0; g < ob->ngpus; g++) {
        int d = dom->domain_of[ob->gpus[g]];
        bool have = d < 0;
        for (int q = 0; q < bn->ndomains && !have; q++)
            have = bn->domains[q] == d;
        if (!have)
            bn->domains[bn->ndomains++] = d;
    }
    qsort(bn->domains, (size_t)bn->ndomains, sizeof(int), cmp_int);
}

/* A P2P budget found so far: the observation that revealed it (its pairs)
 * and its capacity. */
typedef struct p2p_known {
    int obs;
    double cap, lo, hi;
    uint64_t pairs; /* which of the observation's pairs share it (bit p: pair p) */
} p2p_known;

static bool in_pairs(uint64_t pairs, int p)
{
    return p >= 0 && p < 64 && (pairs >> p & 1);
}

/* Is every pair of budget k (pairs of observation s), in either direction, a
 * pair of ob? */
static bool pairs_inside(const gq_bn_obs *s, uint64_t pairs, const gq_bn_obs *ob)
{
    if (popcount(pairs) >= ob->npairs)
        return false;
    for (int a = 0; a < s->npairs; a++) {
        if (!in_pairs(pairs, a))
            continue;
        bool hit = false;
        for (int b = 0; b < ob->npairs && !hit; b++)
            hit = (s->pair_src[a] == ob->pair_src[b] && s->pair_dst[a] == ob->pair_dst[b]) ||
                  (s->pair_src[a] == ob->pair_dst[b] && s->pair_dst[a] == ob->pair_src[b]);
        if (!hit)
            return false;
    }
    return true;
}

/* What ob's pairs should get with the P2P budgets already found: each pair
 * its rate alone, except that the pairs of a budget found on a run of some
 * of these pairs (either direction; the larger budgets first, disjoint) get
 * at most its capacity together. */
static double p2p_expect(const gq_bottlenecks *out, const gq_bn_obs *ob, const p2p_known *k, int nk,
                         iso_matrix iso, at_t at)
{
    bool used[GQ_BN_MAX_PAIRS] = {false};
    double total = 0;
    bool taken[GQ_BN_MAX] = {false};
    for (;;) {
        int best = -1;
        for (int i = 0; i < nk; i++) {
            const gq_bn_obs *s = &out->obs[k[i].obs];
            if (taken[i] || !pairs_inside(s, k[i].pairs, ob))
                continue;
            bool free_pairs = true;
            for (int a = 0; a < s->npairs && free_pairs; a++)
                for (int b = 0; b < ob->npairs && in_pairs(k[i].pairs, a); b++)
                    if (used[b] &&
                        ((s->pair_src[a] == ob->pair_src[b] && s->pair_dst[a] == ob->pair_dst[b]) ||
                         (s->pair_src[a] == ob->pair_dst[b] && s->pair_dst[a] == ob->pair_src[b])))
                        free_pairs = false;
            if (free_pairs && (best < 0 || popcount(k[i].pairs) > popcount(k[best].pairs)))
                best = i;
        }
        if (best < 0)
            break;
        taken[best] = true;
        const gq_bn_obs *s = &out->obs[k[best].obs];
        double sum = 0;
        for (int a = 0; a < s->npairs; a++)
            for (int b = 0; b < ob->npairs && in_pairs(k[best].pairs, a); b++)
                if (!used[b] && ((s->pair_src[a] == ob->pair_src[b] && s->pair_dst[a] == ob->pair_dst[b]) ||
                                 (s->pair_src[a] == ob->pair_dst[b] && s->pair_dst[a] == ob->pair_src[b]))) {
                    used[b] = true;
                    sum += iso[ob->pair_src[b]][ob->pair_dst[b]];
                }
        double cap = at == AT_LO ? k[best].lo : at == AT_HI ? k[best].hi : k[best].cap;
        total += sum < cap ? sum : cap;
    }
    for (int b = 0; b < ob->npairs; b++)
        if (!used[b])
            total += iso[ob->pair_src[b]][ob->pair_dst[b]];
    return total;
}

/* The pairs of a contended run that were held back: each below `keep` x its
 * rate one at a time (a pair without a per-pair figure counts as held back).
 * When some pairs ran free, *held is the run restricted to the others (their
 * GPUs, rates, sums and kind), its aggregate the sum of their rates; else a
 * copy of the run. Returns the held-back pairs as a mask (0: none). */
static uint64_t held_back(const gq_bn_obs *ob, iso_matrix iso, double keep, gq_bn_obs *held)
{
    *held = *ob;
    uint64_t pairs = 0;
    int nfree = 0;
    for (int p = 0; p < ob->npairs && p < GQ_BN_MAX_PAIRS; p++) {
        int a = ob->pair_src[p], b = ob->pair_dst[p];
        double v = a >= 0 && a < GQ_MAX_GPUS && b >= 0 && b < GQ_MAX_GPUS ? iso[a][b] : NAN, r = ob->rate[p];
        if (isfinite(r) && isfinite(v) && r >= keep * v)
            nfree++;
        else
            pairs |= (uint64_t)1 << p;
    }
    if (!nfree || !pairs)
        return nfree ? 0 : pairs;
    held->npairs = 0;
    held->aggregate_gbps = held->sum_alone_gbps = 0;
    mask_t m = 0;
    for (int p = 0; p < ob->npairs && p < GQ_BN_MAX_PAIRS; p++) {
        int a = ob->pair_src[p], b = ob->pair_dst[p];
        if (!(pairs >> p & 1) || a < 0 || a >= GQ_MAX_GPUS || b < 0 || b >= GQ_MAX_GPUS)
            continue;
        int k = held->npairs++;
        held->pair_src[k] = a;
        held->pair_dst[k] = b;
        held->rate[k] = ob->rate[p];
        held->aggregate_gbps += ob->rate[p];
        held->sum_alone_gbps += iso[a][b];
        m |= bit(a) | bit(b);
    }
    held->ngpus = mask_list(m, held->gpus);
    /* the held-back pairs' share of the run's interval (their rounds are the run's) */
    double k = ob->aggregate_gbps > 0 ? held->aggregate_gbps / ob->aggregate_gbps : 1;
    held->aggregate_lo_gbps = ob->aggregate_lo_gbps * k;
    held->aggregate_hi_gbps = ob->aggregate_hi_gbps * k;
    return pairs;
}

static int cmp_obs_pairs(const void *a, const void *b)
{
    const gq_bn_obs *x = *(const gq_bn_obs *const *)a, *y = *(const gq_bn_obs *const *)b;
    if (x->npairs != y->npairs)
        return x->npairs - y->npairs;
    return (x->group > y->group) - (x->group < y->group);
}

/* Run ob (observation i, spread sp) held back: the budget of its held-back pairs, found (and added
 * to kn) or confirmed, unless they are within a budget already found. */
static void p2p_take_run(gq_bottlenecks *out, gq_bn_obs *ob, int i, double sp, iso_set *is,
                         const gq_domains *dom, const gq_bn_opts *o, p2p_known *kn, int *nkp)
{
    int nk = *nkp;
    /* A pair that ran at its rate alone shares no budget with the pairs
     * that were held back: the budget is over the held-back pairs only,
     * with their own sum (docs/method-domains.md, "Free and held-back
     * pairs"). Free means clearly free, within half of min_drop (and the
     * spread) of its rate alone, so that noise does not move a pair that
     * lost a little between the two. */
    gq_bn_obs hb;
    uint64_t pairs = held_back(ob, is->v, 1 - o->min_drop / 2 - 2 * sp, &hb);
    if (!pairs)
        return;
    if (hb.npairs < ob->npairs) {
        int w = 0, x = 0;
        for (int p = 0; dom && p < hb.npairs; p++) {
            int da = dom->domain_of[hb.pair_src[p]], db = dom->domain_of[hb.pair_dst[p]];
            w += da >= 0 && da == db;
            x += da >= 0 && db >= 0 && da != db;
        }
        hb.p2p_kind = w == hb.npairs ? GQ_P2P_WITHIN : x == hb.npairs ? GQ_P2P_ACROSS : GQ_P2P_MIXED;
        hb.expected_gbps = p2p_expect(out, &hb, kn, nk, is->v, AT_MID);
        if (!(hb.aggregate_gbps < hb.expected_gbps * (1 - o->min_drop - 2 * sp)))
            return; /* the held-back pairs are within a budget already found */
    }
    bool added;
    gq_bottleneck *bn = gq_bn_find_or_add(out, true, GQ_DIR_P2P, mask_of(hb.gpus, hb.ngpus), &added);
    if (!bn)
        return;
    if (nk < GQ_BN_MAX)
        kn[nk++] = (p2p_known){.obs = i,
                               .cap = hb.aggregate_gbps,
                               .lo = hb.aggregate_lo_gbps,
                               .hi = hb.aggregate_hi_gbps,
                               .pairs = pairs};
    if (added) {
        bn->capacity_gbps = hb.aggregate_gbps;
        bn->capacity_lo_gbps = hb.aggregate_lo_gbps;
        bn->capacity_hi_gbps = hb.aggregate_hi_gbps;
        bn->sum_alone_gbps = hb.sum_alone_gbps;
        bn->expected_gbps = hb.expected_gbps;
        bn->cross_domain = hb.p2p_kind == GQ_P2P_ACROSS;
        if (dom)
            p2p_domains(bn, &hb, dom);
    } else if (hb.aggregate_gbps > bn->capacity_gbps) {
        bn->capacity_gbps = hb.aggregate_gbps;
        bn->capacity_lo_gbps = hb.aggregate_lo_gbps;
        bn->capacity_hi_gbps = hb.aggregate_hi_gbps;
    }
    gq_bn_add_evidence(bn, i);
    *nkp = nk;
}

/* Run ob's pairs one at a time: their sum (*sum), the largest spread (*sp, from the run's own) and
 * whether the pairs are within or across domains (ob->p2p_kind); false when a pair has no isolated
 * rate. */
static bool p2p_alone_sum(gq_bn_obs *ob, const iso_set *is, const gq_domains *dom, double *sump, double *spp)
{
    double sum = *sump, sp = *spp;
    bool ok = true;
    int within = 0, across = 0;
    for (int p = 0; p < ob->npairs; p++) {
        int a = ob->pair_src[p], b = ob->pair_dst[p];
        double v = (a < GQ_MAX_GPUS && b < GQ_MAX_GPUS) ? is->v[a][b] : NAN;
        if (!isfinite(v)) {
            ok = false;
            break;
        }
        sum += v;
        if (is->sp[a][b] > sp)
            sp = is->sp[a][b];
        if (dom && dom->domain_of[a] >= 0 && dom->domain_of[a] == dom->domain_of[b])
            within++;
        else if (dom && dom->domain_of[a] >= 0 && dom->domain_of[b] >= 0)
            across++;
    }
    ob->p2p_kind = within == ob->npairs ? GQ_P2P_WITHIN : across == ob->npairs ? GQ_P2P_ACROSS : GQ_P2P_MIXED;
    *sump = sum;
    *spp = sp;
    return ok;
}

/* P2P: each concurrent group against the same pairs one at a time, capped by
 * the P2P budgets already found among them (smaller runs first), so that a
 * link binding only when many pairs cross at once (the socket interconnect
 * behind two switch uplinks) shows below the sum of the narrower limits.
 * GQ_E_NOMEM when out of memory. */
int gq_bn_infer_p2p(gq_bottlenecks *out, const gq_recordset *rs, const gq_domains *dom, const gq_bn_opts *o,
                    iso_set *is)
{
    gq_bn_obs **ord = malloc((size_t)(out->nobs > 0 ? out->nobs : 1) * sizeof *ord);
    if (!ord)
        return GQ_E_NOMEM;
    int nord = 0;
    for (int i = 0; i < out->nobs; i++)
        if (out->obs[i].p2p)
            ord[nord++] = &out->obs[i];
    qsort(ord, (size_t)nord, sizeof *ord, cmp_obs_pairs);
    p2p_known kn[GQ_BN_MAX];
    int nk = 0;
    for (int q = 0; q < nord; q++) {
        gq_bn_obs *ob = ord[q];
        int i = (int)(ob - out->obs);
        double sum = 0, sp = gq_bn_rec_spread(rs, ob->record);
        bool ok = p2p_alone_sum(ob, is, dom, &sum, &sp);
        if (!ok) {
            out->nskipped++;
            ob->sum_alone_gbps = ob->expected_gbps = NAN;
            continue;
        }
        ob->sum_alone_gbps = sum;
        (void)sp;
        ob->expected_gbps = p2p_expect(out, ob, kn, nk, is->v, AT_MID);
        double f = 1 - o->min_drop;
        ob->limit_lo_gbps = p2p_expect(out, ob, kn, nk, is->lo, AT_LO) * f;
        ob->limit_hi_gbps = p2p_expect(out, ob, kn, nk, is->hi, AT_HI) * f;
        gq_bn_obs_interval(rs, ob);
        int held =
            gq_bn_below(ob->aggregate_lo_gbps, ob->aggregate_hi_gbps, ob->limit_lo_gbps, ob->limit_hi_gbps);
        /* A run that got no more than (1 + min_drop) x a budget found on a
         * run of some of its pairs is that budget seen with more pairs: more
         * evidence for it, never a budget of its own (as a host budget no
         * wider than a larger one is folded), whether it was held below its
         * expectation or not; on the intervals, open in between. */
        int in = -1, more = 1;
        for (int x = 0; x < nk; x++)
            if (pairs_inside(&out->obs[kn[x].obs], kn[x].pairs, ob) && (in < 0 || kn[x].cap > kn[in].cap))
                in = x;
        double g = 1 + o->min_drop;
        if (in >= 0)
            more = gq_bn_below(kn[in].lo * g, kn[in].hi * g, ob->aggregate_lo_gbps, ob->aggregate_hi_gbps);
        ob->contended = held == 1;
        ob->undecided = held < 0 && more != 0;
        char gs[96];
        gq_bn_gpus_text(ob->gpus, ob->ngpus, gs, sizeof gs);
        if (in >= 0 && more == 0) {
            const gq_bn_obs *io = &out->obs[kn[in].obs];
            int b = held == 1 ? gq_bottlenecks_find(out, GQ_DIR_P2P, io->gpus, io->ngpus) : -1;
            if (b >= 0)
                gq_bn_add_evidence(&out->v[b], i);
            continue;
        }
        if (held == 1 && in >= 0 && more < 0) {
            const gq_bn_obs *io = &out->obs[kn[in].obs];
            char gi[96];
            gq_bn_gpus_text(io->gpus, io->ngpus, gi, sizeof gi);
            ob->contended = false;
            ob->undecided = true;
            gq_bn_add_open(
                out, GQ_BN_OPEN_BUDGET, ob, kn[in].obs, ob->aggregate_lo_gbps, ob->aggregate_hi_gbps,
                kn[in].lo * g, kn[in].hi * g,
                "whether %d GPU pairs over GPUs %s share a budget beyond the %.1f-%.1f GB/s of the "
                "pairs over "
                "GPUs %s: together they moved %.1f-%.1f GB/s",
                ob->npairs, gs, kn[in].lo, kn[in].hi, gi, ob->aggregate_lo_gbps, ob->aggregate_hi_gbps);
            continue;
        }
        if (ob->undecided)
            gq_bn_add_open(
                out, GQ_BN_OPEN_BUDGET, ob, -1, ob->aggregate_lo_gbps, ob->aggregate_hi_gbps,
                ob->limit_lo_gbps, ob->limit_hi_gbps,
                "whether %d GPU pairs over GPUs %s share a budget: together they moved %.1f-%.1f GB/s, the "
                "level that means a shared budget is %.1f-%.1f GB/s",
                ob->npairs, gs, ob->aggregate_lo_gbps, ob->aggregate_hi_gbps, ob->limit_lo_gbps,
                ob->limit_hi_gbps);
        if (!ob->contended)
            continue;
        p2p_take_run(out, ob, i, sp, is, dom, o, kn, &nk);
    }
    free(ord);
    return GQ_OK;
}
