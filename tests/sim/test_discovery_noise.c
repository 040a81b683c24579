/* Robustness: with noise on, discovery gives the same domains and the same
 * bottlenecks for 20 different simulator seeds, on every seed machine. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_discovery_util.h"

#define NOISE 0.02 /* 2% per figure: above what the seeds report (< 0.5%) */
#define SEEDS 20

static void same_answer(const char *machine)
{
    char ref_dom[512], ref_bn[1024], dom[512], bn[1024];
    for (int s = 0; s < SEEDS; s++) {
        gq_discovery d;
        disc_run(machine, NOISE, (uint64_t)(1000 + 7919 * s), 3, &d, NULL);
        disc_domains_str(d.domains, dom, sizeof dom);
        disc_bottlenecks_str(d.bottlenecks, bn, sizeof bn);
        /* different noise really reached the figures */
        assert_true(d.records.n > 0);
        if (s == 0) {
            snprintf(ref_dom, sizeof ref_dom, "%s", dom);
            snprintf(ref_bn, sizeof ref_bn, "%s", bn);
        } else {
            if (strcmp(dom, ref_dom))
                fail_msg("%s seed %d: domains %s, seed 0 gave %s", machine, s, dom, ref_dom);
            if (strcmp(bn, ref_bn))
                fail_msg("%s seed %d: bottlenecks %s, seed 0 gave %s", machine, s, bn, ref_bn);
        }
        gq_discovery_free(&d);
    }
}

/* The noise must change the measured figures, or the test above proves nothing. */
static void noise_is_on(void **state)
{
    (void)state;
    gq_discovery a, b;
    disc_run("rtx4090x8", NOISE, 1000, 3, &a, NULL);
    disc_run("rtx4090x8", NOISE, 8919, 3, &b, NULL);
    /* the matrix comes first, one record per ordered pair, in the same order */
    assert_true(a.records.n >= 56 && b.records.n >= 56);
    int differ = 0;
    for (int i = 0; i < 56; i++) {
        assert_int_equal(a.records.v[i].src.index, b.records.v[i].src.index);
        assert_int_equal(a.records.v[i].dst.index, b.records.v[i].dst.index);
        differ += a.records.v[i].value.median != b.records.v[i].value.median;
    }
    assert_true(differ > 28);
    gq_discovery_free(&a);
    gq_discovery_free(&b);
}

static void rtx4090(void **state) { (void)state; same_answer("rtx4090x8"); }
static void rtxpro6000(void **state) { (void)state; same_answer("rtxpro6000x8"); }
static void a100(void **state) { (void)state; same_answer("a100x6"); }
static void h200(void **state) { (void)state; same_answer("h200x2"); }

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(noise_is_on), cmocka_unit_test(rtx4090),
                                       cmocka_unit_test(rtxpro6000), cmocka_unit_test(a100),
                                       cmocka_unit_test(h200)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
