/* Every reader of saved documents at its arrays' bounds (issue 30): a card,
 * a run's records, a journal's records, the analysis sections, the
 * expectations. A saved file may be edited by hand or come from another
 * build, so each array a reader reads is fed with max-1, max and max+1
 * entries, and where two arrays go together (a list of GPUs and their
 * figures, a matrix of GPUs), the second holds one entry more than the
 * first. The documented outcome is one of two, per reader:
 *   KEEP:   the first max entries are read, by position, and the rest are
 *           left (a lenient reader of a card's figures);
 *   REFUSE: the reader fails with one line naming what is wrong and the
 *           limit (a fail-closed decoder);
 *   EXACT:  a list that must hold exactly max entries (one per layer of a
 *           model): max is read, max-1 and max+1 are refused as REFUSE is.
 * Either way nothing past an array is read: the ASan build (CI's sanitizer
 * job and the mutation runs) fails this test on an off-by-one read, and the
 * figures read are checked to be the ones at their positions. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "analysis/card.h"
#include "analysis/domains.h"
#include "analysis/expect.h"
#include "core/record.h"
#include "doc/analysis_json.h"
#include "doc/card_codec.h"
#include "doc/decode.h"
#include "doc/document.h"
#include "doc/expect_load.h"
#include "doc/kv_config.h"
#include "measure/record_json.h"
#include "render/nvbw.h"
#include "topo/snapshot.h"

#define MAXG GQ_MAX_GPUS

enum outcome { KEEP, REFUSE, EXACT };

/* A reader fed arrays of n entries: how many it kept (>= 0), or -1 when it
 * refused (err filled). Each probe checks the figures it kept itself. */
typedef int (*probe_fn)(int n, gq_err *err);

typedef struct row {
    const char *reader; /* what is read, as the source names it */
    int max;            /* the documented limit */
    enum outcome over;  /* at max + 1 */
    const char *names;  /* REFUSE: text the one line must hold */
    probe_fn probe;
} row;

/* [0, 1, ..., n-1] */
static json_t *ints(int n)
{
    json_t *a = json_array();
    for (int k = 0; k < n; k++)
        json_array_append_new(a, json_integer(k));
    return a;
}

/* [base + 0, base + 1, ...], n numbers */
static json_t *nums(int n, double base)
{
    json_t *a = json_array();
    for (int k = 0; k < n; k++)
        json_array_append_new(a, json_real(base + k));
    return a;
}

/* n x n: row a, column b holds base + 100 a + b */
static json_t *square(int n, double base)
{
    json_t *m = json_array();
    for (int a = 0; a < n; a++) {
        json_t *r = json_array();
        for (int b = 0; b < n; b++)
            json_array_append_new(r, json_real(base + 100.0 * a + b));
        json_array_append_new(m, r);
    }
    return m;
}

/* A card whose identity names GPUs 0..ng-1 (ng at most MAXG + 1). */
static json_t *card_with_gpus(int ng)
{
    json_t *gpus = json_array();
    for (int k = 0; k < ng; k++)
        json_array_append_new(gpus, json_pack("{s:i, s:s}", "index", k, "name", "NVIDIA H200"));
    return json_pack("{s:{s:o}}", "identity", "gpus", gpus);
}

static gq_card_facts *facts_of(json_t *card)
{
    gq_card_facts *f = malloc(sizeof *f);
    assert_non_null(f);
    gq_card_facts_from_json(card, NULL, NULL, f);
    json_decref(card);
    return f;
}

/* identity.gpus: each GPU's facts, by position */
static int probe_identity(int n, gq_err *err)
{
    (void)err;
    gq_card_facts *f = facts_of(card_with_gpus(n));
    int kept = f->ngpu;
    for (int k = 0; k < kept; k++)
        assert_int_equal(f->gpu[k].index, k);
    free(f);
    return kept;
}

