/* Robustness: with noise on, discovery gives the same domains and the same
 * bottlenecks for 20 different simulator seeds, on every seed machine; and
 * the noise really reached the figures each time (a seed changes them by
 * about the noise, the same seed repeats them exactly). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_discovery_util.h"

#define NOISE 0.02 /* twice the calibrated noise (docs/method.md, "The simulator's noise") */
#define SEEDS 20

/* What every record's group (the records that ran together) was, as a
 * number: a hash of the GPUs and the endpoints of all its records, in any
 * order. Two groups of the same GPUs paired differently differ. */
static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static uint64_t *group_signatures(const gq_recordset *rs)
{
    uint64_t *sig = calloc((size_t)rs->n + 1, sizeof *sig);
    assert_non_null(sig);
    for (int i = 0; i < rs->n; i++)
        for (int j = 0; j < rs->n; j++) {
            const gq_record *r = &rs->v[j];
            if (r->group != rs->v[i].group)
                continue;
            uint64_t h = mix(((uint64_t)r->src.kind << 48) ^ ((uint64_t)(r->src.index + 8) << 32) ^
                             ((uint64_t)r->dst.kind << 16) ^ (uint64_t)(r->dst.index + 8));
            for (int k = 0; k < r->ngpus; k++)
                h = mix(h ^ (uint64_t)r->gpus[k]);
            sig[i] += h;
        }
    return sig;
}

/* The same measurement in two runs: test, endpoints, direction, size, which
 * flow of which group of GPUs. */
static bool same_measurement(const gq_record *x, uint64_t xg, const gq_record *y, uint64_t yg)
{
    return xg == yg && !strcmp(x->test, y->test) && x->method == y->method && x->src.kind == y->src.kind &&
           x->src.index == y->src.index && x->dst.kind == y->dst.kind && x->dst.index == y->dst.index &&
           x->direction == y->direction && x->bytes == y->bytes && x->aggregate == y->aggregate &&
           x->sum == y->sum && x->ngpus == y->ngpus &&
           !memcmp(x->gpus, y->gpus, sizeof x->gpus[0] * (size_t)x->ngpus);
}

/* How far the figures of two discovery runs are apart: the median and the
 * largest |a - b| / a over the measurements both runs made and found valid
 * (a run may add probes the other did not need; the k-th of a measurement
 * in one is paired with the k-th in the other). Returns how many were
 * compared. */
static int figures_apart(const gq_discovery *a, const gq_discovery *b, double *median, double *max)
{
    const gq_recordset *ra = &a->records, *rb = &b->records;
    uint64_t *ga = group_signatures(ra), *gb = group_signatures(rb);
    bool *used = calloc((size_t)rb->n + 1, sizeof *used);
    double *d = calloc((size_t)ra->n + 1, sizeof *d);
    assert_true(used && d);
    int n = 0;
    for (int i = 0; i < ra->n; i++) {
        const gq_record *x = &ra->v[i];
        int j = 0;
        while (j < rb->n && (used[j] || !same_measurement(x, ga[i], &rb->v[j], gb[j])))
            j++;
        if (j == rb->n)
            continue;
        used[j] = true;
        const gq_record *y = &rb->v[j];
        if (!x->valid || !y->valid)
            continue;
        assert_true(x->value.median > 0);
        d[n++] = fabs(x->value.median - y->value.median) / x->value.median;
    }
    /* sort (insertion: a few hundred) */
    for (int i = 1; i < n; i++)
        for (int k = i; k > 0 && d[k - 1] > d[k]; k--) {
            double t = d[k];
            d[k] = d[k - 1];
            d[k - 1] = t;
        }
    *median = n ? d[n / 2] : 0;
    *max = n ? d[n - 1] : 0;
    free(ga);
    free(gb);
    free(used);
    free(d);
    return n;
}

