/* The "sim" backend: the gq_backend_ops of the simulated fabric.
 *
 * Each flow is routed over the machine's links at prepare time and turned
 * into entries of a max-min problem (fabric.c). run() is an event-driven
 * simulation in virtual time: rates are recomputed whenever the set of
 * running flows changes (a flow that finishes its copies early frees its
 * share), each copy costs bytes/rate plus the fixed per-transfer cost of its
 * path, and each flow starts after a deterministic skew (none without
 * noise), so windows differ as they do on real hardware and the harness's
 * overlap rule applies unchanged. Noise is noise.c's measured model (drift per seed and path,
 * jitter per flow and call, slow rounds, start skew), keyed by (seed, path,
 * flow, call counter).
 *
 * Model of each transfer kind:
 *   H2D / D2H      the route between the GPU and the nearest memory node of
 *                  the requested NUMA node;
 *   P2P            the direct NVLink bundle when there is one, else the PCIe
 *                  route (a "turn" in a bridge applies the bridge's
 *                  p2p-flowcap and p2p-cost);
 *   local copy     device memory only (read + write);
 *   STAGED         gpuqual's pipelined staging: one stream over both legs
 *                  (GPU -> host memory near the source -> GPU), so it gets the
 *                  smaller of the two shares, plus a pipeline fill of one
 *                  chunk and the topology's chunk-cost per chunk;
 *   DRIVER_STAGED  (and a CE copy between GPUs without P2P): the driver's
 *                  staging, serial legs: driver% / (1/d2h + 1/h2d), where the
 *                  leg rates are what each leg would get with everything else
 *                  running.
 * Hidden capacities never leave this file: discover() reports only what a
 * real discovery would read (names, PCIe gen/width, NUMA, the tree, NVLinks).
 *
 * This file holds the ops table, the options, init, prepare (routing) and
 * latency; discover() is in sim_discover.c, run() in sim_run.c, and the
 * state they share in sim_internal.h.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "backend/sim/sim.h"
#include "backend/sim/sim_stress.h"
#include "backend/sim/sim_internal.h"
#include "core/units.h"

/* ---- helpers ------------------------------------------------------------------ */

static bool p2p_possible(const gq_sim_machine *m, int a, int b)
{
    return gq_sim_pair_p2p(m, a, b) == GQ_P2P_OK;
}

/* Growable entry list. */
typedef struct ebuf {
    gq_sim_entry *e;
    int n, cap;
} ebuf;

static int ebuf_add(ebuf *b, int c, double a, double w)
{
    for (int i = 0; i < b->n; i++)
        if (b->e[i].c == c) {
            /* The same constraint twice (a staged stream through one duplex
             * link in both directions): one entry with the summed use and
             * the use-weighted share. */
            double aw = b->e[i].a * b->e[i].w + a * w;
            b->e[i].a += a;
            b->e[i].w = aw / b->e[i].a;
            return 0;
        }
    if (b->n == b->cap) {
        int nc = b->cap ? b->cap * 2 : 16;
        gq_sim_entry *ne = realloc(b->e, sizeof *ne * (size_t)nc);
        if (!ne)
            return -1;
        b->e = ne;
        b->cap = nc;
    }
    b->e[b->n++] = (gq_sim_entry){.c = c, .a = a, .w = w};
    return 0;
}

typedef struct pathinfo {
    double flowcap; /* 0 = none */
    double phys;    /* the narrowest PCIe link's theoretical rate, B/s; 0 = none */
    double cost, lat;
} pathinfo;

/* Add a route's constraints to b; accumulate its flow cap, cost and latency. */
static int add_route(const sim_priv *s, ebuf *b, const gq_sim_hop *h, int n, bool sm, bool p2p, pathinfo *pi)
{
    const gq_sim_machine *m = s->m;
    for (int i = 0; i < n; i++) {
        const gq_sim_link *L = &m->links[h[i].link];
        int d = h[i].dir;
        if (ebuf_add(b, C_DIR(h[i].link, d), 1.0, 1.0))
            return -1;
        if (L->duplex > 0 && ebuf_add(b, C_DUP(h[i].link), 1.0, L->w[d]))
            return -1;
        cap_min(&pi->flowcap, L->flowcap);
        if (L->kind == GQ_SIM_LINK_PCIE && L->gts > 0 && L->width > 0) {
            int gen = gq_sim_gen_from_gts(L->gts);
            if (gen > 0)
                cap_min(&pi->phys, gq_pcie_gbps(gen, L->width) * 1e9);
        }
        if (p2p) {
            cap_min(&pi->flowcap, L->p2p_flowcap);
            cap_min(&pi->flowcap, L->p2p_dircap[d]);
        }
        if (sm && L->sm_frac > 0)
            cap_min(&pi->flowcap, L->sm_frac * L->cap[d]);
        pi->cost += L->cost;
        pi->lat += L->lat;
        /* A turn: up into a bridge from one child, down to another child. */
        if (p2p && i + 1 < n) {
            const gq_sim_link *N = &m->links[h[i + 1].link];
            if (L->kind == GQ_SIM_LINK_PCIE && d == 0 && N->kind == GQ_SIM_LINK_PCIE && h[i + 1].dir == 1 &&
                L->b == N->b) {
                const gq_sim_node *v = &m->nodes[L->b];
                cap_min(&pi->flowcap, v->p2p_flowcap);
                pi->cost += v->p2p_cost;
            }
        }
    }
    return 0;
}

