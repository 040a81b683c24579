#include "analysis/bottlenecks.h"

#include "analysis/bottlenecks_internal.h"
#include "measure/sanity.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* ---- the whole inference ----------------------------------------------------- */

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
        if (gq_bn_infer_host(out, rs, s, o))
            goto nomem;
    if (gq_bn_infer_p2p(out, rs, dom, o, iso))
        goto nomem;
    gq_bn_host_asymmetry(out, o);
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
