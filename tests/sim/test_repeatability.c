/* The card's repeatability on a few simulated machines, a handful of seeds
 * each (issue 28, item 5; the whole sweep is bench/repeatability). Each card
 * is `gpuqual card` run as a user runs it (bench/repeat.c), judged against
 * what was written before the benchmark first ran: the topology's header, the
 * known-differences file and tests/data/golden/fault-outcomes.tsv.
 *
 * Asserted only where today's code meets issue 28's figures (on 5 seeds,
 * >= 99 % is every seed): the healthy card gives the verdict the machine
 * deserves, every injected fault is detected with its GPU named, the domains
 * and bottlenecks are the same set on every seed, and no card names a GPU
 * nothing deserved names. No timing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../bench/repeat.h"

#define NSEEDS 5
#define KNOWN_DIFF GQ_TEST_DATA "/data/golden/unseen-known-differences.tsv"
#define FAULTS GQ_TEST_DATA "/data/golden/fault-outcomes.tsv"

static gq_rep_fault faults[GQ_REP_MAX_FAULTS];
static int nfaults;

static void load_machine(gq_rep_machine *m, const char *path, bool unseen)
{
    char err[512];
    if (gq_rep_machine_load(m, path, unseen ? KNOWN_DIFF : NULL, err, sizeof err))
        fail_msg("%s", err);
}

/* What a machine deserves is read from the files written before the first
 * run, and every fault of the table is one gpuqual injects. */
static void deserved(void **state)
{
    (void)state;
    char err[512];
    nfaults = gq_rep_faults_load(FAULTS, faults, GQ_REP_MAX_FAULTS, err, sizeof err);
    if (nfaults < 0)
        fail_msg("%s", err);
    assert_true(nfaults >= 6);
    gq_rep_machine m;
    load_machine(&m, GQ_EXAMPLES "/topologies/rtx4090x8.topo", false);
    assert_string_equal(m.deserved, "pass");
    assert_string_equal(m.from, "header");
    assert_int_equal(m.ngpu, 8);
    assert_true(m.noise > 0 && m.noise < 0.5);
    assert_true(m.allowed == 0);
    /* the header said warn; the known-differences file says fail, one verdict */
    load_machine(&m, GQ_TEST_DATA "/data/topologies/sw2bad.topo", true);
    assert_string_equal(m.deserved, "fail");
    assert_string_equal(m.from, "unseen-known-differences.tsv");
    assert_true(m.allowed == ((1u << 2) | (1u << 6))); /* GPU 2 trained down, GPU 6 without P2P */
    /* "pass, or warn on 3 of 10 seeds" is no one verdict: the header's pass stands */
    load_machine(&m, GQ_TEST_DATA "/data/topologies/nvpair4.topo", true);
    assert_string_equal(m.deserved, "pass");
    assert_string_equal(m.from, "header");
    /* a fault's verdict is no better than the machine's own; incomplete stands */
    gq_rep_job j = {.m = &m, .f = NULL};
    for (int f = 0; f < nfaults; f++) {
        j.f = &faults[f];
        if (strstr(faults[f].spec, "{switch}")) {
            /* a switch's fault names the switch, on a machine that has one */
            assert_int_equal(gq_rep_named_gpu(&j), -1);
            assert_string_equal(faults[f].named, "pcie:{switch}");
            assert_false(gq_rep_applies(&j)); /* nvpair4: no switch above GPU 1 */
        } else {
            assert_int_equal(gq_rep_named_gpu(&j), GQ_REP_FAULT_GPU);
        }
    }
    /* sw2bad: GPU 1 sits under sw0, bus 0000:20:00.0 */
    load_machine(&m, GQ_TEST_DATA "/data/topologies/sw2bad.topo", true);
    assert_string_equal(m.sw_name, "sw0");
    assert_string_equal(m.sw_bus, "0000:20:00.0");
    for (int f = 0; f < nfaults; f++)
        if (strstr(faults[f].spec, "{switch}")) {
            j.f = &faults[f];
            assert_true(gq_rep_applies(&j));
            gq_rep_card c = {.named_pcie = "pcie:0000:a0:00.0 pcie:0000:20:00.0"};
            snprintf(c.verdict, sizeof c.verdict, "fail");
            assert_true(gq_rep_agrees(&j, &c));
            snprintf(c.named_pcie, sizeof c.named_pcie, "pcie:0000:20:00.01"); /* another bus */
            assert_false(gq_rep_agrees(&j, &c));
        }
    load_machine(&m, GQ_TEST_DATA "/data/topologies/sw2bad.topo", true);
    gq_rep_fault warn = faults[0];
    snprintf(warn.verdict, sizeof warn.verdict, "warn");
    j.f = &warn;
    assert_string_equal(gq_rep_deserved(&j), "fail");

    char scratch[256], kinds[GQ_REP_MAX_FAULTS][32];
    if (gq_rep_scratch(scratch, sizeof scratch, err, sizeof err))
        fail_msg("%s", err);
    int nk = gq_rep_binary_faults(GQ_BIN, m.path, scratch, kinds, GQ_REP_MAX_FAULTS, err, sizeof err);
    gq_rep_scratch_remove(scratch);
    if (nk < 0)
        fail_msg("%s", err);
    for (int f = 0; f < nfaults; f++) {
        bool found = false;
        for (int k = 0; k < nk; k++)
            found |= !strcmp(kinds[k], faults[f].kind);
        if (!found)
            fail_msg("fault-outcomes.tsv names '%s', which gpuqual does not inject", faults[f].kind);
    }
}

/* A card that agrees, one that gives another verdict, and one that names the
 * wrong GPU, judged as the benchmark judges them. */
