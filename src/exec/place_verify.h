/* Placement verification behind `gpuqual place` and the card's placement
 * step: the model and the solver are analysis/placement.h's; this runs what
 * they chose.
 */
#ifndef GQ_EXEC_PLACE_VERIFY_H
#define GQ_EXEC_PLACE_VERIFY_H

#include <stdint.h>

#include "analysis/placement.h"
#include "exec/discovery.h"
#include "backend/backend.h"
#include "core/record.h"
#include "core/status.h"
#include "measure/harness.h"
#include "measure/journal.h"
#include "topo/topo.h"

/* Verify: run the chosen pattern through the harness (pairs, offload both
 * directions, replicas). When a flow runs slower than predicted by more than
 * the tolerance, the measurement is evidence the probes did not give (e.g. two
 * handoffs sharing an uplink no probe loaded): its groups are added to the
 * model *m as limits, the roles are solved again and the new choice is run,
 * up to GQ_PLACE_MAX_ATTEMPTS times or until a choice repeats. The attempt
 * with the best measured result is kept (pairs first, then offload, then
 * replicas) and every attempt is reported. Then the naive pattern runs; the
 * gains are measured over it. Records go to *rs (and journal j). Invalid
 * aggregates (overlap) are kept but leave the gain at 0 with a note. */
int gq_place_verify(gq_backend *be, const gq_topo *topo, gq_place_model *m, gq_place_result *res,
                    uint64_t bytes, const gq_harness_opts *ho, gq_recordset *rs, gq_journal *j, gq_err *err);

/* What `gpuqual place` measures besides the discovery pipeline D ran over
 * sel[0..nsel): where a matrix pair is staged, both host directions at once
 * on each distinct host budget of D's bottlenecks and on all of sel (a staged
 * handoff loads both), then the driver's own staged copy on one staged pair
 * of each class, as the card measures it. step (may be NULL) is told the
 * progress total and what runs next before each. Records go to *rs (and
 * journal j); the first measurement that fails stops it with its status. */
int gq_place_measure_handoffs(gq_backend *be, const gq_topo *topo, const gq_discovery *D, const int *sel,
                              int nsel, uint64_t bytes, const gq_harness_opts *ho, gq_journal *j,
                              gq_recordset *rs, void (*step)(void *arg, long total, const char *what),
                              void *arg, gq_err *err);

#endif
