/* The "bottlenecks", "contention" and "ignored" sections of a document, from
 * the typed result of analysis/bottlenecks. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/json.h"
#include "doc/analysis_json.h"
#include "doc/decode.h"

static json_t *int_array(const int *v, int n)
{
    json_t *a = json_array();
    for (int i = 0; a && i < n; i++)
        json_array_append_new(a, json_integer(v[i]));
    return a;
}

/* [lo, hi], or null when either end is unknown. */
static json_t *interval_json(double lo, double hi)
{
    if (!isfinite(lo) || !isfinite(hi) || lo <= 0)
        return json_null();
    return json_pack("[oo]", gq_json_num(lo), gq_json_num(hi));
}

static json_t *obs_json(const gq_bn_obs *o)
{
    json_t *j = json_object();
    if (!j)
        return NULL;
    json_object_set_new(j, "group", json_integer(o->group));
    json_object_set_new(j, "test", json_string(o->test));
    json_object_set_new(j, "direction", json_string(gq_direction_name(o->direction)));
    json_object_set_new(j, "bytes", json_integer((json_int_t)o->bytes));
    json_object_set_new(j, "gpus", int_array(o->gpus, o->ngpus));
    if (o->p2p) {
        json_t *pairs = json_array();
        for (int p = 0; p < o->npairs; p++)
            json_array_append_new(pairs, json_pack("{s:i,s:i,s:o}", "src", o->pair_src[p], "dst",
                                                   o->pair_dst[p], "gbps", gq_json_num(o->rate[p])));
        json_object_set_new(j, "pairs", pairs);
        json_object_set_new(j, "kind", json_string(gq_bn_p2p_kind_name(o->p2p_kind)));
    } else {
        json_t *per = json_object();
        for (int i = 0; i < o->ngpus; i++) {
            char k[16];
            snprintf(k, sizeof k, "%d", o->gpus[i]);
            json_object_set_new(per, k, gq_json_num(o->rate[o->gpus[i]]));
        }
        json_object_set_new(j, "per_gpu_gbps", per);
    }
    json_object_set_new(j, "aggregate_gbps", gq_json_num(o->aggregate_gbps));
    json_object_set_new(j, "sum_alone_gbps", gq_json_num(o->sum_alone_gbps));
    json_object_set_new(j, "expected_gbps", gq_json_num(o->expected_gbps));
    json_object_set_new(j, "overlap", gq_json_num(o->overlap));
    json_object_set_new(j, "contended", json_boolean(o->contended));
    json_object_set_new(j, "aggregate_interval_gbps",
                        interval_json(o->aggregate_lo_gbps, o->aggregate_hi_gbps));
    json_object_set_new(j, "limit_interval_gbps", interval_json(o->limit_lo_gbps, o->limit_hi_gbps));
    json_object_set_new(j, "undecided", json_boolean(o->undecided));
    return j;
}

json_t *gq_bn_open_to_json(const gq_bn_open *u)
{
    json_t *j = json_object();
    if (!j)
        return NULL;
    json_object_set_new(j, "decision",
                        json_string(u->kind == GQ_BN_OPEN_FOLD      ? "nested_budget"
                                    : u->kind == GQ_BN_OPEN_MISSING ? "missing_run"
                                                                    : "shared_budget"));
    json_object_set_new(j, "direction", json_string(gq_direction_name(u->direction)));
    json_object_set_new(j, "gpus", int_array(u->gpus, u->ngpus));
    json_object_set_new(j, "figure_interval_gbps", interval_json(u->figure_lo_gbps, u->figure_hi_gbps));
    json_object_set_new(j, "limit_interval_gbps", interval_json(u->limit_lo_gbps, u->limit_hi_gbps));
    json_object_set_new(j, "text", json_string(u->text));
    return j;
}

