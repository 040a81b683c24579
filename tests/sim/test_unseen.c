/* Golden tests on the five machines of tests/data/topologies/, which nobody
 * here has measured: each file's header holds the expected answer, committed
 * before the analysis first ran on it. Here: domains, the GPUs set aside, the
 * bottlenecks (set, direction, capacity within 10 %, and what explains
 * them), at 1 % noise (the calibrated noise) over 10 seeds, sw2bad at 0.3 %. Placement and the card's verdict
 * are in test_unseen_place_card.c. The analysis reads only records. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_discovery_util.h"

#define TOPO(name) GQ_TEST_DATA "/data/topologies/" name ".topo"
#define NSEEDS 10

/* One expected bottleneck: "h2d:0-3", its capacity, and its explanation. */
typedef struct want_bn {
    const char *key;
    double gbps;
    gq_bn_explain explained;
    double expected; /* what the narrower limits already found allowed (0: not checked) */
} want_bn;

typedef struct want {
    const char *machine;
    const char *domains;
    const char *set_aside; /* "2:slow 6:no_p2p" or "" */
    const want_bn *bn;     /* terminated by key NULL */
    double noise;          /* --sim-noise; 0: 1 %, the calibrated noise */
} want;

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The analysis' bottlenecks as sorted "dir:set" keys, space-separated. */
static void bn_keys(const gq_bottlenecks *b, char *out, size_t n)
{
    static char keys[GQ_BN_MAX][96];
    const char *ptr[GQ_BN_MAX];
    char buf[80];
    for (int i = 0; i < b->n; i++) {
        snprintf(keys[i], sizeof keys[i], "%s:%s", gq_direction_name(b->v[i].direction),
                 gq_domains_set_str(b->v[i].gpus, b->v[i].ngpus, buf, sizeof buf));
        ptr[i] = keys[i];
    }
    qsort(ptr, (size_t)b->n, sizeof ptr[0], cmp_str);
    out[0] = 0;
    for (int i = 0; i < b->n; i++) {
        size_t l = strlen(out);
        snprintf(out + l, n - l, "%s%s", i ? " " : "", ptr[i]);
    }
}

static void want_keys(const want_bn *w, char *out, size_t n)
{
    const char *ptr[GQ_BN_MAX];
    int k = 0;
    for (; w[k].key; k++)
        ptr[k] = w[k].key;
    qsort(ptr, (size_t)k, sizeof ptr[0], cmp_str);
    out[0] = 0;
    for (int i = 0; i < k; i++) {
        size_t l = strlen(out);
        snprintf(out + l, n - l, "%s%s", i ? " " : "", ptr[i]);
    }
}

static void check(const want *w)
{
    for (uint64_t seed = 1; seed <= NSEEDS; seed++) {
        gq_discovery d;
        disc_run(w->machine, w->noise > 0 ? w->noise : 0.01, seed, 5, &d, NULL);
        char got[2048], exp[2048];
        const gq_domains *dm = d.domains;
        if (strcmp(disc_domains_str(dm, got, sizeof got), w->domains))
            fail_msg("%s seed %d: domains %s, expected %s", w->machine, (int)seed, got, w->domains);
        got[0] = 0;
        for (int k = 0; k < dm->nset_aside; k++) {
            size_t l = strlen(got);
            snprintf(got + l, sizeof got - l, "%s%d:%s", k ? " " : "", dm->set_aside[k],
                     dm->set_aside_no_p2p[k] ? "no_p2p" : "slow");
        }
        if (strcmp(got, w->set_aside))
            fail_msg("%s seed %d: set aside '%s', expected '%s'", w->machine, (int)seed, got, w->set_aside);
        const gq_bottlenecks *b = d.bottlenecks;
        bn_keys(b, got, sizeof got);
        want_keys(w->bn, exp, sizeof exp);
        if (strcmp(got, exp))
            fail_msg("%s seed %d: bottlenecks\n  %s\nexpected\n  %s", w->machine, (int)seed, got, exp);
        for (int k = 0; w->bn[k].key; k++) {
            char buf[80];
            for (int i = 0; i < b->n; i++) {
                char key[96];
                snprintf(key, sizeof key, "%s:%s", gq_direction_name(b->v[i].direction),
                         gq_domains_set_str(b->v[i].gpus, b->v[i].ngpus, buf, sizeof buf));
                if (strcmp(key, w->bn[k].key))
                    continue;
                if (fabs(b->v[i].capacity_gbps - w->bn[k].gbps) > 0.10 * w->bn[k].gbps)
                    fail_msg("%s seed %d: %s at %.1f GB/s, expected %.1f within 10%%", w->machine, (int)seed,
                             key, b->v[i].capacity_gbps, w->bn[k].gbps);
                if (w->bn[k].expected > 0 &&
                    fabs(b->v[i].expected_gbps - w->bn[k].expected) > 0.10 * w->bn[k].expected)
                    fail_msg("%s seed %d: %s expected %.1f GB/s from the limits inside, not %.1f", w->machine,
                             (int)seed, key, w->bn[k].expected, b->v[i].expected_gbps);
                if (b->v[i].explained != w->bn[k].explained)
                    fail_msg("%s seed %d: %s explained by %s, expected %s (%s)", w->machine, (int)seed, key,
                             gq_bn_explain_name(b->v[i].explained), gq_bn_explain_name(w->bn[k].explained),
                             b->v[i].explanation);
            }
        }
        gq_discovery_free(&d);
    }
}

#define PSW GQ_EXPLAIN_PCIE_SWITCH

