/* The card document from a run (doc/card_compose.h): the figures composed by
 * analysis (analysis/card_compose.h) written as the "card" section, judged
 * (analysis/card_judge.c) and written with the verdict, rows and findings by
 * the card's codec, beside the "domains" and "bottlenecks" sections. Writes
 * JSON only: every figure is computed in analysis. */
#include "doc/card_compose.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/card_compose.h"
#include "doc/json_get.h"
#include "core/units.h"
#include "core/version.h"
#include "doc/analysis_json.h"
#include "doc/card_codec.h"
#include "measure/journal.h"

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

static json_t *uplinks_json(const gq_topo *t, const gq_card_figures *f)
{
    json_t *a = json_array();
    for (int u = 0; u < f->nuplinks; u++) {
        const gq_pci_node *p = &t->pci[f->uplinks[u].node];
        json_t *o = json_object();
        json_object_set_new(o, "node", json_string(p->bus_id[0] ? p->bus_id : p->label));
        json_object_set_new(o, "kind",
                            json_string(gq_bn_explain_name(gq_bn_pci_kind(t, f->uplinks[u].node))));
        json_object_set_new(o, "gpus", ints_json(f->uplinks[u].gpus, f->uplinks[u].ngpus));
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

static json_t *identity_gpu_json(const gq_topo *t, const gq_card_figures *f, int k)
{
    const gq_gpu_info *g = &t->gpu[f->sel[k]];
    json_t *j = json_object();
    json_object_set_new(j, "index", json_integer(f->sel[k]));
    json_object_set_new(j, "name", json_string(g->name));
    json_object_set_new(j, "uuid", json_string(g->uuid));
    json_object_set_new(j, "memory_mib",
                        g->mem_bytes ? json_integer((json_int_t)(g->mem_bytes / GQ_MiB)) : json_null());
    json_object_set_new(j, "power_limit_w", g->power_limit_w > 0 ? json_real(g->power_limit_w) : json_null());
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
    json_object_set_new(j, "pcie",
                        json_pack("{s:i, s:i, s:i, s:i, s:b, s:o}", "gen", f->pcie_gen[k], "width",
                                  f->pcie_width[k], "gen_max", g->pcie_gen_max, "width_max",
                                  g->pcie_width_max, "under_load", f->pcie_loaded[k], "gbps",
                                  jnum(g->pcie_gbps > 0 ? g->pcie_gbps : NAN)));
    return j;
}

static void version_str(int v, char *b, size_t n)
{
    if (v > 0)
        snprintf(b, n, "%d.%d", v / 1000, (v % 1000) / 10);
    else
        snprintf(b, n, "unknown");
}

static json_t *identity_json(const gq_topo *t, const gq_card_figures *f)
{
    const int *sel = f->sel, n = f->n;
    json_t *o = json_object(), *gs = json_array();
    for (int k = 0; k < n; k++)
        json_array_append_new(gs, identity_gpu_json(t, f, k));
    json_object_set_new(o, "gpus", gs);
    json_object_set_new(o, "uplinks", uplinks_json(t, f));
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
    version_str(t->cuda_driver_version, b, sizeof b);
    json_object_set_new(o, "cuda_driver_str", json_string(b));
    version_str(t->cuda_runtime_version, b, sizeof b);
    json_object_set_new(o, "cuda_runtime_str", json_string(b));
    json_object_set_new(o, "cpu", json_string(t->cpu_model[0] ? t->cpu_model : "unknown"));
    json_object_set_new(o, "sockets", json_integer(t->sockets));
    json_object_set_new(o, "numa_nodes", json_integer(t->numa_nodes));
    json_object_set_new(o, "vm", json_boolean(t->is_vm));
    json_object_set_new(o, "hypervisor", json_string(t->hypervisor));
    json_object_set_new(o, "source", json_string(t->source));
    snprintf(b, sizeof b, "%s (git %.12s)", gq_version, gq_git_rev);
    json_object_set_new(o, "gpuqual", json_string(b));
    return o;
}

static json_t *matrix_json(const char *id, const char *title, const char *test, const gq_pairmatrix *pm)
{
    json_t *vals = json_array();
    int nstaged = 0, ncells = 0;
    for (int i = 0; i < pm->n; i++) {
        json_t *row = json_array();
        for (int j = 0; j < pm->n; j++) {
            double v = i == j ? NAN : pm->gbps[i][j];
            json_array_append_new(row, jnum(v));
            if (isfinite(v)) {
                ncells++;
                nstaged += pm->staged[i][j];
            }
        }
        json_array_append_new(vals, row);
    }
    return json_pack("{s:s, s:s, s:s, s:s, s:o, s:o, s:b, s:i}", "id", id, "title", title, "unit", "GB/s",
                     "test", test, "gpus", ints_json(pm->gpu, pm->n), "values", vals, "staged",
                     ncells > 0 && nstaged == ncells, "staged_cells", nstaged);
}

static json_t *matrices_json(const gq_card_figures *f)
{
    json_t *mats = json_array();
    if (f->any_read)
        json_array_append_new(mats, matrix_json("p2p_read", "GPU-to-GPU read, one pair at a time",
                                                GQ_TID_D2D_READ_CE, f->read));
    if (f->any_write)
        json_array_append_new(mats, matrix_json("p2p_write", "GPU-to-GPU write, one pair at a time",
                                                GQ_TID_D2D_WRITE_CE, f->write));
    /* host-staged pairs: the driver's own staged copy beside gpuqual's pipelined one */
    if (f->any_driver)
        json_array_append_new(
            mats, matrix_json("driver_staged",
                              "GPU-to-GPU through host memory by the driver (cudaMemcpyPeer without P2P)",
                              GQ_TID_D2D_DRIVER_STAGED, f->driver));
    return mats;
}

static json_t *domains_json(const gq_card_figures *f, json_t *dlist)
{
    const gq_domains *dom = f->dom;
    if (!f->have_dom)
        return json_null();
    json_t *o =
        json_pack("{s:O, s:b, s:o, s:o, s:o, s:b}", "domains", dlist, "split", dom->split, "threshold_gbps",
                  jnum(dom->split ? dom->threshold_gbps : NAN), "within_min_gbps", jnum(dom->within_min_gbps),
                  "across_max_gbps", jnum(dom->across_max_gbps), "no_p2p", dom->no_p2p);
    /* GPUs whose every pair is slow for a reason of their own, as `gpuqual domains` sets them aside. */
    json_t *sa = json_array();
    for (int k = 0; k < dom->nset_aside; k++)
        json_array_append_new(sa, json_pack("{s:i, s:s, s:s}", "gpu", dom->set_aside[k], "reason",
                                            dom->set_aside_no_p2p[k] ? "no_p2p" : "slow_pairs", "text",
                                            dom->set_aside_why[k]));
    json_object_set_new(o, "set_aside", sa);
    /* unordered pairs with a usable figure: 0 means nothing is known of the pairs */
    json_object_set_new(o, "pairs", json_integer(dom->npairs));
    return o;
}

static json_t *host_subset_json(const gq_card_figures *f, int s)
{
    const gq_bn_obs *ob = &f->bn.obs[f->subset[s]];
    json_t *pg = json_array();
    for (int k = 0; k < ob->ngpus; k++)
        json_array_append_new(pg, jnum(ob->rate[ob->gpus[k]]));
    json_t *o = json_pack("{s:o, s:s, s:o, s:o, s:o, s:o, s:b, s:o, s:b}", "gpus",
                          ints_json(ob->gpus, ob->ngpus), "direction", gq_direction_name(ob->direction),
                          "per_gpu", pg, "aggregate_gbps", jnum(ob->aggregate_gbps), "expected_gbps",
                          jnum(ob->expected_gbps), "sum_alone_gbps", jnum(ob->sum_alone_gbps), "valid", true,
                          "overlap", jnum(ob->overlap), "contended", ob->contended);
    json_object_set_new(o, "why", f->subset_why[s][0] ? json_string(f->subset_why[s]) : json_null());
    return o;
}

/* The host section. */
static json_t *host_json(const gq_card_figures *f)
{
    const gq_bottlenecks *bn = &f->bn;
    const int *sel = f->sel, n = f->n;
    json_t *o = json_object();
    json_object_set_new(o, "gpus", ints_json(sel, n));
    json_t *alone = json_object(), *all = json_object(), *aiv = json_object();
    static const char *const dn[2] = {"h2d", "d2h"};
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
        const gq_bn_obs *best = f->host_all[d] >= 0 ? &bn->obs[f->host_all[d]] : NULL;
        json_t *per = json_array();
        for (int k = 0; k < n; k++)
            json_array_append_new(per, jnum(best ? best->rate[sel[k]] : NAN));
        json_object_set_new(all, dn[d], per);
        char key[40];
        snprintf(key, sizeof key, "%s_aggregate_gbps", dn[d]);
        json_object_set_new(all, key, jnum(best ? best->aggregate_gbps : NAN));
        snprintf(key, sizeof key, "%s_valid", dn[d]);
        json_object_set_new(all, key, json_boolean(best != NULL));
    }
    json_object_set_new(o, "alone", alone);
    json_object_set_new(o, "alone_interval", aiv);
    bool any_all = f->host_all[0] >= 0 || f->host_all[1] >= 0;
    json_object_set_new(o, "all", any_all ? all : (json_decref(all), json_null()));
    json_t *subs = json_array();
    for (int s = 0; s < f->nsubsets; s++)
        json_array_append_new(subs, host_subset_json(f, s));
    json_object_set_new(o, "subsets", subs);
    /* Both directions at once (bidirectional_set): direction aggregates and their sum. */
    if (f->have_bidir)
        json_object_set_new(o, "bidir",
                            json_pack("{s:o, s:o, s:o}", "h2d_aggregate_gbps", jnum(f->bidir_agg[0]),
                                      "d2h_aggregate_gbps", jnum(f->bidir_agg[1]), "sum_gbps",
                                      jnum(f->bidir_sum)));
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
        json_array_append_new(iso, jnum(gq_card_pair_isolated(pm, ob->pair_src[k], ob->pair_dst[k])));
    }
    return json_pack("{s:o, s:o, s:o, s:o, s:o, s:b}", "pairs", pl, "gbps", g, "isolated_gbps", iso,
                     "aggregate_gbps", jnum(ob->aggregate_gbps), "overlap", jnum(ob->overlap), "valid", true);
}

