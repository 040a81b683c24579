#include "render/decode.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/types.h"

static const char *what(const json_t *v)
{
    if (!v)
        return "missing";
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "a list";
    case JSON_STRING: return "a string";
    case JSON_INTEGER:
    case JSON_REAL: return "a number";
    case JSON_TRUE:
    case JSON_FALSE: return "a boolean";
    default: return "null";
    }
}

int gq_dec_bad(const char *path, const char *key, const json_t *v, const char *expected, gq_err *err)
{
    if (json_is_string(v))
        return gq_err_set(err, GQ_E_USAGE, "%s: %s: is \"%.40s\", expected %s", path, key,
                          json_string_value(v), expected);
    if (json_is_number(v))
        return gq_err_set(err, GQ_E_USAGE, "%s: %s: is %g, expected %s", path, key, json_number_value(v),
                          expected);
    return gq_err_set(err, GQ_E_USAGE, "%s: %s: is %s, expected %s", path, key, what(v), expected);
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
