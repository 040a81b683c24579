/* Placement: the model's additions from a saved `gpuqual domains` document
 * (its domains and bottlenecks sections, read as JSON). */
#include <stdlib.h>
#include <string.h>

#include "analysis/placement_internal.h"

static gq_gpuset set_from_json(const json_t *a, int ngpu, bool *ok)
{
    gq_gpuset s = 0;
    size_t i;
    const json_t *v;
    *ok = json_is_array(a) && json_array_size(a) > 0;
    if (!*ok)
        return 0;
    json_array_foreach(a, i, v)
    {
        if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) >= ngpu) {
            *ok = false;
            return 0;
        }
        s |= BIT(json_integer_value(v));
    }
    return s;
}

/* `gpuqual domains` sections: domains (list of lists of GPU indices) and
 * bottlenecks ({gpus, direction, capacity_gbps, evidence}). Entries this code
 * cannot read are skipped: the records carry the same evidence. */
void gq_place_model_from_doc(gq_place_model *m, const json_t *doc)
{
    const json_t *doms = json_object_get(doc, "domains");
    size_t i;
    const json_t *v;
    if (json_is_array(doms) && json_array_size(doms) > 0) {
        int nd = 0;
        gq_gpuset seen = 0, sets[GQ_MAX_GPUS];
        bool good = true;
        json_array_foreach(doms, i, v)
        {
            bool ok;
            const json_t *g = json_is_object(v) ? json_object_get(v, "gpus") : v;
            gq_gpuset s = set_from_json(g, m->ngpu, &ok);
            if (!ok || (s & seen) || nd >= GQ_MAX_GPUS) {
                good = false;
                break;
            }
            seen |= s;
            sets[nd++] = s;
        }
        if (good) {
            memcpy(m->domains, sets, sizeof sets[0] * (size_t)nd);
            m->ndomains = nd;
        }
    }
    const json_t *bns = json_object_get(doc, "bottlenecks");
    if (!json_is_array(bns))
        return;
    json_array_foreach(bns, i, v)
    {
        bool ok;
        gq_gpuset s = set_from_json(json_object_get(v, "gpus"), m->ngpu, &ok);
        const char *dir = json_string_value(json_object_get(v, "direction"));
        const json_t *cj = json_object_get(v, "capacity_gbps");
        if (!ok || !dir || !json_is_number(cj))
            continue;
        double cap = json_number_value(cj);
        /* The domains analysis' own sentence, else its evidence as text. */
        const json_t *evj = json_object_get(v, "explanation");
        if (!json_is_string(evj))
            evj = json_object_get(v, "evidence");
        char ev[200];
        char *dump =
            evj ? (json_is_string(evj) ? strdup(json_string_value(evj)) : json_dumps(evj, JSON_COMPACT))
                : NULL;
        gq_place_textf(ev, sizeof ev, "gpuqual domains bottleneck: %s", dump ? dump : "(no evidence given)");
        free(dump);
        if (!strcmp(dir, "h2d"))
            gq_place_model_add_limit(m, GQ_LIMIT_H2D, s, 0, cap, ev, NULL);
        else if (!strcmp(dir, "d2h"))
            gq_place_model_add_limit(m, GQ_LIMIT_D2H, s, 0, cap, ev, NULL);
        else if (!strcmp(dir, "both") || !strcmp(dir, "bidirectional") || !strcmp(dir, "duplex") ||
                 !strcmp(dir, "sum"))
            gq_place_model_add_limit(m, GQ_LIMIT_DUPLEX, s, 0, cap, ev, NULL);
        else if (!strncmp(dir, "p2p", 3) || !strcmp(dir, "cross")) {
            /* A P2P bottleneck over GPUs that span several domains is the
             * path between them: it constrains flows from one domain to
             * another, in each direction. Within one domain: every flow. */
            int nspan = 0;
            for (int d = 0; d < m->ndomains; d++)
                nspan += (m->domains[d] & s) != 0;
            if (nspan <= 1) {
                gq_place_model_add_limit(m, GQ_LIMIT_P2P, s, s, cap, ev, NULL);
                continue;
            }
            for (int x = 0; x < m->ndomains; x++)
                for (int y = 0; y < m->ndomains; y++)
                    if (x != y && (m->domains[x] & s) && (m->domains[y] & s))
                        gq_place_model_add_limit(m, GQ_LIMIT_P2P, m->domains[x] & s, m->domains[y] & s, cap,
                                                 ev, NULL);
        }
    }
}
