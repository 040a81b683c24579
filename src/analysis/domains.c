#include "analysis/domains.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void gq_pairmatrix_init(gq_pairmatrix *m, const int *gpus, int n)
{
    if (n < 0)
        n = 0;
    if (n > GQ_MAX_GPUS)
        n = GQ_MAX_GPUS;
    m->n = n;
    for (int i = 0; i < GQ_MAX_GPUS; i++) {
        m->gpu[i] = i < n ? (gpus ? gpus[i] : i) : -1;
        for (int j = 0; j < GQ_MAX_GPUS; j++) {
            m->gbps[i][j] = NAN;
            m->spread[i][j] = 0;
            m->staged[i][j] = false;
            m->record[i][j] = -1;
            m->lo[i][j] = m->hi[i][j] = NAN;
        }
    }
}

bool gq_domains_usable(const gq_record *r, const char **why)
{
    const char *w = NULL;
    if (r->flags & GQ_FLAG_IMPOSSIBLE)
        w = "impossible: above the theoretical capacity of its path";
    else if (r->flags & GQ_FLAG_ERROR)
        w = r->error[0] ? r->error : "error";
    else if (r->flags & GQ_FLAG_OVERLAP)
        w = "overlap: the windows did not overlap enough for an aggregate";
    else if (r->flags & GQ_FLAG_VERIFY_FAILED)
        w = "verify failed: the data pattern did not match";
    else if (!r->valid)
        w = r->error[0] ? r->error : "invalid";
    else if (!r->is_latency && !(r->value.median > 0 && isfinite(r->value.median)))
        w = "no rate";
    if (why)
        *why = w;
    return w == NULL;
}

typedef struct gidx {
    int group, idx;
    bool flow;
} gidx;

static int cmp_gidx(const void *a, const void *b)
{
    const gidx *x = a, *y = b;
    if (x->group != y->group)
        return (x->group > y->group) - (x->group < y->group);
    return (x->idx > y->idx) - (x->idx < y->idx);
}

int gq_domains_group_sizes(const gq_recordset *rs, int *out)
{
    if (!rs || rs->n <= 0)
        return GQ_OK;
    gidx *v = malloc((size_t)rs->n * sizeof *v);
    if (!v)
        return GQ_E_NOMEM;
    for (int i = 0; i < rs->n; i++) {
        v[i].group = rs->v[i].group;
        v[i].idx = i;
        v[i].flow = !rs->v[i].aggregate && !rs->v[i].sum;
    }
    qsort(v, (size_t)rs->n, sizeof *v, cmp_gidx);
    for (int a = 0; a < rs->n;) {
        int b = a, flows = 0;
        while (b < rs->n && v[b].group == v[a].group) {
            flows += v[b].flow;
            b++;
        }
        for (int k = a; k < b; k++)
            out[v[k].idx] = flows;
        a = b;
    }
    free(v);
    return GQ_OK;
}

static bool test_selected(const char *test, const char *const *tests)
{
    if (!tests)
        return strstr(test, "bidirectional") == NULL;
    for (; *tests; tests++)
        if (!strcmp(*tests, test))
            return true;
    return false;
}

static int position(const gq_pairmatrix *m, int gpu)
{
    for (int k = 0; k < m->n; k++)
        if (m->gpu[k] == gpu)
            return k;
    return -1;
}