static int route_or_fail(const sim_priv *s, int from, int to, bool nvlink, gq_sim_hop *h, gq_err *err)
{
    int n = gq_sim_route(s->m, from, to, nvlink, h, GQ_SIM_MAX_HOPS);
    if (n < 0)
        return gq_err_set(err, GQ_E_BACKEND, "sim: no route of at most %d hops from '%s' to '%s' in %s",
                          GQ_SIM_MAX_HOPS, s->m->nodes[from].name, s->m->nodes[to].name, s->m->file);
    return n;
}

/* Memory node for a host endpoint seen from GPU g: the nearest one of the
 * requested NUMA node (GQ_NUMA_LOCAL: the nearest of any). */
static int host_memory(const sim_priv *s, int g, int numa, gq_err *err)
{
    int mem = gq_sim_nearest_memory(s->m, gnode(s->m, g), numa == GQ_NUMA_LOCAL ? -1 : numa);
    if (mem < 0)
        return gq_err_set(err, GQ_E_BACKEND, "sim: GPU %d cannot reach host memory on NUMA node %d", g, numa);
    return mem;
}

static int check_endpoint(const sim_priv *s, gq_endpoint e, gq_err *err)
{
    if (e.kind == GQ_EP_GPU) {
        if (e.index < 0 || e.index >= s->m->ngpu)
            return gq_err_set(err, GQ_E_USAGE, "GPU %d does not exist (this machine has GPUs 0-%d)", e.index,
                              s->m->ngpu - 1);
    } else if (e.kind == GQ_EP_HOST) {
        if (e.index != GQ_NUMA_LOCAL && (e.index < 0 || e.index >= s->numa_count))
            return gq_err_set(err, GQ_E_USAGE, "NUMA node %d does not exist (this machine has %s%d)", e.index,
                              s->numa_count > 1 ? "nodes 0-" : "node ", s->numa_count - 1);
    } else {
        return gq_err_set(err, GQ_E_USAGE, "unknown endpoint kind %d", (int)e.kind);
    }
    return GQ_OK;
}

int gq_sim_opts(gq_backend_opts *o, const char *topology, uint64_t seed, double noise, const char *faults)
{
    memset(o, 0, sizeof *o);
    int rc = GQ_OK;
    if (topology)
        rc = gq_backend_opts_add(o, "sim", topology, NULL);
    if (!rc)
        rc = gq_backend_opts_addf(o, NULL, "sim-seed", "%llu", (unsigned long long)seed);
    if (!rc && noise >= 0)
        rc = gq_backend_opts_addf(o, NULL, "sim-noise", "%.17g", noise);
    if (!rc && faults)
        rc = gq_backend_opts_add(o, "sim-fault", faults, NULL);
    return rc;
}

/* ---- init / fini ----------------------------------------------------------------- */

/* ---- options ------------------------------------------------------------------- */

/* The sim backend's options, parsed by the seam's option hooks. */
typedef struct sim_opts {
    const char *topology; /* file path or built-in name; NULL = the default machine */
    uint64_t seed;
    double noise;       /* relative amplitude; < 0 = not given (the topology's) */
    const char *faults; /* "gpu3:thermal,gpu1:ecc"; GPU numbers checked at init */
} sim_opts;

enum { O_SIM, O_SEED, O_NOISE, O_FAULT, O_END };

/* clang-format off */
static const gq_backend_opt sim_options[O_END + 1] = {
    [O_SIM] = {.name = "sim", .kind = GQ_BE_OPT_STR, .arg = "TOPO", .opens = true,
     .help = "run on a simulated machine: a topology file (a regular file of at most 1 MiB) or a built-in "
             "name (rtx4090x8, rtxpro6000x8, a100x6, h200x2)", .values = gq_sim_builtin_names},
    [O_SEED] = {.name = "sim-seed", .kind = GQ_BE_OPT_INT, .arg = "N", .def = "1",
     .help = "seed of the simulator's deterministic noise", .lo = 0, .hi = 2147483647},
    [O_NOISE] = {.name = "sim-noise", .kind = GQ_BE_OPT_DOUBLE, .arg = "FRAC",
     .help = "scale of the simulated noise (figures, latency, telemetry), 0 = none (default: the topology's; "
             "0.01, the calibrated noise, in every built-in)", .lo = 0, .hi = 0.5},
    [O_FAULT] = {.name = "sim-fault", .kind = GQ_BE_OPT_STR, .arg = "SPEC",
     .help = "inject faults into the simulation: gpu3:thermal,gpu1:ecc,gpu2:faulty-result,gpu0:link-x8,sw0:link-x8; "
             "interrupt@N: a Ctrl-C arrives during the N-th measurement call (a copy run, latency query, "
             "collective or stress tick)"},
    [O_END] = {.name = NULL},
};
/* clang-format on */

static void sim_opt_default(void *bopts)
{
    sim_opts *o = bopts;
    o->seed = 1;
    o->noise = -1;
}

