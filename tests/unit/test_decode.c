/* The fail-closed decoders: a record read back from JSON (measure/record_json.c)
 * and a document through the one loader (gq_doc_load): each failure mode is
 * GQ_E_USAGE with a message naming the key path and what was expected;
 * records marked invalid stay readable. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/runid.h"
#include "core/units.h"
#include "render/analysis_render.h"
#include "render/render.h"

static char dir[64];

static int setup(void **state)
{
    snprintf(dir, sizeof dir, "/tmp/gq-decode-XXXXXX");
    assert_non_null(mkdtemp(dir));
    return 0;
}

static int teardown(void **state)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* A valid host-to-device record on GPU 1. */
static gq_record rec(double gbps)
{
    gq_record r;
    memset(&r, 0, sizeof r);
    snprintf(r.test, sizeof r.test, "host_to_device");
    r.method = GQ_METHOD_CE;
    r.src = (gq_endpoint){GQ_EP_HOST, 0};
    r.dst = (gq_endpoint){GQ_EP_GPU, 1};
    r.direction = GQ_DIR_H2D;
    r.dirs = 1u << GQ_DIR_H2D;
    r.bytes = 64 * GQ_MiB;
    r.rounds = 3;
    double v[] = {gbps, gbps, gbps};
    memcpy(r.samples, v, sizeof v);
    r.value = gq_stat_compute(v, 3);
    r.valid = true;
    r.exec_gpu = 1;
    r.flow_tag = 0;
    r.overlap = -1;
    r.host_numa_req = -1;
    r.host_numa_actual = -1;
    r.capacity_gbps = 63.0;
    r.gpus[r.ngpus++] = 1;
    r.timestamp = 1764470000.5;
    return r;
}

/* Decoding j must fail with a message holding want. */
static void refused(json_t *j, const char *want)
{
    gq_record b;
    gq_err err = {0};
    assert_int_equal(gq_record_from_json(j, &b, &err), GQ_E_USAGE);
    if (!strstr(err.msg, want))
        fail_msg("message '%s' does not hold '%s'", err.msg, want);
    json_decref(j);
}

static json_t *with(const gq_record *r, const char *key, json_t *v)
{
    json_t *j = gq_record_to_json(r);
    if (v)
        json_object_set_new(j, key, v);
    else
        json_object_del(j, key);
    return j;
}

static void test_record_failure_modes(void **state)
{
    gq_record r = rec(50);
    /* missing required fields */
    refused(with(&r, "test", NULL), "test: missing");
    refused(with(&r, "valid", NULL), "valid: missing");
    refused(with(&r, "flags", NULL), "flags: missing");
    refused(with(&r, "gbps", NULL), "gbps: missing");
    json_t *j = gq_record_to_json(&r);
    json_object_del(json_object_get(j, "gbps"), "median");
    refused(j, "gbps.median: missing, expected a number");
    /* wrong types */
    refused(with(&r, "valid", json_string("true")), "valid: is \"true\", expected true or false");
    refused(with(&r, "flags", json_string("spread")), "flags: is \"spread\", expected a list of flag names");
    refused(with(&r, "gpus", json_object()), "gpus: is an object, expected a list of GPU indices");
    refused(with(&r, "exec_gpu", json_string("1")), "exec_gpu: is \"1\", expected an integer");
    j = gq_record_to_json(&r);
    json_object_set_new(json_object_get(j, "gbps"), "median", json_string("50"));
    refused(j, "gbps.median: is \"50\", expected a number");
    refused(with(&r, "bytes", json_integer(0)), "bytes: is a number, expected an integer > 0");
    /* odd-case and unknown enum values */
    refused(with(&r, "method", json_string("CE")), "method: is \"CE\", expected one of \"ce\"");
    refused(with(&r, "direction", json_string("H2D")), "direction: is \"H2D\", expected one of");
    refused(with(&r, "directions", json_pack("[s]", "up")), "directions[0]: is \"up\"");
    /* GPU indices out of range or repeated */
    refused(with(&r, "dst", json_string("gpu:64")), "dst: GPU 64 is out of range, expected 0..63");
    refused(with(&r, "gpus", json_pack("[i,i]", 1, 1)), "gpus[1]: GPU 1 is repeated");
    refused(with(&r, "gpus", json_pack("[i]", 99)), "gpus[0]: is a number, expected a GPU index 0..63");
    /* figures the sanity guard refuses, marked valid */
    gq_record big = rec(1e308);
    big.capacity_gbps = 0;
    refused(gq_record_to_json(&big), "gbps.median: 1e+308 GB/s is above 100000 GB/s");
    refused(gq_record_to_json(&(gq_record){0}), "test: is \"\"");
    gq_record zero = rec(0);
    refused(gq_record_to_json(&zero), "gbps.median: 0 GB/s is not above 0");
    gq_record neg = rec(-3);
    refused(gq_record_to_json(&neg), "gbps.median: -3 GB/s is not above 0");
    gq_record over = rec(100); /* above 1.5 x 63 */
    refused(gq_record_to_json(&over), "above 1.5x the path's capacity of 63 GB/s");
    j = gq_record_to_json(&r);
    json_object_set_new(json_object_get(j, "gbps"), "median", json_null());
    refused(j, "gbps.median: is null, expected a number");
    refused(json_array(), "record: is a list, expected an object");
}

