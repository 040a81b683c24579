/* Planning the card to a time budget, on crafted topologies (no backend):
 * the estimate fits the budget, quality drops before steps do, steps drop in
 * the documented order, and a budget below the smallest card is refused with
 * what would fit. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "analysis/card.h"

#include "../card_plan_util.h"

static void test_fits_budget(void **state)
{
    (void)state;
    gq_topo *t = machine(8, true);
    gq_card_opts o;
    gq_card_plan p;
    gq_err e = {0};
    double budgets[] = {40, 60, 120, 200, 300, 600, 3600};
    int last_q = 99;
    for (size_t k = 0; k < sizeof budgets / sizeof budgets[0]; k++) {
        opts_for(&o, 8, budgets[k], 0);
        int rc = gq_card_plan_make(t, &o, &p, &e);
        if (rc) {
            /* only budgets below the smallest card may be refused */
            assert_int_equal(rc, GQ_E_USAGE);
            assert_true(budgets[k] < p.min_s);
            continue;
        }
        assert_true(p.est_total_s <= budgets[k] + 1e-9);
        double sum = 0;
        for (int s = 0; s < GQ_CS_COUNT; s++)
            if (p.step[s].run)
                sum += p.step[s].est_s;
        assert_true(fabs(sum - p.est_total_s) < 1e-6);
        /* more time never lowers the quality */
        if (last_q != 99)
            assert_true(p.quality <= last_q);
        last_q = p.quality;
    }
    /* with an hour everything runs at the best quality */
    opts_for(&o, 8, 3600, 60);
    assert_int_equal(gq_card_plan_make(t, &o, &p, &e), GQ_OK);
    assert_int_equal(p.quality, 0);
    for (int s = 0; s < GQ_CS_COUNT; s++)
        assert_true(p.step[s].run);
    assert_true(p.full_s <= 3600 && p.full_s == p.est_total_s);
    free(t);
}

/* How many steps the plan runs. */
static int nrun(const gq_card_plan *p)
{
    int n = 0;
    for (int s = 0; s < GQ_CS_COUNT; s++)
        n += p->step[s].run;
    return n;
}

static void test_drop_order(void **state)
{
    (void)state;
    gq_topo *t = machine(8, true);
    gq_card_opts o;
    gq_card_plan full, p;
    gq_err e = {0};
    opts_for(&o, 8, 3600, 0);
    assert_int_equal(gq_card_plan_make(t, &o, &full, &e), GQ_OK);
    /* every step but the stress (none asked) */
    assert_int_equal(nrun(&full), GQ_CS_COUNT - 1);
    /* The smallest budget that still keeps every step (at the lowest
     * quality), by bisection between the smallest card and the whole one. */
    double lo = full.min_s, hi = full.full_s;
    for (int k = 0; k < 60; k++) {
        double mid = 0.5 * (lo + hi);
        opts_for(&o, 8, mid, 0);
        assert_int_equal(gq_card_plan_make(t, &o, &p, &e), GQ_OK);
        if (nrun(&p) == nrun(&full))
            hi = mid;
        else
            lo = mid;
    }
    opts_for(&o, 8, hi, 0);
    gq_card_plan all;
    assert_int_equal(gq_card_plan_make(t, &o, &all, &e), GQ_OK);
    assert_int_equal(nrun(&all), nrun(&full));
    assert_int_equal(all.quality, 3); /* the lowest of the four */
    /* Half of bidir's estimate less than that: exactly one step goes, and
     * it is bidir, the first of the documented order. */
    assert_true(all.step[GQ_CS_BIDIR].est_s > 0);
    opts_for(&o, 8, all.est_total_s - 0.5 * all.step[GQ_CS_BIDIR].est_s, 0);
    assert_int_equal(gq_card_plan_make(t, &o, &p, &e), GQ_OK);
    assert_false(p.step[GQ_CS_BIDIR].run);
    assert_int_equal(p.step[GQ_CS_BIDIR].status, GQ_CSS_SKIPPED);
    assert_non_null(strstr(p.step[GQ_CS_BIDIR].note, "did not fit"));
    assert_int_equal(nrun(&p), nrun(&full) - 1);
    /* the smallest card: identity and host paths only */
    opts_for(&o, 8, full.min_s * 1.01, 0);
    assert_int_equal(gq_card_plan_make(t, &o, &p, &e), GQ_OK);
    assert_true(p.step[GQ_CS_IDENTITY].run && p.step[GQ_CS_HOST].run);
    static const gq_card_step_id dropped[] = {GQ_CS_BIDIR,     GQ_CS_LATENCY,    GQ_CS_SWEEP,
                                              GQ_CS_PLACEMENT, GQ_CS_CONTENTION, GQ_CS_MATRIX};
    for (size_t k = 0; k < sizeof dropped / sizeof dropped[0]; k++) {
        assert_false(p.step[dropped[k]].run);
        assert_int_equal(p.step[dropped[k]].status, GQ_CSS_SKIPPED);
        assert_non_null(strstr(p.step[dropped[k]].note, "did not fit"));
    }
    free(t);
}

