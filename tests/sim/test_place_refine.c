/* gpuqual place checks its own answer: on a machine where the first choice
 * (seed 001's cells {0,1}->{2,3}, {4,5}->{6,7}) puts two handoffs on an
 * uplink that no probe loaded (tests/data/place/quadrants8.topo), the
 * verification measures the shortfall, learns the shared limit, places the
 * roles again and keeps the better mapping; every attempt is reported. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "test_place_util.h"

static void learns_and_replaces(void **state)
{
    (void)state;
    json_t *doc = NULL;
    assert_int_equal(gq_run_json("place --prefill 4 --decode 4 --sim " GQ_TEST_DATA
                                 "/data/place/quadrants8.topo "
                                 "--format json",
                                 &doc),
                     0);
    assert_non_null(doc);
    const json_t *atts = json_object_get(doc, "attempts");
    assert_true(json_array_size(atts) >= 2);
    const json_t *first = json_array_get(atts, 0);
    /* the first choice: the cells, slower than predicted, and a limit learned */
    assert_true(has_pair(first, 0, 2) && has_pair(first, 1, 3) && has_pair(first, 4, 6) &&
                has_pair(first, 5, 7));
    const json_t *fa = json_object_get(first, "pairs_aggregate");
    assert_true(jnum(fa, "measured_gbps") < 0.9 * jnum(fa, "predicted_gbps"));
    assert_true(json_integer_value(json_object_get(first, "learned_limits")) >= 1);
    assert_false(json_is_true(json_object_get(first, "kept")));
    /* the kept mapping avoids the shared uplink and meets its prediction */
    assert_false(has_pair(doc, 0, 2) && has_pair(doc, 1, 3));
    const json_t *agg = json_object_get(doc, "pairs_aggregate");
    assert_true(jnum(agg, "measured_gbps") > jnum(fa, "measured_gbps") * 1.1);
    assert_true(jnum(agg, "measured_gbps") >= 0.95 * jnum(agg, "predicted_gbps"));
    assert_true(jnum(doc, "gain") >= 2.0);
    /* the learned limit is in the model, with its evidence */
    int found = 0;
    size_t i;
    const json_t *l;
    json_array_foreach(json_object_get(json_object_get(doc, "model"), "limits"), i, l)
    {
        const char *ev = json_string_value(json_object_get(l, "evidence"));
        found |=
            !strcmp(json_string_value(json_object_get(l, "kind")), "p2p") && ev && strstr(ev, "place_pairs");
    }
    assert_true(found);
    assert_true(has_note(doc, "verification took", NULL));
    json_decref(doc);
}

/* The naive mapping's measurement teaches the model too: with three pairs,
 * the naive 1->4 and 2->5 share the cross-socket link far below what the
 * model predicted (40 GB/s each). The first attempt learns that limit from
 * the naive run, and the miss is a warning in the JSON. */
static void naive_teaches(void **state)
{
    (void)state;
    json_t *doc = NULL;
    assert_int_equal(gq_run_json("place --prefill 3 --decode 3 --sim " GQ_TEST_DATA
                                 "/data/place/quadrants8.topo --format json",
                                 &doc),
                     0);
    assert_non_null(doc);
    const json_t *first = json_array_get(json_object_get(doc, "attempts"), 0);
    const char *f = json_string_value(json_object_get(first, "finding"));
    assert_non_null(f);
    assert_non_null(strstr(f, "the naive mapping ran slower than predicted"));
    int learned = 0;
    size_t i;
    const json_t *v;
    json_array_foreach(json_object_get(json_object_get(doc, "model"), "limits"), i, v)
    {
        const char *ev = json_string_value(json_object_get(v, "evidence"));
        learned |= ev && strstr(ev, "place_pairs_naive") != NULL;
    }
    assert_true(learned);
    /* the naive figures shown are the prediction it was made with, and what it measured */
    const json_t *naive = json_object_get(doc, "naive");
    assert_true(has_pair(naive, 1, 4));
    json_array_foreach(json_object_get(naive, "pairs"), i, v)
    {
        if (jint(v, "prefill") == 1)
            assert_true(jnum(v, "measured_gbps") < 0.9 * jnum(v, "predicted_gbps"));
    }
    int warned = 0;
    json_array_foreach(json_object_get(doc, "warnings"), i, v)
    {
        const char *id = json_string_value(json_object_get(v, "id"));
        const char *t = json_string_value(json_object_get(v, "text"));
        warned += id && t && !strcmp(id, "place_prediction_missed") && strstr(t, "the naive mapping") &&
                  strstr(t, "1->4");
    }
    assert_int_equal(warned, 1);
    json_decref(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(learns_and_replaces),
        cmocka_unit_test(naive_teaches),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
