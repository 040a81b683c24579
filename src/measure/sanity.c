#include "measure/sanity.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define INF HUGE_VAL

static bool gpu_ok(const gq_topo *t, int g)
{
    return g >= 0 && g < t->ngpu && g < GQ_MAX_GPUS;
}

/* The GPU's own negotiated PCIe link; 0 unknown. */
static double gpu_link(const gq_topo *t, int g, char *why, size_t n)
{
    if (!gpu_ok(t, g))
        return 0;
    const gq_gpu_info *gi = &t->gpu[g];
    double c = gi->pcie_gbps > 0 ? gi->pcie_gbps : gq_pcie_gbps(gi->pcie_gen_cur, gi->pcie_width_cur);
    if (c > 0 && why && n) {
        if (gi->pcie_gen_cur > 0 && gi->pcie_width_cur > 0)
            snprintf(why, n, "PCIe Gen%d x%d link of GPU %d, %.1f GB/s", gi->pcie_gen_cur, gi->pcie_width_cur,
                     g, c);
        else
            snprintf(why, n, "PCIe link of GPU %d, %.1f GB/s", g, c);
    }
    return c;
}

static int pci_of_gpu(const gq_topo *t, int g)
{
    for (int k = 0; k < t->npci && k < GQ_MAX_PCI_NODES; k++)
        if (t->pci[k].kind == GQ_PCI_GPU && t->pci[k].gpu == g)
            return k;
    return -1;
}

static int parent_of(const gq_topo *t, int k)
{
    int p = t->pci[k].parent;
    return (p >= 0 && p < t->npci && p != k) ? p : -1;
}

static void pci_name(const gq_topo *t, int k, char *buf, size_t n)
{
    const gq_pci_node *p = &t->pci[k];
    const char *what = p->kind == GQ_PCI_HOSTBRIDGE ? "host bridge"
                       : p->kind == GQ_PCI_GPU      ? "GPU link"
                                                    : "uplink";
    if (p->bus_id[0])
        snprintf(buf, n, "PCIe %s %s", what, p->bus_id);
    else if (p->label[0])
        snprintf(buf, n, "PCIe %s %s", what, p->label);
    else
        snprintf(buf, n, "PCIe %s #%d", what, k);
}

/* Minimum over the links from PCIe node k up to (not including) stop, or to
 * the root when stop is -1. Updates *cap and why when a link is lower. */
static void walk_up(const gq_topo *t, int k, int stop, double *cap, char *why, size_t n)
{
    for (int hops = 0; k >= 0 && k != stop && hops < GQ_MAX_PCI_NODES; hops++, k = parent_of(t, k)) {
        double l = t->pci[k].link_gbps;
        if (l > 0 && (*cap <= 0 || l < *cap)) {
            *cap = l;
            if (why && n) {
                char name[96];
                pci_name(t, k, name, sizeof name);
                snprintf(why, n, "%s, %.1f GB/s", name, l);
            }
        }
    }
}

/* Host <-> GPU path: the GPU's link and every known link above it. */
static double host_path(const gq_topo *t, int g, char *why, size_t n)
{
    double cap = gpu_link(t, g, why, n);
    int k = pci_of_gpu(t, g);
    if (k >= 0)
        walk_up(t, k, -1, &cap, why, n);
    return cap;
}

static bool is_ancestor(const gq_topo *t, int a, int k)
{
    for (int hops = 0; k >= 0 && hops < GQ_MAX_PCI_NODES; hops++, k = parent_of(t, k))
        if (k == a)
            return true;
    return false;
}

