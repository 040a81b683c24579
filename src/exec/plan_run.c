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

int gq_exec_plans(gq_backend *be, const gq_topo *topo, const gq_plan *plans, int nplans,
                  const gq_harness_opts *ho, gq_journal *j, const gq_exec_opts *xo, gq_recordset *rs,
                  gq_exec_result *res, gq_err *err)
{
    static const gq_exec_opts none = {0};
    if (!xo)
        xo = &none;
    memset(res, 0, sizeof *res);
    gq_exec_step s = {0};
    for (int p = 0; p < nplans; p++)
        s.total += plans[p].n;
    gq_measurement *m = malloc(sizeof *m);
    if (!m)
        return gq_err_set(err, GQ_E_NOMEM, "out of memory");
    int ret = GQ_OK;
    for (int p = 0; p < nplans && !res->interrupted && ret == GQ_OK; p++) {
        for (int i = 0; i < plans[p].n; i++) {
            const gq_plan_item *it = &plans[p].items[i];
            if (xo->skip_latency && it->is_latency) {
                s.done++;
                continue;
            }
            if (gq_interrupt_requested()) {
                res->interrupted = true;
                break;
            }
            s.plan = &plans[p];
            s.p = p;
            s.i = i;
            s.done++;
            if (xo->before)
                xo->before(xo->arg, &s);
            gq_err e = {0};
            int rc;
            if (it->is_latency) {
                rc = gq_harness_latency(be, topo, plans[p].test, &it->lat, ho, rs, j, &e);
            } else {
                gq_plan_measurement(&plans[p], i, m);
                rc = gq_harness_measure(be, topo, m, ho, rs, j, &e);
            }
            res->items++;
            if (rc == GQ_E_IO && j) {
                res->journal_lost = true;
                snprintf(res->journal_error, sizeof res->journal_error, "%s", e.msg);
                j = NULL;
            }
            gq_exec_next next = xo->after ? xo->after(xo->arg, &s, rc, &e) : default_after(rc);
            if (rc == GQ_E_INTR) {
                res->interrupted = true;
                break;
            }
            if (next == GQ_EXEC_ABORT) {
                if (err)
                    *err = e;
                ret = rc ? rc : GQ_E_FAIL;
                break;
            }
        }
    }
    free(m);
    if (ret == GQ_OK && gq_interrupt_requested())
        res->interrupted = true;
    return ret;
}
