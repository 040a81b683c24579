/* Loading an expectations file (examples/expect/, JSON or YAML) into
 * the typed gq_expect that analysis/expect.h judges with: the file read, the
 * document parsed, every key and type checked. The judging itself stays pure
 * in src/analysis.
 */
#include "doc/expect_load.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/json.h"
#include "analysis/expect_internal.h"
#include "core/infile.h"
#include "core/units.h"
#include "core/yaml.h"

static int get_number(const json_t *v, const char *where, const char *key, double *out, gq_err *err)
{
    if (!json_is_number(v))
        return gq_err_set(err, GQ_E_USAGE, "%s: '%s' must be a number, not %s", where, key,
                          gq_json_type_word(v));
    *out = json_number_value(v);
    if (!isfinite(*out) || *out < 0)
        return gq_err_set(err, GQ_E_USAGE, "%s: '%s' must be a number >= 0", where, key);
    return GQ_OK;
}

/* Each level of a parsed threshold within what its check's physics allows. */
static int check_bounds(gq_expect_key k, const gq_threshold *t, const char *where, gq_err *err)
{
    double vals[2] = {t->fail, t->has_warn ? t->warn : NAN};
    static const char *const level[2] = {"fail", "warn"};
    for (int i = 0; i < 2; i++) {
        const char *b = isfinite(vals[i]) ? gq_expect_key_bound(k, vals[i]) : NULL;
        if (b)
            return gq_err_set(
                err, GQ_E_USAGE, "%s: '%s' %s %g %s cannot be a threshold of %s; give a value %s", where,
                gq_expect_key_name(k), level[i], vals[i], gq_expect_key_unit(k), gq_expect_key_what(k), b);
    }
    return GQ_OK;
}

static int parse_threshold(const json_t *v, gq_expect_key k, const char *where, gq_threshold *t, gq_err *err)
{
    const char *key = gq_expect_key_name(k);
    memset(t, 0, sizeof *t);
    int rc;
    if (json_is_number(v)) {
        if ((rc = get_number(v, where, key, &t->fail, err)))
            return rc;
        t->set = true;
    } else if (json_is_object(v)) {
        static const char *const tk[] = {"warn", "fail", NULL};
        const char *name;
        json_t *x;
        bool have_fail = false;
        char sub[300];
        snprintf(sub, sizeof sub, "%s, '%s'", where, key);
        json_object_foreach((json_t *)v, name, x)
        {
            if (!strcmp(name, "warn")) {
                if ((rc = get_number(x, sub, "warn", &t->warn, err)))
                    return rc;
                t->has_warn = true;
            } else if (!strcmp(name, "fail")) {
                if ((rc = get_number(x, sub, "fail", &t->fail, err)))
                    return rc;
                have_fail = true;
            } else
                return gq_expect_unknown_key(err, sub, name, tk);
        }
        if (!have_fail && !t->has_warn)
            return gq_err_set(err, GQ_E_USAGE, "%s: '%s' needs \"warn\" and/or \"fail\"", where, key);
        if (!have_fail)
            t->fail = gq_expect_key_is_min(k) ? -INFINITY : INFINITY;
        if (have_fail && t->has_warn) {
            bool ordered = gq_expect_key_is_min(k) ? t->warn >= t->fail : t->warn <= t->fail;
            if (!ordered)
                return gq_err_set(err, GQ_E_USAGE, "%s: '%s' has warn %g %s fail %g; a %s needs warn %s fail",
                                  where, key, t->warn, gq_expect_key_is_min(k) ? "below" : "above", t->fail,
                                  gq_expect_key_is_min(k) ? "minimum" : "maximum",
                                  gq_expect_key_is_min(k) ? ">=" : "<=");
        }
        t->set = true;
    } else {
        return gq_err_set(err, GQ_E_USAGE, "%s: '%s' must be a number or {\"warn\": N, \"fail\": N}, not %s",
                          where, key, gq_json_type_word(v));
    }
    if (t->set && (rc = check_bounds(k, t, where, err)))
        return rc;
    if (gq_expect_key_integer(k) && t->set) {
        double vals[2] = {t->fail, t->has_warn ? t->warn : 0};
        for (int i = 0; i < 2; i++)
            if (isfinite(vals[i]) && vals[i] != floor(vals[i]))
                return gq_err_set(err, GQ_E_USAGE, "%s: '%s' must be a whole number, not %g", where, key,
                                  vals[i]);
    }
    return GQ_OK;
}

