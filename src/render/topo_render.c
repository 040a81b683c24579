#include "render/topo_render.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/domains.h"
#include "core/options.h"
#include "core/units.h"
#include "render/render.h"
#include "render/wrap.h"
#include "topo/snapshot.h"

#define UNKNOWN "unknown"

/* "13.0" for 13000, "12.4" for 12040, "unknown" for < 0. buf >= 16 bytes. */
static const char *cuda_version_str(int v, char *buf, size_t n)
{
    if (v < 0)
        snprintf(buf, n, UNKNOWN);
    else
        snprintf(buf, n, "%d.%d", v / 1000, (v % 1000) / 10);
    return buf;
}

/* ---- a small column formatter ------------------------------------------------ */

#define MAXCOLS (GQ_MAX_GPUS + 4)
#define CELL 96

typedef struct table {
    int ncols, nrows;
    char (*cells)[MAXCOLS][CELL]; /* [row][col] */
    int cap;
} table;

static void table_row(table *tb, const char *const *vals, int n)
{
    if (tb->nrows == tb->cap)
        return;
    for (int c = 0; c < n && c < MAXCOLS; c++)
        snprintf(tb->cells[tb->nrows][c], CELL, "%s", vals[c]);
    if (n > tb->ncols)
        tb->ncols = n;
    tb->nrows++;
}

static void table_cell(FILE *f, const char *s, int w, bool last)
{
    fputs(s, f);
    if (!last) /* padded by columns (UTF-8 code points), not bytes */
        fprintf(f, "%*s", w - gq_text_cols(s, strlen(s)) + 2, "");
}

/* The table, in blocks of columns when it is wider than the output
 * (gq_opts_help_width): each block repeats the first column, so a matrix of
 * many GPUs reads as several narrower matrices. */
static void table_print(FILE *f, const table *tb, const char *indent)
{
    int w[MAXCOLS] = {0};
    for (int r = 0; r < tb->nrows; r++)
        for (int c = 0; c < tb->ncols; c++) {
            int l = gq_text_cols(tb->cells[r][c], strlen(tb->cells[r][c]));
            if (l > w[c])
                w[c] = l;
        }
    int width = gq_opts_help_width > 0 ? gq_opts_help_width : 100;
    int from = 1;
    do {
        int used = (int)strlen(indent) + w[0] + 2, to = from;
        while (to < tb->ncols && (to == from || used + w[to] <= width)) {
            used += w[to] + 2;
            to++;
        }
        if (from > 1)
            fputc('\n', f);
        for (int r = 0; r < tb->nrows; r++) {
            fputs(indent, f);
            table_cell(f, tb->cells[r][0], w[0], to <= 1);
            for (int c = from; c < to; c++)
                table_cell(f, tb->cells[r][c], w[c], c == to - 1);
            /* trailing spaces would make golden comparisons fragile */
            fputc('\n', f);
        }
        from = to;
    } while (from < tb->ncols);
}

/* ---- cells ---------------------------------------------------------------------- */

static const char *str_or_unknown(const char *s)
{
    return s && *s ? s : UNKNOWN;
}

static const char *link_str(int gen, int width, char *buf, size_t n)
{
    if (gen < 0 && width < 0)
        snprintf(buf, n, UNKNOWN);
    else if (width < 0)
        snprintf(buf, n, "Gen%d x?", gen);
    else if (gen < 0)
        snprintf(buf, n, "Gen? x%d", width);
    else
        snprintf(buf, n, "Gen%d x%d", gen, width);
    return buf;
}

static const char *level_cell(const gq_topo *t, int i, int j, char *buf, size_t n)
{
    gq_link_level l = (gq_link_level)t->level[i][j];
    if (l == GQ_LEVEL_NV && t->nvlinks[i][j] > 0)
        snprintf(buf, n, "NV%d", t->nvlinks[i][j]);
    else if (l == GQ_LEVEL_UNKNOWN)
        snprintf(buf, n, "?");
    else
        snprintf(buf, n, "%s", gq_level_name(l));
    return buf;
}

