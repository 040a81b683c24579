/* Outputs that are the same file as an input or another output (outputs.h). */
#include "cli/outputs.h"

#include <errno.h>
#include <jansson.h>
#include <libgen.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/infile.h"
#include "core/interrupt.h"
#include "core/outfile.h"
#include "doc/saved_doc.h"
#include "render/render.h"
#include "topo/snapshot.h"

static const char *const output_opts[] = {"json", "output", "journal", "csv", "save-snapshot", NULL};

typedef struct {
    const char *opt; /* the option that named it ("" for a positional argument) */
    const char *path;
    bool output;
} arg_path;

static bool is_output_opt(const char *name, size_t len)
{
    if (len == 1 && name[0] == 'o')
        return true;
    for (int i = 0; output_opts[i]; i++)
        if (strlen(output_opts[i]) == len && !strncmp(output_opts[i], name, len))
            return true;
    return false;
}

/* The absolute path PATH would have: its directory resolved, its name kept.
 * False when the directory does not exist. */
static bool resolve(const char *path, char *out, size_t cap)
{
    char a[PATH_MAX], b[PATH_MAX], dir[PATH_MAX];
    snprintf(a, sizeof a, "%s", path);
    snprintf(b, sizeof b, "%s", path);
    if (!realpath(dirname(a), dir))
        return false;
    snprintf(out, cap, "%s/%s", dir, basename(b));
    return true;
}

static bool same_file(const arg_path *x, const arg_path *y)
{
    struct stat sx, sy;
    bool ex = stat(x->path, &sx) == 0, ey = stat(y->path, &sy) == 0;
    if (ex && ey)
        return sx.st_dev == sy.st_dev && sx.st_ino == sy.st_ino;
    if (!x->output || !y->output || ex != ey)
        return false;
    char rx[PATH_MAX + 256], ry[PATH_MAX + 256];
    return resolve(x->path, rx, sizeof rx) && resolve(y->path, ry, sizeof ry) && !strcmp(rx, ry);
}

static bool exempt(const char *path)
{
    return !strcmp(path, "-") || gq_outfile_is_device(path);
}

/* Collect the paths on the command line; at most cap. */
static int collect(int argc, char **argv, arg_path *v, int cap)
{
    int n = 0;
    bool opts_done = false;
    for (int i = 2; i < argc && n < cap; i++) {
        const char *a = argv[i];
        if (opts_done || a[0] != '-' || !a[1]) {
            v[n++] = (arg_path){"", a, false};
            continue;
        }
        if (!strcmp(a, "--")) {
            opts_done = true;
            continue;
        }
        const char *name = a + (a[1] == '-' ? 2 : 1);
        const char *eq = strchr(name, '=');
        size_t len = eq ? (size_t)(eq - name) : strlen(name);
        if (a[1] != '-')
            len = 1; /* -oVALUE or -o VALUE */
        if (len == 6 && !strncmp(name, "resume", 6)) {
            i += !eq; /* appended to on purpose */
            continue;
        }
        const char *val = eq ? eq + 1 : (a[1] != '-' && a[2]) ? a + 2 : NULL;
        if (!val) {
            if (i + 1 >= argc || (argv[i + 1][0] == '-' && argv[i + 1][1]))
                continue; /* a flag */
            val = argv[++i];
        }
        v[n++] = (arg_path){a, val, is_output_opt(name, len)};
    }
    return n;
}

static void opt_name(const arg_path *p, char *buf, size_t cap)
{
    const char *eq = strchr(p->opt, '=');
    if (!p->opt[0])
        snprintf(buf, cap, "the input");
    else if (p->opt[1] != '-')
        snprintf(buf, cap, "%.2s", p->opt); /* -oVALUE */
    else
        snprintf(buf, cap, "%.*s", (int)(eq ? (size_t)(eq - p->opt) : strlen(p->opt)), p->opt);
}

int gq_cli_check_same_files(int argc, char **argv, gq_err *err)
{
    enum { CAP = 256 };
    arg_path *v = calloc(CAP, sizeof *v);
    if (!v)
        return gq_err_set(err, GQ_E_NOMEM, "out of memory");
    int n = collect(argc, argv, v, CAP), rc = GQ_OK;
    for (int i = 0; i < n && !rc; i++) {
        if (!v[i].output || exempt(v[i].path))
            continue;
        for (int j = 0; j < n && !rc; j++) {
            const arg_path *w = &v[j];
            if (j == i || (w->output && j < i) || exempt(w->path) || !same_file(&v[i], w))
                continue;
            char a[64], b[64];
            opt_name(&v[i], a, sizeof a);
            opt_name(&v[j], b, sizeof b);
            rc = gq_err_set(err, GQ_E_USAGE, "%s '%s' is the same file as %s '%s'; give %s a different file",
                            a, v[i].path, b, v[j].path, a);
        }
    }
    free(v);
    return rc;
}

