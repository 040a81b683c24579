/* The harness on the simulated fabric, at its edges: every latency record is
 * a group of its own, an aggregate record carries its flows' size, and a zero
 * size is refused whichever flow has it. Written for bench/mutation. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "backend/backend.h"
#include "backend/sim/sim.h"
#include "measure/harness.h"
#include "core/units.h"

static gq_backend be;
static gq_topo *topo;

static int setup(void **state)
{
    (void)state;
    gq_backend_register_builtin();
    memset(&be, 0, sizeof be);
    gq_backend_opts bo = {0};
    gq_sim_opts(&bo, "h200x2", 1, 0, NULL);
    gq_err e = {0};
    if (gq_backend_open(&be, "sim", &bo, &e))
        fail_msg("open: %s", e.msg);
    topo = calloc(1, sizeof *topo);
    gq_topo_init(topo);
    if (be.ops->discover(&be, topo, &e))
        fail_msg("discover: %s", e.msg);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    gq_backend_close(&be);
    free(topo);
    return 0;
}

static void h2d(gq_flow *f, int gpu, uint64_t bytes)
{
    memset(f, 0, sizeof *f);
    f->src = (gq_endpoint){GQ_EP_HOST, 0};
    f->dst = (gq_endpoint){GQ_EP_GPU, gpu};
    f->method = GQ_METHOD_CE;
    f->exec_gpu = gpu;
    f->bytes = bytes;
}

static void latency_groups(void **state)
{
    (void)state;
    gq_harness_opts o;
    gq_harness_opts_default(&o);
    o.rounds = 2;
    gq_recordset rs = {0};
    gq_err e = {0};
    gq_measurement *m = calloc(1, sizeof *m);
    snprintf(m->test, sizeof m->test, "host_to_device_set");
    m->nflows = 1;
    h2d(&m->flows[0], 0, 32 * GQ_MiB);
    m->report[0] = true;
    assert_int_equal(gq_harness_measure(&be, topo, m, &o, &rs, NULL, &e), GQ_OK);
    gq_latency_req q = {
        .kind = GQ_LAT_POINTER_CHASE, .target = {GQ_EP_HOST, 0}, .exec_gpu = 0, .iters = 1000};
    assert_int_equal(gq_harness_latency(&be, topo, "host_device_latency_sm", &q, &o, &rs, NULL, &e), GQ_OK);
    q.exec_gpu = 1;
    assert_int_equal(gq_harness_latency(&be, topo, "host_device_latency_sm", &q, &o, &rs, NULL, &e), GQ_OK);
    assert_int_equal(rs.n, 3);
    assert_int_not_equal(rs.v[0].group, -1);
    assert_true(rs.v[1].is_latency && rs.v[2].is_latency);
    assert_int_not_equal(rs.v[1].group, rs.v[0].group);
    assert_int_not_equal(rs.v[2].group, rs.v[1].group);
    assert_int_not_equal(rs.v[2].group, rs.v[0].group);
    assert_true(rs.v[1].value.median > 0);
    /* no spread target: never flagged for spread */
    assert_true(o.spread_target == 0 || (rs.v[1].flags & GQ_FLAG_SPREAD) == 0);
    o.spread_target = 0;
    assert_int_equal(gq_harness_latency(&be, topo, "host_device_latency_sm", &q, &o, &rs, NULL, &e), GQ_OK);
    assert_int_equal(rs.v[rs.n - 1].flags & GQ_FLAG_SPREAD, 0);
    assert_int_equal(rs.v[rs.n - 1].flags & GQ_FLAG_ERROR, 0);
    free(m);
    gq_records_free(&rs);
}

static void aggregate_carries_size(void **state)
{
    (void)state;
    gq_harness_opts o;
    gq_harness_opts_default(&o);
    o.rounds = 2;
    gq_recordset rs = {0};
    gq_err e = {0};
    gq_measurement *m = calloc(1, sizeof *m);
    snprintf(m->test, sizeof m->test, "host_to_device_set");
    m->nflows = 2;
    h2d(&m->flows[0], 1, 64 * GQ_MiB); /* the higher GPU first */
    h2d(&m->flows[1], 0, 64 * GQ_MiB);
    m->report[0] = m->report[1] = true;
    m->aggregate = true;
    assert_int_equal(gq_harness_measure(&be, topo, m, &o, &rs, NULL, &e), GQ_OK);
    int agg = -1;
    for (int i = 0; i < rs.n; i++)
        if (rs.v[i].aggregate)
            agg = i;
    assert_true(agg >= 0);
    assert_true(rs.v[agg].bytes == 64 * GQ_MiB);
    assert_int_equal(rs.v[agg].ngpus, 2);
    assert_int_equal(rs.v[agg].gpus[0], 0); /* in order */
    assert_int_equal(rs.v[agg].gpus[1], 1);
    assert_int_equal(rs.v[agg].direction, GQ_DIR_H2D);
    /* a zero size is refused, also in the first flow */
    m->flows[0].bytes = 0;
    assert_int_equal(gq_harness_measure(&be, topo, m, &o, &rs, NULL, &e), GQ_E_FAIL);
    assert_non_null(strstr(e.msg, "flow 0 has a zero size"));
    m->flows[0].bytes = 64 * GQ_MiB;
    m->flows[1].bytes = 0;
    assert_int_equal(gq_harness_measure(&be, topo, m, &o, &rs, NULL, &e), GQ_E_FAIL);
    assert_non_null(strstr(e.msg, "flow 1 has a zero size"));
    free(m);
    gq_records_free(&rs);
}

static char notes[16][200];
static int nnotes;
static void on_trace(void *arg, const char *test, const char *phase, double seconds, const char *note)
{
    (void)arg;
    (void)seconds;
    if (nnotes < 16)
        snprintf(notes[nnotes++], sizeof notes[0], "%s %s: %s", test, phase, note);
}

/* The timing trace names each phase and what it chose. */
static void trace_notes(void **state)
{
    (void)state;
    gq_harness_opts o;
    gq_harness_opts_default(&o);
    o.rounds = 3;
    o.trace = on_trace;
    nnotes = 0;
    gq_recordset rs = {0};
    gq_err e = {0};
    gq_measurement *m = calloc(1, sizeof *m);
    snprintf(m->test, sizeof m->test, "t");
    m->nflows = 1;
    h2d(&m->flows[0], 0, 32 * GQ_MiB);
    m->report[0] = true;
    assert_int_equal(gq_harness_measure(&be, topo, m, &o, &rs, NULL, &e), GQ_OK);
    assert_true(nnotes >= 4);
    assert_string_equal(notes[0], "t prepare: 1 flows");
    assert_true(!strncmp(notes[1], "t calibrate: reps ", 18) ||
                !strncmp(notes[1], "t calibrate: duration ", 22));
    assert_string_equal(notes[2], "t rounds: 3 rounds");
    gq_latency_req q = {
        .kind = GQ_LAT_POINTER_CHASE, .target = {GQ_EP_HOST, 0}, .exec_gpu = 0, .iters = 1000};
    nnotes = 0;
    assert_int_equal(gq_harness_latency(&be, topo, "lat", &q, &o, &rs, NULL, &e), GQ_OK);
    assert_int_equal(nnotes, 1);
    assert_string_equal(notes[0], "lat latency: 3 rounds");
    free(m);
    gq_records_free(&rs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(latency_groups, setup, teardown),
        cmocka_unit_test_setup_teardown(aggregate_carries_size, setup, teardown),
        cmocka_unit_test_setup_teardown(trace_notes, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
