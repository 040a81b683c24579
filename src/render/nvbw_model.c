/* nvbandwidth v0.8's test list and its matrices built from gpuqual's
 * records (nvbw.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "measure/catalog.h"
#include "render/nvbw.h"
#include "render/render_util.h"

/* The order of nvbandwidth v0.8's createTestcases() (nvbandwidth.cpp), and
 * the tests whose filter() asks for a GPU pair with peer access. */
const gq_nvbw_case gq_nvbw_cases[GQ_NVBW_NTESTS] = {
    {"host_to_device_memcpy_ce", false},
    {"device_to_host_memcpy_ce", false},
    {"host_to_device_bidirectional_memcpy_ce", false},
    {"device_to_host_bidirectional_memcpy_ce", false},
    {"device_to_device_memcpy_read_ce", true},
    {"device_to_device_memcpy_write_ce", true},
    {"device_to_device_bidirectional_memcpy_read_ce", true},
    {"device_to_device_bidirectional_memcpy_write_ce", true},
    {"all_to_host_memcpy_ce", false},
    {"all_to_host_bidirectional_memcpy_ce", false},
    {"host_to_all_memcpy_ce", false},
    {"host_to_all_bidirectional_memcpy_ce", false},
    {"all_to_one_write_ce", true},
    {"all_to_one_read_ce", true},
    {"one_to_all_write_ce", true},
    {"one_to_all_read_ce", true},
    {"host_to_device_memcpy_sm", false},
    {"device_to_host_memcpy_sm", false},
    {"host_to_device_bidirectional_memcpy_sm", false},
    {"device_to_host_bidirectional_memcpy_sm", false},
    {"device_to_device_memcpy_read_sm", true},
    {"device_to_device_memcpy_write_sm", true},
    {"device_to_device_bidirectional_memcpy_read_sm", true},
    {"device_to_device_bidirectional_memcpy_write_sm", true},
    {"all_to_host_memcpy_sm", false},
    {"all_to_host_bidirectional_memcpy_sm", false},
    {"host_to_all_memcpy_sm", false},
    {"host_to_all_bidirectional_memcpy_sm", false},
    {"all_to_one_write_sm", true},
    {"all_to_one_read_sm", true},
    {"one_to_all_write_sm", true},
    {"one_to_all_read_sm", true},
    {"host_device_latency_sm", false},
    {"device_to_device_latency_sm", true},
    {"device_local_copy", false},
};

int gq_nvbw_find(const char *id, char *msg, size_t n)
{
    char *end;
    long idx = strtol(id, &end, 10);
    if (*id && !*end) {
        if (idx < 0 || idx >= GQ_NVBW_NTESTS) {
            snprintf(msg, n, "Testcase index %s out of bound!", id);
            return -1;
        }
        return (int)idx;
    }
    for (int i = 0; i < GQ_NVBW_NTESTS; i++)
        if (!strcmp(gq_nvbw_cases[i].name, id))
            return i;
    snprintf(msg, n, "Testcase %s not found!", id);
    return -1;
}

static double figure(const gq_record *r, bool use_mean)
{
    if (!use_mean || r->value.n <= 0)
        return r->value.median;
    double s = 0;
    int n = r->value.n < GQ_MAX_ROUNDS ? r->value.n : GQ_MAX_ROUNDS;
    for (int i = 0; i < n; i++)
        s += r->samples[i];
    return s / n;
}

/* An invalid figure is "N/A", and its test's status is Error. */
static void set_error(gq_nvbw_result *out, const gq_record *r)
{
    if (out->status == GQ_NVBW_ERROR)
        return;
    out->status = GQ_NVBW_ERROR;
    snprintf(out->msg, sizeof out->msg, "%s", r->error[0] ? r->error : "a figure is invalid");
}

static void put(gq_nvbw_result *out, gq_nvbw_matrix *m, int row, int col, const gq_record *r, bool use_mean)
{
    if (!r || row < 0 || col < 0 || row >= m->rows || col >= m->cols)
        return;
    if (!r->valid || r->value.n == 0 || !isfinite(r->value.median)) {
        set_error(out, r);
        return;
    }
    if ((r->flags & GQ_FLAG_INCOMPLETE) && out->status != GQ_NVBW_ERROR) {
        /* cut by a Ctrl-C: the figure is kept, but its test never reads as passed */
        out->status = GQ_NVBW_ERROR;
        snprintf(out->msg, sizeof out->msg, "interrupted (Ctrl-C): a figure has fewer rounds than asked");
    }
    m->v[row][col] = figure(r, use_mean);
    m->has[row][col] = true;
}

/* The per-flow record at (row, col) of a test, or NULL. */
static const gq_record *flow_at(const gq_recordset *rs, const char *test, int row, int col)
{
    const gq_record *hit = NULL;
    for (int i = 0; i < rs->n; i++) {
        const gq_record *r = &rs->v[i];
        if (strcmp(r->test, test) || r->aggregate || r->sum)
            continue;
        int rr, cc;
        gq_record_cell(r, &rr, &cc);
        if (rr == row && cc == col)
            hit = r;
    }
    return hit;
}

