#include "cli/options.h"

#include <jansson.h>

static json_t *list_json(const gq_optlist *l)
{
    json_t *a = json_array();
    for (int i = 0; a && i < l->n; i++)
        json_array_append_new(a, json_string(l->item[i]));
    return a;
}

json_t *gq_opts_to_json(const gq_opt *const *tabs, int ntab, const void *src)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    for (int t = 0; t < ntab; t++)
        for (const gq_opt *op = tabs[t]; op->name; op++) {
            const char *p = (const char *)src + op->off;
            json_t *v = NULL;
            switch (op->type) {
            case GQ_OPT_FLAG: v = json_boolean(*(const bool *)p); break;
            case GQ_OPT_INT: v = json_integer(*(const int *)p); break;
            case GQ_OPT_DOUBLE:
            case GQ_OPT_PERCENT:
            case GQ_OPT_DURATION: v = json_real(*(const double *)p); break;
            case GQ_OPT_SIZE: v = json_integer((json_int_t) * (const uint64_t *)p); break;
            case GQ_OPT_STR:
            case GQ_OPT_ENUM: {
                const char *s = *(const char *const *)p;
                v = s ? json_string(s) : json_null();
                break;
            }
            case GQ_OPT_LIST:
            case GQ_OPT_KV: v = list_json((const gq_optlist *)p); break;
            }
            if (v)
                json_object_set_new(o, op->name, v);
        }
    return o;
}
