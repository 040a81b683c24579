/* Evidence and levels on the simulated machines: a step that did not run
 * leaves its rows "not measured" and its checks skipped, never a pass; a
 * step cut by the budget makes the card INCOMPLETE; a step the user turned
 * off is named in the verdict; each level's verdict covers exactly its steps.
 * Read from the card document, as card.json says it. */
#include "card_util.h"

/* The row with this title. */
static const json_t *row_of(const card_run *r, const char *title)
{
    size_t i;
    const json_t *x;
    json_array_foreach(json_object_get(cu_card(r), "rows"), i,
                       x) if (!strcmp(cu_str(x, "check"), title)) return x;
    fail_msg("no row '%s'", title);
    return NULL;
}

/* Every check resting on step s has that evidence; a check on evidence not
 * measured is skip. Returns how many rest on s. */
static int checks_on(const card_run *r, const char *step, const char *evidence)
{
    int n = 0;
    size_t i;
    const json_t *c;
    json_array_foreach(json_object_get(cu_card(r), "checks"), i, c)
    {
        if (strcmp(cu_str(c, "step"), step))
            continue;
        n++;
        if (strcmp(cu_str(c, "evidence"), evidence))
            fail_msg("check %s %s: evidence %s, want %s", cu_str(c, "id"), cu_str(c, "subject"),
                     cu_str(c, "evidence"), evidence);
        if (strcmp(evidence, "measured") && strcmp(cu_str(c, "verdict"), "skip"))
            fail_msg("check %s on %s evidence is %s", cu_str(c, "id"), evidence, cu_str(c, "verdict"));
    }
    return n;
}

/* Each step that has a row, cut in turn (as the planner cuts a step that does
 * not fit): its row says "not measured (did not fit the budget)", is skip,
 * its checks are skip, and the card is INCOMPLETE with exit 5. */
