/* The clean room: before and while gpuqual measures, it watches its GPUs for
 * other work, so that a figure taken while something else used the GPU is
 * never reported clean.
 *
 * Three signals, through the backend's observe hook (backend/backend.h):
 *  - other processes on the GPU (the driver's compute and graphics lists,
 *    without gpuqual itself), read before and after every measurement (it is
 *    cheap). This is the primary signal: a light load may read 0%
 *    utilization;
 *  - utilization above GQ_CLEAN_UTIL_PCT in every one of GQ_CLEAN_SAMPLES
 *    readings over GQ_CLEAN_STEP_S before each step (the lowest counts: the
 *    driver averages over up to 1 s, and the tail of what just ended fades) (a step: a command's plan, a card
 * step), while gpuqual itself runs nothing on the GPU, so its own work never trips it;
 *  - memory in use above GQ_CLEAN_MEM_MIB before a step, checked only where
 *    the process list cannot be read (a container that hides the processes):
 *    gpuqual holds no buffers between steps, only its context (about 0.5 GiB
 *    on an H200).
 * Another gpuqual is kept out by the per-GPU lock (measure/gpulock.h).
 *
 * What was seen goes into every record of the measurement (gq_record.contam,
 * flag "contaminated", valid = false): not valid for an aggregate or a
 * verdict. gq_cleanroom_note() gives the one line the commands print.
 */
#ifndef GQ_MEASURE_CLEANROOM_H
#define GQ_MEASURE_CLEANROOM_H

#include <stdbool.h>

#include "backend/backend.h"
#include "core/record.h"

#define GQ_CLEAN_UTIL_PCT 10.0
#define GQ_CLEAN_MEM_MIB 4096.0
#define GQ_CLEAN_STEP_S 1.0
#define GQ_CLEAN_SAMPLES 5

typedef struct gq_cleanroom {
    gq_backend *be;
    bool on;                        /* the backend can observe */
    gq_contam step;                 /* what the last step's sampling saw (load, memory) */
    bool procs_hidden[GQ_MAX_GPUS]; /* the process list could not be read: utilization only */
    bool hidden_noted;
    int contaminated; /* measurements flagged so far */
    gq_contam seen;   /* everything seen so far, for the note */
} gq_cleanroom;

/* The process's clean room, which gq_harness_opts_default() puts in every
 * harness options struct (NULL: none). The command frame installs one for
 * each measuring command and removes it at the end. */
void gq_cleanroom_install(gq_cleanroom *c);
gq_cleanroom *gq_cleanroom_installed(void);

/* Start watching (on only when the backend has the observe hook). */
void gq_cleanroom_init(gq_cleanroom *c, gq_backend *be);

/* Before a step: sample utilization (and, where processes are hidden,
 * memory in use) of gpus[0..n) GQ_CLEAN_SAMPLES times over seconds (0 = one
 * sample), and read the process lists. Keeps what it saw for the step's
 * measurements (gq_cleanroom_check adds it). */
void gq_cleanroom_step(gq_cleanroom *c, const int *gpus, int n, double seconds);

/* Around a measurement on gpus[0..n): the process lists now, plus what the
 * step saw on those GPUs, added to *out. true when anything was seen. */
bool gq_cleanroom_check(gq_cleanroom *c, const int *gpus, int n, gq_contam *out);

/* Mark a record contaminated by cs (no-op when cs is empty). */
void gq_cleanroom_mark(gq_record *r, const gq_contam *cs);

/* One line for the user ("" when nothing was seen): how many measurements
 * were flagged and what was seen; and whether only utilization could be
 * watched (processes hidden). */
void gq_cleanroom_note(const gq_cleanroom *c, char *buf, size_t n);

#endif
