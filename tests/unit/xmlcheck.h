/* A small XML well-formedness checker for tests of generated SVG/HTML
 * fragments: balanced tags, quoted attributes, no bare '&' or '<'. Not a full
 * XML parser; enough to catch the mistakes a generator makes. Header-only,
 * shared by tests/unit/test_svg.c and tests/sim/test_card_*.c. */
#ifndef GQ_TEST_XMLCHECK_H
#define GQ_TEST_XMLCHECK_H

#include <ctype.h>
#include <stdio.h>
#include <string.h>

/* Returns 0 when s is well formed; otherwise 1 and a message in why. */
static __attribute__((unused)) int xml_check(const char *s, char *why, size_t n)
{
    char stack[256][64];
    int depth = 0, roots = 0;
    const char *p = s;
    while (*p) {
        if (*p == '&') {
            const char *e = strchr(p, ';');
            static const char *const ents[] = {"&amp;", "&lt;", "&gt;", "&quot;", "&#39;", "&apos;", NULL};
            int ok = 0;
            for (int i = 0; ents[i]; i++)
                if (!strncmp(p, ents[i], strlen(ents[i])))
                    ok = 1;
            if (!ok && p[1] == '#' && e && e - p < 10)
                ok = 1;
            if (!ok) {
                snprintf(why, n, "bare '&' at offset %ld", (long)(p - s));
                return 1;
            }
            p++;
            continue;
        }
        if (*p == '>') {
            snprintf(why, n, "bare '>' at offset %ld", (long)(p - s));
            return 1;
        }
        if (*p != '<') {
            p++;
            continue;
        }
        if (!strncmp(p, "<!--", 4)) {
            const char *e = strstr(p, "-->");
            if (!e) {
                snprintf(why, n, "unterminated comment");
                return 1;
            }
            p = e + 3;
            continue;
        }
        if (p[1] == '?' || p[1] == '!') {
            const char *e = strchr(p, '>');
            if (!e) {
                snprintf(why, n, "unterminated declaration");
                return 1;
            }
            p = e + 1;
            continue;
        }
        int closing = p[1] == '/';
        const char *q = p + 1 + closing;
        char name[64];
        size_t l = 0;
        while (*q && (isalnum((unsigned char)*q) || *q == '-' || *q == ':' || *q == '_') &&
               l < sizeof name - 1)
            name[l++] = *q++;
        name[l] = 0;
        if (!l) {
            snprintf(why, n, "bad tag at offset %ld", (long)(p - s));
            return 1;
        }
        /* attributes */
        int selfclose = 0;
        while (*q && *q != '>') {
            if (*q == '/' && q[1] == '>') {
                selfclose = 1;
                q++;
                break;
            }
            if (isspace((unsigned char)*q)) {
                q++;
                continue;
            }
            if (closing) {
                snprintf(why, n, "junk in closing tag </%s>", name);
                return 1;
            }
            while (*q && (isalnum((unsigned char)*q) || *q == '-' || *q == ':' || *q == '_'))
                q++;
            if (*q != '=') {
                snprintf(why, n, "attribute without value in <%s>", name);
                return 1;
            }
            q++;
            if (*q != '"' && *q != '\'') {
                snprintf(why, n, "unquoted attribute in <%s>", name);
                return 1;
            }
            char quote = *q++;
            while (*q && *q != quote) {
                if (*q == '<') {
                    snprintf(why, n, "'<' inside an attribute of <%s>", name);
                    return 1;
                }
                q++;
            }
            if (!*q) {
                snprintf(why, n, "unterminated attribute in <%s>", name);
                return 1;
            }
            q++;
        }
        if (*q != '>') {
            snprintf(why, n, "unterminated tag <%s>", name);
            return 1;
        }
        p = q + 1;
        if (closing) {
            if (!depth || strcmp(stack[depth - 1], name)) {
                snprintf(why, n, "</%s> closes <%s>", name, depth ? stack[depth - 1] : "(nothing)");
                return 1;
            }
            depth--;
        } else if (!selfclose) {
            if (depth == 0)
                roots++;
            if (depth >= 256) {
                snprintf(why, n, "too deep");
                return 1;
            }
            snprintf(stack[depth++], sizeof stack[0], "%s", name);
        } else if (depth == 0) {
            roots++;
        }
    }
    if (depth) {
        snprintf(why, n, "<%s> is never closed", stack[depth - 1]);
        return 1;
    }
    (void)roots;
    return 0;
}

/* Occurrences of needle in s. */
static __attribute__((unused)) int count_of(const char *s, const char *needle)
{
    int c = 0;
    size_t l = strlen(needle);
    for (const char *p = strstr(s, needle); p; p = strstr(p + l, needle))
        c++;
    return c;
}

#endif