int gq_pairmatrix_from_records(gq_pairmatrix *m, const gq_recordset *rs, const char *const *tests)
{
    if (!rs || rs->n <= 0)
        return 0;
    int *gs = malloc((size_t)rs->n * sizeof *gs);
    if (!gs)
        return -1;
    int filled = 0;
    if (gq_domains_group_sizes(rs, gs)) { /* its one failure: out of memory */
        filled = -1;
        goto out;
    }
    for (int i = 0; i < rs->n; i++) {
        const gq_record *r = &rs->v[i];
        if (r->aggregate || r->sum || r->is_latency || r->direction != GQ_DIR_P2P || gs[i] != 1)
            continue;
        if (r->src.kind != GQ_EP_GPU || r->dst.kind != GQ_EP_GPU || !test_selected(r->test, tests))
            continue;
        int a = position(m, r->src.index), b = position(m, r->dst.index);
        if (a < 0 || b < 0 || a == b)
            continue;
        if (!gq_domains_usable(r, NULL)) {
            m->gbps[a][b] = m->lo[a][b] = m->hi[a][b] = NAN;
            m->record[a][b] = i;
            continue;
        }
        gq_interval iv = gq_record_interval(r);
        m->lo[a][b] = iv.lo;
        m->hi[a][b] = iv.hi;
        m->gbps[a][b] = r->value.median;
        m->spread[a][b] = r->value.spread > 0 ? r->value.spread : 0;
        m->staged[a][b] = r->method == GQ_METHOD_STAGED || r->method == GQ_METHOD_DRIVER_STAGED;
        m->record[a][b] = i;
    }
    /* counted at the end: a cell filled and then overwritten by an
     * unusable record of the same pair is missing again */
    for (int a = 0; a < m->n; a++)
        for (int b = 0; b < m->n; b++)
            filled += a != b && m->record[a][b] >= 0 && isfinite(m->gbps[a][b]);
out:
    free(gs);
    return filled;
}

void gq_domains_opts_default(gq_domains_opts *o)
{
    o->min_rel_gap = 0.10;
    o->staged_edges = false;
    o->no_set_aside = false;
    o->topo = NULL;
}

typedef struct pairv {
    int i, j; /* matrix positions, i < j */
    double v, s;
    double lo, hi; /* the interval of v: the directions' intervals, averaged */
} pairv;

static int cmp_pairv(const void *a, const void *b)
{
    const pairv *x = a, *y = b;
    if (x->v != y->v)
        return (x->v > y->v) - (x->v < y->v);
    if (x->i != y->i)
        return x->i - y->i;
    return x->j - y->j;
}

/* Union-find over matrix positions. */
static int uf_find(int *p, int x)
{
    while (p[x] != x) {
        p[x] = p[p[x]];
        x = p[x];
    }
    return x;
}

typedef uint64_t pmask; /* bit k: matrix position k (GQ_MAX_GPUS == 64) */

static pmask pbit(int k)
{
    return (k >= 0 && k < 64) ? (pmask)1 << k : 0;
}

/* Components of the graph on the positions in `in` whose edges are the pairs
 * inside `in` with value >= thr; comp[k] = representative (positions outside
 * `in` are their own and not counted); returns the number of components. */
static int components(int n, const pairv *pv, int np, double thr, pmask in, int *comp)
{
    for (int k = 0; k < n; k++)
        comp[k] = k;
    for (int e = 0; e < np; e++) {
        if (pv[e].v < thr || !(in & pbit(pv[e].i)) || !(in & pbit(pv[e].j)))
            continue;
        int a = uf_find(comp, pv[e].i), b = uf_find(comp, pv[e].j);
        if (a != b)
            comp[a < b ? b : a] = a < b ? a : b;
    }
    int nc = 0;
    for (int k = 0; k < n; k++) {
        comp[k] = uf_find(comp, k);
        nc += comp[k] == k && (in & pbit(k));
    }
    return nc;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* The pairs with a figure: each pair's mean over the directions measured
 * (staged ones only when o->staged_edges) and its widest spread, into pv;
 * returns how many. Counts the missing pairs and the widest spread in out. */
static int pair_values(const gq_pairmatrix *m, const gq_domains_opts *o, pairv *pv, gq_domains *out)
{
    int n = m->n, np = 0;
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++) {
            double sum = 0, sp = 0, lo = 0, hi = 0;
            int k = 0;
            const int c[2][2] = {{i, j}, {j, i}};
            for (int d = 0; d < 2; d++) {
                int a = c[d][0], b = c[d][1];
                double v = m->gbps[a][b];
                if (!(v > 0) || !isfinite(v) || (m->staged[a][b] && !o->staged_edges))
                    continue;
                sum += v;
                if (m->spread[a][b] > sp)
                    sp = m->spread[a][b];
                bool iv =
                    isfinite(m->lo[a][b]) && isfinite(m->hi[a][b]) && m->lo[a][b] <= v && m->hi[a][b] >= v;
                lo += iv ? m->lo[a][b] : v * (1 - m->spread[a][b] / 2);
                hi += iv ? m->hi[a][b] : v * (1 + m->spread[a][b] / 2);
                k++;
            }
            if (!k) {
                out->nmissing++;
                continue;
            }
            pv[np++] = (pairv){.i = i, .j = j, .v = sum / k, .s = sp, .lo = lo / k, .hi = hi / k};
            if (sp > out->max_spread)
                out->max_spread = sp;
        }
    return np;
}