/* latency.host: "gpus" (n) and their "ns" (n + 1) */
static int probe_host_latency(int n, gq_err *err)
{
    (void)err;
    json_t *card = card_with_gpus(MAXG);
    json_object_set_new(card, "latency",
                        json_pack("{s:{s:o, s:o}}", "host", "gpus", ints(n), "ns", nums(n + 1, 1000)));
    gq_card_facts *f = facts_of(card);
    int kept = 0;
    for (int k = 0; k < MAXG; k++)
        if (isfinite(f->gpu[k].host_latency_ns)) {
            assert_int_equal(k, kept);
            assert_true(f->gpu[k].host_latency_ns == 1000 + k);
            kept++;
        }
    free(f);
    return kept;
}

/* host: "gpus" (n) and each alone, alone.h2d and alone.d2h (n + 1) */
static int probe_host_alone(int n, gq_err *err)
{
    (void)err;
    json_t *card = card_with_gpus(MAXG);
    json_object_set_new(card, "host",
                        json_pack("{s:o, s:{s:o, s:o}}", "gpus", ints(n), "alone", "h2d", nums(n + 1, 10),
                                  "d2h", nums(n + 1, 20)));
    gq_card_facts *f = facts_of(card);
    int kept = 0;
    for (int k = 0; k < MAXG; k++)
        if (isfinite(f->gpu[k].h2d_gbps)) {
            assert_int_equal(k, kept);
            assert_true(f->gpu[k].h2d_gbps == 10 + k && f->gpu[k].d2h_gbps == 20 + k);
            kept++;
        }
    free(f);
    return kept;
}

/* The rows of an n x n matrix read into m (by GPU): how many rows hold
 * their figures, each base + 100 a + b. */
static int square_rows(double m[MAXG][MAXG], double base)
{
    int kept = 0;
    for (int a = 0; a < MAXG; a++) {
        if (!isfinite(m[a][0]))
            continue;
        assert_int_equal(a, kept);
        for (int b = 0; b < MAXG; b++)
            if (isfinite(m[a][b]))
                assert_true(m[a][b] == base + 100.0 * a + b);
        kept++;
    }
    return kept;
}

/* matrices[id p2p_read]: "gpus" (n) and "values" ((n + 1) x (n + 1)) */
static int probe_p2p_matrix(int n, gq_err *err)
{
    (void)err;
    json_t *card = card_with_gpus(MAXG);
    json_object_set_new(
        card, "matrices",
        json_pack("[{s:s, s:o, s:o}]", "id", "p2p_read", "gpus", ints(n), "values", square(n + 1, 1)));
    gq_card_facts *f = facts_of(card);
    int kept = square_rows(f->p2p_gbps, 1);
    free(f);
    return kept;
}

/* latency.p2p: "gpus" (n) and "values" ((n + 1) x (n + 1)) */
static int probe_p2p_latency(int n, gq_err *err)
{
    (void)err;
    json_t *card = card_with_gpus(MAXG);
    json_object_set_new(card, "latency",
                        json_pack("{s:{s:o, s:o}}", "p2p", "gpus", ints(n), "values", square(n + 1, 500)));
    gq_card_facts *f = facts_of(card);
    int kept = square_rows(f->p2p_lat_ns, 500);
    free(f);
    return kept;
}

/* identity.nvlinks: "gpus" (n) and "values" ((n + 1) x (n + 1)) */
static int probe_nvlinks(int n, gq_err *err)
{
    (void)err;
    json_t *card = card_with_gpus(MAXG);
    json_t *vals = json_array();
    for (int a = 0; a < n + 1; a++) {
        json_t *r = json_array();
        for (int b = 0; b < n + 1; b++)
            json_array_append_new(r, json_integer(1 + 100 * a + b));
        json_array_append_new(vals, r);
    }
    json_object_set_new(json_object_get(card, "identity"), "nvlinks",
                        json_pack("{s:o, s:o}", "gpus", ints(n), "values", vals));
    gq_card_facts *f = facts_of(card);
    int kept = 0;
    for (int a = 0; a < MAXG; a++) {
        if (f->nvlinks[a][0] <= 0)
            continue;
        assert_int_equal(a, kept);
        for (int b = 0; b < n && b < MAXG; b++)
            assert_int_equal(f->nvlinks[a][b], 1 + 100 * a + b);
        kept++;
    }
    free(f);
    return kept;
}

