/* Status codes and error messages shared by every library module.
 *
 * Library code never prints and never calls exit(): a function that can fail
 * takes a `gq_err *` (may be NULL), fills it with one human-readable line and
 * returns a negative gq_status. Only src/cli and src/render write output.
 *
 * Process exit codes are derived from these in src/cli (see README "Exit codes").
 */
#ifndef GQ_CORE_STATUS_H
#define GQ_CORE_STATUS_H

#include <stdarg.h>
#include <stddef.h>

typedef enum gq_status {
    GQ_OK = 0,
    GQ_E_FAIL = -1,    /* a measurement or check failed (exit 1) */
    GQ_E_USAGE = -2,   /* bad input: options, files, values (exit 2) */
    GQ_E_NODEV = -3,   /* no GPU or no driver (exit 3) */
    GQ_E_IO = -4,      /* cannot read/write a file (exit 2: it is the user's path) */
    GQ_E_NOMEM = -5,   /* allocation failed (exit 1) */
    GQ_E_BACKEND = -6, /* CUDA / simulator error at run time (exit 1) */
    GQ_E_INTR = -7,    /* interrupted by a signal (exit 130) */
    GQ_E_UNSUPP = -8,  /* feature not available in this build/backend (exit 1) */
    GQ_E_BUSY = -9,    /* a GPU is in use by another gpuqual or, for the card, by other work (exit 6) */
    GQ_E_NOLIB = -10,  /* a library the command needs is not installed, e.g. NCCL for collectives (exit 7) */
} gq_status;

/* One error: a status and one line of text (no trailing newline). */
typedef struct gq_err {
    int code;
    char msg[512];
} gq_err;

/* Fill *e (if non-NULL) with code and a printf-formatted message, always one
 * line (control characters from echoed input become spaces); returns code
 * so callers can write `return gq_err_set(e, GQ_E_USAGE, "...")`. */
int gq_err_set(gq_err *e, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Prefix an existing message: "ctx: old message". Returns e->code. */
int gq_err_prefix(gq_err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* s shortened to at most max bytes for quoting in a message: whole when it
 * fits, else cut after the last word or item boundary (a space, a comma, a
 * semicolon, a slash) within max and ended with "..."; a single word longer than max
 * is kept whole when buf holds it. Returns buf (cap bytes). */
const char *gq_ellipsize(char *buf, size_t cap, const char *s, size_t max);

/* Process exit code for a status (documented in README). */
int gq_status_exit_code(int status);

/* Short name for a status ("usage", "no-device", ...). */
const char *gq_status_name(int status);

#endif
