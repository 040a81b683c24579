/* Bottleneck explanations against the topology discovery found
 * (docs/method-domains.md, "Explained by the tree, or by measurement only"):
 * the PCIe node or NUMA node a host budget matches, and the switch or root
 * port uplinks, or the CPU interconnect, every pair of a P2P budget crosses. */
#include "analysis/bottlenecks_internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ---- explanations ----------------------------------------------------------- */

static int pci_of_gpu(const gq_topo *t, int g)
{
    for (int i = 0; i < t->npci && i < GQ_MAX_PCI_NODES; i++)
        if (t->pci[i].kind == GQ_PCI_GPU && t->pci[i].gpu == g)
            return i;
    return -1;
}

static bool is_ancestor(const gq_topo *t, int anc, int node)
{
    for (int p = node, guard = 0; p >= 0 && guard < GQ_MAX_PCI_NODES; p = t->pci[p].parent, guard++)
        if (p == anc)
            return true;
    return false;
}

/* GPUs of `univ` below tree node a. */
static mask_t under(const gq_topo *t, int a, mask_t univ)
{
    mask_t m = 0;
    for (int g = 0; g < 64; g++)
        if (univ & bit(g)) {
            int p = pci_of_gpu(t, g);
            if (p >= 0 && is_ancestor(t, a, p))
                m |= bit(g);
        }
    return m;
}

gq_bn_explain gq_bn_pci_kind(const gq_topo *t, int node)
{
    const gq_pci_node *nd = &t->pci[node];
    if (nd->kind == GQ_PCI_HOSTBRIDGE)
        return GQ_EXPLAIN_HOST_BRIDGE;
    int children = 0;
    for (int i = 0; i < t->npci && i < GQ_MAX_PCI_NODES; i++)
        children += t->pci[i].parent == node;
    int par = nd->parent;
    if (children >= 2 || (par >= 0 && t->pci[par].kind != GQ_PCI_HOSTBRIDGE))
        return GQ_EXPLAIN_PCIE_SWITCH;
    return GQ_EXPLAIN_ROOT_PORT;
}

const char *gq_bn_pci_kind_text(gq_bn_explain e)
{
    switch (e) {
    case GQ_EXPLAIN_HOST_BRIDGE: return "host bridge";
    case GQ_EXPLAIN_ROOT_PORT: return "root port";
    case GQ_EXPLAIN_PCIE_SWITCH: return "PCIe switch";
    default: return "PCIe node";
    }
}

/* Can a link whose theoretical rate is link_gbps per direction be the limit
 * that held flows to cap_gbps together? Only when the figure is what such a
 * link delivers: at least GQ_BN_LINK_EFF_MIN of its rate (bulk copies over
 * PCIe get 75-90 % of it: 25.8 of 31.5 GB/s on the RTX 4090 server's Gen4
 * uplinks, 55 of 63 on Gen5), and not above it. A link of unknown rate
 * (0) cannot be checked and is not refused. */
bool gq_bn_link_accounts(double link_gbps, double cap_gbps)
{
    if (!(link_gbps > 0) || !isfinite(cap_gbps))
        return true;
    return cap_gbps >= GQ_BN_LINK_EFF_MIN * link_gbps && cap_gbps <= link_gbps * GQ_BN_LINK_OVER_MAX;
}

static const char *pci_name(const gq_topo *t, int node)
{
    return t->pci[node].bus_id[0] ? t->pci[node].bus_id : t->pci[node].label;
}

static void set_text(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void set_text(char *buf, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, n, fmt, ap);
    va_end(ap);
}