typedef struct gap {
    bool found;
    double thr, lo, hi;
    /* the widest gap whose decision the intervals left open, tried before
     * the one found (or with none found); k: its index in the sorted pairs */
    bool open;
    int k;
    double worst, best, olo, ohi;
} gap;

/* The largest relative gap between sorted pair figures (the pairs inside
 * `in`) that is a boundary on the intervals and splits the GPUs of `in` into
 * more components than base: into *g (g->found false when none does). A gap
 * is a boundary when even the least favourable ends of the intervals either
 * side (the highest end below, the lowest above) stay min_rel_gap apart; it
 * is none when even the most favourable ends do not; between the two it is
 * open, and the widest open one tried before the boundary is kept in *g. -1
 * when out of memory. */
static int split_at_gap(const pairv *pv, int np, int n, pmask in, int base, const gq_domains_opts *o, gap *g)
{
    memset(g, 0, sizeof *g);
    /* lo_top[k] / hi_bot[k]: the highest interval end at or below k, the
     * lowest above it; lo_bot / hi_top: the highest lower end at or below k,
     * the lowest upper end above it. */
    double *lo_top = malloc((size_t)np * sizeof *lo_top);
    double *hi_bot = malloc((size_t)np * sizeof *hi_bot);
    double *lo_bot = malloc((size_t)np * sizeof *lo_bot);
    double *hi_top = malloc((size_t)np * sizeof *hi_top);
    int *order = malloc((size_t)np * sizeof *order);
    int rc = -1;
    if (!lo_top || !hi_bot || !lo_bot || !hi_top || !order)
        goto out;
    double run = -INFINITY, run2 = -INFINITY;
    for (int k = 0; k < np; k++) {
        run = pv[k].hi > run ? pv[k].hi : run;
        run2 = pv[k].lo > run2 ? pv[k].lo : run2;
        lo_top[k] = run;
        lo_bot[k] = run2;
    }
    run = run2 = INFINITY;
    for (int k = np - 1; k >= 0; k--) {
        run = pv[k].lo < run ? pv[k].lo : run;
        run2 = pv[k].hi < run2 ? pv[k].hi : run2;
        hi_bot[k] = run;
        hi_top[k] = run2;
    }
    int nc = 0;
    for (int k = 0; k + 1 < np; k++)
        if (hi_top[k + 1] / lo_bot[k] - 1 >= o->min_rel_gap) /* could be a boundary */
            order[nc++] = k;
    /* sort candidates by gap size, descending (nc is small) */
    for (int a = 1; a < nc; a++)
        for (int b = a; b > 0; b--) {
            double ga = pv[order[b] + 1].v / pv[order[b]].v;
            double gb = pv[order[b - 1] + 1].v / pv[order[b - 1]].v;
            if (ga <= gb)
                break;
            int t = order[b];
            order[b] = order[b - 1];
            order[b - 1] = t;
        }
    for (int c = 0; c < nc; c++) {
        int k = order[c];
        int tmp[GQ_MAX_GPUS];
        if (components(n, pv, np, pv[k + 1].v, in, tmp) <= base)
            continue;
        double worst = hi_bot[k + 1] / lo_top[k] - 1, best = hi_top[k + 1] / lo_bot[k] - 1;
        if (worst >= o->min_rel_gap) {
            g->found = true;
            g->thr = pv[k + 1].v;
            g->lo = pv[k].v;
            g->hi = pv[k + 1].v;
            break;
        }
        if (!g->open) {
            g->open = true;
            g->k = k;
            g->worst = worst;
            g->best = best;
            g->olo = pv[k].v;
            g->ohi = pv[k + 1].v;
        }
    }
    rc = 0;
out:
    free(lo_top);
    free(hi_bot);
    free(lo_bot);
    free(hi_top);
    free(order);
    return rc;
}

