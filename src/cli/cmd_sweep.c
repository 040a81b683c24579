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
#include "cli/progress.h"
#include "exec/plan_run.h"
#include "measure/catalog.h"
#include "measure/catalog_ids.h"
#include "measure/harness.h"
#include "measure/journal.h"
#include "core/units.h"
#include "render/render.h"

#define MAX_SIZES 64
#define MAX_PATHS 64

typedef struct sweep_opts {
    gq_common c; /* rounds and method from the shared tables */
    const char *pair, *h2d, *d2h, *test;
    bool read, write;
    const char *sizes;
    uint64_t min, max;
    bool min_seen, max_seen;
    /* checked by sweep_prepare */
    uint64_t size[MAX_SIZES];
    int nsizes;
    const gq_test *tests[64];
    int ntests;
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
    {.name = "sizes", .type = GQ_OPT_STR, .off = OFF(sizes), .arg = "LIST",
     .help = "buffer sizes to sweep, e.g. 1M,4M,16M,64M (instead of --min/--max; a bare number is MiB)"},
    {.name = "min", .type = GQ_OPT_SIZE, .off = OFF(min), .def = "4K", .arg = "SIZE",
     .help = "smallest buffer; sizes double up to --max (a bare number is MiB)", .unit = GQ_MiB, .lo = 1,
     .hi = 1099511627776.0, .seen_off = OFF(min_seen)},
    {.name = "max", .type = GQ_OPT_SIZE, .off = OFF(max), .def = "1G", .arg = "SIZE",
     .help = "largest buffer", .unit = GQ_MiB, .lo = 1, .hi = 1099511627776.0, .seen_off = OFF(max_seen)},
    GQ_OPT_END,
};
/* clang-format on */
#undef OFF

static const gq_opt *const tabs[] = {gq_common_output_opts, gq_common_backend_opts, sweep_own_opts,
                                     gq_common_rounds_opt, gq_common_method_opt};
#define NTABS ((int)(sizeof tabs / sizeof tabs[0]))

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
    int rc = gq_parse_gpu_list_opt(d == GQ_DIR_H2D ? "--h2d" : "--d2h", list, topo->ngpu, g, &n, err);
    if (rc)
        return rc;
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

/* The largest size swept must fit in every selected GPU's free memory; the
 * message names the option that set it (--max: the largest power-of-two
 * multiple of --min up to it). */
static int sweep_check_fit(gq_ctx *ctx, const sweep_opts *o)
{
    uint64_t big = 0;
    for (int si = 0; si < o->nsizes; si++)
        if (o->size[si] > big)
            big = o->size[si];
    gq_err e = {0};
    if (!big || gq_cli_check_buffer(&ctx->be, &o->c, "--max", big, &e) == GQ_OK)
        return GQ_OK;
    uint64_t freeb = UINT64_MAX, tot = 0;
    int gpu = -1;
    for (int i = 0; i < o->c.ngpus_sel; i++) {
        uint64_t f = 0;
        gq_err me = {0};
        if (ctx->be.ops->mem_info(&ctx->be, o->c.gpus_sel[i], &f, &tot, &me) == GQ_OK && f < freeb) {
            freeb = f;
            gpu = o->c.gpus_sel[i];
        }
    }
    if (gpu < 0) /* the check said no, the GPUs no longer say why */
        return gq_err_set(&ctx->err, e.code ? e.code : GQ_E_USAGE, "%s", e.msg);
    char a[32], b[32], m[32];
    unsigned long long fit_gib = (unsigned long long)(freeb / GQ_GiB);
    if (o->sizes)
        return gq_err_set(&ctx->err, GQ_E_USAGE,
                          "--sizes: %s does not fit: GPU %d has %.1f GiB free; give sizes up to %lluG",
                          gq_fmt_size(big, a, sizeof a), gpu, (double)freeb / GQ_GiB, fit_gib);
    if (big == o->max)
        return gq_err_set(&ctx->err, GQ_E_USAGE,
                          "--max %s does not fit: GPU %d has %.1f GiB free; give --max %lluG or less",
                          gq_fmt_size(big, a, sizeof a), gpu, (double)freeb / GQ_GiB, fit_gib);
    return gq_err_set(&ctx->err, GQ_E_USAGE,
                      "--max %s: the largest size swept, %s (--min %s doubled up to --max), does not fit: "
                      "GPU %d has %.1f GiB free; give --max %lluG or less",
                      gq_fmt_size(o->max, m, sizeof m), gq_fmt_size(big, a, sizeof a),
                      gq_fmt_size(o->min, b, sizeof b), gpu, (double)freeb / GQ_GiB, fit_gib);
}

