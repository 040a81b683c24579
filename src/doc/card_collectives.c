/* The collectives step's section of the card (analysis/card_steps.h: its
 * GQ_CARD_SECTIONS line): its typed figures (gq_card_coll_view) written as
 * card.json's "collectives" section and read back, and its mark in the card's
 * journal (doc/card_compose.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "doc/card_codec.h"
#include "doc/card_compose.h"
#include "doc/json_get.h"
#include "measure/journal.h"

static json_t *gbps_or_null(double v)
{
    return isfinite(v) && v >= 0 ? json_real(v) : json_null();
}

/* The "collectives" section (docs/json-card.md), or null. */
json_t *gq_card_collectives_to_json(const gq_card_coll_view *c)
{
    if (!c || !c->present)
        return json_null();
    json_t *o = json_object(), *groups = json_array();
    json_object_set_new(o, "op", json_string("all_reduce"));
    json_object_set_new(o, "tp", json_integer(c->tp));
    json_object_set_new(o, "bytes", json_integer((json_int_t)c->bytes));
    json_object_set_new(o, "measured", json_integer(c->measured));
    json_object_set_new(o, "kept_naive", json_boolean(c->kept_naive));
    for (int g = 0; g < c->ngroups; g++) {
        json_t *x = json_object(), *gpus = json_array();
        for (int i = 0; i < 64; i++)
            if (c->set[g] >> i & 1)
                json_array_append_new(gpus, json_integer(i));
        json_object_set_new(x, "gpus", gpus);
        json_object_set_new(x, "alone_busbw_gbps", gbps_or_null(c->alone[g]));
        json_object_set_new(x, "at_once_busbw_gbps", gbps_or_null(c->once[g]));
        json_array_append_new(groups, x);
    }
    json_object_set_new(o, "groups", groups);
    json_object_set_new(o, "min_alone_busbw_gbps", gbps_or_null(c->min_alone));
    json_object_set_new(o, "min_at_once_busbw_gbps", gbps_or_null(c->min_once));
    json_object_set_new(o, "naive_min_at_once_busbw_gbps", gbps_or_null(c->naive_min_once));
    return o;
}

void gq_card_coll_journal_done(gq_journal *j, const gq_card_coll_view *c)
{
    json_t *st = json_object(), *sec = gq_card_collectives_to_json(c);
    if (st && json_is_object(sec)) {
        json_object_set_new(st, "step", json_string("collectives"));
        json_object_set_new(st, "status", json_string("done"));
        json_object_set(st, "collectives", sec);
        gq_err e = {0};
        (void)gq_journal_event(j, "step", st, &e);
    }
    json_decref(sec);
    json_decref(st);
}

bool gq_card_coll_journal_reusable(const gq_journal *j, int tp, uint64_t bytes, const int *gpus, int n,
                                   gq_card_coll_view *out)
{
    const json_t *step = j ? json_object_get(j->done_steps, "collectives") : NULL;
    gq_card_coll_view v;
    gq_card_collectives_from_json(json_object_get(step, "collectives"), &v);
    uint64_t sel = 0;
    for (int i = 0; i < n; i++)
        if (gpus[i] >= 0 && gpus[i] < 64)
            sel |= (uint64_t)1 << gpus[i];
    if (!v.present || tp < 1 || v.tp != tp || v.bytes != bytes || v.ngroups < 1 || v.ngroups != n / tp ||
        !(v.min_alone >= 0))
        return false;
    uint64_t seen = 0;
    for (int g = 0; g < v.ngroups; g++) {
        if ((v.set[g] & ~sel) || (v.set[g] & seen) || __builtin_popcountll(v.set[g]) != tp ||
            !(v.alone[g] >= 0))
            return false;
        seen |= v.set[g];
    }
    *out = v;
    return true;
}

void gq_card_collectives_from_json(const json_t *c, gq_card_coll_view *v)
{
    memset(v, 0, sizeof *v);
    v->present = json_is_object(c);
    v->min_alone = v->min_once = v->naive_min_once = NAN;
    if (!v->present)
        return;
    v->tp = (int)gq_json_get_num(c, "tp");
    double b = gq_json_get_num(c, "bytes");
    v->bytes = isfinite(b) && b > 0 ? (uint64_t)b : 0;
    v->measured = (int)gq_json_get_num(c, "measured");
    v->kept_naive = json_is_true(json_object_get(c, "kept_naive"));
    size_t i, k;
    const json_t *x, *g;
    json_array_foreach(json_object_get(c, "groups"), i, x)
    {
        if (v->ngroups >= GQ_CARD_COLL_MAX_GROUPS)
            break;
        int n = v->ngroups++;
        v->set[n] = 0;
        json_array_foreach(json_object_get(x, "gpus"), k, g) if (json_is_integer(g) &&
                                                                 json_integer_value(g) >= 0 &&
                                                                 json_integer_value(g) < 64) v->set[n] |=
            (uint64_t)1 << json_integer_value(g);
        double a = gq_json_get_num(x, "alone_busbw_gbps"), o = gq_json_get_num(x, "at_once_busbw_gbps");
        v->alone[n] = isfinite(a) ? a : -1;
        v->once[n] = isfinite(o) ? o : -1;
    }
    v->min_alone = gq_json_get_num(c, "min_alone_busbw_gbps");
    v->min_once = gq_json_get_num(c, "min_at_once_busbw_gbps");
    v->naive_min_once = gq_json_get_num(c, "naive_min_at_once_busbw_gbps");
}
