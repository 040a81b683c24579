/* The journal: every finished measurement is appended as one JSON line and
 * flushed (fflush + fsync) at once, so Ctrl-C or a crash loses nothing that was
 * finished. Reading tolerates a truncated last line (a crash mid-write): it is
 * skipped and reported through *truncated.
 *
 * Line format: {"journal":"gpuqual","schema_version":N, "record":{...}} with
 * the record in the same JSON form as in saved documents (render/json.h).
 */
#ifndef GQ_CORE_JOURNAL_H
#define GQ_CORE_JOURNAL_H

#include <stdbool.h>
#include <stdio.h>

#include "core/record.h"

typedef struct gq_journal {
    FILE *f;
    char path[1024];
    int written;
} gq_journal;

/* Open for append (creating it). path NULL: a fresh file under $TMPDIR (or
 * /tmp) named gpuqual-journal-<time>-<pid>.jsonl; j->path says where. */
int gq_journal_open(gq_journal *j, const char *path, gq_err *err);
int gq_journal_append(gq_journal *j, const gq_record *r, gq_err *err);
void gq_journal_close(gq_journal *j);

/* Read every complete record of a journal into *out. *truncated (may be NULL)
 * is set when the last line was cut short and skipped. A line that is complete
 * but not a gpuqual record is an error naming its line number. */
int gq_journal_read(const char *path, gq_recordset *out, bool *truncated, gq_err *err);

#endif
