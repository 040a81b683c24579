/* The sim's stress hooks called out of order (src/backend/sim/sim_stress.c):
 * a GPU that does not exist, an unknown precision, a second start, a poll
 * or stop with no load, a lost GPU; a thermal throttle that lets go once
 * the GPU cools; and --sim-fault lists with no-nccl first, a switch twice
 * and too many switches. Written for issue 30 (lines no test ran). */
#include "simtest.h"

#include "backend/sim/sim.h"
#include "backend/sim/sim_stress.h"

static gq_backend be;

static void open_sim(const char *machine, const char *faults)
{
    gq_backend_register_builtin();
    gq_backend_opts o;
    gq_sim_opts(&o, machine, 1, 0, faults);
    gq_err e = {0};
    if (gq_backend_open(&be, "sim", &o, &e))
        fail_msg("open %s: %s", machine, e.msg);
}

#define REFUSED(call, code, text)                                                                            \
    do {                                                                                                     \
        memset(&e, 0, sizeof e);                                                                             \
        int rc_ = (call);                                                                                    \
        if (rc_ != (code) || strcmp(e.msg, (text)))                                                          \
            fail_msg("want %d '%s', got %d '%s'", (code), (text), rc_, e.msg);                               \
    } while (0)

static void out_of_order(void **state)
{
    (void)state;
    open_sim("h200x2", NULL);
    gq_err e = {0};
    uint64_t gemms = 0, faulty = 0;
    double tf = 0;
    REFUSED(be.ops->stress_start(&be, 2, GQ_PREC_BF16, &e), GQ_E_USAGE,
            "GPU 2 does not exist (this machine has GPUs 0-1)");
    REFUSED(be.ops->stress_start(&be, -1, GQ_PREC_BF16, &e), GQ_E_USAGE,
            "GPU -1 does not exist (this machine has GPUs 0-1)");
    REFUSED(be.ops->stress_start(&be, 0, (gq_precision)(GQ_PREC_FP64 + 1), &e), GQ_E_USAGE,
            "unknown precision 4");
    REFUSED(be.ops->stress_start(&be, 0, (gq_precision)-1, &e), GQ_E_USAGE, "unknown precision -1");
    REFUSED(be.ops->stress_poll(&be, 1, &gemms, &faulty, &tf, &e), GQ_E_USAGE,
            "GPU 1: no stress load is running");
    REFUSED(be.ops->stress_stop(&be, 1, &e), GQ_E_USAGE, "GPU 1: no stress load is running");
    assert_int_equal(be.ops->stress_start(&be, 0, GQ_PREC_FP64, &e), GQ_OK);
    REFUSED(be.ops->stress_start(&be, 0, GQ_PREC_BF16, &e), GQ_E_USAGE,
            "GPU 0: a stress load is already running");
    be.ops->wait(&be, 5);
    assert_int_equal(be.ops->stress_poll(&be, 0, &gemms, &faulty, &tf, &e), GQ_OK);
    assert_true(gemms > 0);
    assert_int_equal(be.ops->stress_stop(&be, 0, &e), GQ_OK);
    REFUSED(be.ops->stress_stop(&be, 0, &e), GQ_E_USAGE, "GPU 0: no stress load is running");
    gq_backend_close(&be);
}

/* gpu1:lost falls off the bus after 10 s under load: the poll says so,
 * the stop says so, and it cannot be started again. */
static void lost_gpu(void **state)
{
    (void)state;
    open_sim("h200x2", "gpu1:lost");
    gq_err e = {0};
    uint64_t gemms = 0, faulty = 0;
    double tf = 0;
    assert_int_equal(be.ops->stress_start(&be, 1, GQ_PREC_BF16, &e), GQ_OK);
    be.ops->wait(&be, 5);
    assert_int_equal(be.ops->stress_poll(&be, 1, &gemms, &faulty, &tf, &e), GQ_OK);
    be.ops->wait(&be, 10);
    REFUSED(be.ops->stress_poll(&be, 1, &gemms, &faulty, &tf, &e), GQ_E_BACKEND,
            "GPU 1 fell off the bus (simulated: cudaErrorDevicesUnavailable)");
    REFUSED(be.ops->stress_stop(&be, 1, &e), GQ_E_BACKEND, "GPU 1 fell off the bus (simulated)");
    REFUSED(be.ops->stress_start(&be, 1, GQ_PREC_BF16, &e), GQ_E_BACKEND,
            "GPU 1 has fallen off the bus (simulated)");
    gq_backend_close(&be);
}

