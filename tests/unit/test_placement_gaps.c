/* Placement paths no other test ran (issue 30, mutation testing): offload
 * workers chosen greedily beyond the exhaustive reach (by predicted rate,
 * then by spread), negative role counts refused, a full list of notes, and
 * two maps that differ only in their replicas. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "analysis/bottlenecks.h"
#include "analysis/domains.h"
#include "analysis/placement.h"
#include "analysis/placement_internal.h"
#include "../test_util.h"

/* n GPUs, every P2P path at 50 GB/s, every host path at 25. */
static gq_place_model *flat_model(int n)
{
    gq_place_model *m = calloc(1, sizeof *m);
    assert_non_null(m);
    m->ngpu = n;
    m->tolerance = 0.05;
    for (int i = 0; i < n; i++) {
        m->h2d[i] = m->d2h[i] = 25;
        for (int j = 0; j < n; j++)
            m->p2p[i][j] = i == j ? 0 : 50;
    }
    return m;
}

static gq_place_result *solve(const gq_place_model *m, gq_place_roles roles)
{
    gq_place_result *res = calloc(1, sizeof *res);
    assert_non_null(res);
    gq_err e = {0};
    if (gq_place_solve(m, &roles, res, &e) != GQ_OK)
        fail_msg("solve: %s", e.msg);
    return res;
}

static gq_gpuset workers_set(const gq_place_map *map)
{
    gq_gpuset s = 0;
    for (int i = 0; i < map->nworkers; i++)
        s |= (gq_gpuset)1 << map->workers[i].gpu;
    return s;
}

/* 8 workers of 32 GPUs: C(32,8) sets, far beyond the exhaustive limit, so
 * one GPU at a time; each step compares every GPU not yet taken (32 + 31 +
 * ... + 25 = 228 candidates). The 8 fast GPUs are taken, wherever they are. */
static void offload_greedy_takes_the_fast_gpus(void **state)
{
    (void)state;
    gq_place_model *m = flat_model(32);
    static const int fast[] = {1, 4, 6, 11, 17, 20, 26, 31};
    gq_gpuset want = 0;
    for (int i = 0; i < 8; i++) {
        m->h2d[fast[i]] = m->d2h[fast[i]] = 100;
        want |= (gq_gpuset)1 << fast[i];
    }
    gq_place_result *res = solve(m, (gq_place_roles){.offload = 8});
    assert_false(res->exhaustive);
    assert_int_equal(res->candidates, 228);
    assert_int_equal(res->chosen.nworkers, 8);
    assert_true(workers_set(&res->chosen) == want);
    assert_near(res->chosen.offload_predicted_h2d, 800, 1e-6);
    free(res);

    /* straight through the search: the same, in the order taken */
    int u[32], w[32];
    for (int i = 0; i < 32; i++)
        u[i] = i;
    long nc = 0;
    bool exh = true;
    assert_int_equal(gq_place_search_workers(m, u, 32, 8, w, &nc, &exh), 8);
    assert_false(exh);
    assert_int_equal(nc, 228);
    free(m);
}

/* All GPUs alike: within the tolerance, the more spread set wins, then the
 * lower index: 0, then 16 (sharing only the 32-block with 0), then 8 and
 * 24, then 4, 20, 12, 28: one GPU in each aligned block of four. */
static void offload_greedy_ties_go_to_the_spread_set(void **state)
{
    (void)state;
    gq_place_model *m = flat_model(32);
    int u[32], w[32];
    for (int i = 0; i < 32; i++)
        u[i] = i;
    long nc = 0;
    bool exh = true;
    assert_int_equal(gq_place_search_workers(m, u, 32, 8, w, &nc, &exh), 8);
    static const int order[] = {0, 16, 8, 24, 4, 20, 12, 28};
    for (int i = 0; i < 8; i++)
        if (w[i] != order[i])
            fail_msg("worker %d is GPU %d, want %d", i, w[i], order[i]);
    /* a GPU a little faster (within the 5% tolerance) is not preferred: the
     * lower index first, then the spread */
    m->h2d[1] = m->d2h[1] = 26;
    assert_int_equal(gq_place_search_workers(m, u, 32, 8, w, &nc, &exh), 8);
    assert_int_equal(w[0], 0);
    assert_int_equal(w[1], 16);
    /* ... one faster beyond it is taken first, then the lowest GPU spread from it */
    m->h2d[1] = m->d2h[1] = 25;
    m->h2d[17] = m->d2h[17] = 40;
    assert_int_equal(gq_place_search_workers(m, u, 32, 8, w, &nc, &exh), 8);
    assert_int_equal(w[0], 17);
    assert_int_equal(w[1], 0);
    free(m);
}

