/* The card's judge on hand-written card sections: facts read from a saved card
 * (GPUs named by index, cells of GPUs that are not on the card, null cells),
 * rows of sections that are missing, findings that need both halves of a
 * comparison, and the exit code. Written for the survivors of bench/mutation. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "analysis/card.h"
#include "analysis/card_compose.h"
#include "analysis/card_judge_internal.h"
#include "doc/card_codec.h"
#include "doc/card_compose.h"
#include "measure/journal.h"
#include "render/card_render.h"
#include "analysis/expect.h"

/* A JSON text; a card section (it has "identity") without a plan gets one in
 * which every step is done, so its checks and rows rest on measured evidence. */
static json_t *load(const char *text)
{
    json_error_t je;
    json_t *j = json_loads(text, 0, &je);
    if (!j)
        fail_msg("bad test JSON: %s (column %d)", je.text, je.column);
    if (json_object_get(j, "identity") && !json_object_get(j, "plan")) {
        json_t *plan = json_array();
        for (int s = 0; s < GQ_CS_COUNT; s++)
            json_array_append_new(plan, json_pack("{s:s, s:s}", "step", gq_card_step_name((gq_card_step_id)s),
                                                  "status", "done"));
        json_object_set_new(j, "plan", plan);
    }
    return j;
}

static const json_t *row(const json_t *card, const char *check)
{
    size_t i;
    const json_t *r;
    json_array_foreach(json_object_get(card, "rows"), i,
                       r) if (!strcmp(json_string_value(json_object_get(r, "check")), check)) return r;
    return NULL;
}

static const char *rs(const json_t *card, const char *check, const char *field)
{
    const json_t *r = row(card, check);
    if (!r)
        fail_msg("no row '%s'", check);
    return json_string_value(json_object_get(r, field));
}

static bool finding_has(const json_t *card, const char *text)
{
    size_t i;
    const json_t *f;
    json_array_foreach(json_object_get(card, "findings"), i,
                       f) if (strstr(json_string_value(f), text)) return true;
    return false;
}

#define TWO_GPUS                                                                                             \
    "\"identity\": {\"gpus\": [{\"index\": 3, \"name\": \"G\", \"memory_mib\": 1000, \"power_limit_w\": "    \
    "300, "                                                                                                  \
    "\"pcie\": {\"gen\": 4, \"width\": 16, \"gen_max\": 4, \"width_max\": 16}}, {\"index\": 5, \"name\": "   \
    "\"G\", "                                                                                                \
    "\"memory_mib\": 1000, \"power_limit_w\": 300, \"pcie\": {\"gen\": 4, \"width\": 16, \"gen_max\": 4, "   \
    "\"width_max\": 16}}]}"

/* Facts follow the GPUs' positions on the card, not their indices; cells of a
 * GPU that is not on the card, and null cells, are not facts. */
static void facts_by_position(void **state)
{
    (void)state;
    json_t *card =
        load("{" TWO_GPUS ", \"host\": {\"gpus\": [5, 9, 3], \"alone\": {\"h2d\": [20.5, 99, null], "
             "\"d2h\": [21.5, 99, 22]}}, "
             "\"matrices\": [{\"id\": \"p2p_write\", \"gpus\": [3, 5], \"values\": [[null, 7], [7, null]]}, "
             "{\"id\": \"p2p_read\", \"gpus\": [5, 3, 9], \"values\": [[null, 40, 1], [41, null, 1], [1, 1, "
             "null]]}], "
             "\"latency\": {\"host\": {\"gpus\": [3, 9], \"ns\": [900, 5]}, "
             "\"p2p\": {\"gpus\": [3, 5], \"values\": [[null, 1500], [1600, null]]}}}");
    json_t *stress = load("{\"gpus\": [{\"gpu\": 5, \"temp_max_c\": 70, \"sm_clock_avg_mhz\": 1500, "
                          "\"power_capped_pct\": 10, \"verdict\": \"warn\", \"hw_slowdown\": true}, "
                          "{\"gpu\": 9, \"temp_max_c\": 99}], "
                          "\"findings\": [{\"gpu\": 3, \"level\": \"fail\", \"text\": \"not this one\"}, "
                          "{\"gpu\": 5, \"level\": \"info\", \"text\": \"info is not a reason\"}, "
                          "{\"gpu\": 5, \"level\": \"warn\", \"text\": \"first reason\"}, "
                          "{\"gpu\": 5, \"level\": \"fail\", \"text\": \"second reason\"}]}");
    gq_card_facts *f = calloc(1, sizeof *f);
    assert_non_null(f);
    gq_card_facts_from_json(card, stress, NULL, f);
    assert_int_equal(f->ngpu, 2);
    assert_int_equal(f->gpu[0].index, 3);
    assert_int_equal(f->gpu[1].index, 5);
    assert_int_equal(f->gpu[0].pcie_width_max, 16);
    /* host: GPU 5 is position 1, GPU 9 is not on the card, GPU 3's h2d is null */
    assert_true(f->gpu[1].h2d_gbps == 20.5);
    assert_true(f->gpu[1].d2h_gbps == 21.5);
    assert_true(isnan(f->gpu[0].h2d_gbps));
    assert_true(f->gpu[0].d2h_gbps == 22);
    /* only the p2p_read matrix; its row 0 is GPU 5 */
    assert_true(f->p2p_gbps[1][0] == 40);
    assert_true(f->p2p_gbps[0][1] == 41);
    assert_true(f->p2p_direct[1][0]);
    assert_true(isnan(f->p2p_gbps[0][0]) && isnan(f->p2p_gbps[1][1]));
    assert_false(f->p2p_direct[0][0]);
    assert_true(isnan(f->p2p_gbps[2][0]) && isnan(f->p2p_gbps[0][2]));
    /* a cell of GPU 9 (not on the card) lands nowhere, not next to a real cell */
    for (int a = 0; a < 2; a++)
        for (int b = 2; b < GQ_MAX_GPUS; b++)
            if (!isnan(f->p2p_gbps[a][b]) || !isnan(f->p2p_gbps[b][a]))
                fail_msg("p2p_gbps[%d][%d] or [%d][%d] set", a, b, b, a);
    /* latency */
    assert_true(f->gpu[0].host_latency_ns == 900);
    assert_true(isnan(f->gpu[1].host_latency_ns));
    assert_true(f->p2p_lat_ns[0][1] == 1500 && f->p2p_lat_ns[1][0] == 1600);
    assert_true(isnan(f->p2p_lat_ns[0][0]));
    /* stress: GPU 5 only; its first warn/fail finding is the reason */
    assert_true(f->stress_ran);
    assert_false(f->gpu[0].stressed);
    assert_true(f->gpu[1].stressed);
    assert_true(f->gpu[1].temp_max_c == 70);
    assert_true(f->gpu[1].thermal_slowdown);
    assert_int_equal(f->gpu[1].stress_verdict, GQ_V_WARN);
    assert_string_equal(f->gpu[1].stress_reason, "first reason");
    assert_int_equal(f->gpu[0].stress_verdict, GQ_V_SKIP);
    free(f);
    json_decref(card);
    json_decref(stress);
}

/* Integrity counts from the records, with the first example of each. */
static void facts_from_records(void **state)
{
    (void)state;
    gq_recordset rs = {0};
    gq_record r;
    memset(&r, 0, sizeof r);
    strcpy(r.test, "t");
    r.src = (gq_endpoint){GQ_EP_HOST, 0};
    r.dst = (gq_endpoint){GQ_EP_GPU, 1};
    gq_records_push(&rs, &r);
    r.flags = GQ_FLAG_IMPOSSIBLE | GQ_FLAG_ERROR;
    strcpy(r.error, "first");
    gq_records_push(&rs, &r);
    strcpy(r.error, "second");
    r.flags = GQ_FLAG_ERROR | GQ_FLAG_VERIFY_FAILED | GQ_FLAG_OVERLAP;
    gq_records_push(&rs, &r);
    r.aggregate = true;
    r.flags = GQ_FLAG_OVERLAP;
    r.error[0] = 0;
    gq_records_push(&rs, &r);
    gq_card_facts *f = calloc(1, sizeof *f);
    json_t *card = load("{}");
    gq_card_facts_from_json(card, NULL, &rs, f);
    assert_int_equal(f->n_records, 4);
    assert_int_equal(f->n_impossible, 1);
    assert_int_equal(f->n_errors, 2);
    assert_int_equal(f->n_verify_failed, 1);
    assert_int_equal(f->n_overlap_invalid, 1); /* aggregates only */
    assert_non_null(strstr(f->impossible_example, "first"));
    assert_non_null(strstr(f->error_example, "first"));
    assert_non_null(strstr(f->verify_example, "second"));
    assert_non_null(strstr(f->overlap_example, "no detail"));
    free(f);
    json_decref(card);
    gq_records_free(&rs);
}