void gq_bn_explain_host(gq_bottleneck *bn, const gq_topo *t, uint64_t univ, bool one_numa)
{
    char set[160];
    gq_domains_set_str(bn->gpus, bn->ngpus, set, sizeof set);
    mask_t s = mask_of(bn->gpus, bn->ngpus);
    int best = -1, refused = -1; /* refused: the narrowest node that groups them but cannot account */
    if (t && t->npci > 0) {
        int first = pci_of_gpu(t, bn->gpus[0]);
        int lca = -1;
        for (int a = first >= 0 ? t->pci[first].parent : -1, guard = 0; a >= 0 && guard < GQ_MAX_PCI_NODES;
             a = t->pci[a].parent, guard++)
            if ((under(t, a, s) & s) == s) {
                lca = a;
                break;
            }
        if (lca >= 0 && under(t, lca, univ) == s) {
            /* Of the nodes from the LCA up whose GPUs are still exactly the set,
             * the one with the narrowest known uplink is the likeliest limit,
             * among those whose uplink can account for the budget. */
            for (int a = lca; a >= 0 && under(t, a, univ) == s; a = t->pci[a].parent) {
                double l = t->pci[a].link_gbps;
                if (!gq_bn_link_accounts(l, bn->capacity_gbps)) {
                    if (refused < 0 || l < t->pci[refused].link_gbps)
                        refused = a;
                    continue;
                }
                if (best < 0 || (l > 0 && (t->pci[best].link_gbps <= 0 || l < t->pci[best].link_gbps)))
                    best = a;
            }
        }
    }
    if (best >= 0) {
        const gq_pci_node *nd = &t->pci[best];
        bn->explained = gq_bn_pci_kind(t, best);
        snprintf(bn->node, sizeof bn->node, "%s", nd->bus_id[0] ? nd->bus_id : nd->label);
        bn->link_gbps = nd->link_gbps;
        const char *what = gq_bn_pci_kind_text(bn->explained);
        if (nd->link_gbps > 0)
            set_text(bn->explanation, sizeof bn->explanation,
                     "GPUs %s sit behind one %s (%s) whose uplink carries %.1f GB/s per direction; they "
                     "share %.1f GB/s %s",
                     set, what, bn->node, nd->link_gbps, bn->capacity_gbps, gq_direction_name(bn->direction));
        else
            set_text(bn->explanation, sizeof bn->explanation,
                     "GPUs %s sit behind one %s (%s); they share %.1f GB/s %s", set, what, bn->node,
                     bn->capacity_gbps, gq_direction_name(bn->direction));
        return;
    }
    if (t && t->numa_nodes > 1) {
        int node = -2;
        for (int i = 0; i < bn->ngpus; i++) {
            int nn = bn->gpus[i] < t->ngpu ? t->gpu[bn->gpus[i]].numa_node : -1;
            if (nn < 0 || (node != -2 && nn != node)) {
                node = -1;
                break;
            }
            node = nn;
        }
        if (node >= 0) {
            mask_t same = 0;
            for (int g = 0; g < t->ngpu && g < 64; g++)
                if ((univ & bit(g)) && t->gpu[g].numa_node == node)
                    same |= bit(g);
            if (same == s) {
                bn->explained = GQ_EXPLAIN_NUMA_NODE;
                snprintf(bn->node, sizeof bn->node, "numa:%d", node);
                set_text(bn->explanation, sizeof bn->explanation,
                         "GPUs %s are the GPUs of NUMA node %d (one socket); they share %.1f GB/s %s", set,
                         node, bn->capacity_gbps, gq_direction_name(bn->direction));
                return;
            }
        }
    }
    bn->explained = GQ_EXPLAIN_MEASUREMENT_ONLY;
    if (refused >= 0) {
        set_text(bn->explanation, sizeof bn->explanation,
                 "GPUs %s share %.1f GB/s %s; the %s (%s) that groups them has an uplink of %.1f GB/s per "
                 "direction, which cannot account for that figure: inferred from measurement only",
                 set, bn->capacity_gbps, gq_direction_name(bn->direction),
                 gq_bn_pci_kind_text(gq_bn_pci_kind(t, refused)), pci_name(t, refused),
                 t->pci[refused].link_gbps);
        return;
    }
    set_text(bn->explanation, sizeof bn->explanation,
             "GPUs %s share %.1f GB/s %s, but no PCIe switch, root port or NUMA node in the topology groups "
             "exactly "
             "them: inferred from measurement only%s",
             set, bn->capacity_gbps, gq_direction_name(bn->direction),
             one_numa
                 ? (t && t->is_vm ? " (the VM shows one NUMA node)" : " (the platform shows one NUMA node)")
                 : "");
}

