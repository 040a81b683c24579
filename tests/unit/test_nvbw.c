/* nvbandwidth v0.8's layouts (render/nvbw.h): the test list and ids, the
 * matrices built from records (median or mean, invalid figures N/A and the
 * test Error), the text byte for byte as nvbandwidth's inline_common.h and
 * output.cpp print it, and the JSON's statuses and -v fields. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/units.h"
#include "measure/catalog.h"
#include "render/nvbw.h"

static gq_topo topo;

static int setup(void **state)
{
    (void)state;
    gq_topo_init(&topo);
    topo.ngpu = 2;
    snprintf(topo.source, sizeof topo.source, "sim:h200x2");
    snprintf(topo.driver_version, sizeof topo.driver_version, "580.159.04");
    topo.cuda_driver_version = 13000;
    for (int g = 0; g < 2; g++) {
        snprintf(topo.gpu[g].name, sizeof topo.gpu[g].name, "NVIDIA H200");
        snprintf(topo.gpu[g].pci_bus_id, sizeof topo.gpu[g].pci_bus_id, "0000:00:0%d.0", 6 + g);
    }
    return 0;
}

static gq_record rec(const char *test, gq_endpoint s, gq_endpoint d, const double *v, int n, int exec)
{
    gq_record r;
    memset(&r, 0, sizeof r);
    snprintf(r.test, sizeof r.test, "%s", test);
    r.src = s;
    r.dst = d;
    r.bytes = 64 * GQ_MiB;
    memcpy(r.samples, v, sizeof *v * (size_t)n);
    r.value = gq_stat_compute(v, n);
    r.rounds = n;
    r.valid = true;
    r.exec_gpu = exec;
    r.host_numa_req = -1;
    return r;
}

#define H0 ((gq_endpoint){.kind = GQ_EP_HOST, .index = -1})
#define G(i) ((gq_endpoint){.kind = GQ_EP_GPU, .index = (i)})

static char *capture_result(const gq_nvbw_result *r, const gq_nvbw_info *in)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    gq_nvbw_text_result(f, r, in, NULL);
    fclose(f);
    return buf;
}

static void test_ids(void **state)
{
    (void)state;
    char msg[128];
    assert_int_equal(gq_nvbw_find("0", msg, sizeof msg), 0);
    assert_int_equal(gq_nvbw_find("34", msg, sizeof msg), 34);
    assert_string_equal(gq_nvbw_cases[34].name, "device_local_copy");
    assert_int_equal(gq_nvbw_find("device_to_device_memcpy_read_ce", msg, sizeof msg), 4);
    assert_int_equal(gq_nvbw_find("35", msg, sizeof msg), -1);
    assert_string_equal(msg, "Testcase index 35 out of bound!");
    assert_int_equal(gq_nvbw_find("-1", msg, sizeof msg), -1);
    assert_string_equal(msg, "Testcase index -1 out of bound!");
    assert_int_equal(gq_nvbw_find("4x", msg, sizeof msg), -1);
    assert_string_equal(msg, "Testcase 4x not found!");
    int peer = 0;
    for (int i = 0; i < GQ_NVBW_NTESTS; i++) {
        peer += gq_nvbw_cases[i].peer;
        /* every test is in the catalog, with a one-line description (-l prints it) */
        const gq_test *t = gq_catalog_find(gq_nvbw_cases[i].name);
        assert_non_null(t);
        assert_true(t->nvbandwidth);
        assert_true(strlen(t->description) > 10);
        if (strstr(t->description, "  ") || strchr(t->description, '\n'))
            fail_msg("%s: description '%s' is not one clean line", t->name, t->description);
    }
    assert_int_equal(peer, 17);
}

/* Host test: one row labelled 0, cells 10 wide with two decimals, SUM with
 * two decimals; -v's MIN/MAX/AVG; the mean of the samples with -m. */
