/* Reading fields of a parsed JSON document (jansson) with a default: the doc
 * codecs that read saved cards (card_compose.c, card_facts_json.c,
 * card_views_json.c) share these instead of each keeping a copy. JSON is read
 * in src/doc only: analysis takes the typed views they decode. */
#ifndef GQ_DOC_JSON_GET_H
#define GQ_DOC_JSON_GET_H

#include <math.h>

#include <jansson.h>

/* o[k] when it is a string, else def (o may be NULL). */
static inline const char *gq_json_get_str(const json_t *o, const char *k, const char *def)
{
    const json_t *v = o ? json_object_get(o, k) : NULL;
    return json_is_string(v) ? json_string_value(v) : def;
}

/* o[k] when it is a number, else NAN (o may be NULL). */
static inline double gq_json_get_num(const json_t *o, const char *k)
{
    const json_t *v = o ? json_object_get(o, k) : NULL;
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* The integers of the list a, in order, at most max of them (a may be NULL or not a list: 0). */
static inline int gq_json_get_ints(const json_t *a, int *out, int max)
{
    int n = 0;
    size_t i;
    const json_t *v;
    json_array_foreach(a, i, v) if (n < max && json_is_integer(v)) out[n++] = (int)json_integer_value(v);
    return n;
}

#endif
