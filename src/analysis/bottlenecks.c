#include "analysis/bottlenecks.h"

#include "analysis/bottlenecks_internal.h"
#include "measure/sanity.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint64_t mask_t; /* GQ_MAX_GPUS == 64: one bit per GPU */

static mask_t bit(int g)
{
    return (g >= 0 && g < 64) ? (mask_t)1 << g : 0;
}

static int popcount(mask_t m)
{
    return __builtin_popcountll(m);
}

static mask_t mask_of(const int *g, int n)
{
    mask_t m = 0;
    for (int i = 0; i < n; i++)
        m |= bit(g[i]);
    return m;
}

static int mask_list(mask_t m, int *out)
{
    int n = 0;
    for (int g = 0; g < 64; g++)
        if (m & bit(g))
            out[n++] = g;
    return n;
}

const char *gq_bn_explain_name(gq_bn_explain e)
{
    switch (e) {
    case GQ_EXPLAIN_MEASUREMENT_ONLY: return "measurement_only";
    case GQ_EXPLAIN_PCIE_SWITCH: return "pcie_switch";
    case GQ_EXPLAIN_ROOT_PORT: return "root_port";
    case GQ_EXPLAIN_HOST_BRIDGE: return "host_bridge";
    case GQ_EXPLAIN_NUMA_NODE: return "numa_node";
    case GQ_EXPLAIN_CPU_INTERCONNECT: return "cpu_interconnect";
    }
    return "?";
}

const char *gq_bn_p2p_kind_name(gq_bn_p2p_kind k)
{
    switch (k) {
    case GQ_P2P_WITHIN: return "within";
    case GQ_P2P_ACROSS: return "across";
    case GQ_P2P_MIXED: return "mixed";
    }
    return "?";
}

void gq_bn_opts_default(gq_bn_opts *o)
{
    o->min_drop = 0.20;
    o->bytes = 0;
}

void gq_bottlenecks_free(gq_bottlenecks *b)
{
    if (!b)
        return;
    free(b->obs);
    free(b->ignored);
    b->obs = NULL;
    b->ignored = NULL;
    b->nobs = b->capobs = b->nignored = b->capignored = 0;
}

static int push_ignored(gq_bottlenecks *b, int rec, const char *why)
{
    if (b->nignored == b->capignored) {
        int cap = b->capignored ? 2 * b->capignored : 16;
        gq_bn_ignored *v = realloc(b->ignored, (size_t)cap * sizeof *v);
        if (!v)
            return GQ_E_NOMEM;
        b->ignored = v;
        b->capignored = cap;
    }
    b->ignored[b->nignored].record = rec;
    snprintf(b->ignored[b->nignored].why, sizeof b->ignored[0].why, "%.239s", why);
    b->nignored++;
    return GQ_OK;
}

static gq_bn_obs *push_obs(gq_bottlenecks *b)
{
    if (b->nobs == b->capobs) {
        int cap = b->capobs ? 2 * b->capobs : 32;
        gq_bn_obs *v = realloc(b->obs, (size_t)cap * sizeof *v);
        if (!v)
            return NULL;
        b->obs = v;
        b->capobs = cap;
    }
    gq_bn_obs *o = &b->obs[b->nobs++];
    memset(o, 0, sizeof *o);
    for (int i = 0; i < GQ_MAX_GPUS; i++)
        o->rate[i] = NAN;
    o->record = -1;
    return o;
}

/* ---- grouping records ----------------------------------------------------- */

typedef struct gref {
    int group, idx;
} gref;

static int cmp_gref(const void *a, const void *b)
{
    const gref *x = a, *y = b;
    if (x->group != y->group)
        return (x->group > y->group) - (x->group < y->group);
    return (x->idx > y->idx) - (x->idx < y->idx);
}

static int host_gpu(const gq_record *r)
{
    if (r->src.kind == GQ_EP_GPU && r->dst.kind == GQ_EP_HOST)
        return r->src.index;
    if (r->src.kind == GQ_EP_HOST && r->dst.kind == GQ_EP_GPU)
        return r->dst.index;
    return -1;
}

static bool is_p2p_flow(const gq_record *r)
{
    return r->src.kind == GQ_EP_GPU && r->dst.kind == GQ_EP_GPU && r->src.index != r->dst.index;
}

/* A candidate observation before the size filter. */
typedef struct cand {
    bool p2p;
    int slot; /* host: 0 h2d, 1 d2h */
    uint64_t bytes;
    int nflows;
    int flows[GQ_MAX_GPUS]; /* record indices of the per-flow records */
    int agg;                /* aggregate record index or -1 */
    int group;
} cand;

static int slot_of(gq_direction d)
{
    return d == GQ_DIR_H2D ? 0 : d == GQ_DIR_D2H ? 1 : -1;
}

