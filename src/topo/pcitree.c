#include "topo/pcitree.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Parse a bus id as above into numbers. Returns false when malformed. */
static bool bus_id_parse(const char *in, unsigned *domain, unsigned *bus, unsigned *dev, unsigned *fn)
{
    unsigned d = 0, b = 0, s = 0, f = 0;
    int used = 0;
    if (!in || !*in)
        return false;
    for (const char *p = in; *p; p++)
        if (!isxdigit((unsigned char)*p) && *p != ':' && *p != '.')
            return false;
    /* "dddd:bb:ss.f" (NVML: 8-digit domain), "dddd:bb:ss", "bb:ss.f". */
    bool ok = sscanf(in, "%x:%x:%x.%x%n", &d, &b, &s, &f, &used) == 4 && !in[used];
    if (!ok) {
        d = f = 0;
        ok = sscanf(in, "%x:%x:%x%n", &d, &b, &s, &used) == 3 && !in[used];
    }
    if (!ok) {
        d = f = 0;
        ok = sscanf(in, "%x:%x.%x%n", &b, &s, &f, &used) == 3 && !in[used];
    }
    if (!ok || b > 0xff || s > 0x1f || f > 7 || d > 0xffffu)
        return false;
    *domain = d;
    *bus = b;
    *dev = s;
    *fn = f;
    return true;
}

bool gq_pci_bus_id_normalize(const char *in, char *out, size_t n)
{
    unsigned d, b, s, f;
    if (!bus_id_parse(in, &d, &b, &s, &f))
        return false;
    snprintf(out, n, "%04x:%02x:%02x.%x", d, b, s, f);
    return true;
}

int gq_pcie_gen_from_gts(double gts)
{
    static const double rate[] = {0, 2.5, 5.0, 8.0, 16.0, 32.0, 64.0};
    for (int g = 1; g <= 6; g++)
        if (gts > rate[g] * 0.95 && gts < rate[g] * 1.05)
            return g;
    return -1;
}

int gq_hwloc_load(hwloc_topology_t *out, const char *xml, gq_err *err)
{
    hwloc_topology_t topo = NULL;
    *out = NULL;
    if (hwloc_topology_init(&topo) != 0)
        return gq_err_set(err, GQ_E_FAIL, "hwloc: cannot initialise a topology");
    if (xml && hwloc_topology_set_xml(topo, xml) != 0) {
        hwloc_topology_destroy(topo);
        return gq_err_set(err, GQ_E_IO, "hwloc: cannot read XML topology '%s'", xml);
    }
    /* Important I/O only: GPUs, NICs, storage, and the bridges leading to them. */
    hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
    if (hwloc_topology_load(topo) != 0) {
        hwloc_topology_destroy(topo);
        return gq_err_set(err, GQ_E_FAIL, "hwloc: loading the topology failed%s%s", xml ? " from " : "",
                          xml ? xml : "");
    }
    *out = topo;
    return GQ_OK;
}

static const char *class_name(unsigned class_id)
{
    static const struct {
        unsigned id, mask;
        const char *name;
    } classes[] = {
        {.id = 0x0207, .mask = 0xffff, .name = "InfiniBand"},
        {.id = 0x0c06, .mask = 0xffff, .name = "InfiniBand"},
        {.id = 0x0200, .mask = 0xffff, .name = "Ethernet"},
        {.id = 0x0108, .mask = 0xffff, .name = "NVMe"},
        {.id = 0x0302, .mask = 0xffff, .name = "3D"},
        {.id = 0x0300, .mask = 0xffff, .name = "VGA"},
        {.id = 0x0680, .mask = 0xffff, .name = "Bridge"},
        {.id = 0x0100, .mask = 0xff00, .name = "Storage"},
        {.id = 0x0200, .mask = 0xff00, .name = "Network"},
        {.id = 0x0300, .mask = 0xff00, .name = "Display"},
        {.id = 0x1200, .mask = 0xff00, .name = "Accelerator"},
    };
    for (size_t i = 0; i < sizeof classes / sizeof classes[0]; i++)
        if ((class_id & classes[i].mask) == classes[i].id)
            return classes[i].name;
    return "PCI";
}

static int numa_of(hwloc_topology_t topo, hwloc_obj_t o)
{
    hwloc_obj_t a = hwloc_get_non_io_ancestor_obj(topo, o);
    /* Attached to the whole machine means the platform gave no locality
     * (sysfs numa_node -1, as in VMs), even when there is one node only. */
    if (!a || a->type == HWLOC_OBJ_MACHINE || !a->nodeset || hwloc_bitmap_weight(a->nodeset) != 1)
        return -1;
    return hwloc_bitmap_first(a->nodeset);
}

