/* Internal to the card's judge (card_judge.c, card_judge_util.c,
 * card_rows.c, card_findings.c): the helpers they share, one function per row
 * of the card's table (card_rows.c) and the functions that write the
 * findings (card_findings.c). Not for use outside src/analysis/card_*.c. */
#ifndef GQ_ANALYSIS_CARD_JUDGE_INTERNAL_H
#define GQ_ANALYSIS_CARD_JUDGE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "analysis/card.h"
#include "analysis/expect.h"

#define MAXG GQ_MAX_GPUS

/* The performance domains of the card's domains section: dom_of by GPU index
 * (-1 unknown) and their count. */
typedef struct card_doms {
    int dom_of[MAXG];
    int ndom;
} card_doms;

/* The first matrix's ranges of GB/s: min and max of its finite cells within
 * a domain (both GPUs in the same one), across, and overall; NAN without a
 * matrix. */
typedef struct p2p_ranges {
    double wlo, whi, alo, ahi, lo, hi;
} p2p_ranges;

/* Host-staged pairs measured both ways: gpuqual's pipelined staging (the
 * first matrix's cell) and the driver's own staged copy (the "driver_staged"
 * matrix), over the same pairs; n = 0 when none. a/b: the pair where the
 * driver falls furthest below the pipeline. */
typedef struct staged_pair {
    int n, a, b;
    double plo, phi, dlo, dhi, worst_p, worst_d;
} staged_pair;

/* ---- helpers (card_judge_util.c) ---- */

/* The sum of v[0..n-1]. */
double gq_judge_sum(const double *v, int n);
const char *gq_judge_f1(double v, char *b, size_t n);
/* A size that need not be a power of two: "74 KiB", "1.5 MiB". */
const char *gq_judge_approx_size(double bytes, char *b, size_t n);
/* "52.6–53.8" or "53.0" */
const char *gq_judge_range(double lo, double hi, char *b, size_t n);
/* pos[g] for a GPU index read from a document, or -1 when g is out of range
 * (a saved card edited by hand may name any integer). */
int gq_judge_pos_of(const int *pos, int g);
/* Worst verdict among the checks whose id is in ids (NULL-terminated). Rows
 * with no judged check are "info" (reported, nothing to judge) or "skip". */
const char *gq_judge_row_verdict(const gq_checklist *cl, const char *const *ids, bool measured);
void gq_judge_row(gq_card *rows, const char *check, const char *evidence, const char *result,
                  const char *verdict, const char *decision);
/* A finding; running out of memory drops it and gq_card_judge reports it. */
__attribute__((format(printf, 2, 3))) void gq_judge_finding(gq_card *fs, const char *fmt, ...);
/* The domains' GPUs (the domains view) by GPU index. */
void gq_judge_doms_of(const gq_card_domains_view *dm, card_doms *d);
/* The first matrix's ranges within and across the domains d. */
void gq_judge_p2p_ranges_of(const gq_card_matrix_view *m0, const card_doms *d, p2p_ranges *r);
/* The host-staged pairs of the driver's staged matrix md against the first matrix m0. */
void gq_judge_staged_pairs_of(const gq_card_matrix_view *md, const gq_card_matrix_view *m0, staged_pair *sp);
/* How many of the uplinks above the GPUs (identity.uplinks) trained below their maximum width. */
int gq_judge_uplinks_down(const gq_card_identity_view *id);

/* ---- the rows (card_rows.c) ---- */

/* Identity and links: the GPUs, their memory, power and PCIe links. */
void gq_judge_row_identity(gq_card *rows, const gq_checklist *cl, const gq_card_identity_view *id);
/* Pairwise GPU traffic: the first matrix, one pair at a time, within and across domains. */
void gq_judge_row_pairwise(gq_card *rows, const gq_checklist *cl, const gq_card_matrix_view *m0,
                           const gq_card_domains_view *dm, int ndom, const p2p_ranges *r,
                           const staged_pair *sp);
/* Concurrent GPU traffic: pairs at once within domains and across. */
void gq_judge_row_concurrent(gq_card *rows, const gq_checklist *cl, const gq_card_pairs_view *pairs,
                             const gq_card_domains_view *dm, int ndom);