/* Records marked invalid stay readable as invalid, whatever their figure. */
static void test_invalid_records_kept(void **state)
{
    gq_err err = {0};
    gq_record b;
    double figures[] = {1e308, 0, -3, NAN};
    for (int i = 0; i < 4; i++) {
        gq_record r = rec(figures[i]);
        r.valid = false;
        r.flags = GQ_FLAG_ERROR;
        json_t *j = gq_record_to_json(&r);
        assert_int_equal(gq_record_from_json(j, &b, &err), GQ_OK);
        assert_false(b.valid);
        assert_int_equal(b.flags, GQ_FLAG_ERROR);
        json_decref(j);
    }
    /* a figure's min, max and spread may be missing or null (not measured): NaN; its
     * median may be missing only on an invalid record, never on a valid one */
    {
        gq_record r = rec(50);
        json_t *j = gq_record_to_json(&r);
        json_t *g = json_object_get(j, "gbps");
        json_object_del(g, "min");
        json_object_set_new(g, "max", json_null());
        json_object_del(g, "spread");
        assert_int_equal(gq_record_from_json(j, &b, &err), GQ_OK);
        assert_true(b.value.median == r.value.median);
        assert_true(isnan(b.value.min) && isnan(b.value.max) && isnan(b.value.spread));
        json_object_del(g, "median");
        assert_int_equal(gq_record_from_json(j, &b, &err), GQ_E_USAGE);
        assert_non_null(strstr(err.msg, "gbps.median: missing, expected a number"));
        json_decref(j);
    }
    /* an unknown field and an unknown flag name are ignored */
    gq_record r = rec(50);
    json_t *j = gq_record_to_json(&r);
    json_object_set_new(j, "from_the_future", json_integer(7));
    json_array_append_new(json_object_get(j, "flags"), json_string("future_flag"));
    assert_int_equal(gq_record_from_json(j, &b, &err), GQ_OK);
    assert_true(b.valid);
    assert_int_equal(b.flags, 0);
    json_decref(j);
}

