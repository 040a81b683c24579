/* The sim backend's discover hook: what a real discovery would read from the
 * simulated machine (names, UUIDs, PCIe gen/width, NUMA, the PCIe tree,
 * NVLinks, P2P status). Hidden capacities are never reported.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/sim/sim_internal.h"
#include "core/units.h"

int gq_sim_gen_from_gts(double gts)
{
    static const double g[] = {2.5, 5, 8, 16, 32, 64};
    for (int i = 0; i < 6; i++)
        if (gts == g[i])
            return i + 1;
    return -1;
}

static int root_of(const gq_sim_machine *m, int n)
{
    for (int guard = 0; guard <= m->nnode && m->nodes[n].parent_link >= 0; guard++)
        n = m->links[m->nodes[n].parent_link].b;
    return n;
}

static int depth_of(const gq_sim_machine *m, int n)
{
    int d = 0;
    for (int guard = 0; guard <= m->nnode && m->nodes[n].parent_link >= 0; guard++, d++)
        n = m->links[m->nodes[n].parent_link].b;
    return d;
}

static int node_numa(const gq_sim_machine *m, int n)
{
    int r = root_of(m, n);
    if (m->nodes[r].kind == GQ_SIM_SOCKET && m->nodes[r].numa >= 0)
        return m->nodes[r].numa;
    int mem = gq_sim_nearest_memory(m, n, -1);
    return mem >= 0 ? m->nodes[mem].numa : 0;
}

static gq_link_level tree_level(const gq_sim_machine *m, int a, int b)
{
    int chain[256], nch = 0;
    for (int n = a; n >= 0 && nch < 256;
         n = m->nodes[n].parent_link >= 0 ? m->links[m->nodes[n].parent_link].b : -1)
        chain[nch++] = n;
    int bridges_b = 0;
    for (int n = b, guard = 0; n >= 0 && guard < 256; guard++) {
        for (int k = 1; k < nch; k++)
            if (chain[k] == n) {
                if (m->nodes[n].kind == GQ_SIM_SOCKET)
                    return GQ_LEVEL_PHB;
                /* bridges strictly below the common ancestor on a's side */
                int bridges_a = k - 1;
                return (bridges_a + bridges_b) == 0 ? GQ_LEVEL_PIX : GQ_LEVEL_PXB;
            }
        if (n != b)
            bridges_b++;
        n = m->nodes[n].parent_link >= 0 ? m->links[m->nodes[n].parent_link].b : -1;
    }
    int ra = root_of(m, a), rb = root_of(m, b);
    return node_numa(m, ra) == node_numa(m, rb) ? GQ_LEVEL_NODE : GQ_LEVEL_SYS;
}

static void cpulist_for(const gq_sim_machine *m, int numa, int numa_count, char *buf, size_t n)
{
    buf[0] = 0;
    if (m->cores <= 0)
        return;
    if (m->vm || numa < 0 || numa_count <= 1) {
        snprintf(buf, n, "0-%d", m->cores - 1);
        return;
    }
    int per = m->cores / numa_count;
    if (per <= 0)
        return;
    snprintf(buf, n, "%d-%d", numa * per, numa * per + per - 1);
}

