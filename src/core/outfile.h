/* The one atomic output file.
 *
 * Writes go to a temporary name next to PATH, which commit flushes, fsyncs
 * and renames over PATH; abort (or a failed commit) removes it, so nothing
 * half-written is ever left looking complete. A device or a FIFO
 * (/dev/null, /dev/stdout, a named pipe) is written in place, since renaming
 * over it would replace the node; a directory is refused. "-" is stdout.
 *
 * The struct is opaque to callers beyond `f`: how the temporary file is made
 * (today "PATH.tmp-PID" with fopen) may change inside (O_TMPFILE + linkat,
 * O_EXCL|O_NOFOLLOW, cleanup of leftovers) without changing the API.
 */
#ifndef GQ_CORE_OUTFILE_H
#define GQ_CORE_OUTFILE_H

#include <stdbool.h>
#include <stdio.h>

#include "core/status.h"

typedef struct gq_outfile {
    FILE *f; /* write here between open and commit */
    /* private */
    char path[1024];
    char tmp[1100];
    bool is_stdout;
} gq_outfile;

/* Can PATH be written (its directory exists and is writable, it is not a
 * directory, the path is not too long)? Check before doing the work. NULL and
 * "-" pass. */
int gq_outfile_check(const char *path, gq_err *err);

int gq_outfile_open(gq_outfile *o, const char *path, gq_err *err);
int gq_outfile_commit(gq_outfile *o, gq_err *err);
void gq_outfile_abort(gq_outfile *o);

/* The whole file in one call: open, write(f, arg), commit (abort when write
 * returns non-zero; its error is kept). */
int gq_outfile_write(const char *path, int (*write)(FILE *f, void *arg, gq_err *err), void *arg, gq_err *err);

#endif