static void test_contaminated(void **state)
{
    gq_record r = rec(50), b;
    gq_err err = {0};
    json_t *j = gq_record_to_json(&r);
    assert_true(json_is_null(json_object_get(j, "contaminated")));
    json_decref(j);
    assert_int_equal(gq_record_contaminate(&r, "Process", 1, 42, "python", "x"), GQ_E_USAGE);
    assert_int_equal(gq_record_contaminate(&r, "process", 1, 4242, "python train.py", "12 GiB in use"),
                     GQ_OK);
    assert_int_equal(gq_record_contaminate(&r, "utilization", 0, -1, NULL, "SM busy 97%"), GQ_OK);
    assert_false(r.valid);
    assert_true(r.flags & GQ_FLAG_CONTAMINATED);
    j = gq_record_to_json(&r);
    json_t *c = json_object_get(j, "contaminated");
    assert_int_equal(json_array_size(c), 2);
    json_t *e0 = json_array_get(c, 0), *e1 = json_array_get(c, 1);
    assert_string_equal(json_string_value(json_object_get(e0, "kind")), "process");
    assert_int_equal(json_integer_value(json_object_get(e0, "gpu")), 1);
    assert_int_equal(json_integer_value(json_object_get(e0, "pid")), 4242);
    assert_string_equal(json_string_value(json_object_get(e0, "name")), "python_train.py");
    assert_string_equal(json_string_value(json_object_get(e0, "detail")), "12 GiB in use");
    assert_true(json_is_null(json_object_get(e1, "pid")));
    assert_true(json_is_null(json_object_get(e1, "name")));
    assert_string_equal(json_string_value(json_array_get(json_object_get(j, "flags"), 0)), "contaminated");
    assert_int_equal(gq_record_from_json(j, &b, &err), GQ_OK);
    assert_string_equal(b.contaminated, r.contaminated);
    assert_false(b.valid);
    assert_true(b.flags & GQ_FLAG_CONTAMINATED);
    /* a contaminated record that claims to be valid, an odd-case kind */
    json_object_set_new(j, "valid", json_true());
    refused(json_deep_copy(j), "valid: is true on a contaminated record, expected false");
    json_object_set_new(j, "valid", json_false());
    json_object_set_new(json_array_get(json_object_get(j, "contaminated"), 1), "kind", json_string("Lock"));
    refused(j, "contaminated[1].kind: is \"Lock\", expected one of");
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void load_refused(const char *text, const char *want)
{
    char path[128];
    snprintf(path, sizeof path, "%s/d.json", dir);
    write_text(path, text);
    json_t *root = NULL;
    gq_recordset rs = {0};
    gq_err err = {0};
    assert_int_equal(gq_doc_load(path, &root, &rs, &err), GQ_E_USAGE);
    assert_null(root);
    assert_int_equal(rs.n, 0);
    if (!strstr(err.msg, want))
        fail_msg("message '%s' does not hold '%s'", err.msg, want);
    assert_non_null(strstr(err.msg, path));
}

#define HEAD "{\"tool\":\"gpuqual\",\"schema_version\":2,\"kind\":\"run\","
#define TWO_GPUS "\"gpus\":[{\"index\":0},{\"index\":1}],"

static void test_doc_loader(void **state)
{
    gq_record r = rec(50);
    json_t *rj = gq_record_to_json(&r);
    char *rtext = json_dumps(rj, JSON_COMPACT);
    json_decref(rj);
    char text[8192];
    /* a good document loads, with its record */
    snprintf(text, sizeof text, HEAD TWO_GPUS "\"records\":[%s]}", rtext);
    char path[128];
    snprintf(path, sizeof path, "%s/good.json", dir);
    write_text(path, text);
    json_t *root = NULL;
    gq_recordset rs = {0};
    gq_err err = {0};
    assert_int_equal(gq_doc_load(path, &root, &rs, &err), GQ_OK);
    assert_int_equal(rs.n, 1);
    json_decref(root);
    gq_records_free(&rs);
    /* the record's key path inside the document */
    snprintf(text, sizeof text, HEAD TWO_GPUS "\"records\":[%s,%s]}", rtext, "{\"test\":\"x\"}");
    load_refused(text, ": records[1].method: missing");
    /* a GPU the document does not have */
    snprintf(text, sizeof text, HEAD "\"gpus\":[{\"index\":0}],\"records\":[%s]}", rtext);
    load_refused(text, "records[0].dst: GPU 1 is out of range, expected 0..0");
    /* the document's own GPU list: repeated, out of range */
    load_refused(HEAD "\"gpus\":[{\"index\":0},{\"index\":0}],\"records\":[]}",
                 "gpus[1].index: GPU 0 is repeated");
    load_refused(HEAD "\"gpus\":[{\"index\":0},{\"index\":5}],\"records\":[]}",
                 "gpus[1].index: expected a GPU index 0..1");
    /* duplicate keys, anywhere */
    load_refused(HEAD "\"kind\":\"card\",\"records\":[]}", "duplicate object key");
    snprintf(text, sizeof text, HEAD TWO_GPUS "\"records\":[{\"valid\":true,%s]}", rtext + 1);
    load_refused(text, "duplicate object key");
    load_refused(HEAD "\"records\":{}}", "records: expected a list of records");
    load_refused("{\"tool\":\"gpuqual\",\"schema_version\":\"2\"}", "schema_version: missing or not");
    load_refused("{\"tool\":\"gpuqual\",\"schema_version\":3}",
                 "schema_version 3, newer than this gpuqual reads (2)");
    free(rtext);
    /* a directory is named as one */
    json_t *r2 = NULL;
    assert_int_equal(gq_doc_load(dir, &r2, &rs, &err), GQ_E_USAGE);
    assert_non_null(strstr(err.msg, "is a directory"));
}

/* A FIFO reads like a file. */
static void test_doc_fifo(void **state)
{
    char path[128];
    snprintf(path, sizeof path, "%s/fifo", dir);
    assert_int_equal(mkfifo(path, 0600), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        FILE *f = fopen(path, "w");
        if (!f)
            _exit(1);
        fputs(HEAD TWO_GPUS "\"records\":[]}", f);
        fclose(f);
        _exit(0);
    }
    json_t *root = NULL;
    gq_recordset rs = {0};
    gq_err err = {0};
    assert_int_equal(gq_doc_load(path, &root, &rs, &err), GQ_OK);
    assert_string_equal(json_string_value(json_object_get(root, "kind")), "run");
    json_decref(root);
}

static void test_run_id(void **state)
{
    char a[32], b[32];
    gq_run_id_make(a);
    gq_run_id_make(b);
    assert_int_equal(strlen(a), 25);
    assert_int_equal(a[8], 'T');
    assert_int_equal(a[15], 'Z');
    assert_int_equal(a[16], '-');
    for (int i = 17; i < 25; i++)
        assert_non_null(strchr("0123456789abcdef", a[i]));
    assert_true(gq_run_id_valid(a));
    assert_false(gq_run_id_valid("20261201T000000Z-ABCDEF01"));
    assert_false(gq_run_id_valid("20261201T000000Z-abcdef0"));
    assert_string_not_equal(a, b);
}

/* Domains and bottlenecks: what the writers write reads back as it was. */
static void test_sections_round_trip(void **state)
{
    gq_domains *d = calloc(1, sizeof *d), *d2 = calloc(1, sizeof *d2);
    gq_bottlenecks *b = calloc(1, sizeof *b), *b2 = calloc(1, sizeof *b2);
    assert_non_null(d);
    assert_non_null(d2);
    assert_non_null(b);
    assert_non_null(b2);
    d->ndomains = 2;
    for (int k = 0; k < 2; k++) {
        d->size[k] = 4;
        for (int i = 0; i < 4; i++)
            d->member[k][i] = 4 * k + i;
    }
    d->chained[1] = true;
    d->split = true;
    d->threshold_gbps = 40.5;
    d->within_min_gbps = 41;
    d->across_max_gbps = 20;
    d->max_spread = 0.02;
    d->npairs = 28;
    json_t *j = gq_domains_to_json(d);
    gq_err err = {0};
    assert_int_equal(gq_domains_from_json("d.json", j, 8, d2, &err), GQ_OK);
    assert_int_equal(d2->ndomains, 2);
    assert_memory_equal(d2->member, d->member, sizeof d->member);
    assert_int_equal(d2->domain_of[6], 1);
    assert_true(d2->chained[1] && !d2->chained[0] && d2->split);
    assert_true(fabs(d2->threshold_gbps - 40.5) < 1e-12 && d2->npairs == 28);
    /* a GPU the document does not have */
    assert_int_equal(gq_domains_from_json("d.json", j, 6, d2, &err), GQ_E_USAGE);
    assert_non_null(strstr(err.msg, "d.json: domains[1][2]: is 6, expected a GPU index 0..5"));
    json_decref(j);

    b->n = 1;
    gq_bottleneck *bn = &b->v[0];
    bn->direction = GQ_DIR_D2H;
    bn->ngpus = 4;
    for (int i = 0; i < 4; i++)
        bn->gpus[i] = i;
    bn->capacity_gbps = 25.6;
    bn->sum_alone_gbps = 101;
    bn->expected_gbps = 76;
    bn->explained = GQ_EXPLAIN_PCIE_SWITCH;
    snprintf(bn->node, sizeof bn->node, "0000:17:00.0");
    bn->link_gbps = 31.5;
    snprintf(bn->explanation, sizeof bn->explanation, "GPUs 0-3 sit behind one PCIe switch");
    for (int s = 0; s < 2; s++)
        for (int g = 0; g < GQ_MAX_GPUS; g++)
            b->alone[s][g] = NAN;
    b->asym_obs[0] = b->asym_obs[1] = -1;
    j = gq_bottlenecks_to_json(b, NULL);
    assert_int_equal(gq_bottlenecks_from_json("b.json", j, 8, b2, &err), GQ_OK);
    assert_int_equal(b2->n, 1);
    const gq_bottleneck *x = &b2->v[0];
    assert_int_equal(x->direction, GQ_DIR_D2H);
    assert_false(x->p2p);
    assert_int_equal(x->ngpus, 4);
    assert_memory_equal(x->gpus, bn->gpus, 4 * sizeof(int));
    assert_true(x->capacity_gbps == bn->capacity_gbps && x->link_gbps == bn->link_gbps);
    assert_int_equal(x->explained, GQ_EXPLAIN_PCIE_SWITCH);
    assert_string_equal(x->node, bn->node);
    assert_string_equal(x->explanation, bn->explanation);
    /* an explanation kind in another case */
    json_object_set_new(json_array_get(json_object_get(j, "bottlenecks"), 0), "explained_by",
                        json_string("PCIe_switch"));
    assert_int_equal(gq_bottlenecks_from_json("b.json", j, 8, b2, &err), GQ_E_USAGE);
    assert_non_null(
        strstr(err.msg, "b.json: bottlenecks[0].explained_by: is \"PCIe_switch\", expected one of"));
    json_decref(j);
    free(d);
    free(d2);
    free(b);
    free(b2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_record_failure_modes),
        cmocka_unit_test(test_invalid_records_kept),
        cmocka_unit_test(test_contaminated),
        cmocka_unit_test_setup_teardown(test_doc_loader, setup, teardown),
        cmocka_unit_test_setup_teardown(test_doc_fifo, setup, teardown),
        cmocka_unit_test(test_run_id),
        cmocka_unit_test(test_sections_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
