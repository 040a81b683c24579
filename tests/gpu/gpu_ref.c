/* Reference figures for the GPU tests: see gpu_ref.h. */
#include "gpu_ref.h"

#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "measure/catalog.h"
#include "render/render.h"

#define P2P_MAX_MATS 8
#define P2P_MAX_GPUS 8

typedef struct ref_test {
    char name[80];
    int rows, cols;
    double *v; /* rows x cols; NAN where nvbandwidth printed N/A */
} ref_test;

typedef struct p2p_mat {
    char name[96];
    int n;
    bool latency; /* the tool prints µs; kept in ns */
    double v[P2P_MAX_GPUS][P2P_MAX_GPUS];
} p2p_mat;

struct gpu_ref {
    char source[700];
    bool same_call;
    ref_test *t;
    int nt;
    p2p_mat p2p[P2P_MAX_MATS];
    int np;
};

static void say(char *why, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(char *why, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, n, fmt, ap);
    va_end(ap);
}

static char *slurp(const char *path, char *why, size_t n)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        say(why, n, "cannot open %s: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    while (buf) {
        size_t got = fread(buf + len, 1, cap - len - 1, f);
        len += got;
        if (len + 1 < cap)
            break;
        char *nb = realloc(buf, cap * 2);
        if (!nb) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = nb;
        cap *= 2;
    }
    bool bad = ferror(f);
    fclose(f);
    if (!buf || bad) {
        free(buf);
        say(why, n, "cannot read %s", path);
        return NULL;
    }
    buf[len] = '\0';
    return buf;
}

static ref_test *add_test(gpu_ref *r, const char *name, int rows, int cols)
{
    ref_test *nt = realloc(r->t, sizeof *nt * (size_t)(r->nt + 1));
    if (!nt)
        return NULL;
    r->t = nt;
    ref_test *t = &r->t[r->nt];
    memset(t, 0, sizeof *t);
    t->v = malloc(sizeof *t->v * (size_t)(rows * cols > 0 ? rows * cols : 1));
    if (!t->v)
        return NULL;
    r->nt++;
    snprintf(t->name, sizeof t->name, "%s", name);
    t->rows = rows;
    t->cols = cols;
    for (int i = 0; i < rows * cols; i++)
        t->v[i] = NAN;
    return t;
}

/* A figure as nvbandwidth writes it: a string ("55.3336", "N/A") or a number. */
static double cell_value(const json_t *c)
{
    if (json_is_number(c))
        return json_number_value(c);
    if (!json_is_string(c))
        return NAN;
    const char *s = json_string_value(c);
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno)
        return NAN;
    while (*end && isspace((unsigned char)*end))
        end++;
    return *end ? NAN : v;
}

