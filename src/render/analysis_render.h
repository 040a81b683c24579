/* The analysis results' outputs: the JSON codecs of the typed results of
 * src/analysis (the sections they add to saved documents) and their printed
 * forms (terminal and Markdown tables, CSV). Each returns a new reference, or
 * NULL on allocation failure; the printers write to the FILE given. */
#ifndef GQ_RENDER_ANALYSIS_RENDER_H
#define GQ_RENDER_ANALYSIS_RENDER_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "analysis/bottlenecks.h"
#include "analysis/compare.h"
#include "analysis/domains.h"
#include "analysis/fleet.h"
#include "analysis/placement.h"
#include "analysis/stress.h"
#include "core/record.h"
#include "doc/analysis_json.h"
#include "doc/card_summary.h"

/* ---- compare (render/compare_render.c) ---- */

/* Outputs: a terminal/Markdown table (figures in every run first, the
 * regressions marked), and the "compare" JSON section (docs/json-card.md). */
void gq_compare_print(FILE *f, const gq_compare *c, bool markdown, bool all);
json_t *gq_compare_to_json(const gq_compare *c);

/* ---- fleet (render/fleet_render.c) ---- */

/* The "fleet" section (README "gpuqual fleet"): threshold_pct, verdict,
 * exit_code, nodes, figures, figures_compared, outliers, flagged. New
 * reference; NULL on allocation failure. */
json_t *gq_fleet_to_json(const gq_fleet *f);
/* The fleet as one self-contained HTML page (render/fleet_html.c): a node ×
 * check heatmap (a row per node, a column per check id, coloured by the worst
 * verdict over the check's subjects; a check not measured on the node is
 * shown as not measured, with its evidence) and the outliers. nodes->node[i]
 * is node i's summary, typed (doc/card_summary.h: its "node" object decoded
 * by gq_card_node_from_json; no checks when its card did not run).
 * GQ_E_IO when the stream fails; GQ_E_NOMEM. */
int gq_fleet_render_html(FILE *out, const gq_fleet *f, const gq_card_nodes *nodes, gq_err *err);

/* The summary (markdown=false: a terminal screen, at most max_outliers
 * outliers listed, 0 = all) or the Markdown report. */
void gq_fleet_print(FILE *out, const gq_fleet *f, bool markdown, int max_outliers);

#endif
