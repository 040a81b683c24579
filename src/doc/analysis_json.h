/* The JSON codecs of the analysis results (src/doc/): the sections the
 * analyses add to saved documents, written from their typed results and read
 * back, fail closed. Each writer returns a new reference, or NULL on
 * allocation failure. */
#ifndef GQ_DOC_ANALYSIS_JSON_H
#define GQ_DOC_ANALYSIS_JSON_H

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
#include "measure/journal.h"
#include "topo/topo.h"

/* ---- bottlenecks (doc/bottlenecks_json.c) ---- */

/* Document sections: an object whose keys merge into the document root (new
 * reference; NULL on allocation failure):
 *   bottlenecks: [{gpus, direction (h2d|d2h|p2p), capacity_gbps, capacity_interval_gbps,
 *                  sum_alone_gbps,
 *                  expected_gbps, explained_by (gq_bn_explain_name), node, link_gbps,
 *                  explanation, [cross_domain, domains for p2p],
 *                  evidence: [observation..]}]
 *   contention: {observations: [every analysed group: group, test, direction, bytes,
 *                  gpus, per_gpu_gbps | pairs + kind, aggregate_gbps, sum_alone_gbps,
 *                  expected_gbps, overlap, contended, aggregate_interval_gbps,
 *                  limit_interval_gbps, undecided],
 *                host_alone_gbps: {h2d: [..], d2h: [..]} by GPU (null unknown),
 *                host_bytes, skipped_groups, one_numa_visible,
 *                asymmetry: [{direction, gpus, slow, slow_gbps: [lo, hi], fast_gbps: [lo, hi], group}]}
 *   undetermined: [decisions left open: gq_bn_open_to_json]
 *   ignored: [{record, test, src, dst, gbps, why}] (rs may be NULL) */
json_t *gq_bottlenecks_to_json(const gq_bottlenecks *b, const gq_recordset *rs);
/* One decision the intervals left open (gq_bottlenecks.open), as the
 * "undetermined" lists of the domains document and the card show it:
 * {decision: shared_budget|nested_budget, direction, gpus,
 *  figure_interval_gbps: [lo, hi], limit_interval_gbps: [lo, hi], text}. */
json_t *gq_bn_open_to_json(const gq_bn_open *u);
/* The inverse for what other commands read back: doc's "bottlenecks" list
 * into b->v (b->n of them; evidence observations, contention and ignored are
 * not read back). Fail closed: gpus (indices below ngpu, each once),
 * direction (h2d|d2h|p2p) and capacity_gbps (above 0, at most 100000) are
 * required; the other fields, when present, must have their type and
 * explained_by one of its names. GQ_E_USAGE "FILE: bottlenecks[2].gpus[1]: ...". */
int gq_bottlenecks_from_json(const char *path, const json_t *doc, int ngpu, gq_bottlenecks *b, gq_err *err);

/* ---- domains (doc/domains_json.c) ---- */

/* Document sections (an object whose keys merge into the document root; new
 * reference, NULL on allocation failure):
 *   domains: [[GPU..]..]   (the contract other commands read)
 *   domain_analysis: {chained: [bool..], split, threshold_gbps, gap_gbps: [lo, hi]
 *     or null, within_min_gbps, across_max_gbps (null when not applicable),
 *     max_spread, pairs, missing_pairs, no_p2p, set_aside, groups,
 *     undetermined: [gq_domain_open_to_json], method: text}. */
json_t *gq_domains_to_json(const gq_domains *d);
/* One boundary left open (gq_domains.open), as domain_analysis.undetermined
 * and the card's "undetermined" list show it: {decision: "domain_boundary",
 * gpus (the group), gap_gbps: [below, above], gap_interval_pct: [worst, best],
 * pairs: [[a, b]..] (measured again), text}. */
json_t *gq_domain_open_to_json(const gq_domain_open *u);
/* The inverse: doc's "domains" (a list, empty when nothing was clustered; each domain a list of GPU
 * indices or {"gpus": [...]}, each GPU below ngpu and in one domain only)
 * and, when present, "domain_analysis" (each field of its type). Fail
 * closed: GQ_E_USAGE "FILE: domains[1][0]: ...". */
int gq_domains_from_json(const char *path, const json_t *doc, int ngpu, gq_domains *d, gq_err *err);

/* The matrix as JSON: {gpus: [..], gbps: [[..]] with null for missing,
 * spread: [[..]], staged: [[bool..]]}. */
json_t *gq_pairmatrix_to_json(const gq_pairmatrix *m);

/* ---- placement from a document (doc/placement_json.c) ---- */

