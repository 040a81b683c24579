/* What the placement files share among themselves (not for callers outside
 * src/analysis/placement_*.c; placement.h is the public header): GPU-set bit
 * helpers, the evidence formatter, and the functions one placement file
 * provides to another. */
#ifndef GQ_ANALYSIS_PLACEMENT_INTERNAL_H
#define GQ_ANALYSIS_PLACEMENT_INTERNAL_H

#include <stdarg.h>
#include <stdio.h>

#include "analysis/placement.h"

#define BIT(i) ((gq_gpuset)1 << (i))
#define IN(set, i) (((set) >> (i)) & 1u)

/* Explanations and evidence are cut at their buffer's size; a shortened
 * sentence is acceptable where a fixed-size record is the contract. */
static inline void gq_place_textf(char *buf, size_t n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static inline void gq_place_textf(char *buf, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, n, fmt, ap);
    va_end(ap);
}

/* A candidate's predicted figures: the aggregate, then the slowest flow. */
typedef struct gq_place_score {
    double agg, min;
} gq_place_score;

/* placement_model.c: how many GPUs s holds; the performance domain GPU g
 * belongs to (-1 none). */
int gq_gpuset_count(gq_gpuset s);
int gq_place_domain_of(const gq_place_model *m, int g);

/* placement_doc.c: add the domains and the shared budgets a domains
 * analysis found (either may be NULL). */
void gq_place_model_from_saved(gq_place_model *m, const gq_domains *dom, const gq_bottlenecks *bn);

/* placement_predict.c: how many units of limit l flow f uses; the handoff
 * flows of np prefill->decode pairs into f (returns np); the predicted host
 * rates of k offload workers w all active (ph, pd may be NULL). */
int gq_place_limit_use(const gq_place_limit *l, const gq_pflow *f);
int gq_place_pairs_to_flows(const gq_place_model *m, const int (*pairs)[2], int np, gq_pflow *f);
gq_place_score gq_place_score_workers(const gq_place_model *m, const int *w, int k, gq_pflow_pred *ph,
                                      gq_pflow_pred *pd);

/* placement_search.c: choose among the usable GPUs u[0..nu). Each reports
 * in *candidates how many mappings it compared (the caller sets it to 0
 * first) and in *exhaustive whether it compared them all.
 * gq_place_search_pairs: N prefill and max(N, M) pairs into pairs; GQ_OK,
 *   or -1 when out of memory.
 * gq_place_search_workers: K offload workers into w; returns how many (fewer
 *   than K when nu < K), -1 when out of memory.
 * gq_place_search_replicas: the items (pairs' GPUs, or single GPUs) split
 *   into R replicas: assign[item] = replica or -1; 1 found, 0 no split
 *   exists, -1 out of memory. */
int gq_place_search_pairs(const gq_place_model *m, const int *u, int nu, int N, int M, int (*pairs)[2],
                          long *candidates, bool *exhaustive);
int gq_place_search_workers(const gq_place_model *m, const int *u, int nu, int K, int *w, long *candidates,
                            bool *exhaustive);
int gq_place_search_replicas(const gq_place_model *m, const gq_gpuset *items, int nitems, int R, int *assign,
                             long *candidates, bool *exhaustive);

#endif
