/* Synthetic fleets (bench/fleet_synth.h). */
#include "fleet_synth.h"

#include <stdio.h>
#include <string.h>

#include "analysis/fleet.h"

const char *gq_syn_kind_name(gq_syn_kind k)
{
    static const char *const names[] = {"healthy", "link", "hot", "ecc"};
    return k >= 0 && k < GQ_SYN_NKIND ? names[k] : "?";
}

gq_syn_kind gq_syn_kind_of(int rank)
{
    switch (rank % 50) {
    case 7: return GQ_SYN_LINK;
    case 23: return GQ_SYN_HOT;
    case 41: return GQ_SYN_ECC;
    default: return GQ_SYN_HEALTHY;
    }
}

void gq_syn_label(int rank, char *buf, size_t n)
{
    snprintf(buf, n, "node%05d-rank%d", rank, rank);
}

/* xorshift32, seeded from the rank: the same fleet every time */
static double unit_noise(unsigned *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    return (double)(*s % 20001u) / 10000.0 - 1.0; /* [-1, 1] */
}

json_t *gq_syn_payload(const json_t *base, int rank)
{
    json_t *sum = json_deep_copy(base);
    json_t *node = json_object_get(sum, "node");
    if (!sum || !json_is_object(node)) {
        json_decref(sum);
        return NULL;
    }
    char host[32], art[64];
    snprintf(host, sizeof host, "node%05d", rank);
    snprintf(art, sizeof art, "fleet/node%05d-rank%d", rank, rank);
    json_object_set_new(node, "rank", json_integer(rank));
    json_object_set_new(node, "artefacts", json_string(art));
    unsigned seed = 2463534242u ^ (unsigned)(rank * 2654435761u);
    if (!seed)
        seed = 1;
    const char *k;
    json_t *v, *figs = json_object_get(node, "figures");
    void *tmp;
    json_object_foreach_safe(figs, tmp, k, v)
    {
        if (!json_is_number(v))
            continue;
        char unit[16];
        bool higher;
        gq_node_fig_unit(k, unit, sizeof unit, &higher);
        double x = json_number_value(v), u = unit_noise(&seed);
        json_object_set_new(figs, k, json_real(strstr(unit, "C") ? x + u : x * (1 + 0.01 * u)));
    }
    json_t *p = json_pack("{s:i, s:s, s:o}", "rank", rank, "host", host, "summary", sum);
    if (!p)
        json_decref(sum);
    return p;
}
