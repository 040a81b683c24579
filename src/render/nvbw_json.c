/* nvbandwidth's JSON output, for parsers written against nvbandwidth v0.8:
 * keys in nvbandwidth's (alphabetical) order, cells as strings with six
 * significant digits or "N/A", bidirectional GPU pairs as the three stacked
 * matrices (first direction, second direction, total). A cell whose figure
 * is invalid is "N/A": such parsers cannot see our flags, so they must not
 * see the number either. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "measure/catalog.h"
#include "render/render.h"
#include "render/render_util.h"

#define MAXR (GQ_MAX_NUMA + 2)

static json_t *cell(const gq_record *r, double *sum)
{
    if (!r || !r->valid || r->value.n == 0 || !isfinite(r->value.median))
        return json_string("N/A");
    char buf[32];
    snprintf(buf, sizeof buf, "%g", r->value.median);
    *sum += r->value.median;
    return json_string(buf);
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

static json_t *testcase(const gq_topo *topo, const gq_recordset *rs, const char *test, const gq_test *t)
{
    int nc = gq_rec_ncols(topo, rs, test);
    double sum = 0;
    bool ok = true;
    json_t *mat = json_array();
    char desc[300];
    snprintf(desc, sizeof desc, "%s", t->title);
    for (int i = 0; i < rs->n; i++)
        if (!strcmp(rs->v[i].test, test) && !rs->v[i].valid)
            ok = false;
    switch (t->layout) {
    case GQ_LAYOUT_HOST_GPU: {
        int rows[MAXR], nr = 0;
        for (int i = 0; i < rs->n && nr < MAXR; i++) {
            const gq_record *r = &rs->v[i];
            if (strcmp(r->test, test) || r->aggregate || r->sum)
                continue;
            int row, col;
            gq_record_cell(r, &row, &col);
            bool seen = false;
            for (int k = 0; k < nr; k++)
                seen |= rows[k] == row;
            if (!seen)
                rows[nr++] = row;
        }
        for (int k = 0; k < nr; k++) {
            json_t *line = json_array();
            for (int c = 0; c < nc; c++)
                json_array_append_new(line, cell(flow_at(rs, test, rows[k], c), &sum));
            json_array_append_new(mat, line);
        }
        break;
    }
    case GQ_LAYOUT_GPU_GPU:
        for (int r = 0; r < nc; r++) {
            json_t *line = json_array();
            for (int c = 0; c < nc; c++)
                json_array_append_new(line,
                                      r == c ? json_string("N/A") : cell(flow_at(rs, test, r, c), &sum));
            json_array_append_new(mat, line);
        }
        break;
    case GQ_LAYOUT_GPU_BIDIR: {
        bool nvbw = t->nvbandwidth;
        /* nvbandwidth stacks direction 1, direction 2 and the total */
        for (int part = nvbw ? 0 : 2; part < 3; part++) {
            double partsum = 0;
            for (int r = 0; r < nc; r++) {
                json_t *line = json_array();
                for (int c = 0; c < nc; c++) {
                    if (r == c) {
                        json_array_append_new(line, json_string("N/A"));
                        continue;
                    }
                    const gq_record *x = pair_rec(rs, test, r, c, part == 0 ? r : c, part == 2);
                    json_array_append_new(line, cell(x, &partsum));
                }
                json_array_append_new(mat, line);
            }
            if (part == 2)
                sum += partsum;
        }
        if (nvbw)
            snprintf(desc, sizeof desc, "%s Total bandwidth (GB/s)", t->title);
        break;
    }
    case GQ_LAYOUT_TARGET: {
        json_t *line = json_array();
        for (int c = 0; c < nc; c++) {
            const gq_record *hit = NULL;
            for (int i = 0; i < rs->n; i++) {
                const gq_record *r = &rs->v[i];
                if (!strcmp(r->test, test) && r->aggregate && gq_test_target(t, r) == c)
                    hit = r;
            }
            json_array_append_new(line, cell(hit, &sum));
        }
        json_array_append_new(mat, line);
        break;
    }
    case GQ_LAYOUT_LOCAL: {
        json_t *line = json_array();
        for (int c = 0; c < nc; c++)
            json_array_append_new(line, cell(flow_at(rs, test, c, c), &sum));
        json_array_append_new(mat, line);
        break;
    }
    case GQ_LAYOUT_SET: json_decref(mat); return NULL;
    }
    json_t *o = json_object();
    json_object_set_new(o, "bandwidth_description", json_string(desc));
    json_object_set_new(o, "bandwidth_matrix", mat);
    json_object_set_new(o, "name", json_string(test));
    json_object_set_new(o, "status", json_string(ok ? "Passed" : "Error"));
    json_object_set_new(o, "sum", gq_json_num(sum));
    return o;
}

/* "0000:00:06.0" -> "00000000:00:06", nvbandwidth's form. */
static void nvbw_bus(const char *bus, char *out, size_t n)
{
    unsigned dom = 0, b = 0, d = 0, fn = 0;
    if (sscanf(bus, "%x:%x:%x.%x", &dom, &b, &d, &fn) >= 3)
        snprintf(out, n, "%08x:%02x:%02x", dom, b, d);
    else
        snprintf(out, n, "%s", bus);
}

json_t *gq_render_nvbandwidth_json(const gq_topo *topo, const gq_recordset *rs, const char *version)
{
    json_t *body = json_object();
    json_object_set_new(
        body, "CUDA Runtime Version",
        json_integer(topo && topo->cuda_runtime_version >= 0 ? topo->cuda_runtime_version : 0));
    json_object_set_new(body, "Driver Version", json_string(topo ? topo->driver_version : ""));
    json_t *devs = json_array();
    for (int i = 0; topo && i < topo->ngpu; i++) {
        char bus[40], line[300];
        nvbw_bus(topo->gpu[i].pci_bus_id, bus, sizeof bus);
        snprintf(line, sizeof line, "%d: %s (%s): (%s)", i, topo->gpu[i].name, bus,
                 topo->hostname[0] ? topo->hostname : topo->source);
        json_array_append_new(devs, json_string(line));
    }
    json_object_set_new(body, "GPU Device list", devs);
    char gv[96];
    snprintf(gv, sizeof gv, "gpuqual %s%s", version ? version : "unknown",
             (topo && topo->simulated) ? " (simulated)" : "");
    json_object_set_new(body, "git_version", json_string(gv));
    json_t *cases = json_array();
    for (int i = 0; rs && i < rs->n; i++) {
        const char *test = rs->v[i].test;
        bool seen = false;
        for (int k = 0; k < i && !seen; k++)
            seen = !strcmp(rs->v[k].test, test);
        const gq_test *t = gq_catalog_find(test);
        if (seen || !t)
            continue;
        json_t *c = testcase(topo, rs, test, t);
        if (c)
            json_array_append_new(cases, c);
    }
    json_object_set_new(body, "testcases", cases);
    json_object_set_new(body, "version", json_string(gv));
    json_t *root = json_object();
    json_object_set_new(root, "nvbandwidth", body);
    return root;
}
