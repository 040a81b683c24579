/* The card's plan and run at their edges: step names, defaults, the estimate
 * of one measurement, steps turned off or with nothing to measure, durations
 * in the refusal message, and roles asked for explicitly (0 offload workers is
 * a choice, not "the default"). Written for the survivors of bench/mutation. */
#include "backend/sim/sim.h"
#include "card_util.h"
#include "../test_util.h"

#include "../card_plan_util.h"

static void names_and_defaults(void **state)
{
    (void)state;
    assert_string_equal(gq_card_step_name(GQ_CS_IDENTITY), "identity");
    assert_string_equal(gq_card_step_name(GQ_CS_STRESS), "stress");
    assert_string_equal(gq_card_step_name(GQ_CS_COUNT), "?");
    assert_string_equal(gq_card_step_title(GQ_CS_SWEEP), "Buffer-size sweeps");
    assert_string_equal(gq_card_step_title(GQ_CS_COUNT), "?");
    assert_string_equal(gq_card_step_status_name(GQ_CSS_PLANNED), "planned");
    assert_string_equal(gq_card_step_status_name(GQ_CSS_FAILED), "failed");
    assert_string_equal(gq_card_step_status_name((gq_card_step_status)5), "?");
    gq_card_opts o;
    memset(&o, 0x5a, sizeof o);
    gq_card_opts_default(&o);
    assert_true(o.budget_s == 300 && o.stress_s == 60);
    assert_int_equal(o.offload, -1);
    assert_int_equal(o.prefill, 0);
    assert_true(o.bytes == 256ull << 20);
    assert_true(o.verify);
    assert_false(o.no_sweep || o.no_latency || o.no_placement);
    assert_int_equal(o.ngpus, 0);
}

/* rounds + 1 round lengths alone, rounds + 2 together, plus buffer setup. */
static void estimate_of_one_measurement(void **state)
{
    (void)state;
    assert_near(gq_card_estimate_measurement(1, 5, 0.1, 4000000000ULL), 6 * 0.1 + 0.05 + 1.01, 1e-12);
    assert_near(gq_card_estimate_measurement(2, 5, 0.1, 4000000000ULL), 7 * 0.1 + 0.05 + 2 * 1.01, 1e-12);
    assert_near(gq_card_estimate_measurement(3, 3, 0.05, 0), 5 * 0.05 + 0.05 + 3 * 0.01, 1e-12);
}

/* One GPU: no placement (nothing to pair); steps turned off say so. */
static void steps_off_and_one_gpu(void **state)
{
    (void)state;
    gq_topo *t = machine(1, true);
    gq_card_opts o;
    gq_card_plan p;
    opts_for(&o, 1, 300, 0);
    assert_int_equal(gq_card_plan_make(t, &o, &p, NULL), GQ_OK);
    assert_false(p.step[GQ_CS_PLACEMENT].run);
    assert_true(p.step[GQ_CS_PLACEMENT].est_s == 0);
    assert_string_equal(p.step[GQ_CS_PLACEMENT].note, "one GPU: no pair to measure");
    assert_int_equal(p.step[GQ_CS_PLACEMENT].status, GQ_CSS_SKIPPED);
    /* concurrent traffic needs two GPUs too: the card says "one GPU", as it
     * does for the matrix (on the H200 it said "not applicable") */
    assert_int_equal(p.step[GQ_CS_CONTENTION].reason, GQ_EVR_ONE_GPU);
    assert_int_equal(p.step[GQ_CS_MATRIX].reason, GQ_EVR_ONE_GPU);
    assert_true(p.step[GQ_CS_IDENTITY].run);
    assert_int_equal(p.step[GQ_CS_IDENTITY].status, GQ_CSS_PLANNED);
    free(t);

    t = machine(4, true);
    opts_for(&o, 4, 3600, 0);
    o.no_placement = o.no_sweep = o.no_latency = true;
    assert_int_equal(gq_card_plan_make(t, &o, &p, NULL), GQ_OK);
    assert_int_equal(p.quality, 0);
    assert_string_equal(p.step[GQ_CS_PLACEMENT].note, "turned off");
    assert_string_equal(p.step[GQ_CS_SWEEP].note, "turned off");
    assert_string_equal(p.step[GQ_CS_LATENCY].note, "turned off");
    assert_string_equal(p.step[GQ_CS_STRESS].note, "--no-stress");
    assert_false(p.step[GQ_CS_SWEEP].run || p.step[GQ_CS_LATENCY].run || p.step[GQ_CS_PLACEMENT].run);
    assert_true(p.step[GQ_CS_MATRIX].run && p.step[GQ_CS_CONTENTION].run && p.step[GQ_CS_BIDIR].run);
    double sum = 0;
    for (int s = 0; s < GQ_CS_COUNT; s++)
        sum += p.step[s].est_s;
    assert_near(p.est_total_s, sum, 1e-9);
    assert_true(p.rounds == 5 && p.round_s == 0.10 && p.sweep_points == 10);
    assert_string_equal(p.step[GQ_CS_IDENTITY].note, "");
    /* each one alone: only that step is off */
    opts_for(&o, 4, 3600, 0);
    o.no_latency = true;
    assert_int_equal(gq_card_plan_make(t, &o, &p, NULL), GQ_OK);
    assert_true(p.step[GQ_CS_SWEEP].run && p.step[GQ_CS_PLACEMENT].run);
    assert_false(p.step[GQ_CS_LATENCY].run);
    /* the latency estimate counts every GPU and every P2P pair: without P2P it is smaller */
    opts_for(&o, 4, 3600, 0);
    assert_int_equal(gq_card_plan_make(t, &o, &p, NULL), GQ_OK);
    double lat_p2p = p.step[GQ_CS_LATENCY].est_s;
    free(t);
    t = machine(4, false);
    assert_int_equal(gq_card_plan_make(t, &o, &p, NULL), GQ_OK);
    assert_near(lat_p2p / p.step[GQ_CS_LATENCY].est_s, 16.0 / 4.0, 1e-9);
    free(t);
}

