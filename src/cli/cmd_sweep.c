/* gpuqual sweep: a buffer-size sweep of chosen paths or catalog tests, and
 * the fit t = a + s/B of each (analysis/sweepfit.h): fixed cost a, asymptotic
 * bandwidth B and the half-bandwidth size n1/2 = a*B (seed 001 section 6). */
#include <jansson.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/domains.h"
#include "analysis/probes.h"
#include "analysis/sweepfit.h"
#include "cli/commands.h"
#include "cli/common.h"
#include "exec/plan_run.h"
#include "measure/catalog.h"
#include "measure/harness.h"
#include "measure/journal.h"
#include "core/units.h"
#include "render/render.h"

#define MAX_SIZES 64
#define MAX_PATHS 64

typedef struct sweep_opts {
    gq_common c;
    const char *pair, *h2d, *d2h, *test;
    bool read, write;
    const char *method;
    const char *sizes;
    uint64_t min, max;
    bool min_seen, max_seen;
    int rounds;
} sweep_opts;

#define OFF(f) offsetof(sweep_opts, f)
/* clang-format off */
static const gq_opt sweep_own_opts[] = {
    {.name = "pair", .type = GQ_OPT_STR, .off = OFF(pair), .arg = "PAIRS",
     .help = "GPU pairs to sweep one at a time, SRC:DST, e.g. 0:1,0:4 (staged where there is no P2P)"},
    {.name = "h2d", .type = GQ_OPT_STR, .off = OFF(h2d), .arg = "LIST",
     .help = "host -> GPU copies to sweep, one GPU at a time: 0,1 or 0-3 or all"},
    {.name = "d2h", .type = GQ_OPT_STR, .off = OFF(d2h), .arg = "LIST",
     .help = "GPU -> host copies to sweep, one GPU at a time"},
    {.name = "test", .shortname = 't', .type = GQ_OPT_STR, .off = OFF(test), .arg = "NAME[,NAME]",
     .help = "catalog tests to sweep (gpuqual run --list), e.g. host_to_device_memcpy_ce"},
    {.name = "read", .type = GQ_OPT_FLAG, .off = OFF(read), .help = "pairs: the destination GPU pulls (default)"},
    {.name = "write", .type = GQ_OPT_FLAG, .off = OFF(write), .help = "pairs: the source GPU pushes"},
    {.name = "method", .shortname = 'm', .type = GQ_OPT_ENUM, .off = OFF(method), .def = "ce", .arg = "ce|sm",
     .help = "pairs: copy engine or SM copy kernel", .choices = "ce,sm"},
    {.name = "sizes", .type = GQ_OPT_STR, .off = OFF(sizes), .arg = "LIST",
     .help = "buffer sizes to sweep, e.g. 1M,4M,16M,64M (instead of --min/--max; a bare number is MiB)"},
    {.name = "min", .type = GQ_OPT_SIZE, .off = OFF(min), .def = "4K", .arg = "SIZE",
     .help = "smallest buffer; sizes double up to --max (a bare number is MiB)", .unit = GQ_MiB, .lo = 1,
     .hi = 1e15, .seen_off = OFF(min_seen)},
    {.name = "max", .type = GQ_OPT_SIZE, .off = OFF(max), .def = "1G", .arg = "SIZE",
     .help = "largest buffer", .unit = GQ_MiB, .lo = 1, .hi = 1e15, .seen_off = OFF(max_seen)},
    {.name = "rounds", .shortname = 'i', .type = GQ_OPT_INT, .off = OFF(rounds), .def = "5", .arg = "N",
     .help = "rounds per size (median, min, max, spread)", .lo = 1, .hi = GQ_MAX_ROUNDS},
    GQ_OPT_END,
};
/* clang-format on */
#undef OFF

static const gq_opt *const tabs[] = {gq_common_output_opts, gq_common_backend_opts, sweep_own_opts};
#define NTABS ((int)(sizeof tabs / sizeof tabs[0]))

