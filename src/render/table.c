/* Terminal tables, laid out like nvbandwidth's: one matrix per test, rows =
 * source side (host NUMA node, or the executing GPU), columns = GPU, N/A
 * where a cell does not apply. Below each matrix: the largest spread, what is
 * wrong with marked cells, then the aggregates and sums with their overlap.
 * An invalid aggregate is never printed as a figure. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/options.h"

#include "measure/catalog.h"
#include "render/render.h"
#include "render/render_util.h"

#define MAXROWS (GQ_MAX_NUMA + GQ_MAX_GPUS + 2)

typedef struct cellmap {
    int nrows, ncols;
    int rowkey[MAXROWS];
    char rowlabel[MAXROWS][12];
    const gq_record *cell[MAXROWS][GQ_MAX_GPUS];
} cellmap;

static const char *fmt_gpus(const int *g, int n, char *buf, size_t cap)
{
    size_t used = 0;
    buf[0] = 0;
    for (int i = 0; i < n;) {
        int j = i;
        while (j + 1 < n && g[j + 1] == g[j] + 1)
            j++;
        int w;
        if (j >= i + 2)
            w = snprintf(buf + used, cap - used, "%s%d-%d", used ? "," : "", g[i], g[j]);
        else if (j == i + 1)
            w = snprintf(buf + used, cap - used, "%s%d,%d", used ? "," : "", g[i], g[j]);
        else
            w = snprintf(buf + used, cap - used, "%s%d", used ? "," : "", g[i]);
        if (w < 0 || (size_t)w >= cap - used)
            break;
        used += (size_t)w;
        i = j + 1;
    }
    return buf;
}

int gq_rec_ncols(const gq_topo *topo, const gq_recordset *rs, const char *test)
{
    int n = topo ? topo->ngpu : 0;
    for (int i = 0; i < rs->n; i++) {
        const gq_record *r = &rs->v[i];
        if (strcmp(r->test, test))
            continue;
        if (r->src.kind == GQ_EP_GPU && r->src.index >= n)
            n = r->src.index + 1;
        if (r->dst.kind == GQ_EP_GPU && r->dst.index >= n)
            n = r->dst.index + 1;
    }
    return n > GQ_MAX_GPUS ? GQ_MAX_GPUS : n;
}

static int row_index(cellmap *m, int key, bool host)
{
    for (int i = 0; i < m->nrows; i++)
        if (m->rowkey[i] == key)
            return i;
    if (m->nrows >= MAXROWS)
        return -1;
    int i = m->nrows++;
    /* keep rows sorted by key ("local" = -1 first) */
    while (i > 0 && m->rowkey[i - 1] > key) {
        m->rowkey[i] = m->rowkey[i - 1];
        memcpy(m->rowlabel[i], m->rowlabel[i - 1], sizeof m->rowlabel[i]);
        memcpy(m->cell[i], m->cell[i - 1], sizeof m->cell[i]);
        i--;
    }
    m->rowkey[i] = key;
    memset(m->cell[i], 0, sizeof m->cell[i]);
    if (host && key == GQ_NUMA_LOCAL)
        snprintf(m->rowlabel[i], sizeof m->rowlabel[i], "local");
    else
        snprintf(m->rowlabel[i], sizeof m->rowlabel[i], "%d", key);
    return i;
}

static void put_cell(cellmap *m, int rowkey, bool host, int col, const gq_record *r)
{
    if (col < 0 || col >= m->ncols)
        return;
    int i = row_index(m, rowkey, host);
    if (i >= 0)
        m->cell[i][col] = r;
}

static void print_block(FILE *f, const cellmap *m, int w, int from, int to);

static void print_matrix(FILE *f, const cellmap *m, const char *title, const char *note)
{
    fprintf(f, "%s%s\n", title, note ? note : "");
    int w = 2;
    for (int i = 0; i < m->nrows; i++) {
        int l = (int)strlen(m->rowlabel[i]);
        if (l > w)
            w = l;
    }
    /* columns of 10; wider than the output (gq_opts_help_width), in blocks
     * of columns that each repeat the row labels */
    int width = gq_opts_help_width > 0 ? gq_opts_help_width : 100;
    int per = (width - w) / 10 > 0 ? (width - w) / 10 : 1;
    for (int from = 0; from < m->ncols || from == 0; from += per) {
        int to = from + per < m->ncols ? from + per : m->ncols;
        if (from > 0)
            fputc('\n', f);
        print_block(f, m, w, from, to);
        if (m->ncols == 0)
            break;
    }
}

