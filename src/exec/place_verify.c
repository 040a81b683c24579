/* Placement verification (exec/place_verify.h): runs the chosen pattern and
 * the naive one through the harness, learning limits from what it measures. */
#include "exec/place_verify.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/card.h"
#include "exec/plan_run.h"

static bool is_flow_record(const gq_record *r)
{
    return !r->aggregate && !r->sum && !r->is_latency;
}

static int run_pattern(gq_backend *be, const gq_topo *topo, gq_measurement *ms, const gq_harness_opts *ho,
                       gq_recordset *rs, gq_journal *j, double *rate, double *agg, double *overlap,
                       bool *valid, double *iv, gq_err *err)
{
    int first = rs->n;
    iv[0] = iv[1] = 0;
    for (int i = 0; i < ms->nflows; i++)
        rate[i] = -1;
    *agg = -1;
    *overlap = -1;
    *valid = false;
    int rc = gq_exec_one(be, topo, ms, ho, j, rs, err);
    for (int k = first; k < rs->n; k++) {
        const gq_record *r = &rs->v[k];
        if (r->aggregate && !r->sum) {
            *agg = r->value.n > 0 ? r->value.median : -1;
            *overlap = r->overlap;
            *valid = r->valid;
            gq_interval v = gq_record_interval(r);
            iv[0] = v.lo;
            iv[1] = v.hi;
        } else if (is_flow_record(r)) {
            int t = r->flow_tag;
            if (t < 0 || t >= ms->nflows) /* fall back to flow order */
                t = k - first;
            if (t >= 0 && t < ms->nflows && r->value.n > 0)
                rate[t] = r->value.median;
        }
    }
    if (*agg < 0 && ms->nflows == 1 && rate[0] >= 0) {
        /* one flow: its own figure is the aggregate */
        *agg = rate[0];
        *overlap = 1;
        *valid = true;
        for (int k = first; k < rs->n; k++)
            if (is_flow_record(&rs->v[k])) {
                *valid = rs->v[k].valid;
                gq_interval v = gq_record_interval(&rs->v[k]);
                iv[0] = v.lo;
                iv[1] = v.hi;
            }
    }
    return rc;
}

static int verify_map(gq_backend *be, const gq_topo *topo, gq_place_map *map, const char *suffix,
                      uint64_t bytes, const gq_harness_opts *ho, gq_recordset *rs, gq_journal *j, gq_err *err)
{
    int rc = GQ_OK;
    double rate[GQ_MAX_FLOWS], iv[2];
    gq_measurement *ms = malloc(sizeof *ms);
    if (!ms)
        return gq_err_set(err, GQ_E_NOMEM, "placement: out of memory");
    if (gq_place_pairs_measurement(map, bytes, ms) > 0) {
        snprintf(ms->test, sizeof ms->test, "place_pairs%s", suffix);
        rc = run_pattern(be, topo, ms, ho, rs, j, rate, &map->pairs_measured, &map->pairs_overlap,
                         &map->pairs_valid, iv, err);
        map->pairs_measured_lo = iv[0];
        map->pairs_measured_hi = iv[1];
        for (int i = 0; i < map->npairs; i++)
            map->pairs[i].measured_gbps = rate[i];
        if (rc)
            goto out;
    }
    if (map->nworkers) {
        for (int d = 0; d < 2; d++) {
            gq_direction dir = d ? GQ_DIR_D2H : GQ_DIR_H2D;
            double ov;
            bool valid;
            gq_place_offload_measurement(map, dir, bytes, ms);
            snprintf(ms->test, sizeof ms->test, "place_offload_%s%s", gq_direction_name(dir), suffix);
            rc = run_pattern(be, topo, ms, ho, rs, j, rate,
                             d ? &map->offload_measured_d2h : &map->offload_measured_h2d, &ov, &valid, iv,
                             err);
            map->offload_valid = d ? map->offload_valid && valid : valid;
            for (int i = 0; i < map->nworkers; i++)
                *(d ? &map->workers[i].measured_d2h : &map->workers[i].measured_h2d) = rate[i];
            if (rc)
                goto out;
        }
    }
    if (map->nreplicas) {
        double agg, ov;
        gq_place_replicas_measurement(map, bytes, ms);
        snprintf(ms->test, sizeof ms->test, "place_replicas_h2d%s", suffix);
        rc = run_pattern(be, topo, ms, ho, rs, j, rate, &agg, &ov, &map->replicas_valid, iv, err);
        int f = 0;
        map->replicas_measured_min = INFINITY;
        for (int r = 0; r < map->nreplicas; r++) {
            double sum = 0;
            bool ok = true;
            for (int i = 0; i < map->replicas[r].ngpus; i++, f++) {
                ok &= rate[f] >= 0;
                sum += rate[f] > 0 ? rate[f] : 0;
            }
            map->replicas[r].measured_gbps = ok ? sum : -1;
            map->replicas_measured_min = fmin(map->replicas_measured_min, ok ? sum : -1);
        }
        if (rc)
            goto out;
    }
out:
    free(ms);
    return rc;
}