/* An open boundary of group `in` into out->open: the text, and the pairs
 * nearest the gap on either side (sorted sub[0..ns) and the gap at k). */
static void note_open(const gq_pairmatrix *m, const pairv *sub, int ns, pmask in, const gap *g,
                      const gq_domains_opts *o, gq_domains *out)
{
    if (out->nopen >= GQ_DOMAINS_MAX_OPEN)
        return;
    gq_domain_open *u = &out->open[out->nopen++];
    memset(u, 0, sizeof *u);
    for (int k = 0; k < m->n; k++)
        if ((in & pbit(k)) && m->gpu[k] >= 0 && m->gpu[k] < 64)
            u->gpus |= (uint64_t)1 << m->gpu[k];
    u->lo_gbps = g->olo;
    u->hi_gbps = g->ohi;
    u->worst_pct = g->worst * 100;
    u->best_pct = g->best * 100;
    /* alternate below and above, nearest first */
    for (int d = 0; u->npairs < GQ_DOMAINS_OPEN_PAIRS && (g->k - d >= 0 || g->k + 1 + d < ns); d++) {
        const int idx[2] = {g->k - d, g->k + 1 + d};
        for (int q = 0; q < 2 && u->npairs < GQ_DOMAINS_OPEN_PAIRS; q++)
            if (idx[q] >= 0 && idx[q] < ns) {
                u->pair_a[u->npairs] = m->gpu[sub[idx[q]].i];
                u->pair_b[u->npairs] = m->gpu[sub[idx[q]].j];
                u->npairs++;
            }
    }
    int gl[GQ_MAX_GPUS], ng = 0;
    for (int b = 0; b < 64; b++)
        if (u->gpus & ((uint64_t)1 << b))
            gl[ng++] = b;
    char gs[160];
    gq_domains_set_str(gl, ng, gs, sizeof gs);
    snprintf(u->text, sizeof u->text,
             "whether GPUs %s split into domains between pairs at %.1f GB/s and at %.1f GB/s: the gap is "
             "%.1f-%.1f %% at the ends of the intervals, against the %.0f %% a boundary needs",
             gs, g->olo, g->ohi, u->worst_pct > 0 ? u->worst_pct : 0, u->best_pct, o->min_rel_gap * 100);
}

/* Domains in order of their first GPU index, from each GPU position's
 * component; members sorted. */
static void number_domains(const gq_pairmatrix *m, const int *comp, gq_domains *out)
{
    int n = m->n;
    int rep_dom[GQ_MAX_GPUS];
    for (int k = 0; k < n; k++)
        rep_dom[k] = -1;
    int order_pos[GQ_MAX_GPUS];
    for (int k = 0; k < n; k++)
        order_pos[k] = k;
    /* positions sorted by GPU index */
    for (int a = 1; a < n; a++)
        for (int b = a; b > 0 && m->gpu[order_pos[b]] < m->gpu[order_pos[b - 1]]; b--) {
            int t = order_pos[b];
            order_pos[b] = order_pos[b - 1];
            order_pos[b - 1] = t;
        }
    for (int q = 0; q < n; q++) {
        int k = order_pos[q];
        int r = comp[k];
        if (rep_dom[r] < 0)
            rep_dom[r] = out->ndomains++;
        int d = rep_dom[r];
        out->member[d][out->size[d]++] = m->gpu[k];
        if (m->gpu[k] >= 0 && m->gpu[k] < GQ_MAX_GPUS)
            out->domain_of[m->gpu[k]] = d;
    }
    for (int d = 0; d < out->ndomains; d++)
        qsort(out->member[d], (size_t)out->size[d], sizeof(int), cmp_int);
}

/* Within / across figures and chaining (a pair inside a domain below the
 * threshold, or missing). -1 when out of memory. */