static json_t *pairs_json(const gq_card_figures *f)
{
    const gq_bn_obs *w = f->pairs_within >= 0 ? &f->bn.obs[f->pairs_within] : NULL;
    const gq_bn_obs *a = f->pairs_across >= 0 ? &f->bn.obs[f->pairs_across] : NULL;
    if (!f->multi || (!w && !a))
        return json_null();
    json_t *o = json_object();
    json_object_set_new(o, "within", w ? pairs_side(w, f->read) : json_null());
    json_object_set_new(o, "across", a ? pairs_side(a, f->read) : json_null());
    json_object_set_new(o, "ratio",
                        jnum(w && a && w->aggregate_gbps > 0 ? a->aggregate_gbps / w->aggregate_gbps : NAN));
    return o;
}

static json_t *sweeps_json(const gq_card_figures *f)
{
    json_t *out = json_array();
    for (int i = 0; i < f->nsweeps; i++) {
        const gq_card_sweep *s = &f->sweeps[i];
        json_t *by = json_array(), *gb = json_array();
        for (int k = 0; k < s->np; k++) {
            json_array_append_new(by, json_integer((json_int_t)s->bytes[k]));
            json_array_append_new(gb, jnum(s->gbps[k]));
        }
        json_t *fj = s->have_fit ? json_pack("{s:f, s:f, s:f, s:f}", "fixed_us", s->fit.a_us,
                                             "asymptotic_gbps", s->fit.bw_gbps, "half_bytes",
                                             s->fit.half_bytes, "rms_rel", s->fit.rms_rel)
                                 : json_null();
        json_array_append_new(out, json_pack("{s:s, s:s, s:s, s:s, s:o, s:o, s:o}", "label", s->label, "src",
                                             s->src, "dst", s->dst, "test", s->test, "bytes", by, "gbps", gb,
                                             "fit", fj));
    }
    return out;
}

