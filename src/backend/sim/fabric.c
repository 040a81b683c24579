/* The fabric model: routes over the declared links, the weighted max-min
 * solver that shares link capacities between concurrent streams, and the
 * deterministic noise source.
 */
#include "backend/sim/sim.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- routing --------------------------------------------------------------- */

static bool transit_ok(const gq_sim_node *n)
{
    /* Data crosses bridges, switches and root complexes; it never passes
     * through a GPU or through host memory on its way somewhere else. */
    return n->kind == GQ_SIM_SOCKET || n->kind == GQ_SIM_SWITCH || n->kind == GQ_SIM_BRIDGE;
}

int gq_sim_nvlink_between(const gq_sim_machine *m, int gi, int gj)
{
    if (gi < 0 || gj < 0 || gi >= m->ngpu || gj >= m->ngpu || gi == gj)
        return -1;
    int a = m->gpus[gi].node, b = m->gpus[gj].node;
    for (int k = m->adj_off[a]; k < m->adj_off[a + 1]; k++) {
        const gq_sim_link *L = &m->links[m->adj[k]];
        if (L->kind == GQ_SIM_LINK_NVLINK && ((L->a == a && L->b == b) || (L->a == b && L->b == a)))
            return m->adj[k];
    }
    return -1;
}

int gq_sim_nvswitch_between(const gq_sim_machine *m, int gi, int gj, int *li, int *lj)
{
    if (gi < 0 || gj < 0 || gi >= m->ngpu || gj >= m->ngpu || gi == gj)
        return -1;
    int a = m->gpus[gi].node, b = m->gpus[gj].node;
    for (int k = m->adj_off[a]; k < m->adj_off[a + 1]; k++) {
        const gq_sim_link *L = &m->links[m->adj[k]];
        int s = L->a == a ? L->b : L->a;
        if (L->kind != GQ_SIM_LINK_NVLINK || m->nodes[s].kind != GQ_SIM_NVSWITCH)
            continue;
        for (int q = m->adj_off[b]; q < m->adj_off[b + 1]; q++) {
            const gq_sim_link *M = &m->links[m->adj[q]];
            if (M->kind == GQ_SIM_LINK_NVLINK && (M->a == s || M->b == s)) {
                if (li)
                    *li = m->adj[k];
                if (lj)
                    *lj = m->adj[q];
                return s;
            }
        }
    }
    return -1;
}

int gq_sim_nvlinks(const gq_sim_machine *m, int gi, int gj)
{
    int d = gq_sim_nvlink_between(m, gi, gj), li, lj;
    if (d >= 0)
        return m->links[d].nvl;
    if (gq_sim_nvswitch_between(m, gi, gj, &li, &lj) < 0)
        return 0;
    return m->links[li].nvl < m->links[lj].nvl ? m->links[li].nvl : m->links[lj].nvl;
}

gq_p2p_status gq_sim_pair_p2p(const gq_sim_machine *m, int gi, int gj)
{
    if (gq_sim_nvlinks(m, gi, gj) > 0)
        return GQ_P2P_OK;
    for (int k = 0; k < 2; k++) {
        int g = k ? gj : gi;
        if (g >= 0 && g < m->ngpu && m->gpus[g].p2p >= 0 && m->gpus[g].p2p != GQ_P2P_OK)
            return (gq_p2p_status)m->gpus[g].p2p;
    }
    return m->p2p;
}

/* Breadth-first search from `from`; stops at `to` (or, when to < 0, at the
 * first memory node whose NUMA node is numa, any when numa < 0). Returns the
 * node reached or -1, with prev_link[] describing the tree. */
static int bfs(const gq_sim_machine *m, int from, int to, int numa, int *prev_link, int *queue)
{
    for (int i = 0; i < m->nnode; i++)
        prev_link[i] = -2;
    int head = 0, tail = 0;
    queue[tail++] = from;
    prev_link[from] = -1;
    while (head < tail) {
        int n = queue[head++];
        if (n != from) {
            const gq_sim_node *nd = &m->nodes[n];
            if (to >= 0 && n == to)
                return n;
            if (to < 0 && nd->kind == GQ_SIM_MEMORY && (numa < 0 || nd->numa == numa))
                return n;
            if (!transit_ok(nd))
                continue;
        }
        for (int k = m->adj_off[n]; k < m->adj_off[n + 1]; k++) {
            const gq_sim_link *L = &m->links[m->adj[k]];
            if (L->kind == GQ_SIM_LINK_NVLINK)
                continue;
            int o = L->a == n ? L->b : L->a;
            if (prev_link[o] != -2)
                continue;
            prev_link[o] = m->adj[k];
            queue[tail++] = o;
        }
    }
    return -1;
}

