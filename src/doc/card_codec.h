/* The typed card's one codec (doc/card_codec.c): gq_card (analysis/card.h)
 * written into a card document's "card" section and read back from it. */
#ifndef GQ_DOC_CARD_CODEC_H
#define GQ_DOC_CARD_CODEC_H

#include <jansson.h>

#include "analysis/card.h"
#include "analysis/expect.h"
#include "core/record.h"
#include "core/status.h"

/* Writes what c concludes into the card section: card_version, level,
 * verdict, verdict_text, turned_off, exit_code, counts, expectations, checks,
 * rows and findings (each check and row with its step, evidence and
 * evidence_reason), and the plan entries' reasons where missing. */
void gq_card_to_json(const gq_card *c, json_t *card);

/* Reads a saved card section into *out (gq_card_free it), fail closed: its
 * card_version (none: 1; newer than GQ_CARD_VERSION refused), its verdict
 * spelled exactly as gpuqual writes it, every check and row with a verdict
 * gpuqual writes, the findings as strings, and in schema 2 their evidence,
 * reason and step (a verdict other than skip on evidence not measured is
 * refused), the plan's steps, statuses and reasons, the level, verdict_text,
 * turned_off and an exit_code that matches the verdict. GQ_E_USAGE with one
 * line naming file, the key path and what was expected. A schema-1 card is
 * read as schema 2: each step's evidence from its plan, every check and row
 * resting on it, and judged again (gq_card_summarize). */
int gq_card_from_json(const json_t *card, const char *file, gq_card *out, gq_err *err);

/* gq_card_from_json, then gq_card_to_json into the same section (a schema-1
 * card is rewritten as schema 2). */
int gq_card_read(json_t *card, const char *file, gq_err *err);

/* gq_card_judge (analysis/card.h), then gq_card_to_json into the section. */
int gq_card_judge_json(json_t *card, const json_t *bottlenecks, const json_t *stress, const gq_recordset *rs,
                       const gq_expect *ex, gq_err *err);

/* Each step's evidence from a card section's "plan": "done" is measured;
 * "skipped" and "interrupted" are skipped, "failed" failed, with the entry's
 * "reason" (schema 2) or, in a schema-1 card, the reason its note gives
 * ("--no-..." the user, "budget", "one GPU", "interrupted", else not
 * applicable); a step the plan does not list is unknown. */
void gq_card_plan_evidence(const json_t *card, gq_evidence *ev, gq_ev_reason *why);

/* Facts for the verdicts (doc/card_facts_json.c), decoded from a card section and the stress section (both
 * as composed or saved) and the records (integrity counts; may be NULL). */
void gq_card_facts_from_json(const json_t *card, const json_t *stress, const gq_recordset *rs,
                             gq_card_facts *f);

/* What the card's judge reads of the stress section (NULL or not an object:
 * no section), typed (doc/card_facts_json.c). */
void gq_card_stress_from_json(const json_t *stress, gq_card_stress_view *v);

/* The section of each step with one of its own (analysis/card_steps.h:
 * GQ_CARD_SECTIONS), one file each (doc/card_collectives.c):
 * gq_card_NAME_to_json writes its typed figures as card.json's section "NAME"
 * (a new reference; json null for NULL or figures not measured), and
 * gq_card_NAME_from_json reads the section back (NULL or not an object: not
 * present; *v is zeroed first). */
#define GQ_CARD_SECTION_CODEC_DECL_(ID, NAME, TYPE, FIELD)                                                   \
    json_t *gq_card_##NAME##_to_json(const TYPE *v);                                                         \
    void gq_card_##NAME##_from_json(const json_t *j, TYPE *v);
GQ_CARD_SECTIONS(GQ_CARD_SECTION_CODEC_DECL_)
#undef GQ_CARD_SECTION_CODEC_DECL_

/* The card's "placement" section (NULL or not an object: !present), typed
 * (doc/card_views_json.c); *v is zeroed first. */
void gq_card_placement_view_from_json(const json_t *pl, gq_card_placement_view *v);

/* The card's "pairs" and "host" sections and the document's "bottlenecks"
 * list (NULL: none), typed (doc/card_views_json.c); *v is zeroed first. */
void gq_card_pairs_view_from_json(const json_t *pairs, gq_card_pairs_view *v);
void gq_card_host_view_from_json(const json_t *host, gq_card_host_view *v);
void gq_card_bottlenecks_view_from_json(const json_t *bottlenecks, gq_card_bottlenecks_view *v);

/* The card's "domains" section and its "matrices" list (the first entry, and
 * the last whose id is "driver_staged"), typed (doc/card_views_json.c); *v
 * is zeroed first. */
void gq_card_domains_view_from_json(const json_t *dm, gq_card_domains_view *v);
void gq_card_matrices_view_from_json(const json_t *matrices, gq_card_matrix_view *first,
                                     gq_card_matrix_view *driver_staged);

/* The sections the judge reads typed: the stress section (above), the
 * document's bottlenecks (may be NULL) and the card's sections
 * (doc/card_facts_json.c, doc/card_views_json.c). */
void gq_card_views_from_json(const json_t *card, const json_t *bottlenecks, const json_t *stress,
                             gq_card_views *v);

/* Exit code of a card section, from its typed verdict (gq_card_verdict_parse,
 * gq_card_verdict_exit_code): 0 pass, 4 warn, 1 fail, 5 incomplete (also
 * when a schema-1 card says "complete": false); -1 when "verdict" is missing,
 * not a string, or not exactly "pass", "warn", "fail" or "incomplete" (a
 * document read back is never a pass by default). */
int gq_card_exit_code(const json_t *card);

#endif
