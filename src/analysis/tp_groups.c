/* Tensor-parallel groups: candidates and the choice (analysis/tp_groups.h). */
#include "analysis/tp_groups.h"

#include <stdio.h>
#include <string.h>

const char *gq_tp_origin_name(gq_tp_origin o)
{
    switch (o) {
    case GQ_TP_NAIVE: return "naive";
    case GQ_TP_ALL: return "every group";
    case GQ_TP_COPY: return "pairwise copy";
    case GQ_TP_DOMAIN: return "domain";
    case GQ_TP_SWAP: return "swap";
    }
    return "?";
}

int gq_tp_init(gq_tp_state *s, const int *gpus, int n, int tp, int budget, gq_err *err)
{
    memset(s, 0, sizeof *s);
    if (tp < 2)
        return gq_err_set(err, GQ_E_USAGE, "--tp %d: a tensor-parallel group needs at least 2 GPUs", tp);
    if (n < tp || n % tp)
        return gq_err_set(err, GQ_E_USAGE,
                          "--tp %d: %d GPUs selected; groups of %d need a multiple of %d GPUs (use --gpus)",
                          tp, n, tp, tp);
    s->n = n;
    s->tp = tp;
    s->budget = budget;
    memcpy(s->gpus, gpus, sizeof(int) * (size_t)n);
    for (int i = 0; i < GQ_MAX_GPUS; i++)
        for (int j = 0; j < GQ_MAX_GPUS; j++)
            s->copy[i][j] = -1;
    return GQ_OK;
}

/* The slowest pairwise copy within a set, < 0 when any is unknown. */
static double set_copy(const gq_tp_state *s, gq_tp_set set)
{
    double m = -1;
    for (int i = 0; i < GQ_MAX_GPUS; i++)
        for (int j = i + 1; j < GQ_MAX_GPUS; j++)
            if ((set >> i & 1) && (set >> j & 1)) {
                double c = s->copy[i][j];
                if (c < 0)
                    return -1;
                if (m < 0 || c < m)
                    m = c;
            }
    return m;
}

int gq_tp_add(gq_tp_state *s, gq_tp_set set, gq_tp_origin origin)
{
    for (int k = 0; k < s->ncand; k++)
        if (s->cand[k].set == set)
            return -1;
    if (s->ncand >= GQ_TP_MAX_CAND)
        return -2;
    gq_tp_cand *c = &s->cand[s->ncand];
    c->set = set;
    c->origin = origin;
    c->busbw = -1;
    c->copy = set_copy(s, set);
    return s->ncand++;
}

/* Add the groups of a partition given as an order: chunks of tp. */
static void add_order(gq_tp_state *s, const int *order, gq_tp_origin origin)
{
    for (int g = 0; g < s->n / s->tp; g++) {
        gq_tp_set set = 0;
        for (int r = 0; r < s->tp; r++)
            set |= (gq_tp_set)1 << order[g * s->tp + r];
        gq_tp_add(s, set, origin);
    }
}

static double choose(int n, int k)
{
    double c = 1;
    for (int i = 0; i < k; i++)
        c = c * (n - i) / (i + 1);
    return c;
}

static void all_groups(gq_tp_state *s, int start, int left, gq_tp_set set)
{
    if (left == 0) {
        gq_tp_add(s, set, GQ_TP_ALL);
        return;
    }
    for (int i = start; i <= s->n - left; i++)
        all_groups(s, i + 1, left - 1, set | (gq_tp_set)1 << s->gpus[i]);
}

/* The partition by pairwise copy: seed with the fastest remaining pair,
 * grow by the GPU whose slowest copy to the members is fastest. */
