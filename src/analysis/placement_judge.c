/* The judging steps of placement verification (exec/place_verify.c runs
 * them): the concurrent patterns a map implies as measurements, the flows
 * slower than predicted, attempt summaries and which attempt to keep. */
#include <stdarg.h>
#include <stdio.h>
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

/* Is measured m off its prediction p by more than tol: slower only, or
 * either way? (m < 0: not measured.) */
static bool off(double m, double p, double tol, bool both)
{
    if (m < 0 || !(p > 0))
        return false;
    return m < p * (1 - tol) || (both && m > p * (1 + tol));
}

static void append(char *buf, size_t n, size_t *used, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void append(char *buf, size_t n, size_t *used, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(buf + *used, n - *used, fmt, ap);
    va_end(ap);
    if (w > 0 && (size_t)w < n - *used)
        *used += (size_t)w;
}

/* Flows off their prediction, in words; 0 when none were. */
static int off_flows(const gq_place_map *c, double tol, bool both, char *buf, size_t n)
{
    int k = 0;
    size_t used = 0;
    buf[0] = 0;
    for (int i = 0; i < c->npairs; i++) {
        const gq_place_pair *q = &c->pairs[i];
        if (!off(q->measured_gbps, q->predicted_gbps, tol, both))
            continue;
        k++;
        append(buf, n, &used, "%s%d->%d %.1f (predicted %.1f)", used ? ", " : "", q->prefill, q->decode,
               q->measured_gbps, q->predicted_gbps);
    }
    for (int i = 0; i < c->nworkers; i++) {
        const gq_place_worker *w = &c->workers[i];
        bool sh = off(w->measured_h2d, w->predicted_h2d, tol, both);
        bool sd = off(w->measured_d2h, w->predicted_d2h, tol, both);
        if (!sh && !sd)
            continue;
        k++;
        append(buf, n, &used, "%sworker %d %s %.1f (predicted %.1f)", used ? ", " : "", w->gpu,
               sh ? "h2d" : "d2h", sh ? w->measured_h2d : w->measured_d2h,
               sh ? w->predicted_h2d : w->predicted_d2h);
    }
    for (int r = 0; r < c->nreplicas; r++) {
        const gq_place_replica *rep = &c->replicas[r];
        if (!off(rep->measured_gbps, rep->predicted_gbps, tol, both))
            continue;
        k++;
        append(buf, n, &used, "%sreplica %d %.1f (predicted %.1f)", used ? ", " : "", r, rep->measured_gbps,
               rep->predicted_gbps);
    }
    return k;
}

/* Flows that ran slower than predicted, in words; 0 when none did. */
int gq_place_slow_flows(const gq_place_map *c, double tol, char *buf, size_t n)
{
    return off_flows(c, tol, false, buf, n);
}

int gq_place_missed_flows(const gq_place_map *c, double tol, char *buf, size_t n)
{
    return off_flows(c, tol, true, buf, n);
}

void gq_place_warn(gq_place_result *res, const char *id, const char *fmt, ...)
{
    if (res->nwarnings >= GQ_PLACE_MAX_WARNINGS)
        return;
    gq_place_warning *w = &res->warnings[res->nwarnings++];
    snprintf(w->id, sizeof w->id, "%s", id);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->text, sizeof w->text, fmt, ap);
    va_end(ap);
}

int gq_place_warn_missed(gq_place_result *res, const gq_place_map *c, const char *label)
{
    char buf[360];
    int k = gq_place_missed_flows(c, GQ_PLACE_WARN_MISS, buf, sizeof buf);
    if (k)
        gq_place_warn(
            res, "place_prediction_missed",
            "%s missed its prediction by more than %.0f%%: %s; the model's figures for %s are not to "
            "be trusted",
            label, 100 * GQ_PLACE_WARN_MISS, buf, k == 1 ? "this path" : "these paths");
    return k;
}

/* The host limits that bind on the chosen offload workers. */
int gq_place_warn_budgets(const gq_place_model *m, gq_place_result *res)
{
    const gq_place_map *c = &res->chosen;
    int added = 0;
    gq_gpuset workers = 0;
    for (int i = 0; i < c->nworkers; i++)
        workers |= (gq_gpuset)1 << c->workers[i].gpu;
    for (int l = 0; l < m->nlimits && c->nworkers >= 2; l++) {
        const gq_place_limit *lim = &m->limits[l];
        if (gq_place_limit_is_gpu(lim->kind))
            continue;
        gq_gpuset shared = lim->a & workers;
        double alone = 0;
        int k = 0;
        for (int g = 0; g < m->ngpu; g++)
            if ((shared >> g) & 1u) {
                k++;
                alone += lim->kind == GQ_LIMIT_H2D   ? m->h2d[g]
                         : lim->kind == GQ_LIMIT_D2H ? m->d2h[g]
                                                     : m->h2d[g] + m->d2h[g];
            }
        if (k < 2 || !(alone > lim->capacity_gbps * (1 + m->tolerance)))
            continue;
        if (++added > 5) /* room is kept for the predictions' warnings */
            continue;
        char set[96], gpus[96];
        gq_gpuset_str(lim->a, set, sizeof set);
        gq_gpuset_str(shared, gpus, sizeof gpus);
        gq_place_warn(
            res, "place_offload_shared_budget",
            "offload workers on GPUs %s share one host budget: %s {%s} <= %.1f GB/s (limit #%d; %s), "
            "less than their %.1f GB/s alone",
            gpus,
            lim->kind == GQ_LIMIT_H2D   ? "host->GPU"
            : lim->kind == GQ_LIMIT_D2H ? "GPU->host"
                                        : "host, both ways",
            set, lim->capacity_gbps, l, lim->evidence, alone);
    }
    if (added > 5)
        gq_place_warn(
            res, "place_offload_shared_budget",
            "%d more host budgets shared by the offload workers bind; they are the model's host limits",
            added - 5);
    return added;
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