/* What one attempt found, in att->finding. chosen_slow / naive_slow: the
 * flows slower than predicted ("" none); learned: limits learned; how: what
 * happens next. */
static void finding(gq_place_attempt *att, double tol, const char *chosen_slow, const char *naive_slow,
                    int learned, const char *how)
{
    char c[400], nv[420] = "";
    if (chosen_slow[0])
        snprintf(c, sizeof c, "slower than predicted: %s", chosen_slow);
    else
        snprintf(c, sizeof c, "ran as predicted (within %.0f%%)", 100 * tol);
    if (naive_slow[0])
        snprintf(nv, sizeof nv, "; the naive mapping ran slower than predicted: %s", naive_slow);
    if (!chosen_slow[0] && !naive_slow[0])
        snprintf(att->finding, sizeof att->finding, "%s", c);
    else if (!learned)
        snprintf(att->finding, sizeof att->finding,
                 "%s%s; the measurements show no shared limit to learn from", c, nv);
    else
        snprintf(att->finding, sizeof att->finding, "%s%s; %d shared limit%s learned from this run%s", c, nv,
                 learned, learned == 1 ? "" : "s", how);
}

/* Verify, learn from a shortfall, place again, up to GQ_PLACE_MAX_ATTEMPTS.
 * The first attempt also runs the naive mapping (into *naive, which keeps the
 * prediction it was made with): its measurement teaches the model too, so a
 * naive mapping slower than predicted can move the chosen one. *res becomes
 * the attempt that measured best. */
static int verify_attempts(gq_backend *be, const gq_topo *topo, gq_place_model *m, gq_place_result *res,
                           gq_place_map *naive, uint64_t bytes, const gq_harness_opts *ho, gq_recordset *rs,
                           gq_journal *j, gq_err *err)
{
    int rc = GQ_OK, n = 0, best = 0;
    gq_place_result *tries = calloc(GQ_PLACE_MAX_ATTEMPTS, sizeof *tries);
    gq_place_attempt *att = calloc(GQ_PLACE_MAX_ATTEMPTS, sizeof *att);
    if (!tries || !att) {
        rc = gq_err_set(err, GQ_E_NOMEM, "placement: out of memory");
        goto out;
    }
    tries[0] = *res;
    for (; n < GQ_PLACE_MAX_ATTEMPTS; n++) {
        char suffix[16] = "", slow[360] = "", nslow[360] = "";
        if (n)
            snprintf(suffix, sizeof suffix, "_try%d", n + 1);
        int first = rs->n;
        rc = verify_map(be, topo, &tries[n].chosen, suffix, bytes, ho, rs, j, err);
        gq_place_summarize_attempt(&tries[n].chosen, &att[n]);
        if (!rc && n == 0)
            rc = verify_map(be, topo, naive, "_naive", bytes, ho, rs, j, err);
        if (rc) {
            n++;
            goto out;
        }
        if (n && gq_place_attempt_better(&att[n], &att[best], m->tolerance))
            best = n;
        gq_place_slow_flows(&tries[n].chosen, m->tolerance, slow, sizeof slow);
        if (n == 0)
            gq_place_slow_flows(naive, m->tolerance, nslow, sizeof nslow);
        att[n].nlearned = slow[0] || nslow[0] ? gq_place_learn(m, rs, first) : 0;
        if (!att[n].nlearned || n + 1 >= GQ_PLACE_MAX_ATTEMPTS) {
            finding(&att[n], m->tolerance, slow, nslow, att[n].nlearned, "; no attempts left");
            n++;
            break;
        }
        gq_err serr = {0};
        if ((rc = gq_place_solve(m, &res->roles, &tries[n + 1], &serr))) {
            gq_err_set(err, rc, "%s", serr.msg);
            n++;
            goto out;
        }
        bool repeat = false;
        for (int k = 0; k <= n; k++)
            repeat |= gq_place_same_map(&tries[n + 1].chosen, &tries[k].chosen);
        finding(&att[n], m->tolerance, slow, nslow, att[n].nlearned,
                repeat ? ", and the model still prefers a mapping already tried"
                       : ", so the roles were placed again");
        if (repeat) {
            n++;
            break;
        }
    }
out:
    if (tries && att && n > 0) {
        gq_place_attempt saved[GQ_PLACE_MAX_ATTEMPTS];
        memcpy(saved, att, sizeof saved[0] * (size_t)n);
        *res = tries[best];
        memcpy(res->attempts, saved, sizeof saved[0] * (size_t)n);
        res->nattempts = n;
        res->final_attempt = best;
        if (n > 1)
            gq_place_note(res,
                          "verification took %d attempts; attempt %d measured best and is the mapping shown "
                          "(every attempt is listed under 'attempts')",
                          n, best + 1);
    }
    free(tries);
    free(att);
    return rc;
}

