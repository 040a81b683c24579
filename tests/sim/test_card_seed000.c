/* The card on seed 000's machine (8 x RTX 4090, no P2P, simulated): each
 * socket carries about 25 GB/s host to GPU however many of its GPUs copy;
 * the two sockets do not share it; every GPU-to-GPU byte is host-staged. */
#include "card_util.h"

static card_run run;

static int setup(void **state)
{
    (void)state;
    card_args a = {.machine = "rtx4090x8", .noise = -1, .stress_s = 10, .expect = "rtx4090x8.expect"};
    run = cu_run(&a);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    json_decref(run.doc);
    return 0;
}

static void test_per_socket_limit(void **state)
{
    (void)state;
    static const char *const sets[] = {"0,1,2,3", "4,5,6,7"};
    for (int s = 0; s < 2; s++) {
        const json_t *b = cu_bottleneck(&run, "h2d", sets[s]);
        if (!b) {
            cu_dump_findings(&run);
            fail_msg("no host-to-GPU bottleneck on GPUs %s", sets[s]);
        }
        double cap = json_number_value(json_object_get(b, "capacity_gbps"));
        /* seed 000: 25.3-25.8 GB/s per socket */
        assert_true(cap > 22 && cap < 29);
    }
    if (!cu_finding(&run, "GPUs 0-3 share one host-to-GPU budget", NULL) ||
        !cu_finding(&run, "GPUs 4-7 share one host-to-GPU budget", NULL)) {
        cu_dump_findings(&run);
        fail_msg("the per-socket limit is not in the findings");
    }
    /* a set spanning both sockets gets about twice one socket (seed: 51.6 for all 8) */
    const json_t *all = json_object_get(json_object_get(cu_card(&run), "host"), "all");
    double agg = json_number_value(json_object_get(all, "h2d_aggregate_gbps"));
    assert_true(agg > 44 && agg < 58);
    /* one GPU alone: about 25 GB/s, like a whole socket */
    const json_t *alone =
        json_object_get(json_object_get(json_object_get(cu_card(&run), "host"), "alone"), "h2d");
    double a0 = json_number_value(json_array_get(alone, 0));
    assert_true(a0 > 22 && a0 < 29);
}

static void test_no_p2p(void **state)
{
    (void)state;
    const json_t *m = json_array_get(json_object_get(cu_card(&run), "matrices"), 0);
    assert_true(json_is_true(json_object_get(m, "staged")));
    assert_true(json_is_true(json_object_get(json_object_get(cu_card(&run), "domains"), "no_p2p")));
    assert_true(cu_finding(&run, "No GPU pair has P2P", NULL));
    const json_t *pl = json_object_get(cu_card(&run), "placement");
    assert_true(json_is_true(json_object_get(pl, "all_staged")));
    assert_true(cu_finding(&run, "host-staged", "both sockets", NULL));
}

static void test_verdict(void **state)
{
    (void)state;
    assert_string_equal(cu_str(cu_card(&run), "verdict"), "pass");
    const json_t *c = cu_check(&run, "pcie_gen_min", "gpu:0");
    assert_non_null(c);
    assert_string_equal(cu_str(c, "verdict"), "pass");
    /* no p2p_gbps_min in this expectations file: no such check */
    assert_null(cu_check(&run, "p2p_gbps_min", NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_per_socket_limit),
        cmocka_unit_test(test_no_p2p),
        cmocka_unit_test(test_verdict),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