static void test_host_text_and_mean(void **state)
{
    (void)state;
    gq_recordset rs = {0};
    double a[] = {54.0, 55.0, 59.0}; /* median 55, mean 56 */
    double b[] = {50.0, 50.0, 50.0};
    gq_record r = rec("host_to_device_memcpy_ce", H0, G(0), a, 3, 0);
    gq_records_push(&rs, &r);
    r = rec("host_to_device_memcpy_ce", H0, G(1), b, 3, 1);
    r.group = 1;
    gq_records_push(&rs, &r);
    gq_nvbw_result *res = calloc(1, sizeof *res);
    gq_nvbw_build(&topo, &rs, "host_to_device_memcpy_ce", false, res);
    assert_int_equal(res->status, GQ_NVBW_PASSED);
    gq_nvbw_info in = {.verbose = true};
    char *t = capture_result(res, &in);
    assert_string_equal(t, "Running host_to_device_memcpy_ce.\n"
                           "memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)\n"
                           "           0         1\n"
                           " 0     55.00     50.00\n"
                           "\n"
                           "SUM host_to_device_memcpy_ce 105.00\n"
                           "MIN host_to_device_memcpy_ce 50.00\n"
                           "MAX host_to_device_memcpy_ce 55.00\n"
                           "AVG host_to_device_memcpy_ce 52.50\n"
                           "\n");
    free(t);
    /* -v's per-sample lines: each measurement's samples in turn */
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    gq_nvbw_text_samples(f, &rs, "host_to_device_memcpy_ce");
    fclose(f);
    assert_string_equal(
        buf, "\tSample 0: Host -> Device 0: 54.00 GB/s\n\tSample 1: Host -> Device 0: 55.00 GB/s\n"
             "\tSample 2: Host -> Device 0: 59.00 GB/s\n\tSample 0: Host -> Device 1: 50.00 GB/s\n"
             "\tSample 1: Host -> Device 1: 50.00 GB/s\n\tSample 2: Host -> Device 1: 50.00 GB/s\n");
    free(buf);
    gq_nvbw_build(&topo, &rs, "host_to_device_memcpy_ce", true, res);
    assert_true(fabs(res->mat[0].v[0][0] - 56.0) < 1e-9);
    free(res);
    gq_records_free(&rs);
}

/* A bidirectional pair: Read1, Read2, Total with their keys; N/A on the
 * diagonal; an invalid figure is N/A and the test Error. */
static void test_bidir_and_invalid(void **state)
{
    (void)state;
    const char *t = "device_to_device_bidirectional_memcpy_read_ce";
    gq_recordset rs = {0};
    double v1[] = {389.0}, v2[] = {388.0}, v3[] = {777.0};
    gq_record r = rec(t, G(1), G(0), v1, 1, 0);
    r.ngpus = 2, r.gpus[0] = 0, r.gpus[1] = 1;
    gq_records_push(&rs, &r);
    r = rec(t, G(0), G(1), v2, 1, 1);
    r.ngpus = 2, r.gpus[0] = 0, r.gpus[1] = 1;
    r.valid = false;
    snprintf(r.error, sizeof r.error, "verify_failed: byte 12");
    gq_records_push(&rs, &r);
    r = rec(t, G(GQ_EP_MANY), G(GQ_EP_MANY), v3, 1, -1);
    r.sum = true, r.ngpus = 2, r.gpus[0] = 0, r.gpus[1] = 1;
    gq_records_push(&rs, &r);
    gq_nvbw_result *res = calloc(1, sizeof *res);
    gq_nvbw_build(&topo, &rs, t, false, res);
    assert_int_equal(res->nmat, 3);
    assert_string_equal(res->mat[0].key, "device_to_device_bidirectional_memcpy_read_ce_read1");
    assert_string_equal(res->mat[1].desc, "memcpy CE GPU(row) <-> GPU(column) Read2 bandwidth (GB/s)");
    assert_string_equal(res->mat[2].key, "device_to_device_bidirectional_memcpy_read_ce_total");
    assert_int_equal(res->status, GQ_NVBW_ERROR);
    assert_string_equal(res->msg, "verify_failed: byte 12");
    gq_nvbw_info in = {0};
    char *txt = capture_result(res, &in);
    /* Read1: GPU 0 executes 1 -> 0 at 389; GPU 1's figure is invalid: N/A */
    assert_non_null(
        strstr(txt, "Read1 bandwidth (GB/s)\n           0         1\n 0       N/A    389.00\n"
                    " 1       N/A       N/A\n\nSUM device_to_device_bidirectional_memcpy_read_ce_read1 "
                    "389.00\n"));
    assert_non_null(strstr(txt, " 0       N/A    777.00\n 1    777.00       N/A\n"));
    assert_non_null(strstr(txt, "Error: verify_failed: byte 12\n"));
    free(txt);
    json_t *doc = gq_nvbw_json(&topo, res, 1, &in, NULL);
    json_t *tc = json_array_get(json_object_get(json_object_get(doc, "nvbandwidth"), "testcases"), 0);
    assert_string_equal(json_string_value(json_object_get(tc, "status")), "Error");
    assert_int_equal(json_array_size(json_object_get(tc, "bandwidth_matrix")), 6);
    /* the last matrix's sum and description, as nvbandwidth's JSON writer leaves them */
    assert_true(fabs(json_number_value(json_object_get(tc, "sum")) - 1554.0) < 1e-9);
    assert_string_equal(json_string_value(json_object_get(tc, "bandwidth_description")),
                        "memcpy CE GPU(row) <-> GPU(column) Total bandwidth (GB/s)");
    json_decref(doc);
    free(res);
    gq_records_free(&rs);
}