static const char *p2p_cell(const gq_topo *t, int i, int j, char *buf, size_t n)
{
    if (i == j) {
        snprintf(buf, n, "X");
        return buf;
    }
    int c = t->p2p_cuda[i][j];
    gq_p2p_status s = (gq_p2p_status)t->p2p_nvml[i][j];
    snprintf(buf, n, "%s/%s",
             c < 0 ? "?"
             : c   ? "yes"
                   : "no",
             s == GQ_P2P_UNKNOWN ? "?" : gq_p2p_status_name(s));
    return buf;
}

/* ---- sections ------------------------------------------------------------------ */

static void host_lines(FILE *f, const gq_topo *t)
{
    char cpus[64] = "", a[16], b[16];
    if (t->sockets > 0)
        snprintf(cpus + strlen(cpus), sizeof cpus - strlen(cpus), "%d socket%s, ", t->sockets,
                 t->sockets == 1 ? "" : "s");
    else
        snprintf(cpus + strlen(cpus), sizeof cpus - strlen(cpus), "sockets unknown, ");
    if (t->cores > 0)
        snprintf(cpus + strlen(cpus), sizeof cpus - strlen(cpus), "%d cores, ", t->cores);
    if (t->cpus > 0)
        snprintf(cpus + strlen(cpus), sizeof cpus - strlen(cpus), "%d CPUs, ", t->cpus);
    fprintf(f, "Host      %s: %s; %s%d NUMA node%s; %s", str_or_unknown(t->hostname),
            t->cpu_model[0] ? t->cpu_model : "CPU model unknown", cpus, t->numa_nodes,
            t->numa_nodes == 1 ? "" : "s", t->is_vm ? "virtual machine" : "not a VM");
    if (t->is_vm)
        fprintf(f, " (%s)", t->hypervisor[0] ? t->hypervisor : "hypervisor not identified");
    fputc('\n', f);
    fprintf(f, "Software  driver %s, CUDA driver %s, CUDA runtime %s, NVML %s\n",
            str_or_unknown(t->driver_version), cuda_version_str(t->cuda_driver_version, a, sizeof a),
            cuda_version_str(t->cuda_runtime_version, b, sizeof b), t->nvml_loaded ? "loaded" : "not loaded");
}

static void gpu_table(FILE *f, const gq_topo *t, table *tb)
{
    static const char *const head[] = {"GPU",      "Name",     "Memory",   "Bus id", "CC",   "SMs",
                                       "PCIe now", "PCIe max", "GB/s/dir", "NUMA",   "CPUs", "Power limit"};
    table_row(tb, head, (int)(sizeof head / sizeof head[0]));
    for (int i = 0; i < t->ngpu; i++) {
        const gq_gpu_info *g = &t->gpu[i];
        char idx[16], mem[32], cc[16], sms[16], now[24], max[24], gbps[24], numa[16], pw[24];
        snprintf(idx, sizeof idx, "%d", g->index);
        if (g->mem_bytes)
            snprintf(mem, sizeof mem, "%llu MiB", (unsigned long long)(g->mem_bytes / GQ_MiB));
        else
            snprintf(mem, sizeof mem, UNKNOWN);
        if (g->cc_major >= 0)
            snprintf(cc, sizeof cc, "%d.%d", g->cc_major, g->cc_minor < 0 ? 0 : g->cc_minor);
        else
            snprintf(cc, sizeof cc, "?");
        if (g->sm_count > 0)
            snprintf(sms, sizeof sms, "%d", g->sm_count);
        else
            snprintf(sms, sizeof sms, "?");
        link_str(g->pcie_gen_cur, g->pcie_width_cur, now, sizeof now);
        link_str(g->pcie_gen_max, g->pcie_width_max, max, sizeof max);
        if (g->pcie_gbps > 0)
            snprintf(gbps, sizeof gbps, "%.1f", g->pcie_gbps);
        else
            snprintf(gbps, sizeof gbps, UNKNOWN);
        if (g->numa_node >= 0)
            snprintf(numa, sizeof numa, "%d", g->numa_node);
        else
            snprintf(numa, sizeof numa, "N/A");
        if (g->power_limit_w > 0)
            snprintf(pw, sizeof pw, "%.0f W", g->power_limit_w);
        else
            snprintf(pw, sizeof pw, UNKNOWN);
        const char *row[] = {
            idx,  str_or_unknown(g->name),    mem, str_or_unknown(g->pci_bus_id), cc, sms, now, max, gbps,
            numa, str_or_unknown(g->cpulist), pw};
        table_row(tb, row, (int)(sizeof row / sizeof row[0]));
    }
    table_print(f, tb, "");
    fputc('\n', f);
}

