/* The card's sections the judge's rows and findings read, decoded into the
 * typed views of analysis/card.h (gq_card_views): the placement. Absent or
 * wrongly typed fields read as the judge read them from the JSON: NAN for a
 * number, false for a flag, 0 entries for a list. card_facts_json.c decodes
 * the rest of the views and calls these. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/card.h"
#include "analysis/json_get.h"
#include "doc/card_codec.h"

/* The "placement" section. */
void gq_card_placement_view_from_json(const json_t *pl, gq_card_placement_view *v)
{
    memset(v, 0, sizeof *v);
    v->present = json_is_object(pl);
    const json_t *roles = json_object_get(pl, "roles");
    v->prefill = gq_json_num(roles, "prefill");
    v->decode = gq_json_num(roles, "decode");
    v->offload = gq_json_num(roles, "offload");
    v->default_split = json_is_true(json_object_get(pl, "default_split"));
    v->all_staged = json_is_true(json_object_get(pl, "all_staged"));
    v->staged_unmeasured = (long long)json_integer_value(json_object_get(pl, "staged_unmeasured"));
    v->gain = gq_json_num(pl, "gain");
    const json_t *oa = json_object_get(pl, "offload_aggregate");
    v->offload_h2d_gbps = gq_json_num(json_object_get(oa, "h2d"), "measured_gbps");
    v->offload_d2h_gbps = gq_json_num(json_object_get(oa, "d2h"), "measured_gbps");
    v->pairs_gbps = gq_json_num(json_object_get(pl, "pairs_aggregate"), "measured_gbps");
    size_t i;
    const json_t *x;
    const json_t *pp = json_object_get(pl, "pairs");
    v->npairs_count = (int)json_array_size(pp);
    json_array_foreach(pp, i, x)
    {
        if (v->npairs >= GQ_CARD_VIEW_MAX_PL_PAIRS)
            break;
        v->pair_prefill[v->npairs] = gq_json_num(x, "prefill");
        v->pair_decode[v->npairs++] = gq_json_num(x, "decode");
    }
    const json_t *off = json_object_get(pl, "offload");
    v->noffload_count = (int)json_array_size(off);
    json_array_foreach(off, i, x)
    {
        if (v->noffload >= GQ_CARD_VIEW_MAX_PL_OFFLOAD)
            break;
        v->offload_gpu[v->noffload++] = gq_json_num(x, "gpu");
    }
}
