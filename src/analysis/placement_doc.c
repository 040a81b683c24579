/* Placement: the model's additions from a domains analysis (its
 * performance domains and shared budgets, typed; a saved document's sections
 * are decoded by render/ first). */
#include <stdio.h>
#include <string.h>

#include "analysis/placement_internal.h"

/* The GPUs as a set; false when one is beyond the model's GPUs. */
static bool set_of(const int *gpus, int n, int ngpu, gq_gpuset *out)
{
    gq_gpuset s = 0;
    for (int i = 0; i < n; i++) {
        if (gpus[i] < 0 || gpus[i] >= ngpu)
            return false;
        s |= BIT(gpus[i]);
    }
    *out = s;
    return n > 0;
}

static void add_domains(gq_place_model *m, const gq_domains *dom)
{
    gq_gpuset seen = 0, sets[GQ_MAX_GPUS];
    int nd = 0;
    for (int k = 0; k < dom->ndomains && k < GQ_MAX_GPUS; k++) {
        gq_gpuset s;
        if (!set_of(dom->member[k], dom->size[k], m->ngpu, &s) || (s & seen))
            return; /* a domain beyond this model: the records say the rest */
        seen |= s;
        sets[nd++] = s;
    }
    if (nd > 0) {
        memcpy(m->domains, sets, sizeof sets[0] * (size_t)nd);
        m->ndomains = nd;
    }
}

/* A P2P budget over GPUs that span several domains is the path between
 * them: it constrains flows from one domain to another, in each direction.
 * Within one domain: every flow. */
static void add_p2p(gq_place_model *m, gq_gpuset s, double cap, const char *ev)
{
    int nspan = 0;
    for (int d = 0; d < m->ndomains; d++)
        nspan += (m->domains[d] & s) != 0;
    if (nspan <= 1) {
        gq_place_model_add_limit(m, GQ_LIMIT_P2P, s, s, cap, ev, NULL);
        return;
    }
    for (int x = 0; x < m->ndomains; x++)
        for (int y = 0; y < m->ndomains; y++)
            if (x != y && (m->domains[x] & s) && (m->domains[y] & s))
                gq_place_model_add_limit(m, GQ_LIMIT_P2P, m->domains[x] & s, m->domains[y] & s, cap, ev,
                                         NULL);
}

void gq_place_model_from_saved(gq_place_model *m, const gq_domains *dom, const gq_bottlenecks *bn)
{
    if (dom)
        add_domains(m, dom);
    for (int i = 0; bn && i < bn->n; i++) {
        const gq_bottleneck *b = &bn->v[i];
        gq_gpuset s;
        if (!set_of(b->gpus, b->ngpus, m->ngpu, &s) || !(b->capacity_gbps > 0))
            continue;
        /* The domains analysis' own sentence. */
        char ev[200];
        gq_place_textf(ev, sizeof ev, "gpuqual domains bottleneck: %s",
                       b->explanation[0] ? b->explanation : "(no evidence given)");
        if (b->direction == GQ_DIR_H2D)
            gq_place_model_add_limit(m, GQ_LIMIT_H2D, s, 0, b->capacity_gbps, ev, NULL);
        else if (b->direction == GQ_DIR_D2H)
            gq_place_model_add_limit(m, GQ_LIMIT_D2H, s, 0, b->capacity_gbps, ev, NULL);
        else if (b->direction == GQ_DIR_P2P)
            add_p2p(m, s, b->capacity_gbps, ev);
    }
}