/* "NVSwitch: GPUs 0-7 ..." when some GPUs reach their peers through NVSwitches. */
static void nvswitch_line(FILE *f, const gq_topo *t)
{
    char buf[256];
    int gs[GQ_MAX_GPUS] = {0}, n = 0;
    for (int i = 0; i < t->ngpu && n < GQ_MAX_GPUS; i++)
        if (t->gpu[i].nvswitch_links > 0)
            gs[n++] = t->gpu[i].index;
    gq_domains_set_str(gs, n, buf, sizeof buf);
    if (n)
        fprintf(f,
                "NVSwitch: GPU%s %s reach each other through NVSwitches; each GPU's NVLink bandwidth is "
                "shared by all the peers it copies with at once\n",
                n == 1 ? "" : "s", buf);
}

static void uuid_and_nvlink_lines(FILE *f, const gq_topo *t)
{
    nvswitch_line(f, t);
    for (int i = 0; i < t->ngpu; i++) {
        const gq_gpu_info *g = &t->gpu[i];
        fprintf(f, "GPU %-3d   UUID %s; NVLinks ", g->index, str_or_unknown(g->uuid));
        if (g->nvlinks_total < 0)
            fprintf(f, UNKNOWN);
        else if (g->nvlinks_total == 0)
            fprintf(f, "none");
        else if (g->nvlink_gbps_per_link > 0)
            fprintf(f, "%d active x %g GB/s = %g GB/s per direction", g->nvlinks_total,
                    g->nvlink_gbps_per_link, g->nvlinks_total * g->nvlink_gbps_per_link);
        else
            fprintf(f, "%d active (rate per link unknown)", g->nvlinks_total);
        if (g->nvswitch_links > 0)
            fprintf(f, ", %s to an NVSwitch (shared by all its peers)",
                    g->nvswitch_links == g->nvlinks_total ? "all" : "some");
        fputc('\n', f);
        fprintf(f, "          VBIOS %s; serial %s; ECC %s; MIG %s; persistence %s\n",
                str_or_unknown(g->vbios), str_or_unknown(g->serial), gq_mode_name(g->ecc_mode),
                gq_mode_name(g->mig_mode), gq_mode_name(g->persistence_mode));
    }
}

/* A CSV field: quoted, with quotes doubled. */
static void csv_str(FILE *f, const char *s, bool last)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s == '\n' ? ' ' : *s, f);
    }
    fputs(last ? "\"\n" : "\",", f);
}

static void csv_int(FILE *f, long long v)
{
    if (v >= 0)
        fprintf(f, "%lld,", v);
    else
        fputc(',', f);
}

static void csv_num(FILE *f, double v)
{
    if (v > 0)
        fprintf(f, "%g,", v);
    else
        fputc(',', f);
}

