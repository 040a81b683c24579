/* Composition of the card section: figures from records, verdicts, seed 001
 * §9's rows and the findings in plain sentences (analysis/card.h). Pure:
 * reads records, the topology and saved sections; never measures. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/bottlenecks.h"
#include "analysis/json_get.h"
#include "analysis/card.h"
#include "analysis/domains.h"
#include "analysis/sweepfit.h"
#include "core/units.h"
#include "render/analysis_render.h"

#define MAXG GQ_MAX_GPUS

static double sum_json(const json_t *a)
{
    double s = 0;
    size_t i;
    const json_t *v;
    json_array_foreach(a, i, v) if (json_is_number(v)) s += json_number_value(v);
    return s;
}

static json_t *jnum(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

static int jints(const json_t *a, int *out, int max)
{
    int n = 0;
    size_t i;
    const json_t *v;
    json_array_foreach(a, i, v) if (n < max && json_is_integer(v)) out[n++] = (int)json_integer_value(v);
    return n;
}

static json_t *ints_json(const int *v, int n)
{
    json_t *a = json_array();
    for (int i = 0; i < n; i++)
        json_array_append_new(a, json_integer(v[i]));
    return a;
}

static const char *f1(double v, char *b, size_t n)
{
    if (!isfinite(v))
        snprintf(b, n, "n/a");
    else if (fabs(v) >= 100 || (fabs(v) < 1e6 && v == floor(v)))
        snprintf(b, n, "%.0f", v);
    else if (fabs(v) >= 10)
        snprintf(b, n, "%.1f", v);
    else
        snprintf(b, n, "%.2f", v);
    return b;
}

/* A size that need not be a power of two: "74 KiB", "1.5 MiB". */
static const char *approx_size(double bytes, char *b, size_t n)
{
    if (!isfinite(bytes) || bytes < 1)
        snprintf(b, n, "n/a");
    else if (bytes >= GQ_GiB)
        snprintf(b, n, "%.1f GiB", bytes / GQ_GiB);
    else if (bytes >= GQ_MiB)
        snprintf(b, n, "%.1f MiB", bytes / GQ_MiB);
    else if (bytes >= GQ_KiB)
        snprintf(b, n, "%.0f KiB", bytes / GQ_KiB);
    else
        snprintf(b, n, "%.0f B", bytes);
    return b;
}

/* "52.6–53.8" or "53.0" */
static const char *range(double lo, double hi, char *b, size_t n)
{
    char x[32], y[32];
    f1(lo, x, sizeof x);
    f1(hi, y, sizeof y);
    if (!strcmp(x, y))
        snprintf(b, n, "%s", x);
    else
        snprintf(b, n, "%s–%s", x, y);
    return b;
}

/* ---- figures from records ---------------------------------------------------- */

static bool usable(const gq_record *r)
{
    return gq_domains_usable(r, NULL);
}

static bool main_candidate(const gq_record *r)
{
    return !r->is_latency && strncmp(r->test, GQ_CARD_TEST_SWEEP_PREFIX, strlen(GQ_CARD_TEST_SWEEP_PREFIX));
}

static uint64_t main_bytes(const gq_recordset *rs)
{
    /* The most common buffer size among bandwidth records that are not sweeps
     * (a sweep point of the same size must not add to the count). */
    uint64_t best = 0;
    int bestc = 0;
    for (int i = 0; i < rs->n; i++) {
        const gq_record *r = &rs->v[i];
        if (!main_candidate(r))
            continue;
        int c = 0;
        for (int k = 0; k < rs->n; k++)
            c += rs->v[k].bytes == r->bytes && main_candidate(&rs->v[k]);
        if (c > bestc) {
            bestc = c;
            best = r->bytes;
        }
    }
    return best;
}

static json_t *identity_json(const gq_topo *t, const int *sel, int n, const json_t *stress)
{
    json_t *o = json_object(), *gs = json_array();
    for (int k = 0; k < n; k++) {
        const gq_gpu_info *g = &t->gpu[sel[k]];
        json_t *j = json_object();
        json_object_set_new(j, "index", json_integer(sel[k]));
        json_object_set_new(j, "name", json_string(g->name));
        json_object_set_new(j, "uuid", json_string(g->uuid));
        json_object_set_new(j, "memory_mib",
                            g->mem_bytes ? json_integer((json_int_t)(g->mem_bytes / GQ_MiB)) : json_null());
        json_object_set_new(j, "power_limit_w",
                            g->power_limit_w > 0 ? json_real(g->power_limit_w) : json_null());
        json_object_set_new(j, "numa_node", json_integer(g->numa_node));
        json_object_set_new(j, "cpulist", json_string(g->cpulist));
        json_object_set_new(j, "pci_bus_id", json_string(g->pci_bus_id));
        json_object_set_new(j, "nvlinks", json_integer(g->nvlinks_total));
        int gen = g->pcie_gen_cur, wid = g->pcie_width_cur;
        bool loaded = false;
        /* Links slow down at idle: prefer what the stress run saw under load. */
        size_t i;
        const json_t *sg;
        json_array_foreach(json_object_get(stress, "gpus"), i, sg)
        {
            if (gq_json_num(sg, "gpu") != sel[k])
                continue;
            const json_t *pc = json_object_get(sg, "pcie");
            double lg = gq_json_num(pc, "gen_min_loaded"), lw = gq_json_num(pc, "width_min_loaded");
            if (isfinite(lg) && lg > 0 && isfinite(lw) && lw > 0) {
                gen = (int)lg;
                wid = (int)lw;
                loaded = true;
            }
        }
        json_object_set_new(j, "pcie",
                            json_pack("{s:i, s:i, s:i, s:i, s:b, s:o}", "gen", gen, "width", wid, "gen_max",
                                      g->pcie_gen_max, "width_max", g->pcie_width_max, "under_load", loaded,
                                      "gbps", jnum(g->pcie_gbps > 0 ? g->pcie_gbps : NAN)));
        json_array_append_new(gs, j);
    }
    json_object_set_new(o, "gpus", gs);
    json_t *nv = json_array();
    for (int a = 0; a < n; a++) {
        json_t *row = json_array();
        for (int b = 0; b < n; b++)
            json_array_append_new(row, a == b ? json_null() : json_integer(t->nvlinks[sel[a]][sel[b]]));
        json_array_append_new(nv, row);
    }
    json_object_set_new(o, "nvlinks", json_pack("{s:o, s:o}", "gpus", ints_json(sel, n), "values", nv));
    char b[32];
    json_object_set_new(o, "driver", json_string(t->driver_version[0] ? t->driver_version : "unknown"));
    json_object_set_new(o, "cuda_driver", json_integer(t->cuda_driver_version));
    json_object_set_new(o, "cuda_runtime", json_integer(t->cuda_runtime_version));
    if (t->cuda_driver_version > 0)
        snprintf(b, sizeof b, "%d.%d", t->cuda_driver_version / 1000, (t->cuda_driver_version % 1000) / 10);
    else
        snprintf(b, sizeof b, "unknown");
    json_object_set_new(o, "cuda_driver_str", json_string(b));
    if (t->cuda_runtime_version > 0)
        snprintf(b, sizeof b, "%d.%d", t->cuda_runtime_version / 1000, (t->cuda_runtime_version % 1000) / 10);
    else
        snprintf(b, sizeof b, "unknown");
    json_object_set_new(o, "cuda_runtime_str", json_string(b));
    json_object_set_new(o, "cpu", json_string(t->cpu_model[0] ? t->cpu_model : "unknown"));
    json_object_set_new(o, "sockets", json_integer(t->sockets));
    json_object_set_new(o, "numa_nodes", json_integer(t->numa_nodes));
    json_object_set_new(o, "vm", json_boolean(t->is_vm));
    json_object_set_new(o, "hypervisor", json_string(t->hypervisor));
    json_object_set_new(o, "source", json_string(t->source));
#ifdef GQ_VERSION
    snprintf(b, sizeof b, "%s (git %.12s)", GQ_VERSION, GQ_GIT_REV);
#else
    snprintf(b, sizeof b, "unknown");
#endif
    json_object_set_new(o, "gpuqual", json_string(b));
    return o;
}

static json_t *matrix_json(const char *id, const char *title, const char *test, const gq_pairmatrix *pm,
                           const char *unit, bool *any)
{
    json_t *vals = json_array();
    int nstaged = 0, ncells = 0;
    *any = false;
    for (int i = 0; i < pm->n; i++) {
        json_t *row = json_array();
        for (int j = 0; j < pm->n; j++) {
            double v = i == j ? NAN : pm->gbps[i][j];
            json_array_append_new(row, jnum(v));
            if (isfinite(v)) {
                *any = true;
                ncells++;
                nstaged += pm->staged[i][j];
            }
        }
        json_array_append_new(vals, row);
    }
    return json_pack("{s:s, s:s, s:s, s:s, s:o, s:o, s:b, s:i}", "id", id, "title", title, "unit", unit,
                     "test", test, "gpus", ints_json(pm->gpu, pm->n), "values", vals, "staged",
                     ncells > 0 && nstaged == ncells, "staged_cells", nstaged);
}