static void print_block(FILE *f, const cellmap *m, int w, int from, int to)
{
    fprintf(f, "%*s", w, "");
    for (int c = from; c < to; c++)
        fprintf(f, "%10d", c);
    fputc('\n', f);
    for (int i = 0; i < m->nrows; i++) {
        fprintf(f, "%*s", w, m->rowlabel[i]);
        for (int c = from; c < to; c++) {
            const gq_record *r = m->cell[i][c];
            if (!r)
                fprintf(f, "%10s", "N/A");
            else if (r->value.n == 0)
                fprintf(f, "%10s", "ERR");
            else if (!r->valid && (r->aggregate || r->sum) && (r->flags & GQ_FLAG_OVERLAP))
                fprintf(f, "%10s", "INVALID");
            else if (r->valid)
                fprintf(f, "%10.2f", r->value.median);
            else
                fprintf(f, "%9.2f*", r->value.median); /* explained under the matrix */
        }
        fputc('\n', f);
    }
}

/* Largest spread of the matrix, and the cells marked invalid. */
static void matrix_notes(FILE *f, const cellmap *m)
{
    double worst = -1;
    int wr = -1, wc = -1, rounds = 0;
    for (int i = 0; i < m->nrows; i++)
        for (int c = 0; c < m->ncols; c++) {
            const gq_record *r = m->cell[i][c];
            if (!r || r->value.n == 0)
                continue;
            if (r->value.n > rounds)
                rounds = r->value.n;
            if (r->value.spread > worst) {
                worst = r->value.spread;
                wr = i;
                wc = c;
            }
        }
    if (worst >= 0)
        fprintf(f, "spread (max-min)/median over %d round%s: at most %.2f%% (row %s, column %d)\n", rounds,
                rounds == 1 ? "" : "s", 100.0 * worst, m->rowlabel[wr], wc);
    for (int i = 0; i < m->nrows; i++)
        for (int c = 0; c < m->ncols; c++) {
            const gq_record *r = m->cell[i][c];
            if (!r || r->valid)
                continue;
            char fl[128];
            fprintf(f, "%s row %s, column %d: INVALID [%s] %s\n", r->value.n ? "*" : "ERR", m->rowlabel[i], c,
                    gq_flags_str(r->flags, fl, sizeof fl), r->error[0] ? r->error : "");
        }
}

/* "aggregate h2d, GPUs 0-3, host:0: 25.30 GB/s (overlap 99.81%, spread 0.21%)" */
static void print_group_line(FILE *f, const gq_record *r, const char *indent)
{
    char gl[256], s[32], d[32], fl[128];
    fmt_gpus(r->gpus, r->ngpus, gl, sizeof gl);
    const char *unit = r->is_latency ? "ns" : "GB/s";
    if (r->sum) {
        char dirs[64] = "";
        for (int k = 0; k < 4; k++)
            if (r->dirs & (1u << k)) {
                size_t l = strlen(dirs);
                snprintf(dirs + l, sizeof dirs - l, "%s%s", l ? " + " : "",
                         gq_direction_name((gq_direction)k));
            }
        fprintf(f, "%ssum (%s), GPUs %s: ", indent, dirs, gl);
    } else if (r->aggregate) {
        fprintf(f, "%saggregate %s, GPUs %s, %s -> %s: ", indent, gq_direction_name(r->direction), gl,
                gq_rec_endpoint(r->src, s, sizeof s), gq_rec_endpoint(r->dst, d, sizeof d));
    } else {
        fprintf(f, "%s%s -> %s %s: ", indent, gq_rec_endpoint(r->src, s, sizeof s),
                gq_rec_endpoint(r->dst, d, sizeof d), gq_method_name(r->method));
    }
    if (!r->valid) {
        fprintf(f, "INVALID [%s] %s", gq_flags_str(r->flags, fl, sizeof fl), r->error);
        if ((r->flags & GQ_FLAG_OVERLAP) == 0 && r->value.n > 0 && !(r->flags & GQ_FLAG_IMPOSSIBLE))
            fprintf(f, " (measured %.2f %s, not usable)", r->value.median, unit);
        fputc('\n', f);
        return;
    }
    fprintf(f, "%.2f %s", r->value.median, unit);
    if (r->overlap >= 0)
        fprintf(f, " (overlap %.2f%%, spread %.2f%%)", 100.0 * r->overlap, 100.0 * r->value.spread);
    else
        fprintf(f, " (spread %.2f%%)", 100.0 * r->value.spread);
    unsigned warn = r->flags & (GQ_FLAG_SPREAD | GQ_FLAG_NUMA_MISPLACED | GQ_FLAG_INCOMPLETE);
    if (warn)
        fprintf(f, " [%s]", gq_flags_str(warn, fl, sizeof fl));
    fputc('\n', f);
}

