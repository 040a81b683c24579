/* place --tp N, the measuring part (exec/tp_place.h). */
#include "exec/tp_place.h"

#include <math.h>

#include <stdlib.h>
#include <string.h>

#include "analysis/probes.h"
#include "exec/plan_run.h"
#include "measure/collective.h"

/* One direction of a copy alone, GB/s; < 0 when invalid. */
static int copy_one(gq_backend *be, const gq_topo *topo, int a, int b, const gq_tp_opts *o, gq_journal *j,
                    gq_recordset *rs, double *out, gq_err *err)
{
    gq_probe pr;
    memset(&pr, 0, sizeof pr);
    pr.kind = GQ_PROBE_MATRIX;
    pr.direction = GQ_DIR_P2P;
    pr.npairs = 1;
    pr.src[0] = a;
    pr.dst[0] = b;
    pr.staged[0] = topo->p2p_cuda[a][b] == 0;
    gq_measurement *m = calloc(1, sizeof *m);
    if (!m)
        return gq_err_set(err, GQ_E_NOMEM, "out of memory");
    gq_probe_measurement(&pr, o->bytes, GQ_METHOD_CE, true, m);
    int first = rs->n;
    int rc = gq_exec_one(be, topo, m, o->ho, j, rs, err);
    free(m);
    *out = -1;
    for (int i = first; i < rs->n; i++)
        if (!rs->v[i].aggregate && !rs->v[i].sum && rs->v[i].valid)
            *out = rs->v[i].value.median;
    return rc == GQ_E_BACKEND || rc == GQ_E_FAIL ? GQ_OK : rc;
}

/* The groups' all-reduce at once; busbw of each into out (< 0 invalid). */
static int allreduce(gq_backend *be, const gq_topo *topo, const gq_tp_set *sets, int ng, const gq_tp_opts *o,
                     gq_journal *j, gq_recordset *rs, double *out, gq_err *err)
{
    gq_coll_req q = {
        .op = GQ_COLL_ALL_REDUCE, .ngroups = ng, .warmup = o->warmup, .iters = o->iters, .verify = true};
    int ns[GQ_COLL_MAX_GROUPS];
    for (int k = 0; k < ng; k++) {
        q.groups[k].ngpus = 0;
        for (int i = 0; i < GQ_MAX_GPUS; i++)
            if (sets[k] >> i & 1)
                q.groups[k].gpus[q.groups[k].ngpus++] = i;
        ns[k] = q.groups[k].ngpus;
    }
    q.bytes = gq_coll_size(q.op, o->bytes, ns, ng);
    gq_coll_opts co = {.rounds = o->rounds,
                       .warmup = o->warmup,
                       .iters = o->iters,
                       .verify = true,
                       .id = 1000000 + rs->n, /* unique in the document: rs only grows */
                       .progress = o->progress,
                       .progress_arg = o->progress_arg};
    int first = rs->n;
    int rc = gq_coll_measure(be, topo, &q, &co, rs, err);
    if (rc)
        return rc;
    for (int k = 0; k < ng; k++) {
        const gq_record *r = &rs->v[first + k];
        out[k] = r->valid ? r->value.median : -1;
        if (j && (rc = gq_journal_append(j, r, err)))
            return rc;
    }
    return GQ_OK;
}

static int measure_cands(gq_backend *be, const gq_topo *topo, const gq_tp_opts *o, gq_journal *j,
                         gq_recordset *rs, gq_tp_result *res, gq_err *err)
{
    gq_tp_state *s = &res->st;
    for (int k = 0; k < s->ncand; k++) {
        if (s->cand[k].busbw != -1) /* measured, invalid (-2) or left out (-3) */
            continue;
        if (res->measured >= s->budget && k >= s->n / s->tp) {
            s->cand[k].busbw = -3; /* over the budget: left out */
            continue;
        }
        double b;
        int rc = allreduce(be, topo, &s->cand[k].set, 1, o, j, rs, &b, err);
        if (rc)
            return rc;
        s->cand[k].busbw = b >= 0 ? b : -2;
        res->measured++;
    }
    return GQ_OK;
}

static void pci_parents(const gq_topo *t, int *parent)
{
    for (int g = 0; g < GQ_MAX_GPUS; g++)
        parent[g] = -1;
    for (int i = 0; i < t->npci; i++)
        if (t->pci[i].kind == GQ_PCI_GPU && t->pci[i].gpu >= 0 && t->pci[i].gpu < GQ_MAX_GPUS)
            parent[t->pci[i].gpu] = t->pci[i].parent;
}

