/* Which paths the card's sweep step measures (analysis/card.h:
 * gq_card_sweep_paths_plan): the fastest and the slowest P2P pair and host
 * path, and at the full level the slowest of every class of path. Pure. */
#include <math.h>
#include <string.h>

#include "analysis/card.h"

static void add_path(gq_card_sweep_paths *P, int a, int b)
{
    for (int k = 0; k < P->n; k++)
        if (P->v[k][0] == a && P->v[k][1] == b)
            return;
    if (P->n < GQ_CARD_MAX_SWEEP_PATHS) {
        P->v[P->n][0] = a;
        P->v[P->n][1] = b;
        P->n++;
    }
}

/* Full: the slowest measured member of each class (cls: a path's class). */
static void note_class(gq_card_sweep_paths *C, long cls, int a, int b, double v)
{
    int k = 0;
    while (k < C->n && C->cls[k] != cls)
        k++;
    if (k == C->n) {
        if (C->n == GQ_CARD_MAX_SWEEP_PATHS)
            return;
        C->n++;
        C->cls[k] = cls;
        C->rate[k] = INFINITY;
    }
    if (v < C->rate[k]) {
        C->rate[k] = v;
        C->v[k][0] = a;
        C->v[k][1] = b;
    }
}

/* The P2P paths to sweep: the fastest and the slowest measured direct pair,
 * and at the full level the slowest of every class of pair too, a class being
 * the pair's link and, where the measurements split the GPUs into domains,
 * whether the pair is within one domain or across (a VM hides its switches). */
static void p2p_paths(const gq_topo *t, const gq_card_opts *o, const gq_pairmatrix *pm, const gq_domains *dom,
                      gq_card_sweep_paths *P)
{
    int fi = -1, fj = -1, si = -1, sj = -1;
    double fv = -1, sv = INFINITY;
    gq_card_sweep_paths C = {0};
    for (int i = 0; i < pm->n; i++)
        for (int j = 0; j < pm->n; j++) {
            double v = pm->gbps[i][j];
            if (i == j || !isfinite(v) || pm->staged[i][j])
                continue;
            if (v > fv) {
                fv = v;
                fi = i;
                fj = j;
            }
            if (v < sv) {
                sv = v;
                si = i;
                sj = j;
            }
            int a = pm->gpu[i], b = pm->gpu[j];
            bool across = dom->split && dom->domain_of[a] != dom->domain_of[b];
            note_class(&C, gq_card_p2p_path_class(t, a, b) * 2 + across, a, b, v);
        }
    if (fi < 0)
        return;
    add_path(P, pm->gpu[fi], pm->gpu[fj]);
    add_path(P, pm->gpu[si], pm->gpu[sj]);
    if (o->level == GQ_LEVEL_FULL)
        for (int k = 0; k < C.n; k++)
            add_path(P, C.v[k][0], C.v[k][1]);
}

/* The host paths to sweep: the GPUs with the fastest and the slowest
 * host-to-GPU rate alone, and at the full level the slowest of every class of
 * host path too. */
static void host_paths(const gq_topo *t, const gq_card_opts *o, const gq_recordset *rs,
                       gq_card_sweep_paths *P)
{
    int gf = -1, gs = -1;
    double hf = -1, hs = INFINITY;
    gq_card_sweep_paths C = {0};
    for (int i = 0; i < rs->n; i++) {
        const gq_record *r = &rs->v[i];
        if (strcmp(r->test, GQ_TID_H2D_SET) || r->aggregate || !r->valid || r->dst.kind != GQ_EP_GPU)
            continue;
        int members = 0;
        for (int k = 0; k < rs->n; k++)
            members += rs->v[k].group == r->group && !rs->v[k].aggregate && !rs->v[k].sum;
        if (members != 1)
            continue;
        if (r->value.median > hf) {
            hf = r->value.median;
            gf = r->dst.index;
        }
        if (r->value.median < hs) {
            hs = r->value.median;
            gs = r->dst.index;
        }
        note_class(&C, gq_card_host_path_class(t, r->dst.index), r->dst.index, -1, r->value.median);
    }
    if (gf < 0)
        gf = gs = o->gpus[0];
    add_path(P, gf, -1);
    add_path(P, gs, -1);
    if (o->level == GQ_LEVEL_FULL)
        for (int k = 0; k < C.n; k++)
            add_path(P, C.v[k][0], -1);
}

void gq_card_sweep_paths_plan(const gq_topo *t, const gq_card_opts *o, const gq_recordset *rs,
                              const gq_pairmatrix *pm, const gq_domains *dom, gq_card_sweep_paths *P)
{
    /* P2P pairs when there are any direct ones, else the host paths; the full
     * level sweeps both, on every distinct path (docs/card.md). */
    memset(P, 0, sizeof *P);
    p2p_paths(t, o, pm, dom, P);
    if (P->n == 0 || o->level == GQ_LEVEL_FULL)
        host_paths(t, o, rs, P);
}