/* The buffer sizes: --sizes, or powers of two from --min to --max. */
static int sweep_sizes(sweep_opts *o, gq_err *err)
{
    int rc;
    char a[32], b[32];
    if (o->sizes) {
        if (o->min_seen || o->max_seen)
            return gq_err_set(err, GQ_E_USAGE, "sweep: give either --sizes or --min/--max, not both");
        if ((rc = parse_sizes(o->sizes, o->size, &o->nsizes, err)))
            return rc;
    } else {
        if (o->min > o->max)
            return gq_err_set(err, GQ_E_USAGE, "sweep: --min %s is larger than --max %s; give --min <= --max",
                              gq_fmt_size(o->min, a, sizeof a), gq_fmt_size(o->max, b, sizeof b));
        for (uint64_t s = o->min; s <= o->max && o->nsizes < MAX_SIZES; s *= 2)
            o->size[o->nsizes++] = s;
        if (o->nsizes >= MAX_SIZES)
            return gq_err_set(err, GQ_E_USAGE, "sweep: --min %s to --max %s is more than %d sizes",
                              gq_fmt_size(o->min, a, sizeof a), gq_fmt_size(o->max, b, sizeof b),
                              MAX_SIZES - 1);
    }
    if (o->nsizes < 2)
        return gq_err_set(
            err, GQ_E_USAGE,
            "sweep: only one buffer size (%s); a sweep needs at least 2 sizes to fit t = a + s/B",
            gq_fmt_size(o->size[0], a, sizeof a));
    return GQ_OK;
}

static int sweep_prepare(gq_ctx *ctx)
{
    sweep_opts *o = ctx->opts;
    gq_err *err = &ctx->err;
    int rc;
    if (ctx->npos > 0)
        return gq_err_set(err, GQ_E_USAGE,
                          "sweep: unexpected argument '%s'; choose paths with --pair, --h2d, --d2h or --test",
                          ctx->pos[0]);
    if (o->read && o->write)
        return gq_err_set(err, GQ_E_USAGE, "sweep: --read and --write exclude each other; give one of them");
    if ((rc = sweep_sizes(o, err)))
        return rc;
    /* paths that can be checked before discovery */
    if (o->pair) {
        int s[MAX_PATHS], d[MAX_PATHS], n;
        if ((rc = gq_probes_parse_pairs(o->pair, "--pair", false, 0, s, d, MAX_PATHS, &n, err)))
            return rc;
    }
    if (o->test && (rc = gq_catalog_select(o->test, NULL, o->tests, 64, &o->ntests, err)))
        return rc;
    for (int i = 0; i < o->ntests; i++)
        if (o->tests[i]->kind != GQ_TEST_BANDWIDTH)
            return gq_err_set(err, GQ_E_USAGE, "sweep: %s measures latency; sweep takes bandwidth tests",
                              o->tests[i]->name);
    return GQ_OK;
}

/* The paths to sweep; with none given, host -> GPU on the first GPU and the
 * first two GPUs as a pair. */
