/* Golden tests: gpuqual's complete outputs on the built-in simulated machines,
 * compared byte for byte (after normalization) with files committed under
 * tests/golden/data/.
 *
 * usage: golden GPUQUAL GOLDEN_DIR CASE...            compare
 *        golden GPUQUAL GOLDEN_DIR --update [CASE...]  rewrite the committed files
 *                                                      (every case when none is named)
 *
 * GOLDEN_DIR holds cases.txt and data/. Each line of cases.txt (blank lines and
 * '#' lines aside) is one step of a case, fields separated by " | ":
 *   NAME [release-only] | EXIT | OUTPUTS | ARGS
 * ARGS are split on spaces and run as `GPUQUAL ARGS` in a fresh temporary
 * directory (the case's steps run in order in the same one, so a later step can
 * read what an earlier one wrote; paths in ARGS are relative to it). That
 * directory holds a link `data` to the project's tests/data, so a case reads a
 * test topology or saved document as data/PATH. The step
 * must exit with EXIT. OUTPUTS are what is compared: `stdout`, `stderr`, or a
 * path the step wrote; `-` for none. Each is kept as data/NAME/LABEL, where LABEL
 * is the path's last component (stdout and stderr: stdout.txt, stderr.txt, with
 * the step's number before the suffix from the second step on: stdout-2.txt).
 * `release-only` is read by CMakeLists.txt: the case is not registered in a
 * sanitizer build (too slow there).
 *
 * A golden file is either the normalized text itself (data/NAME/LABEL) or, for
 * normalized text over GQ_GOLDEN_WHOLE_MAX bytes, its SHA-256 (data/NAME/LABEL.sha256)
 * with one hash per block of lines, so a mismatch still names the first block
 * that differs. --update writes whichever kind the size calls for and removes the
 * other. --update runs every step twice and refuses to write when the two
 * normalized outputs differ (normalization has missed something volatile).
 *
 * Normalization (what differs between two identical runs), applied to every output:
 *   - run ids 20261206T232651Z-714e46d5           -> <RUNID>
 *   - ISO 8601 times 2026-12-06T23:26:51.123Z     -> <TIME>
 *   - "took 29.7 ms" (the card's wall time)       -> took <DURATION>
 *   - the card plan's per-step wall times: the "took" cell of the Markdown and
 *     HTML step tables, and the JSON card's "elapsed_s" (card.elapsed_s and
 *     card.plan[].elapsed_s; pretty-printed JSON, indent 2) -> <DURATION>
 *   - JUnit XML's time="..." attributes                 -> time="<DURATION>"
 *   - Prometheus' gpuqual_last_run_timestamp_seconds value -> <TIME>
 *   - gpuqual's version and git revision (from `gpuqual --version`) where they are
 *     printed as such -> <VERSION>, <REV>
 * The output directory is always the same relative name, so it needs none.
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "sha256.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* Normalized outputs up to this size are committed whole; larger ones as hashes. */
#define GQ_GOLDEN_WHOLE_MAX (160 * 1024)
/* Lines per hashed block in a .sha256 golden file. */
#define GQ_GOLDEN_BLOCK 2000
#define MAX_ARGS 64
#define MAX_OUTS 16
#define MAX_STEPS 16

typedef struct {
    char *buf;
    size_t len, cap;
} sbuf;

static void sb_add(sbuf *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *p = realloc(b->buf, cap);
        if (!p) {
            fprintf(stderr, "golden: out of memory\n");
            exit(2);
        }
        b->buf = p;
        b->cap = cap;
    }
    memcpy(b->buf + b->len, s, n);
    b->len += n;
    b->buf[b->len] = 0;
}

static void sb_str(sbuf *b, const char *s)
{
    sb_add(b, s, strlen(s));
}

static bool read_file(const char *path, sbuf *out)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return false;
    char tmp[65536];
    size_t n;
    out->len = 0;
    sb_add(out, "", 0);
    while ((n = fread(tmp, 1, sizeof tmp, f)) > 0)
        sb_add(out, tmp, n);
    bool ok = !ferror(f);
    fclose(f);
    return ok;
}

static bool write_file(const char *path, const char *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return false;
    bool ok = fwrite(data, 1, n, f) == n;
    return fclose(f) == 0 && ok;
}

/* ---- normalization ------------------------------------------------------ */

static char g_version[64], g_rev[64];
static char g_data[4096]; /* absolute path of GOLDEN_DIR/../data (tests/data) */

static bool isdig(char c)
{
    return c >= '0' && c <= '9';
}