/* gq_place_model_build_typed with the "domains" and "bottlenecks" sections
 * of doc (a document root, or an object holding those sections; may be
 * NULL), decoded fail closed (GQ_E_USAGE naming the key); a "bottlenecks"
 * that is not a list is not read (what the card's step runner passes). */
int gq_place_model_build(gq_place_model *m, int ngpu, const gq_recordset *rs, const json_t *doc,
                         const gq_topo *topo, gq_err *err);

/* ---- compare's inputs (doc/decode.c) ---- */

/* What compare and fleet read from a saved document besides its records,
 * fail closed: the card's hostname (else host.hostname), timestamp, kind,
 * card.verdict (when a card is present: "pass", "warn", "fail" or
 * "incomplete", exact case), and stress.gpus[] (gpu: an index below 64,
 * each once; temp_max_c, sm_clock_avg_mhz, power_avg_w: numbers or null).
 * GQ_E_USAGE "FILE: stress.gpus[1].gpu: ..." (doc/decode.c). */
int gq_cmp_doc_from_json(const char *path, const json_t *root, gq_cmp_doc *d, gq_err *err);

/* ---- placement (doc/placement_json.c) ---- */

/* JSON sections of a place document: pairs, naive, offload, replicas, gain,
 * notes, model limits (new reference). */
json_t *gq_place_to_json(const gq_place_model *m, const gq_place_result *res);

/* ---- stress (doc/stress_json.c) ---- */

/* The "stress" section of the saved document (new reference; NULL on
 * allocation failure): options, per-GPU summaries, node line, findings,
 * verdict, and the time series ("series": per GPU, one array per column). */
json_t *gq_stress_to_json(const gq_stress_result *r, const gq_stress_summary *s);

/* One telemetry sample of GPU gpu as a journal's "sample" object: {"gpu": N}
 * and the time series' columns, each a value (new reference; NULL on
 * allocation failure). */
json_t *gq_stress_sample_to_json(int gpu, const gq_stress_point *p);

/* The "stress" section read back into the result and summary it was written
 * from (gq_stress_to_json's inverse: gq_stress_to_json of what it fills gives
 * the same section, and gq_stress_write_csv the same CSV). What the section
 * does not keep (baselines, the backend's clock, transfer bytes) is left
 * unknown or zero. GQ_OK; GQ_E_USAGE with *err naming what is missing or
 * unknown (its GPU list, precision, a verdict or level); GQ_E_NOMEM. Either
 * way r may hold points: release it with gq_stress_result_free(). */
int gq_stress_from_json(const json_t *section, gq_stress_result *r, gq_stress_summary *s, gq_err *err);

/* The stress run in a card's journal (exec/card_run.c): each telemetry
 * sample as a "sample" line (gq_stress_sample_to_json); the completed run's
 * whole section (gq_stress_to_json of r and s) as the "stress" step's mark
 * ({step, status: "done", stress}); and, resuming, that section when it can
 * be re-used: not interrupted, the same duration (stress_s), every GPU of
 * gpus_sel[0..n) sampled to its end (NULL otherwise; borrowed from j), for
 * gq_stress_from_json. */
int gq_stress_journal_sample(gq_journal *j, int gpu, const gq_stress_point *p, gq_err *err);
void gq_stress_journal_done(gq_journal *j, const gq_stress_result *r, const gq_stress_summary *s);
const json_t *gq_stress_journal_reusable(const gq_journal *j, const gq_topo *t, const int *gpus_sel, int n,
                                         double stress_s);

/* Time series as CSV, one row per GPU per sample, header first. */
void gq_stress_write_csv(FILE *f, const gq_stress_result *r);

/* ---- the fleet node summary (doc/fleet_node.c) ---- */

/* The "fleet-node" document of s (docs/json.md; new reference, NULL on
 * allocation failure). version: gpuqual's (NULL: "unknown"). */
json_t *gq_node_summary_to_json(const gq_node_summary *s, const char *version);
/* The inverse, fail closed: kind "fleet-node", schema_version 2..,
 * node.hostname, node.rank, node.verdict (exact case), node.exit_code and
 * node.complete required; the rest typed when present. where names the
 * source in messages ("rank 3"). s is gq_node_summary_free()d by the caller
 * on success; on failure nothing is left to free. */
int gq_node_summary_from_json(const char *where, const json_t *j, gq_node_summary *s, gq_err *err);
/* The summary of a card document (its records rs), for rank `rank`, whose
 * full card lies in `artefacts`. A card verdict that is not one of the four
 * names (exact case) is GQ_E_USAGE. */
int gq_node_summary_from_card(const json_t *doc, const gq_recordset *rs, int rank, const char *artefacts,
                              gq_node_summary *s, gq_err *err);

#endif