static int sweep_paths(gq_ctx *ctx, path *paths, int *np)
{
    sweep_opts *o = ctx->opts;
    const gq_topo *topo = ctx->topo;
    gq_err *err = &ctx->err;
    int rc;
    if (o->pair && (rc = add_pairs(o->pair, topo, paths, np, err)))
        return rc;
    if (o->h2d && (rc = add_host_paths(o->h2d, GQ_DIR_H2D, topo, paths, np, err)))
        return rc;
    if (o->d2h && (rc = add_host_paths(o->d2h, GQ_DIR_D2H, topo, paths, np, err)))
        return rc;
    for (int i = 0; i < o->ntests && *np < MAX_PATHS; i++) {
        paths[*np].is_test = true;
        paths[*np].test = o->tests[i];
        (*np)++;
    }
    if (*np == 0) {
        char def[32];
        snprintf(def, sizeof def, "%d", o->c.gpus_sel[0]);
        if ((rc = add_host_paths(def, GQ_DIR_H2D, topo, paths, np, err)))
            return rc;
        if (o->c.ngpus_sel >= 2) {
            snprintf(def, sizeof def, "%d:%d", o->c.gpus_sel[0], o->c.gpus_sel[1]);
            if ((rc = add_pairs(def, topo, paths, np, err)))
                return rc;
        }
    }
    return GQ_OK;
}

/* One catalog test at one size: returns a planning error; *mrc is the
 * measurement's status, *skip that the test cannot run on these GPUs. */
static int measure_test(gq_ctx *ctx, const gq_test *t, uint64_t bytes, const gq_harness_opts *ho,
                        gq_recordset *rs, int *mrc, bool *skip, bool *interrupted)
{
    sweep_opts *o = ctx->opts;
    gq_plan plan;
    memset(&plan, 0, sizeof plan);
    gq_plan_opts po = {.bytes = bytes,
                       .host_numa = GQ_NUMA_LOCAL,
                       .numa_nodes = ctx->topo->numa_nodes > 0 ? ctx->topo->numa_nodes : 1,
                       .ngpus = o->c.ngpus_sel};
    memcpy(po.gpus, o->c.gpus_sel, sizeof po.gpus);
    int rc = gq_catalog_plan(t, ctx->topo, &po, &plan, &ctx->err);
    if (!rc && plan.n == 0) {
        gq_cli_warn("sweep: %s %s", t->name, plan.note); /* the note says "skipped: why" */
        *skip = true;
    } else if (!rc) {
        gq_exec_opts xo = {.skip_latency = true, .after = after_item};
        gq_exec_result xr;
        *mrc = gq_exec_plans(&ctx->be, ctx->topo, &plan, 1, ho, ctx->journal, &xo, rs, &xr, &ctx->err);
        *interrupted = xr.interrupted;
    }
    gq_plan_free(&plan);
    return rc;
}

/* Every path at every size, one at a time. GQ_E_INTR when interrupted. */
static int sweep_measure(gq_ctx *ctx, const path *paths, int np, gq_recordset *rs, bool *interrupted)
{
    sweep_opts *o = ctx->opts;
    gq_measurement *m = calloc(1, sizeof *m);
    if (!m)
        return gq_err_set(&ctx->err, GQ_E_NOMEM, "out of memory");
    gq_harness_opts ho;
    gq_harness_opts_default(&ho);
    ho.rounds = o->c.rounds;
    gq_method meth = !strcmp(o->c.method, "sm") ? GQ_METHOD_SM : GQ_METHOD_CE;
    gq_progress bar;
    gq_progress_init(&bar, gq_progress_wanted(o->c.quiet, o->c.format), (long)np * o->nsizes);
    int rc = GQ_OK;
    for (int pi = 0; pi < np && !*interrupted && !rc; pi++) {
        for (int si = 0; si < o->nsizes && !*interrupted; si++) {
            char sz[32];
            gq_progress_step(&bar, "path %d/%d, %s", pi + 1, np, gq_fmt_size(o->size[si], sz, sizeof sz));
            gq_progress_update(&bar, (long)pi * o->nsizes + si);
            int mrc = GQ_OK;
            bool skip = false;
            if (!paths[pi].is_test) {
                gq_probe_measurement(&paths[pi].pr, o->size[si], meth, !o->write, m);
                if (paths[pi].pr.kind == GQ_PROBE_HOST_ALONE)
                    snprintf(m->test, sizeof m->test, "%s",
                             paths[pi].pr.direction == GQ_DIR_H2D ? GQ_TID_HOST_TO_DEVICE_CE
                                                                  : GQ_TID_DEVICE_TO_HOST_CE);
                mrc = gq_exec_one(&ctx->be, ctx->topo, m, &ho, ctx->journal, rs, &ctx->err);
            } else if ((rc = measure_test(ctx, paths[pi].test, o->size[si], &ho, rs, &mrc, &skip,
                                          interrupted))) {
                break;
            }
            if (skip)
                break;
            if (mrc == GQ_E_INTR || gq_cli_interrupted())
                *interrupted = true;
            else if (mrc && mrc != GQ_E_BACKEND && mrc != GQ_E_FAIL) {
                rc = mrc;
                break;
            }
        }
    }
    if (!rc && !*interrupted)
        gq_progress_update(&bar, bar.total);
    gq_progress_clear(&bar);
    free(m);
    return rc;
}

