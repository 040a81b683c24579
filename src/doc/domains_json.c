/* The "domains" and "domain_analysis" sections, and the pair matrix, from the
 * typed results of analysis/domains. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/json.h"
#include "doc/analysis_json.h"
#include "doc/decode.h"

json_t *gq_domain_open_to_json(const gq_domain_open *u)
{
    json_t *gp = json_array(), *pairs = json_array();
    for (int i = 0; gp && i < 64; i++)
        if (u->gpus >> i & 1)
            json_array_append_new(gp, json_integer(i));
    for (int p = 0; pairs && p < u->npairs; p++)
        json_array_append_new(pairs, json_pack("[ii]", u->pair_a[p], u->pair_b[p]));
    return json_pack("{s:s,s:o,s:[oo],s:[oo],s:o,s:s}", "decision", "domain_boundary", "gpus", gp, "gap_gbps",
                     gq_json_num(u->lo_gbps), gq_json_num(u->hi_gbps), "gap_interval_pct",
                     gq_json_num(u->worst_pct), gq_json_num(u->best_pct), "pairs", pairs, "text", u->text);
}

json_t *gq_domains_to_json(const gq_domains *d)
{
    json_t *root = json_object(), *o = json_object(), *doms = json_array(), *ch = json_array();
    if (!root || !o || !doms || !ch) {
        json_decref(root);
        json_decref(o);
        json_decref(doms);
        json_decref(ch);
        return NULL;
    }
    for (int k = 0; k < d->ndomains; k++) {
        json_t *a = json_array();
        for (int i = 0; i < d->size[k]; i++)
            json_array_append_new(a, json_integer(d->member[k][i]));
        json_array_append_new(doms, a);
        json_array_append_new(ch, json_boolean(d->chained[k]));
    }
    json_object_set_new(root, "domains", doms);
    json_object_set_new(o, "chained", ch);
    json_object_set_new(o, "split", json_boolean(d->split));
    json_object_set_new(o, "threshold_gbps", gq_json_num_if(d->threshold_gbps, d->split));
    json_object_set_new(o, "gap_gbps",
                        d->split ? json_pack("[ff]", d->gap_lo_gbps, d->gap_hi_gbps) : json_null());
    json_object_set_new(o, "within_min_gbps", gq_json_num(d->within_min_gbps));
    json_object_set_new(o, "across_max_gbps", gq_json_num(d->across_max_gbps));
    json_object_set_new(o, "max_spread", gq_json_num(d->max_spread));
    json_object_set_new(o, "pairs", json_integer(d->npairs));
    json_object_set_new(o, "missing_pairs", json_integer(d->nmissing));
    json_object_set_new(o, "no_p2p", json_boolean(d->no_p2p));
    json_t *sa = json_array(), *gr = json_array();
    for (int k = 0; k < d->nset_aside; k++)
        json_array_append_new(sa, json_pack("{s:i,s:s,s:s}", "gpu", d->set_aside[k], "reason",
                                            d->set_aside_no_p2p[k] ? "no_p2p" : "slow_pairs", "text",
                                            d->set_aside_why[k]));
    for (int k = 0; k < d->ngroups; k++) {
        const gq_domain_group *g = &d->groups[k];
        json_t *gp = json_array();
        for (int i = 0; i < 64; i++)
            if (g->gpus >> i & 1)
                json_array_append_new(gp, json_integer(i));
        json_array_append_new(gr, json_pack("{s:o,s:i,s:i,s:f,s:[ff]}", "gpus", gp, "parent", g->parent,
                                            "depth", g->depth, "threshold_gbps", g->threshold_gbps,
                                            "gap_gbps", g->gap_lo_gbps, g->gap_hi_gbps));
    }
    json_object_set_new(o, "set_aside", sa);
    json_object_set_new(o, "groups", gr);
    json_t *und = json_array();
    for (int k = 0; k < d->nopen; k++)
        json_array_append_new(und, gq_domain_open_to_json(&d->open[k]));
    json_object_set_new(o, "undetermined", und);
    json_object_set_new(
        o, "method",
        json_string(
            "single linkage at the largest gap between sorted pair bandwidths that exceeds "
            "10% at the ends of the figures' intervals, again inside every group it makes, after setting "
            "aside GPUs whose every pair is slow for a reason of their own; direct P2P cells only "
            "(docs/method-domains.md)"));
    json_object_set_new(root, "domain_analysis", o);
    return root;
}

json_t *gq_pairmatrix_to_json(const gq_pairmatrix *m)
{
    json_t *o = json_object(), *g = json_array(), *v = json_array(), *s = json_array(), *st = json_array();
    if (!o || !g || !v || !s || !st) {
        json_decref(o);
        json_decref(g);
        json_decref(v);
        json_decref(s);
        json_decref(st);
        return NULL;
    }
    for (int i = 0; i < m->n; i++) {
        json_array_append_new(g, json_integer(m->gpu[i]));
        json_t *rv = json_array(), *rs = json_array(), *rst = json_array();
        for (int j = 0; j < m->n; j++) {
            json_array_append_new(rv, gq_json_num(m->gbps[i][j]));
            json_array_append_new(rs, gq_json_num_if(m->spread[i][j], isfinite(m->gbps[i][j])));
            json_array_append_new(rst, json_boolean(m->staged[i][j]));
        }
        json_array_append_new(v, rv);
        json_array_append_new(s, rs);
        json_array_append_new(st, rst);
    }
    json_object_set_new(o, "gpus", g);
    json_object_set_new(o, "gbps", v);
    json_object_set_new(o, "spread", s);
    json_object_set_new(o, "staged", st);
    return o;
}

/* domain_analysis, optional: each field, when present, of its type. */
static int analysis_from_json(const char *path, const json_t *o, gq_domains *d, gq_err *err)
{
    if (!o || json_is_null(o))
        return GQ_OK;
    if (!json_is_object(o))
        return gq_dec_bad(path, "domain_analysis", o, "an object", err);
    int rc;
    double pairs = 0, missing = 0;
    if ((rc = gq_dec_bool(path, "domain_analysis.split", json_object_get(o, "split"), false, &d->split,
                          err)) ||
        (rc = gq_dec_bool(path, "domain_analysis.no_p2p", json_object_get(o, "no_p2p"), false, &d->no_p2p,
                          err)) ||
        (rc = gq_dec_num(path, "domain_analysis.threshold_gbps", json_object_get(o, "threshold_gbps"), true,
                         0, GQ_DEC_MAX_GBPS, &d->threshold_gbps, err)) ||
        (rc = gq_dec_num(path, "domain_analysis.within_min_gbps", json_object_get(o, "within_min_gbps"), true,
                         0, GQ_DEC_MAX_GBPS, &d->within_min_gbps, err)) ||
        (rc = gq_dec_num(path, "domain_analysis.across_max_gbps", json_object_get(o, "across_max_gbps"), true,
                         0, GQ_DEC_MAX_GBPS, &d->across_max_gbps, err)) ||
        (rc = gq_dec_num(path, "domain_analysis.max_spread", json_object_get(o, "max_spread"), true, 0, 1e6,
                         &d->max_spread, err)) ||
        (rc = gq_dec_num(path, "domain_analysis.pairs", json_object_get(o, "pairs"), true, 0, 1e6, &pairs,
                         err)) ||
        (rc = gq_dec_num(path, "domain_analysis.missing_pairs", json_object_get(o, "missing_pairs"), true, 0,
                         1e6, &missing, err)))
        return rc;
    d->npairs = isfinite(pairs) ? (int)pairs : 0;
    d->nmissing = isfinite(missing) ? (int)missing : 0;
    if (!isfinite(d->threshold_gbps))
        d->threshold_gbps = 0;
    json_t *ch = json_object_get(o, "chained");
    if (ch && !json_is_null(ch)) {
        if (!json_is_array(ch) || (int)json_array_size(ch) != d->ndomains)
            return gq_dec_bad(path, "domain_analysis.chained", ch, "a list of one boolean per domain", err);
        for (int k = 0; k < d->ndomains; k++) {
            char key[64];
            snprintf(key, sizeof key, "domain_analysis.chained[%d]", k);
            if ((rc = gq_dec_bool(path, key, json_array_get(ch, (size_t)k), false, &d->chained[k], err)))
                return rc;
        }
    }
    return GQ_OK;
}

