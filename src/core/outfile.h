/* The one safe output file.
 *
 * Writes go to a temporary file in the target's directory, which commit
 * flushes, fsyncs and renames over PATH before it fsyncs the directory; abort
 * (or a failed commit) removes it, so nothing half-written is ever left
 * looking complete, and an earlier file of that name stays whole until the
 * rename.
 *
 * The temporary file:
 *  - where the kernel and the file system have it, an unnamed O_TMPFILE file:
 *    a killed process leaves nothing. It gets a name (linkat) only at commit,
 *    just before the rename;
 *  - elsewhere `.gq-PID-XXXXXX` (PID the writer's process id, XXXXXX random),
 *    created with O_CREAT|O_EXCL|O_NOFOLLOW, so nothing planted under that
 *    name is opened or followed. Its name is on the signal-safe cleanup list
 *    (core/interrupt.h) that a second Ctrl-C runs; a file of a process that no
 *    longer exists (SIGKILL, power loss) is removed by the next gpuqual that
 *    checks or writes an output in that directory (gq_outfile_sweep).
 * Both are created with mode 0666 less the umask, like any new file.
 *
 * A character device or a FIFO (/dev/null, /dev/stdout, a named pipe) is
 * written in place, since renaming over it would replace the node. A symbolic
 * link is followed only when it resolves to a character device or a FIFO; a
 * link to anything else (a regular file, a directory, nothing) is refused, so
 * a link planted under an output name never redirects a write. A directory,
 * a name ending in '/', a block device or a socket is refused. "-" is stdout.
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
    char tmp[1100]; /* the named temporary file, "" when unnamed or in place */
    bool is_stdout;
    bool in_place; /* a device or a FIFO */
    bool anon;     /* O_TMPFILE */
    int slot;      /* cleanup list slot, -1 when none */
} gq_outfile;

/* Can PATH be written (its directory exists and is writable, it is not a
 * directory, not a link to a regular file, the name fits)? Check before doing
 * the work. Also sweeps the directory's leftovers (gq_outfile_sweep). NULL and
 * "-" pass. */
int gq_outfile_check(const char *path, gq_err *err);

/* A path to write holds no control character (a newline, a tab, an escape:
 * bytes below 0x20 and 0x7f), which would make a file nobody can name in a
 * shell or a log line: GQ_E_USAGE naming the byte and its position. what
 * names the option ("-o", "--journal"). gq_outfile_check does this too. */
int gq_outfile_check_chars(const char *what, const char *path, gq_err *err);

/* Is PATH written in place (a character device or a FIFO, or a link to one)? */
bool gq_outfile_is_device(const char *path);

int gq_outfile_open(gq_outfile *o, const char *path, gq_err *err);
int gq_outfile_commit(gq_outfile *o, gq_err *err);
void gq_outfile_abort(gq_outfile *o);

/* The whole file in one call: open, write(f, arg), commit (abort when write
 * returns non-zero; its error is kept). */
int gq_outfile_write(const char *path, int (*write)(FILE *f, void *arg, gq_err *err), void *arg, gq_err *err);

/* Remove `.gq-PID-*` files in DIR whose process PID no longer
 * exists on this machine. Returns how many were removed. (On a directory
 * shared between machines, a live writer on another machine is not seen;
 * its temporary file is then removed and its commit fails with a message,
 * never with a torn file.) */
int gq_outfile_sweep(const char *dir);

/* Make a fresh name DIR/.gq-PID-XXXXXX in buf (XXXXXX random); the caller
 * creates it exclusively and retries on EEXIST. */
void gq_outfile_tmpname(char *buf, size_t cap, const char *dir);

/* Fsync the directory holding PATH (errors ignored: not every file system
 * can). */
void gq_outfile_sync_dir(const char *path);

#endif