/* One GPU's identity, PCIe link, NUMA placement and NVLink count. */
static void discover_gpu(const sim_priv *s, int g, gq_gpu_info *gi)
{
    const gq_sim_machine *m = s->m;
    const gq_sim_gpu *sg = &m->gpus[g];
    const gq_sim_node *nd = &m->nodes[sg->node];
    gi->index = g;
    snprintf(gi->name, sizeof gi->name, "%s", sg->model);
    uint64_t h = gq_sim_hash(gq_sim_hash(0x5157u, (uint64_t)g),
                             (uint64_t)strlen(m->name) * 131u + (uint8_t)m->name[0]);
    for (const char *c = m->name; *c; c++)
        h = gq_sim_hash(h, (uint8_t)*c);
    uint64_t h2 = gq_sim_hash(h, 7);
    snprintf(gi->uuid, sizeof gi->uuid, "GPU-%08x-%04x-%04x-%04x-%012llx", (unsigned)(h >> 32),
             (unsigned)(h >> 16) & 0xffffu, (unsigned)h & 0xffffu, (unsigned)(h2 >> 48),
             (unsigned long long)(h2 & 0xffffffffffffull));
    /* a simulated board has no serial, VBIOS or modes to read */
    snprintf(gi->serial, sizeof gi->serial, "not supported");
    snprintf(gi->vbios, sizeof gi->vbios, "not supported");
    gi->ecc_mode = gi->mig_mode = gi->persistence_mode = GQ_MODE_UNSUPPORTED;
    gi->mem_bytes = sg->mem;
    if (sg->bus[0])
        snprintf(gi->pci_bus_id, sizeof gi->pci_bus_id, "%s", sg->bus);
    else
        snprintf(gi->pci_bus_id, sizeof gi->pci_bus_id, "0000:%02x:00.0", (unsigned)(g + 1) & 0xffu);
    gi->cc_major = sg->cc_major;
    gi->cc_minor = sg->cc_minor;
    gi->sm_count = sg->sms;
    const gq_sim_link *up = &m->links[nd->parent_link];
    if (up->gts > 0) {
        gi->pcie_gen_cur = gq_sim_gen_from_gts(up->gts);
        gi->pcie_width_cur = up->width;
        gi->pcie_gen_max = sg->max_gts > 0 ? gq_sim_gen_from_gts(sg->max_gts) : gi->pcie_gen_cur;
        gi->pcie_width_max = sg->max_width > 0 ? sg->max_width : gi->pcie_width_cur;
        gi->pcie_gbps = gq_pcie_gbps(gi->pcie_gen_cur, gi->pcie_width_cur);
    }
    int local = node_numa(m, sg->node);
    gi->numa_node = m->vm ? m->vm_gpu_numa : local;
    cpulist_for(m, m->vm ? -1 : local, s->numa_count, gi->cpulist, sizeof gi->cpulist);
    gi->power_limit_w = sg->power_w;
    gi->nvlinks_total = 0;
    gi->nvswitch_links = 0;
    for (int k = m->adj_off[sg->node]; k < m->adj_off[sg->node + 1]; k++) {
        const gq_sim_link *L = &m->links[m->adj[k]];
        if (L->kind == GQ_SIM_LINK_NVLINK) {
            gi->nvlinks_total += L->nvl;
            int far = L->a == sg->node ? L->b : L->a;
            if (m->nodes[far].kind == GQ_SIM_NVSWITCH)
                gi->nvswitch_links += L->nvl;
            if (L->nvl_rate > 0)
                gi->nvlink_gbps_per_link = L->nvl_rate / 1e9;
        }
    }
}

/* The GPU-pair matrices: NVLinks, levels, P2P status. */
static void discover_pairs(const gq_sim_machine *m, gq_topo *t)
{
    for (int i = 0; i < m->ngpu; i++)
        for (int j = 0; j < m->ngpu; j++) {
            int nv = gq_sim_nvlinks(m, i, j);
            t->nvlinks[i][j] = nv;
            if (i == j) {
                t->level[i][j] = t->pci_level[i][j] = GQ_LEVEL_X;
                continue;
            }
            gq_p2p_status st = gq_sim_pair_p2p(m, i, j);
            t->p2p_nvml[i][j] = (unsigned char)st;
            t->p2p_cuda[i][j] = st == GQ_P2P_OK ? 1 : 0;
            gq_link_level pl = m->vm ? GQ_LEVEL_PHB : tree_level(m, gnode(m, i), gnode(m, j));
            t->pci_level[i][j] = (unsigned char)pl;
            t->level[i][j] = (unsigned char)(nv > 0 ? GQ_LEVEL_NV : pl);
        }
}

/* Driver, host name, CPUs and the VM flag. */
static void discover_host(const sim_priv *s, gq_topo *t)
{
    const gq_sim_machine *m = s->m;
    snprintf(t->driver_version, sizeof t->driver_version, "sim");
    t->cuda_driver_version = t->cuda_runtime_version = -1;
    t->nvml_loaded = true;
    snprintf(t->hostname, sizeof t->hostname, "sim-%.58s", m->name);
    snprintf(t->cpu_model, sizeof t->cpu_model, "%s", m->cpu_model);
    t->sockets = m->sockets;
    t->cores = m->cores;
    t->cpus = m->cores;
    t->numa_nodes = s->numa_count > 0 ? s->numa_count : 1;
    t->is_vm = m->vm;
    snprintf(t->hypervisor, sizeof t->hypervisor, "%s", m->vm ? m->hypervisor : "");
}

/* A VM's PCIe tree: one host bridge with every GPU under it. */
static void discover_pci_vm(const gq_sim_machine *m, gq_topo *t)
{
    gq_pci_node *hb = &t->pci[t->npci++];
    *hb = (gq_pci_node){.kind = GQ_PCI_HOSTBRIDGE, .parent = -1, .gpu = -1, .numa_node = m->vm_gpu_numa};
    snprintf(hb->bus_id, sizeof hb->bus_id, "0000:00");
    snprintf(hb->label, sizeof hb->label, "HostBridge");
    for (int g = 0; g < m->ngpu && t->npci < GQ_MAX_PCI_NODES; g++) {
        gq_pci_node *pn = &t->pci[t->npci++];
        *pn = (gq_pci_node){.kind = GQ_PCI_GPU,
                            .parent = 0,
                            .gpu = g,
                            .numa_node = m->vm_gpu_numa,
                            .link_gbps = t->gpu[g].pcie_gbps};
        snprintf(pn->bus_id, sizeof pn->bus_id, "%s", t->gpu[g].pci_bus_id);
        snprintf(pn->label, sizeof pn->label, "GPU %d", g);
    }
}