static void help(void)
{
    printf("usage: gpuqual sweep [--pair 0:1,..] [--h2d LIST] [--d2h LIST] [--test NAME,..]\n"
           "                     [--sizes LIST | --min 4K --max 1G] [options]\n\n"
           "Measure each chosen path at every buffer size (default 4 KiB to 1 GiB in powers of two) and\n"
           "fit the time of one copy to t = a + s/B: a is the fixed cost of a transfer (us), B the\n"
           "asymptotic bandwidth (GB/s = 10^9 B/s) and n1/2 = a*B the buffer size that reaches half of B.\n"
           "Paths: --pair SRC:DST (one pair at a time), --h2d / --d2h GPU lists (one GPU at a time), or\n"
           "--test NAME for any bandwidth test of the catalog (every series it produces is fitted).\n"
           "With none of them: host -> GPU on the first GPU, and the first two GPUs as a pair.\n\n"
           "options:\n");
    gq_opts_help(stdout, tabs, NTABS);
}

/* What one sweep step runs: a probe (pair or host path), or a catalog test. */
typedef struct path {
    bool is_test;
    const gq_test *test;
    gq_probe pr;
} path;

/* A series: the records of one figure across sizes. */
typedef struct series {
    int first; /* a record of the series (for its labels) */
    int n;
    int rec[MAX_SIZES];
    gq_sweepfit fit;
    int fit_rc;
    char fit_error[200];
} series;

static int parse_sizes(const char *s, uint64_t *out, int *n, gq_err *err)
{
    *n = 0;
    if (!*s)
        return gq_err_set(err, GQ_E_USAGE, "--sizes: empty list, expected e.g. 1M,4M,16M,64M");
    const char *p = s;
    while (1) {
        const char *c = strchr(p, ',');
        size_t l = c ? (size_t)(c - p) : strlen(p);
        char item[32];
        gq_err e;
        if (l == 0 || l >= sizeof item)
            return gq_err_set(err, GQ_E_USAGE,
                              "--sizes '%s': empty or overlong item, expected e.g. 1M,4M,16M", s);
        memcpy(item, p, l);
        item[l] = 0;
        uint64_t v;
        if (gq_parse_size(item, GQ_MiB, &v, &e))
            return gq_err_set(err, GQ_E_USAGE, "--sizes '%s': %s", s, e.msg);
        bool dup = false;
        for (int i = 0; i < *n; i++)
            dup |= out[i] == v;
        if (!dup) {
            if (*n >= MAX_SIZES)
                return gq_err_set(err, GQ_E_USAGE, "--sizes: more than %d sizes", MAX_SIZES);
            out[(*n)++] = v;
        }
        if (!c)
            break;
        p = c + 1;
    }
    /* ascending, so the table reads from small to large */
    for (int a = 1; a < *n; a++)
        for (int b = a; b > 0 && out[b] < out[b - 1]; b--) {
            uint64_t t = out[b];
            out[b] = out[b - 1];
            out[b - 1] = t;
        }
    return GQ_OK;
}

static bool same_series(const gq_record *a, const gq_record *b)
{
    if (strcmp(a->test, b->test) || a->method != b->method || a->direction != b->direction ||
        a->aggregate != b->aggregate || a->sum != b->sum || a->is_latency != b->is_latency)
        return false;
    if (a->src.kind != b->src.kind || a->src.index != b->src.index || a->dst.kind != b->dst.kind ||
        a->dst.index != b->dst.index)
        return false;
    if (a->aggregate || a->sum) {
        if (a->ngpus != b->ngpus)
            return false;
        for (int i = 0; i < a->ngpus; i++)
            if (a->gpus[i] != b->gpus[i])
                return false;
    }
    return a->exec_gpu == b->exec_gpu;
}

static const char *series_name(const gq_record *r, char *buf, size_t n)
{
    char e1[32], e2[32], set[160];
    if (r->aggregate || r->sum) {
        gq_domains_set_str(r->gpus, r->ngpus, set, sizeof set);
        snprintf(buf, n, "%s %s of GPUs %s (%s, %s)", r->sum ? "sum" : "aggregate",
                 gq_direction_name(r->direction), set, r->test, gq_method_name(r->method));
    } else {
        snprintf(buf, n, "%s %s -> %s (%s, %s)", gq_direction_name(r->direction),
                 gq_endpoint_str(r->src, e1, sizeof e1), gq_endpoint_str(r->dst, e2, sizeof e2), r->test,
                 gq_method_name(r->method));
    }
    return buf;
}