static void nvpair4(void **state)
{
    (void)state;
    static const want_bn none[] = {{NULL, 0, 0, 0}};
    check(&(want){TOPO("nvpair4"), "{0,1}{2,3}", "", none, 0});
}

static void sw16x2(void **state)
{
    (void)state;
    static const want_bn bn[] = {
        {"h2d:0-3", 24, PSW, 0},
        {"h2d:4-7", 24, PSW, 0},
        {"h2d:8-11", 24, PSW, 0},
        {"h2d:12-15", 24, PSW, 0},
        {"d2h:0-3", 24, PSW, 0},
        {"d2h:4-7", 24, PSW, 0},
        {"d2h:8-11", 24, PSW, 0},
        {"d2h:12-15", 24, PSW, 0},
        {"p2p:0-7", 24, PSW, 0},
        {"p2p:8-15", 24, PSW, 0},
        {"p2p:0-3,8-11", 24, PSW, 0},
        {"p2p:0-3,12-15", 24, PSW, 0},
        {"p2p:4-11", 24, PSW, 0},
        {"p2p:4-7,12-15", 24, PSW, 0},
        /* the socket link: 30 GB/s below the 2 x 24 of the switch uplinks it contains */
        {"p2p:0-15", 30, GQ_EXPLAIN_CPU_INTERCONNECT, 48},
        {NULL, 0, 0, 0},
    };
    check(&(want){TOPO("sw16x2"), "{0-3}{4-7}{8-11}{12-15}", "", bn, 0});
}

static void nvswitch8(void **state)
{
    (void)state;
    static const want_bn bn[] = {
        {"h2d:0,1", 53, PSW, 0}, {"h2d:2,3", 53, PSW, 0}, {"h2d:4,5", 53, PSW, 0},
        {"h2d:6,7", 53, PSW, 0}, {"d2h:0,1", 53, PSW, 0}, {"d2h:2,3", 53, PSW, 0},
        {"d2h:4,5", 53, PSW, 0}, {"d2h:6,7", 53, PSW, 0}, {NULL, 0, 0, 0},
    };
    check(&(want){TOPO("nvswitch8"), "{0-7}", "", bn, 0});
}

static void sw1x4(void **state)
{
    (void)state;
    static const want_bn bn[] = {{"h2d:0-3", 25, PSW, 0}, {"d2h:0-3", 25, PSW, 0}, {NULL, 0, 0, 0}};
    check(&(want){TOPO("sw1x4"), "{0-3}", "", bn, 0});
}

static void sw2bad(void **state)
{
    (void)state;
    static const want_bn bn[] = {
        {"h2d:0-3", 52, PSW, 0}, {"h2d:4-7", 52, PSW, 0},       {"d2h:0-3", 52, PSW, 0},
        {"d2h:4-7", 52, PSW, 0}, {"p2p:0,1,3-5,7", 52, PSW, 0}, {NULL, 0, 0, 0},
    };
    /* At the calibrated 1 % (the default): before the decisions knew their
     * uncertainty, the host budget of switch 0's four GPUs (one of them, GPU
     * 2, trained down) was reported over GPUs 0,1,3 only on 6 of 30 seeds
     * (2, 3, 8, 10, 13, 23), and this case was pinned at 0.3 %. */
    check(&(want){TOPO("sw2bad"), "{0,1,3}{2}{4,5,7}{6}", "2:slow 6:no_p2p", bn, 0});
}

/* The split runs: the sockets of sw16x2 each way, all eight pairs at once;
 * on sw2bad none touches the GPUs set aside; on rtx4090x8 (no P2P at all)
 * none, since every pair would be host-staged. */
static void split_runs(void **state)
{
    (void)state;
    gq_discovery d;
    char buf[256];
    disc_run(TOPO("sw16x2"), 0.01, 1, 5, &d, NULL);
    int fwd = 0, rev = 0;
    for (int i = 0; i < d.plan.n; i++) {
        const gq_probe *pr = &d.plan.v[i];
        if (pr->kind != GQ_PROBE_P2P_SPLIT)
            continue;
        fwd += !strcmp(gq_probe_str(pr, buf, sizeof buf), "0:8,1:9,2:10,3:11,4:12,5:13,6:14,7:15");
        rev += !strcmp(gq_probe_str(pr, buf, sizeof buf), "8:0,9:1,10:2,11:3,12:4,13:5,14:6,15:7");
    }
    assert_int_equal(fwd, 1);
    assert_int_equal(rev, 1);
    gq_discovery_free(&d);

    disc_run(TOPO("sw2bad"), 0.01, 1, 5, &d, NULL);
    int splits = 0;
    for (int i = 0; i < d.plan.n; i++) {
        const gq_probe *pr = &d.plan.v[i];
        if (pr->kind != GQ_PROBE_P2P_SPLIT)
            continue;
        splits++;
        for (int k = 0; k < pr->npairs; k++)
            if (pr->src[k] == 2 || pr->dst[k] == 2 || pr->src[k] == 6 || pr->dst[k] == 6)
                fail_msg("sw2bad: split run %s touches a GPU set aside", gq_probe_str(pr, buf, sizeof buf));
    }
    assert_true(splits >= 1);
    gq_discovery_free(&d);

    disc_run("rtx4090x8", 0.01, 1, 5, &d, NULL);
    assert_int_equal(d.plan.count[GQ_PROBE_P2P_SPLIT], 0);
    gq_discovery_free(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(nvpair4), cmocka_unit_test(sw16x2), cmocka_unit_test(nvswitch8),
        cmocka_unit_test(sw1x4),   cmocka_unit_test(sw2bad), cmocka_unit_test(split_runs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