/* A card with nothing measured: every row is there, and rows without a
 * measurement say "skip", not "info". */
static void empty_card_rows(void **state)
{
    (void)state;
    json_t *card = load("{\"identity\": {\"gpus\": []}}");
    gq_err e = {0};
    assert_int_equal(gq_card_judge_json(card, NULL, NULL, NULL, NULL, &e), GQ_OK);
    assert_int_equal(json_array_size(json_object_get(card, "rows")), 11);
    assert_string_equal(rs(card, "Identity and links", "verdict"), "skip");
    assert_string_equal(rs(card, "Collectives", "verdict"), "skip");
    assert_string_equal(rs(card, "Collectives", "result"), "not measured");
    assert_string_equal(rs(card, "Pairwise GPU traffic", "measurement"), "P2P read matrix");
    assert_string_equal(rs(card, "Pairwise GPU traffic", "result"), "not measured");
    assert_string_equal(rs(card, "Pairwise GPU traffic", "verdict"), "skip");
    assert_string_equal(rs(card, "Pairwise GPU traffic", "decision"), "Discover fast communication groups");
    assert_string_equal(rs(card, "Concurrent GPU traffic", "verdict"), "skip");
    assert_string_equal(rs(card, "Concurrent GPU traffic", "result"), "one domain: nothing to compare");
    assert_string_equal(rs(card, "Host-memory traffic", "verdict"), "skip");
    assert_string_equal(rs(card, "Transfer granularity", "result"), "not measured");
    assert_string_equal(rs(card, "Transfer granularity", "verdict"), "skip");
    assert_string_equal(rs(card, "Latency", "result"), "not measured");
    assert_string_equal(rs(card, "Whole-node health", "result"), "not run");
    assert_string_equal(rs(card, "Whole-node health", "verdict"), "skip");
    assert_string_equal(rs(card, "Placement", "result"), "not computed");
    assert_string_equal(rs(card, "Placement", "verdict"), "skip");
    assert_string_equal(rs(card, "Measurement integrity", "verdict"), "skip");
    assert_string_equal(json_string_value(json_object_get(card, "verdict")), "pass");
    assert_int_equal(json_integer_value(json_object_get(card, "exit_code")), 0);
    assert_true(json_is_null(json_object_get(card, "expectations")));
    json_decref(card);
}

/* A row without its measurement says so, whatever the row before it said. */
static void rows_do_not_inherit(void **state)
{
    (void)state;
    json_t *card = load("{\"identity\": {\"gpus\": []}, \"sweeps\": [{\"label\": \"host → GPU 0\", \"fit\": "
                        "{\"fixed_us\": 3, \"asymptotic_gbps\": 25.3, \"half_bytes\": 75776}}]}");
    assert_int_equal(gq_card_judge_json(card, NULL, NULL, NULL, NULL, NULL), GQ_OK);
    assert_string_equal(rs(card, "Transfer granularity", "measurement"), "buffer-size sweep on 1 path");
    assert_string_equal(rs(card, "Transfer granularity", "result"),
                        "host → GPU 0: 3 µs fixed cost, half of 25.3 GB/s at 74 KiB");
    assert_string_equal(rs(card, "Transfer granularity", "verdict"), "info");
    assert_string_equal(rs(card, "Latency", "measurement"), "pointer chase host↔GPU");
    assert_string_equal(rs(card, "Latency", "result"), "not measured");
    assert_string_equal(rs(card, "Latency", "verdict"), "skip");
    json_decref(card);
}

/* A saved card's host latency list longer than the GPUs a card can hold:
 * the first 64 are read, the 65th (9999 ns) is not (mutation round 9,
 * card_facts_json.c:299). */
static void latency_list_capped(void **state)
{
    (void)state;
    char text[2048];
    int w = snprintf(text, sizeof text, "{\"identity\": {\"gpus\": []}, \"latency\": {\"host\": {\"ns\": [");
    for (int i = 0; i < 64; i++)
        w += snprintf(text + w, sizeof text - (size_t)w, "400, ");
    snprintf(text + w, sizeof text - (size_t)w, "9999]}}}");
    json_t *card = load(text);
    assert_int_equal(gq_card_judge_json(card, NULL, NULL, NULL, NULL, NULL), GQ_OK);
    const char *r = rs(card, "Latency", "result");
    assert_non_null(r);
    if (strstr(r, "9999") || !strstr(r, "400"))
        fail_msg("Latency: %s", r);
    json_decref(card);
}

/* Offload on many GPUs: the list stops at the last whole entry that fits. */
static void long_offload_list(void **state)
{
    (void)state;
    char json[4096];
    size_t used =
        (size_t)snprintf(json, sizeof json, "{\"identity\": {\"gpus\": []}, \"placement\": {\"offload\": [");
    for (int g = 10; g < 60; g++)
        used += (size_t)snprintf(json + used, sizeof json - used, "%s{\"gpu\": %d}", g > 10 ? ", " : "", g);
    snprintf(json + used, sizeof json - used, "]}}");
    json_t *card = load(json);
    assert_int_equal(gq_card_judge_json(card, NULL, NULL, NULL, NULL, NULL), GQ_OK);
    const char *f = NULL;
    size_t i;
    const json_t *x;
    json_array_foreach(json_object_get(card, "findings"), i,
                       x) if (strstr(json_string_value(x), "For KV offload, use GPUs ")) f =
        json_string_value(x);
    assert_non_null(f);
    /* 10,11,...,41 is 95 characters: the list buffer (96) holds exactly that */
    const char *l = f + strlen("For KV offload, use GPUs ");
    const char *colon = strchr(l, ':');
    assert_non_null(colon);
    assert_int_equal((int)(colon - l), 95);
    assert_memory_equal(colon - 5, "40,41:", 6);
    json_decref(card);
}

/* A figure too long for the row's number buffer (32 bytes: "%.0f" of 2e31
 * is 32 digits) is written in exponent form, never cut to a different number. */
static void identity_huge_memory(void **state)
{
    (void)state;
    json_t *card = load("{\"identity\": {\"gpus\": [{\"name\": \"X\", \"memory_mib\": 2e31}]}}");
    assert_int_equal(gq_card_judge_json(card, NULL, NULL, NULL, NULL, NULL), GQ_OK);
    const char *m = rs(card, "Identity and links", "measurement");
    assert_non_null(m);
    if (!strstr(m, "1 × X, 2e+31 MiB,"))
        fail_msg("identity evidence: %s", m);
    json_decref(card);
    /* one that fits is written whole */
    card = load("{\"identity\": {\"gpus\": [{\"name\": \"X\", \"memory_mib\": 1e30}]}}");
    assert_int_equal(gq_card_judge_json(card, NULL, NULL, NULL, NULL, NULL), GQ_OK);
    m = rs(card, "Identity and links", "measurement");
    if (!strstr(m, "1 × X, 1000000000000000019884624838656 MiB,"))
        fail_msg("identity evidence: %s", m);
    json_decref(card);
    /* a PCIe generation and width no link has: judged without casting them to
     * an int (the facts take them as unknown), the figure written whole
     * (mutation round 9, card_rows.c:67) */
    card = load("{\"identity\": {\"gpus\": [{\"name\": \"X\", \"pcie\": {\"gen\": 1e30, \"width\": 16, "
                "\"gen_max\": -1e30, \"width_max\": 1e300}}]}}");
    assert_int_equal(gq_card_judge_json(card, NULL, NULL, NULL, NULL, NULL), GQ_OK);
    m = rs(card, "Identity and links", "measurement");
    assert_non_null(m);
    if (!strstr(m, "PCIe Gen1000000000000000019884624838656 x16"))
        fail_msg("identity evidence: %s", m);
    json_decref(card);
}

