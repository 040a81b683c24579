/* Domains at their edges: matrix set-up, which records are usable and why,
 * the test filter, the figures a clustering reports besides its domains, and
 * the JSON sections. Written for the survivors of bench/mutation. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "analysis/domains.h"
#include "exec/discovery.h"
#include "render/analysis_render.h"

static gq_pairmatrix M;

static void set_sym(gq_pairmatrix *m, int i, int j, double v, double spread)
{
    m->gbps[i][j] = m->gbps[j][i] = v;
    m->spread[i][j] = m->spread[j][i] = spread;
}

static gq_record p2p_rec(const char *test, int src, int dst, double gbps, int group)
{
    gq_record r;
    memset(&r, 0, sizeof r);
    strcpy(r.test, test);
    r.src = (gq_endpoint){GQ_EP_GPU, src};
    r.dst = (gq_endpoint){GQ_EP_GPU, dst};
    r.direction = GQ_DIR_P2P;
    r.value.median = r.value.min = r.value.max = gbps;
    r.value.n = 5;
    r.valid = true;
    r.group = group;
    return r;
}

static void init_gpus_and_clamps(void **state)
{
    (void)state;
    int g[3] = {4, 2, 7};
    gq_pairmatrix_init(&M, g, 3);
    assert_int_equal(M.n, 3);
    assert_int_equal(M.gpu[0], 4);
    assert_int_equal(M.gpu[1], 2);
    assert_int_equal(M.gpu[2], 7);
    for (int i = 3; i < GQ_MAX_GPUS; i++)
        assert_int_equal(M.gpu[i], -1);
    for (int i = 0; i < GQ_MAX_GPUS; i += 9)
        for (int j = 0; j < GQ_MAX_GPUS; j += 7) {
            assert_true(isnan(M.gbps[i][j]));
            assert_int_equal(M.record[i][j], -1);
            assert_false(M.staged[i][j]);
            assert_true(M.spread[i][j] == 0);
        }
    gq_pairmatrix_init(&M, NULL, -3);
    assert_int_equal(M.n, 0);
    assert_int_equal(M.gpu[0], -1);
    gq_pairmatrix_init(&M, NULL, GQ_MAX_GPUS + 5);
    assert_int_equal(M.n, GQ_MAX_GPUS);
    assert_int_equal(M.gpu[GQ_MAX_GPUS - 1], GQ_MAX_GPUS - 1);
}

/* Each flag's reason, in priority order; "invalid" without an error text. */
static void usable_reasons(void **state)
{
    (void)state;
    gq_record r = p2p_rec("t", 0, 1, 10, 0);
    const char *why = "stale";
    assert_true(gq_domains_usable(&r, &why));
    assert_null(why);
    r.valid = false;
    assert_false(gq_domains_usable(&r, &why));
    assert_string_equal(why, "invalid");
    strcpy(r.error, "driver said no");
    assert_false(gq_domains_usable(&r, NULL));
    gq_domains_usable(&r, &why);
    assert_string_equal(why, "driver said no");
    r.flags = GQ_FLAG_VERIFY_FAILED;
    gq_domains_usable(&r, &why);
    assert_non_null(strstr(why, "verify failed"));
    r.flags |= GQ_FLAG_OVERLAP;
    gq_domains_usable(&r, &why);
    assert_non_null(strstr(why, "overlap"));
    r.flags |= GQ_FLAG_ERROR;
    gq_domains_usable(&r, &why);
    assert_string_equal(why, "driver said no");
    r.error[0] = 0;
    gq_domains_usable(&r, &why);
    assert_string_equal(why, "error");
    r.flags |= GQ_FLAG_IMPOSSIBLE;
    gq_domains_usable(&r, &why);
    assert_non_null(strstr(why, "impossible"));
    /* a valid bandwidth record without a rate is not usable; a latency record is */
    r = p2p_rec("t", 0, 1, 0, 0);
    assert_false(gq_domains_usable(&r, &why));
    assert_string_equal(why, "no rate");
    r.value.median = INFINITY;
    assert_false(gq_domains_usable(&r, NULL));
    r.value.median = 0;
    r.is_latency = true;
    assert_true(gq_domains_usable(&r, NULL));
}