static json_t *host_json(const gq_bottlenecks *bn, const int *sel, int n, const gq_recordset *rs)
{
    json_t *o = json_object();
    json_object_set_new(o, "gpus", ints_json(sel, n));
    json_t *alone = json_object(), *all = json_object();
    static const char *const dn[2] = {"h2d", "d2h"};
    bool any_all = false;
    for (int d = 0; d < 2; d++) {
        json_t *a = json_array();
        for (int k = 0; k < n; k++)
            json_array_append_new(a, jnum(bn->alone[d][sel[k]]));
        json_object_set_new(alone, dn[d], a);
        /* All at once: the largest host group of that direction covering every GPU. */
        const gq_bn_obs *best = NULL;
        for (int i = 0; i < bn->nobs; i++) {
            const gq_bn_obs *ob = &bn->obs[i];
            if (ob->p2p || ob->direction != (d ? GQ_DIR_D2H : GQ_DIR_H2D) || ob->ngpus != n || n < 2)
                continue;
            best = ob;
        }
        json_t *per = json_array();
        for (int k = 0; k < n; k++)
            json_array_append_new(per, jnum(best ? best->rate[sel[k]] : NAN));
        json_object_set_new(all, dn[d], per);
        char key[40];
        snprintf(key, sizeof key, "%s_aggregate_gbps", dn[d]);
        json_object_set_new(all, key, jnum(best ? best->aggregate_gbps : NAN));
        snprintf(key, sizeof key, "%s_valid", dn[d]);
        json_object_set_new(all, key, json_boolean(best != NULL));
        any_all |= best != NULL;
    }
    json_object_set_new(o, "alone", alone);
    json_object_set_new(o, "all", any_all ? all : (json_decref(all), json_null()));
    json_t *subs = json_array();
    for (int i = 0; i < bn->nobs; i++) {
        const gq_bn_obs *ob = &bn->obs[i];
        if (ob->p2p || ob->ngpus < 2 || ob->ngpus >= n)
            continue;
        json_t *pg = json_array();
        for (int k = 0; k < ob->ngpus; k++)
            json_array_append_new(pg, jnum(ob->rate[ob->gpus[k]]));
        json_array_append_new(
            subs, json_pack("{s:o, s:s, s:o, s:o, s:o, s:o, s:b, s:o, s:b}", "gpus",
                            ints_json(ob->gpus, ob->ngpus), "direction", gq_direction_name(ob->direction),
                            "per_gpu", pg, "aggregate_gbps", jnum(ob->aggregate_gbps), "expected_gbps",
                            jnum(ob->expected_gbps), "sum_alone_gbps", jnum(ob->sum_alone_gbps), "valid",
                            true, "overlap", jnum(ob->overlap), "contended", ob->contended));
    }
    json_object_set_new(o, "subsets", subs);
    /* Both directions at once (bidirectional_set): direction aggregates and their sum. */
    double agg[2] = {NAN, NAN}, sum = NAN;
    for (int i = 0; i < rs->n; i++) {
        const gq_record *r = &rs->v[i];
        if (strcmp(r->test, GQ_CARD_TEST_BIDIR_SET) || !usable(r))
            continue;
        if (r->sum)
            sum = r->value.median;
        else if (r->aggregate && (r->direction == GQ_DIR_H2D || r->direction == GQ_DIR_D2H))
            agg[r->direction == GQ_DIR_D2H] = r->value.median;
    }
    if (isfinite(sum) || isfinite(agg[0]))
        json_object_set_new(o, "bidir",
                            json_pack("{s:o, s:o, s:o}", "h2d_aggregate_gbps", jnum(agg[0]),
                                      "d2h_aggregate_gbps", jnum(agg[1]), "sum_gbps", jnum(sum)));
    else
        json_object_set_new(o, "bidir", json_null());
    return o;
}

static json_t *pairs_side(const gq_bn_obs *ob, const gq_pairmatrix *pm)
{
    json_t *pl = json_array(), *g = json_array(), *iso = json_array();
    for (int k = 0; k < ob->npairs; k++) {
        json_array_append_new(pl, json_pack("[i,i]", ob->pair_src[k], ob->pair_dst[k]));
        json_array_append_new(g, jnum(ob->rate[k]));
        double v = NAN;
        for (int i = 0; i < pm->n; i++)
            for (int j = 0; j < pm->n; j++)
                if (pm->gpu[i] == ob->pair_src[k] && pm->gpu[j] == ob->pair_dst[k])
                    v = pm->gbps[i][j];
        json_array_append_new(iso, jnum(v));
    }
    return json_pack("{s:o, s:o, s:o, s:o, s:o, s:b}", "pairs", pl, "gbps", g, "isolated_gbps", iso,
                     "aggregate_gbps", jnum(ob->aggregate_gbps), "overlap", jnum(ob->overlap), "valid", true);
}

static json_t *pairs_json(const gq_bottlenecks *bn, const gq_pairmatrix *pm)
{
    const gq_bn_obs *w = NULL, *a = NULL;
    for (int i = 0; i < bn->nobs; i++) {
        const gq_bn_obs *ob = &bn->obs[i];
        if (!ob->p2p)
            continue;
        if (ob->p2p_kind == GQ_P2P_WITHIN && (!w || ob->npairs > w->npairs))
            w = ob;
        if (ob->p2p_kind == GQ_P2P_ACROSS && (!a || ob->npairs > a->npairs))
            a = ob;
    }
    if (!w && !a)
        return json_null();
    json_t *o = json_object();
    json_object_set_new(o, "within", w ? pairs_side(w, pm) : json_null());
    json_object_set_new(o, "across", a ? pairs_side(a, pm) : json_null());
    json_object_set_new(o, "ratio",
                        jnum(w && a && w->aggregate_gbps > 0 ? a->aggregate_gbps / w->aggregate_gbps : NAN));
    return o;
}

static int cmp_rec_bytes(const void *x, const void *y)
{
    const gq_record *a = *(const gq_record *const *)x, *b = *(const gq_record *const *)y;
    return (a->bytes > b->bytes) - (a->bytes < b->bytes);
}

static json_t *sweeps_json(const gq_recordset *rs)
{
    json_t *out = json_array();
    size_t pl = strlen(GQ_CARD_TEST_SWEEP_PREFIX);
    bool *done = calloc((size_t)rs->n + 1, 1);
    const gq_record **pts = calloc((size_t)rs->n + 1, sizeof *pts);
    double asym[16];
    int ns = 0;
    if (!done || !pts)
        goto out;
    for (int i = 0; i < rs->n && ns < 16; i++) {
        const gq_record *r = &rs->v[i];
        if (done[i] || strncmp(r->test, GQ_CARD_TEST_SWEEP_PREFIX, pl) || r->aggregate || r->sum ||
            r->is_latency)
            continue;
        int np = 0;
        for (int k = i; k < rs->n; k++) {
            const gq_record *q = &rs->v[k];
            if (done[k] || strcmp(q->test, r->test) || q->aggregate || q->sum || q->src.kind != r->src.kind ||
                q->src.index != r->src.index || q->dst.kind != r->dst.kind || q->dst.index != r->dst.index)
                continue;
            done[k] = true;
            pts[np++] = q;
        }
        qsort(pts, (size_t)np, sizeof *pts, cmp_rec_bytes);
        json_t *by = json_array(), *gb = json_array();
        uint64_t b64[128];
        double g[128];
        int nf = 0;
        for (int k = 0; k < np && k < 128; k++) {
            json_array_append_new(by, json_integer((json_int_t)pts[k]->bytes));
            double v = usable(pts[k]) ? pts[k]->value.median : NAN;
            json_array_append_new(gb, jnum(v));
            b64[nf] = pts[k]->bytes;
            g[nf] = isfinite(v) ? v : 0;
            nf++;
        }
        gq_sweepfit fit;
        gq_err e;
        json_t *fj = json_null();
        if (gq_sweepfit_compute(b64, g, nf, &fit, &e) == GQ_OK)
            fj = json_pack("{s:f, s:f, s:f, s:f}", "fixed_us", fit.a_us, "asymptotic_gbps", fit.bw_gbps,
                           "half_bytes", fit.half_bytes, "rms_rel", fit.rms_rel);
        char label[128], src[24], dst[24];
        gq_endpoint_str(r->src, src, sizeof src);
        gq_endpoint_str(r->dst, dst, sizeof dst);
        if (r->direction == GQ_DIR_P2P)
            snprintf(label, sizeof label, "GPU %d → GPU %d", r->src.index, r->dst.index);
        else if (r->direction == GQ_DIR_H2D)
            snprintf(label, sizeof label, "host → GPU %d", r->dst.index);
        else
            snprintf(label, sizeof label, "GPU %d → host", r->src.index);
        double mx = 0;
        for (int k = 0; k < nf; k++)
            mx = g[k] > mx ? g[k] : mx;
        asym[ns++] = json_is_object(fj) ? fit.bw_gbps : mx;
        json_array_append_new(out, json_pack("{s:s, s:s, s:s, s:s, s:o, s:o, s:o}", "label", label, "src",
                                             src, "dst", dst, "test", r->test + pl, "bytes", by, "gbps", gb,
                                             "fit", fj));
    }
    /* Name the fastest and the slowest path. */
    if (ns >= 2) {
        int hi = 0, lo = 0;
        for (int k = 1; k < ns; k++) {
            if (asym[k] > asym[hi])
                hi = k;
            if (asym[k] < asym[lo])
                lo = k;
        }
        if (hi != lo) {
            for (int k = 0; k < ns; k++) {
                if (k != hi && k != lo)
                    continue;
                json_t *s = json_array_get(out, (size_t)k);
                char l[160];
                snprintf(l, sizeof l, "%s path: %s", k == hi ? "fastest" : "slowest",
                         gq_json_str(s, "label", ""));
                json_object_set_new(s, "label", json_string(l));
            }
        }
    }
out:
    free(done);
    free(pts);
    return out;
}

