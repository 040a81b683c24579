/* GPU test of the CUDA backend's collectives (backend/cuda/cuda_coll.c,
 * NCCL loaded with dlopen by nccl_dl.c), through the ops struct. Needs a GPU
 * and NCCL (libnccl.so.2 on the loader's path, or GQ_NCCL_LIB naming it);
 * never run in CI; tests/gpu/run.sh builds and runs it.
 *
 *   test_coll            (arguments run.sh passes to every program are ignored)
 *
 * Checks, on GPU 0 alone (one rank: NCCL copies and runs no ring, so this
 * checks the loading, the buffer sizes per op, the timing window and the
 * data check, not the algorithm) and, with 2 GPUs or more, on {0,1} and on
 * {0},{1} at once (and {0,1},{2,3} with 4):
 *  - first, with GQ_NCCL_LIB naming a missing file: coll_probe says so in
 *    one line (available = false), and coll_run returns GQ_E_NOLIB with the
 *    same line;
 *  - every op at two sizes: status OK, the data check ran and passed, every
 *    iteration done, a window that closed after it opened; algbw is printed
 *    (never asserted: figures differ between hosts);
 *  - a planted corruption (the test-only hook gq_cuda_test_corrupt_dst,
 *    which flips a byte of rank 0's output after the timed part) fails the
 *    data check, and the same run untouched passes it;
 *  - a request the backend must refuse (a GPU that does not exist, a size
 *    that is not a multiple of 4 x ranks, a GPU in two groups): GQ_E_USAGE.
 * Exit status: 0 when every check passed, 1 otherwise.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "backend/cuda/cuda_internal.h"
#include "core/units.h"

extern const gq_backend_ops gq_backend_cuda_ops;

static int failures, checks;

static void check(bool ok, const char *what, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void check(bool ok, const char *what, const char *fmt, ...)
{
    checks++;
    if (ok)
        return;
    failures++;
    va_list ap;
    va_start(ap, fmt);
    printf("FAIL %s: ", what);
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
}

static const char *op_name[GQ_COLL_NOPS] = {"all_reduce", "all_gather", "reduce_scatter", "all_to_all",
                                            "broadcast"};

static gq_coll_req req_of(gq_coll_op op, uint64_t bytes, int ngroups, const int *sizes, const int *gpus)
{
    gq_coll_req q;
    memset(&q, 0, sizeof q);
    q.op = op;
    q.bytes = bytes;
    q.ngroups = ngroups;
    q.warmup = 2;
    q.iters = 5;
    q.verify = true;
    for (int g = 0, k = 0; g < ngroups; g++) {
        q.groups[g].ngpus = sizes[g];
        for (int r = 0; r < sizes[g]; r++)
            q.groups[g].gpus[r] = gpus[k++];
    }
    return q;
}

static void describe(const gq_coll_req *q, char *buf, size_t n)
{
    int o = snprintf(buf, n, "%s %llu MiB on", op_name[q->op], (unsigned long long)(q->bytes / GQ_MiB));
    for (int g = 0; g < q->ngroups && o > 0 && (size_t)o < n; g++)
        for (int r = 0; r < q->groups[g].ngpus && (size_t)o < n; r++)
            o += snprintf(buf + o, n - (size_t)o, "%s%d%s", r ? " " : " {", q->groups[g].gpus[r],
                          r + 1 == q->groups[g].ngpus ? "}" : "");
    if (q->span > q->bytes && o > 0 && (size_t)o < n)
        snprintf(buf + o, n - (size_t)o, ", %llu slices", (unsigned long long)gq_coll_slices(q));
}

/* One run that must work and verify; prints each group's algbw. */
static void good_run(gq_backend *be, const gq_coll_req *q)
{
    char name[160];
    describe(q, name, sizeof name);
    gq_coll_result res[GQ_COLL_MAX_GROUPS];
    gq_err err = {0};
    int rc = be->ops->coll_run(be, q, res, &err);
    check(rc == GQ_OK, name, "coll_run: %s", err.msg);
    if (rc != GQ_OK)
        return;
    printf("%-40s", name);
    for (int g = 0; g < q->ngroups; g++) {
        const gq_coll_result *r = &res[g];
        check(r->status == GQ_OK, name, "group %d: %s", g + 1, r->error);
        check(r->verified && r->verify_ok, name, "group %d: data check %s", g + 1,
              !r->verified ? "did not run" : "failed");
        check(r->iters_done == q->iters, name, "group %d: %d of %d iterations", g + 1, r->iters_done,
              q->iters);
        check(r->t_end > r->t_start && r->t_start > 0, name, "group %d: window %.9f .. %.9f", g + 1,
              r->t_start, r->t_end);
        if (g)
            check(r->t_start == res[0].t_start, name, "groups start at different times");
        double t = (r->t_end - r->t_start) / q->iters;
        printf("  group %d: %8.2f GB/s algbw (%.1f us per iteration)", g + 1, t > 0 ? q->bytes / t / 1e9 : 0,
               t * 1e6);
    }
    printf("\n");
}

