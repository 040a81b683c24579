/* Saved documents, spoiled one field at a time: what each reader does with them is held
 * (included by tests/unit/test_cli_docvar_*.c, each with its own readers and table).
 *
 * The seeds in tests/data/docvariants/ are documents gpuqual wrote on the simulated h200x2 (seed 1,
 * noise 0.01): a card, a run, domains, a placement, a stress run and a sweep. Every field of each
 * (every key of every object, recursively; of an array, its first element) is spoiled in three
 * ways, one at a time: removed, given the wrong type (a number for a string, a string for a
 * number, an array for an object, ...), and given an edge value (-1 for an integer, 1e300 or -1 for
 * a real, "" for a string, the other truth value, an empty array or object). The sections every
 * document has (topology, GPUs, host, options, records, the header) are read by the same code in
 * each, and are spoiled in run.json only. The spoiled document is given to the
 * commands that read that kind (report, compare, place --input, kv --input), run in-process, and
 * each run's exit status, a hash of its stdout and the first line of its stderr make one row.
 *
 * The rows must equal tests/data/docvariants/NAME.tsv (NAME: the test program's, less test_cli_): a
 * change in how any reader accepts, refuses, explains or renders a spoiled field shows there, row by
 * row. When a change is meant, regenerate the tables and say why in the commit:
 *
 *   for t in build/test_cli_docvar_*; do GQ_DOC_VARIANTS_UPDATE=1 $t; done
 *
 * The rows are split over several programs so that each stays short under the sanitizers, and a
 * mutation run (bench/mutation) runs only the readers a mutated line is on.
 * (it runs every row twice and refuses to write when the two runs differ). */
#ifndef GQ_TESTS_DOCVARIANTS_H
#define GQ_TESTS_DOCVARIANTS_H

#include <ctype.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "cli/common.h"
#include "cli/frame.h"
#include <jansson.h>

#include "../cli_inproc.h"

#include "cli/commands.h"
#include "core/version.h"

#define MAXSEG 24

typedef struct {
    const char *key[MAXSEG]; /* NULL: an array index (always 0) */
    int n;
} jpath;

typedef struct {
    jpath *p;
    int n, cap;
} plist;

static void walk(json_t *v, jpath *cur, plist *L)
{
    if (cur->n > 0) {
        if (L->n == L->cap) {
            L->cap = L->cap ? 2 * L->cap : 256;
            L->p = realloc(L->p, (size_t)L->cap * sizeof *L->p);
            assert_non_null(L->p);
        }
        L->p[L->n++] = *cur;
    }
    if (cur->n == MAXSEG)
        return;
    if (json_is_object(v)) {
        const char *k;
        json_t *x;
        json_object_foreach(v, k, x)
        {
            cur->key[cur->n++] = k;
            walk(x, cur, L);
            cur->n--;
        }
    } else if (json_is_array(v) && json_array_size(v) > 0) {
        cur->key[cur->n++] = NULL;
        walk(json_array_get(v, 0), cur, L);
        cur->n--;
    }
}

static void path_str(const jpath *p, char *buf, size_t n)
{
    size_t u = 0;
    buf[0] = 0;
    for (int i = 0; i < p->n && u < n; i++)
        u += (size_t)snprintf(buf + u, n - u, "/%s", p->key[i] ? p->key[i] : "0");
}

static const char *const kind_name[] = {"removed", "wrong type", "edge value"};

/* Spoils the field at P of DOC (a copy) in way KIND (an edge number: -1 for an integer; for a real
 * 1e300 when NTH is even, else -1); false when there is nothing to do. */
static bool spoil(json_t *doc, const jpath *p, int kind, int nth)
{
    json_t *parent = doc;
    for (int i = 0; i < p->n - 1; i++) {
        parent = p->key[i] ? json_object_get(parent, p->key[i]) : json_array_get(parent, 0);
        if (!parent)
            return false;
    }
    const char *last = p->key[p->n - 1];
    json_t *v = last ? json_object_get(parent, last) : json_array_get(parent, 0);
    if (!v)
        return false;
    if (kind == 0)
        return last ? json_object_del(parent, last) == 0 : json_array_remove(parent, 0) == 0;
    json_t *nv;
    if (kind == 1) {
        if (json_is_number(v))
            nv = json_string("7");
        else if (json_is_string(v))
            nv = json_integer(7);
        else if (json_is_boolean(v))
            nv = json_string("true");
        else if (json_is_null(v))
            nv = json_integer(0);
        else if (json_is_object(v))
            nv = json_array();
        else
            nv = json_object();
    } else {
        if (json_is_integer(v))
            nv = json_integer(-1);
        else if (json_is_number(v))
            nv = json_real(nth % 2 ? -1.0 : 1e300);
        else if (json_is_string(v))
            nv = json_string("");
        else if (json_is_boolean(v))
            nv = json_boolean(!json_is_true(v));
        else if (json_is_null(v))
            nv = json_string("x");
        else if (json_is_object(v))
            nv = json_object();
        else
            nv = json_array();
    }
    assert_non_null(nv);
    return last ? json_object_set_new(parent, last, nv) == 0 : json_array_set_new(parent, 0, nv) == 0;
}