static void negative_role_counts_refused(void **state)
{
    (void)state;
    gq_err e = {0};
    gq_place_roles r = {.prefill = 2, .decode = 2, .offload = -1};
    assert_int_equal(gq_place_roles_check(&r, 8, &e), GQ_E_USAGE);
    assert_string_equal(e.msg,
                        "role counts must be 0 or more (--prefill 2 --decode 2 --offload -1 --replicas 0)");
    r = (gq_place_roles){.replicas = -2};
    assert_int_equal(gq_place_roles_check(&r, 8, &e), GQ_E_USAGE);
    assert_string_equal(e.msg,
                        "role counts must be 0 or more (--prefill 0 --decode 0 --offload 0 --replicas -2)");
    r = (gq_place_roles){.prefill = -1, .decode = 1};
    assert_int_equal(gq_place_roles_check(&r, 8, &e), GQ_E_USAGE);
    assert_non_null(strstr(e.msg, "0 or more"));
    r = (gq_place_roles){.decode = -1, .prefill = 1};
    assert_int_equal(gq_place_roles_check(&r, 8, &e), GQ_E_USAGE);
    assert_non_null(strstr(e.msg, "0 or more"));
    r = (gq_place_roles){.offload = 0, .replicas = 1};
    assert_int_equal(gq_place_roles_check(&r, 8, &e), GQ_OK);
}

/* Notes beyond the 16 the result holds are dropped, the 16 kept. */
static void notes_beyond_the_list_dropped(void **state)
{
    (void)state;
    gq_place_result *res = calloc(1, sizeof *res);
    assert_non_null(res);
    for (int i = 0; i < 20; i++)
        gq_place_note(res, "note %d", i);
    assert_int_equal(res->nnotes, 16);
    assert_string_equal(res->notes[0], "note 0");
    assert_string_equal(res->notes[15], "note 15");
    free(res);
}

/* Two maps with the same pairs and workers: the same only when each
 * replica holds the same GPUs. */
static void maps_differing_in_replicas(void **state)
{
    (void)state;
    gq_place_map *a = calloc(1, sizeof *a), *b = calloc(1, sizeof *b);
    assert_non_null(a);
    assert_non_null(b);
    a->nreplicas = b->nreplicas = 2;
    a->replicas[0].ngpus = b->replicas[0].ngpus = 2;
    a->replicas[1].ngpus = b->replicas[1].ngpus = 2;
    int g[2][2] = {{0, 1}, {2, 3}};
    for (int r = 0; r < 2; r++)
        for (int i = 0; i < 2; i++)
            a->replicas[r].gpus[i] = b->replicas[r].gpus[i] = g[r][i];
    assert_true(gq_place_same_map(a, b));
    b->replicas[1].gpus[1] = 4; /* the last GPU of the last replica */
    assert_false(gq_place_same_map(a, b));
    b->replicas[1].gpus[1] = 3;
    /* one more GPU in the last replica (a's unused slot holds the same) */
    b->replicas[1].ngpus = 3;
    b->replicas[1].gpus[2] = a->replicas[1].gpus[2] = 5;
    assert_false(gq_place_same_map(a, b));
    assert_false(gq_place_same_map(b, a));
    b->replicas[1].ngpus = 2;
    assert_true(gq_place_same_map(b, a));
    free(a);
    free(b);
}

/* A saved domains analysis into the model: a domain naming a GPU beyond the
 * model, or one overlapping an earlier domain, leaves the model without
 * domains; a P2P budget inside one domain limits every flow among its GPUs;
 * a budget naming a GPU beyond the model, or without a capacity, is passed
 * over. */
