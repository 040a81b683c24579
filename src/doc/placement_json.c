/* The sections of a place document, from the typed model and result of
 * analysis/placement. */
#include <math.h>
#include <stdlib.h>

#include "core/json.h"
#include "doc/analysis_json.h"

static const char *limit_kind_name(gq_limit_kind k)
{
    switch (k) {
    case GQ_LIMIT_H2D: return "h2d";
    case GQ_LIMIT_D2H: return "d2h";
    case GQ_LIMIT_DUPLEX: return "both";
    case GQ_LIMIT_P2P: return "p2p";
    case GQ_LIMIT_STAGED: return "staged";
    }
    return "?";
}

/* Placement figures: negative means not measured (null); kept to 3 decimals. */
static json_t *num_or_null(double v)
{
    return gq_json_num_if(round(v * 1000) / 1000, v >= 0);
}

static json_t *gpus_json(gq_gpuset s)
{
    json_t *a = json_array();
    for (int i = 0; i < GQ_MAX_GPUS; i++)
        if ((s >> i) & 1u)
            json_array_append_new(a, json_integer(i));
    return a;
}

static json_t *map_pairs_json(const gq_place_map *map)
{
    json_t *a = json_array();
    for (int i = 0; i < map->npairs; i++) {
        const gq_place_pair *q = &map->pairs[i];
        json_array_append_new(
            a, json_pack("{s:i, s:i, s:s, s:o, s:o, s:o, s:s}", "prefill", q->prefill, "decode", q->decode,
                         "path", q->path == GQ_PF_P2P ? "p2p" : "staged", "alone_gbps",
                         num_or_null(q->alone_gbps), "predicted_gbps", num_or_null(q->predicted_gbps),
                         "measured_gbps", num_or_null(q->measured_gbps), "why", q->why));
    }
    return a;
}

static json_t *map_workers_json(const gq_place_map *map)
{
    json_t *a = json_array();
    for (int i = 0; i < map->nworkers; i++) {
        const gq_place_worker *w = &map->workers[i];
        double pm = fmin(w->predicted_h2d, w->predicted_d2h);
        double mm =
            (w->measured_h2d >= 0 && w->measured_d2h >= 0) ? fmin(w->measured_h2d, w->measured_d2h) : -1;
        json_array_append_new(
            a, json_pack("{s:i, s:o, s:o, s:{s:o, s:o}, s:{s:o, s:o}, s:s}", "gpu", w->gpu, "predicted_gbps",
                         num_or_null(pm), "measured_gbps", num_or_null(mm), "h2d", "predicted_gbps",
                         num_or_null(w->predicted_h2d), "measured_gbps", num_or_null(w->measured_h2d), "d2h",
                         "predicted_gbps", num_or_null(w->predicted_d2h), "measured_gbps",
                         num_or_null(w->measured_d2h), "why", w->why));
    }
    return a;
}

static json_t *map_replicas_json(const gq_place_map *map)
{
    json_t *a = json_array();
    for (int r = 0; r < map->nreplicas; r++) {
        const gq_place_replica *rep = &map->replicas[r];
        json_t *g = json_array(), *p = json_array();
        for (int i = 0; i < rep->ngpus; i++)
            json_array_append_new(g, json_integer(rep->gpus[i]));
        for (int i = 0; i < rep->npairs; i++)
            json_array_append_new(p, json_integer(rep->pairs[i]));
        json_array_append_new(a,
                              json_pack("{s:i, s:o, s:o, s:o, s:o, s:s}", "replica", r, "gpus", g, "pairs", p,
                                        "predicted_gbps", num_or_null(rep->predicted_gbps), "measured_gbps",
                                        num_or_null(rep->measured_gbps), "why", rep->why));
    }
    return a;
}

static void map_json(json_t *o, const gq_place_map *map, const gq_place_roles *r)
{
    if (r->prefill) {
        json_object_set_new(o, "pairs", map_pairs_json(map));
        json_object_set_new(o, "pairs_aggregate",
                            json_pack("{s:o, s:o, s:o, s:b}", "predicted_gbps",
                                      num_or_null(map->pairs_predicted), "measured_gbps",
                                      num_or_null(map->pairs_measured), "overlap",
                                      num_or_null(map->pairs_overlap), "valid", map->pairs_valid));
    }
    if (r->offload) {
        json_object_set_new(o, "offload", map_workers_json(map));
        json_object_set_new(o, "offload_aggregate",
                            json_pack("{s:{s:o, s:o}, s:{s:o, s:o}, s:b}", "h2d", "predicted_gbps",
                                      num_or_null(map->offload_predicted_h2d), "measured_gbps",
                                      num_or_null(map->offload_measured_h2d), "d2h", "predicted_gbps",
                                      num_or_null(map->offload_predicted_d2h), "measured_gbps",
                                      num_or_null(map->offload_measured_d2h), "valid", map->offload_valid));
    }
    if (r->replicas) {
        json_object_set_new(o, "replicas", map_replicas_json(map));
        json_object_set_new(o, "replicas_min",
                            json_pack("{s:o, s:o}", "predicted_gbps",
                                      num_or_null(map->replicas_predicted_min), "measured_gbps",
                                      num_or_null(map->replicas_measured_min)));
    }
}