static bool same_flow(const gq_record *x, const gq_record *y)
{
    return x->src.kind == y->src.kind && x->src.index == y->src.index && x->dst.kind == y->dst.kind &&
           x->dst.index == y->dst.index && x->method == y->method && x->bytes == y->bytes;
}

/* Do two candidates repeat one run: the same test over the same flows? */
static bool same_run(const gq_recordset *rs, const cand *x, const cand *y)
{
    if (x->p2p != y->p2p || x->slot != y->slot || x->bytes != y->bytes || x->nflows != y->nflows ||
        strcmp(rs->v[x->flows[0]].test, rs->v[y->flows[0]].test))
        return false;
    for (int a = 0; a < x->nflows; a++) {
        bool hit = false;
        for (int b = 0; b < y->nflows && !hit; b++)
            hit = same_flow(&rs->v[x->flows[a]], &rs->v[y->flows[b]]);
        if (!hit)
            return false;
    }
    return true;
}

/* The rounds a candidate's figure came from: its aggregate's, else its flow's. */
static int cand_rounds(const gq_recordset *rs, const cand *c)
{
    return rs->v[c->agg >= 0 ? c->agg : c->flows[0]].rounds;
}

/* Turn the record set into candidates: one per group that ran flows of one
 * kind (host in one direction, or P2P). */
/* A run whose aggregate was refused by the overlap rule alone and that no
 * valid run of the same flows replaces: an open decision (the set's figure is
 * missing), measured again by exec. */
static void note_missing(gq_bottlenecks *b, const gq_recordset *rs, const cand *m, const cand *c, int nc)
{
    for (int i = 0; i < nc; i++)
        if (c[i].nflows >= 2 && c[i].p2p == m->p2p && c[i].slot == m->slot && c[i].bytes == m->bytes &&
            c[i].nflows == m->nflows) {
            cand x = *m;
            x.agg = c[i].agg;
            if (same_run(rs, &x, &c[i]))
                return;
        }
    if (b->nopen >= GQ_BN_MAX)
        return;
    gq_bn_open *u = &b->open[b->nopen++];
    memset(u, 0, sizeof *u);
    u->kind = GQ_BN_OPEN_MISSING;
    u->obs = u->other = -1;
    u->group = m->group;
    u->p2p = m->p2p;
    u->direction = m->p2p ? GQ_DIR_P2P : m->slot == 0 ? GQ_DIR_H2D : GQ_DIR_D2H;
    mask_t set = 0;
    for (int f = 0; f < m->nflows; f++) {
        const gq_record *r = &rs->v[m->flows[f]];
        set |= m->p2p ? bit(r->src.index) | bit(r->dst.index) : bit(host_gpu(r));
    }
    u->ngpus = mask_list(set, u->gpus);
    u->figure_lo_gbps = u->figure_hi_gbps = u->limit_lo_gbps = u->limit_hi_gbps = NAN;
    char gs[96];
    gq_domains_set_str(u->gpus, u->ngpus, gs, sizeof gs);
    snprintf(
        u->text, sizeof u->text,
        "whether GPUs %s share a %s budget: their run together (%s) was refused by the overlap rule each "
        "time it was measured",
        gs,
        m->p2p                       ? "GPU-to-GPU"
        : u->direction == GQ_DIR_H2D ? "host-to-GPU"
                                     : "GPU-to-host",
        rs->v[m->flows[0]].test);
}

/* v: each record's group and index; ok: whether the record is usable. An unusable record is
 * listed in b's ignored ones with why (and so is one the sanity guard refuses here). */
static int collect_check_records(const gq_recordset *rs, const gq_topo *topo, gq_bottlenecks *b, gref *v,
                                 bool *ok)
{
    for (int i = 0; i < rs->n; i++) {
        const gq_record *r = &rs->v[i];
        v[i].group = r->group;
        v[i].idx = i;
        const char *why;
        ok[i] = gq_domains_usable(r, &why);
        if (!ok[i]) {
            char msg[240];
            if ((r->flags & GQ_FLAG_IMPOSSIBLE) && r->capacity_gbps > 0 &&
                r->value.median > r->capacity_gbps * (1 + GQ_SANITY_TOL))
                snprintf(msg, sizeof msg, "impossible: %.1f GB/s is above the %.1f GB/s its path can carry",
                         r->value.median, r->capacity_gbps);
            else if ((r->flags & GQ_FLAG_IMPOSSIBLE) && r->error[0] && !strstr(r->error, "impossible"))
                snprintf(msg, sizeof msg, "impossible: %.200s", r->error);
            else
                snprintf(msg, sizeof msg, "%.200s", why);
            if (push_ignored(b, i, msg))
                return GQ_E_NOMEM;
            continue;
        }
        /* Records the harness did not check (read back, crafted): apply the
         * sanity guard here, without changing them. */
        if (topo && !r->is_latency && !(r->capacity_gbps > 0)) {
            char cwhy[160], msg[240];
            double cap = gq_sanity_record_capacity(topo, rs, r, cwhy, sizeof cwhy);
            if (cap > 0 && r->value.median > cap * (1 + GQ_SANITY_TOL)) {
                ok[i] = false;
                snprintf(msg, sizeof msg, "impossible: %.1f GB/s is above the %.1f GB/s of %s",
                         r->value.median, cap, cwhy);
                if (push_ignored(b, i, msg))
                    return GQ_E_NOMEM;
            }
        }
    }
    return GQ_OK;
}

