/* JUnit XML of cards (`--junit FILE` on card and fleet), as CI systems read
 * it (the Ant/Jenkins schema): one testsuite per node, one testcase per
 * check. A failed check is a <failure>; a check that was not measured
 * (evidence other than "measured", or verdict skip) is <skipped> with its
 * reason; pass, warn and info checks pass (a warn says so in
 * <system-out>). */
#ifndef GQ_RENDER_JUNIT_H
#define GQ_RENDER_JUNIT_H

#include <jansson.h>
#include <stdio.h>

/* nodes: an array of node summaries (render/card_summary.h). */
void gq_junit_cards(FILE *f, const json_t *nodes);

#endif
