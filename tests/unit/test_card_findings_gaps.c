/* Card findings and plans no other test ran (issue 30, mutation testing): the
 * host asymmetry with a GPU whose figure is missing, the sweep finding from
 * the first sweep that has a fit, the offload workers' shared budget named
 * by its direction, and the sweep's host path when nothing was
 * measured alone. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "analysis/card.h"
#include "analysis/card_judge_internal.h"
#include "analysis/domains.h"
#include "analysis/expect.h"
#include "core/record.h"

/* With all four GPUs copying from host memory, GPU 1's figure is missing: it
 * is in neither list, and the others split at the middle of 10 and 21. */
static void host_asymmetry_passes_over_a_missing_figure(void **state)
{
    (void)state;
    gq_card_host_view *h = calloc(1, sizeof *h);
    assert_non_null(h);
    h->ngpus = 4;
    h->have_all = true;
    const double h2d[4] = {10, NAN, 20, 21};
    for (int k = 0; k < 4; k++) {
        h->gpu[k] = k;
        h->all_h2d[k] = h2d[k];
        h->all_d2h[k] = 20;
    }
    gq_card fs;
    gq_card_init(&fs);
    gq_judge_find_host(&fs, h);
    assert_int_equal(fs.nfindings, 1);
    assert_string_equal(fs.findings[0],
                        "With all 4 GPUs copying from host memory at once, GPUs 0 get 10 GB/s each "
                        "against 20–21 GB/s for GPUs 2,3: an asymmetry that each GPU alone does not "
                        "show.");
    gq_card_free(&fs);
    free(h);
}

/* The first sweep without a fit is passed over; the next one's figures make
 * the finding, and only that one. */
static void sweep_finding_from_the_first_fit(void **state)
{
    (void)state;
    gq_card_sweeps_view *s = calloc(1, sizeof *s);
    assert_non_null(s);
    s->count = s->n = 3;
    snprintf(s->v[0].label, sizeof s->v[0].label, "host -> GPU 0");
    s->v[0].fixed_us = 9;
    snprintf(s->v[1].label, sizeof s->v[1].label, "host -> GPU 1");
    s->v[1].have_fit = true;
    s->v[1].fixed_us = 2.5;
    s->v[1].asymptotic_gbps = 50;
    s->v[1].half_bytes = 128 * 1024;
    snprintf(s->v[2].label, sizeof s->v[2].label, "host -> GPU 2");
    s->v[2].have_fit = true;
    s->v[2].fixed_us = 3;
    gq_card fs;
    gq_card_init(&fs);
    gq_judge_find_sweeps(&fs, s);
    assert_int_equal(fs.nfindings, 1);
    assert_string_equal(fs.findings[0],
                        "host -> GPU 1: each copy costs about 2.50 µs before data moves; copies "
                        "smaller than 128 KiB get less than half of its 50 GB/s.");
    gq_card_free(&fs);
    free(s);
}

/* No direct P2P pair and no host-to-GPU rate measured alone: the sweep's one
 * host path is the first selected GPU's. */
static void sweep_host_path_without_figures(void **state)
{
    (void)state;
    gq_card_opts o;
    gq_card_opts_default(&o);
    o.ngpus = 2;
    o.gpus[0] = 3;
    o.gpus[1] = 1;
    gq_pairmatrix *pm = calloc(1, sizeof *pm);
    gq_domains *dom = calloc(1, sizeof *dom);
    assert_non_null(pm);
    assert_non_null(dom);
    gq_pairmatrix_init(pm, o.gpus, 2);
    gq_recordset rs = {0};
    gq_card_sweep_paths P;
    gq_card_sweep_paths_plan(NULL, &o, &rs, pm, dom, &P);
    assert_int_equal(P.n, 1);
    assert_int_equal(P.v[0][0], 3);
    assert_int_equal(P.v[0][1], -1);
    free(pm);
    free(dom);
}

/* Two offload workers in one measured budget: the budget named by its
 * direction (GPU-to-host; a direction the card does not know, as written),
 * the P2P budgets passed over. */
static void offload_shared_budget_by_direction(void **state)
{
    (void)state;
    gq_card_placement_view *pl = calloc(1, sizeof *pl);
    gq_card_bottlenecks_view *bv = calloc(1, sizeof *bv);
    gq_card_facts *f = calloc(1, sizeof *f);
    assert_non_null(pl);
    assert_non_null(bv);
    assert_non_null(f);
    pl->present = true;
    pl->noffload_count = pl->noffload = 2;
    pl->offload_gpu[0] = 0;
    pl->offload_gpu[1] = 1;
    pl->offload_h2d_gbps = 50;
    pl->offload_d2h_gbps = 40;
    f->step_ev[GQ_CS_CONTENTION] = GQ_EV_MEASURED;
    bv->count = bv->n = 2;
    bv->v[0] = (gq_card_bottleneck_view){
        .have_direction = true, .direction = "p2p", .ngpus = 2, .gpu = {0, 1}, .capacity_gbps = 20};
    bv->v[1] = (gq_card_bottleneck_view){
        .have_direction = true, .direction = "d2h", .ngpus = 3, .gpu = {0, 1, 2}, .capacity_gbps = 30};
    const char *const want[] = {
        "For KV offload, use GPUs 0,1 (measured together: 50 GB/s to GPU, 40 GB/s to host in total); GPUs "
        "0,1 of them share the GPU-to-host budget of GPUs 0-2, about 30 GB/s, when they copy at once.",
        "For KV offload, use GPUs 0,1 (measured together: 50 GB/s to GPU, 40 GB/s to host in total); GPUs "
        "0,1 of them share the both budget of GPUs 0-2, about 30 GB/s, when they copy at once.",
    };
    for (int k = 0; k < 2; k++) {
        if (k)
            snprintf(bv->v[1].direction, sizeof bv->v[1].direction, "both");
        gq_card fs;
        gq_card_init(&fs);
        gq_judge_find_placement(&fs, pl, bv, f);
        assert_int_equal(fs.nfindings, 1);
        assert_string_equal(fs.findings[0], want[k]);
        gq_card_free(&fs);
    }
    free(pl);
    free(bv);
    free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(host_asymmetry_passes_over_a_missing_figure),
        cmocka_unit_test(sweep_finding_from_the_first_fit),
        cmocka_unit_test(sweep_host_path_without_figures),
        cmocka_unit_test(offload_shared_budget_by_direction),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
