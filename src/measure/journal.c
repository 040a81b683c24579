#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "core/infile.h"
#include "measure/journal.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/interrupt.h"
#include "core/outfile.h"
#include "core/runid.h"
#include "measure/record_json.h"
#include "topo/snapshot.h"

#define MAGIC "gpuqual-journal"

/* The fields of the header that must match to resume: the machine and the
 * options that shape a figure. */
static const char *const identity_keys[][2] = {
    {"", "command"},       {"machine", "hostname"}, {"machine", "driver"}, {"machine", "simulated"},
    {"machine", "sim"},    {"machine", "gpus"},     {"options", "tests"},  {"options", "buffer_size"},
    {"options", "rounds"}, {"options", "method"},   {"options", "gpus"},   {"options", "level"},
    {"options", "card"}, /* the card's own options: they shape its plan */
    {"", "layout"},      /* how items are numbered: another layout's numbers name other measurements */
};

static json_t *machine_json(const gq_journal_id *id)
{
    json_t *m = json_object(), *gpus = json_array();
    const gq_topo *t = id->topo;
    json_object_set_new(m, "hostname", t ? json_string(t->hostname) : json_null());
    json_object_set_new(m, "driver",
                        t && t->driver_version[0] ? json_string(t->driver_version) : json_null());
    json_object_set_new(m, "simulated", json_boolean(t ? t->simulated : id->sim != NULL));
    json_object_set_new(m, "sim", id->sim ? json_string(id->sim) : json_null());
    for (int i = 0; t && i < t->ngpu; i++) {
        json_t *g = json_object();
        json_object_set_new(g, "index", json_integer(t->gpu[i].index));
        json_object_set_new(g, "uuid", json_string(t->gpu[i].uuid));
        json_object_set_new(g, "name", json_string(t->gpu[i].name));
        json_array_append_new(gpus, g);
    }
    json_object_set_new(m, "gpus", gpus);
    return m;
}

static json_t *header_json(const gq_journal_id *id, const char *run_id)
{
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    char started[32];
    strftime(started, sizeof started, "%Y-%m-%dT%H:%M:%SZ", &tm);
    json_t *h = json_object();
    json_object_set_new(h, "magic", json_string(MAGIC));
    json_object_set_new(h, "run_id", json_string(run_id));
    json_object_set_new(h, "version", json_string(id->version ? id->version : ""));
    json_object_set_new(h, "git", json_string(id->git ? id->git : ""));
    json_object_set_new(h, "started", json_string(started));
    json_object_set_new(h, "command", json_string(id->command ? id->command : ""));
    if (id->layout)
        json_object_set_new(h, "layout", json_string(id->layout));
    json_object_set_new(h, "options", id->options ? json_deep_copy(id->options) : json_object());
    json_object_set_new(h, "machine", machine_json(id));
    /* the whole machine, so that report can read a journal as a document */
    json_t *t = id->topo ? gq_topo_to_json(id->topo) : NULL;
    if (t)
        json_object_set_new(h, "topology", t);
    return h;
}

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int write_failed(gq_journal *j, int e, gq_err *err)
{
    return gq_err_set(err, GQ_E_FAIL,
                      "cannot write journal '%s': %s; the run stopped, what was written is kept", j->path,
                      strerror(e));
}

/* fsync what was flushed since the last one (on a file; a device or a pipe
 * is never synced). A failure is kept and reported by the next write. */
static int sync_now(gq_journal *j)
{
    if (j->in_place || !j->dirty || !j->f)
        return GQ_OK;
    j->dirty = false;
    j->synced_at = mono_s();
    j->syncs++;
    if (fsync(fileno(j->f)) != 0) {
        j->sync_errno = errno ? errno : EIO;
        return GQ_E_FAIL;
    }
    return GQ_OK;
}

/* One line, written and flushed at once: from then on it is in the kernel,
 * and a kill -9 of gpuqual loses nothing. The fsync, for a power loss, is
 * grouped: sync asks for it now (the header, the end of a step), else it
 * comes when GQ_JOURNAL_SYNC_S has passed since the last one. */
static int put_line(gq_journal *j, json_t *root, bool sync, gq_err *err)
{
    if (j->sync_errno)
        return write_failed(j, j->sync_errno, err);
    char *line = json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER);
    if (!line)
        return gq_err_set(err, GQ_E_NOMEM, "journal: out of memory");
    int bad = fputs(line, j->f) == EOF || fputc('\n', j->f) == EOF || fflush(j->f) != 0;
    int e = errno;
    free(line);
    if (bad)
        return write_failed(j, e, err);
    j->dirty = true;
    if ((sync || mono_s() - j->synced_at >= GQ_JOURNAL_SYNC_S) && sync_now(j))
        return write_failed(j, j->sync_errno, err);
    return GQ_OK;
}

