/* Plain ASCII for a terminal that cannot show UTF-8 (ascii.h). */
#include "core/ascii.h"

#include <langinfo.h>
#include <locale.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int forced = -1, known = -1;

void gq_ascii_force(int on)
{
    forced = on;
    known = -1;
}

bool gq_ascii_locale(void)
{
    if (forced >= 0)
        return forced;
    if (known < 0) {
        locale_t l = newlocale(LC_CTYPE_MASK, "", (locale_t)0);
        const char *cs = l ? nl_langinfo_l(CODESET, l) : "ANSI_X3.4-1968";
        known = !(cs && (!strcasecmp(cs, "UTF-8") || !strcasecmp(cs, "utf8")));
        if (l)
            freelocale(l);
    }
    return known;
}

/* The symbols gpuqual's own text uses, and a few neighbours. */
static const struct {
    const char *utf8, *ascii;
} map[] = {
    {"→", "->"},  {"←", "<-"}, {"↔", "<->"}, {"⇄", "<->"}, {"°", "deg"}, {"µ", "u"},  {"μ", "u"},
    {"×", "x"},   {"–", "-"},  {"—", "-"},   {"−", "-"},   {"…", "..."}, {"·", "-"},  {"§", "S"},
    {"½", "1/2"}, {"≈", "~"},  {"≤", "<="},  {"≥", ">="},  {"±", "+/-"}, {"‘", "'"},  {"’", "'"},
    {"“", "\""},  {"”", "\""}, {"█", "#"},   {"░", "."},   {"▏", "|"},   {"✓", "ok"}, {"✗", "x"},
};

const char *gq_ascii_of(const char *s, size_t n, size_t *used)
{
    unsigned char c = (unsigned char)s[0];
    size_t len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
    if (len > n) {
        *used = 0;
        return "";
    }
    *used = len;
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (strlen(map[i].utf8) == len && !memcmp(map[i].utf8, s, len))
            return map[i].ascii;
    return "?";
}

size_t gq_ascii_text(const char *s, size_t n, char *out, size_t cap)
{
    size_t u = 0;
    for (size_t i = 0; i < n;) {
        const char *r;
        size_t used = 1;
        char one[2] = {s[i], 0};
        if ((unsigned char)s[i] < 0x80)
            r = one;
        else if (!*(r = gq_ascii_of(s + i, n - i, &used))) {
            r = "?";
            used = n - i;
        }
        for (const char *p = r; *p; p++, u++)
            if (u + 1 < cap)
                out[u] = *p;
        i += used;
    }
    if (cap)
        out[u < cap ? u : cap - 1] = 0;
    return u;
}
