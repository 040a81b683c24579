/* Cooperative interruption. The CLI's SIGINT/SIGTERM handler calls
 * gq_interrupt_request(); long-running library loops (harness rounds, stress,
 * the card) poll gq_interrupt_requested() between steps, finish the step in
 * flight, keep what they measured, and return GQ_E_INTR. */
#ifndef GQ_CORE_INTERRUPT_H
#define GQ_CORE_INTERRUPT_H

#include <stdbool.h>

void gq_interrupt_request(void); /* async-signal-safe */
bool gq_interrupt_requested(void);
void gq_interrupt_clear(void);

#endif