/* Bidirectional pair {a,b}: the flow executed by `exec`, or the pair's sum. */
static const gq_record *pair_rec(const gq_recordset *rs, const char *test, int a, int b, int exec,
                                 bool want_sum)
{
    for (int i = 0; i < rs->n; i++) {
        const gq_record *r = &rs->v[i];
        if (strcmp(r->test, test) || r->aggregate || r->ngpus != 2)
            continue;
        bool pair = (r->gpus[0] == a && r->gpus[1] == b) || (r->gpus[0] == b && r->gpus[1] == a);
        if (!pair)
            continue;
        if (want_sum && r->sum)
            return r;
        if (!want_sum && !r->sum && r->exec_gpu == exec)
            return r;
    }
    return NULL;
}

static void host_rows(const gq_recordset *rs, const char *test, gq_nvbw_result *out, gq_nvbw_matrix *m,
                      bool use_mean)
{
    int key[GQ_NVBW_MAXROWS], nr = 0;
    for (int i = 0; i < rs->n; i++) {
        const gq_record *r = &rs->v[i];
        if (strcmp(r->test, test) || r->aggregate || r->sum)
            continue;
        int row, col, k = 0;
        gq_record_cell(r, &row, &col);
        while (k < nr && key[k] != row)
            k++;
        if (k == nr && nr < GQ_NVBW_MAXROWS)
            key[nr++] = row;
        if (k < nr) {
            m->rows = nr;
            put(out, m, k, col, r, use_mean);
        }
    }
    if (m->rows == 0)
        m->rows = 1;
}

static void bidir(const gq_recordset *rs, const gq_test *t, gq_nvbw_result *out, int nc, bool use_mean)
{
    const char *test = t->name, *title = t->title;
    bool write = strstr(test, "_write_") != NULL;
    static const char *const part_name[2][3] = {{"Read1", "Read2", "Total"}, {"Write1", "Write2", "Total"}};
    static const char *const part_key[2][3] = {{"read1", "read2", "total"}, {"write1", "write2", "total"}};
    /* another tool's bidirectional matrix (p2pBandwidthLatencyTest's) is the pair's sum alone */
    int first = t->nvbandwidth ? 0 : 2;
    out->nmat = 3 - first;
    for (int part = first; part < 3; part++) {
        gq_nvbw_matrix *m = &out->mat[part - first];
        m->rows = m->cols = nc;
        snprintf(m->key, sizeof m->key, "%s_%s", test, part_key[write][part]);
        if (!t->nvbandwidth)
            snprintf(m->key, sizeof m->key, "%s", test);
        if (t->nvbandwidth)
            snprintf(m->desc, sizeof m->desc, "%s %s bandwidth (GB/s)", title, part_name[write][part]);
        else
            snprintf(m->desc, sizeof m->desc, "%s", title);
        for (int r = 0; r < nc; r++)
            for (int c = 0; c < nc; c++)
                if (r != c)
                    put(out, m, r, c, pair_rec(rs, test, r, c, part == 0 ? r : c, part == 2), use_mean);
    }
}

void gq_nvbw_build(const gq_topo *topo, const gq_recordset *rs, const char *test, bool use_mean,
                   gq_nvbw_result *out)
{
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "%s", test);
    const gq_test *t = gq_catalog_find(test);
    for (int i = 0; i < rs->n; i++) {
        const gq_record *r = &rs->v[i];
        /* shown or not: a concurrent test whose flows did not overlap has no figures */
        if (!strcmp(r->test, test) && !r->valid)
            set_error(out, r);
    }
    if (!t)
        return;
    int nc = gq_rec_ncols(topo, rs, test);
    gq_nvbw_matrix *m = &out->mat[0];
    out->nmat = 1;
    m->cols = nc;
    m->latency = t->kind == GQ_TEST_LATENCY;
    snprintf(m->key, sizeof m->key, "%s", test);
    snprintf(m->desc, sizeof m->desc, "%s", t->title);
    switch (t->layout) {
    case GQ_LAYOUT_HOST_GPU: host_rows(rs, test, out, m, use_mean); break;
    case GQ_LAYOUT_GPU_GPU:
        m->rows = nc;
        for (int r = 0; r < nc; r++)
            for (int c = 0; c < nc; c++)
                if (r != c)
                    put(out, m, r, c, flow_at(rs, test, r, c), use_mean);
        break;
    case GQ_LAYOUT_GPU_BIDIR: bidir(rs, t, out, nc, use_mean); break;
    case GQ_LAYOUT_TARGET:
        m->rows = 1;
        for (int i = 0; i < rs->n; i++) {
            const gq_record *r = &rs->v[i];
            if (!strcmp(r->test, test) && r->aggregate)
                put(out, m, 0, gq_test_target(t, r), r, use_mean);
        }
        break;
    case GQ_LAYOUT_LOCAL:
        m->rows = 1;
        for (int c = 0; c < nc; c++)
            put(out, m, 0, c, flow_at(rs, test, c, c), use_mean);
        break;
    case GQ_LAYOUT_SET: out->nmat = 0; break;
    }
}