/* n1/2 is rarely a power of two: one decimal in the nearest binary unit. */
static const char *fmt_bytes(double b, char *buf, size_t n)
{
    if (b >= (double)GQ_GiB)
        snprintf(buf, n, "%.1f GiB", b / (double)GQ_GiB);
    else if (b >= (double)GQ_MiB)
        snprintf(buf, n, "%.1f MiB", b / (double)GQ_MiB);
    else if (b >= (double)GQ_KiB)
        snprintf(buf, n, "%.1f KiB", b / (double)GQ_KiB);
    else
        snprintf(buf, n, "%.0f B", b);
    return buf;
}

static void print_series(FILE *f, const gq_recordset *rs, const series *s)
{
    char name[320], sz[32];
    fprintf(f, "%s\n", series_name(&rs->v[s->first], name, sizeof name));
    fprintf(f, "  %10s %10s %8s %12s %10s\n", "size", "GB/s", "spread", "us/copy", "fit GB/s");
    for (int i = 0; i < s->n; i++) {
        const gq_record *r = &rs->v[s->rec[i]];
        char v[32] = "invalid", sp[16] = "-", t[32] = "-", fit[32] = "-";
        if (r->valid && r->value.median > 0) {
            snprintf(v, sizeof v, "%.2f", r->value.median);
            snprintf(sp, sizeof sp, "%.1f%%", 100 * r->value.spread);
            snprintf(t, sizeof t, "%.2f", (double)r->bytes / (r->value.median * 1e3));
        }
        if (!s->fit_rc)
            snprintf(fit, sizeof fit, "%.2f", gq_sweepfit_predict_gbps(&s->fit, r->bytes));
        fprintf(f, "  %10s %10s %8s %12s %10s%s%s\n", gq_fmt_size(r->bytes, sz, sizeof sz), v, sp, t, fit,
                r->valid ? "" : "  ", r->valid ? "" : r->error);
    }
    if (!s->fit_rc)
        fprintf(f,
                "  fit t = a + s/B:  a = %.2f us   B = %.2f GB/s   n1/2 = %s   (rms %.1f%%, %d of %d points "
                "kept)\n\n",
                s->fit.a_us, s->fit.bw_gbps, fmt_bytes(s->fit.half_bytes, sz, sizeof sz),
                100 * s->fit.rms_rel, s->fit.npoints - s->fit.noutliers, s->fit.npoints);
    else
        fprintf(f, "  no fit: %s\n\n", s->fit_error);
}

static json_t *series_json(const gq_recordset *rs, const series *s)
{
    const gq_record *r0 = &rs->v[s->first];
    char e1[32], e2[32];
    json_t *j = json_object(), *pts = json_array();
    json_object_set_new(j, "test", json_string(r0->test));
    json_object_set_new(j, "method", json_string(gq_method_name(r0->method)));
    json_object_set_new(j, "src", json_string(gq_endpoint_str(r0->src, e1, sizeof e1)));
    json_object_set_new(j, "dst", json_string(gq_endpoint_str(r0->dst, e2, sizeof e2)));
    json_object_set_new(j, "direction", json_string(gq_direction_name(r0->direction)));
    json_object_set_new(j, "aggregate", json_boolean(r0->aggregate));
    json_object_set_new(j, "sum", json_boolean(r0->sum));
    for (int i = 0; i < s->n; i++) {
        const gq_record *r = &rs->v[s->rec[i]];
        json_array_append_new(pts, json_pack("{s:I,s:o,s:o,s:b,s:i}", "bytes", (json_int_t)r->bytes, "gbps",
                                             r->valid ? json_real(r->value.median) : json_null(), "spread",
                                             r->value.n ? json_real(r->value.spread) : json_null(), "valid",
                                             r->valid, "record", s->rec[i]));
    }
    json_object_set_new(j, "points", pts);
    if (!s->fit_rc) {
        json_object_set_new(j, "fit",
                            json_pack("{s:f,s:f,s:f,s:f,s:i,s:i}", "fixed_us", s->fit.a_us, "bandwidth_gbps",
                                      s->fit.bw_gbps, "half_bytes", s->fit.half_bytes, "rms_rel",
                                      s->fit.rms_rel, "points", s->fit.npoints, "outliers",
                                      s->fit.noutliers));
        json_object_set_new(j, "fit_error", json_null());
    } else {
        json_object_set_new(j, "fit", json_null());
        json_object_set_new(j, "fit_error", json_string(s->fit_error));
    }
    return j;
}

