/* The card's collectives row (docs/card.md, "Collectives"): measured on an
 * 8-GPU machine at the standard level, with the TP-2 groups' all-reduce bus
 * bandwidth alone and all at once; not applicable on one GPU; without NCCL
 * "not measured (NCCL not found)", shown as info, with the verdict unchanged
 * and the card complete; an expectations threshold above the measured figure
 * fails it. */
#include "card_util.h"

static const json_t *row(const json_t *card, const char *check)
{
    size_t i;
    const json_t *r;
    json_array_foreach(json_object_get(card, "rows"), i, r) if (!strcmp(cu_str(r, "check"), check)) return r;
    fail_msg("no row '%s'", check);
    return NULL;
}

static const json_t *plan_step(const json_t *card, const char *step)
{
    size_t i;
    const json_t *p;
    json_array_foreach(json_object_get(card, "plan"), i, p) if (!strcmp(cu_str(p, "step"), step)) return p;
    fail_msg("no plan step '%s'", step);
    return NULL;
}

/* Eight RTX 4090 at the standard level: four groups of two, each measured
 * alone and all at once; the figures are the section's. */
static void measured_on_eight(void **state)
{
    (void)state;
    card_args a = {.machine = "rtx4090x8", .seed = 1, .noise = 0.01};
    card_run run = cu_run(&a);
    const json_t *c = cu_card(&run);
    const json_t *co = json_object_get(c, "collectives");
    assert_true(json_is_object(co));
    assert_int_equal(cu_int(co, "tp"), 2);
    const json_t *g = json_object_get(co, "groups");
    assert_int_equal(json_array_size(g), 4);
    int seen = 0;
    size_t i;
    const json_t *x;
    json_array_foreach(g, i, x)
    {
        int v[8];
        assert_int_equal(cu_ints(json_object_get(x, "gpus"), v, 8), 2);
        seen |= 1 << v[0] | 1 << v[1];
        assert_true(cu_num(x, "alone_busbw_gbps") > 0);
        assert_true(cu_num(x, "at_once_busbw_gbps") > 0);
    }
    assert_int_equal(seen, 0xff); /* every GPU in one group */
    double lo = cu_num(co, "min_at_once_busbw_gbps");
    assert_true(lo > 0 && lo <= cu_num(co, "min_alone_busbw_gbps") * 1.05);
    assert_string_equal(cu_str(plan_step(c, "collectives"), "status"), "done");
    const json_t *r = row(c, "Collectives");
    assert_string_equal(cu_str(r, "evidence"), "measured");
    assert_string_equal(cu_str(r, "verdict"), "info"); /* no expectations: nothing to judge against */
    assert_string_equal(cu_str(r, "decision"), "Choose tensor-parallel groups");
    assert_non_null(strstr(cu_str(r, "result"), "groups {"));
    char *md = cu_render(&run, gq_test_render_markdown);
    assert_non_null(strstr(md, "## Collectives"));
    assert_non_null(strstr(md, "| group | all-reduce busbw alone (GB/s) | all at once (GB/s) |"));
    free(md);
    json_decref(run.doc);
}

/* One GPU selected: nothing to group. */
static void not_applicable_on_one(void **state)
{
    (void)state;
    card_args a = {.machine = "rtx4090x8", .seed = 1, .noise = 0.01, .ngpus = 1};
    card_run run = cu_run(&a);
    const json_t *c = cu_card(&run);
    assert_true(json_is_null(json_object_get(c, "collectives")));
    const json_t *r = row(c, "Collectives");
    assert_string_equal(cu_str(r, "verdict"), "skip");
    assert_string_equal(cu_str(r, "evidence_reason"), "one_gpu");
    assert_string_equal(cu_str(r, "result"), "not measured (one GPU)");
    assert_string_not_equal(cu_str(c, "verdict"), "incomplete");
    json_decref(run.doc);
}

/* No NCCL: said as info; the verdict, its counts and completeness are those
 * of the same card with NCCL. */
static void no_nccl_is_info(void **state)
{
    (void)state;
    card_args a = {.machine = "rtx4090x8", .seed = 1, .noise = 0.01, .faults = "no-nccl"};
    card_run run = cu_run(&a);
    const json_t *c = cu_card(&run);
    assert_true(json_is_null(json_object_get(c, "collectives")));
    const json_t *r = row(c, "Collectives");
    assert_string_equal(cu_str(r, "verdict"), "info");
    assert_string_equal(cu_str(r, "evidence"), "skipped");
    assert_string_equal(cu_str(r, "evidence_reason"), "no_library");
    assert_string_equal(cu_str(r, "result"), "not measured (NCCL not found)");
    const json_t *p = plan_step(c, "collectives");
    assert_string_equal(cu_str(p, "status"), "skipped");
    assert_non_null(strstr(cu_str(p, "note"), "NCCL not found"));
    card_args b = {.machine = "rtx4090x8", .seed = 1, .noise = 0.01};
    card_run with = cu_run(&b);
    const json_t *cw = cu_card(&with);
    assert_string_equal(cu_str(c, "verdict"), "pass");
    assert_string_equal(cu_str(c, "verdict"), cu_str(cw, "verdict"));
    assert_string_equal(cu_str(c, "verdict_text"), cu_str(cw, "verdict_text"));
    assert_true(json_equal(json_object_get(c, "counts"), json_object_get(cw, "counts")));
    assert_true(json_is_true(json_object_get(c, "complete")));
    json_decref(with.doc);
    json_decref(run.doc);
}

/* The expectations' allreduce_busbw_gbps_min: passes at the file's value,
 * fails when set above the measured figure. */
static void threshold_above_fails(void **state)
{
    (void)state;
    card_args a = {.machine = "rtx4090x8", .seed = 1, .noise = 0.01, .expect = "rtx4090x8.expect"};
    card_run run = cu_run(&a);
    const json_t *ch = cu_check(&run, "allreduce_busbw_gbps_min", "model:RTX 4090");
    assert_non_null(ch);
    assert_string_equal(cu_str(ch, "verdict"), "pass");
    double got = cu_num(ch, "figure");
    assert_true(got > 0);
    assert_string_equal(cu_str(row(cu_card(&run), "Collectives"), "verdict"), "pass");
    json_decref(run.doc);

    char w[96], f[96];
    snprintf(w, sizeof w, "allreduce_busbw_gbps_min.warn=%.1f", got * 2 + 1);
    snprintf(f, sizeof f, "allreduce_busbw_gbps_min.fail=%.1f", got * 2);
    card_args b = a;
    b.set[0] = w;
    b.set[1] = f;
    run = cu_run(&b);
    const json_t *c = cu_card(&run);
    ch = cu_check(&run, "allreduce_busbw_gbps_min", "model:RTX 4090");
    assert_string_equal(cu_str(ch, "verdict"), "fail");
    assert_string_equal(cu_str(row(c, "Collectives"), "verdict"), "fail");
    assert_string_equal(cu_str(c, "verdict"), "fail");
    json_decref(run.doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(measured_on_eight),
        cmocka_unit_test(not_applicable_on_one),
        cmocka_unit_test(no_nccl_is_info),
        cmocka_unit_test(threshold_above_fails),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