static void group_sizes(void **state)
{
    (void)state;
    gq_recordset rs = {0};
    gq_record a = p2p_rec("t", 0, 1, 10, 5), b = p2p_rec("t", 1, 0, 10, 5), c = p2p_rec("t", 0, 2, 10, 2);
    gq_record s = p2p_rec("t", 0, 1, 20, 5);
    s.sum = true;
    gq_record g = p2p_rec("t", 0, 1, 20, 5);
    g.aggregate = true;
    gq_records_push(&rs, &a);
    gq_records_push(&rs, &c);
    gq_records_push(&rs, &s);
    gq_records_push(&rs, &b);
    gq_records_push(&rs, &g);
    int out[5] = {-9, -9, -9, -9, -9};
    assert_int_equal(gq_domains_group_sizes(&rs, out), GQ_OK);
    assert_int_equal(out[0], 2);
    assert_int_equal(out[1], 1);
    assert_int_equal(out[2], 2);
    assert_int_equal(out[3], 2);
    assert_int_equal(out[4], 2);
    gq_records_free(&rs);
    /* no records, or none at all: nothing written */
    gq_recordset none = {0};
    out[0] = -9;
    assert_int_equal(gq_domains_group_sizes(&none, out), GQ_OK);
    assert_int_equal(gq_domains_group_sizes(NULL, out), GQ_OK);
    assert_int_equal(out[0], -9);
}

/* The test filter, the records that never make a cell, staged cells, a cell
 * overwritten by an unusable record, and negative spreads. */
static void from_records_filters(void **state)
{
    (void)state;
    gq_recordset rs = {0};
    int grp = 0;
    gq_record r = p2p_rec("read_ce", 0, 1, 40, grp++);
    r.value.spread = 0.02;
    gq_records_push(&rs, &r);
    r = p2p_rec("write_ce", 1, 0, 30, grp++);
    r.value.spread = -1; /* nonsense: taken as unknown */
    r.method = GQ_METHOD_STAGED;
    gq_records_push(&rs, &r);
    r = p2p_rec("read_bidirectional_ce", 0, 2, 50, grp++);
    gq_records_push(&rs, &r);
    r = p2p_rec("read_ce", 2, 2, 50, grp++); /* a GPU to itself */
    gq_records_push(&rs, &r);
    r = p2p_rec("read_ce", 2, 9, 50, grp++); /* a GPU not in the matrix */
    gq_records_push(&rs, &r);
    r = p2p_rec("read_ce", 2, 0, 50, grp++);
    r.is_latency = true;
    gq_records_push(&rs, &r);
    r = p2p_rec("read_ce", 2, 1, 50, grp++);
    r.direction = GQ_DIR_H2D;
    gq_records_push(&rs, &r);
    r = p2p_rec("read_ce", 1, 2, 50, grp++);
    r.dst.kind = GQ_EP_HOST;
    gq_records_push(&rs, &r);
    r = p2p_rec("read_ce", 2, 1, 50, grp++);
    r.src.kind = GQ_EP_HOST;
    gq_records_push(&rs, &r);

    gq_pairmatrix_init(&M, NULL, 3);
    assert_int_equal(gq_pairmatrix_from_records(&M, &rs, NULL), 2);
    assert_true(M.gbps[0][1] == 40);
    assert_true(M.spread[0][1] == 0.02);
    assert_false(M.staged[0][1]);
    assert_int_equal(M.record[0][1], 0);
    assert_true(M.gbps[1][0] == 30);
    assert_true(M.spread[1][0] == 0);
    assert_true(M.staged[1][0]);
    assert_true(isnan(M.gbps[0][2]));
    assert_int_equal(M.record[0][2], -1);
    assert_true(isnan(M.gbps[2][0]) && isnan(M.gbps[2][1]) && isnan(M.gbps[1][2]));
    assert_true(isnan(M.gbps[2][2]));
    assert_int_equal(M.record[2][2], -1);
    assert_int_equal(M.record[2][1], -1);

    /* an explicit list takes only those tests, bidirectional ones too */
    const char *only_write[] = {"write_ce", NULL};
    gq_pairmatrix_init(&M, NULL, 3);
    assert_int_equal(gq_pairmatrix_from_records(&M, &rs, only_write), 1);
    assert_true(isnan(M.gbps[0][1]));
    assert_true(M.gbps[1][0] == 30);
    const char *bidir[] = {"nothing", "read_bidirectional_ce", NULL};
    gq_pairmatrix_init(&M, NULL, 3);
    assert_int_equal(gq_pairmatrix_from_records(&M, &rs, bidir), 1);
    assert_true(M.gbps[0][2] == 50);
    const char *none[] = {"nothing", NULL};
    gq_pairmatrix_init(&M, NULL, 3);
    assert_int_equal(gq_pairmatrix_from_records(&M, &rs, none), 0);

    /* the later record of a cell wins, also when it is unusable */
    r = p2p_rec("read_ce", 0, 1, 45, grp++);
    r.valid = false;
    gq_records_push(&rs, &r);
    gq_pairmatrix_init(&M, NULL, 3);
    assert_int_equal(gq_pairmatrix_from_records(&M, &rs, NULL), 1);
    assert_true(isnan(M.gbps[0][1]));
    assert_int_equal(M.record[0][1], rs.n - 1);
    gq_records_free(&rs);
    gq_pairmatrix_init(&M, NULL, 3);
    assert_int_equal(gq_pairmatrix_from_records(&M, &rs, NULL), 0);
}

