/* Readers' refusals no other test reached (issue 30): the card codec's
 * shape checks (an entry or plan step that is not an object, a plan that is
 * not a list, a bad card_version, a finding that is not a string, a bad
 * level), the compare reader's stress and verdict refusals, the bottleneck
 * reader's list checks, a document's run_id, and a threshold with only
 * "warn". Each checks the message, so a slip in a refusal fails it. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "analysis/card.h"
#include "analysis/compare.h"
#include "analysis/expect.h"
#include "analysis/stress.h"
#include "doc/analysis_json.h"
#include "doc/card_codec.h"
#include "doc/card_compose.h"
#include "doc/card_figs.h"
#include "doc/decode.h"
#include "doc/document.h"
#include "doc/expect_load.h"
#include "doc/kv_config.h"
#include "doc/kv_doc.h"
#include "topo/snapshot.h"

/* A schema-2 card section that reads: every step measured, nothing judged. */
static json_t *good_card(void)
{
    gq_card *a = calloc(1, sizeof *a);
    gq_card_init(a);
    for (int s = 0; s < GQ_CS_COUNT; s++)
        a->step_ev[s] = GQ_EV_MEASURED;
    a->nrows = 1;
    snprintf(a->rows[0].check, sizeof a->rows[0].check, "Latency");
    a->rows[0].verdict = GQ_V_PASS;
    gq_card_rest_rows(a);
    assert_int_equal(gq_card_add_finding(a, "one finding"), GQ_OK);
    gq_card_summarize(a);
    json_t *card = json_pack("{s:[{s:s, s:s}]}", "plan", "step", "host", "status", "done");
    gq_card_to_json(a, card);
    gq_card_free(a);
    free(a);
    return card;
}

/* The good card with KEY set to the JSON text VAL (NULL: removed); the
 * reader's message, or "" when it reads. */
static const char *card_msg(const char *key, const char *val)
{
    static gq_err e;
    memset(&e, 0, sizeof e);
    json_t *card = good_card();
    if (key && val) {
        json_error_t je;
        json_t *v = json_loads(val, JSON_DECODE_ANY, &je);
        assert_non_null(v);
        json_object_set_new(card, key, v);
    } else if (key)
        json_object_del(card, key);
    gq_card *c = calloc(1, sizeof *c);
    int rc = gq_card_from_json(card, "c.json", c, &e);
    if (!rc)
        gq_card_free(c);
    else
        assert_int_equal(rc, GQ_E_USAGE);
    free(c);
    json_decref(card);
    return rc ? e.msg : "";
}

static void card_shape_refusals(void **state)
{
    (void)state;
    assert_string_equal(card_msg(NULL, NULL), "");
    assert_string_equal(card_msg("checks", "[5]"), "c.json: card.checks[0] is not an object");
    assert_string_equal(card_msg("rows", "[[]]"), "c.json: card.rows[0] is not an object");
    assert_string_equal(card_msg("plan", "{}"),
                        "c.json: card.plan is not an array, expected an array of steps");
    assert_string_equal(card_msg("plan", NULL), "c.json: card.plan is missing, expected an array of steps");
    assert_string_equal(
        card_msg("plan", "[{\"step\": \"host\", \"status\": \"done\", \"reason\": null}, \"host\"]"),
        "c.json: card.plan[1] is not an object");
    const char *m = card_msg("plan", "[{\"step\": \"host\", \"status\": \"done\", \"reason\": \"whim\"}]");
    assert_non_null(strstr(m, "c.json: card.plan[0].reason is \"whim\", expected "));
    assert_non_null(strstr(m, " or null"));
    m = card_msg("plan", "[{\"step\": \"host\", \"status\": \"half\"}]");
    assert_non_null(strstr(m, "c.json: card.plan[0].status is \"half\", expected \"planned\""));
    assert_string_equal(card_msg("card_version", "0"),
                        "c.json: card.card_version is not a whole number >= 1");
    assert_string_equal(card_msg("card_version", "\"2\""),
                        "c.json: card.card_version is not a whole number >= 1");
    assert_string_equal(card_msg("findings", "[\"a\", \"b\", 3]"),
                        "c.json: card.findings[2] is not a string");
    assert_string_equal(card_msg("level", "\"huge\""),
                        "c.json: card.level is \"huge\", expected \"quick\", \"standard\" or \"full\"");
    assert_string_equal(card_msg("verdict_text", "7"),
                        "c.json: card.verdict_text is not a string, expected a string");
    /* a card that is not an object */
    gq_err e = {0};
    gq_card *c = calloc(1, sizeof *c);
    json_t *arr = json_array();
    assert_int_equal(gq_card_from_json(arr, "c.json", c, &e), GQ_E_USAGE);
    assert_string_equal(e.msg, "c.json: card is not an object");
    json_decref(arr);
    free(c);
}