json_t *gq_bottlenecks_to_json(const gq_bottlenecks *b, const gq_recordset *rs)
{
    json_t *root = json_object(), *bl = json_array(), *obs = json_array(), *ign = json_array();
    json_t *alone = json_object();
    if (!root || !bl || !obs || !ign || !alone) {
        json_decref(root);
        json_decref(bl);
        json_decref(obs);
        json_decref(ign);
        json_decref(alone);
        return NULL;
    }
    for (int i = 0; i < b->n; i++) {
        const gq_bottleneck *bn = &b->v[i];
        json_t *j = json_object(), *ev = json_array();
        json_object_set_new(j, "gpus", int_array(bn->gpus, bn->ngpus));
        json_object_set_new(j, "direction", json_string(gq_direction_name(bn->direction)));
        json_object_set_new(j, "capacity_gbps", gq_json_num(bn->capacity_gbps));
        json_object_set_new(j, "capacity_interval_gbps",
                            interval_json(bn->capacity_lo_gbps, bn->capacity_hi_gbps));
        json_object_set_new(j, "sum_alone_gbps", gq_json_num(bn->sum_alone_gbps));
        json_object_set_new(j, "expected_gbps", gq_json_num(bn->expected_gbps));
        json_object_set_new(j, "explained_by", json_string(gq_bn_explain_name(bn->explained)));
        json_object_set_new(j, "node", bn->node[0] ? json_string(bn->node) : json_null());
        json_object_set_new(j, "link_gbps", gq_json_num_if(bn->link_gbps, bn->link_gbps > 0));
        json_object_set_new(j, "explanation", json_string(bn->explanation));
        if (bn->p2p) {
            json_object_set_new(j, "cross_domain", json_boolean(bn->cross_domain));
            json_object_set_new(j, "domains", int_array(bn->domains, bn->ndomains));
        }
        for (int e = 0; e < bn->nevidence; e++)
            json_array_append_new(ev, obs_json(&b->obs[bn->evidence[e]]));
        json_object_set_new(j, "evidence", ev);
        json_array_append_new(bl, j);
    }
    for (int i = 0; i < b->nobs; i++)
        json_array_append_new(obs, obs_json(&b->obs[i]));
    const char *names[2] = {"h2d", "d2h"};
    for (int s = 0; s < 2; s++) {
        json_t *a = json_array();
        int last = -1;
        for (int g = 0; g < GQ_MAX_GPUS; g++)
            if (isfinite(b->alone[s][g]))
                last = g;
        for (int g = 0; g <= last; g++)
            json_array_append_new(a, gq_json_num(b->alone[s][g]));
        json_object_set_new(alone, names[s], a);
    }
    for (int i = 0; i < b->nignored; i++) {
        const gq_bn_ignored *ig = &b->ignored[i];
        json_t *j = json_pack("{s:i,s:s}", "record", ig->record, "why", ig->why);
        if (rs && ig->record >= 0 && ig->record < rs->n) {
            char e1[32], e2[32];
            const gq_record *r = &rs->v[ig->record];
            json_object_set_new(j, "test", json_string(r->test));
            json_object_set_new(j, "src", json_string(gq_endpoint_str(r->src, e1, sizeof e1)));
            json_object_set_new(j, "dst", json_string(gq_endpoint_str(r->dst, e2, sizeof e2)));
            json_object_set_new(j, "gbps", gq_json_num(r->value.median));
        }
        json_array_append_new(ign, j);
    }
    json_object_set_new(root, "bottlenecks", bl);
    json_t *und = json_array();
    for (int i = 0; i < b->nopen; i++)
        json_array_append_new(und, gq_bn_open_to_json(&b->open[i]));
    json_object_set_new(root, "undetermined", und);
    json_t *ct = json_object();
    json_object_set_new(ct, "observations", obs);
    json_object_set_new(ct, "host_alone_gbps", alone);
    json_object_set_new(
        ct, "host_bytes",
        json_pack("{s:I,s:I}", "h2d", (json_int_t)b->bytes[0], "d2h", (json_int_t)b->bytes[1]));
    json_object_set_new(ct, "skipped_groups", json_integer(b->nskipped));
    json_object_set_new(ct, "one_numa_visible", json_boolean(b->one_numa_visible));
    json_t *asy = json_array();
    for (int sl = 0; sl < 2; sl++) {
        if (b->asym_obs[sl] < 0)
            continue;
        const gq_bn_obs *ob = &b->obs[b->asym_obs[sl]];
        json_t *a = json_object();
        json_object_set_new(a, "direction", json_string(names[sl]));
        json_object_set_new(a, "group", json_integer(ob->group));
        json_object_set_new(a, "gpus", int_array(ob->gpus, ob->ngpus));
        json_object_set_new(a, "slow", int_array(b->slow[sl], b->nslow[sl]));
        json_object_set_new(a, "slow_gbps",
                            b->nslow[sl] ? json_pack("[ff]", b->slow_lo[sl], b->slow_hi[sl]) : json_null());
        json_object_set_new(a, "fast_gbps",
                            isfinite(b->fast_lo[sl]) ? json_pack("[ff]", b->fast_lo[sl], b->fast_hi[sl])
                                                     : json_null());
        json_array_append_new(asy, a);
    }
    json_object_set_new(ct, "asymmetry", asy);
    json_object_set_new(root, "contention", ct);
    json_object_set_new(root, "ignored", ign);
    return root;
}