/* One record measured: the integrity row is judged or informs, not skipped. */
static void one_record_is_measured(void **state)
{
    (void)state;
    gq_recordset set = {0};
    gq_record r;
    memset(&r, 0, sizeof r);
    strcpy(r.test, "t");
    gq_records_push(&set, &r);
    json_t *card = load("{\"identity\": {\"gpus\": []}}");
    assert_int_equal(gq_card_judge_json(card, NULL, NULL, &set, NULL, NULL), GQ_OK);
    assert_string_equal(
        rs(card, "Measurement integrity", "measurement"),
        "1 records: every figure against its path's capacity, overlap of concurrent windows, data "
        "pattern checks");
    assert_string_not_equal(rs(card, "Measurement integrity", "verdict"), "skip");
    json_decref(card);
    gq_records_free(&set);
}

/* One GPU under stress is a measurement: the row is judged, not skipped. */
static void one_gpu_stress_row(void **state)
{
    (void)state;
    json_t *card = load("{\"identity\": {\"gpus\": [{\"index\": 0, \"name\": \"G\"}]}}");
    json_t *stress = load("{\"elapsed_s\": 30, \"gpus\": [{\"gpu\": 0}]}");
    assert_int_equal(gq_card_judge_json(card, NULL, stress, NULL, NULL, NULL), GQ_OK);
    assert_string_equal(rs(card, "Whole-node health", "measurement"),
                        "30 s GEMM load on 1 GPU; temperature, power, clocks, throttle reasons, errors");
    assert_string_not_equal(rs(card, "Whole-node health", "verdict"), "skip");
    json_decref(card);
    json_decref(stress);
}

/* The within/across finding needs both halves and the ratio. */
static void pairs_finding_needs_both(void **state)
{
    (void)state;
    json_t *card = load("{\"identity\": {\"gpus\": []}, \"pairs\": {\"within\": {\"pairs\": [[0, 1]], "
                        "\"aggregate_gbps\": 50}}}");
    assert_int_equal(gq_card_judge_json(card, NULL, NULL, NULL, NULL, NULL), GQ_OK);
    assert_false(finding_has(card, "pairs at once within domains moved"));
    assert_string_equal(rs(card, "Concurrent GPU traffic", "result"), "within 50 GB/s in total");
    json_decref(card);
    card = load("{\"identity\": {\"gpus\": []}, \"pairs\": {\"across\": {\"pairs\": [[0, 2], [1, 3]], "
                "\"aggregate_gbps\": 30, \"isolated_gbps\": [20, 25]}, \"ratio\": 0.5}}");
    assert_int_equal(gq_card_judge_json(card, NULL, NULL, NULL, NULL, NULL), GQ_OK);
    assert_false(finding_has(card, "pairs at once within domains moved"));
    assert_string_equal(rs(card, "Concurrent GPU traffic", "result"),
                        "2 pairs at once 30 GB/s in total, 45 GB/s one at a time");
    json_decref(card);
    card = load("{\"identity\": {\"gpus\": []}, \"pairs\": {\"within\": {\"pairs\": [[0, 1]], "
                "\"aggregate_gbps\": 50}, "
                "\"across\": {\"pairs\": [[0, 2]], \"aggregate_gbps\": 20}, \"ratio\": 0.4}}");
    assert_int_equal(gq_card_judge_json(card, NULL, NULL, NULL, NULL, NULL), GQ_OK);
    assert_true(finding_has(card,
                            "1 pairs at once within domains moved 50 GB/s in total, 1 pairs across domains "
                            "20 GB/s: crossing domains keeps 40% of the bandwidth."));
    assert_string_equal(rs(card, "Concurrent GPU traffic", "result"),
                        "within 50 GB/s in total, across 20 GB/s (40%)");
    json_decref(card);
}