static int sim_opt_parse(void *bopts, const gq_backend_opt *opt, const gq_backend_val *v, gq_err *err)
{
    sim_opts *o = bopts;
    switch (opt - sim_options) {
    case O_SIM: o->topology = v->str; break;
    case O_SEED: o->seed = (uint64_t)v->i; break;
    case O_NOISE: o->noise = v->d; break;
    case O_FAULT: {
        /* The grammar now; the GPU numbers once the machine is known (init). */
        gq_sim_faults f;
        int rc = gq_sim_faults_parse(v->str, 0, &f, err);
        if (rc)
            return rc;
        o->faults = v->str;
        break;
    }
    default: return gq_err_set(err, GQ_E_FAIL, "--%s: not a sim option", opt->name);
    }
    return GQ_OK;
}

/* ---- init / fini ----------------------------------------------------------------- */

static void sim_fini(gq_backend *be);

/* Scale a link's bandwidth limits by k (both directions, duplex, stream caps). */
static void scale_link(gq_sim_link *L, double k)
{
    L->cap[0] *= k;
    L->cap[1] *= k;
    L->duplex *= k;
    L->flowcap *= k;
    L->p2p_flowcap *= k;
    L->p2p_dircap[0] *= k;
    L->p2p_dircap[1] *= k;
}

/* The faults that change what transfers see (sim_stress.h): link-x8 halves
 * the GPU's PCIe link; busy slows its link, local copies and memory. */
static void apply_link_faults(gq_sim_machine *m, const gq_sim_faults *f)
{
    for (int g = 0; g < m->ngpu; g++) {
        int pl = m->nodes[gnode(m, g)].parent_link;
        /* The width stays: discovery reads the link at idle, where it is x16. */
        if ((f->gpu[g] & GQ_SIM_FAULT_LINK_X8) && pl >= 0 && m->links[pl].width > 8)
            scale_link(&m->links[pl], 8.0 / m->links[pl].width);
        if (f->gpu[g] & GQ_SIM_FAULT_BUSY) {
            if (pl >= 0)
                scale_link(&m->links[pl], 0.6);
            m->gpus[g].local_copy *= 0.45;
            m->gpus[g].memlat *= 2;
        }
    }
}

/* "sw0:link-x8": the uplink of that switch or bridge trains down to x8.
 * Unlike a GPU's link-x8 (x16 at idle, x8 under load: the stress telemetry
 * shows it), a bridge's link shows x8 to discovery, as sysfs would: its
 * width, and the maximum it could train at. */
static int apply_node_faults(gq_sim_machine *m, const gq_sim_faults *f, gq_err *err)
{
    for (int k = 0; k < f->nnode; k++) {
        int n = -1;
        for (int i = 0; i < m->nnode && n < 0; i++)
            if (!strcmp(m->nodes[i].name, f->node[k]))
                n = i;
        if (n < 0 || (m->nodes[n].kind != GQ_SIM_SWITCH && m->nodes[n].kind != GQ_SIM_BRIDGE)) {
            char have[160] = "";
            for (int i = 0; i < m->nnode; i++) {
                size_t l = strlen(have);
                if ((m->nodes[i].kind == GQ_SIM_SWITCH || m->nodes[i].kind == GQ_SIM_BRIDGE) &&
                    l + strlen(m->nodes[i].name) + 8 < sizeof have)
                    snprintf(have + l, sizeof have - l, "%s%s", l ? ", " : "", m->nodes[i].name);
            }
            return gq_err_set(
                err, GQ_E_USAGE,
                "--sim-fault '%s:link-x8': this machine has no switch or bridge named '%s' (%s%s)",
                f->node[k], f->node[k], have[0] ? "it has " : "it has none", have);
        }
        int pl = m->nodes[n].parent_link;
        gq_sim_link *L = pl >= 0 ? &m->links[pl] : NULL;
        if (!L || L->gts <= 0 || L->width <= 8)
            return gq_err_set(
                err, GQ_E_USAGE,
                "--sim-fault '%s:link-x8': the uplink of '%s' %s; a switch or bridge whose uplink "
                "is wider than x8 can be trained down",
                f->node[k], f->node[k],
                !L            ? "does not exist"
                : L->gts <= 0 ? "has no PCIe rate and width"
                              : "is x8 or narrower already");
        if (!L->max_width)
            L->max_width = L->width;
        if (L->max_gts <= 0)
            L->max_gts = L->gts;
        scale_link(L, 8.0 / L->width);
        L->width = 8;
    }
    return GQ_OK;
}

static int sim_observe(gq_backend *be, int gpu, gq_gpu_load *out, gq_err *err)
{
    sim_priv *s = P(be);
    if (gpu < 0 || gpu >= s->m->ngpu)
        return gq_err_set(err, GQ_E_USAGE, "GPU %d does not exist", gpu);
    memset(out, 0, sizeof *out);
    out->procs_known = true;
    out->util_pct = 0;
    out->mem_used_mib = 0;
    if (s->faults.gpu[gpu] & GQ_SIM_FAULT_BUSY) {
        out->nprocs = out->nprocs_total = 1;
        out->procs[0] = (gq_gpu_proc){.pid = 4242, .visible = true, .mem_mib = 20480};
        snprintf(out->procs[0].name, sizeof out->procs[0].name, "sim-load");
        out->util_pct = 100;
        out->mem_used_mib = 20480;
    }
    return GQ_OK;
}

