/* The card's sections the judge's rows and findings read, decoded into the
 * typed views of analysis/card.h (gq_card_views): the domains, the matrices,
 * the concurrent pairs, the host paths, the document's bottlenecks and the
 * placement. Absent or
 * wrongly typed fields read as the judge read them from the JSON: NAN for a
 * number, false for a flag, 0 entries for a list. card_facts_json.c decodes
 * the rest of the views and calls these. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/card.h"
#include "doc/json_get.h"
#include "doc/card_codec.h"

#define MAXG GQ_MAX_GPUS

/* a[k] when it is a number, else NAN. */
static double num_at(const json_t *a, size_t k)
{
    const json_t *x = json_array_get(a, k);
    return json_is_number(x) ? json_number_value(x) : NAN;
}

/* A GPU index read as a number: 0 when absent or not a number, INT_MIN beyond int's range (what
 * the judge's casts of the JSON numbers gave before the views), else truncated. */
static int gpu_index(double v)
{
    if (isnan(v))
        return 0;
    if (!(v > (double)INT_MIN - 1 && v < (double)INT_MAX + 1))
        return INT_MIN;
    return (int)v;
}

/* The "placement" section. */
void gq_card_placement_view_from_json(const json_t *pl, gq_card_placement_view *v)
{
    memset(v, 0, sizeof *v);
    v->present = json_is_object(pl);
    const json_t *roles = json_object_get(pl, "roles");
    v->prefill = gq_json_get_num(roles, "prefill");
    v->decode = gq_json_get_num(roles, "decode");
    v->offload = gq_json_get_num(roles, "offload");
    v->default_split = json_is_true(json_object_get(pl, "default_split"));
    v->all_staged = json_is_true(json_object_get(pl, "all_staged"));
    v->staged_unmeasured = (long long)json_integer_value(json_object_get(pl, "staged_unmeasured"));
    v->gain = gq_json_get_num(pl, "gain");
    const json_t *oa = json_object_get(pl, "offload_aggregate");
    v->offload_h2d_gbps = gq_json_get_num(json_object_get(oa, "h2d"), "measured_gbps");
    v->offload_d2h_gbps = gq_json_get_num(json_object_get(oa, "d2h"), "measured_gbps");
    v->pairs_gbps = gq_json_get_num(json_object_get(pl, "pairs_aggregate"), "measured_gbps");
    size_t i;
    const json_t *x;
    const json_t *pp = json_object_get(pl, "pairs");
    v->npairs_count = (int)json_array_size(pp);
    json_array_foreach(pp, i, x)
    {
        if (v->npairs >= GQ_CARD_VIEW_MAX_PL_PAIRS)
            break;
        v->pair_prefill[v->npairs] = gpu_index(gq_json_get_num(x, "prefill"));
        v->pair_decode[v->npairs++] = gpu_index(gq_json_get_num(x, "decode"));
    }
    const json_t *off = json_object_get(pl, "offload");
    v->noffload_count = (int)json_array_size(off);
    json_array_foreach(off, i, x)
    {
        if (v->noffload >= GQ_CARD_VIEW_MAX_PL_OFFLOAD)
            break;
        v->offload_gpu[v->noffload++] = gpu_index(gq_json_get_num(x, "gpu"));
    }
}

static void pairs_side(const json_t *s, gq_card_pairs_side_view *v)
{
    v->present = json_is_object(s);
    v->npairs = (int)json_array_size(json_object_get(s, "pairs"));
    v->aggregate_gbps = gq_json_get_num(s, "aggregate_gbps");
    size_t i;
    const json_t *x;
    json_array_foreach(json_object_get(s, "isolated_gbps"), i, x)
    {
        if (json_is_number(x) && v->nisolated < GQ_CARD_VIEW_MAX_ISOLATED)
            v->isolated_gbps[v->nisolated++] = json_number_value(x);
    }
}

/* The "pairs" section (concurrent GPU pairs within and across domains). */
void gq_card_pairs_view_from_json(const json_t *pairs, gq_card_pairs_view *v)
{
    memset(v, 0, sizeof *v);
    v->present = json_is_object(pairs);
    v->ratio = gq_json_get_num(pairs, "ratio");
    pairs_side(json_object_get(pairs, "within"), &v->within);
    pairs_side(json_object_get(pairs, "across"), &v->across);
}

/* GPU sets among the host subsets (a set measured in both directions counts once; two subsets
 * name the same set when their "gpus" are equal JSON values, and one without "gpus" equals none). */
static int distinct_sets(const json_t *subs)
{
    int n = 0;
    for (size_t i = 0; i < json_array_size(subs); i++) {
        const json_t *g = json_object_get(json_array_get(subs, i), "gpus");
        bool seen = false;
        for (size_t j = 0; j < i && !seen; j++)
            seen = json_equal(g, json_object_get(json_array_get(subs, j), "gpus"));
        n += !seen;
    }
    return n;
}

