/* The sim backend's collectives: NCCL's ring over the simulated fabric.
 *
 * A ring of n ranks (rank r sends to rank r+1, the last to the first) moves
 * its data in steps; in each step every rank sends one chunk to its next
 * rank, all n at once. The n ring flows of every group run at once are
 * handed to the sim's own prepare and run hooks as copies of one chunk, so
 * they share the links and budgets (PCIe switches, uplinks, CPU sockets,
 * NVLink, NVSwitch) through the same max-min solver as copies, with the
 * same per-transfer costs and the same noise model (noise.c). Where a pair
 * has no P2P the flow is staged through host memory (as NCCL's SHM
 * transport is), pipelined as the sim's staged method; with P2P it is an
 * SM copy pushed by the sender (NCCL's P2P transport), over NVLink where
 * the topology has it.
 *
 * Steps and chunks per iteration (NCCL's ring): all-reduce 2(n-1) steps of
 * size/n; all-gather and reduce-scatter n-1 steps of size/n; broadcast a
 * pipeline down the chain root -> ... -> last (n-1 flows of the whole size
 * at once, plus n-2 pipeline slots of GQ_SIM_COLL_SLOT bytes to fill);
 * all-to-all every rank sends size/n to every other rank at once (one step
 * of n(n-1) flows). A group of one rank copies its buffer on the GPU.
 * time per iteration = launch + steps x (the slowest ring flow's time for
 * one chunk, its transfer cost included).
 *
 * Over NVLink a ring flow is held to NCCL's own effective NVLink bandwidth,
 * links x the per-link rate NCCL's topology model gives the GPU's compute
 * capability (ncclTopoNVLinkBw and the SMxx_NVLINK_BW constants of NVIDIA/nccl
 * src/graph/topo.h: 20.0 GB/s a link on sm_80, 20.6 on sm_90, 12.0 on sm_86,
 * 40.1 on sm_100, against 25 GB/s line rates on NVLink 3 and 4): NCCL builds
 * its rings' channels on that bandwidth, and the line rate less its protocol
 * overhead (about 20 %) is what its ring reaches ("450GB/s is the line rate.
 * With the protocol overhead (~20%) NCCL can get an effective NVLink bandwidth
 * of 370GB/s", NCCL's maintainer on 8 H100 in NVIDIA/nccl-tests issue "H100
 * all reduce performance is poor": 18 links x 20.6 = 370.8). A copy engine or
 * a plain SM copy over the same links is not held to it. Not modelled: the tree
 * algorithm (NCCL picks it for some sizes on some machines; the sim
 * always runs the ring), protocol choice (LL, LL128: small messages), and
 * the speed-up when one group of several finishes before the others (all
 * groups share the fabric for the whole run).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/sim/sim_internal.h"
#include "core/units.h"

#define GQ_SIM_COLL_LAUNCH 6e-6       /* s: kernel launch and the ranks' first handshake, per iteration */
#define GQ_SIM_COLL_SLOT (512 * 1024) /* bytes: one pipeline slot of NCCL's buffer (4 MiB / 8 steps) */

int gq_sim_coll_probe(gq_backend *be, gq_coll_info *info)
{
    memset(info, 0, sizeof *info);
    if (P(be)->faults.no_nccl) {
        snprintf(info->why, sizeof info->why,
                 "NCCL not found (libnccl.so.2: simulated machine without NCCL, --sim-fault no-nccl)");
        return GQ_OK;
    }
    info->available = true;
    snprintf(info->library, sizeof info->library, "simulated ring (no tree)");
    return GQ_OK;
}

/* Steps per iteration and bytes per ring flow per step. */
static void ring_shape(gq_coll_op op, uint64_t size, int n, int *steps, uint64_t *chunk)
{
    switch (op) {
    case GQ_COLL_ALL_REDUCE:
        *steps = 2 * (n - 1);
        *chunk = size / (uint64_t)n;
        break;
    case GQ_COLL_ALL_GATHER:
    case GQ_COLL_REDUCE_SCATTER:
        *steps = n - 1;
        *chunk = size / (uint64_t)n;
        break;
    case GQ_COLL_ALL_TO_ALL:
        *steps = 1;
        *chunk = size / (uint64_t)n;
        break;
    case GQ_COLL_BROADCAST:
    default:
        *steps = 1;
        *chunk = size;
        break;
    }
    if (*chunk == 0)
        *chunk = 4;
}

