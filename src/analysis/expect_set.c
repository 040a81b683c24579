/* --set overrides of expectation thresholds (analysis/expect.h: gq_expect_set). */
#include "analysis/expect.h"
#include "analysis/expect_internal.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- --set ------------------------------------------------------------------ */

static void threshold_text(const gq_threshold *t, const char *level, char *buf, size_t n)
{
    if (!t->set || (!strcmp(level, "warn") && !t->has_warn) || (!strcmp(level, "fail") && !isfinite(t->fail)))
        snprintf(buf, n, "unset");
    else
        snprintf(buf, n, "%g", !strcmp(level, "warn") ? t->warn : t->fail);
}

static int set_threshold(gq_threshold *t, gq_expect_key k, const char *level, double v, const char *spec,
                         gq_err *err)
{
    gq_threshold n = *t;
    if (!n.set) {
        n.set = true;
        n.has_warn = false;
        n.fail = gq_expect_key_is_min(k) ? -INFINITY : INFINITY;
    }
    if (!strcmp(level, "warn")) {
        n.warn = v;
        n.has_warn = true;
    } else {
        n.fail = v;
    }
    if (n.has_warn && isfinite(n.fail)) {
        bool ordered = gq_expect_key_is_min(k) ? n.warn >= n.fail : n.warn <= n.fail;
        if (!ordered)
            return gq_err_set(
                err, GQ_E_USAGE, "--set %s: would give %s warn %g %s fail %g; a %s needs warn %s fail", spec,
                gq_expect_key_name(k), n.warn, gq_expect_key_is_min(k) ? "below" : "above", n.fail,
                gq_expect_key_is_min(k) ? "minimum" : "maximum", gq_expect_key_is_min(k) ? ">=" : "<=");
    }
    *t = n;
    return GQ_OK;
}

/* --set agree.warn|fail=PCT: the percentages of the relative checks, for every model. */
static int set_agree(gq_expect *ex, gq_expect_override *o, const char *spec, const char *model,
                     const char *level, double v, gq_err *err)
{
    if (model[0])
        return gq_err_set(err, GQ_E_USAGE, "--set '%s': agree applies to every model; drop '%s:'", spec,
                          model);
    if (!(v > 0) || v > 100)
        return gq_err_set(err, GQ_E_USAGE, "--set '%s': a percentage above 0 and at most 100", spec);
    double *slot = !strcmp(level, "warn") ? &ex->agree_pct : &ex->agree_fail_pct;
    snprintf(o->was, sizeof o->was, "%g", *slot);
    double w = !strcmp(level, "warn") ? v : ex->agree_pct,
           f = !strcmp(level, "fail") ? v : ex->agree_fail_pct;
    if (f < w)
        return gq_err_set(err, GQ_E_USAGE, "--set '%s': agree fail (%g%%) must be >= warn (%g%%)", spec, f,
                          w);
    *slot = v;
    snprintf(o->key, sizeof o->key, "%s", !strcmp(level, "warn") ? "agree_pct" : "agree_fail_pct");
    ex->noverrides++;
    return GQ_OK;
}

/* The key CHECK names (its name, or its name without _min or _max) into *kout; an unknown one
 * is refused with a did-you-mean. */
static int set_key_of(const char *check, const char *spec, int *kout, gq_err *err)
{
    int k = -1;
    for (int i = 0; i < GQ_EXK_COUNT && k < 0; i++) {
        size_t l = strlen(check);
        if (!strcmp(gq_expect_key_name(i), check) ||
            (!strncmp(gq_expect_key_name(i), check, l) &&
             (!strcmp(gq_expect_key_name(i) + l, "_min") || !strcmp(gq_expect_key_name(i) + l, "_max"))))
            k = i;
    }
    if (k < 0) {
        const char *cands[GQ_EXK_COUNT + 2];
        for (int i = 0; i < GQ_EXK_COUNT; i++)
            cands[i] = gq_expect_key_name(i);
        cands[GQ_EXK_COUNT] = "agree";
        cands[GQ_EXK_COUNT + 1] = NULL;
        char where[160];
        snprintf(where, sizeof where, "--set '%s'", spec);
        return gq_expect_unknown_key(err, where, check, cands);
    }
    *kout = k;
    return GQ_OK;
}