static int sim_init(gq_backend *be, const gq_backend_opts *bo, const void *bopts, gq_err *err)
{
    (void)bo;
    sim_opts none;
    sim_opt_default(&none);
    const sim_opts *o = bopts ? bopts : &none;
    sim_priv *s = calloc(1, sizeof *s);
    if (!s)
        return gq_err_set(err, GQ_E_NOMEM, "out of memory");
    int rc = gq_sim_load(o->topology, &s->m, err);
    if (rc) {
        free(s);
        return rc;
    }
    be->priv = s;
    /* The stress and telemetry model: --sim-fault's GPUs against this machine. */
    gq_sim_faults f;
    if ((rc = gq_sim_faults_parse(o->faults, s->m->ngpu, &f, err))) {
        sim_fini(be);
        return rc;
    }
    s->seed = o->seed;
    s->noise = o->noise < 0 ? s->m->noise : o->noise;
    if (s->noise > 0.5)
        s->noise = 0.5;
    /* One scale for figures, latency and telemetry. */
    if (!(s->stress = gq_sim_stress_new(o->seed, s->noise, &f))) {
        sim_fini(be);
        return gq_err_set(err, GQ_E_NOMEM, "out of memory");
    }
    s->faults = f;
    apply_link_faults(s->m, &f);
    if ((rc = apply_node_faults(s->m, &f, err))) {
        sim_fini(be);
        return rc;
    }
    s->clock = 1.0;
    s->nc = 3 * s->m->nlink + s->m->ngpu;
    for (int n = 0; n < s->m->nnode; n++)
        if (s->m->nodes[n].kind == GQ_SIM_MEMORY && s->m->nodes[n].numa + 1 > s->numa_count)
            s->numa_count = s->m->nodes[n].numa + 1;
    return GQ_OK;
}

static void sim_fini(gq_backend *be)
{
    sim_priv *s = P(be);
    if (!s)
        return;
    gq_sim_stress_free(s->stress);
    gq_sim_machine_free(s->m);
    free(s);
    be->priv = NULL;
}

/* ---- prepare / release ------------------------------------------------------------------ */

static void group_free(gq_group *g)
{
    if (!g)
        return;
    free(g->flows);
    free(g->kind);
    free(g->host_numa);
    free(g->flowcap);
    free(g->phys);
    free(g->cost);
    free(g->key);
    free(g->cls);
    free(g->path);
    free(g->shared);
    free(g->leg0);
    gq_sim_problem_free(g->main);
    gq_sim_problem_free(g->legs);
    free(g);
}

static void sim_release(gq_backend *be, gq_group *g)
{
    (void)be;
    group_free(g);
}

typedef struct flow_build {
    ebuf main;
    ebuf leg[2];
    pathinfo pmain, pleg[2];
} flow_build;

/* Both legs of a staged copy from GPU a to GPU b through the host memory
 * nearest to a. */
static int staged_legs(const sim_priv *s, int a, int b, flow_build *fb, gq_err *err)
{
    gq_sim_hop h[GQ_SIM_MAX_HOPS];
    int mem = host_memory(s, a, GQ_NUMA_LOCAL, err);
    if (mem < 0)
        return mem;
    int n = route_or_fail(s, gnode(s->m, a), mem, false, h, err);
    if (n < 0)
        return n;
    pathinfo scratch = {0};
    if (add_route(s, &fb->main, h, n, false, false, &fb->pleg[0]) ||
        add_route(s, &fb->leg[0], h, n, false, false, &scratch))
        return gq_err_set(err, GQ_E_NOMEM, "out of memory");
    n = route_or_fail(s, mem, gnode(s->m, b), false, h, err);
    if (n < 0)
        return n;
    if (add_route(s, &fb->main, h, n, false, false, &fb->pleg[1]) ||
        add_route(s, &fb->leg[1], h, n, false, false, &scratch))
        return gq_err_set(err, GQ_E_NOMEM, "out of memory");
    cap_min(&fb->pmain.flowcap, fb->pleg[0].flowcap);
    cap_min(&fb->pmain.flowcap, fb->pleg[1].flowcap);
    cap_min(&fb->pmain.phys, fb->pleg[0].phys);
    cap_min(&fb->pmain.phys, fb->pleg[1].phys);
    fb->pmain.cost = fb->pleg[0].cost + fb->pleg[1].cost;
    fb->pmain.lat = fb->pleg[0].lat + fb->pleg[1].lat;
    return GQ_OK;
}

