/* The one atomic writer (src/core/outfile.c): nothing half-written is left
 * under the final name, devices are written in place, directories refused. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/outfile.h"

static char dir[256];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/gq-outfile-XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static int count_files(void)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "ls -A '%s' | wc -l", dir);
    FILE *p = popen(cmd, "r");
    int n = -1;
    if (p) {
        if (fscanf(p, "%d", &n) != 1)
            n = -1;
        pclose(p);
    }
    return n;
}

static void test_commit_and_abort(void **state)
{
    (void)state;
    char path[300];
    snprintf(path, sizeof path, "%s/out.txt", dir);
    gq_outfile o;
    gq_err e = {0};
    assert_int_equal(gq_outfile_open(&o, path, &e), GQ_OK);
    fputs("hello\n", o.f);
    assert_int_not_equal(access(path, F_OK), 0); /* not under its name before commit */
    assert_int_equal(gq_outfile_commit(&o, &e), GQ_OK);
    assert_int_equal(access(path, F_OK), 0);
    assert_int_equal(count_files(), 1);
    assert_int_equal(gq_outfile_open(&o, path, &e), GQ_OK);
    fputs("half", o.f);
    gq_outfile_abort(&o);
    assert_int_equal(count_files(), 1); /* the temp file is gone, the old file kept */
    FILE *f = fopen(path, "r");
    char line[16] = "";
    assert_non_null(fgets(line, sizeof line, f));
    fclose(f);
    assert_string_equal(line, "hello\n");
}

static void test_refusals_and_devices(void **state)
{
    (void)state;
    gq_outfile o;
    gq_err e = {0};
    assert_int_equal(gq_outfile_open(&o, dir, &e), GQ_E_IO);
    assert_non_null(strstr(e.msg, "it is a directory"));
    char path[300];
    snprintf(path, sizeof path, "%s/no/such/x.json", dir);
    assert_int_equal(gq_outfile_check(path, &e), GQ_E_IO);
    assert_non_null(strstr(e.msg, "does not exist"));
    assert_int_equal(gq_outfile_check(NULL, &e), GQ_OK);
    assert_int_equal(gq_outfile_check("-", &e), GQ_OK);
    assert_int_equal(gq_outfile_open(&o, "/dev/null", &e), GQ_OK); /* written in place */
    fputs("x", o.f);
    assert_int_equal(gq_outfile_commit(&o, &e), GQ_OK);
    struct stat st;
    assert_int_equal(stat("/dev/null", &st), 0);
    assert_true(S_ISCHR(st.st_mode));
}

static int write_two(FILE *f, void *arg, gq_err *err)
{
    (void)err;
    fputs((const char *)arg, f);
    return GQ_OK;
}

static int write_fails(FILE *f, void *arg, gq_err *err)
{
    (void)f;
    (void)arg;
    return gq_err_set(err, GQ_E_FAIL, "no");
}

static void test_write_in_one_call(void **state)
{
    (void)state;
    char path[300];
    snprintf(path, sizeof path, "%s/one.txt", dir);
    gq_err e = {0};
    assert_int_equal(gq_outfile_write(path, write_two, "ab", &e), GQ_OK);
    assert_int_equal(access(path, F_OK), 0);
    unlink(path);
    assert_int_equal(gq_outfile_write(path, write_fails, NULL, &e), GQ_E_FAIL);
    assert_int_not_equal(access(path, F_OK), 0);
    assert_int_equal(count_files(), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_commit_and_abort, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refusals_and_devices, setup, teardown),
        cmocka_unit_test_setup_teardown(test_write_in_one_call, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
