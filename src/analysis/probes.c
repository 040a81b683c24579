#include "analysis/probes.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/bottlenecks.h"
#include "core/units.h"
#include "measure/catalog.h"

typedef uint64_t mask_t;

static mask_t bit(int g)
{
    return (g >= 0 && g < 64) ? (mask_t)1 << g : 0;
}

const char *gq_probe_kind_name(gq_probe_kind k)
{
    static const char *const names[GQ_PROBE_NKINDS] = {
        [GQ_PROBE_MATRIX] = "matrix",         [GQ_PROBE_HOST_ALONE] = "host_alone",
        [GQ_PROBE_HOST_GROUP] = "host_group", [GQ_PROBE_HOST_PAIR] = "host_pair",
        [GQ_PROBE_HOST_ALL] = "host_all",     [GQ_PROBE_P2P_WITHIN] = "p2p_within",
        [GQ_PROBE_P2P_ACROSS] = "p2p_across", [GQ_PROBE_P2P_SPLIT] = "p2p_split",
    };
    return (k >= 0 && k < GQ_PROBE_NKINDS) ? names[k] : "?";
}

void gq_probe_plan_free(gq_probe_plan *p)
{
    if (!p)
        return;
    free(p->v);
    memset(p, 0, sizeof *p);
}

static gq_probe *push(gq_probe_plan *p, gq_probe_kind k, gq_direction d, gq_err *err)
{
    if (p->n == p->cap) {
        int cap = p->cap ? 2 * p->cap : 64;
        gq_probe *v = realloc(p->v, (size_t)cap * sizeof *v);
        if (!v) {
            gq_err_set(err, GQ_E_NOMEM, "out of memory planning probes");
            return NULL;
        }
        p->v = v;
        p->cap = cap;
    }
    gq_probe *pr = &p->v[p->n++];
    memset(pr, 0, sizeof *pr);
    pr->kind = k;
    pr->direction = d;
    p->count[k]++;
    return pr;
}

static bool p2p_possible(const gq_topo *t, int a, int b)
{
    if (!t || a >= t->ngpu || b >= t->ngpu || a < 0 || b < 0)
        return true;
    return t->p2p_cuda[a][b] != 0;
}

int gq_probes_plan_matrix(gq_probe_plan *p, const gq_topo *t, const int *gpus, int n, gq_err *err)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            if (i == j)
                continue;
            gq_probe *pr = push(p, GQ_PROBE_MATRIX, GQ_DIR_P2P, err);
            if (!pr)
                return GQ_E_NOMEM;
            pr->npairs = 1;
            pr->src[0] = gpus[i];
            pr->dst[0] = gpus[j];
            pr->staged[0] = !p2p_possible(t, gpus[i], gpus[j]);
            snprintf(pr->why, sizeof pr->why, "%s",
                     pr->staged[0] ? "pair alone, host-staged (no P2P)" : "pair alone");
        }
    return GQ_OK;
}

/* A candidate host group. */
typedef struct hset {
    mask_t m;
    char why[96];
    bool leaf; /* tree group containing no other tree group */
} hset;

static int popc(mask_t m)
{
    return __builtin_popcountll(m);
}

static int pci_depth(const gq_topo *t, int i)
{
    int d = 0;
    for (int p = t->pci[i].parent; p >= 0 && d < GQ_MAX_PCI_NODES; p = t->pci[p].parent)
        d++;
    return d;
}

static mask_t pci_under(const gq_topo *t, int node, mask_t sel)
{
    mask_t m = 0;
    for (int i = 0; i < t->npci && i < GQ_MAX_PCI_NODES; i++) {
        if (t->pci[i].kind != GQ_PCI_GPU || !(sel & bit(t->pci[i].gpu)))
            continue;
        for (int p = i, guard = 0; p >= 0 && guard < GQ_MAX_PCI_NODES; p = t->pci[p].parent, guard++)
            if (p == node) {
                m |= bit(t->pci[i].gpu);
                break;
            }
    }
    return m;
}

