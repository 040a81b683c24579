/* The card renderers on a saved card with its optional parts taken out, and
 * with more problems than the summary lists: each section without its data
 * is left out whole (no empty heading), a table cell keeps a '|' and a new
 * line from breaking the Markdown row, and the summary names how many
 * problems it did not list. Written for issue 30 (lines no test ran). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "../card_render_doc.h"

#define CARD GQ_SOURCE_DIR "/bench/results/h200x2-session-2026-11-30/card/card.json"

enum { MD, HTML, SUMMARY };

static char *render(const json_t *doc, int how)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    gq_err e = {0};
    int rc = how == MD     ? gq_test_render_markdown(f, doc, &e)
             : how == HTML ? gq_test_render_html(f, doc, &e)
                           : gq_test_render_summary(f, doc, 100, &e);
    if (rc)
        fail_msg("%s", e.msg);
    fclose(f);
    return buf;
}

static json_t *load(void)
{
    json_error_t je;
    json_t *doc = json_load_file(CARD, 0, &je);
    if (!doc)
        fail_msg("%s", je.text);
    return doc;
}

static void bare_card(void **state)
{
    (void)state;
    json_t *doc = load();
    json_t *card = json_object_get(doc, "card");
    /* with its parts, the sections are there */
    char *md = render(doc, MD), *html = render(doc, HTML);
    static const char *const md_heads[] = {"\n## Checks\n", "\n## Identity and links\n",
                                           "\n## Host-memory traffic\n", "\n## Plan\n",
                                           "\n## Performance domains and shared bottlenecks\n"};
    static const char *const html_heads[] = {"<h2 id=\"identity\">", "<h2 id=\"plan\">",
                                             "<h2 id=\"stress\">"};
    for (int i = 0; i < 5; i++)
        if (!strstr(md, md_heads[i]))
            fail_msg("the full card's Markdown has no '%s'", md_heads[i]);
    for (int i = 0; i < 3; i++)
        if (!strstr(html, html_heads[i]))
            fail_msg("the full card's HTML has no '%s'", html_heads[i]);
    free(md);
    free(html);
    static const char *const parts[] = {"identity", "host", "pairs", "domains"};
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        json_object_del(card, parts[i]);
    json_object_set_new(card, "checks", json_array());
    json_object_set_new(card, "plan", json_array());
    json_object_del(doc, "stress");
    json_object_del(doc, "domains");
    json_object_del(doc, "bottlenecks");
    md = render(doc, MD);
    html = render(doc, HTML);
    for (int i = 0; i < 5; i++)
        if (strstr(md, md_heads[i]))
            fail_msg("the bare card's Markdown has '%s'", md_heads[i]);
    for (int i = 0; i < 3; i++)
        if (strstr(html, html_heads[i]))
            fail_msg("the bare card's HTML has '%s'", html_heads[i]);
    assert_non_null(strstr(md, "# Acceptance card: "));
    free(md);
    free(html);
    json_decref(doc);
}

/* Ten problems: the summary lists eight and says how many more; a check's
 * text with '|' and a new line stays in its Markdown cell. */
static void many_problems(void **state)
{
    (void)state;
    json_t *doc = load();
    json_t *checks = json_object_get(json_object_get(doc, "card"), "checks");
    for (size_t i = 0; i < 10; i++) {
        json_t *c = json_array_get(checks, i);
        json_object_set_new(c, "verdict", json_string(i % 2 ? "warn" : "fail"));
        char text[64];
        snprintf(text, sizeof text, "problem %zu", i);
        json_object_set_new(c, "text", json_string(text));
    }
    json_object_set_new(json_array_get(checks, 0), "text", json_string("a|b\nc"));
    char *sum = render(doc, SUMMARY);
    if (!strstr(sum, "problems:\n") || !strstr(sum, "problem 7") || strstr(sum, "problem 8") ||
        !strstr(sum, "  ... and 2 more (see the card)\n"))
        fail_msg("summary:\n%s", sum);
    free(sum);
    char *md = render(doc, MD);
    assert_non_null(strstr(md, "a\\|b c"));
    free(md);
    json_decref(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bare_card),
        cmocka_unit_test(many_problems),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
