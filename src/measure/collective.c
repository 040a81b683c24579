/* The collectives harness (measure/collective.h): nccl-tests' sizes and
 * bandwidth formulas, rounds, medians, the overlap rule between groups run
 * at once, the data check and the sanity guard. */
#include "measure/collective.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/interrupt.h"
#include "core/units.h"
#include "measure/cleanroom.h"
#include "measure/harness.h"
#include "measure/sanity.h"

static const char *const op_names[GQ_COLL_NOPS] = {"all_reduce", "all_gather", "reduce_scatter", "all_to_all",
                                                   "broadcast"};
static const char *const test_names[GQ_COLL_NOPS] = {
    "coll_all_reduce", "coll_all_gather", "coll_reduce_scatter", "coll_all_to_all", "coll_broadcast"};

const char *gq_coll_op_name(gq_coll_op op)
{
    return (unsigned)op < GQ_COLL_NOPS ? op_names[op] : "?";
}

const char *gq_coll_test_name(gq_coll_op op)
{
    return (unsigned)op < GQ_COLL_NOPS ? test_names[op] : "coll_?";
}

int gq_coll_op_of_test(const char *test)
{
    for (int i = 0; test && i < GQ_COLL_NOPS; i++)
        if (!strcmp(test, test_names[i]))
            return i;
    return -1;
}

int gq_coll_op_parse(const char *s, gq_coll_op *op, gq_err *err)
{
    for (int i = 0; s && i < GQ_COLL_NOPS; i++)
        if (!strcmp(s, op_names[i])) {
            *op = (gq_coll_op)i;
            return GQ_OK;
        }
    if (s && !strcmp(s, "alltoall")) {
        *op = GQ_COLL_ALL_TO_ALL;
        return GQ_OK;
    }
    return gq_err_set(err, GQ_E_USAGE,
                      "--op: unknown collective '%s', expected all_reduce, all_gather, reduce_scatter, "
                      "all_to_all or broadcast",
                      s ? s : "");
}

const char *gq_coll_redop(gq_coll_op op)
{
    return op == GQ_COLL_ALL_REDUCE || op == GQ_COLL_REDUCE_SCATTER ? "sum" : "none";
}

int gq_coll_root(gq_coll_op op)
{
    return op == GQ_COLL_BROADCAST ? 0 : -1;
}

double gq_coll_busbw_factor(gq_coll_op op, int n)
{
    if (n < 1)
        return 0;
    switch (op) {
    case GQ_COLL_ALL_REDUCE: return 2.0 * (n - 1) / n;
    case GQ_COLL_ALL_GATHER:
    case GQ_COLL_REDUCE_SCATTER:
    case GQ_COLL_ALL_TO_ALL: return (double)(n - 1) / n;
    case GQ_COLL_BROADCAST: return 1.0;
    default: return 0;
    }
}

double gq_coll_algbw(uint64_t size, double sec)
{
    return sec > 0 ? (double)size / 1e9 / sec : 0;
}

double gq_coll_busbw(gq_coll_op op, int n, uint64_t size, double sec)
{
    return gq_coll_algbw(size, sec) * gq_coll_busbw_factor(op, n);
}

static bool per_rank_share(gq_coll_op op)
{
    return op == GQ_COLL_ALL_GATHER || op == GQ_COLL_REDUCE_SCATTER || op == GQ_COLL_ALL_TO_ALL;
}

