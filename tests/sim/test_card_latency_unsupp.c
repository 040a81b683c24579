/* A card on a backend that cannot measure latency (exec/card_steps.c): the
 * latency step is skipped as not applicable, with the backend's reason as
 * its note, after the first GPU's answer (no use asking every GPU and pair),
 * and the card goes on to its other steps (issue 30, mutation testing). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "analysis/card.h"
#include "backend/backend.h"
#include "backend/sim/sim.h"
#include "core/interrupt.h"
#include "exec/card_run.h"

static void latency_unsupported_is_not_applicable(void **state)
{
    (void)state;
    gq_backend_register_builtin();
    gq_backend be = {0};
    gq_backend_opts bo;
    gq_sim_opts(&bo, "h200x2", 1, -1, NULL);
    gq_err e = {0};
    assert_int_equal(gq_backend_open(&be, "sim", &bo, &e), GQ_OK);
    gq_topo *t = calloc(1, sizeof *t);
    assert_non_null(t);
    gq_topo_init(t);
    assert_int_equal(be.ops->discover(&be, t, &e), GQ_OK);
    const gq_backend_ops *sim = be.ops;
    gq_backend_ops ops = *sim;
    ops.latency = NULL; /* the harness: GQ_E_UNSUPP */
    be.ops = &ops;

    gq_card_opts co;
    gq_card_opts_default(&co);
    co.budget_s = 300;
    co.stress_s = 0;
    co.ngpus = t->ngpu;
    for (int i = 0; i < co.ngpus; i++)
        co.gpus[i] = i;
    gq_card_plan *plan = calloc(1, sizeof *plan);
    gq_card_result *res = calloc(1, sizeof *res);
    assert_non_null(plan);
    assert_non_null(res);
    assert_int_equal(gq_card_plan_make(t, &co, plan, &e), GQ_OK);
    assert_true(plan->step[GQ_CS_LATENCY].run);
    gq_interrupt_clear();
    assert_int_equal(gq_card_execute(&be, t, &co, plan, NULL, NULL, NULL, res, &e), GQ_OK);
    const gq_card_step *st = &plan->step[GQ_CS_LATENCY];
    assert_int_equal(st->status, GQ_CSS_SKIPPED);
    assert_int_equal(st->reason, GQ_EVR_NOT_APPLICABLE);
    assert_string_equal(st->note, "host_device_latency_sm: the sim backend cannot measure latency");
    assert_int_equal(res->nfailed, 0);
    assert_false(res->interrupted);
    /* no latency record is kept; the other steps ran */
    int lat = 0, other = 0;
    for (int i = 0; i < res->rs.n; i++) {
        lat += res->rs.v[i].is_latency;
        other += !res->rs.v[i].is_latency;
    }
    assert_int_equal(lat, 0);
    assert_true(other > 0);
    assert_int_equal(plan->step[GQ_CS_HOST].status, GQ_CSS_DONE);
    gq_card_result_free(res);
    free(res);
    free(plan);
    be.ops = sim;
    gq_backend_close(&be);
    free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(latency_unsupported_is_not_applicable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
