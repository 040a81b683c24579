/* GPU test of the whole catalog, planned by src/core/catalog.c and timed by
 * the harness exactly as `gpuqual run` does (auto mode, data check on).
 * Needs a GPU (never run in CI); tests/gpu/run.sh builds and runs it.
 *
 *   test_gpu_catalog [--rounds N] [--size MIB] [--tests a,b,...]
 *
 * Every record must be complete (all rounds), positive and valid (no error,
 * failed data check, impossible figure or overlap flag); every aggregate and
 * sum must equal, round by round, the sum of the per-flow figures it stands
 * for (the directions counted apart add up to the total); a test that is not
 * skipped must give records. Exit status: 0 when every check passed.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "core/catalog.h"
#include "core/harness.h"
#include "core/record.h"
#include "core/units.h"
#include "topo/topo.h"

static int checks, failures;

static void check(bool ok, const char *test, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void check(bool ok, const char *test, const char *fmt, ...)
{
    checks++;
    if (ok)
        return;
    failures++;
    va_list ap;
    va_start(ap, fmt);
    printf("FAIL %s: ", test);
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
}

static bool selected(const char *list, const char *name)
{
    if (!list)
        return true;
    size_t n = strlen(name);
    for (const char *p = list; (p = strstr(p, name)); p += n)
        if ((p == list || p[-1] == ',') && (p[n] == ',' || p[n] == '\0'))
            return true;
    return false;
}

/* Records [from, to) are one test's; check each group's aggregates and sums
 * against its per-flow records, round by round. */
static void check_sums(const gq_recordset *rs, int from, int to)
{
    for (int i = from; i < to; i++) {
        const gq_record *a = &rs->v[i];
        if (!(a->aggregate || a->sum) || a->is_latency)
            continue;
        for (int k = 0; k < a->value.n; k++) {
            double total = 0;
            int members = 0;
            for (int j = from; j < to; j++) {
                const gq_record *f = &rs->v[j];
                if (f->group != a->group || f->aggregate || f->sum || f->is_latency)
                    continue;
                if (a->aggregate && f->direction != a->direction)
                    continue;
                if (k < f->value.n)
                    total += f->samples[k];
                members++;
            }
            double want = a->samples[k];
            check(members > 0, a->test, "group %d: an aggregate with no per-flow record", a->group);
            check(fabs(total - want) <= 1e-9 * (fabs(want) + 1), a->test,
                  "group %d round %d: %s %.6f GB/s, its %d flows add up to %.6f", a->group, k + 1,
                  a->sum ? "sum" : "aggregate", want, members, total);
        }
    }
}