/* NCCL's effective NVLink bandwidth per link and direction, B/s, for a GPU
 * of compute capability major.minor (ncclTopoNVLinkBw, NVIDIA/nccl
 * src/graph/topo.h; below sm_60 NCCL's own default, sm_80's). */
double gq_sim_nccl_nvlink_rate(int cc_major, int cc_minor)
{
    int cc = cc_major * 10 + cc_minor;
    double gbps = cc >= 100  ? 40.1
                  : cc >= 90 ? 20.6
                  : cc == 86 ? 12.0
                  : cc >= 80 ? 20.0
                  : cc >= 70 ? 20.0
                  : cc >= 60 ? 18.0
                             : 20.0;
    return gbps * 1e9;
}

/* The most a ring flow a -> b moves over NVLink, B/s (0: not over NVLink):
 * the pair's links at NCCL's rate for the slower GPU's. */
static double nccl_nvlink_cap(const gq_sim_machine *m, int a, int b)
{
    int links = a != b ? gq_sim_nvlinks(m, a, b) : 0;
    if (links <= 0)
        return 0;
    double ra = gq_sim_nccl_nvlink_rate(m->gpus[a].cc_major, m->gpus[a].cc_minor);
    double rb = gq_sim_nccl_nvlink_rate(m->gpus[b].cc_major, m->gpus[b].cc_minor);
    return links * (ra < rb ? ra : rb);
}

static void add_flow(const gq_sim_machine *m, gq_flow *f, int *nf, int a, int b, uint64_t bytes, int tag)
{
    gq_flow *x = &f[(*nf)++];
    memset(x, 0, sizeof *x);
    x->src = (gq_endpoint){.kind = GQ_EP_GPU, .index = a};
    x->dst = (gq_endpoint){.kind = GQ_EP_GPU, .index = b};
    x->bytes = bytes;
    x->tag = tag;
    x->exec_gpu = a;
    if (a == b || gq_sim_pair_p2p(m, a, b) == GQ_P2P_OK) {
        x->method = a == b ? GQ_METHOD_CE : GQ_METHOD_SM;
    } else {
        x->method = GQ_METHOD_STAGED;
        x->chunk_bytes = GQ_SIM_COLL_SLOT;
    }
}

static int check_req(const gq_sim_machine *m, const gq_coll_req *req, gq_err *err)
{
    if ((unsigned)req->op >= GQ_COLL_NOPS)
        return gq_err_set(err, GQ_E_USAGE, "sim: unknown collective %d", (int)req->op);
    if (req->ngroups < 1 || req->ngroups > GQ_COLL_MAX_GROUPS || req->iters < 1 || req->warmup < 0 ||
        req->bytes == 0)
        return gq_err_set(err, GQ_E_USAGE, "sim: a collective needs 1..%d groups, iters >= 1 and bytes > 0",
                          GQ_COLL_MAX_GROUPS);
    bool used[GQ_MAX_GPUS] = {false};
    for (int k = 0; k < req->ngroups; k++) {
        const gq_coll_group *g = &req->groups[k];
        if (g->ngpus < 1 || g->ngpus > m->ngpu)
            return gq_err_set(err, GQ_E_USAGE, "sim: group %d has %d ranks", k, g->ngpus);
        for (int r = 0; r < g->ngpus; r++) {
            int x = g->gpus[r];
            if (x < 0 || x >= m->ngpu)
                return gq_err_set(err, GQ_E_USAGE, "sim: GPU %d does not exist (this machine has GPUs 0-%d)",
                                  x, m->ngpu - 1);
            if (used[x])
                return gq_err_set(err, GQ_E_USAGE, "sim: GPU %d is in two ranks or groups", x);
            used[x] = true;
        }
    }
    return GQ_OK;
}

/* req->span (nccl-tests' shifted buffers) changes nothing here: the model
 * has no cache for the shift to defeat. */