json_t *gq_cli_journal_options(const gq_common *c)
{
    json_t *o = json_object(), *gpus = json_array();
    json_object_set_new(o, "buffer_size", json_integer((json_int_t)c->buffer_size));
    json_object_set_new(o, "rounds", json_integer(c->rounds));
    json_object_set_new(o, "method", c->method ? json_string(c->method) : json_null());
    for (int i = 0; i < c->ngpus_sel; i++)
        json_array_append_new(gpus, json_integer(c->gpus_sel[i]));
    json_object_set_new(o, "gpus", gpus);
    return o;
}

void gq_cli_journal_id(gq_journal_id *id, const char *cmd, const gq_common *c, const gq_topo *topo,
                       json_t *opts)
{
    *id = (gq_journal_id){.command = cmd,
                          .version = gq_version,
                          .git = gq_git_rev,
                          .options = opts,
                          .topo = topo,
                          .sim = c ? c->sim : NULL};
}

/* The last journal_doc read a journal whose last line was unfinished. */
static bool journal_cut;

/* A journal as a document: its header's options and machine, its records;
 * complete when the run marked its end. */
static int journal_doc(const char *path, json_t **root, gq_recordset *rs, gq_err *err)
{
    json_t *h = gq_journal_header(path, err);
    gq_recordset tmp = {0};
    gq_topo *topo = calloc(1, sizeof *topo);
    int rc = h ? GQ_OK : GQ_E_USAGE;
    gq_journal_head jh;
    gq_journal_head_read(h, &jh);
    if (rc == GQ_OK && jh.command && !strcmp(jh.command, "stress"))
        rc =
            gq_err_set(err, GQ_E_USAGE,
                       "'%s' is the journal of gpuqual stress: telemetry samples, no measurements to report; "
                       "give the document of its run (stress --json FILE)",
                       path);
    if (rc == GQ_OK && !topo)
        rc = gq_err_set(err, GQ_E_NOMEM, "out of memory");
    json_t *t = jh.topology;
    if (rc == GQ_OK && t && gq_topo_from_json(t, topo, err))
        rc = gq_err_prefix(err, "journal '%s'", path);
    gq_journal_info info = {0};
    if (rc == GQ_OK)
        rc = gq_journal_read_info(path, rs ? rs : &tmp, &info, err);
    journal_cut = rc == GQ_OK && info.truncated;
    if (rc == GQ_OK) {
        gq_doc d = {.kind = "run",
                    .version = jh.version,
                    .git = jh.git,
                    .options = jh.options,
                    .topo = t ? topo : NULL,
                    .records = rs ? rs : &tmp,
                    .simulated = jh.simulated,
                    .incomplete = !info.complete};
        *root = gq_doc_to_json(&d);
        if (!*root)
            rc = gq_err_set(err, GQ_E_NOMEM, "out of memory");
        else
            json_object_set(*root, "run_id", jh.run_id);
    }
    gq_records_free(&tmp);
    free(topo);
    json_decref(h);
    return rc;
}

static int doc_load(const char *path, json_t **root, gq_recordset *rs, gq_err *err)
{
    struct stat st;
    *root = NULL;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        char p[PATH_MAX + 32];
        snprintf(p, sizeof p, "%s/card.json", path);
        if (access(p, F_OK) == 0)
            return gq_doc_load(p, root, rs, err);
        snprintf(p, sizeof p, "%s/journal.jsonl", path);
        if (access(p, F_OK) == 0)
            return journal_doc(p, root, rs, err);
        return gq_err_set(err, GQ_E_USAGE,
                          "'%s' is a directory without card.json or journal.jsonl; expected a "
                          "gpuqual document, a journal or a card directory",
                          path);
    }
    /* refused from its size before a byte is read (the sniff reads a line) */
    int rc = gq_infile_check_size(path, "a gpuqual document or journal", GQ_INFILE_DOC_MAX, err);
    if (rc)
        return rc;
    if (gq_journal_sniff(path))
        return journal_doc(path, root, rs, err);
    return gq_doc_load(path, root, rs, err);
}

