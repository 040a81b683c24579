/* The card on seed 001's machine (8 x RTX PRO 6000, simulated): its findings
 * match the seed's conclusions: two performance domains {0-3} and {4-7}, a
 * crossing penalty (four pairs across keep under half of four pairs within),
 * GPUs 0,2,4,6 for KV offload, and the cell layout (two prefill and two
 * decode workers inside each domain, never 0-3 -> 4-7); the host asymmetry with all GPUs active; and its
 * outputs: a self-contained HTML with every figure, Markdown with seed 001 §9's table. */
#include "card_util.h"
#include "../unit/xmlcheck.h"

static card_run run;

static int setup(void **state)
{
    (void)state;
    card_args a = {.machine = "rtxpro6000x8", .noise = -1, .stress_s = 20, .expect = "rtxpro6000x8.expect"};
    run = cu_run(&a);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    json_decref(run.doc);
    return 0;
}

static void test_domains(void **state)
{
    (void)state;
    const json_t *d = json_object_get(run.doc, "domains");
    assert_int_equal(json_array_size(d), 2);
    char b[64];
    assert_string_equal(cu_set(json_array_get(d, 0), b, sizeof b), "0,1,2,3");
    assert_string_equal(cu_set(json_array_get(d, 1), b, sizeof b), "4,5,6,7");
    if (!cu_finding(&run, "2 performance domains", "{0-3}", "{4-7}", NULL)) {
        cu_dump_findings(&run);
        fail_msg("no finding names the two domains");
    }
}

static void test_crossing_penalty(void **state)
{
    (void)state;
    const json_t *p = json_object_get(cu_card(&run), "pairs");
    const json_t *w = json_object_get(p, "within"), *a = json_object_get(p, "across");
    assert_true(json_is_object(w) && json_is_object(a));
    assert_int_equal(json_array_size(json_object_get(w, "pairs")), 4);
    assert_int_equal(json_array_size(json_object_get(a, "pairs")), 4);
    double ratio = cu_num(p, "ratio");
    /* seed 001: 90.95 / 212.24 = 43% */
    assert_true(ratio > 0.3 && ratio < 0.6);
    /* within: each pair keeps about its isolated rate; across: each pair
     * below its isolated rate (a figure per pair, together and alone) */
    static const char *const side[2] = {"within", "across"};
    for (int k = 0; k < 2; k++) {
        const json_t *together = json_object_get(k ? a : w, "gbps");
        const json_t *alone = json_object_get(k ? a : w, "isolated_gbps");
        assert_int_equal(json_array_size(together), 4);
        assert_int_equal(json_array_size(alone), 4);
        for (size_t i = 0; i < 4; i++) {
            double x = cu_num_at(together, i), y = cu_num_at(alone, i);
            if (!(y > 0 && (k ? x < 0.8 * y : x > 0.9 * y)))
                fail_msg("%s pair %zu: %.1f GB/s together, %.1f alone", side[k], i, x, y);
        }
    }
    assert_true(cu_finding(&run, "crossing domains keeps", "within domains", NULL));
}

static void test_offload_and_cells(void **state)
{
    (void)state;
    const json_t *pl = json_object_get(cu_card(&run), "placement");
    assert_true(json_is_object(pl));
    int g[8], n = 0;
    size_t i;
    const json_t *w;
    assert_int_equal(json_array_size(json_object_get(pl, "offload")), 4);
    json_array_foreach(json_object_get(pl, "offload"), i, w) g[n++] = cu_int(w, "gpu");
    assert_int_equal(n, 4);
    for (int k = 1; k < n; k++)
        for (int j = k; j > 0 && g[j - 1] > g[j]; j--) {
            int t = g[j];
            g[j] = g[j - 1];
            g[j - 1] = t;
        }
    assert_int_equal(g[0], 0);
    assert_int_equal(g[1], 2);
    assert_int_equal(g[2], 4);
    assert_int_equal(g[3], 6);
    assert_true(cu_finding(&run, "KV offload", "0,2,4,6", NULL));
    /* Cells (seed 001 §4): each domain holds two prefill and two decode
     * workers and every handoff stays inside its domain, instead of all
     * prefill on 0-3 and all decode on 4-7. Which pairing inside a cell wins
     * is left to the verification ("the exact routing pattern remains to be
     * tested"). */
    const json_t *pairs = json_object_get(pl, "pairs");
    assert_int_equal(json_array_size(pairs), 4);
    int prefill_in[2] = {0, 0}, decode_in[2] = {0, 0};
    json_array_foreach(pairs, i, w)
    {
        int pf = cu_int(w, "prefill"), dc = cu_int(w, "decode");
        assert_true((pf < 4) == (dc < 4)); /* never across the domains */
        prefill_in[pf >= 4]++;
        decode_in[dc >= 4]++;
    }
    assert_int_equal(prefill_in[0], 2);
    assert_int_equal(prefill_in[1], 2);
    assert_int_equal(decode_in[0], 2);
    assert_int_equal(decode_in[1], 2);
    double gain = cu_num(pl, "gain");
    assert_true(gain > 1.5);
    assert_true(cu_finding(&run, "Prefill→decode", "fast path", NULL));
}