static bool ishex(char c)
{
    return isdig(c) || (c >= 'a' && c <= 'f');
}

/* digits at s[0..n) */
static bool digits(const char *s, int n)
{
    for (int i = 0; i < n; i++)
        if (!isdig(s[i]))
            return false;
    return true;
}

/* Length of a run id at S (YYYYMMDDTHHMMSSZ-xxxxxxxx), or 0. */
static size_t runid_len(const char *s)
{
    if (!digits(s, 8) || s[8] != 'T' || !digits(s + 9, 6) || s[15] != 'Z' || s[16] != '-')
        return 0;
    for (int i = 17; i < 25; i++)
        if (!ishex(s[i]))
            return 0;
    return 25;
}

/* Length of an ISO 8601 time at S (YYYY-MM-DDTHH:MM:SS[.fff][Z|+hh:mm]), or 0. */
static size_t isotime_len(const char *s)
{
    if (!digits(s, 4) || s[4] != '-' || !digits(s + 5, 2) || s[7] != '-' || !digits(s + 8, 2) ||
        s[10] != 'T' || !digits(s + 11, 2) || s[13] != ':' || !digits(s + 14, 2) || s[16] != ':' ||
        !digits(s + 17, 2))
        return 0;
    size_t n = 19;
    if (s[n] == '.' && isdig(s[n + 1])) {
        n++;
        while (isdig(s[n]))
            n++;
    }
    if (s[n] == 'Z')
        n++;
    else if ((s[n] == '+' || s[n] == '-') && digits(s + n + 1, 2) && s[n + 3] == ':' && digits(s + n + 4, 2))
        n += 6;
    return n;
}

/* Length of a duration at S: a number, a space, a unit (ns, µs, us, ms, s, min, h), or 0. */
static size_t duration_len(const char *s)
{
    size_t n = 0;
    while (isdig(s[n]) || s[n] == '.')
        n++;
    if (n == 0 || s[n] != ' ')
        return 0;
    n++;
    static const char *units[] = {"ns", "\xc2\xb5s", "us", "ms", "min", "s", "h"};
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        size_t u = strlen(units[i]);
        if (!strncmp(s + n, units[i], u) && !((s[n + u] >= 'a' && s[n + u] <= 'z'))) {
            n += u;
            /* "1 min 12 s", "2 h 5 min": the smaller unit after the larger one
             * (gq_fmt_duration at a minute and over) is part of the same duration */
            if ((!strcmp(units[i], "min") || !strcmp(units[i], "h")) && s[n] == ' ' && isdig(s[n + 1])) {
                size_t more = duration_len(s + n + 1);
                if (more)
                    n += 1 + more;
            }
            return n;
        }
    }
    return 0;
}

typedef struct {
    const char *from;
    const char *to;
} subst;

/* Normalize one line (without its newline) into OUT. */
static void norm_span(sbuf *out, const char *s, size_t n, const subst *subs, size_t nsubs)
{
    size_t i = 0;
    while (i < n) {
        /* fast path: a character no pattern starts with (digits, "took", " time=", the substitutions) */
        char c0 = s[i];
        if (!isdig(c0) && c0 != 't' && c0 != ' ' && c0 != '"' && c0 != 'g' && c0 != '(' && c0 != 'r' &&
            c0 != 'G') {
            size_t j = i + 1;
            while (j < n && !isdig(s[j]) && s[j] != 't' && s[j] != ' ' && s[j] != '"' && s[j] != 'g' &&
                   s[j] != '(' && s[j] != 'r' && s[j] != 'G')
                j++;
            sb_add(out, s + i, j - i);
            i = j;
            continue;
        }
        /* copy a bounded view: the helpers read at most 32 characters ahead */
        char look[40] = {0};
        size_t k = n - i < sizeof look - 1 ? n - i : sizeof look - 1;
        memcpy(look, s + i, k);
        size_t m;
        bool word_start = i == 0 || !(isdig(s[i - 1]) || (s[i - 1] >= 'A' && s[i - 1] <= 'Z') ||
                                      (s[i - 1] >= 'a' && s[i - 1] <= 'z'));
        if (word_start && (m = runid_len(look)) > 0) {
            sb_str(out, "<RUNID>");
            i += m;
            continue;
        }
        if (word_start && (m = isotime_len(look)) > 0) {
            sb_str(out, "<TIME>");
            i += m;
            continue;
        }
        if (!strncmp(look, "took ", 5) && (m = duration_len(look + 5)) > 0) {
            sb_str(out, "took <DURATION>");
            i += 5 + m;
            continue;
        }
        /* JUnit XML's wall times: time="0.059611" */
        if (!strncmp(look, " time=\"", 7) && (isdig(look[7]) || look[7] == '.')) {
            size_t q = 7;
            while (q < n - i && s[i + q] != '"')
                q++;
            sb_str(out, " time=\"<DURATION>\"");
            i += q + 1;
            continue;
        }
        bool done = false;
        for (size_t j = 0; j < nsubs && !done; j++) {
            size_t lf = strlen(subs[j].from);
            if (lf && lf <= n - i && !memcmp(s + i, subs[j].from, lf)) {
                sb_str(out, subs[j].to);
                i += lf;
                done = true;
            }
        }
        if (done)
            continue;
        sb_add(out, s + i, 1);
        i++;
    }
}

