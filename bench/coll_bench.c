/* The CUDA backend's collectives alone (coll_run through the ops struct, no
 * harness), swept over sizes as nccl-tests sweep them, so that the backend's
 * timing and sizes can be held to nccl-tests' all_reduce_perf in the same
 * call (bench/coll-vs-nccl-tests.sh, bench/coll-multi-gpu.sh). Needs a GPU
 * and NCCL; built only with CUDA (target gq_coll_bench, not built by default).
 *
 *   gq_coll_bench [--op all_reduce|all_gather|reduce_scatter|all_to_all|broadcast]
 *                 [-b SIZE] [-e SIZE] [-f FACTOR] [-n ITERS] [-w WARMUP] [-r ROUNDS]
 *                 [-g GROUPS]
 *
 * SIZE takes K, M, G (powers of 1024, as nccl-tests' -b / -e). GROUPS: GPU
 * lists run at once, e.g. "0" (default), "0,1", "0,1/2,3" (two groups).
 * Each size: ROUNDS (default 5) calls of coll_run, each WARMUP (default 5)
 * untimed and ITERS (default 20) timed iterations; one line per size and
 * group with nccl-tests' columns (size, count, time per iteration in us,
 * algbw and busbw in GB/s, as nccl-tests define them: busbw = algbw x
 * 2(n-1)/n for all-reduce, x (n-1)/n for all-gather, reduce-scatter and
 * all-to-all, x 1 for broadcast) for the median round, then min and max
 * algbw over the rounds and the data check. Exit 0 when every run worked
 * and verified, 1 otherwise, 2 on bad usage. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "core/units.h"

extern const gq_backend_ops gq_backend_cuda_ops;

static const char *ops[GQ_COLL_NOPS] = {"all_reduce", "all_gather", "reduce_scatter", "all_to_all",
                                        "broadcast"};

static int parse_size(const char *s, uint64_t *out)
{
    char *end = NULL;
    double v = strtod(s, &end);
    if (end == s || v <= 0)
        return -1;
    double u = 1;
    if (*end == 'K' || *end == 'k')
        u = 1024.0, end++;
    else if (*end == 'M' || *end == 'm')
        u = 1024.0 * 1024, end++;
    else if (*end == 'G' || *end == 'g')
        u = 1024.0 * 1024 * 1024, end++;
    if (*end)
        return -1;
    *out = (uint64_t)(v * u);
    return 0;
}

static int parse_groups(const char *s, gq_coll_req *q)
{
    q->ngroups = 0;
    const char *p = s;
    while (*p) {
        if (q->ngroups >= GQ_COLL_MAX_GROUPS)
            return -1;
        gq_coll_group *g = &q->groups[q->ngroups++];
        g->ngpus = 0;
        for (;;) {
            char *end = NULL;
            long d = strtol(p, &end, 10);
            if (end == p || d < 0 || d >= GQ_MAX_GPUS || g->ngpus >= GQ_MAX_GPUS)
                return -1;
            g->gpus[g->ngpus++] = (int)d;
            p = end;
            if (*p == ',') {
                p++;
                continue;
            }
            break;
        }
        if (*p == '/')
            p++;
        else if (*p)
            return -1;
    }
    return q->ngroups > 0 ? 0 : -1;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double bus_factor(gq_coll_op op, int n)
{
    switch (op) {
    case GQ_COLL_ALL_REDUCE: return 2.0 * (n - 1) / n;
    case GQ_COLL_BROADCAST: return 1.0;
    default: return (double)(n - 1) / n;
    }
}

int main(int argc, char **argv)
{
    gq_coll_req q;
    memset(&q, 0, sizeof q);
    q.op = GQ_COLL_ALL_REDUCE;
    q.warmup = 5;
    q.iters = 20;
    q.verify = true;
    uint64_t b = 8 * GQ_MiB, e = 1 * GQ_GiB;
    double f = 2;
    int rounds = 5;
    const char *groups = "0";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int bad = 0;
        if (!v)
            bad = 1;
        else if (!strcmp(a, "--op")) {
            int k = 0;
            while (k < GQ_COLL_NOPS && strcmp(ops[k], v))
                k++;
            bad = k == GQ_COLL_NOPS;
            q.op = (gq_coll_op)k;
        } else if (!strcmp(a, "-b"))
            bad = parse_size(v, &b);
        else if (!strcmp(a, "-e"))
            bad = parse_size(v, &e);
        else if (!strcmp(a, "-f"))
            bad = (f = atof(v)) <= 1;
        else if (!strcmp(a, "-n"))
            bad = (q.iters = atoi(v)) < 1;
        else if (!strcmp(a, "-w"))
            bad = (q.warmup = atoi(v)) < 0;
        else if (!strcmp(a, "-r"))
            bad = (rounds = atoi(v)) < 1 || rounds > 1000;
        else if (!strcmp(a, "-g"))
            groups = v;
        else
            bad = 1;
        if (bad || parse_groups(groups, &q)) {
            fprintf(
                stderr,
                "gq_coll_bench: bad option '%s'%s%s: expected --op NAME, -b/-e SIZE[KMG], -f FACTOR > 1, -n "
                ">= 1, -w >= 0, -r 1..1000, -g GPU,GPU[/GPU,...]\n",
                a, v ? " " : "", v ? v : "");
            return 2;
        }
        i++;
    }
    if (parse_groups(groups, &q))
        return 2;
    gq_backend be;
    gq_err err = {0};
    if (gq_backend_register(&gq_backend_cuda_ops, &err) != GQ_OK ||
        gq_backend_open(&be, "cuda", NULL, &err) != GQ_OK) {
        fprintf(stderr, "gq_coll_bench: %s\n", err.msg);
        return 1;
    }
    gq_coll_info info;
    be.ops->coll_probe(&be, &info);
    if (!info.available) {
        fprintf(stderr, "gq_coll_bench: %s\n", info.why);
        gq_backend_close(&be);
        return gq_status_exit_code(GQ_E_NOLIB);
    }
    q.span = e; /* nccl-tests' -e: each iteration's buffers shift within it (backend.h) */
    printf("# gq_coll_bench: %s, %s, groups %s, warmup %d, iters %d, rounds %d (median round shown), buffers "
           "shifted within %llu B\n",
           ops[q.op], info.library, groups, q.warmup, q.iters, rounds, (unsigned long long)q.span);
    printf("# %10s %12s %5s %9s %9s %9s %9s %9s %s\n", "size(B)", "count", "group", "time(us)", "algbw",
           "busbw", "min", "max", "check");
    int fails = 0;
    double *alg = calloc((size_t)rounds * (size_t)q.ngroups, sizeof *alg);
    gq_coll_result res[GQ_COLL_MAX_GROUPS];
    for (uint64_t s = b; s <= e; s = (uint64_t)(s * f)) {
        int maxn = 1;
        for (int g = 0; g < q.ngroups; g++)
            maxn = q.groups[g].ngpus > maxn ? q.groups[g].ngpus : maxn;
        q.bytes = s / (4ull * (uint64_t)maxn) * 4ull * (uint64_t)maxn; /* a multiple of 4 x ranks */
        if (!q.bytes)
            continue;
        bool ok = true;
        for (int r = 0; r < rounds && ok; r++) {
            int rc = be.ops->coll_run(&be, &q, res, &err);
            if (rc != GQ_OK) {
                fprintf(stderr, "gq_coll_bench: %llu bytes: %s\n", (unsigned long long)q.bytes, err.msg);
                ok = false;
                break;
            }
            for (int g = 0; g < q.ngroups; g++) {
                double t = (res[g].t_end - res[g].t_start) / q.iters;
                alg[g * rounds + r] = t > 0 ? (double)q.bytes / t / 1e9 : 0;
                if (!res[g].verified || !res[g].verify_ok) {
                    fprintf(stderr, "gq_coll_bench: %llu bytes, group %d: data check failed\n",
                            (unsigned long long)q.bytes, g + 1);
                    ok = false;
                }
            }
        }
        if (!ok) {
            fails++;
            continue;
        }
        for (int g = 0; g < q.ngroups; g++) {
            double *a = alg + g * rounds;
            qsort(a, (size_t)rounds, sizeof *a, cmp_d);
            double med = rounds % 2 ? a[rounds / 2] : (a[rounds / 2 - 1] + a[rounds / 2]) / 2;
            int n = q.groups[g].ngpus;
            printf("  %10llu %12llu %5d %9.2f %9.2f %9.2f %9.2f %9.2f %s\n", (unsigned long long)q.bytes,
                   (unsigned long long)(q.bytes / 4), g + 1, med > 0 ? q.bytes / med / 1e3 : 0, med,
                   med * bus_factor(q.op, n), a[0], a[rounds - 1], "ok");
        }
        if ((uint64_t)(s * f) <= s)
            break;
    }
    free(alg);
    gq_backend_close(&be);
    return fails ? 1 : 0;
}
