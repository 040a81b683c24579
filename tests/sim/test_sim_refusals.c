/* The sim backend's refusals of calls no caller of gpuqual makes
 * (src/backend/sim/sim_backend.c, sim_run.c): observe of a
 * GPU that does not exist, a flow from an endpoint of no known kind or by a
 * method that does not exist, a run of no copies and no duration. Written
 * for issue 30 (lines no test ran). */
#include "simtest.h"

#include "backend/sim/sim.h"

static void refusals(void **state)
{
    (void)state;
    gq_backend *be = st_open("h200x2", 1, 0);
    gq_err e = {0};
    gq_gpu_load load;
    assert_int_equal(be->ops->observe(be, 2, &load, &e), GQ_E_USAGE);
    assert_string_equal(e.msg, "GPU 2 does not exist");
    assert_int_equal(be->ops->observe(be, -1, &load, &e), GQ_E_USAGE);
    assert_string_equal(e.msg, "GPU -1 does not exist");
    assert_int_equal(be->ops->observe(be, 1, &load, &e), GQ_OK);

    gq_group *g = NULL;
    gq_flow f = st_h2d(0);
    f.src.kind = (gq_ep_kind)7;
    assert_int_equal(be->ops->prepare(be, &f, 1, &g, &e), GQ_E_USAGE);
    assert_non_null(strstr(e.msg, "unknown endpoint kind 7"));
    f = st_h2d(0);
    f.method = (gq_method)(GQ_METHOD_DRIVER_STAGED + 1);
    assert_int_equal(be->ops->prepare(be, &f, 1, &g, &e), GQ_E_USAGE);
    char want[64];
    snprintf(want, sizeof want, "flow 0: unknown method %d", (int)GQ_METHOD_DRIVER_STAGED + 1);
    assert_string_equal(e.msg, want);

    f = st_h2d(0);
    assert_int_equal(be->ops->prepare(be, &f, 1, &g, &e), GQ_OK);
    gq_flow_result res[1];
    gq_run_opts none = {.reps = 0, .duration_s = 0};
    assert_int_equal(be->ops->run(be, g, &none, res, &e), GQ_E_USAGE);
    assert_string_equal(e.msg, "a run needs reps > 0 or a duration > 0");
    gq_run_opts one = {.reps = 1};
    assert_int_equal(be->ops->run(be, g, &one, res, &e), GQ_OK);
    be->ops->release(be, g);
    st_close(be);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