static uint64_t gcd64(uint64_t a, uint64_t b)
{
    while (b) {
        uint64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

uint64_t gq_coll_size(gq_coll_op op, uint64_t bytes, const int *ns, int ngroups)
{
    if (!per_rank_share(op))
        return bytes / 4 * 4;
    /* nccl-tests: base = (count / n) & ~3 elements per rank, size = base x n x 4;
     * with several groups, one size that every group divides the same way */
    uint64_t l = 1;
    for (int i = 0; i < ngroups; i++) {
        uint64_t n = ns[i] > 0 ? (uint64_t)ns[i] : 1;
        l = l / gcd64(l, n) * n;
    }
    if (ngroups == 1) {
        uint64_t base = (bytes / 4 / l) & ~(uint64_t)3;
        return base * l * 4;
    }
    uint64_t q = 16 * l;
    return bytes / q * q;
}

uint64_t gq_coll_count(gq_coll_op op, uint64_t size, int n)
{
    if (!per_rank_share(op) || n < 1)
        return size / 4;
    return size / 4 / (uint64_t)n;
}

double gq_coll_group_limit(const gq_topo *t, const gq_coll_group *g, char *why, size_t n)
{
    if (why && n)
        why[0] = 0;
    if (!t || g->ngpus < 2)
        return 0;
    double lim = 0;
    for (int r = 0; r < g->ngpus; r++) {
        int k = g->gpus[r];
        if (k < 0 || k >= t->ngpu)
            return 0;
        const gq_gpu_info *gi = &t->gpu[k];
        double pcie = gi->pcie_gbps > 0 ? gi->pcie_gbps : gq_pcie_gbps(gi->pcie_gen_cur, gi->pcie_width_cur);
        double nvl = gi->nvlinks_total > 0 && gi->nvlink_gbps_per_link > 0
                         ? gi->nvlinks_total * gi->nvlink_gbps_per_link
                         : 0;
        double e = nvl > pcie ? nvl : pcie;
        if (!(e > 0))
            return 0;
        if (lim == 0 || e < lim) {
            lim = e;
            if (why && n) {
                if (nvl > pcie)
                    snprintf(why, n, "GPU %d's %d NVLinks (%.1f GB/s out)", k, gi->nvlinks_total, e);
                else
                    snprintf(why, n, "GPU %d's PCIe link (%.1f GB/s out)", k, e);
            }
        }
    }
    return lim;
}

int gq_coll_check_groups(const gq_coll_group *g, int ngroups, int ngpu, gq_err *err)
{
    if (ngroups < 1)
        return gq_err_set(err, GQ_E_USAGE, "--group: no group given, expected e.g. --group 0,1,2,3");
    if (ngroups > GQ_COLL_MAX_GROUPS)
        return gq_err_set(err, GQ_E_USAGE, "--group: %d groups, at most %d run at once", ngroups,
                          GQ_COLL_MAX_GROUPS);
    int owner[GQ_MAX_GPUS];
    for (int i = 0; i < GQ_MAX_GPUS; i++)
        owner[i] = -1;
    for (int k = 0; k < ngroups; k++) {
        if (g[k].ngpus < 1)
            return gq_err_set(err, GQ_E_USAGE, "--group %d is empty, expected GPU indices like 0,1", k + 1);
        for (int r = 0; r < g[k].ngpus; r++) {
            int x = g[k].gpus[r];
            if (x < 0 || x >= ngpu || x >= GQ_MAX_GPUS)
                return gq_err_set(err, GQ_E_USAGE,
                                  "--group %d: GPU %d does not exist (this machine has GPUs 0-%d)", k + 1, x,
                                  ngpu - 1);
            if (owner[x] == k)
                return gq_err_set(err, GQ_E_USAGE, "--group %d names GPU %d twice; a GPU is one rank", k + 1,
                                  x);
            if (owner[x] >= 0)
                return gq_err_set(err, GQ_E_USAGE,
                                  "--group: GPU %d is in group %d and group %d; groups run at once must not "
                                  "overlap",
                                  x, owner[x] + 1, k + 1);
            owner[x] = k;
        }
    }
    return GQ_OK;
}

/* One group "0,1,2-3" at s[0..len). */
static int parse_one(const char *s, size_t len, const char *what, gq_coll_group *g, gq_err *err)
{
    char buf[256];
    if (len >= sizeof buf)
        return gq_err_set(err, GQ_E_USAGE, "%s: group '%.40s...' is too long", what, s);
    memcpy(buf, s, len);
    buf[len] = 0;
    g->ngpus = 0;
    char *p = buf;
    while (*p) {
        char *end;
        if (!isdigit((unsigned char)*p))
            goto bad;
        long a = strtol(p, &end, 10), b = a;
        p = end;
        if (*p == '-') {
            p++;
            if (!isdigit((unsigned char)*p))
                goto bad;
            b = strtol(p, &end, 10);
            p = end;
        }
        if (a > b || b >= GQ_MAX_GPUS)
            goto bad;
        for (long x = a; x <= b; x++) {
            if (g->ngpus >= GQ_MAX_GPUS)
                goto bad;
            g->gpus[g->ngpus++] = (int)x;
        }
        if (*p == ',')
            p++;
        else if (*p)
            goto bad;
        else
            break;
        if (!*p)
            goto bad;
    }
    return GQ_OK;
bad:
    return gq_err_set(
        err, GQ_E_USAGE,
        "%s: '%s' is not a group, expected GPU indices below %d separated by commas, e.g. 0,1,2,3 "
        "(several groups: \"0,1 2,3\")",
        what, buf, GQ_MAX_GPUS);
}

int gq_coll_parse_groups(const char *spec, const char *what, gq_coll_group *g, int *ngroups, gq_err *err)
{
    const char *p = spec;
    int before = *ngroups;
    while (p && *p) {
        while (*p == ' ' || *p == ';')
            p++;
        if (!*p)
            break;
        size_t len = strcspn(p, " ;");
        if (*ngroups >= GQ_COLL_MAX_GROUPS)
            return gq_err_set(err, GQ_E_USAGE, "%s: more than %d groups", what, GQ_COLL_MAX_GROUPS);
        int rc = parse_one(p, len, what, &g[*ngroups], err);
        if (rc)
            return rc;
        (*ngroups)++;
        p += len;
    }
    if (*ngroups == before)
        return gq_err_set(err, GQ_E_USAGE, "%s: empty, expected GPU indices like 0,1,2,3", what);
    return GQ_OK;
}

void gq_coll_probe(gq_backend *be, gq_coll_info *info)
{
    memset(info, 0, sizeof *info);
    if (!be->ops->coll_probe || !be->ops->coll_run) {
        snprintf(info->why, sizeof info->why, "the %s backend has no collectives", be->ops->name);
        return;
    }
    if (be->ops->coll_probe(be, info) != GQ_OK && !info->why[0])
        snprintf(info->why, sizeof info->why, "the %s backend cannot run collectives", be->ops->name);
    if (!info->available && !info->why[0])
        snprintf(info->why, sizeof info->why, "collectives are not available");
}

double gq_coll_record_algbw(const gq_record *r)
{
    return r->window_s > 0 ? gq_coll_algbw(r->bytes, r->window_s) : 0;
}

double gq_coll_record_time_us(const gq_record *r)
{
    return r->window_s * 1e6;
}

double gq_coll_overlap(const double *start, const double *end, int n)
{
    if (n <= 1)
        return 1.0;
    double max_start = start[0];
    for (int i = 1; i < n; i++)
        if (start[i] > max_start)
            max_start = start[i];
    double ov = 1.0;
    for (int i = 0; i < n; i++) {
        double own = end[i] - start[i];
        if (own <= 0)
            return 0.0;
        double loaded = end[i] - (start[i] > max_start ? start[i] : max_start);
        double r = loaded > 0 ? loaded / own : 0;
        if (r < ov)
            ov = r;
    }
    return ov;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One group's record, empty of figures. */
static void record_init(gq_record *r, const gq_backend *be, const gq_topo *topo, const gq_coll_req *req,
                        const gq_coll_opts *o, int k)
{
    const gq_coll_group *g = &req->groups[k];
    memset(r, 0, sizeof *r);
    snprintf(r->test, sizeof r->test, "%s", gq_coll_test_name(req->op));
    r->method = GQ_METHOD_SM; /* NCCL moves data with its kernels */
    r->src = (gq_endpoint){.kind = GQ_EP_GPU, .index = g->gpus[0]};
    r->dst = (gq_endpoint){.kind = GQ_EP_GPU, .index = g->gpus[g->ngpus - 1]};
    r->direction = g->ngpus > 1 ? GQ_DIR_P2P : GQ_DIR_LOCAL;
    r->dirs = 1u << r->direction;
    r->bytes = req->bytes;
    r->aggregate = true;
    r->ngpus = g->ngpus;
    memcpy(r->gpus, g->gpus, sizeof(int) * (size_t)g->ngpus);
    r->overlap = req->ngroups > 1 ? 1.0 : -1;
    r->group = o->id;
    r->flow_tag = k;
    r->exec_gpu = -1;
    r->host_numa_req = -1;
    r->host_numa_actual = -1;
    r->timestamp = gq_now_unix();
    r->simulated = gq_backend_simulated(be);
    r->valid = true;
    char why[160];
    r->capacity_gbps = gq_coll_group_limit(topo, g, why, sizeof why);
}

static void invalidate(gq_record *r, unsigned flag, const char *msg)
{
    if (r->valid || !r->error[0])
        snprintf(r->error, sizeof r->error, "%s", msg);
    r->valid = false;
    r->flags |= flag;
}

int gq_coll_measure(gq_backend *be, const gq_topo *topo, const gq_coll_req *req, const gq_coll_opts *o,
                    gq_recordset *rs, gq_err *err)
{
    if (!be->ops->coll_run)
        return gq_err_set(err, GQ_E_UNSUPP, "the %s backend has no collectives", be->ops->name);
    int ng = req->ngroups, rounds = o->rounds;
    if (ng < 1 || ng > GQ_COLL_MAX_GROUPS || rounds < 1 || rounds > GQ_MAX_ROUNDS || req->iters < 1 ||
        req->bytes == 0)
        return gq_err_set(err, GQ_E_USAGE,
                          "collectives: bad request (groups %d, rounds %d, iters %d, %llu B)", ng, rounds,
                          req->iters, (unsigned long long)req->bytes);
    gq_record *rec = calloc((size_t)ng, sizeof *rec);
    gq_coll_result *res = calloc((size_t)ng, sizeof *res);
    double *ts = calloc((size_t)ng, sizeof *ts), *te = calloc((size_t)ng, sizeof *te);
    double *sec = calloc((size_t)ng * GQ_MAX_ROUNDS, sizeof *sec);
    int *nsec = calloc((size_t)ng, sizeof *nsec);
    int rc = GQ_OK;
    if (!rec || !res || !ts || !te || !sec || !nsec) {
        rc = gq_err_set(err, GQ_E_NOMEM, "out of memory");
        goto out;
    }
    gq_coll_req q = *req;
    q.verify = false;
    for (int k = 0; k < ng; k++)
        record_init(&rec[k], be, topo, req, o, k);
    /* the clean room (measure/cleanroom.h): other work on the groups' GPUs
     * before or after the rounds marks every record contaminated */
    gq_cleanroom *clean = gq_cleanroom_installed();
    gq_contam cs = {0};
    int cg[GQ_MAX_GPUS], ncg = 0;
    for (int k = 0; k < ng; k++)
        for (int r = 0; r < req->groups[k].ngpus && ncg < GQ_MAX_GPUS; r++)
            cg[ncg++] = req->groups[k].gpus[r];
    if (clean)
        gq_cleanroom_check(clean, cg, ncg, &cs);
    char msg[200];
    int done = 0, missed = 0;
    for (int round = 0; round < rounds; round++) {
        if (gq_interrupt_requested()) {
            rc = gq_err_set(err, GQ_E_INTR, "interrupted");
            goto out;
        }
        /* the data is checked after the timed part of the last round */
        q.verify = req->verify && round == rounds - 1;
        memset(res, 0, sizeof *res * (size_t)ng);
        gq_err e = {0};
        int brc = be->ops->coll_run(be, &q, res, &e);
        if (brc) {
            if (brc == GQ_E_INTR || brc == GQ_E_NOMEM || brc == GQ_E_UNSUPP) {
                rc = gq_err_set(err, brc, "%s", e.msg);
                goto out;
            }
            for (int k = 0; k < ng; k++)
                invalidate(&rec[k], GQ_FLAG_ERROR, e.msg[0] ? e.msg : "the collective failed");
            break;
        }
        bool all_ok = true;
        for (int k = 0; k < ng; k++) {
            if (res[k].status != GQ_OK || res[k].iters_done < 1 || !(res[k].t_end > res[k].t_start)) {
                snprintf(msg, sizeof msg, "%s", res[k].error[0] ? res[k].error : "the collective failed");
                invalidate(&rec[k], GQ_FLAG_ERROR, msg);
                all_ok = false;
                continue;
            }
            if (res[k].verified && !res[k].verify_ok) {
                rec[k].flags |= GQ_FLAG_VERIFY_FAILED;
                invalidate(&rec[k], GQ_FLAG_VERIFY_FAILED, "data check failed after the timed part");
            }
            ts[k] = res[k].t_start;
            te[k] = res[k].t_end;
        }
        if (!all_ok)
            break;
        double ov = gq_coll_overlap(ts, te, ng);
        for (int k = 0; k < ng && ng > 1; k++)
            if (ov < rec[k].overlap)
                rec[k].overlap = ov;
        if (ng > 1 && ov < GQ_OVERLAP_MIN) {
            missed++; /* not counted: the groups did not run at once */
        } else {
            for (int k = 0; k < ng; k++)
                sec[k * GQ_MAX_ROUNDS + nsec[k]++] = (te[k] - ts[k]) / res[k].iters_done;
            done++;
        }
        if (o->progress)
            o->progress(o->progress_arg, gq_coll_test_name(req->op), round + 1, rounds);
    }
    for (int k = 0; k < ng; k++) {
        gq_record *r = &rec[k];
        if (missed > 0)
            r->flags |= GQ_FLAG_OVERLAP_RETRIED;
        if (nsec[k] == 0) {
            if (r->valid) {
                snprintf(msg, sizeof msg,
                         "a group ran %.1f %% of its window under the others' load at best, below %.0f %%",
                         100 * r->overlap, 100 * GQ_OVERLAP_MIN);
                invalidate(r, GQ_FLAG_OVERLAP, msg);
            }
            continue;
        }
        double *s = &sec[k * GQ_MAX_ROUNDS];
        /* busbw per round; the figure is the busbw of the median time */
        double bw[GQ_MAX_ROUNDS];
        for (int i = 0; i < nsec[k]; i++)
            bw[i] = gq_coll_busbw(req->op, r->ngpus, r->bytes, s[i]);
        qsort(s, (size_t)nsec[k], sizeof *s, cmp_double);
        double med = nsec[k] % 2 ? s[nsec[k] / 2] : 0.5 * (s[nsec[k] / 2 - 1] + s[nsec[k] / 2]);
        r->value = gq_stat_compute(bw, nsec[k]);
        r->value.median = gq_coll_busbw(req->op, r->ngpus, r->bytes, med);
        memcpy(r->samples, bw, sizeof(double) * (size_t)nsec[k]);
        r->rounds = nsec[k];
        r->window_s = med;
        if (done < rounds && r->valid && nsec[k] < rounds && missed == 0)
            r->flags |= GQ_FLAG_INCOMPLETE;
        char why[160];
        gq_coll_group_limit(topo, &req->groups[k], why, sizeof why);
        gq_sanity_apply(r, r->capacity_gbps, why);
    }
    if (clean) {
        gq_cleanroom_check(clean, cg, ncg, &cs);
        if (cs.n)
            clean->contaminated++;
    }
    for (int k = 0; k < ng; k++) {
        gq_cleanroom_mark(&rec[k], &cs);
        if ((rc = gq_records_push(rs, &rec[k])))
            goto out;
    }
out:
    free(rec);
    free(res);
    free(ts);
    free(te);
    free(sec);
    free(nsec);
    return rc;
}