static void test_host_asymmetry(void **state)
{
    (void)state;
    /* seed 001 §5: all eight at once, GPUs 0-3 slower than 4-7 in both directions */
    const json_t *all = json_object_get(json_object_get(cu_card(&run), "host"), "all");
    static const char *const dirs[] = {"h2d", "d2h"};
    for (int d = 0; d < 2; d++) {
        const json_t *v = json_object_get(all, dirs[d]);
        assert_int_equal(json_array_size(v), 8);
        double lo = 0, hi = 0;
        for (int k = 0; k < 4; k++) {
            lo += cu_num_at(v, (size_t)k) / 4;
            hi += cu_num_at(v, (size_t)k + 4) / 4;
        }
        assert_true(lo < 0.85 * hi);
    }
    assert_true(cu_finding(&run, "With all 8 GPUs copying", "GPUs 0-3", NULL));
    /* alone, every GPU gets about the same */
    const json_t *alone =
        json_object_get(json_object_get(json_object_get(cu_card(&run), "host"), "alone"), "h2d");
    double mn = 1e9, mx = 0;
    assert_int_equal(json_array_size(alone), 8);
    for (size_t i = 0; i < 8; i++) {
        mn = fmin(mn, cu_num_at(alone, i));
        mx = fmax(mx, cu_num_at(alone, i));
    }
    assert_true(mx > 0 && mn > 0.95 * mx);
}

static void test_verdict_with_expectations(void **state)
{
    (void)state;
    const json_t *c = cu_card(&run);
    assert_string_equal(cu_str(c, "verdict"), "pass");
    assert_int_equal(gq_card_exit_code(c), 0);
    const json_t *ch = cu_check(&run, "p2p_gbps_min", NULL);
    assert_non_null(ch);
    assert_string_equal(cu_str(ch, "verdict"), "pass");
    assert_true(cu_num(ch, "figure") > 35);
    assert_non_null(cu_check(&run, "h2d_gbps_min", "gpu:7"));
    assert_non_null(cu_check(&run, "thermal", "gpu:0"));
    assert_true(json_is_object(json_object_get(c, "expectations")));
    /* the rows of seed 001 §9 are all there, in order */
    static const char *const rows[] = {"Identity and links",
                                       "Pairwise GPU traffic",
                                       "Concurrent GPU traffic",
                                       "Host-memory traffic",
                                       "Transfer granularity",
                                       "Latency",
                                       "Whole-node health",
                                       "Placement",
                                       "Collectives",
                                       "Measurement integrity",
                                       "Application validation"};
    const json_t *rj = json_object_get(c, "rows");
    assert_int_equal(json_array_size(rj), 11);
    for (size_t k = 0; k < 11; k++)
        assert_string_equal(cu_str(json_array_get(rj, k), "check"), rows[k]);
    assert_true(json_is_true(json_object_get(c, "complete")));
}

static void test_outputs(void **state)
{
    (void)state;
    char *html = cu_render(&run, gq_test_render_html);
    char why[256] = "";
    if (xml_check(html, why, sizeof why))
        fail_msg("card.html is not well formed: %s", why);
    static const char *const figs[] = {"p2p_read",    "pairs",        "host",         "sweep", "p2p_latency",
                                       "stress_temp", "stress_power", "stress_clock", NULL};
    for (int k = 0; figs[k]; k++) {
        char needle[64];
        snprintf(needle, sizeof needle, "data-figure=\"%s\"", figs[k]);
        if (!strstr(html, needle))
            fail_msg("figure %s missing", figs[k]);
    }
    /* the latency heatmap is labelled in ns, not GB/s */
    assert_non_null(strstr(html, "GPU\u2194GPU latency, ns."));
    assert_null(strstr(html, "GPU\u2194GPU latency, GB/s"));
    /* self-contained: no scripts, links or remote references */
    assert_null(strstr(html, "<script"));
    assert_null(strstr(html, "<link"));
    assert_int_equal(count_of(html, "http://"), count_of(html, "xmlns=\"http://www.w3.org/2000/svg\""));
    assert_null(strstr(html, "https://"));
    /* the heatmap has 64 cells; pairs 8 bars; host 32 bars */
    const char *p2p = strstr(html, "data-figure=\"p2p_read\"");
    const char *end = strstr(p2p, "</svg>");
    int cells = 0;
    for (const char *q = strstr(p2p, "gq-cell"); q && q < end; q = strstr(q + 1, "gq-cell"))
        cells++;
    assert_int_equal(cells, 64);
    free(html);
    char *md = cu_render(&run, gq_test_render_markdown);
    assert_non_null(strstr(md, "| Check | Evidence | Result | Verdict | Decision it supports |"));
    assert_non_null(strstr(md, "| Pairwise GPU traffic |"));
    assert_non_null(strstr(md, "## Findings"));
    assert_non_null(strstr(md, "**Verdict: PASS**"));
    free(md);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_domains),
        cmocka_unit_test(test_crossing_penalty),
        cmocka_unit_test(test_offload_and_cells),
        cmocka_unit_test(test_host_asymmetry),
        cmocka_unit_test(test_verdict_with_expectations),
        cmocka_unit_test(test_outputs),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