/* The refusal gives durations as a person writes them. */
static void refusal_durations(void **state)
{
    (void)state;
    gq_topo *t = machine(8, true);
    gq_card_opts o;
    gq_card_plan p;
    gq_err e = {0};
    opts_for(&o, 8, 100, 3000); /* 100 s against a 3000 s stress */
    assert_int_equal(gq_card_plan_make(t, &o, &p, &e), GQ_E_USAGE);
    assert_non_null(strstr(e.msg, "--budget 1m40s is too small"));
    /* the estimates of this crafted machine: 3006 s smallest, 3181 s whole (with the collectives step) */
    assert_non_null(
        strstr(e.msg, "need about 50m07s with the 3000 s stress (--budget 53m01s fits the whole card"));
    opts_for(&o, 8, 100, 4000);
    assert_int_equal(gq_card_plan_make(t, &o, &p, &e), GQ_E_USAGE);
    assert_non_null(strstr(e.msg, "need about 1.1h with the 4000 s stress (--budget 1.2h fits"));
    opts_for(&o, 8, 3, 0);
    assert_int_equal(gq_card_plan_make(t, &o, &p, &e), GQ_E_USAGE);
    assert_non_null(strstr(e.msg, "--budget 3s is too small"));
    assert_non_null(strstr(e.msg, "on 8 GPUs"));
    assert_true(p.min_s > 3);
    opts_for(&o, 1, 0.5, 0);
    assert_int_equal(gq_card_plan_make(t, &o, &p, &e), GQ_E_USAGE);
    assert_non_null(strstr(e.msg, "--budget 1s is too small"));
    assert_non_null(strstr(e.msg, "on 1 GPU ("));
    opts_for(&o, 8, 0, 0);
    assert_int_equal(gq_card_plan_make(t, &o, &p, &e), GQ_E_USAGE);
    assert_non_null(strstr(e.msg, "--budget must be > 0"));
    opts_for(&o, 0, 300, 0);
    assert_int_equal(gq_card_plan_make(t, &o, &p, &e), GQ_E_USAGE);
    assert_non_null(strstr(e.msg, "no GPU selected"));
    free(t);
}