static int gpu_at(const gq_topo *t, unsigned d, unsigned b, unsigned s, unsigned f)
{
    char want[32];
    snprintf(want, sizeof want, "%04x:%02x:%02x.%x", d, b, s, f);
    for (int i = 0; i < t->ngpu; i++)
        if (!strcmp(t->gpu[i].pci_bus_id, want))
            return i;
    return -1;
}

static void walk(gq_topo *t, hwloc_topology_t topo, hwloc_obj_t o, int parent, bool *cut)
{
    if (o->type != HWLOC_OBJ_BRIDGE && o->type != HWLOC_OBJ_PCI_DEVICE)
        return; /* OS devices (nvme0n1, ...) are leaves under their PCI device */
    if (t->npci >= GQ_MAX_PCI_NODES) {
        *cut = true;
        return;
    }
    int me = t->npci++;
    gq_pci_node *n = &t->pci[me];
    memset(n, 0, sizeof *n);
    n->parent = parent;
    n->gpu = -1;
    n->numa_node = numa_of(topo, o);
    if (o->type == HWLOC_OBJ_BRIDGE && o->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_HOST) {
        n->kind = GQ_PCI_HOSTBRIDGE;
        snprintf(n->bus_id, sizeof n->bus_id, "%04x:%02x", (unsigned)o->attr->bridge.downstream.pci.domain,
                 (unsigned)o->attr->bridge.downstream.pci.secondary_bus);
        snprintf(n->label, sizeof n->label, "HostBridge %04x:[%02x-%02x]",
                 (unsigned)o->attr->bridge.downstream.pci.domain,
                 (unsigned)o->attr->bridge.downstream.pci.secondary_bus,
                 (unsigned)o->attr->bridge.downstream.pci.subordinate_bus);
    } else {
        const struct hwloc_pcidev_attr_s *p =
            o->type == HWLOC_OBJ_BRIDGE ? &o->attr->bridge.upstream.pci : &o->attr->pcidev;
        snprintf(n->bus_id, sizeof n->bus_id, "%04x:%02x:%02x.%x", (unsigned)p->domain, (unsigned)p->bus,
                 (unsigned)p->dev, (unsigned)p->func);
        n->link_gbps = p->linkspeed > 0 ? (double)p->linkspeed : 0.0;
        int g = o->type == HWLOC_OBJ_PCI_DEVICE ? gpu_at(t, p->domain, p->bus, p->dev, p->func) : -1;
        if (o->type == HWLOC_OBJ_BRIDGE) {
            n->kind = GQ_PCI_BRIDGE;
            snprintf(n->label, sizeof n->label, "PCIBridge %04x:%04x", (unsigned)p->vendor_id,
                     (unsigned)p->device_id);
        } else if (g >= 0) {
            n->kind = GQ_PCI_GPU;
            n->gpu = g;
            snprintf(n->label, sizeof n->label, "GPU %d", t->gpu[g].index);
            if (t->gpu[g].numa_node < 0)
                t->gpu[g].numa_node = n->numa_node;
            hwloc_obj_t a = hwloc_get_non_io_ancestor_obj(topo, o);
            if (!t->gpu[g].cpulist[0] && a && a->cpuset)
                hwloc_bitmap_list_snprintf(t->gpu[g].cpulist, sizeof t->gpu[g].cpulist, a->cpuset);
        } else {
            n->kind = GQ_PCI_OTHER;
            if (p->vendor_id == 0x10de && (p->class_id >> 8) == 0x03)
                snprintf(n->label, sizeof n->label, "NVIDIA GPU %04x (not visible to CUDA)",
                         (unsigned)p->device_id);
            else
                snprintf(n->label, sizeof n->label, "%s %04x:%04x", class_name(p->class_id),
                         (unsigned)p->vendor_id, (unsigned)p->device_id);
        }
    }
    for (hwloc_obj_t c = o->io_first_child; c; c = c->next_sibling)
        walk(t, topo, c, me, cut);
}