/* The judge's view of "host": alone.h2d / alone.d2h (n), "gpus" (n) */
static int probe_host_view(int n, gq_err *err)
{
    (void)err;
    json_t *host =
        json_pack("{s:o, s:{s:o, s:o}, s:{s:o, s:o}}", "gpus", ints(n), "alone", "h2d", nums(n, 10), "d2h",
                  nums(n, 20), "all", "h2d", nums(n + 1, 30), "d2h", nums(n + 1, 40));
    gq_card_host_view *v = malloc(sizeof *v);
    assert_non_null(v);
    gq_card_host_view_from_json(host, v);
    json_decref(host);
    int kept = v->nalone;
    assert_int_equal(v->ngpus, kept);
    for (int k = 0; k < kept; k++) {
        assert_int_equal(v->gpu[k], k);
        assert_true(v->alone_h2d[k] == 10 + k && v->alone_d2h[k] == 20 + k);
        assert_true(v->all_h2d[k] == 30 + k && v->all_d2h[k] == 40 + k);
    }
    free(v);
    return kept;
}

/* A list of GPU indices in any decoded section (domains, bottlenecks) */
static int probe_dec_gpus(int n, gq_err *err)
{
    json_t *g = ints(n);
    int out[MAXG], got = -1;
    int rc = gq_dec_gpus("doc.json", "gpus", g, -1, out, &got, err);
    json_decref(g);
    if (rc)
        return -1;
    for (int k = 0; k < got; k++)
        assert_int_equal(out[k], k);
    return got;
}

/* domains: n domains, one GPU each (the machine has MAXG GPUs) */
static int probe_domains(int n, gq_err *err)
{
    json_t *doms = json_array();
    for (int k = 0; k < n; k++)
        json_array_append_new(doms, json_pack("[i]", k % MAXG));
    json_t *doc = json_pack("{s:o}", "domains", doms);
    gq_domains *d = malloc(sizeof *d);
    assert_non_null(d);
    int rc = gq_domains_from_json("doc.json", doc, MAXG, d, err);
    json_decref(doc);
    int kept = rc ? -1 : d->ndomains;
    for (int k = 0; k < kept; k++) {
        assert_int_equal(d->size[k], 1);
        assert_int_equal(d->member[k][0], k);
    }
    free(d);
    return kept;
}

/* A saved record (a document's or a journal line's) */
static json_t *record_json(void)
{
    gq_record r;
    memset(&r, 0, sizeof r);
    snprintf(r.test, sizeof r.test, "host_to_device_memcpy_ce");
    r.src = (gq_endpoint){.kind = GQ_EP_HOST, .index = -1};
    r.dst = (gq_endpoint){.kind = GQ_EP_GPU, .index = 0};
    r.bytes = 64 << 20;
    double v[3] = {50, 51, 52};
    memcpy(r.samples, v, sizeof v);
    r.value = gq_stat_compute(v, 3);
    r.rounds = 3;
    r.valid = true;
    r.exec_gpu = 0;
    r.host_numa_req = -1;
    return gq_record_to_json(&r);
}

/* a record's "samples" (n) */
static int probe_record_samples(int n, gq_err *err)
{
    json_t *j = record_json();
    json_object_set_new(j, "samples", nums(n, 40));
    gq_record *r = calloc(1, sizeof *r);
    assert_non_null(r);
    int rc = gq_record_from_json(j, r, err);
    json_decref(j);
    int kept = rc ? -1 : r->value.n;
    for (int k = 0; k < kept; k++)
        assert_true(r->samples[k] == 40 + k);
    free(r);
    return kept;
}

/* a record's "gpus" (n: GPUs 0..63, then GPU 0 again) */
static int probe_record_gpus(int n, gq_err *err)
{
    json_t *j = record_json();
    json_t *g = json_array();
    for (int k = 0; k < n; k++)
        json_array_append_new(g, json_integer(k % MAXG));
    json_object_set_new(j, "gpus", g);
    gq_record *r = calloc(1, sizeof *r);
    assert_non_null(r);
    int rc = gq_record_from_json(j, r, err);
    json_decref(j);
    int kept = rc ? -1 : r->ngpus;
    for (int k = 0; k < kept; k++)
        assert_int_equal(r->gpus[k], k);
    free(r);
    return kept;
}

