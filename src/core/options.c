#include "core/options.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const gq_opt_grammar gq_grammar_gpuqual = {
    .bundling = true,
    .negation = true,
    .repeat_is_error = true,
};

/* One letter, one meaning, across every command. */
const gq_short_flag gq_short_flags[] = {
    {'a', "all"},     {'b', "buffer-size"}, {'D', "decode"}, {'d', "duration"}, {'e', "expect"},
    {'g', "gpus"},    {'i', "rounds"},      {'l', "copies"}, {'m', "method"},   {'o', "output"},
    {'P', "prefill"}, {'p', "prefix"},      {'q', "quiet"},  {'t', "test"},     {0, NULL},
};

char gq_short_for(const char *name)
{
    for (const gq_short_flag *s = gq_short_flags; s->c; s++)
        if (!strcmp(s->name, name))
            return s->c;
    return 0;
}

const char *gq_opt_kind_name(gq_opt_type t)
{
    switch (t) {
    case GQ_OPT_FLAG: return "flag";
    case GQ_OPT_INT: return "int";
    case GQ_OPT_DOUBLE: return "double";
    case GQ_OPT_STR: return "string";
    case GQ_OPT_SIZE: return "size";
    case GQ_OPT_DURATION: return "duration";
    case GQ_OPT_ENUM: return "enum";
    case GQ_OPT_PERCENT: return "percent";
    case GQ_OPT_LIST: return "list";
    case GQ_OPT_KV: return "key=value";
    }
    return "?";
}

static int choice_ok(const char *choices, const char *v);

const gq_opt *gq_optset_next(const gq_optset *set, int *it, const gq_opt *prev)
{
    const gq_opt *o = prev ? prev + 1 : (set->ntab > 0 ? set->tabs[0] : NULL);
    for (;;) {
        while (o && !o->name) {
            if (++*it >= set->ntab)
                return NULL;
            o = set->tabs[*it];
        }
        /* omit names shared options; the last table (the command's own) keeps its names */
        if (!o || !set->omit || *it == set->ntab - 1 || !choice_ok(set->omit, o->name))
            return o;
        o++;
    }
}

const char *gq_optset_default(const gq_optset *set, const gq_opt *o)
{
    size_t l = strlen(o->name);
    for (const char *const *d = set->defaults; d && *d; d++)
        if (!strncmp(*d, o->name, l) && (*d)[l] == '=')
            return *d + l + 1;
    return o->def;
}

static void set_seen(const gq_opt *o, void *dst)
{
    if (o->seen_off)
        *(bool *)((char *)dst + o->seen_off) = true;
}

static void bound_text(const gq_opt *o, double v, char *buf, size_t n, bool nbsp);