void gq_pcitree_fill(gq_topo *t, hwloc_topology_t topo)
{
    bool cut = false;
    t->npci = 0;
    /* Roots: I/O objects whose parent is not I/O (normally host bridges;
     * a device straight below a NUMA node when hwloc saw no bridge). */
    for (hwloc_obj_t o = hwloc_get_next_bridge(topo, NULL); o; o = hwloc_get_next_bridge(topo, o))
        if (!o->parent || !hwloc_obj_type_is_io(o->parent->type))
            walk(t, topo, o, -1, &cut);
    for (hwloc_obj_t o = hwloc_get_next_pcidev(topo, NULL); o; o = hwloc_get_next_pcidev(topo, o))
        if (!o->parent || !hwloc_obj_type_is_io(o->parent->type))
            walk(t, topo, o, -1, &cut);
    if (cut)
        gq_topo_warn(t, "the PCIe tree has more than %d nodes; the rest is not shown", GQ_MAX_PCI_NODES);
    for (int i = 0; i < t->ngpu; i++) {
        bool found = false;
        for (int n = 0; n < t->npci && !found; n++)
            found = t->pci[n].kind == GQ_PCI_GPU && t->pci[n].gpu == i;
        if (!found && t->npci > 0)
            gq_topo_warn(t, "GPU %d (%s) is not in hwloc's PCIe tree", t->gpu[i].index, t->gpu[i].pci_bus_id);
    }
}

/* Read the first line of a file into buf; false when it cannot be read. */
static bool read_line(const char *path, char *buf, size_t n)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    bool ok = fgets(buf, (int)n, f) != NULL;
    fclose(f);
    if (ok)
        buf[strcspn(buf, "\n")] = 0;
    return ok;
}

static void link_from_sysfs(const char *dir, const char *speed_file, const char *width_file, int *gen,
                            int *width)
{
    char path[512], buf[64];
    snprintf(path, sizeof path, "%s/%s", dir, speed_file);
    if (*gen < 0 && read_line(path, buf, sizeof buf)) {
        double gts = strtod(buf, NULL); /* "32.0 GT/s PCIe", "8 GT/s", "Unknown" */
        *gen = gq_pcie_gen_from_gts(gts);
    }
    snprintf(path, sizeof path, "%s/%s", dir, width_file);
    if (*width < 0 && read_line(path, buf, sizeof buf)) {
        char *end;
        long w = strtol(buf, &end, 10);
        if (end != buf && w > 0 && w <= 32)
            *width = (int)w;
    }
}

/* The uplink of every switch in the tree. A port's link registers
 * (sysfs current_link_speed/width, max_link_speed/width) describe the link
 * it sits on: below it for a root port or a switch's downstream port, above
 * it for a switch's upstream port. Below a host bridge the ports alternate,
 * root port (downstream-facing), then upstream port, downstream port, ...:
 * a bridge with an odd number of bridges above it is an upstream port, and
 * its registers are its switch's uplink. That link can do no more than both
 * ends allow, so its maximum is the smaller of the upstream port's maximum
 * and that of the port above it. The other bridges keep 0 (their upstream is
 * inside a chip); a GPU's own link comes from NVML and the GPU's own
 * registers (gq_pcitree_sysfs above). */
void gq_pcitree_bridge_links(gq_topo *t, const char *root)
{
    if (!root)
        root = "";
    for (int n = 0; n < t->npci; n++) {
        gq_pci_node *p = &t->pci[n];
        if (p->kind != GQ_PCI_BRIDGE || !p->bus_id[0])
            continue;
        int bridges = 0, top = n, guard = 0;
        for (int a = p->parent; a >= 0 && a < t->npci && guard < GQ_MAX_PCI_NODES;
             a = t->pci[a].parent, guard++) {
            bridges += t->pci[a].kind == GQ_PCI_BRIDGE;
            top = a;
        }
        if (t->pci[top].kind != GQ_PCI_HOSTBRIDGE || bridges % 2 == 0)
            continue;
        char dir[320];
        snprintf(dir, sizeof dir, "%s/sys/bus/pci/devices/%s", root, p->bus_id);
        int gen = -1, width = -1, gen_max = -1, width_max = -1;
        link_from_sysfs(dir, "current_link_speed", "current_link_width", &gen, &width);
        link_from_sysfs(dir, "max_link_speed", "max_link_width", &gen_max, &width_max);
        const gq_pci_node *up = &t->pci[p->parent];
        if (up->bus_id[0]) {
            int ug = -1, uw = -1;
            snprintf(dir, sizeof dir, "%s/sys/bus/pci/devices/%s", root, up->bus_id);
            link_from_sysfs(dir, "max_link_speed", "max_link_width", &ug, &uw);
            if (ug > 0 && ug < gen_max)
                gen_max = ug;
            if (uw > 0 && uw < width_max)
                width_max = uw;
        }
        p->link_gen = gen > 0 ? gen : 0;
        p->link_width = width > 0 ? width : 0;
        p->link_gen_max = gen_max > 0 ? gen_max : 0;
        p->link_width_max = width_max > 0 ? width_max : 0;
    }
}

