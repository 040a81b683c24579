/* A record's "contaminated" summary ("KIND gpu G[ pid P][ NAME]: DETAIL",
 * entries joined by "; ") written as a list of {kind, gpu, pid, name,
 * detail} (src/measure/record_json.c). An entry that does not read as
 * "KIND gpu G" (a summary cut at its 240 bytes, or a detail that held "; ")
 * still carries every key, and its detail is that entry alone. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "core/record.h"
#include "measure/record_json.h"

static void test_unparsed_entry_keeps_every_key(void **state)
{
    (void)state;
    gq_record r;
    memset(&r, 0, sizeof r);
    snprintf(r.test, sizeof r.test, "host_to_device_memcpy_ce");
    r.src = (gq_endpoint){.kind = GQ_EP_HOST, .index = -1};
    r.dst = (gq_endpoint){.kind = GQ_EP_GPU, .index = 0};
    r.bytes = 1 << 20;
    r.exec_gpu = 0;
    r.host_numa_req = -1;
    /* a detail with "; " in it splits into an entry of its own */
    assert_int_equal(gq_record_contaminate(&r, "process", 1, 4242, "gpu_burn", "busy; still busy"), GQ_OK);
    assert_int_equal(gq_record_contaminate(&r, "memory", 2, -1, NULL, "9 GiB used"), GQ_OK);
    json_t *j = gq_record_to_json(&r);
    assert_non_null(j);
    json_t *a = json_object_get(j, "contaminated");
    assert_true(json_is_array(a));
    assert_int_equal(json_array_size(a), 3);
    json_t *e = json_array_get(a, 1);
    const char *keys[] = {"kind", "gpu", "pid", "name", "detail"};
    for (size_t k = 0; k < sizeof keys / sizeof *keys; k++)
        assert_non_null(json_object_get(e, keys[k]));
    assert_int_equal(json_object_size(e), 5);
    assert_string_equal(json_string_value(json_object_get(e, "kind")), "process");
    assert_true(json_is_null(json_object_get(e, "gpu")));
    assert_true(json_is_null(json_object_get(e, "pid")));
    /* the entry's own text, not the entries after it */
    assert_string_equal(json_string_value(json_object_get(e, "detail")), "still busy");
    json_t *m = json_array_get(a, 2);
    assert_string_equal(json_string_value(json_object_get(m, "kind")), "memory");
    assert_int_equal(json_integer_value(json_object_get(m, "gpu")), 2);
    assert_string_equal(json_string_value(json_object_get(m, "detail")), "9 GiB used");
    json_decref(j);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unparsed_entry_keeps_every_key),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
