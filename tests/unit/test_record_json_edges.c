/* A record read back from JSON (src/measure/record_json.c): each malformed
 * field is refused with one line naming the field, the value and what was
 * expected; optional fields may be absent; a negative capacity reads as none
 * and a timestamp may be a number of seconds. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include <cmocka.h>

#include "doc/document.h"
#include "doc/saved_doc.h"
#include "measure/record_json.h"

static json_t *base(void)
{
    gq_record r;
    memset(&r, 0, sizeof r);
    snprintf(r.test, sizeof r.test, "device_to_device_memcpy_read_ce");
    r.src = (gq_endpoint){.kind = GQ_EP_GPU, .index = 0};
    r.dst = (gq_endpoint){.kind = GQ_EP_GPU, .index = 1};
    r.direction = GQ_DIR_P2P;
    r.dirs = 1u << GQ_DIR_P2P;
    r.bytes = 1 << 20;
    r.exec_gpu = 0;
    r.host_numa_req = -1;
    r.host_numa_actual = -1;
    r.rounds = 2;
    r.value.n = 2;
    r.value.median = r.value.min = r.value.max = 10;
    r.samples[0] = r.samples[1] = 10;
    r.valid = true;
    r.aggregate = true;
    r.ngpus = 2;
    r.gpus[0] = 0;
    r.gpus[1] = 1;
    r.capacity_gbps = 50;
    r.timestamp = 1.7e9;
    json_t *j = gq_record_to_json(&r);
    assert_non_null(j);
    return j;
}

/* j with key set to the JSON text val (NULL: the key removed). */
static json_t *with(const char *key, const char *val)
{
    json_t *j = base();
    if (!val) {
        json_object_del(j, key);
        return j;
    }
    json_error_t je;
    json_t *v = json_loads(val, JSON_DECODE_ANY, &je);
    if (!v)
        fail_msg("bad test JSON %s: %s", val, je.text);
    json_object_set_new(j, key, v);
    return j;
}

static const struct {
    const char *key, *val, *want;
} refused[] = {
    {"src", "\"disk:0\"",
     "src: is \"disk:0\", expected \"gpu:N\", \"host:N\", \"host:local\", \"gpu:*\" or \"host:*\""},
    {"src", "\"gpu:x\"",
     "src: is \"gpu:x\", expected \"gpu:N\", \"host:N\", \"host:local\", \"gpu:*\" or \"host:*\""},
    {"timestamp", "\"soon\"", "timestamp: is \"soon\", expected ISO-8601 UTC (2026-11-30T12:00:00Z)"},
    {"contaminated", "\"x\"",
     "contaminated: is \"x\", expected null or a list of {kind, gpu, pid, name, detail}"},
    {"contaminated", "[{\"kind\":\"process\",\"gpu\":\"a\",\"detail\":\"d\"}]",
     "contaminated[0].gpu: is \"a\", expected a GPU index 0..63, or null for an entry cut short"},
    {"contaminated", "[{\"kind\":\"process\",\"gpu\":64,\"detail\":\"d\"}]",
     "contaminated[0].gpu: is a number, expected a GPU index 0..63, or null for an entry cut short"},
    {"contaminated", "[{\"kind\":\"process\",\"gpu\":1,\"pid\":\"p\",\"detail\":\"d\"}]",
     "contaminated[0].pid: is \"p\", expected a process id or null"},
    {"contaminated", "[{\"kind\":\"process\",\"gpu\":1,\"name\":5,\"detail\":\"d\"}]",
     "contaminated[0].name: is a number, expected a string or null"},
    {"contaminated", "[{\"kind\":\"process\",\"gpu\":1,\"detail\":5}]",
     "contaminated[0].detail: is a number, expected a string"},
    {"gbps", "\"x\"", "gbps: is \"x\", expected an object {median, min, max, spread}"},
    {"directions", "\"h2d\"", "directions: is \"h2d\", expected a list of directions"},
    {"rounds", "\"3\"", "rounds: is \"3\", expected an integer 0..64"},
    {"rounds", "65", "rounds: is a number, expected an integer 0..64"},
    {"rounds", "-1", "rounds: is a number, expected an integer 0..64"},
    {"samples", "\"x\"", "samples: is \"x\", expected a list of numbers"},
    {"samples", "[1,\"a\"]", "samples[1]: is \"a\", expected a number or null"},
    {"flags", "[true]", "flags[0]: is a boolean, expected a flag name"},
    {"capacity_gbps", "\"x\"", "capacity_gbps: is \"x\", expected a number or null"},
    {"aggregate", "\"x\"", "aggregate: is \"x\", expected true or false"},
    {"host_numa_requested", "true",
     "host_numa_requested: is a boolean, expected a NUMA node, \"local\" or null"},
    {"host_numa_requested", "\"far\"",
     "host_numa_requested: is \"far\", expected a NUMA node, \"local\" or null"},
    {"host_numa_requested", "4097", "host_numa_requested: is a number, expected a NUMA node 0..4096"},
    {"host_numa_requested", "-1", "host_numa_requested: is a number, expected a NUMA node 0..4096"},
    {"host_numa_actual", "\"x\"", "host_numa_actual: is \"x\", expected a NUMA node, \"mixed\" or null"},
    {"host_numa_actual", "4097", "host_numa_actual: is a number, expected a NUMA node, \"mixed\" or null"},
    {"error", "5", "error: is a number, expected a string"},
    {"timestamp", "true", "timestamp: is a boolean, expected ISO-8601 UTC (2026-11-30T12:00:00Z)"},
    {"timestamp", "\"2026-11-30T12:00:00X\"",
     "timestamp: is \"2026-11-30T12:00:00X\", expected ISO-8601 UTC (2026-11-30T12:00:00Z)"},
};

