/* mutate: list and apply source mutants of one C file (bench/mutation; not part of the product).
 *
 *   mutate list FILE [FUNC,FUNC,...]      every mutation site, one a line:
 *                                          FILE:LINE:COL:KIND<TAB>original<TAB>replacement
 *   mutate apply FILE LINE:COL:KIND OUT   write FILE with that one mutant applied to OUT
 *   mutate sample SEED MAX                read site lines on stdin, print MAX of them, chosen
 *                                          by SEED (same seed, same input: same sample)
 *   mutate wsample SEED MAX               the same, weighted by lines: each draw picks a file
 *                                          with a chance in proportion to its number of lines
 *                                          (files read from the current directory), then one
 *                                          of its sites not drawn yet
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
 *   del      an expression statement (assignment, call, ++/--, continue) dropped
 *   brk      a `break;` dropped (a missing break: a switch case falls through, a loop runs on)
 *   ret      a `return ...;` that is not the last statement of its function dropped (a missing
 *            return: the code after it runs)
 *   str      a string literal that is a key or a name (letters, digits, _ . : / -, no spaces,
 *            no %, at least 2 characters) with its last character changed: "gpu" -> "gpv"
 *   swap:N   arguments N and N+1 (from 0) of a call swapped
 *   mask:r   a flag dropped from a bit mask: A | B -> A (the operand after this '|')
 *   mask:l   A | B -> B (the operand before the first '|' of a chain)
 * With a FUNC list only sites inside the bodies of those functions are listed. Code the
 * build leaves out is never listed: the branches of #ifdef M / #if defined(M) / #ifndef M
 * that are not compiled when M is undefined, for each M in GQ_MUT_UNDEF (environment,
 * space-separated; default "GQ_HAVE_CUDA GQ_HAVE_MPI": the mutation build has neither). */
#include <ctype.h>
#include <stdarg.h>
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

static bool live_code(void);