/* The gains of the chosen mapping over the naive one, from what both measured. */
static void gains(gq_place_result *res)
{
    const gq_place_map *c = &res->chosen, *nv = &res->naive;
    res->gain_pairs = res->gain_offload = res->gain_replicas = 0;
    res->gain_pairs_lo = res->gain_pairs_hi = 0;
    if (c->npairs) {
        if (c->pairs_valid && nv->pairs_valid && nv->pairs_measured > 0) {
            res->gain_pairs = c->pairs_measured / nv->pairs_measured;
            if (c->pairs_measured_lo > 0 && nv->pairs_measured_lo > 0) {
                res->gain_pairs_lo = c->pairs_measured_lo / nv->pairs_measured_hi;
                res->gain_pairs_hi = c->pairs_measured_hi / nv->pairs_measured_lo;
                if (res->gain_pairs_lo <= 1 && res->gain_pairs_hi >= 1)
                    gq_place_note(res,
                                  "the gain over the naive mapping is %.2f-%.2fx on the intervals from the "
                                  "rounds: whether the chosen mapping moves more is undetermined",
                                  res->gain_pairs_lo, res->gain_pairs_hi);
            }
        } else {
            gq_place_note(
                res,
                "the pairs' aggregate is not valid (windows overlapped %.1f%% and %.1f%%, below 99%%): no "
                "gain is claimed",
                100 * c->pairs_overlap, 100 * nv->pairs_overlap);
        }
    }
    if (c->nworkers && c->offload_valid && nv->offload_valid &&
        nv->offload_measured_h2d + nv->offload_measured_d2h > 0)
        res->gain_offload = (c->offload_measured_h2d + c->offload_measured_d2h) /
                            (nv->offload_measured_h2d + nv->offload_measured_d2h);
    if (c->nreplicas && c->replicas_valid && nv->replicas_valid && nv->replicas_measured_min > 0)
        res->gain_replicas = c->replicas_measured_min / nv->replicas_measured_min;
}

int gq_place_verify(gq_backend *be, const gq_topo *topo, gq_place_model *m, gq_place_result *res,
                    uint64_t bytes, const gq_harness_opts *ho, gq_recordset *rs, gq_journal *j, gq_err *err)
{
    gq_place_map *naive = malloc(sizeof *naive);
    if (!naive)
        return gq_err_set(err, GQ_E_NOMEM, "placement: out of memory");
    *naive = res->naive;
    int rc = verify_attempts(be, topo, m, res, naive, bytes, ho, rs, j, err);
    res->naive = *naive; /* as measured, next to the prediction it was made with */
    free(naive);
    gq_place_warn_missed(res, &res->chosen, "the chosen mapping");
    gq_place_warn_missed(res, &res->naive, "the naive mapping");
    if (rc)
        return rc;
    res->verified = true;
    gains(res);
    return GQ_OK;
}

/* What gq_place_measure_handoffs runs with. */
typedef struct hctx {
    gq_backend *be;
    const gq_topo *topo;
    const gq_harness_opts *ho;
    gq_journal *j;
    gq_recordset *rs;
    uint64_t bytes;
    long total; /* the progress total: discovery's probes and these */
    void (*step)(void *arg, long total, const char *what);
    void *arg;
} hctx;

/* Both host directions at once over a set of GPUs: what a staged handoff
 * does to a shared budget (seed 000: 25 GB/s one way, 36 in total both ways). */