/* gpu0:thermal throttles under load; stopped, it cools and the throttle
 * lets go: the thermal clock reasons clear, and loaded again it starts at
 * full clock. */
static void thermal_lets_go(void **state)
{
    (void)state;
    open_sim("h200x2", "gpu0:thermal");
    gq_err e = {0};
    gq_sample x;
    const uint64_t thermal = GQ_CLK_SW_THERMAL;
    assert_int_equal(be.ops->stress_start(&be, 0, GQ_PREC_BF16, &e), GQ_OK);
    be.ops->wait(&be, 300);
    assert_int_equal(be.ops->sample(&be, 0, &x, &e), GQ_OK);
    if (!(x.clock_reasons & thermal))
        fail_msg("not throttled after 300 s under load: %.1f C", x.temp_c);
    double hot = x.temp_c;
    assert_int_equal(be.ops->stress_stop(&be, 0, &e), GQ_OK);
    be.ops->wait(&be, 600);
    assert_int_equal(be.ops->sample(&be, 0, &x, &e), GQ_OK);
    if (x.clock_reasons & thermal)
        fail_msg("still throttled after 600 s idle: %.1f C (%.1f C under load)", x.temp_c, hot);
    assert_true(x.temp_c < hot);
    /* loaded again, cool: it runs at full clock until it heats up again */
    assert_int_equal(be.ops->stress_start(&be, 0, GQ_PREC_BF16, &e), GQ_OK);
    be.ops->wait(&be, 1);
    assert_int_equal(be.ops->sample(&be, 0, &x, &e), GQ_OK);
    if (x.clock_reasons & thermal)
        fail_msg("throttled again at once, at %.1f C", x.temp_c);
    assert_int_equal(be.ops->stress_stop(&be, 0, &e), GQ_OK);
    gq_backend_close(&be);
}

static void fault_lists(void **state)
{
    (void)state;
    gq_sim_faults f;
    gq_err e = {0};
    /* no-nccl first, then more items */
    assert_int_equal(gq_sim_faults_parse("no-nccl,gpu1:ecc,interrupt@3", 2, &f, &e), GQ_OK);
    assert_true(f.no_nccl);
    assert_int_equal(f.interrupt_at, 3);
    /* a switch twice is one switch */
    assert_int_equal(gq_sim_faults_parse("sw0:link-x8,sw1:link-x8,sw0:link-x8", 2, &f, &e), GQ_OK);
    assert_int_equal(f.nnode, 2);
    assert_string_equal(f.node[0], "sw0");
    assert_string_equal(f.node[1], "sw1");
    /* eight switches are taken, a ninth is refused; the eighth again is not */
    char spec[256] = "";
    for (int i = 0; i < GQ_SIM_MAX_NODE_FAULTS; i++)
        snprintf(spec + strlen(spec), sizeof spec - strlen(spec), "%ssw%d:link-x8", i ? "," : "", i);
    assert_int_equal(gq_sim_faults_parse(spec, 2, &f, &e), GQ_OK);
    assert_int_equal(f.nnode, GQ_SIM_MAX_NODE_FAULTS);
    char again[300];
    snprintf(again, sizeof again, "%s,sw7:link-x8", spec);
    assert_int_equal(gq_sim_faults_parse(again, 2, &f, &e), GQ_OK);
    char more[300];
    snprintf(more, sizeof more, "%s,sw8:link-x8", spec);
    assert_int_equal(gq_sim_faults_parse(more, 2, &f, &e), GQ_E_USAGE);
    assert_string_equal(e.msg, "--sim-fault: at most 8 switches or bridges can be trained down");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(out_of_order),
        cmocka_unit_test(lost_gpu),
        cmocka_unit_test(thermal_lets_go),
        cmocka_unit_test(fault_lists),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