/* Every "from" in err's message replaced by "to" (the spool's name by the user's). */
static void msg_rename(gq_err *err, const char *from, const char *to)
{
    char out[sizeof err->msg];
    size_t n = 0, fl = strlen(from), tl = strlen(to);
    for (const char *s = err->msg; *s && n + 1 < sizeof out;) {
        if (!strncmp(s, from, fl)) {
            size_t k = tl < sizeof out - 1 - n ? tl : sizeof out - 1 - n;
            memcpy(out + n, to, k);
            n += k;
            s += fl;
        } else
            out[n++] = *s++;
    }
    out[n] = 0;
    memcpy(err->msg, out, n + 1);
}

/* The most a stream (a pipe, a FIFO, stdin) may hold: the limit of a file. */
#define SPOOL_MAX ((size_t)GQ_INFILE_DOC_MAX)

/* A stream read once into an unlinked temporary file, then loaded from there
 * by load (which may open it several times: a journal is sniffed, then read).
 * Reading stops early when the first byte that is not white space is not '{',
 * since neither a document nor a journal can start that way (so /dev/zero is
 * refused at once). Messages name the stream as the user gave it. */
static int spooled(const char *path, const char *name,
                   int (*load)(const char *, json_t **, gq_recordset *, gq_err *), json_t **root,
                   gq_recordset *rs, gq_err *err)
{
    bool is_stdin = !strcmp(path, "-");
    FILE *in = is_stdin ? stdin : fopen(path, "r"); /* a FIFO waits here for its writer */
    if (!in && gq_interrupt_requested())
        return gq_err_set(err, GQ_E_INTR, "reading '%s' was interrupted (it had no writer yet)", name);
    if (!in)
        return gq_err_set(err, GQ_E_IO, "cannot read '%s': %s", name, strerror(errno));
    FILE *t = tmpfile();
    if (!t) {
        int e = errno;
        if (!is_stdin)
            fclose(in);
        return gq_err_set(err, GQ_E_IO, "cannot read '%s': no temporary file to hold it: %s", name,
                          strerror(e));
    }
    char buf[65536];
    size_t n, total = 0;
    bool seen = false, bad = false;
    while (!bad && !gq_interrupt_requested() && (n = fread(buf, 1, sizeof buf, in)) > 0) {
        for (size_t i = 0; i < n && !seen; i++)
            if (buf[i] != ' ' && buf[i] != '\t' && buf[i] != '\r' && buf[i] != '\n') {
                seen = true;
                bad = buf[i] != '{';
            }
        if (fwrite(buf, 1, n, t) != n || (total += n) > SPOOL_MAX)
            break;
    }
    int rerr = ferror(in) ? errno : 0, werr = ferror(t) || fflush(t) ? errno : 0;
    if (!is_stdin)
        fclose(in);
    int rc;
    if (gq_interrupt_requested())
        rc = gq_err_set(err, GQ_E_INTR, "reading '%s' was interrupted", name);
    else if (rerr)
        rc = gq_err_set(err, GQ_E_IO, "cannot read '%s': %s", name, strerror(rerr));
    else if (werr)
        rc = gq_err_set(err, GQ_E_IO, "cannot read '%s': writing its temporary copy failed: %s", name,
                        strerror(werr));
    else if (total > SPOOL_MAX)
        rc = gq_err_set(
            err, GQ_E_USAGE,
            "'%s' holds more than %s, the limit for a gpuqual document or journal; is it the right "
            "file?",
            name, GQ_INFILE_DOC_MAX_TEXT);
    else {
        char sp[64];
        snprintf(sp, sizeof sp, "/proc/self/fd/%d", fileno(t));
        if ((rc = load(sp, root, rs, err)))
            msg_rename(err, sp, name);
    }
    fclose(t);
    return rc;
}

/* A path to read as a stream: "-" (stdin), or what is neither a regular file nor a directory. */
static bool is_stream(const char *path)
{
    struct stat st;
    return !strcmp(path, "-") || (stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode));
}

int gq_cli_doc_load(const char *path, json_t **root, gq_recordset *rs, gq_err *err)
{
    *root = NULL;
    journal_cut = false;
    int rc = is_stream(path) ? spooled(path, strcmp(path, "-") ? path : "<stdin>", doc_load, root, rs, err)
                             : doc_load(path, root, rs, err);
    if (!rc && journal_cut)
        gq_cli_warn("%s: the journal's last line was unfinished (cut off mid-write) and is left out; %d "
                    "measurement%s read",
                    strcmp(path, "-") ? path : "<stdin>", rs ? rs->n : 0, rs && rs->n == 1 ? "" : "s");
    return rc;
}

int gq_cli_doc_input(const char *path, json_t **root, gq_recordset *rs, gq_err *err)
{
    *root = NULL;
    if (!strcmp(path, "-"))
        return spooled(path, "<stdin>", gq_doc_load, root, rs, err);
    return gq_doc_load(path, root, rs, err);
}