/* "busy": an entry whose GPU is not an index 0..63, or a GPU seen before, is
 * passed over; records out of range count as 1. */
static void card_busy_entries(void **state)
{
    (void)state;
    json_t *card = good_card();
    json_error_t je;
    json_object_set_new(
        card, "busy",
        json_loads("[{\"gpu\": 1, \"records\": 3, \"what\": \"pid 7\"}, {\"gpu\": 1, \"records\": 9},"
                   " {\"gpu\": \"2\", \"records\": 4}, {\"gpu\": -1}, {\"gpu\": 64},"
                   " {\"gpu\": 5, \"records\": 0}, {\"gpu\": 6, \"records\": 2000000000}]",
                   0, &je));
    gq_card *c = calloc(1, sizeof *c);
    gq_err e = {0};
    assert_int_equal(gq_card_from_json(card, "c.json", c, &e), GQ_OK);
    assert_int_equal(c->nbusy, 3);
    assert_int_equal(c->busy_records[1], 3);
    assert_string_equal(c->busy_what[1], "pid 7");
    assert_int_equal(c->busy_records[2], 0);
    assert_int_equal(c->busy_records[5], 1);
    assert_int_equal(c->busy_records[6], 1);
    gq_card_free(c);
    free(c);
    json_decref(card);
}

/* compare's reader: the stress section and the card's verdict. */
static const char *cmp_msg(const char *text)
{
    static gq_err e;
    memset(&e, 0, sizeof e);
    json_error_t je;
    json_t *root = json_loads(text, 0, &je);
    assert_non_null(root);
    gq_cmp_doc *d = calloc(1, sizeof *d);
    int rc = gq_cmp_doc_from_json("d.json", root, d, &e);
    json_decref(root);
    int n = d->nstress;
    free(d);
    if (!rc)
        snprintf(e.msg, sizeof e.msg, "ok %d", n);
    return e.msg;
}

static void compare_reader_refusals(void **state)
{
    (void)state;
    assert_string_equal(cmp_msg("{\"card\": {\"verdict\": \"great\"}}"),
                        "d.json: card.verdict: is \"great\", expected one of \"pass\", \"warn\", \"fail\", "
                        "\"incomplete\"");
    assert_string_equal(cmp_msg("{\"card\": {\"verdict\": \"warn\"}, \"stress\": 5}"),
                        "d.json: stress: is 5, expected an object");
    assert_string_equal(cmp_msg("{\"stress\": {}}"), "ok 0");
    assert_string_equal(cmp_msg("{\"stress\": {\"gpus\": null}}"), "ok 0");
    assert_string_equal(cmp_msg("{\"stress\": {\"gpus\": 3}}"),
                        "d.json: stress.gpus: is 3, expected a list of at most 64 GPUs");
    assert_string_equal(cmp_msg("{\"stress\": {\"gpus\": [{\"gpu\": 1.5}]}}"),
                        "d.json: stress.gpus[0].gpu: is 1.5, expected a GPU index 0..63");
    gq_err e = {0};
    char buf[8];
    json_t *three = json_integer(3);
    assert_int_equal(gq_dec_str("p", "k", three, false, buf, sizeof buf, &e), GQ_E_USAGE);
    assert_string_equal(e.msg, "p: k: is 3, expected a string");
    assert_int_equal(gq_dec_str("p", "k", three, true, buf, sizeof buf, &e), GQ_E_USAGE);
    assert_string_equal(e.msg, "p: k: is 3, expected a string or null");
    json_decref(three);
}

