/* JUnit XML of cards (`--junit FILE` on card and fleet), as CI systems read
 * it (the Ant/Jenkins schema): one testsuite per node, one testcase per
 * check. A failed check is a <failure>; a check that was not measured
 * (evidence other than "measured", or verdict skip) is <skipped> with its
 * reason; pass and info checks pass; a warn check is what `warn` says.
 * Times are measured: a testsuite's is the card's elapsed time, a
 * testcase's its share of the card step that measured it (left out where
 * the summary has none: a fleet's nodes). The output validates against the
 * Jenkins xunit plugin's junit-10.xsd (tests/data/junit). */
#ifndef GQ_RENDER_JUNIT_H
#define GQ_RENDER_JUNIT_H

#include <jansson.h>
#include <stdio.h>

#include "doc/card_summary.h"

/* How a check judged warn shows in CI (--junit-warn). */
typedef enum { GQ_JUNIT_WARN_SKIPPED = 0, GQ_JUNIT_WARN_FAILURE, GQ_JUNIT_WARN_PASSED } gq_junit_warn;

/* "skipped", "failure", "passed" -> 0 and *out; -1 for anything else. */
int gq_junit_warn_parse(const char *s, gq_junit_warn *out);

/* nodes: the node summaries, typed (doc/card_summary.h). */
void gq_junit_nodes(FILE *f, const gq_card_nodes *nodes, gq_junit_warn warn);

/* The same from an array of node summaries as JSON, decoded by
 * gq_card_nodes_from_json (nothing is written when that runs out of memory). */
void gq_junit_cards(FILE *f, const json_t *nodes, gq_junit_warn warn);

#endif