/* Run the card on a simulated machine: GPUs in the order given, explicit roles. */
static json_t *run_card(const int *gpus, int n, int prefill, int decode, int offload, gq_recordset *rs_out)
{
    gq_backend_register_builtin();
    gq_backend be = {0};
    gq_backend_opts bo;
    gq_sim_opts(&bo, "rtxpro6000x8", 1, 0, NULL);
    gq_err e = {0};
    if (gq_backend_open(&be, "sim", &bo, &e))
        fail_msg("open: %s", e.msg);
    gq_topo *t = calloc(1, sizeof *t);
    gq_topo_init(t);
    if (be.ops->discover(&be, t, &e))
        fail_msg("discover: %s", e.msg);
    gq_card_opts co;
    opts_for(&co, n, 300, 0);
    for (int i = 0; i < n; i++)
        co.gpus[i] = gpus[i];
    co.prefill = prefill;
    co.decode = decode;
    co.offload = offload;
    co.no_sweep = co.no_latency = true;
    gq_card_plan plan;
    if (gq_card_plan_make(t, &co, &plan, &e))
        fail_msg("plan: %s", e.msg);
    gq_card_result res;
    memset(&res, 0, sizeof res);
    if (gq_card_execute(&be, t, &co, &plan, NULL, NULL, NULL, &res, &e))
        fail_msg("execute: %s", e.msg);
    if (plan.step[GQ_CS_PLACEMENT].status != GQ_CSS_DONE)
        fail_msg("placement %s: %s", gq_card_step_status_name(plan.step[GQ_CS_PLACEMENT].status),
                 plan.step[GQ_CS_PLACEMENT].note);
    json_t *pl = gq_card_placement_json(&res);
    if (rs_out) {
        *rs_out = res.rs;
        memset(&res.rs, 0, sizeof res.rs);
    }
    gq_card_result_free(&res);
    gq_backend_close(&be);
    free(t);
    return pl;
}

static json_t *placement_with_roles(int prefill, int decode, int offload)
{
    static const int g[4] = {0, 1, 2, 3};
    return run_card(g, 4, prefill, decode, offload, NULL);
}

static void explicit_roles(void **state)
{
    (void)state;
    json_t *pl = placement_with_roles(0, 0, 0);
    assert_non_null(pl);
    const json_t *roles = json_object_get(pl, "roles");
    assert_int_equal(json_integer_value(json_object_get(roles, "offload")), 0);
    assert_int_equal(json_integer_value(json_object_get(roles, "prefill")), 2);
    assert_int_equal(json_array_size(json_object_get(pl, "offload")), 0);
    assert_true(json_is_true(json_object_get(pl, "default_split")));
    json_decref(pl);
    pl = placement_with_roles(1, 1, -1);
    assert_non_null(pl);
    roles = json_object_get(pl, "roles");
    assert_int_equal(json_integer_value(json_object_get(roles, "offload")), 2);
    assert_int_equal(json_integer_value(json_object_get(roles, "prefill")), 1);
    assert_int_equal(json_integer_value(json_object_get(roles, "decode")), 1);
    assert_null(json_object_get(pl, "default_split"));
    json_decref(pl);
}

/* GPUs given highest first: the placement still covers every one of them;
 * the both-directions step has an aggregate per direction over its host flows. */
static void gpu_order_and_bidir(void **state)
{
    (void)state;
    static const int g[4] = {7, 5, 2, 0};
    gq_recordset rs = {0};
    json_t *pl = run_card(g, 4, 0, 0, -1, &rs);
    assert_non_null(pl);
    int seen[8] = {0};
    size_t i;
    const json_t *x;
    json_array_foreach(json_object_get(pl, "pairs"), i, x)
    {
        seen[(int)json_integer_value(json_object_get(x, "prefill"))]++;
        seen[(int)json_integer_value(json_object_get(x, "decode"))]++;
    }
    assert_true(seen[7] == 1 && seen[5] == 1 && seen[2] == 1 && seen[0] == 1);
    json_decref(pl);
    int agg = 0, flows = 0;
    for (int k = 0; k < rs.n; k++)
        if (!strcmp(rs.v[k].test, GQ_CARD_TEST_BIDIR_SET)) {
            if (rs.v[k].aggregate)
                agg++;
            else if (!rs.v[k].sum)
                flows++;
        }
    assert_int_equal(flows, 8);
    assert_int_equal(agg, 2); /* one aggregate per direction */
    gq_records_free(&rs);
}

/* Steps' times add up inside the card's; an interrupted card says why the
 * steps after it did not run. */