int gq_expect_set(gq_expect *ex, const char *spec, gq_err *err)
{
    if (ex->noverrides >= GQ_EXPECT_MAX_OVERRIDES)
        return gq_err_set(err, GQ_E_USAGE, "--set %s: at most %d overrides", spec, GQ_EXPECT_MAX_OVERRIDES);
    char buf[128], model[96] = "";
    if (strlen(spec) >= sizeof buf)
        return gq_err_set(err, GQ_E_USAGE, "--set: '%s' is too long, expected at most %zu characters",
                          gq_ellipsize(buf, sizeof buf, spec, 40), sizeof buf - 1);
    snprintf(buf, sizeof buf, "%s", spec);
    char *eq = strchr(buf, '=');
    char *colon = strchr(buf, ':');
    if (colon && (!eq || colon < eq)) {
        *colon = 0;
        snprintf(model, sizeof model, "%s", buf);
        memmove(buf, colon + 1, strlen(colon + 1) + 1);
        eq = strchr(buf, '=');
    }
    char *dot = eq ? memchr(buf, '.', (size_t)(eq - buf)) : NULL;
    if (!eq || !dot || dot == buf)
        return gq_err_set(
            err, GQ_E_USAGE,
            "--set '%s': expected [MODEL:]CHECK.warn=VALUE or CHECK.fail=VALUE, e.g. h2d_gbps.fail=50", spec);
    *dot = 0;
    *eq = 0;
    const char *check = buf, *level = dot + 1, *val = eq + 1;
    if (strcmp(level, "warn") && strcmp(level, "fail"))
        return gq_err_set(err, GQ_E_USAGE, "--set '%s': the level is '%s'; use warn or fail", spec, level);
    char *end = NULL;
    errno = 0;
    double v = strtod(val, &end);
    if (!*val || !end || *end || !isfinite(v) || errno || strpbrk(val, "xX"))
        return gq_err_set(err, GQ_E_USAGE, "--set '%s': '%s' is not a number", spec, val);
    gq_expect_override *o = &ex->overrides[ex->noverrides];
    memset(o, 0, sizeof *o);
    snprintf(o->spec, sizeof o->spec, "%s", spec);
    snprintf(o->level, sizeof o->level, "%s", level);
    o->value = v;
    if (!strcmp(check, "agree"))
        return set_agree(ex, o, spec, model, level, v, err);
    int k = -1;
    int krc = set_key_of(check, spec, &k, err);
    if (krc)
        return krc;
    const char *bound = gq_expect_key_bound(k, v);
    if (bound) /* refused where it enters: no check could ever pass or fail on it as meant */
        return gq_err_set(err, GQ_E_USAGE, "--set '%s': %g cannot be a threshold of %s; give a value %s",
                          spec, v, gq_expect_key_name(k), bound);
    if (gq_expect_key_integer(k) && v != floor(v))
        return gq_err_set(err, GQ_E_USAGE, "--set '%s': %s takes a whole number", spec,
                          gq_expect_key_name(k));
    snprintf(o->key, sizeof o->key, "%s", gq_expect_key_name(k));
    if (ex->nmodels == 0 && !model[0]) {
        gq_expect_model *m = &ex->models[ex->nmodels++];
        memset(m, 0, sizeof *m);
        snprintf(m->description, sizeof m->description, "thresholds given with --set, for every GPU");
    }
    /* every model it applies to is checked before any is changed: a value one
     * of them refuses changes none */
    for (int m = 0; m < ex->nmodels; m++) {
        gq_threshold t = ex->models[m].th[k];
        if (model[0] && strcasecmp(model, ex->models[m].match))
            continue;
        int rc = set_threshold(&t, (gq_expect_key)k, level, v, spec, err);
        if (rc)
            return rc;
    }
    int hit = 0;
    size_t wl = 0;
    for (int m = 0; m < ex->nmodels; m++) {
        if (model[0] && strcasecmp(model, ex->models[m].match))
            continue;
        char was[32];
        threshold_text(&ex->models[m].th[k], level, was, sizeof was);
        (void)set_threshold(&ex->models[m].th[k], (gq_expect_key)k, level, v, spec, err); /* checked above */
        int w = snprintf(o->was + wl, sizeof o->was - wl, "%s%s", hit ? ", " : "", was);
        if (w > 0 && (size_t)w < sizeof o->was - wl)
            wl += (size_t)w;
        hit++;
    }
    if (!hit) {
        char names[256] = "";
        size_t nl = 0;
        for (int m = 0; m < ex->nmodels; m++) {
            int w = snprintf(names + nl, sizeof names - nl, "%s'%s'", m ? ", " : "", ex->models[m].match);
            if (w > 0 && (size_t)w < sizeof names - nl)
                nl += (size_t)w;
        }
        return gq_err_set(err, GQ_E_USAGE, "--set '%s': no model matches '%s'; the expectations have %s",
                          spec, model, nl ? names : "no model");
    }
    ex->noverrides++;
    return GQ_OK;
}
