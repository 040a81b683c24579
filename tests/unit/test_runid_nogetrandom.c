/* A run ID where getrandom() fails (a seccomp filter answering ENOSYS, a
 * kernel before 3.17): src/core/runid.c falls back on the clock and the
 * process, so the suffix still tells runs apart. This program is linked with
 * -Wl,--wrap=getrandom (CMakeLists.txt), so its getrandom() fails. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include <cmocka.h>

#include "core/runid.h"

ssize_t __real_getrandom(void *buf, size_t len, unsigned int flags);
ssize_t __wrap_getrandom(void *buf, size_t len, unsigned int flags);

static int calls;

ssize_t __wrap_getrandom(void *buf, size_t len, unsigned int flags)
{
    (void)buf;
    (void)len;
    (void)flags;
    calls++;
    errno = ENOSYS;
    return -1;
}

static void test_id_suffix_without_getrandom(void **state)
{
    (void)state;
    char a[32], b[32];
    gq_run_id_make(a);
    gq_run_id_make(b);
    assert_true(calls >= 2);
    assert_true(gq_run_id_valid(a));
    assert_true(gq_run_id_valid(b));
    /* the suffix is the clock's nanoseconds and the pid, not a constant */
    if (!strcmp(a + 16, "-00000000") || !strcmp(b + 16, "-00000000"))
        fail_msg("a run ID without getrandom has an empty suffix: %s, %s", a, b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_id_suffix_without_getrandom),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
