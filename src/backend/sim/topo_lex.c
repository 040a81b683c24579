/* Topology files for the simulated fabric, the lexical part: units and
 * value types, the error line, the tokenizer and the value parser. The
 * grammar is in docs/topology-format.md; topo_load.c has the overview.
 */
#include "backend/sim/sim.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "backend/sim/topo_internal.h"
#include "core/units.h"

/* ---- value types and units ------------------------------------------------ */

typedef enum uclass { U_NONE, U_BW, U_TIME, U_SIZE, U_GTS, U_WATT, U_MHZ, U_PCT } uclass;

typedef struct unit_def {
    const char *name;
    uclass cls;
    double scale;
} unit_def;

static const unit_def units[] = {
    {.name = "GB/s", .cls = U_BW, .scale = 1e9},
    {.name = "MB/s", .cls = U_BW, .scale = 1e6},
    {.name = "TB/s", .cls = U_BW, .scale = 1e12},
    {.name = "ns", .cls = U_TIME, .scale = 1e-9},
    {.name = "us", .cls = U_TIME, .scale = 1e-6},
    {.name = "ms", .cls = U_TIME, .scale = 1e-3},
    {.name = "s", .cls = U_TIME, .scale = 1.0},
    {.name = "KiB", .cls = U_SIZE, .scale = 1024.0},
    {.name = "MiB", .cls = U_SIZE, .scale = 1048576.0},
    {.name = "GiB", .cls = U_SIZE, .scale = 1073741824.0},
    {.name = "TiB", .cls = U_SIZE, .scale = 1099511627776.0},
    {.name = "GT/s", .cls = U_GTS, .scale = 1.0},
    {.name = "W", .cls = U_WATT, .scale = 1.0},
    {.name = "MHz", .cls = U_MHZ, .scale = 1.0},
    {.name = "GHz", .cls = U_MHZ, .scale = 1000.0},
    {.name = "%", .cls = U_PCT, .scale = 0.01},
};

/* Units people write by habit that mean something else here. */
static const struct {
    const char *name;
    const char *hint;
} unit_hints[] = {
    {.name = "GiB/s", .hint = "bandwidth is decimal here: write GB/s (10^9 bytes/s)"},
    {.name = "MiB/s", .hint = "bandwidth is decimal here: write MB/s (10^6 bytes/s)"},
    {.name = "Gb/s", .hint = "bandwidth is in bytes: write GB/s"},
    {.name = "Gbps", .hint = "bandwidth is in bytes: write GB/s"},
    {.name = "GBps", .hint = "write GB/s"},
    {.name = "GB", .hint = "sizes are binary here: write GiB"},
    {.name = "MB", .hint = "sizes are binary here: write MiB"},
    {.name = "KB", .hint = "sizes are binary here: write KiB"},
    {.name = "\xc2\xb5s", .hint = "write microseconds as 'us'"},
    {.name = "\xce\xbcs", .hint = "write microseconds as 'us'"},
    {.name = "GT", .hint = "write the lane rate as GT/s"},
};

static const char *class_units(uclass c)
{
    switch (c) {
    case U_BW: return "GB/s, MB/s or TB/s";
    case U_TIME: return "ns, us, ms or s";
    case U_SIZE: return "KiB, MiB, GiB or TiB";
    case U_GTS: return "GT/s";
    case U_WATT: return "W";
    case U_MHZ: return "MHz or GHz";
    case U_PCT: return "%";
    default: return "";
    }
}

static const char *class_name(uclass c)
{
    switch (c) {
    case U_BW: return "a bandwidth";
    case U_TIME: return "a time";
    case U_SIZE: return "a size";
    case U_GTS: return "a PCIe lane rate";
    case U_WATT: return "a power";
    case U_MHZ: return "a clock";
    case U_PCT: return "a percentage";
    default: return "a value";
    }
}

static uclass vtype_class(vtype t)
{
    switch (t) {
    case VT_BW: return U_BW;
    case VT_TIME: return U_TIME;
    case VT_SIZE: return U_SIZE;
    case VT_GTS: return U_GTS;
    case VT_WATT: return U_WATT;
    case VT_MHZ: return U_MHZ;
    case VT_PCT: return U_PCT;
    default: return U_NONE;
    }
}

