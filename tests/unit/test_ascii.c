/* core/ascii.h: the symbols gpuqual prints in ASCII, anything else "?", a
 * cut sequence reported as such, and the locale's answer forced for tests. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "core/ascii.h"

static void test_text(void **state)
{
    (void)state;
    char out[128];
    const char *s = "GPU 0 → GPU 2: 2.00 µs, 59 °C, 8 × 2, 54.5–54.9 — ok… ↔ ½ 日";
    size_t n = gq_ascii_text(s, strlen(s), out, sizeof out);
    assert_string_equal(out, "GPU 0 -> GPU 2: 2.00 us, 59 degC, 8 x 2, 54.5-54.9 - ok... <-> 1/2 ?");
    assert_int_equal(n, strlen(out));
    for (const char *p = out; *p; p++)
        assert_true((unsigned char)*p < 0x80);
    /* the length a text needs, as snprintf, and a cut buffer stays terminated */
    char small[8];
    assert_int_equal(gq_ascii_text("→→→→", strlen("→→→→"), small, sizeof small), 8);
    assert_string_equal(small, "->->->-");
    /* a sequence cut at the end: "?" */
    assert_int_equal(gq_ascii_text("a\xe2\x86", 3, out, sizeof out), 2);
    assert_string_equal(out, "a?");
}

static void test_of(void **state)
{
    (void)state;
    size_t used;
    assert_string_equal(gq_ascii_of("→x", strlen("→x"), &used), "->");
    assert_int_equal(used, 3);
    gq_ascii_of("\xe2\x86", 2, &used); /* needs its third byte */
    assert_int_equal(used, 0);
    assert_string_equal(gq_ascii_of("\x80", 1, &used), "?"); /* a stray continuation byte */
    assert_int_equal(used, 1);
    /* a 4-byte sequence (an emoji) is one symbol, one "?" */
    assert_string_equal(gq_ascii_of("\xf0\x9f\x98\x80x", 5, &used), "?");
    assert_int_equal(used, 4);
    char out[16];
    assert_int_equal(gq_ascii_text("a\xf0\x9f\x98\x80!", 6, out, sizeof out), 3);
    assert_string_equal(out, "a?!");
}

static void test_force(void **state)
{
    (void)state;
    gq_ascii_force(1);
    assert_true(gq_ascii_locale());
    gq_ascii_force(0);
    assert_false(gq_ascii_locale());
    gq_ascii_force(-1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_text),
        cmocka_unit_test(test_of),
        cmocka_unit_test(test_force),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