json_t *gq_place_to_json(const gq_place_model *m, const gq_place_result *res)
{
    const gq_place_roles *r = &res->roles;
    json_t *o = json_object();
    json_object_set_new(o, "roles",
                        json_pack("{s:i, s:i, s:i, s:i}", "prefill", r->prefill, "decode", r->decode,
                                  "offload", r->offload, "replicas", r->replicas));
    map_json(o, &res->chosen, r);
    json_t *naive = json_object();
    map_json(naive, &res->naive, r);
    json_object_set_new(o, "naive", naive);
    json_object_set_new(o, "verified", json_boolean(res->verified));
    json_object_set_new(o, "gain", gq_json_num_if(res->gain_pairs, r->prefill && res->gain_pairs > 0));
    json_object_set_new(
        o, "gain_interval",
        r->prefill && res->gain_pairs_lo > 0
            ? json_pack("[oo]", gq_json_num(res->gain_pairs_lo), gq_json_num(res->gain_pairs_hi))
            : json_null());
    json_object_set_new(o, "offload_gain",
                        gq_json_num_if(res->gain_offload, r->offload && res->gain_offload > 0));
    json_object_set_new(o, "replicas_gain",
                        gq_json_num_if(res->gain_replicas, r->replicas && res->gain_replicas > 0));
    json_object_set_new(o, "all_staged", json_boolean(r->prefill && res->all_staged));
    json_object_set_new(o, "staged_unmeasured", json_integer(r->prefill ? res->staged_unmeasured : 0));
    json_t *notes = json_array();
    for (int i = 0; i < res->nnotes; i++)
        json_array_append_new(notes, json_string(res->notes[i]));
    json_object_set_new(o, "notes", notes);
    json_t *warnings = json_array();
    for (int i = 0; i < res->nwarnings; i++)
        json_array_append_new(
            warnings, json_pack("{s:s, s:s}", "id", res->warnings[i].id, "text", res->warnings[i].text));
    json_object_set_new(o, "warnings", warnings);
    json_t *atts = json_array();
    for (int a = 0; a < res->nattempts; a++) {
        const gq_place_attempt *t = &res->attempts[a];
        json_t *e = json_pack("{s:i, s:b, s:s, s:i}", "attempt", a + 1, "kept", a == res->final_attempt,
                              "finding", t->finding, "learned_limits", t->nlearned);
        if (t->npairs) {
            json_t *pa = json_array();
            for (int i = 0; i < t->npairs; i++)
                json_array_append_new(pa, json_pack("{s:i, s:i, s:o, s:o}", "prefill", t->prefill[i],
                                                    "decode", t->decode[i], "predicted_gbps",
                                                    num_or_null(t->pair_predicted[i]), "measured_gbps",
                                                    num_or_null(t->pair_measured[i])));
            json_object_set_new(e, "pairs", pa);
            json_object_set_new(e, "pairs_aggregate",
                                json_pack("{s:o, s:o, s:b}", "predicted_gbps",
                                          num_or_null(t->pairs_predicted), "measured_gbps",
                                          num_or_null(t->pairs_measured), "valid", t->pairs_valid));
        }
        if (t->nworkers) {
            json_t *w = json_array();
            for (int i = 0; i < t->nworkers; i++)
                json_array_append_new(w, json_integer(t->workers[i]));
            json_object_set_new(e, "offload", w);
            json_object_set_new(e, "offload_aggregate",
                                json_pack("{s:o, s:o}", "predicted_gbps", num_or_null(t->offload_predicted),
                                          "measured_gbps", num_or_null(t->offload_measured)));
        }
        if (t->nreplicas)
            json_object_set_new(e, "replicas_min",
                                json_pack("{s:o, s:o}", "predicted_gbps",
                                          num_or_null(t->replicas_predicted_min), "measured_gbps",
                                          num_or_null(t->replicas_measured_min)));
        json_array_append_new(atts, e);
    }
    json_object_set_new(o, "attempts", atts);
    json_t *doms = json_array(), *lims = json_array();
    for (int d = 0; d < m->ndomains; d++)
        json_array_append_new(doms, gpus_json(m->domains[d]));
    for (int l = 0; l < m->nlimits; l++) {
        const gq_place_limit *lim = &m->limits[l];
        json_t *e =
            json_pack("{s:i, s:s, s:o, s:f, s:s}", "id", l, "kind", limit_kind_name(lim->kind), "gpus",
                      gpus_json(lim->a), "capacity_gbps", lim->capacity_gbps, "evidence", lim->evidence);
        if (gq_place_limit_is_gpu(lim->kind))
            json_object_set_new(e, "to_gpus", gpus_json(lim->b));
        json_array_append_new(lims, e);
    }
    json_object_set_new(o, "model",
                        json_pack("{s:o, s:o, s:f, s:i, s:b, s:s}", "domains", doms, "limits", lims,
                                  "tolerance", m->tolerance, "candidates", res->candidates, "exhaustive",
                                  res->exhaustive, "source", m->source));
    return o;
}

int gq_place_model_build(gq_place_model *m, int ngpu, const gq_recordset *rs, const json_t *doc,
                         const gq_topo *topo, gq_err *err)
{
    gq_domains *dom = NULL;
    gq_bottlenecks *bn = NULL;
    int rc = GQ_OK;
    if (doc && json_object_get(doc, "domains")) {
        if (!(dom = malloc(sizeof *dom)))
            return gq_err_set(err, GQ_E_NOMEM, "placement: out of memory");
        rc = gq_domains_from_json("the domains analysis", doc, -1, dom, err);
    }
    /* Only a list is a bottlenecks section (the card's step runner passes its
     * typed budgets to gq_place_model_build_typed directly). Saved documents
     * reach this through gq_doc_load, which refuses a malformed section
     * before. */
    if (!rc && doc && json_is_array(json_object_get(doc, "bottlenecks"))) {
        if (!(bn = malloc(sizeof *bn)))
            rc = gq_err_set(err, GQ_E_NOMEM, "placement: out of memory");
        else
            rc = gq_bottlenecks_from_json("the domains analysis", doc, -1, bn, err);
    }
    if (!rc)
        rc = gq_place_model_build_typed(m, ngpu, rs, dom, bn, topo, err);
    free(dom);
    free(bn);
    return rc;
}