static const unit_def *find_unit(const char *s)
{
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (!strcmp(units[i].name, s))
            return &units[i];
    return NULL;
}

/* Strict decimal: [+-]digits[.digits][e[+-]digits] or [+-].digits...; no
 * hex, inf or nan. Returns the length of the number at s (0 if none). */
static size_t number_prefix(const char *s)
{
    size_t i = 0, digits = 0;
    if (s[i] == '+' || s[i] == '-')
        i++;
    while (s[i] >= '0' && s[i] <= '9')
        i++, digits++;
    if (s[i] == '.') {
        i++;
        while (s[i] >= '0' && s[i] <= '9')
            i++, digits++;
    }
    if (!digits)
        return 0;
    if (s[i] == 'e' || s[i] == 'E') {
        size_t j = i + 1, ed = 0;
        if (s[j] == '+' || s[j] == '-')
            j++;
        while (s[j] >= '0' && s[j] <= '9')
            j++, ed++;
        if (ed)
            i = j;
    }
    return i;
}

static bool lex_number(const char *s, double *out)
{
    size_t n = number_prefix(s);
    if (!n || s[n])
        return false;
    errno = 0;
    double v = strtod(s, NULL);
    if (errno == ERANGE || !isfinite(v))
        return false;
    *out = v;
    return true;
}

static bool lex_int(const char *s, long *out)
{
    size_t i = 0;
    if (s[0] == '+' || s[0] == '-')
        i++;
    if (!s[i] || strlen(s + i) > 9)
        return false;
    for (size_t j = i; s[j]; j++)
        if (s[j] < '0' || s[j] > '9')
            return false;
    *out = strtol(s, NULL, 10);
    return true;
}

static bool valid_name(const char *s)
{
    if (!((s[0] >= 'A' && s[0] <= 'Z') || (s[0] >= 'a' && s[0] <= 'z') || s[0] == '_'))
        return false;
    size_t n = 0;
    for (const char *p = s; *p; p++, n++) {
        char c = *p;
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
              c == '-' || c == '.'))
            return false;
    }
    return n < GQ_SIM_NAME_MAX;
}

int gq_tp_err(pctx *p, int col, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return gq_err_set(p->err, GQ_E_USAGE, "%s:%d:%d: %s", p->fname, p->line, col, msg);
}

int gq_tp_err_at(pctx *p, int line, int col, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return gq_err_set(p->err, GQ_E_USAGE, "%s:%d:%d: %s", p->fname, line, col, msg);
}

/* ---- tokenizer ------------------------------------------------------------ */

static bool is_space(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\r';
}

int gq_tp_tokenize(pctx *p, const char *s, size_t n)
{
    p->nt = 0;
    size_t i = 0;
    while (i < n) {
        unsigned char c = (unsigned char)s[i];
        if (is_space(c)) {
            i++;
            continue;
        }
        if (c == '#')
            break;
        if (p->nt == MAX_TOK)
            return gq_tp_err(p, (int)i + 1, "too many fields on one line (at most %d)", MAX_TOK);
        tok *t = &p->t[p->nt];
        t->col = (int)i + 1;
        t->quoted = false;
        size_t len = 0;
        if (c == '"') {
            t->quoted = true;
            i++;
            for (;;) {
                if (i >= n)
                    return gq_tp_err(p, t->col, "unterminated string: add the closing '\"'");
                c = (unsigned char)s[i];
                if (c == '"') {
                    i++;
                    break;
                }
                if (c == '\\' && i + 1 < n && (s[i + 1] == '"' || s[i + 1] == '\\')) {
                    c = (unsigned char)s[i + 1];
                    i += 2;
                } else {
                    i++;
                }
                if (len >= TOK_MAX - 1)
                    return gq_tp_err(p, t->col, "string longer than %d characters", TOK_MAX - 1);
                t->s[len++] = (char)c;
            }
            if (i < n && !is_space((unsigned char)s[i]) && s[i] != '#')
                return gq_tp_err(p, (int)i + 1, "expected a space after the closing '\"'");
        } else {
            while (i < n && !is_space((unsigned char)s[i]) && s[i] != '#') {
                if (s[i] == '"')
                    return gq_tp_err(p, (int)i + 1, "unexpected '\"' inside a word");
                if (len >= TOK_MAX - 1)
                    return gq_tp_err(p, t->col, "word longer than %d characters", TOK_MAX - 1);
                t->s[len++] = s[i++];
            }
        }
        t->s[len] = 0;
        p->nt++;
    }
    return GQ_OK;
}