static void same_answer(const char *machine)
{
    char ref_dom[512], ref_bn[1024], dom[512], bn[1024];
    gq_discovery ref, again;
    double median, max;
    disc_run(machine, NOISE, 1000, 3, &ref, NULL);
    disc_domains_str(ref.domains, ref_dom, sizeof ref_dom);
    disc_bottlenecks_str(ref.bottlenecks, ref_bn, sizeof ref_bn);
    /* the same seed gives the same figures, every one */
    disc_run(machine, NOISE, 1000, 3, &again, NULL);
    assert_int_equal(again.records.n, ref.records.n);
    int nvalid = 0;
    for (int i = 0; i < ref.records.n; i++)
        nvalid += ref.records.v[i].valid;
    assert_int_equal(figures_apart(&ref, &again, &median, &max), nvalid);
    assert_true(nvalid > 0 && max == 0);
    gq_discovery_free(&again);
    for (int s = 1; s < SEEDS; s++) {
        gq_discovery d;
        disc_run(machine, NOISE, (uint64_t)(1000 + 7919 * s), 3, &d, NULL);
        disc_domains_str(d.domains, dom, sizeof dom);
        disc_bottlenecks_str(d.bottlenecks, bn, sizeof bn);
        if (strcmp(dom, ref_dom))
            fail_msg("%s seed %d: domains %s, seed 0 gave %s", machine, s, dom, ref_dom);
        if (strcmp(bn, ref_bn))
            fail_msg("%s seed %d: bottlenecks %s, seed 0 gave %s", machine, s, bn, ref_bn);
        /* Different noise really reached the figures, by about the noise:
         * the model (noise.c) moves a figure by at most its drift, shared
         * (common x shared multiple + path) and its jitter, shared, in each
         * of the two runs, so two seeds' figures are at most twice that apart
         * (a median of rounds leaves a slow round out), and the typical one
         * by a good fraction of NOISE. Most measurements are made in both
         * runs. */
        const gq_sim_noise_params *p = &gq_sim_noise_bw[GQ_SIM_PC_HOST];
        double most = 2 * NOISE * (p->drift_common * p->drift_shared + p->drift_path + p->jitter[1]);
        int n = figures_apart(&ref, &d, &median, &max);
        if (n < nvalid / 2 || !(median > NOISE / 20) || !(max < most))
            fail_msg("%s seed %d: %d of %d figures compared, median change %.4f, largest %.4f", machine, s, n,
                     nvalid, median, max);
        gq_discovery_free(&d);
    }
    gq_discovery_free(&ref);
}

/* The noise must change the measured figures, or the test above proves nothing. */
static void noise_is_on(void **state)
{
    (void)state;
    gq_discovery a, b;
    disc_run("rtx4090x8", NOISE, 1000, 3, &a, NULL);
    disc_run("rtx4090x8", NOISE, 8919, 3, &b, NULL);
    /* the matrix comes first, one record per ordered pair, in the same order */
    assert_true(a.records.n >= 56 && b.records.n >= 56);
    int differ = 0;
    for (int i = 0; i < 56; i++) {
        assert_int_equal(a.records.v[i].src.index, b.records.v[i].src.index);
        assert_int_equal(a.records.v[i].dst.index, b.records.v[i].dst.index);
        differ += a.records.v[i].value.median != b.records.v[i].value.median;
    }
    assert_true(differ > 28);
    gq_discovery_free(&a);
    gq_discovery_free(&b);
}

static void rtx4090(void **state)
{
    (void)state;
    same_answer("rtx4090x8");
}
static void rtxpro6000(void **state)
{
    (void)state;
    same_answer("rtxpro6000x8");
}
static void a100(void **state)
{
    (void)state;
    same_answer("a100x6");
}
static void h200(void **state)
{
    (void)state;
    same_answer("h200x2");
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(noise_is_on), cmocka_unit_test(rtx4090),
                                       cmocka_unit_test(rtxpro6000), cmocka_unit_test(a100),
                                       cmocka_unit_test(h200)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