static void test_refused(void **state)
{
    (void)state;
    gq_topo *t = machine(8, true);
    gq_card_opts o;
    gq_card_plan p;
    gq_err e = {0};
    opts_for(&o, 8, 2, 0);
    assert_int_equal(gq_card_plan_make(t, &o, &p, &e), GQ_E_USAGE);
    assert_non_null(strstr(e.msg, "--budget 2s is too small"));
    assert_non_null(strstr(e.msg, "8 GPUs"));
    assert_null(strchr(e.msg, '\n'));
    opts_for(&o, 8, 100, 120);
    assert_int_equal(gq_card_plan_make(t, &o, &p, &e), GQ_E_USAGE);
    assert_non_null(strstr(e.msg, "120 s stress"));
    opts_for(&o, 0, 100, 0);
    assert_int_equal(gq_card_plan_make(t, &o, &p, &e), GQ_E_USAGE);
    free(t);
}

static void test_one_gpu_and_growth(void **state)
{
    (void)state;
    gq_topo *t = machine(1, true);
    gq_card_opts o;
    gq_card_plan p;
    gq_err e = {0};
    opts_for(&o, 1, 300, 0);
    assert_int_equal(gq_card_plan_make(t, &o, &p, &e), GQ_OK);
    assert_false(p.step[GQ_CS_MATRIX].run);
    assert_non_null(strstr(p.step[GQ_CS_MATRIX].note, "one GPU"));
    assert_true(p.step[GQ_CS_HOST].run);
    assert_non_null(strstr(p.step[GQ_CS_STRESS].note, "--no-stress"));
    free(t);
    /* the whole card grows no faster than N^2 (never every subset) */
    double f16, f32;
    t = machine(16, true);
    opts_for(&o, 16, 1e6, 0);
    assert_int_equal(gq_card_plan_make(t, &o, &p, &e), GQ_OK);
    f16 = p.full_s;
    free(t);
    t = machine(32, true);
    opts_for(&o, 32, 1e6, 0);
    assert_int_equal(gq_card_plan_make(t, &o, &p, &e), GQ_OK);
    f32 = p.full_s;
    free(t);
    assert_true(f32 / f16 < 4.5);
    /* the estimate of one measurement: concurrent groups cost more than one flow */
    assert_true(gq_card_estimate_measurement(4, 5, 0.1, 1 << 28) >
                gq_card_estimate_measurement(1, 5, 0.1, 1 << 28));
}

/* A level's default fits the machine (issue 28, item 6): up to 16 GPUs the
 * default budget never drops a step for the budget, at every level, with or
 * without the stress; where the level's own budget already fits, it is the
 * level's own; the default is raised at most GQ_CARD_DEFAULT_BUDGET_MAX_X
 * times; and the note says why the budget is what it is. */
static void test_default_budget(void **state)
{
    (void)state;
    static const gq_card_level levels[] = {GQ_LEVEL_QUICK, GQ_LEVEL_STANDARD, GQ_LEVEL_FULL};
    gq_card_opts o;
    gq_card_plan p;
    gq_err e = {0};
    bool raised16 = false;
    for (int n = 1; n <= 16; n++)
        for (int withp2p = 0; withp2p < 2; withp2p++)
            for (size_t l = 0; l < sizeof levels / sizeof levels[0]; l++)
                for (int st = 0; st < 2; st++) {
                    gq_topo *t = machine(n, withp2p);
                    opts_for(&o, n, 0, st ? gq_card_level_stress_s(levels[l]) : 0);
                    o.level = levels[l];
                    double own = gq_card_level_budget_s(levels[l]);
                    o.budget_s = gq_card_default_budget_s(t, &o);
                    o.level_budget_s = own;
                    assert_true(o.budget_s >= own);
                    assert_int_equal(gq_card_plan_make(t, &o, &p, &e), GQ_OK);
                    for (int s = 0; s < GQ_CS_COUNT; s++)
                        if (p.step[s].reason == GQ_EVR_BUDGET)
                            fail_msg("%d GPUs (p2p %d), level %d, stress %d: step %s did not fit the default "
                                     "budget of %.0f s",
                                     n, withp2p, (int)levels[l], st, gq_card_step_name((gq_card_step_id)s),
                                     o.budget_s);
                    if (o.budget_s > own) {
                        raised16 |= n == 16;
                        /* raised only as far as the level needs at the lowest quality */
                        assert_true(p.est_total_s > own);
                        assert_true(o.budget_s - p.est_total_s < 1.0);
                        assert_non_null(strstr(p.step[GQ_CS_IDENTITY].note, "budget raised to"));
                        assert_non_null(strstr(p.step[GQ_CS_IDENTITY].note, "lowest quality"));
                    } else {
                        assert_null(strstr(p.step[GQ_CS_IDENTITY].note, "budget raised"));
                    }
                    free(t);
                }
    /* 16 GPUs with P2P everywhere need more than a minute at quick */
    assert_true(raised16);
    /* 64 GPUs: raised to the cap and no further; steps then drop, and the note says so */
    gq_topo *t = machine(64, true);
    opts_for(&o, 64, 0, 30);
    o.level = GQ_LEVEL_QUICK;
    o.budget_s = gq_card_default_budget_s(t, &o);
    o.level_budget_s = gq_card_level_budget_s(o.level);
    assert_true(fabs(o.budget_s - GQ_CARD_DEFAULT_BUDGET_MAX_X * o.level_budget_s) < 1e-9);
    assert_int_equal(gq_card_plan_make(t, &o, &p, &e), GQ_OK);
    assert_int_equal(p.step[GQ_CS_MATRIX].reason, GQ_EVR_BUDGET);
    assert_non_null(strstr(p.step[GQ_CS_IDENTITY].note, "--budget gives more"));
    free(t);
}

