/* The atomic writer's temporary name (src/core/outfile.c open_named) is
 * tried 100 times: a name taken (EEXIST) is drawn again, and after the
 * hundredth the write fails with one line naming the file. This program is
 * linked with -Wl,--wrap=open (CMakeLists.txt), so its open() can answer
 * EEXIST to the first N exclusive creates, as a file system whose
 * directory is crowded with names would, and refuse O_TMPFILE so that the
 * named path is the one taken. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/outfile.h"
#include "core/status.h"

int __real_open(const char *path, int flags, ...);
int __wrap_open(const char *path, int flags, ...);

static int eexist_left; /* exclusive creates still to answer EEXIST */
static int excl_tries;  /* exclusive creates seen since the count was reset */
static int excl_errno;  /* nonzero: every exclusive create fails with it */

int __wrap_open(const char *path, int flags, ...)
{
    mode_t mode = 0;
    if (flags & O_CREAT || (flags & O_TMPFILE) == O_TMPFILE) {
        va_list ap;
        va_start(ap, flags);
        mode = (mode_t)va_arg(ap, int);
        va_end(ap);
    }
#ifdef O_TMPFILE
    if ((flags & O_TMPFILE) == O_TMPFILE) {
        errno = EOPNOTSUPP;
        return -1;
    }
#endif
    if ((flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL)) {
        excl_tries++;
        if (excl_errno) {
            errno = excl_errno;
            return -1;
        }
        if (eexist_left > 0) {
            eexist_left--;
            errno = EEXIST;
            return -1;
        }
    }
    return __real_open(path, flags, mode);
}

static char dir[256];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/gq-eexist-XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static int write_hello(FILE *f, void *arg, gq_err *err)
{
    (void)arg;
    (void)err;
    fputs("hello\n", f);
    return GQ_OK;
}

/* How many entries the directory holds besides . and .. */
static int entries(void)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "ls -A '%s' | wc -l", dir);
    FILE *p = popen(cmd, "r");
    int n = -1;
    assert_non_null(p);
    assert_int_equal(fscanf(p, "%d", &n), 1);
    pclose(p);
    return n;
}

/* 99 names taken: the hundredth try gets one, and the file is written. */
static void test_99_taken_writes(void **state)
{
    (void)state;
    char path[300];
    snprintf(path, sizeof path, "%s/out.md", dir);
    gq_err err = {0};
    eexist_left = 99;
    excl_tries = 0;
    int rc = gq_outfile_write(path, write_hello, NULL, &err);
    assert_int_equal(rc, GQ_OK);
    assert_int_equal(excl_tries, 100);
    assert_int_equal(eexist_left, 0);
    FILE *f = fopen(path, "r");
    char line[32] = "";
    assert_non_null(f);
    assert_non_null(fgets(line, sizeof line, f));
    fclose(f);
    assert_string_equal(line, "hello\n");
    assert_int_equal(entries(), 1); /* no temporary file left */
    unlink(path);
}

/* 100 names taken: the writer gives up after exactly 100 tries with one line
 * that names the file and the reason, and leaves nothing behind. */
static void test_100_taken_refuses(void **state)
{
    (void)state;
    char path[300];
    snprintf(path, sizeof path, "%s/out.md", dir);
    gq_err err = {0};
    eexist_left = 100;
    excl_tries = 0;
    int rc = gq_outfile_write(path, write_hello, NULL, &err);
    int tries = excl_tries;
    eexist_left = 0;
    assert_int_equal(rc, GQ_E_IO);
    assert_int_equal(tries, 100);
    char want[400];
    snprintf(want, sizeof want, "cannot write '%s': %s", path, strerror(EEXIST));
    assert_string_equal(err.msg, want);
    assert_null(strchr(err.msg, '\n'));
    assert_int_equal(access(path, F_OK), -1);
    assert_int_equal(entries(), 0);
}

/* Any other error of the exclusive create (a directory gpuqual may not
 * write): no second try, one line with that reason, nothing left. */
static void test_other_error_refuses_at_once(void **state)
{
    (void)state;
    char path[300];
    snprintf(path, sizeof path, "%s/out.md", dir);
    gq_err err = {0};
    excl_errno = EACCES;
    excl_tries = 0;
    int rc = gq_outfile_write(path, write_hello, NULL, &err);
    int tries = excl_tries;
    excl_errno = 0;
    assert_int_equal(rc, GQ_E_IO);
    assert_int_equal(tries, 1);
    char want[400];
    snprintf(want, sizeof want, "cannot write '%s': %s", path, strerror(EACCES));
    assert_string_equal(err.msg, want);
    assert_int_equal(access(path, F_OK), -1);
    assert_int_equal(entries(), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_99_taken_writes),
        cmocka_unit_test(test_100_taken_refuses),
        cmocka_unit_test(test_other_error_refuses_at_once),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
