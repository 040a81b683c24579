/* The one plan runner: runs measurements through the harness, item by item,
 * for run, sweep, pairs, domains (discovery), kv and the GPU tests.
 *
 * gq_exec_items runs a list whose items a callback describes (a measurement
 * or a latency); gq_exec_plans runs plans of the catalog (measure/catalog.h)
 * with it. Each finished record goes to the journal at once (the harness
 * appends it), tagged with its item's number K (items are numbered through
 * the whole journal, gq_journal.next_item, so a command that runs several
 * lists numbers them the same way again), and a finished item adds a "step"
 * line {"step":"item","status":"done","item":K}; a resumed run
 * (gq_exec_opts.reuse) re-uses the records of those items. Ctrl-C (core/interrupt.h) stops the run after the
 * current round: what was measured is kept. Progress is reported through callbacks; nothing here prints (the
 * CLI does).
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

/* One item of a run. The runner sets index, done, total and first; the fill
 * callback (gq_exec_items) says what the item is. */
typedef struct gq_exec_step {
    int index;       /* 0-based in the list */
    int done, total; /* items started so far (this one included), and all items (skipped ones too) */
    int first;       /* index in the recordset of the item's first record */
    /* set by the fill callback */
    bool skip;                 /* leave this item out */
    const gq_latency_req *lat; /* non-NULL: a latency, named test */
    const char *test;          /* the latency's test name (a measurement's is in it) */
    const gq_harness_opts *ho; /* non-NULL: options for this item instead of the run's */
    const gq_plan *plan;       /* gq_exec_plans: the plan, its index p and the item's index i in it */
    int p, i;
} gq_exec_step;

/* What a result callback tells the runner to do after an item. */
typedef enum gq_exec_next {
    GQ_EXEC_NEXT = 0, /* go on with the next item */
    GQ_EXEC_ABORT,    /* stop now: the runner returns the item's status and error */
    GQ_EXEC_AGAIN,    /* run the same item once more, with s->ho as the callback left it */
} gq_exec_next;

/* A resumed run's finished items (gq_journal_resume): record i of rs belongs
 * to item item[i]. Those items are not measured again; their records are
 * put in the results in their place. */
typedef struct gq_exec_reuse {
    const gq_recordset *rs;
    const int *item;
} gq_exec_reuse;

typedef struct gq_exec_opts {
    bool skip_latency; /* gq_exec_plans: leave out latency items (sweep measures bandwidth only) */
    /* called before each item; may be NULL */
    void (*before)(void *arg, const gq_exec_step *s);
    /* called after each item with the harness' status; after GQ_E_INTR the
     * runner stops whatever it returns. When the journal could not be
     * written, the runner stops at once (journal_lost) and returns
     * GQ_E_FAIL: what is not journalled would be lost to a crash. NULL: GQ_E_NOMEM aborts, everything
     * else goes on. */
    gq_exec_next (*after)(void *arg, gq_exec_step *s, int rc, const gq_err *e);
    void *arg;
    const gq_exec_reuse *reuse; /* NULL: measure every item */
} gq_exec_opts;

typedef struct gq_exec_result {
    bool interrupted;  /* Ctrl-C: the run stopped early, what finished is kept */
    bool journal_lost; /* a journal write failed: the run stopped there (GQ_E_FAIL) */
    int items;         /* items run (interrupted or not) */
    int reused;        /* items taken from a resumed journal */
    /* that failure's text */
    char journal_error[sizeof((gq_err *)0)->msg];
} gq_exec_result;

/* Describe item s->index: fill *m (a measurement), or set s->lat and
 * s->test (a latency), or set s->skip. */
typedef void (*gq_exec_fill_fn)(void *arg, gq_exec_step *s, gq_measurement *m);

/* Run n items in order, appending records to *rs and to journal j (may be
 * NULL). Returns GQ_OK when every item ran or the run was interrupted
 * (res->interrupted), GQ_E_NOMEM, or the status of the item whose result
 * callback said GQ_EXEC_ABORT (with its error in *err). */
int gq_exec_items(gq_backend *be, const gq_topo *topo, int n, gq_exec_fill_fn fill, void *fill_arg,
                  const gq_harness_opts *ho, gq_journal *j, const gq_exec_opts *xo, gq_recordset *rs,
                  gq_exec_result *res, gq_err *err);

/* Run nplans plans of the catalog in order (every item of each), as
 * gq_exec_items does; s->plan, s->p and s->i say which item. */
int gq_exec_plans(gq_backend *be, const gq_topo *topo, const gq_plan *plans, int nplans,
                  const gq_harness_opts *ho, gq_journal *j, const gq_exec_opts *xo, gq_recordset *rs,
                  gq_exec_result *res, gq_err *err);

/* One measurement through the runner (Ctrl-C, journal): GQ_E_INTR when
 * interrupted, else the harness' status. */
int gq_exec_one(gq_backend *be, const gq_topo *topo, const gq_measurement *m, const gq_harness_opts *ho,
                gq_journal *j, gq_recordset *rs, gq_err *err);

#endif
