#include "doc/decode.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/json.h"
#include "core/types.h"
#include "doc/analysis_json.h"

int gq_dec_bad(const char *path, const char *key, const json_t *v, const char *expected, gq_err *err)
{
    char q[96];
    if (json_is_string(v))
        return gq_err_set(err, GQ_E_USAGE, "%s: %s: is \"%s\", expected %s", path, key,
                          gq_ellipsize(q, sizeof q, json_string_value(v), 40), expected);
    if (json_is_number(v))
        return gq_err_set(err, GQ_E_USAGE, "%s: %s: is %g, expected %s", path, key, json_number_value(v),
                          expected);
    return gq_err_set(err, GQ_E_USAGE, "%s: %s: is %s, expected %s", path, key, gq_json_type_word(v),
                      expected);
}

int gq_dec_gpus(const char *path, const char *key, const json_t *v, int ngpu, int *out, int *n, gq_err *err)
{
    int lim = ngpu >= 0 && ngpu < GQ_MAX_GPUS ? ngpu : GQ_MAX_GPUS;
    char range[48];
    snprintf(range, sizeof range, "a non-empty list of GPU indices 0..%d", lim - 1);
    if (!json_is_array(v) || json_array_size(v) == 0 || json_array_size(v) > (size_t)lim)
        return gq_dec_bad(path, key, v, range, err);
    bool seen[GQ_MAX_GPUS] = {0};
    size_t i;
    json_t *x;
    *n = 0;
    json_array_foreach(v, i, x)
    {
        char k[160];
        snprintf(k, sizeof k, "%s[%zu]", key, i);
        if (!json_is_integer(x) || json_integer_value(x) < 0 || json_integer_value(x) >= lim) {
            snprintf(range, sizeof range, "a GPU index 0..%d", lim - 1);
            return gq_dec_bad(path, k, x, range, err);
        }
        int g = (int)json_integer_value(x);
        if (seen[g])
            return gq_err_set(err, GQ_E_USAGE, "%s: %s: GPU %d is repeated, expected each GPU once", path, k,
                              g);
        seen[g] = true;
        out[(*n)++] = g;
    }
    return GQ_OK;
}

int gq_dec_num(const char *path, const char *key, const json_t *v, bool nullable, double lo, double hi,
               double *out, gq_err *err)
{
    char exp[80];
    snprintf(exp, sizeof exp, "a number %g..%g%s", lo, hi, nullable ? " or null" : "");
    if (nullable && (!v || json_is_null(v))) {
        *out = NAN;
        return GQ_OK;
    }
    if (!json_is_number(v) || !isfinite(json_number_value(v)) || json_number_value(v) < lo ||
        json_number_value(v) > hi)
        return gq_dec_bad(path, key, v, exp, err);
    *out = json_number_value(v);
    return GQ_OK;
}

int gq_dec_str(const char *path, const char *key, const json_t *v, bool nullable, char *buf, size_t n,
               gq_err *err)
{
    if (nullable && (!v || json_is_null(v))) {
        buf[0] = 0;
        return GQ_OK;
    }
    if (!json_is_string(v))
        return gq_dec_bad(path, key, v, nullable ? "a string or null" : "a string", err);
    snprintf(buf, n, "%s", json_string_value(v));
    return GQ_OK;
}

int gq_dec_enum(const char *path, const char *key, const json_t *v, const char *const *names, int count,
                int *out, gq_err *err)
{
    for (int i = 0; json_is_string(v) && i < count; i++)
        if (!strcmp(json_string_value(v), names[i])) {
            *out = i;
            return GQ_OK;
        }
    char exp[200] = "one of";
    for (int i = 0; i < count; i++) {
        size_t u = strlen(exp);
        snprintf(exp + u, sizeof exp - u, "%s \"%s\"", i ? "," : "", names[i]);
    }
    return gq_dec_bad(path, key, v, exp, err);
}

int gq_dec_bool(const char *path, const char *key, const json_t *v, bool def, bool *out, gq_err *err)
{
    if (!v || json_is_null(v)) {
        *out = def;
        return GQ_OK;
    }
    if (!json_is_boolean(v))
        return gq_dec_bad(path, key, v, "true or false", err);
    *out = json_is_true(v);
    return GQ_OK;
}