int gq_journal_sync(gq_journal *j, gq_err *err)
{
    if (!j || !j->f)
        return GQ_OK;
    if (j->sync_errno || sync_now(j))
        return write_failed(j, j->sync_errno, err);
    return GQ_OK;
}

static json_t *line_root(gq_journal *j)
{
    json_t *root = json_object();
    json_object_set_new(root, "journal", json_string("gpuqual"));
    json_object_set_new(root, "schema_version", json_integer(GQ_SCHEMA_VERSION));
    if (j)
        json_object_set_new(root, "run_id", json_string(j->run_id));
    return root;
}

/* What the first line of a file says. */
typedef enum { FIRST_EMPTY, FIRST_HEADER, FIRST_V1, FIRST_OTHER } first_kind;

static first_kind first_line(FILE *f, json_t **header)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t len = getline(&line, &cap, f);
    first_kind k = FIRST_OTHER;
    if (len <= 0) {
        free(line);
        return FIRST_EMPTY;
    }
    json_t *root = json_loadb(line, (size_t)len, 0, NULL);
    free(line);
    const char *tool = json_string_value(json_object_get(root, "journal"));
    json_t *h = json_object_get(root, "header");
    if (tool && !strcmp(tool, "gpuqual") && json_is_integer(json_object_get(root, "schema_version"))) {
        const char *magic = json_string_value(json_object_get(h, "magic"));
        if (json_is_object(h) && magic && !strcmp(magic, MAGIC) &&
            json_is_string(json_object_get(h, "run_id"))) {
            k = FIRST_HEADER;
            if (header)
                *header = json_incref(h);
        } else if (json_is_object(json_object_get(root, "record"))) {
            k = FIRST_V1;
        }
    }
    json_decref(root);
    return k;
}

json_t *gq_journal_header(const char *path, gq_err *err)
{
    if (gq_infile_check_size(path, "a journal file (JSON lines)", GQ_INFILE_DOC_MAX, err))
        return NULL;
    FILE *f = fopen(path, "r");
    if (!f) {
        gq_err_set(err, GQ_E_IO, "cannot read journal '%s': %s", path, strerror(errno));
        return NULL;
    }
    json_t *h = NULL;
    first_kind k = first_line(f, &h);
    fclose(f);
    if (k == FIRST_V1)
        gq_err_set(err, GQ_E_UNSUPP, "journal '%s' was written by an earlier gpuqual (schema 1, no header)",
                   path);
    else if (k != FIRST_HEADER)
        gq_err_set(err, GQ_E_USAGE, "'%s' is not a gpuqual journal (its first line is not a journal header)",
                   path);
    return h;
}

bool gq_journal_sniff(const char *path)
{
    if (gq_infile_check_size(path, "a journal", GQ_INFILE_DOC_MAX, NULL))
        return false; /* the reader that follows names why */
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    first_kind k = first_line(f, NULL);
    fclose(f);
    return k == FIRST_HEADER || k == FIRST_V1;
}

/* Refuse a file that holds anything; it is never written. */
static int refuse_existing(const char *path, gq_err *err)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return gq_err_set(err, GQ_E_IO, "cannot read journal '%s': %s", path, strerror(errno));
    json_t *h = NULL;
    first_kind k = first_line(f, &h);
    fclose(f);
    int rc = GQ_OK;
    const char *cmd = json_string_value(json_object_get(h, "command"));
    if (k == FIRST_HEADER && cmd && *cmd && strcmp(cmd, "run") && strcmp(cmd, "card"))
        rc = gq_err_set(err, GQ_E_USAGE, "journal '%s' holds a '%s' run (%s); give a new file name", path,
                        cmd, json_string_value(json_object_get(h, "run_id")));
    else if (k == FIRST_HEADER)
        rc = gq_err_set(err, GQ_E_USAGE,
                        "journal '%s' holds run %s; continue it with --resume %s, or give a new file name",
                        path, json_string_value(json_object_get(h, "run_id")), path);
    else if (k == FIRST_V1)
        rc = gq_err_set(
            err, GQ_E_USAGE,
            "journal '%s' holds a run of an earlier gpuqual, which cannot be continued; give a new "
            "file name",
            path);
    else if (k == FIRST_OTHER)
        rc = gq_err_set(err, GQ_E_USAGE,
                        "'%s' is not a gpuqual journal and was left unchanged; give a new file name", path);
    json_decref(h);
    return rc;
}