/* nvbandwidth's host matrix from a run's or a journal's records: one row
 * per host endpoint, records of hosts 0..n-1 (and nothing of GPUs past the
 * machine's) */
static int probe_nvbw_host_rows(int n, gq_err *err)
{
    (void)err;
    static gq_topo topo;
    gq_topo_init(&topo);
    topo.ngpu = 2;
    gq_recordset rs = {0};
    for (int k = 0; k < n; k++) {
        json_t *j = record_json();
        gq_record r;
        assert_int_equal(gq_record_from_json(j, &r, err), GQ_OK);
        json_decref(j);
        r.src.index = k;
        double v[3] = {10.0 + k, 10.0 + k, 10.0 + k};
        memcpy(r.samples, v, sizeof v);
        r.value = gq_stat_compute(v, 3);
        gq_records_push(&rs, &r);
    }
    gq_nvbw_result *res = calloc(1, sizeof *res);
    assert_non_null(res);
    gq_nvbw_build(&topo, &rs, "host_to_device_memcpy_ce", false, res);
    gq_records_free(&rs);
    assert_int_equal(res->nmat, 1);
    int kept = res->mat[0].rows;
    for (int k = 0; k < kept; k++) {
        assert_true(res->mat[0].has[k][0]);
        assert_true(res->mat[0].v[k][0] == 10.0 + k);
    }
    free(res);
    return kept;
}

/* expectations: n models */
static int probe_expect_models(int n, gq_err *err)
{
    size_t cap = 64 + (size_t)n * 64;
    char *text = malloc(cap), *p = text;
    p += sprintf(p, "gpuqual_expect: 1\nmodels:\n");
    for (int k = 0; k < n; k++)
        p += sprintf(p, "  - match: \"GPU%d\"\n    count_min: 1\n", k);
    gq_expect *ex = calloc(1, sizeof *ex);
    assert_non_null(ex);
    int rc = gq_expect_parse(text, "ex.yaml", ex, err);
    free(text);
    int kept = rc ? -1 : ex->nmodels;
    free(ex);
    return kept;
}

/* The array a grown to n entries with copies of its first (a list written
 * for at most max entries, fed one more). */
static void grow(json_t *a, int n)
{
    while ((int)json_array_size(a) < n)
        json_array_append_new(a, json_deep_copy(json_array_get(a, 0)));
}

/* a saved topology (a document's, a journal header's, a snapshot's):
 * "gpus" (n) */
static int probe_topology(int n, gq_err *err)
{
    gq_topo *t = calloc(1, sizeof *t);
    assert_non_null(t);
    gq_topo_init(t);
    t->ngpu = n < MAXG ? n : MAXG;
    for (int g = 0; g < t->ngpu; g++) {
        t->gpu[g].index = g;
        snprintf(t->gpu[g].name, sizeof t->gpu[g].name, "NVIDIA H200");
        snprintf(t->gpu[g].pci_bus_id, sizeof t->gpu[g].pci_bus_id, "0000:%02x:00.0", g + 1);
    }
    json_t *j = gq_topo_to_json(t);
    grow(json_object_get(j, "gpus"), n);
    int rc = gq_topo_from_json(j, t, err);
    json_decref(j);
    int kept = rc ? -1 : t->ngpu;
    for (int g = 0; g < kept; g++)
        assert_int_equal(t->gpu[g].index, g);
    free(t);
    return kept;
}

/* a saved stress section (a card's, a journal's for resume): "gpus" and
 * "series.gpus" (n each) */
static int probe_stress(int n, gq_err *err)
{
    gq_stress_result *r = calloc(1, sizeof *r);
    gq_stress_summary *s = calloc(1, sizeof *s);
    assert_non_null(r);
    assert_non_null(s);
    r->ngpu = s->ngpu = n < MAXG ? n : MAXG;
    r->precision = GQ_PREC_BF16;
    for (int g = 0; g < r->ngpu; g++)
        r->gpu[g].gpu = g;
    json_t *j = gq_stress_to_json(r, s);
    grow(json_object_get(j, "gpus"), n);
    grow(json_object_get(json_object_get(j, "series"), "gpus"), n);
    int rc = gq_stress_from_json(j, r, s, err);
    json_decref(j);
    int kept = rc ? -1 : r->ngpu;
    for (int g = 0; g < kept; g++)
        assert_int_equal(r->gpu[g].gpu, g);
    free(r);
    free(s);
    return kept;
}

