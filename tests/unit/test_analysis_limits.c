/* Small edges of the analysis no other test reached (issue 30, mutation
 * testing): the card verdict's exit code and a row title's step outside
 * their tables, a size in GiB, and the count limits of compare (64 files),
 * --set (16 overrides) and the placement model (1..64 GPUs). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "analysis/card_judge_internal.h"
#include "analysis/card_types.h"
#include "analysis/compare.h"
#include "analysis/expect.h"
#include "analysis/placement.h"
#include "core/units.h"

static void card_type_edges(void **state)
{
    (void)state;
    assert_int_equal(gq_card_verdict_exit_code(GQ_CV_PASS), 0);
    assert_int_equal(gq_card_verdict_exit_code(GQ_CV_WARN), 4);
    assert_int_equal(gq_card_verdict_exit_code(GQ_CV_INCOMPLETE), 5);
    /* a value outside the enum exits as a failure */
    assert_int_equal(gq_card_verdict_exit_code((gq_card_verdict)99), 1);
    assert_int_equal(gq_card_row_step(NULL), -1);
    assert_int_equal(gq_card_row_step(""), -1);
    assert_int_equal(gq_card_row_step("no such row"), -1);
    char b[32];
    assert_string_equal(gq_judge_approx_size(1.5 * GQ_GiB, b, sizeof b), "1.5 GiB");
    assert_string_equal(gq_judge_approx_size(GQ_GiB, b, sizeof b), "1.0 GiB");
    assert_string_equal(gq_judge_approx_size(GQ_GiB - GQ_MiB, b, sizeof b), "1023.0 MiB");
}

static void compare_at_most_64_files(void **state)
{
    (void)state;
    gq_compare *c = calloc(1, sizeof *c);
    assert_non_null(c);
    gq_compare_init(c, 5);
    gq_recordset rs = {0};
    gq_err e = {0};
    char label[32];
    for (int i = 0; i < GQ_CMP_MAX_RUNS; i++) {
        snprintf(label, sizeof label, "run%d.json", i);
        if (gq_compare_add(c, label, &rs, NULL, &e) != GQ_OK)
            fail_msg("file %d: %s", i, e.msg);
    }
    assert_int_equal(gq_compare_add(c, "one-more.json", &rs, NULL, &e), GQ_E_USAGE);
    assert_string_equal(e.msg, "compare: at most 64 files");
    assert_int_equal(c->nruns, GQ_CMP_MAX_RUNS);
    assert_string_equal(c->label[GQ_CMP_MAX_RUNS - 1], "run63.json");
    gq_compare_free(c);
    free(c);
}

static void expect_at_most_16_overrides(void **state)
{
    (void)state;
    gq_expect *ex = calloc(1, sizeof *ex);
    assert_non_null(ex);
    gq_expect_init(ex);
    gq_err e = {0};
    char spec[64];
    for (int i = 0; i < GQ_EXPECT_MAX_OVERRIDES; i++) {
        snprintf(spec, sizeof spec, "h2d_gbps.fail=%d", 40 + i);
        if (gq_expect_set(ex, spec, &e) != GQ_OK)
            fail_msg("%s: %s", spec, e.msg);
    }
    assert_int_equal(ex->noverrides, 16);
    assert_int_equal(gq_expect_set(ex, "h2d_gbps.fail=70", &e), GQ_E_USAGE);
    assert_string_equal(e.msg, "--set h2d_gbps.fail=70: at most 16 overrides");
    assert_int_equal(ex->noverrides, 16);
    free(ex);
}

static void place_model_gpu_count(void **state)
{
    (void)state;
    gq_place_model *m = calloc(1, sizeof *m);
    assert_non_null(m);
    gq_recordset rs = {0};
    gq_err e = {0};
    assert_int_equal(gq_place_model_build_typed(m, 0, &rs, NULL, NULL, NULL, &e), GQ_E_USAGE);
    assert_string_equal(e.msg, "placement needs 1..64 GPUs, not 0");
    assert_int_equal(gq_place_model_build_typed(m, GQ_MAX_GPUS + 1, &rs, NULL, NULL, NULL, &e), GQ_E_USAGE);
    assert_string_equal(e.msg, "placement needs 1..64 GPUs, not 65");
    /* 64 is a count it takes: refused for what the records lack, not for it */
    memset(&e, 0, sizeof e);
    assert_int_equal(gq_place_model_build_typed(m, GQ_MAX_GPUS, &rs, NULL, NULL, NULL, &e), GQ_E_USAGE);
    assert_null(strstr(e.msg, "1..64"));
    free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(card_type_edges),
        cmocka_unit_test(compare_at_most_64_files),
        cmocka_unit_test(expect_at_most_16_overrides),
        cmocka_unit_test(place_model_gpu_count),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