/* ---- values ---------------------------------------------------------------- */

static int unit_error(pctx *p, const tok *num, const tok *next, uclass want, const char *attr)
{
    if (next && !next->quoted) {
        const unit_def *u = find_unit(next->s);
        if (u)
            return gq_tp_err(p, next->col, "wrong unit '%s' for %s ('%s' is %s); use %s", next->s, attr,
                             next->s, class_name(u->cls), class_units(want));
        for (size_t i = 0; i < sizeof unit_hints / sizeof unit_hints[0]; i++)
            if (!strcmp(unit_hints[i].name, next->s))
                return gq_tp_err(p, next->col, "unit '%s' for %s: %s", next->s, attr, unit_hints[i].hint);
    }
    return gq_tp_err(p, num->col, "missing unit after '%s' for %s: %s needs %s", num->s, attr,
                     class_name(want), class_units(want));
}

/* A token that is a number glued to a unit ("25GB/s"). */
static int glued_error(pctx *p, const tok *t, const char *attr)
{
    size_t n = number_prefix(t->s);
    if (n && (find_unit(t->s + n) || (t->s[n] == 'x' && n == 0)))
        return gq_tp_err(p, t->col, "write a space between the number and its unit: '%.*s %s'", (int)n, t->s,
                         t->s + n);
    return gq_tp_err(p, t->col, "'%s' is not a number (for %s)", t->s, attr);
}
/* Parse one value of type a->t starting at token *ti; advances *ti. */
int gq_tp_value(pctx *p, vtype type, double lo, double hi, const char *attr, int *ti, val *v)
{
    if (*ti >= p->nt)
        return gq_tp_err(p, p->t[p->nt - 1].col, "'%s' needs a value", attr);
    const tok *t = &p->t[*ti];
    v->set = true;
    v->col = t->col;
    switch (type) {
    case VT_STR:
        snprintf(v->str, sizeof v->str, "%s", t->s);
        if (!t->quoted && gq_tp_is_keyword(t->s))
            return gq_tp_err(p, t->col, "'%s' needs a value before '%s'", attr, t->s);
        (*ti)++;
        return GQ_OK;
    case VT_WORD:
        if (t->quoted)
            return gq_tp_err(p, t->col, "'%s' takes a bare word, not a quoted string", attr);
        snprintf(v->str, sizeof v->str, "%s", t->s);
        (*ti)++;
        return GQ_OK;
    case VT_NAME:
        if (t->quoted || !valid_name(t->s))
            return gq_tp_err(
                p, t->col,
                "'%s' is not a valid node name: use letters, digits, '_', '-' and '.', starting with a "
                "letter, at most %d characters",
                t->s, GQ_SIM_NAME_MAX - 1);
        snprintf(v->str, sizeof v->str, "%s", t->s);
        (*ti)++;
        return GQ_OK;
    case VT_CC: {
        /* digits only: sscanf's %u takes a sign, and "-1.0" read as 4294967295 */
        const char *s = t->s;
        size_t a = strspn(s, "0123456789"), b = s[a] == '.' ? strspn(s + a + 1, "0123456789") : 0;
        if (t->quoted || a < 1 || a > 2 || b < 1 || b > 2 || s[a + 1 + b])
            return gq_tp_err(p, t->col, "compute capability '%s' should look like 8.9", t->s);
        v->num = atoi(s);
        v->num2 = atoi(s + a + 1);
        (*ti)++;
        return GQ_OK;
    }
    case VT_INT: {
        long x;
        if (t->quoted || !lex_int(t->s, &x))
            return gq_tp_err(p, t->col, "'%s' needs a whole number, not '%s'", attr, t->s);
        if (x < lo || x > hi)
            return gq_tp_err(p, t->col, "'%s' is %ld; it must be between %.0f and %.0f", attr, x, lo, hi);
        v->num = (double)x;
        (*ti)++;
        return GQ_OK;
    }
    case VT_WIDTH: {
        long x;
        const char *s = t->s[0] == 'x' ? t->s + 1 : t->s;
        if (t->quoted || !lex_int(s, &x) || s[0] == '+' || s[0] == '-' ||
            !(x == 1 || x == 2 || x == 4 || x == 8 || x == 12 || x == 16 || x == 32))
            return gq_tp_err(p, t->col, "'%s' is not a PCIe width; use x1, x2, x4, x8, x12, x16 or x32",
                             t->s);
        v->num = (double)x;
        (*ti)++;
        return GQ_OK;
    }
    case VT_NUM:
    case VT_PAIR: {
        for (int k = 0; k < (type == VT_PAIR ? 2 : 1); k++) {
            if (*ti >= p->nt)
                return gq_tp_err(p, p->t[p->nt - 1].col, "'%s' needs two numbers", attr);
            t = &p->t[*ti];
            double x;
            if (t->quoted || !lex_number(t->s, &x))
                return gq_tp_err(p, t->col, "'%s' needs a number, not '%s'", attr, t->s);
            if (x <= lo || x > hi)
                return gq_tp_err(p, t->col, "'%s' must be positive and at most %g, not %s", attr, hi, t->s);
            if (k == 0)
                v->num = x;
            else
                v->num2 = x;
            (*ti)++;
        }
        return GQ_OK;
    }
    default: break;
    }
    /* A number with a unit. */
    uclass want = vtype_class(type);
    double x;
    if (t->quoted || !lex_number(t->s, &x))
        return glued_error(p, t, attr);
    const tok *ut = *ti + 1 < p->nt ? &p->t[*ti + 1] : NULL;
    const unit_def *u = (ut && !ut->quoted) ? find_unit(ut->s) : NULL;
    if (!u || u->cls != want)
        return unit_error(p, t, ut, want, attr);
    double si = x * u->scale;
    switch (type) {
    case VT_BW:
        if (x <= 0)
            return gq_tp_err(p, t->col, "'%s' is a capacity and must be positive, not %s %s", attr, t->s,
                             ut->s);
        if (si > 1e15)
            return gq_tp_err(p, t->col, "'%s' of %s %s is beyond any real link (at most 1000 TB/s)", attr,
                             t->s, ut->s);
        break;
    case VT_TIME:
        if (x < 0)
            return gq_tp_err(p, t->col, "'%s' is a time and cannot be negative, not %s %s", attr, t->s,
                             ut->s);
        if (si > 10.0)
            return gq_tp_err(p, t->col, "'%s' of %s %s is too long (at most 10 s)", attr, t->s, ut->s);
        break;
    case VT_SIZE:
        if (x <= 0)
            return gq_tp_err(p, t->col, "'%s' is a size and must be positive, not %s %s", attr, t->s, ut->s);
        if (si > 1125899906842624.0)
            return gq_tp_err(p, t->col, "'%s' of %s %s is too large (at most 1024 TiB)", attr, t->s, ut->s);
        break;
    case VT_GTS:
        if (!(x == 2.5 || x == 5 || x == 8 || x == 16 || x == 32 || x == 64))
            return gq_tp_err(p, t->col,
                             "'%s' of %s GT/s is no PCIe generation; use 2.5, 5, 8, 16, 32 or 64 GT/s", attr,
                             t->s);
        break;
    case VT_WATT:
    case VT_MHZ:
        if (x <= 0 || si > 1e7)
            return gq_tp_err(p, t->col, "'%s' must be positive and plausible, not %s %s", attr, t->s, ut->s);
        break;
    case VT_PCT:
        if (x < lo || x > hi)
            return gq_tp_err(p, t->col, "'%s' is %s %%; it must be between %g %% and %g %%", attr, t->s, lo,
                             hi);
        break;
    default: break;
    }
    v->num = si;
    *ti += 2;
    return GQ_OK;
}