static void exit_codes(void **state)
{
    (void)state;
    static const struct {
        const char *json;
        int code;
    } cases[] = {
        {"{\"verdict\": \"pass\"}", 0},
        {"{\"verdict\": \"warn\"}", 4},
        {"{\"verdict\": \"fail\"}", 1},
        {"{}", -1},                      /* no verdict: never a pass */
        {"{\"verdict\": \"FAIL\"}", -1}, /* odd case */
        {"{\"verdict\": \"PASS\"}", -1},
        {"{\"verdict\": \"garbage\"}", -1},
        {"{\"verdict\": 0}", -1},
        {"{\"verdict\": null}", -1},
        {"{\"verdict\": \"fail\", \"complete\": false}", 5},
        {"{\"verdict\": \"pass\", \"complete\": false}", 5},
        {"{\"verdict\": \"fail\", \"complete\": true}", 1},
        {"{\"verdict\": \"incomplete\"}", 5}, /* schema 2 */
        {"{\"verdict\": \"incomplete\", \"complete\": true}", 5},
        {"{\"verdict\": \"INCOMPLETE\"}", -1},
        {"{\"verdict\": \"pass \"}", -1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_t *c = load(cases[i].json);
        if (gq_card_exit_code(c) != cases[i].code)
            fail_msg("%s: exit %d, want %d", cases[i].json, gq_card_exit_code(c), cases[i].code);
        json_decref(c);
    }
}

/* A step of the card's level that was skipped because of an error, or cut
 * short, or that failed, leaves the card incomplete whatever its checks say
 * (exit 5); one the user turned off, or that did not apply, does not. The plan
 * is read from the card's JSON, as `report` reads a saved card. */
static void step_skipped_by_error_is_incomplete(void **state)
{
    (void)state;
    static const struct {
        const char *status, *reason, *verdict;
    } cases[] = {
        {"skipped", "error", "incomplete"},    {"skipped", "interrupted", "incomplete"},
        {"skipped", "budget", "incomplete"},   {"failed", NULL, "incomplete"},
        {"interrupted", NULL, "incomplete"},   {"skipped", "user", "pass"},
        {"skipped", "not_applicable", "pass"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        json_t *card = load("{\"identity\": {\"gpus\": []}, \"level\": \"standard\"}");
        size_t i;
        json_t *p;
        json_array_foreach(json_object_get(card, "plan"), i, p)
        {
            if (strcmp(json_string_value(json_object_get(p, "step")), gq_card_step_name(GQ_CS_LATENCY)))
                continue;
            json_object_set_new(p, "status", json_string(cases[k].status));
            if (cases[k].reason)
                json_object_set_new(p, "reason", json_string(cases[k].reason));
        }
        assert_int_equal(gq_card_judge_json(card, NULL, NULL, NULL, NULL, NULL), GQ_OK);
        const char *v = json_string_value(json_object_get(card, "verdict"));
        if (!v || strcmp(v, cases[k].verdict))
            fail_msg("latency step %s (%s): verdict %s, want %s", cases[k].status,
                     cases[k].reason ? cases[k].reason : "no reason", v ? v : "none", cases[k].verdict);
        assert_int_equal(gq_card_exit_code(card), strcmp(cases[k].verdict, "incomplete") ? 0 : 5);
        json_decref(card);
    }
}

/* Written for the survivors of bench/mutation (seed 165809224): the power
 * limit is read; NVLink counts land by card position, position 0 included;
 * only the p2p_read matrix is read, also when another one follows it. */
static void facts_power_nvlinks_matrices(void **state)
{
    (void)state;
    json_t *card =
        load("{\"identity\": {\"gpus\": [{\"index\": 3, \"name\": \"G\", \"power_limit_w\": 300}, "
             "{\"index\": 5, \"name\": \"G\", \"power_limit_w\": 350}], "
             "\"nvlinks\": {\"gpus\": [5, 3], \"values\": [[0, 4], [4, 0]]}}, "
             "\"matrices\": [{\"id\": \"p2p_read\", \"gpus\": [3, 5], \"values\": [[null, 40], [41, null]]}, "
             "{\"id\": \"p2p_write\", \"gpus\": [3, 5], \"values\": [[null, 7], [7, null]]}]}");
    gq_card_facts *f = calloc(1, sizeof *f);
    assert_non_null(f);
    gq_card_facts_from_json(card, NULL, NULL, f);
    assert_int_equal(f->ngpu, 2);
    assert_true(f->gpu[0].power_limit_w == 300);
    assert_true(f->gpu[1].power_limit_w == 350);
    assert_int_equal(f->nvlinks[1][0], 4);
    assert_int_equal(f->nvlinks[0][1], 4);
    assert_true(f->p2p_gbps[0][1] == 40);
    assert_true(f->p2p_gbps[1][0] == 41);
    free(f);
    json_decref(card);
}

/* Written for round 4's survivors of bench/mutation: a card with more
 * uplinks than the facts hold keeps the first GQ_CARD_MAX_UPLINKS and no
 * more; the one past the end is not written over the P2P facts after it. */
static void facts_uplinks_capped(void **state)
{
    (void)state;
    json_t *card = load("{\"identity\": {\"gpus\": [{\"index\": 0, \"name\": \"G\"}, "
                        "{\"index\": 1, \"name\": \"G\"}], \"uplinks\": []}, "
                        "\"matrices\": [{\"id\": \"p2p_read\", \"gpus\": [0, 1], "
                        "\"values\": [[null, 40], [41, null]]}]}");
    json_t *ups = json_object_get(json_object_get(card, "identity"), "uplinks");
    for (int i = 0; i < GQ_CARD_MAX_UPLINKS + 1; i++) {
        char name[16];
        snprintf(name, sizeof name, "u%d", i);
        json_array_append_new(ups, json_pack("{s:s, s:s, s:[i], s:i, s:i}", "node", name, "kind",
                                             "pcie_switch", "gpus", 0, "gen", 4, "width", 16));
    }
    gq_card_facts *f = calloc(1, sizeof *f);
    assert_non_null(f);
    gq_card_facts_from_json(card, NULL, NULL, f);
    assert_int_equal(f->nuplinks, GQ_CARD_MAX_UPLINKS);
    char last[16];
    snprintf(last, sizeof last, "u%d", GQ_CARD_MAX_UPLINKS - 1);
    assert_string_equal(f->uplink[GQ_CARD_MAX_UPLINKS - 1].node, last);
    assert_int_equal(f->uplink[GQ_CARD_MAX_UPLINKS - 1].width_cur, 16);
    assert_true(f->p2p_gbps[0][1] == 40);
    assert_true(f->p2p_gbps[1][0] == 41);
    free(f);
    json_decref(card);
}

/* The verdict of the check id on subject in a judged card section, or NULL. */
static const char *check_verdict(const json_t *card, const char *id, const char *subject)
{
    size_t i;
    const json_t *c;
    json_array_foreach(json_object_get(card, "checks"), i, c)
    {
        if (!strcmp(json_string_value(json_object_get(c, "id")), id) &&
            !strcmp(json_string_value(json_object_get(c, "subject")), subject))
            return json_string_value(json_object_get(c, "verdict"));
    }
    return NULL;
}

/* A link under load at a lower generation than its maximum is below it (FAIL);
 * at idle it is not (links train down when idle), and an idle reading, even
 * at the maximum, is "not measured under load": never a pass. */
static void link_gen_under_load(void **state)
{
    (void)state;
    json_t *card = load("{\"identity\": {\"gpus\": [{\"index\": 0, \"name\": \"G\", \"pcie\": {\"gen\": 4, "
                        "\"width\": 16, \"gen_max\": 5, \"width_max\": 16, \"under_load\": true}}]}}");
    assert_int_equal(gq_card_judge_json(card, NULL, NULL, NULL, NULL, NULL), GQ_OK);
    assert_string_equal(rs(card, "Identity and links", "result"), "1 GPU below the link's maximum");
    assert_string_equal(rs(card, "Identity and links", "verdict"), "fail");
    assert_string_equal(check_verdict(card, "link_gen", "gpu:0"), "fail");
    json_decref(card);
    card = load("{\"identity\": {\"gpus\": [{\"index\": 0, \"name\": \"G\", \"pcie\": {\"gen\": 4, "
                "\"width\": 16, \"gen_max\": 5, \"width_max\": 16, \"under_load\": false}}]}}");
    assert_int_equal(gq_card_judge_json(card, NULL, NULL, NULL, NULL, NULL), GQ_OK);
    assert_string_equal(rs(card, "Identity and links", "result"),
                        "Gen4 x16 at idle, not measured under load");
    assert_string_equal(rs(card, "Identity and links", "verdict"), "info");
    assert_string_equal(check_verdict(card, "link_gen", "gpu:0"), "info");
    json_decref(card);
    /* at its maximum, at idle: still not a pass */
    card = load("{\"identity\": {\"gpus\": [{\"index\": 0, \"name\": \"G\", \"pcie\": {\"gen\": 5, "
                "\"width\": 16, \"gen_max\": 5, \"width_max\": 16, \"under_load\": false}}]}}");
    assert_int_equal(gq_card_judge_json(card, NULL, NULL, NULL, NULL, NULL), GQ_OK);
    assert_string_equal(rs(card, "Identity and links", "result"),
                        "Gen5 x16 at idle, not measured under load");
    assert_string_equal(rs(card, "Identity and links", "verdict"), "info");
    assert_string_equal(check_verdict(card, "link_gen", "gpu:0"), "info");
    assert_string_equal(check_verdict(card, "link_width", "gpu:0"), "info");
    json_decref(card);
    /* and under load at its maximum: pass */
    card = load("{\"identity\": {\"gpus\": [{\"index\": 0, \"name\": \"G\", \"pcie\": {\"gen\": 5, "
                "\"width\": 16, \"gen_max\": 5, \"width_max\": 16, \"under_load\": true}}]}}");
    assert_int_equal(gq_card_judge_json(card, NULL, NULL, NULL, NULL, NULL), GQ_OK);
    assert_string_equal(rs(card, "Identity and links", "result"),
                        "every link at its maximum under load (Gen5 x16)");
    assert_string_equal(rs(card, "Identity and links", "verdict"), "pass");
    assert_string_equal(check_verdict(card, "link_width", "gpu:0"), "pass");
    json_decref(card);
    /* two GPUs, one read at idle: how many of them were not under load */
    card = load("{\"identity\": {\"gpus\": [{\"index\": 0, \"name\": \"G\", \"pcie\": {\"gen\": 5, "
                "\"width\": 16, \"gen_max\": 5, \"width_max\": 16, \"under_load\": true}}, {\"index\": 1, "
                "\"name\": \"G\", \"pcie\": {\"gen\": 5, \"width\": 16, \"gen_max\": 5, \"width_max\": 16, "
                "\"under_load\": false}}]}}");
    assert_int_equal(gq_card_judge_json(card, NULL, NULL, NULL, NULL, NULL), GQ_OK);
    assert_string_equal(rs(card, "Identity and links", "result"),
                        "Gen5 x16 at idle, 1 of 2 GPUs not measured under load");
    json_decref(card);
}

/* The placement's pair list stops once 240 bytes are used: a list that
 * reaches exactly 240 takes no further pair ("10→11" is 7 bytes, ", 12→13"
 * 9, ", 1→2" 7: 7 + 22 x 9 + 5 x 7 = 240). */
static void pair_list_limit(void **state)
{
    (void)state;
    char json[8192];
    size_t used = (size_t)snprintf(
        json, sizeof json, "{\"identity\": {\"gpus\": []}, \"placement\": {\"gain\": 1.5, \"pairs\": [");
    int n = 0;
    for (int k = 0; k < 23; k++, n++)
        used += (size_t)snprintf(json + used, sizeof json - used, "%s{\"prefill\": %d, \"decode\": %d}",
                                 n ? ", " : "", 10 + 2 * k, 11 + 2 * k);
    for (int k = 1; k <= 6; k++, n++)
        used += (size_t)snprintf(json + used, sizeof json - used, ", {\"prefill\": %d, \"decode\": %d}", k,
                                 k + 1);
    snprintf(json + used, sizeof json - used, "]}}");
    json_t *card = load(json);
    assert_int_equal(gq_card_judge_json(card, NULL, NULL, NULL, NULL, NULL), GQ_OK);
    const char *f = NULL;
    size_t i;
    const json_t *x;
    json_array_foreach(json_object_get(card, "findings"), i, x) if (strstr(json_string_value(x), "10→11")) f =
        json_string_value(x);
    assert_non_null(f);
    assert_non_null(strstr(f, "54→55, 1→2"));
    assert_non_null(strstr(f, "5→6"));
    assert_null(strstr(f, "6→7"));
    json_decref(card);
}

/* The Placement row's pair list stops once 488 bytes are used: "pairs" (5)
 * + 58 x " 10→11" (8) + 2 x " 1→2" (6) + " 1→10" (7) = 488 takes no further
 * pair. */
static void placement_row_pair_limit(void **state)
{
    (void)state;
    char json[16384];
    size_t used =
        (size_t)snprintf(json, sizeof json, "{\"identity\": {\"gpus\": []}, \"placement\": {\"pairs\": [");
    for (int k = 0; k < 58; k++)
        used += (size_t)snprintf(json + used, sizeof json - used, "%s{\"prefill\": %d, \"decode\": %d}",
                                 k ? ", " : "", 10 + k % 80, 11 + k % 80);
    used += (size_t)snprintf(json + used, sizeof json - used,
                             ", {\"prefill\": 1, \"decode\": 2}, {\"prefill\": 2, \"decode\": 3}"
                             ", {\"prefill\": 1, \"decode\": 10}, {\"prefill\": 5, \"decode\": 9}");
    snprintf(json + used, sizeof json - used, "]}}");
    json_t *card = load(json);
    assert_int_equal(gq_card_judge_json(card, NULL, NULL, NULL, NULL, NULL), GQ_OK);
    const char *r = rs(card, "Placement", "result");
    assert_int_equal(strlen(r), 488);
    assert_string_equal(r + 488 - strlen(" 1→10"), " 1→10");
    assert_null(strstr(r, "5→9"));
    json_decref(card);
}

/* The card's verdict from the worst check and the steps' evidence. */
static void overall_from_evidence(void **state)
{
    (void)state;
    gq_evidence ev[GQ_CS_COUNT];
    gq_ev_reason why[GQ_CS_COUNT];
    bool off[GQ_CS_COUNT];
    char text[160];
    for (int s = 0; s < GQ_CS_COUNT; s++) {
        ev[s] = GQ_EV_MEASURED;
        why[s] = GQ_EVR_NONE;
    }
    assert_int_equal(gq_card_overall(GQ_V_PASS, true, GQ_LEVEL_STANDARD, ev, why, off, text, sizeof text),
                     GQ_CV_PASS);
    assert_string_equal(text, "PASS");
    assert_int_equal(gq_card_overall(GQ_V_SKIP, true, GQ_LEVEL_STANDARD, ev, why, off, text, sizeof text),
                     GQ_CV_PASS); /* nothing judged: pass, as gq_checklist_overall */
    ev[GQ_CS_STRESS] = GQ_EV_SKIPPED;
    why[GQ_CS_STRESS] = GQ_EVR_USER;
    ev[GQ_CS_PLACEMENT] = GQ_EV_SKIPPED;
    why[GQ_CS_PLACEMENT] = GQ_EVR_USER;
    assert_int_equal(gq_card_overall(GQ_V_WARN, true, GQ_LEVEL_STANDARD, ev, why, off, text, sizeof text),
                     GQ_CV_WARN);
    assert_string_equal(text, "WARN without placement and stress");
    assert_true(off[GQ_CS_STRESS] && off[GQ_CS_PLACEMENT] && !off[GQ_CS_HOST]);
    /* not in the quick level: changes nothing; in it: incomplete */
    ev[GQ_CS_LATENCY] = GQ_EV_SKIPPED;
    why[GQ_CS_LATENCY] = GQ_EVR_BUDGET;
    assert_int_equal(gq_card_overall(GQ_V_PASS, true, GQ_LEVEL_QUICK, ev, why, off, text, sizeof text),
                     GQ_CV_PASS);
    assert_string_equal(text, "PASS without stress");
    assert_int_equal(gq_card_overall(GQ_V_FAIL, true, GQ_LEVEL_STANDARD, ev, why, off, text, sizeof text),
                     GQ_CV_INCOMPLETE);
    assert_string_equal(text, "INCOMPLETE");
    why[GQ_CS_LATENCY] = GQ_EVR_NOT_APPLICABLE; /* nothing to measure here: not missing */
    assert_int_equal(gq_card_overall(GQ_V_PASS, true, GQ_LEVEL_STANDARD, ev, why, off, text, sizeof text),
                     GQ_CV_PASS);
    static const gq_evidence missing[] = {GQ_EV_UNKNOWN, GQ_EV_FAILED};
    for (int k = 0; k < 2; k++) {
        ev[GQ_CS_MATRIX] = missing[k];
        assert_int_equal(gq_card_overall(GQ_V_PASS, true, GQ_LEVEL_QUICK, ev, why, off, text, sizeof text),
                         GQ_CV_INCOMPLETE);
    }
    ev[GQ_CS_MATRIX] = GQ_EV_MEASURED;
    assert_int_equal(gq_card_overall(GQ_V_PASS, false, GQ_LEVEL_QUICK, ev, why, off, text, sizeof text),
                     GQ_CV_INCOMPLETE);
    assert_int_equal(gq_card_verdict_exit_code(GQ_CV_INCOMPLETE), 5);
    assert_int_equal(gq_card_verdict_exit_code(GQ_CV_WARN), 4);
}

/* The names read back strictly: no other case, no default. */
static void names_parse_strictly(void **state)
{
    (void)state;
    gq_card_verdict v;
    gq_evidence e;
    gq_ev_reason r;
    gq_card_level l;
    gq_card_step_id s;
    assert_true(gq_card_verdict_parse("incomplete", &v) && v == GQ_CV_INCOMPLETE);
    assert_false(gq_card_verdict_parse("Pass", &v));
    assert_false(gq_card_verdict_parse("", &v));
    assert_false(gq_card_verdict_parse(NULL, &v));
    assert_true(gq_evidence_parse("unknown", &e) && e == GQ_EV_UNKNOWN);
    assert_false(gq_evidence_parse("measure", &e));
    assert_true(gq_ev_reason_parse("one_gpu", &r) && r == GQ_EVR_ONE_GPU);
    assert_false(gq_ev_reason_parse("none", &r));
    assert_true(gq_card_level_parse("full", &l) && l == GQ_LEVEL_FULL);
    assert_false(gq_card_level_parse("Quick", &l));
    assert_true(gq_card_step_parse("contention", &s) && s == GQ_CS_CONTENTION);
    assert_false(gq_card_step_parse("Contention", &s));
    assert_int_equal(gq_card_check_step("agree_sm_clock"), GQ_CS_STRESS);
    assert_int_equal(gq_card_check_step("p2p_latency_ns_max"), GQ_CS_LATENCY);
    assert_int_equal(gq_card_check_step("impossible"), GQ_CS_IDENTITY);
    assert_int_equal(gq_card_row_step("Concurrent GPU traffic"), GQ_CS_CONTENTION);
    assert_int_equal(gq_card_row_step("Application validation"), -1);
}

/* A schema-1 card read as schema 2: evidence from its plan's statuses and
 * notes; a check on a step the plan skipped is skip, never pass; a cut step
 * makes it INCOMPLETE; the row's words move to "measurement". */
static void schema1_card_upgraded(void **state)
{
    (void)state;
    json_t *card = load(
        "{\"verdict\": \"pass\", \"complete\": true, \"exit_code\": 0, \"expectations\": {\"file\": \"x\"},"
        " \"plan\": [{\"step\": \"identity\", \"status\": \"done\", \"note\": \"\"},"
        " {\"step\": \"host\", \"status\": \"done\", \"note\": \"\"},"
        " {\"step\": \"contention\", \"status\": \"skipped\", \"note\": \"did not fit the 30s budget\"},"
        " {\"step\": \"stress\", \"status\": \"skipped\", \"note\": \"--no-stress\", \"reason\": "
        "\"bubget\"}],"
        " \"checks\": [{\"id\": \"h2d_gbps_min\", \"subject\": \"gpu:0\", \"verdict\": \"pass\", \"text\": "
        "\"ok\"},"
        " {\"id\": \"thermal\", \"subject\": \"gpu:0\", \"verdict\": \"pass\", \"text\": \"cool\"}],"
        " \"rows\": [{\"check\": \"Host-memory traffic\", \"evidence\": \"each GPU alone\", \"result\": "
        "\"r\","
        " \"verdict\": \"pass\"}, {\"check\": \"Concurrent GPU traffic\", \"evidence\": \"pairs\","
        " \"result\": \"0 pairs\", \"verdict\": \"pass\"}, {\"check\": \"Latency\", \"evidence\": \"chase\","
        " \"result\": \"1 ns\", \"verdict\": \"pass\"}]}");
    gq_err e = {0};
    assert_int_equal(gq_card_read(card, "v1.json", &e), GQ_OK);
    const json_t *c0 = json_array_get(json_object_get(card, "checks"), 0);
    const json_t *c1 = json_array_get(json_object_get(card, "checks"), 1);
    assert_string_equal(json_string_value(json_object_get(c0, "verdict")), "pass");
    assert_string_equal(json_string_value(json_object_get(c0, "evidence")), "measured");
    assert_string_equal(json_string_value(json_object_get(c1, "verdict")), "skip");
    assert_string_equal(json_string_value(json_object_get(c1, "evidence_reason")), "user");
    assert_string_equal(rs(card, "Host-memory traffic", "measurement"), "each GPU alone");
    assert_string_equal(rs(card, "Host-memory traffic", "verdict"), "pass");
    assert_string_equal(rs(card, "Concurrent GPU traffic", "result"),
                        "not measured (did not fit the budget)");
    assert_string_equal(rs(card, "Concurrent GPU traffic", "verdict"), "skip");
    /* latency is not in the plan: unknown, never pass */
    assert_string_equal(rs(card, "Latency", "evidence"), "unknown");
    assert_string_equal(rs(card, "Latency", "verdict"), "skip");
    assert_string_equal(json_string_value(json_object_get(card, "verdict")), "incomplete");
    assert_int_equal(gq_card_exit_code(card), 5);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(card, "counts"), "pass")), 1);
    assert_string_equal(json_string_value(json_object_get(json_object_get(card, "expectations"), "file")),
                        "x");
    /* schema 1 had no plan reasons: one there is not read, and is written as the evidence says,
     * so that the upgraded card reads again */
    const json_t *p3 = json_array_get(json_object_get(card, "plan"), 3);
    assert_string_equal(json_string_value(json_object_get(p3, "reason")), "user");
    assert_int_equal(gq_card_read(card, "v1-upgraded.json", &e), GQ_OK);
    json_decref(card);
}

