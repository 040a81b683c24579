/* Domains that survive a broken GPU, and the hierarchy of boundaries
 * (docs/method-domains.md, "A broken GPU, and the hierarchy"). The matrices
 * are the shapes of the two-switch box with a GPU trained down and one
 * without P2P, and of a 16-GPU two-socket switch tree. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "analysis/domains.h"

static gq_pairmatrix M;

static void set_sym(gq_pairmatrix *m, int i, int j, double v, double spread)
{
    m->gbps[i][j] = m->gbps[j][i] = v;
    m->spread[i][j] = m->spread[j][i] = spread;
}

static const char *doms(const gq_domains *d, char *out, size_t n)
{
    char buf[128];
    out[0] = 0;
    for (int k = 0; k < d->ndomains; k++) {
        size_t l = strlen(out);
        snprintf(out + l, n - l, "{%s}", gq_domains_set_str(d->member[k], d->size[k], buf, sizeof buf));
    }
    return out;
}

/* Two switches {0-3} {4-7}: 50 inside, 30 across; GPU 2 at 13.5 with
 * everyone (its link); GPU 6 without P2P (its cells staged). */
static void two_switches(gq_pairmatrix *m, bool broken)
{
    gq_pairmatrix_init(m, NULL, 8);
    for (int i = 0; i < 8; i++)
        for (int j = i + 1; j < 8; j++)
            set_sym(m, i, j, i / 4 == j / 4 ? 50 + 0.1 * j : 30 + 0.1 * i, 0.01);
    if (!broken)
        return;
    for (int j = 0; j < 8; j++)
        if (j != 2)
            set_sym(m, 2, j, 13.5, 0.01);
    for (int j = 0; j < 8; j++)
        if (j != 6) {
            set_sym(m, 6, j, 9, 0.01);
            m->staged[6][j] = m->staged[j][6] = true;
        }
}

static void broken_gpus_set_aside(void **state)
{
    (void)state;
    gq_domains d;
    char buf[256];
    two_switches(&M, true);
    assert_int_equal(gq_domains_cluster(&M, NULL, &d, NULL), GQ_OK);
    assert_string_equal(doms(&d, buf, sizeof buf), "{0,1,3}{2}{4,5,7}{6}");
    assert_int_equal(d.nset_aside, 2);
    assert_int_equal(d.set_aside[0], 2);
    assert_false(d.set_aside_no_p2p[0]);
    assert_non_null(strstr(d.set_aside_why[0], "13.5-13.5 GB/s"));
    assert_int_equal(d.set_aside[1], 6);
    assert_true(d.set_aside_no_p2p[1]);
    assert_true(d.split);
    assert_true(d.gap_lo_gbps < 31 && d.gap_hi_gbps >= 50);

    /* the discovery's view of GPU 2's link goes into the text */
    gq_topo *t = calloc(1, sizeof *t);
    assert_non_null(t);
    gq_topo_init(t);
    t->ngpu = 8;
    t->gpu[2].pcie_gen_cur = 4;
    t->gpu[2].pcie_width_cur = 8;
    t->gpu[2].pcie_gen_max = 5;
    t->gpu[2].pcie_width_max = 16;
    gq_domains_opts o;
    gq_domains_opts_default(&o);
    o.topo = t;
    assert_int_equal(gq_domains_cluster(&M, &o, &d, NULL), GQ_OK);
    assert_non_null(strstr(d.set_aside_why[0], "Gen4 x8 where it can do Gen5 x16"));
    free(t);

    /* without setting aside, the widest gap peels off the slow GPU; the
     * boundary found again inside the rest still parts the switches, but
     * nothing says the slow GPU is a finding of its own */
    o.topo = NULL;
    o.no_set_aside = true;
    assert_int_equal(gq_domains_cluster(&M, &o, &d, NULL), GQ_OK);
    assert_string_equal(doms(&d, buf, sizeof buf), "{0,1,3}{2}{4,5,7}{6}");
    assert_int_equal(d.nset_aside, 0);
    assert_true(d.ngroups == 2 && d.groups[0].threshold_gbps < 31);

    /* a healthy box sets nothing aside */
    two_switches(&M, false);
    assert_int_equal(gq_domains_cluster(&M, NULL, &d, NULL), GQ_OK);
    assert_string_equal(doms(&d, buf, sizeof buf), "{0-3}{4-7}");
    assert_int_equal(d.nset_aside, 0);
}