int gq_sim_route(const gq_sim_machine *m, int from, int to, bool nvlink, gq_sim_hop *hops, int max)
{
    if (from < 0 || to < 0 || from >= m->nnode || to >= m->nnode || max < 1)
        return -1;
    if (from == to)
        return 0;
    if (nvlink) {
        for (int k = m->adj_off[from]; k < m->adj_off[from + 1]; k++) {
            const gq_sim_link *L = &m->links[m->adj[k]];
            if (L->kind == GQ_SIM_LINK_NVLINK && (L->a == to || L->b == to)) {
                hops[0].link = m->adj[k];
                hops[0].dir = L->a == from ? 0 : 1;
                return 1;
            }
        }
        /* through an NVSwitch: up the source's bundle, down the destination's */
        int li, lj;
        if (max >= 2 && m->nodes[from].kind == GQ_SIM_GPU && m->nodes[to].kind == GQ_SIM_GPU) {
            int s = gq_sim_nvswitch_between(m, m->nodes[from].gpu, m->nodes[to].gpu, &li, &lj);
            if (s >= 0) {
                hops[0].link = li;
                hops[0].dir = m->links[li].a == from ? 0 : 1;
                hops[1].link = lj;
                hops[1].dir = m->links[lj].a == s ? 0 : 1;
                return 2;
            }
        }
    }
    /* Route from the lower-numbered node so that a -> b and b -> a use the
     * same links. */
    int s = from < to ? from : to, t = from < to ? to : from;
    /* on the stack (8 KiB): out of memory must not read as "no route" */
    int prev[GQ_SIM_MAX_NODES], queue[GQ_SIM_MAX_NODES];
    if (m->nnode > GQ_SIM_MAX_NODES)
        return -1;
    int n = -1;
    if (bfs(m, s, t, -1, prev, queue) == t) {
        int len = 0;
        for (int v = t; v != s; len++)
            v = m->links[prev[v]].a == v ? m->links[prev[v]].b : m->links[prev[v]].a;
        if (len <= max) {
            /* walk back from t, filling hops from the end of the s -> t path */
            int v = t;
            for (int i = len - 1; i >= 0; i--) {
                const gq_sim_link *L = &m->links[prev[v]];
                int u = L->a == v ? L->b : L->a; /* u -> v */
                hops[i].link = prev[v];
                hops[i].dir = L->a == u ? 0 : 1;
                v = u;
            }
            n = len;
            if (from != s) { /* reverse: t -> s */
                for (int i = 0; i < n / 2; i++) {
                    gq_sim_hop tmp = hops[i];
                    hops[i] = hops[n - 1 - i];
                    hops[n - 1 - i] = tmp;
                }
                for (int i = 0; i < n; i++)
                    hops[i].dir ^= 1;
            }
        }
    }
    return n;
}

int gq_sim_nearest_memory(const gq_sim_machine *m, int node, int numa)
{
    /* on the stack (8 KiB): out of memory must not read as "no path to host
     * memory" */
    int prev[GQ_SIM_MAX_NODES], queue[GQ_SIM_MAX_NODES];
    if (node < 0 || node >= m->nnode || m->nnode > GQ_SIM_MAX_NODES)
        return -1;
    return bfs(m, node, -1, numa, prev, queue);
}

/* ---- solver ------------------------------------------------------------------ */