static void step_times_and_interrupt(void **state)
{
    (void)state;
    card_args a = {.machine = "h200x2", .noise = 0};
    card_run run = cu_run(&a);
    assert_int_equal(run.exec_rc, GQ_OK);
    double total = json_number_value(json_object_get(cu_card(&run), "elapsed_s"));
    double sum = 0;
    for (int s = 0; s < GQ_CS_COUNT; s++) {
        const gq_card_step *st = &run.plan.step[s];
        if (st->elapsed_s < 0 || st->elapsed_s > total + 1e-6)
            fail_msg("step %s took %g s of a %g s card", gq_card_step_name((gq_card_step_id)s), st->elapsed_s,
                     total);
        sum += st->elapsed_s;
    }
    assert_true(sum <= total + 1e-6);
    json_decref(run.doc);

    card_args b = {.machine = "h200x2", .noise = 0, .interrupt_after = 3};
    run = cu_run(&b);
    assert_int_equal(run.exec_rc, GQ_E_INTR);
    int not_run = 0;
    for (int s = 0; s < GQ_CS_COUNT; s++)
        if (!strncmp(run.plan.step[s].note, "not run: ", 9)) {
            assert_string_equal(run.plan.step[s].note, "not run: the card was interrupted");
            not_run++;
        }
    assert_true(not_run > 0);
    /* the step the interrupt stopped says so in its reason; the steps done before it have none */
    int stopped = 0;
    for (int s = 0; s < GQ_CS_COUNT; s++) {
        const gq_card_step *st = &run.plan.step[s];
        if (st->status == GQ_CSS_INTERRUPTED) {
            assert_int_equal(st->reason, GQ_EVR_INTERRUPTED);
            stopped++;
        } else if (st->status == GQ_CSS_DONE) {
            assert_int_equal(st->reason, GQ_EVR_NONE);
        }
    }
    assert_int_equal(stopped, 1);
    json_decref(run.doc);
}

/* A budget that keeps the host step and drops contention: each GPU alone is
 * still measured (the host step runs the "alone" probes, not the others). */
static void host_alone_without_contention(void **state)
{
    (void)state;
    card_args a = {.machine = "rtx4090x8", .noise = 0, .budget_s = 1};
    /* find the smallest budget the plan accepts, then keep it */
    gq_backend_register_builtin();
    gq_backend be = {0};
    gq_backend_opts bo = {0};
    gq_sim_opts(&bo, "rtx4090x8", 1, 0, NULL);
    gq_err e = {0};
    assert_int_equal(gq_backend_open(&be, "sim", &bo, &e), GQ_OK);
    gq_topo *t = calloc(1, sizeof *t);
    gq_topo_init(t);
    assert_int_equal(be.ops->discover(&be, t, &e), GQ_OK);
    gq_card_opts co;
    opts_for(&co, t->ngpu, 1, 0);
    gq_card_plan p;
    assert_int_equal(gq_card_plan_make(t, &co, &p, &e), GQ_E_USAGE);
    a.budget_s = ceil(p.min_s) + 1;
    gq_backend_close(&be);
    free(t);
    card_run run = cu_run(&a);
    assert_true(run.plan.step[GQ_CS_HOST].run);
    assert_false(run.plan.step[GQ_CS_CONTENTION].run);
    const json_t *rows = json_object_get(cu_card(&run), "rows");
    const char *host = NULL;
    size_t i;
    const json_t *r;
    json_array_foreach(rows, i, r) if (!strcmp(cu_str(r, "check"), "Host-memory traffic")) host =
        cu_str(r, "result");
    assert_non_null(host);
    if (strncmp(host, "alone 25.", 9))
        fail_msg("host row: %s", host);
    json_decref(run.doc);
}