/* The figures beside the domains: pairs, missing pairs, spread, gap, within and
 * across, staged cells as edges or not, one direction only. */
static void cluster_figures(void **state)
{
    (void)state;
    gq_pairmatrix_init(&M, NULL, 4);
    set_sym(&M, 0, 1, 50, 0.01);
    set_sym(&M, 2, 3, 48, 0.03);
    set_sym(&M, 0, 2, 20, 0);
    set_sym(&M, 1, 3, 22, 0);
    M.gbps[0][3] = 21; /* one direction only: the pair's value is that direction */
    /* 1-2 missing */
    gq_domains d;
    assert_int_equal(gq_domains_cluster(&M, NULL, &d, NULL), 0);
    assert_int_equal(d.ndomains, 2);
    assert_int_equal(d.npairs, 5);
    assert_int_equal(d.nmissing, 1);
    assert_true(d.split);
    assert_true(d.gap_lo_gbps == 22 && d.gap_hi_gbps == 48 && d.threshold_gbps == 48);
    assert_true(d.within_min_gbps == 48);
    assert_true(d.across_max_gbps == 22);
    assert_true(fabs(d.max_spread - 0.03) < 1e-12);
    assert_false(d.no_p2p);
    assert_false(d.chained[0] || d.chained[1]);
    assert_int_equal(d.domain_of[0], 0);
    assert_int_equal(d.domain_of[3], 1);
    assert_int_equal(d.domain_of[4], -1);

    /* asymmetric pair: the mean of the two directions */
    gq_pairmatrix_init(&M, NULL, 2);
    M.gbps[0][1] = 40;
    M.gbps[1][0] = 20;
    M.spread[1][0] = 0.2;
    assert_int_equal(gq_domains_cluster(&M, NULL, &d, NULL), 0);
    assert_true(d.within_min_gbps == 30);
    assert_true(isnan(d.across_max_gbps));
    assert_true(fabs(d.max_spread - 0.2) < 1e-12);

    /* staged cells are not edges unless asked */
    gq_pairmatrix_init(&M, NULL, 2);
    set_sym(&M, 0, 1, 10, 0);
    M.staged[0][1] = M.staged[1][0] = true;
    assert_int_equal(gq_domains_cluster(&M, NULL, &d, NULL), 0);
    assert_true(d.no_p2p);
    assert_int_equal(d.ndomains, 2);
    assert_int_equal(d.nmissing, 1);
    gq_domains_opts o;
    gq_domains_opts_default(&o);
    assert_true(o.min_rel_gap == 0.10);
    assert_false(o.staged_edges);
    o.staged_edges = true;
    assert_int_equal(gq_domains_cluster(&M, &o, &d, NULL), 0);
    assert_false(d.no_p2p);
    assert_int_equal(d.ndomains, 1);
    /* a zero or negative cell is no edge */
    gq_pairmatrix_init(&M, NULL, 2);
    set_sym(&M, 0, 1, 0, 0);
    assert_int_equal(gq_domains_cluster(&M, NULL, &d, NULL), 0);
    assert_true(d.no_p2p);
    /* every measured cell in one row: each of them a measurement, whichever
     * row (GPU 0 -> 1 staged, 1 -> 0 not measured; then the other way) */
    for (int r = 0; r < 2; r++) {
        gq_pairmatrix_init(&M, NULL, 2);
        M.gbps[r][1 - r] = 12;
        M.staged[r][1 - r] = true;
        assert_int_equal(gq_domains_cluster(&M, NULL, &d, NULL), 0);
        assert_true(d.no_p2p);
    }
    /* one GPU: no pairs, and not "no P2P" */
    gq_pairmatrix_init(&M, NULL, 1);
    assert_int_equal(gq_domains_cluster(&M, NULL, &d, NULL), 0);
    assert_false(d.no_p2p);
    assert_int_equal(d.npairs, 0);
}

