/* The card's verdicts and its handling of the unexpected, on simulated
 * machines: injected faults turn into the right failed checks and exit
 * codes; a budget too small is refused saying what fits; an interrupted card
 * keeps what was measured and is marked incomplete (exit 5); a tight budget
 * skips steps instead of overrunning. */
#include "card_util.h"

static void test_thermal_fault(void **state)
{
    (void)state;
    card_args a = {.machine = "rtxpro6000x8", .noise = 0, .stress_s = 60, .faults = "gpu3:thermal"};
    card_run run = cu_run(&a);
    const json_t *c = cu_check(&run, "thermal", "gpu:3");
    assert_non_null(c);
    assert_string_equal(cu_str(c, "verdict"), "fail");
    assert_string_equal(cu_str(cu_check(&run, "thermal", "gpu:2"), "verdict"), "pass");
    assert_string_equal(cu_str(cu_card(&run), "verdict"), "fail");
    assert_int_equal(gq_card_exit_code(cu_card(&run)), 1);
    /* the Whole-node health row carries it */
    const json_t *row = json_array_get(json_object_get(cu_card(&run), "rows"), 6);
    assert_string_equal(cu_str(row, "check"), "Whole-node health");
    assert_string_equal(cu_str(row, "verdict"), "fail");
    assert_true(cu_finding(&run, "FAIL", "GPU 3", NULL));
    json_decref(run.doc);
}

static void test_link_fault(void **state)
{
    (void)state;
    card_args a = {
        .machine = "h200x2", .noise = 0, .stress_s = 10, .faults = "gpu0:link-x8", .expect = "h200.expect"};
    card_run run = cu_run(&a);
    const json_t *c = cu_check(&run, "pcie_width_min", "gpu:0");
    assert_non_null(c);
    assert_string_equal(cu_str(c, "verdict"), "fail");
    assert_true(json_number_value(json_object_get(c, "figure")) == 8);
    assert_string_equal(cu_str(cu_check(&run, "link_width", "gpu:0"), "verdict"), "fail");
    assert_string_equal(cu_str(cu_check(&run, "link_width", "gpu:1"), "verdict"), "pass");
    assert_int_equal(gq_card_exit_code(cu_card(&run)), 1);
    json_decref(run.doc);
}

/* The card's placement plans with the shared budgets the domains analysis
 * inferred, as `gpuqual place` does from a domains document (rtxpro6000x8:
 * the pairs crossing between its two domains share one budget, which no
 * single group of records shows): a limit of the placement model says it
 * comes from that bottleneck. */
static void test_placement_budgets(void **state)
{
    (void)state;
    card_args a = {.machine = "rtxpro6000x8", .noise = 0};
    card_run run = cu_run(&a);
    const json_t *lims =
        json_object_get(json_object_get(json_object_get(cu_card(&run), "placement"), "model"), "limits");
    assert_true(json_array_size(lims) > 0);
    int from_bn = 0;
    size_t i;
    const json_t *l;
    json_array_foreach(lims, i, l)
    {
        const char *ev = cu_str(l, "evidence");
        if (ev && strstr(ev, "gpuqual domains bottleneck: pairs crossing between domains")) {
            from_bn++;
            assert_string_equal(cu_str(l, "kind"), "p2p");
            assert_true(cu_num(l, "capacity_gbps") > 80 && cu_num(l, "capacity_gbps") < 100);
        }
    }
    assert_true(from_bn >= 1);
    json_decref(run.doc);
}

/* Other work on GPU 1 (the simulator's busy fault: a process and full
 * utilization): the card names the GPU and what ran on it, its figures are
 * left out, and the card is INCOMPLETE; the load reading comes from the
 * clean room's sampling before each card step (no sampling before the run
 * here). */
static int n_contam_kind(const card_run *run, const char *kind, int gpu)
{
    int n = 0;
    size_t i, k;
    const json_t *r, *c;
    json_array_foreach(json_object_get(run->doc, "records"), i, r)
    {
        json_array_foreach(json_object_get(r, "contaminated"), k, c)
        {
            if (!strcmp(cu_str(c, "kind"), kind) && cu_int(c, "gpu") == gpu) {
                assert_true(json_is_false(json_object_get(r, "valid")));
                n++;
            }
        }
    }
    return n;
}