static json_t *latency_json(const gq_recordset *rs, const int *sel, int n)
{
    double host[MAXG], p2p[MAXG][MAXG];
    bool anyh = false, anyp = false;
    for (int k = 0; k < MAXG; k++) {
        host[k] = NAN;
        for (int l = 0; l < MAXG; l++)
            p2p[k][l] = NAN;
    }
    int pos[MAXG];
    for (int k = 0; k < MAXG; k++)
        pos[k] = -1;
    for (int k = 0; k < n; k++)
        pos[sel[k]] = k;
    for (int i = 0; i < rs->n; i++) {
        const gq_record *r = &rs->v[i];
        if (!r->is_latency || !r->valid)
            continue;
        if (!strcmp(r->test, GQ_CARD_TEST_HOST_LAT) && r->exec_gpu >= 0 && r->exec_gpu < MAXG &&
            pos[r->exec_gpu] >= 0) {
            host[pos[r->exec_gpu]] = r->value.median;
            anyh = true;
        } else if (!strcmp(r->test, GQ_CARD_TEST_P2P_LAT) && r->exec_gpu >= 0 && r->exec_gpu < MAXG) {
            int other = r->src.kind == GQ_EP_GPU && r->src.index != r->exec_gpu ? r->src.index : r->dst.index;
            if (other >= 0 && other < MAXG && pos[r->exec_gpu] >= 0 && pos[other] >= 0) {
                p2p[pos[r->exec_gpu]][pos[other]] = r->value.median;
                anyp = true;
            }
        }
    }
    if (!anyh && !anyp)
        return json_null();
    json_t *o = json_object();
    if (anyh) {
        json_t *a = json_array();
        for (int k = 0; k < n; k++)
            json_array_append_new(a, jnum(host[k]));
        json_object_set_new(o, "host", json_pack("{s:o, s:o}", "gpus", ints_json(sel, n), "ns", a));
    }
    if (anyp) {
        json_t *v = json_array();
        for (int k = 0; k < n; k++) {
            json_t *row = json_array();
            for (int l = 0; l < n; l++)
                json_array_append_new(row, jnum(k == l ? NAN : p2p[k][l]));
            json_array_append_new(v, row);
        }
        json_object_set_new(
            o, "p2p",
            json_pack("{s:o, s:o, s:s, s:s}", "gpus", ints_json(sel, n), "values", v, "unit", "ns", "note",
                      "row: GPU running the pointer chase; column: GPU whose memory it reads"));
    }
    return o;
}

/* ---- facts and judging ------------------------------------------------------ */

static void example(char *dst, size_t n, const gq_record *r)
{
    if (dst[0])
        return;
    char a[24], b[24];
    snprintf(dst, n, "%s %s→%s: %s", r->test, gq_endpoint_str(r->src, a, sizeof a),
             gq_endpoint_str(r->dst, b, sizeof b), r->error[0] ? r->error : "no detail");
}

/* pos[g] for a GPU index read from a document, or -1 when g is out of range
 * (a saved card edited by hand may name any integer). */
static int pos_of(const int *pos, int g)
{
    return g >= 0 && g < MAXG ? pos[g] : -1;
}

/* A GPU index field; -1 when absent or not a number that fits an int. */
static int jidx(const json_t *o, const char *k)
{
    double v = gq_json_num(o, k);
    return isfinite(v) && fabs(v) < 1e9 ? (int)v : -1;
}

void gq_card_facts_from_json(const json_t *card, const json_t *stress, const gq_recordset *rs,
                             gq_card_facts *f)
{
    gq_card_facts_init(f);
    const json_t *id = json_object_get(card, "identity");
    int pos[MAXG];
    for (int k = 0; k < MAXG; k++)
        pos[k] = -1;
    size_t i;
    const json_t *g;
    json_array_foreach(json_object_get(id, "gpus"), i, g)
    {
        if (f->ngpu >= MAXG)
            break;
        int k = f->ngpu++;
        gq_gpu_facts *gf = &f->gpu[k];
        int idx = jidx(g, "index");
        gf->index = idx;
        if (idx >= 0 && idx < MAXG)
            pos[idx] = k;
        snprintf(gf->name, sizeof gf->name, "%s", gq_json_str(g, "name", ""));
        gf->mem_mib = gq_json_num(g, "memory_mib");
        gf->power_limit_w = gq_json_num(g, "power_limit_w");
        const json_t *pc = json_object_get(g, "pcie");
        double v;
        gf->pcie_gen_cur = isfinite(v = gq_json_num(pc, "gen")) ? (int)v : -1;
        gf->pcie_width_cur = isfinite(v = gq_json_num(pc, "width")) ? (int)v : -1;
        gf->pcie_gen_max = isfinite(v = gq_json_num(pc, "gen_max")) ? (int)v : -1;
        gf->pcie_width_max = isfinite(v = gq_json_num(pc, "width_max")) ? (int)v : -1;
        gf->link_under_load = json_is_true(json_object_get(pc, "under_load"));
    }
    /* Facts are indexed by position (0..ngpu-1); the judge names gpu[k].index. */
    const json_t *nvl = json_object_get(id, "nvlinks");
    {
        int gl[MAXG];
        int n = jints(json_object_get(nvl, "gpus"), gl, MAXG);
        const json_t *vals = json_object_get(nvl, "values");
        for (int a = 0; a < n; a++)
            for (int b = 0; b < n; b++) {
                const json_t *x = json_array_get(json_array_get(vals, (size_t)a), (size_t)b);
                if (json_is_integer(x) && pos_of(pos, gl[a]) >= 0 && pos_of(pos, gl[b]) >= 0)
                    f->nvlinks[pos[gl[a]]][pos[gl[b]]] = (int)json_integer_value(x);
            }
    }
    const json_t *host = json_object_get(card, "host");
    {
        int gl[MAXG];
        int n = jints(json_object_get(host, "gpus"), gl, MAXG);
        const json_t *alone = json_object_get(host, "alone");
        for (int k = 0; k < n; k++) {
            if (pos_of(pos, gl[k]) < 0)
                continue;
            const json_t *x = json_array_get(json_object_get(alone, "h2d"), (size_t)k);
            f->gpu[pos[gl[k]]].h2d_gbps = json_is_number(x) ? json_number_value(x) : NAN;
            x = json_array_get(json_object_get(alone, "d2h"), (size_t)k);
            f->gpu[pos[gl[k]]].d2h_gbps = json_is_number(x) ? json_number_value(x) : NAN;
        }
    }
    const json_t *m;
    json_array_foreach(json_object_get(card, "matrices"), i, m)
    {
        if (strcmp(gq_json_str(m, "id", ""), "p2p_read"))
            continue;
        int gl[MAXG];
        int n = jints(json_object_get(m, "gpus"), gl, MAXG);
        bool staged = json_is_true(json_object_get(m, "staged"));
        const json_t *vals = json_object_get(m, "values");
        for (int a = 0; a < n; a++)
            for (int b = 0; b < n; b++) {
                const json_t *x = json_array_get(json_array_get(vals, (size_t)a), (size_t)b);
                if (!json_is_number(x) || pos_of(pos, gl[a]) < 0 || pos_of(pos, gl[b]) < 0)
                    continue;
                f->p2p_gbps[pos[gl[a]]][pos[gl[b]]] = json_number_value(x);
                f->p2p_direct[pos[gl[a]]][pos[gl[b]]] = !staged;
            }
    }
    const json_t *lat = json_object_get(card, "latency");
    {
        const json_t *h = json_object_get(lat, "host");
        int gl[MAXG];
        int n = jints(json_object_get(h, "gpus"), gl, MAXG);
        for (int k = 0; k < n; k++) {
            const json_t *x = json_array_get(json_object_get(h, "ns"), (size_t)k);
            if (json_is_number(x) && pos_of(pos, gl[k]) >= 0)
                f->gpu[pos[gl[k]]].host_latency_ns = json_number_value(x);
        }
        const json_t *p = json_object_get(lat, "p2p");
        n = jints(json_object_get(p, "gpus"), gl, MAXG);
        for (int a = 0; a < n; a++)
            for (int b = 0; b < n; b++) {
                const json_t *x =
                    json_array_get(json_array_get(json_object_get(p, "values"), (size_t)a), (size_t)b);
                if (json_is_number(x) && pos_of(pos, gl[a]) >= 0 && pos_of(pos, gl[b]) >= 0)
                    f->p2p_lat_ns[pos[gl[a]]][pos[gl[b]]] = json_number_value(x);
            }
    }
    json_array_foreach(json_object_get(stress, "gpus"), i, g)
    {
        int idx = jidx(g, "gpu");
        if (pos_of(pos, idx) < 0)
            continue;
        gq_gpu_facts *gf = &f->gpu[pos[idx]];
        f->stress_ran = true;
        gf->stressed = true;
        gf->temp_max_c = gq_json_num(g, "temp_max_c");
        gf->sm_clock_avg_mhz = gq_json_num(g, "sm_clock_avg_mhz");
        gf->power_capped_pct = gq_json_num(g, "power_capped_pct");
        gf->thermal_slowdown = json_is_true(json_object_get(g, "thermal_slowdown")) ||
                               json_is_true(json_object_get(g, "hw_slowdown")) ||
                               json_is_true(json_object_get(g, "hw_power_brake"));
        const char *v = gq_json_str(g, "verdict", "pass");
        gf->stress_verdict = !strcmp(v, "fail") ? GQ_V_FAIL : !strcmp(v, "warn") ? GQ_V_WARN : GQ_V_PASS;
        size_t k;
        const json_t *fd;
        json_array_foreach(json_object_get(stress, "findings"), k, fd)
        {
            const char *lv = gq_json_str(fd, "level", "");
            if (gq_json_num(fd, "gpu") == idx && (!strcmp(lv, "fail") || !strcmp(lv, "warn")) &&
                !gf->stress_reason[0])
                snprintf(gf->stress_reason, sizeof gf->stress_reason, "%s", gq_json_str(fd, "text", ""));
        }
    }
    if (rs) {
        for (int k = 0; k < rs->n; k++) {
            const gq_record *r = &rs->v[k];
            f->n_records++;
            if (r->flags & GQ_FLAG_IMPOSSIBLE) {
                f->n_impossible++;
                example(f->impossible_example, sizeof f->impossible_example, r);
            }
            if (r->flags & GQ_FLAG_VERIFY_FAILED) {
                f->n_verify_failed++;
                example(f->verify_example, sizeof f->verify_example, r);
            }
            if (r->flags & GQ_FLAG_ERROR) {
                f->n_errors++;
                example(f->error_example, sizeof f->error_example, r);
            }
            if (r->aggregate && (r->flags & GQ_FLAG_OVERLAP)) {
                f->n_overlap_invalid++;
                example(f->overlap_example, sizeof f->overlap_example, r);
            }
        }
    }
}