/* A schema-1 card without a plan is upgraded with an empty one (no step is
 * known): every row's evidence unknown, and the upgraded card reads again. */
static void schema1_card_without_plan(void **state)
{
    (void)state;
    json_t *card = load("{\"verdict\": \"pass\", \"exit_code\": 0, \"checks\": [],"
                        " \"rows\": [{\"check\": \"Latency\", \"verdict\": \"pass\", \"result\": \"1 ns\"},"
                        " {\"check\": \"Mystery\", \"verdict\": \"pass\", \"result\": \"r\"}]}");
    gq_err e = {0};
    assert_int_equal(gq_card_read(card, "v1.json", &e), GQ_OK);
    assert_true(json_is_array(json_object_get(card, "plan")));
    assert_string_equal(rs(card, "Latency", "evidence"), "unknown");
    assert_string_equal(rs(card, "Latency", "verdict"), "skip");
    /* a row of no step gpuqual knows cannot say whether it was measured: unknown, never pass */
    assert_string_equal(rs(card, "Mystery", "evidence"), "unknown");
    assert_string_equal(rs(card, "Mystery", "verdict"), "skip");
    assert_int_equal(gq_card_read(card, "v1-upgraded.json", &e), GQ_OK);
    json_decref(card);
    /* schema 1 did not check its plan: an entry of no known step (or status) said nothing about the
     * evidence and is left out, so that the upgraded card reads again */
    card = load("{\"verdict\": \"pass\", \"exit_code\": 0, \"checks\": [], \"rows\": [],"
                " \"plan\": [{\"step\": \"}stress\", \"status\": \"done\"}, \"x\", {\"step\": \"host\"},"
                " {\"step\": \"stress\", \"status\": \"skipped\", \"note\": \"--no-stress\"}]}");
    assert_int_equal(gq_card_read(card, "v1.json", &e), GQ_OK);
    const json_t *plan = json_object_get(card, "plan");
    assert_int_equal(json_array_size(plan), 1);
    assert_string_equal(json_string_value(json_object_get(json_array_get(plan, 0), "reason")), "user");
    assert_int_equal(gq_card_read(card, "v1-upgraded.json", &e), GQ_OK);
    json_decref(card);
}