/* GPU <-> GPU over PCIe: every link on the tree path between them. */
static double pcie_pair(const gq_topo *t, int a, int b, char *why, size_t n)
{
    char wa[160] = "", wb[160] = "";
    double ca = gpu_link(t, a, wa, sizeof wa), cb = gpu_link(t, b, wb, sizeof wb);
    double cap = ca;
    if (why && n)
        snprintf(why, n, "%s", wa);
    if (cb > 0 && (cap <= 0 || cb < cap)) {
        cap = cb;
        if (why && n)
            snprintf(why, n, "%s", wb);
    }
    int ka = pci_of_gpu(t, a), kb = pci_of_gpu(t, b);
    if (ka < 0 || kb < 0)
        return cap;
    /* lowest common ancestor: first ancestor of ka (inclusive of parents) that is also above kb */
    int lca = -1;
    for (int k = parent_of(t, ka), hops = 0; k >= 0 && hops < GQ_MAX_PCI_NODES; k = parent_of(t, k), hops++)
        if (is_ancestor(t, k, kb)) {
            lca = k;
            break;
        }
    walk_up(t, ka, lca, &cap, why, n);
    walk_up(t, kb, lca, &cap, why, n);
    return cap;
}

static double nvlink_pair(const gq_topo *t, int a, int b, char *why, size_t n)
{
    int links = t->nvlinks[a][b];
    double ra = t->gpu[a].nvlink_gbps_per_link, rb = t->gpu[b].nvlink_gbps_per_link;
    double r = ra > 0 && rb > 0 ? (ra < rb ? ra : rb) : (ra > 0 ? ra : rb);
    if (r <= 0) {
        if (why && n)
            snprintf(why, n, "%d NVLinks of unknown rate", links);
        return 0;
    }
    if (why && n)
        snprintf(why, n, "%d NVLinks x %.1f GB/s between GPUs %d and %d, %.1f GB/s", links, r, a, b,
                 links * r);
    return links * r;
}

double gq_sanity_flow_capacity(const gq_topo *t, const gq_flow *f, char *why, size_t n)
{
    if (why && n)
        why[0] = 0;
    if (!t || !f)
        return 0;
    bool sh = f->src.kind == GQ_EP_HOST, dh = f->dst.kind == GQ_EP_HOST;
    if (sh && dh)
        return 0;
    if (sh)
        return host_path(t, f->dst.index, why, n);
    if (dh)
        return host_path(t, f->src.index, why, n);
    int a = f->src.index, b = f->dst.index;
    if (!gpu_ok(t, a) || !gpu_ok(t, b) || a == b)
        return 0; /* a local copy: memory bandwidth is not known */
    if (f->method == GQ_METHOD_STAGED || f->method == GQ_METHOD_DRIVER_STAGED) {
        char wa[160] = "", wb[160] = "";
        double ca = host_path(t, a, wa, sizeof wa), cb = host_path(t, b, wb, sizeof wb);
        double c = ca;
        const char *w = wa;
        if (cb > 0 && (c <= 0 || cb < c)) {
            c = cb;
            w = wb;
        }
        if (c > 0 && why && n)
            snprintf(why, n, "host-staged through %s", w);
        return c;
    }
    if (t->nvlinks[a][b] > 0)
        return nvlink_pair(t, a, b, why, n);
    return pcie_pair(t, a, b, why, n);
}

/* Bound of host flows of one direction: each PCIe node carries at most its
 * own upstream link and at most what its children carry. */
