/* The HTML card shows why: on the H200 pair with GPU 1's link trained down
 * to x8 (tests/data/topo/h200x2-trained-down.topo), the failing identity field
 * sits at the top of the card, highlighted, before the card's rows; the
 * health table's row of GPU 1 names the cause (the link's width) and GPU 0's
 * names none. On the 8 x RTX PRO 6000 machine, every host subset says why it
 * was measured and is listed once (the placement step's sets are not
 * subsets). No number in the card is in exponent notation. */
#include <ctype.h>

#include "card_util.h"
#include "../unit/xmlcheck.h"

static card_run down, pro;

static int setup(void **state)
{
    (void)state;
    card_args a = {.machine = GQ_TEST_DATA "/data/topo/h200x2-trained-down.topo", .noise = -1, .stress_s = 5};
    down = cu_run(&a);
    card_args b = {.machine = "rtxpro6000x8", .noise = -1, .stress_s = 5};
    pro = cu_run(&b);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    json_decref(down.doc);
    json_decref(pro.doc);
    return 0;
}

/* The text of the element starting at the tag that contains needle, up to
 * the end tag `end` after it, as a new string. */
static char *element(const char *html, const char *needle, const char *end)
{
    const char *p = strstr(html, needle);
    if (!p)
        return NULL;
    const char *q = strstr(p, end);
    if (!q)
        return NULL;
    return strndup(p, (size_t)(q - p));
}

/* A number in exponent notation ("3e-05", "1.5e+09"): digits and dots then
 * e, a sign and a digit, the digits not being the tail of a word or of a hex
 * string such as a UUID ("d3a0930e-39a4"). */
static const char *exponent_in(const char *s)
{
    for (const char *p = s; *p; p++) {
        if ((p[0] != 'e' && p[0] != 'E') || (p[1] != '-' && p[1] != '+') || p[2] < '0' || p[2] > '9')
            continue;
        const char *b = p;
        bool digit = false;
        while (b > s && ((b[-1] >= '0' && b[-1] <= '9') || b[-1] == '.')) {
            digit |= b[-1] != '.';
            b--;
        }
        bool word = b > s && (isalnum((unsigned char)b[-1]) || b[-1] == '-' || b[-1] == '_');
        if (digit && !word)
            return b;
    }
    return NULL;
}

static void test_identity_on_top(void **state)
{
    (void)state;
    char *html = cu_render(&down, gq_test_render_html);
    char why[256] = "";
    if (xml_check(html, why, sizeof why))
        fail_msg("card.html is not well formed: %s", why);
    const char *alert = strstr(html, "<div class=\"alert\" id=\"identity-problems\">");
    const char *rows = strstr(html, "<h2 id=\"card\">");
    const char *table = strstr(html, "<h2 id=\"identity\">");
    assert_non_null(alert);
    assert_non_null(rows);
    assert_non_null(table);
    assert_true(alert < rows && rows < table);
    char *box = element(alert, "<div", "</div>");
    assert_non_null(box);
    assert_non_null(strstr(box, "data-check=\"link_width\""));
    assert_non_null(strstr(box, "GPU 1: PCIe x8 under load, the link can do x16."));
    assert_non_null(strstr(box, "<td class=\"lead\">GPU 1</td><td data-l=\"field\">PCIe link width</td><td "
                                "data-l=\"found\">8 lanes</td><td data-l=\"expected\">16 lanes</td>"));
    assert_null(strstr(box, "GPU 0")); /* GPU 0's link is fine */
    /* only identity fields: the measurement checks of that step are not in the box */
    assert_null(strstr(box, "data-check=\"impossible\""));
    assert_null(strstr(box, "data-check=\"overlap\""));
    free(box);
    /* the identity table highlights GPU 1's row, not GPU 0's */
    char *idt = element(table, "<table>", "</table>");
    assert_non_null(idt);
    assert_int_equal(count_of(idt, "<tr class=\"bad\">"), 1);
    assert_non_null(strstr(strstr(idt, "<tr class=\"bad\">"), "<td class=\"num\">1</td>"));
    free(idt);
    free(html);
}

static void test_health_cause(void **state)
{
    (void)state;
    char *html = cu_render(&down, gq_test_render_html);
    assert_non_null(strstr(html, "<th>cause</th>"));
    char *r1 = element(html, "<tr data-gpu=\"1\"", "</tr>");
    char *r0 = element(html, "<tr data-gpu=\"0\"", "</tr>");
    assert_non_null(r1);
    assert_non_null(r0);
    assert_non_null(strstr(r1, "data-verdict=\"fail\" class=\"bad\""));
    assert_non_null(
        strstr(r1, "<td class=\"cause\" data-l=\"cause\">GPU 1: PCIe x8 under load, the link can do x16."));
    assert_null(strstr(r0, "class=\"bad\""));
    assert_non_null(strstr(r0, "<td class=\"cause\" data-l=\"cause\">–</td>"));
    free(r1);
    free(r0);
    const char *e = exponent_in(html);
    if (e)
        fail_msg("exponent notation in card.html: %.30s", e);
    free(html);
}