static int build_flow(const sim_priv *s, const gq_flow *f, int i, gq_group *g, flow_build *fb, gq_err *err)
{
    const gq_sim_machine *m = s->m;
    int rc;
    char sb[32], db[32];
    if ((rc = check_endpoint(s, f->src, err)) || (rc = check_endpoint(s, f->dst, err)))
        return gq_err_prefix(err, "flow %d", i);
    if (f->bytes == 0)
        return gq_err_set(err, GQ_E_USAGE, "flow %d: a copy of 0 bytes", i);
    if ((unsigned)f->method > GQ_METHOD_DRIVER_STAGED)
        return gq_err_set(err, GQ_E_USAGE, "flow %d: unknown method %d", i, (int)f->method);
    gq_endpoint src = f->src, dst = f->dst;
    if (src.kind == GQ_EP_HOST && dst.kind == GQ_EP_HOST)
        return gq_err_set(err, GQ_E_USAGE, "flow %d: host-to-host copies are not a GPU test", i);
    bool gpu_pair = src.kind == GQ_EP_GPU && dst.kind == GQ_EP_GPU;
    int gpu_end = src.kind == GQ_EP_GPU ? src.index : dst.index;
    if (!gpu_pair && f->exec_gpu != gpu_end)
        return gq_err_set(err, GQ_E_USAGE, "flow %d (%s -> %s): exec_gpu %d must be the GPU end, %d", i,
                          gq_endpoint_str(src, sb, sizeof sb), gq_endpoint_str(dst, db, sizeof db),
                          f->exec_gpu, gpu_end);
    if (gpu_pair && f->exec_gpu != src.index && f->exec_gpu != dst.index)
        return gq_err_set(err, GQ_E_USAGE,
                          "flow %d (%s -> %s): exec_gpu %d must be the source (write) or the "
                          "destination (read)",
                          i, gq_endpoint_str(src, sb, sizeof sb), gq_endpoint_str(dst, db, sizeof db),
                          f->exec_gpu);
    if ((f->method == GQ_METHOD_STAGED || f->method == GQ_METHOD_DRIVER_STAGED) &&
        (!gpu_pair || src.index == dst.index))
        return gq_err_set(err, GQ_E_USAGE, "flow %d: %s copies go from one GPU to another", i,
                          gq_method_name(f->method));
    bool sm = f->method == GQ_METHOD_SM;
    gq_sim_hop h[GQ_SIM_MAX_HOPS];
    g->host_numa[i] = -1;
    g->kind[i] = K_PLAIN;
    g->leg0[i] = -1;
    if (!gpu_pair) {
        gq_endpoint host = src.kind == GQ_EP_HOST ? src : dst;
        int mem = host_memory(s, gpu_end, host.index, err);
        if (mem < 0)
            return mem;
        g->host_numa[i] = m->nodes[mem].numa;
        int n = src.kind == GQ_EP_HOST ? route_or_fail(s, mem, gnode(m, gpu_end), false, h, err)
                                       : route_or_fail(s, gnode(m, gpu_end), mem, false, h, err);
        if (n < 0)
            return n;
        if (add_route(s, &fb->main, h, n, sm, false, &fb->pmain) ||
            ebuf_add(&fb->main, C_GPU(s, gpu_end), 1.0, 1.0))
            return gq_err_set(err, GQ_E_NOMEM, "out of memory");
        return GQ_OK;
    }
    int a = src.index, b = dst.index;
    if (a == b) { /* local copy: device memory, read + write */
        if (ebuf_add(&fb->main, C_GPU(s, a), 2.0, 1.0))
            return gq_err_set(err, GQ_E_NOMEM, "out of memory");
        return GQ_OK;
    }
    gq_method meth = f->method;
    if (!p2p_possible(m, a, b) && (meth == GQ_METHOD_CE || meth == GQ_METHOD_SM)) {
        if (meth == GQ_METHOD_SM)
            return gq_err_set(
                err, GQ_E_UNSUPP,
                "flow %d: an SM copy from GPU %d to GPU %d needs peer access, which this machine does "
                "not have (%s)",
                i, a, b, gq_p2p_status_name(gq_sim_pair_p2p(m, a, b)));
        meth = GQ_METHOD_DRIVER_STAGED; /* what cudaMemcpyPeer does without P2P */
    }
    if (meth == GQ_METHOD_CE || meth == GQ_METHOD_SM) {
        int n = route_or_fail(s, gnode(m, a), gnode(m, b), true, h, err);
        if (n < 0)
            return n;
        if (add_route(s, &fb->main, h, n, sm, true, &fb->pmain))
            return gq_err_set(err, GQ_E_NOMEM, "out of memory");
    } else {
        if ((rc = staged_legs(s, a, b, fb, err)))
            return rc;
        if (meth == GQ_METHOD_STAGED) {
            uint64_t chunk = f->chunk_bytes ? f->chunk_bytes : 8 * GQ_MiB;
            if (chunk > f->bytes)
                chunk = f->bytes;
            uint64_t nchunks = (f->bytes + chunk - 1) / chunk;
            fb->pmain.cost += (double)nchunks * m->chunk_cost;
            /* the pipeline fills with one chunk before both legs run: charged
             * as the time of that chunk at the stream's rate, see run() */
        } else {
            g->kind[i] = K_DRIVER;
        }
    }
    if (ebuf_add(&fb->main, C_GPU(s, a), 1.0, 1.0) || ebuf_add(&fb->main, C_GPU(s, b), 1.0, 1.0))
        return gq_err_set(err, GQ_E_NOMEM, "out of memory");
    return GQ_OK;
}

static void fill_caps(const sim_priv *s, gq_sim_problem *p)
{
    const gq_sim_machine *m = s->m;
    for (int l = 0; l < m->nlink; l++) {
        p->cap[C_DIR(l, 0)] = m->links[l].cap[0];
        p->cap[C_DIR(l, 1)] = m->links[l].cap[1];
        p->cap[C_DUP(l)] = m->links[l].duplex > 0 ? m->links[l].duplex : INFINITY;
    }
    for (int g = 0; g < m->ngpu; g++)
        p->cap[C_GPU(s, g)] = 2.0 * m->gpus[g].local_copy;
}