static void judging(void **state)
{
    (void)state;
    gq_rep_machine m;
    load_machine(&m, GQ_EXAMPLES "/topologies/rtx4090x8.topo", false);
    gq_rep_fault f = {.kind = "thermal",
                      .spec = "gpu{gpu}:thermal",
                      .stress_s = 40,
                      .verdict = "fail",
                      .named = "gpu:{gpu}"};
    gq_rep_job healthy = {.m = &m, .level = "quick", .noise = -1, .seed = 1};
    gq_rep_job faulty = {.m = &m, .f = &f, .level = "quick", .noise = -1, .seed = 1};
    gq_rep_card c = {.verdict = "pass"};
    assert_true(gq_rep_agrees(&healthy, &c));
    snprintf(c.verdict, sizeof c.verdict, "warn"); /* "undetermined" shows as warn: a disagreement */
    assert_false(gq_rep_agrees(&healthy, &c));
    snprintf(c.verdict, sizeof c.verdict, "fail");
    c.named = 1u << 3;
    assert_false(gq_rep_agrees(&faulty, &c)); /* the right verdict, the wrong GPU */
    assert_true(gq_rep_wrong(&faulty, &c) == 1u << 3);
    c.named |= 1u << GQ_REP_FAULT_GPU;
    assert_true(gq_rep_agrees(&faulty, &c));
    c.named = 1u << GQ_REP_FAULT_GPU;
    assert_true(gq_rep_wrong(&faulty, &c) == 0);
}

typedef struct machine_case {
    const char *path;
    bool unseen;
    const char *levels[2];
    bool twice; /* also at twice the noise */
} machine_case;

/* Where today's code meets the figures (bench/results/repeatability-2026-12-06.md,
 * 100 seeds). Not asserted, as today's code does not meet them: sw2bad's
 * standard card at its own noise (the same domains and bottlenecks on 64 of
 * 100 seeds: a p2p bottleneck over all eight GPUs comes and goes), and big64
 * (64 GPUs: INCOMPLETE at the level's default budget). sw16x2's quick card
 * is complete at the default since the default budget fits the machine. */
static const machine_case cases[] = {
    {GQ_EXAMPLES "/topologies/h200x2.topo", false, {"quick", "standard"}, true},
    {GQ_EXAMPLES "/topologies/rtx4090x8.topo", false, {"quick", "standard"}, true},
    {GQ_TEST_DATA "/data/topologies/sw2bad.topo", true, {"quick", NULL}, true},
    {GQ_TEST_DATA "/data/topologies/sw16x2.topo", true, {"quick", NULL}, false},
};

static void repeatable(void **state)
{
    (void)state;
    char err[512];
    if (nfaults <= 0)
        nfaults = gq_rep_faults_load(FAULTS, faults, GQ_REP_MAX_FAULTS, err, sizeof err);
    assert_true(nfaults > 0);
    size_t ncase = sizeof cases / sizeof cases[0];
    static gq_rep_machine mach[8];
    int max = (int)ncase * 2 * 2 * (nfaults + 1) * NSEEDS;
    gq_rep_job *jobs = calloc((size_t)max, sizeof *jobs);
    gq_rep_card *cards = calloc((size_t)max, sizeof *cards);
    assert_non_null(jobs);
    assert_non_null(cards);
    int n = 0;
    for (size_t k = 0; k < ncase; k++) {
        load_machine(&mach[k], cases[k].path, cases[k].unseen);
        for (int l = 0; l < 2 && cases[k].levels[l]; l++)
            for (int z = 0; z < (cases[k].twice ? 2 : 1); z++)
                for (int f = -1; f < nfaults; f++)
                    for (int s = 1; s <= NSEEDS; s++)
                        jobs[n++] = (gq_rep_job){.m = &mach[k],
                                                 .f = f < 0 ? NULL : &faults[f],
                                                 .level = cases[k].levels[l],
                                                 .noise = z ? 2 * mach[k].noise : -1,
                                                 .seed = s};
    }
    char scratch[256];
    if (gq_rep_scratch(scratch, sizeof scratch, err, sizeof err))
        fail_msg("%s", err);
    int rc = gq_rep_run(GQ_BIN, jobs, n, 2, scratch, cards, NULL, NULL, err, sizeof err);
    gq_rep_scratch_remove(scratch);
    if (rc)
        fail_msg("%s", err);
    int bad = 0;
    for (int g = 0; g < n; g += NSEEDS) {
        const gq_rep_job *J = &jobs[g];
        gq_rep_stats s;
        gq_rep_stats_of(J, &cards[g], NSEEDS, &s);
        const char *what = J->f ? J->f->kind : "healthy";
        const char *noise = J->noise < 0 ? "calibrated" : "2x";
        if (s.agree != s.n) {
            print_error(
                "%s %s %s %s: %d of %d seeds gave what it deserves (%s, %s); commonest otherwise: %s\n",
                J->m->name, J->level, noise, what, s.agree, s.n, gq_rep_deserved(J), J->f ? J->f->named : "",
                s.why);
            bad++;
        }
        if (!J->f && s.key_mode != s.n) {
            print_error("%s %s %s: domains and bottlenecks the same set on %d of %d seeds\n", J->m->name,
                        J->level, noise, s.key_mode, s.n);
            bad++;
        }
        if (s.wrong) {
            print_error("%s %s %s %s: a GPU nothing deserved names was named on %d seeds\n", J->m->name,
                        J->level, noise, what, s.wrong);
            bad++;
        }
    }
    free(jobs);
    free(cards);
    assert_int_equal(bad, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(deserved), cmocka_unit_test(judging),
                                       cmocka_unit_test(repeatable)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