/* The records v[a..e) of one group as a candidate (*out): false when the group is no per-direction
 * evidence (latency, mixed kinds, both directions, an unusable flow), counted in b->nskipped; a
 * group whose aggregate only the overlap rule refused is also kept in miss. */
static bool collect_group(const gq_recordset *rs, const gref *v, int a, int e, const bool *ok,
                          gq_bottlenecks *b, cand *out, cand *miss, int *nmiss)
{
    cand cd = {.agg = -1, .group = v[a].group, .slot = -1};
    bool host = false, p2p = false, bad = false, lat = false, bidir_name = false;
    int dirs = 0;
    mask_t seen = 0;
    for (int k = a; k < e; k++) {
        const gq_record *r = &rs->v[v[k].idx];
        if (r->is_latency) {
            lat = true;
            continue;
        }
        if (strstr(r->test, "bidirectional"))
            bidir_name = true;
        if (r->aggregate || r->sum)
            continue;
        if (cd.nflows >= GQ_MAX_GPUS) {
            bad = true;
            break;
        }
        cd.flows[cd.nflows++] = v[k].idx;
        if (!ok[v[k].idx])
            bad = true;
        int hg = host_gpu(r);
        if (hg >= 0 && (r->direction == GQ_DIR_H2D || r->direction == GQ_DIR_D2H)) {
            host = true;
            dirs |= 1 << slot_of(r->direction);
            if (seen & bit(hg))
                bad = true; /* two flows on one GPU: no per-GPU attribution */
            seen |= bit(hg);
        } else if (is_p2p_flow(r)) {
            p2p = true;
        } else {
            bad = true;
        }
        if (!cd.bytes)
            cd.bytes = r->bytes;
        else if (cd.bytes != r->bytes)
            bad = true;
    }
    if (lat || cd.nflows == 0) {
        return false;
    }
    /* Tests whose interfering direction is not recorded look like one
     * direction but were not; groups mixing kinds or both directions are
     * not per-direction evidence. */
    if (bad || (host && p2p) || dirs == 3 || (bidir_name && cd.nflows == 1)) {
        b->nskipped++;
        return false;
    }
    cd.p2p = p2p;
    cd.slot = host ? (dirs == 1 ? 0 : 1) : -1;
    if (cd.nflows >= 2) {
        for (int k = a; k < e; k++) {
            const gq_record *r = &rs->v[v[k].idx];
            if (!r->aggregate || r->sum || r->is_latency)
                continue;
            if (host && slot_of(r->direction) != cd.slot)
                continue;
            if (p2p && r->direction != GQ_DIR_P2P)
                continue;
            if (ok[v[k].idx])
                cd.agg = v[k].idx;
        }
        if (cd.agg < 0) {
            /* refused by the overlap rule alone: the figure is missing */
            bool overlap_only = false;
            for (int k = a; k < e; k++) {
                const gq_record *r = &rs->v[v[k].idx];
                if (r->aggregate && !r->sum && !r->is_latency &&
                    (!host || slot_of(r->direction) == cd.slot) && (!p2p || r->direction == GQ_DIR_P2P))
                    overlap_only = (r->flags & GQ_FLAG_OVERLAP) &&
                                   !(r->flags & (GQ_FLAG_ERROR | GQ_FLAG_IMPOSSIBLE | GQ_FLAG_VERIFY_FAILED |
                                                 GQ_FLAG_CONTAMINATED));
            }
            if (overlap_only)
                miss[(*nmiss)++] = cd;
            b->nskipped++;
            return false;
        }
    }
    *out = cd;
    return true;
}

/* Keeps the latest run of each group measured again (the others counted in b->nsuperseded) and
 * notes the runs refused by the overlap rule that nothing replaces; returns the candidates kept. */
