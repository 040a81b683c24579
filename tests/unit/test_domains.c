/* Domain clustering on crafted matrices: the seeds' matrices, flat matrices,
 * missing cells, gaps hidden by the measurement spread, and matrices built
 * from records (impossible and concurrent records kept out). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "analysis/domains.h"

static gq_pairmatrix M;

static void set_sym(gq_pairmatrix *m, int i, int j, double v, double spread)
{
    m->gbps[i][j] = m->gbps[j][i] = v;
    m->spread[i][j] = m->spread[j][i] = spread;
}

static void expect_domains(const gq_domains *d, const char *want)
{
    char got[256] = "", buf[128];
    for (int k = 0; k < d->ndomains; k++) {
        gq_domains_set_str(d->member[k], d->size[k], buf, sizeof buf);
        strcat(got, "{");
        strcat(got, buf);
        strcat(got, "}");
    }
    if (strcmp(got, want))
        fail_msg("domains %s, expected %s", got, want);
}

/* Seed 001 section 3: within GPU 0-3 52.7-53.6, within 4-7 52.6-53.8,
 * between the groups 36.5-40.5 GB/s. */
static void seed001(void **state)
{
    (void)state;
    gq_pairmatrix_init(&M, NULL, 8);
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 8; j++) {
            if (i == j)
                continue;
            bool same = (i < 4) == (j < 4);
            double t = (double)((i * 7 + j * 3) % 10) / 9.0; /* 0..1, asymmetric */
            M.gbps[i][j] = same ? (i < 4 ? 52.7 + 0.9 * t : 52.6 + 1.2 * t) : 36.5 + 4.0 * t;
            M.spread[i][j] = 0.01;
        }
    gq_domains d;
    assert_int_equal(gq_domains_cluster(&M, NULL, &d, NULL), 0);
    expect_domains(&d, "{0-3}{4-7}");
    assert_true(d.split);
    assert_true(d.gap_lo_gbps <= 40.5 && d.gap_hi_gbps >= 52.6);
    assert_true(d.within_min_gbps >= 52.6);
    assert_true(d.across_max_gbps <= 40.5);
    assert_false(d.chained[0] || d.chained[1]);
    assert_int_equal(d.domain_of[5], 1);
    assert_false(d.no_p2p);
}

/* Seed 004, unidirectional P2P=Enabled (writes) and bidirectional matrices
 * of the 6 x A100 with NVLink bridges. */
static const double a100_uni[6][6] = {
    {0, 10.05, 10.05, 275.34, 8.55, 8.55}, {10.04, 0, 196.25, 8.69, 8.56, 8.72},
    {10.04, 216.16, 0, 9.86, 8.70, 8.50},  {200.30, 8.93, 8.93, 0, 10.06, 10.06},
    {9.48, 8.90, 8.90, 10.05, 0, 189.87},  {9.61, 8.90, 8.90, 10.05, 275.24, 0},
};
static const double a100_bi[6][6] = {
    {0, 19.35, 19.34, 516.02, 18.80, 18.85}, {19.34, 0, 515.66, 18.90, 19.01, 19.02},
    {19.35, 517.03, 0, 18.90, 19.01, 19.01}, {515.34, 18.91, 18.92, 0, 19.28, 19.28},
    {18.81, 19.01, 19.00, 19.28, 0, 515.37}, {18.82, 19.00, 19.02, 19.28, 517.31, 0},
};

static void seed004(void **state)
{
    (void)state;
    const double(*mats[2])[6] = {a100_uni, a100_bi};
    for (int k = 0; k < 2; k++) {
        gq_pairmatrix_init(&M, NULL, 6);
        for (int i = 0; i < 6; i++)
            for (int j = 0; j < 6; j++)
                if (i != j)
                    M.gbps[i][j] = mats[k][i][j];
        gq_domains d;
        assert_int_equal(gq_domains_cluster(&M, NULL, &d, NULL), 0);
        expect_domains(&d, "{0,3}{1,2}{4,5}");
        assert_true(d.split);
        assert_true(d.across_max_gbps < 20);
    }
}

/* H200 x2: one pair, so one value and no gap: one domain. */
static void h200_one_domain(void **state)
{
    (void)state;
    gq_pairmatrix_init(&M, NULL, 2);
    M.gbps[0][1] = 394.09;
    M.gbps[1][0] = 393.93;
    gq_domains d;
    assert_int_equal(gq_domains_cluster(&M, NULL, &d, NULL), 0);
    expect_domains(&d, "{0,1}");
    assert_false(d.split);
    assert_true(fabs(d.within_min_gbps - 394.01) < 0.01);
}

/* A flat 8x8 matrix with small variation is one domain. */
static void flat_is_one(void **state)
{
    (void)state;
    gq_pairmatrix_init(&M, NULL, 8);
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 8; j++)
            if (i != j)
                M.gbps[i][j] = 50.0 + 0.5 * ((i + 2 * j) % 5); /* 50.0 .. 52.0: under 10% */
    gq_domains d;
    assert_int_equal(gq_domains_cluster(&M, NULL, &d, NULL), 0);
    expect_domains(&d, "{0-7}");
    assert_false(d.split);
}