/* A sweep spans 4 KiB to 1 GiB, whatever its number of points. */
static void sweep_sizes_span(void **state)
{
    (void)state;
    static const int g[2] = {0, 1};
    gq_backend_register_builtin();
    gq_backend be = {0};
    gq_backend_opts bo = {0};
    gq_sim_opts(&bo, "h200x2", 1, 0, NULL);
    gq_err e = {0};
    assert_int_equal(gq_backend_open(&be, "sim", &bo, &e), GQ_OK);
    gq_topo *t = calloc(1, sizeof *t);
    gq_topo_init(t);
    assert_int_equal(be.ops->discover(&be, t, &e), GQ_OK);
    gq_card_opts co;
    opts_for(&co, 2, 300, 0);
    for (int i = 0; i < 2; i++)
        co.gpus[i] = g[i];
    co.no_latency = co.no_placement = true;
    gq_card_plan plan;
    assert_int_equal(gq_card_plan_make(t, &co, &plan, &e), GQ_OK);
    gq_card_result res;
    memset(&res, 0, sizeof res);
    assert_int_equal(gq_card_execute(&be, t, &co, &plan, NULL, NULL, NULL, &res, &e), GQ_OK);
    uint64_t lo = UINT64_MAX, hi = 0;
    int n = 0;
    for (int k = 0; k < res.rs.n; k++)
        if (!strncmp(res.rs.v[k].test, GQ_CARD_TEST_SWEEP_PREFIX, strlen(GQ_CARD_TEST_SWEEP_PREFIX))) {
            n++;
            lo = res.rs.v[k].bytes < lo ? res.rs.v[k].bytes : lo;
            hi = res.rs.v[k].bytes > hi ? res.rs.v[k].bytes : hi;
        }
    assert_int_equal(n, plan.sweep_points); /* one path on the pair */
    assert_true(lo == 4096);
    assert_true(hi == 1ull << 30);
    gq_card_result_free(&res);
    gq_backend_close(&be);
    free(t);
}

/* Written for the survivors of bench/mutation (seed 165809224): a sweep of
 * fewer than 2 points is 2 points, and the identity step is estimated at
 * 0.2 s. */
static void sweep_sizes_at_least_two(void **state)
{
    (void)state;
    uint64_t out[32];
    assert_int_equal(gq_card_sweep_sizes(1, out), 2);
    assert_int_equal(gq_card_sweep_sizes(0, out), 2);
    assert_true(out[0] < out[1]);
    gq_topo *t = machine(4, true);
    gq_card_opts o;
    opts_for(&o, 4, 3600, 0);
    gq_card_plan p;
    assert_int_equal(gq_card_plan_make(t, &o, &p, NULL), GQ_OK);
    assert_near(p.step[GQ_CS_IDENTITY].est_s, 0.2, 1e-12);
    free(t);
}

/* The progress a card reports: done never goes back and never passes the
 * total, and within the latency step it moves with each measurement (one
 * per GPU and per ordered pair with P2P), not only at the step's ends. */
static void progress_moves_within_steps(void **state)
{
    (void)state;
    card_args a = {.machine = "h200x2", .noise = 0};
    card_run run = cu_run(&a);
    assert_int_equal(run.exec_rc, GQ_OK);
    assert_true(cu_nprog > 10 && cu_nprog < CU_MAX_PROGRESS);
    int lat = 0, lat_rises = 0;
    for (int i = 0; i < cu_nprog; i++) {
        const gq_card_progress *p = &cu_prog[i];
        assert_true(p->done_s >= 0);
        assert_true(p->done_s <= p->total_s + 1e-9);
        if (i > 0 && p->done_s < cu_prog[i - 1].done_s - 1e-9)
            fail_msg("progress call %d (%s): done %.3f s after %.3f s", i, p->title, p->done_s,
                     cu_prog[i - 1].done_s);
        if (p->step == GQ_CS_LATENCY) {
            lat++;
            /* a rise that is not the step's last report (which sets the step's estimate) */
            if (i > 0 && cu_prog[i - 1].step == GQ_CS_LATENCY && i + 1 < cu_nprog &&
                cu_prog[i + 1].step == GQ_CS_LATENCY && p->done_s > cu_prog[i - 1].done_s + 1e-9)
                lat_rises++;
        }
    }
    /* h200x2: 2 GPUs' host latency, 2 ordered pairs; begin and end reports */
    assert_true(lat >= 6);
    if (lat_rises < 3)
        fail_msg("the latency step's %d reports rose only %d times between its ends", lat, lat_rises);
    assert_near(cu_prog[cu_nprog - 1].done_s, cu_prog[cu_nprog - 1].total_s,
                1e-6 * cu_prog[cu_nprog - 1].total_s);
    json_decref(run.doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(names_and_defaults),
        cmocka_unit_test(estimate_of_one_measurement),
        cmocka_unit_test(steps_off_and_one_gpu),
        cmocka_unit_test(refusal_durations),
        cmocka_unit_test(explicit_roles),
        cmocka_unit_test(step_times_and_interrupt),
        cmocka_unit_test(gpu_order_and_bidir),
        cmocka_unit_test(host_alone_without_contention),
        cmocka_unit_test(sweep_sizes_span),
        cmocka_unit_test(sweep_sizes_at_least_two),
        cmocka_unit_test(progress_moves_within_steps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