/* nvbandwidth's JSON; ngpu >= 0: its GPU list must have that many. */
static bool load_nvbw_json(gpu_ref *r, const char *path, int ngpu, char *why, size_t n)
{
    char *text = slurp(path, why, n);
    if (!text)
        return false;
    const char *start = strchr(text, '{'); /* nvbandwidth may print lines before its JSON */
    json_error_t je;
    json_t *root = start ? json_loads(start, JSON_DISABLE_EOF_CHECK, &je) : NULL;
    free(text);
    if (!root) {
        say(why, n, "%s is not nvbandwidth's JSON: %s", path, start ? je.text : "no '{' in it");
        return false;
    }
    bool ok = false;
    json_t *body = json_object_get(root, "nvbandwidth");
    json_t *cases = json_object_get(body, "testcases");
    json_t *devs = json_object_get(body, "GPU Device list");
    if (!json_is_array(cases)) {
        say(why, n, "%s has no nvbandwidth.testcases array", path);
        goto out;
    }
    if (ngpu >= 0 && json_is_array(devs) && (int)json_array_size(devs) != ngpu) {
        say(why, n, "%s lists %zu GPUs; this machine has %d", path, json_array_size(devs), ngpu);
        goto out;
    }
    size_t i;
    json_t *c;
    json_array_foreach(cases, i, c)
    {
        const char *name = json_string_value(json_object_get(c, "name"));
        const char *status = json_string_value(json_object_get(c, "status"));
        json_t *m = json_object_get(c, "bandwidth_matrix");
        if (!m)
            m = json_object_get(c, "latency_matrix");
        if (!name || (status && strcmp(status, "Passed")) || !json_is_array(m) || json_array_size(m) == 0)
            continue; /* a test nvbandwidth did not pass gives no reference */
        int rows = (int)json_array_size(m), cols = 0;
        for (int k = 0; k < rows; k++) {
            json_t *row = json_array_get(m, (size_t)k);
            if (json_is_array(row) && (int)json_array_size(row) > cols)
                cols = (int)json_array_size(row);
        }
        ref_test *t = add_test(r, name, rows, cols);
        if (!t) {
            say(why, n, "out of memory");
            goto out;
        }
        for (int k = 0; k < rows; k++) {
            json_t *row = json_array_get(m, (size_t)k);
            for (int col = 0; json_is_array(row) && col < (int)json_array_size(row); col++) {
                double v = cell_value(json_array_get(row, (size_t)col));
                t->v[k * cols + col] = isfinite(v) && v > 0 ? v : NAN;
            }
        }
    }
    ok = r->nt > 0;
    if (!ok)
        say(why, n, "%s has no test that nvbandwidth passed", path);
out:
    json_decref(root);
    return ok;
}

/* The 1-GPU TSV: "# ..." comments, a header "test<TAB>unit<TAB>gpu0...", then
 * one line per test with its row-0 cells. */
static bool load_tsv(gpu_ref *r, const char *path, char *why, size_t n)
{
    char *text = slurp(path, why, n);
    if (!text)
        return false;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (line[0] == '#' || line[0] == '\0' || !strncmp(line, "test\t", 5))
            continue;
        char *f[1 + 1 + P2P_MAX_GPUS];
        int nf = 0;
        char *fs = NULL;
        for (char *tok = strtok_r(line, "\t\r", &fs); tok && nf < (int)(sizeof f / sizeof f[0]);
             tok = strtok_r(NULL, "\t\r", &fs))
            f[nf++] = tok;
        if (nf < 3) {
            say(why, n, "%s: a line with fewer than 3 fields (%s)", path, nf ? f[0] : "");
            free(text);
            return false;
        }
        ref_test *t = add_test(r, f[0], 1, nf - 2);
        if (!t) {
            free(text);
            say(why, n, "out of memory");
            return false;
        }
        for (int k = 2; k < nf; k++) {
            char *end = NULL;
            double v = strtod(f[k], &end);
            if (end == f[k] || *end || !(v > 0)) {
                say(why, n, "%s: %s: '%s' is not a positive figure", path, f[0], f[k]);
                free(text);
                return false;
            }
            t->v[k - 2] = v;
        }
    }
    free(text);
    if (r->nt == 0)
        say(why, n, "%s holds no figure", path);
    return r->nt > 0;
}

/* p2pBandwidthLatencyTest's text output: each matrix is a heading line, a
 * line of column labels, then one line per GPU: "  0 3910.53  38.21". */
static bool load_p2p(gpu_ref *r, const char *path, char *why, size_t n)
{
    char *text = slurp(path, why, n);
    if (!text)
        return false;
    char *save = NULL;
    p2p_mat *cur = NULL;
    bool want_labels = false;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (strstr(line, " Matrix (")) {
            cur = NULL;
            if (r->np == P2P_MAX_MATS || strstr(line, "Connectivity"))
                continue;
            cur = &r->p2p[r->np++];
            memset(cur, 0, sizeof *cur);
            const char *end = strstr(line, " Matrix (");
            snprintf(cur->name, sizeof cur->name, "%.*s Matrix", (int)(end - line), line);
            cur->latency = strstr(line, "(us)") != NULL;
            for (int i = 0; i < P2P_MAX_GPUS; i++)
                for (int j = 0; j < P2P_MAX_GPUS; j++)
                    cur->v[i][j] = NAN;
            want_labels = true;
            continue;
        }
        if (!cur)
            continue;
        if (want_labels) { /* "   D\D     0      1" or "   GPU     0      1" */
            want_labels = false;
            continue;
        }
        char *p = line, *end = NULL;
        long row = strtol(p, &end, 10);
        if (end == p || row < 0 || row >= P2P_MAX_GPUS) {
            cur = NULL; /* the matrix ended (a blank line, or the CPU part of a latency matrix) */
            continue;
        }
        int col = 0;
        for (p = end; col < P2P_MAX_GPUS; col++) {
            double v = strtod(p, &end);
            if (end == p)
                break;
            cur->v[row][col] = cur->latency ? v * 1000.0 : v;
            p = end;
        }
        if (row + 1 > cur->n)
            cur->n = (int)row + 1;
    }
    free(text);
    if (r->np == 0)
        say(why, n, "%s holds no matrix", path);
    return r->np > 0;
}