static const char *const explain_names[] = {"measurement_only", "pcie_switch", "root_port",
                                            "host_bridge",      "numa_node",   "cpu_interconnect"};

/* One entry of "bottlenecks" (its evidence observations are not read back). */
static int bottleneck_from_json(const char *path, size_t i, const json_t *j, int ngpu, gq_bottleneck *bn,
                                gq_err *err)
{
    char key[96];
    int rc, dir = 0, ex = 0;
    snprintf(key, sizeof key, "bottlenecks[%zu]", i);
    if (!json_is_object(j))
        return gq_dec_bad(path, key, j, "an object {gpus, direction, capacity_gbps, ...}", err);
    memset(bn, 0, sizeof *bn);
#define K(f) (snprintf(key, sizeof key, "bottlenecks[%zu].%s", i, f), key)
    static const char *const dirs[] = {"h2d", "d2h", "p2p"};
    if ((rc = gq_dec_gpus(path, K("gpus"), json_object_get(j, "gpus"), ngpu, bn->gpus, &bn->ngpus, err)) ||
        (rc = gq_dec_enum(path, K("direction"), json_object_get(j, "direction"), dirs, 3, &dir, err)) ||
        (rc = gq_dec_num(path, K("capacity_gbps"), json_object_get(j, "capacity_gbps"), false, 1e-9,
                         GQ_DEC_MAX_GBPS, &bn->capacity_gbps, err)) ||
        (rc = gq_dec_num(path, K("sum_alone_gbps"), json_object_get(j, "sum_alone_gbps"), true, 0,
                         GQ_DEC_MAX_GBPS, &bn->sum_alone_gbps, err)) ||
        (rc = gq_dec_num(path, K("expected_gbps"), json_object_get(j, "expected_gbps"), true, 0,
                         GQ_DEC_MAX_GBPS, &bn->expected_gbps, err)) ||
        (rc = gq_dec_num(path, K("link_gbps"), json_object_get(j, "link_gbps"), true, 0, GQ_DEC_MAX_GBPS,
                         &bn->link_gbps, err)) ||
        (rc =
             gq_dec_str(path, K("node"), json_object_get(j, "node"), true, bn->node, sizeof bn->node, err)) ||
        (rc = gq_dec_str(path, K("explanation"), json_object_get(j, "explanation"), true, bn->explanation,
                         sizeof bn->explanation, err)) ||
        (rc = gq_dec_bool(path, K("cross_domain"), json_object_get(j, "cross_domain"), false,
                          &bn->cross_domain, err)))
        return rc;
    bn->direction = dir == 0 ? GQ_DIR_H2D : dir == 1 ? GQ_DIR_D2H : GQ_DIR_P2P;
    bn->p2p = dir == 2;
    if (!isfinite(bn->link_gbps))
        bn->link_gbps = 0;
    json_t *e = json_object_get(j, "explained_by");
    if (e && !json_is_null(e) && (rc = gq_dec_enum(path, K("explained_by"), e, explain_names, 6, &ex, err)))
        return rc;
    bn->explained = (gq_bn_explain)ex;
    json_t *d = json_object_get(j, "domains");
    if (d && !json_is_null(d) && json_array_size(d) > 0) {
        if ((rc = gq_dec_gpus(path, K("domains"), d, GQ_MAX_GPUS, bn->domains, &bn->ndomains, err)))
            return rc;
    }
#undef K
    return GQ_OK;
}

int gq_bottlenecks_from_json(const char *path, const json_t *doc, int ngpu, gq_bottlenecks *b, gq_err *err)
{
    memset(b, 0, sizeof *b);
    for (int s = 0; s < 2; s++)
        for (int g = 0; g < GQ_MAX_GPUS; g++)
            b->alone[s][g] = b->alone_spread[s][g] = NAN;
    b->asym_obs[0] = b->asym_obs[1] = -1;
    const json_t *bl = json_object_get(doc, "bottlenecks");
    if (!json_is_array(bl) || json_array_size(bl) > GQ_BN_MAX)
        return gq_dec_bad(path, "bottlenecks", bl, "a list of at most 64 bottlenecks", err);
    size_t i;
    const json_t *v;
    json_array_foreach(bl, i, v)
    {
        int rc = bottleneck_from_json(path, i, v, ngpu, &b->v[b->n], err);
        if (rc)
            return rc;
        b->n++;
    }
    return GQ_OK;
}