static int collect_latest(const gq_recordset *rs, gq_bottlenecks *b, cand *c, int nc, const cand *miss,
                          int nmiss)
{
    /* A group measured again with more rounds (same test, flows and size:
     * exec's settle step, when a decision on it was open) replaces the
     * earlier run; a repeat with as many rounds is more evidence. */
    int kept = 0;
    for (int i = 0; i < nc; i++) {
        bool later = false;
        for (int j = i + 1; j < nc && !later; j++)
            later = same_run(rs, &c[i], &c[j]) && cand_rounds(rs, &c[j]) > cand_rounds(rs, &c[i]);
        if (later)
            b->nsuperseded++;
        else
            c[kept++] = c[i];
    }
    nc = kept;
    for (int i = 0; i < nmiss; i++) {
        bool again = false; /* a later refused run of the same flows stands for it */
        for (int j = i + 1; j < nmiss && !again; j++)
            again = same_run(rs, &miss[i], &miss[j]);
        if (!again)
            note_missing(b, rs, &miss[i], c, nc);
    }
    return nc;
}

static int collect(const gq_recordset *rs, const gq_topo *topo, gq_bottlenecks *b, cand **out, int *nout)
{
    *out = NULL;
    *nout = 0;
    if (!rs || rs->n <= 0)
        return GQ_OK;
    int rc = GQ_E_NOMEM;
    gref *v = malloc((size_t)rs->n * sizeof *v);
    cand *c = malloc((size_t)rs->n * sizeof *c);
    cand *miss = malloc((size_t)rs->n * sizeof *miss);
    bool *ok = malloc((size_t)rs->n * sizeof *ok);
    int nmiss = 0;
    if (!v || !c || !ok || !miss)
        goto out;
    if (collect_check_records(rs, topo, b, v, ok))
        goto out;
    qsort(v, (size_t)rs->n, sizeof *v, cmp_gref);
    int nc = 0;
    for (int a = 0; a < rs->n;) {
        int e = a;
        while (e < rs->n && v[e].group == v[a].group)
            e++;
        if (collect_group(rs, v, a, e, ok, b, &c[nc], miss, &nmiss))
            nc++;
        a = e;
    }
    nc = collect_latest(rs, b, c, nc, miss, nmiss);
    *out = c;
    *nout = nc;
    c = NULL;
    rc = GQ_OK;
out:
    free(v);
    free(c);
    free(miss);
    free(ok);
    return rc;
}

/* The most common buffer size among candidates of one kind (ties: larger). */
static uint64_t common_bytes(const cand *c, int n, bool p2p, int slot)
{
    uint64_t best = 0;
    int bestn = 0;
    for (int i = 0; i < n; i++) {
        if (c[i].p2p != p2p || (!p2p && c[i].slot != slot))
            continue;
        int cnt = 0;
        for (int k = 0; k < n; k++)
            if (c[k].p2p == p2p && (p2p || c[k].slot == slot) && c[k].bytes == c[i].bytes)
                cnt += c[k].nflows;
        if (cnt > bestn || (cnt == bestn && c[i].bytes > best)) {
            best = c[i].bytes;
            bestn = cnt;
        }
    }
    return best;
}

/* ---- host inference --------------------------------------------------------- */

typedef struct known {
    mask_t set;
    double cap, lo, hi; /* the measured capacity and its interval */
    int obs;            /* the observation that measured it */
} known;

/* Which figure of each interval an expectation adds up. */
typedef enum { AT_MID = 0, AT_LO, AT_HI } at_t;

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

static int add_evidence(gq_bottleneck *bn, int obs)
{
    for (int i = 0; i < bn->nevidence; i++)
        if (bn->evidence[i] == obs)
            return 0;
    if (bn->nevidence < GQ_BN_MAX_EVIDENCE)
        bn->evidence[bn->nevidence++] = obs;
    return 0;
}

static gq_bottleneck *find_or_add(gq_bottlenecks *b, bool p2p, gq_direction d, mask_t set, bool *added)
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

static double rec_spread(const gq_recordset *rs, int i)
{
    double s = i >= 0 ? rs->v[i].value.spread : 0;
    return s > 0 && isfinite(s) ? s : 0;
}

/* An observation's aggregate and its interval. */
static void obs_interval(const gq_recordset *rs, gq_bn_obs *ob)
{
    gq_interval iv = gq_record_interval(&rs->v[ob->record]);
    ob->aggregate_lo_gbps = iv.lo;
    ob->aggregate_hi_gbps = iv.hi;
}

/* Three-way: 1 when [lo, hi] is wholly below [llo, lhi], 0 when wholly at or
 * above it, -1 when the two overlap (open). */
static int below(double lo, double hi, double llo, double lhi)
{
    if (hi < llo)
        return 1;
    if (lo >= lhi)
        return 0;
    return -1;
}

static void gpus_text(const int *g, int n, char *buf, size_t len)
{
    gq_domains_set_str(g, n, buf, len);
}