/* The codec: what gq_card_to_json writes, gq_card_from_json reads back the
 * same (rows, evidence, verdict, every finding, however many). */
static void codec_round_trip(void **state)
{
    (void)state;
    gq_card *a = calloc(1, sizeof *a), *b = calloc(1, sizeof *b);
    gq_card_init(a);
    a->level = GQ_LEVEL_QUICK;
    for (int s = 0; s < GQ_CS_COUNT; s++)
        a->step_ev[s] = GQ_EV_MEASURED;
    a->step_ev[GQ_CS_STRESS] = GQ_EV_SKIPPED;
    a->step_why[GQ_CS_STRESS] = GQ_EVR_USER;
    a->nrows = 2;
    snprintf(a->rows[0].check, sizeof a->rows[0].check, "Latency");
    snprintf(a->rows[0].measurement, sizeof a->rows[0].measurement, "pointer chase");
    a->rows[0].verdict = GQ_V_PASS;
    snprintf(a->rows[1].check, sizeof a->rows[1].check, "Whole-node health");
    a->rows[1].verdict = GQ_V_PASS;
    gq_card_rest_rows(a);
    for (int k = 0; k < 100; k++) {
        char t[32];
        snprintf(t, sizeof t, "finding %d", k);
        assert_int_equal(gq_card_add_finding(a, t), GQ_OK);
    }
    gq_card_summarize(a);
    assert_string_equal(a->verdict_text, "PASS without stress");
    json_t *card = json_pack("{s:[{s:s, s:s}]}", "plan", "step", "stress", "status", "skipped");
    gq_card_to_json(a, card);
    gq_err e = {0};
    if (gq_card_from_json(card, "rt.json", b, &e))
        fail_msg("%s", e.msg);
    assert_int_equal(b->nfindings, 100);
    assert_string_equal(b->findings[99], "finding 99");
    assert_int_equal(b->nrows, 2);
    assert_string_equal(b->rows[0].measurement, "pointer chase");
    assert_int_equal(b->rows[1].verdict, GQ_V_SKIP);
    assert_int_equal(b->rows[1].evidence, GQ_EV_SKIPPED);
    assert_int_equal(b->rows[1].reason, GQ_EVR_USER);
    assert_int_equal(b->rows[1].step, GQ_CS_STRESS);
    assert_int_equal(b->verdict, GQ_CV_PASS);
    assert_int_equal(b->level, GQ_LEVEL_QUICK);
    assert_true(b->turned_off[GQ_CS_STRESS]);
    assert_string_equal(b->verdict_text, "PASS without stress");
    json_decref(card);
    gq_card_free(a);
    gq_card_free(b);
    free(a);
    free(b);
}

/* The card's host name: the caller's, else the topology's, else "unknown";
 * without a topology or records, a refusal. */
static void compose_hostname(void **state)
{
    (void)state;
    gq_topo *t = calloc(1, sizeof *t);
    assert_non_null(t);
    gq_topo_init(t);
    t->ngpu = 1;
    gq_recordset rs = {0};
    gq_err e = {0};
    gq_card_inputs in = {.topo = t, .rs = &rs};
    json_t *c = gq_card_compose(&in, &e);
    if (!c)
        fail_msg("compose: %s", e.msg);
    assert_string_equal(json_string_value(json_object_get(json_object_get(c, "card"), "hostname")),
                        "unknown");
    json_decref(c);
    snprintf(t->hostname, sizeof t->hostname, "node-a");
    c = gq_card_compose(&in, &e);
    assert_non_null(c);
    assert_string_equal(json_string_value(json_object_get(json_object_get(c, "card"), "hostname")), "node-a");
    json_decref(c);
    /* a one-character name is a name (hosts named "a" exist), as is the longest one */
    const char *names[] = {"a", "ab"};
    for (int k = 0; k < 2; k++) {
        snprintf(t->hostname, sizeof t->hostname, "%s", names[k]);
        c = gq_card_compose(&in, &e);
        assert_non_null(c);
        assert_string_equal(json_string_value(json_object_get(json_object_get(c, "card"), "hostname")),
                            names[k]);
        json_decref(c);
    }
    memset(t->hostname, 'h', sizeof t->hostname - 1);
    t->hostname[sizeof t->hostname - 1] = 0;
    c = gq_card_compose(&in, &e);
    assert_non_null(c);
    assert_string_equal(json_string_value(json_object_get(json_object_get(c, "card"), "hostname")),
                        t->hostname);
    json_decref(c);
    in.hostname = "given";
    c = gq_card_compose(&in, &e);
    assert_non_null(c);
    assert_string_equal(json_string_value(json_object_get(json_object_get(c, "card"), "hostname")), "given");
    json_decref(c);
    in.rs = NULL;
    assert_null(gq_card_compose(&in, &e));
    assert_int_equal(e.code, GQ_E_USAGE);
    assert_string_equal(e.msg, "the card needs a topology and records");
    in.rs = &rs;
    in.topo = NULL;
    e.msg[0] = 0;
    assert_null(gq_card_compose(&in, &e));
    assert_string_equal(e.msg, "the card needs a topology and records");
    free(t);
}

