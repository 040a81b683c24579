/* mutate: list and apply source mutants of one C file (bench/mutation; not part of the product).
 *
 *   mutate list FILE [FUNC,FUNC,...]      every mutation site, one a line:
 *                                          FILE:LINE:COL:KIND<TAB>original<TAB>replacement
 *   mutate apply FILE LINE:COL:KIND OUT   write FILE with that one mutant applied to OUT
 *   mutate sample SEED MAX                read site lines on stdin, print MAX of them, chosen
 *                                          by SEED (same seed, same input: same sample)
 *
 * A scanner (not a parser) walks the file, skipping comments, string and character
 * literals and preprocessor lines (with their continuations). KINDs:
 *   aor:OP   arithmetic operator replaced by OP (+ - * / %, and += -= *= /=, ++ --)
 *   ror:OP   relational operator replaced by OP (< <= > >= == !=)
 *   lor:OP   && <-> ||
 *   neg      the condition of an if/while is negated: if (c) -> if (!(c))
 *   int+1 / int-1   an integer literal off by one
 *   flt*2 / flt/2   a floating literal doubled / halved (0.0 -> 1.0 / -1.0)
 *   bool     true <-> false
 *   del      an expression statement (assignment, call, ++/--, break, continue) dropped
 * With a FUNC list only sites inside the bodies of those functions are listed. */
#include <ctype.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum { T_ID, T_NUM, T_OP, T_STR } tkind;
typedef struct {
    tkind k;
    size_t off, len;
    int line, col;
    int pdepth;       /* paren/bracket depth at the token */
    int bdepth;       /* brace depth at the token */
    const char *func; /* enclosing function (NULL at file scope) */
} tok;

static char *src;
static size_t srclen;
static tok *T;
static int nt, capt;

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    if (!b || fread(b, 1, (size_t)n, f) != (size_t)n) {
        fclose(f);
        free(b);
        return NULL;
    }
    b[n] = 0;
    fclose(f);
    *len = (size_t)n;
    return b;
}

static void push(tkind k, size_t off, size_t len, int line, int col)
{
    if (nt == capt) {
        capt = capt ? capt * 2 : 4096;
        T = realloc(T, sizeof *T * (size_t)capt);
        if (!T)
            exit(2);
    }
    T[nt++] = (tok){k, off, len, line, col, 0, 0, NULL};
}

static const char *ops3[] = {"<<=", ">>=", "...", NULL};
static const char *ops2[] = {"->", "++", "--", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||",
                             "+=", "-=", "*=", "/=", "%=", "&=", "^=", "|=", "##", NULL};