static json_t *latency_json(const gq_card_figures *f)
{
    const int *sel = f->sel, n = f->n;
    if (!f->lat_host_any && !f->lat_p2p_any)
        return json_null();
    json_t *o = json_object();
    if (f->lat_host_any) {
        json_t *a = json_array();
        for (int k = 0; k < n; k++)
            json_array_append_new(a, jnum(f->lat_host[k]));
        json_object_set_new(o, "host", json_pack("{s:o, s:o}", "gpus", ints_json(sel, n), "ns", a));
    }
    if (f->lat_p2p_any) {
        json_t *v = json_array();
        for (int k = 0; k < n; k++) {
            json_t *row = json_array();
            for (int l = 0; l < n; l++)
                json_array_append_new(row, jnum(k == l ? NAN : f->lat_p2p[k][l]));
            json_array_append_new(v, row);
        }
        json_object_set_new(
            o, "p2p",
            json_pack("{s:o, s:o, s:s, s:s}", "gpus", ints_json(sel, n), "values", v, "unit", "ns", "note",
                      "row: GPU running the pointer chase; column: GPU whose memory it reads"));
    }
    return o;
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

/* The card section's head: the run's budget, times and buffer size, the plan and the level. */
static json_t *head_json(const gq_card_inputs *in, const gq_card_figures *f)
{
    const gq_topo *t = in->topo;
    json_t *card = json_object();
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
    json_object_set_new(card, "bytes", json_integer((json_int_t)f->bytes));
    json_object_set_new(card, "level", json_string(gq_card_level_name(f->plan.level)));
    plan_json(card, &f->plan);
    return card;
}

/* The lowest PCIe generation and width the stress section says each GPU
 * showed under load (stress.gpus[].pcie.gen_min_loaded, width_min_loaded),
 * by GPU index; the last entry of a GPU with both wins. */
static void loaded_pcie(const json_t *stress, double (*out)[2])
{
    for (int g = 0; g < GQ_MAX_GPUS; g++)
        out[g][0] = out[g][1] = NAN;
    size_t i;
    const json_t *sg;
    json_array_foreach(json_object_get(stress, "gpus"), i, sg)
    {
        double gpu = gq_json_get_num(sg, "gpu");
        if (!(gpu >= 0 && gpu < GQ_MAX_GPUS) || gpu != floor(gpu))
            continue;
        const json_t *pc = json_object_get(sg, "pcie");
        double lg = gq_json_get_num(pc, "gen_min_loaded"), lw = gq_json_get_num(pc, "width_min_loaded");
        if (isfinite(lg) && lg > 0 && isfinite(lw) && lw > 0) {
            out[(int)gpu][0] = lg;
            out[(int)gpu][1] = lw;
        }
    }
}

/* The card's "undetermined" list: the decisions the figures' intervals left open. */
static json_t *undetermined_json(const gq_card_figures *f)
{
    json_t *und = json_array();
    for (int k = 0; f->have_dom && k < f->dom->nopen; k++)
        json_array_append_new(und, gq_domain_open_to_json(&f->dom->open[k]));
    for (int k = 0; k < f->bn.nopen; k++)
        json_array_append_new(und, gq_bn_open_to_json(&f->bn.open[k]));
    return und;
}

/* The root's "bottlenecks" list. */
static json_t *bottlenecks_list(const gq_card_figures *f, const gq_recordset *rs)
{
    json_t *bj = gq_bottlenecks_to_json(&f->bn, rs);
    json_t *bl = bj && json_is_object(bj) ? json_incref(json_object_get(bj, "bottlenecks"))
                 : bj                     ? json_incref(bj)
                                          : json_array();
    json_decref(bj);
    if (!json_is_array(bl)) {
        json_decref(bl);
        bl = json_array();
    }
    return bl;
}

json_t *gq_card_placement_json(const gq_card_result *res)
{
    if (!res->place_model || !res->place_result)
        return NULL;
    json_t *pl = gq_place_to_json(res->place_model, res->place_result);
    if (pl && res->place_default_split)
        json_object_set_new(pl, "default_split", json_true());
    return pl;
}

json_t *gq_card_stress_json(const gq_card_result *res)
{
    if (!res->have_stress || !res->stress_summary)
        return NULL;
    return gq_stress_to_json(&res->stress, res->stress_summary);
}

json_t *gq_card_compose(const gq_card_inputs *in, gq_err *err)
{
    double loaded[GQ_MAX_GPUS][2];
    if (in->stress)
        loaded_pcie(in->stress, loaded);
    gq_card_figures_in fin = {.topo = in->topo,
                              .rs = in->rs,
                              .plan = in->plan,
                              .opts = in->opts,
                              .bytes = in->bytes,
                              .have_stress = json_is_object(in->stress),
                              .have_placement = json_is_object(in->placement),
                              .loaded_pcie = in->stress ? (const double(*)[2])loaded : NULL};
    gq_card_figures f;
    if (gq_card_figures_make(&fin, &f, err))
        return NULL;
    json_t *card = head_json(in, &f);
    json_object_set_new(card, "identity", identity_json(in->topo, &f));
    json_object_set_new(card, "matrices", matrices_json(&f));
    json_t *dlist = json_array();
    for (int k = 0; f.have_dom && k < f.dom->ndomains; k++)
        json_array_append_new(dlist, ints_json(f.dom->member[k], f.dom->size[k]));
    json_object_set_new(card, "domains", domains_json(&f, dlist));
    json_object_set_new(card, "host", host_json(&f));
    json_object_set_new(card, "undetermined", undetermined_json(&f));
    json_object_set_new(card, "pairs", pairs_json(&f));
    json_object_set_new(card, "sweeps", sweeps_json(&f));
    json_object_set_new(card, "latency", latency_json(&f));
    json_object_set_new(card, "placement", in->placement ? json_deep_copy(in->placement) : json_null());
    /* the steps' own sections, in their lines' order (analysis/card_steps.h) */
#define SECTION_JSON_(ID, NAME, TYPE, FIELD)                                                                 \
    json_object_set_new(card, #NAME, gq_card_##NAME##_to_json(in->sec ? &in->sec->FIELD : NULL));
    GQ_CARD_SECTIONS(SECTION_JSON_)
#undef SECTION_JSON_
    json_t *bl = bottlenecks_list(&f, in->rs);
    gq_card_figures_free(&f);
    json_t *out = json_object();
    if (gq_card_judge_json(card, bl, in->stress, in->rs, in->expect, err)) {
        json_decref(bl);
        json_decref(dlist);
        json_decref(out);
        json_decref(card);
        return NULL;
    }
    json_object_set_new(out, "card", card);
    json_object_set_new(out, "domains", dlist);
    json_object_set_new(out, "bottlenecks", bl);
    return out;
}