/* Record a decision left open. */
static void add_open(gq_bottlenecks *b, gq_bn_open_kind kind, const gq_bn_obs *ob, int other, double flo,
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

static int infer_host(gq_bottlenecks *b, const gq_recordset *rs, int slot, const gq_bn_opts *o)
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
        double sum = 0, sp = rec_spread(rs, ob->record);
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
        obs_interval(rs, ob);
        int held = below(ob->aggregate_lo_gbps, ob->aggregate_hi_gbps, ob->limit_lo_gbps, ob->limit_hi_gbps);
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
            int got = below(k[inner].lo * g, k[inner].hi * g, ob->aggregate_lo_gbps, ob->aggregate_hi_gbps);
            got = got < 0 ? -1 : !got;
            /* ... where the GPUs should have got well more */
            int more = below(k[inner].lo * g, k[inner].hi * g, ob->limit_lo_gbps / f, ob->limit_hi_gbps / f);
            no_more = got == 0 || more == 0 ? 0 : got == 1 && more == 1 ? 1 : -1;
        }
        ob->contended = held == 1 || no_more == 1;
        ob->undecided = !ob->contended && (held < 0 || no_more < 0);
        int ob_index = (int)(ob - b->obs);
        if (ob->undecided) {
            char gs[96], d[24];
            gpus_text(ob->gpus, ob->ngpus, gs, sizeof gs);
            snprintf(d, sizeof d, "%s", slot == 0 ? "host-to-GPU" : "GPU-to-host");
            if (held < 0)
                add_open(b, GQ_BN_OPEN_BUDGET, ob, -1, ob->aggregate_lo_gbps, ob->aggregate_hi_gbps,
                         ob->limit_lo_gbps, ob->limit_hi_gbps,
                         "whether GPUs %s share a %s budget: together they moved %.1f-%.1f GB/s, the level "
                         "that means a shared budget is %.1f-%.1f GB/s",
                         gs, d, ob->aggregate_lo_gbps, ob->aggregate_hi_gbps, ob->limit_lo_gbps,
                         ob->limit_hi_gbps);
            else
                add_open(b, GQ_BN_OPEN_BUDGET, ob, k[inner].obs, ob->aggregate_lo_gbps, ob->aggregate_hi_gbps,
                         k[inner].lo * (1 + o->min_drop), k[inner].hi * (1 + o->min_drop),
                         "whether GPUs %s share the %s budget of %.1f-%.1f GB/s found inside them: together "
                         "they moved %.1f-%.1f GB/s",
                         gs, d, k[inner].lo, k[inner].hi, ob->aggregate_lo_gbps, ob->aggregate_hi_gbps);
        }
        if (ob->contended) {
            bool added;
            gq_bottleneck *bn = find_or_add(b, false, dir, set, &added);
            if (!bn)
                continue; /* more bottlenecks than GQ_BN_MAX: the rest are still observations */
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
            add_evidence(bn, ob_index);
        } else {
            /* a repeat of a known budget's own set confirms it */
            for (int i = 0; i < b->n; i++)
                if (!b->v[i].p2p && b->v[i].direction == dir && mask_of(b->v[i].gpus, b->v[i].ngpus) == set)
                    add_evidence(&b->v[i], ob_index);
        }
    }
    free(ord);

    /* Fold a budget into a larger one containing it when the larger one is no
     * wider: the small set only saw the large set's budget. */
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
                int wider = below(s->capacity_lo_gbps * g, s->capacity_hi_gbps * g, t->capacity_lo_gbps,
                                  t->capacity_hi_gbps);
                if (wider < 0 && s->nevidence > 0 && t->nevidence > 0 && !fold_noted(b, s, t)) {
                    char gs[96], gt[96];
                    gpus_text(s->gpus, s->ngpus, gs, sizeof gs);
                    gpus_text(t->gpus, t->ngpus, gt, sizeof gt);
                    add_open(
                        b, GQ_BN_OPEN_FOLD, &b->obs[s->evidence[0]], t->evidence[0], t->capacity_lo_gbps,
                        t->capacity_hi_gbps, s->capacity_lo_gbps * g, s->capacity_hi_gbps * g,
                        "whether GPUs %s have a %s budget of their own (%.1f-%.1f GB/s) inside the one of "
                        "GPUs %s (%.1f-%.1f GB/s)",
                        gs, dir == GQ_DIR_H2D ? "host-to-GPU" : "GPU-to-host", s->capacity_lo_gbps,
                        s->capacity_hi_gbps, gt, t->capacity_lo_gbps, t->capacity_hi_gbps);
                }
                if (wider <= 0) {
                    for (int e = 0; e < s->nevidence; e++)
                        add_evidence(t, s->evidence[e]);
                    memmove(s, s + 1, (size_t)(b->n - i - 1) * sizeof *s);
                    b->n--;
                    changed = true;
                }
            }
        }
    }
    return GQ_OK;
}

/* ---- the whole inference ----------------------------------------------------- */

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

typedef double iso_matrix[GQ_MAX_GPUS][GQ_MAX_GPUS];

/* The isolated pair rates: medians, spreads and intervals. */
typedef struct iso_set {
    iso_matrix v, sp, lo, hi;
} iso_set;

