/* Tensor-parallel groups (place --tp N): which candidate groups to measure,
 * and which partition of the GPUs into groups of N to choose from the
 * all-reduce bus bandwidth measured on them. Pure functions on typed
 * structs; exec/tp_place.c measures, cli/place_tp.c prints.
 *
 * How candidates are chosen, in this order, while the budget (groups
 * measured alone) lasts:
 *   1. the naive contiguous groups (the selected GPUs in index order, N at
 *      a time), the baseline the gain is reported against;
 *   2. every group of N when there are at most `budget` of them (8 GPUs:
 *      28 pairs, 70 groups of 4): then the choice is exhaustive;
 *   3. otherwise: the groups of the partition built from pairwise copy
 *      bandwidth (each group seeded with the fastest remaining pair and grown
 *      by the GPU whose slowest copy to the members is fastest), the groups
 *      of GPUs joined by NVLink or sharing a PCIe parent (the topology's
 *      domains), and then local improvements: one GPU swapped between two
 *      groups of the best partition so far, each new group measured, until
 *      no swap helps or the budget is spent.
 * The partition chosen maximises the slowest group's all-reduce busbw
 * (groups serve side by side; the slowest bounds the set), then the sum.
 */
#ifndef GQ_ANALYSIS_TP_GROUPS_H
#define GQ_ANALYSIS_TP_GROUPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/status.h"
#include "core/types.h"

#define GQ_TP_MAX_CAND 512

typedef uint64_t gq_tp_set; /* bit i = GPU i */

typedef enum gq_tp_origin {
    GQ_TP_NAIVE = 0, /* the naive contiguous groups */
    GQ_TP_ALL,       /* every group of N (exhaustive) */
    GQ_TP_COPY,      /* the partition by pairwise copy bandwidth */
    GQ_TP_DOMAIN,    /* GPUs joined by NVLink or under one PCIe parent */
    GQ_TP_SWAP,      /* a local improvement */
} gq_tp_origin;

const char *gq_tp_origin_name(gq_tp_origin o);

typedef struct gq_tp_cand {
    gq_tp_set set;
    gq_tp_origin origin;
    double busbw; /* GB/s measured alone; < 0 not measured yet or invalid */
    double copy;  /* GB/s: the slowest pairwise copy within the group (mean of both ways); < 0 unknown */
} gq_tp_cand;

typedef struct gq_tp_state {
    int n; /* selected GPUs */
    int gpus[GQ_MAX_GPUS];
    int tp;                                /* N */
    int budget;                            /* groups measured alone at most */
    double copy[GQ_MAX_GPUS][GQ_MAX_GPUS]; /* pairwise copy GB/s (mean of both ways), < 0 unknown */
    int ncand;
    gq_tp_cand cand[GQ_TP_MAX_CAND];
} gq_tp_state;

/* A partition: ngroups candidate indices. */
typedef struct gq_tp_part {
    int ngroups;
    int idx[GQ_MAX_GPUS];
    double min_busbw, sum_busbw; /* from the candidates' alone figures */
} gq_tp_part;

/* Set up: n selected GPUs, groups of tp; GQ_E_USAGE with one line when tp
 * < 2 or does not divide n. copy[][] starts unknown. */
int gq_tp_init(gq_tp_state *s, const int *gpus, int n, int tp, int budget, gq_err *err);

/* Add a candidate group (no duplicate; returns its index, or -1 when the
 * set is already there, -2 when full). */
int gq_tp_add(gq_tp_state *s, gq_tp_set set, gq_tp_origin origin);

/* The first candidates (1 and 2, or 1 and 3 without the swaps): nvlinks
 * (may be NULL) and parent (a PCIe parent per GPU index, -1 unknown; may be
 * NULL) describe the domains. */
void gq_tp_seed(gq_tp_state *s, const int (*nvlinks)[GQ_MAX_GPUS], const int *parent);

/* The naive partition's candidates (always the first n/tp candidates). */
void gq_tp_naive(const gq_tp_state *s, gq_tp_part *p);

/* The best partition over the measured candidates (exhaustive search over
 * partitions made of measured candidates; false when none covers every
 * GPU). */
bool gq_tp_best(const gq_tp_state *s, gq_tp_part *p);

/* Local improvements of p: new candidates from swapping one GPU between two
 * of its groups (not yet candidates), at most `room` of them. Returns how
 * many were added. */
int gq_tp_swaps(gq_tp_state *s, const gq_tp_part *p, int room);

/* The best single group by measured busbw and by pairwise copy (indices, -1
 * none). */
int gq_tp_best_by_busbw(const gq_tp_state *s);
int gq_tp_best_by_copy(const gq_tp_state *s);

/* "0,1,2,3" */
void gq_tp_set_str(gq_tp_set set, char *buf, size_t n);

#endif
