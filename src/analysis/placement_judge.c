/* The judging steps of placement verification (exec/place_verify.c runs
 * them): the concurrent patterns a map implies as measurements, the flows
 * slower than predicted, attempt summaries and which attempt to keep. */
#include <string.h>

#include "analysis/placement_internal.h"

/* ---- verification ------------------------------------------------------- */

static void init_measurement(gq_measurement *out, const char *test)
{
    memset(out, 0, sizeof *out);
    snprintf(out->test, sizeof out->test, "%s", test);
    out->aggregate = true;
}

static void add_flow(gq_measurement *m, gq_flow f)
{
    if (m->nflows >= GQ_MAX_FLOWS)
        return;
    f.tag = m->nflows;
    m->report[m->nflows] = true;
    m->flows[m->nflows++] = f;
}

int gq_place_pairs_measurement(const gq_place_map *map, uint64_t bytes, gq_measurement *out)
{
    init_measurement(out, "place_pairs");
    for (int i = 0; i < map->npairs; i++) {
        const gq_place_pair *q = &map->pairs[i];
        gq_flow f = {.src = {GQ_EP_GPU, q->prefill}, .dst = {GQ_EP_GPU, q->decode}, .bytes = bytes};
        if (q->path == GQ_PF_P2P) {
            /* The decode GPU pulls, as in the pairwise read matrix. */
            f.method = GQ_METHOD_CE;
            f.exec_gpu = q->decode;
        } else {
            f.method = GQ_METHOD_STAGED;
            f.exec_gpu = q->prefill;
        }
        add_flow(out, f);
    }
    return out->nflows;
}

int gq_place_offload_measurement(const gq_place_map *map, gq_direction dir, uint64_t bytes,
                                 gq_measurement *out)
{
    init_measurement(out, dir == GQ_DIR_H2D ? "place_offload_h2d" : "place_offload_d2h");
    for (int i = 0; i < map->nworkers; i++) {
        int g = map->workers[i].gpu;
        gq_endpoint host = {GQ_EP_HOST, GQ_NUMA_LOCAL}, gpu = {GQ_EP_GPU, g};
        add_flow(out, (gq_flow){.src = dir == GQ_DIR_H2D ? host : gpu,
                                .dst = dir == GQ_DIR_H2D ? gpu : host,
                                .method = GQ_METHOD_CE,
                                .exec_gpu = g,
                                .bytes = bytes});
    }
    return out->nflows;
}

int gq_place_replicas_measurement(const gq_place_map *map, uint64_t bytes, gq_measurement *out)
{
    init_measurement(out, "place_replicas_h2d");
    for (int r = 0; r < map->nreplicas; r++)
        for (int i = 0; i < map->replicas[r].ngpus; i++) {
            int g = map->replicas[r].gpus[i];
            add_flow(out, (gq_flow){.src = {GQ_EP_HOST, GQ_NUMA_LOCAL},
                                    .dst = {GQ_EP_GPU, g},
                                    .method = GQ_METHOD_CE,
                                    .exec_gpu = g,
                                    .bytes = bytes});
        }
    return out->nflows;
}

/* Flows that ran slower than predicted, in words; 0 when none did. */
int gq_place_slow_flows(const gq_place_map *c, double tol, char *buf, size_t n)
{
    int slow = 0;
    size_t used = 0;
    buf[0] = 0;
    for (int i = 0; i < c->npairs; i++) {
        const gq_place_pair *q = &c->pairs[i];
        if (q->measured_gbps < 0 || q->measured_gbps >= q->predicted_gbps * (1 - tol))
            continue;
        slow++;
        int w = snprintf(buf + used, n - used, "%s%d->%d %.1f (predicted %.1f)", used ? ", " : "", q->prefill,
                         q->decode, q->measured_gbps, q->predicted_gbps);
        if (w > 0 && (size_t)w < n - used)
            used += (size_t)w;
    }
    for (int i = 0; i < c->nworkers; i++) {
        const gq_place_worker *w = &c->workers[i];
        bool sh = w->measured_h2d >= 0 && w->measured_h2d < w->predicted_h2d * (1 - tol);
        bool sd = w->measured_d2h >= 0 && w->measured_d2h < w->predicted_d2h * (1 - tol);
        if (!sh && !sd)
            continue;
        slow++;
        int k = snprintf(buf + used, n - used, "%sworker %d %s %.1f (predicted %.1f)", used ? ", " : "",
                         w->gpu, sh ? "h2d" : "d2h", sh ? w->measured_h2d : w->measured_d2h,
                         sh ? w->predicted_h2d : w->predicted_d2h);
        if (k > 0 && (size_t)k < n - used)
            used += (size_t)k;
    }
    for (int r = 0; r < c->nreplicas; r++) {
        const gq_place_replica *rep = &c->replicas[r];
        if (rep->measured_gbps < 0 || rep->measured_gbps >= rep->predicted_gbps * (1 - tol))
            continue;
        slow++;
        int k = snprintf(buf + used, n - used, "%sreplica %d %.1f (predicted %.1f)", used ? ", " : "", r,
                         rep->measured_gbps, rep->predicted_gbps);
        if (k > 0 && (size_t)k < n - used)
            used += (size_t)k;
    }
    return slow;
}

void gq_place_summarize_attempt(const gq_place_map *c, gq_place_attempt *a)
{
    memset(a, 0, sizeof *a);
    a->npairs = c->npairs;
    for (int i = 0; i < c->npairs; i++) {
        a->prefill[i] = c->pairs[i].prefill;
        a->decode[i] = c->pairs[i].decode;
        a->pair_predicted[i] = c->pairs[i].predicted_gbps;
        a->pair_measured[i] = c->pairs[i].measured_gbps;
    }
    a->pairs_predicted = c->pairs_predicted;
    a->pairs_measured = c->pairs_measured;
    a->pairs_valid = c->pairs_valid;
    a->nworkers = c->nworkers;
    for (int i = 0; i < c->nworkers; i++)
        a->workers[i] = c->workers[i].gpu;
    a->offload_predicted = c->offload_predicted_h2d + c->offload_predicted_d2h;
    a->offload_measured = c->offload_measured_h2d >= 0 && c->offload_measured_d2h >= 0
                              ? c->offload_measured_h2d + c->offload_measured_d2h
                              : -1;
    a->nreplicas = c->nreplicas;
    a->replicas_predicted_min = c->replicas_predicted_min;
    a->replicas_measured_min = c->replicas_measured_min;
}

/* Which attempt to keep: the best measured pairs aggregate (valid), then
 * offload, then replicas; a later attempt wins only by more than the
 * tolerance, so noise does not flip the answer. */
bool gq_place_attempt_better(const gq_place_attempt *a, const gq_place_attempt *b, double tol)
{
    if (a->npairs) {
        double x = a->pairs_valid ? a->pairs_measured : -1, y = b->pairs_valid ? b->pairs_measured : -1;
        if (x > y * (1 + tol) || x < y * (1 - tol))
            return x > y;
    }
    if (a->nworkers) {
        if (a->offload_measured > b->offload_measured * (1 + tol) ||
            a->offload_measured < b->offload_measured * (1 - tol))
            return a->offload_measured > b->offload_measured;
    }
    if (a->nreplicas)
        return a->replicas_measured_min > b->replicas_measured_min * (1 + tol);
    return false;
}