void gq_render_topo_csv(FILE *f, const gq_topo *t)
{
    fputs("gpu,name,uuid,serial,vbios,ecc_mode,mig_mode,persistence_mode,memory_mib,pci_bus_id,compute_"
          "capability,"
          "sm_count,pcie_gen_cur,pcie_width_cur,pcie_gen_max,pcie_width_max,pcie_gbps,numa_node,cpulist,"
          "power_limit_w,nvlinks,hostname,driver,source\n",
          f);
    for (int i = 0; i < t->ngpu; i++) {
        const gq_gpu_info *g = &t->gpu[i];
        char cc[16] = "";
        if (g->cc_major >= 0)
            snprintf(cc, sizeof cc, "%d.%d", g->cc_major, g->cc_minor < 0 ? 0 : g->cc_minor);
        fprintf(f, "%d,", g->index);
        csv_str(f, g->name, false);
        csv_str(f, g->uuid, false);
        csv_str(f, str_or_unknown(g->serial), false);
        csv_str(f, str_or_unknown(g->vbios), false);
        csv_str(f, gq_mode_name(g->ecc_mode), false);
        csv_str(f, gq_mode_name(g->mig_mode), false);
        csv_str(f, gq_mode_name(g->persistence_mode), false);
        csv_int(f, g->mem_bytes ? (long long)(g->mem_bytes / GQ_MiB) : -1);
        csv_str(f, g->pci_bus_id, false);
        csv_str(f, cc, false);
        csv_int(f, g->sm_count > 0 ? g->sm_count : -1);
        csv_int(f, g->pcie_gen_cur);
        csv_int(f, g->pcie_width_cur);
        csv_int(f, g->pcie_gen_max);
        csv_int(f, g->pcie_width_max);
        csv_num(f, g->pcie_gbps);
        csv_int(f, g->numa_node);
        csv_str(f, g->cpulist, false);
        csv_num(f, g->power_limit_w);
        csv_int(f, g->nvlinks_total);
        csv_str(f, t->hostname, false);
        csv_str(f, t->driver_version, false);
        csv_str(f, t->source, true);
    }
}

static void level_matrix(FILE *f, const gq_topo *t, table *tb)
{
    char names[GQ_MAX_GPUS][16];
    const char *row[MAXCOLS];
    int shown = t->ngpu < MAXCOLS - 3 ? t->ngpu : MAXCOLS - 3;
    tb->nrows = tb->ncols = 0;
    row[0] = "";
    for (int j = 0; j < shown; j++) {
        snprintf(names[j], sizeof names[j], "GPU%d", t->gpu[j].index);
        row[j + 1] = names[j];
    }
    row[shown + 1] = "CPU Affinity";
    row[shown + 2] = "NUMA Affinity";
    table_row(tb, row, shown + 3);
    for (int i = 0; i < shown; i++) {
        char cells[MAXCOLS][16], numa[16];
        row[0] = names[i];
        for (int j = 0; j < shown; j++)
            row[j + 1] = level_cell(t, i, j, cells[j], sizeof cells[j]);
        row[shown + 1] = str_or_unknown(t->gpu[i].cpulist);
        /* As nvidia-smi: the node of the GPU's local CPUs, which is the only
         * node when the machine has one, even where sysfs reports -1. */
        if (t->gpu[i].numa_node >= 0)
            snprintf(numa, sizeof numa, "%d", t->gpu[i].numa_node);
        else if (t->numa_nodes == 1)
            snprintf(numa, sizeof numa, "0");
        else
            snprintf(numa, sizeof numa, "N/A");
        row[shown + 2] = numa;
        table_row(tb, row, shown + 3);
    }
    fprintf(f, "\nTopology matrix (as nvidia-smi topo -m):\n");
    table_print(f, tb, "  ");
    if (shown < t->ngpu)
        fprintf(f, "  (%d more GPUs; see --format json, or select some with --gpus)\n", t->ngpu - shown);
    /* Host-staged copies between NVLinked GPUs still take the PCIe path. */
    bool first = true;
    for (int i = 0; i < t->ngpu; i++)
        for (int j = i + 1; j < t->ngpu; j++) {
            if (t->level[i][j] != GQ_LEVEL_NV || t->pci_level[i][j] == GQ_LEVEL_UNKNOWN)
                continue;
            fprintf(f, "%s GPU%d-GPU%d %s", first ? "  PCIe path under the NVLinks:" : ",", t->gpu[i].index,
                    t->gpu[j].index, gq_level_name((gq_link_level)t->pci_level[i][j]));
            first = false;
        }
    if (!first)
        fputc('\n', f);

    tb->nrows = tb->ncols = 0;
    row[0] = "";
    for (int j = 0; j < shown; j++)
        row[j + 1] = names[j];
    table_row(tb, row, shown + 1);
    for (int i = 0; i < shown; i++) {
        char cells[MAXCOLS][16];
        row[0] = names[i];
        for (int j = 0; j < shown; j++)
            row[j + 1] = p2p_cell(t, i, j, cells[j], sizeof cells[j]);
        table_row(tb, row, shown + 1);
    }
    fprintf(f, "\nP2P read (CUDA cudaDeviceCanAccessPeer / NVML P2P status):\n");
    table_print(f, tb, "  ");
}

