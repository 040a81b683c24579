/* The text of `gpuqual domains` and of the host-path contention on results
 * that no simulated machine gives: a boundary inside a domain, a GPU set
 * aside before clustering, boundaries left open, and an asymmetry whose slow
 * GPUs all got one figure; `gpuqual place`'s verification attempts that
 * placed offload workers. Written for issue 30 (lines no test ran). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "render/command_text.h"

static char *capture_domains(const gq_domains *d)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    gq_render_domains_text(f, d);
    fclose(f);
    return buf;
}

static void want(const char *out, const char *line)
{
    if (!strstr(out, line))
        fail_msg("no '%s' in:\n%s", line, out);
}

static void domains_groups_set_aside_open(void **state)
{
    (void)state;
    gq_domains *d = calloc(1, sizeof *d);
    assert_non_null(d);
    d->ndomains = 1;
    d->size[0] = 4;
    for (int i = 0; i < 4; i++)
        d->member[0][i] = i;
    d->npairs = 6;
    d->ngroups = 3;
    d->groups[0] =
        (gq_domain_group){.gpus = 0xf, .parent = -1, .depth = 0, .gap_lo_gbps = 1, .gap_hi_gbps = 2};
    d->groups[1] =
        (gq_domain_group){.gpus = 0xc, .parent = 0, .depth = 1, .gap_lo_gbps = 10, .gap_hi_gbps = 20.5};
    d->groups[2] =
        (gq_domain_group){.gpus = 0x3, .parent = 0, .depth = 2, .gap_lo_gbps = 30, .gap_hi_gbps = 40};
    d->nset_aside = 2;
    d->set_aside[0] = 5;
    snprintf(d->set_aside_why[0], sizeof d->set_aside_why[0], "no P2P to any GPU");
    d->set_aside[1] = 6;
    snprintf(d->set_aside_why[1], sizeof d->set_aside_why[1], "slow pairs");
    d->nopen = 2;
    snprintf(d->open[0].text, sizeof d->open[0].text, "first open boundary");
    snprintf(d->open[1].text, sizeof d->open[1].text, "second open boundary");
    char *out = capture_domains(d);
    want(out, "  inside {2,3}: a further boundary between 10.0 and 20.5 GB/s\n"
              "  inside {0,1}: a further boundary between 30.0 and 40.0 GB/s\n"
              "  GPU 5 set aside before clustering: no P2P to any GPU\n"
              "  GPU 6 set aside before clustering: slow pairs\n"
              "  undetermined after measuring again: first open boundary\n"
              "  undetermined after measuring again: second open boundary\n");
    /* the top group (depth 0) is the domains line itself, not a further boundary */
    if (strstr(out, "{0-3}: a further"))
        fail_msg("the top group is listed as a further boundary:\n%s", out);
    free(out);
    free(d);
}

static char *capture_contention(const gq_bottlenecks *b)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    gq_render_contention(f, b, NULL);
    fclose(f);
    return buf;
}

static void contention_asymmetry_open(void **state)
{
    (void)state;
    gq_bottlenecks *b = calloc(1, sizeof *b);
    assert_non_null(b);
    for (int s = 0; s < 2; s++)
        for (int g = 0; g < GQ_MAX_GPUS; g++)
            b->alone[s][g] = NAN;
    gq_bn_obs obs = {.group = 1,
                     .direction = GQ_DIR_H2D,
                     .ngpus = 3,
                     .gpus = {0, 1, 2},
                     .aggregate_gbps = 60,
                     .expected_gbps = 75};
    snprintf(obs.test, sizeof obs.test, "host_concurrent");
    b->obs = &obs;
    b->nobs = 1;
    b->asym_obs[0] = 0;
    b->asym_obs[1] = -1;
    b->nslow[0] = 2;
    b->slow[0][0] = 1;
    b->slow[0][1] = 2;
    b->slow_lo[0] = 12.04; /* printed as the lower end: 12.0, not 12.1 */
    b->slow_hi[0] = 12.08;
    b->fast_lo[0] = 25.0;
    b->fast_hi[0] = 26.0;
    b->nopen = 1;
    snprintf(b->open[0].text, sizeof b->open[0].text, "was GPUs 0,1 held below 40 GB/s?");
    char *out = capture_contention(b);
    want(out, "Asymmetry: with GPUs 0-2 copying host to GPU at once, GPUs 1,2 get 12.0 GB/s each, the "
              "others 25.0-26.0\n\n");
    want(out,
         "Bottlenecks: none found\n  undetermined after measuring again: was GPUs 0,1 held below 40 GB/s?\n");
    if (strstr(out, "GPU to host"))
        fail_msg("an asymmetry for the direction without one:\n%s", out);
    free(out);
    /* a spread of 0.05 GB/s or more is a range */
    b->slow_hi[0] = 12.5;
    b->fast_hi[0] = 25.01;
    out = capture_contention(b);
    want(out, "GPUs 1,2 get 12.0-12.5 GB/s each, the others 25.0\n");
    free(out);
    free(b);
}

/* Two verification attempts with offload workers: each lists its workers
 * and their predicted and measured figures ("-" for one not measured). */
static void place_attempts_offload(void **state)
{
    (void)state;
    gq_place_model *m = calloc(1, sizeof *m);
    gq_place_result *r = calloc(1, sizeof *r);
    assert_non_null(m);
    assert_non_null(r);
    r->nattempts = 2;
    r->final_attempt = 1;
    gq_place_attempt *a = &r->attempts[0];
    a->nworkers = 2;
    a->workers[0] = 1;
    a->workers[1] = 3;
    a->offload_predicted = 50;
    a->offload_measured = 40.25;
    snprintf(a->finding, sizeof a->finding, "slower than predicted");
    a = &r->attempts[1];
    a->nworkers = 1;
    a->workers[0] = 2;
    a->offload_predicted = 61;
    a->offload_measured = -1;
    snprintf(a->finding, sizeof a->finding, "held");
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    gq_render_place_text(f, m, r, "sim");
    fclose(f);
    want(buf, "  1  offload 1,3 50.0 predicted, 40.2 measured; slower than predicted\n"
              "  2* offload 2 61.0 predicted, - measured; held\n");
    free(buf);
    free(m);
    free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(domains_groups_set_aside_open),
        cmocka_unit_test(contention_asymmetry_open),
        cmocka_unit_test(place_attempts_offload),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
