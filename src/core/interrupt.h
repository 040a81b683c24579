/* Cooperative interruption. The CLI's SIGINT/SIGTERM handler calls
 * gq_interrupt_request(); long-running library loops (harness rounds, stress,
 * the card) poll gq_interrupt_requested() between steps, finish the step in
 * flight, keep what they measured, and return GQ_E_INTR.
 *
 * The cleanup list: names of temporary files being written (the safe writer's
 * `.gq-PID-XXXXXX`, core/outfile.h). A second Ctrl-C exits at once from the
 * signal handler, which calls gq_cleanup_run() first: it unlinks every name
 * still listed, using only async-signal-safe calls. Slots are fixed (no
 * allocation); a name that finds no free slot is still removed by the next
 * run's sweep of leftovers (gq_outfile_sweep). */
#ifndef GQ_CORE_INTERRUPT_H
#define GQ_CORE_INTERRUPT_H

#include <stdbool.h>

void gq_interrupt_request(void); /* async-signal-safe */
bool gq_interrupt_requested(void);
void gq_interrupt_clear(void);

#define GQ_CLEANUP_SLOTS 32
#define GQ_CLEANUP_PATH 1100

/* Register PATH for removal on a fatal signal; returns the slot, or -1 when
 * the list is full. */
int gq_cleanup_add(const char *path);
/* Forget slot (after the file was renamed into place or removed). */
void gq_cleanup_remove(int slot);
/* Unlink every listed name (async-signal-safe; for the signal handler). */
void gq_cleanup_run(void);

#endif