static void saved_domains_and_budgets(void **state)
{
    (void)state;
    gq_domains *dom = calloc(1, sizeof *dom);
    gq_bottlenecks *bn = calloc(1, sizeof *bn);
    assert_non_null(dom);
    assert_non_null(bn);
    dom->ndomains = 2;
    dom->size[0] = dom->size[1] = 2;
    dom->member[0][0] = 0;
    dom->member[0][1] = 1;
    dom->member[1][0] = 2;
    dom->member[1][1] = 3;

    gq_place_model *m = flat_model(4);
    gq_place_model_from_saved(m, dom, NULL);
    assert_int_equal(m->ndomains, 2);
    assert_true(m->domains[0] == 0x3 && m->domains[1] == 0xC);
    free(m);

    dom->member[1][1] = 4; /* GPU 4 of a 4-GPU model */
    m = flat_model(4);
    gq_place_model_from_saved(m, dom, NULL);
    assert_int_equal(m->ndomains, 0);
    free(m);
    dom->member[1][1] = -1;
    m = flat_model(4);
    gq_place_model_from_saved(m, dom, NULL);
    assert_int_equal(m->ndomains, 0);
    free(m);
    dom->member[1][1] = 1; /* GPU 1 in both */
    m = flat_model(4);
    gq_place_model_from_saved(m, dom, NULL);
    assert_int_equal(m->ndomains, 0);
    free(m);
    dom->member[1][1] = 3;

    /* budgets: P2P inside domain {2,3}; P2P naming GPU 5; H2D without a capacity; D2H kept */
    bn->n = 4;
    bn->v[0] = (gq_bottleneck){
        .p2p = true, .direction = GQ_DIR_P2P, .ngpus = 2, .gpus = {2, 3}, .capacity_gbps = 40};
    snprintf(bn->v[0].explanation, sizeof bn->v[0].explanation, "the switch below 2 and 3");
    bn->v[1] = (gq_bottleneck){
        .p2p = true, .direction = GQ_DIR_P2P, .ngpus = 2, .gpus = {0, 5}, .capacity_gbps = 40};
    bn->v[2] = (gq_bottleneck){.direction = GQ_DIR_H2D, .ngpus = 2, .gpus = {0, 1}, .capacity_gbps = 0};
    bn->v[3] = (gq_bottleneck){.direction = GQ_DIR_D2H, .ngpus = 2, .gpus = {0, 1}, .capacity_gbps = 30};
    m = flat_model(4);
    gq_place_model_from_saved(m, dom, bn);
    assert_int_equal(m->ndomains, 2);
    assert_int_equal(m->nlimits, 2);
    assert_int_equal(m->limits[0].kind, GQ_LIMIT_P2P);
    assert_true(m->limits[0].a == 0xC && m->limits[0].b == 0xC);
    assert_near(m->limits[0].capacity_gbps, 40, 1e-9);
    assert_string_equal(m->limits[0].evidence, "gpuqual domains bottleneck: the switch below 2 and 3");
    assert_int_equal(m->limits[1].kind, GQ_LIMIT_D2H);
    assert_true(m->limits[1].a == 0x3);
    assert_near(m->limits[1].capacity_gbps, 30, 1e-9);
    assert_string_equal(m->limits[1].evidence, "gpuqual domains bottleneck: (no evidence given)");
    free(m);
    free(dom);
    free(bn);
}

/* Beyond exhaustive reach with domains out of index order (GPUs 8-15 the
 * first domain, 0-7 the second): the cells give prefill 8,9,12,13,0,1 and
 * decode 10,11,14,15,2,3, each side sorted before pairing in order, so the
 * handoffs are 0->2, 1->3, 8->10, 9->11, 12->14, 13->15; with nothing
 * shared each runs at its own rate and no swap is tried. */
static void heuristic_cells_sorted_across_domains(void **state)
{
    (void)state;
    gq_place_model *m = flat_model(16);
    m->ndomains = 2;
    m->domains[0] = 0xFF00;
    m->domains[1] = 0x00FF;
    gq_place_result *res = solve(m, (gq_place_roles){.prefill = 6, .decode = 6});
    assert_false(res->exhaustive);
    assert_int_equal(res->candidates, 1);
    assert_int_equal(res->chosen.npairs, 6);
    static const int want[6][2] = {{0, 2}, {1, 3}, {8, 10}, {9, 11}, {12, 14}, {13, 15}};
    for (int i = 0; i < 6; i++) {
        assert_int_equal(res->chosen.pairs[i].prefill, want[i][0]);
        assert_int_equal(res->chosen.pairs[i].decode, want[i][1]);
    }
    free(res);

    /* straight through the search: pairs in the sorted order */
    int u[16], pairs[GQ_PLACE_MAX_PAIRS][2];
    for (int i = 0; i < 16; i++)
        u[i] = i;
    long nc = 0;
    bool exh = true;
    assert_int_equal(gq_place_search_pairs(m, u, 16, 6, 6, pairs, &nc, &exh), GQ_OK);
    assert_false(exh);
    assert_int_equal(nc, 1);
    for (int i = 0; i < 6; i++) {
        assert_int_equal(pairs[i][0], want[i][0]);
        assert_int_equal(pairs[i][1], want[i][1]);
    }
    free(m);
}

/* Warnings past GQ_PLACE_MAX_WARNINGS are dropped; those kept keep their id and text. */
static void warnings_beyond_the_list_dropped(void **state)
{
    (void)state;
    gq_place_result *res = calloc(1, sizeof *res);
    assert_non_null(res);
    for (int i = 0; i < GQ_PLACE_MAX_WARNINGS + 3; i++)
        gq_place_warn(res, "place_test", "warning %d", i);
    assert_int_equal(res->nwarnings, GQ_PLACE_MAX_WARNINGS);
    assert_string_equal(res->warnings[0].id, "place_test");
    assert_string_equal(res->warnings[GQ_PLACE_MAX_WARNINGS - 1].text, "warning 7");
    free(res);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(offload_greedy_takes_the_fast_gpus),
        cmocka_unit_test(offload_greedy_ties_go_to_the_spread_set),
        cmocka_unit_test(negative_role_counts_refused),
        cmocka_unit_test(notes_beyond_the_list_dropped),
        cmocka_unit_test(maps_differing_in_replicas),
        cmocka_unit_test(saved_domains_and_budgets),
        cmocka_unit_test(heuristic_cells_sorted_across_domains),
        cmocka_unit_test(warnings_beyond_the_list_dropped),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