static int within_across(const gq_pairmatrix *m, const pairv *pv, int np, const double *thr, gq_domains *out)
{
    int n = m->n;
    unsigned char(*has)[GQ_MAX_GPUS] = calloc(GQ_MAX_GPUS, sizeof *has);
    if (!has)
        return -1;
    for (int e = 0; e < np; e++) {
        has[pv[e].i][pv[e].j] = 1;
        int da = out->domain_of[m->gpu[pv[e].i]], db = out->domain_of[m->gpu[pv[e].j]];
        if (da == db) {
            if (isnan(out->within_min_gbps) || pv[e].v < out->within_min_gbps)
                out->within_min_gbps = pv[e].v;
            if (pv[e].v < thr[pv[e].i])
                out->chained[da] = true;
        } else if (isnan(out->across_max_gbps) || pv[e].v > out->across_max_gbps) {
            out->across_max_gbps = pv[e].v;
        }
    }
    /* A missing pair inside a domain is a chain too (no direct path). */
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++) {
            int da = out->domain_of[m->gpu[i]];
            if (da != out->domain_of[m->gpu[j]])
                continue;
            if (!has[i][j])
                out->chained[da] = true;
        }
    free(has);
    return 0;
}

/* Values of the pairs inside `in` into sub (sorted as pv); returns how many. */
static int pairs_inside(const pairv *pv, int np, pmask in, pairv *sub)
{
    int ns = 0;
    for (int e = 0; e < np; e++)
        if ((in & pbit(pv[e].i)) && (in & pbit(pv[e].j)))
            sub[ns++] = pv[e];
    return ns;
}

static uint64_t gpu_mask(const gq_pairmatrix *m, pmask in)
{
    uint64_t g = 0;
    for (int k = 0; k < m->n; k++)
        if ((in & pbit(k)) && m->gpu[k] >= 0 && m->gpu[k] < 64)
            g |= (uint64_t)1 << m->gpu[k];
    return g;
}

typedef struct hier {
    const gq_pairmatrix *m;
    const gq_domains_opts *o;
    gq_domains *out;
    int comp[GQ_MAX_GPUS];   /* leaf representative by position */
    double thr[GQ_MAX_GPUS]; /* by position: the boundary that made its leaf (-inf: none) */
} hier;

/* Split the group `in` at its widest significant gap, then each part again,
 * down to groups no gap splits (the domains). -1 when out of memory. */
static int split_group(hier *h, const pairv *pv, int np, pmask in, int parent, int depth, double thr_in)
{
    int n = h->m->n;
    pairv *sub = calloc((size_t)(np > 0 ? np : 1), sizeof *sub);
    if (!sub)
        return -1;
    int ns = pairs_inside(pv, np, in, sub), comp[GQ_MAX_GPUS];
    int base = components(n, sub, ns, -INFINITY, in, comp);
    gap g = {0};
    if (ns >= 2 && split_at_gap(sub, ns, n, in, base, h->o, &g)) {
        free(sub);
        return -1;
    }
    if (g.open)
        note_open(h->m, sub, ns, in, &g, h->o, h->out);
    if (!g.found || h->out->ngroups >= GQ_MAX_GPUS) {
        for (int k = 0; k < n; k++)
            if (in & pbit(k)) {
                h->comp[k] = comp[k];
                h->thr[k] = thr_in;
            }
        free(sub);
        return 0;
    }
    int me = h->out->ngroups++;
    h->out->groups[me] = (gq_domain_group){.gpus = gpu_mask(h->m, in),
                                           .parent = parent,
                                           .depth = depth,
                                           .threshold_gbps = g.thr,
                                           .gap_lo_gbps = g.lo,
                                           .gap_hi_gbps = g.hi};
    if (depth == 0) {
        h->out->split = true;
        h->out->threshold_gbps = g.thr;
        h->out->gap_lo_gbps = g.lo;
        h->out->gap_hi_gbps = g.hi;
    }
    components(n, sub, ns, g.thr, in, comp);
    int rc = 0;
    for (int r = 0; r < n && !rc; r++) {
        if (!(in & pbit(r)) || comp[r] != r)
            continue;
        pmask child = 0;
        for (int k = 0; k < n; k++)
            if ((in & pbit(k)) && comp[k] == r)
                child |= pbit(k);
        if (__builtin_popcountll(child) >= 3) {
            rc = split_group(h, sub, ns, child, me, depth + 1, g.thr);
        } else {
            for (int k = 0; k < n; k++)
                if (child & pbit(k)) {
                    h->comp[k] = r;
                    h->thr[k] = g.thr;
                }
        }
    }
    free(sub);
    return rc;
}

