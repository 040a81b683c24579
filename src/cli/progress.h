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
    /* gq_progress_on_round's count: units before the current measurement,
     * its last round and its round count */
    long base;
    int last_round, last_rounds;
} gq_progress;

/* Whether a command shows the bar: not with --quiet and not in nvbandwidth's
 * compatibility formats (their output is nvbandwidth's alone); the bar also
 * needs stderr to be a terminal (gq_progress_init). */
bool gq_progress_wanted(bool quiet, const char *format);

/* enabled: the caller's wish (false for --quiet); the bar also needs stderr
 * to be a terminal. total: units of work (e.g. rounds), > 0. */
void gq_progress_init(gq_progress *p, bool enabled, long total);
/* What runs now, printf-style; shown beside the bar. */
void gq_progress_step(gq_progress *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Units done so far (absolute); redraws when due. */
void gq_progress_update(gq_progress *p, long done);
/* The total changed (a plan grew or shrank once more was known). */
void gq_progress_set_total(gq_progress *p, long total);
/* A harness progress callback (gq_harness_opts.progress, arg = the bar) for
 * a series of measurements of `rounds` rounds each: the total is their
 * count x rounds, and a measurement that stops early still counts whole. */
void gq_progress_on_round(void *arg, const char *test, int round, int rounds);
/* Erase the bar, e.g. before printing a warning; the next update redraws it. */
void gq_progress_clear(gq_progress *p);

/* A bar counted in tenths of a second (of a plan's estimate, or of a run's
 * duration): the units in `seconds`, rounded to the nearest. A command gives
 * both its total and every update through it, so that its last update (the
 * whole estimate, or the whole duration) is exactly the total and the bar
 * ends full. */
long gq_progress_tenths(double seconds);

/* The bar's text for a given state, without terminal codes (for tests):
 * "[#####.....]  50%  ~0:42 left  step", cut to width columns. */
void gq_progress_format(char *buf, size_t n, int width, long done, long total, double elapsed,
                        const char *step);

#endif