static bool is_h200(const gq_gpu_info *g)
{
    return !strcmp(g->name, "NVIDIA H200");
}

/* Which saved reference fits this machine: 1 (1 x H200, PCIe Gen5 x16), 2
 * (2 x H200 joined by 18 NVLinks), or 0 with the reason in why[]. */
static int saved_kind(const gq_topo *topo, char *why, size_t n)
{
    int ng = topo->ngpu;
    const char *name = ng > 0 ? topo->gpu[0].name : "no GPU";
    bool h200 = ng > 0;
    for (int i = 0; i < ng; i++)
        h200 = h200 && is_h200(&topo->gpu[i]);
    if (h200 && ng == 1) {
        const gq_gpu_info *g = &topo->gpu[0];
        if (g->pcie_gen_max > 0 && g->pcie_width_max > 0 &&
            (g->pcie_gen_max != 5 || g->pcie_width_max != 16)) {
            say(why, n, "no saved reference for 1 x %s on PCIe Gen%d x%d (the saved one is Gen5 x16)", name,
                g->pcie_gen_max, g->pcie_width_max);
            return 0;
        }
        return 1;
    }
    if (h200 && ng == 2) {
        int links = topo->nvlinks[0][1];
        if (links == 18)
            return 2;
        say(why, n, "no saved reference for 2 x %s joined by %s NVLinks (the saved one: 18)", name,
            links < 0    ? "an unknown number of"
            : links == 0 ? "no"
                         : "fewer or more");
        return 0;
    }
    say(why, n,
        "no saved reference for this machine: %d GPU(s), GPU 0 %s (saved: 1 x NVIDIA H200, 2 x NVIDIA H200 "
        "with 18 NVLinks); give nvbandwidth's JSON from this machine (GQ_REF_JSON) to check the bounds",
        ng, name);
    return 0;
}

static const char *ref_dir(char *buf, size_t n)
{
    const char *dir = getenv("GQ_REF_DIR");
    if (dir && dir[0])
        return dir;
#ifdef GQ_SOURCE_DIR
    snprintf(buf, n, "%s/bench/reference", GQ_SOURCE_DIR);
    return buf;
#else
    (void)buf;
    (void)n;
    return NULL;
#endif
}

