#include "cli/options.h"

#include <jansson.h>

static json_t *list_json(const gq_optlist *l)
{
    json_t *a = json_array();
    for (int i = 0; a && i < l->n; i++)
        json_array_append_new(a, json_string(l->item[i]));
    return a;
}

static json_t *opt_json(const gq_opt *op, const void *src)
{
    const char *p = (const char *)src + op->off;
    switch (op->type) {
    case GQ_OPT_FLAG: return json_boolean(*(const bool *)p);
    case GQ_OPT_INT: return json_integer(*(const int *)p);
    case GQ_OPT_DOUBLE:
    case GQ_OPT_PERCENT:
    case GQ_OPT_DURATION: return json_real(*(const double *)p);
    case GQ_OPT_SIZE: return json_integer((json_int_t) * (const uint64_t *)p);
    case GQ_OPT_STR:
    case GQ_OPT_ENUM: {
        const char *s = *(const char *const *)p;
        return s ? json_string(s) : json_null();
    }
    case GQ_OPT_LIST:
    case GQ_OPT_KV: return list_json((const gq_optlist *)p);
    }
    return NULL;
}

json_t *gq_opts_to_json(const gq_opt *const *tabs, int ntab, const void *src)
{
    gq_optset set = {.tabs = tabs, .ntab = ntab};
    return gq_optset_to_json(&set, src);
}

json_t *gq_optset_to_json(const gq_optset *set, const void *src)
{
    json_t *o = json_object();
    int it = 0;
    for (const gq_opt *op = NULL; o && (op = gq_optset_next(set, &it, op));) {
        json_t *v = opt_json(op, src);
        if (v)
            json_object_set_new(o, op->name, v);
    }
    return o;
}