/* Waived and not-found tests in text and JSON; -v's fields; the header. */
static void test_statuses_and_header(void **state)
{
    (void)state;
    gq_nvbw_result res[2];
    memset(res, 0, sizeof res);
    snprintf(res[0].name, sizeof res[0].name, "device_to_device_memcpy_read_ce");
    res[0].status = GQ_NVBW_WAIVED;
    snprintf(res[1].name, sizeof res[1].name, "nope");
    res[1].status = GQ_NVBW_NOTFOUND;
    snprintf(res[1].msg, sizeof res[1].msg, "Testcase nope not found!");
    gq_nvbw_info in = {.version = "9.9", .git = "abc", .simulated = true, .verbose = true};
    char *t = capture_result(&res[0], &in);
    assert_string_equal(t, "Waived: \n");
    free(t);
    t = capture_result(&res[1], &in);
    assert_string_equal(t, "ERROR: Testcase nope not found!\n");
    free(t);
    json_t *doc = gq_nvbw_json(&topo, res, 2, &in, NULL);
    json_t *body = json_object_get(doc, "nvbandwidth");
    json_t *w = json_array_get(json_object_get(body, "testcases"), 0);
    assert_string_equal(json_string_value(json_object_get(w, "status")), "Waived");
    assert_int_equal(json_object_size(w), 2); /* name and status only: DCGM refuses an empty matrix */
    assert_string_equal(
        json_string_value(json_object_get(json_array_get(json_object_get(body, "testcases"), 1), "status")),
        "ERROR");
    assert_int_equal(json_integer_value(json_object_get(body, "CUDA Runtime Version")), 13000);
    assert_string_equal(json_string_value(json_array_get(json_object_get(body, "GPU Device list"), 1)),
                        "1: NVIDIA H200 (00000000:00:07): (sim:h200x2)");
    json_decref(doc);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    gq_nvbw_text_version(f, &in);
    gq_nvbw_text_machine(f, &topo);
    fclose(f);
    assert_string_equal(
        buf, "nvbandwidth Version: v0.8 (gpuqual 9.9) (simulated)\n"
             "Built from Git version: abc\n\n"
             "CUDA Runtime Version: 13000\nCUDA Driver Version: 13000\nDriver Version: 580.159.04\n\n"
             "sim:h200x2\nDevice 0: NVIDIA H200 (00000000:00:06)\nDevice 1: NVIDIA H200 "
             "(00000000:00:07)\n\n");
    free(buf);
}

/* --perfFormatter: "&&&& PERF KEY SUM UNIT" in place of the SUM line, the unit
 * with its direction of better ("+GB/s" for a bandwidth, higher is better;
 * "-ns" for a latency, lower is better), the -v lines unchanged. */