gpu_ref *gpu_ref_open(const gq_topo *topo, bool *failed, char *why, size_t n)
{
    *failed = false;
    gpu_ref *r = calloc(1, sizeof *r);
    if (!r) {
        *failed = true;
        say(why, n, "out of memory");
        return NULL;
    }
    char mwhy[700] = "", dbuf[600], path[800], p2p[800];
    int kind = saved_kind(topo, mwhy, sizeof mwhy);
    const char *dir = ref_dir(dbuf, sizeof dbuf);
    if (dir) {
        snprintf(p2p, sizeof p2p, "%s/h200x2-p2pBandwidthLatencyTest.txt", dir);
    } else if (kind) {
        say(why, n, "no reference directory (set GQ_REF_DIR)");
        *failed = true;
        gpu_ref_close(r);
        return NULL;
    }
    const char *json = getenv("GQ_REF_JSON");
    if (json && json[0]) {
        /* nvbandwidth from the same call; p2pBandwidthLatencyTest's saved figures still apply on their
         * machine */
        if (!load_nvbw_json(r, json, topo->ngpu, why, n) || (kind == 2 && !load_p2p(r, p2p, why, n))) {
            *failed = true;
            gpu_ref_close(r);
            return NULL;
        }
        r->same_call = true;
        snprintf(r->source, sizeof r->source, "nvbandwidth measured in this call (GQ_REF_JSON=%s)%s%s", json,
                 kind == 2 ? "; p2pBandwidthLatencyTest saved for 2 x H200 NV18: " : "",
                 kind == 2 ? p2p : "");
        return r;
    }
    if (kind == 1) {
        snprintf(path, sizeof path, "%s/h200x1-nvbandwidth-v0.8.tsv", dir);
        if (!load_tsv(r, path, why, n)) {
            *failed = true;
            gpu_ref_close(r);
            return NULL;
        }
        snprintf(r->source, sizeof r->source, "nvbandwidth v0.8 saved for 1 x H200 PCIe Gen5 x16 (%s)", path);
        return r;
    }
    if (kind == 2) {
        snprintf(path, sizeof path, "%s/h200x2-nvbandwidth-v0.8.json", dir);
        if (!load_nvbw_json(r, path, -1, why, n) || !load_p2p(r, p2p, why, n)) {
            *failed = true;
            gpu_ref_close(r);
            return NULL;
        }
        snprintf(r->source, sizeof r->source,
                 "nvbandwidth v0.8 and p2pBandwidthLatencyTest saved for 2 x H200 NV18 (%s, %s)", path, p2p);
        return r;
    }
    say(why, n, "%s", mwhy);
    gpu_ref_close(r);
    return NULL;
}

void gpu_ref_close(gpu_ref *r)
{
    if (!r)
        return;
    for (int i = 0; i < r->nt; i++)
        free(r->t[i].v);
    free(r->t);
    free(r);
}

const char *gpu_ref_source(const gpu_ref *r)
{
    return r ? r->source : "none";
}

bool gpu_ref_same_call(const gpu_ref *r)
{
    return r && r->same_call;
}

static const ref_test *find(const gpu_ref *r, const char *test)
{
    for (int i = 0; r && i < r->nt; i++)
        if (!strcmp(r->t[i].name, test))
            return &r->t[i];
    return NULL;
}

bool gpu_ref_nvbw_shape(const gpu_ref *r, const char *test, int *rows, int *cols)
{
    const ref_test *t = find(r, test);
    if (!t)
        return false;
    *rows = t->rows;
    *cols = t->cols;
    return true;
}

bool gpu_ref_nvbw(const gpu_ref *r, const char *test, int row, int col, double *v)
{
    const ref_test *t = find(r, test);
    if (!t || row < 0 || col < 0 || row >= t->rows || col >= t->cols)
        return false;
    double x = t->v[row * t->cols + col];
    if (!(isfinite(x) && x > 0))
        return false;
    *v = x;
    return true;
}

bool gpu_ref_p2p(const gpu_ref *r, const char *matrix, int row, int col, double *v)
{
    for (int i = 0; r && i < r->np; i++) {
        const p2p_mat *m = &r->p2p[i];
        if (strcmp(m->name, matrix))
            continue;
        if (row < 0 || col < 0 || row >= m->n || col >= P2P_MAX_GPUS)
            return false;
        double x = m->v[row][col];
        if (!(isfinite(x) && x > 0))
            return false;
        *v = x;
        return true;
    }
    return false;
}

double gpu_ref_bound(double ref, bool latency)
{
    return latency ? ref / GPU_REF_FRACTION : ref * GPU_REF_FRACTION;
}

bool gpu_ref_meets(double v, double ref, bool latency)
{
    double b = gpu_ref_bound(ref, latency);
    return latency ? v <= b : v >= b;
}