static void each_step_cut_in_turn(void **state)
{
    (void)state;
    static const struct {
        gq_card_step_id step;
        const char *row;
    } cases[] = {
        {GQ_CS_MATRIX, "Pairwise GPU traffic"},
        {GQ_CS_HOST, "Host-memory traffic"},
        {GQ_CS_CONTENTION, "Concurrent GPU traffic"},
        {GQ_CS_SWEEP, "Transfer granularity"},
        {GQ_CS_LATENCY, "Latency"},
        {GQ_CS_PLACEMENT, "Placement"},
        {GQ_CS_STRESS, "Whole-node health"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        card_args a = {.machine = "h200x2",
                       .noise = 0,
                       .stress_s = 5,
                       .expect = "h200.expect",
                       .cut_step = cases[k].step + 1};
        card_run run = cu_run(&a);
        const json_t *r = row_of(&run, cases[k].row);
        const char *name = gq_card_step_name(cases[k].step);
        if (strcmp(cu_str(r, "result"), "not measured (did not fit the budget)"))
            fail_msg("%s cut: row '%s' says '%s'", name, cases[k].row, cu_str(r, "result"));
        assert_string_equal(cu_str(r, "verdict"), "skip");
        assert_string_equal(cu_str(r, "evidence"), "skipped");
        assert_string_equal(cu_str(r, "evidence_reason"), "budget");
        assert_string_equal(cu_str(r, "step"), name);
        checks_on(&run, name, "skipped");
        const json_t *c = cu_card(&run);
        assert_string_equal(cu_str(c, "verdict"), "incomplete");
        assert_string_equal(cu_str(c, "verdict_text"), "INCOMPLETE");
        assert_int_equal(gq_card_exit_code(c), 5);
        assert_int_equal(cu_int(c, "exit_code"), 5);
        /* the other rows with a step still rest on measured evidence */
        assert_string_equal(cu_str(row_of(&run, "Identity and links"), "evidence"), "measured");
        json_decref(run.doc);
    }
}

/* The whole card on the same machine: every row with a step is measured and
 * the checks pass on measured evidence (the control for the test above). */
static void whole_card_measured(void **state)
{
    (void)state;
    card_args a = {.machine = "h200x2", .noise = 0, .stress_s = 5, .expect = "h200.expect"};
    card_run run = cu_run(&a);
    size_t i;
    const json_t *x;
    json_array_foreach(json_object_get(cu_card(&run), "rows"), i,
                       x) if (json_is_string(json_object_get(x, "step")))
        assert_string_equal(cu_str(x, "evidence"), "measured");
    assert_true(checks_on(&run, "host", "measured") > 0);
    assert_true(checks_on(&run, "stress", "measured") > 0);
    assert_string_equal(cu_str(cu_card(&run), "verdict_text"), "PASS");
    assert_int_equal(gq_card_exit_code(cu_card(&run)), 0);
    json_decref(run.doc);
}

/* A budget-cut card on each simulated 8-GPU machine: the smallest budget the
 * plan accepts (identity and each GPU's host paths) cuts the other steps, and
 * the card is INCOMPLETE, exit 5; the host row does not count the shared
 * host budgets it did not measure. */
static void budget_cut_8gpu_incomplete(void **state)
{
    (void)state;
    static const char *const machines[] = {"rtx4090x8", "rtxpro6000x8"};
    for (int m = 0; m < 2; m++) {
        card_args a = {.machine = machines[m], .noise = 0, .budget_s = 0};
        /* the smallest budget that plans: refused below it */
        gq_backend_register_builtin();
        gq_backend be = {0};
        gq_backend_opts bo = {0};
        gq_sim_opts(&bo, machines[m], 1, 0, NULL);
        gq_err e = {0};
        assert_int_equal(gq_backend_open(&be, "sim", &bo, &e), GQ_OK);
        gq_topo *t = calloc(1, sizeof *t);
        gq_topo_init(t);
        assert_int_equal(be.ops->discover(&be, t, &e), GQ_OK);
        gq_card_opts co;
        gq_card_opts_default(&co);
        co.stress_s = 0;
        co.budget_s = 1;
        co.ngpus = t->ngpu;
        for (int i = 0; i < t->ngpu; i++)
            co.gpus[i] = i;
        gq_card_plan p;
        assert_int_equal(gq_card_plan_make(t, &co, &p, &e), GQ_E_USAGE);
        a.budget_s = ceil(p.min_s) + 1;
        gq_backend_close(&be);
        free(t);
        card_run run = cu_run(&a);
        assert_int_equal(run.plan.step[GQ_CS_CONTENTION].reason, GQ_EVR_BUDGET);
        const json_t *c = cu_card(&run);
        if (strcmp(cu_str(c, "verdict"), "incomplete"))
            fail_msg("%s at --budget %.0fs: verdict %s", machines[m], a.budget_s, cu_str(c, "verdict"));
        assert_int_equal(gq_card_exit_code(c), 5);
        const char *host = cu_str(row_of(&run, "Host-memory traffic"), "result");
        if (!strstr(host, "shared host budgets not measured (contention step: did not fit the budget)"))
            fail_msg("%s host row: %s", machines[m], host);
        assert_false(cu_finding(&run, "share one", NULL));
        json_decref(run.doc);
    }
}

/* Turned off by the user: not run, named in the verdict, not INCOMPLETE. */
static void turned_off_is_named(void **state)
{
    (void)state;
    card_args a = {.machine = "h200x2", .noise = 0, .stress_s = 0, .no_placement = true};
    card_run run = cu_run(&a);
    const json_t *c = cu_card(&run);
    assert_string_equal(cu_str(c, "verdict"), "pass");
    assert_string_equal(cu_str(c, "verdict_text"), "PASS without placement and stress");
    assert_int_equal(json_array_size(json_object_get(c, "turned_off")), 2);
    assert_string_equal(cu_str(row_of(&run, "Placement"), "result"), "not measured (turned off)");
    assert_string_equal(cu_str(row_of(&run, "Placement"), "evidence_reason"), "user");
    assert_int_equal(gq_card_exit_code(c), 0);
    json_decref(run.doc);
}

/* The steps that ran ("done") in the card's plan, as a bit set. */
static unsigned done_steps(const card_run *r)
{
    unsigned set = 0;
    size_t i;
    const json_t *p;
    json_array_foreach(json_object_get(cu_card(r), "plan"), i, p)
    {
        gq_card_step_id s;
        if (!strcmp(cu_str(p, "status"), "done") && gq_card_step_parse(cu_str(p, "step"), &s))
            set |= 1u << s;
    }
    return set;
}

#define BIT(s) (1u << (s))

/* Each level's verdict covers exactly its steps: quick runs identity, the P2P
 * matrix where P2P exists, each GPU's host paths and a 30 s stress within its
 * 1-minute budget (planned at most 60 s on the 8-GPU machines) and passes; the
 * steps outside the level are "not in the quick level" and change nothing;
 * full adds the write direction of the matrix and a 5-minute stress. */
static void levels_cover_their_steps(void **state)
{
    (void)state;
    static const struct {
        const char *machine;
        unsigned quick; /* the steps quick runs there */
    } m[] = {
        {"rtxpro6000x8", BIT(GQ_CS_IDENTITY) | BIT(GQ_CS_MATRIX) | BIT(GQ_CS_HOST) | BIT(GQ_CS_STRESS)},
        /* no pair has P2P: the quick matrix has nothing to measure */
        {"rtx4090x8", BIT(GQ_CS_IDENTITY) | BIT(GQ_CS_HOST) | BIT(GQ_CS_STRESS)},
        {"h200x2", BIT(GQ_CS_IDENTITY) | BIT(GQ_CS_MATRIX) | BIT(GQ_CS_HOST) | BIT(GQ_CS_STRESS)},
    };
    for (int k = 0; k < 3; k++) {
        card_args a = {.machine = m[k].machine,
                       .noise = 0,
                       .level = GQ_LEVEL_QUICK + 1,
                       .budget_s = gq_card_level_budget_s(GQ_LEVEL_QUICK),
                       .stress_s = gq_card_level_stress_s(GQ_LEVEL_QUICK)};
        card_run run = cu_run(&a);
        const json_t *c = cu_card(&run);
        if (done_steps(&run) != m[k].quick)
            fail_msg("%s quick: steps done %#x, want %#x", m[k].machine, done_steps(&run), m[k].quick);
        assert_true(run.plan.est_total_s <= 60);
        assert_string_equal(cu_str(c, "level"), "quick");
        if (strcmp(cu_str(c, "verdict"), "pass"))
            fail_msg("%s quick: verdict %s", m[k].machine, cu_str(c, "verdict_text"));
        const json_t *lat = row_of(&run, "Latency");
        assert_string_equal(cu_str(lat, "evidence_reason"), "level");
        assert_string_equal(cu_str(lat, "result"), "not measured (not in this level)");
        assert_string_equal(cu_str(lat, "verdict"), "skip");
        assert_string_equal(run.plan.step[GQ_CS_CONTENTION].note, "not in the quick level");
        checks_on(&run, "latency", "skipped");
        json_decref(run.doc);
    }
    card_args a = {.machine = "rtxpro6000x8",
                   .noise = 0,
                   .level = GQ_LEVEL_FULL + 1,
                   .budget_s = gq_card_level_budget_s(GQ_LEVEL_FULL),
                   .stress_s = gq_card_level_stress_s(GQ_LEVEL_FULL)};
    card_run run = cu_run(&a);
    assert_int_equal(done_steps(&run), BIT(GQ_CS_COUNT) - 1);
    assert_string_equal(cu_str(cu_card(&run), "level"), "full");
    const json_t *mats = json_object_get(cu_card(&run), "matrices");
    assert_int_equal(json_array_size(mats), 2);
    assert_string_equal(cu_str(json_array_get(mats, 1), "id"), "p2p_write");
    assert_true(cu_num(json_object_get(run.doc, "stress"), "elapsed_s") >= 299);
    assert_string_equal(cu_str(cu_card(&run), "verdict"), "pass");
    json_decref(run.doc);
}

/* "gpu:3" -> 3; "host..." -> -1 */
static int ep_gpu(const char *ep)
{
    return ep && !strncmp(ep, "gpu:", 4) ? atoi(ep + 4) : -1;
}

/* The full level sweeps every distinct path: for every class of P2P pair the
 * matrix measured directly, and every class of host path, some sweep record
 * lies on a path of that class (the standard level sweeps only the fastest
 * and the slowest, which misses classes on a100x6). */
static void full_sweeps_every_distinct_path(void **state)
{
    (void)state;
    static const char *const machines[] = {"a100x6", "rtxpro6000x8", "h200x2", "rtx4090x8"};
    for (size_t k = 0; k < sizeof machines / sizeof machines[0]; k++) {
        gq_backend be = {0};
        gq_backend_opts bo;
        gq_sim_opts(&bo, machines[k], 1, 0, NULL);
        gq_err e = {0};
        assert_int_equal(gq_backend_open(&be, "sim", &bo, &e), GQ_OK);
        gq_topo *t = calloc(1, sizeof *t);
        gq_topo_init(t);
        assert_int_equal(be.ops->discover(&be, t, &e), GQ_OK);
        gq_backend_close(&be);
        card_args a = {.machine = machines[k], .noise = 0, .level = GQ_LEVEL_FULL + 1, .budget_s = 900};
        card_run run = cu_run(&a);
        bool p2p_cls[8 * 1000 + 100] = {0}, p2p_swept[8 * 1000 + 100] = {0};
        bool host_swept[GQ_MAX_GPUS] = {0};
        int nsweep_p2p = 0;
        size_t i;
        const json_t *r;
        json_array_foreach(json_object_get(run.doc, "records"), i, r)
        {
            const char *test = cu_str(r, "test");
            int src = ep_gpu(cu_str(r, "src")), dst = ep_gpu(cu_str(r, "dst"));
            bool sweep = !strncmp(test, GQ_CARD_TEST_SWEEP_PREFIX, strlen(GQ_CARD_TEST_SWEEP_PREFIX));
            if (src >= 0 && dst >= 0) {
                long c = gq_card_p2p_path_class(t, src, dst);
                assert_true(c >= 0 && c < (long)(sizeof p2p_cls));
                if (sweep) {
                    p2p_swept[c] = true;
                    nsweep_p2p++;
                } else if (!strcmp(test, GQ_CARD_TEST_MATRIX) && json_is_true(json_object_get(r, "valid")))
                    p2p_cls[c] = true;
            } else if (sweep && dst >= 0) {
                host_swept[dst] = true;
            }
        }
        for (size_t c = 0; c < sizeof p2p_cls; c++)
            if (p2p_cls[c] && !p2p_swept[c])
                fail_msg("%s full: no sweep on a pair of class %zu (level %zu, %zu NVLinks)", machines[k], c,
                         c / 1000, c % 1000);
        for (int g = 0; g < t->ngpu; g++) {
            bool covered = false;
            for (int h = 0; h < t->ngpu; h++)
                covered |= host_swept[h] && gq_card_host_path_class(t, h) == gq_card_host_path_class(t, g);
            if (!covered)
                fail_msg("%s full: no sweep on a host path of GPU %d's class", machines[k], g);
        }
        /* at least the fastest and the slowest pair where pairs were swept at all */
        if (nsweep_p2p)
            assert_true(nsweep_p2p >= 2);
        json_decref(run.doc);
        free(t);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(each_step_cut_in_turn),      cmocka_unit_test(whole_card_measured),
        cmocka_unit_test(budget_cut_8gpu_incomplete), cmocka_unit_test(turned_off_is_named),
        cmocka_unit_test(levels_cover_their_steps),   cmocka_unit_test(full_sweeps_every_distinct_path),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