/* A gap just at min_rel_gap splits; just under it does not. */
static void gap_threshold_edge(void **state)
{
    (void)state;
    gq_domains_opts o;
    gq_domains_opts_default(&o);
    o.min_rel_gap = 0.25;
    gq_domains d;
    gq_pairmatrix_init(&M, NULL, 4);
    set_sym(&M, 0, 1, 50, 0);
    set_sym(&M, 2, 3, 50, 0);
    set_sym(&M, 0, 2, 40, 0);
    set_sym(&M, 0, 3, 40, 0);
    set_sym(&M, 1, 2, 40, 0);
    set_sym(&M, 1, 3, 40, 0);
    assert_int_equal(gq_domains_cluster(&M, &o, &d, NULL), 0); /* 50/40 - 1 = 0.25 */
    assert_true(d.split);
    assert_int_equal(d.ndomains, 2);
    o.min_rel_gap = 0.2501;
    assert_int_equal(gq_domains_cluster(&M, &o, &d, NULL), 0);
    assert_false(d.split);
    assert_int_equal(d.ndomains, 1);
    assert_true(d.threshold_gbps == 0);
}

/* Two significant gaps: the relatively larger one is the boundary, also when
 * it is the higher one (40 -> 50 is +25 %, 50 -> 100 is +100 %). */
static void largest_gap_first(void **state)
{
    (void)state;
    gq_pairmatrix_init(&M, NULL, 4);
    set_sym(&M, 0, 1, 100, 0);
    set_sym(&M, 2, 3, 50, 0);
    set_sym(&M, 0, 2, 40, 0);
    set_sym(&M, 0, 3, 40, 0);
    set_sym(&M, 1, 2, 40, 0);
    set_sym(&M, 1, 3, 40, 0);
    gq_domains d;
    assert_int_equal(gq_domains_cluster(&M, NULL, &d, NULL), 0);
    assert_true(d.split);
    assert_true(d.threshold_gbps == 100);
    assert_true(d.gap_lo_gbps == 50);
    assert_int_equal(d.ndomains, 3);
    assert_int_equal(d.size[0], 2);
    assert_int_equal(d.member[1][0], 2);
    assert_int_equal(d.member[2][0], 3);
    /* the same with the larger gap lower down */
    set_sym(&M, 0, 1, 60, 0);
    set_sym(&M, 2, 3, 55, 0);
    set_sym(&M, 0, 2, 20, 0);
    set_sym(&M, 0, 3, 20, 0);
    set_sym(&M, 1, 2, 20, 0);
    set_sym(&M, 1, 3, 20, 0);
    assert_int_equal(gq_domains_cluster(&M, NULL, &d, NULL), 0);
    assert_true(d.threshold_gbps == 55);
    assert_int_equal(d.ndomains, 2);
}