static int auto_path(gq_journal *j, gq_err *err)
{
    const char *xdg = getenv("XDG_STATE_HOME"), *tmp = getenv("TMPDIR");
    char dir[900];
    struct stat st;
    if (xdg && xdg[0] == '/' && stat(xdg, &st) == 0 && S_ISDIR(st.st_mode)) {
        snprintf(dir, sizeof dir, "%s/gpuqual", xdg);
        if (mkdir(dir, 0700) != 0 && errno != EEXIST)
            snprintf(dir, sizeof dir, "%s", tmp && tmp[0] ? tmp : "/tmp");
    } else {
        snprintf(dir, sizeof dir, "%s", tmp && tmp[0] ? tmp : "/tmp");
    }
    snprintf(j->path, sizeof j->path, "%s/gpuqual-journal-XXXXXX.jsonl", dir);
    int fd = mkstemps(j->path, 6); /* O_EXCL, mode 0600 */
    if (fd < 0)
        return gq_err_set(err, GQ_E_IO, "cannot create a journal in '%s': %s", dir, strerror(errno));
    j->f = fdopen(fd, "a");
    if (!j->f) {
        close(fd);
        unlink(j->path); /* the empty file just made, which no message names */
        return gq_err_set(err, GQ_E_NOMEM, "journal: out of memory");
    }
    return GQ_OK;
}

static int open_named(gq_journal *j, const char *path, gq_err *err)
{
    int rc = gq_outfile_check(path, err); /* links, directories, the directory */
    if (rc)
        return gq_err_prefix(err, "--journal");
    snprintf(j->path, sizeof j->path, "%s", path);
    struct stat st;
    j->in_place = gq_outfile_is_device(path);
    if (!j->in_place && lstat(path, &st) == 0 && st.st_size > 0)
        return refuse_existing(path, err);
    int flags = j->in_place ? O_WRONLY | O_NOCTTY : O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW;
    int fd = open(path, flags | O_CLOEXEC, 0666);
    if (fd < 0)
        return gq_err_set(err, GQ_E_IO, "cannot open journal '%s': %s", path, strerror(errno));
    if (!j->in_place && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > 0)) {
        close(fd); /* replaced between the check and the open */
        return gq_err_set(err, GQ_E_IO, "journal '%s' changed while opening; give a new file name", path);
    }
    j->f = fdopen(fd, "a");
    if (!j->f) {
        close(fd);
        return gq_err_set(err, GQ_E_NOMEM, "journal: out of memory");
    }
    return GQ_OK;
}

int gq_journal_open(gq_journal *j, const char *path, const gq_journal_id *id, gq_err *err)
{
    static const gq_journal_id none = {0};
    memset(j, 0, sizeof *j);
    if (!id)
        id = &none;
    j->item = -1;
    int rc = path && path[0] ? open_named(j, path, err) : auto_path(j, err);
    if (rc) {
        j->f = NULL;
        return rc;
    }
    if (id->run_id)
        snprintf(j->run_id, sizeof j->run_id, "%s", id->run_id);
    else
        snprintf(j->run_id, sizeof j->run_id, "%s",
                 gq_run_id_current()); /* the documents name the same run */
    json_t *root = line_root(NULL);
    json_object_set_new(root, "header", header_json(id, j->run_id));
    rc = put_line(j, root, true, err);
    json_decref(root);
    if (rc)
        gq_journal_close(j);
    return rc;
}

/* A crash mid-write leaves a line without its newline. Appending after it
 * would glue the next record to the fragment, so the fragment (never a
 * finished record) is cut off before appending; only ever in a journal whose
 * header was recognised. */
static int cut_partial_tail(int fd, const char *path, gq_err *err)
{
    off_t size = lseek(fd, 0, SEEK_END), pos = size;
    char ch;
    while (pos > 0 && pread(fd, &ch, 1, pos - 1) == 1 && ch != '\n')
        pos--;
    if (pos < size && ftruncate(fd, pos) != 0)
        return gq_err_set(err, GQ_E_IO, "journal '%s': cannot cut its unfinished last line: %s", path,
                          strerror(errno));
    return GQ_OK;
}

