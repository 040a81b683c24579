/* The card's step runner: runs a card plan (analysis/card.h) step by step
 * through the harness, the stress run and the placement verification.
 */
#ifndef GQ_EXEC_CARD_RUN_H
#define GQ_EXEC_CARD_RUN_H

#include "analysis/card.h"
#include "backend/backend.h"
#include "core/status.h"
#include "measure/journal.h"
#include "topo/topo.h"

/* Run the plan. Fills *res (zero it first) whatever happens. Returns GQ_OK,
 * GQ_E_INTR when interrupted (res holds what was measured), or GQ_E_NOMEM.
 * A step that fails with a backend error is marked failed and the others
 * continue. j (may be NULL) receives every record as it is measured. */
int gq_card_execute(gq_backend *be, const gq_topo *t, const gq_card_opts *o, gq_card_plan *plan,
                    gq_journal *j, gq_card_progress_fn progress, void *progress_arg, gq_card_result *res,
                    gq_err *err);

#endif