/* A saved card section made by the codec from c, its list `key` grown to n
 * entries, read back (fail closed on what gpuqual would not write). */
static gq_card *card_round_trip(gq_card *c, const char *key, int n, gq_err *err, int *rc)
{
    json_t *j = json_object();
    gq_card_summarize(c); /* its verdict and exit code, as the judge leaves them */
    gq_card_to_json(c, j);
    gq_card_free(c);
    grow(json_object_get(j, key), n);
    gq_card_init(c);
    *rc = gq_card_from_json(j, "card.json", c, err);
    json_decref(j);
    return c;
}

/* a card's "rows" (n) */
static int probe_card_rows(int n, gq_err *err)
{
    gq_card *c = calloc(1, sizeof *c);
    assert_non_null(c);
    gq_card_init(c);
    c->nrows = n < GQ_CARD_MAX_ROWS ? n : GQ_CARD_MAX_ROWS;
    for (int k = 0; k < c->nrows; k++) {
        snprintf(c->rows[k].check, sizeof c->rows[k].check, "row %d", k);
        c->rows[k].verdict = GQ_V_SKIP; /* nothing measured: nothing passes */
        c->rows[k].step = -1;
    }
    int rc;
    card_round_trip(c, "rows", n, err, &rc);
    int kept = rc ? -1 : c->nrows;
    for (int k = 0; k < kept; k++) {
        char want[16];
        snprintf(want, sizeof want, "row %d", k);
        assert_string_equal(c->rows[k].check, want);
    }
    gq_card_free(c);
    free(c);
    return kept;
}

/* a card's "overrides" (n) */
static int probe_card_overrides(int n, gq_err *err)
{
    gq_card *c = calloc(1, sizeof *c);
    assert_non_null(c);
    gq_card_init(c);
    c->noverrides = n < GQ_EXPECT_MAX_OVERRIDES ? n : GQ_EXPECT_MAX_OVERRIDES;
    for (int k = 0; k < c->noverrides; k++) {
        gq_expect_override *o = &c->overrides[k];
        snprintf(o->spec, sizeof o->spec, "h2d_gbps.fail=%d", 10 + k);
        snprintf(o->key, sizeof o->key, "h2d_gbps_min");
        snprintf(o->level, sizeof o->level, "fail");
        snprintf(o->was, sizeof o->was, "48");
        o->value = 10 + k;
    }
    int rc;
    card_round_trip(c, "overrides", n, err, &rc);
    int kept = rc ? -1 : c->noverrides;
    for (int k = 0; k < kept; k++)
        assert_true(c->overrides[k].value == 10 + k);
    gq_card_free(c);
    free(c);
    return kept;
}

/* a model's config.json: "layer_types" (n) for a model of 8 layers */
static int probe_kv_layer_types(int n, gq_err *err)
{
    json_t *lt = json_array();
    for (int k = 0; k < n; k++)
        json_array_append_new(lt, json_string(k % 2 ? "full_attention" : "sliding_attention"));
    json_t *root = json_pack("{s:s, s:i, s:i, s:i, s:i, s:o, s:s}", "model_type", "m", "num_hidden_layers", 8,
                             "num_key_value_heads", 2, "head_dim", 64, "sliding_window", 128, "layer_types",
                             lt, "torch_dtype", "float16");
    gq_kv_shape sh;
    bool has_dtype = false;
    int rc = gq_kv_config_parse(root, "config.json", &sh, &has_dtype, err);
    json_decref(root);
    if (rc)
        return -1;
    assert_int_equal(sh.window_layers, (n + 1) / 2);
    return (int)sh.layers;
}

