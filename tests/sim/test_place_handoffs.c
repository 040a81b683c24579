/* What `gpuqual place` measures besides discovery (exec/place_verify.h,
 * gq_place_measure_handoffs): wherever the discovery plan holds a staged
 * matrix pair, the first probe or the last, both host directions at once on
 * the selection and the driver's own staged copy are measured; a plan with
 * no staged pair measures nothing more. On rtx4090x8 (no P2P: every pair is
 * staged) with GPUs 0 and 1 the plan is 0->1, 1->0; the staged flags are set
 * by hand to put the staged pair first, last, in both or in neither. */
#include "simtest.h"

#include "analysis/card.h"
#include "exec/discovery.h"
#include "exec/place_verify.h"

/* The records gq_place_measure_handoffs adds for the plan 0->1, 1->0 with the
 * given staged flags; the tests they measured in *tests (joined). */
static int handoffs(gq_backend *be, const gq_topo *t, bool first, bool last, char *tests, size_t n)
{
    int sel[2] = {0, 1};
    gq_discovery D = {0};
    gq_bottlenecks bn = {0}; /* no host budget found: the selection's own run only */
    gq_err e = {0};
    assert_int_equal(gq_probes_plan_matrix(&D.plan, t, sel, 2, &e), GQ_OK);
    assert_int_equal(D.plan.n, 2);
    assert_int_equal(D.plan.v[0].src[0], 0);
    assert_int_equal(D.plan.v[1].src[0], 1);
    D.plan.v[0].staged[0] = first;
    D.plan.v[1].staged[0] = last;
    D.bottlenecks = &bn;
    gq_harness_opts ho;
    gq_harness_opts_default(&ho);
    ho.rounds = 1;
    gq_recordset rs = {0};
    int rc = gq_place_measure_handoffs(be, t, &D, sel, 2, 16 * GQ_MiB, &ho, NULL, &rs, NULL, NULL, &e);
    if (rc)
        fail_msg("handoffs: %s", e.msg);
    tests[0] = 0;
    size_t u = 0;
    for (int i = 0; i < rs.n && u < n; i++)
        u += (size_t)snprintf(tests + u, n - u, "%s%s", i ? "," : "", rs.v[i].test);
    int got = rs.n;
    gq_records_free(&rs);
    gq_probe_plan_free(&D.plan);
    return got;
}

static void test_any_staged_pair_measures_the_handoffs(void **state)
{
    (void)state;
    gq_backend *be = st_open("rtx4090x8", 1, 0);
    gq_topo *t = calloc(1, sizeof *t);
    gq_topo_init(t);
    gq_err e = {0};
    assert_int_equal(be->ops->discover(be, t, &e), GQ_OK);
    assert_int_equal(t->p2p_cuda[0][1], 0);
    char none[2048], first[2048], last[2048], both[2048];
    assert_int_equal(handoffs(be, t, false, false, none, sizeof none), 0);
    int nf = handoffs(be, t, true, false, first, sizeof first);
    int nl = handoffs(be, t, false, true, last, sizeof last);
    int nb = handoffs(be, t, true, true, both, sizeof both);
    /* both directions at once on {0,1}, then the driver's staged copy on the staged pair's class */
    assert_true(nf >= 2);
    assert_int_equal(nl, nf);
    assert_int_equal(nb, nf);
    assert_string_equal(first, both);
    assert_string_equal(last, both);
    assert_non_null(strstr(both, GQ_CARD_TEST_DRIVER_STAGED));
    free(t);
    st_close(be);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_any_staged_pair_measures_the_handoffs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