static void test_busy_gpu(void **state)
{
    (void)state;
    card_args a = {.machine = "h200x2", .noise = 0, .faults = "gpu1:busy", .cleanroom = true};
    card_run run = cu_run(&a);
    const json_t *c = cu_card(&run);
    assert_string_equal(cu_str(c, "verdict"), "incomplete");
    assert_int_equal(gq_card_exit_code(c), 5);
    assert_string_equal(cu_str(c, "verdict_text"), "INCOMPLETE: GPU 1 busy");
    assert_true(cu_finding(&run, "GPU 1 was busy", "compute process 4242 (sim-load)", "INCOMPLETE", NULL));
    const json_t *b = json_array_get(json_object_get(c, "busy"), 0);
    assert_int_equal(json_array_size(json_object_get(c, "busy")), 1);
    assert_int_equal(cu_int(b, "gpu"), 1);
    assert_true(cu_int(b, "records") > 0);
    assert_true(n_contam_kind(&run, "process", 1) > 0);
    assert_true(n_contam_kind(&run, "utilization", 1) > 0); /* sampled before the card's steps */
    assert_int_equal(n_contam_kind(&run, "process", 0), 0);
    const json_t *row = NULL;
    size_t i;
    json_array_foreach(json_object_get(c, "rows"), i,
                       row) if (!strcmp(cu_str(row, "check"), "Measurement integrity")) break;
    assert_string_equal(cu_str(row, "verdict"), "warn");
    assert_non_null(strstr(cu_str(row, "result"), "contaminated (a GPU was busy)"));
    /* the pair matrix is all flagged: nothing is known of P2P, so no sentence says "no P2P"
     * (it did: "no P2P: concurrent GPU pairs go through host memory", "host-staged (no P2P)") */
    json_array_foreach(json_object_get(c, "rows"), i,
                       row) if (!strcmp(cu_str(row, "check"), "Concurrent GPU traffic")) break;
    assert_string_equal(cu_str(row, "result"), "not measured (no usable GPU pair figure)");
    assert_false(cu_finding(&run, "no P2P", NULL));
    assert_true(cu_finding(&run, "no usable P2P figure", NULL));
    json_decref(run.doc);

    /* --allow-busy: judged on the rest, and the verdict says the GPU was busy */
    a.allow_busy = true;
    run = cu_run(&a);
    c = cu_card(&run);
    assert_string_equal(cu_str(c, "verdict"), "pass");
    assert_int_equal(gq_card_exit_code(c), 0);
    assert_string_equal(cu_str(c, "verdict_text"), "PASS without stress (GPU 1 busy, allowed)");
    assert_true(cu_finding(&run, "GPU 1 was busy", "--allow-busy", NULL));
    json_decref(run.doc);

    /* the same card with nothing else on the GPUs: nothing flagged */
    a.allow_busy = false;
    a.faults = NULL;
    run = cu_run(&a);
    c = cu_card(&run);
    assert_string_equal(cu_str(c, "verdict"), "pass");
    assert_int_equal(json_array_size(json_object_get(c, "busy")), 0);
    assert_false(cu_finding(&run, "busy", NULL));
    json_decref(run.doc);
}

/* sw2bad (tests/data/topologies): GPU 2's link trained down to Gen4 x8 and
 * GPU 6 without P2P. The domains analysis sets both aside, and the card says
 * so in a finding of its own for each, with the reason. */
static void test_set_aside(void **state)
{
    (void)state;
    card_args a = {.machine = GQ_TEST_DATA "/data/topologies/sw2bad.topo", .noise = 0};
    card_run run = cu_run(&a);
    const json_t *sa = json_object_get(json_object_get(cu_card(&run), "domains"), "set_aside");
    assert_int_equal(json_array_size(sa), 2);
    assert_int_equal(cu_int(json_array_get(sa, 0), "gpu"), 2);
    assert_string_equal(cu_str(json_array_get(sa, 0), "reason"), "slow_pairs");
    assert_int_equal(cu_int(json_array_get(sa, 1), "gpu"), 6);
    assert_string_equal(cu_str(json_array_get(sa, 1), "reason"), "no_p2p");
    assert_true(cu_finding(&run, "GPU 2 set aside: every pair with GPU 2 copies at",
                           "Gen4 x8 where it can do Gen5 x16", NULL));
    assert_true(cu_finding(&run, "GPU 6 set aside: GPU 6 has no P2P with any GPU", NULL));
    json_decref(run.doc);
    /* a machine with nothing to set aside says nothing of it */
    card_args b = {.machine = "rtxpro6000x8", .noise = 0};
    run = cu_run(&b);
    assert_int_equal(json_array_size(json_object_get(json_object_get(cu_card(&run), "domains"), "set_aside")),
                     0);
    assert_false(cu_finding(&run, "set aside", NULL));
    json_decref(run.doc);
}

