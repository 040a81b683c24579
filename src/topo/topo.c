#include "topo/topo.h"

#include <string.h>

const char *gq_level_name(gq_link_level l)
{
    switch (l) {
    case GQ_LEVEL_X: return "X";
    case GQ_LEVEL_NV: return "NV";
    case GQ_LEVEL_PIX: return "PIX";
    case GQ_LEVEL_PXB: return "PXB";
    case GQ_LEVEL_PHB: return "PHB";
    case GQ_LEVEL_NODE: return "NODE";
    case GQ_LEVEL_SYS: return "SYS";
    default: return "?";
    }
}

const char *gq_p2p_status_name(gq_p2p_status s)
{
    switch (s) {
    case GQ_P2P_OK: return "OK";
    case GQ_P2P_CNS: return "CNS";
    case GQ_P2P_GNS: return "GNS";
    case GQ_P2P_TNS: return "TNS";
    case GQ_P2P_NS: return "NS";
    case GQ_P2P_DISABLED: return "DS";
    default: return "U";
    }
}

double gq_pcie_gts(int gen)
{
    static const double gts[] = {0, 2.5, 5.0, 8.0, 16.0, 32.0, 64.0};
    return (gen >= 1 && gen <= 6) ? gts[gen] : 0.0;
}

double gq_pcie_gbps(int gen, int width)
{
    if (gen < 1 || gen > 6 || width < 1)
        return 0.0;
    /* Gen1/2: 8b/10b; Gen3-5: 128b/130b; Gen6 (FLIT) ~ 242/256: use 1.0 as the raw bound. */
    double enc = gen <= 2 ? 0.8 : (gen <= 5 ? 128.0 / 130.0 : 1.0);
    return gq_pcie_gts(gen) * width * enc / 8.0;
}

void gq_topo_init(gq_topo *t)
{
    memset(t, 0, sizeof *t);
    for (int i = 0; i < GQ_MAX_GPUS; i++) {
        gq_gpu_info *g = &t->gpu[i];
        g->index = i;
        g->pcie_gen_cur = g->pcie_width_cur = g->pcie_gen_max = g->pcie_width_max = -1;
        g->numa_node = -1;
        g->nvlinks_total = -1;
        g->cc_major = g->cc_minor = -1;
        g->sm_count = -1;
        for (int j = 0; j < GQ_MAX_GPUS; j++) {
            t->p2p_cuda[i][j] = -1;
            t->nvlinks[i][j] = -1;
        }
    }
    t->cuda_driver_version = t->cuda_runtime_version = -1;
    t->sockets = t->cores = -1;
    t->numa_nodes = 1;
}