gq_sim_problem *gq_sim_problem_alloc(int nc, int nf, int ne)
{
    gq_sim_problem *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->nc = nc;
    p->nf = nf;
    size_t C = (size_t)(nc > 0 ? nc : 1), F = (size_t)(nf > 0 ? nf : 1), E = (size_t)(ne > 0 ? ne : 1);
    p->cap = calloc(C, sizeof *p->cap);
    p->rem = calloc(C, sizeof *p->rem);
    p->sum = calloc(C, sizeof *p->sum);
    p->x = calloc(C, sizeof *p->x);
    p->first = calloc(F + 1, sizeof *p->first);
    p->ent = calloc(E, sizeof *p->ent);
    p->demand = calloc(F, sizeof *p->demand);
    p->active = calloc(F, sizeof *p->active);
    p->rate = calloc(F, sizeof *p->rate);
    p->cand = calloc(F, sizeof *p->cand);
    p->todo = calloc(F, sizeof *p->todo);
    if (!p->cap || !p->rem || !p->sum || !p->x || !p->first || !p->ent || !p->demand || !p->active ||
        !p->rate || !p->cand || !p->todo) {
        gq_sim_problem_free(p);
        return NULL;
    }
    return p;
}

void gq_sim_problem_free(gq_sim_problem *p)
{
    if (!p)
        return;
    free(p->cap);
    free(p->rem);
    free(p->sum);
    free(p->x);
    free(p->first);
    free(p->ent);
    free(p->demand);
    free(p->active);
    free(p->rate);
    free(p->cand);
    free(p->todo);
    free(p);
}

void gq_sim_solve(gq_sim_problem *p)
{
    int nt = 0;
    for (int c = 0; c < p->nc; c++) {
        p->rem[c] = p->cap[c];
        p->sum[c] = 0;
    }
    for (int f = 0; f < p->nf; f++) {
        p->rate[f] = 0;
        if (!p->active[f])
            continue;
        p->todo[nt++] = f;
        for (int e = p->first[f]; e < p->first[f + 1]; e++)
            p->sum[p->ent[e].c] += p->ent[e].a * p->ent[e].w;
    }
    p->iterations = 0;
    while (nt > 0) {
        p->iterations++;
        for (int c = 0; c < p->nc; c++)
            p->x[c] = p->sum[c] > 1e-12 ? (p->rem[c] > 0 ? p->rem[c] : 0) / p->sum[c] : INFINITY;
        double lo = INFINITY;
        for (int k = 0; k < nt; k++) {
            int f = p->todo[k];
            double cf = p->demand[f] > 0 ? p->demand[f] : INFINITY;
            for (int e = p->first[f]; e < p->first[f + 1]; e++) {
                double v = p->ent[e].w * p->x[p->ent[e].c];
                if (v < cf)
                    cf = v;
            }
            if (cf != cf) /* NaN: cannot come from checked capacities; never loop on it */
                cf = INFINITY;
            p->cand[f] = cf;
            if (cf < lo)
                lo = cf;
        }
        if (!isfinite(lo)) {
            /* Flows bound by nothing: cannot happen for routed flows, which
             * always cross a link; leave them at 0 rather than loop. */
            for (int k = 0; k < nt; k++)
                p->rate[p->todo[k]] = 0;
            break;
        }
        /* Fix every flow tied with the smallest (within rounding), so that a
         * symmetric machine takes a handful of steps, not one per flow. */
        double thr = lo * (1.0 + 1e-9);
        int nk = 0;
        for (int k = 0; k < nt; k++) {
            int f = p->todo[k];
            if (p->cand[f] <= thr) {
                double r = p->cand[f];
                p->rate[f] = r;
                for (int e = p->first[f]; e < p->first[f + 1]; e++) {
                    p->rem[p->ent[e].c] -= p->ent[e].a * r;
                    p->sum[p->ent[e].c] -= p->ent[e].a * p->ent[e].w;
                }
            } else {
                p->todo[nk++] = f;
            }
        }
        nt = nk;
    }
}

/* ---- noise ------------------------------------------------------------------------ */

static uint64_t splitmix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

uint64_t gq_sim_hash(uint64_t a, uint64_t b)
{
    return splitmix64(splitmix64(a) ^ (b + 0x632be59bd9b4e019ull));
}

double gq_sim_noise_unit(uint64_t key)
{
    /* Mean of two uniforms: triangular on [-1, 1], most draws near 0, as
     * round-to-round variation of a real copy is. */
    uint64_t h1 = splitmix64(key), h2 = splitmix64(h1 ^ 0xa5a5a5a5a5a5a5a5ull);
    double u1 = (double)(h1 >> 11) / 9007199254740992.0, u2 = (double)(h2 >> 11) / 9007199254740992.0;
    return u1 + u2 - 1.0;
}
