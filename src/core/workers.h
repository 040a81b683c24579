/* Thread-per-worker runner: N threads, each optionally pinned to a CPU list,
 * sharing one barrier with the thread that started them.
 *
 * Typical use (a synchronized start):
 *   gq_workers_start(&w, n, fn, arg, cpulists, err);   // fn(arg, i, w) in n threads
 *   gq_workers_barrier(w);      // all workers have reached their barrier call
 *   ...release the start...
 *   gq_workers_barrier(w);      // second rendezvous, if the protocol needs one
 *   gq_workers_join(w);         // waits for every fn to return, frees w
 * Every worker must call gq_workers_barrier() exactly as many times as the
 * starting thread does, also when it failed (the barrier counts n + 1).
 *
 * Either every thread is created and every fn runs, or (creation failed)
 * none of the fns runs and gq_workers_start() returns an error.
 */
#ifndef GQ_CORE_WORKERS_H
#define GQ_CORE_WORKERS_H

#include "core/status.h"

typedef struct gq_workers gq_workers;
typedef void (*gq_worker_fn)(void *arg, int idx, gq_workers *w);

/* Start n >= 1 workers. cpulists may be NULL; cpulists[i] may be NULL or ""
 * (not pinned) or a Linux CPU list ("0-15,32-47"); a list that cannot be
 * applied leaves that thread unpinned (pinning is best effort, never fatal).
 * On success *out owns the threads until gq_workers_join(). GQ_E_NOMEM or
 * GQ_E_FAIL (thread creation) otherwise. */
int gq_workers_start(gq_workers **out, int n, gq_worker_fn fn, void *arg, const char *const *cpulists,
                     gq_err *err);

/* Rendezvous of the n workers and the starting thread. */
void gq_workers_barrier(gq_workers *w);

/* Wait for every worker's fn to return, then free w. */
void gq_workers_join(gq_workers *w);

/* Parse a Linux CPU list into a bitmask of at most `nbits` CPUs (mask has
 * nbits/64 words, zeroed first). Returns the number of CPUs set, or -1 when
 * the text is not a CPU list. */
int gq_cpulist_parse(const char *list, unsigned long long *mask, int nbits);

#endif
