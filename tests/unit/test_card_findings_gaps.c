/* Card findings and plans no other test ran (issue 30, mutation testing): the
 * host asymmetry with a GPU whose figure is missing, the sweep finding from
 * the first sweep that has a fit, and the sweep's host path when nothing was
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(host_asymmetry_passes_over_a_missing_figure),
        cmocka_unit_test(sweep_finding_from_the_first_fit),
        cmocka_unit_test(sweep_host_path_without_figures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