static int gpus_below(const gq_topo *t, int n, bool *set)
{
    int count = 0;
    for (int m = 0; m < t->npci; m++) {
        if (t->pci[m].kind != GQ_PCI_GPU)
            continue;
        bool below = false;
        for (int p = m; p >= 0 && p < t->npci && !below; p = t->pci[p].parent)
            below = p == n;
        if (below) {
            if (set)
                set[t->pci[m].gpu] = true;
            count++;
        }
    }
    return count;
}

static void tree_node(FILE *f, const gq_topo *t, int n, const char *prefix, bool last, int depth)
{
    const gq_pci_node *p = &t->pci[n];
    /* One snprintf: chained "l += snprintf" runs past line once a part is
     * truncated (a hand-written topology can hold any link figure). */
    char line[320], link[128] = "", numa[24] = "", trained[80] = "";
    bool bus = p->kind != GQ_PCI_HOSTBRIDGE && p->bus_id[0];
    bool name = p->kind == GQ_PCI_GPU && p->gpu >= 0 && p->gpu < t->ngpu && t->gpu[p->gpu].name[0];
    /* a bridge's uplink as sysfs reads it, and whether it trained below what it can do */
    if (p->kind == GQ_PCI_BRIDGE && p->link_gen > 0 && p->link_width > 0) {
        bool down = (p->link_gen_max > p->link_gen) || (p->link_width_max > p->link_width);
        if (down)
            snprintf(trained, sizeof trained, " (Gen%d x%d, can do Gen%d x%d: trained down)", p->link_gen,
                     p->link_width, p->link_gen_max > 0 ? p->link_gen_max : p->link_gen,
                     p->link_width_max > 0 ? p->link_width_max : p->link_width);
        else
            snprintf(trained, sizeof trained, " (Gen%d x%d)", p->link_gen, p->link_width);
    }
    if (p->link_gbps > 0)
        snprintf(link, sizeof link, "  link %.1f GB/s%s", p->link_gbps, trained);
    else if (trained[0])
        snprintf(link, sizeof link, "  link%s", trained);
    if (p->kind == GQ_PCI_HOSTBRIDGE && p->numa_node >= 0)
        snprintf(numa, sizeof numa, "  NUMA %d", p->numa_node);
    snprintf(line, sizeof line, "%s%s%s%s%s%s%s", p->label, bus ? "  " : "", bus ? p->bus_id : "",
             name ? "  " : "", name ? t->gpu[p->gpu].name : "", link, numa);
    if (depth == 0)
        fprintf(f, "  %s\n", line);
    else
        fprintf(f, "  %s%s %s\n", prefix, last ? "`--" : "+--", line);
    if (depth > 64)
        return;
    char sub[512];
    snprintf(sub, sizeof sub, "%s%s", prefix, depth == 0 ? "" : last ? "    " : "|   ");
    int kids[GQ_MAX_PCI_NODES], nk = 0;
    for (int m = n + 1; m < t->npci; m++)
        if (t->pci[m].parent == n)
            kids[nk++] = m;
    for (int k = 0; k < nk; k++)
        tree_node(f, t, kids[k], sub, k == nk - 1, depth + 1);
}