static int copy_entries(gq_sim_problem *p, int f, const ebuf *b, int *ne)
{
    p->first[f] = *ne;
    if (b->n > 0) /* b->e may be NULL when empty; memcpy(NULL, 0) is undefined */
        memcpy(p->ent + *ne, b->e, sizeof *b->e * (size_t)b->n);
    *ne += b->n;
    p->first[f + 1] = *ne;
    return 0;
}

/* The noise model's class of a flow's path (noise.c). */
static int path_class(const gq_sim_machine *m, const gq_flow *f, int kind)
{
    if (f->src.kind == GQ_EP_HOST || f->dst.kind == GQ_EP_HOST || kind == K_DRIVER ||
        f->method == GQ_METHOD_STAGED || f->method == GQ_METHOD_DRIVER_STAGED)
        return GQ_SIM_PC_HOST;
    if (f->src.index == f->dst.index)
        return GQ_SIM_PC_LOCAL;
    return gq_sim_nvlinks(m, f->src.index, f->dst.index) > 0 ? GQ_SIM_PC_NVLINK : GQ_SIM_PC_P2P;
}

/* The path a flow's drift belongs to: its two ends (host memory by the NUMA
 * node it resolved to) and its class; not the method or the group. */
static uint64_t path_key(const gq_flow *f, int host_numa, int cls)
{
    uint64_t a = f->src.kind == GQ_EP_HOST ? 1000u + (uint64_t)(host_numa + 1) : (uint64_t)f->src.index;
    uint64_t b = f->dst.kind == GQ_EP_HOST ? 1000u + (uint64_t)(host_numa + 1) : (uint64_t)f->dst.index;
    return gq_sim_hash(gq_sim_hash(a + 7, b + 7), (uint64_t)cls);
}

/* A flow is shared when another flow of the group uses one of its links
 * (either direction, or the duplex budget) or one of its GPUs; a copy
 * staged through host memory always is (its two legs run at once, and
 * measured so: docs/method.md). */
static int mark_shared(const sim_priv *s, gq_group *g, gq_err *err)
{
    int *users = calloc((size_t)s->nc, sizeof *users), *stamp = malloc(sizeof *stamp * (size_t)s->nc);
    if (!users || !stamp) {
        free(users);
        free(stamp);
        return gq_err_set(err, GQ_E_NOMEM, "out of memory");
    }
    const gq_sim_problem *p = g->main;
    int nl3 = 3 * s->m->nlink;
    for (int c = 0; c < s->nc; c++)
        stamp[c] = -1;
    /* each flow counts once per link (its three constraints are one link) and GPU */
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < g->n; i++) {
            if (pass)
                g->shared[i] = g->kind[i] == K_DRIVER || g->flows[i].method == GQ_METHOD_STAGED;
            for (int e = p->first[i]; e < p->first[i + 1]; e++) {
                int c = p->ent[e].c < nl3 ? p->ent[e].c / 3 * 3 : p->ent[e].c;
                if (!pass && stamp[c] != i) {
                    stamp[c] = i;
                    users[c]++;
                }
                if (pass && users[c] > 1)
                    g->shared[i] = true;
            }
            g->nshared += pass && g->shared[i];
        }
    free(users);
    free(stamp);
    return GQ_OK;
}