static int parse_model(const json_t *m, int idx, const char *file, gq_expect_model *out, gq_err *err)
{
    char where[300];
    snprintf(where, sizeof where, "%s: models[%d]", file, idx);
    if (!json_is_object(m))
        return gq_err_set(err, GQ_E_USAGE, "%s must be an object, not %s", where, gq_json_type_word(m));
    memset(out, 0, sizeof *out);
    const json_t *match = json_object_get(m, "match");
    if (!match)
        return gq_err_set(err, GQ_E_USAGE, "%s: missing \"match\" (a part of the GPU name, e.g. \"H200\")",
                          where);
    if (json_is_string(match) && !json_string_length(match))
        return gq_err_set(err, GQ_E_USAGE,
                          "%s: \"match\" is empty, expected a part of the GPU name (e.g. \"H200\")", where);
    if (!json_is_string(match))
        return gq_err_set(err, GQ_E_USAGE, "%s: \"match\" must be a non-empty string, not %s", where,
                          gq_json_type_word(match));
    snprintf(out->match, sizeof out->match, "%s", json_string_value(match));
    snprintf(where, sizeof where, "%s: model '%s'", file, out->match);
    const char *cands[GQ_EXK_COUNT + 3];
    int nc = 0;
    cands[nc++] = "match";
    cands[nc++] = "description";
    for (int k = 0; k < GQ_EXK_COUNT; k++)
        cands[nc++] = gq_expect_key_name(k);
    cands[nc] = NULL;
    const char *name;
    json_t *v;
    int rc;
    json_object_foreach((json_t *)m, name, v)
    {
        if (!strcmp(name, "match"))
            continue;
        if (!strcmp(name, "description")) {
            if (!json_is_string(v))
                return gq_err_set(err, GQ_E_USAGE, "%s: 'description' must be a string, not %s", where,
                                  gq_json_type_word(v));
            snprintf(out->description, sizeof out->description, "%s", json_string_value(v));
            continue;
        }
        int k;
        for (k = 0; k < GQ_EXK_COUNT; k++)
            if (!strcmp(name, gq_expect_key_name(k)))
                break;
        if (k == GQ_EXK_COUNT)
            return gq_expect_unknown_key(err, where, name, cands);
        if ((rc = parse_threshold(v, (gq_expect_key)k, where, &out->th[k], err)))
            return rc;
    }
    return GQ_OK;
}

static int expect_from_json(json_t *root, const char *file, gq_expect *ex, gq_err *err);

int gq_expect_parse(const char *text, const char *name, gq_expect *ex, gq_err *err)
{
    gq_expect_init(ex);
    const char *file = name && *name ? name : "expectations";
    json_t *root = NULL;
    if (gq_yaml_looks_like(name, text)) {
        int yrc = gq_yaml_to_json(text, strlen(text), file, &root, err);
        if (yrc)
            return yrc;
    } else {
        json_error_t je;
        root = json_loads(text, JSON_REJECT_DUPLICATES, &je);
        if (!root)
            return gq_err_set(err, GQ_E_USAGE, "%s: not valid JSON at line %d: %s", file, je.line, je.text);
    }
    int rc = expect_from_json(root, file, ex, err);
    json_decref(root);
    return rc;
}

