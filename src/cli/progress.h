/* A progress bar on stderr: the share done, the current step and the time
 * left. Drawn only when stderr is a terminal and the user did not ask for
 * --quiet; otherwise every call does nothing, so a piped run prints only its
 * results. Redraws at most ten times a second. */
#ifndef GQ_CLI_PROGRESS_H
#define GQ_CLI_PROGRESS_H

#include <stdbool.h>
#include <stdio.h>

typedef struct gq_progress {
    bool on;
    double t0, last_draw;
    long total, done;
    char step[160];
    bool drawn;
} gq_progress;

/* enabled: the caller's wish (false for --quiet); the bar also needs stderr
 * to be a terminal. total: units of work (e.g. rounds), > 0. */
void gq_progress_init(gq_progress *p, bool enabled, long total);
/* What runs now, printf-style; shown beside the bar. */
void gq_progress_step(gq_progress *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Units done so far (absolute); redraws when due. */
void gq_progress_update(gq_progress *p, long done);
/* Erase the bar, e.g. before printing a warning; the next update redraws it. */
void gq_progress_clear(gq_progress *p);

/* The bar's text for a given state, without terminal codes (for tests):
 * "[#####.....]  50%  ~0:42 left  step", cut to width columns. */
void gq_progress_format(char *buf, size_t n, int width, long done, long total, double elapsed,
                        const char *step);

#endif