static void set_str_edges(void **state)
{
    (void)state;
    char b[64];
    int two[] = {5, 4};
    assert_string_equal(gq_domains_set_str(two, 2, b, sizeof b), "4,5");
    int three[] = {3, 1, 2};
    assert_string_equal(gq_domains_set_str(three, 3, b, sizeof b), "1-3");
    int mix[] = {0, 2, 3, 5, 6, 7, 9};
    assert_string_equal(gq_domains_set_str(mix, 7, b, sizeof b), "0,2,3,5-7,9");
    assert_string_equal(gq_domains_set_str(mix, 0, b, sizeof b), "");
}

static void json_sections(void **state)
{
    (void)state;
    gq_pairmatrix_init(&M, (const int[]){3, 5}, 2);
    M.gbps[0][1] = 12.5;
    M.spread[0][1] = 0.1;
    M.spread[1][0] = 0.3; /* spread of a missing cell is not shown */
    M.staged[1][0] = true;
    json_t *j = gq_pairmatrix_to_json(&M);
    assert_non_null(j);
    assert_int_equal(json_integer_value(json_array_get(json_object_get(j, "gpus"), 1)), 5);
    const json_t *g = json_object_get(j, "gbps"), *sp = json_object_get(j, "spread"),
                 *st = json_object_get(j, "staged");
    assert_true(json_real_value(json_array_get(json_array_get(g, 0), 1)) == 12.5);
    assert_true(json_is_null(json_array_get(json_array_get(g, 1), 0)));
    assert_true(json_is_null(json_array_get(json_array_get(g, 0), 0)));
    assert_true(json_real_value(json_array_get(json_array_get(sp, 0), 1)) == 0.1);
    assert_true(json_is_null(json_array_get(json_array_get(sp, 1), 0)));
    assert_true(json_is_true(json_array_get(json_array_get(st, 1), 0)));
    assert_true(json_is_false(json_array_get(json_array_get(st, 0), 1)));
    json_decref(j);

    gq_domains d;
    gq_pairmatrix_init(&M, NULL, 3);
    set_sym(&M, 0, 1, 50, 0.01);
    set_sym(&M, 0, 2, 20, 0);
    set_sym(&M, 1, 2, 20, 0);
    assert_int_equal(gq_domains_cluster(&M, NULL, &d, NULL), 0);
    j = gq_domains_to_json(&d);
    assert_non_null(j);
    const json_t *doms = json_object_get(j, "domains"), *a = json_object_get(j, "domain_analysis");
    assert_int_equal(json_array_size(doms), 2);
    assert_int_equal(json_array_size(json_array_get(doms, 0)), 2);
    assert_int_equal(json_integer_value(json_array_get(json_array_get(doms, 1), 0)), 2);
    assert_true(json_is_true(json_object_get(a, "split")));
    assert_true(json_real_value(json_object_get(a, "threshold_gbps")) == 50);
    assert_true(json_real_value(json_array_get(json_object_get(a, "gap_gbps"), 0)) == 20);
    assert_true(json_real_value(json_array_get(json_object_get(a, "gap_gbps"), 1)) == 50);
    assert_true(json_real_value(json_object_get(a, "within_min_gbps")) == 50);
    assert_true(json_real_value(json_object_get(a, "across_max_gbps")) == 20);
    assert_true(json_real_value(json_object_get(a, "max_spread")) == 0.01);
    assert_int_equal(json_integer_value(json_object_get(a, "pairs")), 3);
    assert_int_equal(json_integer_value(json_object_get(a, "missing_pairs")), 0);
    assert_true(json_is_false(json_object_get(a, "no_p2p")));
    assert_int_equal(json_array_size(json_object_get(a, "chained")), 2);
    assert_true(json_is_false(json_array_get(json_object_get(a, "chained"), 0)));
    json_decref(j);

    gq_pairmatrix_init(&M, NULL, 2);
    assert_int_equal(gq_domains_cluster(&M, NULL, &d, NULL), 0);
    j = gq_domains_to_json(&d);
    a = json_object_get(j, "domain_analysis");
    assert_true(json_is_false(json_object_get(a, "split")));
    assert_true(json_is_null(json_object_get(a, "threshold_gbps")));
    assert_true(json_is_null(json_object_get(a, "gap_gbps")));
    assert_true(json_is_null(json_object_get(a, "within_min_gbps")));
    assert_true(json_is_null(json_object_get(a, "across_max_gbps")));
    /* nothing measured: nothing is known of P2P (it said "no P2P" before) */
    assert_true(json_is_false(json_object_get(a, "no_p2p")));
    assert_int_equal(json_integer_value(json_object_get(a, "missing_pairs")), 1);
    json_decref(j);
}