static void lex(void)
{
    size_t i = 0;
    int line = 1;
    size_t bol = 0;
    bool line_start = true;
    while (i < srclen) {
        char c = src[i];
        if (c == '\n') {
            line++;
            bol = ++i;
            line_start = true;
            continue;
        }
        if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
            i++;
            continue;
        }
        if (c == '#' && line_start) { /* preprocessor line, with continuations */
            while (i < srclen && src[i] != '\n') {
                if (src[i] == '\\' && i + 1 < srclen && src[i + 1] == '\n') {
                    line++;
                    i += 2;
                    bol = i;
                    continue;
                }
                if (src[i] == '/' && i + 1 < srclen && src[i + 1] == '*') { /* comment inside */
                    i += 2;
                    while (i + 1 < srclen && !(src[i] == '*' && src[i + 1] == '/')) {
                        if (src[i] == '\n') {
                            line++;
                            bol = i + 1;
                        }
                        i++;
                    }
                    i += 2;
                    continue;
                }
                i++;
            }
            continue;
        }
        line_start = false;
        if (c == '/' && i + 1 < srclen && src[i + 1] == '/') {
            while (i < srclen && src[i] != '\n')
                i++;
            continue;
        }
        if (c == '/' && i + 1 < srclen && src[i + 1] == '*') {
            i += 2;
            while (i + 1 < srclen && !(src[i] == '*' && src[i + 1] == '/')) {
                if (src[i] == '\n') {
                    line++;
                    bol = i + 1;
                }
                i++;
            }
            i += 2;
            continue;
        }
        int col = (int)(i - bol) + 1;
        if (c == '"' || c == '\'') {
            size_t s = i++;
            while (i < srclen && src[i] != c) {
                if (src[i] == '\\')
                    i++;
                else if (src[i] == '\n') {
                    line++;
                    bol = i + 1;
                }
                i++;
            }
            i++;
            push(T_STR, s, i - s, line, col);
            continue;
        }
        if (isalpha((unsigned char)c) || c == '_') {
            size_t s = i;
            while (i < srclen && (isalnum((unsigned char)src[i]) || src[i] == '_'))
                i++;
            /* string prefixes: u8"..", L"..": keep them one string token */
            if (i < srclen && (src[i] == '"' || src[i] == '\'') && i - s <= 2) {
                char q = src[i++];
                while (i < srclen && src[i] != q) {
                    if (src[i] == '\\')
                        i++;
                    i++;
                }
                i++;
                push(T_STR, s, i - s, line, col);
                continue;
            }
            push(T_ID, s, i - s, line, col);
            continue;
        }
        if (isdigit((unsigned char)c) || (c == '.' && i + 1 < srclen && isdigit((unsigned char)src[i + 1]))) {
            size_t s = i;
            while (i < srclen) {
                char d = src[i];
                if (isalnum((unsigned char)d) || d == '.' || d == '_')
                    i++;
                else if ((d == '+' || d == '-') && (src[i - 1] == 'e' || src[i - 1] == 'E') &&
                         !(src[s] == '0' && (src[s + 1] == 'x' || src[s + 1] == 'X')))
                    i++;
                else
                    break;
            }
            push(T_NUM, s, i - s, line, col);
            continue;
        }
        size_t len = 1;
        for (int k = 0; ops3[k]; k++)
            if (!strncmp(src + i, ops3[k], 3))
                len = 3;
        if (len == 1)
            for (int k = 0; ops2[k]; k++)
                if (!strncmp(src + i, ops2[k], 2))
                    len = 2;
        push(T_OP, i, len, line, col);
        i += len;
    }
}

static bool is(const tok *t, const char *s)
{
    return t->len == strlen(s) && !strncmp(src + t->off, s, t->len);
}

static char *tokstr(const tok *t)
{
    char *s = malloc(t->len + 1);
    memcpy(s, src + t->off, t->len);
    s[t->len] = 0;
    return s;
}

/* Depths and enclosing functions. A function body is a '{' at brace depth 0
 * whose previous significant token is ')' (or an attribute's ')'); its name is
 * the last identifier at file scope followed by '(' since the last ';' or '}'. */
static void annotate(void)
{
    int pd = 0, bd = 0;
    const char *func = NULL;
    const char *cand = NULL;
    for (int i = 0; i < nt; i++) {
        tok *t = &T[i];
        if (t->k == T_OP && (is(t, ")") || is(t, "]")))
            pd--;
        if (t->k == T_OP && is(t, "}")) {
            bd--;
            if (bd == 0) {
                func = NULL;
                cand = NULL;
            }
        }
        t->pdepth = pd;
        t->bdepth = bd;
        t->func = func;
        if (t->k == T_OP && (is(t, "(") || is(t, "[")))
            pd++;
        if (bd == 0 && pd == 1 && t->k == T_OP && is(t, "(") && i > 0 && T[i - 1].k == T_ID && !cand)
            cand = tokstr(&T[i - 1]);
        if (bd == 0 && t->k == T_OP && is(t, ";"))
            cand = NULL;
        if (t->k == T_OP && is(t, "{")) {
            if (bd == 0 && i > 0 && is(&T[i - 1], ")") && cand)
                func = cand;
            bd++;
        }
    }
}

static bool wanted(const tok *t, char **funcs, int nf)
{
    if (t->bdepth == 0 || !t->func)
        return false; /* file scope: tables and declarations are not mutated */
    if (nf == 0)
        return true;
    for (int k = 0; k < nf; k++)
        if (!strcmp(funcs[k], t->func))
            return true;
    return false;
}

/* A token after which a '+'/'-'/'*' is binary (its left side is an operand). */
static bool operand_end(const tok *t)
{
    if (t->k == T_ID) {
        static const char *kw[] = {"return", "case", "sizeof", "if", "while", "else", "do", NULL};
        for (int k = 0; kw[k]; k++)
            if (is(t, kw[k]))
                return false;
        return true;
    }
    return t->k == T_NUM || t->k == T_STR || is(t, ")") || is(t, "]");
}