/* The tree node of machine node n, whose parent is already at pci_of[]. */
static void fill_pci_node(const gq_sim_machine *m, const gq_topo *t, int n, const int *pci_of,
                          gq_pci_node *pn)
{
    const gq_sim_node *nd = &m->nodes[n];
    memset(pn, 0, sizeof *pn);
    pn->gpu = -1;
    pn->parent = nd->parent_link >= 0 ? pci_of[m->links[nd->parent_link].b] : -1;
    pn->numa_node = node_numa(m, n);
    if (nd->parent_link >= 0) {
        const gq_sim_link *L = &m->links[nd->parent_link];
        pn->link_gbps = L->gts > 0 ? gq_pcie_gbps(gq_sim_gen_from_gts(L->gts), L->width) : 0;
    }
    switch (nd->kind) {
    case GQ_SIM_SOCKET:
        pn->kind = GQ_PCI_HOSTBRIDGE;
        snprintf(pn->label, sizeof pn->label, "HostBridge %.40s", nd->name);
        break;
    case GQ_SIM_GPU:
        pn->kind = GQ_PCI_GPU;
        pn->gpu = nd->gpu;
        snprintf(pn->label, sizeof pn->label, "GPU %d", nd->gpu);
        break;
    default:
        pn->kind = GQ_PCI_BRIDGE;
        snprintf(pn->label, sizeof pn->label, "PCIBridge %.40s", nd->name);
        /* what sysfs shows of a switch's uplink: the trained link and the most it can do */
        if (nd->parent_link >= 0 && m->links[nd->parent_link].gts > 0) {
            const gq_sim_link *L = &m->links[nd->parent_link];
            pn->link_gen = gq_sim_gen_from_gts(L->gts);
            pn->link_width = L->width;
            pn->link_gen_max = L->max_gts > 0 ? gq_sim_gen_from_gts(L->max_gts) : pn->link_gen;
            pn->link_width_max = L->max_width > 0 ? L->max_width : L->width;
        }
        break;
    }
    const char *bus = nd->kind == GQ_SIM_GPU ? t->gpu[nd->gpu].pci_bus_id : nd->bus;
    snprintf(pn->bus_id, sizeof pn->bus_id, "%s", bus);
}

/* The PCIe tree as lspci/hwloc would show it: parents before children. */
static int discover_pci_tree(const gq_sim_machine *m, gq_topo *t, gq_err *err)
{
    int *pci_of = malloc(sizeof(int) * (size_t)m->nnode);
    if (!pci_of)
        return gq_err_set(err, GQ_E_NOMEM, "out of memory");
    int maxd = 0;
    for (int n = 0; n < m->nnode; n++) {
        pci_of[n] = -1;
        int d = depth_of(m, n);
        if (d > maxd)
            maxd = d;
    }
    for (int d = 0; d <= maxd; d++)
        for (int n = 0; n < m->nnode; n++) {
            const gq_sim_node *nd = &m->nodes[n];
            if (nd->kind == GQ_SIM_MEMORY || nd->kind == GQ_SIM_NVSWITCH || depth_of(m, n) != d)
                continue;
            if (t->npci == GQ_MAX_PCI_NODES) {
                gq_topo_warn(t, "sim: the PCIe tree has more than %d nodes; the rest is not shown",
                             GQ_MAX_PCI_NODES);
                goto done;
            }
            fill_pci_node(m, t, n, pci_of, &t->pci[t->npci]);
            pci_of[n] = t->npci++;
        }
done:
    free(pci_of);
    return GQ_OK;
}

int gq_sim_be_discover(gq_backend *be, gq_topo *t, gq_err *err)
{
    (void)err;
    sim_priv *s = P(be);
    const gq_sim_machine *m = s->m;
    t->simulated = true;
    snprintf(t->source, sizeof t->source, "sim:%.59s", m->name);
    t->ngpu = m->ngpu;
    for (int g = 0; g < m->ngpu; g++)
        discover_gpu(s, g, &t->gpu[g]);
    discover_pairs(m, t);
    discover_host(s, t);
    t->npci = 0;
    if (m->vm) {
        discover_pci_vm(m, t);
        return GQ_OK;
    }
    return discover_pci_tree(m, t, err);
}
