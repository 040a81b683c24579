/* nvbandwidth's JSON output, for parsers written against nvbandwidth v0.8:
 * keys in nvbandwidth's (alphabetical) order, cells as strings with six
 * significant digits or "N/A", bidirectional GPU pairs as the three stacked
 * matrices (first direction, second direction, total) with the last one's
 * description and sum, as nvbandwidth's JSON writer leaves them. A cell
 * whose figure is invalid is "N/A": such parsers cannot see our flags, so
 * they must not see the number either. A waived test is {name, status}
 * alone; an id that names no test is {name, status "ERROR"}. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "measure/catalog.h"
#include "render/nvbw.h"
#include "render/render.h"

static const char *status_name(gq_nvbw_status s)
{
    switch (s) {
    case GQ_NVBW_PASSED: return "Passed";
    case GQ_NVBW_WAIVED: return "Waived";
    case GQ_NVBW_ERROR: return "Error";
    case GQ_NVBW_NOTFOUND: return "ERROR";
    }
    return "Error";
}

static json_t *testcase(const gq_nvbw_result *r, bool verbose)
{
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(r->name));
    json_object_set_new(o, "status", json_string(status_name(r->status)));
    if (r->status == GQ_NVBW_NOTFOUND || r->status == GQ_NVBW_WAIVED || r->nmat == 0)
        return o;
    json_t *mat = json_array();
    double sum = 0, max = DBL_MIN, min = DBL_MAX;
    int count = 0;
    for (int k = 0; k < r->nmat; k++) {
        const gq_nvbw_matrix *m = &r->mat[k];
        sum = 0, max = DBL_MIN, min = DBL_MAX, count = 0; /* the last matrix's, as nvbandwidth keeps */
        for (int i = 0; i < m->rows; i++) {
            json_t *line = json_array();
            for (int c = 0; c < m->cols; c++) {
                double v = m->has[i][c] ? m->v[i][c] : 0.0;
                char buf[32];
                snprintf(buf, sizeof buf, "%g", v);
                json_array_append_new(line, json_string(m->has[i][c] ? buf : "N/A"));
                sum += v;
                max = v > max ? v : max;
                min = v < min ? v : min;
                count += v > 0;
            }
            json_array_append_new(mat, line);
        }
        json_object_set_new(o, "bandwidth_description", json_string(m->desc));
    }
    json_object_set_new(o, "bandwidth_matrix", mat);
    json_object_set_new(o, "sum", gq_json_num(sum));
    if (r->status == GQ_NVBW_ERROR)
        json_object_set_new(o, "error", json_string(r->msg));
    if (verbose) {
        json_object_set_new(o, "min", gq_json_num(min));
        json_object_set_new(o, "max", gq_json_num(max));
        json_object_set_new(o, "average", count ? gq_json_num(sum / count) : json_null());
    }
    return o;
}

/* The document, and in *cases_out (borrowed from it) its testcases array, for
 * a caller that appends more. */
static json_t *nvbw_doc(const gq_topo *topo, const gq_nvbw_result *res, int n, const gq_nvbw_info *in,
                        const char *error, json_t **cases_out)
{
    json_t *body = json_object();
    int cuda =
        topo ? (topo->cuda_driver_version > 0 ? topo->cuda_driver_version : topo->cuda_runtime_version) : 0;
    json_object_set_new(body, "CUDA Runtime Version", json_integer(cuda > 0 ? cuda : 0));
    json_object_set_new(body, "Driver Version", json_string(topo ? topo->driver_version : ""));
    json_t *devs = json_array();
    for (int i = 0; topo && i < topo->ngpu; i++) {
        char bus[40], line[300];
        gq_nvbw_bus(topo->gpu[i].pci_bus_id, bus, sizeof bus);
        snprintf(line, sizeof line, "%d: %s (%s): (%s)", i, topo->gpu[i].name, bus,
                 topo->hostname[0] ? topo->hostname : topo->source);
        json_array_append_new(devs, json_string(line));
    }
    json_object_set_new(body, "GPU Device list", devs);
    char gv[96];
    snprintf(gv, sizeof gv, "gpuqual %s%s", in->version ? in->version : "unknown",
             in->simulated ? " (simulated)" : "");
    json_object_set_new(body, "git_version", json_string(gv));
    json_t *cases = json_array();
    for (int i = 0; i < n; i++)
        json_array_append_new(cases, testcase(&res[i], in->verbose));
    json_object_set_new(body, "testcases", cases);
    *cases_out = cases;
    json_object_set_new(body, "version", json_string(gv));
    if (error)
        json_object_set_new(body, "error", json_string(error));
    if (in->warning)
        json_object_set_new(body, "warning", json_string(in->warning));
    json_t *root = json_object();
    json_object_set_new(root, "nvbandwidth", body);
    return root;
}

json_t *gq_nvbw_json(const gq_topo *topo, const gq_nvbw_result *res, int n, const gq_nvbw_info *in,
                     const char *error)
{
    json_t *cases;
    return nvbw_doc(topo, res, n, in, error, &cases);
}

void gq_nvbw_json_print(FILE *f, const json_t *doc)
{
    json_dumpf(doc, f, JSON_INDENT(2) | JSON_SORT_KEYS);
    fputs("\n\n", f);
}

json_t *gq_render_nvbandwidth_json(const gq_topo *topo, const gq_recordset *rs, const char *version)
{
    gq_nvbw_info in = {.version = version, .simulated = topo && topo->simulated};
    json_t *cases;
    json_t *doc = nvbw_doc(topo, NULL, 0, &in, NULL, &cases);
    gq_nvbw_result *res = malloc(sizeof *res);
    for (int i = 0; res && rs && i < rs->n; i++) {
        const char *test = rs->v[i].test;
        bool seen = false;
        for (int k = 0; k < i && !seen; k++)
            seen = !strcmp(rs->v[k].test, test);
        const gq_test *t = gq_catalog_find(test);
        if (seen || !t || t->layout == GQ_LAYOUT_SET)
            continue;
        gq_nvbw_build(topo, rs, test, false, res);
        json_array_append_new(cases, testcase(res, false));
    }
    free(res);
    return doc;
}
