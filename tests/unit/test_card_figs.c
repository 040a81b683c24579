/* The card document decoded for its renderers (src/doc/card_figs_json.c):
 * a field missing or of the wrong type reads as the renderers read it from
 * the JSON (NAN, NULL, false, no entries), an entry that is not an object as
 * one with every field missing, a list past its bound is cut there, and a
 * string is kept whole however long. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "doc/card_figs.h"
#include "render/card_render.h"

static json_t *load(void)
{
    json_error_t je;
    json_t *doc =
        json_load_file(GQ_SOURCE_DIR "/bench/results/h200x2-session-2026-11-30/card/card.json", 0, &je);
    if (!doc)
        fail_msg("%s", je.text);
    return doc;
}

static json_t *sec(json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    if (!v)
        fail_msg("no '%s'", k);
    return v;
}

static gq_card_doc *decode(const json_t *doc)
{
    gq_card_doc *d = NULL;
    gq_err e = {0};
    if (gq_card_doc_from_json(doc, &d, &e))
        fail_msg("%s", e.msg);
    assert_non_null(d);
    return d;
}

/* The saved card as it is: the fields read typed, as written. */
static void test_reads_saved_card(void **state)
{
    (void)state;
    json_t *doc = load();
    gq_card_doc *d = decode(doc);
    json_t *card = sec(doc, "card");
    assert_string_equal(d->hostname, json_string_value(sec(card, "hostname")));
    assert_string_equal(d->version, json_string_value(sec(doc, "version")));
    assert_true(d->simulated == json_is_true(sec(doc, "simulated")));
    assert_int_equal(d->nplan, (int)json_array_size(sec(card, "plan")));
    assert_int_equal(d->identity.ngpus, 2);
    assert_true(d->identity.present);
    assert_int_equal(d->nmatrices, (int)json_array_size(sec(card, "matrices")));
    assert_int_equal(d->matrices[0].n, 2);
    assert_true(isnan(d->matrices[0].vals[0]) || d->matrices[0].vals[0] >= 0);
    assert_true(d->stress.present);
    assert_int_equal(d->stress.ngpus, 2);
    assert_int_equal(d->stress.nseries, 2);
    assert_true(d->stress.series[0].t_s.n > 0);
    assert_true(d->host.present);
    assert_int_equal(d->host.gpus.n, 2);
    gq_card_doc_free(d);
    json_decref(doc);
}