static void test_refusals(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
        json_t *j = with(refused[i].key, refused[i].val);
        gq_record r;
        gq_err err = {0};
        int rc = gq_record_from_json(j, &r, &err);
        json_decref(j);
        if (rc != GQ_E_USAGE || strcmp(err.msg, refused[i].want))
            fail_msg("%s = %s: rc %d, '%s', want '%s'", refused[i].key, refused[i].val, rc, err.msg,
                     refused[i].want);
    }
}

static gq_record read_with(const char *key, const char *val)
{
    json_t *j = with(key, val);
    gq_record r;
    gq_err err = {0};
    if (gq_record_from_json(j, &r, &err))
        fail_msg("%s = %s: %s", key, val ? val : "(absent)", err.msg);
    json_decref(j);
    return r;
}

static void test_accepted(void **state)
{
    (void)state;
    gq_record r = read_with("capacity_gbps", NULL);
    assert_true(r.capacity_gbps == 0);
    r = read_with("capacity_gbps", "-5");
    assert_true(r.capacity_gbps == 0);
    r = read_with("capacity_gbps", "7.5");
    assert_true(r.capacity_gbps == 7.5);
    r = read_with("timestamp", "1234.5");
    assert_true(r.timestamp == 1234.5);
    r = read_with("timestamp", "\"2026-11-30T12:00:00\"");
    assert_true(fabs(r.timestamp - 1796040000.0) < 1e-6);
    r = read_with("aggregate", NULL);
    assert_false(r.aggregate);
    r = read_with("aggregate", "true");
    assert_true(r.aggregate);
    r = read_with("gpus", NULL);
    assert_int_equal(r.ngpus, 0);
    r = read_with("gpus", "[3,1]");
    assert_int_equal(r.ngpus, 2);
    assert_int_equal(r.gpus[0], 3);
    r = read_with("host_numa_requested", "\"local\"");
    assert_int_equal(r.host_numa_req, -1);
    r = read_with("host_numa_requested", "4096");
    assert_int_equal(r.host_numa_req, 4096);
    r = read_with("host_numa_actual", "\"mixed\"");
    assert_int_equal(r.host_numa_actual, -2);
    r = read_with("src", "\"host:*\"");
    assert_int_equal(r.src.kind, GQ_EP_HOST);
    assert_int_equal(r.src.index, GQ_EP_MANY);
    char buf[16];
    assert_string_equal(gq_rec_endpoint(r.src, buf, sizeof buf), "host:*");
    assert_string_equal(gq_rec_endpoint((gq_endpoint){GQ_EP_GPU, GQ_EP_MANY}, buf, sizeof buf), "gpu:*");
    assert_string_equal(gq_rec_endpoint((gq_endpoint){GQ_EP_HOST, GQ_NUMA_LOCAL}, buf, sizeof buf),
                        "host:local");
    assert_string_equal(gq_rec_endpoint((gq_endpoint){GQ_EP_HOST, 3}, buf, sizeof buf), "host:3");
}

/* A document's records name only its GPUs: the first key beyond them is
 * named (src, dst, exec_gpu, then gpus); "gpu:*" is no GPU. */
