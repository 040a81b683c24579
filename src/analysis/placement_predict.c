/* Placement prediction: the rate of every flow of a concurrent pattern by
 * max-min fair sharing (progressive filling) over the model's limits, and
 * the flows that pairs and offload workers imply. */
#include <math.h>
#include <string.h>

#include "analysis/placement_internal.h"

/* ---- prediction: max-min fair sharing (progressive filling) ------------- */

/* How many units of a limit one flow uses (a staged flow through a duplex
 * budget that holds both of its ends uses it twice). */
int gq_place_limit_use(const gq_place_limit *l, const gq_pflow *f)
{
    switch (l->kind) {
    case GQ_LIMIT_H2D:
        return (f->kind == GQ_PF_H2D || f->kind == GQ_PF_STAGED) && f->dst >= 0 && IN(l->a, f->dst);
    case GQ_LIMIT_D2H:
        return (f->kind == GQ_PF_D2H || f->kind == GQ_PF_STAGED) && f->src >= 0 && IN(l->a, f->src);
    case GQ_LIMIT_DUPLEX: {
        int u = 0;
        if ((f->kind == GQ_PF_H2D || f->kind == GQ_PF_STAGED) && f->dst >= 0 && IN(l->a, f->dst))
            u++;
        if ((f->kind == GQ_PF_D2H || f->kind == GQ_PF_STAGED) && f->src >= 0 && IN(l->a, f->src))
            u++;
        return u;
    }
    case GQ_LIMIT_P2P:
        return f->kind == GQ_PF_P2P && f->src >= 0 && f->dst >= 0 && IN(l->a, f->src) && IN(l->b, f->dst);
    case GQ_LIMIT_STAGED:
        return f->kind == GQ_PF_STAGED && f->src >= 0 && f->dst >= 0 && IN(l->a, f->src) && IN(l->b, f->dst);
    }
    return 0;
}

static double flow_alone(const gq_place_model *m, const gq_pflow *f)
{
    switch (f->kind) {
    case GQ_PF_P2P: return m->p2p[f->src][f->dst];
    case GQ_PF_STAGED:
        if (m->staged[f->src][f->dst] > 0)
            return m->staged[f->src][f->dst];
        if (m->d2h[f->src] > 0 && m->h2d[f->dst] > 0)
            return fmin(m->d2h[f->src], m->h2d[f->dst]);
        return 0;
    case GQ_PF_H2D: return m->h2d[f->dst];
    case GQ_PF_D2H: return m->d2h[f->src];
    }
    return 0;
}

/* The way a handoff between two GPUs goes: P2P when measured possible, else
 * host-staged. */
static gq_pflow_kind handoff_kind(const gq_place_model *m, int src, int dst)
{
    if (m->p2p[src][dst] > 0 && !m->no_p2p[src][dst])
        return GQ_PF_P2P;
    return GQ_PF_STAGED;
}

/* Each GPU's own links are shared by the flows of the pattern that use the
 * same GPU in the same role: implicit limits after the explicit ones. */
enum { OWN_H2D = 0, OWN_D2H, OWN_POUT, OWN_PIN, OWN_KINDS };

static int own_use(int kind, int g, const gq_pflow *f)
{
    switch (kind) {
    case OWN_H2D: return (f->kind == GQ_PF_H2D || f->kind == GQ_PF_STAGED) && f->dst == g;
    case OWN_D2H: return (f->kind == GQ_PF_D2H || f->kind == GQ_PF_STAGED) && f->src == g;
    case OWN_POUT: return f->kind == GQ_PF_P2P && f->src == g;
    case OWN_PIN: return f->kind == GQ_PF_P2P && f->dst == g;
    }
    return 0;
}

static double own_cap(const gq_place_model *m, int kind, int g)
{
    double c = 0;
    switch (kind) {
    case OWN_H2D: return m->h2d[g];
    case OWN_D2H: return m->d2h[g];
    case OWN_POUT:
        for (int j = 0; j < m->ngpu; j++)
            c = fmax(c, m->p2p[g][j]);
        return c;
    case OWN_PIN:
        for (int i = 0; i < m->ngpu; i++)
            c = fmax(c, m->p2p[i][g]);
        return c;
    }
    return 0;
}

#define MAX_RES (GQ_PLACE_MAX_LIMITS + OWN_KINDS * GQ_MAX_GPUS)

/* The resources a pattern touches: id (>= 0 explicit limit, or
 * -(1 + kind * GQ_MAX_GPUS + g) for a GPU's own link), capacity, and each
 * flow's use of it. Few flows (<= 2 x GPUs), so dense is fine. */
typedef struct pred_res {
    int nres;
    int rid[MAX_RES];
    double rcap[MAX_RES];
    unsigned char use[MAX_RES][2 * GQ_MAX_GPUS];
} pred_res;

/* The explicit limits the n flows use, then the GPUs' own links two of them share, into rid, rcap
 * and use (pred_res); returns how many. */
static int pred_resources(const gq_place_model *m, const gq_pflow *flows, int n, int *rid, double *rcap,
                          unsigned char (*use)[2 * GQ_MAX_GPUS])
{
    int nres = 0;
    for (int k = 0; k < m->nlimits && nres < MAX_RES; k++) {
        int any = 0;
        for (int i = 0; i < n; i++)
            any |= (use[nres][i] = (unsigned char)gq_place_limit_use(&m->limits[k], &flows[i])) != 0;
        if (any) {
            rid[nres] = k;
            rcap[nres] = m->limits[k].capacity_gbps;
            nres++;
        }
    }
    for (int kind = 0; kind < OWN_KINDS; kind++)
        for (int g = 0; g < m->ngpu && nres < MAX_RES; g++) {
            int cnt = 0;
            for (int i = 0; i < n; i++)
                cnt += (use[nres][i] = (unsigned char)own_use(kind, g, &flows[i]));
            double c = own_cap(m, kind, g);
            /* A GPU's own link matters only when two flows share it. */
            if (cnt >= 2 && c > 0) {
                rid[nres] = -(1 + kind * GQ_MAX_GPUS + g);
                rcap[nres] = c;
                nres++;
            }
        }
    return nres;
}