static void test_budget_too_small(void **state)
{
    (void)state;
    gq_backend_register_builtin();
    gq_backend be = {0};
    gq_backend_opts bo;
    gq_sim_opts(&bo, "rtxpro6000x8", 1, -1, NULL);
    gq_err e = {0};
    assert_int_equal(gq_backend_open(&be, "sim", &bo, &e), GQ_OK);
    gq_topo *t = calloc(1, sizeof *t);
    gq_topo_init(t);
    assert_int_equal(be.ops->discover(&be, t, &e), GQ_OK);
    gq_card_opts co;
    gq_card_opts_default(&co);
    co.ngpus = t->ngpu;
    for (int i = 0; i < t->ngpu; i++)
        co.gpus[i] = i;
    gq_card_plan plan;
    co.budget_s = 1;
    co.stress_s = 0;
    assert_int_equal(gq_card_plan_make(t, &co, &plan, &e), GQ_E_USAGE);
    assert_non_null(strstr(e.msg, "too small"));
    assert_non_null(strstr(e.msg, "fits the whole card"));
    assert_null(strchr(e.msg, '\n'));
    /* the stress run asked for must fit too */
    co.budget_s = 30;
    co.stress_s = 60;
    assert_int_equal(gq_card_plan_make(t, &co, &plan, &e), GQ_E_USAGE);
    assert_non_null(strstr(e.msg, "60 s stress"));
    /* just above the minimum: identity and host paths run, the rest is skipped */
    co.stress_s = 0;
    co.budget_s = 1;
    gq_card_plan_make(t, &co, &plan, &e);
    co.budget_s = 0;
    gq_card_plan p2;
    gq_card_opts c2 = co;
    c2.budget_s = 1000;
    assert_int_equal(gq_card_plan_make(t, &c2, &p2, &e), GQ_OK);
    c2.budget_s = p2.min_s * 1.05;
    assert_int_equal(gq_card_plan_make(t, &c2, &p2, &e), GQ_OK);
    assert_true(p2.est_total_s <= c2.budget_s);
    assert_true(p2.step[GQ_CS_HOST].run);
    assert_false(p2.step[GQ_CS_MATRIX].run);
    assert_non_null(strstr(p2.step[GQ_CS_MATRIX].note, "did not fit"));
    /* a generous budget runs everything at the best quality */
    c2.budget_s = 3600;
    assert_int_equal(gq_card_plan_make(t, &c2, &p2, &e), GQ_OK);
    assert_int_equal(p2.quality, 0);
    for (int s = 0; s < GQ_CS_STRESS; s++)
        assert_true(p2.step[s].run);
    assert_false(p2.step[GQ_CS_STRESS].run);
    free(t);
    gq_backend_close(&be);
}

static void test_interrupted(void **state)
{
    (void)state;
    card_args a = {.machine = "rtxpro6000x8", .noise = -1, .stress_s = 10, .interrupt_after = 20};
    card_run run = cu_run(&a);
    assert_int_equal(run.exec_rc, GQ_E_INTR);
    const json_t *c = cu_card(&run);
    assert_true(json_is_false(json_object_get(c, "complete")));
    assert_true(json_is_true(json_object_get(run.doc, "incomplete")));
    assert_int_equal(gq_card_exit_code(c), 5);
    assert_string_not_equal(cu_str(c, "stopped_at"), "");
    /* what was measured is kept: records and the identity */
    assert_true(json_array_size(json_object_get(run.doc, "records")) > 0);
    assert_int_equal(json_array_size(json_object_get(json_object_get(c, "identity"), "gpus")), 8);
    /* no step after the interrupted one ran */
    size_t i;
    const json_t *s;
    bool after = false;
    json_array_foreach(json_object_get(c, "plan"), i, s)
    {
        if (after)
            assert_string_not_equal(cu_str(s, "status"), "done");
        if (!strcmp(cu_str(s, "status"), "interrupted"))
            after = true;
    }
    assert_true(after);
    char *md = cu_render(&run, gq_test_render_markdown);
    assert_non_null(strstr(md, "Incomplete"));
    free(md);
    json_decref(run.doc);
}

/* An interrupt asked for as a step ends (its last progress call): that step
 * is done, the card stops before the next, which is named where it stopped
 * and, with every later step, left not run with why. */
static void test_interrupted_between_steps(void **state)
{
    (void)state;
    card_args a = {.machine = "h200x2", .noise = -1};
    card_run run = cu_run(&a);
    assert_int_equal(run.exec_rc, GQ_OK);
    int last = -1;
    for (int i = 0; i < cu_nprog; i++)
        if (cu_prog[i].step_index == 1)
            last = i;
    assert_true(last >= 0 && last + 1 < cu_nprog);
    gq_card_step_id first = cu_prog[last].step, second = cu_prog[last + 1].step;
    assert_int_equal(cu_prog[last + 1].step_index, 2);
    json_decref(run.doc);

    a.interrupt_after = last + 1; /* the first step's end */
    run = cu_run(&a);
    assert_int_equal(run.exec_rc, GQ_E_INTR);
    assert_int_equal(cu_nprog, last + 1); /* no step begun after it */
    assert_string_equal(cu_str(cu_card(&run), "stopped_at"), gq_card_step_name(second));
    assert_int_equal(run.plan.step[first].status, GQ_CSS_DONE);
    int notrun = 0;
    for (int s = 0; s < GQ_CS_COUNT; s++)
        if (run.plan.step[s].run && s != (int)first) {
            assert_int_equal(run.plan.step[s].status, GQ_CSS_SKIPPED);
            assert_int_equal(run.plan.step[s].reason, GQ_EVR_INTERRUPTED);
            assert_string_equal(run.plan.step[s].note, "not run: the card was interrupted");
            notrun++;
        }
    assert_true(notrun >= 2);
    json_decref(run.doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_thermal_fault),    cmocka_unit_test(test_link_fault),
        cmocka_unit_test(test_budget_too_small), cmocka_unit_test(test_placement_budgets),
        cmocka_unit_test(test_interrupted),      cmocka_unit_test(test_busy_gpu),
        cmocka_unit_test(test_set_aside),        cmocka_unit_test(test_interrupted_between_steps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