/* Host-memory traffic: each GPU alone, subsets and all at once, and the shared host budgets. */
void gq_judge_row_host(gq_card *rows, const gq_checklist *cl, const gq_card_host_view *host,
                       const gq_card_bottlenecks_view *bottlenecks, const gq_card_facts *f);
/* Transfer granularity: the buffer-size sweeps and their fits. */
void gq_judge_row_sweeps(gq_card *rows, const gq_checklist *cl, const gq_card_sweeps_view *sweeps);
/* Latency: pointer chase host-GPU and GPU-GPU. */
void gq_judge_row_latency(gq_card *rows, const gq_checklist *cl, const gq_card_latency_view *lat);
/* Whole-node health: the stress section's temperatures, clocks, power capping and slowdowns. */
void gq_judge_row_health(gq_card *rows, const gq_checklist *cl, const gq_card_stress_view *stress);
/* Placement: the roles solved on the measured paths and the gain over the naive mapping. */
void gq_judge_row_placement(gq_card *rows, const gq_checklist *cl, const gq_card_placement_view *pl);
/* The row of each step with a section of its own (analysis/card_steps.h: GQ_CARD_SECTIONS), from
 * that section's typed view: gq_judge_row_NAME (Collectives: the TP-2 groups' all-reduce, in
 * card_rows.c). A row whose step did not measure is worded by gq_card_rest_rows, not by the row. */
#define GQ_JUDGE_SECTION_ROW_DECL_(ID, NAME, TYPE, FIELD)                                                    \
    void gq_judge_row_##NAME(gq_card *rows, const gq_checklist *cl, const TYPE *v);
GQ_CARD_SECTIONS(GQ_JUDGE_SECTION_ROW_DECL_)
#undef GQ_JUDGE_SECTION_ROW_DECL_
/* Measurement integrity: impossible figures, overlap, data checks and errors. */
void gq_judge_row_integrity(gq_card *rows, const gq_checklist *cl, const gq_card_facts *f);
/* Application validation: not measured by gpuqual. */
void gq_judge_row_application(gq_card *rows);

/* ---- the findings (card_findings.c) ---- */

/* The pairwise finding: no P2P, the domains, or one domain. */
void gq_judge_find_pairwise(gq_card *fs, const gq_card_matrix_view *m0, const gq_card_domains_view *dm,
                            int ndom, const p2p_ranges *r);
/* The concurrent finding: what crossing domains keeps. */
void gq_judge_find_concurrent(gq_card *fs, const gq_card_pairs_view *pairs);
/* The bottleneck findings: the shared budgets (P2P and host) inferred from concurrent copies. */
void gq_judge_find_bottlenecks(gq_card *fs, const gq_card_bottlenecks_view *bottlenecks);
/* The host finding: an asymmetry with all GPUs copying at once that each GPU alone does not show. */
void gq_judge_find_host(gq_card *fs, const gq_card_host_view *host);
/* The sweep finding: the first fitted sweep's fixed cost and half-bandwidth size. */
void gq_judge_find_sweeps(gq_card *fs, const gq_card_sweeps_view *sweeps);
/* The health finding: what the load did to the hottest GPU. */
void gq_judge_find_health(gq_card *fs, const gq_card_stress_view *stress);
/* The placement findings: the offload workers and the prefill-to-decode handoffs. */
void gq_judge_find_placement(gq_card *fs, const gq_card_placement_view *pl,
                             const gq_card_bottlenecks_view *bottlenecks, const gq_card_facts *f);
/* The verdict findings: up to six checks with the card's verdict, when it is warn or fail. */
void gq_judge_find_verdicts(gq_card *fs, const gq_checklist *cl, gq_verdict overall);
/* One finding per GPU the domains analysis set aside (the card's "domains"
 * section's set_aside[]: every pair with it slow for a reason of its own). */
void gq_judge_find_set_aside(gq_card *fs, const gq_card_domains_view *dm);
/* One finding per busy GPU: what ran on it and what the card did about it. */
void gq_judge_find_busy(gq_card *fs);
/* The identity finding: a virtual machine showing one NUMA node. */
void gq_judge_find_identity(gq_card *fs, const gq_card_identity_view *id);

#endif