/* FNV-1a 64 of TEXT with every git revision left out ("git " and the word after it: the saved
 * document's, and the build's own, which differs from checkout to checkout and is "unknown" in a
 * tree without .git) and gpuqual's own version, so that neither a new commit nor a new version nor
 * an exported tree changes the rows. */
static uint64_t hash_out(const char *text)
{
    uint64_t h = 1469598103934665603ull;
    size_t vl = strlen(gq_version);
    for (const char *s = text; *s;) {
        if (!strncmp(s, "git ", 4)) {
            size_t k = 4;
            while (isalnum((unsigned char)s[k]) || s[k] == '-')
                k++;
            s += k;
            continue;
        }
        if (vl && !strncmp(s, gq_version, vl)) {
            s += vl;
            continue;
        }
        h ^= (unsigned char)*s++;
        h *= 1099511628211ull;
    }
    return h;
}

typedef struct {
    const char *file;    /* under tests/data/docvariants/ */
    bool shared;         /* also the sections every document has (topology, gpus, host, options,
                            records); else only the document's own */
    const char *section; /* only the fields under this top-level key; NULL: every one */
    const gq_frame_cmd *cmd;
    const char *args[12]; /* "doc.json" is the spoiled document */
} reader;

#define GQ_DOCVAR_KV                                                                                         \
    "--layers", "8", "--kv-heads", "8", "--head-dim", "128", "--kv-dtype", "bf16", "--tokens", "1000"

/* A section every document has, whose reader is the same for all (held through run.json). */
static bool shared_section(const jpath *p)
{
    static const char *const shared[] = {"topology", "gpus",           "host",      "options",   "records",
                                         "tool",     "schema_version", "kind",      "run_id",    "version",
                                         "git",      "timestamp",      "simulated", "incomplete"};
    for (size_t i = 0; i < sizeof shared / sizeof shared[0]; i++)
        if (p->key[0] && !strcmp(p->key[0], shared[i]))
            return true;
    return false;
}

static char g_out[8 << 20], g_err[8192];

static int run_cmd(const gq_frame_cmd *cmd, char **argv)
{
    return gq_test_run_cmd(cmd, argv, g_err, sizeof g_err, g_out, sizeof g_out);
}

/* Runs reader R on DOC (written to doc.json in the current directory); appends its row to ROWS. */
static void run_row(const reader *r, int ri, json_t *doc, const char *what, FILE *rows)
{
    assert_int_equal(json_dump_file(doc, "doc.json", JSON_COMPACT | JSON_REAL_PRECISION(17)), 0);
    char *argv[16];
    int a = 0;
    argv[a++] = "gpuqual";
    argv[a++] = (char *)r->cmd->name;
    for (int i = 0; i < 12 && r->args[i]; i++)
        argv[a++] = (char *)r->args[i];
    argv[a] = NULL;
    int code = run_cmd(r->cmd, argv);
    char *nl = strchr(g_err, '\n');
    if (nl)
        *nl = 0;
    fprintf(rows, "%d %s %s\t%s\t%d\t%016llx\t%s\n", ri, r->file, r->cmd->name, what, code,
            (unsigned long long)hash_out(g_out), g_err);
}