static void push(tkind k, size_t off, size_t len, int line, int col)
{
    if (!live_code())
        return; /* a branch the build leaves out */
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

/* Conditional compilation: a stack of #if groups, each in one state; code is
 * listed only while no group is in a dead branch. Only #ifdef M, #ifndef M and
 * #if [!]defined(M) (alone) on a macro of undef_list decide; any other #if is
 * taken as compiled. */
enum { C_LIVE, C_DEAD_THEN_LIVE, C_LIVE_THEN_DEAD, C_DEAD };
static int cdepth, cstate[64];
static char undef_list[512] = " GQ_HAVE_CUDA GQ_HAVE_MPI ";

static bool undefined_macro(const char *name, size_t n)
{
    char w[130];
    if (n + 3 > sizeof w)
        return false;
    snprintf(w, sizeof w, " %.*s ", (int)n, name);
    return strstr(undef_list, w) != NULL;
}

static bool live_code(void)
{
    for (int k = 0; k < cdepth && k < 64; k++)
        if (cstate[k] == C_DEAD_THEN_LIVE || cstate[k] == C_DEAD)
            return false;
    return true;
}

/* One directive: d is the text after '#', n its length (to the end of the line). */
static void directive(const char *d, size_t n)
{
    while (n && (*d == ' ' || *d == '\t'))
        d++, n--;
    size_t w = 0;
    while (w < n && isalpha((unsigned char)d[w]))
        w++;
    bool is_if = w == 2 && !strncmp(d, "if", 2), is_ifdef = w == 5 && !strncmp(d, "ifdef", 5),
         is_ifndef = w == 6 && !strncmp(d, "ifndef", 6);
    if (is_if || is_ifdef || is_ifndef) {
        const char *a = d + w, *end = d + n;
        bool neg = is_ifndef;
        while (a < end && (*a == ' ' || *a == '\t' || *a == '(' || *a == '!'))
            neg ^= *a++ == '!';
        bool ok = !is_if;
        if (is_if && end - a > 7 && !strncmp(a, "defined", 7)) {
            ok = true;
            a += 7;
            while (a < end && (*a == ' ' || *a == '\t' || *a == '('))
                a++;
        }
        size_t m = 0;
        while (a + m < end && (isalnum((unsigned char)a[m]) || a[m] == '_'))
            m++;
        for (const char *q = a + m; q < end && ok; q++)
            if (*q == '&' || *q == '|' || *q == '/')
                ok = *q == '/'; /* a comment may follow; an && or || makes it undecided */
        int st = C_LIVE;
        if (ok && m > 0 && undefined_macro(a, m))
            st = neg ? C_LIVE_THEN_DEAD : C_DEAD_THEN_LIVE;
        if (cdepth < 64)
            cstate[cdepth] = st;
        cdepth++;
    } else if (cdepth > 0 && cdepth <= 64 &&
               ((w == 4 && !strncmp(d, "else", 4)) || (w == 4 && !strncmp(d, "elif", 4)))) {
        int *st = &cstate[cdepth - 1];
        *st = *st == C_DEAD_THEN_LIVE ? C_LIVE : *st == C_LIVE_THEN_DEAD ? C_DEAD : *st;
    } else if (w == 5 && !strncmp(d, "endif", 5) && cdepth > 0) {
        cdepth--;
    }
}

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
            size_t d0 = i + 1;
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
            directive(src + d0, i - d0);
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

/* Is T[j] the ':' of a case or default label? */
static bool case_colon(int j)
{
    if (j < 0 || !is(&T[j], ":") || T[j].pdepth != 0)
        return false;
    for (int k = j - 1; k >= 0; k--) {
        if (is(&T[k], ";") || is(&T[k], "{") || is(&T[k], "}") || is(&T[k], "?") || is(&T[k], ":"))
            return false;
        if (is(&T[k], "case") || is(&T[k], "default"))
            return true;
    }
    return false;
}

/* A `return ...;` at i that is not the last statement of its function: the
 * index of its ';', or -1. */
static int returnable(int i)
{
    if (!is(&T[i], "return") || T[i].pdepth != 0)
        return -1;
    int d = 0;
    for (int j = i + 1; j < nt; j++) {
        if (is(&T[j], "(") || is(&T[j], "[") || is(&T[j], "{"))
            d++;
        else if (is(&T[j], ")") || is(&T[j], "]") || is(&T[j], "}")) {
            if (--d < 0)
                return -1;
        } else if (d == 0 && is(&T[j], ";")) {
            if (j + 1 < nt && is(&T[j + 1], "}") && T[j + 1].bdepth == 0)
                return -1; /* the function's last statement */
            return j;
        }
    }
    return -1;
}

/* A string literal that is a key or a name: "..." of letters, digits and
 * _ . : / - only, at least 2 of them. */
static bool key_string(const tok *t)
{
    const char *s = src + t->off;
    if (t->k != T_STR || s[0] != '"' || t->len < 4)
        return false;
    bool alpha = false;
    for (size_t k = 1; k + 1 < t->len; k++) {
        char c = s[k];
        if (!(isalnum((unsigned char)c) || c == '_' || c == '.' || c == ':' || c == '/' || c == '-'))
            return false;
        alpha |= isalpha((unsigned char)c) != 0;
    }
    return alpha;
}

/* The character that replaces c in a str mutant. */
static char str_next(char c)
{
    if (c == 'z')
        return 'a';
    if (c == 'Z')
        return 'A';
    if (c == '9')
        return '0';
    if (isalnum((unsigned char)c))
        return (char)(c + 1);
    return 'x';
}

/* The arguments of the call whose '(' is T[open]: first and last token of
 * each (at most max); returns how many, or -1 when one is empty. */
static int call_args(int open, int *first, int *last, int max)
{
    int n = 0, d = 0, start = open + 1;
    for (int j = open + 1; j < nt; j++) {
        bool op = is(&T[j], "(") || is(&T[j], "[") || is(&T[j], "{");
        bool cl = is(&T[j], ")") || is(&T[j], "]") || is(&T[j], "}");
        if (op)
            d++;
        else if (cl && d > 0)
            d--;
        else if ((cl && d == 0) || (d == 0 && is(&T[j], ","))) {
            if (j == start || n >= max)
                return cl && j == start && n == 0 ? 0 : -1;
            first[n] = start;
            last[n] = j - 1;
            n++;
            start = j + 1;
            if (cl)
                return n;
        }
    }
    return -1;
}

static bool same_text(int a0, int a1, int b0, int b1)
{
    size_t la = T[a1].off + T[a1].len - T[a0].off, lb = T[b1].off + T[b1].len - T[b0].off;
    return la == lb && !memcmp(src + T[a0].off, src + T[b0].off, la);
}

/* Tokens that end the operand of a '|' (lower or equal precedence, or a closer). */
static bool mask_stop(const tok *t)
{
    static const char *stop[] = {"|",  ",",  ";",  "?",  ":",  "||",  "&&",  "=", "|=", "&=", "^=",
                                 "+=", "-=", "*=", "/=", "%=", "<<=", ">>=", "{", "}",  NULL};
    for (int k = 0; stop[k]; k++)
        if (is(t, stop[k]))
            return true;
    return false;
}

/* The operand after the '|' at i: its last token, or -1. */
static int mask_right(int i)
{
    int d = 0, j;
    for (j = i + 1; j < nt; j++) {
        if (is(&T[j], "(") || is(&T[j], "["))
            d++;
        else if (is(&T[j], ")") || is(&T[j], "]")) {
            if (d == 0)
                break;
            d--;
        } else if (d == 0 && mask_stop(&T[j]))
            break;
    }
    return j - 1 > i ? j - 1 : -1;
}

/* The operand before the '|' at i when it is the first of its chain: its first token, or -1. */
static int mask_left(int i)
{
    int d = 0, j;
    for (j = i - 1; j >= 0; j--) {
        if (is(&T[j], ")") || is(&T[j], "]"))
            d++;
        else if (is(&T[j], "(") || is(&T[j], "[")) {
            if (d == 0)
                break;
            d--;
        } else if (d == 0 && (mask_stop(&T[j]) || is(&T[j], "return"))) {
            if (is(&T[j], "|"))
                return -1; /* not the first '|' of the chain */
            break;
        }
    }
    return j + 1 < i ? j + 1 : -1;
}

/* Calls whose first two arguments commute (or nearly always compare equal
 * both ways): swapping them is not a mutant worth a build. */
static bool symmetric(const tok *t)
{
    static const char *sym[] = {"strcmp", "strncmp", "strcasecmp", "memcmp",     "fmin", "fmax",
                                "MIN",    "MAX",     "hypot",      "json_equal", NULL};
    for (int k = 0; sym[k]; k++)
        if (is(t, sym[k]))
            return true;
    return false;
}

/* An argument worth swapping: a name, a number, or a member or element of
 * one (a, a->b, a.b, a[i], *a, &a), not a string, call or arithmetic; swaps
 * are listed only between two of the same start (two names, two numbers), so
 * that most of them compile. */
static bool simple_arg(int a, int b)
{
    for (int k = a; k <= b; k++) {
        const tok *x = &T[k];
        if (x->k == T_STR || is(x, "sizeof") || (x->k == T_ID && k < b && is(&T[k + 1], "(")))
            return false;
        if (x->k == T_OP &&
            !(is(x, ".") || is(x, "->") || is(x, "[") || is(x, "]") || is(x, "*") || is(x, "&")))
            return false;
    }
    return true;
}

static bool call_name(int i)
{
    static const char *kw[] = {"if",      "while",    "for",           "switch",         "return", "sizeof",
                               "defined", "_Alignof", "__attribute__", "_Static_assert", "assert", NULL};
    if (T[i].k != T_ID || i + 1 >= nt || !is(&T[i + 1], "("))
        return false;
    for (int k = 0; kw[k]; k++)
        if (is(&T[i], kw[k]))
            return false;
    return !(i > 0 && T[i - 1].k == T_ID && !is(&T[i - 1], "return") && !is(&T[i - 1], "else") &&
             !is(&T[i - 1], "case")); /* a declaration: TYPE NAME( */
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
            if (call_name(i)) {
                int fa[8], la[8];
                int na = call_args(i + 1, fa, la, 8);
                for (int a = 0; a + 1 < na && !symmetric(t); a++)
                    if (!same_text(fa[a], la[a], fa[a + 1], la[a + 1]) && simple_arg(fa[a], la[a]) &&
                        simple_arg(fa[a + 1], la[a + 1]) && T[fa[a]].k == T[fa[a + 1]].k) {
                        char kind[16];
                        snprintf(kind, sizeof kind, "swap:%d", a);
                        site(t, kind, "args swapped");
                    }
            }
        } else if (key_string(t)) {
            char r[8];
            snprintf(r, sizeof r, "..%c\"", str_next(src[t->off + t->len - 2]));
            site(t, "str", r);
        }
        if (t->k == T_OP && is(t, "|") && p && operand_end(p)) {
            if (mask_right(i) >= 0)
                site(t, "mask:r", "A | B -> A");
            if (mask_left(i) >= 0)
                site(t, "mask:l", "A | B -> B");
        }
        /* statement starts: after ';' '{' '}' or ')' closing if/for/while, 'else', or a case label */
        if (p && (is(p, ";") || is(p, "{") || is(p, "}") || is(p, "else") || case_colon(i - 1) ||
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
                site(t, is(t, "break") ? "brk" : "del", ";");
            else if (returnable(i) >= 0)
                site(t, "ret", ";");
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

/* Write src to f with the ranges [e[k].a, e[k].b) replaced by e[k].text
 * (sorted, not overlapping); a range whose text is NULL is dropped but keeps
 * its newlines, so later line numbers stay put. */
typedef struct {
    size_t a, b;
    const char *text;
    size_t len;
} edit;

static void emit(FILE *f, const edit *e, int ne)
{
    size_t at = 0;
    for (int k = 0; k < ne; k++) {
        fwrite(src + at, 1, e[k].a - at, f);
        if (e[k].text)
            fwrite(e[k].text, 1, e[k].len, f);
        else
            for (size_t q = e[k].a; q < e[k].b; q++)
                if (src[q] == '\n')
                    fputc('\n', f);
        at = e[k].b;
    }
    fwrite(src + at, 1, srclen - at, f);
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
    char repl[128];
    edit e[2];
    int ne = 1;
    e[0] = (edit){t->off, t->off + t->len, repl, 0};
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
        e[0] = (edit){T[i + 1].off + 1, T[i + 1].off + 1, "!(", 2};
        e[1] = (edit){T[close].off, T[close].off, ")", 1};
        ne = 2;
    } else if (!strcmp(kind, "del") || !strcmp(kind, "brk") || !strcmp(kind, "ret")) {
        int semi = kind[0] == 'r' ? returnable(i) : droppable(i);
        if (semi < 0 || (kind[0] == 'b') != is(t, "break"))
            return 2;
        e[0].b = T[semi].off + 1;
        snprintf(repl, sizeof repl, ";");
        e[0].len = 1;
        /* ';' and the dropped statement's newlines */
        size_t nl = 0;
        for (size_t q = e[0].a; q < e[0].b; q++)
            nl += src[q] == '\n';
        static char semi_nl[4096];
        if (nl + 2 > sizeof semi_nl)
            return 2;
        semi_nl[0] = ';';
        memset(semi_nl + 1, '\n', nl);
        e[0].text = semi_nl;
        e[0].len = nl + 1;
    } else if (!strcmp(kind, "str")) {
        if (!key_string(t) || t->len + 1 > sizeof repl)
            return 2;
        memcpy(repl, src + t->off, t->len);
        repl[t->len - 2] = str_next(repl[t->len - 2]);
        repl[t->len] = 0;
    } else if (!strncmp(kind, "swap:", 5)) {
        int fa[8], la[8], k = atoi(kind + 5);
        int na = call_name(i) ? call_args(i + 1, fa, la, 8) : -1;
        if (k < 0 || k + 1 >= na)
            return 2;
        size_t a0 = T[fa[k]].off, a1 = T[la[k]].off + T[la[k]].len;
        size_t b0 = T[fa[k + 1]].off, b1 = T[la[k + 1]].off + T[la[k + 1]].len;
        e[0] = (edit){a0, a1, src + b0, b1 - b0};
        e[1] = (edit){b0, b1, src + a0, a1 - a0};
        ne = 2;
    } else if (!strcmp(kind, "mask:r") || !strcmp(kind, "mask:l")) {
        if (!is(t, "|"))
            return 2;
        if (kind[5] == 'r') {
            int last = mask_right(i);
            if (last < 0)
                return 2;
            e[0] = (edit){t->off, T[last].off + T[last].len, NULL, 0};
        } else {
            int first = mask_left(i);
            if (first < 0)
                return 2;
            e[0] = (edit){T[first].off, t->off + t->len, NULL, 0};
        }
    } else {
        fprintf(stderr, "mutate: unknown kind '%s'\n", kind);
        return 2;
    }
    if (e[0].text == repl)
        e[0].len = strlen(repl);
    FILE *f = fopen(out, "wb");
    if (!f)
        return 2;
    emit(f, e, ne);
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

/* Weighted by lines: each draw picks a file (chance in proportion to its
 * lines, among files with sites left), then one of its sites left. */
static int wsample(const char *seed, const char *max)
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
            if (!lines)
                return 2;
        }
        lines[n++] = strdup(buf);
    }
    /* files in order of first appearance; sites of a file are contiguous in the input */
    int nf = 0, *first = calloc((size_t)n + 1, sizeof *first), *left = calloc((size_t)n + 1, sizeof *left);
    double *w = calloc((size_t)n + 1, sizeof *w);
    if (!first || !left || !w)
        return 2;
    for (int i = 0; i < n; i++) {
        size_t fl = strcspn(lines[i], ":");
        if (nf == 0 || strncmp(lines[i], lines[first[nf - 1]], fl) || lines[first[nf - 1]][fl] != ':') {
            first[nf] = i;
            char name[1024];
            snprintf(name, sizeof name, "%.*s", (int)fl, lines[i]);
            size_t len = 0;
            char *text = read_file(name, &len);
            int nl = 0;
            for (size_t k = 0; text && k < len; k++)
                nl += text[k] == '\n';
            free(text);
            w[nf] = nl > 0 ? nl : 1;
            nf++;
        }
        left[nf - 1]++;
    }
    first[nf] = n;
    for (int d = 0; d < m; d++) {
        double tot = 0;
        for (int f = 0; f < nf; f++)
            tot += left[f] ? w[f] : 0;
        if (tot <= 0)
            break;
        double u = (double)(next() >> 11) / 9007199254740992.0 * tot;
        int f = 0;
        for (; f < nf - 1; f++) {
            if (!left[f])
                continue;
            if (u < w[f])
                break;
            u -= w[f];
        }
        while (!left[f]) /* rounding at the end: the last file with sites left */
            f--;
        /* the file's sites not drawn yet are first[f] .. first[f] + left[f] - 1 */
        int j = first[f] + (int)(next() % (uint64_t)left[f]);
        fputs(lines[j], stdout);
        char *x = lines[j];
        lines[j] = lines[first[f] + left[f] - 1];
        lines[first[f] + left[f] - 1] = x;
        left[f]--;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 4 && !strcmp(argv[1], "sample"))
        return sample(argv[2], argv[3]);
    if (argc == 4 && !strcmp(argv[1], "wsample"))
        return wsample(argv[2], argv[3]);
    if (argc < 3 || (strcmp(argv[1], "list") && strcmp(argv[1], "apply"))) {
        fprintf(stderr, "usage: mutate list FILE [FUNC,...] | mutate apply FILE LINE:COL:KIND OUT | "
                        "mutate sample SEED MAX | mutate wsample SEED MAX\n");
        return 2;
    }
    const char *u = getenv("GQ_MUT_UNDEF");
    if (u)
        snprintf(undef_list, sizeof undef_list, " %s ", u);
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