int gq_sim_coll_run(gq_backend *be, const gq_coll_req *req, gq_coll_result *res, gq_err *err)
{
    sim_priv *s = P(be);
    const gq_sim_machine *m = s->m;
    if (s->faults.no_nccl)
        return gq_err_set(err, GQ_E_UNSUPP, "NCCL not found (simulated machine without NCCL)");
    int rc = check_req(m, req, err);
    if (rc)
        return rc;
    int nmax = 0;
    for (int k = 0; k < req->ngroups; k++)
        nmax += req->groups[k].ngpus * (req->op == GQ_COLL_ALL_TO_ALL ? req->groups[k].ngpus : 1);
    gq_flow *flows = calloc((size_t)nmax + 1, sizeof *flows);
    gq_flow_result *fr = calloc((size_t)nmax + 1, sizeof *fr);
    if (!flows || !fr) {
        free(flows);
        free(fr);
        return gq_err_set(err, GQ_E_NOMEM, "out of memory");
    }
    int nf = 0, steps[GQ_COLL_MAX_GROUPS];
    uint64_t chunk[GQ_COLL_MAX_GROUPS];
    for (int k = 0; k < req->ngroups; k++) {
        const gq_coll_group *g = &req->groups[k];
        int n = g->ngpus;
        ring_shape(req->op, req->bytes, n, &steps[k], &chunk[k]);
        if (n == 1) { /* NCCL copies the buffer on the GPU */
            add_flow(m, flows, &nf, g->gpus[0], g->gpus[0], req->bytes, k);
            steps[k] = 1;
            continue;
        }
        if (req->op == GQ_COLL_ALL_TO_ALL) {
            for (int r = 0; r < n; r++)
                for (int q = 0; q < n; q++)
                    if (q != r)
                        add_flow(m, flows, &nf, g->gpus[r], g->gpus[q], chunk[k], k);
        } else if (req->op == GQ_COLL_BROADCAST) {
            for (int r = 0; r + 1 < n; r++)
                add_flow(m, flows, &nf, g->gpus[r], g->gpus[r + 1], chunk[k], k);
        } else {
            for (int r = 0; r < n; r++)
                add_flow(m, flows, &nf, g->gpus[r], g->gpus[(r + 1) % n], chunk[k], k);
        }
    }
    /* the groups' ring flows at once, one chunk each, through the copy model */
    gq_group *grp = NULL;
    double clock0 = s->clock;
    gq_run_opts ro = {.reps = 1, .verify = false};
    if ((rc = be->ops->prepare(be, flows, nf, &grp, err)))
        goto out;
    gq_sim_measure_call(s); /* one collective run, however many copies it makes */
    s->in_coll++;
    rc = be->ops->run(be, grp, &ro, fr, err);
    s->in_coll--;
    be->ops->release(be, grp);
    if (rc)
        goto out;
    double t0 = clock0 + 20e-6, tend = t0, iter[GQ_COLL_MAX_GROUPS], skew[GQ_COLL_MAX_GROUPS], warm = 0;
    for (int k = 0; k < req->ngroups; k++) {
        gq_coll_result *o = &res[k];
        memset(o, 0, sizeof *o);
        double step = 0, first = INFINITY;
        o->status = GQ_OK;
        for (int i = 0; i < nf; i++) {
            if (flows[i].tag != k)
                continue;
            if (fr[i].status != GQ_OK) {
                o->status = fr[i].status;
                snprintf(o->error, sizeof o->error, "%s", fr[i].error);
                break;
            }
            double d = fr[i].t_end - fr[i].t_start;
            /* over NVLink, no faster than NCCL's effective NVLink bandwidth (above) */
            double cap = flows[i].method == GQ_METHOD_SM
                             ? nccl_nvlink_cap(m, flows[i].src.index, flows[i].dst.index)
                             : 0;
            if (cap > 0 && (double)flows[i].bytes / cap > d)
                d = (double)flows[i].bytes / cap;
            if (d > step)
                step = d;
            if (fr[i].t_start < first)
                first = fr[i].t_start;
        }
        int n = req->groups[k].ngpus;
        iter[k] = GQ_SIM_COLL_LAUNCH + steps[k] * step;
        if (req->op == GQ_COLL_BROADCAST && n > 2) /* the pipeline fills down the chain */
            iter[k] += (n - 2) * step * (double)(GQ_SIM_COLL_SLOT < chunk[k] ? GQ_SIM_COLL_SLOT : chunk[k]) /
                       (double)chunk[k];
        skew[k] = isfinite(first) && first > t0 ? first - t0 : 0;
        if (req->warmup * iter[k] > warm)
            warm = req->warmup * iter[k];
    }
    /* warmup, then one barrier: every group's timed part starts after it
     * (each worker leaves it with its own start skew from the copy model) */
    for (int k = 0; k < req->ngroups; k++) {
        gq_coll_result *o = &res[k];
        if (o->status != GQ_OK)
            continue;
        o->t_start = t0 + warm + skew[k];
        o->t_end = o->t_start + req->iters * iter[k];
        o->iters_done = req->iters;
        o->verified = req->verify;
        o->verify_ok = true;
        if (o->t_end > tend)
            tend = o->t_end;
    }
    s->clock = tend + 10e-6;
out:
    free(flows);
    free(fr);
    return rc;
}
