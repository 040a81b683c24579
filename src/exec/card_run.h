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

/* The card journal's layout (gq_journal_id.layout): every measurement of
 * every step, the latency's included, is a plan item numbered through the
 * journal; the stress run writes its samples and, once complete, a "stress"
 * step line with its whole section. A journal of another layout is not
 * resumed. */
#define GQ_CARD_JOURNAL_LAYOUT "card-2"

/* Run the plan. Fills *res (zero it first) whatever happens. Returns GQ_OK,
 * GQ_E_INTR when interrupted (res holds what was measured), or GQ_E_NOMEM.
 * A step that fails with a backend error is marked failed and the others
 * continue. j (may be NULL) receives every record as it is measured, each
 * finished item's mark, the stress run's samples and its completed section.
 * A resumed j (gq_journal_resume) is re-used: every finished item is taken
 * from it instead of measured (res->reused, res->measured count them), and a
 * completed stress run of the same duration on the same GPUs too
 * (res->stress_reused); a stress run cut off part-way is run again whole. The
 * collectives step's clean measured figures are re-used too (res->coll_reused). */
int gq_card_execute(gq_backend *be, const gq_topo *t, const gq_card_opts *o, gq_card_plan *plan,
                    gq_journal *j, gq_card_progress_fn progress, void *progress_arg, gq_card_result *res,
                    gq_err *err);

#endif