static void add_set(hset *v, int *nv, int cap, mask_t m, const char *why)
{
    for (int i = 0; i < *nv; i++)
        if (v[i].m == m)
            return;
    if (*nv >= cap)
        return;
    v[*nv].m = m;
    snprintf(v[*nv].why, sizeof v[0].why, "%s", why);
    v[*nv].leaf = false;
    (*nv)++;
}

/* Tree groups: GPUs below each PCIe node, deepest node first so that a set
 * is named by the most specific node; then NUMA nodes. */
static int tree_groups(const gq_topo *t, mask_t sel, int n, hset *v, int cap)
{
    int nv = 0;
    if (!t)
        return 0;
    int order[GQ_MAX_PCI_NODES], no = 0;
    for (int i = 0; i < t->npci && i < GQ_MAX_PCI_NODES; i++)
        if (t->pci[i].kind != GQ_PCI_GPU)
            order[no++] = i;
    for (int a = 1; a < no; a++)
        for (int b = a; b > 0 && pci_depth(t, order[b]) > pci_depth(t, order[b - 1]); b--) {
            int x = order[b];
            order[b] = order[b - 1];
            order[b - 1] = x;
        }
    for (int k = 0; k < no; k++) {
        int i = order[k];
        mask_t m = pci_under(t, i, sel);
        if (popc(m) < 2 || popc(m) >= n)
            continue;
        const gq_pci_node *nd = &t->pci[i];
        const char *what = gq_bn_pci_kind_text(gq_bn_pci_kind(t, i));
        char why[96];
        snprintf(why, sizeof why, "%s %s", what, nd->bus_id[0] ? nd->bus_id : nd->label);
        add_set(v, &nv, cap, m, why);
    }
    for (int node = 0; node < GQ_MAX_NUMA; node++) {
        mask_t m = 0;
        for (int g = 0; g < t->ngpu && g < 64; g++)
            if ((sel & bit(g)) && t->gpu[g].numa_node == node)
                m |= bit(g);
        if (popc(m) < 2 || popc(m) >= n)
            continue;
        char why[96];
        snprintf(why, sizeof why, "NUMA node %d", node);
        add_set(v, &nv, cap, m, why);
    }
    for (int i = 0; i < nv; i++) {
        v[i].leaf = true;
        for (int j = 0; j < nv; j++)
            if (j != i && !(v[j].m & ~v[i].m) && v[j].m != v[i].m)
                v[i].leaf = false;
    }
    return nv;
}

static void fill_gpus(gq_probe *pr, mask_t m)
{
    pr->ngpus = 0;
    for (int g = 0; g < 64; g++)
        if (m & bit(g))
            pr->gpus[pr->ngpus++] = g;
}

/* GPU pairs worth a host probe of their own: inside a domain of more than
 * two GPUs, or inside one of the smallest tree groups (the first nt of
 * sets), unless one of the ns sets is that pair already. Into pairs and
 * pwhy; returns how many. */
static int host_pairs(const int *gpus, int n, const gq_domains *dom, const hset *sets, int nt, int ns,
                      int (*pairs)[2], char (*pwhy)[96])
{
    int npairs = 0;
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++) {
            int a = gpus[i] < gpus[j] ? gpus[i] : gpus[j], b = gpus[i] < gpus[j] ? gpus[j] : gpus[i];
            const char *why = NULL;
            char buf[96];
            if (dom && dom->domain_of[a] >= 0 && dom->domain_of[a] == dom->domain_of[b] &&
                dom->size[dom->domain_of[a]] > 2) {
                snprintf(buf, sizeof buf, "pair inside domain %d", dom->domain_of[a]);
                why = buf;
            }
            for (int s = 0; s < nt && !why; s++)
                if (sets[s].leaf && (sets[s].m & bit(a)) && (sets[s].m & bit(b)) && popc(sets[s].m) > 2) {
                    snprintf(buf, sizeof buf, "pair inside %.80s", sets[s].why);
                    why = buf;
                }
            bool dup = false;
            for (int s = 0; s < ns && !dup; s++)
                dup = sets[s].m == (bit(a) | bit(b));
            if (!why || dup)
                continue;
            pairs[npairs][0] = a;
            pairs[npairs][1] = b;
            snprintf(pwhy[npairs], sizeof pwhy[0], "%s", why);
            npairs++;
        }
    return npairs;
}