static void refusal(gq_backend *be)
{
    const char *saved = getenv("GQ_NCCL_LIB");
    char keep[512] = "";
    if (saved)
        snprintf(keep, sizeof keep, "%s", saved);
    setenv("GQ_NCCL_LIB", "/nonexistent/libnccl-absent.so.2", 1);
    gq_coll_info info;
    check(be->ops->coll_probe(be, &info) == GQ_OK, "no NCCL", "coll_probe failed");
    check(!info.available && !strncmp(info.why, "NCCL not found: /nonexistent/libnccl-absent.so.2: ", 50) &&
              strstr(info.why, "install NCCL (libnccl2) or set GQ_NCCL_LIB"),
          "no NCCL", "probe: available %d, why '%s'", info.available, info.why);
    int one = 0, sz = 1;
    gq_coll_req q = req_of(GQ_COLL_ALL_REDUCE, 8 * GQ_MiB, 1, &sz, &one);
    gq_coll_result res[1];
    gq_err err = {0};
    int rc = be->ops->coll_run(be, &q, res, &err);
    check(rc == GQ_E_NOLIB && !strcmp(err.msg, info.why), "no NCCL",
          "coll_run: %d '%s' (the probe said '%s')", rc, err.msg, info.why);
    printf("without NCCL: %s\n", err.msg);
    if (saved)
        setenv("GQ_NCCL_LIB", keep, 1);
    else
        unsetenv("GQ_NCCL_LIB");
}

/* The data check must fail on a planted corruption, and pass untouched. */
static void corrupt_case(gq_backend *be, const gq_coll_req *q, uint64_t off)
{
    char name[160];
    describe(q, name, sizeof name);
    gq_coll_result res[GQ_COLL_MAX_GROUPS];
    gq_err err = {0};
    check(gq_cuda_test_corrupt_dst(be, off, 1, &err) == GQ_OK, name, "arming the hook: %s", err.msg);
    int rc = be->ops->coll_run(be, q, res, &err);
    check(rc == GQ_OK && res[0].status == GQ_OK, name, "corrupted run: %s",
          rc != GQ_OK ? err.msg : res[0].error);
    bool caught = rc == GQ_OK && res[0].verified && !res[0].verify_ok;
    check(gq_cuda_test_corrupt_pending(be) == 0, name, "the hook was not used: no data check ran");
    check(caught, name, "a corrupted output passed the data check (verified %d)", res[0].verified);
    gq_cuda_test_corrupt_dst(be, 0, 0, &err); /* disarm, whatever happened */
    rc = be->ops->coll_run(be, q, res, &err);
    bool clean = rc == GQ_OK && res[0].verified && res[0].verify_ok;
    check(clean, name, "untouched run failed the data check: %s", rc != GQ_OK ? err.msg : res[0].error);
    printf("corrupt %-40s byte %llu flipped: data check %s; untouched: %s\n", name, (unsigned long long)off,
           caught ? "FAILED as it must" : "passed (WRONG)", clean ? "passed" : "FAILED (WRONG)");
}

