/* The KV handoff measured (exec/kv_handoff.h). */
#include "exec/kv_handoff.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/units.h"
#include "exec/plan_run.h"

#define RATE_BUFFER (256 * GQ_MiB) /* rate probes: large enough for the asymptotic rate */

/* One flow measured; its record's per-round values give GB/s and ms. */
static int measure_flow(gq_backend *be, const gq_topo *topo, const char *test, gq_flow f,
                        const gq_harness_opts *ho, gq_recordset *rs, gq_journal *j, gq_kv_meas *out,
                        gq_err *err)
{
    gq_measurement *m = calloc(1, sizeof *m);
    if (!m)
        return gq_err_set(err, GQ_E_NOMEM, "out of memory");
    snprintf(m->test, sizeof m->test, "%s", test);
    m->nflows = 1;
    m->flows[0] = f;
    m->report[0] = true;
    int first = rs->n;
    int rc = gq_exec_one(be, topo, m, ho, j, rs, err);
    free(m);
    memset(out, 0, sizeof *out);
    out->run = true;
    for (int k = first; k < rs->n; k++) {
        const gq_record *r = &rs->v[k];
        if (r->aggregate || r->sum)
            continue;
        out->valid = r->valid && r->value.n > 0;
        snprintf(out->error, sizeof out->error, "%s", r->error);
        if (r->value.n > 0) {
            double ms[GQ_MAX_ROUNDS];
            for (int i = 0; i < r->value.n; i++)
                ms[i] = r->samples[i] > 0 ? (double)f.bytes / (r->samples[i] * GQ_GB) * 1e3 : 0;
            out->gbps = r->value;
            out->ms = gq_stat_compute(ms, r->value.n);
        }
        break;
    }
    if (rc && rc != GQ_E_INTR && !out->error[0])
        snprintf(out->error, sizeof out->error, "%.199s", err->msg);
    return rc;
}

/* Rates measured now: the paths alone at RATE_BUFFER, then --from's D2H and
 * --to's H2D at once (the pipelined handoff's pattern). */
static int measure_rates(gq_backend *be, const gq_topo *topo, int from, int to, const gq_harness_opts *ho0,
                         gq_recordset *rs, gq_journal *j, gq_kv_rates *out, gq_err *err)
{
    gq_harness_opts ho = *ho0;
    ho.reps = 0; /* auto: rounds of ~0.1 s */
    gq_kv_meas mm;
    int rc;
    gq_endpoint host_from = {GQ_EP_HOST, GQ_NUMA_LOCAL}, host_to = {GQ_EP_HOST, GQ_NUMA_LOCAL};
    if (!out->p2p_impossible) {
        gq_flow f = {.src = {GQ_EP_GPU, from},
                     .dst = {GQ_EP_GPU, to},
                     .method = GQ_METHOD_CE,
                     .exec_gpu = to,
                     .bytes = RATE_BUFFER};
        if ((rc = measure_flow(be, topo, "kv_rate_p2p", f, &ho, rs, j, &mm, err)))
            return rc;
        if (mm.valid)
            gq_kv_set_rate(&out->p2p, mm.gbps.median, "measured (256 MiB, P2P read by GPU %d)", to);
    }
    gq_flow d = {.src = {GQ_EP_GPU, from},
                 .dst = host_from,
                 .method = GQ_METHOD_CE,
                 .exec_gpu = from,
                 .bytes = RATE_BUFFER};
    if ((rc = measure_flow(be, topo, "kv_rate_d2h", d, &ho, rs, j, &mm, err)))
        return rc;
    if (mm.valid)
        gq_kv_set_rate(&out->down, mm.gbps.median, "measured (256 MiB, GPU %d -> host alone)", from);
    gq_flow u = {
        .src = host_to, .dst = {GQ_EP_GPU, to}, .method = GQ_METHOD_CE, .exec_gpu = to, .bytes = RATE_BUFFER};
    if ((rc = measure_flow(be, topo, "kv_rate_h2d", u, &ho, rs, j, &mm, err)))
        return rc;
    if (mm.valid)
        gq_kv_set_rate(&out->up, mm.gbps.median, "measured (256 MiB, host -> GPU %d alone)", to);

    gq_measurement *m = calloc(1, sizeof *m);
    if (!m)
        return gq_err_set(err, GQ_E_NOMEM, "out of memory");
    snprintf(m->test, sizeof m->test, "kv_rate_both");
    m->nflows = 2;
    m->flows[0] = d;
    m->flows[1] = u;
    m->flows[0].tag = 0;
    m->flows[1].tag = 1;
    m->report[0] = m->report[1] = true;
    m->aggregate = true;
    int first = rs->n;
    rc = gq_exec_one(be, topo, m, &ho, j, rs, err);
    free(m);
    if (rc)
        return rc;
    bool agg_ok = true;
    for (int k = first; k < rs->n; k++)
        if (rs->v[k].aggregate && !rs->v[k].valid)
            agg_ok = false;
    for (int k = first; k < rs->n && agg_ok; k++) {
        const gq_record *r = &rs->v[k];
        if (!gq_kv_record_ok(r))
            continue;
        if (r->direction == GQ_DIR_D2H)
            gq_kv_set_rate(&out->cdown, r->value.median,
                           "measured (GPU %d -> host and host -> GPU %d at once)", from, to);
        else if (r->direction == GQ_DIR_H2D)
            gq_kv_set_rate(&out->cup, r->value.median, "measured (GPU %d -> host and host -> GPU %d at once)",
                           from, to);
    }
    return GQ_OK;
}