/* A 25% gap that the spread of the cells covers is no boundary. */
static void gap_within_spread(void **state)
{
    (void)state;
    gq_pairmatrix_init(&M, NULL, 4);
    set_sym(&M, 0, 1, 50, 0.2);
    set_sym(&M, 2, 3, 50, 0.2);
    set_sym(&M, 0, 2, 40, 0.2);
    set_sym(&M, 0, 3, 40, 0.2);
    set_sym(&M, 1, 2, 40, 0.2);
    set_sym(&M, 1, 3, 40, 0.2);
    gq_domains d;
    assert_int_equal(gq_domains_cluster(&M, NULL, &d, NULL), 0);
    expect_domains(&d, "{0-3}");
    /* ... and the boundary is named as open: 40 +- 4 against 50 +- 5 is 2.3 %
     * apart at worst, 53 % at best; the pairs nearest the gap go first */
    assert_int_equal(d.nopen, 1);
    assert_true(d.open[0].gpus == 0xf && d.open[0].lo_gbps == 40 && d.open[0].hi_gbps == 50);
    assert_true(fabs(d.open[0].worst_pct - 100.0 * (45.0 / 44.0 - 1)) < 1e-9);
    assert_true(fabs(d.open[0].best_pct - 100.0 * (55.0 / 36.0 - 1)) < 1e-9);
    assert_int_equal(d.open[0].npairs, 6);
    assert_true(d.open[0].pair_a[0] == 1 && d.open[0].pair_b[0] == 3); /* the last 40 GB/s pair */
    assert_true(d.open[0].pair_a[1] == 0 && d.open[0].pair_b[1] == 1); /* the first 50 GB/s pair */
    assert_non_null(strstr(d.open[0].text, "whether GPUs 0-3 split into domains"));
    /* the same matrix measured tightly does split, nothing open */
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            M.spread[i][j] = 0.01;
    assert_int_equal(gq_domains_cluster(&M, NULL, &d, NULL), 0);
    expect_domains(&d, "{0,1}{2,3}");
    assert_int_equal(d.nopen, 0);
    /* intervals from the rounds win over the spread: the loose spread with
     * tight intervals splits */
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            M.spread[i][j] = 0.2;
            M.lo[i][j] = M.gbps[i][j] * 0.99;
            M.hi[i][j] = M.gbps[i][j] * 1.01;
        }
    assert_int_equal(gq_domains_cluster(&M, NULL, &d, NULL), 0);
    expect_domains(&d, "{0,1}{2,3}");
    assert_int_equal(d.nopen, 0);
}

/* No P2P anywhere (only host-staged cells): singletons, flagged. With
 * staged cells counted as edges the staged matrix is clustered instead. */
static void no_p2p(void **state)
{
    (void)state;
    gq_pairmatrix_init(&M, NULL, 4);
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            if (i != j) {
                M.gbps[i][j] = 18.0;
                M.staged[i][j] = true;
            }
    gq_domains d;
    assert_int_equal(gq_domains_cluster(&M, NULL, &d, NULL), 0);
    expect_domains(&d, "{0}{1}{2}{3}");
    assert_true(d.no_p2p);
    assert_int_equal(d.nmissing, 6);
    gq_domains_opts o;
    gq_domains_opts_default(&o);
    o.staged_edges = true;
    assert_int_equal(gq_domains_cluster(&M, &o, &d, NULL), 0);
    expect_domains(&d, "{0-3}");
    assert_false(d.no_p2p);
}

/* P2P only between 0-1 and 2-3 (the rest missing): two domains without any
 * gap; a single direction measured is enough for a pair. */
static void missing_cells(void **state)
{
    (void)state;
    gq_pairmatrix_init(&M, NULL, 4);
    M.gbps[0][1] = 50;
    M.gbps[3][2] = 48;
    gq_domains d;
    assert_int_equal(gq_domains_cluster(&M, NULL, &d, NULL), 0);
    expect_domains(&d, "{0,1}{2,3}");
    assert_int_equal(d.nmissing, 4);
    assert_false(d.split);
}

/* A broken slow link inside a machine with two domains must not hide the
 * domains: the largest gap (to the broken link) separates nothing, so the
 * next one is used. */
static void broken_link(void **state)
{
    (void)state;
    gq_pairmatrix_init(&M, NULL, 8);
    for (int i = 0; i < 8; i++)
        for (int j = i + 1; j < 8; j++)
            set_sym(&M, i, j, ((i < 4) == (j < 4)) ? 53.0 : 38.0, 0.01);
    set_sym(&M, 1, 6, 4.0, 0.01);
    gq_domains d;
    assert_int_equal(gq_domains_cluster(&M, NULL, &d, NULL), 0);
    expect_domains(&d, "{0-3}{4-7}");
    assert_true(fabs(d.threshold_gbps - 53.0) < 1e-9);
}

/* Single linkage joins 0-1-2 through fast pairs even though 0-2 is slow;
 * the domain is marked chained. */
