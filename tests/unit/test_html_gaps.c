/* The HTML card on a saved card edited to reach what no other test reaches:
 * an identity problem about a model or the node (not one GPU), a host-path
 * subset measured in one direction only, a stressed GPU that no check names
 * (its cause is the stress result's own error), and a GPU whose failing
 * checks say more than the cause cell holds, concurrent pairs measured
 * across domains only. Written for issue 30 (lines no test ran). */
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

static char *render(const json_t *doc)
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

static json_t *load(void)
{
    json_error_t je;
    json_t *doc = json_load_file(CARD, 0, &je);
    if (!doc)
        fail_msg("%s", je.text);
    return doc;
}

static void add_check(json_t *card, const char *id, const char *subject, const char *verdict,
                      const char *text)
{
    json_array_append_new(json_object_get(card, "checks"),
                          json_pack("{s:s, s:s, s:s, s:s, s:f, s:f, s:s, s:s}", "id", id, "subject", subject,
                                    "source", "expect", "verdict", verdict, "figure", 1.0, "threshold", 2.0,
                                    "unit", "GPUs", "text", text));
}

/* The part of html from the first 'from' to the next 'to' after it. */
static char *between(const char *html, const char *from, const char *to)
{
    const char *a = strstr(html, from);
    if (!a)
        fail_msg("no '%s' in the HTML", from);
    const char *b = strstr(a, to);
    if (!b)
        fail_msg("no '%s' after '%s'", to, from);
    size_t n = (size_t)(b - a);
    char *s = malloc(n + 1);
    assert_non_null(s);
    memcpy(s, a, n);
    s[n] = 0;
    return s;
}

/* An identity problem about a model reads "every <model>"; one about the
 * node keeps its subject as it is; one about a GPU reads "GPU <n>". */
