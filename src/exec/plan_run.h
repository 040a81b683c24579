/* The one plan runner: runs plans of the catalog (measure/catalog.h) through
 * the harness, item by item, for run, sweep and the GPU tests.
 *
 * Each finished record goes to the journal at once (the harness appends it).
 * Ctrl-C (core/interrupt.h) stops the run after the current round: what was
 * measured is kept. Progress is reported through callbacks; nothing here
 * prints (the CLI does).
 */
#ifndef GQ_EXEC_PLAN_RUN_H
#define GQ_EXEC_PLAN_RUN_H

#include <stdbool.h>

#include "backend/backend.h"
#include "core/record.h"
#include "core/status.h"
#include "measure/catalog.h"
#include "measure/harness.h"
#include "measure/journal.h"
#include "topo/topo.h"

/* Where the runner is: plan p, its item i; done counts the items started so
 * far over all plans (1-based for the current one), total is every item of
 * every plan (latency items included, also when skipped). */
typedef struct gq_exec_step {
    const gq_plan *plan;
    int p, i;
    int done, total;
} gq_exec_step;

/* What a result callback tells the runner to do after an item. */
typedef enum gq_exec_next {
    GQ_EXEC_NEXT = 0, /* go on with the next item */
    GQ_EXEC_ABORT,    /* stop now: gq_exec_plans returns the item's status and error */
} gq_exec_next;

typedef struct gq_exec_opts {
    bool skip_latency; /* leave out latency items (sweep measures bandwidth only) */
    /* called before each item; may be NULL */
    void (*before)(void *arg, const gq_exec_step *s);
    /* called after each item with the harness' status; after GQ_E_INTR the
     * runner stops whatever it returns. When the journal could not be
     * written (GQ_E_IO), the runner has already stopped using it
     * (gq_exec_result's journal_lost). NULL: GQ_E_NOMEM aborts, everything
     * else goes on. */
    gq_exec_next (*after)(void *arg, const gq_exec_step *s, int rc, const gq_err *e);
    void *arg;
} gq_exec_opts;

typedef struct gq_exec_result {
    bool interrupted;  /* Ctrl-C: the run stopped early, what finished is kept */
    bool journal_lost; /* a journal write failed; the journal was not used after it */
    int items;         /* items run (interrupted or not) */
    /* that failure's text */
    char journal_error[sizeof((gq_err *)0)->msg];
} gq_exec_result;

/* Run nplans plans in order, appending records to *rs and to journal j (may
 * be NULL). Returns GQ_OK when every plan ran or the run was interrupted
 * (res->interrupted), or the status of the item whose result callback said
 * GQ_EXEC_ABORT (with its error in *err). */
int gq_exec_plans(gq_backend *be, const gq_topo *topo, const gq_plan *plans, int nplans,
                  const gq_harness_opts *ho, gq_journal *j, const gq_exec_opts *xo, gq_recordset *rs,
                  gq_exec_result *res, gq_err *err);

#endif
