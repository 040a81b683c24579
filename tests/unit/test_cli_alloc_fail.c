/* Out of memory in the CLI: this program is linked with -Wl,--wrap=calloc
 * (CMakeLists.txt), so a chosen calloc can fail. The ASCII stderr and the
 * wrapping stdout (cli/outwrap.h) each make one allocation; when it fails,
 * the stream is left as it was and the call says so. `run` refuses with
 * "out of memory" when its plans cannot be allocated. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "backend/backend.h"
#include "cli/commands.h"
#include "cli/frame.h"
#include "cli/outwrap.h"
#include "measure/catalog.h"
#include "core/ascii.h"

void *__real_calloc(size_t n, size_t size);
void *__wrap_calloc(size_t n, size_t size);

static long fail_at;             /* the allocation to fail, counted from 1; 0: none */
static long nalloc;              /* allocations since the count was reset */
static size_t fail_n, fail_size; /* else: fail the first calloc(fail_n, fail_size) */

void *__wrap_calloc(size_t n, size_t size)
{
    if (fail_n && n == fail_n && size == fail_size) {
        fail_n = 0;
        return NULL;
    }
    return ++nalloc == fail_at ? NULL : __real_calloc(n, size);
}

static void arm(long k)
{
    fail_at = k;
    nalloc = 0;
}

static void test_plain_stderr(void **state)
{
    (void)state;
    gq_ascii_force(1);
    FILE *err = stderr;
    arm(1);
    bool plain = gq_outwrap_plain_stderr();
    long n = nalloc;
    arm(0);
    gq_ascii_force(-1);
    assert_false(plain);
    assert_int_equal(n, 1);
    assert_ptr_equal(stderr, err);
}

static void test_wrapped_stdout(void **state)
{
    (void)state;
    FILE *out = stdout;
    arm(1);
    bool wrapped = gq_outwrap_begin(80);
    long n = nalloc;
    arm(0);
    assert_false(wrapped);
    assert_int_equal(n, 1);
    assert_ptr_equal(stdout, out);
}

/* `run` of 3 tests plans them in one calloc(3, sizeof(gq_plan)); when it
 * fails, the command stops there with "out of memory" and no measurement. */
static void test_run_plans(void **state)
{
    (void)state;
    char *argv[] = {"gpuqual",  "run", "--sim",
                    "h200x2",   "-t",  "host_to_device_memcpy_ce,device_to_host_memcpy_ce,device_local_copy",
                    "-i",       "2",   "-q",
                    "--format", "csv", NULL};
    gq_backend_register_builtin();
    fail_n = 3;
    fail_size = sizeof(gq_plan);
    int rc = gq_frame_main(&gq_frame_run, (int)(sizeof argv / sizeof argv[0]) - 1, argv);
    bool failed = fail_n == 0;
    fail_n = 0;
    assert_true(failed);
    assert_int_equal(rc, 1); /* GQ_E_FAIL's exit, "gpuqual: out of memory" on stderr */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain_stderr),
        cmocka_unit_test(test_wrapped_stdout),
        cmocka_unit_test(test_run_plans),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