static void copy_partition(gq_tp_state *s)
{
    bool used[GQ_MAX_GPUS] = {false};
    int order[GQ_MAX_GPUS], no = 0;
    for (int g = 0; g < s->n / s->tp; g++) {
        int ba = -1, bb = -1;
        double best = -1;
        for (int i = 0; i < s->n; i++)
            for (int j = i + 1; j < s->n; j++) {
                int a = s->gpus[i], b = s->gpus[j];
                if (used[a] || used[b] || s->copy[a][b] <= best)
                    continue;
                best = s->copy[a][b];
                ba = a;
                bb = b;
            }
        if (ba < 0)
            return; /* copies unknown */
        int mem[GQ_MAX_GPUS], nm = 0;
        mem[nm++] = ba;
        mem[nm++] = bb;
        used[ba] = used[bb] = true;
        while (nm < s->tp) {
            int bg = -1;
            double bv = -2;
            for (int i = 0; i < s->n; i++) {
                int x = s->gpus[i];
                if (used[x])
                    continue;
                double v = 1e300;
                for (int k = 0; k < nm; k++)
                    if (s->copy[x][mem[k]] < v)
                        v = s->copy[x][mem[k]];
                if (v > bv) {
                    bv = v;
                    bg = x;
                }
            }
            if (bg < 0)
                return; /* cannot happen: tp divides n */
            used[bg] = true;
            mem[nm++] = bg;
        }
        for (int k = 0; k < nm; k++)
            order[no++] = mem[k];
    }
    add_order(s, order, GQ_TP_COPY);
}

/* GPUs joined by NVLink first (greedy, most links), else by PCIe parent. */
static void domain_partitions(gq_tp_state *s, const int (*nvl)[GQ_MAX_GPUS], const int *parent)
{
    int order[GQ_MAX_GPUS];
    if (nvl) {
        bool used[GQ_MAX_GPUS] = {false}, any = false;
        int no = 0;
        for (int i = 0; i < s->n; i++) {
            int a = s->gpus[i];
            if (used[a])
                continue;
            used[a] = true;
            order[no++] = a;
            for (int k = 1; k < s->tp; k++) {
                int bj = -1, bl = 0;
                for (int j = 0; j < s->n; j++) {
                    int b = s->gpus[j];
                    if (!used[b] && nvl[a][b] > bl) {
                        bl = nvl[a][b];
                        bj = b;
                    }
                }
                if (bj < 0) /* none left joined to a: the next in index order */
                    for (int j = 0; j < s->n && bj < 0; j++)
                        if (!used[s->gpus[j]])
                            bj = s->gpus[j];
                if (bj < 0)
                    return; /* cannot happen: tp divides n */
                any |= bl > 0;
                used[bj] = true;
                order[no++] = bj;
            }
        }
        if (any)
            add_order(s, order, GQ_TP_DOMAIN);
    }
    if (parent) {
        memcpy(order, s->gpus, sizeof(int) * (size_t)s->n);
        for (int i = 1; i < s->n; i++) /* stable insertion sort by parent */
            for (int j = i; j > 0 && parent[order[j - 1]] > parent[order[j]]; j--) {
                int t = order[j];
                order[j] = order[j - 1];
                order[j - 1] = t;
            }
        add_order(s, order, GQ_TP_DOMAIN);
    }
}

void gq_tp_seed(gq_tp_state *s, const int (*nvlinks)[GQ_MAX_GPUS], const int *parent)
{
    add_order(s, s->gpus, GQ_TP_NAIVE);
    if (choose(s->n, s->tp) <= s->budget) {
        all_groups(s, 0, s->tp, 0);
        return;
    }
    copy_partition(s);
    domain_partitions(s, nvlinks, parent);
}

void gq_tp_naive(const gq_tp_state *s, gq_tp_part *p)
{
    memset(p, 0, sizeof *p);
    p->ngroups = s->n / s->tp;
    double mn = -1, sum = 0;
    for (int g = 0; g < p->ngroups; g++) {
        p->idx[g] = g;
        double b = s->cand[g].busbw;
        sum += b;
        if (mn < 0 || b < mn)
            mn = b;
    }
    p->min_busbw = mn;
    p->sum_busbw = sum;
}

typedef struct search {
    const gq_tp_state *s;
    gq_tp_set all;
    int cur[GQ_MAX_GPUS];
    gq_tp_part best;
    bool found;
    long steps;
} search;