/* Replace the CELL-th (1-based) Markdown table cell of LINE with <DURATION>. */
static void norm_md_cell(sbuf *out, const char *line, size_t n, int cell, const subst *subs, size_t nsubs)
{
    int bars = 0;
    size_t a = 0, b = 0;
    for (size_t i = 0; i < n; i++)
        if (line[i] == '|') {
            bars++;
            if (bars == cell)
                a = i + 1;
            else if (bars == cell + 1) {
                b = i;
                break;
            }
        }
    if (!b) {
        norm_span(out, line, n, subs, nsubs);
        return;
    }
    norm_span(out, line, a, subs, nsubs);
    sb_str(out, " <DURATION> ");
    norm_span(out, line + b, n - b, subs, nsubs);
}

/* Replace the contents of the NTH (1-based) "<td class=\"num\">" cell of LINE with <DURATION>. */
static void norm_html_cell(sbuf *out, const char *line, size_t n, int nth, const subst *subs, size_t nsubs)
{
    static const char td[] = "<td class=\"num\">";
    const char *p = line, *end = line + n;
    for (int k = 0; k < nth; k++) {
        p = memmem(p, (size_t)(end - p), td, sizeof td - 1);
        if (!p)
            break;
        if (k < nth - 1)
            p += sizeof td - 1;
    }
    const char *close = p ? memmem(p, (size_t)(end - p), "</td>", 5) : NULL;
    if (!p || !close) {
        norm_span(out, line, n, subs, nsubs);
        return;
    }
    size_t a = (size_t)(p - line) + sizeof td - 1;
    norm_span(out, line, a, subs, nsubs);
    sb_str(out, "<DURATION>");
    norm_span(out, close, (size_t)(end - close), subs, nsubs);
}

static size_t indent_of(const char *s, size_t n)
{
    size_t i = 0;
    while (i < n && s[i] == ' ')
        i++;
    return i;
}