/* GPU-to-GPU probes: pairs inside every domain at once, then domain against
 * domain. GQ_OK or GQ_E_NOMEM. */
static int plan_p2p(gq_probe_plan *p, const gq_topo *t, mask_t sel, const gq_domains *dom, gq_err *err)
{
    int rc = GQ_OK;
    gq_probe w;
    memset(&w, 0, sizeof w);
    for (int d = 0; d < dom->ndomains; d++) {
        int mem[GQ_MAX_GPUS], nm = 0;
        for (int k = 0; k < dom->size[d]; k++)
            if (sel & bit(dom->member[d][k]))
                mem[nm++] = dom->member[d][k];
        for (int k = 0; k + 1 < nm && w.npairs < GQ_PROBE_MAX_PAIRS; k += 2) {
            w.src[w.npairs] = mem[k];
            w.dst[w.npairs] = mem[k + 1];
            w.staged[w.npairs] = !p2p_possible(t, mem[k], mem[k + 1]);
            w.npairs++;
        }
    }
    if (w.npairs >= 2) {
        gq_probe *pr = push(p, GQ_PROBE_P2P_WITHIN, GQ_DIR_P2P, err);
        if (!pr)
            rc = GQ_E_NOMEM;
        else {
            w.kind = GQ_PROBE_P2P_WITHIN;
            w.direction = GQ_DIR_P2P;
            snprintf(w.why, sizeof w.why, "pairs inside every domain at once");
            *pr = w;
        }
    }
    for (int a = 0; a < dom->ndomains && !rc; a++)
        for (int b = a + 1; b < dom->ndomains && !rc; b++) {
            int ma[GQ_MAX_GPUS], mb[GQ_MAX_GPUS], na = 0, nb = 0;
            for (int k = 0; k < dom->size[a]; k++)
                if (sel & bit(dom->member[a][k]))
                    ma[na++] = dom->member[a][k];
            for (int k = 0; k < dom->size[b]; k++)
                if (sel & bit(dom->member[b][k]))
                    mb[nb++] = dom->member[b][k];
            int np = na < nb ? na : nb;
            if (np < 2)
                continue;
            gq_probe *pr = push(p, GQ_PROBE_P2P_ACROSS, GQ_DIR_P2P, err);
            if (!pr) {
                rc = GQ_E_NOMEM;
                break;
            }
            for (int k = 0; k < np && k < GQ_PROBE_MAX_PAIRS; k++) {
                pr->src[k] = ma[k];
                pr->dst[k] = mb[k];
                pr->staged[k] = !p2p_possible(t, ma[k], mb[k]);
            }
            pr->npairs = np < GQ_PROBE_MAX_PAIRS ? np : GQ_PROBE_MAX_PAIRS;
            snprintf(pr->why, sizeof pr->why, "domain %d against domain %d", a, b);
        }
    return rc;
}

/* Does the plan hold a P2P probe with exactly these pairs (in any order)? */
static bool have_pairs(const gq_probe_plan *p, const int *src, const int *dst, int np)
{
    for (int i = 0; i < p->n; i++) {
        const gq_probe *q = &p->v[i];
        if (q->kind == GQ_PROBE_MATRIX || q->npairs != np || q->direction != GQ_DIR_P2P)
            continue;
        int hit = 0;
        for (int a = 0; a < np; a++)
            for (int b = 0; b < np; b++)
                hit += q->src[b] == src[a] && q->dst[b] == dst[a];
        if (hit == np)
            return true;
    }
    return false;
}

/* One probe each way for the split A | B: the k-th GPU of A with the k-th of
 * B, all at once. GQ_OK or GQ_E_NOMEM. */