int gq_domains_from_json(const char *path, const json_t *doc, int ngpu, gq_domains *d, gq_err *err)
{
    memset(d, 0, sizeof *d);
    for (int g = 0; g < GQ_MAX_GPUS; g++)
        d->domain_of[g] = -1;
    d->within_min_gbps = d->across_max_gbps = NAN;
    const json_t *doms = json_object_get(doc, "domains");
    if (!json_is_array(doms) || json_array_size(doms) > GQ_MAX_GPUS)
        return gq_dec_bad(path, "domains", doms, "a list of domains, each a list of GPU indices", err);
    size_t i;
    const json_t *v;
    json_array_foreach(doms, i, v)
    {
        char key[64];
        /* a domain is a list of GPUs, or an object {"gpus": [...]} */
        const json_t *g = json_is_object(v) ? json_object_get(v, "gpus") : v;
        snprintf(key, sizeof key, json_is_object(v) ? "domains[%zu].gpus" : "domains[%zu]", i);
        int rc = gq_dec_gpus(path, key, g, ngpu, d->member[i], &d->size[i], err);
        if (rc)
            return rc;
        for (int k = 0; k < d->size[i]; k++) {
            int gpu = d->member[i][k];
            if (d->domain_of[gpu] >= 0)
                return gq_err_set(err, GQ_E_USAGE,
                                  "%s: %s[%d]: GPU %d is also in domain %d, expected each GPU in one domain",
                                  path, key, k, gpu, d->domain_of[gpu]);
            d->domain_of[gpu] = (int)i;
        }
        d->ndomains++;
    }
    return analysis_from_json(path, json_object_get(doc, "domain_analysis"), d, err);
}