static void normalize(const sbuf *in, sbuf *out)
{
    char v1[96], v2[96], v3[96], r1[96], r2[96], r3[96], r4[96];
    snprintf(v1, sizeof v1, "gpuqual %s", g_version);
    snprintf(v2, sizeof v2, "\"%s\"", g_version);
    snprintf(v3, sizeof v3, g_rev[0] ? "\"%s (git %s)" : "\"%s (git", g_version, g_rev);
    snprintf(r1, sizeof r1, "(git %s)", g_rev);
    snprintf(r2, sizeof r2, "\"git\": \"%s\"", g_rev);
    snprintf(r3, sizeof r3, "revision=\"%s\"", g_rev);
    snprintf(r4, sizeof r4, "Git version: %s", g_rev); /* the nvbandwidth drop-in's header */
    subst subs[] = {
        {v3, g_rev[0] ? "\"<VERSION> (git <REV>)" : "\"<VERSION> (git"},
        {v1, "gpuqual <VERSION>"},
        {v2, "\"<VERSION>\""},
        {r1, "(git <REV>)"},
        {r2, "\"git\": \"<REV>\""},
        {r3, "revision=\"<REV>\""},
        {r4, "Git version: <REV>"},
    };
    /* the version, then the revision where there is one (a source tree without git has none) */
    size_t nsubs = g_rev[0] ? sizeof subs / sizeof subs[0] : 3;

    out->len = 0;
    sb_add(out, "", 0);
    bool md_steps = false, html_steps = false;
    bool in_card = false, in_plan = false; /* inside the JSON "card" object, its "plan" array */
    const char *s = in->buf, *end = in->buf + in->len;
    while (s < end) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        size_t n = nl ? (size_t)(nl - s) : (size_t)(end - s);
        size_t ind = indent_of(s, n);
        if (md_steps && (n == 0 || s[0] != '|'))
            md_steps = false;
        if (html_steps && memmem(s, n, "</table>", 8))
            html_steps = false;
        if (in_card && ind == 2 && n > 2 && s[2] == '}')
            in_card = false;
        if (in_plan && ind == 4 && n > 4 && s[4] == ']')
            in_plan = false;

        const char *sp = n > 0 ? memrchr(s, ' ', n) : NULL;
        if (n > 34 && !strncmp(s, "gpuqual_last_run_timestamp_seconds{", 35) && sp) {
            /* Prometheus: the time of the run, in seconds since the epoch */
            norm_span(out, s, (size_t)(sp - s), subs, nsubs);
            sb_str(out, " <TIME>");
        } else if (md_steps && strncmp(s, "|---", 4) && strncmp(s, "| ---", 5))
            norm_md_cell(out, s, n, 3, subs, nsubs);
        else if (html_steps && memmem(s, n, "<tr><td>", 8))
            norm_html_cell(out, s, n, 2, subs, nsubs);
        else if (in_card && (ind == 4 || in_plan) && n > ind + 13 &&
                 !strncmp(s + ind, "\"elapsed_s\": ", 13)) {
            sb_add(out, s, ind + 13);
            sb_str(out, "<DURATION>");
            if (s[n - 1] == ',')
                sb_str(out, ",");
        } else
            norm_span(out, s, n, subs, nsubs);

        if (n >= 27 && !strncmp(s, "| step | estimate | took |", 26))
            md_steps = true;
        if (memmem(s, n, "<th>step</th><th>estimate</th><th>took</th>", 43))
            html_steps = true;
        if (ind == 2 && !strncmp(s, "  \"card\": {", 11))
            in_card = true;
        if (in_card && ind == 4 && !strncmp(s, "    \"plan\": [", 13))
            in_plan = true;
        if (nl)
            sb_str(out, "\n");
        s = nl ? nl + 1 : end;
    }
}

/* ---- cases -------------------------------------------------------------- */

typedef struct {
    int exit_code;
    char *args[MAX_ARGS];
    int nargs;
    char *outs[MAX_OUTS];
    int nouts;
    char *outs_buf, *args_buf; /* what outs and args point into */
} step;

typedef struct {
    char name[128];
    step steps[MAX_STEPS];
    int nsteps;
} gcase;

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n' || s[n - 1] == '\r'))
        s[--n] = 0;
    return s;
}

static int split_words(char *s, char **out, int max)
{
    int n = 0;
    for (char *w = strtok(s, " "); w; w = strtok(NULL, " ")) {
        if (n == max)
            return -1;
        out[n++] = w;
    }
    return n;
}

/* Reads GOLDEN_DIR/cases.txt into CASES (allocated); returns the count or -1. */
static int load_cases(const char *dir, gcase **cases)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/cases.txt", dir);
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "golden: cannot read %s: %s\n", path, strerror(errno));
        return -1;
    }
    int n = 0, cap = 0, lineno = 0;
    gcase *cs = NULL;
    char line[4096];
    while (fgets(line, sizeof line, f)) {
        lineno++;
        char *t = trim(line);
        if (!*t || *t == '#')
            continue;
        char *fields[4];
        int nf = 0;
        char *p = t;
        while (nf < 4) {
            fields[nf++] = p;
            char *sep = nf < 4 ? strstr(p, " | ") : NULL;
            if (!sep)
                break;
            *sep = 0;
            p = sep + 3;
        }
        if (nf != 4) {
            fprintf(stderr, "golden: %s:%d: expected NAME | EXIT | OUTPUTS | ARGS\n", path, lineno);
            fclose(f);
            return -1;
        }
        char *name = strtok(trim(fields[0]), " ");
        gcase *c = n ? &cs[n - 1] : NULL;
        if (!c || strcmp(c->name, name)) {
            if (n == cap) {
                cap = cap ? cap * 2 : 64;
                cs = realloc(cs, (size_t)cap * sizeof *cs);
            }
            c = &cs[n++];
            memset(c, 0, sizeof *c);
            snprintf(c->name, sizeof c->name, "%s", name);
        }
        if (c->nsteps == MAX_STEPS) {
            fprintf(stderr, "golden: %s:%d: more than %d steps\n", path, lineno, MAX_STEPS);
            fclose(f);
            return -1;
        }
        step *st = &c->steps[c->nsteps++];
        st->exit_code = atoi(trim(fields[1]));
        char *outs = st->outs_buf = strdup(trim(fields[2]));
        st->nouts = strcmp(outs, "-") ? split_words(outs, st->outs, MAX_OUTS) : 0;
        char *args = st->args_buf = strdup(trim(fields[3]));
        st->nargs = split_words(args, st->args, MAX_ARGS - 2);
        if (st->nouts < 0 || st->nargs <= 0) {
            fprintf(stderr, "golden: %s:%d: too many outputs or arguments, or none\n", path, lineno);
            fclose(f);
            return -1;
        }
    }
    fclose(f);
    *cases = cs;
    return n;
}