/* stress.gpus[]: each GPU's stress figures. */
static int stress_from_json(const char *path, const json_t *st, gq_cmp_doc *d, gq_err *err)
{
    if (!st || json_is_null(st))
        return GQ_OK;
    if (!json_is_object(st))
        return gq_dec_bad(path, "stress", st, "an object", err);
    const json_t *gpus = json_object_get(st, "gpus");
    if (!gpus || json_is_null(gpus))
        return GQ_OK;
    if (!json_is_array(gpus) || json_array_size(gpus) > GQ_MAX_GPUS)
        return gq_dec_bad(path, "stress.gpus", gpus, "a list of at most 64 GPUs", err);
    size_t i;
    json_t *g;
    json_array_foreach(gpus, i, g)
    {
        gq_cmp_stress_gpu *s = &d->stress[d->nstress];
        char k[64];
        double gi = 0;
        int rc;
        snprintf(k, sizeof k, "stress.gpus[%zu].gpu", i);
        if (!json_is_object(g))
            return gq_dec_bad(path, k, g, "an object {gpu, ...}", err);
        if ((rc = gq_dec_num(path, k, json_object_get(g, "gpu"), false, 0, GQ_MAX_GPUS - 1, &gi, err)))
            return rc;
        if (gi != (int)gi)
            return gq_dec_bad(path, k, json_object_get(g, "gpu"), "a GPU index 0..63", err);
        s->gpu = (int)gi;
        for (int m = 0; m < d->nstress; m++)
            if (d->stress[m].gpu == s->gpu)
                return gq_err_set(err, GQ_E_USAGE, "%s: %s: GPU %d is repeated, expected each GPU once", path,
                                  k, s->gpu);
        static const char *f[] = {"temp_max_c", "sm_clock_avg_mhz", "power_avg_w"};
        double *dst[] = {&s->temp_max_c, &s->sm_clock_avg_mhz, &s->power_avg_w};
        for (int m = 0; m < 3; m++) {
            snprintf(k, sizeof k, "stress.gpus[%zu].%s", i, f[m]);
            if ((rc = gq_dec_num(path, k, json_object_get(g, f[m]), true, -1e6, 1e6, dst[m], err)))
                return rc;
        }
        d->nstress++;
    }
    return GQ_OK;
}

/* A document's identity for comparing: its GPU model(s), the distinct
 * "name"s of its "gpus" joined with " + ", and its stress duration. */
static void cmp_identity(const json_t *root, gq_cmp_doc *d)
{
    size_t i, used = 0;
    const json_t *g;
    const char *seen[GQ_MAX_GPUS];
    int nseen = 0;
    json_array_foreach(json_object_get(root, "gpus"), i, g)
    {
        const char *name = json_string_value(json_object_get(g, "name"));
        bool dup = !name || !*name;
        for (int k = 0; k < nseen && !dup; k++)
            dup = !strcmp(seen[k], name);
        if (dup || nseen >= GQ_MAX_GPUS)
            continue;
        seen[nseen++] = name; /* distinct names in order: "A + B" */
        int w = snprintf(d->model + used, sizeof d->model - used, "%s%s", used ? " + " : "", name);
        if (w > 0 && (size_t)w < sizeof d->model - used)
            used += (size_t)w;
    }
    const json_t *s = json_object_get(json_object_get(root, "stress"), "duration_s");
    d->stress_s = json_is_number(s) && json_number_value(s) > 0 ? json_number_value(s) : 0;
}

int gq_cmp_doc_from_json(const char *path, const json_t *root, gq_cmp_doc *d, gq_err *err)
{
    memset(d, 0, sizeof *d);
    const json_t *card = json_object_get(root, "card");
    const char *host = json_string_value(json_object_get(card, "hostname"));
    if (!host)
        host = json_string_value(json_object_get(json_object_get(root, "host"), "hostname"));
    snprintf(d->host, sizeof d->host, "%s", host ? host : "");
    const char *when = json_string_value(json_object_get(root, "timestamp"));
    const char *kind = json_string_value(json_object_get(root, "kind"));
    snprintf(d->when, sizeof d->when, "%s", when ? when : "");
    snprintf(d->kind, sizeof d->kind, "%s", kind ? kind : "");
    if (json_is_object(card)) {
        static const char *const verdicts[] = {"pass", "warn", "fail", "incomplete"};
        int v = 0,
            rc = gq_dec_enum(path, "card.verdict", json_object_get(card, "verdict"), verdicts, 4, &v, err);
        if (rc)
            return rc;
        snprintf(d->verdict, sizeof d->verdict, "%s", verdicts[v]);
    }
    cmp_identity(root, d);
    return stress_from_json(path, json_object_get(root, "stress"), d, err);
}