static void test_doc_gpus_in_range(void **state)
{
    (void)state;
    static const struct {
        const char *key, *val, *want;
    } beyond[] = {
        {"src", "\"gpu:2\"", "f.json: records[0].src: GPU 2 is out of range, expected 0..1"},
        {"dst", "\"gpu:5\"", "f.json: records[0].dst: GPU 5 is out of range, expected 0..1"},
        {"exec_gpu", "3", "f.json: records[0].exec_gpu: GPU 3 is out of range, expected 0..1"},
        {"gpus", "[0,1,4]", "f.json: records[0].gpus: GPU 4 is out of range, expected 0..1"},
    };
    gq_recordset rs = {0};
    gq_err err = {0};
    for (size_t i = 0; i < sizeof beyond / sizeof *beyond; i++) {
        json_t *a = json_array();
        json_array_append_new(a, with(beyond[i].key, beyond[i].val));
        int rc = gq_doc_records_from_json("f.json", a, 2, &rs, &err);
        json_decref(a);
        if (rc != GQ_E_USAGE || strcmp(err.msg, beyond[i].want))
            fail_msg("%s = %s: rc %d '%s', want '%s'", beyond[i].key, beyond[i].val, rc, err.msg,
                     beyond[i].want);
    }
    assert_int_equal(rs.n, 0);
    json_t *a = json_array();
    json_array_append_new(a, with("src", "\"gpu:*\""));
    json_array_append_new(a, base());
    assert_int_equal(gq_doc_records_from_json("f.json", a, 2, &rs, &err), GQ_OK);
    assert_int_equal(rs.n, 2);
    /* without a GPU list (-1), any index goes */
    json_array_append_new(a, with("exec_gpu", "40"));
    assert_int_equal(gq_doc_records_from_json("f.json", a, -1, &rs, &err), GQ_OK);
    assert_int_equal(rs.n, 5);
    json_decref(a);
    gq_records_free(&rs);
}

/* A timestamp's milliseconds are rounded to the nearest, not down: 1.0006 s
 * is .001, 1.0004 s is .000, and 1.9996 s carries into the next second
 * (mutation round 9, record_json.c:70). */
static void test_iso_time_rounds(void **state)
{
    (void)state;
    char b[40];
    assert_string_equal(gq_iso_time(1.0006, b, sizeof b), "1970-01-01T00:00:01.001Z");
    assert_string_equal(gq_iso_time(1.0004, b, sizeof b), "1970-01-01T00:00:01.000Z");
    assert_string_equal(gq_iso_time(1.9996, b, sizeof b), "1970-01-01T00:00:02.000Z");
    assert_string_equal(gq_iso_time(0, b, sizeof b), "1970-01-01T00:00:00.000Z");
}

/* A saved document without topology: its GPU count is the highest index
 * named by gpus, domains and the records' endpoints; records that do not
 * read are passed over; small accessors. */
static void test_saved_doc(void **state)
{
    (void)state;
    json_t *doc = json_pack("{s:[{s:i}], s:[[i,i]], s:[s,o,o]}", "gpus", "index", 1, "domains", 0, 2,
                            "records", "junk", with("dst", "\"gpu:5\""), with("src", "\"gpu:6\""));
    gq_recordset rs = {0};
    gq_err err = {0};
    assert_int_equal(gq_saved_records(doc, &rs, &err), GQ_OK);
    assert_int_equal(rs.n, 2); /* "junk" passed over */
    gq_topo t;
    bool have = true;
    assert_int_equal(gq_saved_ngpu(doc, &rs, &t, &have), 7);
    assert_false(have);
    rs.v[1].src.index = 0;
    assert_int_equal(gq_saved_ngpu(doc, &rs, &t, &have), 6);
    rs.v[0].dst = (gq_endpoint){GQ_EP_HOST, 9};
    assert_int_equal(gq_saved_ngpu(doc, &rs, &t, &have), 3);
    gq_records_free(&rs);

    json_t *recs = json_object_get(doc, "records");
    assert_string_equal(gq_saved_list_str(recs, 0), "junk");
    assert_null(gq_saved_list_str(recs, 1));
    assert_ptr_equal(gq_saved_list_item(recs, 1), json_array_get(recs, 1));
    gq_saved_replace(doc, "records", json_string("r"));
    assert_string_equal(json_string_value(json_object_get(doc, "records")), "r");
    gq_saved_replace(doc, "absent", json_string("x"));
    assert_null(json_object_get(doc, "absent"));
    gq_saved_sections s;
    memset(&s, 0xff, sizeof s);
    json_t *arr = json_array();
    gq_saved_sections_read(arr, &s);
    assert_false(s.card_present);
    assert_null(s.records);
    gq_saved_sections_read(doc, &s);
    assert_non_null(s.records);
    json_decref(arr);
    json_decref(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_refusals),          cmocka_unit_test(test_accepted),
        cmocka_unit_test(test_doc_gpus_in_range), cmocka_unit_test(test_saved_doc),
        cmocka_unit_test(test_iso_time_rounds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
