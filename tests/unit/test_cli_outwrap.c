/* The streams of cli/outwrap.c, in-process: stderr in ASCII under a locale
 * without UTF-8 (each symbol mapped, a UTF-8 sequence cut between two writes
 * kept until its end comes, writes longer than the stream's 1024-byte chunk),
 * the wrapping stdout's last line without a newline, and the errno of a
 * failed write to the real stdout. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/outwrap.h"
#include "core/ascii.h"

/* The whole of the file at fd (from its start) into buf. */
static size_t read_all(int fd, char *buf, size_t cap)
{
    size_t n = 0;
    ssize_t k;
    lseek(fd, 0, SEEK_SET);
    while (n + 1 < cap && (k = read(fd, buf + n, cap - 1 - n)) > 0)
        n += (size_t)k;
    buf[n] = 0;
    return n;
}

static void test_plain_stderr(void **state)
{
    (void)state;
    static char want[4096], got[8192];
    char tmpl[] = "/tmp/gq-outwrap-XXXXXX";
    int fd = mkstemp(tmpl);
    assert_true(fd >= 0);
    unlink(tmpl);
    fflush(stderr);
    int saved_fd = dup(STDERR_FILENO);
    dup2(fd, STDERR_FILENO);
    FILE *saved = stderr;

    gq_ascii_force(1);
    bool on = gq_outwrap_plain_stderr();
    assert_true(on);
    assert_ptr_not_equal(stderr, saved);
    /* 1023 bytes, then an arrow whose "->" straddles the 1024-byte chunk */
    char a[1100];
    memset(a, 'x', 1023);
    memcpy(a + 1023, "→", 3);
    fwrite(a, 1, 1026, stderr);
    /* 1030 plain bytes in one write: more than one chunk */
    char b[1030];
    memset(b, 'y', sizeof b);
    fwrite(b, 1, sizeof b, stderr);
    /* "é" (not in the map) and "≥" cut between two writes */
    fwrite("\xc3", 1, 1, stderr);
    fwrite("\xa9 ", 1, 2, stderr);
    fwrite("\xe2\x89", 1, 2, stderr);
    fwrite("\xa5 1 \xc2\xb0"
           "C\n",
           1, 8, stderr);
    int rc = fclose(stderr); /* the ASCII stream's close flushes the real stderr */
    stderr = saved;
    gq_ascii_force(-1);
    fflush(stderr);
    size_t n = read_all(fd, got, sizeof got);
    dup2(saved_fd, STDERR_FILENO);
    close(saved_fd);
    close(fd);

    size_t w = 0;
    memset(want, 'x', 1023);
    w = 1023;
    w += (size_t)snprintf(want + w, sizeof want - w, "->");
    memset(want + w, 'y', 1030);
    w += 1030;
    w += (size_t)snprintf(want + w, sizeof want - w, "? >= 1 degC\n");
    assert_int_equal(rc, 0);
    assert_int_equal(n, w);
    assert_memory_equal(got, want, w);
}

/* With ASCII off the call leaves stderr as it is. */
static void test_plain_stderr_utf8(void **state)
{
    (void)state;
    FILE *saved = stderr;
    gq_ascii_force(0);
    bool on = gq_outwrap_plain_stderr();
    gq_ascii_force(-1);
    assert_false(on);
    assert_ptr_equal(stderr, saved);
}

/* Output whose last line has no newline comes out as it is when the
 * wrapping ends; a line that fits the width passes unchanged. */
static void test_wrap_last_line(void **state)
{
    (void)state;
    char tmpl[] = "/tmp/gq-outwrap-XXXXXX", got[256];
    int fd = mkstemp(tmpl);
    assert_true(fd >= 0);
    unlink(tmpl);
    fflush(stdout);
    int saved_fd = dup(STDOUT_FILENO);
    dup2(fd, STDOUT_FILENO);
    gq_ascii_force(0);
    bool on = gq_outwrap_begin(40);
    printf("first line\nno newline at the end");
    gq_outwrap_end();
    gq_ascii_force(-1);
    fflush(stdout);
    size_t n = read_all(fd, got, sizeof got);
    dup2(saved_fd, STDOUT_FILENO);
    close(saved_fd);
    close(fd);
    assert_true(on);
    assert_int_equal(gq_outwrap_errno(), 0);
    assert_string_equal(got, "first line\nno newline at the end");
    (void)n;
}

/* A write to the real stdout that fails (here /dev/full: ENOSPC) is kept
 * as the errno the one error line names. */
static void test_wrap_write_error(void **state)
{
    (void)state;
    int full = open("/dev/full", O_WRONLY);
    if (full < 0)
        skip();
    fflush(stdout);
    int saved_fd = dup(STDOUT_FILENO);
    dup2(full, STDOUT_FILENO);
    close(full);
    gq_ascii_force(0);
    bool on = gq_outwrap_begin(60);
    /* more lines than the real stdout's buffer holds, so that it writes */
    for (int i = 0; i < 400; i++)
        printf("line %3d of the output that no disk has room for\n", i);
    fflush(stdout);
    int e = gq_outwrap_errno();
    gq_outwrap_end();
    gq_ascii_force(-1);
    clearerr(stdout);
    dup2(saved_fd, STDOUT_FILENO);
    close(saved_fd);
    clearerr(stdout);
    assert_true(on);
    assert_int_equal(e, ENOSPC);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain_stderr),
        cmocka_unit_test(test_plain_stderr_utf8),
        cmocka_unit_test(test_wrap_last_line),
        cmocka_unit_test(test_wrap_write_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