static const char *bn_msg(const char *text)
{
    static gq_err e;
    memset(&e, 0, sizeof e);
    json_error_t je;
    json_t *root = json_loads(text, 0, &je);
    assert_non_null(root);
    gq_bottlenecks *b = calloc(1, sizeof *b);
    int rc = gq_bottlenecks_from_json("b.json", root, 2, b, &e);
    json_decref(root);
    free(b);
    if (!rc)
        snprintf(e.msg, sizeof e.msg, "ok");
    return e.msg;
}

static void bottleneck_list_refusals(void **state)
{
    (void)state;
    assert_string_equal(bn_msg("{\"bottlenecks\": []}"), "ok");
    assert_string_equal(bn_msg("{\"bottlenecks\": 4}"),
                        "b.json: bottlenecks: is 4, expected a list of at most 64 bottlenecks");
    assert_string_equal(
        bn_msg("{\"bottlenecks\": [7]}"),
        "b.json: bottlenecks[0]: is 7, expected an object {gpus, direction, capacity_gbps, ...}");
}

/* A document whose run_id is not a string. */
static void doc_run_id_not_a_string(void **state)
{
    (void)state;
    char path[] = "/tmp/gq-doc-runid-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    const char *text = "{\"tool\": \"gpuqual\", \"schema_version\": 1, \"run_id\": 12}";
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    json_t *root = NULL;
    gq_err e = {0};
    assert_int_equal(gq_doc_load(path, &root, NULL, &e), GQ_E_USAGE);
    char want[160];
    snprintf(want, sizeof want, "%s: run_id: is not a string, expected \"YYYYMMDDTHHMMSSZ-xxxxxxxx\"", path);
    assert_string_equal(e.msg, want);
    assert_null(root);
    unlink(path);
}

/* A threshold with only "warn": its fail is never reached (-inf for a
 * minimum, +inf for a maximum). */
static void threshold_warn_only(void **state)
{
    (void)state;
    gq_expect *ex = calloc(1, sizeof *ex);
    gq_err e = {0};
    assert_int_equal(gq_expect_parse("{\"gpuqual_expect\": 1, \"models\": [{\"match\": \"H100\","
                                     " \"h2d_gbps_min\": {\"warn\": 50}, \"temp_c_max\": {\"warn\": 85}}]}",
                                     "w.expect", ex, &e),
                     GQ_OK);
    const gq_threshold *t = &ex->models[0].th[GQ_EXK_H2D_GBPS_MIN];
    assert_true(t->set && t->has_warn && t->warn == 50);
    assert_true(isinf(t->fail) && t->fail < 0);
    t = &ex->models[0].th[GQ_EXK_TEMP_C_MAX];
    assert_true(t->set && t->has_warn && t->warn == 85);
    assert_true(isinf(t->fail) && t->fail > 0);
    free(ex);
}

/* A model config's window rules: the message (or the rule and the count). */
static const char *kv_msg(const char *text, gq_kv_shape *sh)
{
    static gq_err e;
    memset(&e, 0, sizeof e);
    json_error_t je;
    json_t *root = json_loads(text, 0, &je);
    assert_non_null(root);
    bool has = false;
    int rc = gq_kv_config_parse(root, "cfg.json", sh, &has, &e);
    json_decref(root);
    if (!rc)
        snprintf(e.msg, sizeof e.msg, "%s", sh->window_rule);
    return e.msg;
}

#define KV_BASE "{\"num_hidden_layers\": 12, \"num_key_value_heads\": 2, \"head_dim\": 64, "

static void kv_config_window_rules(void **state)
{
    (void)state;
    gq_kv_shape sh;
    assert_string_equal(kv_msg(KV_BASE "\"layer_types\": [\"sliding_attention\", \"full_attention\", "
                                       "\"full_attention\", \"full_attention\", \"full_attention\", "
                                       "\"full_attention\", \"full_attention\", \"full_attention\", "
                                       "\"full_attention\", \"full_attention\", \"full_attention\", "
                                       "\"sliding_attention\"]}",
                               &sh),
                        "cfg.json: layer_types lists 2 sliding_attention layers but the config has no "
                        "'sliding_window' (the window in tokens)");
    assert_string_equal(
        kv_msg(KV_BASE
               "\"model_type\": \"gemma3\", \"sliding_window\": 512, \"sliding_window_pattern\": 1.5}",
               &sh),
        "cfg.json: field 'sliding_window_pattern' must be a positive integer, not a fraction");
    assert_string_equal(
        kv_msg(KV_BASE
               "\"model_type\": \"gemma3\", \"sliding_window\": 512, \"_sliding_window_pattern\": -2}",
               &sh),
        "cfg.json: field '_sliding_window_pattern' is -2; it must be a positive integer");
    assert_string_equal(kv_msg(KV_BASE "\"model_type\": \"gemma3_text\", \"sliding_window\": 512}", &sh),
                        "gemma3_text: every layer but each 6-th (sliding_window_pattern; 10 of 12)");
    assert_int_equal(sh.window_layers, 10);
    assert_int_equal(sh.window, 512);
    assert_string_equal(kv_msg(KV_BASE "\"model_type\": \"gemma3\", \"sliding_window\": 512, "
                                       "\"_sliding_window_pattern\": 4}",
                               &sh),
                        "gemma3: every layer but each 4-th (sliding_window_pattern; 9 of 12)");
    assert_string_equal(
        kv_msg(KV_BASE "\"model_type\": \"qwen2\", \"sliding_window\": 4096, \"max_window_layers\": \"4\"}",
               &sh),
        "cfg.json: field 'max_window_layers' must be a positive integer, not a string");
    assert_string_equal(
        kv_msg(KV_BASE "\"model_type\": \"qwen3\", \"sliding_window\": 4096}", &sh),
        "cfg.json: qwen3 uses sliding_window 4096 from layer 'max_window_layers' on, and that "
        "field is missing");
    assert_string_equal(
        kv_msg(KV_BASE "\"model_type\": \"qwen3\", \"sliding_window\": 4096, \"max_window_layers\": null}",
               &sh),
        "cfg.json: qwen3 uses sliding_window 4096 from layer 'max_window_layers' on, and that "
        "field is missing");
    assert_string_equal(
        kv_msg("{\"num_hidden_layers\": 12, \"kv_lora_rank\": true, \"qk_rope_head_dim\": 64}", &sh),
        "cfg.json: field 'kv_lora_rank' must be a positive integer, not a boolean");
    assert_string_equal(
        kv_msg("{\"num_hidden_layers\": 12, \"kv_lora_rank\": 512, \"qk_rope_head_dim\": [64]}", &sh),
        "cfg.json: field 'qk_rope_head_dim' must be a positive integer, not a list");
}

/* A stress section with more findings than a summary holds is not one
 * gpuqual wrote; 256 read. */
static void stress_too_many_findings(void **state)
{
    (void)state;
    gq_stress_result *r = calloc(1, sizeof *r);
    gq_stress_summary *s = calloc(1, sizeof *s);
    json_t *sec = gq_stress_to_json(r, s);
    assert_non_null(sec);
    json_t *fs = json_array();
    for (int k = 0; k < GQ_STRESS_MAX_FINDINGS; k++)
        json_array_append_new(
            fs, json_pack("{s:s, s:i, s:s, s:s}", "level", "warn", "gpu", 0, "rule", "r", "text", "t"));
    json_object_set(sec, "findings", fs);
    gq_err e = {0};
    assert_int_equal(gq_stress_from_json(sec, r, s, &e), GQ_OK);
    assert_int_equal(s->nfindings, GQ_STRESS_MAX_FINDINGS);
    json_array_append_new(fs, json_pack("{s:s}", "level", "warn"));
    assert_int_equal(gq_stress_from_json(sec, r, s, &e), GQ_E_USAGE);
    assert_string_equal(e.msg, "the stress section's list of findings is missing or not what gpuqual writes");
    json_decref(fs);
    json_decref(sec);
    free(r);
    free(s);
}

/* A schema-1 plan's notes give the reason a step was skipped: one GPU, the
 * level, else not applicable. */
static void schema1_plan_notes(void **state)
{
    (void)state;
    json_t *card =
        json_loads("{\"plan\": [{\"step\": \"matrix\", \"status\": \"skipped\", \"note\": \"only one GPU\"},"
                   " {\"step\": \"sweep\", \"status\": \"skipped\", \"note\": \"not at the quick level\"},"
                   " {\"step\": \"latency\", \"status\": \"skipped\", \"note\": \"levels\"}]}",
                   0, NULL);
    assert_non_null(card);
    gq_evidence ev[GQ_CS_COUNT];
    gq_ev_reason why[GQ_CS_COUNT];
    gq_card_plan_evidence(card, ev, why);
    assert_int_equal(ev[GQ_CS_MATRIX], GQ_EV_SKIPPED);
    assert_int_equal(why[GQ_CS_MATRIX], GQ_EVR_ONE_GPU);
    assert_int_equal(why[GQ_CS_SWEEP], GQ_EVR_LEVEL);
    assert_int_equal(why[GQ_CS_LATENCY], GQ_EVR_NOT_APPLICABLE);
    json_decref(card);
}

/* A card composed on no GPU: no domains (null), nothing undetermined. */
static void compose_no_gpu(void **state)
{
    (void)state;
    gq_topo *t = calloc(1, sizeof *t);
    gq_topo_init(t);
    t->ngpu = 0;
    gq_recordset rs = {0};
    gq_err e = {0};
    gq_card_inputs in = {.topo = t, .rs = &rs};
    json_t *c = gq_card_compose(&in, &e);
    if (!c)
        fail_msg("compose: %s", e.msg);
    const json_t *card = json_object_get(c, "card");
    assert_true(json_is_null(json_object_get(card, "domains")));
    assert_int_equal(json_array_size(json_object_get(card, "undetermined")), 0);
    assert_string_equal(json_string_value(json_object_get(card, "verdict")), "incomplete");
    json_decref(c);
    free(t);
}

/* The domains view: a set_aside entry whose GPU is not a whole number is
 * passed over. */
static void domains_view_set_aside(void **state)
{
    (void)state;
    json_t *dm = json_loads("{\"set_aside\": [{\"gpu\": \"1\", \"text\": \"a\"}, {\"gpu\": 2.5},"
                            " {\"gpu\": 3, \"text\": \"slow link\"}, {\"gpu\": 4}]}",
                            0, NULL);
    assert_non_null(dm);
    gq_card_domains_view *v = calloc(1, sizeof *v);
    gq_card_domains_view_from_json(dm, v);
    assert_int_equal(v->nset_aside, 2);
    assert_int_equal(v->set_aside[0].gpu, 3);
    assert_true(v->set_aside[0].have_text);
    assert_string_equal(v->set_aside[0].text, "slow link");
    assert_int_equal(v->set_aside[1].gpu, 4);
    assert_false(v->set_aside[1].have_text);
    free(v);
    json_decref(dm);
}

/* kv's document: a measurement that failed says its error; with no best
 * chunk the pipelined measurement is null. */
static void kv_doc_errors(void **state)
{
    (void)state;
    gq_kv_result *k = calloc(1, sizeof *k);
    k->shape.layers = 2;
    k->measured = true;
    k->nchunks = 1;
    k->chunk[0] = 1 << 20;
    k->pipe[0].run = true;
    snprintf(k->pipe[0].error, sizeof k->pipe[0].error, "chunk timed out");
    k->best_chunk = -1;
    k->direct.run = true;
    snprintf(k->direct.error, sizeof k->direct.error, "no P2P");
    k->serial.run = true;
    json_t *o = gq_kv_result_to_json(k);
    assert_non_null(o);
    const json_t *m = json_object_get(o, "measured");
    assert_string_equal(json_string_value(json_object_get(json_object_get(m, "direct"), "error")), "no P2P");
    assert_null(json_object_get(json_object_get(m, "staged_serial"), "error"));
    assert_true(json_is_null(json_object_get(m, "staged_pipelined")));
    json_decref(o);
    free(k);
}

/* The card's figures: a matrix whose values have more rows than it has GPUs
 * is not read; a pairs side that is not an object is absent. */
static void card_figs_shapes(void **state)
{
    (void)state;
    json_t *card = good_card();
    json_object_set_new(card, "matrices",
                        json_loads("[{\"id\": \"m\", \"gpus\": [0, 1], \"values\": [[1, 2], [3, 4], [5, 6]]},"
                                   " {\"id\": \"n\", \"gpus\": [0, 1], \"values\": [[1, 2], [3, 4]]}]",
                                   0, NULL));
    json_object_set_new(
        card, "pairs",
        json_loads("{\"within\": 5, \"across\": {\"pairs\": [[0, 1]], \"valid\": false}}", 0, NULL));
    json_t *root = json_pack("{s:o}", "card", card);
    gq_card_doc *d = NULL;
    gq_err e = {0};
    if (gq_card_doc_from_json(root, &d, &e))
        fail_msg("%s", e.msg);
    assert_int_equal(d->nmatrices, 2);
    assert_true(d->matrices[0].present);
    assert_int_equal(d->matrices[0].n, 0);
    assert_null(d->matrices[0].vals);
    assert_int_equal(d->matrices[1].n, 2);
    assert_true(d->matrices[1].vals[3] == 4);
    assert_true(d->pairs.present);
    assert_false(d->pairs.side[0].present);
    assert_int_equal(d->pairs.side[0].npairs, 0);
    assert_true(d->pairs.side[1].present);
    assert_int_equal(d->pairs.side[1].npairs, 1);
    assert_true(d->pairs.side[1].invalid);
    gq_card_doc_free(d);
    json_decref(root);
}

/* A document whose saved topology holds another number of GPUs than its
 * gpus list. */
static void doc_topology_gpu_count(void **state)
{
    (void)state;
    gq_topo *t = calloc(1, sizeof *t);
    gq_topo_init(t);
    t->ngpu = 1;
    snprintf(t->gpu[0].name, sizeof t->gpu[0].name, "NVIDIA Test");
    json_t *doc = json_pack("{s:s, s:i, s:[{s:i}, {s:i}], s:o}", "tool", "gpuqual", "schema_version", 1,
                            "gpus", "index", 0, "index", 1, "topology", gq_topo_to_json(t));
    free(t);
    char path[] = "/tmp/gq-doc-topo-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(json_dump_file(doc, path, 0), 0);
    json_t *root = NULL;
    gq_err e = {0};
    assert_int_equal(gq_doc_load(path, &root, NULL, &e), GQ_E_USAGE);
    char want[200];
    snprintf(want, sizeof want, "%s: topology.gpus: holds 1 GPUs, expected the document's 2", path);
    assert_string_equal(e.msg, want);
    /* the same GPU count reads */
    json_array_remove(json_object_get(doc, "gpus"), 1);
    assert_int_equal(json_dump_file(doc, path, 0), 0);
    assert_int_equal(gq_doc_load(path, &root, NULL, &e), GQ_OK);
    json_decref(root);
    unlink(path);
    json_decref(doc);
}

/* A card composed from a document's records alone: a sweep from GPU to
 * host is labelled by its GPU, and the sweep step is done. */
static void compose_sweep_to_host(void **state)
{
    (void)state;
    gq_topo *t = calloc(1, sizeof *t);
    gq_topo_init(t);
    t->ngpu = 2;
    gq_recordset rs = {0};
    for (int k = 0; k < 3; k++) {
        gq_record r;
        memset(&r, 0, sizeof r);
        snprintf(r.test, sizeof r.test, "sweep:device_to_host_memcpy_ce");
        r.src = (gq_endpoint){GQ_EP_GPU, 1};
        r.dst = (gq_endpoint){GQ_EP_HOST, 0};
        r.direction = GQ_DIR_D2H;
        r.exec_gpu = 1;
        r.bytes = (uint64_t)1 << (20 + k);
        r.valid = true;
        double v[] = {20, 20, 20};
        r.value = gq_stat_compute(v, 3);
        assert_int_equal(gq_records_push(&rs, &r), GQ_OK);
    }
    gq_err e = {0};
    gq_card_inputs in = {.topo = t, .rs = &rs};
    json_t *c = gq_card_compose(&in, &e);
    if (!c)
        fail_msg("compose: %s", e.msg);
    const json_t *card = json_object_get(c, "card");
    const json_t *sw = json_array_get(json_object_get(card, "sweeps"), 0);
    assert_string_equal(json_string_value(json_object_get(sw, "label")), "GPU 1 \u2192 host");
    size_t i;
    const json_t *st;
    bool seen = false;
    json_array_foreach(json_object_get(card, "plan"), i, st)
    {
        const char *name = json_string_value(json_object_get(st, "step"));
        if (!strcmp(name, "sweep")) {
            assert_string_equal(json_string_value(json_object_get(st, "status")), "done");
            seen = true;
        } else if (!strcmp(name, "latency"))
            assert_string_equal(json_string_value(json_object_get(st, "status")), "skipped");
    }
    assert_true(seen);
    json_decref(c);
    gq_records_free(&rs);
    free(t);
}

/* The PCIe link a GPU showed under load (the stress section's): an entry
 * whose GPU is not an index 0..63 is passed over. */
static void compose_loaded_pcie(void **state)
{
    (void)state;
    gq_topo *t = calloc(1, sizeof *t);
    gq_topo_init(t);
    t->ngpu = 1;
    t->gpu[0].pcie_gen_cur = 4;
    t->gpu[0].pcie_width_cur = 16;
    gq_recordset rs = {0};
    json_t *stress =
        json_loads("{\"gpus\": [{\"gpu\": 0, \"pcie\": {\"gen_min_loaded\": 3, \"width_min_loaded\": 8}},"
                   " {\"gpu\": 0.5, \"pcie\": {\"gen_min_loaded\": 1, \"width_min_loaded\": 1}},"
                   " {\"gpu\": -1, \"pcie\": {\"gen_min_loaded\": 1, \"width_min_loaded\": 1}}]}",
                   0, NULL);
    assert_non_null(stress);
    gq_err e = {0};
    gq_card_inputs in = {.topo = t, .rs = &rs, .stress = stress};
    json_t *c = gq_card_compose(&in, &e);
    if (!c)
        fail_msg("compose: %s", e.msg);
    const json_t *g0 =
        json_array_get(json_object_get(json_object_get(json_object_get(c, "card"), "identity"), "gpus"), 0);
    const json_t *pcie = json_object_get(g0, "pcie");
    assert_int_equal(json_integer_value(json_object_get(pcie, "gen")), 3);
    assert_int_equal(json_integer_value(json_object_get(pcie, "width")), 8);
    assert_true(json_is_true(json_object_get(pcie, "under_load")));
    json_decref(c);
    json_decref(stress);
    free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(card_shape_refusals),     cmocka_unit_test(card_busy_entries),
        cmocka_unit_test(compare_reader_refusals), cmocka_unit_test(bottleneck_list_refusals),
        cmocka_unit_test(doc_run_id_not_a_string), cmocka_unit_test(threshold_warn_only),
        cmocka_unit_test(kv_config_window_rules),  cmocka_unit_test(stress_too_many_findings),
        cmocka_unit_test(schema1_plan_notes),      cmocka_unit_test(compose_no_gpu),
        cmocka_unit_test(domains_view_set_aside),  cmocka_unit_test(kv_doc_errors),
        cmocka_unit_test(card_figs_shapes),        cmocka_unit_test(doc_topology_gpu_count),
        cmocka_unit_test(compose_sweep_to_host),   cmocka_unit_test(compose_loaded_pcie),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