static int sim_prepare(gq_backend *be, const gq_flow *flows, int nflows, gq_group **out, gq_err *err)
{
    sim_priv *s = P(be);
    *out = NULL;
    if (nflows <= 0)
        return gq_err_set(err, GQ_E_USAGE, "a group needs at least one flow");
    int rc = gq_flows_check_splits(flows, nflows, err);
    if (rc != GQ_OK)
        return rc;
    gq_group *g = calloc(1, sizeof *g);
    flow_build *fb = calloc((size_t)nflows, sizeof *fb);
    if (!g || !fb) {
        rc = gq_err_set(err, GQ_E_NOMEM, "out of memory");
        goto out;
    }
    g->n = nflows;
    g->flows = malloc(sizeof *g->flows * (size_t)nflows);
    g->kind = calloc((size_t)nflows, sizeof *g->kind);
    g->host_numa = calloc((size_t)nflows, sizeof *g->host_numa);
    g->flowcap = calloc((size_t)nflows, sizeof *g->flowcap);
    g->phys = calloc((size_t)nflows, sizeof *g->phys);
    g->cost = calloc((size_t)nflows, sizeof *g->cost);
    g->key = calloc((size_t)nflows, sizeof *g->key);
    g->leg0 = calloc((size_t)nflows, sizeof *g->leg0);
    g->cls = calloc((size_t)nflows, sizeof *g->cls);
    g->path = calloc((size_t)nflows, sizeof *g->path);
    g->shared = calloc((size_t)nflows, sizeof *g->shared);
    if (!g->flows || !g->kind || !g->host_numa || !g->flowcap || !g->phys || !g->cost || !g->key ||
        !g->leg0 || !g->cls || !g->path || !g->shared) {
        rc = gq_err_set(err, GQ_E_NOMEM, "out of memory");
        goto out;
    }
    memcpy(g->flows, flows, sizeof *flows * (size_t)nflows);
    int ne_main = 0, ne_legs = 0;
    for (int i = 0; i < nflows; i++) {
        if ((rc = build_flow(s, &flows[i], i, g, &fb[i], err)))
            goto out;
        const gq_flow *f = &flows[i];
        g->flowcap[i] = fb[i].pmain.flowcap;
        g->phys[i] = fb[i].pmain.phys;
        g->cost[i] = fb[i].pmain.cost;
        uint64_t k = gq_sim_hash((uint64_t)f->src.kind * 131u + (uint64_t)(f->src.index + 2),
                                 (uint64_t)f->dst.kind * 131u + (uint64_t)(f->dst.index + 2));
        k = gq_sim_hash(k, (uint64_t)f->method * 257u + (uint64_t)f->exec_gpu);
        g->key[i] = gq_sim_hash(k, (uint64_t)i);
        g->cls[i] = path_class(s->m, f, g->kind[i]);
        g->path[i] = path_key(f, g->host_numa[i], g->cls[i]);
        ne_main += fb[i].main.n;
        if (g->kind[i] == K_DRIVER) {
            g->leg0[i] = nflows + 2 * g->ndriver;
            g->ndriver++;
            ne_legs += fb[i].leg[0].n + fb[i].leg[1].n;
        } else {
            ne_legs += fb[i].main.n;
        }
    }
    g->main = gq_sim_problem_alloc(s->nc, nflows, ne_main);
    if (!g->main) {
        rc = gq_err_set(err, GQ_E_NOMEM, "out of memory");
        goto out;
    }
    fill_caps(s, g->main);
    int ne = 0;
    for (int i = 0; i < nflows; i++) {
        copy_entries(g->main, i, &fb[i].main, &ne);
        g->main->demand[i] = g->flowcap[i];
    }
    if ((rc = mark_shared(s, g, err)))
        goto out;
    if (g->ndriver) {
        int nf = nflows + 2 * g->ndriver;
        g->legs = gq_sim_problem_alloc(s->nc, nf, ne_legs);
        if (!g->legs) {
            rc = gq_err_set(err, GQ_E_NOMEM, "out of memory");
            goto out;
        }
        fill_caps(s, g->legs);
        ne = 0;
        for (int i = 0; i < nflows; i++) {
            static const ebuf empty = {0};
            copy_entries(g->legs, i, g->kind[i] == K_DRIVER ? &empty : &fb[i].main, &ne);
            g->legs->demand[i] = g->flowcap[i];
        }
        for (int i = 0; i < nflows; i++)
            if (g->kind[i] == K_DRIVER)
                for (int k = 0; k < 2; k++) {
                    copy_entries(g->legs, g->leg0[i] + k, &fb[i].leg[k], &ne);
                    g->legs->demand[g->leg0[i] + k] = fb[i].pleg[k].flowcap;
                }
    }
    *out = g;
    g = NULL;
out:
    if (fb)
        for (int i = 0; i < nflows; i++) {
            free(fb[i].main.e);
            free(fb[i].leg[0].e);
            free(fb[i].leg[1].e);
        }
    free(fb);
    group_free(g);
    return rc;
}

/* ---- latency, memory, clock ------------------------------------------------------------------- */

static double route_lat(const sim_priv *s, int from, int to, bool nvlink, int *ok)
{
    gq_sim_hop h[GQ_SIM_MAX_HOPS];
    int n = gq_sim_route(s->m, from, to, nvlink, h, GQ_SIM_MAX_HOPS);
    if (n < 0) {
        *ok = 0;
        return 0;
    }
    double lat = 0;
    for (int i = 0; i < n; i++)
        lat += s->m->links[h[i].link].lat;
    return lat;
}

static int sim_latency(gq_backend *be, const gq_latency_req *q, double *ns, gq_err *err)
{
    sim_priv *s = P(be);
    const gq_sim_machine *m = s->m;
    int rc;
    if (q->exec_gpu < 0 || q->exec_gpu >= m->ngpu)
        return gq_err_set(err, GQ_E_USAGE, "GPU %d does not exist (this machine has GPUs 0-%d)", q->exec_gpu,
                          m->ngpu - 1);
    if ((rc = check_endpoint(s, q->target, err)))
        return rc;
    gq_sim_measure_call(s);
    int e = q->exec_gpu, ok = 1;
    double sec;
    gq_sim_path_class cls = GQ_SIM_PC_HOST; /* the noise model's class of the path crossed */
    if (q->target.kind == GQ_EP_HOST) {
        int mem = host_memory(s, e, q->target.index, err);
        if (mem < 0)
            return mem;
        double path = route_lat(s, gnode(m, e), mem, false, &ok);
        sec = q->kind == GQ_LAT_POINTER_CHASE ? m->lat_chase + 2 * path + m->nodes[mem].lat
                                              : m->lat_copy + path;
    } else {
        int t = q->target.index;
        cls = t == e ? GQ_SIM_PC_LOCAL : gq_sim_nvlinks(m, e, t) > 0 ? GQ_SIM_PC_NVLINK : GQ_SIM_PC_P2P;
        if (t == e) {
            sec = (q->kind == GQ_LAT_POINTER_CHASE ? m->lat_chase : m->lat_copy) + m->gpus[t].memlat;
        } else if (q->kind == GQ_LAT_POINTER_CHASE) {
            if (!p2p_possible(m, e, t))
                return gq_err_set(
                    err, GQ_E_UNSUPP,
                    "a pointer chase from GPU %d into GPU %d needs peer access, which this machine "
                    "does not have (%s)",
                    e, t, gq_p2p_status_name(gq_sim_pair_p2p(m, e, t)));
            sec = m->lat_chase + 2 * route_lat(s, gnode(m, e), gnode(m, t), true, &ok) + m->gpus[t].memlat;
        } else if (q->p2p && p2p_possible(m, e, t)) {
            sec = m->lat_copy + route_lat(s, gnode(m, e), gnode(m, t), true, &ok);
        } else {
            int mem = host_memory(s, e, GQ_NUMA_LOCAL, err);
            if (mem < 0)
                return mem;
            cls = GQ_SIM_PC_HOST; /* the driver stages it through host memory */
            sec = m->lat_copy + m->lat_staged + route_lat(s, gnode(m, e), mem, false, &ok) +
                  route_lat(s, mem, gnode(m, t), false, &ok);
        }
    }
    if (!ok)
        return gq_err_set(err, GQ_E_BACKEND, "sim: no route for this latency measurement");
    uint64_t call = ++s->calls;
    uint64_t path = gq_sim_hash((uint64_t)q->kind * 1000003u + (uint64_t)q->target.kind * 1009u +
                                    (uint64_t)(q->target.index + 2) * 31u + (uint64_t)e,
                                (uint64_t)cls);
    sec *= gq_sim_latency_noise(s->seed, s->noise, cls, path, call);
    *ns = sec * 1e9;
    s->clock += sec * (q->iters > 0 ? q->iters : 1) + 10e-6;
    return GQ_OK;
}