static double tree_bound(const gq_topo *t, const bool *gpu_used, char *why, size_t n)
{
    static const int maxn = GQ_MAX_PCI_NODES;
    double load[GQ_MAX_PCI_NODES];
    int depth[GQ_MAX_PCI_NODES];
    bool bound_here[GQ_MAX_PCI_NODES];
    int np = t->npci < maxn ? t->npci : maxn;
    double total = 0;
    bool any = false;
    char first_why[200] = "";
    for (int k = 0; k < np; k++) {
        load[k] = 0;
        bound_here[k] = false;
        depth[k] = 0;
        for (int p = parent_of(t, k); p >= 0 && depth[k] < maxn; p = parent_of(t, p))
            depth[k]++;
    }
    for (int g = 0; g < t->ngpu && g < GQ_MAX_GPUS; g++) {
        if (!gpu_used[g])
            continue;
        any = true;
        char w[160] = "";
        double c = gpu_link(t, g, w, sizeof w);
        double leaf = c > 0 ? c : INF;
        int k = pci_of_gpu(t, g);
        if (k < 0) {
            total += leaf;
            if (c > 0 && !first_why[0])
                snprintf(first_why, sizeof first_why, "%s", w);
            continue;
        }
        load[k] += leaf;
    }
    if (!any)
        return 0;
    /* deepest first, so children are final before their parent */
    for (int d = maxn - 1; d >= 0; d--)
        for (int k = 0; k < np; k++) {
            if (depth[k] != d || load[k] <= 0)
                continue;
            double l = t->pci[k].link_gbps;
            if (l > 0 && l < load[k]) {
                load[k] = l;
                bound_here[k] = true;
            }
            int p = parent_of(t, k);
            if (p >= 0)
                load[p] += load[k];
            else
                total += load[k];
        }
    if (isinf(total))
        return 0;
    if (why && n) {
        /* name the highest binding link */
        int best = -1;
        for (int k = 0; k < np; k++)
            if (bound_here[k] && (best < 0 || depth[k] < depth[best]))
                best = k;
        if (best >= 0) {
            char name[96];
            pci_name(t, best, name, sizeof name);
            snprintf(why, n, "%s, %.1f GB/s", name, t->pci[best].link_gbps);
        } else if (first_why[0]) {
            snprintf(why, n, "%s", first_why);
        } else {
            snprintf(why, n, "the PCIe links of the GPUs");
        }
    }
    return total;
}

static void append(char *why, size_t n, const char *part)
{
    if (!why || !n || !part[0])
        return;
    size_t l = strlen(why);
    if (l + 3 < n)
        snprintf(why + l, n - l, "%s%s", l ? "; " : "", part);
}

double gq_sanity_group_capacity(const gq_topo *t, const gq_flow *flows, int nf, char *why, size_t nwhy)
{
    if (why && nwhy)
        why[0] = 0;
    if (!t || !flows || nf <= 0)
        return 0;
    bool used[2][GQ_MAX_GPUS];
    memset(used, 0, sizeof used);
    bool has[2] = {false, false};
    double total = 0;
    for (int i = 0; i < nf; i++) {
        const gq_flow *f = &flows[i];
        bool sh = f->src.kind == GQ_EP_HOST, dh = f->dst.kind == GQ_EP_HOST;
        if (sh != dh) {
            int d = sh ? 0 : 1;
            int g = sh ? f->dst.index : f->src.index;
            if (!gpu_ok(t, g))
                return 0;
            used[d][g] = true;
            has[d] = true;
            continue;
        }
        char w[200];
        double c = gq_sanity_flow_capacity(t, f, w, sizeof w);
        if (c <= 0)
            return 0;
        total += c;
        if (i == 0 || nf <= 4)
            append(why, nwhy, w);
    }
    static const char *dname[2] = {"h2d", "d2h"};
    for (int d = 0; d < 2; d++) {
        if (!has[d])
            continue;
        char w[200], part[240];
        double c = tree_bound(t, used[d], w, sizeof w);
        if (c <= 0)
            return 0;
        total += c;
        snprintf(part, sizeof part, "%s: %s", dname[d], w);
        append(why, nwhy, part);
    }
    return total;
}

static bool record_flow(const gq_record *r, gq_flow *f)
{
    memset(f, 0, sizeof *f);
    f->src = r->src;
    f->dst = r->dst;
    f->method = r->method;
    f->exec_gpu = r->exec_gpu;
    f->bytes = r->bytes;
    if (r->src.kind == GQ_EP_GPU && r->src.index < 0)
        return false;
    if (r->dst.kind == GQ_EP_GPU && r->dst.index < 0)
        return false;
    return true;
}