/* One step of the filling: the flows not yet frozen that a saturated resource holds. */
static void pred_freeze_saturated(const gq_place_model *m, const pred_res *R, int n, const double *rate,
                                  bool *frozen, gq_pflow_pred *out)
{
    int nres = R->nres;
    const int *rid = R->rid;
    const double *rcap = R->rcap;
    const unsigned char(*use)[2 * GQ_MAX_GPUS] = R->use;
    /* Freeze the flows of every saturated resource; a flow held by several
     * at once is explained by the narrowest (fewest GPUs). */
    bool sat[MAX_RES];
    for (int r = 0; r < nres; r++) {
        double used = 0;
        for (int i = 0; i < n; i++)
            used += use[r][i] * rate[i];
        sat[r] = used >= rcap[r] - 1e-6;
    }
    for (int i = 0; i < n; i++) {
        if (frozen[i])
            continue;
        int best = -1, bestw = 1 << 30;
        for (int r = 0; r < nres; r++) {
            if (!sat[r] || !use[r][i])
                continue;
            int w = rid[r] >= 0 ? gq_gpuset_count(m->limits[rid[r]].a | m->limits[rid[r]].b) : 1;
            if (w < bestw) {
                bestw = w;
                best = r;
            }
        }
        if (best < 0)
            continue;
        int sharing = 0;
        for (int k = 0; k < n; k++)
            sharing += use[best][k] != 0;
        frozen[i] = true;
        out[i].binding = rid[best] >= 0 ? rid[best] : -3;
        out[i].sharing = sharing;
    }
}

double gq_place_predict(const gq_place_model *m, const gq_pflow *flows, int n, gq_pflow_pred *out)
{
    /* Resources the pattern touches (pred_res). */
    static const int max_flows = 2 * GQ_MAX_GPUS;
    pred_res res;
    const pred_res *R = &res;
    double rate[2 * GQ_MAX_GPUS];
    bool frozen[2 * GQ_MAX_GPUS];
    if (n > max_flows)
        n = max_flows;
    for (int i = 0; i < n; i++) {
        out[i].alone = flow_alone(m, &flows[i]);
        out[i].binding = out[i].alone > 0 ? -1 : -2;
        out[i].sharing = 1;
        rate[i] = 0;
        frozen[i] = !(out[i].alone > 0);
    }
    res.nres = pred_resources(m, flows, n, res.rid, res.rcap, res.use);
    int nres = R->nres;
    const double *rcap = R->rcap;
    const unsigned char(*use)[2 * GQ_MAX_GPUS] = R->use;
    for (int iter = 0; iter < n + nres + 1; iter++) {
        double delta = INFINITY;
        bool active = false;
        for (int i = 0; i < n; i++)
            if (!frozen[i]) {
                active = true;
                delta = fmin(delta, out[i].alone - rate[i]);
            }
        if (!active)
            break;
        for (int r = 0; r < nres; r++) {
            double used = 0, coef = 0;
            for (int i = 0; i < n; i++) {
                used += use[r][i] * rate[i];
                if (!frozen[i])
                    coef += use[r][i];
            }
            if (coef > 0)
                delta = fmax(0, fmin(delta, (rcap[r] - used) / coef));
        }
        for (int i = 0; i < n; i++)
            if (!frozen[i])
                rate[i] += delta;
        const double eps = 1e-9;
        for (int i = 0; i < n; i++)
            if (!frozen[i] && rate[i] >= out[i].alone - eps) {
                frozen[i] = true;
                out[i].binding = -1;
            }
        pred_freeze_saturated(m, R, n, rate, frozen, out);
    }
    double agg = 0;
    for (int i = 0; i < n; i++) {
        out[i].gbps = rate[i];
        agg += rate[i];
    }
    return agg;
}

int gq_place_pairs_to_flows(const gq_place_model *m, const int (*pairs)[2], int np, gq_pflow *f)
{
    for (int i = 0; i < np; i++) {
        f[i].src = pairs[i][0];
        f[i].dst = pairs[i][1];
        f[i].kind = handoff_kind(m, pairs[i][0], pairs[i][1]);
    }
    return np;
}

gq_place_score gq_place_score_workers(const gq_place_model *m, const int *w, int k, gq_pflow_pred *ph,
                                      gq_pflow_pred *pd)
{
    gq_pflow fh[GQ_MAX_GPUS] = {{0}}, fd[GQ_MAX_GPUS] = {{0}};
    gq_pflow_pred th[GQ_MAX_GPUS], td[GQ_MAX_GPUS];
    if (!ph)
        ph = th;
    if (!pd)
        pd = td;
    for (int i = 0; i < k; i++) {
        fh[i] = (gq_pflow){.kind = GQ_PF_H2D, .src = -1, .dst = w[i]};
        fd[i] = (gq_pflow){.kind = GQ_PF_D2H, .src = w[i], .dst = -1};
    }
    gq_place_score s = {.agg = gq_place_predict(m, fh, k, ph) + gq_place_predict(m, fd, k, pd),
                        .min = INFINITY};
    for (int i = 0; i < k; i++)
        s.min = fmin(s.min, fmin(ph[i].gbps, pd[i].gbps));
    return s;
}