static int sim_mem_info(gq_backend *be, int gpu, uint64_t *free_bytes, uint64_t *total_bytes, gq_err *err)
{
    sim_priv *s = P(be);
    if (gpu < 0 || gpu >= s->m->ngpu)
        return gq_err_set(err, GQ_E_USAGE, "GPU %d does not exist (this machine has GPUs 0-%d)", gpu,
                          s->m->ngpu - 1);
    uint64_t total = s->m->gpus[gpu].mem;
    if (total_bytes)
        *total_bytes = total;
    if (free_bytes)
        *free_bytes = total / 100 * 95;
    return GQ_OK;
}

static int sim_host_mem_avail(gq_backend *be, int numa, uint64_t *bytes, gq_err *err)
{
    sim_priv *s = P(be);
    if (numa != -1 && (numa < 0 || numa >= s->numa_count))
        return gq_err_set(err, GQ_E_USAGE, "NUMA node %d does not exist (this machine has %s%d)", numa,
                          s->numa_count > 1 ? "nodes 0-" : "node ", s->numa_count - 1);
    uint64_t sum = 0;
    for (int n = 0; n < s->m->nnode; n++) {
        const gq_sim_node *nd = &s->m->nodes[n];
        if (nd->kind == GQ_SIM_MEMORY && (numa < 0 || nd->numa == numa))
            sum += nd->avail;
    }
    *bytes = sum;
    return GQ_OK;
}

static double sim_now(gq_backend *be)
{
    return P(be)->clock;
}

static void sim_wait(gq_backend *be, double seconds)
{
    if (seconds > 0 && gq_sim_stress_loaded(P(be)->stress))
        gq_sim_measure_call(P(be)); /* a stress tick */
    if (seconds > 0)
        P(be)->clock += seconds;
    gq_sim_stress_wait(P(be)->stress, seconds);
}

static int sim_stress_start(gq_backend *be, int gpu, gq_precision p, gq_err *err)
{
    return gq_sim_stress_start(P(be)->stress, be, gpu, p, err);
}

static int sim_stress_poll(gq_backend *be, int gpu, uint64_t *gemms, uint64_t *faulty, double *tflops,
                           gq_err *err)
{
    return gq_sim_stress_poll(P(be)->stress, be, gpu, gemms, faulty, tflops, err);
}

static int sim_stress_stop(gq_backend *be, int gpu, gq_err *err)
{
    return gq_sim_stress_stop(P(be)->stress, be, gpu, err);
}

static int sim_sample(gq_backend *be, int gpu, gq_sample *x, gq_err *err)
{
    return gq_sim_sample(P(be)->stress, be, gpu, x, err);
}

const gq_backend_ops gq_backend_sim_ops = {
    .version = GQ_BACKEND_OPS_VERSION,
    .observe = sim_observe,
    .name = "sim",
    .flags = GQ_BE_SIMULATED | GQ_BE_VIRTUAL_TIME,
    .options = sim_options,
    .opts_size = sizeof(sim_opts),
    .opt_default = sim_opt_default,
    .opt_parse = sim_opt_parse,
    .init = sim_init,
    .fini = sim_fini,
    .discover = gq_sim_be_discover,
    .prepare = sim_prepare,
    .run = gq_sim_be_run,
    .release = sim_release,
    .latency = sim_latency,
    .mem_info = sim_mem_info,
    .host_mem_avail = sim_host_mem_avail,
    .now = sim_now,
    .stress_start = sim_stress_start,
    .stress_poll = sim_stress_poll,
    .stress_stop = sim_stress_stop,
    .sample = sim_sample,
    .wait = sim_wait,
    .coll_probe = gq_sim_coll_probe,
    .coll_run = gq_sim_coll_run,
};