static json_t *checks_json(const gq_checklist *cl)
{
    json_t *a = json_array();
    for (int i = 0; i < cl->n; i++) {
        const gq_check *c = &cl->v[i];
        json_array_append_new(
            a, json_pack("{s:s, s:s, s:s, s:s, s:o, s:o, s:s, s:s}", "id", c->id, "subject", c->subject,
                         "source", c->source, "verdict", gq_verdict_name(c->verdict), "figure",
                         jnum(c->figure), "threshold", jnum(c->threshold), "unit", c->unit, "text", c->text));
    }
    return a;
}

/* Worst verdict among the checks whose id is in ids (NULL-terminated). Rows
 * with no judged check are "info" (reported, nothing to judge) or "skip". */
static const char *row_verdict(const gq_checklist *cl, const char *const *ids, bool measured)
{
    gq_verdict w = GQ_V_SKIP;
    bool any = false;
    for (int i = 0; i < cl->n; i++)
        for (int k = 0; ids[k]; k++)
            if (!strcmp(cl->v[i].id, ids[k])) {
                gq_verdict v = cl->v[i].verdict;
                if (v >= GQ_V_PASS) {
                    any = true;
                    if (v > w || w < GQ_V_PASS)
                        w = v;
                }
            }
    if (any)
        return gq_verdict_name(w);
    return measured ? "info" : "skip";
}

static void row(json_t *rows, const char *check, const char *evidence, const char *result,
                const char *verdict, const char *decision)
{
    json_array_append_new(rows, json_pack("{s:s, s:s, s:s, s:s, s:s}", "check", check, "evidence", evidence,
                                          "result", result, "verdict", verdict, "decision", decision));
}

__attribute__((format(printf, 2, 3))) static void finding(json_t *fs, const char *fmt, ...)
{
    char buf[640];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    json_array_append_new(fs, json_string(buf));
}

/* Min and max of a matrix's finite cells, split by a domain map: within (same
 * domain) and across. dom_of by GPU index; -1 unknown. */
static void matrix_ranges(const json_t *m, const int *dom_of, double *wlo, double *whi, double *alo,
                          double *ahi, double *lo, double *hi)
{
    *wlo = *alo = *lo = INFINITY;
    *whi = *ahi = *hi = -INFINITY;
    int gl[MAXG];
    int n = jints(json_object_get(m, "gpus"), gl, MAXG);
    const json_t *vals = json_object_get(m, "values");
    for (int a = 0; a < n; a++)
        for (int b = 0; b < n; b++) {
            const json_t *x = json_array_get(json_array_get(vals, (size_t)a), (size_t)b);
            if (!json_is_number(x))
                continue;
            double v = json_number_value(x);
            *lo = fmin(*lo, v);
            *hi = fmax(*hi, v);
            if (pos_of(dom_of, gl[a]) >= 0 && pos_of(dom_of, gl[a]) == pos_of(dom_of, gl[b])) {
                *wlo = fmin(*wlo, v);
                *whi = fmax(*whi, v);
            } else {
                *alo = fmin(*alo, v);
                *ahi = fmax(*ahi, v);
            }
        }
}