/* Missing and wrongly typed fields read as the fallbacks. */
static void test_missing_and_wrong_types(void **state)
{
    (void)state;
    json_t *doc = load();
    json_t *card = sec(doc, "card");
    json_object_del(card, "hostname");                          /* missing string: NULL */
    json_object_set_new(card, "stopped_at", json_integer(3));   /* a number for a string: NULL */
    json_object_set_new(card, "budget_s", json_string("600"));  /* a string for a number: NAN */
    json_object_set_new(doc, "simulated", json_string("true")); /* only true is true */
    json_t *g0 = json_array_get(sec(sec(card, "identity"), "gpus"), 0);
    json_object_set_new(g0, "name", json_integer(5));
    json_object_set_new(g0, "index", json_real(1.0));           /* a number, not an integer */
    json_array_set_new(sec(card, "plan"), 0, json_integer(42)); /* an entry not an object */
    json_t *hg = sec(sec(card, "host"), "gpus");
    json_array_set_new(hg, 1, json_string("one"));
    json_t *sw = json_array_get(sec(card, "sweeps"), 0);
    json_object_set_new(sw, "bytes", json_string("not a list"));
    json_object_set_new(sw, "gbps", json_pack("[i, n, s]", 7, "x"));
    json_t *m = json_array_get(sec(card, "matrices"), 0);
    json_array_set_new(sec(m, "values"), 1, json_pack("[i]", 1)); /* a short row: no matrix */
    json_t *st = sec(doc, "stress");
    json_t *sg = json_array_get(sec(st, "gpus"), 0);
    json_object_set_new(sg, "temp_avg_c", json_string("hot"));
    json_object_set_new(sg, "thermal_slowdown", json_string("yes"));
    json_object_del(st, "node");
    json_object_set_new(
        card, "pairs",
        json_pack("{s:{s:b, s:[[i,i],[s,i]]}, s:{}}", "within", "valid", 0, "pairs", 0, 1, "a", 3, "across"));
    json_object_set_new(card, "placement",
                        json_pack("{s:[{s:i},i,{s:s}], s:{s:f}, s:[s,i]}", "offload", "gpu", 3, 5, "gpu", "x",
                                  "gain", "pairs", 1.5, "notes", "a note", 7));
    gq_card_doc *d = decode(doc);
    assert_null(d->hostname);
    assert_null(d->stopped_at);
    assert_true(isnan(d->budget_s));
    assert_false(d->simulated);
    assert_null(d->identity.gpus[0].name);
    assert_int_equal(d->identity.gpus[0].index, 0);
    assert_true(d->identity.gpus[0].index_num == 1.0);
    assert_null(d->plan[0].title);
    assert_null(d->plan[0].note);
    assert_true(isnan(d->plan[0].est_s));
    assert_int_equal(d->host.gpus.n, 2);
    assert_true(d->host.gpus.is_int[0]);
    assert_false(d->host.gpus.is_int[1]);
    assert_int_equal(d->host.gpus.v[1], 0);
    assert_int_equal(d->sweeps[0].bytes.n, 0);
    assert_int_equal(d->sweeps[0].gbps.n, 3);
    assert_true(d->sweeps[0].gbps.v[0] == 7);
    assert_true(isnan(d->sweeps[0].gbps.v[1]) && isnan(d->sweeps[0].gbps.v[2]));
    assert_int_equal(d->matrices[0].n, 0);
    assert_true(isnan(d->stress.gpus[0].temp_avg_c));
    assert_false(d->stress.gpus[0].thermal_slowdown);
    assert_false(d->stress.have_node);
    assert_true(isnan(d->stress.power_total_avg_w));
    /* pairs: "valid": false is invalid, a missing "valid" is not; a pair's non-integer reads 0 */
    assert_true(d->pairs.side[0].present && d->pairs.side[0].invalid);
    assert_true(d->pairs.side[1].present && !d->pairs.side[1].invalid);
    assert_int_equal(d->pairs.side[0].npairs, 2);
    assert_int_equal(d->pairs.side[0].pair[1][0], 0);
    assert_int_equal(d->pairs.side[0].pair[1][1], 3);
    assert_true(isnan(d->pairs.ratio));
    /* placement: a worker is an object's "gpu" or the entry; the gain an object's "pairs" */
    assert_int_equal(d->placement.workers.n, 3);
    assert_int_equal(d->placement.workers.v[0], 3);
    assert_int_equal(d->placement.workers.v[1], 5);
    assert_int_equal(d->placement.workers.v[2], 0);
    assert_true(d->placement.gain == 1.5);
    assert_int_equal(d->placement.nnotes, 2);
    assert_string_equal(d->placement.notes[0], "a note");
    assert_null(d->placement.notes[1]);
    gq_card_doc_free(d);
    json_decref(doc);
}

/* Sections of the wrong type are absent; lists past their bound are cut at it. */
static void test_absent_sections_and_bounds(void **state)
{
    (void)state;
    json_t *doc = load();
    json_t *card = sec(doc, "card");
    json_object_set_new(card, "identity", json_array());
    json_object_set_new(card, "host", json_string("x"));
    json_object_set_new(card, "latency", json_pack("{s:{s:[i], s:[[i]]}}", "p2p", "gpus", 0, "values", 4));
    json_object_set_new(doc, "stress", json_integer(1));
    json_object_set_new(doc, "bottlenecks", json_object());
    json_t *by = json_array(), *gb = json_array();
    for (int k = 0; k < 130; k++) {
        json_array_append_new(by, json_integer(k));
        json_array_append_new(gb, json_real(k));
    }
    json_object_set_new(card, "sweeps", json_pack("[{s:o, s:o}]", "bytes", by, "gbps", gb));
    gq_card_doc *d = decode(doc);
    assert_false(d->identity.present);
    assert_int_equal(d->identity.ngpus, 0);
    assert_false(d->host.present);
    assert_int_equal(d->host.nsubsets, 0);
    assert_true(d->latency.present);
    assert_false(d->latency.have_host);
    assert_true(d->latency.p2p.present);
    assert_int_equal(d->latency.p2p.n, 1);
    assert_int_equal(d->latency.p2p.label[0], 0);
    assert_true(d->latency.p2p.vals[0] == 4);
    assert_null(d->latency.p2p.title);
    assert_false(d->stress.present);
    assert_int_equal(d->stress.ngpus, 0);
    assert_true(isnan(d->stress.elapsed_s));
    assert_int_equal(d->nbottlenecks, 0);
    assert_int_equal(d->sweeps[0].bytes.n, GQ_CF_MAX_SWEEP);
    assert_int_equal(d->sweeps[0].gbps.n, GQ_CF_MAX_SWEEP);
    gq_card_doc_free(d);
    json_decref(doc);
}

