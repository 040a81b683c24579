/* The one plan runner (exec/plan_run.h). */
#include "exec/plan_run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/interrupt.h"

static gq_exec_next default_after(int rc)
{
    return rc == GQ_E_NOMEM ? GQ_EXEC_ABORT : GQ_EXEC_NEXT;
}

/* Put the journal's records of item k (a resumed run) in *rs; false when it
 * has none. */
static bool reuse_item(const gq_exec_reuse *ru, int k, gq_recordset *rs)
{
    bool any = false;
    for (int i = 0; ru && i < ru->rs->n; i++)
        if (ru->item[i] == k) {
            if (gq_records_push(rs, &ru->rs->v[i]))
                return any;
            any = true;
        }
    return any;
}

/* Run one described item, again while the callback asks. Returns the item's
 * verdict; *rc gets its status. */
static gq_exec_next run_item(gq_backend *be, const gq_topo *topo, gq_exec_step *s, gq_measurement *m,
                             const gq_harness_opts *ho, gq_journal **j, const gq_exec_opts *xo,
                             gq_recordset *rs, gq_exec_result *res, int *rc, gq_err *e)
{
    for (;;) {
        memset(e, 0, sizeof *e);
        const gq_harness_opts *o = s->ho ? s->ho : ho;
        s->first = rs->n;
        if (s->lat)
            *rc = gq_harness_latency(be, topo, s->test, s->lat, o, rs, *j, e);
        else
            *rc = gq_harness_measure(be, topo, m, o, rs, *j, e);
        res->items++;
        if (*rc == GQ_E_IO && *j) {
            /* what is not journalled would be lost to a crash: stop now,
             * keep what was written */
            res->journal_lost = true;
            snprintf(res->journal_error, sizeof res->journal_error, "%s", e->msg);
            *j = NULL;
            *rc = gq_err_set(e, GQ_E_FAIL, "%s; the run stopped", res->journal_error);
            return GQ_EXEC_ABORT;
        }
        if (*rc == GQ_OK && *j && (*rc = gq_journal_item_done(*j, e))) {
            res->journal_lost = true;
            snprintf(res->journal_error, sizeof res->journal_error, "%s", e->msg);
            *j = NULL;
            return GQ_EXEC_ABORT;
        }
        gq_exec_next next = xo->after ? xo->after(xo->arg, s, *rc, e) : default_after(*rc);
        if (*rc == GQ_E_INTR) {
            res->interrupted = true;
            return GQ_EXEC_NEXT;
        }
        if (next != GQ_EXEC_AGAIN)
            return next;
    }
}

int gq_exec_items(gq_backend *be, const gq_topo *topo, int n, gq_exec_fill_fn fill, void *fill_arg,
                  const gq_harness_opts *ho, gq_journal *j, const gq_exec_opts *xo, gq_recordset *rs,
                  gq_exec_result *res, gq_err *err)
{
    static const gq_exec_opts none = {0};
    if (!xo)
        xo = &none;
    memset(res, 0, sizeof *res);
    gq_measurement *m = malloc(sizeof *m);
    if (!m)
        return gq_err_set(err, GQ_E_NOMEM, "out of memory");
    int ret = GQ_OK;
    gq_exec_reuse jreuse = {.rs = j ? j->reuse_rs : NULL, .item = j ? j->reuse_item : NULL};
    const gq_exec_reuse *reuse = xo->reuse ? xo->reuse : jreuse.rs ? &jreuse : NULL;
    for (int k = 0; k < n && !res->interrupted; k++) {
        gq_exec_step s = {.index = k, .done = k + 1, .total = n};
        fill(fill_arg, &s, m);
        if (s.skip)
            continue;
        if (gq_interrupt_requested()) {
            res->interrupted = true;
            break;
        }
        /* items are numbered through the whole journal, so that a command
         * that runs several lists (the card's steps) numbers them the same
         * way when it is resumed */
        int seq = j ? j->next_item++ : k;
        if (reuse_item(reuse, seq, rs)) {
            res->reused++;
            if (j)
                j->reused++;
            continue;
        }
        if (xo->before)
            xo->before(xo->arg, &s);
        if (j)
            j->item = seq;
        gq_err e;
        int rc;
        if (run_item(be, topo, &s, m, ho, &j, xo, rs, res, &rc, &e) == GQ_EXEC_ABORT) {
            if (err)
                *err = e;
            ret = rc ? rc : GQ_E_FAIL;
            break;
        }
    }
    free(m);
    if (j)
        j->item = -1;
    if (ret == GQ_OK && gq_interrupt_requested())
        res->interrupted = true;
    return ret;
}

typedef struct plans_ctx {
    const gq_plan *plans;
    int nplans;
    bool skip_latency;
    int p, i; /* the next item */
} plans_ctx;

static void fill_plan(void *arg, gq_exec_step *s, gq_measurement *m)
{
    plans_ctx *c = arg;
    while (c->p < c->nplans && c->i >= c->plans[c->p].n) {
        c->p++;
        c->i = 0;
    }
    const gq_plan *pl = &c->plans[c->p];
    const gq_plan_item *it = &pl->items[c->i];
    s->plan = pl;
    s->p = c->p;
    s->i = c->i++;
    if (it->is_latency) {
        s->skip = c->skip_latency;
        s->lat = &it->lat;
        s->test = pl->test;
    } else {
        gq_plan_measurement(pl, s->i, m);
    }
}

int gq_exec_plans(gq_backend *be, const gq_topo *topo, const gq_plan *plans, int nplans,
                  const gq_harness_opts *ho, gq_journal *j, const gq_exec_opts *xo, gq_recordset *rs,
                  gq_exec_result *res, gq_err *err)
{
    plans_ctx c = {.plans = plans, .nplans = nplans, .skip_latency = xo && xo->skip_latency};
    int n = 0;
    for (int p = 0; p < nplans; p++)
        n += plans[p].n;
    int rc = gq_exec_items(be, topo, n, fill_plan, &c, ho, j, xo, rs, res, err);
    /* the plans are one step: their journal lines synced together (and at
     * least once a second while they run, by the journal) */
    gq_err se = {0};
    if (j && !res->journal_lost && gq_journal_sync(j, &se) && rc == GQ_OK) {
        res->journal_lost = true;
        snprintf(res->journal_error, sizeof res->journal_error, "%s", se.msg);
        if (err)
            *err = se;
        rc = GQ_E_FAIL;
    }
    return rc;
}

typedef struct one_ctx {
    const gq_measurement *m;
    int rc;
    gq_err e;
} one_ctx;

static void fill_one(void *arg, gq_exec_step *s, gq_measurement *m)
{
    memcpy(m, ((one_ctx *)arg)->m, sizeof *m);
}

static gq_exec_next after_one(void *arg, gq_exec_step *s, int rc, const gq_err *e)
{
    one_ctx *c = arg;
    c->rc = rc;
    c->e = *e;
    return GQ_EXEC_NEXT;
}

int gq_exec_one(gq_backend *be, const gq_topo *topo, const gq_measurement *m, const gq_harness_opts *ho,
                gq_journal *j, gq_recordset *rs, gq_err *err)
{
    one_ctx c = {.m = m};
    gq_exec_opts xo = {.after = after_one, .arg = &c};
    gq_exec_result res;
    int rc = gq_exec_items(be, topo, 1, fill_one, &c, ho, j, &xo, rs, &res, err);
    if (rc)
        return rc;
    if (!res.items && !res.reused)
        return gq_err_set(err, GQ_E_INTR, "interrupted");
    if (c.rc && err)
        *err = c.e;
    return c.rc;
}
