/* The stress table's text (render/stress_text.c) on a summary with what a
 * real run can leave unknown: figures NVML did not give read "-", a PCIe
 * link never seen reads "-", a verdict of no known level "?"; GPUs that hit
 * their power cap are summed up as one range of percentages, uncapped GPUs
 * left out of that line; and findings past the list are counted.
 * Written for issue 30 (lines no test ran). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "analysis/stress.h"
#include "render/command_text.h"

static char *table(const gq_stress_result *r, const gq_stress_summary *s, bool md)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    assert_non_null(f);
    gq_render_stress_table(f, r, s, md);
    fclose(f);
    return buf;
}

static void unknowns_and_caps(void **state)
{
    (void)state;
    gq_stress_result *r = calloc(1, sizeof *r);
    gq_stress_summary *s = calloc(1, sizeof *s);
    assert_non_null(r);
    assert_non_null(s);
    r->duration_s = r->elapsed_s = 60;
    r->interval_s = 1;
    s->ngpu = 3;
    for (int k = 0; k < 3; k++) {
        gq_stress_gpu_summary *g = &s->gpu[k];
        g->gpu = k;
        snprintf(g->name, sizeof g->name, "GPU%d", k);
        g->temp_avg_c = g->temp_max_c = 60;
        g->power_avg_w = g->power_limit_w = 700;
        g->sm_clock_avg_mhz = 1980;
        g->tflops_avg = 500;
        g->pcie_gen_min = 5;
        g->pcie_width_min = 16;
        g->power_capped_pct = 30;
        g->verdict = GQ_STRESS_PASS;
    }
    s->gpu[0].temp_avg_c = NAN;
    s->gpu[0].power_capped_pct = 0;
    s->gpu[0].pcie_gen_min = -1;
    s->gpu[0].verdict = (gq_stress_level)99;
    s->gpu[2].power_capped_pct = 40;
    s->nfindings = 1;
    s->findings[0] = (gq_stress_finding){.level = GQ_STRESS_WARN, .gpu = 1, .rule = "power-cap"};
    s->nfindings_dropped = 3;
    char *out = table(r, s, false);
    if (!strstr(out, "      -     60 ") || !strstr(out, "  ?\n") ||
        !strstr(out, "GPUs 1,2 power-capped in 30-40% of loaded samples") ||
        !strstr(out, "  ...   and 3 more findings\n"))
        fail_msg("table:\n%s", out);
    /* the unknown link: "-" where "Gen5 x16" stands for the others */
    assert_non_null(strstr(out, "Gen5 x16"));
    char *row0 = strstr(out, "\n  0  ");
    assert_non_null(row0);
    char line[256];
    snprintf(line, sizeof line, "%.*s", (int)strcspn(row0 + 1, "\n"), row0 + 1);
    if (strstr(line, "Gen") || !strstr(line, " - "))
        fail_msg("GPU 0's row: '%s'", line);
    free(out);
    out = table(r, s, true);
    if (!strstr(out, "- ... and 3 more findings\n") || !strstr(out, "| 0 | GPU0 | - | 60 |"))
        fail_msg("markdown:\n%s", out);
    free(out);
    free(r);
    free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(unknowns_and_caps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
