/* The node summary of a card document: what `--prom` and `--junit` read
 * from `gpuqual card` and `gpuqual fleet`, the shape of a fleet node's
 * summary (docs/json.md); and the same, typed, as the renderers take it
 * (render/junit.h, render/prometheus.h). */
#ifndef GQ_DOC_CARD_SUMMARY_H
#define GQ_DOC_CARD_SUMMARY_H

#include <jansson.h>
#include <stdbool.h>

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

/* ---- typed: one node summary as --prom and --junit render it --------------
 * Every string is owned, and NULL where the summary has none (a fleet node's
 * checks have no step, text or time; a node whose card did not run has no
 * checks), so each renderer keeps its own word for what is missing. */

typedef struct gq_card_node_check {
    char *id, *subject;
    char *verdict;  /* the check's: "pass", "warn", "fail", "info", "skip" */
    char *evidence; /* "measured", "skipped", "failed", "unknown" */
    char *reason;   /* evidence_reason: why it was not measured */
    char *step, *unit, *text;
    double figure; /* NAN: none */
    double time_s; /* its share of the measured time of its card step; NAN: none */
} gq_card_node_check;

typedef struct gq_card_node {
    char *hostname;
    bool has_rank; /* a fleet's node: simulated nodes share a hostname, the rank tells them apart */
    long long rank;
    char *verdict; /* the card's: "pass", "warn", "fail", "incomplete" */
    long long exit_code;
    bool complete;
    double elapsed_s; /* the card's; NAN: none */
    char *error;      /* why the card did not run; NULL: it ran */
    int nchecks;
    gq_card_node_check *checks; /* owned */
} gq_card_node;

typedef struct gq_card_nodes {
    int n, cap;
    gq_card_node *node; /* owned */
} gq_card_nodes;

void gq_card_nodes_init(gq_card_nodes *l);
void gq_card_nodes_free(gq_card_nodes *l);
/* A new node at the end of l, empty (no strings, no rank, no checks, no
 * elapsed_s); NULL when out of memory. */
gq_card_node *gq_card_nodes_add(gq_card_nodes *l);

/* One node summary (as gq_card_node_summary makes it, or a fleet node's
 * `node`) into out, an empty node: what is not there, or not of its type, is
 * left as none, as is a check that is not an object. GQ_E_NOMEM. */
int gq_card_node_from_json(const json_t *node, gq_card_node *out);
/* An array of node summaries appended to l (anything else: none). GQ_E_NOMEM. */
int gq_card_nodes_from_json(const json_t *nodes, gq_card_nodes *l);
/* A card document's node summary (gq_card_node_summary) into out, an empty
 * node: GQ_OK; 1 when doc has no card section; GQ_E_NOMEM. */
int gq_card_node_from_doc(const json_t *doc, gq_card_node *out);

#endif