/* The full level's sweep counts: one host path per distinct (NUMA node, PCIe
 * generation, width) class plus one, at most GQ_CARD_MAX_SWEEP_PATHS (15
 * classes counted); P2P paths twice per class plus one, capped the same. */
static void test_full_sweep_counts(void **state)
{
    (void)state;
    gq_topo *t = calloc(1, sizeof *t);
    assert_non_null(t);
    int gpus[GQ_MAX_GPUS];
    for (int i = 0; i < GQ_MAX_GPUS; i++)
        gpus[i] = i;
    const struct {
        int n, host;
    } cases[] = {{1, 2}, {2, 3}, {14, 15}, {15, 16}, {16, 16}, {17, 16}, {24, 16}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        gq_topo_init(t);
        t->ngpu = cases[c].n;
        for (int i = 0; i < cases[c].n; i++) {
            t->gpu[i].numa_node = 0;
            t->gpu[i].pcie_gen_max = 4;
            t->gpu[i].pcie_width_max = i + 1; /* a class of its own */
            for (int j = 0; j < cases[c].n; j++)
                t->p2p_cuda[i][j] = 0;
        }
        int p2p = -1, host = -1;
        gq_card_full_sweep_counts(t, gpus, cases[c].n, &p2p, &host);
        if (host != cases[c].host || p2p != 0)
            fail_msg("%d GPUs of distinct classes: host %d (want %d), p2p %d (want 0)", cases[c].n, host,
                     cases[c].host, p2p);
    }
    /* one class for all: one host path + 1; GPUs on two NUMA nodes: two */
    gq_topo_init(t);
    t->ngpu = 8;
    for (int i = 0; i < 8; i++) {
        t->gpu[i].numa_node = i / 4;
        t->gpu[i].pcie_gen_max = 5;
        t->gpu[i].pcie_width_max = 16;
        for (int j = 0; j < 8; j++) {
            t->p2p_cuda[i][j] = i != j;
            t->level[i][j] = (unsigned char)((i / 4 == j / 4) ? 2 : 4);
            t->nvlinks[i][j] = 0;
        }
    }
    int p2p = -1, host = -1;
    gq_card_full_sweep_counts(t, gpus, 4, &p2p, &host);
    assert_int_equal(host, 2);
    assert_int_equal(p2p, 3); /* one P2P class: within and across domains, + 1 */
    gq_card_full_sweep_counts(t, gpus, 8, &p2p, &host);
    assert_int_equal(host, 3);
    assert_int_equal(p2p, 5);
    /* 17 P2P classes (NVLink counts): capped at GQ_CARD_MAX_SWEEP_PATHS */
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 8; j++)
            t->nvlinks[i][j] = i != j ? i * 8 + j : 0;
    gq_card_full_sweep_counts(t, gpus, 8, &p2p, &host);
    assert_int_equal(p2p, GQ_CARD_MAX_SWEEP_PATHS);
    assert_int_equal(host, 3);
    free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fits_budget),    cmocka_unit_test(test_drop_order),
        cmocka_unit_test(test_refused),        cmocka_unit_test(test_one_gpu_and_growth),
        cmocka_unit_test(test_default_budget), cmocka_unit_test(test_full_sweep_counts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