void gq_pcitree_sysfs(gq_topo *t, const char *root)
{
    for (int i = 0; i < t->ngpu; i++) {
        gq_gpu_info *g = &t->gpu[i];
        char dir[320], path[512], buf[sizeof g->cpulist];
        if (!g->pci_bus_id[0])
            continue;
        snprintf(dir, sizeof dir, "%s/sys/bus/pci/devices/%s", root ? root : "", g->pci_bus_id);
        snprintf(path, sizeof path, "%s/numa_node", dir);
        if (read_line(path, buf, sizeof buf)) {
            char *end;
            long v = strtol(buf, &end, 10);
            /* -1 means the platform does not say (common in VMs): keep unknown. */
            if (end != buf && v >= 0 && v < 4096)
                g->numa_node = (int)v;
        }
        snprintf(path, sizeof path, "%s/local_cpulist", dir);
        if (!g->cpulist[0] && read_line(path, buf, sizeof buf))
            snprintf(g->cpulist, sizeof g->cpulist, "%s", buf);
        link_from_sysfs(dir, "current_link_speed", "current_link_width", &g->pcie_gen_cur,
                        &g->pcie_width_cur);
        link_from_sysfs(dir, "max_link_speed", "max_link_width", &g->pcie_gen_max, &g->pcie_width_max);
    }
}

static int node_of_gpu(const gq_topo *t, int g)
{
    for (int n = 0; n < t->npci; n++)
        if (t->pci[n].kind == GQ_PCI_GPU && t->pci[n].gpu == g)
            return n;
    return -1;
}

/* Ancestors of node n, nearest first (excluding n); returns the count. */
static int ancestors(const gq_topo *t, int n, int *out)
{
    int k = 0;
    for (int p = t->pci[n].parent; p >= 0 && p < t->npci && k < GQ_MAX_PCI_NODES; p = t->pci[p].parent)
        out[k++] = p;
    return k;
}

static gq_link_level tree_level(const gq_topo *t, int i, int j)
{
    int ni = node_of_gpu(t, i), nj = node_of_gpu(t, j);
    if (ni < 0 || nj < 0)
        return GQ_LEVEL_UNKNOWN;
    int ai[GQ_MAX_PCI_NODES], aj[GQ_MAX_PCI_NODES];
    int ki = ancestors(t, ni, ai), kj = ancestors(t, nj, aj);
    for (int x = 0; x < ki; x++)
        for (int y = 0; y < kj; y++) {
            if (ai[x] != aj[y])
                continue;
            const gq_pci_node *a = &t->pci[ai[x]];
            if (a->kind == GQ_PCI_HOSTBRIDGE)
                return GQ_LEVEL_PHB;
            /* x, y = bridges strictly between each GPU and the ancestor: a
             * switch's downstream port is one; its upstream port is `a`. */
            return (x <= 1 && y <= 1) ? GQ_LEVEL_PIX : GQ_LEVEL_PXB;
        }
    /* Different roots. */
    int ri = ki ? ai[ki - 1] : ni, rj = kj ? aj[kj - 1] : nj;
    int mi = t->pci[ri].numa_node, mj = t->pci[rj].numa_node;
    if (mi < 0)
        mi = t->gpu[i].numa_node;
    if (mj < 0)
        mj = t->gpu[j].numa_node;
    if (mi >= 0 && mj >= 0)
        return mi == mj ? GQ_LEVEL_NODE : GQ_LEVEL_SYS;
    if (t->numa_nodes == 1)
        return GQ_LEVEL_NODE;
    return GQ_LEVEL_UNKNOWN;
}

void gq_topo_derive_levels(gq_topo *t)
{
    for (int i = 0; i < t->ngpu; i++)
        for (int j = 0; j < t->ngpu; j++) {
            if (i == j) {
                t->level[i][j] = GQ_LEVEL_X;
                t->pci_level[i][j] = GQ_LEVEL_X;
                continue;
            }
            if (t->pci_level[i][j] == GQ_LEVEL_UNKNOWN)
                t->pci_level[i][j] = (unsigned char)tree_level(t, i, j);
            if (t->nvlinks[i][j] > 0)
                t->level[i][j] = GQ_LEVEL_NV;
            else if (t->level[i][j] == GQ_LEVEL_UNKNOWN || t->level[i][j] == GQ_LEVEL_NV)
                t->level[i][j] = t->pci_level[i][j];
        }
}