/* a saved run document, loaded from its file: "gpus" (n) */
static int probe_run_doc(int n, gq_err *err)
{
    gq_topo *t = calloc(1, sizeof *t);
    assert_non_null(t);
    gq_topo_init(t);
    t->ngpu = n < MAXG ? n : MAXG;
    for (int g = 0; g < t->ngpu; g++) {
        t->gpu[g].index = g;
        snprintf(t->gpu[g].name, sizeof t->gpu[g].name, "NVIDIA H200");
        snprintf(t->gpu[g].pci_bus_id, sizeof t->gpu[g].pci_bus_id, "0000:%02x:00.0", g + 1);
    }
    gq_doc d = {.kind = "run", .version = "test", .git = "test", .topo = t, .simulated = true};
    json_t *j = gq_doc_to_json(&d);
    free(t);
    assert_non_null(json_object_get(j, "gpus"));
    grow(json_object_get(j, "gpus"), n);
    char path[] = "/tmp/gq-bounds-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(json_dump_file(j, path, 0), 0);
    json_decref(j);
    json_t *root = NULL;
    int rc = gq_doc_load(path, &root, NULL, err);
    unlink(path);
    if (rc)
        return -1;
    int kept = (int)json_array_size(json_object_get(root, "gpus"));
    json_decref(root);
    return kept;
}

static const row rows[] = {
    {"card identity.gpus", MAXG, KEEP, NULL, probe_identity},
    {"card latency.host gpus/ns", MAXG, KEEP, NULL, probe_host_latency},
    {"card host gpus/alone", MAXG, KEEP, NULL, probe_host_alone},
    {"card matrices p2p_read gpus/values", MAXG, KEEP, NULL, probe_p2p_matrix},
    {"card latency.p2p gpus/values", MAXG, KEEP, NULL, probe_p2p_latency},
    {"card identity.nvlinks gpus/values", MAXG, KEEP, NULL, probe_nvlinks},
    {"card host view alone/gpus/all", MAXG, KEEP, NULL, probe_host_view},
    {"section gpus list", MAXG, REFUSE, "0..63", probe_dec_gpus},
    {"domains", MAXG, REFUSE, "doc.json: domains", probe_domains},
    {"record samples", GQ_MAX_ROUNDS, REFUSE, "samples: holds more than 64 values", probe_record_samples},
    {"record gpus", MAXG, REFUSE, "gpus[64]: GPU 0 is repeated", probe_record_gpus},
    {"nvbandwidth host rows", GQ_NVBW_MAXROWS, KEEP, NULL, probe_nvbw_host_rows},
    {"run document gpus", MAXG, REFUSE, "gpus: expected a list of at most 64 GPUs", probe_run_doc},
    {"topology gpus", MAXG, REFUSE, "field 'gpus' has 65 GPUs, expected 1 to 64", probe_topology},
    {"stress section gpus/series", MAXG, REFUSE, "the stress section's list of GPUs", probe_stress},
    {"card rows", GQ_CARD_MAX_ROWS, KEEP, NULL, probe_card_rows},
    {"card overrides", GQ_EXPECT_MAX_OVERRIDES, KEEP, NULL, probe_card_overrides},
    {"kv config layer_types", 8, EXACT, "field 'layer_types' must list one string per layer (8)",
     probe_kv_layer_types},
    {"expectations models", GQ_EXPECT_MAX_MODELS, REFUSE, "33 models, at most 32", probe_expect_models},
};

static void test_bounds(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const row *R = &rows[i];
        for (int n = R->max - 1; n <= R->max + 1; n++) {
            gq_err err = {0};
            int kept = R->probe(n, &err);
            int want = R->over == EXACT  ? (n == R->max ? n : -1)
                       : n <= R->max     ? n
                       : R->over == KEEP ? R->max
                                         : -1;
            if (kept != want)
                fail_msg("%s with %d entries: kept %d, expected %d (%s)", R->reader, n, kept, want, err.msg);
            if (kept >= 0)
                continue;
            if (strchr(err.msg, '\n') || !strstr(err.msg, R->names))
                fail_msg("%s with %d entries: refused with '%s', expected one line naming '%s'", R->reader, n,
                         err.msg, R->names);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bounds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