static int split_probe(gq_probe_plan *p, const gq_topo *t, mask_t A, mask_t B, const char *what, gq_err *err)
{
    int a[64], b[64], na = 0, nb = 0;
    for (int g = 0; g < 64; g++) {
        if (A & bit(g))
            a[na++] = g;
        if (B & bit(g))
            b[nb++] = g;
    }
    int np = na < nb ? na : nb;
    if (np > GQ_PROBE_MAX_PAIRS)
        np = GQ_PROBE_MAX_PAIRS;
    if (np < 2)
        return GQ_OK;
    /* a run of host-staged pairs only loads the host paths, which the host
     * probes measure directly: at least one pair must have P2P */
    bool any_p2p = false;
    for (int k = 0; k < np && !any_p2p; k++)
        any_p2p = p2p_possible(t, a[k], b[k]) || p2p_possible(t, b[k], a[k]);
    if (!any_p2p)
        return GQ_OK;
    for (int dir = 0; dir < 2; dir++) {
        const int *s = dir ? b : a, *d = dir ? a : b;
        if (have_pairs(p, s, d, np))
            continue;
        gq_probe *pr = push(p, GQ_PROBE_P2P_SPLIT, GQ_DIR_P2P, err);
        if (!pr)
            return GQ_E_NOMEM;
        pr->npairs = np;
        for (int k = 0; k < np; k++) {
            pr->src[k] = s[k];
            pr->dst[k] = d[k];
            pr->staged[k] = !p2p_possible(t, s[k], d[k]);
        }
        snprintf(pr->why, sizeof pr->why, "every pair across %.70s%s", what, dir ? ", reverse" : "");
    }
    return GQ_OK;
}

/* The splits: each group of the domain hierarchy into its halves, and each
 * tree group against the rest, over the GPUs not set aside. */
static int plan_splits(gq_probe_plan *p, const gq_topo *t, mask_t sel, const gq_domains *dom,
                       const hset *sets, int nt, gq_err *err)
{
    mask_t elig = sel;
    for (int k = 0; k < dom->nset_aside; k++)
        elig &= ~bit(dom->set_aside[k]);
    int rc = GQ_OK;
    for (int gi = 0; gi < dom->ngroups && !rc; gi++) {
        mask_t G = dom->groups[gi].gpus & elig;
        /* its parts: the child groups, and the domains under no child */
        mask_t parts[64];
        int nparts = 0;
        mask_t seen = 0;
        for (int c = 0; c < dom->ngroups && nparts < 64; c++)
            if (dom->groups[c].parent == gi && (dom->groups[c].gpus & G)) {
                parts[nparts++] = dom->groups[c].gpus & G;
                seen |= dom->groups[c].gpus;
            }
        for (int d = 0; d < dom->ndomains && nparts < 64; d++) {
            mask_t m = 0;
            for (int k = 0; k < dom->size[d]; k++)
                m |= bit(dom->member[d][k]);
            if ((m & G) && !(m & seen))
                parts[nparts++] = m & G;
        }
        if (nparts < 2)
            continue;
        mask_t A = 0, B = 0;
        for (int k = 0; k < nparts; k++)
            if (k < (nparts + 1) / 2)
                A |= parts[k];
            else
                B |= parts[k];
        char what[96], sa[48], sb[48];
        int la[64], lb[64];
        int na = 0, nb = 0;
        for (int g = 0; g < 64; g++) {
            if (A & bit(g))
                la[na++] = g;
            if (B & bit(g))
                lb[nb++] = g;
        }
        snprintf(what, sizeof what, "the boundary between GPUs %s and %s",
                 gq_domains_set_str(la, na, sa, sizeof sa), gq_domains_set_str(lb, nb, sb, sizeof sb));
        rc = split_probe(p, t, A, B, what, err);
    }
    for (int s = 0; s < nt && !rc; s++) {
        mask_t A = sets[s].m & elig, B = elig & ~sets[s].m;
        rc = split_probe(p, t, A, B, sets[s].why, err);
    }
    return rc;
}