/* A failed allocation of a section's containers gives NULL, not half a
 * section: jansson's allocator fails at the k-th call. (Failures further in,
 * inside the arrays' elements, still give a partial section today.) */
static int alloc_calls, alloc_fail_at;
static void *failing_malloc(size_t n)
{
    return ++alloc_calls == alloc_fail_at ? NULL : malloc(n);
}

static void json_allocation_failures(void **state)
{
    (void)state;
    gq_pairmatrix_init(&M, NULL, 2);
    set_sym(&M, 0, 1, 50, 0);
    gq_domains d;
    assert_int_equal(gq_domains_cluster(&M, NULL, &d, NULL), 0);
    /* how many allocations the containers take: two objects and two arrays, one object and four arrays */
    alloc_fail_at = -1;
    alloc_calls = 0;
    json_set_alloc_funcs(failing_malloc, free);
    json_t *c[6] = {json_object(), json_object(), json_array(), json_array()};
    int n_dom = alloc_calls;
    for (int i = 0; i < 4; i++)
        json_decref(c[i]);
    alloc_calls = 0;
    c[0] = json_object();
    for (int i = 1; i < 5; i++)
        c[i] = json_array();
    int n_pm = alloc_calls;
    for (int i = 0; i < 5; i++)
        json_decref(c[i]);
    json_set_alloc_funcs(malloc, free);
    assert_true(n_dom >= 4 && n_pm >= 5);
    for (int k = 1; k <= n_dom || k <= n_pm; k++) {
        alloc_fail_at = k;
        alloc_calls = 0;
        json_set_alloc_funcs(failing_malloc, free);
        json_t *a = k <= n_dom ? gq_domains_to_json(&d) : NULL;
        alloc_calls = 0;
        json_t *b = k <= n_pm ? gq_pairmatrix_to_json(&M) : NULL;
        json_set_alloc_funcs(malloc, free);
        if (a || b)
            fail_msg("a section came back when allocation %d of its containers failed", k);
    }
    json_t *a = gq_domains_to_json(&d), *b = gq_pairmatrix_to_json(&M);
    assert_non_null(a);
    assert_non_null(b);
    json_decref(a);
    json_decref(b);
}

/* A pair missing inside a domain is a chain: GPUs 0-1 and 1-2 are fast, 0-2
 * was not measured, so the one domain {0,1,2} is chained; any pair of the
 * three missing marks it. */
static void missing_pair_chains(void **state)
{
    (void)state;
    for (int miss = 0; miss < 3; miss++) {
        int a = miss == 2 ? 1 : 0, b = miss == 0 ? 1 : 2;
        gq_pairmatrix_init(&M, NULL, 3);
        for (int i = 0; i < 3; i++)
            for (int j = i + 1; j < 3; j++)
                if (!(i == a && j == b))
                    set_sym(&M, i, j, 50, 0);
        gq_domains d;
        assert_int_equal(gq_domains_cluster(&M, NULL, &d, NULL), 0);
        if (miss == 0) {
            /* 0-1 missing: 0-2 and 1-2 still join the three */
            assert_int_equal(d.ndomains, 1);
        }
        if (d.ndomains == 1 && !d.chained[0])
            fail_msg("pair %d-%d missing inside the domain: not chained", a, b);
    }
    /* all three pairs: not chained */
    gq_pairmatrix_init(&M, NULL, 3);
    set_sym(&M, 0, 1, 50, 0);
    set_sym(&M, 0, 2, 50, 0);
    set_sym(&M, 1, 2, 50, 0);
    gq_domains d;
    assert_int_equal(gq_domains_cluster(&M, NULL, &d, NULL), 0);
    assert_int_equal(d.ndomains, 1);
    assert_false(d.chained[0]);
}