static void print_aggregates(FILE *f, const gq_recordset *rs, const char *test)
{
    bool any = false;
    for (int i = 0; i < rs->n; i++) {
        const gq_record *r = &rs->v[i];
        if (strcmp(r->test, test) || !(r->aggregate || r->sum))
            continue;
        if (!any)
            fprintf(f, "concurrent totals (each GPU's bytes over its own window, summed; valid only when the "
                       "windows "
                       "overlap >= 99%%):\n");
        any = true;
        print_group_line(f, r, "  ");
    }
}

/* p2pBandwidthLatencyTest's "P2P=Enabled" falls back to the driver's staged
 * copy for pairs without peer access, as the CUDA sample does: say so. */
static void fallback_note(FILE *f, const gq_recordset *rs, const char *test)
{
    if (!strstr(test, "_enabled"))
        return;
    int n = 0, staged = 0;
    for (int i = 0; i < rs->n; i++) {
        const gq_record *r = &rs->v[i];
        if (strcmp(r->test, test) || r->aggregate || r->sum)
            continue;
        n++;
        staged += r->method == GQ_METHOD_DRIVER_STAGED;
    }
    if (staged)
        fprintf(
            f,
            "%d of %d cells without peer access: measured with the driver's staged copy, as the CUDA sample "
            "falls back\n",
            staged, n);
}

static bool is_flow(const gq_record *r)
{
    return !r->aggregate && !r->sum;
}

static int render_cells(FILE *f, const gq_topo *topo, const gq_recordset *rs, const char *test,
                        const gq_test *t, gq_layout layout)
{
    cellmap *m = calloc(1, sizeof *m);
    if (!m)
        return GQ_E_NOMEM;
    m->ncols = gq_rec_ncols(topo, rs, test);
    char title[256];
    bool lat = t ? t->kind == GQ_TEST_LATENCY : false;
    for (int i = 0; i < rs->n; i++)
        if (!strcmp(rs->v[i].test, test) && rs->v[i].is_latency)
            lat = true;
    if (t)
        snprintf(title, sizeof title, "%s", t->title);
    else
        snprintf(title, sizeof title, "%s %s(row) -> GPU(column) %s", test,
                 layout == GQ_LAYOUT_HOST_GPU ? "CPU" : "GPU", lat ? "latency (ns)" : "bandwidth (GB/s)");

    if (layout == GQ_LAYOUT_TARGET) {
        for (int i = 0; i < rs->n; i++) {
            const gq_record *r = &rs->v[i];
            if (strcmp(r->test, test) || !r->aggregate)
                continue;
            put_cell(m, 0, false, gq_test_target(t, r), r);
        }
        print_matrix(f, m, title, ", the aggregate of each group");
        matrix_notes(f, m);
        fprintf(f, "each flow of the groups:\n");
        for (int i = 0; i < rs->n; i++)
            if (!strcmp(rs->v[i].test, test) && is_flow(&rs->v[i]))
                print_group_line(f, &rs->v[i], "  ");
    } else if (layout == GQ_LAYOUT_LOCAL) {
        for (int i = 0; i < rs->n; i++) {
            const gq_record *r = &rs->v[i];
            if (!strcmp(r->test, test) && is_flow(r))
                put_cell(m, 0, false, r->dst.index, r);
        }
        print_matrix(f, m, title, NULL);
        matrix_notes(f, m);
    } else {
        bool host = layout == GQ_LAYOUT_HOST_GPU;
        for (int i = 0; i < rs->n; i++) {
            const gq_record *r = &rs->v[i];
            if (strcmp(r->test, test) || !is_flow(r))
                continue;
            int row, col;
            gq_record_cell(r, &row, &col);
            put_cell(m, row, host, col, r);
        }
        if (layout == GQ_LAYOUT_GPU_BIDIR) {
            char t1[300];
            bool nvbw = !strncmp(test, "device_to_device_bidirectional", 30);
            bool rd = strstr(test, "_read_") != NULL;
            if (nvbw)
                snprintf(t1, sizeof t1, "%s %s bandwidth (GB/s)", title, rd ? "Read1" : "Write1");
            else
                snprintf(t1, sizeof t1, "%s, each direction (row GPU executing)", title);
            print_matrix(f, m, t1, NULL);
            matrix_notes(f, m);
            fallback_note(f, rs, test);
            cellmap *tot = calloc(1, sizeof *tot);
            if (!tot) {
                free(m);
                return GQ_E_NOMEM;
            }
            {
                tot->ncols = m->ncols;
                for (int i = 0; i < rs->n; i++) {
                    const gq_record *r = &rs->v[i];
                    if (strcmp(r->test, test) || !r->sum || r->ngpus != 2)
                        continue;
                    put_cell(tot, r->gpus[0], false, r->gpus[1], r);
                    put_cell(tot, r->gpus[1], false, r->gpus[0], r);
                }
                if (nvbw)
                    snprintf(t1, sizeof t1, "%s Total bandwidth (GB/s)", title);
                else
                    snprintf(t1, sizeof t1, "%s, both directions summed", title);
                fputc('\n', f);
                print_matrix(f, tot, t1, NULL);
                matrix_notes(f, tot);
                free(tot);
            }
        } else {
            print_matrix(f, m, title, NULL);
            matrix_notes(f, m);
            fallback_note(f, rs, test);
            if (layout == GQ_LAYOUT_HOST_GPU || layout == GQ_LAYOUT_GPU_GPU)
                print_aggregates(f, rs, test);
        }
    }
    free(m);
    return GQ_OK;
}