int gq_probes_plan_contention(gq_probe_plan *p, const gq_topo *t, const int *gpus, int n,
                              const gq_domains *dom, gq_err *err)
{
    mask_t sel = 0;
    for (int i = 0; i < n; i++)
        sel |= bit(gpus[i]);
    /* tree groups: at most one per PCIe node plus NUMA nodes */
    int cap = GQ_MAX_PCI_NODES + GQ_MAX_NUMA + 2 * GQ_MAX_GPUS;
    hset *sets = calloc((size_t)cap, sizeof *sets);
    if (!sets)
        return gq_err_set(err, GQ_E_NOMEM, "out of memory planning probes");
    int nt = tree_groups(t, sel, n, sets, cap);
    int ns = nt;
    if (dom)
        for (int d = 0; d < dom->ndomains; d++) {
            mask_t m = 0;
            for (int k = 0; k < dom->size[d]; k++)
                if (sel & bit(dom->member[d][k]))
                    m |= bit(dom->member[d][k]);
            if (popc(m) < 2 || popc(m) >= n)
                continue;
            char why[96];
            snprintf(why, sizeof why, "domain %d", d);
            add_set(sets, &ns, cap, m, why);
        }

    /* pairs inside domains and inside the smallest tree groups */
    int(*pairs)[2] = malloc(sizeof(int[2]) * (size_t)(n * (n - 1) / 2 + 1));
    char(*pwhy)[96] = malloc(sizeof(char[96]) * (size_t)(n * (n - 1) / 2 + 1));
    if (!pairs || !pwhy) {
        free(sets);
        free(pairs);
        free(pwhy);
        return gq_err_set(err, GQ_E_NOMEM, "out of memory planning probes");
    }
    int npairs = host_pairs(gpus, n, dom, sets, nt, ns, pairs, pwhy);
    int rc = GQ_OK;
    const gq_direction dirs[2] = {GQ_DIR_H2D, GQ_DIR_D2H};
    for (int d = 0; d < 2 && !rc; d++) {
        for (int i = 0; i < n; i++) {
            gq_probe *pr = push(p, GQ_PROBE_HOST_ALONE, dirs[d], err);
            if (!pr) {
                rc = GQ_E_NOMEM;
                break;
            }
            fill_gpus(pr, bit(gpus[i]));
            snprintf(pr->why, sizeof pr->why, "GPU alone");
        }
        for (int k = 0; k < npairs && !rc; k++) {
            gq_probe *pr = push(p, GQ_PROBE_HOST_PAIR, dirs[d], err);
            if (!pr) {
                rc = GQ_E_NOMEM;
                break;
            }
            fill_gpus(pr, bit(pairs[k][0]) | bit(pairs[k][1]));
            snprintf(pr->why, sizeof pr->why, "%s", pwhy[k]);
        }
        for (int s = 0; s < ns && !rc; s++) {
            gq_probe *pr = push(p, GQ_PROBE_HOST_GROUP, dirs[d], err);
            if (!pr) {
                rc = GQ_E_NOMEM;
                break;
            }
            fill_gpus(pr, sets[s].m);
            snprintf(pr->why, sizeof pr->why, "%s", sets[s].why);
        }
        if (n >= 2 && !rc) {
            gq_probe *pr = push(p, GQ_PROBE_HOST_ALL, dirs[d], err);
            if (!pr) {
                rc = GQ_E_NOMEM;
                break;
            }
            fill_gpus(pr, sel);
            snprintf(pr->why, sizeof pr->why, "every GPU at once");
        }
    }

    if (dom && !rc)
        rc = plan_p2p(p, t, sel, dom, err);
    if (dom && !rc)
        rc = plan_splits(p, t, sel, dom, sets, nt, err);
    free(sets);
    free(pairs);
    free(pwhy);
    return rc;
}

void gq_probes_assume_domains(const gq_topo *t, const int *gpus, int n, gq_domains *out)
{
    gq_pairmatrix *m = malloc(sizeof *m);
    memset(out, 0, sizeof *out);
    for (int g = 0; g < GQ_MAX_GPUS; g++)
        out->domain_of[g] = -1;
    if (!m)
        return;
    gq_pairmatrix_init(m, gpus, n);
    bool any_nv = false;
    for (int i = 0; t && i < n; i++)
        for (int j = 0; j < n; j++)
            if (i != j && gpus[i] < t->ngpu && gpus[j] < t->ngpu && t->nvlinks[gpus[i]][gpus[j]] > 0)
                any_nv = true;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            if (i == j || !t || gpus[i] >= t->ngpu || gpus[j] >= t->ngpu)
                continue;
            int a = gpus[i], b = gpus[j];
            bool edge = any_nv ? t->nvlinks[a][b] > 0
                               : t->p2p_cuda[a][b] == 1 && t->gpu[a].numa_node == t->gpu[b].numa_node;
            if (edge)
                m->gbps[i][j] = 1.0; /* a flat matrix: the components are the domains */
        }
    gq_domains_cluster(m, NULL, out, NULL);
    free(m);
}