/* A GPU that is merely alone in its group is not set aside when the other
 * GPUs show one level only: 0,1 at 50, GPU 2 at 20 with both. */
static void alone_is_not_broken(void **state)
{
    (void)state;
    gq_domains d;
    char buf[64];
    gq_pairmatrix_init(&M, NULL, 3);
    set_sym(&M, 0, 1, 50, 0.01);
    set_sym(&M, 0, 2, 20, 0.01);
    set_sym(&M, 1, 2, 20, 0.01);
    assert_int_equal(gq_domains_cluster(&M, NULL, &d, NULL), GQ_OK);
    assert_string_equal(doms(&d, buf, sizeof buf), "{0,1}{2}");
    assert_int_equal(d.nset_aside, 0);
    assert_true(d.split);
}

/* GPU 0's pairs are all slower (10 GB/s) than any pair of the others
 * (20-40) and flat, but their spread reaches 15 GB/s, past the others' low
 * end (20 x 0.7 = 14): the gap is within the noise, so GPU 0 is not set
 * aside. With tight spreads the same figures set it aside. */
static void spread_covers_slow_gpu(void **state)
{
    (void)state;
    gq_domains d;
    for (int tight = 0; tight < 2; tight++) {
        gq_pairmatrix_init(&M, NULL, 4);
        for (int j = 1; j < 4; j++)
            set_sym(&M, 0, j, 10, tight ? 0.01 : 0.5);
        set_sym(&M, 1, 2, 20, tight ? 0.01 : 0.3);
        set_sym(&M, 1, 3, 20, tight ? 0.01 : 0.3);
        set_sym(&M, 2, 3, 40, tight ? 0.01 : 0.3);
        assert_int_equal(gq_domains_cluster(&M, NULL, &d, NULL), GQ_OK);
        assert_int_equal(d.nset_aside, tight);
        if (tight) {
            assert_int_equal(d.set_aside[0], 0);
            assert_non_null(strstr(d.set_aside_why[0], "10.0-10.0 GB/s"));
        }
    }
}

/* 16 GPUs, two sockets, two switches per socket: 24 inside a switch, 20
 * across switches of a socket, 14 across sockets. */
static void hierarchy(void **state)
{
    (void)state;
    gq_domains d;
    char buf[256];
    gq_pairmatrix_init(&M, NULL, 16);
    for (int i = 0; i < 16; i++)
        for (int j = i + 1; j < 16; j++)
            set_sym(&M, i, j, i / 4 == j / 4 ? 24.2 : i / 8 == j / 8 ? 20 : 14, 0.01);
    assert_int_equal(gq_domains_cluster(&M, NULL, &d, NULL), GQ_OK);
    assert_string_equal(doms(&d, buf, sizeof buf), "{0-3}{4-7}{8-11}{12-15}");
    assert_int_equal(d.ngroups, 3);
    assert_int_equal(d.groups[0].depth, 0);
    assert_true(d.groups[0].gpus == 0xffff);
    assert_true(d.groups[0].threshold_gbps == 20);
    assert_true(d.groups[1].gpus == 0x00ff && d.groups[1].parent == 0 && d.groups[1].depth == 1);
    assert_true(d.groups[2].gpus == 0xff00 && d.groups[2].threshold_gbps == 24.2);
    assert_true(d.threshold_gbps == 20); /* the first, widest boundary */
    assert_true(d.within_min_gbps == 24.2 && d.across_max_gbps == 20);
    for (int k = 0; k < d.ndomains; k++)
        assert_false(d.chained[k]);
}

