/* The stress run behind `gpuqual stress` and the card's stress step: a
 * sustained load on each GPU through the backend's stress hooks, with
 * telemetry sampled while it runs. The verdict on what it recorded is
 * analysis/stress.h's (gq_stress_summarize).
 */
#ifndef GQ_EXEC_STRESS_RUN_H
#define GQ_EXEC_STRESS_RUN_H

#include "analysis/stress.h"
#include "backend/backend.h"
#include "core/status.h"
#include "topo/topo.h"

/* Run the load. r must be zeroed (or freshly gq_stress_result_free()d); it
 * is filled whatever happens once the GPUs were started: a GPU that errors
 * or disappears is recorded and the others continue. Ctrl-C
 * (gq_interrupt_requested) stops the load on every GPU at once and the
 * result is kept with r->interrupted set. Returns GQ_OK (also when GPUs
 * failed: that is a verdict, not an error), GQ_E_INTR when interrupted,
 * GQ_E_UNSUPP when the backend has no stress hooks, GQ_E_USAGE for bad
 * options, GQ_E_NOMEM. */
int gq_stress_run(gq_backend *be, const gq_topo *topo, const gq_stress_opts *o, gq_stress_result *r,
                  gq_err *err);

#endif