int main(int argc, char **argv)
{
    int rounds = 5;
    uint64_t bytes = 512 * GQ_MiB;
    const char *only = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--size") && i + 1 < argc)
            bytes = strtoull(argv[++i], NULL, 10) * GQ_MiB;
        else if (!strcmp(argv[i], "--tests") && i + 1 < argc)
            only = argv[++i];
        else if (!strcmp(argv[i], "--quick"))
            rounds = 3;
        else if (!strcmp(argv[i], "--no-tuning") || !strcmp(argv[i], "--no-latency") || !strcmp(argv[i], "--tuning-all"))
            ; /* test_cuda_backend's options: run.sh passes the same arguments to every program */
        else {
            fprintf(stderr, "usage: %s [--rounds N] [--size MIB] [--tests a,b,...] [--quick]\n", argv[0]);
            return 2;
        }
    }
    if (rounds < 1 || rounds > GQ_MAX_ROUNDS || bytes == 0) {
        fprintf(stderr, "%s: --rounds 1..%d and --size >= 1 MiB\n", argv[0], GQ_MAX_ROUNDS);
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    double t_begin = gq_now_mono();
    gq_err err = {0};
    gq_backend be;
    gq_backend_register_builtin();
    if (gq_backend_open(&be, "cuda", NULL, &err) != GQ_OK) {
        printf("FAIL open: %s\n", err.msg);
        return 1;
    }
    gq_topo *topo = malloc(sizeof *topo);
    if (!topo)
        return 1;
    gq_topo_init(topo);
    if (be.ops->discover(&be, topo, &err) != GQ_OK || topo->ngpu < 1) {
        printf("FAIL discover: %s\n", err.msg);
        return 1;
    }
    gq_plan_opts po = {.bytes = bytes, .host_numa = GQ_NUMA_LOCAL, .numa_nodes = topo->numa_nodes,
                       .ngpus = topo->ngpu};
    for (int i = 0; i < topo->ngpu && i < GQ_MAX_GPUS; i++)
        po.gpus[i] = i;
    gq_harness_opts ho;
    gq_harness_opts_default(&ho);
    ho.rounds = rounds;
    gq_measurement *m = malloc(sizeof *m);
    gq_recordset rs = {0};
    if (!m)
        return 1;
    printf("GPUs: %d; buffer %llu MiB; rounds %d\n", topo->ngpu, (unsigned long long)(bytes / GQ_MiB), rounds);
    int ntests = 0;
    const gq_test *cat = gq_catalog(&ntests);
    int ran = 0;
    for (int t = 0; t < ntests; t++) {
        const gq_test *test = &cat[t];
        if (!selected(only, test->name))
            continue;
        gq_plan plan;
        memset(&plan, 0, sizeof plan);
        int rc = gq_catalog_plan(test, topo, &po, &plan, &err);
        check(rc == GQ_OK, test->name, "plan: %s", err.msg);
        if (rc != GQ_OK)
            continue;
        if (plan.n == 0) {
            printf("skip %-48s %s\n", test->name, plan.note);
            gq_plan_free(&plan);
            continue;
        }
        int from = rs.n;
        double t0 = gq_now_mono();
        for (int i = 0; i < plan.n; i++) {
            gq_err merr = {0};
            const gq_plan_item *it = &plan.items[i];
            if (it->is_latency) {
                rc = gq_harness_latency(&be, topo, test->name, &it->lat, &ho, &rs, NULL, &merr);
            } else {
                gq_plan_measurement(&plan, i, m);
                rc = gq_harness_measure(&be, topo, m, &ho, &rs, NULL, &merr);
            }
            check(rc == GQ_OK, test->name, "item %d: %s", i, merr.msg);
        }
        gq_plan_free(&plan);
        ran++;
        check(rs.n > from, test->name, "no record");
        for (int i = from; i < rs.n; i++) {
            const gq_record *r = &rs.v[i];
            char s[24], d[24];
            gq_endpoint_str(r->src, s, sizeof s);
            gq_endpoint_str(r->dst, d, sizeof d);
            check(r->value.n == rounds, r->test, "%s -> %s: %d of %d rounds", s, d, r->value.n, rounds);
            check(r->value.n > 0 && r->value.min > 0 && r->value.median > 0, r->test,
                  "%s -> %s: a figure that is not positive (min %g)", s, d, r->value.min);
            unsigned bad = GQ_FLAG_ERROR | GQ_FLAG_VERIFY_FAILED | GQ_FLAG_IMPOSSIBLE | GQ_FLAG_OVERLAP;
            check(r->valid && !(r->flags & bad), r->test, "%s -> %s%s%s: invalid (flags 0x%x): %s", s, d,
                  r->aggregate ? " aggregate" : "", r->sum ? " sum" : "", r->flags, r->error);
        }
        check_sums(&rs, from, rs.n);
        printf("ran  %-48s %3d records  %5.1f s\n", test->name, rs.n - from, gq_now_mono() - t0);
    }
    check(ran > 0, "catalog", "no test ran (--tests %s)", only ? only : "");
    gq_records_free(&rs);
    free(m);
    gq_backend_close(&be);
    free(topo);
    printf("\nwall %.1f s; %d checks, %d failed\n%s\n", gq_now_mono() - t_begin, checks, failures,
           failures ? "RESULT: FAIL" : "RESULT: PASS");
    return failures ? 1 : 0;
}