double gq_sanity_record_capacity(const gq_topo *t, const gq_recordset *rs, const gq_record *r, char *why,
                                 size_t n)
{
    if (why && n)
        why[0] = 0;
    if (!t || !r || r->is_latency)
        return 0;
    if (r->capacity_gbps > 0)
        return r->capacity_gbps;
    if (!r->aggregate && !r->sum) {
        gq_flow f;
        if (!record_flow(r, &f))
            return 0;
        return gq_sanity_flow_capacity(t, &f, why, n);
    }
    unsigned dirs = r->dirs ? r->dirs : (1u << r->direction);
    bool host_only = !(dirs & ((1u << GQ_DIR_P2P) | (1u << GQ_DIR_LOCAL)));
    gq_flow fl[2 * GQ_MAX_GPUS];
    int nf = 0;
    if (host_only && r->ngpus > 0) {
        for (int d = GQ_DIR_H2D; d <= GQ_DIR_D2H; d++) {
            if (!(dirs & (1u << d)))
                continue;
            for (int i = 0; i < r->ngpus && nf < 2 * GQ_MAX_GPUS; i++) {
                gq_flow *f = &fl[nf++];
                memset(f, 0, sizeof *f);
                gq_endpoint host = {GQ_EP_HOST, 0}, gpu = {GQ_EP_GPU, r->gpus[i]};
                f->src = d == GQ_DIR_H2D ? host : gpu;
                f->dst = d == GQ_DIR_H2D ? gpu : host;
                f->method = r->method;
                f->exec_gpu = r->gpus[i];
            }
        }
        return gq_sanity_group_capacity(t, fl, nf, why, n);
    }
    if (!rs)
        return 0;
    for (int i = 0; i < rs->n && nf < 2 * GQ_MAX_GPUS; i++) {
        const gq_record *m = &rs->v[i];
        if (m == r || m->group != r->group || m->aggregate || m->sum || m->is_latency)
            continue;
        if (strcmp(m->test, r->test) != 0)
            continue;
        if (!(dirs & (1u << m->direction)))
            continue;
        if (!record_flow(m, &fl[nf]))
            return 0;
        nf++;
    }
    if (nf == 0)
        return 0;
    return gq_sanity_group_capacity(t, fl, nf, why, n);
}

bool gq_sanity_apply(gq_record *r, double capacity, const char *why)
{
    if (!r || r->is_latency || capacity <= 0)
        return false;
    if (r->capacity_gbps <= 0)
        r->capacity_gbps = capacity;
    if (r->value.n <= 0 || !(r->value.median > capacity * (1.0 + GQ_SANITY_TOL)))
        return false;
    r->flags |= GQ_FLAG_IMPOSSIBLE;
    r->valid = false;
    char msg[sizeof r->error];
    snprintf(msg, sizeof msg, "impossible: %.2f GB/s is above the %.1f GB/s capacity of its path (%s)",
             r->value.median, capacity, why && why[0] ? why : "theoretical link rate");
    if (!r->error[0]) {
        snprintf(r->error, sizeof r->error, "%s", msg);
    } else {
        size_t l = strlen(r->error);
        snprintf(r->error + l, sizeof r->error - l, "; %s", msg);
    }
    return true;
}

int gq_sanity_check_all(const gq_topo *t, gq_recordset *rs)
{
    int flagged = 0;
    if (!t || !rs)
        return 0;
    for (int i = 0; i < rs->n; i++) {
        gq_record *r = &rs->v[i];
        if (r->is_latency || (r->flags & GQ_FLAG_IMPOSSIBLE))
            continue;
        char why[240];
        double c = gq_sanity_record_capacity(t, rs, r, why, sizeof why);
        if (gq_sanity_apply(r, c, why))
            flagged++;
    }
    return flagged;
}

bool gq_sanity_plausible(const gq_record *r, char *why, size_t n)
{
    double v = r->value.median;
    const char *unit = r->is_latency ? "ns" : "GB/s";
    if (!isfinite(v))
        snprintf(why, n, "is %s", isnan(v) ? "not a number" : "infinite");
    else if (v <= 0)
        snprintf(why, n, "%g %s is not above 0", v, unit);
    else if (!r->is_latency && v > GQ_SANITY_MAX_GBPS)
        snprintf(why, n, "%g GB/s is above %g GB/s", v, GQ_SANITY_MAX_GBPS);
    else if (!r->is_latency && r->capacity_gbps > 0 && v > 1.5 * r->capacity_gbps)
        snprintf(why, n, "%g GB/s is above 1.5x the path's capacity of %g GB/s", v, r->capacity_gbps);
    else
        return true;
    return false;
}