/* The "host" section. */
void gq_card_host_view_from_json(const json_t *host, gq_card_host_view *v)
{
    memset(v, 0, sizeof *v);
    const json_t *alone = json_object_get(host, "alone");
    const json_t *ah = json_object_get(alone, "h2d"), *ad = json_object_get(alone, "d2h");
    size_t na = json_array_size(ah);
    v->nalone = na < MAXG ? (int)na : MAXG;
    for (int k = 0; k < v->nalone; k++) {
        v->alone_h2d[k] = num_at(ah, (size_t)k);
        v->alone_d2h[k] = num_at(ad, (size_t)k);
    }
    v->nsets = distinct_sets(json_object_get(host, "subsets"));
    v->ngpus = gq_json_get_ints(json_object_get(host, "gpus"), v->gpu, MAXG);
    const json_t *all = json_object_get(host, "all");
    v->have_all = json_is_object(all);
    v->all_h2d_aggregate_gbps = gq_json_get_num(all, "h2d_aggregate_gbps");
    v->all_d2h_aggregate_gbps = gq_json_get_num(all, "d2h_aggregate_gbps");
    for (int k = 0; k < MAXG; k++) {
        v->all_h2d[k] = num_at(json_object_get(all, "h2d"), (size_t)k);
        v->all_d2h[k] = num_at(json_object_get(all, "d2h"), (size_t)k);
    }
}

/* The document's "bottlenecks" list. */
void gq_card_bottlenecks_view_from_json(const json_t *bottlenecks, gq_card_bottlenecks_view *v)
{
    memset(v, 0, sizeof *v);
    v->count = (int)json_array_size(bottlenecks);
    size_t i;
    const json_t *x;
    json_array_foreach(bottlenecks, i, x)
    {
        if (v->n >= GQ_CARD_VIEW_MAX_BOTTLENECKS)
            break;
        gq_card_bottleneck_view *b = &v->v[v->n++];
        const char *dir = gq_json_get_str(x, "direction", NULL);
        b->have_direction = dir != NULL;
        snprintf(b->direction, sizeof b->direction, "%s", dir ? dir : "");
        b->ngpus = gq_json_get_ints(json_object_get(x, "gpus"), b->gpu, MAXG);
        snprintf(b->explanation, sizeof b->explanation, "%s", gq_json_get_str(x, "explanation", ""));
        b->capacity_gbps = gq_json_get_num(x, "capacity_gbps");
        b->sum_alone_gbps = gq_json_get_num(x, "sum_alone_gbps");
    }
}

/* The "domains" section. */
void gq_card_domains_view_from_json(const json_t *dm, gq_card_domains_view *v)
{
    memset(v, 0, sizeof *v);
    v->split = json_is_true(json_object_get(dm, "split"));
    v->no_p2p = json_is_true(json_object_get(dm, "no_p2p"));
    const json_t *np = json_object_get(dm, "pairs");
    v->no_pairs = json_is_integer(np) && json_integer_value(np) == 0;
    size_t i;
    const json_t *x;
    const json_t *doms = json_object_get(dm, "domains");
    v->ndomains_count = (int)json_array_size(doms);
    json_array_foreach(doms, i, x)
    {
        if (v->ndomains >= GQ_CARD_VIEW_MAX_DOMAINS)
            break;
        gq_card_domain_view *d = &v->domain[v->ndomains++];
        d->n = gq_json_get_ints(x, d->gpu, MAXG);
    }
    json_array_foreach(json_object_get(dm, "set_aside"), i, x)
    {
        const json_t *g = json_object_get(x, "gpu");
        if (!json_is_integer(g) || v->nset_aside >= MAXG)
            continue;
        gq_card_set_aside_view *a = &v->set_aside[v->nset_aside++];
        a->gpu = (int)json_integer_value(g);
        const char *t = gq_json_get_str(x, "text", NULL);
        a->have_text = t != NULL;
        snprintf(a->text, sizeof a->text, "%s", t ? t : "");
    }
}

static void matrix_view(const json_t *m, gq_card_matrix_view *v)
{
    memset(v, 0, sizeof *v);
    v->present = m != NULL;
    const json_t *gpus = json_object_get(m, "gpus");
    v->ngpus_count = (int)json_array_size(gpus);
    v->n = gq_json_get_ints(gpus, v->gpu, MAXG);
    v->staged = json_is_true(json_object_get(m, "staged"));
    const json_t *vals = json_object_get(m, "values");
    for (int a = 0; a < MAXG; a++)
        for (int b = 0; b < MAXG; b++)
            v->gbps[a][b] = num_at(json_array_get(vals, (size_t)a), (size_t)b);
}

/* The "matrices" list: its first entry and the last whose id is "driver_staged". */
void gq_card_matrices_view_from_json(const json_t *matrices, gq_card_matrix_view *first,
                                     gq_card_matrix_view *driver_staged)
{
    matrix_view(json_array_get(matrices, 0), first);
    const json_t *md = NULL, *m;
    size_t i;
    json_array_foreach(matrices, i, m)
    {
        if (!strcmp(gq_json_get_str(m, "id", ""), "driver_staged"))
            md = m;
    }
    matrix_view(md, driver_staged);
}