/* Where two objects first differ, descending while both sides are objects:
 * *a and *b become the differing values (either may be NULL: absent) and
 * where gains ".key" for each level (cut to cap). Keys of *a first, then
 * those only *b has. */
static void first_difference(json_t **a, json_t **b, char *where, size_t cap)
{
    while (json_is_object(*a) && json_is_object(*b)) {
        const char *k = NULL, *key;
        json_t *v;
        json_object_foreach(*a, key, v) if (!json_equal(v, json_object_get(*b, key)) && !k) k = key;
        json_object_foreach(*b, key, v) if (!json_object_get(*a, key) && !k) k = key;
        if (!k)
            return;
        size_t l = strlen(where);
        if (l + 1 < cap)
            snprintf(where + l, cap - l, ".%s", k);
        json_t *na = json_object_get(*a, k), *nb = json_object_get(*b, k);
        *a = na;
        *b = nb;
    }
}

static int compare_identity(const char *path, json_t *h, const gq_journal_id *id, gq_err *err)
{
    json_t *now = header_json(id, "");
    int rc = GQ_OK;
    const char *rid = json_string_value(json_object_get(h, "run_id"));
    if (id->run_id && rid && strcmp(rid, id->run_id)) {
        json_decref(now);
        return gq_err_set(err, GQ_E_USAGE,
                          "cannot resume '%s' line 1: its header is of run %.40s, but the card directory "
                          "names run %s; the journal belongs to another card, start a new one",
                          path, rid, id->run_id);
    }
    for (size_t i = 0; i < sizeof identity_keys / sizeof identity_keys[0] && !rc; i++) {
        const char *sec = identity_keys[i][0];
        json_t *a = json_object_get(sec[0] ? json_object_get(h, sec) : h, identity_keys[i][1]);
        json_t *b = json_object_get(sec[0] ? json_object_get(now, sec) : now, identity_keys[i][1]);
        if ((!a || json_is_null(a)) && (!b || json_is_null(b)))
            continue;
        if (a && b && json_equal(a, b))
            continue;
        char where[160];
        snprintf(where, sizeof where, "%s%s%s", sec, sec[0] ? "." : "", identity_keys[i][1]);
        first_difference(&a, &b, where, sizeof where);
        char *sa = a ? json_dumps(a, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
        char *sb = b ? json_dumps(b, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
        char qa[128], qb[128];
        gq_ellipsize(qa, sizeof qa, sa ? sa : "absent", 80);
        gq_ellipsize(qb, sizeof qb, sb ? sb : "absent", 80);
        if (!strcmp(identity_keys[i][1], "layout"))
            rc = gq_err_set(err, GQ_E_USAGE,
                            "cannot resume '%s' line 1: it was written by another gpuqual, whose journal "
                            "numbers the measurements differently (layout %s, this one's %s); start again "
                            "without --resume",
                            path, qa, qb);
        else {
            /* an option of the command: name it as it is given */
            char hint[80] = "";
            if (!strcmp(sec, "options") && strcmp(where, "options.card")) {
                const char *opt = strrchr(where, '.') + 1;
                snprintf(hint, sizeof hint, " (here --%s)", strcmp(opt, "tests") ? opt : "test");
                for (char *c = hint; *c; c++)
                    *c = *c == '_' ? '-' : *c;
            }
            rc = gq_err_set(err, GQ_E_USAGE,
                            "cannot resume '%s' line 1: its %s is %s, this run's is %s; resume with the "
                            "same options%s on the same machine, or start a new journal",
                            path, where, qa, qb, hint);
        }
        free(sa);
        free(sb);
    }
    /* another revision may measure or number differently: only when asked */
    const char *ver = json_string_value(json_object_get(h, "version"));
    const char *git = json_string_value(json_object_get(h, "git"));
    const char *nver = id->version ? id->version : "", *ngit = id->git ? id->git : "";
    if (!rc && !id->other_revision && (!ver || !git || strcmp(ver, nver) || strcmp(git, ngit))) {
        char qa[64], qb[64];
        rc = gq_err_set(err, GQ_E_USAGE,
                        "cannot resume '%s' line 1: it was written by gpuqual %s (git %s), this is %s (git "
                        "%s); give --resume-other-revision to continue it anyway, or start a new journal",
                        path, gq_ellipsize(qa, sizeof qa, ver ? ver : "unknown", 40),
                        gq_ellipsize(qb, sizeof qb, git ? git : "unknown", 40), nver, ngit);
    }
    json_decref(now);
    return rc;
}

static int read_journal(const char *path, gq_recordset *out, int **items, json_t **steps,
                        gq_journal_info *info, gq_err *err);

int gq_journal_resume(gq_journal *j, const char *path, const gq_journal_id *id, gq_recordset *done,
                      int **done_item, gq_err *err)
{
    memset(j, 0, sizeof *j);
    j->item = -1;
    *done_item = NULL;
    struct stat st;
    if (lstat(path, &st) != 0)
        return gq_err_set(err, GQ_E_IO, "--resume: cannot read journal '%s': %s", path, strerror(errno));
    if (!S_ISREG(st.st_mode))
        return gq_err_set(err, GQ_E_IO,
                          "--resume: '%s' is not a regular file; give the journal of the run to continue",
                          path);
    json_t *h = gq_journal_header(path, err);
    if (!h)
        return gq_err_prefix(err, "--resume");
    int rc = compare_identity(path, h, id, err);
    if (!rc)
        snprintf(j->run_id, sizeof j->run_id, "%s", json_string_value(json_object_get(h, "run_id")));
    json_decref(h);
    json_t *steps = NULL;
    gq_journal_info info;
    if (rc || (rc = read_journal(path, done, done_item, &steps, &info, err)))
        return rc;
    j->done_steps = steps;
    j->tail_cut = info.truncated;
    int fd = open(path, O_RDWR | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        rc = gq_err_set(err, GQ_E_IO, "--resume: cannot open journal '%s': %s", path, strerror(errno));
    else if ((rc = cut_partial_tail(fd, path, err)) == GQ_OK) {
        snprintf(j->path, sizeof j->path, "%s", path);
        j->f = fdopen(fd, "a");
        if (!j->f)
            rc = gq_err_set(err, GQ_E_NOMEM, "journal: out of memory");
    }
    if (!rc) { /* where the resume begins: what was left unfinished before is measured again */
        json_t *st = json_pack("{s:s,s:s,s:i}", "step", "resume", "status", "started", "reused", done->n);
        rc = st ? gq_journal_event(j, "step", st, err) : gq_err_set(err, GQ_E_NOMEM, "out of memory");
        json_decref(st);
        if (!rc)
            j->written = 0;
    }
    if (rc) {
        if (fd >= 0 && !j->f)
            close(fd);
        gq_journal_close(j);
    }
    return rc;
}

int gq_journal_event(gq_journal *j, const char *key, json_t *obj, gq_err *err)
{
    if (!j || !j->f)
        return gq_err_set(err, GQ_E_FAIL, "journal is not open");
    json_t *root = line_root(j);
    if (!strcmp(key, "record") && j->item >= 0)
        json_object_set_new(root, "item", json_integer(j->item));
    json_object_set(root, key, obj);
    /* a step other than an item's (a card step, the stress run, the run's
     * end, a resume) is synced at once; records, samples and items' marks
     * with the next sync */
    const char *name = !strcmp(key, "step") ? json_string_value(json_object_get(obj, "step")) : NULL;
    int rc = put_line(j, root, name && strcmp(name, "item"), err);
    json_decref(root);
    if (!rc)
        j->written++;
    return rc;
}

int gq_journal_item_done(gq_journal *j, gq_err *err)
{
    if (!j)
        return gq_err_set(err, GQ_E_FAIL, "journal is not open");
    json_t *st = json_pack("{s:s, s:s, s:i}", "step", "item", "status", "done", "item", j->item);
    int rc = st ? gq_journal_event(j, "step", st, err) : gq_err_set(err, GQ_E_NOMEM, "out of memory");
    json_decref(st);
    return rc;
}

int gq_journal_append(gq_journal *j, const gq_record *r, gq_err *err)
{
    json_t *rec = gq_record_to_json(r);
    if (!rec)
        return gq_err_set(err, GQ_E_NOMEM, "journal: out of memory");
    int rc = gq_journal_event(j, "record", rec, err);
    json_decref(rec);
    return rc;
}

void gq_journal_close(gq_journal *j)
{
    if (j && j->f) {
        (void)sync_now(j); /* what the last step left unsynced */
        fclose(j->f);
        j->f = NULL;
    }
    if (j) {
        json_decref(j->done_steps);
        j->done_steps = NULL;
    }
}

/* What the reader keeps: records, each record's item, which items were
 * marked done, and what makes the journal one run (the header's run id, the
 * records seen). */
typedef struct reader {
    const char *path;
    gq_recordset *out;
    int *item; /* per record of out */
    int icap;
    bool *done; /* per item index */
    int dcap;
    json_t *steps;   /* resume: the last finished line of each named step, or NULL */
    char run_id[64]; /* the header's; "" for a schema-1 journal without one */
    bool header;     /* line 1 was a header */
    bool complete;   /* a "run" step marked done: the run ended, every item measured */
    /* the records seen, as (hash of item and record, line): a repeated line is
     * a measurement counted twice */
    unsigned long long *seen;
    int *seen_line;
    size_t seen_cap, nseen;
} reader;

static int grow_done(reader *rd, int i)
{
    if (i < rd->dcap)
        return GQ_OK;
    int cap = i * 2 + 16;
    bool *d = realloc(rd->done, (size_t)cap * sizeof *d);
    if (!d)
        return GQ_E_NOMEM;
    memset(d + rd->dcap, 0, (size_t)(cap - rd->dcap) * sizeof *d);
    rd->done = d;
    rd->dcap = cap;
    return GQ_OK;
}

static int mark_done(reader *rd, json_t *step)
{
    json_t *k = json_object_get(step, "item");
    const char *status = json_string_value(json_object_get(step, "status"));
    const char *name = json_string_value(json_object_get(step, "step"));
    if (name && !strcmp(name, "run") && status && !strcmp(status, "done"))
        rd->complete = true;
    if (rd->steps && name && strcmp(name, "item") && status && !strcmp(status, "done"))
        return json_object_set(rd->steps, name, step) ? GQ_E_NOMEM : GQ_OK;
    if (!json_is_integer(k) || !status || strcmp(status, "done") || json_integer_value(k) < 0 ||
        json_integer_value(k) > 10000000)
        return GQ_OK;
    int i = (int)json_integer_value(k);
    if (grow_done(rd, i))
        return GQ_E_NOMEM;
    rd->done[i] = true;
    return GQ_OK;
}

/* A resume starts here: the records of items it found unfinished were an
 * attempt cut off by the crash or Ctrl-C, and the resumed run measures those
 * items again, so they are no measurements of the run. */
static void drop_unfinished(reader *rd)
{
    gq_recordset *rs = rd->out;
    int n = 0;
    for (int i = 0; i < rs->n; i++) {
        int k = rd->item[i];
        if (k >= 0 && (k >= rd->dcap || !rd->done[k]))
            continue;
        rd->item[n] = k;
        rs->v[n++] = rs->v[i];
    }
    rs->n = n;
}

static int keep_item(reader *rd, json_t *root)
{
    json_t *k = json_object_get(root, "item");
    if (rd->out->n > rd->icap) {
        int cap = rd->out->n * 2 + 16;
        int *v = realloc(rd->item, (size_t)cap * sizeof *v);
        if (!v)
            return GQ_E_NOMEM;
        rd->item = v;
        rd->icap = cap;
    }
    rd->item[rd->out->n - 1] =
        json_is_integer(k) && json_integer_value(k) >= 0 && json_integer_value(k) <= 10000000
            ? (int)json_integer_value(k)
            : -1;
    return GQ_OK;
}

/* FNV-1a of the item number and the record as written (its keys sorted): two
 * lines that hash alike hold the same measurement, to the last digit, which
 * two real measurements never do. */
static unsigned long long record_hash(json_t *root, json_t *rec)
{
    char *s = json_dumps(rec, JSON_COMPACT | JSON_SORT_KEYS);
    if (!s)
        return 0;
    unsigned long long h = 1469598103934665603ull;
    json_t *k = json_object_get(root, "item");
    long long item = json_is_integer(k) ? (long long)json_integer_value(k) : -1;
    for (int b = 0; b < 8; b++) {
        h ^= (unsigned char)(item >> (8 * b));
        h *= 1099511628211ull;
    }
    for (const char *c = s; *c; c++) {
        h ^= (unsigned char)*c;
        h *= 1099511628211ull;
    }
    free(s);
    return h ? h : 1;
}

/* The line where the same record was seen first, 0 if none (and remember it). */
static int seen_before(reader *rd, unsigned long long h, int lineno, int *first)
{
    *first = 0;
    if (rd->nseen * 2 >= rd->seen_cap) {
        size_t cap = rd->seen_cap ? rd->seen_cap * 2 : 1024;
        unsigned long long *v = calloc(cap, sizeof *v);
        int *l = calloc(cap, sizeof *l);
        if (!v || !l) {
            free(v);
            free(l);
            return GQ_E_NOMEM;
        }
        for (size_t i = 0; i < rd->seen_cap; i++)
            if (rd->seen[i]) {
                size_t p = rd->seen[i] & (cap - 1);
                while (v[p])
                    p = (p + 1) & (cap - 1);
                v[p] = rd->seen[i];
                l[p] = rd->seen_line[i];
            }
        free(rd->seen);
        free(rd->seen_line);
        rd->seen = v;
        rd->seen_line = l;
        rd->seen_cap = cap;
    }
    size_t p = h & (rd->seen_cap - 1);
    while (rd->seen[p] && rd->seen[p] != h)
        p = (p + 1) & (rd->seen_cap - 1);
    if (rd->seen[p]) {
        *first = rd->seen_line[p];
        return GQ_OK;
    }
    rd->seen[p] = h;
    rd->seen_line[p] = lineno;
    rd->nseen++;
    return GQ_OK;
}

/* Every line after the header belongs to the header's run. */
static int same_run(reader *rd, int lineno, json_t *root, gq_err *err)
{
    if (json_is_object(json_object_get(root, "header")))
        return lineno == 1
                   ? GQ_OK
                   : gq_err_set(
                         err, GQ_E_USAGE,
                         "journal '%s' line %d: a second header (run %.40s); a journal "
                         "holds one run, give each run its own journal",
                         rd->path, lineno,
                         json_string_value(json_object_get(json_object_get(root, "header"), "run_id"))
                             ? json_string_value(json_object_get(json_object_get(root, "header"), "run_id"))
                             : "unnamed");
    if (!rd->header)
        return GQ_OK; /* schema 1: no header, no run to hold the lines to */
    const char *rid = json_string_value(json_object_get(root, "run_id"));
    if (!rid)
        return gq_err_set(err, GQ_E_USAGE,
                          "journal '%s' line %d: no run_id; every line of a journal names the run "
                          "of its header (%s)",
                          rd->path, lineno, rd->run_id);
    if (strcmp(rid, rd->run_id))
        return gq_err_set(err, GQ_E_USAGE,
                          "journal '%s' line %d: a line of run %.40s in the journal of run %s; a journal "
                          "holds one run, give each run its own journal",
                          rd->path, lineno, rid, rd->run_id);
    return GQ_OK;
}

/* One complete line of a journal: a record goes to out; a header, a step or
 * a sample is skipped (a step marks its item done). */
static int read_line(int lineno, json_t *root, reader *rd, gq_err *err)
{
    const char *path = rd->path;
    const char *tool = json_string_value(json_object_get(root, "journal"));
    json_t *sv = json_object_get(root, "schema_version");
    json_t *rec = json_object_get(root, "record");
    if (!tool || strcmp(tool, "gpuqual") != 0 || !json_is_integer(sv))
        return gq_err_set(err, GQ_E_USAGE, "journal '%s' line %d is not a gpuqual journal line", path,
                          lineno);
    if (json_integer_value(sv) > GQ_SCHEMA_VERSION)
        return gq_err_set(err, GQ_E_USAGE,
                          "journal '%s' line %d has schema_version %lld; this gpuqual reads up to %d", path,
                          lineno, (long long)json_integer_value(sv), GQ_SCHEMA_VERSION);
    json_t *h = json_object_get(root, "header");
    if (lineno == 1 && json_is_object(h)) {
        const char *rid = json_string_value(json_object_get(h, "run_id"));
        rd->header = rid != NULL;
        snprintf(rd->run_id, sizeof rd->run_id, "%s", rid ? rid : "");
    }
    int rc = same_run(rd, lineno, root, err);
    if (rc)
        return rc;
    if (!json_is_object(rec)) {
        json_t *step = json_object_get(root, "step");
        if (json_is_object(step)) {
            const char *name = json_string_value(json_object_get(step, "step"));
            if (name && !strcmp(name, "resume"))
                drop_unfinished(rd);
            return mark_done(rd, step) ? gq_err_set(err, GQ_E_NOMEM, "journal: out of memory") : GQ_OK;
        }
        if (json_is_object(h) || json_object_get(root, "sample"))
            return GQ_OK;
        return gq_err_set(err, GQ_E_USAGE, "journal '%s' line %d is not a gpuqual journal line", path,
                          lineno);
    }
    int first = 0;
    if (seen_before(rd, record_hash(root, rec), lineno, &first))
        return gq_err_set(err, GQ_E_NOMEM, "journal: out of memory");
    if (first)
        return gq_err_set(err, GQ_E_USAGE,
                          "journal '%s' line %d: the same measurement as line %d; a journal holds each "
                          "measurement once",
                          path, lineno, first);
    gq_record r;
    gq_err rerr = {0};
    if (gq_record_from_json(rec, &r, &rerr))
        return gq_err_set(err, GQ_E_USAGE, "journal '%s' line %d: %s", path, lineno, rerr.msg);
    if (gq_records_push(rd->out, &r) || keep_item(rd, root))
        return gq_err_set(err, GQ_E_NOMEM, "journal: out of memory");
    return GQ_OK;
}

static int read_lines(FILE *f, reader *rd, bool *truncated, gq_err *err)
{
    int rc = GQ_OK;
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int lineno = 0;
    while (!rc && (len = getline(&line, &cap, f)) > 0) {
        lineno++;
        if (gq_interrupt_requested()) { /* SIGTERM or Ctrl-C: stop reading now */
            rc = gq_err_set(err, GQ_E_INTR, "reading journal '%s' was interrupted", rd->path);
            break;
        }
        bool complete = line[len - 1] == '\n';
        json_error_t je;
        json_t *root = json_loadb(line, (size_t)len, 0, &je);
        if (!root) {
            if (!complete) { /* the crash case: an unfinished last line */
                if (truncated)
                    *truncated = true;
                break;
            }
            if (len != 1) /* not a blank line */
                rc = gq_err_set(err, GQ_E_USAGE, "journal '%s' line %d is not JSON: %s", rd->path, lineno,
                                je.text);
            continue;
        }
        rc = read_line(lineno, root, rd, err);
        json_decref(root);
    }
    free(line);
    return rc;
}

/* Keep only the records of items marked done, none cut short, failed,
 * contaminated (measured while something else used the GPU) or refused for
 * overlap (concurrent windows that overlapped too little for a sum: a failure
 * of the attempt, not a finding about the machine, so it is measured again,
 * as it was once a card on one H200 re-used one and kept its WARN). */
static void keep_finished(reader *rd)
{
    gq_recordset *rs = rd->out;
    int n = 0;
    for (int i = 0; i < rs->n; i++) {
        int k = rd->item[i];
        bool ok = k >= 0 && k < rd->dcap && rd->done[k];
        for (int x = 0; ok && x < rs->n; x++)
            if (rd->item[x] == k && (rs->v[x].flags & GQ_JOURNAL_NOT_REUSABLE))
                ok = false;
        if (ok) {
            rd->item[n] = k;
            rs->v[n++] = rs->v[i];
        }
    }
    rs->n = n;
}

static int read_journal(const char *path, gq_recordset *out, int **items, json_t **steps,
                        gq_journal_info *info, gq_err *err)
{
    if (info)
        memset(info, 0, sizeof *info);
    int crc = gq_infile_check_size(path, "a journal file (JSON lines)", GQ_INFILE_DOC_MAX, err);
    if (crc)
        return gq_err_prefix(err, "journal");
    FILE *f = fopen(path, "r");
    if (!f)
        return gq_err_set(err, GQ_E_IO, "cannot read journal '%s': %s", path, strerror(errno));
    reader rd = {.path = path, .out = out, .steps = steps ? json_object() : NULL};
    int rc = steps && !rd.steps ? gq_err_set(err, GQ_E_NOMEM, "journal: out of memory")
                                : read_lines(f, &rd, info ? &info->truncated : NULL, err);
    fclose(f);
    if (!rc && info)
        info->complete = rd.complete;
    if (!rc && items) {
        if (!rd.item)
            rd.item = malloc(sizeof(int));
        keep_finished(&rd);
        *items = rd.item;
        rd.item = NULL;
    }
    free(rd.item);
    free(rd.done);
    free(rd.seen);
    free(rd.seen_line);
    if (steps && !rc)
        *steps = rd.steps;
    else
        json_decref(rd.steps);
    return rc;
}

int gq_journal_read_info(const char *path, gq_recordset *out, gq_journal_info *info, gq_err *err)
{
    return read_journal(path, out, NULL, NULL, info, err);
}

int gq_journal_read(const char *path, gq_recordset *out, bool *truncated, gq_err *err)
{
    gq_journal_info info;
    int rc = read_journal(path, out, NULL, NULL, &info, err);
    if (truncated)
        *truncated = info.truncated;
    return rc;
}