/* Whether record r replaces the one (*have, -1: none) taken so far for
 * the same path: a later measurement of the same test replaces an earlier
 * one (a repeat, a retry by duration), and any measurement with more rounds
 * does (the step runners measure an undecided path again with more); another
 * test's with no more rounds (the placement's single-worker pattern, say)
 * does not, so a path's figure and interval come from the measurement made
 * for it. */
static bool replaces(const gq_recordset *rs, int have, const gq_record *r)
{
    if (have < 0)
        return true;
    const gq_record *h = &rs->v[have];
    return r->value.n > h->value.n || (r->value.n == h->value.n && !strcmp(r->test, h->test));
}

/* Alone rates and isolated pair rates (iso, with their spreads): one-flow
 * groups (which one of several: replaces()). */
static void alone_rates(const gq_recordset *rs, const cand *c, int nc, uint64_t pbytes, gq_bottlenecks *out,
                        iso_set *is)
{
    int iso_rec[GQ_MAX_GPUS][GQ_MAX_GPUS];
    int alone_rec[2][GQ_MAX_GPUS];
    for (int i = 0; i < GQ_MAX_GPUS; i++) {
        alone_rec[0][i] = alone_rec[1][i] = -1;
        for (int j = 0; j < GQ_MAX_GPUS; j++) {
            is->v[i][j] = is->lo[i][j] = is->hi[i][j] = NAN;
            is->sp[i][j] = 0;
            iso_rec[i][j] = -1;
        }
    }
    for (int i = 0; i < nc; i++) {
        if (c[i].nflows != 1)
            continue;
        const gq_record *r = &rs->v[c[i].flows[0]];
        double sp = r->value.spread > 0 && isfinite(r->value.spread) ? r->value.spread : 0;
        /* the driver's own staged copy (the card measures it beside the pipelined one) is
         * not what the concurrent runs move: it is no pair's alone rate here */
        if (r->method == GQ_METHOD_DRIVER_STAGED)
            continue;
        gq_interval iv = gq_record_interval(r);
        if (c[i].p2p) {
            /* one GPU at each end: "gpu:*" in a document is no pair
             * (fuzz_render wrote out of bounds with it) */
            int s = gq_ep_gpu(r->src), d = gq_ep_gpu(r->dst);
            if (c[i].bytes != pbytes || s < 0 || d < 0 || !replaces(rs, iso_rec[s][d], r))
                continue;
            iso_rec[s][d] = c[i].flows[0];
            is->v[s][d] = r->value.median;
            is->sp[s][d] = sp;
            is->lo[s][d] = iv.lo;
            is->hi[s][d] = iv.hi;
        } else {
            int g = host_gpu(r);
            if (c[i].bytes != out->bytes[c[i].slot] || g < 0 || g >= GQ_MAX_GPUS ||
                !replaces(rs, alone_rec[c[i].slot][g], r))
                continue;
            alone_rec[c[i].slot][g] = c[i].flows[0];
            out->alone[c[i].slot][g] = r->value.median;
            out->alone_spread[c[i].slot][g] = sp;
            out->alone_lo[c[i].slot][g] = iv.lo;
            out->alone_hi[c[i].slot][g] = iv.hi;
            out->alone_record[c[i].slot][g] = c[i].flows[0];
        }
    }
}

/* Observations: the concurrent groups at the common transfer size. -1 when
 * out of memory. */