/* The CUDA versions of the identity: driver 12040 reads "12.4", runtime
 * 12020 "12.2"; a version not known (-1) reads "unknown". */
static void compose_cuda_versions(void **state)
{
    (void)state;
    gq_topo *t = calloc(1, sizeof *t);
    assert_non_null(t);
    gq_topo_init(t);
    t->ngpu = 1;
    t->cuda_driver_version = 12040;
    t->cuda_runtime_version = 12020;
    gq_recordset rs = {0};
    gq_err e = {0};
    gq_card_inputs in = {.topo = t, .rs = &rs};
    for (int known = 1; known >= 0; known--) {
        if (!known)
            t->cuda_runtime_version = -1;
        json_t *c = gq_card_compose(&in, &e);
        if (!c)
            fail_msg("compose: %s", e.msg);
        const json_t *id = json_object_get(json_object_get(c, "card"), "identity");
        const char *d = json_string_value(json_object_get(id, "cuda_driver_str"));
        const char *r = json_string_value(json_object_get(id, "cuda_runtime_str"));
        assert_non_null(d);
        assert_non_null(r);
        assert_string_equal(d, "12.4");
        assert_string_equal(r, known ? "12.2" : "unknown");
        json_decref(c);
    }
    free(t);
}

/* A card resumed from its journal re-uses the collectives step's groups only
 * when they are tp GPUs each, of the selected GPUs only, none shared, with
 * their figures alone: GPUs 0,1,4,5 selected, tp 2. */
static void coll_journal_reuse(void **state)
{
    (void)state;
    const int sel[] = {0, 1, 4, 5};
    const struct {
        const char *groups;
        bool reusable;
    } cases[] = {
        {"[[0,1],[4,5]]", true},    {"[[5,4],[1,0]]", true},
        {"[[2,3],[0,1]]", false},   /* a group outside the selection */
        {"[[0,1],[0,1]]", false},   /* the same group twice */
        {"[[0,1],[1,4]]", false},   /* GPU 1 in two groups */
        {"[[0,1,4],[5]]", false},   /* groups of 3 and 1 */
        {"[[0,1],[4,5,6]]", false}, /* a group of 3, one GPU outside */
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        json_error_t je;
        json_t *gs = json_loads(cases[k].groups, 0, &je), *groups = json_array();
        assert_non_null(gs);
        size_t i;
        json_t *g;
        json_array_foreach(gs, i, g)
            json_array_append_new(groups, json_pack("{s:O, s:f, s:f}", "gpus", g, "alone_busbw_gbps",
                                                    10.0 + (double)i, "at_once_busbw_gbps", 9.0));
        json_decref(gs);
        gq_journal j;
        memset(&j, 0, sizeof j);
        j.done_steps = json_pack("{s:{s:s, s:s, s:{s:s, s:i, s:I, s:i, s:b, s:o, s:f, s:f, s:f}}}",
                                 "collectives", "step", "collectives", "status", "done", "collectives", "op",
                                 "all_reduce", "tp", 2, "bytes", (json_int_t)GQ_CARD_COLL_BYTES, "measured",
                                 2, "kept_naive", 0, "groups", groups, "min_alone_busbw_gbps", 10.0,
                                 "min_at_once_busbw_gbps", 9.0, "naive_min_at_once_busbw_gbps", 9.0);
        assert_non_null(j.done_steps);
        gq_card_coll_view v;
        bool got = gq_card_coll_journal_reusable(&j, 2, GQ_CARD_COLL_BYTES, sel, 4, &v);
        if (got != cases[k].reusable)
            fail_msg("groups %s: reusable %d, want %d", cases[k].groups, got, cases[k].reusable);
        if (got)
            assert_int_equal(v.ngroups, 2);
        /* another size or tp is measured again */
        if (cases[k].reusable) {
            assert_false(gq_card_coll_journal_reusable(&j, 2, GQ_CARD_COLL_BYTES / 2, sel, 4, &v));
            assert_false(gq_card_coll_journal_reusable(&j, 4, GQ_CARD_COLL_BYTES, sel, 4, &v));
        }
        json_decref(j.done_steps);
    }
}

/* A slow collective (every group under 1 GB/s alone, PCIe-only or a sim
 * machine of slow links) is re-used as well; an unknown minimum is not. */
static void coll_journal_reuse_slow(void **state)
{
    (void)state;
    const int sel[] = {0, 1, 4, 5};
    const double mins[] = {0.25, 0.0, -1.0};
    const bool want[] = {true, true, false};
    for (int k = 0; k < 3; k++) {
        gq_journal j;
        memset(&j, 0, sizeof j);
        j.done_steps = json_pack("{s:{s:s, s:s, s:{s:s, s:i, s:I, s:i, s:b, s:[{s:[i,i], s:f, s:f}, "
                                 "{s:[i,i], s:f, s:f}], s:f, s:f, "
                                 "s:f}}}",
                                 "collectives", "step", "collectives", "status", "done", "collectives", "op",
                                 "all_reduce", "tp", 2, "bytes", (json_int_t)GQ_CARD_COLL_BYTES, "measured",
                                 2, "kept_naive", 0, "groups", "gpus", 0, 1, "alone_busbw_gbps", 0.5,
                                 "at_once_busbw_gbps", 0.25, "gpus", 4, 5, "alone_busbw_gbps", 0.75,
                                 "at_once_busbw_gbps", 0.25, "min_alone_busbw_gbps", mins[k],
                                 "min_at_once_busbw_gbps", 0.25, "naive_min_at_once_busbw_gbps", 0.25);
        assert_non_null(j.done_steps);
        gq_card_coll_view v;
        bool got = gq_card_coll_journal_reusable(&j, 2, GQ_CARD_COLL_BYTES, sel, 4, &v);
        if (got != want[k])
            fail_msg("min_alone_busbw_gbps %g: reusable %d, want %d", mins[k], got, want[k]);
        if (got)
            assert_true(v.min_alone == mins[k] && v.ngroups == 2);
        json_decref(j.done_steps);
    }
}

/* Busy GPUs in the verdict: without --allow-busy the card is INCOMPLETE,
 * naming every busy GPU (GPU 0 and the last one included) in index order;
 * allowed, the verdict keeps its word and adds them. */