static void test_subsets_once_with_why(void **state)
{
    (void)state;
    const json_t *subs = json_object_get(json_object_get(cu_card(&pro), "host"), "subsets");
    assert_true(json_array_size(subs) >= 4);
    size_t i, j;
    const json_t *s, *o;
    char a[64], b[64];
    json_array_foreach(subs, i, s)
    {
        const json_t *why = json_object_get(s, "why");
        if (!json_is_string(why) || !json_string_length(why))
            fail_msg("subset %s %s has no why", cu_set(json_object_get(s, "gpus"), a, sizeof a),
                     cu_str(s, "direction"));
        json_array_foreach(subs, j, o)
        {
            if (j <= i)
                continue;
            if (!strcmp(cu_set(json_object_get(s, "gpus"), a, sizeof a),
                        cu_set(json_object_get(o, "gpus"), b, sizeof b)) &&
                !strcmp(cu_str(s, "direction"), cu_str(o, "direction")))
                fail_msg("subset %s %s is listed twice", a, cu_str(s, "direction"));
        }
    }
    char *html = cu_render(&pro, gq_test_render_html);
    char *t = element(html, "<h3>Host-path subsets</h3>", "</table>");
    assert_non_null(t);
    assert_non_null(strstr(t, "<th>why this subset</th>"));
    /* one row per GPU set, both directions in it */
    assert_int_equal(count_of(t, "<td>0,1,2,3</td>"), 1);
    assert_int_equal(count_of(t, "<td>0,1</td><td>pair inside "), 1);
    assert_int_equal(count_of(t, "<tr>") + count_of(t, "<tr class=\"slow\">"),
                     1 + (int)json_array_size(subs) / 2);
    /* the slow subsets are highlighted: GPUs 0,1 share a host path (contended), GPUs 0,2 do not */
    assert_int_equal(count_of(t, "<tr class=\"slow\"><td>0,1</td>"), 1);
    assert_int_equal(count_of(t, "<tr><td>0,2</td>"), 1);
    assert_non_null(strstr(t, "% of alone)</td>"));
    assert_null(strstr(t, "<td></td>"));
    free(t);
    const char *e = exponent_in(html);
    if (e)
        fail_msg("exponent notation in card.html: %.30s", e);
    free(html);
}

/* A card saved by an older gpuqual: no reasons, and a set listed twice (the
 * placement step's sets were listed as subsets). Each set still shows once,
 * and the reason cell says it was not recorded instead of staying empty. */
static void test_subsets_older_card(void **state)
{
    (void)state;
    card_run old = {.doc = json_deep_copy(pro.doc)};
    json_t *subs = json_object_get(json_object_get(json_object_get(old.doc, "card"), "host"), "subsets");
    size_t n = json_array_size(subs), i;
    json_t *s;
    json_array_foreach(subs, i, s) json_object_del(s, "why");
    json_array_append_new(subs, json_deep_copy(json_array_get(subs, n - 1)));
    char *html = cu_render(&old, gq_test_render_html);
    char *t = element(html, "<h3>Host-path subsets</h3>", "</table>");
    assert_non_null(t);
    assert_int_equal(count_of(t, "<tr>") + count_of(t, "<tr class=\"slow\">"), 1 + (int)n / 2);
    assert_int_equal(count_of(t, "<td>not recorded</td>"), (int)n / 2);
    free(t);
    free(html);
    json_decref(old.doc);
}

/* With the pair matrix cut by the budget, no domains are measured: the run
 * plans its subsets from the tree (on the A100 machine, its PCIe switches and
 * NUMA nodes), and the card still says why it measured each. */
static void test_subsets_why_without_matrix(void **state)
{
    (void)state;
    card_args a = {.machine = "a100x6", .noise = -1, .cut_step = GQ_CS_MATRIX + 1};
    card_run r = cu_run(&a);
    const json_t *subs = json_object_get(json_object_get(cu_card(&r), "host"), "subsets");
    assert_true(json_array_size(subs) >= 2);
    size_t i;
    const json_t *s;
    char b[64];
    json_array_foreach(subs, i, s)
    {
        if (!json_is_string(json_object_get(s, "why")))
            fail_msg("subset %s %s has no why", cu_set(json_object_get(s, "gpus"), b, sizeof b),
                     cu_str(s, "direction"));
    }
    json_decref(r.doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_identity_on_top),
        cmocka_unit_test(test_health_cause),
        cmocka_unit_test(test_subsets_once_with_why),
        cmocka_unit_test(test_subsets_older_card),
        cmocka_unit_test(test_subsets_why_without_matrix),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