int gq_card_judge(json_t *card, const json_t *bottlenecks, const json_t *stress, const gq_recordset *rs,
                  const gq_expect *ex, gq_err *err)
{
    gq_card_facts *f = malloc(sizeof *f);
    gq_checklist cl = {0};
    int rc = GQ_OK;
    if (!f)
        return gq_err_set(err, GQ_E_NOMEM, "out of memory judging the card");
    gq_card_facts_from_json(card, stress, rs, f);
    if ((rc = gq_expect_judge(ex, f, &cl, err)))
        goto out;
    json_object_set_new(card, "checks", checks_json(&cl));
    gq_verdict overall = gq_checklist_overall(&cl);
    json_object_set_new(
        card, "counts",
        json_pack("{s:i, s:i, s:i, s:i, s:i}", "pass", gq_checklist_count(&cl, GQ_V_PASS), "warn",
                  gq_checklist_count(&cl, GQ_V_WARN), "fail", gq_checklist_count(&cl, GQ_V_FAIL), "info",
                  gq_checklist_count(&cl, GQ_V_INFO), "skip", gq_checklist_count(&cl, GQ_V_SKIP)));
    json_object_set_new(card, "verdict", json_string(gq_verdict_name(overall)));
    json_object_set_new(card, "expectations",
                        ex && ex->nmodels
                            ? json_pack("{s:s, s:s}", "file", ex->path[0] ? ex->path : "(inline)",
                                        "description", ex->description)
                            : json_null());
    bool complete = !json_is_false(json_object_get(card, "complete"));
    json_object_set_new(card, "exit_code", json_integer(complete ? gq_verdict_exit_code(overall) : 5));

    /* ---- rows: seed 001 §9 ---- */
    json_t *rows = json_array(), *fs = json_array();
    char ev[512], res[512], a[32], b[32], c[32], d[32], s1[64], s2[64];
    const json_t *id = json_object_get(card, "identity");
    const json_t *dm = json_object_get(card, "domains");
    int dom_of[MAXG];
    for (int k = 0; k < MAXG; k++)
        dom_of[k] = -1;
    size_t i;
    const json_t *x;
    int ndom = 0;
    json_array_foreach(json_object_get(dm, "domains"), i, x)
    {
        int gl[MAXG];
        int n = jints(x, gl, MAXG);
        for (int k = 0; k < n; k++)
            if (gl[k] >= 0 && gl[k] < MAXG)
                dom_of[gl[k]] = (int)i;
        ndom++;
    }

    /* Identity and links. */
    {
        int n = (int)json_array_size(json_object_get(id, "gpus"));
        const json_t *g0 = json_array_get(json_object_get(id, "gpus"), 0);
        const json_t *pc = json_object_get(g0, "pcie");
        bool same = true;
        json_array_foreach(json_object_get(id, "gpus"), i, x) same &=
            !strcmp(gq_json_str(x, "name", ""), gq_json_str(g0, "name", ""));
        snprintf(ev, sizeof ev, "%d × %s%s, %s MiB, %s W limit; PCIe Gen%s x%s %s; driver %s, CUDA %s", n,
                 gq_json_str(g0, "name", "?"), same ? "" : " (mixed models)",
                 f1(gq_json_num(g0, "memory_mib"), a, sizeof a),
                 f1(gq_json_num(g0, "power_limit_w"), b, sizeof b), f1(gq_json_num(pc, "gen"), c, sizeof c),
                 f1(gq_json_num(pc, "width"), d, sizeof d),
                 json_is_true(json_object_get(pc, "under_load")) ? "under load" : "at idle",
                 gq_json_str(id, "driver", "?"), gq_json_str(id, "cuda_driver_str", "?"));
        int down = 0;
        json_array_foreach(json_object_get(id, "gpus"), i, x)
        {
            const json_t *p = json_object_get(x, "pcie");
            down += gq_json_num(p, "width") < gq_json_num(p, "width_max") ||
                    (json_is_true(json_object_get(p, "under_load")) &&
                     gq_json_num(p, "gen") < gq_json_num(p, "gen_max"));
        }
        if (down)
            snprintf(res, sizeof res, "%d GPU%s below the link's maximum", down, down == 1 ? "" : "s");
        else
            snprintf(res, sizeof res, "every link at its maximum (Gen%s x%s)",
                     f1(gq_json_num(pc, "gen_max"), a, sizeof a),
                     f1(gq_json_num(pc, "width_max"), b, sizeof b));
        static const char *const ids[] = {"count_min",    "memory_mib_min",   "power_limit_w_min",
                                          "pcie_gen_min", "pcie_width_min",   "link_width",
                                          "link_gen",     "expect_uncovered", NULL};
        row(rows, "Identity and links", ev, res, row_verdict(&cl, ids, n > 0),
            "Confirm the delivered configuration");
    }

    /* Pairwise GPU traffic. */
    const json_t *m0 = json_array_get(json_object_get(card, "matrices"), 0);
    double wlo = NAN, whi = NAN, alo = NAN, ahi = NAN, lo = NAN, hi = NAN;
    if (m0) {
        matrix_ranges(m0, dom_of, &wlo, &whi, &alo, &ahi, &lo, &hi);
        int n = (int)json_array_size(json_object_get(m0, "gpus"));
        bool staged = json_is_true(json_object_get(m0, "staged"));
        snprintf(ev, sizeof ev, "%s matrix %d×%d, one pair at a time%s",
                 staged ? "host-staged GPU-to-GPU" : "P2P read", n, n, staged ? " (no P2P)" : "");
        if (json_is_true(json_object_get(dm, "split")))
            snprintf(res, sizeof res, "%d domains; within %s GB/s, across %s GB/s", ndom,
                     range(wlo, whi, s1, sizeof s1), range(alo, ahi, s2, sizeof s2));
        else
            snprintf(res, sizeof res, "%s GB/s%s", range(lo, hi, s1, sizeof s1),
                     json_is_true(json_object_get(dm, "no_p2p")) ? "; no pair has P2P" : "; one domain");
        static const char *const ids[] = {"p2p_gbps_min", "nvlink_gbps_min", NULL};
        row(rows, "Pairwise GPU traffic", ev, res, row_verdict(&cl, ids, isfinite(lo)),
            "Discover fast communication groups");
    } else {
        static const char *const ids[] = {NULL};
        row(rows, "Pairwise GPU traffic", "P2P read matrix", "not measured", row_verdict(&cl, ids, false),
            "Discover fast communication groups");
    }

    /* Concurrent GPU traffic. */
    const json_t *pairs = json_object_get(card, "pairs");
    {
        const json_t *w = json_object_get(pairs, "within"), *ac = json_object_get(pairs, "across");
        if (json_is_object(pairs))
            snprintf(ev, sizeof ev, "%d pairs at once within domains, %d across",
                     (int)json_array_size(json_object_get(w, "pairs")),
                     (int)json_array_size(json_object_get(ac, "pairs")));
        else
            snprintf(ev, sizeof ev, "the intended simultaneous pairs, within and across domains");
        double ra = gq_json_num(pairs, "ratio");
        char pct[24] = "";
        if (isfinite(ra))
            snprintf(pct, sizeof pct, " (%.0f%%)", ra * 100);
        if (json_is_object(w) && json_is_object(ac))
            snprintf(res, sizeof res, "within %s GB/s in total, across %s GB/s%s",
                     f1(gq_json_num(w, "aggregate_gbps"), a, sizeof a),
                     f1(gq_json_num(ac, "aggregate_gbps"), b, sizeof b), pct);
        else if (json_is_object(w))
            snprintf(res, sizeof res, "within %s GB/s in total",
                     f1(gq_json_num(w, "aggregate_gbps"), a, sizeof a));
        else if (json_is_object(ac))
            snprintf(res, sizeof res, "%d pairs at once %s GB/s in total, %s GB/s one at a time",
                     (int)json_array_size(json_object_get(ac, "pairs")),
                     f1(gq_json_num(ac, "aggregate_gbps"), a, sizeof a),
                     f1(isfinite(gq_json_num(ac, "aggregate_gbps"))
                            ? sum_json(json_object_get(ac, "isolated_gbps"))
                            : NAN,
                        b, sizeof b));
        else if (json_is_true(json_object_get(dm, "no_p2p")))
            snprintf(res, sizeof res,
                     "no P2P: concurrent GPU pairs go through host memory (see the host paths and "
                     "the placement)");
        else
            snprintf(res, sizeof res, "%s", ndom <= 1 ? "one domain: nothing to compare" : "not measured");
        static const char *const ids[] = {NULL};
        row(rows, "Concurrent GPU traffic", ev, res, row_verdict(&cl, ids, json_is_object(pairs)),
            "Place workers without overloading shared paths");
    }

    /* Host-memory traffic. */
    const json_t *host = json_object_get(card, "host");
    double h2lo = INFINITY, h2hi = -INFINITY, d2lo = INFINITY, d2hi = -INFINITY;
    {
        int n = (int)json_array_size(json_object_get(json_object_get(host, "alone"), "h2d"));
        for (int k = 0; k < n && k < MAXG; k++) {
            const json_t *e1 =
                json_array_get(json_object_get(json_object_get(host, "alone"), "h2d"), (size_t)k);
            const json_t *e2 =
                json_array_get(json_object_get(json_object_get(host, "alone"), "d2h"), (size_t)k);
            if (json_is_number(e1)) {
                h2lo = fmin(h2lo, json_number_value(e1));
                h2hi = fmax(h2hi, json_number_value(e1));
            }
            if (json_is_number(e2)) {
                d2lo = fmin(d2lo, json_number_value(e2));
                d2hi = fmax(d2hi, json_number_value(e2));
            }
        }
        int nsub = (int)json_array_size(json_object_get(host, "subsets"));
        snprintf(ev, sizeof ev, "both directions: each GPU alone, %d subset%s, all at once", nsub,
                 nsub == 1 ? "" : "s");
        const json_t *all = json_object_get(host, "all");
        int nbn = 0;
        json_array_foreach(bottlenecks, i, x) nbn += strcmp(gq_json_str(x, "direction", ""), "p2p") != 0;
        snprintf(res, sizeof res, "alone %s / %s GB/s (to GPU / to host)%s%s%s%s%s; %d shared host budget%s",
                 range(h2lo, h2hi, s1, sizeof s1), range(d2lo, d2hi, s2, sizeof s2),
                 json_is_object(all) ? "; all at once " : "",
                 json_is_object(all) ? f1(gq_json_num(all, "h2d_aggregate_gbps"), a, sizeof a) : "",
                 json_is_object(all) ? " / " : "",
                 json_is_object(all) ? f1(gq_json_num(all, "d2h_aggregate_gbps"), b, sizeof b) : "",
                 json_is_object(all) ? " GB/s" : "", nbn, nbn == 1 ? "" : "s");
        static const char *const ids[] = {"h2d_gbps_min", "d2h_gbps_min", "agree_h2d", "agree_d2h", NULL};
        row(rows, "Host-memory traffic", ev, res, row_verdict(&cl, ids, isfinite(h2lo)),
            "Select and qualify offload workers");
    }

    /* Transfer granularity. */
    const json_t *sweeps = json_object_get(card, "sweeps");
    {
        snprintf(ev, sizeof ev, "buffer-size sweep on %d path%s", (int)json_array_size(sweeps),
                 json_array_size(sweeps) == 1 ? "" : "s");
        res[0] = 0;
        size_t used = 0;
        json_array_foreach(sweeps, i, x)
        {
            const json_t *fit = json_object_get(x, "fit");
            if (!json_is_object(fit))
                continue;
            char hb[32];
            double h = gq_json_num(fit, "half_bytes");
            int w = snprintf(
                res + used, sizeof res - used, "%s%s: %s µs fixed cost, half of %s GB/s at %s",
                used ? "; " : "", gq_json_str(x, "label", "?"), f1(gq_json_num(fit, "fixed_us"), a, sizeof a),
                f1(gq_json_num(fit, "asymptotic_gbps"), b, sizeof b), approx_size(h, hb, sizeof hb));
            if (w > 0 && (size_t)w < sizeof res - used)
                used += (size_t)w;
        }
        if (!used)
            snprintf(res, sizeof res, "%s", json_array_size(sweeps) ? "no fit" : "not measured");
        static const char *const ids[] = {NULL};
        row(rows, "Transfer granularity", ev, res, row_verdict(&cl, ids, json_array_size(sweeps) > 0),
            "Budget transfer overhead realistically");
    }

    /* Latency. */
    const json_t *lat = json_object_get(card, "latency");
    {
        double hl = INFINITY, hh = -INFINITY, pl = INFINITY, ph = -INFINITY;
        json_array_foreach(json_object_get(json_object_get(lat, "host"), "ns"), i, x) if (json_is_number(x))
        {
            hl = fmin(hl, json_number_value(x));
            hh = fmax(hh, json_number_value(x));
        }
        const json_t *row_;
        json_array_foreach(json_object_get(json_object_get(lat, "p2p"), "values"), i, row_)
        {
            size_t k;
            json_array_foreach(row_, k, x) if (json_is_number(x))
            {
                pl = fmin(pl, json_number_value(x));
                ph = fmax(ph, json_number_value(x));
            }
        }
        snprintf(ev, sizeof ev, "pointer chase host↔GPU%s", isfinite(pl) ? " and GPU↔GPU" : "");
        if (isfinite(hl))
            snprintf(res, sizeof res, "host %s ns%s%s%s", range(hl, hh, s1, sizeof s1),
                     isfinite(pl) ? ", GPU↔GPU " : "", isfinite(pl) ? range(pl, ph, s2, sizeof s2) : "",
                     isfinite(pl) ? " ns" : "");
        else
            snprintf(res, sizeof res, "not measured");
        static const char *const ids[] = {"host_latency_ns_max", "p2p_latency_ns_max", NULL};
        row(rows, "Latency", ev, res, row_verdict(&cl, ids, isfinite(hl)), "Know what small messages cost");
    }

    /* Whole-node health. */
    {
        double tmax = -INFINITY, clo = INFINITY, chi = -INFINITY, cap = -INFINITY;
        int nth = 0, ng = 0;
        json_array_foreach(json_object_get(stress, "gpus"), i, x)
        {
            ng++;
            tmax = fmax(tmax, gq_json_num(x, "temp_max_c"));
            double ck = gq_json_num(x, "sm_clock_avg_mhz");
            if (isfinite(ck)) {
                clo = fmin(clo, ck);
                chi = fmax(chi, ck);
            }
            double cp = gq_json_num(x, "power_capped_pct");
            if (isfinite(cp))
                cap = fmax(cap, cp);
            nth += json_is_true(json_object_get(x, "thermal_slowdown"));
        }
        if (ng) {
            snprintf(ev, sizeof ev,
                     "%s s GEMM load on %d GPU%s; temperature, power, clocks, throttle reasons, errors",
                     f1(gq_json_num(stress, "elapsed_s"), a, sizeof a), ng, ng == 1 ? "" : "s");
            snprintf(res, sizeof res,
                     "max %s °C, average SM clock %s MHz, power-capped up to %s%% of samples, %s",
                     f1(tmax, b, sizeof b), range(clo, chi, s1, sizeof s1), f1(cap, c, sizeof c),
                     nth ? "THERMAL SLOWDOWN" : "no thermal slowdown");
        } else {
            snprintf(ev, sizeof ev, "sustained load with telemetry");
            snprintf(res, sizeof res, "not run");
        }
        static const char *const ids[] = {"temp_c_max", "sm_clock_mhz_min", "agree_sm_clock",
                                          "thermal",    "stress",           NULL};
        row(rows, "Whole-node health", ev, res, row_verdict(&cl, ids, ng > 0),
            "Accept the operating envelope");
    }

    /* Placement. */
    const json_t *pl = json_object_get(card, "placement");
    {
        const json_t *roles = json_object_get(pl, "roles");
        snprintf(
            ev, sizeof ev,
            "%s prefill, %s decode, %s offload workers%s; the implied pattern measured against the naive one",
            f1(gq_json_num(roles, "prefill"), a, sizeof a), f1(gq_json_num(roles, "decode"), b, sizeof b),
            f1(gq_json_num(roles, "offload"), c, sizeof c),
            json_is_true(json_object_get(pl, "default_split")) ? " (default split)" : "");
        res[0] = 0;
        size_t used = 0;
        const json_t *pp = json_object_get(pl, "pairs");
        if (json_array_size(pp)) {
            used += (size_t)snprintf(res, sizeof res, "pairs");
            json_array_foreach(pp, i, x) if (used < sizeof res - 24) used +=
                (size_t)snprintf(res + used, sizeof res - used, " %d→%d", (int)gq_json_num(x, "prefill"),
                                 (int)gq_json_num(x, "decode"));
        }
        const json_t *off = json_object_get(pl, "offload");
        if (json_array_size(off) && used < sizeof res - 40) {
            used += (size_t)snprintf(res + used, sizeof res - used, "%soffload on", used ? "; " : "");
            json_array_foreach(off, i, x) if (used < sizeof res - 16) used += (size_t)snprintf(
                res + used, sizeof res - used, "%s %d", i ? "," : "", (int)gq_json_num(x, "gpu"));
        }
        double gain = gq_json_num(pl, "gain");
        if (isfinite(gain) && used < sizeof res - 40)
            used += (size_t)snprintf(res + used, sizeof res - used, "; %.2f× the naive mapping", gain);
        if (!used)
            snprintf(res, sizeof res, "not computed");
        static const char *const ids[] = {NULL};
        row(rows, "Placement", ev, res, row_verdict(&cl, ids, json_is_object(pl)),
            "Keep heavy exchanges on fast paths; verify in the serving stack");
    }

    /* Integrity. */
    {
        snprintf(ev, sizeof ev,
                 "%d records: every figure against its path's capacity, overlap of concurrent windows, "
                 "data pattern checks",
                 f->n_records);
        snprintf(res, sizeof res, "%d impossible, %d overlap-invalid, %d failed checks, %d errors",
                 f->n_impossible, f->n_overlap_invalid, f->n_verify_failed, f->n_errors);
        static const char *const ids[] = {"impossible", "verify", "errors", "overlap", NULL};
        row(rows, "Measurement integrity", ev, res, row_verdict(&cl, ids, f->n_records > 0),
            "Trust the figures above");
    }
    row(rows, "Application validation", "TTFT, ITL, throughput, tails and errors under the target workload",
        "not measured by gpuqual: run the serving stack on the placement above", "skip",
        "Confirm the infrastructure choices improve service");
    json_object_set_new(card, "rows", rows);

    /* ---- findings in plain sentences ---- */
    if (overall == GQ_V_FAIL || overall == GQ_V_WARN) {
        int shown = 0;
        for (int k = 0; k < cl.n && shown < 6; k++)
            if (cl.v[k].verdict == overall) {
                finding(fs, "%s: %s", overall == GQ_V_FAIL ? "FAIL" : "WARN", cl.v[k].text);
                shown++;
            }
    }
    if (m0 && isfinite(lo)) {
        bool staged = json_is_true(json_object_get(m0, "staged"));
        if (json_is_true(json_object_get(dm, "no_p2p")) || staged)
            finding(
                fs,
                "No GPU pair has P2P: every GPU-to-GPU byte goes through host memory (%s GB/s one pair at a "
                "time, host-staged), so the host paths are the budget for any multi-GPU exchange.",
                range(lo, hi, s1, sizeof s1));
        else if (json_is_true(json_object_get(dm, "split"))) {
            char list[256] = "";
            size_t used = 0;
            json_array_foreach(json_object_get(dm, "domains"), i, x)
            {
                int gl[MAXG];
                int n = jints(x, gl, MAXG);
                char sb[64];
                int w = snprintf(list + used, sizeof list - used, "%s{%s}", i ? ", " : "",
                                 gq_domains_set_str(gl, n, sb, sizeof sb));
                if (w > 0 && (size_t)w < sizeof list - used)
                    used += (size_t)w;
            }
            finding(
                fs,
                "GPUs form %d performance domains, %s: pairs within a domain reach %s GB/s one way, pairs "
                "across %s GB/s (one pair at a time).",
                ndom, list, range(wlo, whi, s1, sizeof s1), range(alo, ahi, s2, sizeof s2));
        } else
            finding(
                fs,
                "Every GPU pair reaches %s GB/s one way: one performance domain, no boundary larger than the "
                "measurement spread.",
                range(lo, hi, s1, sizeof s1));
    }
    {
        const json_t *w = json_object_get(pairs, "within"), *ac = json_object_get(pairs, "across");
        double ra = gq_json_num(pairs, "ratio");
        if (json_is_object(w) && json_is_object(ac) && isfinite(ra))
            finding(
                fs,
                "%d pairs at once within domains moved %s GB/s in total, %d pairs across domains %s GB/s: "
                "crossing domains keeps %.0f%% of the bandwidth. Keep heavy GPU-to-GPU exchanges within "
                "domains.",
                (int)json_array_size(json_object_get(w, "pairs")),
                f1(gq_json_num(w, "aggregate_gbps"), a, sizeof a),
                (int)json_array_size(json_object_get(ac, "pairs")),
                f1(gq_json_num(ac, "aggregate_gbps"), b, sizeof b), ra * 100);
    }
    json_array_foreach(bottlenecks, i, x)
    {
        const char *dir = gq_json_str(x, "direction", "?");
        int gl[MAXG];
        int n = jints(json_object_get(x, "gpus"), gl, MAXG);
        char sb[64];
        const char *expl = gq_json_str(x, "explanation", "");
        if (!strcmp(dir, "p2p"))
            finding(fs,
                    "Concurrent GPU pairs among GPUs %s share about %s GB/s when they copy at once (one pair "
                    "at a "
                    "time they would move %s GB/s). %s%s",
                    gq_domains_set_str(gl, n, sb, sizeof sb),
                    f1(gq_json_num(x, "capacity_gbps"), a, sizeof a),
                    f1(gq_json_num(x, "sum_alone_gbps"), b, sizeof b), expl,
                    *expl && expl[strlen(expl) - 1] != '.' ? "." : "");
        else
            finding(fs,
                    "GPUs %s share one %s budget of about %s GB/s when they copy at once (alone they would "
                    "move %s GB/s together). %s%s",
                    gq_domains_set_str(gl, n, sb, sizeof sb),
                    !strcmp(dir, "h2d")   ? "host-to-GPU"
                    : !strcmp(dir, "d2h") ? "GPU-to-host"
                                          : dir,
                    f1(gq_json_num(x, "capacity_gbps"), a, sizeof a),
                    f1(gq_json_num(x, "sum_alone_gbps"), b, sizeof b), expl,
                    *expl && expl[strlen(expl) - 1] != '.' ? "." : "");
    }
    {
        const json_t *all = json_object_get(host, "all");
        static const char *const dn[2] = {"h2d", "d2h"};
        for (int dd = 0; dd < 2 && json_is_object(all); dd++) {
            int gl[MAXG];
            int n = jints(json_object_get(host, "gpus"), gl, MAXG);
            double v[MAXG];
            double vlo = INFINITY, vhi = -INFINITY;
            for (int k = 0; k < n; k++) {
                const json_t *e = json_array_get(json_object_get(all, dn[dd]), (size_t)k);
                v[k] = json_is_number(e) ? json_number_value(e) : NAN;
                if (isfinite(v[k])) {
                    vlo = fmin(vlo, v[k]);
                    vhi = fmax(vhi, v[k]);
                }
            }
            if (!(isfinite(vlo) && vhi > 0 && vlo < 0.85 * vhi))
                continue;
            int slow[MAXG], fast[MAXG], ns = 0, nf = 0;
            double mid = (vlo + vhi) / 2, sl = INFINITY, sh = -INFINITY, fl = INFINITY, fh = -INFINITY;
            for (int k = 0; k < n; k++) {
                if (!isfinite(v[k]))
                    continue;
                if (v[k] < mid) {
                    slow[ns++] = gl[k];
                    sl = fmin(sl, v[k]);
                    sh = fmax(sh, v[k]);
                } else {
                    fast[nf++] = gl[k];
                    fl = fmin(fl, v[k]);
                    fh = fmax(fh, v[k]);
                }
            }
            char sa[64], sb2[64];
            finding(fs,
                    "With all %d GPUs copying %s at once, GPUs %s get %s GB/s each against %s GB/s for GPUs "
                    "%s: an "
                    "asymmetry that each GPU alone does not show.",
                    n, dd ? "to host memory" : "from host memory",
                    gq_domains_set_str(slow, ns, sa, sizeof sa), range(sl, sh, s1, sizeof s1),
                    range(fl, fh, s2, sizeof s2), gq_domains_set_str(fast, nf, sb2, sizeof sb2));
        }
    }
    if (json_is_object(pl)) {
        const json_t *off = json_object_get(pl, "offload");
        if (json_array_size(off)) {
            int gl[MAXG], n = 0;
            json_array_foreach(off, i, x) if (n < MAXG) gl[n++] = (int)gq_json_num(x, "gpu");
            const json_t *oa = json_object_get(pl, "offload_aggregate");
            double mh = gq_json_num(json_object_get(oa, "h2d"), "measured_gbps"),
                   md = gq_json_num(json_object_get(oa, "d2h"), "measured_gbps");
            char list[96] = "";
            size_t used = 0;
            for (int k = 0; k < n; k++) {
                /* 64 workers do not fit: stop at the last whole entry rather than run past list. */
                int w = snprintf(list + used, sizeof list - used, "%s%d", k ? "," : "", gl[k]);
                if (w < 0 || (size_t)w >= sizeof list - used)
                    break;
                used += (size_t)w;
            }
            if (n > 1)
                finding(fs,
                        "For KV offload, use GPUs %s: their host paths do not collide (measured together: %s "
                        "GB/s "
                        "to GPU, %s GB/s to host in total).",
                        list, f1(mh, a, sizeof a), f1(md, b, sizeof b));
            else
                finding(fs, "For KV offload, use GPU %s (%s GB/s to GPU, %s GB/s to host).", list,
                        f1(mh, a, sizeof a), f1(md, b, sizeof b));
        }
        const json_t *pp = json_object_get(pl, "pairs");
        if (json_array_size(pp)) {
            char list[256] = "";
            size_t used = 0;
            json_array_foreach(pp, i, x) if (used < sizeof list - 16) used +=
                (size_t)snprintf(list + used, sizeof list - used, "%s%d→%d", i ? ", " : "",
                                 (int)gq_json_num(x, "prefill"), (int)gq_json_num(x, "decode"));
            double gain = gq_json_num(pl, "gain");
            const json_t *pa = json_object_get(pl, "pairs_aggregate");
            if (json_is_true(json_object_get(pl, "all_staged")))
                finding(fs,
                        "Prefill→decode handoffs %s: every handoff is host-staged (no P2P), so the pairs are "
                        "chosen "
                        "to use both sockets' host budgets.",
                        list);
            else
                finding(fs,
                        "Prefill→decode handoffs %s keep every KV transfer on a fast path: %s GB/s measured "
                        "together%s%s%s.",
                        list, f1(gq_json_num(pa, "measured_gbps"), a, sizeof a), isfinite(gain) ? ", " : "",
                        isfinite(gain) ? f1(gain, b, sizeof b) : "",
                        isfinite(gain) ? "× the naive mapping (GPUs in index order)" : "");
        }
    }
    json_array_foreach(sweeps, i, x)
    {
        const json_t *fit = json_object_get(x, "fit");
        if (!json_is_object(fit))
            continue;
        double h = gq_json_num(fit, "half_bytes");
        char hb[32];
        finding(
            fs,
            "%s: each copy costs about %s µs before data moves; copies smaller than %s get less than half of "
            "its %s GB/s.",
            gq_json_str(x, "label", "?"), f1(gq_json_num(fit, "fixed_us"), a, sizeof a),
            approx_size(h, hb, sizeof hb), f1(gq_json_num(fit, "asymptotic_gbps"), b, sizeof b));
        break;
    }
    if (json_is_object(stress)) {
        double tmax = -INFINITY, cap = -INFINITY;
        int nth = 0, ng = 0;
        json_array_foreach(json_object_get(stress, "gpus"), i, x)
        {
            ng++;
            tmax = fmax(tmax, gq_json_num(x, "temp_max_c"));
            double cp = gq_json_num(x, "power_capped_pct");
            if (isfinite(cp))
                cap = fmax(cap, cp);
            nth += json_is_true(json_object_get(x, "thermal_slowdown"));
        }
        const json_t *node = json_object_get(stress, "node");
        char who[32];
        if (ng == 1)
            snprintf(who, sizeof who, "the GPU");
        else if (ng == 2)
            snprintf(who, sizeof who, "both GPUs");
        else
            snprintf(who, sizeof who, "all %d GPUs", ng);
        finding(fs,
                "Under %s s of load on %s (%s W together, GPU telemetry), the hottest reached %s °C%s%s%s; "
                "power capping in up to %s%% of samples is expected near the limit and is not a thermal "
                "slowdown.",
                f1(gq_json_num(stress, "elapsed_s"), a, sizeof a), who,
                f1(gq_json_num(node, "power_total_avg_w"), b, sizeof b), f1(tmax, c, sizeof c),
                nth ? ", with THERMAL SLOWDOWN on " : ", with no thermal slowdown",
                nth ? f1(nth, d, sizeof d) : "",
                nth == 1 ? " GPU"
                : nth    ? " GPUs"
                         : "",
                f1(cap, s1, sizeof s1));
    }
    if (json_is_true(json_object_get(id, "vm")) && gq_json_num(id, "numa_nodes") <= 1)
        finding(
            fs,
            "This is a virtual machine showing one NUMA node: host buffers cannot be bound to the physical "
            "memory locality, and shared budgets found here are inferred from measurement only.");
    json_object_set_new(card, "findings", fs);
out:
    gq_checklist_free(&cl);
    free(f);
    return rc;
}