/* Every row, in order, into a memory buffer (*buf, *len). */
static void all_rows(const reader *readers, size_t nreaders, char **buf, size_t *len)
{
    FILE *rows = open_memstream(buf, len);
    assert_non_null(rows);
    for (size_t ri = 0; ri < nreaders; ri++) {
        const reader *r = &readers[ri];
        char path[4096];
        snprintf(path, sizeof path, "%s/data/docvariants/%s", GQ_TEST_DATA, r->file);
        json_error_t je;
        json_t *seed = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
        if (!seed)
            fail_msg("%s: %s", path, je.text);
        run_row(r, (int)ri, seed, "(as written)\t-", rows);
        plist L = {0};
        jpath cur = {{0}, 0};
        walk(seed, &cur, &L);
        for (int i = 0; i < L.n; i++) {
            if (!r->shared && shared_section(&L.p[i]))
                continue;
            if (r->section && (!L.p[i].key[0] || strcmp(L.p[i].key[0], r->section)))
                continue;
            for (int kind = 0; kind < 3; kind++) {
                json_t *doc = json_deep_copy(seed);
                assert_non_null(doc);
                if (spoil(doc, &L.p[i], kind, i)) {
                    char p[2048], what[2200];
                    path_str(&L.p[i], p, sizeof p);
                    snprintf(what, sizeof what, "%s\t%s", p, kind_name[kind]);
                    run_row(r, (int)ri, doc, what, rows);
                }
                json_decref(doc);
            }
        }
        free(L.p);
        json_decref(seed);
    }
    fclose(rows);
}

/* Prints the first rows (up to 12) where GOT differs from WANT; returns how many it printed. */
static int show_diff(const char *want, const char *got)
{
    int shown = 0, line = 1;
    const char *g = got, *x = want;
    while ((*g || *x) && shown < 12) {
        const char *ge = strchr(g, '\n'), *xe = strchr(x, '\n');
        size_t gl = ge ? (size_t)(ge - g) : strlen(g), xl = xe ? (size_t)(xe - x) : strlen(x);
        if (gl != xl || memcmp(g, x, gl)) {
            print_error("row %d\n  expected: %.*s\n  got:      %.*s\n", line, (int)xl, x, (int)gl, g);
            shown++;
        }
        g = ge ? ge + 1 : g + gl;
        x = xe ? xe + 1 : x + xl;
        line++;
    }
    return shown;
}

/* Runs every row of READERS and holds them to tests/data/docvariants/TABLE.tsv. */
static void doc_variants(const reader *readers, size_t nreaders, const char *table)
{
    setenv("TZ", "UTC", 1);
    setenv("LC_ALL", "C.UTF-8", 1);
    unsetenv("COLUMNS");
    /* in memory where there is a tmpfs: each row rewrites doc.json */
    char tmpl[64];
    snprintf(tmpl, sizeof tmpl, "%s/gq-docvar-XXXXXX", access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
    assert_non_null(mkdtemp(tmpl));
    char here[4096];
    assert_non_null(getcwd(here, sizeof here));
    assert_int_equal(chdir(tmpl), 0);

    char *got = NULL;
    size_t glen = 0;
    all_rows(readers, nreaders, &got, &glen);

    char want_path[4096];
    snprintf(want_path, sizeof want_path, "%s/data/docvariants/%s.tsv", GQ_TEST_DATA, table);
    const char *upd = getenv("GQ_DOC_VARIANTS_UPDATE");
    if (upd && *upd == '1') {
        char *again = NULL;
        size_t alen = 0;
        all_rows(readers, nreaders, &again, &alen);
        if ((alen != glen || memcmp(again, got, glen)) && show_diff(got, again))
            fail_msg("two runs of the same rows differ: not written");
        free(again);
        FILE *f = fopen(want_path, "w");
        assert_non_null(f);
        assert_int_equal(fwrite(got, 1, glen, f), glen);
        assert_int_equal(fclose(f), 0);
        print_message("wrote %s\n", want_path);
    } else {
        FILE *f = fopen(want_path, "r");
        if (!f)
            fail_msg("cannot read %s (GQ_DOC_VARIANTS_UPDATE=1 writes it)", want_path);
        char *want = NULL;
        size_t wlen = 0;
        FILE *w = open_memstream(&want, &wlen);
        assert_non_null(w);
        char b[65536];
        size_t k;
        while ((k = fread(b, 1, sizeof b, f)) > 0)
            fwrite(b, 1, k, w);
        fclose(f);
        fclose(w);
        int shown = show_diff(want, got);
        if (shown)
            fail_msg(
                "the readers' rows differ from %s (if meant: GQ_DOC_VARIANTS_UPDATE=1 build/test_cli_%s)",
                want_path, table);
        free(want);
    }
    free(got);
    unlink("doc.json");
    assert_int_equal(chdir(here), 0);
    rmdir(tmpl);
}

#endif