static const char *path;

static void site(const tok *t, const char *kind, const char *repl)
{
    char *o = tokstr(t);
    printf("%s:%d:%d:%s\t%s\t%s\n", path, t->line, t->col, kind, o, repl);
    free(o);
}

static bool is_float_lit(const tok *t)
{
    const char *s = src + t->off;
    if (t->len > 1 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
        return false;
    for (size_t k = 0; k < t->len; k++)
        if (s[k] == '.' || s[k] == 'e' || s[k] == 'E')
            return true;
    return false;
}

/* Index of the token closing the paren opened at i. */
static int match_paren(int i)
{
    int d = 0;
    for (int j = i; j < nt; j++) {
        if (is(&T[j], "("))
            d++;
        else if (is(&T[j], ")") && --d == 0)
            return j;
    }
    return -1;
}

/* Is the statement starting at token i an expression statement that can be dropped?
 * Returns the index of its ';' or -1. */
static int droppable(int i)
{
    tok *t = &T[i];
    if (t->pdepth != 0)
        return -1;
    bool ok = false;
    if (t->k == T_ID && (is(t, "break") || is(t, "continue")))
        ok = true;
    else if (t->k == T_OP && (is(t, "++") || is(t, "--") || is(t, "*")))
        ok = true;
    else if (t->k == T_ID && i + 1 < nt) {
        static const char *kw[] = {"return",   "if",       "else",   "for",   "while",  "do",      "switch",
                                   "case",     "default",  "goto",   "const", "static", "struct",  "union",
                                   "enum",     "unsigned", "signed", "int",   "char",   "double",  "float",
                                   "long",     "short",    "bool",   "void",  "size_t", "typedef", "volatile",
                                   "register", "extern",   "sizeof", NULL};
        for (int k = 0; kw[k]; k++)
            if (is(t, kw[k]))
                return -1;
        const tok *n = &T[i + 1];
        /* a declaration looks like TYPE NAME or TYPE *NAME; a label like NAME: */
        if (n->k == T_ID || is(n, ":"))
            return -1;
        if (is(n, "*") && i + 2 < nt && T[i + 2].k == T_ID && i + 3 < nt &&
            (is(&T[i + 3], "=") || is(&T[i + 3], ";") || is(&T[i + 3], ",") || is(&T[i + 3], "[")))
            return -1;
        ok = n->k == T_OP;
    }
    if (!ok)
        return -1;
    int d = 0;
    for (int j = i; j < nt; j++) {
        if (is(&T[j], "(") || is(&T[j], "[") || is(&T[j], "{"))
            d++;
        else if (is(&T[j], ")") || is(&T[j], "]") || is(&T[j], "}")) {
            if (--d < 0)
                return -1;
        } else if (d == 0 && is(&T[j], ";"))
            return j;
    }
    return -1;
}

static void list_sites(char **funcs, int nf)
{
    for (int i = 0; i < nt; i++) {
        tok *t = &T[i];
        if (!wanted(t, funcs, nf))
            continue;
        const tok *p = i > 0 ? &T[i - 1] : NULL;
        if (t->k == T_OP) {
            bool bin = p && operand_end(p);
            if (bin && is(t, "+"))
                site(t, "aor:-", "-");
            else if (bin && is(t, "-"))
                site(t, "aor:+", "+");
            else if (bin && is(t, "*") && p->k != T_ID) /* NAME * x may be a declaration */
                site(t, "aor:/", "/");
            else if (bin && is(t, "*") && p->k == T_ID && i + 1 < nt && T[i + 1].k != T_ID)
                site(t, "aor:/", "/");
            else if (bin && is(t, "/"))
                site(t, "aor:*", "*");
            else if (bin && is(t, "%"))
                site(t, "aor:*", "*");
            else if (is(t, "+="))
                site(t, "aor:-=", "-=");
            else if (is(t, "-="))
                site(t, "aor:+=", "+=");
            else if (is(t, "*="))
                site(t, "aor:/=", "/=");
            else if (is(t, "/="))
                site(t, "aor:*=", "*=");
            else if (is(t, "++"))
                site(t, "aor:--", "--");
            else if (is(t, "--"))
                site(t, "aor:++", "++");
            else if (is(t, "<")) {
                site(t, "ror:<=", "<=");
                site(t, "ror:>", ">");
            } else if (is(t, "<=")) {
                site(t, "ror:<", "<");
                site(t, "ror:>", ">");
            } else if (is(t, ">")) {
                site(t, "ror:>=", ">=");
                site(t, "ror:<", "<");
            } else if (is(t, ">=")) {
                site(t, "ror:>", ">");
                site(t, "ror:<", "<");
            } else if (is(t, "=="))
                site(t, "ror:!=", "!=");
            else if (is(t, "!="))
                site(t, "ror:==", "==");
            else if (is(t, "&&"))
                site(t, "lor:||", "||");
            else if (is(t, "||"))
                site(t, "lor:&&", "&&");
        } else if (t->k == T_NUM) {
            if (is_float_lit(t)) {
                site(t, "flt*2", "x2");
                site(t, "flt/2", "/2");
            } else {
                site(t, "int+1", "+1");
                if (!(t->len == 1 && src[t->off] == '0'))
                    site(t, "int-1", "-1");
            }
        } else if (t->k == T_ID) {
            if (is(t, "true"))
                site(t, "bool", "false");
            else if (is(t, "false"))
                site(t, "bool", "true");
            else if ((is(t, "if") || is(t, "while")) && i + 1 < nt && is(&T[i + 1], "("))
                site(t, "neg", "!(...)");
        }
        /* statement starts: after ';' '{' '}' or ')' closing if/for/while, or 'else' */
        if (p && (is(p, ";") || is(p, "{") || is(p, "}") || is(p, "else") ||
                  (is(p, ")") && t->pdepth == 0 && p->pdepth == 0))) {
            if (is(p, ")")) {
                /* only when the ')' closes if/for/while (),  not a cast or a call */
                int d = 0, j = i - 1;
                for (; j >= 0; j--) {
                    if (is(&T[j], ")"))
                        d++;
                    else if (is(&T[j], "(") && --d == 0)
                        break;
                }
                if (!(j > 0 && (is(&T[j - 1], "if") || is(&T[j - 1], "for") || is(&T[j - 1], "while"))))
                    continue;
            }
            if (is(p, ";") && t->pdepth != 0)
                continue;
            if (droppable(i) >= 0)
                site(t, "del", ";");
        }
    }
}

/* The replacement text of a literal mutant. */
static void lit_repl(const tok *t, const char *kind, char *out, size_t n)
{
    char *s = tokstr(t);
    char suffix[8] = "";
    size_t L = strlen(s);
    /* keep suffixes (u, l, f, ull...) */
    size_t e = L;
    const char *sfx = is_float_lit(t) ? "fFlL" : "uUlL";
    while (e > 0 && strchr(sfx, s[e - 1]))
        e--;
    snprintf(suffix, sizeof suffix, "%s", s + e);
    s[e] = 0;
    if (!strcmp(kind, "int+1") || !strcmp(kind, "int-1")) {
        unsigned long long v = strtoull(s, NULL, 0);
        v = kind[3] == '+' ? v + 1 : v - 1;
        snprintf(out, n, "%llu%s", v, suffix);
    } else {
        double v = strtod(s, NULL);
        if (v == 0)
            v = kind[3] == '*' ? 1.0 : -1.0;
        else
            v = kind[3] == '*' ? v * 2 : v / 2;
        snprintf(out, n, "%.17g", v);
        if (!strchr(out, '.') && !strchr(out, 'e') && !strchr(out, 'n') && !strchr(out, 'i'))
            strncat(out, ".0", n - strlen(out) - 1);
        strncat(out, suffix, n - strlen(out) - 1);
    }
    free(s);
}

static int apply(const char *spec, const char *out)
{
    int line, col;
    char kind[32];
    if (sscanf(spec, "%d:%d:%31s", &line, &col, kind) != 3) {
        fprintf(stderr, "mutate: bad spec '%s' (LINE:COL:KIND)\n", spec);
        return 2;
    }
    int i;
    for (i = 0; i < nt; i++)
        if (T[i].line == line && T[i].col == col)
            break;
    if (i == nt) {
        fprintf(stderr, "mutate: no token at %d:%d\n", line, col);
        return 2;
    }
    tok *t = &T[i];
    size_t a = t->off, b = t->off + t->len; /* replaced range */
    char repl[128];
    const char *ins2 = NULL; /* second edit (neg): text inserted at ins2_at */
    size_t ins2_at = 0;
    if (!strncmp(kind, "aor:", 4) || !strncmp(kind, "ror:", 4) || !strncmp(kind, "lor:", 4))
        snprintf(repl, sizeof repl, "%s", kind + 4);
    else if (!strncmp(kind, "int", 3) || !strncmp(kind, "flt", 3))
        lit_repl(t, kind, repl, sizeof repl);
    else if (!strcmp(kind, "bool"))
        snprintf(repl, sizeof repl, "%s", is(t, "true") ? "false" : "true");
    else if (!strcmp(kind, "neg")) {
        int close = match_paren(i + 1);
        if (close < 0)
            return 2;
        a = b = T[i + 1].off + 1;
        snprintf(repl, sizeof repl, "!(");
        ins2 = ")";
        ins2_at = T[close].off;
    } else if (!strcmp(kind, "del")) {
        int semi = droppable(i);
        if (semi < 0)
            return 2;
        b = T[semi].off + 1;
        snprintf(repl, sizeof repl, ";");
    } else {
        fprintf(stderr, "mutate: unknown kind '%s'\n", kind);
        return 2;
    }
    FILE *f = fopen(out, "wb");
    if (!f)
        return 2;
    fwrite(src, 1, a, f);
    fputs(repl, f);
    if (ins2) {
        fwrite(src + b, 1, ins2_at - b, f);
        fputs(ins2, f);
        fwrite(src + ins2_at, 1, srclen - ins2_at, f);
    } else {
        /* a dropped statement keeps its newlines, so later line numbers stay put */
        for (size_t k = a; k < b; k++)
            if (src[k] == '\n')
                fputc('\n', f);
        fwrite(src + b, 1, srclen - b, f);
    }
    return fclose(f) ? 2 : 0;
}

static uint64_t rng;
static uint64_t next(void)
{
    uint64_t z = (rng += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static int sample(const char *seed, const char *max)
{
    rng = strtoull(seed, NULL, 10);
    int m = atoi(max);
    char **lines = NULL;
    int n = 0, cap = 0;
    char buf[4096];
    while (fgets(buf, sizeof buf, stdin)) {
        if (n == cap) {
            cap = cap ? cap * 2 : 256;
            lines = realloc(lines, sizeof *lines * (size_t)cap);
        }
        lines[n++] = strdup(buf);
    }
    /* partial Fisher-Yates: the first m of a random permutation */
    for (int i = 0; i < n && i < m; i++) {
        int j = i + (int)(next() % (uint64_t)(n - i));
        char *x = lines[i];
        lines[i] = lines[j];
        lines[j] = x;
        fputs(lines[i], stdout);
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 4 && !strcmp(argv[1], "sample"))
        return sample(argv[2], argv[3]);
    if (argc < 3 || (strcmp(argv[1], "list") && strcmp(argv[1], "apply"))) {
        fprintf(stderr, "usage: mutate list FILE [FUNC,...] | mutate apply FILE LINE:COL:KIND OUT | "
                        "mutate sample SEED MAX\n");
        return 2;
    }
    path = argv[2];
    src = read_file(path, &srclen);
    if (!src) {
        fprintf(stderr, "mutate: cannot read %s\n", path);
        return 2;
    }
    lex();
    annotate();
    if (!strcmp(argv[1], "list")) {
        char *funcs[256];
        int nf = 0;
        if (argc > 3 && argv[3][0]) {
            char *s = strdup(argv[3]);
            for (char *p = strtok(s, ","); p && nf < 256; p = strtok(NULL, ","))
                funcs[nf++] = p;
        }
        list_sites(funcs, nf);
        return 0;
    }
    if (argc != 5) {
        fprintf(stderr, "usage: mutate apply FILE LINE:COL:KIND OUT\n");
        return 2;
    }
    return apply(argv[3], argv[4]);
}
