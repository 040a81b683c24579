/* JSON accessors shared by the card renderers (render/card_render.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "render/card_render.h"

const json_t *gq_cj_card(const json_t *root, gq_err *err)
{
    if (!json_is_object(root)) {
        gq_err_set(err, GQ_E_USAGE, "not a gpuqual document (expected a JSON object)");
        return NULL;
    }
    const json_t *c = json_object_get(root, "card");
    if (!json_is_object(c)) {
        gq_err_set(err, GQ_E_USAGE, "the document has no \"card\" section (kind '%s')",
                   gq_cj_str(root, "kind", "?"));
        return NULL;
    }
    return c;
}

double gq_cj_num(const json_t *o, const char *key)
{
    const json_t *v = o ? json_object_get(o, key) : NULL;
    return json_is_number(v) ? json_number_value(v) : NAN;
}

const char *gq_cj_str(const json_t *o, const char *key, const char *def)
{
    const json_t *v = o ? json_object_get(o, key) : NULL;
    return json_is_string(v) ? json_string_value(v) : def;
}

int gq_cj_nums(const json_t *arr, double *out, int max)
{
    if (!json_is_array(arr))
        return 0;
    int n = 0;
    size_t i;
    const json_t *v;
    json_array_foreach(arr, i, v)
    {
        if (n >= max)
            break;
        out[n++] = json_is_number(v) ? json_number_value(v) : NAN;
    }
    return n;
}

int gq_cj_matrix(const json_t *m, int max, char (*labels)[16], double *vals)
{
    const json_t *g = json_object_get(m, "gpus"), *v = json_object_get(m, "values");
    if (!json_is_array(g) || !json_is_array(v))
        return 0;
    int n = (int)json_array_size(g);
    if (n < 1 || n > max || (int)json_array_size(v) != n)
        return 0;
    for (int i = 0; i < n; i++) {
        const json_t *gi = json_array_get(g, (size_t)i);
        snprintf(labels[i], 16, "GPU %lld",
                 json_is_integer(gi) ? (long long)json_integer_value(gi) : (long long)i);
        const json_t *row = json_array_get(v, (size_t)i);
        if (!json_is_array(row) || (int)json_array_size(row) != n)
            return 0;
        for (int j = 0; j < n; j++) {
            const json_t *x = json_array_get(row, (size_t)j);
            vals[i * n + j] = json_is_number(x) ? json_number_value(x) : NAN;
        }
    }
    return n;
}

void gq_card_overrides_text(const gq_card *c, char *buf, size_t n)
{
    size_t used = 0;
    if (n)
        buf[0] = 0;
    for (int i = 0; i < c->noverrides && used < n; i++) {
        const gq_expect_override *o = &c->overrides[i];
        used += (size_t)snprintf(buf + used, n - used, "%s%s (%s %s, was %s)", i ? "; " : "", o->spec, o->key,
                                 o->level, o->was[0] ? o->was : "unset");
    }
}
