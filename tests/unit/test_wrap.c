/* render/wrap.h: text wrapped at spaces, never inside a word or number. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render/wrap.h"

static char *wrapped(const char *s, int width, int hang)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    assert_non_null(f);
    gq_wrap_line(f, s, strlen(s), width, hang);
    fclose(f);
    return buf;
}

static void test_short_line_unchanged(void **state)
{
    (void)state;
    char *o = wrapped("  all at once 51.2 / 53.2 GB/s", 40, 4);
    assert_string_equal(o, "  all at once 51.2 / 53.2 GB/s\n");
    free(o);
}

static void test_breaks_at_spaces_with_hang(void **state)
{
    (void)state;
    char *o = wrapped("alone 25.3 / 26.3 GB/s; all at once 51.2 / 53.2 GB/s", 24, 2);
    assert_string_equal(o, "alone 25.3 / 26.3 GB/s;\n  all at once 51.2 /\n  53.2 GB/s\n");
    free(o);
    /* exactly the width fits; leading spaces count */
    o = wrapped("   abc def", 10, 3);
    assert_string_equal(o, "   abc def\n");
    free(o);
    o = wrapped("   abc defg", 10, 3);
    assert_string_equal(o, "   abc\n   defg\n");
    free(o);
}

static void test_columns_are_code_points(void **state)
{
    (void)state;
    /* 11 code points, 16 bytes: fits 11 columns */
    char *o = wrapped("3.00 µs → µ", 11, 0);
    assert_string_equal(o, "3.00 µs → µ\n");
    free(o);
    assert_int_equal(gq_text_cols("°C→", strlen("°C→")), 3);
}

static void test_long_word_stays_whole(void **state)
{
    (void)state;
    char *o = wrapped("see 0123456789012345 here", 8, 2);
    assert_string_equal(o, "see\n  0123456789012345\n  here\n");
    free(o);
}

static void test_breaks_after_commas_in_lists(void **state)
{
    (void)state;
    char *o = wrapped("formats [table,json,csv,markdown]", 24, 2);
    assert_string_equal(o, "formats [table,json,csv,\n  markdown]\n");
    free(o);
    /* never inside a number */
    o = wrapped("moved 1,024,000 bytes", 10, 0);
    assert_string_equal(o, "moved\n1,024,000\nbytes\n");
    free(o);
    /* a list of GPU pairs breaks after a comma */
    o = wrapped("pairs 0:1,2:3,4:5,6:7", 12, 2);
    assert_string_equal(o, "pairs 0:1,\n  2:3,4:5,\n  6:7\n");
    free(o);
}

static void test_hang(void **state)
{
    (void)state;
    const char *l = "host_to_device_memcpy_ce     host -> each GPU";
    assert_int_equal(gq_wrap_hang(l, strlen(l), 100), 29);
    l = "- finding text";
    assert_int_equal(gq_wrap_hang(l, strlen(l), 100), 2);
    l = "    plain prose without columns";
    assert_int_equal(gq_wrap_hang(l, strlen(l), 100), 6);
    /* a second column right of the middle does not hang */
    l = "a                                                              b";
    assert_int_equal(gq_wrap_hang(l, strlen(l), 100), 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_short_line_unchanged),
        cmocka_unit_test(test_breaks_at_spaces_with_hang),
        cmocka_unit_test(test_columns_are_code_points),
        cmocka_unit_test(test_long_word_stays_whole),
        cmocka_unit_test(test_breaks_after_commas_in_lists),
        cmocka_unit_test(test_hang),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
