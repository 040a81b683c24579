/* The journal: every finished record is one flushed JSON line; reading it
 * back survives a crash mid-write (a truncated last line). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "measure/journal.h"

static char dir[64];
static char path[128];

static int setup(void **state)
{
    snprintf(dir, sizeof dir, "/tmp/gq-journal-XXXXXX");
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/j.jsonl", dir);
    return 0;
}

static int teardown(void **state)
{
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static gq_record rec(int i)
{
    gq_record r;
    memset(&r, 0, sizeof r);
    snprintf(r.test, sizeof r.test, "host_to_device_memcpy_ce");
    r.method = GQ_METHOD_CE;
    r.src = (gq_endpoint){GQ_EP_HOST, 0};
    r.dst = (gq_endpoint){GQ_EP_GPU, i};
    r.direction = GQ_DIR_H2D;
    r.dirs = 1u << GQ_DIR_H2D;
    r.bytes = 512 * 1024 * 1024ull;
    r.rounds = 3;
    double v[] = {55.1 + i, 55.3 + i, 55.2 + i};
    memcpy(r.samples, v, sizeof v);
    r.value = gq_stat_compute(v, 3);
    r.valid = i != 2;
    r.flags = i == 2 ? GQ_FLAG_IMPOSSIBLE : 0;
    if (i == 2)
        snprintf(r.error, sizeof r.error, "impossible: above 31.5 GB/s");
    r.exec_gpu = i;
    r.flow_tag = 0;
    r.overlap = -1;
    r.group = i;
    r.host_numa_req = 0;
    r.host_numa_actual = 0;
    r.window_s = 0.1;
    r.timestamp = 1764470000.25 + i;
    r.simulated = true;
    return r;
}

static void write_n(int n)
{
    gq_journal j;
    assert_int_equal(gq_journal_open(&j, path, NULL), GQ_OK);
    for (int i = 0; i < n; i++) {
        gq_record r = rec(i);
        assert_int_equal(gq_journal_append(&j, &r, NULL), GQ_OK);
    }
    assert_int_equal(j.written, n);
    gq_journal_close(&j);
}

static void test_write_read_back(void **state)
{
    write_n(3);
    gq_recordset rs = {0};
    bool trunc = true;
    assert_int_equal(gq_journal_read(path, &rs, &trunc, NULL), GQ_OK);
    assert_false(trunc);
    assert_int_equal(rs.n, 3);
    for (int i = 0; i < 3; i++) {
        gq_record want = rec(i);
        const gq_record *r = &rs.v[i];
        assert_string_equal(r->test, want.test);
        assert_int_equal(r->dst.index, i);
        assert_int_equal(r->bytes, want.bytes);
        assert_int_equal(r->rounds, 3);
        assert_true(fabs(r->value.median - want.value.median) < 1e-9);
        assert_true(fabs(r->samples[2] - want.samples[2]) < 1e-9);
        assert_int_equal(r->valid, want.valid);
        assert_int_equal(r->flags, want.flags);
        assert_true(fabs(r->timestamp - want.timestamp) < 1e-3);
        assert_int_equal(r->exec_gpu, i);
        assert_true(r->simulated);
    }
    assert_string_equal(rs.v[2].error, "impossible: above 31.5 GB/s");
    gq_records_free(&rs);
}

static void append_raw(const char *text)
{
    FILE *f = fopen(path, "a");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void test_truncated_last_line(void **state)
{
    write_n(3);
    append_raw("{\"journal\":\"gpuqual\",\"schema_version\":1,\"record\":{\"test\":\"host_to_dev");
    gq_recordset rs = {0};
    bool trunc = false;
    assert_int_equal(gq_journal_read(path, &rs, &trunc, NULL), GQ_OK);
    assert_true(trunc);
    assert_int_equal(rs.n, 3);
    gq_records_free(&rs);

    /* appending again first cuts the fragment off, so the journal stays readable */
    gq_journal j;
    assert_int_equal(gq_journal_open(&j, path, NULL), GQ_OK);
    gq_record r = rec(3);
    assert_int_equal(gq_journal_append(&j, &r, NULL), GQ_OK);
    gq_journal_close(&j);
    trunc = true;
    assert_int_equal(gq_journal_read(path, &rs, &trunc, NULL), GQ_OK);
    assert_false(trunc);
    assert_int_equal(rs.n, 4);
    assert_int_equal(rs.v[3].dst.index, 3);
    gq_records_free(&rs);
}

static void test_bad_line_names_its_number(void **state)
{
    write_n(1);
    append_raw("this is not json\n");
    write_n(1);
    gq_recordset rs = {0};
    gq_err err = {0};
    assert_int_equal(gq_journal_read(path, &rs, NULL, &err), GQ_E_USAGE);
    assert_non_null(strstr(err.msg, "line 2"));
    gq_records_free(&rs);
}

static void test_foreign_and_newer_lines(void **state)
{
    append_raw("{\"journal\":\"other\",\"schema_version\":1,\"record\":{}}\n");
    gq_recordset rs = {0};
    gq_err err = {0};
    assert_int_equal(gq_journal_read(path, &rs, NULL, &err), GQ_E_USAGE);
    assert_non_null(strstr(err.msg, "not a gpuqual journal record"));
    unlink(path);
    append_raw("{\"journal\":\"gpuqual\",\"schema_version\":99,\"record\":{}}\n");
    assert_int_equal(gq_journal_read(path, &rs, NULL, &err), GQ_E_USAGE);
    assert_non_null(strstr(err.msg, "99"));
    unlink(path);
    append_raw("{\"journal\":\"gpuqual\",\"schema_version\":1,\"record\":{\"test\":\"x\"}}\n");
    assert_int_equal(gq_journal_read(path, &rs, NULL, &err), GQ_E_USAGE);
    assert_non_null(strstr(err.msg, "method"));
    gq_records_free(&rs);
}

static void test_default_path_in_tmpdir(void **state)
{
    setenv("TMPDIR", dir, 1);
    gq_journal j;
    assert_int_equal(gq_journal_open(&j, NULL, NULL), GQ_OK);
    assert_true(!strncmp(j.path, dir, strlen(dir)));
    assert_non_null(strstr(j.path, "gpuqual-journal-"));
    assert_non_null(strstr(j.path, ".jsonl"));
    assert_int_equal(access(j.path, W_OK), 0);
    gq_journal_close(&j);
    unsetenv("TMPDIR");
}

static void test_missing_file(void **state)
{
    gq_recordset rs = {0};
    gq_err err = {0};
    assert_int_equal(gq_journal_read("/nonexistent/dir/j.jsonl", &rs, NULL, &err), GQ_E_IO);
    gq_journal j;
    assert_int_equal(gq_journal_open(&j, "/nonexistent/dir/j.jsonl", &err), GQ_E_IO);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_write_read_back, setup, teardown),
        cmocka_unit_test_setup_teardown(test_truncated_last_line, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_line_names_its_number, setup, teardown),
        cmocka_unit_test_setup_teardown(test_foreign_and_newer_lines, setup, teardown),
        cmocka_unit_test_setup_teardown(test_default_path_in_tmpdir, setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing_file, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