static int observations(const gq_recordset *rs, const cand *c, int nc, uint64_t pbytes, gq_bottlenecks *out)
{
    for (int i = 0; i < nc; i++) {
        if (c[i].nflows < 2)
            continue;
        if (c[i].bytes != (c[i].p2p ? pbytes : out->bytes[c[i].slot])) {
            out->nskipped++;
            continue;
        }
        gq_bn_obs *ob = push_obs(out);
        if (!ob)
            return -1;
        const gq_record *ag = &rs->v[c[i].agg];
        ob->group = c[i].group;
        ob->record = c[i].agg;
        snprintf(ob->test, sizeof ob->test, "%s", ag->test);
        ob->p2p = c[i].p2p;
        ob->direction = c[i].p2p ? GQ_DIR_P2P : (c[i].slot == 0 ? GQ_DIR_H2D : GQ_DIR_D2H);
        ob->bytes = c[i].bytes;
        ob->aggregate_gbps = ag->value.median;
        ob->overlap = ag->overlap;
        mask_t m = 0;
        for (int f = 0; f < c[i].nflows; f++) {
            const gq_record *r = &rs->v[c[i].flows[f]];
            if (c[i].p2p) {
                if (ob->npairs < GQ_BN_MAX_PAIRS) {
                    ob->pair_src[ob->npairs] = r->src.index;
                    ob->pair_dst[ob->npairs] = r->dst.index;
                    ob->rate[ob->npairs] = r->value.median;
                    ob->npairs++;
                }
                m |= bit(r->src.index) | bit(r->dst.index);
            } else {
                int g = host_gpu(r);
                m |= bit(g);
                if (g >= 0 && g < GQ_MAX_GPUS)
                    ob->rate[g] = r->value.median;
            }
        }
        ob->ngpus = mask_list(m, ob->gpus);
    }
    return 0;
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

/* P2P: each concurrent group against the same pairs one at a time, capped by
 * the P2P budgets already found among them (smaller runs first), so that a
 * link binding only when many pairs cross at once (the socket interconnect
 * behind two switch uplinks) shows below the sum of the narrower limits. */
static void infer_p2p(gq_bottlenecks *out, const gq_recordset *rs, const gq_domains *dom, const gq_bn_opts *o,
                      iso_set *is)
{
    gq_bn_obs **ord = malloc((size_t)(out->nobs > 0 ? out->nobs : 1) * sizeof *ord);
    if (!ord)
        return;
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
        double sum = 0, sp = rec_spread(rs, ob->record);
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
        ob->p2p_kind = within == ob->npairs   ? GQ_P2P_WITHIN
                       : across == ob->npairs ? GQ_P2P_ACROSS
                                              : GQ_P2P_MIXED;
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
        obs_interval(rs, ob);
        int held = below(ob->aggregate_lo_gbps, ob->aggregate_hi_gbps, ob->limit_lo_gbps, ob->limit_hi_gbps);
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
            more = below(kn[in].lo * g, kn[in].hi * g, ob->aggregate_lo_gbps, ob->aggregate_hi_gbps);
        ob->contended = held == 1;
        ob->undecided = held < 0 && more != 0;
        char gs[96];
        gpus_text(ob->gpus, ob->ngpus, gs, sizeof gs);
        if (in >= 0 && more == 0) {
            const gq_bn_obs *io = &out->obs[kn[in].obs];
            int b = held == 1 ? gq_bottlenecks_find(out, GQ_DIR_P2P, io->gpus, io->ngpus) : -1;
            if (b >= 0)
                add_evidence(&out->v[b], i);
            continue;
        }
        if (held == 1 && in >= 0 && more < 0) {
            const gq_bn_obs *io = &out->obs[kn[in].obs];
            char gi[96];
            gpus_text(io->gpus, io->ngpus, gi, sizeof gi);
            ob->contended = false;
            ob->undecided = true;
            add_open(out, GQ_BN_OPEN_BUDGET, ob, kn[in].obs, ob->aggregate_lo_gbps, ob->aggregate_hi_gbps,
                     kn[in].lo * g, kn[in].hi * g,
                     "whether %d GPU pairs over GPUs %s share a budget beyond the %.1f-%.1f GB/s of the "
                     "pairs over "
                     "GPUs %s: together they moved %.1f-%.1f GB/s",
                     ob->npairs, gs, kn[in].lo, kn[in].hi, gi, ob->aggregate_lo_gbps, ob->aggregate_hi_gbps);
            continue;
        }
        if (ob->undecided)
            add_open(
                out, GQ_BN_OPEN_BUDGET, ob, -1, ob->aggregate_lo_gbps, ob->aggregate_hi_gbps,
                ob->limit_lo_gbps, ob->limit_hi_gbps,
                "whether %d GPU pairs over GPUs %s share a budget: together they moved %.1f-%.1f GB/s, the "
                "level that means a shared budget is %.1f-%.1f GB/s",
                ob->npairs, gs, ob->aggregate_lo_gbps, ob->aggregate_hi_gbps, ob->limit_lo_gbps,
                ob->limit_hi_gbps);
        if (!ob->contended)
            continue;
        /* A pair that ran at its rate alone shares no budget with the pairs
         * that were held back: the budget is over the held-back pairs only,
         * with their own sum (docs/method-domains.md, "Free and held-back
         * pairs"). Free means clearly free, within half of min_drop (and the
         * spread) of its rate alone, so that noise does not move a pair that
         * lost a little between the two. */
        gq_bn_obs hb;
        uint64_t pairs = held_back(ob, is->v, 1 - o->min_drop / 2 - 2 * sp, &hb);
        if (!pairs)
            continue;
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
                continue; /* the held-back pairs are within a budget already found */
        }
        bool added;
        gq_bottleneck *bn = find_or_add(out, true, GQ_DIR_P2P, mask_of(hb.gpus, hb.ngpus), &added);
        if (!bn)
            continue;
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
        add_evidence(bn, i);
    }
    free(ord);
}

/* Asymmetry inside the largest host run of each direction: which GPUs of it
 * ran slow, and the ranges of the slow and the fast. */
static void host_asymmetry(gq_bottlenecks *out, const gq_bn_opts *o)
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