static void chained(void **state)
{
    (void)state;
    gq_pairmatrix_init(&M, NULL, 4);
    set_sym(&M, 0, 1, 100, 0);
    set_sym(&M, 1, 2, 100, 0);
    set_sym(&M, 0, 2, 20, 0);
    set_sym(&M, 0, 3, 20, 0);
    set_sym(&M, 1, 3, 20, 0);
    set_sym(&M, 2, 3, 20, 0);
    gq_domains d;
    assert_int_equal(gq_domains_cluster(&M, NULL, &d, NULL), 0);
    expect_domains(&d, "{0-2}{3}");
    assert_true(d.chained[0]);
    assert_false(d.chained[1]);
}

/* A subset of GPUs (rows are GPUs 2,5,6): indices are reported as GPUs. */
static void gpu_subset(void **state)
{
    (void)state;
    int gpus[] = {6, 2, 5};
    gq_pairmatrix_init(&M, gpus, 3);
    set_sym(&M, 0, 2, 300, 0); /* 6-5 */
    set_sym(&M, 0, 1, 20, 0);
    set_sym(&M, 1, 2, 20, 0);
    gq_domains d;
    assert_int_equal(gq_domains_cluster(&M, NULL, &d, NULL), 0);
    expect_domains(&d, "{2}{5,6}");
    assert_int_equal(d.domain_of[6], 1);
    assert_int_equal(d.domain_of[0], -1);
}

static void one_gpu_and_empty(void **state)
{
    (void)state;
    gq_pairmatrix_init(&M, NULL, 1);
    gq_domains d;
    assert_int_equal(gq_domains_cluster(&M, NULL, &d, NULL), 0);
    expect_domains(&d, "{0}");
    assert_false(d.no_p2p);
    gq_pairmatrix_init(&M, NULL, 0);
    assert_int_equal(gq_domains_cluster(&M, NULL, &d, NULL), GQ_E_USAGE);
}

static gq_record p2p_rec(int src, int dst, double gbps, int group)
{
    gq_record r;
    memset(&r, 0, sizeof r);
    strcpy(r.test, "device_to_device_memcpy_read_ce");
    r.src = (gq_endpoint){GQ_EP_GPU, src};
    r.dst = (gq_endpoint){GQ_EP_GPU, dst};
    r.direction = GQ_DIR_P2P;
    r.value.median = r.value.min = r.value.max = gbps;
    r.value.n = 5;
    r.rounds = 5;
    r.valid = true;
    r.group = group;
    r.flow_tag = 0;
    r.overlap = 1;
    return r;
}

/* Records -> matrix: one-pair groups only; an impossible figure and a
 * concurrent-group figure are kept out. Seed 001's structure again. */
static void from_records(void **state)
{
    (void)state;
    gq_recordset rs = {0};
    int g = 0;
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 8; j++)
            if (i != j) {
                gq_record r = p2p_rec(i, j, ((i < 4) == (j < 4)) ? 53.0 : 38.0, g++);
                if (i == 0 && j == 5) { /* seed 000's kind of mistake: above the path */
                    r.value.median = 90.0;
                    r.valid = false;
                    r.flags |= GQ_FLAG_IMPOSSIBLE;
                }
                assert_int_equal(gq_records_push(&rs, &r), 0);
            }
    /* two flows that ran together: not a matrix cell */
    gq_record c1 = p2p_rec(1, 6, 99.0, 1000), c2 = p2p_rec(2, 7, 99.0, 1000);
    gq_records_push(&rs, &c1);
    gq_records_push(&rs, &c2);
    gq_pairmatrix_init(&M, NULL, 8);
    int filled = gq_pairmatrix_from_records(&M, &rs, NULL);
    assert_int_equal(filled, 55);
    assert_true(isnan(M.gbps[0][5]));
    assert_true(M.record[0][5] >= 0);
    assert_true(fabs(M.gbps[1][6] - 38.0) < 1e-9);
    gq_domains d;
    assert_int_equal(gq_domains_cluster(&M, NULL, &d, NULL), 0);
    expect_domains(&d, "{0-3}{4-7}");
    const char *why = NULL;
    assert_false(gq_domains_usable(&rs.v[4], &why));
    assert_non_null(strstr(why, "impossible"));
    gq_records_free(&rs);
}

static void set_str(void **state)
{
    (void)state;
    char b[64];
    int v[] = {7, 0, 1, 2, 3, 5, 9, 10};
    assert_string_equal(gq_domains_set_str(v, 8, b, sizeof b), "0-3,5,7,9,10");
    int w[] = {4};
    assert_string_equal(gq_domains_set_str(w, 1, b, sizeof b), "4");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(seed001),           cmocka_unit_test(seed004),
        cmocka_unit_test(h200_one_domain),   cmocka_unit_test(flat_is_one),
        cmocka_unit_test(gap_within_spread), cmocka_unit_test(no_p2p),
        cmocka_unit_test(missing_cells),     cmocka_unit_test(broken_link),
        cmocka_unit_test(chained),           cmocka_unit_test(gpu_subset),
        cmocka_unit_test(one_gpu_and_empty), cmocka_unit_test(from_records),
        cmocka_unit_test(set_str),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
