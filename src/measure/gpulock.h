/* One gpuqual per GPU: an advisory lock per GPU UUID, so that two gpuqual
 * runs never measure the same GPU at once (each would report the other's
 * traffic as its own figures).
 *
 * The lock is flock(LOCK_EX) on "gpuqual-<UUID>.lock" in the first of
 * $GQ_LOCK_DIR (tests), /run/lock, $XDG_RUNTIME_DIR and /tmp that is a
 * writable directory. The file holds the holder's pid and command line, for
 * the message the second gpuqual prints. The kernel drops the lock when the
 * process exits, however it exits, so a killed gpuqual never leaves a GPU
 * locked. The file is opened with O_NOFOLLOW and never truncated by a
 * process that does not hold the lock.
 */
#ifndef GQ_MEASURE_GPULOCK_H
#define GQ_MEASURE_GPULOCK_H

#include "core/status.h"
#include "topo/topo.h"

typedef struct gq_gpulock {
    int n;
    int fd[GQ_MAX_GPUS];
    char dir[256];
} gq_gpulock;

/* Lock every GPU of gpus[0..n) (by t->gpu[g].uuid; a GPU without a UUID is
 * locked by its PCI bus id, else its index). When one is held by another
 * process, try again every 0.2 s for up to wait_s seconds (0: do not wait),
 * then give up: GQ_E_BUSY with one line naming the GPU, the holder's pid and
 * command, and --wait-busy. what names the caller for the lock file
 * ("gpuqual run"). On failure nothing is held. */
int gq_gpulock_acquire(gq_gpulock *lk, const gq_topo *t, const int *gpus, int n, double wait_s,
                       const char *what, gq_err *err);
void gq_gpulock_release(gq_gpulock *lk);

#endif