/* The PCIe bridge (not a host bridge) whose uplink every flow from `from`
 * to `to` crosses: every GPU of `from` below it and none of `to`; of those,
 * the one with the narrowest known uplink (else the lowest), among those
 * whose uplink can account for cap (NAN: any). -1 when none. */
static int shared_uplink(const gq_topo *t, mask_t from, mask_t to, double cap)
{
    int first = -1;
    for (int g = 0; g < 64 && first < 0; g++)
        if (from & bit(g))
            first = pci_of_gpu(t, g);
    if (first < 0)
        return -1;
    int best = -1;
    for (int a = t->pci[first].parent, guard = 0; a >= 0 && guard < GQ_MAX_PCI_NODES;
         a = t->pci[a].parent, guard++) {
        if (t->pci[a].kind == GQ_PCI_HOSTBRIDGE)
            break;
        mask_t u = under(t, a, from | to);
        if ((u & from) != from || (u & to) || !gq_bn_link_accounts(t->pci[a].link_gbps, cap))
            continue;
        if (best < 0 || (t->pci[a].link_gbps > 0 &&
                         (t->pci[best].link_gbps <= 0 || t->pci[a].link_gbps < t->pci[best].link_gbps)))
            best = a;
    }
    return best;
}

/* Where the pairs of run inside a P2P budget go: whether every one crosses sockets (all_sys) or
 * NUMA nodes (all_numa, the first two nodes na < nb), and the GPUs that send (src) and receive (dst). */
typedef struct p2p_path {
    bool all_sys, all_numa;
    int na, nb;
    mask_t src, dst;
} p2p_path;

static void p2p_path_of(const gq_bottleneck *bn, const gq_bn_obs *run, const gq_topo *t, p2p_path *pp)
{
    /* only the run's pairs inside the budget: pairs that ran free beside it
     * (bottlenecks_p2p.c) are not part of what is explained */
    mask_t in = mask_of(bn->gpus, bn->ngpus);
    gq_bn_obs own = *run;
    own.npairs = 0;
    for (int p = 0; p < run->npairs; p++)
        if ((in & bit(run->pair_src[p])) && (in & bit(run->pair_dst[p]))) {
            own.pair_src[own.npairs] = run->pair_src[p];
            own.pair_dst[own.npairs++] = run->pair_dst[p];
        }
    const gq_bn_obs *ob = &own;
    bool all_sys = t && ob->npairs > 0, all_numa = t && t->numa_nodes > 1 && ob->npairs > 0;
    int na = -1, nb = -1;
    mask_t src = 0, dst = 0;
    for (int p = 0; t && p < ob->npairs; p++) {
        int a = ob->pair_src[p], c = ob->pair_dst[p];
        if (a >= t->ngpu || c >= t->ngpu) {
            all_sys = all_numa = false;
            break;
        }
        src |= bit(a);
        dst |= bit(c);
        if (t->level[a][c] != GQ_LEVEL_SYS)
            all_sys = false;
        int x = t->gpu[a].numa_node, y = t->gpu[c].numa_node;
        if (x < 0 || y < 0 || x == y)
            all_numa = false;
        else if (na < 0) {
            na = x < y ? x : y;
            nb = x < y ? y : x;
        }
    }
    *pp = (p2p_path){.all_sys = all_sys, .all_numa = all_numa, .na = na, .nb = nb, .src = src, .dst = dst};
}