/* ---- composition ------------------------------------------------------------ */

json_t *gq_card_compose(const gq_card_inputs *in, gq_err *err)
{
    const gq_topo *t = in->topo;
    const gq_recordset *rs = in->rs;
    json_t *out = NULL, *card = NULL;
    gq_pairmatrix *pm = calloc(1, sizeof *pm), *pw = calloc(1, sizeof *pw);
    gq_domains *dom = calloc(1, sizeof *dom);
    gq_bottlenecks bn;
    bool have_bn = false;
    int sel[MAXG], n = 0;
    if (!pm || !pw || !dom) {
        gq_err_set(err, GQ_E_NOMEM, "out of memory composing the card");
        goto fail;
    }
    if (!t || !rs) {
        gq_err_set(err, GQ_E_USAGE, "the card needs a topology and records");
        goto fail;
    }
    if (in->opts && in->opts->ngpus > 0) {
        n = in->opts->ngpus;
        memcpy(sel, in->opts->gpus, sizeof(int) * (size_t)n);
    } else {
        for (int k = 0; k < t->ngpu && k < MAXG; k++)
            sel[n++] = k;
    }
    uint64_t bytes = in->bytes ? in->bytes : main_bytes(rs);
    card = json_object();
    json_object_set_new(card, "card_version", json_integer(GQ_CARD_VERSION));
    json_object_set_new(card, "hostname",
                        json_string(in->hostname     ? in->hostname
                                    : t->hostname[0] ? t->hostname
                                                     : "unknown"));
    json_object_set_new(card, "budget_s", in->opts ? json_real(in->opts->budget_s) : json_null());
    json_object_set_new(card, "planned_s", in->plan ? json_real(in->plan->est_total_s) : json_null());
    json_object_set_new(card, "elapsed_s", in->elapsed_s > 0 ? json_real(in->elapsed_s) : json_null());
    json_object_set_new(card, "complete", json_boolean(in->complete));
    json_object_set_new(card, "stopped_at", in->stopped_at ? json_string(in->stopped_at) : json_null());
    json_object_set_new(card, "bytes", json_integer((json_int_t)bytes));
    if (in->plan) {
        json_t *pj = json_array();
        for (int s = 0; s < GQ_CS_COUNT; s++) {
            const gq_card_step *st = &in->plan->step[s];
            json_array_append_new(pj, json_pack("{s:s, s:s, s:f, s:f, s:s, s:s}", "step",
                                                gq_card_step_name(s), "title", gq_card_step_title(s), "est_s",
                                                st->est_s, "elapsed_s", st->elapsed_s, "status",
                                                gq_card_step_status_name(st->status), "note", st->note));
        }
        json_object_set_new(card, "plan", pj);
        json_object_set_new(card, "quality",
                            json_pack("{s:i, s:f, s:i}", "rounds", in->plan->rounds, "round_s",
                                      in->plan->round_s, "sweep_points", in->plan->sweep_points));
    }
    json_object_set_new(card, "identity", identity_json(t, sel, n, in->stress));

    /* Pairwise matrices and the domains they show. */
    static const char *const rtests[] = {GQ_CARD_TEST_MATRIX, GQ_CARD_TEST_STAGED,
                                         "device_to_device_memcpy_read_sm", NULL};
    static const char *const wtests[] = {"device_to_device_memcpy_write_ce", NULL};
    gq_pairmatrix_init(pm, sel, n);
    gq_pairmatrix_from_records(pm, rs, rtests);
    gq_pairmatrix_init(pw, sel, n);
    gq_pairmatrix_from_records(pw, rs, wtests);
    json_t *mats = json_array();
    bool any;
    json_t *mj =
        matrix_json("p2p_read", "GPU-to-GPU read, one pair at a time", GQ_CARD_TEST_MATRIX, pm, "GB/s", &any);
    if (any)
        json_array_append_new(mats, mj);
    else
        json_decref(mj);
    mj = matrix_json("p2p_write", "GPU-to-GPU write, one pair at a time", "device_to_device_memcpy_write_ce",
                     pw, "GB/s", &any);
    if (any)
        json_array_append_new(mats, mj);
    else
        json_decref(mj);
    json_object_set_new(card, "matrices", mats);
    gq_domains_opts dopt;
    gq_domains_opts_default(&dopt);
    gq_err e = {0};
    bool have_dom = n >= 1 && gq_domains_cluster(pm, &dopt, dom, &e) == GQ_OK;
    json_t *dlist = json_array();
    if (have_dom) {
        for (int k = 0; k < dom->ndomains; k++)
            json_array_append_new(dlist, ints_json(dom->member[k], dom->size[k]));
        json_object_set_new(card, "domains",
                            json_pack("{s:O, s:b, s:o, s:o, s:o, s:b}", "domains", dlist, "split", dom->split,
                                      "threshold_gbps", jnum(dom->split ? dom->threshold_gbps : NAN),
                                      "within_min_gbps", jnum(dom->within_min_gbps), "across_max_gbps",
                                      jnum(dom->across_max_gbps), "no_p2p", dom->no_p2p));
    } else {
        json_object_set_new(card, "domains", json_null());
    }

    /* Bottlenecks, host paths and concurrent pairs. */
    gq_bn_opts bo;
    gq_bn_opts_default(&bo);
    bo.bytes = bytes;
    if (gq_bottlenecks_infer(rs, t, have_dom ? dom : NULL, &bo, &bn, &e) != GQ_OK) {
        gq_bottlenecks_free(&bn);
        gq_err_set(err, GQ_E_NOMEM, "%s", e.msg);
        json_decref(dlist);
        goto fail;
    }
    have_bn = true;
    json_object_set_new(card, "host", host_json(&bn, sel, n, rs));
    bool multi = false; /* a domain of 2+ GPUs: within and across mean something */
    for (int k = 0; have_dom && k < dom->ndomains; k++)
        multi |= dom->size[k] >= 2;
    json_object_set_new(card, "pairs", multi ? pairs_json(&bn, pm) : json_null());
    json_object_set_new(card, "sweeps", sweeps_json(rs));
    json_object_set_new(card, "latency", latency_json(rs, sel, n));
    json_object_set_new(card, "placement", in->placement ? json_deep_copy(in->placement) : json_null());
    json_t *bj = gq_bottlenecks_to_json(&bn, rs);
    json_t *bl = bj && json_is_object(bj) ? json_incref(json_object_get(bj, "bottlenecks"))
                 : bj                     ? json_incref(bj)
                                          : json_array();
    json_decref(bj);
    if (!json_is_array(bl)) {
        json_decref(bl);
        bl = json_array();
    }
    out = json_object();
    if (gq_card_judge(card, bl, in->stress, rs, in->expect, err)) {
        json_decref(bl);
        json_decref(dlist);
        json_decref(out);
        out = NULL;
        goto fail;
    }
    json_object_set_new(out, "card", card);
    card = NULL;
    json_object_set_new(out, "domains", dlist);
    json_object_set_new(out, "bottlenecks", bl);
    goto done;
fail:
    json_decref(card);
done:
    if (have_bn)
        gq_bottlenecks_free(&bn);
    free(pm);
    free(pw);
    free(dom);
    return out;
}

int gq_card_exit_code(const json_t *card)
{
    if (json_is_false(json_object_get(card, "complete")))
        return 5;
    const char *v = gq_json_str(card, "verdict", "pass");
    return !strcmp(v, "fail") ? 1 : !strcmp(v, "warn") ? 4 : 0;
}