static int add_host_paths(const char *list, gq_direction d, const gq_topo *topo, path *paths, int *np,
                          gq_err *err)
{
    int g[GQ_MAX_GPUS], n;
    int rc = gq_parse_gpu_list(list, topo->ngpu, g, &n, err);
    if (rc)
        return gq_err_prefix(err, "%s", d == GQ_DIR_H2D ? "--h2d" : "--d2h");
    for (int i = 0; i < n; i++) {
        if (*np >= MAX_PATHS)
            return gq_err_set(err, GQ_E_USAGE, "sweep: more than %d paths", MAX_PATHS);
        path *p = &paths[(*np)++];
        memset(p, 0, sizeof *p);
        p->pr.kind = GQ_PROBE_HOST_ALONE;
        p->pr.direction = d;
        p->pr.ngpus = 1;
        p->pr.gpus[0] = g[i];
    }
    return GQ_OK;
}

static int add_pairs(const char *list, const gq_topo *topo, path *paths, int *np, gq_err *err)
{
    int s[MAX_PATHS], d[MAX_PATHS], n;
    int rc = gq_probes_parse_pairs(list, "--pair", false, topo->ngpu, s, d, MAX_PATHS, &n, err);
    if (rc)
        return rc;
    for (int i = 0; i < n; i++) {
        if (*np >= MAX_PATHS)
            return gq_err_set(err, GQ_E_USAGE, "sweep: more than %d paths", MAX_PATHS);
        path *p = &paths[(*np)++];
        memset(p, 0, sizeof *p);
        p->pr.kind = GQ_PROBE_MATRIX;
        p->pr.direction = GQ_DIR_P2P;
        p->pr.npairs = 1;
        p->pr.src[0] = s[i];
        p->pr.dst[0] = d[i];
        p->pr.staged[0] = topo->p2p_cuda[s[i]][d[i]] == 0;
    }
    return GQ_OK;
}

/* A measurement that fails as a whole (GQ_E_BACKEND, GQ_E_FAIL) is in the
 * records; anything else stops the sweep. */
static gq_exec_next after_item(void *arg, gq_exec_step *s, int rc, const gq_err *e)
{
    return rc && rc != GQ_E_BACKEND && rc != GQ_E_FAIL && rc != GQ_E_INTR ? GQ_EXEC_ABORT : GQ_EXEC_NEXT;
}

