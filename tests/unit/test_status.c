/* Status codes (core/status.h): each one's short name, which becomes a
 * failed measurement's error text when the backend gave none, and its exit
 * code as the comments in status.h give it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "core/status.h"

static void names_and_exit_codes(void **state)
{
    (void)state;
    static const struct {
        int status;
        const char *name;
        int exit;
    } s[] = {
        {GQ_OK, "ok", 0},
        {GQ_E_FAIL, "failed", 1},
        {GQ_E_USAGE, "usage", 2},
        {GQ_E_NODEV, "no-device", 3},
        {GQ_E_IO, "io", 2},
        {GQ_E_NOMEM, "no-memory", 1},
        {GQ_E_BACKEND, "backend", 1},
        {GQ_E_INTR, "interrupted", 130},
        {GQ_E_UNSUPP, "unsupported", 1},
        {GQ_E_BUSY, "busy", 6},
        {GQ_E_NOLIB, "no-library", 7},
    };
    for (size_t i = 0; i < sizeof s / sizeof s[0]; i++) {
        if (strcmp(gq_status_name(s[i].status), s[i].name))
            fail_msg("status %d: name '%s', want '%s'", s[i].status, gq_status_name(s[i].status), s[i].name);
        if (gq_status_exit_code(s[i].status) != s[i].exit)
            fail_msg("status %s: exit %d, want %d", s[i].name, gq_status_exit_code(s[i].status), s[i].exit);
    }
    assert_string_equal(gq_status_name(-99), "error");
    assert_string_equal(gq_status_name(1), "error");
}

/* gq_err_set returns its code and writes one line, control characters made spaces. */
static void err_one_line(void **state)
{
    (void)state;
    gq_err e = {0};
    assert_int_equal(gq_err_set(&e, GQ_E_USAGE, "bad %s\nvalue\t%d", "x", 3), GQ_E_USAGE);
    assert_int_equal(e.code, GQ_E_USAGE);
    assert_null(strchr(e.msg, '\n'));
    assert_null(strchr(e.msg, '\t'));
    assert_non_null(strstr(e.msg, "bad x"));
    assert_int_equal(gq_err_prefix(&e, "ctx %d", 7), GQ_E_USAGE);
    assert_true(strncmp(e.msg, "ctx 7: bad x", 12) == 0);
    assert_int_equal(gq_err_set(NULL, GQ_E_IO, "nobody"), GQ_E_IO);
}

/* A message longer than gq_err's buffer (512 bytes with its NUL) ends at a
 * word with "...": 511 characters fit whole; 512 and more are cut after the
 * last whole word that leaves room for "...". */
static void err_long_message_ends_at_word(void **state)
{
    (void)state;
    char text[1200];
    gq_err e = {0};
    /* 511 characters: "w0000 w0001 ... " ends exactly at the buffer's last byte */
    size_t n = 0;
    for (int i = 0; n + 6 < sizeof text; i++)
        n += (size_t)snprintf(text + n, sizeof text - n, "w%04d ", i);
    char fit[512];
    memcpy(fit, text, 510);
    fit[510] = 'x';
    fit[511] = 0;
    assert_int_equal(gq_err_set(&e, GQ_E_USAGE, "%s", fit), GQ_E_USAGE);
    assert_int_equal(strlen(e.msg), 511);
    assert_string_equal(e.msg, fit);
    /* one character more does not fit: cut at a word, "..." added */
    char over[513];
    memcpy(over, text, 511);
    over[511] = 'y';
    over[512] = 0;
    static const size_t lens[] = {512, 513, 1000};
    for (size_t k = 0; k < sizeof lens / sizeof lens[0]; k++) {
        const char *src = lens[k] == 512 ? over : text;
        char m[1200];
        snprintf(m, sizeof m, "%.*s", (int)lens[k], src);
        memset(&e, 0, sizeof e);
        gq_err_set(&e, GQ_E_USAGE, "%s", m);
        size_t l = strlen(e.msg);
        if (l < 4 || strcmp(e.msg + l - 3, "..."))
            fail_msg("%zu characters: the message does not end with \"...\": '%s'", lens[k], e.msg + l - 10);
        assert_true(l <= 511);
        /* what is kept is the message's start, whole words "wNNNN" only */
        size_t kept = l - 3;
        assert_memory_equal(e.msg, m, kept);
        assert_true(kept % 6 == 5);
        assert_true(m[kept] == ' ');
        /* and it is the longest such start that leaves room for "..." */
        assert_true(kept + 6 + 4 > sizeof e.msg);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(names_and_exit_codes),
        cmocka_unit_test(err_one_line),
        cmocka_unit_test(err_long_message_ends_at_word),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
