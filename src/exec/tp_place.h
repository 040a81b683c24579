/* place --tp N, the measuring part: pairwise copies, each candidate group's
 * all-reduce alone, local improvements while the budget lasts, and the
 * verification (the chosen groups all at once, then the naive contiguous
 * groups all at once). The choice itself is analysis/tp_groups.h's. */
#ifndef GQ_EXEC_TP_PLACE_H
#define GQ_EXEC_TP_PLACE_H

#include <stdbool.h>
#include <stdint.h>

#include "analysis/tp_groups.h"
#include "backend/backend.h"
#include "core/record.h"
#include "measure/harness.h"
#include "measure/journal.h"
#include "topo/topo.h"

typedef struct gq_tp_opts {
    int tp;
    int budget;     /* candidate groups measured alone, at most */
    uint64_t bytes; /* all-reduce size and copy size */
    int rounds, warmup, iters;
    const gq_harness_opts *ho; /* for the pairwise copies (progress included) */
    /* Pairwise copies already measured (the card's matrix: the same probe), GB/s by GPU index
     * [src][dst]; a pair missing either way (not > 0) is measured. NULL: measure every pair. */
    const double (*known_copy)[GQ_MAX_GPUS];
    void (*progress)(void *arg, const char *test, int round, int rounds);
    void *progress_arg;
} gq_tp_opts;

typedef struct gq_tp_result {
    gq_tp_state st;
    int measured; /* candidate groups measured alone */
    gq_tp_part chosen, naive;
    bool verified;
    double chosen_once[GQ_MAX_GPUS],
        naive_once[GQ_MAX_GPUS]; /* busbw of each group, all at once; < 0 invalid */
    double chosen_min_once, naive_min_once;
    /* the chosen groups were no faster than the naive ones at once (within
     * GQ_TP_KEEP_NAIVE): chosen is the naive partition, and its figures */
    bool kept_naive;
    gq_tp_part tried;      /* with kept_naive: the partition that led alone */
    double tried_min_once; /* and its slowest group at once */
} gq_tp_result;

#define GQ_TP_KEEP_NAIVE 0.02

/* Runs everything above on gpus[0..n); records (copies, collectives) are
 * appended to rs and the journal. GQ_E_NOLIB when the backend cannot run
 * collectives (err says why), GQ_E_INTR when interrupted, GQ_E_USAGE for a
 * bad --tp. */
int gq_tp_place(gq_backend *be, const gq_topo *topo, const int *gpus, int n, const gq_tp_opts *o,
                gq_journal *j, gq_recordset *rs, gq_tp_result *res, gq_err *err);

#endif