/* Explanations against the tree. */
static void explain_all(gq_bottlenecks *out, const gq_topo *topo)
{
    for (int i = 0; i < out->n; i++) {
        gq_bottleneck *bn = &out->v[i];
        if (bn->p2p) {
            gq_bn_explain_p2p(bn, &out->obs[bn->evidence[0]], topo);
        } else {
            int s = slot_of(bn->direction);
            mask_t univ = 0;
            for (int g = 0; g < GQ_MAX_GPUS; g++)
                if (isfinite(out->alone[s][g]))
                    univ |= bit(g);
            gq_bn_explain_host(bn, topo, univ, out->one_numa_visible);
        }
    }
}

int gq_bottlenecks_infer(const gq_recordset *rs, const gq_topo *topo, const gq_domains *dom,
                         const gq_bn_opts *o, gq_bottlenecks *out, gq_err *err)
{
    gq_bn_opts def;
    if (!o) {
        gq_bn_opts_default(&def);
        o = &def;
    }
    memset(out, 0, sizeof *out);
    for (int s = 0; s < 2; s++)
        for (int g = 0; g < GQ_MAX_GPUS; g++) {
            out->alone[s][g] = NAN;
            out->alone_record[s][g] = -1;
            out->alone_lo[s][g] = out->alone_hi[s][g] = NAN;
        }
    out->one_numa_visible = topo && topo->numa_nodes <= 1;
    out->asym_obs[0] = out->asym_obs[1] = -1;

    cand *c = NULL;
    int nc = 0;
    iso_set *iso = NULL;
    if (collect(rs, topo, out, &c, &nc))
        goto nomem;
    iso = malloc(sizeof *iso);
    if (!iso)
        goto nomem;

    uint64_t pbytes = common_bytes(c, nc, true, -1);
    for (int s = 0; s < 2; s++)
        out->bytes[s] = o->bytes ? o->bytes : common_bytes(c, nc, false, s);
    alone_rates(rs, c, nc, pbytes, out, iso);
    if (observations(rs, c, nc, pbytes, out))
        goto nomem;
    for (int s = 0; s < 2; s++)
        if (infer_host(out, rs, s, o))
            goto nomem;
    infer_p2p(out, rs, dom, o, iso);
    host_asymmetry(out, o);
    explain_all(out, topo);
    free(c);
    free(iso);
    return GQ_OK;
nomem:
    free(c);
    free(iso);
    return gq_err_set(err, GQ_E_NOMEM, "out of memory while inferring bottlenecks");
}

static int add_group(int *groups, int n, int max, int g)
{
    for (int i = 0; i < n; i++)
        if (groups[i] == g)
            return n;
    if (n < max)
        groups[n++] = g;
    return n;
}

/* The latest one-flow group that ran flow r alone (same ends, method and
 * size), or -1. */
static int alone_group(const gq_recordset *rs, const int *gsize, const gq_record *r)
{
    int g = -1;
    for (int i = 0; i < rs->n; i++) {
        const gq_record *x = &rs->v[i];
        if (gsize[i] == 1 && !x->aggregate && !x->sum && !x->is_latency && same_flow(x, r) &&
            !strstr(x->test, "bidirectional") && !strstr(x->test, "sweep"))
            g = x->group;
    }
    return g;
}

int gq_bottlenecks_open_groups(const gq_bottlenecks *b, const gq_recordset *rs, int *groups, int max)
{
    int n = 0;
    if (!b || !rs || rs->n <= 0 || b->nopen <= 0)
        return 0;
    int *gsize = malloc((size_t)rs->n * sizeof *gsize);
    if (!gsize || gq_domains_group_sizes(rs, gsize)) {
        free(gsize);
        return 0;
    }
    for (int u = 0; u < b->nopen; u++) {
        if (b->open[u].kind == GQ_BN_OPEN_MISSING) {
            n = add_group(groups, n, max, b->open[u].group);
            continue;
        }
        int obs[2] = {b->open[u].obs, b->open[u].other};
        for (int q = 0; q < 2; q++) {
            if (obs[q] < 0 || obs[q] >= b->nobs)
                continue;
            const gq_bn_obs *ob = &b->obs[obs[q]];
            n = add_group(groups, n, max, ob->group);
            for (int i = 0; i < rs->n; i++) {
                const gq_record *r = &rs->v[i];
                if (r->group != ob->group || r->aggregate || r->sum || r->is_latency)
                    continue;
                int g = alone_group(rs, gsize, r);
                if (g >= 0)
                    n = add_group(groups, n, max, g);
            }
        }
    }
    free(gsize);
    return n;
}

int gq_bottlenecks_find(const gq_bottlenecks *b, gq_direction dir, const int *gpus, int n)
{
    mask_t m = mask_of(gpus, n);
    for (int i = 0; i < b->n; i++)
        if (b->v[i].direction == dir && mask_of(b->v[i].gpus, b->v[i].ngpus) == m)
            return i;
    return -1;
}
