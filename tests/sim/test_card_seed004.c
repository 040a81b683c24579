/* The card on seed 004's machine (6 x A100 PCIe with NVLink bridges,
 * simulated): the bridged pairs {0,3}, {1,2}, {4,5} are the domains, the
 * expectations for NVLink pairs hold, and GPU pairs across bridges are an
 * order of magnitude slower. Also the H200 pair against its expectations. */
#include "card_util.h"

static void test_nvlink_pairs(void **state)
{
    (void)state;
    card_args a = {.machine = "a100x6", .noise = -1, .stress_s = 10, .expect = "a100x6.expect"};
    card_run run = cu_run(&a);
    const json_t *d = json_object_get(run.doc, "domains");
    assert_int_equal(json_array_size(d), 3);
    char b[64];
    bool seen[3] = {0};
    size_t i;
    const json_t *x;
    json_array_foreach(d, i, x)
    {
        const char *s = cu_set(x, b, sizeof b);
        seen[0] |= !strcmp(s, "0,3");
        seen[1] |= !strcmp(s, "1,2");
        seen[2] |= !strcmp(s, "4,5");
    }
    assert_true(seen[0] && seen[1] && seen[2]);
    assert_true(cu_finding(&run, "3 performance domains", "{0,3}", "{1,2}", "{4,5}", NULL));
    const json_t *nv = cu_check(&run, "nvlink_gbps_min", NULL);
    assert_non_null(nv);
    assert_string_equal(cu_str(nv, "verdict"), "pass");
    assert_true(cu_num(nv, "figure") > 150);
    const json_t *p2p = cu_check(&run, "p2p_gbps_min", NULL);
    assert_non_null(p2p);
    double fig = cu_num(p2p, "figure");
    assert_true(fig > 0 && fig < 20);
    /* placement keeps prefill->decode on the bridges */
    const json_t *pl = json_object_get(cu_card(&run), "placement");
    assert_int_equal(json_array_size(json_object_get(pl, "pairs")), 3); /* 3 prefill, 3 decode */
    json_array_foreach(json_object_get(pl, "pairs"), i, x)
    {
        int p = cu_int(x, "prefill"), q = cu_int(x, "decode");
        int lo = p < q ? p : q, hi = p < q ? q : p;
        assert_true((lo == 0 && hi == 3) || (lo == 1 && hi == 2) || (lo == 4 && hi == 5));
    }
    assert_string_equal(cu_str(cu_card(&run), "verdict"), "pass");
    json_decref(run.doc);
}

static void test_h200_pair(void **state)
{
    (void)state;
    card_args a = {.machine = "h200x2", .noise = -1, .stress_s = 10, .expect = "h200.expect"};
    card_run run = cu_run(&a);
    assert_int_equal(json_array_size(json_object_get(run.doc, "domains")), 1);
    assert_true(cu_finding(&run, "one performance domain", NULL));
    const json_t *nv = cu_check(&run, "nvlink_gbps_min", NULL);
    assert_non_null(nv);
    assert_string_equal(cu_str(nv, "verdict"), "pass");
    assert_non_null(cu_check(&run, "host_latency_ns_max", "gpu:1"));
    if (strcmp(cu_str(cu_card(&run), "verdict"), "pass")) {
        size_t i;
        const json_t *c;
        json_array_foreach(json_object_get(cu_card(&run), "checks"), i,
                           c) if (strcmp(cu_str(c, "verdict"), "pass"))
            print_message("%s: %s\n", cu_str(c, "verdict"), cu_str(c, "text"));
        fail_msg("h200x2 did not pass h200.expect");
    }
    /* no pair boundary: nothing to compare within/across */
    assert_true(json_is_null(json_object_get(cu_card(&run), "pairs")));
    json_decref(run.doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nvlink_pairs),
        cmocka_unit_test(test_h200_pair),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