static int run_bidir(const hctx *l, const int *gpus, int n, gq_measurement *m, gq_err *err)
{
    memset(m, 0, sizeof *m);
    snprintf(m->test, sizeof m->test, "bidirectional_set");
    for (int k = 0; k < n; k++)
        for (int d = 0; d < 2; d++) {
            gq_endpoint h = {GQ_EP_HOST, GQ_NUMA_LOCAL}, g = {GQ_EP_GPU, gpus[k]};
            gq_flow *f = &m->flows[m->nflows];
            f->src = d ? g : h;
            f->dst = d ? h : g;
            f->method = GQ_METHOD_CE;
            f->exec_gpu = gpus[k];
            f->bytes = l->bytes;
            f->tag = m->nflows;
            m->report[m->nflows++] = true;
        }
    m->direction_sums = true;
    char what[160], set[128];
    snprintf(what, sizeof what, "both host directions at once on %s",
             gq_domains_set_str(gpus, n, set, sizeof set));
    if (l->step)
        l->step(l->arg, l->total, what);
    return gq_exec_one(l->be, l->topo, m, l->ho, l->j, l->rs, err);
}

/* How many run_bidir() calls gq_place_measure_handoffs() makes: one per distinct host
 * budget, and one over all the GPUs. */
static int count_bidir(const gq_bottlenecks *bn)
{
    int did = 0;
    gq_gpuset done[GQ_BN_MAX + 1];
    for (int b = 0; b < bn->n; b++) {
        if (bn->v[b].p2p)
            continue;
        gq_gpuset s = 0;
        for (int k = 0; k < bn->v[b].ngpus; k++)
            s |= (gq_gpuset)1 << bn->v[b].gpus[k];
        bool dup = false;
        for (int x = 0; x < did; x++)
            dup |= done[x] == s;
        if (!dup)
            done[did++] = s;
    }
    return did + 1;
}

int gq_place_measure_handoffs(gq_backend *be, const gq_topo *topo, const gq_discovery *D, const int *sel,
                              int nsel, uint64_t bytes, const gq_harness_opts *ho, gq_journal *j,
                              gq_recordset *rs, void (*step)(void *arg, long total, const char *what),
                              void *arg, gq_err *err)
{
    const gq_bottlenecks *bn = D->bottlenecks;
    int nplan = D->plan.n, rc = GQ_OK;
    hctx h = {.be = be, .topo = topo, .ho = ho, .j = j, .rs = rs, .bytes = bytes, .step = step, .arg = arg};
    gq_measurement *m = calloc(1, sizeof *m);
    if (!m)
        return gq_err_set(err, GQ_E_NOMEM, "out of memory");
    /* Staged handoffs load both directions of a budget at once. */
    bool any_staged = false;
    for (int i = 0; i < D->plan.n; i++)
        any_staged |= D->plan.v[i].kind == GQ_PROBE_MATRIX && D->plan.v[i].staged[0];
    if (any_staged) {
        int did = 0;
        gq_gpuset done[GQ_BN_MAX + 1];
        h.total = nplan + count_bidir(bn);
        for (int b = 0; b < bn->n && !rc; b++) {
            if (bn->v[b].p2p)
                continue;
            gq_gpuset s = 0;
            for (int k = 0; k < bn->v[b].ngpus; k++)
                s |= (gq_gpuset)1 << bn->v[b].gpus[k];
            bool dup = false;
            for (int x = 0; x < did; x++)
                dup |= done[x] == s;
            if (dup)
                continue;
            done[did++] = s;
            rc = run_bidir(&h, bn->v[b].gpus, bn->v[b].ngpus, m, err);
        }
        if (!rc)
            rc = run_bidir(&h, sel, nsel, m, err);
        /* the driver's own staged copy (what cudaMemcpyPeer gets without P2P) beside the pipelined
         * one, on one staged pair of each class, as the card measures it: the placement says both */
        int ds[GQ_MAX_GPUS], dd[GQ_MAX_GPUS];
        int nd = gq_card_driver_staged_pairs(topo, sel, nsel, ds, dd, GQ_MAX_GPUS);
        h.total = nplan + count_bidir(bn) + nd;
        for (int i = 0; i < nd && !rc; i++) {
            memset(m, 0, sizeof *m);
            snprintf(m->test, sizeof m->test, "%s", GQ_CARD_TEST_DRIVER_STAGED);
            m->flows[0] = (gq_flow){.src = {GQ_EP_GPU, ds[i]},
                                    .dst = {GQ_EP_GPU, dd[i]},
                                    .method = GQ_METHOD_DRIVER_STAGED,
                                    .exec_gpu = ds[i],
                                    .bytes = bytes};
            m->report[0] = true;
            m->nflows = 1;
            if (step) {
                char what[96];
                snprintf(what, sizeof what, "driver-staged copy GPU %d -> GPU %d", ds[i], dd[i]);
                step(arg, h.total, what);
            }
            rc = gq_exec_one(be, topo, m, ho, j, rs, err);
        }
    }
    free(m);
    return rc;
}