int gq_kv_measure(gq_backend *be, const gq_topo *topo, const gq_harness_opts *ho, bool estimate_only,
                  gq_recordset *rs, gq_journal *j, gq_kv_result *k, gq_err *err)
{
    int rc;
    if ((rc = measure_rates(be, topo, k->from, k->to, ho, rs, j, &k->r, err)))
        return rc;
    if (estimate_only)
        return GQ_OK;
    gq_harness_opts h = *ho;
    /* The handoff: the whole payload, one copy per round. */
    h.reps = 1;
    k->measured = true;
    int numa = topo->gpu[k->from].numa_node >= 0 ? topo->gpu[k->from].numa_node : GQ_NUMA_LOCAL;
    gq_endpoint hbuf = {GQ_EP_HOST, numa};
    if (!k->r.p2p_impossible) {
        gq_flow f = {.src = {GQ_EP_GPU, k->from},
                     .dst = {GQ_EP_GPU, k->to},
                     .method = GQ_METHOD_CE,
                     .exec_gpu = k->to,
                     .bytes = k->payload};
        if ((rc = measure_flow(be, topo, "kv_handoff_direct", f, &h, rs, j, &k->direct, err)))
            return rc;
    }
    gq_flow d = {.src = {GQ_EP_GPU, k->from},
                 .dst = hbuf,
                 .method = GQ_METHOD_CE,
                 .exec_gpu = k->from,
                 .bytes = k->payload};
    gq_flow u = {.src = hbuf,
                 .dst = {GQ_EP_GPU, k->to},
                 .method = GQ_METHOD_CE,
                 .exec_gpu = k->to,
                 .bytes = k->payload};
    if ((rc = measure_flow(be, topo, "kv_handoff_serial_d2h", d, &h, rs, j, &k->serial_down, err)) ||
        (rc = measure_flow(be, topo, "kv_handoff_serial_h2d", u, &h, rs, j, &k->serial_up, err)))
        return rc;
    /* Serial: round i's two copies one after the other. */
    gq_kv_meas *sd = &k->serial_down, *su = &k->serial_up;
    k->serial.run = true;
    k->serial.valid = sd->valid && su->valid;
    snprintf(k->serial.error, sizeof k->serial.error, "%s", sd->error[0] ? sd->error : su->error);
    if (k->serial.valid) {
        const gq_record *rd = NULL, *ru = NULL;
        for (int i = 0; i < rs->n; i++) {
            if (!strcmp(rs->v[i].test, "kv_handoff_serial_d2h") && !rs->v[i].aggregate)
                rd = &rs->v[i];
            if (!strcmp(rs->v[i].test, "kv_handoff_serial_h2d") && !rs->v[i].aggregate)
                ru = &rs->v[i];
        }
        int nr = rd && ru ? (rd->value.n < ru->value.n ? rd->value.n : ru->value.n) : 0;
        double ms[GQ_MAX_ROUNDS], g[GQ_MAX_ROUNDS];
        for (int i = 0; i < nr; i++) {
            ms[i] = (double)k->payload / (rd->samples[i] * GQ_GB) * 1e3 +
                    (double)k->payload / (ru->samples[i] * GQ_GB) * 1e3;
            g[i] = (double)k->payload / (ms[i] * 1e-3) / GQ_GB;
        }
        k->serial.valid = nr > 0;
        if (nr) {
            k->serial.ms = gq_stat_compute(ms, nr);
            k->serial.gbps = gq_stat_compute(g, nr);
        }
    }
    for (int i = 0; i < k->nchunks; i++) {
        gq_flow p = {.src = {GQ_EP_GPU, k->from},
                     .dst = {GQ_EP_GPU, k->to},
                     .method = GQ_METHOD_STAGED,
                     .exec_gpu = k->from,
                     .bytes = k->payload,
                     .chunk_bytes = k->chunk[i]};
        char test[64];
        snprintf(test, sizeof test, "kv_handoff_staged_%lluMiB", (unsigned long long)(k->chunk[i] / GQ_MiB));
        if ((rc = measure_flow(be, topo, test, p, &h, rs, j, &k->pipe[i], err)))
            return rc;
        if (k->pipe[i].valid &&
            (k->best_chunk < 0 || k->pipe[i].gbps.median > k->pipe[k->best_chunk].gbps.median))
            k->best_chunk = i;
    }
    if (k->best_chunk < 0)
        k->best_chunk = 0;
    return GQ_OK;
}