/* GPU sets (seed 000's table): per GPU, then aggregates and sums. */
static void render_set(FILE *f, const gq_recordset *rs, const char *test, const gq_test *t)
{
    fprintf(f, "%s\n", t ? t->title : test);
    int last_group = -1;
    for (int i = 0; i < rs->n; i++) {
        const gq_record *r = &rs->v[i];
        if (strcmp(r->test, test))
            continue;
        if (r->group != last_group) {
            char gl[256], h[32];
            int k = i;
            /* the group's GPU set is on its aggregate, further down */
            for (int x = i; x < rs->n; x++)
                if (rs->v[x].group == r->group && !strcmp(rs->v[x].test, test) &&
                    (rs->v[x].aggregate || rs->v[x].sum)) {
                    k = x;
                    break;
                }
            fmt_gpus(rs->v[k].gpus, rs->v[k].ngpus, gl, sizeof gl);
            gq_endpoint he = r->src.kind == GQ_EP_HOST ? r->src : r->dst;
            fprintf(f, "GPUs %s, host buffers on %s:\n", gl, gq_rec_endpoint(he, h, sizeof h));
            last_group = r->group;
        }
        if (is_flow(r)) {
            char g[32];
            gq_endpoint ge = r->src.kind == GQ_EP_GPU ? r->src : r->dst;
            fprintf(f, "  %-7s %s: ", gq_rec_endpoint(ge, g, sizeof g), gq_direction_name(r->direction));
            if (r->value.n == 0 || !r->valid) {
                char fl[128];
                fprintf(f, "%s [%s] %s\n", r->value.n ? "INVALID" : "ERR",
                        gq_flags_str(r->flags, fl, sizeof fl), r->error);
            } else {
                fprintf(f, "%8.2f GB/s (spread %.2f%%)\n", r->value.median, 100.0 * r->value.spread);
            }
        } else {
            print_group_line(f, r, "  ");
        }
    }
}

int gq_render_table(FILE *f, const gq_topo *topo, const gq_recordset *rs)
{
    bool simulated = topo && topo->simulated;
    for (int i = 0; rs && i < rs->n; i++)
        simulated |= rs->v[i].simulated;
    const char *where = "";
    if (topo)
        where = simulated || !topo->hostname[0] ? topo->source : topo->hostname;
    fprintf(f, "gpuqual results%s%s%s; GB/s = 10^9 bytes/s\n", where[0] ? " on " : "", where,
            simulated ? " (simulated)" : "");
    if (topo && topo->numa_nodes == 1)
        fprintf(f, "note: the platform shows one NUMA node%s; host buffers cannot be placed per socket\n",
                topo->is_vm ? " (a VM)" : "");
    if (!rs || rs->n == 0) {
        fprintf(f, "no results\n");
        return GQ_OK;
    }
    for (int i = 0; i < rs->n; i++) {
        const char *test = rs->v[i].test;
        bool seen = false;
        for (int k = 0; k < i && !seen; k++)
            seen = !strcmp(rs->v[k].test, test);
        if (seen)
            continue;
        const gq_test *t = gq_catalog_find(test);
        gq_layout layout;
        if (t) {
            layout = t->layout;
        } else {
            layout = GQ_LAYOUT_GPU_GPU;
            for (int k = i; k < rs->n; k++)
                if (!strcmp(rs->v[k].test, test) &&
                    (rs->v[k].src.kind == GQ_EP_HOST || rs->v[k].dst.kind == GQ_EP_HOST))
                    layout = GQ_LAYOUT_HOST_GPU;
        }
        fprintf(f, "\nRunning %s.\n", test);
        if (layout == GQ_LAYOUT_SET)
            render_set(f, rs, test, t);
        else if (render_cells(f, topo, rs, test, t, layout))
            return GQ_E_NOMEM;
    }
    return GQ_OK;
}
