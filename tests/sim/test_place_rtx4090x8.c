/* Placement on seed 000's machine, simulated (8 x RTX 4090, no P2P, one
 * PCIe uplink per socket): every handoff is host-staged, the chosen pairs use
 * both sockets' budgets evenly, and the verified aggregate beats the naive
 * mapping's (which loads one socket's uplink down and the other's up). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "test_place_util.h"

static void staged_on_both_sockets(void **state)
{
    (void)state;
    for (int n = 2; n <= 4; n += 2) {
        char args[256];
        snprintf(args, sizeof args, "place --prefill %d --decode %d --sim rtx4090x8 --format json", n, n);
        json_t *doc = NULL;
        assert_int_equal(gq_run_json(args, &doc), 0);
        assert_non_null(doc);
        assert_true(json_is_true(json_object_get(doc, "all_staged")));
        assert_true(has_note(doc, "every handoff is host-staged", NULL));
        /* The two sockets' budgets, by name, each carrying handoffs. */
        assert_true(has_note(doc, "2 host budgets: {0-3}", "{4-7}"));
        int legs[2] = {0, 0};
        size_t i;
        const json_t *p;
        json_array_foreach(json_object_get(doc, "pairs"), i, p)
        {
            assert_string_equal(json_string_value(json_object_get(p, "path")), "staged");
            assert_non_null(strstr(json_string_value(json_object_get(p, "why")), "no P2P between them"));
            legs[json_integer_value(json_object_get(p, "prefill")) / 4]++;
            legs[json_integer_value(json_object_get(p, "decode")) / 4]++;
            assert_true(jnum(p, "measured_gbps") > 0);
        }
        assert_int_equal((int)json_array_size(json_object_get(doc, "pairs")), n);
        /* Each socket carries half of the GPU<->host legs. */
        assert_int_equal(legs[0], n);
        assert_int_equal(legs[1], n);
        const json_t *agg = json_object_get(doc, "pairs_aggregate");
        const json_t *nagg = json_object_get(json_object_get(doc, "naive"), "pairs_aggregate");
        assert_true(json_is_true(json_object_get(agg, "valid")));
        double got = jnum(agg, "measured_gbps"), naive = jnum(nagg, "measured_gbps");
        if (!(got > 1.2 * naive))
            fail_msg("%dP%dD: chosen %.1f GB/s against naive %.1f GB/s", n, n, got, naive);
        json_decref(doc);
    }
}

/* Offload and replicas on a no-P2P machine: one socket's uplink is the
 * budget, so workers and replicas split across the two sockets. */
static void offload_and_replicas(void **state)
{
    (void)state;
    json_t *doc = NULL;
    assert_int_equal(gq_run_json("place --offload 2 --replicas 2 --sim rtx4090x8 --format json", &doc), 0);
    assert_non_null(doc);
    const json_t *off = json_object_get(doc, "offload");
    assert_int_equal(json_array_size(off), 2);
    assert_true(json_is_integer(json_object_get(json_array_get(off, 0), "gpu")));
    assert_true(json_is_integer(json_object_get(json_array_get(off, 1), "gpu")));
    int s0 = (int)json_integer_value(json_object_get(json_array_get(off, 0), "gpu")) / 4;
    int s1 = (int)json_integer_value(json_object_get(json_array_get(off, 1), "gpu")) / 4;
    assert_int_not_equal(s0, s1);
    assert_true(jnum(doc, "offload_gain") > 1.5); /* naive 0,1 share socket 0's 25 GB/s */
    const json_t *reps = json_object_get(doc, "replicas");
    assert_int_equal(json_array_size(reps), 2);
    for (size_t r = 0; r < 2; r++) {
        const json_t *g = json_object_get(json_array_get(reps, r), "gpus");
        assert_true(json_array_size(g) >= 1);
        assert_true(json_is_integer(json_array_get(g, 0)));
        int sock = (int)json_integer_value(json_array_get(g, 0)) / 4;
        /* verified: each replica's host rate measured, not only predicted */
        assert_true(jnum(json_array_get(reps, r), "measured_gbps") > 0);
        for (size_t k = 0; k < json_array_size(g); k++)
            assert_int_equal((int)json_integer_value(json_array_get(g, k)) / 4, sock);
    }
    json_decref(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(staged_on_both_sockets),
        cmocka_unit_test(offload_and_replicas),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