static bool link_down(const gq_topo *t, int g)
{
    if (!t || g < 0 || g >= t->ngpu)
        return false;
    const gq_gpu_info *gi = &t->gpu[g];
    return (gi->pcie_width_cur > 0 && gi->pcie_width_max > gi->pcie_width_cur) ||
           (gi->pcie_gen_cur > 0 && gi->pcie_gen_max > gi->pcie_gen_cur);
}

/* The text saying why GPU position k was set aside. */
static void set_aside_text(const gq_pairmatrix *m, const gq_domains_opts *o, int k, bool no_p2p, double lo,
                           double hi, double others, char *buf, size_t len)
{
    int g = m->gpu[k];
    if (no_p2p) {
        snprintf(buf, len,
                 "GPU %d has no P2P with any GPU (every copy with it is staged through host memory)", g);
        return;
    }
    int w =
        snprintf(buf, len,
                 "every pair with GPU %d copies at %.1f-%.1f GB/s, below the slowest pair among the other "
                 "GPUs (%.1f GB/s): a limit of its own",
                 g, lo, hi, others);
    const gq_topo *t = o->topo;
    if (link_down(t, g) && w > 0 && (size_t)w < len) {
        const gq_gpu_info *gi = &t->gpu[g];
        snprintf(buf + w, len - (size_t)w, "; its PCIe link runs Gen%d x%d where it can do Gen%d x%d",
                 gi->pcie_gen_cur, gi->pcie_width_cur, gi->pcie_gen_max, gi->pcie_width_max);
    }
}

/* GPUs whose every pair is slow for a reason of their own: positions
 * removed from *keep and listed in out. */
static void set_aside(const gq_pairmatrix *m, const gq_domains_opts *o, const pairv *pv, int np, pmask *keep,
                      gq_domains *out)
{
    int n = m->n;
    bool changed = true;
    while (changed && __builtin_popcountll(*keep) > 2) {
        changed = false;
        bool any_edge = false;
        for (int e = 0; e < np; e++)
            any_edge |= (*keep & pbit(pv[e].i)) && (*keep & pbit(pv[e].j));
        for (int k = 0; k < n && !changed; k++) {
            if (!(*keep & pbit(k)))
                continue;
            double hi = -INFINITY, lo = INFINITY, hi_s = -INFINITY, others = INFINITY, others_s = INFINITY,
                   others_hi = -INFINITY;
            int mine = 0, theirs = 0;
            for (int e = 0; e < np; e++) {
                if (!(*keep & pbit(pv[e].i)) || !(*keep & pbit(pv[e].j)))
                    continue;
                if (pv[e].i == k || pv[e].j == k) {
                    mine++;
                    hi = fmax(hi, pv[e].v);
                    lo = fmin(lo, pv[e].v);
                    hi_s = fmax(hi_s, pv[e].v * (1 + pv[e].s));
                } else {
                    theirs++;
                    others = fmin(others, pv[e].v);
                    others_hi = fmax(others_hi, pv[e].v);
                    others_s = fmin(others_s, pv[e].v * (1 - pv[e].s));
                }
            }
            bool no_p2p = mine == 0 && any_edge && theirs > 0;
            bool slow = mine > 0 && theirs > 0 && hi_s < others_s && others >= hi * (1 + o->min_rel_gap);
            /* A reason of its own, not its place in the tree: its link runs
             * below what it can do, or its pairs are the same whoever the
             * partner is while the other GPUs' pairs are not. */
            bool flat = hi <= lo * (1 + o->min_rel_gap) && others_hi >= others * (1 + o->min_rel_gap);
            if (slow && !flat && !link_down(o->topo, m->gpu[k]))
                slow = false;
            if (!no_p2p && !slow)
                continue;
            int s = out->nset_aside++;
            out->set_aside[s] = m->gpu[k];
            out->set_aside_no_p2p[s] = no_p2p;
            set_aside_text(m, o, k, no_p2p, lo, hi, others, out->set_aside_why[s],
                           sizeof out->set_aside_why[s]);
            *keep &= ~pbit(k);
            changed = true;
        }
    }
}

