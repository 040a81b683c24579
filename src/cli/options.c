#include "cli/options.h"

#include <jansson.h>
#include <string.h>

static void set_seen(const gq_opt *o, void *dst)
{
    if (o->seen_off)
        *(bool *)((char *)dst + o->seen_off) = true;
}

static int bounds_check(const gq_opt *o, double v, const char *text, gq_err *err)
{
    if (o->lo < o->hi && (v < o->lo || v > o->hi))
        return gq_err_set(err, GQ_E_USAGE, "--%s %s is out of range, expected %g..%g", o->name, text, o->lo,
                          o->hi);
    return GQ_OK;
}

static int choice_ok(const char *choices, const char *v)
{
    size_t lv = strlen(v);
    for (const char *p = choices; p && *p;) {
        const char *c = strchr(p, ',');
        size_t l = c ? (size_t)(c - p) : strlen(p);
        if (l == lv && strncmp(p, v, l) == 0)
            return 1;
        p = c ? c + 1 : NULL;
    }
    return 0;
}

static int set_value(const gq_opt *o, void *dst, const char *v, gq_err *err)
{
    char *p = (char *)dst + o->off;
    gq_err e = {0};
    switch (o->type) {
    case GQ_OPT_FLAG: *(bool *)p = strcmp(v, "0") != 0 && strcmp(v, "false") != 0; return GQ_OK;
    case GQ_OPT_INT: {
        long x;
        long lo = o->lo < o->hi ? (long)o->lo : -2147483647L, hi = o->lo < o->hi ? (long)o->hi : 2147483647L;
        if (gq_parse_int(v, lo, hi, &x, &e))
            return gq_err_set(err, GQ_E_USAGE, "--%s: %s", o->name, e.msg);
        *(int *)p = (int)x;
        return GQ_OK;
    }
    case GQ_OPT_DOUBLE: {
        double x;
        if (gq_parse_double(v, &x, &e))
            return gq_err_set(err, GQ_E_USAGE, "--%s: %s", o->name, e.msg);
        if (bounds_check(o, x, v, err))
            return GQ_E_USAGE;
        *(double *)p = x;
        return GQ_OK;
    }
    case GQ_OPT_STR:
        if (!*v)
            return gq_err_set(err, GQ_E_USAGE, "--%s needs a non-empty value", o->name);
        *(const char **)p = v;
        return GQ_OK;
    case GQ_OPT_SIZE: {
        uint64_t x;
        if (gq_parse_size(v, o->unit, &x, &e))
            return gq_err_set(err, GQ_E_USAGE, "--%s: %s", o->name, e.msg);
        if (bounds_check(o, (double)x, v, err))
            return GQ_E_USAGE;
        *(uint64_t *)p = x;
        return GQ_OK;
    }
    case GQ_OPT_DURATION: {
        double x;
        if (gq_parse_duration(v, &x, &e))
            return gq_err_set(err, GQ_E_USAGE, "--%s: %s", o->name, e.msg);
        if (bounds_check(o, x, v, err))
            return GQ_E_USAGE;
        *(double *)p = x;
        return GQ_OK;
    }
    case GQ_OPT_ENUM:
        if (!choice_ok(o->choices, v))
            return gq_err_set(err, GQ_E_USAGE, "--%s: '%s' is not one of %s", o->name, v, o->choices);
        *(const char **)p = v;
        return GQ_OK;
    }
    return gq_err_set(err, GQ_E_FAIL, "--%s: bad option type", o->name);
}

int gq_opts_defaults(const gq_opt *const *tabs, int ntab, void *dst, gq_err *err)
{
    for (int t = 0; t < ntab; t++)
        for (const gq_opt *o = tabs[t]; o->name; o++) {
            if (!o->def)
                continue;
            if (set_value(o, dst, o->def, err))
                return gq_err_prefix(err, "internal: bad default");
        }
    return GQ_OK;
}

static const gq_opt *find_long(const gq_opt *const *tabs, int ntab, const char *name, size_t len)
{
    for (int t = 0; t < ntab; t++)
        for (const gq_opt *o = tabs[t]; o->name; o++)
            if (strlen(o->name) == len && strncmp(o->name, name, len) == 0)
                return o;
    return NULL;
}

static const gq_opt *find_short(const gq_opt *const *tabs, int ntab, char c)
{
    for (int t = 0; t < ntab; t++)
        for (const gq_opt *o = tabs[t]; o->name; o++)
            if (o->shortname == c)
                return o;
    return NULL;
}