long gq_probes_bound(int n)
{
    long N = n;
    return N * (N - 1) + 2 * (4 * N + 1 + N * (N - 1) / 2) + 1 + N * N / 8 + 8 * N;
}

double gq_probes_estimate_s(const gq_probe_plan *p, int rounds, double round_s)
{
    double s = 0;
    for (int i = 0; i < p->n; i++) {
        const gq_probe *pr = &p->v[i];
        bool conc = pr->npairs > 1 || pr->ngpus > 1;
        s += (rounds + (conc ? 2 : 1)) * round_s + 0.05;
    }
    return s;
}

const char *gq_probe_str(const gq_probe *pr, char *buf, size_t n)
{
    buf[0] = 0;
    if (pr->npairs > 0) {
        size_t used = 0;
        for (int k = 0; k < pr->npairs; k++) {
            int w = snprintf(buf + used, n - used, "%s%d:%d", k ? "," : "", pr->src[k], pr->dst[k]);
            if (w < 0 || (size_t)w >= n - used)
                break;
            used += (size_t)w;
        }
        return buf;
    }
    return gq_domains_set_str(pr->gpus, pr->ngpus, buf, n);
}

/* Test names the probes' records carry. Host probes use the catalog's
 * host_to_device_set / device_to_host_set; a matrix cell is
 * device_to_device_memcpy_{read,write}_{ce,sm}, or device_to_device_staged
 * without P2P; concurrent pairs are concurrent_pairs_{read,write}_{ce,sm}. */
static const char *probe_test_name(const gq_probe *pr, gq_method p2p_method, bool read)
{
    bool sm = p2p_method == GQ_METHOD_SM;
    switch (pr->kind) {
    case GQ_PROBE_HOST_ALONE:
    case GQ_PROBE_HOST_GROUP:
    case GQ_PROBE_HOST_PAIR:
    case GQ_PROBE_HOST_ALL: return pr->direction == GQ_DIR_D2H ? GQ_TID_D2H_SET : GQ_TID_H2D_SET;
    case GQ_PROBE_MATRIX:
        if (pr->staged[0])
            return GQ_TID_D2D_STAGED;
        return read ? (sm ? GQ_TID_D2D_READ_SM : GQ_TID_D2D_READ_CE)
                    : (sm ? GQ_TID_D2D_WRITE_SM : GQ_TID_D2D_WRITE_CE);
    case GQ_PROBE_P2P_WITHIN:
    case GQ_PROBE_P2P_ACROSS:
    case GQ_PROBE_P2P_SPLIT:
    case GQ_PROBE_NKINDS: break;
    }
    return read ? (sm ? GQ_TID_PAIRS_READ_SM : GQ_TID_PAIRS_READ_CE)
                : (sm ? GQ_TID_PAIRS_WRITE_SM : GQ_TID_PAIRS_WRITE_CE);
}

void gq_probe_measurement(const gq_probe *pr, uint64_t bytes, gq_method p2p_method, bool read,
                          gq_measurement *m)
{
    memset(m, 0, sizeof *m);
    snprintf(m->test, sizeof m->test, "%s", probe_test_name(pr, p2p_method, read));
    if (pr->npairs > 0) {
        for (int k = 0; k < pr->npairs && m->nflows < GQ_MAX_FLOWS; k++) {
            gq_flow *f = &m->flows[m->nflows];
            f->src = (gq_endpoint){GQ_EP_GPU, pr->src[k]};
            f->dst = (gq_endpoint){GQ_EP_GPU, pr->dst[k]};
            f->method = pr->staged[k] ? GQ_METHOD_STAGED : p2p_method;
            f->exec_gpu = (read && !pr->staged[k]) ? pr->dst[k] : pr->src[k];
            f->bytes = bytes;
            f->tag = k;
            m->report[m->nflows++] = true;
        }
    } else {
        for (int k = 0; k < pr->ngpus && m->nflows < GQ_MAX_FLOWS; k++) {
            gq_flow *f = &m->flows[m->nflows];
            gq_endpoint h = {GQ_EP_HOST, GQ_NUMA_LOCAL}, g = {GQ_EP_GPU, pr->gpus[k]};
            f->src = pr->direction == GQ_DIR_D2H ? g : h;
            f->dst = pr->direction == GQ_DIR_D2H ? h : g;
            f->method = GQ_METHOD_CE;
            f->exec_gpu = pr->gpus[k];
            f->bytes = bytes;
            f->tag = k;
            m->report[m->nflows++] = true;
        }
    }
    m->aggregate = m->nflows > 1;
}