/* A sweep's sizes out of a uint64_t's range (a hand-edited card) print as no
 * size, not as whatever an undefined cast gives (UBSan's float-cast-overflow
 * stops the sanitizer build on such a cast); a size in range still prints. */
static void test_sweep_sizes_out_of_range(void **state)
{
    (void)state;
    json_t *doc = load();
    json_t *card = sec(doc, "card");
    json_object_set_new(card, "sweeps",
                        json_pack("[{s:s, s:[f, f, f, i], s:[f, f, f, f], s:{s:f, s:f, s:f}}]", "label",
                                  "odd", "bytes", 1e300, -5.0, 1.9e19, 4096, "gbps", 1.0, 2.0, 3.0, 4.0,
                                  "fit", "fixed_us", 2.0, "asymptotic_gbps", 40.0, "half_bytes", 1e300));
    gq_card_doc *d = decode(doc);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    gq_err e = {0};
    assert_int_equal(gq_card_render_markdown(f, d, &e), 0);
    fclose(f);
    const char *t = strstr(buf, "**odd**: fixed cost 2");
    assert_non_null(t);
    assert_non_null(strstr(t, "half of it reached at –\n"));
    int unknown = 0;
    for (const char *p = t; (p = strstr(p, "\n| ? | ")); p++)
        unknown++;
    assert_int_equal(unknown, 3);
    assert_non_null(strstr(t, "\n| 4 KiB | 4"));
    free(buf);
    gq_card_doc_free(d);
    json_decref(doc);
}

/* A string is kept whole: a 20,000-byte hostname, plan note and stress finding. */
static void test_long_strings_whole(void **state)
{
    (void)state;
    json_t *doc = load();
    json_t *card = sec(doc, "card");
    size_t n = 20000;
    char *big = malloc(n + 1);
    assert_non_null(big);
    for (size_t i = 0; i < n; i++)
        big[i] = (char)('a' + i % 26);
    big[n] = 0;
    json_object_set_new(card, "hostname", json_string(big));
    json_object_set_new(json_array_get(sec(card, "plan"), 1), "note", json_string(big));
    json_t *fs = sec(sec(doc, "stress"), "findings");
    json_array_append_new(fs, json_pack("{s:s, s:s}", "level", "warn", "text", big));
    json_array_append_new(sec(doc, "bottlenecks"), json_pack("{s:s}", "explanation", big));
    gq_card_doc *d = decode(doc);
    assert_int_equal(strlen(d->hostname), n);
    assert_string_equal(d->hostname, big);
    assert_string_equal(d->plan[1].note, big);
    assert_string_equal(d->stress.findings[d->stress.nfindings - 1].text, big);
    assert_int_equal(d->nbottlenecks, 1);
    assert_string_equal(d->bottlenecks[0].explanation, big);
    gq_card_doc_free(d);
    free(big);
    json_decref(doc);
}

/* No usable card: GQ_E_USAGE with the line the renderers gave, and no document. */
static void test_refusals(void **state)
{
    (void)state;
    gq_card_doc *d = (gq_card_doc *)1;
    gq_err e = {0};
    json_t *arr = json_array();
    assert_int_equal(gq_card_doc_from_json(arr, &d, &e), GQ_E_USAGE);
    assert_null(d);
    assert_string_equal(e.msg, "not a gpuqual document (expected a JSON object)");
    json_decref(arr);
    json_t *o = json_pack("{s:s, s:[]}", "kind", "run", "card");
    memset(&e, 0, sizeof e);
    assert_int_equal(gq_card_doc_from_json(o, &d, &e), GQ_E_USAGE);
    assert_string_equal(e.msg, "the document has no \"card\" section (kind 'run')");
    json_object_set_new(o, "card", json_object());
    memset(&e, 0, sizeof e);
    assert_int_equal(gq_card_doc_from_json(o, &d, &e), GQ_E_USAGE);
    assert_null(d);
    assert_non_null(strstr(e.msg, "card.verdict is missing"));
    json_decref(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reads_saved_card),           cmocka_unit_test(test_missing_and_wrong_types),
        cmocka_unit_test(test_absent_sections_and_bounds), cmocka_unit_test(test_long_strings_whole),
        cmocka_unit_test(test_sweep_sizes_out_of_range),   cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