static int bounds_check(const gq_opt *o, double v, const char *text, gq_err *err)
{
    if (!(o->lo < o->hi && (v < o->lo || v > o->hi)))
        return GQ_OK;
    char lo[32], hi[32];
    bound_text(o, o->lo, lo, sizeof lo, false);
    bound_text(o, o->hi, hi, sizeof hi, false);
    return gq_err_set(err, GQ_E_USAGE, "--%s %s is out of range, expected %s..%s", o->name, text, lo, hi);
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

static int list_add(const gq_opt *o, gq_optlist *l, const char *v, bool split, gq_err *err)
{
    if (o->type == GQ_OPT_KV) {
        const char *eq = strchr(v, '=');
        if (!eq || eq == v)
            return gq_err_set(err, GQ_E_USAGE, "--%s '%s': expected KEY=VALUE", o->name, v);
        if (l->n >= GQ_OPTLIST_MAX)
            return gq_err_set(err, GQ_E_USAGE, "--%s: at most %d of them", o->name, GQ_OPTLIST_MAX);
        l->item[l->n++] = v;
        return GQ_OK;
    }
    if (!*v)
        return gq_err_set(err, GQ_E_USAGE, "--%s needs a non-empty value", o->name);
    if (!split || !strchr(v, ',')) {
        if (l->n >= GQ_OPTLIST_MAX)
            return gq_err_set(err, GQ_E_USAGE, "--%s: at most %d items", o->name, GQ_OPTLIST_MAX);
        l->item[l->n++] = v;
        return GQ_OK;
    }
    for (const char *p = v;;) {
        const char *c = strchr(p, ',');
        size_t len = c ? (size_t)(c - p) : strlen(p);
        if (len == 0)
            return gq_err_set(err, GQ_E_USAGE, "--%s '%s': empty item", o->name, v);
        if (l->n >= GQ_OPTLIST_MAX || l->used + len + 1 > sizeof l->store)
            return gq_err_set(err, GQ_E_USAGE, "--%s: too many items", o->name);
        char *s = l->store + l->used;
        memcpy(s, p, len);
        s[len] = 0;
        l->used += len + 1;
        l->item[l->n++] = s;
        if (!c)
            break;
        p = c + 1;
    }
    return GQ_OK;
}

/* o with the set's bounds for it ("buffer-size=4096..1e13" in set->bounds)
 * in *tmp, else o itself. */
static const gq_opt *with_bounds(const gq_optset *set, const gq_opt *o, gq_opt *tmp)
{
    size_t l = strlen(o->name);
    for (const char *const *b = set->bounds; b && *b; b++) {
        if (strncmp(*b, o->name, l) || (*b)[l] != '=')
            continue;
        const char *dots = strstr(*b + l + 1, "..");
        if (!dots)
            return o;
        *tmp = *o;
        tmp->lo = strtod(*b + l + 1, NULL); /* "4096." reads as 4096 */
        tmp->hi = strtod(dots + 2, NULL);
        return tmp;
    }
    return o;
}

static int set_value(const gq_optset *set, const gq_opt *o, void *dst, const char *v, gq_err *err)
{
    gq_opt bounded;
    o = with_bounds(set, o, &bounded);
    char *p = (char *)dst + o->off;
    gq_err e = {0};
    switch (o->type) {
    case GQ_OPT_FLAG: *(bool *)p = strcmp(v, "0") != 0 && strcmp(v, "false") != 0; return GQ_OK;
    case GQ_OPT_INT: {
        long x;
        long lo = o->lo < o->hi ? (long)o->lo : -2147483647L, hi = o->lo < o->hi ? (long)o->hi : 2147483647L;
        if (gq_parse_int(v, lo, hi, &x, &e) && !(o->lo < o->hi) && strstr(e.msg, "out of range"))
            return gq_err_set(err, GQ_E_USAGE, "--%s: %s is too %s, expected a whole number within %ld..%ld",
                              o->name, v, v[0] == '-' ? "small" : "large", lo, hi);
        if (e.msg[0])
            return gq_err_set(err, GQ_E_USAGE, "--%s: %s", o->name, e.msg);
        *(int *)p = (int)x;
        return GQ_OK;
    }
    case GQ_OPT_DOUBLE:
    case GQ_OPT_PERCENT: {
        double x;
        char buf[64];
        snprintf(buf, sizeof buf, "%s", v);
        size_t l = strlen(buf);
        if (o->type == GQ_OPT_PERCENT && l && buf[l - 1] == '%')
            buf[l - 1] = 0;
        if (gq_parse_double(buf, &x, &e))
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
    case GQ_OPT_LIST:
    case GQ_OPT_KV:
        return list_add(o, (gq_optlist *)p, v, !(set->grammar && set->grammar->whole_values), err);
    }
    return gq_err_set(err, GQ_E_FAIL, "--%s: bad option type", o->name);
}

static int set_defaults(const gq_optset *set, void *dst, gq_err *err)
{
    int it = 0;
    for (const gq_opt *o = NULL; (o = gq_optset_next(set, &it, o));) {
        const char *def = gq_optset_default(set, o);
        if (!def)
            continue;
        if (set_value(set, o, dst, def, err))
            return gq_err_prefix(err, "internal: bad default");
    }
    return GQ_OK;
}

static bool name_eq(const gq_opt_grammar *g, const char *a, const char *b, size_t len)
{
    return strlen(a) == len && (g->case_fold ? strncasecmp(a, b, len) : strncmp(a, b, len)) == 0;
}

static const gq_opt *find_long(const gq_optset *set, const gq_opt_grammar *g, const char *name, size_t len)
{
    int it = 0;
    for (const gq_opt *o = NULL; (o = gq_optset_next(set, &it, o));)
        if (name_eq(g, o->name, name, len))
            return o;
    return NULL;
}

static const gq_opt *find_short(const gq_optset *set, char c)
{
    int it = 0;
    for (const gq_opt *o = NULL; (o = gq_optset_next(set, &it, o));)
        if (o->shortname == c)
            return o;
    return NULL;
}

static int unknown(const gq_optset *set, const char *arg, gq_err *err)
{
    const char *cands[256];
    char buf[256][48];
    int n = 0, it = 0;
    for (const gq_opt *o = NULL; (o = gq_optset_next(set, &it, o)) && n < 255;) {
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

/* "table,json,csv" as "table, json or csv". */
static void or_list(const char *list, char *out, size_t n)
{
    out[0] = 0;
    const char *last = strrchr(list, ',');
    size_t used = 0;
    for (const char *p = list; p && *p && used < n;) {
        const char *c = strchr(p, ',');
        size_t l = c ? (size_t)(c - p) : strlen(p);
        const char *sep = p == list ? "" : (p == last + 1 ? " or " : ", ");
        used += (size_t)snprintf(out + used, n - used, "%s%.*s", sep, (int)l, p);
        p = c ? c + 1 : NULL;
    }
}

/* The parse in progress. */
typedef struct pstate {
    const gq_optset *set;
    const gq_opt_grammar *g;
    void *dst;
    const gq_opt *given[256];
    int ngiven;
    const gq_opt *pending; /* multi_values: the LIST option taking the following words */
} pstate;

static bool was_given(pstate *s, const gq_opt *o)
{
    for (int i = 0; i < s->ngiven; i++)
        if (s->given[i] == o)
            return true;
    return false;
}

/* Apply one option with its value (NULL for a flag). `shown` is how the user
 * named it. */
static int apply(pstate *s, const gq_opt *o, const char *shown, const char *val, bool negated, gq_err *err)
{
    bool again = was_given(s, o);
    if (!again && s->ngiven < (int)(sizeof s->given / sizeof s->given[0]))
        s->given[s->ngiven++] = o;
    s->pending = NULL;
    if (o->type == GQ_OPT_FLAG) {
        if (val)
            return gq_err_set(err, GQ_E_USAGE, "%s takes no value", shown);
        *(bool *)((char *)s->dst + o->off) = !negated;
        set_seen(o, s->dst);
        return GQ_OK;
    }
    bool list = o->type == GQ_OPT_LIST || o->type == GQ_OPT_KV;
    if (again && !list && s->g->repeat_is_error)
        return gq_err_set(err, GQ_E_USAGE, "--%s is given twice; give it once", o->name);
    if (list && !again) /* the user's items replace the default's */
        memset((char *)s->dst + o->off, 0, sizeof(gq_optlist));
    if (s->set->formats && !strcmp(o->name, "format") && o->type == GQ_OPT_ENUM &&
        choice_ok(o->choices, val) && !choice_ok(s->set->formats, val)) {
        char alts[256];
        or_list(s->set->formats, alts, sizeof alts);
        return gq_err_set(err, GQ_E_USAGE, "%s%s--format %s is not available here; use %s",
                          s->set->name ? s->set->name : "", s->set->name ? ": " : "", val, alts);
    }
    int rc = set_value(s->set, o, s->dst, val, err);
    if (rc)
        return rc;
    set_seen(o, s->dst);
    if (list && s->g->multi_values)
        s->pending = o;
    return GQ_OK;
}

static int need_value(const char *shown, const gq_opt *o, int argc, char **argv, int *i, const char **val,
                      gq_err *err)
{
    if (*val || o->type == GQ_OPT_FLAG)
        return GQ_OK;
    if (*i + 1 >= argc)
        return gq_err_set(err, GQ_E_USAGE, "%s needs a value (%s)", shown, o->arg ? o->arg : "VALUE");
    const char *v = argv[*i + 1];
    /* "--json -o out": the value forgotten, the next option taken for a file name */
    if (o->type == GQ_OPT_STR && v[0] == '-' &&
        (v[1] == '-' || (v[1] >= 'a' && v[1] <= 'z') || (v[1] >= 'A' && v[1] <= 'Z')))
        return gq_err_set(err, GQ_E_USAGE,
                          "%s needs a value (%s), not the option '%s'; for a file so named, write ./%s",
                          shown, o->arg ? o->arg : "VALUE", v, v);
    *val = argv[++*i];
    return GQ_OK;
}

static int long_opt(pstate *s, const char *a, int argc, char **argv, int *i, gq_err *err)
{
    const char *name = a + (a[1] == '-' ? 2 : 1);
    const char *eq = strchr(name, '=');
    size_t len = eq ? (size_t)(eq - name) : strlen(name);
    bool negated = false;
    const gq_opt *o = find_long(s->set, s->g, name, len);
    if (!o && s->g->negation && len > 3 && strncmp(name, "no-", 3) == 0) {
        o = find_long(s->set, s->g, name + 3, len - 3);
        if (o && o->type != GQ_OPT_FLAG)
            o = NULL;
        negated = o != NULL;
    }
    if (!o)
        return unknown(s->set, a, err);
    const char *val = eq ? eq + 1 : NULL;
    char shown[80];
    snprintf(shown, sizeof shown, "--%s", o->name);
    int rc = need_value(shown, o, argc, argv, i, &val, err);
    return rc ? rc : apply(s, o, shown, val, negated, err);
}

/* Are all the letters of `p` short flags that take no value? */
static bool all_flags(const gq_optset *set, const char *p)
{
    for (; *p; p++) {
        const gq_opt *o = find_short(set, *p);
        if (!o || o->type != GQ_OPT_FLAG)
            return false;
    }
    return true;
}

static int short_opts(pstate *s, const char *a, int argc, char **argv, int *i, gq_err *err)
{
    if (a[2] && !find_short(s->set, a[1]))
        return unknown(s->set, a, err);
    for (int j = 1; a[j]; j++) {
        const gq_opt *o = find_short(s->set, a[j]);
        if (!o)
            return gq_err_set(err, GQ_E_USAGE, "unknown option '-%c' in '%s'; see --help", a[j], a);
        char shown[8];
        snprintf(shown, sizeof shown, "-%c", o->shortname);
        const char *val = a[j + 1] ? a + j + 1 : NULL;
        if (o->type == GQ_OPT_FLAG && val && s->g->bundling) {
            int rc = apply(s, o, shown, NULL, false, err);
            if (rc)
                return rc;
            continue;
        }
        if (o->type != GQ_OPT_FLAG && j > 1 && val && all_flags(s->set, val))
            return gq_err_set(err, GQ_E_USAGE,
                              "'%s': %s takes a value, so it comes last in a bundle (e.g. -%s %s VALUE)", a,
                              shown, val, shown);
        int rc = need_value(shown, o, argc, argv, i, &val, err);
        return rc ? rc : apply(s, o, shown, val, false, err);
    }
    return GQ_OK;
}

int gq_optset_parse(const gq_optset *set, void *dst, int argc, char **argv, int first, const char **pos,
                    int maxpos, int *npos, bool *help, gq_err *err)
{
    int rc = set_defaults(set, dst, err);
    if (rc)
        return rc;
    pstate s = {.set = set, .g = set->grammar ? set->grammar : &gq_grammar_gpuqual, .dst = dst};
    *npos = 0;
    *help = false;
    bool only_pos = false;
    for (int i = first; i < argc; i++) {
        const char *a = argv[i];
        if (only_pos || a[0] != '-' || a[1] == 0) {
            if (!only_pos && s.pending) {
                if ((rc = set_value(set, s.pending, dst, a, err)))
                    return rc;
                continue;
            }
            if (*npos >= maxpos && maxpos > 1)
                return gq_err_set(err, GQ_E_USAGE, "unexpected argument '%s': %s takes at most %d arguments",
                                  a, set->name ? set->name : "this command", maxpos);
            if (*npos >= maxpos)
                return gq_err_set(err, GQ_E_USAGE, "unexpected argument '%s'%s", a,
                                  maxpos ? "" : " (this command takes options only)");
            pos[(*npos)++] = a;
            continue;
        }
        s.pending = NULL;
        if (!strcmp(a, "--")) {
            only_pos = true;
            continue;
        }
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            *help = true;
            continue;
        }
        if (a[1] == '-')
            rc = long_opt(&s, a, argc, argv, &i, err);
        else if (s.g->single_dash_long && a[2] && find_long(set, s.g, a + 1, strcspn(a + 1, "=")))
            rc = long_opt(&s, a, argc, argv, &i, err);
        else
            rc = short_opts(&s, a, argc, argv, &i, err);
        if (rc)
            return rc;
    }
    return GQ_OK;
}

int gq_opts_parse(const gq_opt *const *tabs, int ntab, void *dst, int argc, char **argv, int first,
                  const char **pos, int maxpos, int *npos, bool *help, gq_err *err)
{
    gq_optset set = {.tabs = tabs, .ntab = ntab};
    return gq_optset_parse(&set, dst, argc, argv, first, pos, maxpos, npos, help, err);
}

int gq_kv_split(const char *item, char *key, size_t keysz, const char **value, gq_err *err)
{
    const char *eq = strchr(item, '=');
    if (!eq || eq == item)
        return gq_err_set(err, GQ_E_USAGE, "'%s': expected KEY=VALUE", item);
    size_t l = (size_t)(eq - item);
    if (l >= keysz)
        return gq_err_set(err, GQ_E_USAGE, "'%s': the key is too long", item);
    memcpy(key, item, l);
    key[l] = 0;
    *value = eq + 1;
    return GQ_OK;
}

/* ---- help ------------------------------------------------------------------ */

int gq_opts_help_width = 100;

#define HELP_LEFT 32 /* "  " + 30 columns of names */
#define NBSP '\x1f'  /* a space that never breaks a line (inside a number with its unit) */

/* Write `text` from column `col`, wrapping at spaces to `width`, continuation
 * lines indented to HELP_LEFT + 1. A word longer than a line stays whole. */
static void wrap(FILE *f, const char *text, int col, int width)
{
    const char *p = text;
    bool first = true;
    while (*p) {
        while (*p == ' ')
            p++;
        if (!*p)
            break;
        size_t wl = strcspn(p, " ");
        if (!first && col + 1 + (int)wl > width && col > HELP_LEFT + 1) {
            fprintf(f, "\n%*s", HELP_LEFT + 1, "");
            col = HELP_LEFT + 1;
        } else if (!first) {
            fputc(' ', f);
            col++;
        }
        for (size_t k = 0; k < wl; k++)
            fputc(p[k] == NBSP ? ' ' : p[k], f);
        col += (int)wl;
        p += wl;
        first = false;
    }
}

/* A bound as the user writes it (4 KiB, 1 TiB, 100ms, 168h, 5%); in help (nbsp)
 * a size's space does not break, so the wrapping keeps "4 KiB" whole. */
static void bound_text(const gq_opt *o, double v, char *buf, size_t n, bool nbsp)
{
    if (o->type == GQ_OPT_SIZE) {
        gq_fmt_size((uint64_t)v, buf, n);
        for (char *c = buf; nbsp && *c; c++)
            if (*c == ' ')
                *c = NBSP;
    } else if (o->type == GQ_OPT_DURATION) {
        if (v >= 3600 && fmod(v, 3600) == 0)
            snprintf(buf, n, "%.15gh", v / 3600);
        else if (v >= 60 && fmod(v, 60) == 0)
            snprintf(buf, n, "%.15gm", v / 60);
        else if (v >= 1)
            snprintf(buf, n, "%.15gs", v);
        else
            snprintf(buf, n, "%.15gms", v * 1000);
    } else if (o->type == GQ_OPT_PERCENT)
        snprintf(buf, n, "%.15g%%", v);
    else
        snprintf(buf, n, "%.15g", v);
}

static void help_one(FILE *f, const gq_optset *set, const gq_opt *o, int width)
{
    gq_opt bounded;
    o = with_bounds(set, o, &bounded);
    char left[96], text[1024];
    const char *arg = o->type == GQ_OPT_FLAG ? "" : (o->arg ? o->arg : "VALUE");
    if (o->shortname)
        snprintf(left, sizeof left, "-%c, --%s%s%s", o->shortname, o->name, *arg ? " " : "", arg);
    else
        snprintf(left, sizeof left, "    --%s%s%s", o->name, *arg ? " " : "", arg);
    size_t u = (size_t)snprintf(text, sizeof text, "%s", o->help ? o->help : "");
    const char *def = gq_optset_default(set, o);
    const char *choices = o->choices;
    if (set->formats && !strcmp(o->name, "format"))
        choices = set->formats;
    if (o->type == GQ_OPT_ENUM && choices && u < sizeof text)
        u += (size_t)snprintf(text + u, sizeof text - u, " [%s]", choices);
    bool dur_default = o->type == GQ_OPT_DURATION && !(o->lo < o->hi);
    if ((o->lo < o->hi || dur_default) && o->type != GQ_OPT_FLAG && o->type != GQ_OPT_ENUM &&
        u < sizeof text) {
        char lo[32], hi[32];
        bound_text(o, dur_default ? GQ_DURATION_MIN_S : o->lo, lo, sizeof lo, true);
        bound_text(o, dur_default ? GQ_DURATION_MAX_S : o->hi, hi, sizeof hi, true);
        u += (size_t)snprintf(text + u, sizeof text - u, " (%s..%s)", lo, hi);
    }
    if ((o->type == GQ_OPT_LIST || o->type == GQ_OPT_KV) && u < sizeof text)
        u += (size_t)snprintf(text + u, sizeof text - u, " (repeatable)");
    if (u < sizeof text) {
        if (def && o->type != GQ_OPT_FLAG && !(o->help && strstr(o->help, "default")))
            snprintf(text + u, sizeof text - u, " (default %s)", def);
        else if (def && o->type == GQ_OPT_FLAG && strcmp(def, "1") == 0)
            snprintf(text + u, sizeof text - u, " (default on; --no-%s turns it off)", o->name);
    }
    fprintf(f, "  %-30s", left);
    int col = 2 + ((int)strlen(left) > 30 ? (int)strlen(left) : 30);
    if (text[0]) {
        fputc(' ', f);
        wrap(f, text, col + 1, width);
    }
    fputc('\n', f);
}

void gq_optset_help(FILE *f, const gq_optset *set, int width)
{
    if (width < 60)
        width = 60;
    int it = 0;
    for (const gq_opt *o = NULL; (o = gq_optset_next(set, &it, o));)
        help_one(f, set, o, width);
}

void gq_opts_help(FILE *f, const gq_opt *const *tabs, int ntab)
{
    gq_optset set = {.tabs = tabs, .ntab = ntab};
    gq_optset_help(f, &set, gq_opts_help_width);
}