static void summarize_busy(void **state)
{
    (void)state;
    gq_card *a = calloc(1, sizeof *a);
    assert_non_null(a);
    gq_card_init(a);
    a->level = GQ_LEVEL_QUICK;
    for (int s = 0; s < GQ_CS_COUNT; s++)
        a->step_ev[s] = GQ_EV_MEASURED;
    a->step_ev[GQ_CS_STRESS] = GQ_EV_SKIPPED;
    a->step_why[GQ_CS_STRESS] = GQ_EVR_USER;
    a->nrows = 1;
    snprintf(a->rows[0].check, sizeof a->rows[0].check, "Latency");
    a->rows[0].verdict = GQ_V_PASS;
    gq_card_rest_rows(a);
    gq_card_summarize(a);
    assert_string_equal(a->verdict_text, "PASS without stress");
    assert_int_equal(a->verdict, GQ_CV_PASS);
    /* one busy GPU: GPU 0 */
    a->nbusy = 1;
    a->busy_records[0] = 2;
    gq_card_summarize(a);
    assert_int_equal(a->verdict, GQ_CV_INCOMPLETE);
    assert_string_equal(a->verdict_text, "INCOMPLETE: GPU 0 busy");
    assert_int_equal(a->exit_code, gq_card_verdict_exit_code(GQ_CV_INCOMPLETE));
    /* three, the first and the last index among them */
    a->nbusy = 3;
    a->busy_records[7] = 1;
    a->busy_records[GQ_MAX_GPUS - 1] = 5;
    gq_card_summarize(a);
    assert_string_equal(a->verdict_text, "INCOMPLETE: GPUs 0,7,63 busy");
    /* allowed: the verdict stands, the busy GPUs are said */
    a->allow_busy = true;
    gq_card_summarize(a);
    assert_int_equal(a->verdict, GQ_CV_PASS);
    assert_string_equal(a->verdict_text, "PASS without stress (GPUs 0,7,63 busy, allowed)");
    a->nbusy = 1;
    a->busy_records[7] = a->busy_records[GQ_MAX_GPUS - 1] = 0;
    gq_card_summarize(a);
    assert_string_equal(a->verdict_text, "PASS without stress (GPU 0 busy, allowed)");
    /* every GPU busy: the list is cut to its buffer, never past the verdict */
    a->allow_busy = false;
    a->nbusy = GQ_MAX_GPUS;
    for (int g = 0; g < GQ_MAX_GPUS; g++)
        a->busy_records[g] = 1;
    gq_card_summarize(a);
    assert_int_equal(strncmp(a->verdict_text, "INCOMPLETE: GPUs 0,1,2,3,", 25), 0);
    assert_true(strlen(a->verdict_text) < sizeof a->verdict_text);
    free(a);
}

/* The placement row's result: pairs, offload workers and the gain, each
 * whole; pairs enough to fill the row leave out what no longer fits whole,
 * never a dangling "offload on" or a cut pair. */
static void row_placement_json(gq_card *rows, const gq_checklist *cl, const json_t *pl)
{
    gq_card_placement_view *v = malloc(sizeof *v);
    assert_non_null(v);
    gq_card_placement_view_from_json(pl, v);
    gq_judge_row_placement(rows, cl, v);
    free(v);
}

static void placement_row_fits(void **state)
{
    (void)state;
    gq_card *rows = calloc(1, sizeof *rows);
    assert_non_null(rows);
    gq_checklist cl = {0};
    json_t *pl = json_pack("{s:{s:i, s:i, s:i}, s:[{s:i, s:i}, {s:i, s:i}], s:[{s:i}, {s:i}], s:f}", "roles",
                           "prefill", 2, "decode", 2, "offload", 2, "pairs", "prefill", 0, "decode", 2,
                           "prefill", 1, "decode", 3, "offload", "gpu", 0, "gpu", 5, "gain", 1.5);
    row_placement_json(rows, &cl, pl);
    assert_int_equal(rows->nrows, 1);
    assert_string_equal(rows->rows[0].check, "Placement");
    assert_string_equal(rows->rows[0].result, "pairs 0→2 1→3; offload on 0, 5; 1.50× the naive mapping");
    json_decref(pl);
    /* offload only */
    pl = json_pack("{s:{s:i}, s:[{s:i}], s:f}", "roles", "offload", 1, "offload", "gpu", 7, "gain", 2.0);
    row_placement_json(rows, &cl, pl);
    assert_string_equal(rows->rows[1].result, "offload on 7; 2.00× the naive mapping");
    json_decref(pl);
    /* 64 pairs of two-digit GPUs: the row takes the pairs that fit */
    pl = json_pack("{s:{s:i, s:i}, s:[], s:[{s:i}, {s:i}], s:f}", "roles", "prefill", 64, "decode", 64,
                   "pairs", "offload", "gpu", 10, "gpu", 11, "gain", 1.25);
    json_t *pp = json_object_get(pl, "pairs");
    for (int i = 0; i < 64; i++)
        json_array_append_new(pp, json_pack("{s:i, s:i}", "prefill", 10 + i % 27, "decode", 37 + i % 27));
    row_placement_json(rows, &cl, pl);
    const char *r = rows->rows[2].result;
    assert_true(strlen(r) < sizeof rows->rows[2].result);
    assert_int_equal(strncmp(r, "pairs 10→37 11→38 ", strlen("pairs 10→37 11→38 ")), 0);
    assert_null(strstr(r, "offload"));
    assert_null(strstr(r, "naive"));
    /* it ends with a whole pair, the k-th */
    int k = 0;
    for (const char *p = r; (p = strstr(p, "→")) != NULL; p++)
        k++;
    assert_true(k > 40 && k < 64);
    char last[32];
    snprintf(last, sizeof last, " %d→%d", 10 + (k - 1) % 27, 37 + (k - 1) % 27);
    assert_string_equal(r + strlen(r) - strlen(last), last);
    json_decref(pl);
    free(rows);
}

/* A placement entry whose GPU is not a number reads as GPU 0, as the judge
 * read it from the JSON before the typed views (doc/card_views_json.c). */
static void placement_row_gpu_not_a_number(void **state)
{
    (void)state;
    gq_card *rows = calloc(1, sizeof *rows);
    assert_non_null(rows);
    gq_checklist cl = {0};
    json_t *pl = json_pack("{s:[{s:s, s:i}], s:[{s:s}, {}, {s:i}]}", "pairs", "prefill", "x", "decode", 3,
                           "offload", "gpu", "x", "gpu", 5);
    row_placement_json(rows, &cl, pl);
    assert_string_equal(rows->rows[0].result, "pairs 0→3; offload on 0, 0, 5");
    json_decref(pl);
    free(rows);
}

/* A pair's isolated rate on a full 64-GPU matrix is its own cell, read only
 * from the matrix's 64 rows (GPU 0 -> GPU 1 here, with a spread beside it). */
static void pair_isolated_full_matrix(void **state)
{
    (void)state;
    gq_pairmatrix *m = calloc(1, sizeof *m);
    assert_non_null(m);
    m->n = GQ_MAX_GPUS;
    for (int i = 0; i < GQ_MAX_GPUS; i++) {
        m->gpu[i] = i;
        for (int j = 0; j < GQ_MAX_GPUS; j++)
            m->gbps[i][j] = i == j ? NAN : 50 + i;
    }
    m->spread[0][1] = 0.25;
    assert_true(gq_card_pair_isolated(m, 0, 1) == 50);
    assert_true(gq_card_pair_isolated(m, 63, 0) == 113);
    assert_true(isnan(gq_card_pair_isolated(m, 0, 64)));
    free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(overall_from_evidence),
        cmocka_unit_test(step_skipped_by_error_is_incomplete),
        cmocka_unit_test(names_parse_strictly),
        cmocka_unit_test(schema1_card_upgraded),
        cmocka_unit_test(codec_round_trip),
        cmocka_unit_test(summarize_busy),
        cmocka_unit_test(placement_row_fits),
        cmocka_unit_test(placement_row_gpu_not_a_number),
        cmocka_unit_test(schema1_card_without_plan),
        cmocka_unit_test(facts_by_position),
        cmocka_unit_test(facts_from_records),
        cmocka_unit_test(empty_card_rows),
        cmocka_unit_test(one_gpu_stress_row),
        cmocka_unit_test(pairs_finding_needs_both),
        cmocka_unit_test(exit_codes),
        cmocka_unit_test(rows_do_not_inherit),
        cmocka_unit_test(long_offload_list),
        cmocka_unit_test(identity_huge_memory),
        cmocka_unit_test(latency_list_capped),
        cmocka_unit_test(one_record_is_measured),
        cmocka_unit_test(facts_power_nvlinks_matrices),
        cmocka_unit_test(facts_uplinks_capped),
        cmocka_unit_test(link_gen_under_load),
        cmocka_unit_test(pair_list_limit),
        cmocka_unit_test(placement_row_pair_limit),
        cmocka_unit_test(compose_hostname),
        cmocka_unit_test(compose_cuda_versions),
        cmocka_unit_test(coll_journal_reuse),
        cmocka_unit_test(coll_journal_reuse_slow),
        cmocka_unit_test(pair_isolated_full_matrix),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
