#include "topo/topo.h"

#include <stdarg.h>
#include <stdio.h>
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

/* Transfer rate per lane in GT/s for a PCIe generation (2.5, 5, 8, 16, 32, 64). */
static double pcie_gts(int gen)
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
    return pcie_gts(gen) * width * enc / 8.0;
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
        g->nvswitch_links = -1;
        g->cc_major = g->cc_minor = -1;
        g->sm_count = -1;
        for (int j = 0; j < GQ_MAX_GPUS; j++) {
            t->p2p_cuda[i][j] = -1;
            t->nvlinks[i][j] = -1;
        }
    }
    t->cuda_driver_version = t->cuda_runtime_version = -1;
    t->sockets = t->cores = -1;
    t->cpus = -1;
    t->numa_nodes = 1;
}

void gq_topo_warn(gq_topo *t, const char *fmt, ...)
{
    char line[sizeof t->warnings[0]];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    for (int i = 0; i < t->nwarnings; i++)
        if (!strcmp(t->warnings[i], line))
            return;
    if (t->nwarnings >= GQ_TOPO_MAX_WARN)
        return;
    snprintf(t->warnings[t->nwarnings++], sizeof t->warnings[0], "%s", line);
}

int gq_topo_select(const gq_topo *in, const int *sel, int nsel, gq_topo *out, gq_err *err)
{
    int pos[GQ_MAX_GPUS]; /* in-position -> out-position, -1 when not selected */
    if (nsel < 0 || nsel > in->ngpu)
        return gq_err_set(err, GQ_E_USAGE, "GPU selection of %d GPUs, but the machine has %d", nsel,
                          in->ngpu);
    for (int i = 0; i < GQ_MAX_GPUS; i++)
        pos[i] = -1;
    for (int k = 0; k < nsel; k++) {
        if (sel[k] < 0 || sel[k] >= in->ngpu)
            return gq_err_set(err, GQ_E_USAGE, "GPU %d does not exist (this machine has GPUs 0-%d)", sel[k],
                              in->ngpu - 1);
        pos[sel[k]] = k;
    }
    memcpy(out, in, sizeof *out);
    out->ngpu = nsel;
    for (int a = 0; a < GQ_MAX_GPUS; a++) {
        if (a < nsel)
            out->gpu[a] = in->gpu[sel[a]];
        for (int b = 0; b < GQ_MAX_GPUS; b++) {
            bool inside = a < nsel && b < nsel;
            int i = inside ? sel[a] : 0, j = inside ? sel[b] : 0;
            out->p2p_cuda[a][b] = inside ? in->p2p_cuda[i][j] : -1;
            out->p2p_nvml[a][b] = inside ? in->p2p_nvml[i][j] : GQ_P2P_UNKNOWN;
            out->nvlinks[a][b] = inside ? in->nvlinks[i][j] : -1;
            out->level[a][b] = inside ? in->level[i][j] : GQ_LEVEL_UNKNOWN;
            out->pci_level[a][b] = inside ? in->pci_level[i][j] : GQ_LEVEL_UNKNOWN;
        }
    }
    for (int a = nsel; a < GQ_MAX_GPUS; a++) {
        gq_gpu_info *g = &out->gpu[a];
        memset(g, 0, sizeof *g);
        g->index = a;
        g->pcie_gen_cur = g->pcie_width_cur = g->pcie_gen_max = g->pcie_width_max = -1;
        g->numa_node = -1;
        g->nvlinks_total = -1;
        g->nvswitch_links = -1;
        g->cc_major = g->cc_minor = -1;
        g->sm_count = -1;
    }
    for (int n = 0; n < in->npci; n++) {
        gq_pci_node *p = &out->pci[n];
        if (p->kind != GQ_PCI_GPU)
            continue;
        int k = (p->gpu >= 0 && p->gpu < GQ_MAX_GPUS) ? pos[p->gpu] : -1;
        if (k >= 0) {
            p->gpu = k;
        } else {
            p->kind = GQ_PCI_OTHER;
            p->gpu = -1;
            size_t l = strlen(p->label);
            snprintf(p->label + l, sizeof p->label - l, "%s", " (not selected)");
        }
    }
    return GQ_OK;
}

double gq_nvlink_gbps_per_link(int cc_major, int cc_minor)
{
    /* Per direction, per link, from NVIDIA's published NVLink generations. */
    if (cc_major == 6 && cc_minor == 0)
        return 20.0; /* P100, NVLink 1 */
    if (cc_major == 7 && cc_minor == 0)
        return 25.0; /* V100, NVLink 2 */
    if (cc_major == 8 && cc_minor == 0)
        return 25.0; /* A100, NVLink 3 (SXM, and PCIe cards with NVLink bridges) */
    if (cc_major == 9)
        return 25.0; /* H100/H200, NVLink 4: 18 links = 450 GB/s */
    if (cc_major == 10)
        return 50.0; /* B200/GB200, NVLink 5: 18 links = 900 GB/s */
    return 0.0;
}