static void bad_request(gq_backend *be, const char *what, const gq_coll_req *q)
{
    gq_coll_result res[GQ_COLL_MAX_GROUPS];
    gq_err err = {0};
    int rc = be->ops->coll_run(be, q, res, &err);
    check(rc == GQ_E_USAGE && err.msg[0], what, "expected GQ_E_USAGE, got %d '%s'", rc, err.msg);
    if (rc == GQ_E_USAGE)
        printf("refused %s: %s\n", what, err.msg);
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    double t_begin = gq_now_mono();
    gq_backend be;
    gq_err err = {0};
    if (gq_backend_register(&gq_backend_cuda_ops, &err) != GQ_OK) {
        printf("FAIL register: %s\n", err.msg);
        return 1;
    }
    if (gq_backend_open(&be, "cuda", NULL, &err) != GQ_OK) {
        printf("FAIL open: %s\n", err.msg);
        return 1;
    }
    int ngpu = 0;
    uint64_t fr, tot;
    while (ngpu < GQ_MAX_GPUS && be.ops->mem_info(&be, ngpu, &fr, &tot, &err) == GQ_OK)
        ngpu++;
    printf("GPUs: %d\n", ngpu);
    check(be.ops->coll_probe && be.ops->coll_run, "ops", "coll_probe / coll_run not set");
    if (!be.ops->coll_probe || !be.ops->coll_run || ngpu < 1)
        goto done;

    refusal(&be); /* before anything loads NCCL: a loaded library is kept */

    gq_coll_info info;
    be.ops->coll_probe(&be, &info);
    check(info.available, "NCCL", "not available: %s", info.why);
    if (!info.available)
        goto done;
    printf("library: %s\n", info.library);

    const uint64_t sizes[] = {8 * GQ_MiB, 256 * GQ_MiB};
    int one = 0, sz1 = 1;
    for (int op = 0; op < GQ_COLL_NOPS; op++)
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
            gq_coll_req q = req_of((gq_coll_op)op, sizes[s], 1, &sz1, &one);
            good_run(&be, &q);
        }
    if (ngpu >= 2) {
        int pair[2] = {0, 1}, sz2 = 2, sz11[2] = {1, 1};
        for (int op = 0; op < GQ_COLL_NOPS; op++)
            for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
                gq_coll_req q = req_of((gq_coll_op)op, sizes[s], 1, &sz2, pair);
                good_run(&be, &q);
            }
        gq_coll_req q = req_of(GQ_COLL_ALL_REDUCE, 64 * GQ_MiB, 2, sz11, pair);
        good_run(&be, &q);
        q = req_of(GQ_COLL_ALL_GATHER, 64 * GQ_MiB, 1, &sz2, pair);
        corrupt_case(&be, &q, 3 * GQ_MiB + 1);
    }
    if (ngpu >= 4) {
        int quad[4] = {0, 1, 2, 3}, sz22[2] = {2, 2};
        gq_coll_req q = req_of(GQ_COLL_ALL_REDUCE, 64 * GQ_MiB, 2, sz22, quad);
        good_run(&be, &q);
    }
    /* nccl-tests' shifted buffers (span 64 MiB: 8 MiB iterations on 5 slices, 32 MiB on 2):
     * every op's output checked in every slice the timed part wrote */
    for (int op = 0; op < GQ_COLL_NOPS; op++) {
        gq_coll_req q = req_of((gq_coll_op)op, 8 * GQ_MiB, 1, &sz1, &one);
        q.span = 64 * GQ_MiB;
        good_run(&be, &q);
        q.bytes = 32 * GQ_MiB;
        good_run(&be, &q);
    }
    {
        gq_coll_req q = req_of(GQ_COLL_ALL_REDUCE, 8 * GQ_MiB, 1, &sz1, &one);
        q.span = 64 * GQ_MiB; /* the flip lands in the last timed iteration's slice (the 5th) */
        corrupt_case(&be, &q, 4321);
        q.span = 0;
        corrupt_case(&be, &q, 12345);
        q = req_of(GQ_COLL_REDUCE_SCATTER, 8 * GQ_MiB, 1, &sz1, &one);
        corrupt_case(&be, &q, 64 * GQ_MiB); /* past the end: the last byte */
        int bad = ngpu;
        q = req_of(GQ_COLL_ALL_REDUCE, 8 * GQ_MiB, 1, &sz1, &bad);
        bad_request(&be, "a GPU that does not exist", &q);
        q = req_of(GQ_COLL_ALL_REDUCE, 6, 1, &sz1, &one);
        bad_request(&be, "6 bytes", &q);
        int twice[2] = {0, 0}, sz11[2] = {1, 1};
        q = req_of(GQ_COLL_ALL_REDUCE, 8 * GQ_MiB, 2, sz11, twice);
        bad_request(&be, "GPU 0 in two groups", &q);
        q = req_of(GQ_COLL_ALL_REDUCE, 8 * GQ_MiB, 1, &sz1, &one);
        q.iters = 0;
        bad_request(&be, "0 iterations", &q);
    }
done:
    gq_backend_close(&be);
    printf("wall %.1f s\n", gq_now_mono() - t_begin);
    if (failures)
        printf("RESULT: FAIL (%d of %d checks)\n", failures, checks);
    else
        printf("RESULT: PASS (%d checks)\n", checks);
    return failures ? 1 : 0;
}