static void dfs(search *x, gq_tp_set used, int ng, double mn, double sum)
{
    if (++x->steps > 2000000)
        return; /* bounded: the budget keeps the candidates few */
    if (used == x->all) {
        if (!x->found || mn > x->best.min_busbw * (1 + 1e-9) ||
            (mn >= x->best.min_busbw * (1 - 1e-9) && sum > x->best.sum_busbw * (1 + 1e-9))) {
            x->found = true;
            x->best.ngroups = ng;
            memcpy(x->best.idx, x->cur, sizeof(int) * (size_t)ng);
            x->best.min_busbw = mn;
            x->best.sum_busbw = sum;
        }
        return;
    }
    if (x->found && mn < x->best.min_busbw * (1 - 1e-9))
        return; /* cannot beat the best's slowest group */
    gq_tp_set rest = x->all & ~used;
    gq_tp_set low = rest & (~rest + 1); /* the lowest GPU not yet in a group */
    for (int k = 0; k < x->s->ncand; k++) {
        const gq_tp_cand *c = &x->s->cand[k];
        if (c->busbw < 0 || !(c->set & low) || (c->set & used))
            continue;
        x->cur[ng] = k;
        dfs(x, used | c->set, ng + 1, mn < 0 || c->busbw < mn ? c->busbw : mn, sum + c->busbw);
    }
}

bool gq_tp_best(const gq_tp_state *s, gq_tp_part *p)
{
    search x = {.s = s};
    for (int i = 0; i < s->n; i++)
        x.all |= (gq_tp_set)1 << s->gpus[i];
    dfs(&x, 0, 0, -1, 0);
    if (x.found)
        *p = x.best;
    return x.found;
}

int gq_tp_swaps(gq_tp_state *s, const gq_tp_part *p, int room)
{
    int added = 0;
    for (int a = 0; a < p->ngroups && added < room; a++)
        for (int b = a + 1; b < p->ngroups && added < room; b++) {
            gq_tp_set A = s->cand[p->idx[a]].set, B = s->cand[p->idx[b]].set;
            for (int i = 0; i < GQ_MAX_GPUS && added < room; i++) {
                if (!(A >> i & 1))
                    continue;
                for (int j = 0; j < GQ_MAX_GPUS && added < room; j++) {
                    if (!(B >> j & 1))
                        continue;
                    gq_tp_set A2 = (A & ~((gq_tp_set)1 << i)) | (gq_tp_set)1 << j;
                    gq_tp_set B2 = (B & ~((gq_tp_set)1 << j)) | (gq_tp_set)1 << i;
                    /* a swap is worth measuring only as a pair of new groups: never one
                     * past room (nor past the candidate table) */
                    if (s->ncand + 2 > GQ_TP_MAX_CAND || added + 2 > room)
                        return added;
                    int ka = gq_tp_add(s, A2, GQ_TP_SWAP), kb = gq_tp_add(s, B2, GQ_TP_SWAP);
                    added += (ka >= 0) + (kb >= 0);
                }
            }
        }
    return added;
}

int gq_tp_best_by_busbw(const gq_tp_state *s)
{
    int b = -1;
    for (int k = 0; k < s->ncand; k++)
        if (s->cand[k].busbw >= 0 && (b < 0 || s->cand[k].busbw > s->cand[b].busbw))
            b = k;
    return b;
}

int gq_tp_best_by_copy(const gq_tp_state *s)
{
    int b = -1;
    for (int k = 0; k < s->ncand; k++)
        if (s->cand[k].copy >= 0 && (b < 0 || s->cand[k].copy > s->cand[b].copy))
            b = k;
    return b;
}

void gq_tp_set_str(gq_tp_set set, char *buf, size_t n)
{
    size_t l = 0;
    if (n)
        buf[0] = 0;
    for (int i = 0; i < GQ_MAX_GPUS && l + 1 < n; i++)
        if (set >> i & 1)
            l += (size_t)snprintf(buf + l, n - l, "%s%d", l ? "," : "", i);
}