int gq_tp_place(gq_backend *be, const gq_topo *topo, const int *gpus, int n, const gq_tp_opts *o,
                gq_journal *j, gq_recordset *rs, gq_tp_result *res, gq_err *err)
{
    memset(res, 0, sizeof *res);
    gq_tp_state *s = &res->st;
    int rc = gq_tp_init(s, gpus, n, o->tp, o->budget, err);
    if (rc)
        return rc;
    gq_coll_info info;
    gq_coll_probe(be, &info);
    if (!info.available)
        return gq_err_set(err, GQ_E_NOLIB, "%s", info.why);
    /* 1. pairwise copies, each way alone (mean of the two) */
    for (int a = 0; a < n; a++)
        for (int b = a + 1; b < n; b++) {
            double x = o->known_copy ? o->known_copy[gpus[a]][gpus[b]] : NAN;
            double y = o->known_copy ? o->known_copy[gpus[b]][gpus[a]] : NAN;
            if (!(x > 0 && y > 0) && ((rc = copy_one(be, topo, gpus[a], gpus[b], o, j, rs, &x, err)) ||
                                      (rc = copy_one(be, topo, gpus[b], gpus[a], o, j, rs, &y, err))))
                return rc;
            double v = x >= 0 && y >= 0 ? (x + y) / 2 : -1;
            s->copy[gpus[a]][gpus[b]] = s->copy[gpus[b]][gpus[a]] = v;
        }
    /* 2. candidates, each measured alone */
    int parent[GQ_MAX_GPUS];
    pci_parents(topo, parent);
    gq_tp_seed(s, (const int(*)[GQ_MAX_GPUS])topo->nvlinks, parent);
    if ((rc = measure_cands(be, topo, o, j, rs, res, err)))
        return rc;
    /* 3. local improvements while the budget lasts */
    gq_tp_part best;
    if (!gq_tp_best(s, &best))
        return gq_err_set(err, GQ_E_FAIL,
                          "--tp %d: no partition of valid groups (every candidate's all-reduce failed)",
                          o->tp);
    for (int pass = 0; pass < 8 && res->measured < s->budget; pass++) {
        if (gq_tp_swaps(s, &best, s->budget - res->measured) == 0)
            break;
        if ((rc = measure_cands(be, topo, o, j, rs, res, err)))
            return rc;
        gq_tp_part next;
        gq_tp_best(s, &next);
        bool same =
            next.ngroups == best.ngroups && !memcmp(next.idx, best.idx, sizeof(int) * (size_t)best.ngroups);
        best = next;
        if (same)
            break;
    }
    gq_tp_naive(s, &res->naive);
    /* a lead alone within the noise is no lead: the naive groups stand */
    if (!(best.min_busbw > res->naive.min_busbw * (1 + GQ_TP_KEEP_NAIVE)))
        best = res->naive;
    res->chosen = best;
    /* 4. verify: the chosen groups at once, then the naive ones at once */
    gq_tp_set sets[GQ_MAX_GPUS];
    int ng = best.ngroups;
    for (int g = 0; g < ng; g++)
        sets[g] = s->cand[best.idx[g]].set;
    if ((rc = allreduce(be, topo, sets, ng, o, j, rs, res->chosen_once, err)))
        return rc;
    for (int g = 0; g < res->naive.ngroups; g++)
        sets[g] = s->cand[res->naive.idx[g]].set;
    if ((rc = allreduce(be, topo, sets, res->naive.ngroups, o, j, rs, res->naive_once, err)))
        return rc;
    res->chosen_min_once = res->naive_min_once = -1;
    for (int g = 0; g < ng; g++)
        if (res->chosen_min_once < -0.5 || res->chosen_once[g] < res->chosen_min_once)
            res->chosen_min_once = res->chosen_once[g];
    for (int g = 0; g < res->naive.ngroups; g++)
        if (res->naive_min_once < -0.5 || res->naive_once[g] < res->naive_min_once)
            res->naive_min_once = res->naive_once[g];
    res->verified = true;
    bool same =
        best.ngroups == res->naive.ngroups && !memcmp(best.idx, res->naive.idx, sizeof(int) * (size_t)ng);
    if (!same && !(res->chosen_min_once > res->naive_min_once * (1 + GQ_TP_KEEP_NAIVE))) {
        /* the lead alone did not hold at once: keep the naive groups */
        res->kept_naive = true;
        res->tried = res->chosen;
        res->tried_min_once = res->chosen_min_once;
        res->chosen = res->naive;
        memcpy(res->chosen_once, res->naive_once, sizeof res->chosen_once);
        res->chosen_min_once = res->naive_min_once;
    }
    return GQ_OK;
}