/* gq_domains_set_str() writes nothing past len, also when an item "a,b" does
 * not fit. */
static void set_str_stays_in_len(void **state)
{
    (void)state;
    const int g[] = {0, 1, 5, 6};
    char buf[16];
    memset(buf, 'X', sizeof buf);
    gq_domains_set_str(g, 4, buf, 6);
    assert_true(strlen(buf) < 6);
    for (size_t k = 6; k < sizeof buf; k++)
        assert_int_equal(buf[k], 'X');
    assert_int_equal(strncmp(buf, "0,1", 3), 0);
}

/* The groups to measure again for the open boundaries (exec/discovery.h):
 * both directions of every pair named open, through the matrix's cells (GPU
 * indices, not matrix positions), each group once and in the order met, at
 * most max; a pair with a GPU outside the matrix, a cell with no record or
 * a record index outside the set gives nothing. */
static void open_groups_of_open_pairs(void **state)
{
    (void)state;
    gq_pairmatrix *m = calloc(1, sizeof *m);
    gq_domains *dom = calloc(1, sizeof *dom);
    assert_non_null(m);
    assert_non_null(dom);
    const int gpus[4] = {4, 5, 6, 7};
    gq_pairmatrix_init(m, gpus, 4);
    gq_recordset rs = {0};
    rs.n = 6;
    rs.v = calloc((size_t)rs.n, sizeof *rs.v);
    assert_non_null(rs.v);
    for (int i = 0; i < rs.n; i++)
        rs.v[i].group = 10 + i;
    m->record[0][1] = 0; /* 4 -> 5: group 10 */
    m->record[1][0] = 1; /* 5 -> 4: group 11 */
    m->record[0][2] = 2; /* 4 -> 6: group 12; 6 -> 4 has none */
    m->record[2][3] = 9; /* 6 -> 7: no such record */
    m->record[3][2] = 5; /* 7 -> 6: group 15 */
    m->record[1][3] = 3; /* 5 -> 7: group 13, a pair never named open */
    dom->nopen = 2;
    dom->open[0].npairs = 2;
    dom->open[0].pair_a[0] = 4, dom->open[0].pair_b[0] = 5;
    dom->open[0].pair_a[1] = 6, dom->open[0].pair_b[1] = 4;
    dom->open[1].npairs = 3;
    dom->open[1].pair_a[0] = 5, dom->open[1].pair_b[0] = 4; /* met already */
    dom->open[1].pair_a[1] = 6, dom->open[1].pair_b[1] = 9; /* GPU 9 is not in the matrix */
    dom->open[1].pair_a[2] = 6, dom->open[1].pair_b[2] = 7;
    int g[8];
    int n = gq_domains_open_groups(dom, m, &rs, g, 8);
    assert_int_equal(n, 4);
    assert_int_equal(g[0], 10);
    assert_int_equal(g[1], 11);
    assert_int_equal(g[2], 12);
    assert_int_equal(g[3], 15);
    /* at most max, the first ones met */
    memset(g, 0, sizeof g);
    assert_int_equal(gq_domains_open_groups(dom, m, &rs, g, 2), 2);
    assert_int_equal(g[0], 10);
    assert_int_equal(g[1], 11);
    /* no boundary open: nothing */
    dom->nopen = 0;
    assert_int_equal(gq_domains_open_groups(dom, m, &rs, g, 8), 0);
    free(rs.v);
    free(dom);
    free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(init_gpus_and_clamps),
        cmocka_unit_test(usable_reasons),
        cmocka_unit_test(group_sizes),
        cmocka_unit_test(from_records_filters),
        cmocka_unit_test(cluster_figures),
        cmocka_unit_test(gap_threshold_edge),
        cmocka_unit_test(set_str_edges),
        cmocka_unit_test(json_sections),
        cmocka_unit_test(largest_gap_first),
        cmocka_unit_test(json_allocation_failures),
        cmocka_unit_test(missing_pair_chains),
        cmocka_unit_test(set_str_stays_in_len),
        cmocka_unit_test(open_groups_of_open_pairs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