static void identity_subjects(void **state)
{
    (void)state;
    json_t *doc = load();
    json_t *card = json_object_get(doc, "card");
    add_check(card, "expect_model_unmatched", "model:H100", "fail", "No GPU matches 'H100'.");
    add_check(card, "count_min", "node", "warn", "Fewer GPUs than expected.");
    add_check(card, "vbios", "gpu:1", "fail", "GPU 1 VBIOS differs.");
    char *html = render(doc);
    char *alert = between(html, "id=\"identity-problems\"", "</div>");
    static const char *const want[] = {
        "data-check=\"expect_model_unmatched\"><td class=\"v\">",
        ">every H100</td>",
        ">node</td>",
        ">GPU 1</td>",
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        if (!strstr(alert, want[i]))
            fail_msg("the identity alert has no '%s':\n%s", want[i], alert);
    if (strstr(alert, "model:H100") || strstr(alert, ">gpu:1<"))
        fail_msg("the identity alert shows a raw subject:\n%s", alert);
    /* the failing one is listed before the warning one */
    if (strstr(alert, ">node</td>") < strstr(alert, ">every H100</td>"))
        fail_msg("the warning is listed before the failure:\n%s", alert);
    free(alert);
    free(html);
    json_decref(doc);
}

/* A subset measured host→GPU only: its GPU→host cells are dashes, not
 * figures of another subset. */
static void subset_one_direction(void **state)
{
    (void)state;
    json_t *doc = load();
    json_t *host = json_object_get(json_object_get(doc, "card"), "host");
    json_object_set_new(host, "subsets",
                        json_pack("[{s:[i,i], s:s, s:s, s:[f,f], s:f, s:f, s:b}]", "gpus", 0, 1, "direction",
                                  "h2d", "why", "share a switch", "per_gpu", 21.5, 22.5, "aggregate_gbps",
                                  44.0, "sum_alone_gbps", 90.0, "contended", 1));
    char *html = render(doc);
    char *t = between(html, "<h3>Host-path subsets</h3>", "</table>");
    const char *want = "<tr class=\"slow\"><td>0,1</td><td>share a switch</td><td>21.5, 22.5</td>"
                       "<td class=\"num slow\">44 (49% of alone)</td><td>–</td><td class=\"num\">–</td></tr>";
    if (!strstr(t, want))
        fail_msg("the subsets table has no '%s':\n%s", want, t);
    free(t);
    free(html);
    json_decref(doc);
}

/* A stressed GPU that failed and that no check names: its cause cell is the
 * stress result's own error. */
static void stress_cause_from_error(void **state)
{
    (void)state;
    json_t *doc = load();
    json_t *g1 = json_array_get(json_object_get(json_object_get(doc, "stress"), "gpus"), 1);
    json_object_set_new(g1, "verdict", json_string("fail"));
    json_object_set_new(g1, "error", json_string("the GPU fell off the bus"));
    char *html = render(doc);
    char *row = between(html, "<tr data-gpu=\"1\"", "</tr>");
    if (!strstr(row, "data-verdict=\"fail\" class=\"bad\"") ||
        !strstr(row, "<td class=\"cause\" data-l=\"cause\">the GPU fell off the bus</td>"))
        fail_msg("GPU 1's stress row does not give its error as the cause:\n%s", row);
    free(row);
    row = between(html, "<tr data-gpu=\"0\"", "</tr>");
    if (!strstr(row, "data-l=\"cause\">–</td>"))
        fail_msg("GPU 0 (passed) has a cause:\n%s", row);
    free(row);
    free(html);
    json_decref(doc);
}

/* A GPU whose stress verdict is warn, or fail, with no error and no check
 * naming it, is still marked bad (mutation round 9, html.c:402). */
static void stress_verdict_alone_marks_bad(void **state)
{
    (void)state;
    const char *verdicts[] = {"warn", "fail"};
    for (int i = 0; i < 2; i++) {
        json_t *doc = load();
        json_t *g1 = json_array_get(json_object_get(json_object_get(doc, "stress"), "gpus"), 1);
        json_object_set_new(g1, "verdict", json_string(verdicts[i]));
        json_object_del(g1, "error");
        char *html = render(doc);
        char *row = between(html, "<tr data-gpu=\"1\"", "</tr>");
        char want[64];
        snprintf(want, sizeof want, "data-verdict=\"%s\" class=\"bad\"", verdicts[i]);
        if (!strstr(row, want))
            fail_msg("GPU 1 (stress %s, no cause) is not marked bad:\n%s", verdicts[i], row);
        free(row);
        free(html);
        json_decref(doc);
    }
}

/* Failing checks on one GPU that say more than the cause cell (1023
 * characters) holds: the cell keeps those that fit and stops at the first
 * that does not, with no later check's text written over it. */
static void stress_cause_overflow(void **state)
{
    (void)state;
    json_t *doc = load();
    json_t *card = json_object_get(doc, "card");
    char text[301];
    for (int i = 0; i < 4; i++) {
        memset(text, 'a' + i, 300);
        text[300] = 0;
        add_check(card, "stress_clock", "gpu:0", "fail", text);
    }
    add_check(card, "stress_clock", "gpu:0", "fail", "LAST");
    char *html = render(doc);
    char *row = between(html, "<tr data-gpu=\"0\"", "</tr>");
    char *cause = between(row, "data-l=\"cause\">", "</td>");
    const char *c = cause + strlen("data-l=\"cause\">");
    if (strlen(c) != 1023)
        fail_msg("the cause has %zu characters, not 1023: %s", strlen(c), c);
    if (c[0] != 'a' || c[300] != ' ' || c[301] != 'b' || c[903] != 'd' || c[1022] != 'd')
        fail_msg("the cause is not the checks' texts in order: %s", c);
    if (strstr(c, "LAST"))
        fail_msg("a check after the one that did not fit is in the cause: %s", c);
    free(cause);
    free(row);
    free(html);
    json_decref(doc);
}

/* Concurrent pairs measured across domains only: no within figure in the
 * caption (a dash, not 0). */
static void pairs_across_only(void **state)
{
    (void)state;
    json_t *doc = load();
    json_object_set_new(json_object_get(doc, "card"), "pairs",
                        json_pack("{s:{s:[[i,i]], s:[f], s:f}}", "across", "pairs", 0, 1, "gbps", 20.5,
                                  "aggregate_gbps", 20.5));
    char *html = render(doc);
    char *cap = between(html, "Every pair of one placement ran at the same time.", "</figcaption>");
    if (strcmp(cap,
               "Every pair of one placement ran at the same time. Aggregate within domains – GB/s, across "
               "20.5 GB/s."))
        fail_msg("the pairs figure's caption is '%s'", cap);
    free(cap);
    free(html);
    json_decref(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(identity_subjects),       cmocka_unit_test(subset_one_direction),
        cmocka_unit_test(stress_cause_from_error), cmocka_unit_test(stress_verdict_alone_marks_bad),
        cmocka_unit_test(stress_cause_overflow),   cmocka_unit_test(pairs_across_only),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
