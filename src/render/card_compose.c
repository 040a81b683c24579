/* Composition of the card section: figures from records (identity, matrices,
 * domains, host paths, concurrent pairs, sweeps, latency) and the composed
 * card, which card_judge.c then judges (analysis/card.h). Pure: reads records,
 * the topology and saved sections; never measures. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/bottlenecks.h"
#include "analysis/json_get.h"
#include "analysis/card.h"
#include "render/card_compose.h"
#include "render/card_render.h"
#include "analysis/domains.h"
#include "analysis/probes.h"
#include "analysis/sweepfit.h"
#include "core/units.h"
#include "render/analysis_render.h"

#define MAXG GQ_MAX_GPUS

static json_t *jnum(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

static json_t *ints_json(const int *v, int n)
{
    json_t *a = json_array();
    for (int i = 0; i < n; i++)
        json_array_append_new(a, json_integer(v[i]));
    return a;
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

/* The links above the GPUs: every switch or root port on a selected GPU's
 * path to the root whose uplink discovery read, once, with the GPUs behind
 * it. Read by discovery (sysfs), never under load. */
static json_t *uplinks_json(const gq_topo *t, const int *sel, int n)
{
    json_t *a = json_array();
    uint64_t behind[GQ_MAX_PCI_NODES] = {0};
    int gpu_of_bit[64];
    for (int k = 0; k < n && k < 64; k++) {
        gpu_of_bit[k] = sel[k];
        int node = -1;
        for (int i = 0; i < t->npci && node < 0; i++)
            if (t->pci[i].kind == GQ_PCI_GPU && t->pci[i].gpu == sel[k])
                node = i;
        for (int p = node >= 0 ? t->pci[node].parent : -1, guard = 0;
             p >= 0 && p < t->npci && guard < GQ_MAX_PCI_NODES; p = t->pci[p].parent, guard++)
            if (t->pci[p].kind == GQ_PCI_BRIDGE && t->pci[p].link_width > 0 && t->pci[p].link_width_max > 0)
                behind[p] |= (uint64_t)1 << k;
    }
    for (int i = 0; i < t->npci && i < GQ_MAX_PCI_NODES; i++) {
        if (!behind[i])
            continue;
        const gq_pci_node *p = &t->pci[i];
        json_t *g = json_array();
        for (int k = 0; k < n && k < 64; k++)
            if (behind[i] >> k & 1)
                json_array_append_new(g, json_integer(gpu_of_bit[k]));
        json_t *o = json_object();
        json_object_set_new(o, "node", json_string(p->bus_id[0] ? p->bus_id : p->label));
        json_object_set_new(o, "kind", json_string(gq_bn_explain_name(gq_bn_pci_kind(t, i))));
        json_object_set_new(o, "gpus", g);
        json_object_set_new(o, "gen", p->link_gen > 0 ? json_integer(p->link_gen) : json_null());
        json_object_set_new(o, "width", json_integer(p->link_width));
        json_object_set_new(o, "gen_max", p->link_gen_max > 0 ? json_integer(p->link_gen_max) : json_null());
        json_object_set_new(o, "width_max", json_integer(p->link_width_max));
        json_object_set_new(o, "gbps", jnum(p->link_gbps > 0 ? p->link_gbps : NAN));
        json_object_set_new(o, "under_load", json_false());
        json_object_set_new(o, "source", json_string("discovery"));
        json_array_append_new(a, o);
    }
    return a;
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
        /* identity from NVML: "unknown" when not read, "not supported" where NVML says so */
        json_object_set_new(j, "serial", json_string(g->serial[0] ? g->serial : "unknown"));
        json_object_set_new(j, "vbios", json_string(g->vbios[0] ? g->vbios : "unknown"));
        json_object_set_new(j, "ecc_mode", json_string(gq_mode_name(g->ecc_mode)));
        json_object_set_new(j, "mig_mode", json_string(gq_mode_name(g->mig_mode)));
        json_object_set_new(j, "persistence_mode", json_string(gq_mode_name(g->persistence_mode)));
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
    json_object_set_new(o, "uplinks", uplinks_json(t, sel, n));
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

/* Why the run measured this host subset: the reason of the contention probe
 * (analysis/probes.h) with the same GPUs and direction, planned again from
 * the topology and the domains as the run planned it; NULL when no probe
 * has that set. */
static const char *subset_why(const gq_probe_plan *pp, const gq_bn_obs *ob)
{
    for (int i = 0; pp && i < pp->n; i++) {
        const gq_probe *pr = &pp->v[i];
        if (pr->kind == GQ_PROBE_MATRIX || pr->direction != ob->direction || pr->ngpus != ob->ngpus)
            continue;
        bool same = true;
        for (int k = 0; k < pr->ngpus && same; k++)
            same = pr->gpus[k] == ob->gpus[k];
        if (same && pr->why[0])
            return pr->why;
    }
    return NULL;
}

/* Host subsets: the contention probes' sets (not the placement step's
 * verification sets), each set and direction once. */
static bool subset_listed(const gq_bottlenecks *bn, int upto, const gq_bn_obs *ob)
{
    if (strcmp(ob->test, GQ_CARD_TEST_H2D_SET) && strcmp(ob->test, GQ_CARD_TEST_D2H_SET))
        return false;
    for (int i = 0; i < upto; i++) {
        const gq_bn_obs *o = &bn->obs[i];
        if (o->p2p || o->direction != ob->direction || o->ngpus != ob->ngpus ||
            (strcmp(o->test, GQ_CARD_TEST_H2D_SET) && strcmp(o->test, GQ_CARD_TEST_D2H_SET)))
            continue;
        if (!memcmp(o->gpus, ob->gpus, sizeof(int) * (size_t)ob->ngpus))
            return false;
    }
    return true;
}

/* The host section. dom: the measured domains, NULL when none. */
static json_t *host_json(const gq_bottlenecks *bn, const int *sel, int n, const gq_recordset *rs,
                         const gq_topo *t, const gq_domains *dom)
{
    /* The subsets' reasons: the contention probes planned again as the run
     * planned them, from the measured domains or, where the matrix gave none,
     * the domains the tree suggests (exec/card_run.c). */
    gq_probe_plan plan = {0}, *pp = NULL;
    gq_domains *assumed = dom ? NULL : calloc(1, sizeof *assumed);
    if (assumed)
        gq_probes_assume_domains(t, sel, n, assumed);
    gq_err e = {0};
    if ((dom || assumed) && gq_probes_plan_contention(&plan, t, sel, n, dom ? dom : assumed, &e) == GQ_OK)
        pp = &plan;
    free(assumed);
    json_t *o = json_object();
    json_object_set_new(o, "gpus", ints_json(sel, n));
    json_t *alone = json_object(), *all = json_object(), *aiv = json_object();
    static const char *const dn[2] = {"h2d", "d2h"};
    bool any_all = false;
    for (int d = 0; d < 2; d++) {
        json_t *a = json_array(), *iv = json_array();
        for (int k = 0; k < n; k++) {
            json_array_append_new(a, jnum(bn->alone[d][sel[k]]));
            double lo = bn->alone_lo[d][sel[k]], hi = bn->alone_hi[d][sel[k]];
            json_array_append_new(iv, isfinite(lo) && isfinite(hi) ? json_pack("[oo]", jnum(lo), jnum(hi))
                                                                   : json_null());
        }
        json_object_set_new(alone, dn[d], a);
        json_object_set_new(aiv, dn[d], iv);
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
    json_object_set_new(o, "alone_interval", aiv);
    json_object_set_new(o, "all", any_all ? all : (json_decref(all), json_null()));
    json_t *subs = json_array();
    for (int i = 0; i < bn->nobs; i++) {
        const gq_bn_obs *ob = &bn->obs[i];
        if (ob->p2p || ob->ngpus < 2 || ob->ngpus >= n || !subset_listed(bn, i, ob))
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
        const char *why = subset_why(pp, ob);
        json_object_set_new(json_array_get(subs, json_array_size(subs) - 1), "why",
                            why ? json_string(why) : json_null());
    }
    json_object_set_new(o, "subsets", subs);
    gq_probe_plan_free(&plan);
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

/* ---- composition ------------------------------------------------------------ */

/* A document that is not a card (a run, domains, sweep ...) has no plan: each
 * step is done when the document holds its records (or section), else
 * skipped as not applicable, with a note saying the document has none. */
static void infer_plan(const gq_recordset *rs, const json_t *stress, const json_t *placement, int ngpu,
                       gq_card_plan *p)
{
    bool have[GQ_CS_COUNT] = {[GQ_CS_IDENTITY] = true};
    for (int i = 0; i < rs->n; i++) {
        const gq_record *r = &rs->v[i];
        const char *t = r->test;
        if (!strncmp(t, GQ_CARD_TEST_SWEEP_PREFIX, strlen(GQ_CARD_TEST_SWEEP_PREFIX)))
            have[GQ_CS_SWEEP] = true;
        else if (r->is_latency)
            have[GQ_CS_LATENCY] = true;
        else if (!strcmp(t, GQ_CARD_TEST_BIDIR_SET))
            have[GQ_CS_BIDIR] = true;
        else if (r->src.kind == GQ_EP_GPU && r->dst.kind == GQ_EP_GPU)
            have[r->aggregate || !strcmp(t, GQ_CARD_TEST_PAIRS) ? GQ_CS_CONTENTION : GQ_CS_MATRIX] = true;
        else if (r->aggregate)
            have[GQ_CS_CONTENTION] = true;
        else
            have[GQ_CS_HOST] = true;
    }
    have[GQ_CS_STRESS] = json_is_object(stress);
    have[GQ_CS_PLACEMENT] = json_is_object(placement);
    memset(p, 0, sizeof *p);
    p->level = GQ_LEVEL_STANDARD;
    for (int s = 0; s < GQ_CS_COUNT; s++) {
        gq_card_step *st = &p->step[s];
        st->run = have[s];
        st->status = have[s] ? GQ_CSS_DONE : GQ_CSS_SKIPPED;
        if (have[s])
            continue;
        bool pair = s == GQ_CS_MATRIX || s == GQ_CS_CONTENTION || s == GQ_CS_PLACEMENT;
        st->reason = pair && ngpu < 2 ? GQ_EVR_ONE_GPU : GQ_EVR_NOT_APPLICABLE;
        snprintf(st->note, sizeof st->note, "the document holds no such measurement");
    }
}

/* The "plan" and "quality" keys of the card section. */
static void plan_json(json_t *card, const gq_card_plan *plan)
{
    json_t *pj = json_array();
    for (int s = 0; s < GQ_CS_COUNT; s++) {
        const gq_card_step *st = &plan->step[s];
        const char *why = gq_ev_reason_name(st->reason);
        json_array_append_new(pj,
                              json_pack("{s:s, s:s, s:f, s:f, s:s, s:s, s:o}", "step", gq_card_step_name(s),
                                        "title", gq_card_step_title(s), "est_s", st->est_s, "elapsed_s",
                                        st->elapsed_s, "status", gq_card_step_status_name(st->status), "note",
                                        st->note, "reason", why ? json_string(why) : json_null()));
    }
    json_object_set_new(card, "plan", pj);
    json_object_set_new(card, "quality",
                        json_pack("{s:i, s:f, s:i}", "rounds", plan->rounds, "round_s", plan->round_s,
                                  "sweep_points", plan->sweep_points));
}

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
    json_object_set_new(card, "allow_busy", json_boolean(in->opts && in->opts->allow_busy));
    json_object_set_new(card, "planned_s", in->plan ? json_real(in->plan->est_total_s) : json_null());
    json_object_set_new(card, "elapsed_s", in->elapsed_s > 0 ? json_real(in->elapsed_s) : json_null());
    json_object_set_new(card, "complete", json_boolean(in->complete));
    json_object_set_new(card, "stopped_at", in->stopped_at ? json_string(in->stopped_at) : json_null());
    json_object_set_new(card, "bytes", json_integer((json_int_t)bytes));
    gq_card_plan *inferred = NULL;
    const gq_card_plan *plan = in->plan;
    if (!plan && (inferred = calloc(1, sizeof *inferred))) {
        infer_plan(rs, in->stress, in->placement, n, inferred);
        plan = inferred;
    }
    json_object_set_new(card, "level",
                        json_string(gq_card_level_name(plan ? plan->level : GQ_LEVEL_STANDARD)));
    if (plan)
        plan_json(card, plan);
    free(inferred);
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
    /* host-staged pairs: the driver's own staged copy beside gpuqual's pipelined one */
    static const char *const dtests[] = {GQ_CARD_TEST_DRIVER_STAGED, NULL};
    gq_pairmatrix_init(pw, sel, n);
    gq_pairmatrix_from_records(pw, rs, dtests);
    mj = matrix_json("driver_staged",
                     "GPU-to-GPU through host memory by the driver (cudaMemcpyPeer without P2P)",
                     GQ_CARD_TEST_DRIVER_STAGED, pw, "GB/s", &any);
    json_t *driver = any ? mj : NULL;
    if (!any)
        json_decref(mj);
    gq_pairmatrix_init(pw, sel, n);
    gq_pairmatrix_from_records(pw, rs, wtests);
    mj = matrix_json("p2p_write", "GPU-to-GPU write, one pair at a time", "device_to_device_memcpy_write_ce",
                     pw, "GB/s", &any);
    if (any)
        json_array_append_new(mats, mj);
    else
        json_decref(mj);
    if (driver)
        json_array_append_new(mats, driver);
    json_object_set_new(card, "matrices", mats);
    gq_domains_opts dopt;
    gq_domains_opts_default(&dopt);
    dopt.topo = t; /* to say why a GPU was set aside (its link) */
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
        /* GPUs whose every pair is slow for a reason of their own, as `gpuqual domains` sets them aside. */
        json_t *sa = json_array();
        for (int k = 0; k < dom->nset_aside; k++)
            json_array_append_new(sa, json_pack("{s:i, s:s, s:s}", "gpu", dom->set_aside[k], "reason",
                                                dom->set_aside_no_p2p[k] ? "no_p2p" : "slow_pairs", "text",
                                                dom->set_aside_why[k]));
        json_object_set_new(json_object_get(card, "domains"), "set_aside", sa);
        /* unordered pairs with a usable figure: 0 means nothing is known of the pairs */
        json_object_set_new(json_object_get(card, "domains"), "pairs", json_integer(dom->npairs));
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
    json_object_set_new(card, "host", host_json(&bn, sel, n, rs, t, have_dom ? dom : NULL));
    /* decisions the figures' intervals left open after measuring again */
    json_t *und = json_array();
    for (int k = 0; have_dom && k < dom->nopen; k++)
        json_array_append_new(und, gq_domain_open_to_json(&dom->open[k]));
    for (int k = 0; k < bn.nopen; k++)
        json_array_append_new(und, gq_bn_open_to_json(&bn.open[k]));
    json_object_set_new(card, "undetermined", und);
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
    if (gq_card_judge_json(card, bl, in->stress, rs, in->expect, err)) {
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