int gq_probes_parse_pairs(const char *s, const char *what, bool disjoint, int ngpu, int *src, int *dst,
                          int max, int *n, gq_err *err)
{
    *n = 0;
    if (!s || !*s)
        return gq_err_set(err, GQ_E_USAGE, "%s: empty list of pairs, expected e.g. 0:1,2:3", what);
    int owner[GQ_MAX_GPUS];
    for (int g = 0; g < GQ_MAX_GPUS; g++)
        owner[g] = -1;
    const char *p = s;
    while (1) {
        const char *c = strchr(p, ',');
        size_t l = c ? (size_t)(c - p) : strlen(p);
        char item[48];
        if (l == 0)
            return gq_err_set(err, GQ_E_USAGE, "%s '%s': empty item, expected pairs like 0:1,2:3", what, s);
        if (l >= sizeof item) {
            char q[48];
            snprintf(item, sizeof item, "%.*s", (int)(sizeof item - 1), p);
            return gq_err_set(err, GQ_E_USAGE, "%s '%s': item '%s' is too long, expected SRC:DST such as 0:1",
                              what, s, gq_ellipsize(q, sizeof q, item, 20));
        }
        memcpy(item, p, l);
        item[l] = 0;
        char *colon = strchr(item, ':');
        long a, b;
        gq_err e;
        if (!colon || colon == item || !colon[1] || strchr(colon + 1, ':'))
            return gq_err_set(err, GQ_E_USAGE, "%s '%s': '%s' is not a pair, expected SRC:DST such as 0:1",
                              what, s, item);
        *colon = 0;
        if (gq_parse_int(item, 0, 1L << 20, &a, &e) || gq_parse_int(colon + 1, 0, 1L << 20, &b, &e))
            return gq_err_set(err, GQ_E_USAGE,
                              "%s '%s': '%s:%s' is not a pair of GPU indices, expected SRC:DST such as 0:1",
                              what, s, item, colon + 1);
        if (a == b)
            return gq_err_set(err, GQ_E_USAGE,
                              "%s '%s': pair %ld:%ld names GPU %ld twice; a pair needs two different GPUs",
                              what, s, a, b, a);
        for (int k = 0; k < 2; k++) {
            long g = k ? b : a;
            if (ngpu > 0 && g >= ngpu)
                return gq_err_set(err, GQ_E_USAGE,
                                  "%s '%s': GPU %ld does not exist (this machine has GPUs 0-%d)", what, s, g,
                                  ngpu - 1);
            if (g >= GQ_MAX_GPUS)
                return gq_err_set(err, GQ_E_USAGE,
                                  "%s '%s': GPU %ld does not exist (gpuqual handles GPUs 0-%d)", what, s, g,
                                  GQ_MAX_GPUS - 1);
        }
        if (disjoint)
            for (int k = 0; k < 2; k++) {
                long g = k ? b : a;
                if (owner[g] >= 0)
                    return gq_err_set(
                        err, GQ_E_USAGE,
                        "%s '%s': GPU %ld is in two pairs (%d:%d and %ld:%ld); pairs that run at the same "
                        "time need different GPUs",
                        what, s, g, src[owner[g]], dst[owner[g]], a, b);
            }
        if (*n >= max)
            return gq_err_set(err, GQ_E_USAGE, "%s '%s': more than %d pairs", what, s, max);
        src[*n] = (int)a;
        dst[*n] = (int)b;
        owner[a] = owner[b] = *n;
        (*n)++;
        if (!c)
            break;
        p = c + 1;
    }
    return GQ_OK;
}