static int unknown(const gq_opt *const *tabs, int ntab, const char *arg, gq_err *err)
{
    const char *cands[256];
    char buf[256][48];
    int n = 0;
    for (int t = 0; t < ntab; t++)
        for (const gq_opt *o = tabs[t]; o->name && n < 255; o++) {
            snprintf(buf[n], sizeof buf[n], "--%s", o->name);
            cands[n] = buf[n];
            n++;
        }
    cands[n] = NULL;
    char word[64];
    snprintf(word, sizeof word, "%s", arg);
    char *eq = strchr(word, '=');
    if (eq)
        *eq = 0;
    const char *best = gq_closest(word, cands);
    if (best)
        return gq_err_set(err, GQ_E_USAGE, "unknown option '%s'; did you mean %s?", word, best);
    return gq_err_set(err, GQ_E_USAGE, "unknown option '%s'; see --help", word);
}

int gq_opts_parse(const gq_opt *const *tabs, int ntab, void *dst, int argc, char **argv, int first,
                  const char **pos, int maxpos, int *npos, bool *help, gq_err *err)
{
    int rc = gq_opts_defaults(tabs, ntab, dst, err);
    if (rc)
        return rc;
    *npos = 0;
    *help = false;
    bool only_pos = false;
    for (int i = first; i < argc; i++) {
        const char *a = argv[i];
        if (only_pos || a[0] != '-' || a[1] == 0) {
            if (*npos >= maxpos)
                return gq_err_set(err, GQ_E_USAGE, "unexpected argument '%s'%s", a,
                                  maxpos ? "" : " (this command takes options only)");
            pos[(*npos)++] = a;
            continue;
        }
        if (!strcmp(a, "--")) {
            only_pos = true;
            continue;
        }
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            *help = true;
            continue;
        }
        const gq_opt *o = NULL;
        const char *val = NULL;
        bool negated = false;
        char shown[80];
        if (a[1] == '-') {
            const char *name = a + 2;
            const char *eq = strchr(name, '=');
            size_t len = eq ? (size_t)(eq - name) : strlen(name);
            o = find_long(tabs, ntab, name, len);
            if (!o && len > 3 && strncmp(name, "no-", 3) == 0) {
                o = find_long(tabs, ntab, name + 3, len - 3);
                if (o && o->type != GQ_OPT_FLAG)
                    o = NULL;
                negated = o != NULL;
            }
            if (!o)
                return unknown(tabs, ntab, a, err);
            if (eq)
                val = eq + 1;
            snprintf(shown, sizeof shown, "--%s", o->name);
        } else {
            if (a[2] && !find_short(tabs, ntab, a[1]))
                return unknown(tabs, ntab, a, err);
            o = find_short(tabs, ntab, a[1]);
            if (!o)
                return gq_err_set(err, GQ_E_USAGE, "unknown option '%s'; see --help", a);
            if (a[2])
                val = a + 2;
            snprintf(shown, sizeof shown, "-%c", o->shortname);
        }
        if (o->type == GQ_OPT_FLAG) {
            if (val)
                return gq_err_set(err, GQ_E_USAGE, "%s takes no value", shown);
            *(bool *)((char *)dst + o->off) = !negated;
            set_seen(o, dst);
            continue;
        }
        if (!val) {
            if (i + 1 >= argc)
                return gq_err_set(err, GQ_E_USAGE, "%s needs a value (%s)", shown, o->arg ? o->arg : "VALUE");
            val = argv[++i];
        }
        if ((rc = set_value(o, dst, val, err)))
            return rc;
        set_seen(o, dst);
    }
    return GQ_OK;
}

void gq_opts_help(FILE *f, const gq_opt *const *tabs, int ntab)
{
    for (int t = 0; t < ntab; t++)
        for (const gq_opt *o = tabs[t]; o->name; o++) {
            char left[96];
            const char *arg = o->type == GQ_OPT_FLAG ? "" : (o->arg ? o->arg : "VALUE");
            if (o->shortname)
                snprintf(left, sizeof left, "-%c, --%s%s%s", o->shortname, o->name, *arg ? " " : "", arg);
            else
                snprintf(left, sizeof left, "    --%s%s%s", o->name, *arg ? " " : "", arg);
            fprintf(f, "  %-30s %s", left, o->help ? o->help : "");
            if (o->type == GQ_OPT_ENUM && o->choices)
                fprintf(f, " [%s]", o->choices);
            if (o->def && o->type != GQ_OPT_FLAG && !(o->help && strstr(o->help, "default")))
                fprintf(f, " (default %s)", o->def);
            else if (o->def && o->type == GQ_OPT_FLAG && strcmp(o->def, "1") == 0)
                fprintf(f, " (default on; --no-%s turns it off)", o->name);
            fputc('\n', f);
        }
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
            case GQ_OPT_DURATION: v = json_real(*(const double *)p); break;
            case GQ_OPT_SIZE: v = json_integer((json_int_t) * (const uint64_t *)p); break;
            case GQ_OPT_STR:
            case GQ_OPT_ENUM: {
                const char *s = *(const char *const *)p;
                v = s ? json_string(s) : json_null();
                break;
            }
            }
            if (v)
                json_object_set_new(o, op->name, v);
        }
    return o;
}