static void pci_tree(FILE *f, const gq_topo *t)
{
    fprintf(f, "\nPCIe tree (hwloc):\n");
    if (t->npci == 0) {
        fprintf(f, "  unknown (no PCIe tree was discovered)\n");
        return;
    }
    for (int n = 0; n < t->npci; n++)
        if (t->pci[n].parent < 0)
            tree_node(f, t, n, "", true, 0);
    /* The deepest node above each set of two or more GPUs: they share its uplink. */
    bool any = false;
    for (int n = 0; n < t->npci; n++) {
        if (t->pci[n].kind != GQ_PCI_BRIDGE && t->pci[n].kind != GQ_PCI_HOSTBRIDGE)
            continue;
        int c = gpus_below(t, n, NULL);
        if (c < 2)
            continue;
        bool deeper = false;
        for (int m = n + 1; m < t->npci && !deeper; m++)
            deeper = t->pci[m].parent == n && gpus_below(t, m, NULL) == c;
        if (deeper)
            continue;
        bool set[GQ_MAX_GPUS] = {0};
        gpus_below(t, n, set);
        fprintf(f, "%s", any ? "" : "  Sharing an upstream path:\n");
        any = true;
        fprintf(f, "    GPUs");
        const char *sep = " ";
        for (int g = 0; g < t->ngpu; g++)
            if (set[g]) {
                fprintf(f, "%s%d", sep, t->gpu[g].index);
                sep = ", ";
            }
        if (t->pci[n].kind == GQ_PCI_HOSTBRIDGE)
            fprintf(f, " share the host bridge %s\n", t->pci[n].label);
        else
            fprintf(f, " share the switch or root port %s %s\n", t->pci[n].label, t->pci[n].bus_id);
    }
}

static void legend_and_notes(FILE *f, const gq_topo *t)
{
    fprintf(f, "\nLegend:\n"
               "  X    = self\n"
               "  NV#  = joined by a bonded set of # NVLinks\n"
               "  PIX  = at most one PCIe bridge between them\n"
               "  PXB  = several PCIe bridges, without a PCIe host bridge\n"
               "  PHB  = through a PCIe host bridge (typically the CPU)\n"
               "  NODE = between PCIe host bridges within one NUMA node\n"
               "  SYS  = across the interconnect between NUMA nodes (QPI/UPI/xGMI)\n"
               "  P2P  = yes/no from CUDA; OK, CNS chipset not supported, GNS GPU not supported,\n"
               "         TNS topology not supported, NS not supported, DS disabled, from NVML\n"
               "  ?    = unknown\n");
    bool numa_unknown = false, trained_down = false;
    for (int i = 0; i < t->ngpu; i++) {
        const gq_gpu_info *g = &t->gpu[i];
        numa_unknown |= g->numa_node < 0;
        trained_down |= (g->pcie_gen_cur > 0 && g->pcie_gen_max > g->pcie_gen_cur) ||
                        (g->pcie_width_cur > 0 && g->pcie_width_max > g->pcie_width_cur);
    }
    if (t->numa_nodes == 1)
        fprintf(f,
                "Note: the platform shows one NUMA node%s; host memory cannot be placed per socket here.\n",
                numa_unknown ? " and does not report the GPUs' node (common in VMs)" : "");
    if (trained_down)
        fprintf(f, "Note: a PCIe link runs below its maximum; idle GPUs train down to save power, so "
                   "gpuqual's transfer tests read the link again under load.\n");
    if (t->synthetic)
        fprintf(f, "Note: this snapshot is synthetic (written by hand, not captured on a machine).\n");
    if (t->simulated)
        fprintf(f, "Note: simulated machine: every figure here is a model, not a measurement.\n");
}

void gq_render_topo_table(FILE *f, const gq_topo *t)
{
    table tb = {0};
    tb.cap = GQ_MAX_GPUS + 1;
    tb.cells = calloc((size_t)tb.cap, sizeof *tb.cells);
    if (!tb.cells)
        return;
    fprintf(f, "gpuqual topo: %d GPU%s (source: %s%s)\n\n", t->ngpu, t->ngpu == 1 ? "" : "s",
            str_or_unknown(t->source), t->synthetic ? ", synthetic" : "");
    host_lines(f, t);
    fputc('\n', f);
    gpu_table(f, t, &tb);
    uuid_and_nvlink_lines(f, t);
    level_matrix(f, t, &tb);
    pci_tree(f, t);
    legend_and_notes(f, t);
    free(tb.cells);
}

json_t *gq_render_topo_json(const gq_topo *t, const json_t *options)
{
    json_t *root = gq_topo_doc(t, "topo", GQ_SCHEMA_VERSION);
    if (!root)
        return NULL;
    json_object_set_new(root, "incomplete", json_false());
    json_object_set_new(root, "options", options ? json_deep_copy(options) : json_object());
    return root;
}
