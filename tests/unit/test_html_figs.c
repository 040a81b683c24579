/* The card page's figure captions (src/render/html_figs.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "../card_render_doc.h"

static char *render_html(const json_t *doc)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    gq_err e = {0};
    if (gq_test_render_html(f, doc, &e))
        fail_msg("%s", e.msg);
    fclose(f);
    return buf;
}

/* A matrix figure's caption is its title, its unit and what a cell means.
 * A title is taken as the saved card gives it; a caption that does not
 * fit the caption's 400-byte buffer keeps its first 399 bytes (and no
 * more: the figure after it is whole). */
static void test_html_caption_long_title(void **state)
{
    (void)state;
    json_error_t je;
    json_t *doc =
        json_load_file(GQ_SOURCE_DIR "/bench/results/h200x2-session-2026-11-30/card/card.json", 0, &je);
    if (!doc)
        fail_msg("%s", je.text);
    json_t *m = json_array_get(json_object_get(json_object_get(doc, "card"), "matrices"), 0);
    assert_non_null(m);
    const char *id = json_string_value(json_object_get(m, "id"));
    assert_non_null(id);
    char open[96];
    snprintf(open, sizeof open, "<figure id=\"fig-%s\">", id);
    static const int lens[] = {100, 350};
    for (int t = 0; t < 2; t++) {
        char title[400];
        memset(title, 'T', (size_t)lens[t]);
        title[lens[t]] = 0;
        json_object_set_new(m, "title", json_string(title));
        char *buf = render_html(doc);
        const char *fig = strstr(buf, open);
        assert_non_null(fig);
        const char *cap = strstr(fig, "<figcaption>");
        assert_non_null(cap);
        cap += strlen("<figcaption>");
        const char *end = strstr(cap, "</figcaption>");
        assert_non_null(end);
        size_t n = (size_t)(end - cap);
        assert_memory_equal(cap, title, (size_t)lens[t]);
        assert_memory_equal(cap + lens[t], ", GB/s. Row: source GPU", 23);
        if (t == 0)
            assert_memory_equal(end - 8, "at once.", 8);
        else
            assert_int_equal(n, 399);
        free(buf);
    }
    json_decref(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_html_caption_long_title),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