/* An open boundary found inside a sub-group names that sub-group's GPUs
 * only, by their GPU indices (positions 0-7 are GPUs 8-15 here): GPUs 8-11
 * and 12-15 part clearly at the top (10 GB/s across, 37-40 inside); inside
 * 8-11, 37 against 40 with 2 % spreads is 6 % apart at worst and 10.3 % at
 * best: open. */
static void open_in_subgroup_names_its_gpus(void **state)
{
    (void)state;
    gq_domains d;
    char buf[128];
    const int ids[] = {8, 9, 10, 11, 12, 13, 14, 15};
    gq_pairmatrix_init(&M, ids, 8);
    for (int i = 0; i < 8; i++)
        for (int j = i + 1; j < 8; j++)
            set_sym(&M, i, j, i / 4 != j / 4 ? 10 : (i < 4 && i / 2 != j / 2) ? 37 : 40, 0.02);
    assert_int_equal(gq_domains_cluster(&M, NULL, &d, NULL), GQ_OK);
    assert_string_equal(doms(&d, buf, sizeof buf), "{8-11}{12-15}");
    assert_int_equal(d.ngroups, 1);
    assert_true(d.groups[0].gpus == 0xff00);
    assert_int_equal(d.nopen, 1);
    assert_true(d.open[0].gpus == 0x0f00);
    assert_true(d.open[0].lo_gbps == 37 && d.open[0].hi_gbps == 40);
    assert_non_null(strstr(d.open[0].text, "whether GPUs 8-11 split into domains"));
    assert_true(d.open[0].npairs == 6);
    for (int p = 0; p < d.open[0].npairs; p++) /* the pairs to measure again are the group's */
        assert_true(d.open[0].pair_a[p] >= 8 && d.open[0].pair_a[p] <= 11 && d.open[0].pair_b[p] >= 8 &&
                    d.open[0].pair_b[p] <= 11);
}

/* A pair's interval from its rounds (lo, hi) is used only when both ends are
 * finite and it holds the pair's figure; otherwise the figure +- half its
 * spread (0 here) is. {0,1} and {2,3} at 20, the pairs across at 10: with
 * every interval ignored the gap (100 %) parts them. Each of these
 * intervals, were it taken, would close or open the gap instead. */
static void interval_only_when_it_holds_the_figure(void **state)
{
    (void)state;
    static const struct {
        int i, j;
        double lo, hi;
    } bad[] = {
        {0, 2, 18.5, 18.5},      /* above the figure 10: the gap would be 8 % */
        {0, 2, 9.0, INFINITY},   /* unbounded above: the gap would be open */
        {0, 1, 10.5, 10.5},      /* below the figure 20: the gap would be 5 % */
        {0, 1, -INFINITY, 20.0}, /* unbounded below: the gap would be open */
        {0, 1, NAN, 20.0},       {0, 2, 10.0, NAN},
    };
    for (size_t c = 0; c < sizeof bad / sizeof bad[0]; c++) {
        gq_domains d;
        char buf[64];
        gq_pairmatrix_init(&M, NULL, 4);
        for (int i = 0; i < 4; i++)
            for (int j = i + 1; j < 4; j++)
                set_sym(&M, i, j, i / 2 == j / 2 ? 20 : 10, 0);
        int i = bad[c].i, j = bad[c].j;
        M.lo[i][j] = M.lo[j][i] = bad[c].lo;
        M.hi[i][j] = M.hi[j][i] = bad[c].hi;
        assert_int_equal(gq_domains_cluster(&M, NULL, &d, NULL), GQ_OK);
        if (strcmp(doms(&d, buf, sizeof buf), "{0,1}{2,3}") || d.nopen != 0)
            fail_msg("case %zu: domains %s, %d open", c, buf, d.nopen);
        assert_true(d.threshold_gbps == 20 && d.gap_lo_gbps == 10);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(broken_gpus_set_aside),
        cmocka_unit_test(alone_is_not_broken),
        cmocka_unit_test(spread_covers_slow_gpu),
        cmocka_unit_test(hierarchy),
        cmocka_unit_test(open_in_subgroup_names_its_gpus),
        cmocka_unit_test(interval_only_when_it_holds_the_figure),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
