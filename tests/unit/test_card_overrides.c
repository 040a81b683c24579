/* The --set overrides line of a card: 16 overrides of the longest text the
 * card's reader accepts are longer than the line's buffer, and the text is
 * cut at the buffer's end, nothing written past it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "analysis/card.h"
#include "render/card_render.h"

static void fill(char *s, size_t n, char ch)
{
    memset(s, ch, n - 1);
    s[n - 1] = 0;
}

static void test_sixteen_long_overrides_cut(void **state)
{
    (void)state;
    gq_card *c = calloc(1, sizeof *c);
    assert_non_null(c);
    c->noverrides = GQ_EXPECT_MAX_OVERRIDES;
    for (int i = 0; i < c->noverrides; i++) {
        gq_expect_override *o = &c->overrides[i];
        fill(o->spec, sizeof o->spec, (char)('a' + i));
        fill(o->key, sizeof o->key, 'k');
        fill(o->level, sizeof o->level, 'l');
        fill(o->was, sizeof o->was, 'w');
    }
    enum { N = 2400, GUARD = 8192 };
    char *buf = malloc(GUARD);
    assert_non_null(buf);
    memset(buf, '#', GUARD);
    gq_card_overrides_text(c, buf, N);
    assert_int_equal(strlen(buf), N - 1);
    assert_memory_equal(buf, c->overrides[0].spec, sizeof c->overrides[0].spec - 1);
    for (int i = N; i < GUARD; i++)
        if (buf[i] != '#')
            fail_msg("byte %d, past the %d-byte buffer, was written", i, N);
    /* a buffer that holds it all ends with the last override */
    gq_card_overrides_text(c, buf, GUARD);
    assert_true(strlen(buf) > N);
    assert_non_null(strstr(buf, "; pppp"));
    free(buf);
    free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sixteen_long_overrides_cut),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
