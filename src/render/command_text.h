/* The tables the measuring commands print, each a renderer of a typed
 * result: `gpuqual domains` (the probe plan, the pair matrix, the domains,
 * the contention runs and bottlenecks: domains_text.c), `gpuqual place`
 * (the chosen and naive mappings: place_text.c) and `gpuqual stress`
 * (per-GPU figures and findings: stress_text.c) and `gpuqual kv` (the handoff's
 * rates and times: kv_text.c). The commands call them;
 * nothing here measures.
 */
#ifndef GQ_RENDER_COMMAND_TEXT_H
#define GQ_RENDER_COMMAND_TEXT_H

#include <stdbool.h>
#include <stdio.h>

#include "analysis/bottlenecks.h"
#include "analysis/domains.h"
#include "analysis/kv.h"
#include "analysis/placement.h"
#include "analysis/probes.h"
#include "analysis/stress.h"
#include "core/record.h"

/* The plan of `domains --plan-only` for n GPUs: counts by kind, the bound,
 * the time estimate at rounds of round_s, the domains the contention probes
 * assume (assumed may be NULL), then the contention probes (the first 200
 * unless list_all). */
void gq_render_probe_plan(FILE *f, const gq_probe_plan *p, int n, const gq_domains *assumed, int rounds,
                          double round_s, bool list_all);
/* The P2P read bandwidth matrix, one pair at a time, in blocks that fit. */
void gq_render_pair_matrix(FILE *f, const gq_pairmatrix *m);
/* The performance domains and the boundary that separates them. */
void gq_render_domains_text(FILE *f, const gq_domains *d);
/* Host paths alone, the concurrent runs, asymmetry, the bottlenecks and the
 * records kept out of the analysis (rs: the records b was inferred from). */
void gq_render_contention(FILE *f, const gq_bottlenecks *b, const gq_recordset *rs);

/* `gpuqual place`'s result on machine (a name for the heading). */
void gq_render_place_text(FILE *f, const gq_place_model *m, const gq_place_result *res, const char *machine);

/* `gpuqual kv`'s table (or its Markdown form) of handoff k on machine. */
void gq_render_kv_table(FILE *f, const gq_kv_result *k, const char *machine, bool markdown);

/* `gpuqual stress`'s table, or its Markdown form. */
void gq_render_stress_table(FILE *f, const gq_stress_result *r, const gq_stress_summary *s, bool markdown);

#endif