void gq_bn_explain_p2p(gq_bottleneck *bn, const gq_bn_obs *run, const gq_topo *t)
{
    char set[160];
    gq_domains_set_str(bn->gpus, bn->ngpus, set, sizeof set);
    p2p_path pp;
    p2p_path_of(bn, run, t, &pp);
    bool all_sys = pp.all_sys, all_numa = pp.all_numa;
    int na = pp.na, nb = pp.nb;
    mask_t src = pp.src, dst = pp.dst;
    const char *kind = bn->cross_domain ? "pairs crossing between domains" : "concurrent pairs";
    /* the devices every pair crosses: a switch or root port's uplink on the
     * sending side, on the receiving side, or both */
    int up = -1, down = -1, up_any = -1, down_any = -1;
    if (t && t->npci > 0 && !t->is_vm && src && dst && !(src & dst)) {
        up = shared_uplink(t, src, dst, bn->capacity_gbps);
        down = shared_uplink(t, dst, src, bn->capacity_gbps);
        /* the same devices regardless of their rate: named when their uplinks
         * carry too much to account for the budget */
        up_any = shared_uplink(t, src, dst, NAN);
        down_any = shared_uplink(t, dst, src, NAN);
    }
    char beyond[200] = "";
    if (up < 0 && down < 0 && (up_any >= 0 || down_any >= 0)) {
        int k = up_any >= 0 ? up_any : down_any;
        if (down_any >= 0 && t->pci[down_any].link_gbps < t->pci[k].link_gbps)
            k = down_any;
        snprintf(beyond, sizeof beyond,
                 " (the narrowest uplink they cross, %s %s at %.1f GB/s, cannot account for %.1f GB/s)",
                 gq_bn_pci_kind_text(gq_bn_pci_kind(t, k)), pci_name(t, k), t->pci[k].link_gbps,
                 bn->capacity_gbps);
    }
    if (up >= 0 || down >= 0) {
        int k = up >= 0 ? up : down;
        if (down >= 0 && t->pci[down].link_gbps > 0 &&
            (t->pci[k].link_gbps <= 0 || t->pci[down].link_gbps < t->pci[k].link_gbps))
            k = down;
        bn->explained = gq_bn_pci_kind(t, k);
        snprintf(bn->node, sizeof bn->node, "%s", pci_name(t, k));
        bn->link_gbps = t->pci[k].link_gbps;
        char via[160];
        if (up >= 0 && down >= 0)
            snprintf(via, sizeof via, "the uplinks of %s %s and %s %s",
                     gq_bn_pci_kind_text(gq_bn_pci_kind(t, up)), pci_name(t, up),
                     gq_bn_pci_kind_text(gq_bn_pci_kind(t, down)), pci_name(t, down));
        else
            snprintf(via, sizeof via, "the uplink of %s %s", gq_bn_pci_kind_text(gq_bn_pci_kind(t, k)),
                     pci_name(t, k));
        set_text(bn->explanation, sizeof bn->explanation,
                 "%s (GPUs %s) all cross %s%s; together they get %.1f GB/s against %.1f GB/s one pair at a "
                 "time",
                 kind, set, via, all_numa ? " and the CPU interconnect" : "", bn->capacity_gbps,
                 bn->sum_alone_gbps);
        return;
    }
    if (all_numa || all_sys) {
        bn->explained = GQ_EXPLAIN_CPU_INTERCONNECT;
        if (na >= 0)
            snprintf(bn->node, sizeof bn->node, "numa:%d-numa:%d", na, nb);
        char inside[64] = "";
        if (bn->expected_gbps < bn->sum_alone_gbps * 0.999)
            snprintf(inside, sizeof inside, ", %.1f with the limits found among them", bn->expected_gbps);
        set_text(
            bn->explanation, sizeof bn->explanation,
            "%s (GPUs %s) cross the CPU interconnect between NUMA nodes, which no PCIe switch or root port "
            "explains%s: %.1f GB/s together against %.1f one pair at a time%s",
            kind, set, beyond, bn->capacity_gbps, bn->sum_alone_gbps, inside);
        return;
    }
    bn->explained = GQ_EXPLAIN_MEASUREMENT_ONLY;
    const char *why = !t         ? "no topology was given"
                      : t->is_vm ? "the VM shows one host bridge with every GPU under it"
                      : t->numa_nodes <= 1
                          ? "the platform shows one NUMA node, and no PCIe switch or root port "
                            "carries every pair"
                          : "no PCIe switch, root port or socket link carries every pair";
    set_text(bn->explanation, sizeof bn->explanation,
             "%s (GPUs %s) together get %.1f GB/s against %.1f GB/s one pair at a time; inferred from "
             "measurement only: %s%s",
             kind, set, bn->capacity_gbps, bn->sum_alone_gbps,
             beyond[0] ? "no device on their path can account for the figure" : why, beyond);
}