/* Group the records into series (one figure across sizes) and fit each. */
static series *fit_series(const gq_recordset *rs, int *nser)
{
    series *ser = calloc((size_t)(rs->n > 0 ? rs->n : 1), sizeof *ser);
    *nser = 0;
    if (!ser)
        return NULL;
    for (int i = 0; i < rs->n; i++) {
        if (rs->v[i].is_latency)
            continue;
        int k;
        for (k = 0; k < *nser; k++)
            if (same_series(&rs->v[ser[k].first], &rs->v[i]))
                break;
        if (k == *nser) {
            ser[*nser].first = i;
            (*nser)++;
        }
        if (ser[k].n < MAX_SIZES)
            ser[k].rec[ser[k].n++] = i;
    }
    for (int k = 0; k < *nser; k++) {
        uint64_t b[MAX_SIZES];
        double g[MAX_SIZES];
        int n = 0;
        for (int i = 0; i < ser[k].n; i++) {
            const gq_record *r = &rs->v[ser[k].rec[i]];
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
    return ser;
}

/* The sweep document: options, records and the "sweep" section. */
static json_t *sweep_doc(gq_ctx *ctx, const gq_recordset *rs, const series *ser, int nser, bool interrupted)
{
    sweep_opts *o = ctx->opts;
    json_t *doc = NULL, *options = gq_opts_to_json(tabs, NTABS, o), *sections = json_object();
    json_t *sw = json_object(), *arr = json_array(), *sz = json_array();
    if (options && sections && sw && arr && sz) {
        for (int i = 0; i < o->nsizes; i++)
            json_array_append_new(sz, json_integer((json_int_t)o->size[i]));
        for (int k = 0; k < nser; k++)
            json_array_append_new(arr, series_json(rs, &ser[k]));
        json_object_set_new(sw, "sizes", sz);
        json_object_set_new(sw, "model",
                            json_string("t = a + s/B; fixed_us = a, bandwidth_gbps = B, half_bytes = a*B"));
        json_object_set_new(sw, "series", arr);
        json_object_set_new(sections, "sweep", sw);
        sw = arr = sz = NULL;
        gq_doc d = {.kind = "sweep",
                    .version = gq_version,
                    .git = gq_git_rev,
                    .options = options,
                    .topo = ctx->topo,
                    .records = rs,
                    .sections = sections,
                    .simulated = gq_backend_simulated(&ctx->be),
                    .incomplete = interrupted};
        doc = gq_doc_to_json(&d);
    }
    json_decref(sw);
    json_decref(arr);
    json_decref(sz);
    json_decref(options);
    json_decref(sections);
    return doc;
}

static int sweep_run(gq_ctx *ctx)
{
    sweep_opts *o = ctx->opts;
    gq_recordset rs = {0};
    series *ser = NULL;
    int nser = 0, np = 0, rc = GQ_OK;
    bool interrupted = false;
    path *paths = calloc(MAX_PATHS, sizeof *paths);
    if (!paths)
        return gq_err_set(&ctx->err, GQ_E_NOMEM, "out of memory");
    rc = sweep_check_fit(ctx, o);
    if (!rc)
        rc = sweep_paths(ctx, paths, &np);
    if (!rc && !o->c.quiet)
        for (int i = 0; i < ctx->topo->nwarnings; i++)
            gq_cli_warn("%s", ctx->topo->warnings[i]);
    if (!rc)
        rc = sweep_measure(ctx, paths, np, &rs, &interrupted);
    if (!rc && !(ser = fit_series(&rs, &nser)))
        rc = gq_err_set(&ctx->err, GQ_E_NOMEM, "out of memory");
    if (!rc && (o->c.json_path || !strcmp(o->c.format, "json")) &&
        !(ctx->doc = sweep_doc(ctx, &rs, ser, nser, interrupted)))
        rc = gq_err_set(&ctx->err, GQ_E_NOMEM, "out of memory");
    if (!rc) {
        ctx->doc_stdout = !strcmp(o->c.format, "json");
        if (!strcmp(o->c.format, "csv")) {
            gq_render_csv(stdout, &rs);
        } else if (!ctx->doc_stdout) {
            printf("sweep: %d rounds per size%s; GB/s = 10^9 B/s\n\n", o->c.rounds,
                   ctx->topo->simulated ? " (simulated)" : "");
            for (int k = 0; k < nser; k++)
                print_series(stdout, &rs, &ser[k]);
        }
        if (interrupted) {
            gq_cli_interrupted_note(!ctx->doc_stdout && strcmp(o->c.format, "csv"),
                                    ctx->journal ? ctx->journal->path : NULL);
            ctx->exit_code = GQ_EXIT_INCOMPLETE;
        } else {
            for (int i = 0; i < rs.n; i++)
                if (gq_record_failed(&rs.v[i]))
                    ctx->exit_code = GQ_EXIT_FAIL;
        }
    }
    gq_records_free(&rs);
    free(ser);
    free(paths);
    return rc;
}

static const gq_exit_doc sweep_exits[] = {
    {0, "every figure valid"},
    {1, "a figure failed or is invalid (an error, failed verification, an impossible figure)"},
    GQ_EXITDOC_USAGE,
    GQ_EXITDOC_NODEV,
    {5, "incomplete: interrupted; what was measured is written, marked incomplete"},
    GQ_EXITDOC_BUSY,
    GQ_EXITDOC_END,
};

const gq_frame_cmd gq_frame_sweep = {
    .name = "sweep",
    .summary = "buffer-size sweep; fits fixed cost and asymptotic bandwidth",
    .usage = "usage: gpuqual sweep [--pair 0:1,..] [--h2d LIST] [--d2h LIST] [--test NAME,..]\n"
             "                     [--sizes LIST | --min 4K --max 1G] [options]\n\n"
             "Measure each chosen path at every buffer size (default 4 KiB to 1 GiB in powers of two) and\n"
             "fit the time of one copy to t = a + s/B: a is the fixed cost of a transfer (us), B the\n"
             "asymptotic bandwidth (GB/s = 10^9 B/s) and n1/2 = a*B the buffer size that reaches half of B.\n"
             "Paths: --pair SRC:DST (one pair at a time), --h2d / --d2h GPU lists (one GPU at a time), or\n"
             "--test NAME for any bandwidth test of the catalog (every series it produces is fitted).\n"
             "With none of them: host -> GPU on the first GPU, and the first two GPUs as a pair.\n\n",
    .opts = {.name = "sweep", .formats = "table,json,csv", .tabs = tabs, .ntab = NTABS},
    .opts_size = sizeof(sweep_opts),
    .exits = sweep_exits,
    .examples = "  gpuqual sweep --h2d 0 --sizes 64K,1M,16M,256M --sim h200x2\n"
                "  gpuqual sweep --pair 0:1 --format csv\n",
    .maxpos = 2,
    .needs = GQ_FRAME_BACKEND | GQ_FRAME_JOURNAL | GQ_FRAME_MEASURES,
    .prepare = sweep_prepare,
    .run = sweep_run,
};