static void test_perf_lines(void **state)
{
    (void)state;
    gq_recordset rs = {0};
    double a[] = {54.0, 55.0, 56.0}, l[] = {700.0, 710.0, 720.0};
    gq_record r = rec("host_to_device_memcpy_ce", H0, G(0), a, 3, 0);
    gq_records_push(&rs, &r);
    r = rec("host_device_latency_sm", H0, G(0), l, 3, 0);
    gq_records_push(&rs, &r);
    gq_nvbw_result *res = calloc(1, sizeof *res);
    gq_nvbw_info in = {.perf = true};
    gq_nvbw_build(&topo, &rs, "host_to_device_memcpy_ce", false, res);
    assert_false(res->mat[0].latency);
    char *t = capture_result(res, &in);
    assert_non_null(strstr(t, "\n&&&& PERF host_to_device_memcpy_ce 55.00 +GB/s\n"));
    assert_null(strstr(t, "SUM "));
    free(t);
    gq_nvbw_build(&topo, &rs, "host_device_latency_sm", false, res);
    assert_true(res->mat[0].latency);
    t = capture_result(res, &in);
    assert_non_null(strstr(t, "\n&&&& PERF host_device_latency_sm 710.00 -ns\n"));
    free(t);
    in.verbose = true;
    t = capture_result(res, &in);
    assert_non_null(strstr(t, "\n&&&& PERF host_device_latency_sm 710.00 -ns\nMIN host_device_latency_sm "));
    free(t);
    in.perf = false;
    t = capture_result(res, &in);
    assert_non_null(strstr(t, "\nSUM host_device_latency_sm 710.00\n"));
    assert_null(strstr(t, "PERF"));
    free(t);
    free(res);
    gq_records_free(&rs);
}

/* -v's JSON figures of a matrix: min, max, sum and "average", the mean of
 * the cells that hold a figure (N/A cells count as 0 in the sum and min,
 * as nvbandwidth keeps them, but not in the average's count). */
static void test_json_verbose_figures(void **state)
{
    (void)state;
    gq_nvbw_result *res = calloc(1, sizeof *res);
    snprintf(res->name, sizeof res->name, "device_to_device_memcpy_read_ce");
    res->status = GQ_NVBW_PASSED;
    res->nmat = 1;
    gq_nvbw_matrix *m = &res->mat[0];
    m->rows = m->cols = 2;
    snprintf(m->desc, sizeof m->desc, "memcpy CE CPU(row) <- GPU(column) bandwidth (GB/s)");
    m->v[0][1] = 394.0;
    m->v[1][0] = 390.0;
    m->has[0][1] = m->has[1][0] = true;
    gq_nvbw_info in = {.verbose = true};
    json_t *doc = gq_nvbw_json(&topo, res, 1, &in, NULL);
    json_t *c = json_array_get(json_object_get(json_object_get(doc, "nvbandwidth"), "testcases"), 0);
    assert_non_null(c);
    assert_true(json_number_value(json_object_get(c, "sum")) == 784.0);
    assert_true(json_number_value(json_object_get(c, "max")) == 394.0);
    assert_true(json_number_value(json_object_get(c, "min")) == 0.0);
    assert_true(json_is_number(json_object_get(c, "average")));
    assert_true(json_number_value(json_object_get(c, "average")) == 392.0);
    json_decref(doc);
    /* without -v: none of the three */
    in.verbose = false;
    doc = gq_nvbw_json(&topo, res, 1, &in, NULL);
    c = json_array_get(json_object_get(json_object_get(doc, "nvbandwidth"), "testcases"), 0);
    assert_null(json_object_get(c, "average"));
    json_decref(doc);
    /* no figure at all: the average is null, not 0/0 */
    m->has[0][1] = m->has[1][0] = false;
    m->v[0][1] = m->v[1][0] = 0;
    in.verbose = true;
    doc = gq_nvbw_json(&topo, res, 1, &in, NULL);
    c = json_array_get(json_object_get(json_object_get(doc, "nvbandwidth"), "testcases"), 0);
    assert_true(json_is_null(json_object_get(c, "average")));
    json_decref(doc);
    free(res);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ids),
        cmocka_unit_test(test_host_text_and_mean),
        cmocka_unit_test(test_bidir_and_invalid),
        cmocka_unit_test(test_statuses_and_header),
        cmocka_unit_test(test_perf_lines),
        cmocka_unit_test(test_json_verbose_figures),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