/* ---- running ------------------------------------------------------------ */

static int rm_one(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(p);
}

/* Runs GPUQUAL with the step's arguments in WORK; stdout and stderr to OUTDIR/stdout, OUTDIR/stderr.
 * Returns the exit status, or -1. */
static int run_step(const char *gpuqual, const step *st, const char *work, const char *outdir)
{
    char so[4096], se[4096];
    snprintf(so, sizeof so, "%s/stdout", outdir);
    snprintf(se, sizeof se, "%s/stderr", outdir);
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        int o = open(so, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int e = open(se, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int in = open("/dev/null", O_RDONLY);
        if (o < 0 || e < 0 || in < 0 || chdir(work) != 0)
            _exit(127);
        dup2(in, 0);
        dup2(o, 1);
        dup2(e, 2);
        setenv("TZ", "UTC", 1);
        setenv("LC_ALL", "C.UTF-8", 1);
        unsetenv("COLUMNS");
        char *argv[MAX_ARGS];
        argv[0] = (char *)gpuqual;
        for (int i = 0; i < st->nargs; i++)
            argv[i + 1] = st->args[i];
        argv[st->nargs + 1] = NULL;
        execv(gpuqual, argv);
        _exit(127);
    }
    int status;
    if (waitpid(pid, &status, 0) < 0)
        return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static void label_of(const char *out, int stepno, char *label, size_t n)
{
    if (!strcmp(out, "stdout") || !strcmp(out, "stderr")) {
        if (stepno == 1)
            snprintf(label, n, "%s.txt", out);
        else
            snprintf(label, n, "%s-%d.txt", out, stepno);
        return;
    }
    const char *b = strrchr(out, '/');
    snprintf(label, n, "%s", b ? b + 1 : out);
}

/* One output of a run: its label and normalized text. */
typedef struct {
    char label[256];
    sbuf text;
} output;

/* Runs case C once; fills OUTS (up to MAX_STEPS*MAX_OUTS) and returns their count, or -1 with a message. */
static int run_case(const char *gpuqual, const gcase *c, output *outs)
{
    char tmpl[] = "/tmp/gq-golden-XXXXXX";
    char *tmp = mkdtemp(tmpl);
    if (!tmp) {
        fprintf(stderr, "golden: mkdtemp: %s\n", strerror(errno));
        return -1;
    }
    char work[4096];
    snprintf(work, sizeof work, "%s/work", tmp);
    mkdir(work, 0755);
    /* data -> the project's tests/data, so a case names a test topology or saved file as
     * data/PATH (relative, so it prints the same wherever the tree is checked out) */
    char link[4200];
    snprintf(link, sizeof link, "%s/data", work);
    if (symlink(g_data, link) != 0) {
        fprintf(stderr, "golden: symlink %s -> %s: %s\n", link, g_data, strerror(errno));
        nftw(tmp, rm_one, 16, FTW_DEPTH | FTW_PHYS);
        return -1;
    }
    int nouts = 0, rc = 0;
    for (int i = 0; i < c->nsteps && rc == 0; i++) {
        const step *st = &c->steps[i];
        int ex = run_step(gpuqual, st, work, tmp);
        if (ex != st->exit_code) {
            sbuf err = {0};
            char se[4096];
            snprintf(se, sizeof se, "%s/stderr", tmp);
            read_file(se, &err);
            fprintf(stderr, "golden: %s step %d: exit %d, expected %d; stderr:\n%s\n", c->name, i + 1, ex,
                    st->exit_code, err.buf ? err.buf : "");
            free(err.buf);
            rc = -1;
            break;
        }
        for (int j = 0; j < st->nouts; j++) {
            char path[8300];
            if (!strcmp(st->outs[j], "stdout") || !strcmp(st->outs[j], "stderr"))
                snprintf(path, sizeof path, "%s/%s", tmp, st->outs[j]);
            else
                snprintf(path, sizeof path, "%s/%s", work, st->outs[j]);
            sbuf raw = {0};
            if (!read_file(path, &raw)) {
                fprintf(stderr, "golden: %s step %d: cannot read its output %s: %s\n", c->name, i + 1,
                        st->outs[j], strerror(errno));
                free(raw.buf);
                rc = -1;
                break;
            }
            output *o = &outs[nouts++];
            label_of(st->outs[j], i + 1, o->label, sizeof o->label);
            memset(&o->text, 0, sizeof o->text);
            normalize(&raw, &o->text);
            free(raw.buf);
        }
    }
    nftw(tmp, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    return rc < 0 ? -1 : nouts;
}

/* ---- comparing ---------------------------------------------------------- */

/* Line LINE (1-based) of TEXT into BUF (cut at N-1 characters); "(end of file)" past the end. */
static void nth_line(const sbuf *t, size_t line, char *buf, size_t n)
{
    const char *s = t->buf, *end = t->buf + t->len;
    for (size_t k = 1; k < line && s < end; k++) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        s = nl ? nl + 1 : end;
    }
    if (s >= end) {
        snprintf(buf, n, "(end of file)");
        return;
    }
    const char *nl = memchr(s, '\n', (size_t)(end - s));
    size_t len = nl ? (size_t)(nl - s) : (size_t)(end - s);
    if (len > n - 1)
        len = n - 1;
    memcpy(buf, s, len);
    buf[len] = 0;
}

/* The hashed form of TEXT: a header, then one hash per block of GQ_GOLDEN_BLOCK lines. */
static void hashed_form(const sbuf *t, sbuf *out)
{
    char hex[65], line[256];
    size_t lines = 0;
    for (size_t i = 0; i < t->len; i++)
        lines += t->buf[i] == '\n';
    if (t->len && t->buf[t->len - 1] != '\n')
        lines++;
    sha256_hex(t->buf, t->len, hex);
    out->len = 0;
    snprintf(line, sizeof line,
             "# gpuqual golden file: SHA-256 of the normalized output (tests/golden/golden.c)\n"
             "sha256 %s bytes %zu lines %zu block %d\n",
             hex, t->len, lines, GQ_GOLDEN_BLOCK);
    sb_str(out, line);
    const char *s = t->buf, *end = t->buf + t->len;
    size_t first = 1;
    while (s < end) {
        const char *b = s;
        size_t k = 0;
        while (s < end && k < GQ_GOLDEN_BLOCK) {
            const char *nl = memchr(s, '\n', (size_t)(end - s));
            s = nl ? nl + 1 : end;
            k++;
        }
        sha256_hex(b, (size_t)(s - b), hex);
        snprintf(line, sizeof line, "lines %zu-%zu %s\n", first, first + k - 1, hex);
        sb_str(out, line);
        first += k;
    }
}

static const char *g_self, *g_gpuqual, *g_dir;

static void regen_hint(const char *name)
{
    fprintf(stderr,
            "  if the change is intended, regenerate and commit the golden files (with the reason):\n"
            "    %s %s %s --update %s\n",
            g_self, g_gpuqual, g_dir, name);
}

/* Compares one output with its golden file; prints what differs. */
static bool compare_one(const gcase *c, const output *o)
{
    char whole[4600], hashed[4700];
    snprintf(whole, sizeof whole, "%s/data/%s/%s", g_dir, c->name, o->label);
    snprintf(hashed, sizeof hashed, "%s.sha256", whole);
    sbuf exp = {0};
    bool ok = true;
    if (read_file(whole, &exp)) {
        if (exp.len == o->text.len && !memcmp(exp.buf, o->text.buf, exp.len))
            goto out;
        /* the first differing line */
        size_t line = 1, i = 0;
        while (i < exp.len && i < o->text.len && exp.buf[i] == o->text.buf[i]) {
            line += exp.buf[i] == '\n';
            i++;
        }
        char e[512], a[512];
        nth_line(&exp, line, e, sizeof e);
        nth_line(&o->text, line, a, sizeof a);
        fprintf(stderr,
                "golden: %s: %s differs from %s (normalized), first at line %zu:\n"
                "  expected: %s\n  actual:   %s\n",
                c->name, o->label, whole, line, e, a);
        ok = false;
    } else if (read_file(hashed, &exp)) {
        sbuf act = {0};
        hashed_form(&o->text, &act);
        if (exp.len == act.len && !memcmp(exp.buf, act.buf, exp.len)) {
            free(act.buf);
            goto out;
        }
        /* the first block whose hash differs */
        const char *ep = exp.buf, *ap = act.buf;
        size_t from = 0;
        int hdr = 2;
        while (*ep && *ap) {
            const char *en = strchr(ep, '\n'), *an = strchr(ap, '\n');
            if (!en || !an)
                break;
            if (hdr > 0)
                hdr--;
            else if ((en - ep) != (an - ap) || memcmp(ep, ap, (size_t)(en - ep))) {
                sscanf(ap, "lines %zu", &from);
                break;
            }
            ep = en + 1;
            ap = an + 1;
        }
        if (!from)
            from = 1;
        char a[512];
        nth_line(&o->text, from, a, sizeof a);
        fprintf(stderr,
                "golden: %s: %s differs from the SHA-256 in %s (normalized output; the golden file keeps\n"
                "  hashes of blocks of %d lines, not the text): the first differing block is lines %zu-%zu;\n"
                "  diff the actual output (below) with one written by --update before the change\n"
                "  actual line %zu (the block's first): %s\n",
                c->name, o->label, hashed, GQ_GOLDEN_BLOCK, from, from + GQ_GOLDEN_BLOCK - 1, from, a);
        free(act.buf);
        ok = false;
    } else {
        fprintf(stderr, "golden: %s: no golden file %s (nor %s.sha256)\n", c->name, whole, o->label);
        ok = false;
    }
    if (!ok) {
        char keep[4096];
        snprintf(keep, sizeof keep, "/tmp/gq-golden-actual-%s-%s", c->name, o->label);
        if (write_file(keep, o->text.buf, o->text.len))
            fprintf(stderr, "  the actual normalized output is in %s\n", keep);
    }
out:
    free(exp.buf);
    return ok;
}

static bool update_one(const gcase *c, const output *o)
{
    char dir[4096], whole[4400], hashed[4500];
    snprintf(dir, sizeof dir, "%s/data/%s", g_dir, c->name);
    mkdir(dir, 0755);
    snprintf(whole, sizeof whole, "%s/%s", dir, o->label);
    snprintf(hashed, sizeof hashed, "%s.sha256", whole);
    bool ok;
    if (o->text.len <= GQ_GOLDEN_WHOLE_MAX) {
        ok = write_file(whole, o->text.buf, o->text.len);
        unlink(hashed);
    } else {
        sbuf h = {0};
        hashed_form(&o->text, &h);
        ok = write_file(hashed, h.buf, h.len);
        free(h.buf);
        unlink(whole);
    }
    if (!ok)
        fprintf(stderr, "golden: cannot write %s: %s\n", whole, strerror(errno));
    return ok;
}

/* gpuqual --version's first line: "gpuqual VERSION (git REV)" or "gpuqual VERSION". */
static bool read_version(const char *gpuqual)
{
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "'%s' --version", gpuqual);
    FILE *p = popen(cmd, "r");
    if (!p)
        return false;
    char line[512] = {0};
    bool got = fgets(line, sizeof line, p) != NULL;
    pclose(p);
    if (!got || strncmp(line, "gpuqual ", 8))
        return false;
    char *v = line + 8;
    size_t n = strcspn(v, " \n");
    snprintf(g_version, sizeof g_version, "%.*s", (int)n, v);
    char *g = strstr(v, "(git ");
    if (g) {
        g += 5;
        snprintf(g_rev, sizeof g_rev, "%.*s", (int)strcspn(g, ")\n"), g);
    }
    return g_version[0] != 0;
}

/* Normalization's own check, run before any case: the wall-time forms
 * gq_fmt_duration prints, from milliseconds to hours, all become one token (a
 * card that takes over a minute under load once broke a hash). */
static bool norm_selfcheck(void)
{
    static const char *const in[] = {"took 29.7 ms.", "took 1 min 12 s.", "took 2 min.",
                                     "took 1 h 5 min; 7 s", "took 5 GB/s"};
    static const char *const want[] = {"took <DURATION>.", "took <DURATION>.", "took <DURATION>.",
                                       "took <DURATION>; 7 s", "took 5 GB/s"};
    bool ok = true;
    for (size_t i = 0; i < sizeof in / sizeof in[0]; i++) {
        sbuf a = {0}, b = {0};
        sb_str(&a, in[i]);
        sb_str(&a, "\n");
        normalize(&a, &b);
        size_t wl = strlen(want[i]);
        if (b.len < wl + 1 || memcmp(b.buf, want[i], wl) || b.buf[wl] != '\n') {
            fprintf(stderr, "golden: normalization turns \"%s\" into \"%s\", not \"%s\"\n", in[i],
                    b.buf ? b.buf : "", want[i]);
            ok = false;
        }
        free(a.buf);
        free(b.buf);
    }
    return ok;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: golden GPUQUAL GOLDEN_DIR [--update] CASE...\n");
        return 2;
    }
    g_self = argv[0];
    /* absolute: each step runs in its own directory */
    static char gq_abs[4096];
    if (!realpath(argv[1], gq_abs)) {
        fprintf(stderr, "golden: no gpuqual at %s: %s\n", argv[1], strerror(errno));
        return 2;
    }
    g_gpuqual = gq_abs;
    g_dir = argv[2];
    char data_rel[4200];
    snprintf(data_rel, sizeof data_rel, "%s/../data", g_dir);
    if (!realpath(data_rel, g_data)) {
        fprintf(stderr, "golden: no test data at %s: %s\n", data_rel, strerror(errno));
        return 2;
    }
    bool update = argc > 3 && !strcmp(argv[3], "--update");
    int first = update ? 4 : 3;
    if (!update && first >= argc) {
        fprintf(stderr, "golden: name at least one case of %s/cases.txt (or --update)\n", g_dir);
        return 2;
    }
    char hex[65];
    sha256_hex("abc", 3, hex); /* FIPS 180-4's first example */
    if (strcmp(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")) {
        fprintf(stderr, "golden: SHA-256 of \"abc\" is %s, not FIPS 180-4's\n", hex);
        return 2;
    }
    if (!read_version(g_gpuqual)) {
        fprintf(stderr, "golden: '%s --version' did not print 'gpuqual VERSION'\n", g_gpuqual);
        return 2;
    }
    if (!norm_selfcheck())
        return 2;
    gcase *cases;
    int ncases = load_cases(g_dir, &cases);
    if (ncases < 0)
        return 2;
    int failed = 0, ran = 0;
    for (int k = 0; k < ncases; k++) {
        const gcase *c = &cases[k];
        bool named = first >= argc;
        for (int a = first; a < argc; a++)
            named |= !strcmp(argv[a], c->name);
        if (!named)
            continue;
        ran++;
        static output outs[MAX_STEPS * MAX_OUTS], again[MAX_STEPS * MAX_OUTS];
        int n = run_case(g_gpuqual, c, outs);
        if (n < 0) {
            failed++;
            regen_hint(c->name);
            continue;
        }
        bool ok = true;
        if (update) {
            /* twice: a difference between two identical runs is normalization's to remove */
            int m = run_case(g_gpuqual, c, again);
            for (int i = 0; i < n && m == n; i++)
                if (outs[i].text.len != again[i].text.len ||
                    memcmp(outs[i].text.buf, again[i].text.buf, outs[i].text.len)) {
                    size_t line = 1;
                    for (size_t j = 0; j < outs[i].text.len && outs[i].text.buf[j] == again[i].text.buf[j];
                         j++)
                        line += outs[i].text.buf[j] == '\n';
                    char x[512], y[512];
                    nth_line(&outs[i].text, line, x, sizeof x);
                    nth_line(&again[i].text, line, y, sizeof y);
                    fprintf(stderr,
                            "golden: %s: %s differs between two identical runs at line %zu (normalize it in "
                            "golden.c):\n  first:  %s\n  second: %s\n",
                            c->name, outs[i].label, line, x, y);
                    ok = false;
                }
            if (m != n)
                ok = false;
            for (int i = 0; i < m; i++)
                free(again[i].text.buf);
            for (int i = 0; i < n && ok; i++)
                ok = update_one(c, &outs[i]);
            if (ok)
                printf("golden: %s: %d file(s) written\n", c->name, n);
        } else {
            for (int i = 0; i < n; i++)
                ok &= compare_one(c, &outs[i]);
            if (!ok)
                regen_hint(c->name);
            else
                printf("golden: %s: %d output(s) identical\n", c->name, n);
        }
        for (int i = 0; i < n; i++)
            free(outs[i].text.buf);
        failed += !ok;
    }
    if (ran == 0) {
        fprintf(stderr, "golden: no case of that name in %s/cases.txt\n", g_dir);
        return 2;
    }
    for (int k = 0; k < ncases; k++)
        for (int i = 0; i < cases[k].nsteps; i++) {
            free(cases[k].steps[i].outs_buf);
            free(cases[k].steps[i].args_buf);
        }
    free(cases);
    printf("%d passed, %d failed\n", ran - failed, failed);
    return failed ? 1 : 0;
}