/* nvbandwidth v0.8's own figures for the bidirectional host copy-engine tests
 * move between runs on the same kind of H200 machine (GB/s):
 *  - host_to_device_bidirectional_memcpy_ce: 39.19 and 47.99 in two calls on
 *    1 x H200 on 2026-12-01 (bench/results/gpu-tests-h200x1-2026-12-01), 47.01
 *    saved for that machine; 38.47 and 44.53 in the text and JSON runs saved
 *    for 2 x H200: (47.99 - 39.19) / 47.99 = 18.3 %;
 *  - host_to_all_bidirectional_memcpy_ce on one GPU is the same copy pair:
 *    41.38 and 41.83 in the two 1 x H200 calls, and gpuqual read 36.42 against
 *    41.38 in the same call; it takes the same 18.3 %.
 * The other directions moved less (device_to_host_bidirectional_memcpy_ce
 * 48.35-51.06, 5.3 %; all_to_host 49.47-49.49) and keep the plain bound. */
static const struct {
    const char *test;
    double variation;
} variable[] = {
    {"host_to_device_bidirectional_memcpy_ce", 0.183},
    {"host_to_all_bidirectional_memcpy_ce", 0.183},
};

double gpu_ref_variation(const char *test)
{
    for (size_t i = 0; test && i < sizeof variable / sizeof variable[0]; i++)
        if (!strcmp(test, variable[i].test))
            return variable[i].variation;
    return 0;
}

double gpu_ref_bound_for(const char *test, double ref, bool latency)
{
    double w = 1 - gpu_ref_variation(test);
    return latency ? gpu_ref_bound(ref, latency) / w : gpu_ref_bound(ref, latency) * w;
}

bool gpu_ref_meets_for(const char *test, double v, double ref, bool latency)
{
    double b = gpu_ref_bound_for(test, ref, latency);
    return latency ? v <= b : v >= b;
}

/* gpuqual's figure for (row, col) of matrix m (nvbandwidth's layout); NAN when none. */
static double our_cell(const json_t *m, int row, int col, int ref_rows, const gq_test *t)
{
    int rows = (int)json_array_size(m);
    if (rows == ref_rows)
        return cell_value(json_array_get(json_array_get(m, (size_t)row), (size_t)col));
    if (ref_rows != 1 || t->layout != GQ_LAYOUT_HOST_GPU)
        return NAN;
    /* host tests: one row per host node the records used; the reference has one */
    double hit = NAN;
    int n = 0;
    for (int k = 0; k < rows; k++) {
        double v = cell_value(json_array_get(json_array_get(m, (size_t)k), (size_t)col));
        if (isfinite(v)) {
            hit = v;
            n++;
        }
    }
    return n == 1 ? hit : NAN;
}

int gpu_ref_each_cell(const gpu_ref *r, const gq_topo *topo, const gq_recordset *rs,
                      void (*fn)(const gpu_ref_cell *c, void *arg), void *arg)
{
    json_t *doc = gq_render_nvbandwidth_json(topo, rs, "tests/gpu");
    json_t *cases = json_object_get(json_object_get(doc, "nvbandwidth"), "testcases");
    if (!json_is_array(cases)) {
        json_decref(doc);
        return -1;
    }
    int cells = 0;
    size_t i;
    json_t *c;
    json_array_foreach(cases, i, c)
    {
        const char *name = json_string_value(json_object_get(c, "name"));
        const gq_test *t = name ? gq_catalog_find(name) : NULL;
        const ref_test *rt = name ? find(r, name) : NULL;
        const json_t *m = json_object_get(c, "bandwidth_matrix");
        if (!t || !t->nvbandwidth || !rt || !json_is_array(m))
            continue;
        for (int row = 0; row < rt->rows; row++)
            for (int col = 0; col < rt->cols; col++) {
                double ref = rt->v[row * rt->cols + col];
                if (!(isfinite(ref) && ref > 0))
                    continue;
                gpu_ref_cell cell = {.test = rt->name,
                                     .row = row,
                                     .col = col,
                                     .v = our_cell(m, row, col, rt->rows, t),
                                     .ref = ref,
                                     .latency = t->kind == GQ_TEST_LATENCY};
                fn(&cell, arg);
                cells++;
            }
    }
    json_decref(doc);
    return cells;
}
