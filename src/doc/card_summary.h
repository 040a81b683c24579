/* The node summary of a card document: what `--prom` and `--junit` read
 * from `gpuqual card` and `gpuqual fleet`, the shape of a fleet node's
 * summary (docs/json.md). */
#ifndef GQ_DOC_CARD_SUMMARY_H
#define GQ_DOC_CARD_SUMMARY_H

#include <jansson.h>

/* From a card document (its `card` section; `hostname` falls back to the
 * document's host): {"hostname", "verdict" (pass, warn, fail or
 * incomplete), "exit_code", "complete", "elapsed_s" (the card's, when it
 * has one), "checks": [{"id", "subject", "verdict", "evidence",
 * "evidence_reason", "step", "figure", "unit", "text", "time_s" (its share
 * of its step's measured plan[].elapsed_s, when the plan has the step)}]}. A check's evidence is its own
 * field when the document has one; else "skipped" for a check judged skip and "measured" for the others (a
 * document of card_version 1 judged only what it measured). NULL when doc
 * has no card section, or out of memory. */
json_t *gq_card_node_summary(const json_t *doc);

#endif
