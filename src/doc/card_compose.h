/* The card document composed from a run: the "card", "domains" and
 * "bottlenecks" sections. The figures are composed by analysis
 * (analysis/card_compose.h: gq_card_figures_make) and judged by analysis
 * (card_judge.c); this codec writes them as JSON (doc/card_compose.c). Read
 * by the card command, report and the tests. */
#ifndef GQ_DOC_CARD_COMPOSE_H
#define GQ_DOC_CARD_COMPOSE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "analysis/card.h"
#include "analysis/expect.h"
#include "doc/card_codec.h"
#include "core/record.h"
#include "core/status.h"
#include "topo/topo.h"

/* Inputs of the composition. Everything but topo and rs may be NULL / 0. */
typedef struct gq_card_inputs {
    const gq_topo *topo;
    const gq_recordset *rs;
    const json_t *stress;    /* "stress" section */
    const json_t *placement; /* "placement" section */
    /* the steps' own sections (gq_card_result.sec; NULL: each is null, as a step that did not
     * measure writes it) */
    const gq_card_sections *sec;
    const gq_expect *expect;
    const gq_card_plan *plan; /* steps with their status */
    const gq_card_opts *opts; /* budget, roles, GPUs (NULL: every GPU in topo) */
    double elapsed_s;
    bool complete;
    const char *stopped_at; /* step name when interrupted */
    const char *hostname;   /* NULL: topo->hostname */
    uint64_t bytes;         /* main buffer size; 0: the most common size among the records */
} gq_card_inputs;

/* Compose. Returns a new object with the root sections of a card document:
 * "card", "domains" (list of lists, as `gpuqual domains` writes it) and
 * "bottlenecks"; the caller merges them into the root. NULL with *err on
 * failure (GQ_E_NOMEM, or GQ_E_USAGE when rs has nothing a card can use). */
json_t *gq_card_compose(const gq_card_inputs *in, gq_err *err);

/* The "placement" section of a card run (gq_place_to_json of its solved
 * model and result, with "default_split": true when the roles were the
 * default split): a new reference, or NULL when the placement step did not
 * solve (or on allocation failure). */
json_t *gq_card_placement_json(const gq_card_result *res);

/* The "stress" section of a card run (gq_stress_to_json of its stress result
 * and summary, measured now or read back from its journal): a new reference,
 * or NULL when the run has no stress (or on allocation failure). */
json_t *gq_card_stress_json(const gq_card_result *res);

/* The collectives step in a card's journal (exec/card_run.c), as the stress
 * run's is: a measured, clean result (no record of the step failed,
 * contaminated, cut short or refused for overlap) as the "collectives" step's
 * mark ({step, status: "done", collectives: its "collectives" section}); a
 * failed write only means that a resume measures it again. Resuming,
 * gq_card_coll_journal_reusable fills *out from that mark and returns true
 * when it holds tp groups of `bytes` all-reduce over GPUs of gpus[0..n) only,
 * n / tp of them, with their figures alone; false (measure again) otherwise. */
struct gq_journal;
void gq_card_coll_journal_done(struct gq_journal *j, const gq_card_coll_view *c);
bool gq_card_coll_journal_reusable(const struct gq_journal *j, int tp, uint64_t bytes, const int *gpus, int n,
                                   gq_card_coll_view *out);
#endif
