/* A record's "contaminated" summary ("KIND gpu G[ pid P][ NAME]: DETAIL",
 * entries joined by "; ") written as a list of {kind, gpu, pid, name,
 * detail} (src/measure/record_json.c). An entry that does not read as
 * "KIND gpu G" (a summary cut at its 240 bytes) still carries every key, its
 * detail is that entry alone, and the record reads back as it was written. A
 * detail's own ';' never splits an entry. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "core/record.h"
#include "core/status.h"
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
    /* a summary whose middle entry was cut short (as a full 240-byte summary cuts its last) */
    r.valid = false;
    r.flags |= GQ_FLAG_CONTAMINATED;
    snprintf(r.contaminated, sizeof r.contaminated, "%s",
             "process gpu 1 pid 4242 gpu_burn: busy; still busy; memory gpu 2: 9 GiB used");
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
    /* and gpuqual reads its own document back: the same record, written the same */
    gq_record back;
    memset(&back, 0, sizeof back);
    gq_err err = {0};
    assert_int_equal(gq_record_from_json(j, &back, &err), GQ_OK);
    assert_string_equal(back.contaminated, r.contaminated);
    json_t *again = gq_record_to_json(&back);
    assert_true(json_equal(again, j));
    json_decref(again);
    json_decref(j);
}

/* A detail's ';' is not a separator: one observation stays one entry. */
static void test_detail_semicolon_stays_one_entry(void **state)
{
    (void)state;
    gq_record r;
    memset(&r, 0, sizeof r);
    assert_int_equal(gq_record_contaminate(&r, "process", 1, 4242, "gpu_burn", "busy; still busy"), GQ_OK);
    assert_int_equal(gq_record_contaminate(&r, "memory", 2, -1, NULL, "9 GiB used"), GQ_OK);
    assert_string_equal(r.contaminated,
                        "process gpu 1 pid 4242 gpu_burn: busy, still busy; memory gpu 2: 9 GiB used");
    json_t *j = gq_record_to_json(&r);
    assert_non_null(j);
    assert_int_equal(json_array_size(json_object_get(j, "contaminated")), 2);
    json_decref(j);
}

/* Contaminated until the 240-byte summary is cut: the document still reads back. */
static void test_cut_summary_reads_back(void **state)
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
    for (int k = 0; k < 8; k++)
        assert_int_equal(gq_record_contaminate(&r, "process", 0, 1000 + k, "a_long_process_name_for_the_cut",
                                               "holds 12 GiB on the GPU"),
                         GQ_OK);
    assert_int_equal(strlen(r.contaminated), sizeof r.contaminated - 1); /* cut */
    json_t *j = gq_record_to_json(&r);
    assert_non_null(j);
    gq_record back;
    memset(&back, 0, sizeof back);
    gq_err err = {0};
    assert_int_equal(gq_record_from_json(j, &back, &err), GQ_OK);
    json_t *again = gq_record_to_json(&back);
    assert_true(json_equal(again, j));
    json_decref(again);
    json_decref(j);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unparsed_entry_keeps_every_key),
        cmocka_unit_test(test_detail_semicolon_stays_one_entry),
        cmocka_unit_test(test_cut_summary_reads_back),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
