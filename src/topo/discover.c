#include "topo/discover.h"

#include <stdio.h>
#include <string.h>

#include "topo/host.h"
#include "topo/nvml.h"
#include "topo/pcitree.h"

void gq_topo_discover_local(gq_topo *t)
{
    gq_topo_discover_at(t, "");
}

void gq_topo_discover_at(gq_topo *t, const char *root)
{
    hwloc_topology_t topo = NULL;
    gq_err e = {0};

    for (int i = 0; i < t->ngpu; i++) {
        char norm[32];
        if (gq_pci_bus_id_normalize(t->gpu[i].pci_bus_id, norm, sizeof norm))
            snprintf(t->gpu[i].pci_bus_id, sizeof t->gpu[i].pci_bus_id, "%s", norm);
    }
    if (gq_hwloc_load(&topo, NULL, &e)) {
        gq_topo_warn(t, "%s: the PCIe tree, sockets and cores read unknown", e.msg);
        topo = NULL;
    }
    gq_host_fill(t, topo);
    gq_nvml_fill_topo(t);
    gq_pcitree_sysfs(t, root);
    if (topo) {
        gq_pcitree_fill(t, topo);
        gq_pcitree_bridge_links(t, root);
        hwloc_topology_destroy(topo);
    }
    gq_topo_finish(t);
}

void gq_topo_finish(gq_topo *t)
{
    for (int i = 0; i < t->ngpu; i++) {
        gq_gpu_info *g = &t->gpu[i];
        g->pcie_gbps = gq_pcie_gbps(g->pcie_gen_cur, g->pcie_width_cur);
        for (int n = 0; n < t->npci && g->pcie_gbps <= 0; n++)
            if (t->pci[n].kind == GQ_PCI_GPU && t->pci[n].gpu == i)
                g->pcie_gbps = t->pci[n].link_gbps;
        if (g->nvlinks_total > 0 && g->nvlink_gbps_per_link <= 0)
            g->nvlink_gbps_per_link = gq_nvlink_gbps_per_link(g->cc_major, g->cc_minor);
    }
    gq_topo_derive_levels(t);
}