int gq_cmd_sweep(int argc, char **argv)
{
    sweep_opts o;
    gq_err err = {0};
    gq_backend be = {0};
    gq_journal jr = {0};
    bool opened = false, want_help = false, have_journal = false, interrupted = false;
    const char *pos[2];
    int npos = 0, rc = GQ_OK, exit_code = GQ_EXIT_OK;
    json_t *doc = NULL, *options = NULL, *sections = NULL;
    gq_recordset rs = {0};
    gq_topo *topo = calloc(1, sizeof *topo);
    gq_measurement *m = calloc(1, sizeof *m);
    path *paths = calloc(MAX_PATHS, sizeof *paths);
    series *ser = NULL;
    int nser = 0, np = 0, nsizes = 0;
    uint64_t sizes[MAX_SIZES];
    const gq_test *tests[64];
    int ntests = 0;

    memset(&o, 0, sizeof o);
    if (!topo || !m || !paths) {
        rc = gq_err_set(&err, GQ_E_NOMEM, "out of memory");
        goto fail;
    }
    if ((rc = gq_opts_parse(tabs, NTABS, &o, argc, argv, 2, pos, 2, &npos, &want_help, &err)))
        goto fail;
    if (want_help) {
        help();
        goto out;
    }
    if (npos > 0) {
        rc = gq_err_set(&err, GQ_E_USAGE,
                        "sweep: unexpected argument '%s'; choose paths with --pair, --h2d, --d2h or --test",
                        pos[0]);
        goto fail;
    }
    if (o.read && o.write) {
        rc = gq_err_set(&err, GQ_E_USAGE, "sweep: --read and --write exclude each other; give one of them");
        goto fail;
    }
    if (strcmp(o.c.format, "table") && strcmp(o.c.format, "json") && strcmp(o.c.format, "csv")) {
        rc = gq_err_set(&err, GQ_E_USAGE, "sweep: --format %s does not apply; use table, json or csv",
                        o.c.format);
        goto fail;
    }
    /* sizes */
    if (o.sizes) {
        if (o.min_seen || o.max_seen) {
            rc = gq_err_set(&err, GQ_E_USAGE, "sweep: give either --sizes or --min/--max, not both");
            goto fail;
        }
        if ((rc = parse_sizes(o.sizes, sizes, &nsizes, &err)))
            goto fail;
    } else {
        char a[32], b[32];
        if (o.min > o.max) {
            rc = gq_err_set(&err, GQ_E_USAGE, "sweep: --min %s is larger than --max %s; give --min <= --max",
                            gq_fmt_size(o.min, a, sizeof a), gq_fmt_size(o.max, b, sizeof b));
            goto fail;
        }
        for (uint64_t s = o.min; s <= o.max && nsizes < MAX_SIZES; s *= 2)
            sizes[nsizes++] = s;
        if (nsizes >= MAX_SIZES) {
            rc = gq_err_set(&err, GQ_E_USAGE, "sweep: --min %s to --max %s is more than %d sizes",
                            gq_fmt_size(o.min, a, sizeof a), gq_fmt_size(o.max, b, sizeof b), MAX_SIZES - 1);
            goto fail;
        }
    }
    if (nsizes < 2) {
        char a[32];
        rc = gq_err_set(&err, GQ_E_USAGE,
                        "sweep: only one buffer size (%s); a sweep needs at least 2 sizes to fit t = a + s/B",
                        gq_fmt_size(sizes[0], a, sizeof a));
        goto fail;
    }
    /* paths that can be checked before discovery */
    if (o.pair) {
        int s[MAX_PATHS], d[MAX_PATHS], n;
        if ((rc = gq_probes_parse_pairs(o.pair, "--pair", false, 0, s, d, MAX_PATHS, &n, &err)))
            goto fail;
    }
    if (o.test && (rc = gq_catalog_select(o.test, NULL, tests, 64, &ntests, &err)))
        goto fail;
    for (int i = 0; i < ntests; i++)
        if (tests[i]->kind != GQ_TEST_BANDWIDTH) {
            rc = gq_err_set(&err, GQ_E_USAGE, "sweep: %s measures latency; sweep takes bandwidth tests",
                            tests[i]->name);
            goto fail;
        }
    if ((rc = gq_cli_check_writable(o.c.json_path, &err)))
        goto fail;

    if ((rc = gq_cli_open(&o.c, &be, topo, &err)))
        goto fail;
    opened = true;
    for (int si = 0; si < nsizes; si++)
        if ((rc = gq_cli_check_buffer(&be, &o.c, "--sizes/--max", sizes[si], &err)))
            goto fail;
    if (o.pair && (rc = add_pairs(o.pair, topo, paths, &np, &err)))
        goto fail;
    if (o.h2d && (rc = add_host_paths(o.h2d, GQ_DIR_H2D, topo, paths, &np, &err)))
        goto fail;
    if (o.d2h && (rc = add_host_paths(o.d2h, GQ_DIR_D2H, topo, paths, &np, &err)))
        goto fail;
    for (int i = 0; i < ntests && np < MAX_PATHS; i++) {
        paths[np].is_test = true;
        paths[np].test = tests[i];
        np++;
    }
    if (np == 0) {
        char def[32];
        snprintf(def, sizeof def, "%d", o.c.gpus_sel[0]);
        if ((rc = add_host_paths(def, GQ_DIR_H2D, topo, paths, &np, &err)))
            goto fail;
        if (o.c.ngpus_sel >= 2) {
            snprintf(def, sizeof def, "%d:%d", o.c.gpus_sel[0], o.c.gpus_sel[1]);
            if ((rc = add_pairs(def, topo, paths, &np, &err)))
                goto fail;
        }
    }
    if (o.c.journal) {
        if ((rc = gq_journal_open(&jr, o.c.journal, &err)))
            goto fail;
        have_journal = true;
    }
    if (!o.c.quiet)
        for (int i = 0; i < topo->nwarnings; i++)
            gq_cli_warn("%s", topo->warnings[i]);

    gq_harness_opts ho;
    gq_harness_opts_default(&ho);
    ho.rounds = o.rounds;
    gq_method meth = !strcmp(o.method, "sm") ? GQ_METHOD_SM : GQ_METHOD_CE;
    bool progress = !o.c.quiet && gq_cli_tty();
    for (int pi = 0; pi < np && !interrupted; pi++) {
        for (int si = 0; si < nsizes && !interrupted; si++) {
            char sz[32];
            if (progress)
                fprintf(stderr, "\rsweep: path %d/%d, %s ...        ", pi + 1, np,
                        gq_fmt_size(sizes[si], sz, sizeof sz));
            int mrc = GQ_OK;
            if (!paths[pi].is_test) {
                gq_probe_measurement(&paths[pi].pr, sizes[si], meth, !o.write, m);
                if (paths[pi].pr.kind == GQ_PROBE_HOST_ALONE)
                    snprintf(m->test, sizeof m->test, "%s",
                             paths[pi].pr.direction == GQ_DIR_H2D ? "host_to_device_memcpy_ce"
                                                                  : "device_to_host_memcpy_ce");
                mrc = gq_exec_one(&be, topo, m, &ho, have_journal ? &jr : NULL, &rs, &err);
            } else {
                gq_plan plan;
                memset(&plan, 0, sizeof plan);
                gq_plan_opts po = {.bytes = sizes[si],
                                   .host_numa = GQ_NUMA_LOCAL,
                                   .numa_nodes = topo->numa_nodes > 0 ? topo->numa_nodes : 1,
                                   .ngpus = o.c.ngpus_sel};
                memcpy(po.gpus, o.c.gpus_sel, sizeof po.gpus);
                if ((rc = gq_catalog_plan(paths[pi].test, topo, &po, &plan, &err))) {
                    gq_plan_free(&plan);
                    goto fail;
                }
                if (plan.n == 0) {
                    gq_cli_warn("sweep: %s skipped: %s", paths[pi].test->name, plan.note);
                    gq_plan_free(&plan);
                    break;
                }
                gq_exec_opts xo = {.skip_latency = true, .after = after_item};
                gq_exec_result xr;
                mrc = gq_exec_plans(&be, topo, &plan, 1, &ho, have_journal ? &jr : NULL, &xo, &rs, &xr, &err);
                interrupted = xr.interrupted;
                gq_plan_free(&plan);
            }
            if (mrc == GQ_E_INTR || gq_cli_interrupted())
                interrupted = true;
            else if (mrc && mrc != GQ_E_BACKEND && mrc != GQ_E_FAIL) {
                rc = mrc;
                goto fail;
            }
        }
    }
    if (progress)
        fprintf(stderr, "\r%60s\r", "");

    /* series and fits */
    ser = calloc((size_t)(rs.n > 0 ? rs.n : 1), sizeof *ser);
    if (!ser) {
        rc = gq_err_set(&err, GQ_E_NOMEM, "out of memory");
        goto fail;
    }
    for (int i = 0; i < rs.n; i++) {
        if (rs.v[i].is_latency)
            continue;
        int k;
        for (k = 0; k < nser; k++)
            if (same_series(&rs.v[ser[k].first], &rs.v[i]))
                break;
        if (k == nser) {
            ser[nser].first = i;
            nser++;
        }
        if (ser[k].n < MAX_SIZES)
            ser[k].rec[ser[k].n++] = i;
    }
    for (int k = 0; k < nser; k++) {
        uint64_t b[MAX_SIZES];
        double g[MAX_SIZES];
        int n = 0;
        for (int i = 0; i < ser[k].n; i++) {
            const gq_record *r = &rs.v[ser[k].rec[i]];
            if (!gq_domains_usable(r, NULL))
                continue;
            b[n] = r->bytes;
            g[n] = r->value.median;
            n++;
        }
        gq_err fe = {0};
        ser[k].fit_rc = gq_sweepfit_compute(b, g, n, &ser[k].fit, &fe);
        snprintf(ser[k].fit_error, sizeof ser[k].fit_error, "%.190s", fe.msg);
    }

    bool need_doc = o.c.json_path || !strcmp(o.c.format, "json");
    if (need_doc) {
        options = gq_opts_to_json(tabs, NTABS, &o);
        sections = json_object();
        json_t *sw = json_object(), *arr = json_array(), *sz = json_array();
        if (!options || !sections || !sw || !arr || !sz) {
            json_decref(sw);
            json_decref(arr);
            json_decref(sz);
            rc = gq_err_set(&err, GQ_E_NOMEM, "out of memory");
            goto fail;
        }
        for (int i = 0; i < nsizes; i++)
            json_array_append_new(sz, json_integer((json_int_t)sizes[i]));
        for (int k = 0; k < nser; k++)
            json_array_append_new(arr, series_json(&rs, &ser[k]));
        json_object_set_new(sw, "sizes", sz);
        json_object_set_new(sw, "model",
                            json_string("t = a + s/B; fixed_us = a, bandwidth_gbps = B, half_bytes = a*B"));
        json_object_set_new(sw, "series", arr);
        json_object_set_new(sections, "sweep", sw);
        gq_doc d = {.kind = "sweep",
                    .options = options,
                    .topo = topo,
                    .records = &rs,
                    .sections = sections,
                    .simulated = gq_backend_simulated(&be),
                    .incomplete = interrupted};
        if (!(doc = gq_doc_to_json(&d))) {
            rc = gq_err_set(&err, GQ_E_NOMEM, "out of memory");
            goto fail;
        }
    }
    if (o.c.json_path && (rc = gq_json_write_file(doc, o.c.json_path, &err)))
        goto fail;
    if (!strcmp(o.c.format, "json")) {
        json_dumpf(doc, stdout, JSON_INDENT(2));
        fputc('\n', stdout);
    } else if (!strcmp(o.c.format, "csv")) {
        gq_render_csv(stdout, &rs);
    } else {
        printf("sweep: %d rounds per size%s; GB/s = 10^9 B/s\n\n", o.rounds,
               topo->simulated ? " (simulated)" : "");
        for (int k = 0; k < nser; k++)
            print_series(stdout, &rs, &ser[k]);
    }
    fflush(stdout);
    if (interrupted) {
        if (have_journal)
            gq_cli_warn("interrupted; finished measurements are in %s", jr.path);
        exit_code = GQ_EXIT_INCOMPLETE;
    } else {
        for (int i = 0; i < rs.n; i++)
            if (gq_record_failed(&rs.v[i]))
                exit_code = GQ_EXIT_FAIL;
    }
    goto out;

fail:
    gq_cli_error("%s", err.msg);
    exit_code = gq_status_exit_code(rc);
out:
    if (have_journal)
        gq_journal_close(&jr);
    json_decref(doc);
    json_decref(options);
    json_decref(sections);
    gq_records_free(&rs);
    if (opened)
        gq_backend_close(&be);
    free(ser);
    free(topo);
    free(m);
    free(paths);
    return exit_code;
}