/* The document, JSON or YAML read as JSON: checked key by key. */
static int expect_from_json(json_t *root, const char *file, gq_expect *ex, gq_err *err)
{
    int rc = GQ_OK;
    if (!json_is_object(root)) {
        rc = gq_err_set(err, GQ_E_USAGE,
                        "%s: must be a mapping (a JSON object) with \"gpuqual_expect\" and \"models\"", file);
        goto out;
    }
    const json_t *fmt = json_object_get(root, "gpuqual_expect");
    if (!fmt) {
        rc = gq_err_set(err, GQ_E_USAGE, "%s: not a gpuqual expectations file (no \"gpuqual_expect\": %d)",
                        file, GQ_EXPECT_FORMAT);
        goto out;
    }
    if (!json_is_integer(fmt) || json_integer_value(fmt) < 1) {
        rc = gq_err_set(err, GQ_E_USAGE, "%s: \"gpuqual_expect\" must be the format number %d", file,
                        GQ_EXPECT_FORMAT);
        goto out;
    }
    if (json_integer_value(fmt) > GQ_EXPECT_FORMAT) {
        rc = gq_err_set(err, GQ_E_USAGE, "%s: expectations format %lld is newer than this gpuqual reads (%d)",
                        file, (long long)json_integer_value(fmt), GQ_EXPECT_FORMAT);
        goto out;
    }
    static const char *const top[] = {"gpuqual_expect", "description", "relative", "models", NULL};
    const char *key;
    json_t *v;
    json_object_foreach(root, key, v)
    {
        if (!strcmp(key, "gpuqual_expect"))
            continue;
        if (!strcmp(key, "description")) {
            if (!json_is_string(v)) {
                rc = gq_err_set(err, GQ_E_USAGE, "%s: 'description' must be a string, not %s", file,
                                gq_json_type_word(v));
                goto out;
            }
            snprintf(ex->description, sizeof ex->description, "%s", json_string_value(v));
        } else if (!strcmp(key, "relative")) {
            if (!json_is_object(v)) {
                rc = gq_err_set(err, GQ_E_USAGE, "%s: 'relative' must be an object, not %s", file,
                                gq_json_type_word(v));
                goto out;
            }
            static const char *const rk[] = {"agree_pct", "agree_fail_pct", NULL};
            const char *k2;
            json_t *v2;
            char where[300];
            snprintf(where, sizeof where, "%s: relative", file);
            json_object_foreach(v, k2, v2)
            {
                double d = 0;
                if (strcmp(k2, "agree_pct") && strcmp(k2, "agree_fail_pct")) {
                    rc = gq_expect_unknown_key(err, where, k2, rk);
                    goto out;
                }
                if ((rc = get_number(v2, where, k2, &d, err)))
                    goto out;
                if (!strcmp(k2, "agree_pct"))
                    ex->agree_pct = d;
                else
                    ex->agree_fail_pct = d;
            }
            if (ex->agree_fail_pct < ex->agree_pct) {
                rc = gq_err_set(err, GQ_E_USAGE, "%s: agree_fail_pct (%g) must be >= agree_pct (%g)", where,
                                ex->agree_fail_pct, ex->agree_pct);
                goto out;
            }
        } else if (!strcmp(key, "models")) {
            if (!json_is_array(v) || json_array_size(v) == 0) {
                rc = gq_err_set(err, GQ_E_USAGE, "%s: 'models' must be a non-empty list of models", file);
                goto out;
            }
            if (json_array_size(v) > GQ_EXPECT_MAX_MODELS) {
                rc = gq_err_set(err, GQ_E_USAGE, "%s: %zu models, at most %d", file, json_array_size(v),
                                GQ_EXPECT_MAX_MODELS);
                goto out;
            }
            size_t i;
            json_t *m;
            json_array_foreach(v, i, m)
            {
                if ((rc = parse_model(m, (int)i, file, &ex->models[i], err)))
                    goto out;
            }
            ex->nmodels = (int)json_array_size(v);
        } else {
            rc = gq_expect_unknown_key(err, file, key, top);
            goto out;
        }
    }
    if (!ex->nmodels)
        rc = gq_err_set(err, GQ_E_USAGE,
                        "%s: no 'models' list; add e.g. \"models\": [{\"match\": \"H200\", ...}]", file);
out:
    return rc;
}

int gq_expect_load(const char *path, gq_expect *ex, gq_err *err)
{
    int crc = gq_infile_check_size(path, "an expectations file (examples/expect/*.expect)",
                                   GQ_INFILE_TEXT_MAX, err);
    if (crc)
        return gq_err_prefix(err, "expectations");
    FILE *f = fopen(path, "r");
    char *buf = NULL;
    int rc;
    if (!f)
        return gq_err_set(err, GQ_E_IO, "cannot read expectations '%s': %s", path, strerror(errno));
    size_t cap = 1 << 16, len = 0;
    buf = malloc(cap);
    if (!buf) {
        rc = gq_err_set(err, GQ_E_NOMEM, "out of memory reading '%s'", path);
        goto out;
    }
    for (;;) {
        size_t r = fread(buf + len, 1, cap - len - 1, f);
        len += r;
        if (r == 0)
            break;
        if (len + 1 >= cap) {
            if (cap >= (1u << 24)) {
                rc = gq_err_set(err, GQ_E_USAGE, "%s: larger than 16 MiB; not an expectations file", path);
                goto out;
            }
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                rc = gq_err_set(err, GQ_E_NOMEM, "out of memory reading '%s'", path);
                goto out;
            }
            buf = nb;
            cap *= 2;
        }
    }
    if (ferror(f)) {
        rc = gq_err_set(err, GQ_E_IO, "cannot read expectations '%s': %s", path, strerror(errno));
        goto out;
    }
    buf[len] = 0;
    rc = gq_expect_parse(buf, path, ex, err);
    if (!rc)
        snprintf(ex->path, sizeof ex->path, "%s", path);
out:
    free(buf);
    fclose(f);
    return rc;
}