int gq_domains_cluster(const gq_pairmatrix *m, const gq_domains_opts *o, gq_domains *out, gq_err *err)
{
    gq_domains_opts def;
    if (!o) {
        gq_domains_opts_default(&def);
        o = &def;
    }
    memset(out, 0, sizeof *out);
    for (int g = 0; g < GQ_MAX_GPUS; g++)
        out->domain_of[g] = -1;
    out->within_min_gbps = NAN;
    out->across_max_gbps = NAN;
    if (!m || m->n < 1)
        return gq_err_set(err, GQ_E_USAGE, "no GPU to group into domains");
    int n = m->n;

    int maxp = n * (n - 1) / 2;
    pairv *pv = malloc((size_t)(maxp > 0 ? maxp : 1) * sizeof *pv);
    if (!pv)
        return gq_err_set(err, GQ_E_NOMEM, "out of memory");
    int np = pair_values(m, o, pv, out);
    out->npairs = np;
    /* "no P2P" is a finding only when some pair was measured (through host
     * memory, or at nothing); a matrix with nothing in it (not measured, every
     * figure flagged and left out) says nothing about P2P */
    bool any_measured = false;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            any_measured |= i != j && isfinite(m->gbps[i][j]);
    out->no_p2p = n >= 2 && np == 0 && any_measured;
    qsort(pv, (size_t)np, sizeof *pv, cmp_pairv);

    pmask keep = n >= 64 ? ~(pmask)0 : (((pmask)1 << n) - 1);
    if (!o->no_set_aside && n >= 3)
        set_aside(m, o, pv, np, &keep, out);
    hier *h = malloc(sizeof *h);
    if (!h) {
        free(pv);
        return gq_err_set(err, GQ_E_NOMEM, "out of memory");
    }
    h->m = m;
    h->o = o;
    h->out = out;
    for (int k = 0; k < n; k++) {
        h->comp[k] = k; /* set-aside GPUs are their own domain */
        h->thr[k] = -INFINITY;
    }
    int rc = split_group(h, pv, np, keep, -1, 0, -INFINITY);
    if (!rc) {
        number_domains(m, h->comp, out);
        rc = within_across(m, pv, np, h->thr, out);
    }
    free(h);
    free(pv);
    return rc ? gq_err_set(err, GQ_E_NOMEM, "out of memory") : GQ_OK;
}

const char *gq_domains_set_str(const int *gpus, int n, char *buf, size_t len)
{
    int v[GQ_MAX_GPUS];
    if (n > GQ_MAX_GPUS)
        n = GQ_MAX_GPUS;
    memcpy(v, gpus, (size_t)n * sizeof *v);
    qsort(v, (size_t)n, sizeof *v, cmp_int);
    size_t used = 0;
    buf[0] = 0;
    for (int a = 0; a < n;) {
        int b = a;
        while (b + 1 < n && v[b + 1] == v[b] + 1)
            b++;
        int w;
        if (b - a >= 2)
            w = snprintf(buf + used, len - used, "%s%d-%d", used ? "," : "", v[a], v[b]);
        else if (b == a + 1)
            w = snprintf(buf + used, len - used, "%s%d,%d", used ? "," : "", v[a], v[b]);
        else
            w = snprintf(buf + used, len - used, "%s%d", used ? "," : "", v[a]);
        if (w < 0 || (size_t)w >= len - used)
            break;
        used += (size_t)w;
        a = b + 1;
    }
    return buf;
}
