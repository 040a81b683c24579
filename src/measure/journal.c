#define _POSIX_C_SOURCE 200809L
#include "core/infile.h"
#include "measure/journal.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "measure/record_json.h"

/* A crash mid-write leaves a line without its newline. Appending after it
 * would glue the next record to the fragment, so the fragment (never a
 * finished record) is cut off before appending. */
static int cut_partial_tail(FILE *f, const char *path, gq_err *err)
{
    if (fseek(f, 0, SEEK_END) != 0)
        return GQ_OK;
    long size = ftell(f);
    if (size <= 0)
        return GQ_OK;
    long pos = size;
    int ch = 0;
    if (fseek(f, pos - 1, SEEK_SET) == 0 && (ch = fgetc(f)) == '\n')
        return GQ_OK;
    while (pos > 0) {
        if (fseek(f, pos - 1, SEEK_SET) != 0)
            break;
        if (fgetc(f) == '\n')
            break;
        pos--;
    }
    fflush(f);
    if (ftruncate(fileno(f), pos) != 0)
        return gq_err_set(err, GQ_E_IO, "journal '%s': cannot cut its unfinished last line: %s", path,
                          strerror(errno));
    fseek(f, 0, SEEK_END);
    return GQ_OK;
}

int gq_journal_open(gq_journal *j, const char *path, gq_err *err)
{
    memset(j, 0, sizeof *j);
    if (path && path[0]) {
        snprintf(j->path, sizeof j->path, "%s", path);
    } else {
        const char *dir = getenv("TMPDIR");
        if (!dir || !dir[0])
            dir = "/tmp";
        time_t now = time(NULL);
        struct tm tm;
        gmtime_r(&now, &tm);
        char stamp[32];
        strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
        snprintf(j->path, sizeof j->path, "%s/gpuqual-journal-%s-%ld.jsonl", dir, stamp, (long)getpid());
    }
    j->f = fopen(j->path, "a+");
    if (!j->f)
        return gq_err_set(err, GQ_E_IO, "cannot open journal '%s': %s", j->path, strerror(errno));
    int rc = cut_partial_tail(j->f, j->path, err);
    if (rc) {
        fclose(j->f);
        j->f = NULL;
    }
    return rc;
}

int gq_journal_append(gq_journal *j, const gq_record *r, gq_err *err)
{
    if (!j || !j->f)
        return gq_err_set(err, GQ_E_IO, "journal is not open");
    int rc = GQ_OK;
    char *line = NULL;
    json_t *root = json_object();
    json_t *rec = gq_record_to_json(r);
    if (!root || !rec) {
        json_decref(rec);
        rc = gq_err_set(err, GQ_E_NOMEM, "journal: out of memory");
        goto out;
    }
    json_object_set_new(root, "journal", json_string("gpuqual"));
    json_object_set_new(root, "schema_version", json_integer(GQ_SCHEMA_VERSION));
    json_object_set_new(root, "record", rec);
    line = json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER);
    if (!line) {
        rc = gq_err_set(err, GQ_E_NOMEM, "journal: out of memory");
        goto out;
    }
    if (fputs(line, j->f) == EOF || fputc('\n', j->f) == EOF || fflush(j->f) != 0 ||
        fsync(fileno(j->f)) != 0) {
        rc = gq_err_set(err, GQ_E_IO, "cannot write journal '%s': %s", j->path, strerror(errno));
        goto out;
    }
    j->written++;
out:
    free(line);
    json_decref(root);
    return rc;
}

void gq_journal_close(gq_journal *j)
{
    if (j && j->f) {
        fclose(j->f);
        j->f = NULL;
    }
}

int gq_journal_read(const char *path, gq_recordset *out, bool *truncated, gq_err *err)
{
    if (truncated)
        *truncated = false;
    int crc = gq_infile_check(path, "a journal file (JSON lines)", err);
    if (crc)
        return gq_err_prefix(err, "journal");
    FILE *f = fopen(path, "r");
    if (!f)
        return gq_err_set(err, GQ_E_IO, "cannot read journal '%s': %s", path, strerror(errno));
    int rc = GQ_OK;
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int lineno = 0;
    json_t *root = NULL;
    while ((len = getline(&line, &cap, f)) > 0) {
        lineno++;
        bool complete = line[len - 1] == '\n';
        json_error_t je;
        root = json_loadb(line, (size_t)len, 0, &je);
        if (!root) {
            if (!complete) {
                /* the crash case: an unfinished last line */
                if (truncated)
                    *truncated = true;
                break;
            }
            if (len == 1)
                continue; /* blank line */
            rc = gq_err_set(err, GQ_E_USAGE, "journal '%s' line %d is not JSON: %s", path, lineno, je.text);
            goto out;
        }
        const char *tool = json_string_value(json_object_get(root, "journal"));
        json_t *sv = json_object_get(root, "schema_version");
        json_t *rec = json_object_get(root, "record");
        if (!tool || strcmp(tool, "gpuqual") != 0 || !json_is_integer(sv) || !json_is_object(rec)) {
            rc = gq_err_set(err, GQ_E_USAGE, "journal '%s' line %d is not a gpuqual journal record", path,
                            lineno);
            goto out;
        }
        if (json_integer_value(sv) > GQ_SCHEMA_VERSION) {
            rc = gq_err_set(err, GQ_E_USAGE,
                            "journal '%s' line %d has schema_version %lld; this gpuqual reads up to %d", path,
                            lineno, (long long)json_integer_value(sv), GQ_SCHEMA_VERSION);
            goto out;
        }
        gq_record r;
        gq_err rerr = {0};
        if (gq_record_from_json(rec, &r, &rerr)) {
            rc = gq_err_set(err, GQ_E_USAGE, "journal '%s' line %d: %s", path, lineno, rerr.msg);
            goto out;
        }
        if ((rc = gq_records_push(out, &r))) {
            gq_err_set(err, rc, "journal: out of memory");
            goto out;
        }
        json_decref(root);
        root = NULL;
    }
out:
    json_decref(root);
    free(line);
    fclose(f);
    return rc;
}
