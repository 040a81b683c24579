#include "measure/catalog.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/units.h"

enum { DIR_H2D = 0, DIR_D2H = 1, DIR_BOTH = 2 };
enum { V_READ = 0, V_WRITE = 1 };
enum { V_BIDIR = 4 }; /* host tests: the measured direction runs against its reverse */
enum { V_DISABLED = 0, V_ENABLED = 1 };

/* nvbandwidth chases 1M loads in one sample; 100k per round (757 per SM on
 * an H200) keeps 5 rounds short while each launch still times ~1 ms. */
#define DEFAULT_CHASE_ITERS GQ_CATALOG_CHASE_ITERS
#define DEFAULT_COPY_ITERS 2000

/* ---- plan building ------------------------------------------------------- */

static int grow(void **p, int *cap, int need, size_t elem)
{
    if (need <= *cap)
        return GQ_OK;
    int nc = *cap ? *cap : 16;
    while (nc < need)
        nc *= 2;
    void *q = realloc(*p, (size_t)nc * elem);
    if (!q)
        return GQ_E_NOMEM;
    *p = q;
    *cap = nc;
    return GQ_OK;
}

static int begin_item(gq_plan *p, bool aggregate, bool sums)
{
    if (grow((void **)&p->items, &p->cap, p->n + 1, sizeof *p->items))
        return GQ_E_NOMEM;
    gq_plan_item *it = &p->items[p->n++];
    memset(it, 0, sizeof *it);
    it->flow_off = p->nflows;
    it->aggregate = aggregate;
    it->direction_sums = sums;
    return GQ_OK;
}

static int add_flow(gq_plan *p, gq_endpoint src, gq_endpoint dst, gq_method method, int exec, uint64_t bytes,
                    bool report)
{
    gq_plan_item *it = &p->items[p->n - 1];
    if (it->nflows >= GQ_MAX_FLOWS)
        return GQ_E_USAGE;
    int rc = grow((void **)&p->flows, &p->flows_cap, p->nflows + 1, sizeof *p->flows);
    if (rc)
        return rc;
    int cap = p->flows_cap;
    bool *nr = realloc(p->report, (size_t)cap * sizeof *nr);
    if (!nr)
        return GQ_E_NOMEM;
    p->report = nr;
    gq_flow *f = &p->flows[p->nflows];
    memset(f, 0, sizeof *f);
    f->src = src;
    f->dst = dst;
    f->method = method;
    f->exec_gpu = exec;
    f->bytes = bytes;
    f->tag = it->nflows;
    f->interferer = !report;
    p->report[p->nflows] = report;
    p->nflows++;
    it->nflows++;
    return GQ_OK;
}

static int add_latency(gq_plan *p, gq_lat_kind kind, gq_endpoint target, int exec, bool p2p, int iters)
{
    if (grow((void **)&p->items, &p->cap, p->n + 1, sizeof *p->items))
        return GQ_E_NOMEM;
    gq_plan_item *it = &p->items[p->n++];
    memset(it, 0, sizeof *it);
    it->is_latency = true;
    it->flow_off = p->nflows;
    it->lat.kind = kind;
    it->lat.target = target;
    it->lat.exec_gpu = exec;
    it->lat.p2p = p2p;
    it->lat.iters = iters;
    return GQ_OK;
}

static gq_endpoint gpu(int i)
{
    return (gq_endpoint){GQ_EP_GPU, i};
}

static gq_endpoint host(int node)
{
    return (gq_endpoint){GQ_EP_HOST, node};
}

static int host_nodes(const gq_plan_opts *o, int *nodes)
{
    if (o->host_numa != GQ_HOST_NUMA_ALL) {
        nodes[0] = o->host_numa;
        return 1;
    }
    int n = o->numa_nodes < 1 ? 1 : (o->numa_nodes > GQ_MAX_NUMA ? GQ_MAX_NUMA : o->numa_nodes);
    for (int i = 0; i < n; i++)
        nodes[i] = i;
    return n;
}

/* Can GPU a access GPU b's memory directly? Unknown counts as yes: the
 * backend then reports what happens. */
static bool peer_ok(const gq_topo *t, int a, int b)
{
    return t->p2p_cuda[a][b] != 0;
}

#define CHECK(x)                                                                                             \
    do {                                                                                                     \
        int rc_ = (x);                                                                                       \
        if (rc_)                                                                                             \
            return gq_err_set(err, rc_, "%s: %s", t->name,                                                   \
                              rc_ == GQ_E_NOMEM ? "out of memory" : "too many flows in one measurement");    \
    } while (0)

/* ---- plan functions ------------------------------------------------------ */

/* nvbandwidth's bidirectional SM method: ONE split-warp kernel per GPU,
 * its even warps copying the measured direction and its odd warps the
 * reverse, each half of the buffer (so the pinned and device memory are
 * nvbandwidth's); nvbandwidth reports the kernel's bytes / time / 2, which
 * is each direction's rate here. The reverse flow is not reported, but it
 * is a real copy, checked like the measured one. */
static int add_split_pair(gq_plan *p, gq_endpoint src, gq_endpoint dst, int exec, uint64_t bytes)
{
    uint64_t half = bytes / 2 > 0 ? bytes / 2 : 1;
    int rc = add_flow(p, src, dst, GQ_METHOD_SM, exec, half, true);
    if (rc)
        return rc;
    if ((rc = add_flow(p, dst, src, GQ_METHOD_SM, exec, half, false)))
        return rc;
    const gq_plan_item *it = &p->items[p->n - 1];
    gq_flow *a = &p->flows[p->nflows - 2], *b = &p->flows[p->nflows - 1];
    b->interferer = false;
    a->split_with = it->nflows;     /* 1 + index of b in the group */
    b->split_with = it->nflows - 1; /* 1 + index of a */
    return GQ_OK;
}

/* Each GPU alone; the bidirectional variant adds the reverse flow on the same
 * GPU as interference, not reported (nvbandwidth's meaning). Interfering
 * copies run until the measured ones are done (the backend contract); the
 * SM variant is nvbandwidth's split-warp kernel (add_split_pair). */
static int plan_host_each(const gq_test *t, const gq_topo *topo, const gq_plan_opts *o, gq_plan *p,
                          gq_err *err)
{
    int nodes[GQ_MAX_NUMA], nn = host_nodes(o, nodes);
    int dir = t->variant & 3;
    bool bidir = (t->variant & V_BIDIR) != 0;
    for (int k = 0; k < nn; k++)
        for (int i = 0; i < o->ngpus; i++) {
            int g = o->gpus[i];
            CHECK(begin_item(p, false, false));
            gq_endpoint h = host(nodes[k]), d = gpu(g);
            if (bidir && t->method == GQ_METHOD_SM) {
                CHECK(add_split_pair(p, dir == DIR_H2D ? h : d, dir == DIR_H2D ? d : h, g, o->bytes));
                continue;
            }
            CHECK(add_flow(p, dir == DIR_H2D ? h : d, dir == DIR_H2D ? d : h, t->method, g, o->bytes, true));
            if (bidir)
                CHECK(add_flow(p, dir == DIR_H2D ? d : h, dir == DIR_H2D ? h : d, t->method, g, 2 * o->bytes,
                               false));
        }
    return GQ_OK;
}

/* Every GPU at once, each reported, plus the aggregate; the bidirectional
 * variant adds every reverse flow as interference. */
static int plan_host_all(const gq_test *t, const gq_topo *topo, const gq_plan_opts *o, gq_plan *p,
                         gq_err *err)
{
    int nodes[GQ_MAX_NUMA], nn = host_nodes(o, nodes);
    int dir = t->variant & 3;
    bool bidir = (t->variant & V_BIDIR) != 0;
    for (int k = 0; k < nn; k++) {
        CHECK(begin_item(p, true, false));
        gq_endpoint h = host(nodes[k]);
        if (bidir && t->method == GQ_METHOD_SM) {
            for (int i = 0; i < o->ngpus; i++) {
                int g = o->gpus[i];
                CHECK(
                    add_split_pair(p, dir == DIR_H2D ? h : gpu(g), dir == DIR_H2D ? gpu(g) : h, g, o->bytes));
            }
            continue;
        }
        for (int i = 0; i < o->ngpus; i++) {
            int g = o->gpus[i];
            CHECK(add_flow(p, dir == DIR_H2D ? h : gpu(g), dir == DIR_H2D ? gpu(g) : h, t->method, g,
                           o->bytes, true));
        }
        if (bidir)
            for (int i = 0; i < o->ngpus; i++) {
                int g = o->gpus[i];
                CHECK(add_flow(p, dir == DIR_H2D ? gpu(g) : h, dir == DIR_H2D ? h : gpu(g), t->method, g,
                               2 * o->bytes, false));
            }
    }
    return GQ_OK;
}

/* The --gpus set at once: per GPU, the aggregate, and for both directions
 * the per-direction aggregates and their sum (seed 000's table). Both
 * directions at once share one read-only host source between the GPUs
 * (each destination is its own and checked): that keeps the pinned memory
 * of the test at 3 buffers per GPU pair instead of 4. */
static int plan_set(const gq_test *t, const gq_topo *topo, const gq_plan_opts *o, gq_plan *p, gq_err *err)
{
    int nodes[GQ_MAX_NUMA], nn = host_nodes(o, nodes);
    for (int k = 0; k < nn; k++) {
        gq_endpoint h = host(nodes[k]);
        CHECK(begin_item(p, true, t->variant == DIR_BOTH));
        for (int i = 0; i < o->ngpus; i++) {
            int g = o->gpus[i];
            if (t->variant != DIR_D2H) {
                CHECK(add_flow(p, h, gpu(g), t->method, g, o->bytes, true));
                p->flows[p->nflows - 1].share_src = t->variant == DIR_BOTH;
            }
            if (t->variant != DIR_H2D)
                CHECK(add_flow(p, gpu(g), h, t->method, g, o->bytes, true));
        }
    }
    return GQ_OK;
}

static void rw_flow(int variant, int exec, int other, gq_endpoint *src, gq_endpoint *dst)
{
    if (variant == V_READ) { /* exec pulls from other */
        *src = gpu(other);
        *dst = gpu(exec);
    } else { /* exec pushes to other */
        *src = gpu(exec);
        *dst = gpu(other);
    }
}

/* Every ordered pair, one at a time; row = executing GPU. */
static int plan_d2d(const gq_test *t, const gq_topo *topo, const gq_plan_opts *o, gq_plan *p, gq_err *err)
{
    for (int i = 0; i < o->ngpus; i++)
        for (int k = 0; k < o->ngpus; k++) {
            int r = o->gpus[i], c = o->gpus[k];
            if (r == c || !peer_ok(topo, r, c))
                continue;
            gq_endpoint s, d;
            rw_flow(t->variant, r, c, &s, &d);
            CHECK(begin_item(p, false, false));
            CHECK(add_flow(p, s, d, t->method, r, o->bytes, true));
        }
    return GQ_OK;
}

/* Both directions of a pair at once: per-direction records and their sum.
 * Each unordered pair is measured once; its two flows fill cells (a,b) and
 * (b,a), which nvbandwidth measures twice with the roles swapped. */
static int plan_d2d_bidir(const gq_test *t, const gq_topo *topo, const gq_plan_opts *o, gq_plan *p,
                          gq_err *err)
{
    for (int i = 0; i < o->ngpus; i++)
        for (int k = i + 1; k < o->ngpus; k++) {
            int a = o->gpus[i], b = o->gpus[k];
            if (!peer_ok(topo, a, b) || !peer_ok(topo, b, a))
                continue;
            gq_endpoint s, d;
            CHECK(begin_item(p, false, true));
            rw_flow(t->variant, a, b, &s, &d);
            CHECK(add_flow(p, s, d, t->method, a, o->bytes, true));
            rw_flow(t->variant, b, a, &s, &d);
            CHECK(add_flow(p, s, d, t->method, b, o->bytes, true));
        }
    return GQ_OK;
}

/* all_to_one: every other GPU writes into the target (write), or reads from
 * it (read: nvbandwidth swaps the buffers and runs on the others). */
static int plan_all_to_one(const gq_test *t, const gq_topo *topo, const gq_plan_opts *o, gq_plan *p,
                           gq_err *err)
{
    for (int i = 0; i < o->ngpus; i++) {
        int tg = o->gpus[i];
        int n = 0;
        for (int k = 0; k < o->ngpus; k++) {
            int x = o->gpus[k];
            if (x == tg || !peer_ok(topo, x, tg))
                continue;
            if (n++ == 0)
                CHECK(begin_item(p, true, false));
            if (t->variant == V_WRITE)
                CHECK(add_flow(p, gpu(x), gpu(tg), t->method, x, o->bytes, true));
            else
                CHECK(add_flow(p, gpu(tg), gpu(x), t->method, x, o->bytes, true));
        }
    }
    return GQ_OK;
}

/* one_to_all: the target writes to every other GPU (write), or reads from
 * every other GPU (read). */
static int plan_one_to_all(const gq_test *t, const gq_topo *topo, const gq_plan_opts *o, gq_plan *p,
                           gq_err *err)
{
    for (int i = 0; i < o->ngpus; i++) {
        int tg = o->gpus[i];
        int n = 0;
        for (int k = 0; k < o->ngpus; k++) {
            int x = o->gpus[k];
            if (x == tg || !peer_ok(topo, tg, x))
                continue;
            if (n++ == 0)
                CHECK(begin_item(p, true, false));
            if (t->variant == V_WRITE)
                CHECK(add_flow(p, gpu(tg), gpu(x), t->method, tg, o->bytes, true));
            else
                CHECK(add_flow(p, gpu(x), gpu(tg), t->method, tg, o->bytes, true));
        }
    }
    return GQ_OK;
}

static int plan_local(const gq_test *t, const gq_topo *topo, const gq_plan_opts *o, gq_plan *p, gq_err *err)
{
    for (int i = 0; i < o->ngpus; i++) {
        int g = o->gpus[i];
        CHECK(begin_item(p, false, false));
        CHECK(add_flow(p, gpu(g), gpu(g), t->method, g, o->bytes, true));
    }
    return GQ_OK;
}

/* Host-staged GPU -> GPU (P2P off), every ordered pair; row = source. */
static int plan_staged(const gq_test *t, const gq_topo *topo, const gq_plan_opts *o, gq_plan *p, gq_err *err)
{
    for (int i = 0; i < o->ngpus; i++)
        for (int k = 0; k < o->ngpus; k++) {
            int a = o->gpus[i], b = o->gpus[k];
            if (a == b)
                continue;
            CHECK(begin_item(p, false, false));
            CHECK(add_flow(p, gpu(a), gpu(b), t->method, a, o->bytes, true));
        }
    return GQ_OK;
}

/* p2pBandwidthLatencyTest: P2P enabled = peer copies (writes, by the
 * source), falling back to the driver's staged copy where a pair has no peer
 * access, as the CUDA sample does; disabled = the driver's staged copy. */
static gq_method p2p_method(const gq_test *t, const gq_topo *topo, int a, int b)
{
    if (t->variant == V_ENABLED && peer_ok(topo, a, b))
        return GQ_METHOD_CE;
    return GQ_METHOD_DRIVER_STAGED;
}

static int plan_p2p_uni(const gq_test *t, const gq_topo *topo, const gq_plan_opts *o, gq_plan *p, gq_err *err)
{
    for (int i = 0; i < o->ngpus; i++)
        for (int k = 0; k < o->ngpus; k++) {
            int a = o->gpus[i], b = o->gpus[k];
            if (a == b)
                continue;
            CHECK(begin_item(p, false, false));
            CHECK(add_flow(p, gpu(a), gpu(b), p2p_method(t, topo, a, b), a, o->bytes, true));
        }
    return GQ_OK;
}

static int plan_p2p_bi(const gq_test *t, const gq_topo *topo, const gq_plan_opts *o, gq_plan *p, gq_err *err)
{
    for (int i = 0; i < o->ngpus; i++)
        for (int k = i + 1; k < o->ngpus; k++) {
            int a = o->gpus[i], b = o->gpus[k];
            CHECK(begin_item(p, false, true));
            CHECK(add_flow(p, gpu(a), gpu(b), p2p_method(t, topo, a, b), a, o->bytes, true));
            CHECK(add_flow(p, gpu(b), gpu(a), p2p_method(t, topo, b, a), b, o->bytes, true));
        }
    return GQ_OK;
}

static int plan_p2p_lat(const gq_test *t, const gq_topo *topo, const gq_plan_opts *o, gq_plan *p, gq_err *err)
{
    int iters = o->lat_copy_iters > 0 ? o->lat_copy_iters : DEFAULT_COPY_ITERS;
    for (int i = 0; i < o->ngpus; i++)
        for (int k = 0; k < o->ngpus; k++) {
            int a = o->gpus[i], b = o->gpus[k];
            if (a == b)
                continue;
            bool on = t->variant == V_ENABLED && peer_ok(topo, a, b);
            CHECK(add_latency(p, GQ_LAT_COPY, gpu(b), a, on, iters));
        }
    return GQ_OK;
}

static int plan_host_lat(const gq_test *t, const gq_topo *topo, const gq_plan_opts *o, gq_plan *p,
                         gq_err *err)
{
    int nodes[GQ_MAX_NUMA], nn = host_nodes(o, nodes);
    int iters = o->lat_chase_iters > 0 ? o->lat_chase_iters : DEFAULT_CHASE_ITERS;
    for (int k = 0; k < nn; k++)
        for (int i = 0; i < o->ngpus; i++)
            CHECK(add_latency(p, GQ_LAT_POINTER_CHASE, host(nodes[k]), o->gpus[i], false, iters));
    return GQ_OK;
}

static int plan_d2d_lat(const gq_test *t, const gq_topo *topo, const gq_plan_opts *o, gq_plan *p, gq_err *err)
{
    int iters = o->lat_chase_iters > 0 ? o->lat_chase_iters : DEFAULT_CHASE_ITERS;
    for (int i = 0; i < o->ngpus; i++)
        for (int k = 0; k < o->ngpus; k++) {
            int r = o->gpus[i], c = o->gpus[k];
            if (r == c || !peer_ok(topo, r, c))
                continue;
            CHECK(add_latency(p, GQ_LAT_POINTER_CHASE, gpu(c), r, true, iters));
        }
    return GQ_OK;
}

#undef CHECK

/* ---- the table ----------------------------------------------------------- */

/* clang-format off */
#define HOST_TESTS(SUF, M, MS, BI) \
    {.name = "host_to_device_memcpy_" SUF, \
     .title = "memcpy " MS " CPU(row) -> GPU(column) bandwidth (GB/s)", \
     .description = "host -> each GPU alone (" MS ")", \
     .layout = GQ_LAYOUT_HOST_GPU, \
     .min_gpus = 1, \
     .nvbandwidth = true, \
     .plan = plan_host_each, \
     .method = M, \
     .variant = DIR_H2D}, \
    {.name = "device_to_host_memcpy_" SUF, \
     .title = "memcpy " MS " CPU(row) <- GPU(column) bandwidth (GB/s)", \
     .description = "each GPU alone -> host (" MS ")", \
     .layout = GQ_LAYOUT_HOST_GPU, \
     .min_gpus = 1, \
     .nvbandwidth = true, \
     .plan = plan_host_each, \
     .method = M, \
     .variant = DIR_D2H}, \
    {.name = "host_to_device_bidirectional_memcpy_" SUF, \
     .title = "memcpy " MS " CPU(row) <-> GPU(column) bandwidth (GB/s)", \
     .description = "host -> each GPU while that GPU also copies to the host; reports host -> GPU (" MS BI ")", \
     .layout = GQ_LAYOUT_HOST_GPU, \
     .min_gpus = 1, \
     .nvbandwidth = true, \
     .plan = plan_host_each, \
     .method = M, \
     .variant = DIR_H2D | V_BIDIR}, \
    {.name = "device_to_host_bidirectional_memcpy_" SUF, \
     .title = "memcpy " MS " CPU(row) <-> GPU(column) bandwidth (GB/s)", \
     .description = "each GPU -> host while the host also copies to it; reports GPU -> host (" MS BI ")", \
     .layout = GQ_LAYOUT_HOST_GPU, \
     .min_gpus = 1, \
     .nvbandwidth = true, \
     .plan = plan_host_each, \
     .method = M, \
     .variant = DIR_D2H | V_BIDIR}, \
    {.name = "device_to_device_memcpy_read_" SUF, \
     .title = "memcpy " MS " GPU(row) -> GPU(column) bandwidth (GB/s)", \
     .description = "every GPU pair, one at a time: the row GPU reads from the column GPU (" MS ")", \
     .layout = GQ_LAYOUT_GPU_GPU, \
     .min_gpus = 2, \
     .nvbandwidth = true, \
     .plan = plan_d2d, \
     .method = M, \
     .variant = V_READ}, \
    {.name = "device_to_device_memcpy_write_" SUF, \
     .title = "memcpy " MS " GPU(row) <- GPU(column) bandwidth (GB/s)", \
     .description = "every GPU pair, one at a time: the row GPU writes to the column GPU (" MS ")", \
     .layout = GQ_LAYOUT_GPU_GPU, \
     .min_gpus = 2, \
     .nvbandwidth = true, \
     .plan = plan_d2d, \
     .method = M, \
     .variant = V_WRITE}, \
    {.name = "device_to_device_bidirectional_memcpy_read_" SUF, \
     .title = "memcpy " MS " GPU(row) <-> GPU(column)", \
     .description = "every GPU pair, both GPUs reading from each other at once: each direction and the" \
                    " sum (" MS ")", \
     .layout = GQ_LAYOUT_GPU_BIDIR, \
     .min_gpus = 2, \
     .nvbandwidth = true, \
     .plan = plan_d2d_bidir, \
     .method = M, \
     .variant = V_READ}, \
    {.name = "device_to_device_bidirectional_memcpy_write_" SUF, \
     .title = "memcpy " MS " GPU(row) <-> GPU(column)", \
     .description = "every GPU pair, both GPUs writing to each other at once: each direction and the sum" \
                    " (" MS ")", \
     .layout = GQ_LAYOUT_GPU_BIDIR, \
     .min_gpus = 2, \
     .nvbandwidth = true, \
     .plan = plan_d2d_bidir, \
     .method = M, \
     .variant = V_WRITE}, \
    {.name = "all_to_host_memcpy_" SUF, \
     .title = "memcpy " MS " CPU(row) <- GPU(column) bandwidth (GB/s)", \
     .description = "every GPU -> host at once: each GPU and the aggregate (" MS ")", \
     .layout = GQ_LAYOUT_HOST_GPU, \
     .min_gpus = 1, \
     .nvbandwidth = true, \
     .plan = plan_host_all, \
     .method = M, \
     .variant = DIR_D2H}, \
    {.name = "all_to_host_bidirectional_memcpy_" SUF, \
     .title = "memcpy " MS " CPU(row) <-> GPU(column) bandwidth (GB/s)", \
     .description = "every GPU -> host while the host copies to every GPU; reports GPU -> host (" MS BI ")", \
     .layout = GQ_LAYOUT_HOST_GPU, \
     .min_gpus = 1, \
     .nvbandwidth = true, \
     .plan = plan_host_all, \
     .method = M, \
     .variant = DIR_D2H | V_BIDIR}, \
    {.name = "host_to_all_memcpy_" SUF, \
     .title = "memcpy " MS " CPU(row) -> GPU(column) bandwidth (GB/s)", \
     .description = "host -> every GPU at once: each GPU and the aggregate (" MS ")", \
     .layout = GQ_LAYOUT_HOST_GPU, \
     .min_gpus = 1, \
     .nvbandwidth = true, \
     .plan = plan_host_all, \
     .method = M, \
     .variant = DIR_H2D}, \
    {.name = "host_to_all_bidirectional_memcpy_" SUF, \
     .title = "memcpy " MS " CPU(row) <-> GPU(column) bandwidth (GB/s)", \
     .description = "host -> every GPU while every GPU copies to the host; reports host -> GPU (" MS BI ")", \
     .layout = GQ_LAYOUT_HOST_GPU, \
     .min_gpus = 1, \
     .nvbandwidth = true, \
     .plan = plan_host_all, \
     .method = M, \
     .variant = DIR_H2D | V_BIDIR}, \
    {.name = "all_to_one_write_" SUF, \
     .title = "memcpy " MS " GPU(row) <- GPU(column) bandwidth (GB/s)", \
     .description = "every other GPU writes to the column GPU at once: aggregate and each flow (" MS ")", \
     .layout = GQ_LAYOUT_TARGET, \
     .min_gpus = 2, \
     .nvbandwidth = true, \
     .plan = plan_all_to_one, \
     .method = M, \
     .variant = V_WRITE}, \
    {.name = "all_to_one_read_" SUF, \
     .title = "memcpy " MS " GPU(row) -> GPU(column) bandwidth (GB/s)", \
     .description = "every other GPU reads from the column GPU at once: aggregate and each flow (" MS ")", \
     .layout = GQ_LAYOUT_TARGET, \
     .min_gpus = 2, \
     .nvbandwidth = true, \
     .plan = plan_all_to_one, \
     .method = M, \
     .variant = V_READ}, \
    {.name = "one_to_all_write_" SUF, \
     .title = "memcpy " MS " GPU(row) -> GPU(column) bandwidth (GB/s)", \
     .description = "the column GPU writes to every other GPU at once: aggregate and each flow (" MS ")", \
     .layout = GQ_LAYOUT_TARGET, \
     .min_gpus = 2, \
     .nvbandwidth = true, \
     .plan = plan_one_to_all, \
     .method = M, \
     .variant = V_WRITE}, \
    {.name = "one_to_all_read_" SUF, \
     .title = "memcpy " MS " GPU(row) <- GPU(column) bandwidth (GB/s)", \
     .description = "the column GPU reads from every other GPU at once: aggregate and each flow (" MS ")", \
     .layout = GQ_LAYOUT_TARGET, \
     .min_gpus = 2, \
     .nvbandwidth = true, \
     .plan = plan_one_to_all, \
     .method = M, \
     .variant = V_READ}
/* clang-format on */

static const gq_test catalog[] = {
    HOST_TESTS("ce", GQ_METHOD_CE, "CE", ""),
    HOST_TESTS("sm", GQ_METHOD_SM, "SM", "; a split-warp kernel per GPU, half the buffer each way"),
    {.name = "host_device_latency_sm",
     .title = "memory latency SM CPU(row) <-> GPU(column) (ns)",
     .description = "pointer chase by each GPU in pinned host memory (ns)",
     .kind = GQ_TEST_LATENCY,
     .layout = GQ_LAYOUT_HOST_GPU,
     .min_gpus = 1,
     .nvbandwidth = true,
     .plan = plan_host_lat},
    {.name = "device_to_device_latency_sm",
     .title = "Device to Device Latency SM GPU(row) <-> GPU(column) (ns)",
     .description = "pointer chase by the row GPU in the column GPU's memory, over P2P (ns)",
     .kind = GQ_TEST_LATENCY,
     .layout = GQ_LAYOUT_GPU_GPU,
     .min_gpus = 2,
     .nvbandwidth = true,
     .plan = plan_d2d_lat},
    {.name = "device_local_copy",
     .title = "memcpy local GPU(column) bandwidth (GB/s)",
     .description = "copy within each GPU's memory; bytes copied (counted once), as nvbandwidth counts",
     .layout = GQ_LAYOUT_LOCAL,
     .min_gpus = 1,
     .nvbandwidth = true,
     .plan = plan_local,
     .method = GQ_METHOD_CE},
    {.name = "device_to_device_staged",
     .title =
         "staged (P2P off, through pinned host memory, pipelined) GPU(row) -> GPU(column) bandwidth (GB/s)",
     .description = "every GPU pair without P2P: gpuqual's own staging, chunks through pinned host memory, "
                    "pipelined on both GPUs' streams",
     .layout = GQ_LAYOUT_GPU_GPU,
     .min_gpus = 2,
     .plan = plan_staged,
     .method = GQ_METHOD_STAGED},
    {.name = "device_to_device_driver_staged",
     .title = "driver-staged (cudaMemcpyPeer with peer access off) GPU(row) -> GPU(column) bandwidth (GB/s)",
     .description = "every GPU pair: the driver's own copy through host memory, what cudaMemcpy and "
                    "cudaMemcpyPeer between GPUs without P2P get",
     .layout = GQ_LAYOUT_GPU_GPU,
     .min_gpus = 2,
     .plan = plan_staged,
     .method = GQ_METHOD_DRIVER_STAGED},
    {.name = "p2p_matrix_unidirectional_enabled",
     .title = "Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)",
     .description = "p2pBandwidthLatencyTest: each pair one way, peer copies by the row GPU",
     .layout = GQ_LAYOUT_GPU_GPU,
     .min_gpus = 2,
     .plan = plan_p2p_uni,
     .variant = V_ENABLED},
    {.name = "p2p_matrix_unidirectional_disabled",
     .title = "Unidirectional P2P=Disabled Bandwidth Matrix (GB/s)",
     .description = "p2pBandwidthLatencyTest: each pair one way with peer access off (the driver stages)",
     .layout = GQ_LAYOUT_GPU_GPU,
     .min_gpus = 2,
     .plan = plan_p2p_uni,
     .variant = V_DISABLED},
    {.name = "p2p_matrix_bidirectional_enabled",
     .title = "Bidirectional P2P=Enabled Bandwidth Matrix (GB/s)",
     .description =
         "p2pBandwidthLatencyTest: each pair both ways at once, peer copies: each direction and the sum",
     .layout = GQ_LAYOUT_GPU_BIDIR,
     .min_gpus = 2,
     .plan = plan_p2p_bi,
     .variant = V_ENABLED},
    {.name = "p2p_matrix_bidirectional_disabled",
     .title = "Bidirectional P2P=Disabled Bandwidth Matrix (GB/s)",
     .description =
         "p2pBandwidthLatencyTest: each pair both ways at once with peer access off: each direction and "
         "the sum",
     .layout = GQ_LAYOUT_GPU_BIDIR,
     .min_gpus = 2,
     .plan = plan_p2p_bi,
     .variant = V_DISABLED},
    {.name = "p2p_latency_enabled",
     .title = "P2P=Enabled Latency (P2P Writes) Matrix (ns)",
     .description = "p2pBandwidthLatencyTest: tiny peer copies from the row GPU to the column GPU (ns)",
     .kind = GQ_TEST_LATENCY,
     .layout = GQ_LAYOUT_GPU_GPU,
     .min_gpus = 2,
     .plan = plan_p2p_lat,
     .variant = V_ENABLED},
    {.name = "p2p_latency_disabled",
     .title = "P2P=Disabled Latency Matrix (ns)",
     .description = "p2pBandwidthLatencyTest: tiny copies with peer access off (the driver stages) (ns)",
     .kind = GQ_TEST_LATENCY,
     .layout = GQ_LAYOUT_GPU_GPU,
     .min_gpus = 2,
     .plan = plan_p2p_lat,
     .variant = V_DISABLED},
    {.name = "host_to_device_set",
     .title = "host -> GPU set, all at once (GB/s)",
     .description = "host -> every GPU of --gpus at once: each GPU and the aggregate",
     .layout = GQ_LAYOUT_SET,
     .min_gpus = 1,
     .plan = plan_set,
     .method = GQ_METHOD_CE,
     .variant = DIR_H2D},
    {.name = "device_to_host_set",
     .title = "GPU set -> host, all at once (GB/s)",
     .description = "every GPU of --gpus -> host at once: each GPU and the aggregate",
     .layout = GQ_LAYOUT_SET,
     .min_gpus = 1,
     .plan = plan_set,
     .method = GQ_METHOD_CE,
     .variant = DIR_D2H},
    {.name = "bidirectional_set",
     .title = "host <-> GPU set, both directions at once (GB/s)",
     .description = "every GPU of --gpus copies both ways at once: each direction per GPU, per-direction "
                    "aggregates and their sum",
     .layout = GQ_LAYOUT_SET,
     .min_gpus = 1,
     .plan = plan_set,
     .method = GQ_METHOD_CE,
     .variant = DIR_BOTH},
};

#define NCATALOG ((int)(sizeof catalog / sizeof catalog[0]))

const gq_test *gq_catalog(int *n)
{
    if (n)
        *n = NCATALOG;
    return catalog;
}

const gq_test *gq_catalog_find(const char *name)
{
    for (int i = 0; name && i < NCATALOG; i++)
        if (!strcmp(catalog[i].name, name))
            return &catalog[i];
    return NULL;
}

int gq_test_target(const gq_test *t, const gq_record *agg)
{
    if (!t || !agg)
        return -1;
    /* all_to_one write / one_to_all read: data flows into the target (dst);
     * all_to_one read / one_to_all write: out of it (src) */
    bool into = (t->plan == plan_all_to_one) == (t->variant == V_WRITE);
    gq_endpoint e = into ? agg->dst : agg->src;
    return e.kind == GQ_EP_GPU && e.index >= 0 ? e.index : -1;
}

void gq_record_cell(const gq_record *r, int *row, int *col)
{
    if (r->src.kind == GQ_EP_HOST || r->dst.kind == GQ_EP_HOST) {
        gq_endpoint h = r->src.kind == GQ_EP_HOST ? r->src : r->dst;
        gq_endpoint g = r->src.kind == GQ_EP_HOST ? r->dst : r->src;
        *row = h.index;
        *col = g.index;
        return;
    }
    int exec = r->exec_gpu >= 0 ? r->exec_gpu : r->src.index;
    *row = exec;
    *col = exec == r->src.index ? r->dst.index : r->src.index;
}

int gq_catalog_select(const char *names, const char *prefix, const gq_test **out, int max, int *nout,
                      gq_err *err)
{
    bool take[NCATALOG];
    memset(take, 0, sizeof take);
    *nout = 0;
    if ((!names || !*names) && (!prefix || !*prefix)) {
        for (int i = 0; i < NCATALOG; i++)
            take[i] = true;
    }
    if (names && *names) {
        const char *cands[NCATALOG + 1];
        for (int i = 0; i < NCATALOG; i++)
            cands[i] = catalog[i].name;
        cands[NCATALOG] = NULL;
        const char *p = names;
        for (;;) {
            const char *c = strchr(p, ',');
            size_t l = c ? (size_t)(c - p) : strlen(p);
            char word[96];
            if (l == 0)
                return gq_err_set(err, GQ_E_USAGE, "-t '%s': empty test name; names are separated by commas",
                                  names);
            if (l >= sizeof word)
                return gq_err_set(err, GQ_E_USAGE, "-t: test name '%s' is too long",
                                  gq_ellipsize(word, sizeof word, p, 40));
            memcpy(word, p, l);
            word[l] = 0;
            const gq_test *t = gq_catalog_find(word);
            if (!t) {
                const char *best = gq_closest(word, cands);
                if (best)
                    return gq_err_set(err, GQ_E_USAGE,
                                      "unknown test '%s'; did you mean '%s'? (gpuqual run --list)", word,
                                      best);
                return gq_err_set(err, GQ_E_USAGE, "unknown test '%s'; gpuqual run --list shows every test",
                                  word);
            }
            take[t - catalog] = true;
            if (!c)
                break;
            p = c + 1;
        }
    }
    if (prefix && *prefix) {
        int hits = 0;
        for (int i = 0; i < NCATALOG; i++)
            if (!strncmp(catalog[i].name, prefix, strlen(prefix))) {
                take[i] = true;
                hits++;
            }
        if (!hits)
            return gq_err_set(err, GQ_E_USAGE,
                              "no test name starts with '%s'; gpuqual run --list shows every test", prefix);
    }
    for (int i = 0; i < NCATALOG && *nout < max; i++)
        if (take[i])
            out[(*nout)++] = &catalog[i];
    return GQ_OK;
}

int gq_catalog_plan(const gq_test *t, const gq_topo *topo, const gq_plan_opts *o, gq_plan *out, gq_err *err)
{
    memset(out, 0, sizeof *out);
    if (!t || !topo || !o)
        return gq_err_set(err, GQ_E_FAIL, "catalog: missing argument");
    snprintf(out->test, sizeof out->test, "%s", t->name);
    if (t->kind == GQ_TEST_BANDWIDTH && o->bytes == 0)
        return gq_err_set(err, GQ_E_USAGE, "%s: the buffer size must be greater than zero", t->name);
    for (int i = 0; i < o->ngpus; i++)
        if (o->gpus[i] < 0 || o->gpus[i] >= topo->ngpu)
            return gq_err_set(err, GQ_E_USAGE, "%s: GPU %d does not exist (this machine has %d)", t->name,
                              o->gpus[i], topo->ngpu);
    if (o->ngpus < t->min_gpus) {
        snprintf(out->note, sizeof out->note, "skipped: needs at least %d GPUs, %d selected", t->min_gpus,
                 o->ngpus);
        return GQ_OK;
    }
    int rc = t->plan(t, topo, o, out, err);
    if (rc) {
        gq_plan_free(out);
        return rc;
    }
    if (out->n == 0)
        snprintf(out->note, sizeof out->note, "skipped: no pair of the selected GPUs has peer access (P2P)%s",
                 strstr(t->name, "device_to_device")
                     ? "; device_to_device_staged measures GPU-to-GPU without it"
                     : "");
    return GQ_OK;
}

void gq_plan_measurement(const gq_plan *p, int i, gq_measurement *m)
{
    const gq_plan_item *it = &p->items[i];
    memset(m, 0, sizeof *m);
    snprintf(m->test, sizeof m->test, "%s", p->test);
    m->nflows = it->nflows;
    m->aggregate = it->aggregate;
    m->direction_sums = it->direction_sums;
    for (int k = 0; k < it->nflows; k++) {
        m->flows[k] = p->flows[it->flow_off + k];
        m->report[k] = p->report[it->flow_off + k];
    }
}

void gq_plan_memory(const gq_plan *p, int ngpu, uint64_t *gpu_bytes_max, int *gpu_max,
                    uint64_t *host_bytes_max)
{
    uint64_t gmax = 0, hmax = 0;
    int gwho = -1;
    uint64_t per[GQ_MAX_GPUS];
    for (int i = 0; i < p->n; i++) {
        const gq_plan_item *it = &p->items[i];
        if (it->is_latency)
            continue;
        memset(per, 0, sizeof per);
        uint64_t h = 0;
        for (int k = 0; k < it->nflows; k++) {
            const gq_flow *f = &p->flows[it->flow_off + k];
            if (gq_ep_gpu(f->src) >= 0)
                per[f->src.index] += f->bytes;
            else if (f->src.kind == GQ_EP_HOST)
                h += f->bytes;
            if (gq_ep_gpu(f->dst) >= 0)
                per[f->dst.index] += f->bytes;
            else if (f->dst.kind == GQ_EP_HOST)
                h += f->bytes;
            if (f->method == GQ_METHOD_STAGED)
                h += 2 * (f->chunk_bytes ? f->chunk_bytes : 8 * GQ_MiB);
        }
        for (int g = 0; g < ngpu && g < GQ_MAX_GPUS; g++)
            if (per[g] > gmax) {
                gmax = per[g];
                gwho = g;
            }
        if (h > hmax)
            hmax = h;
    }
    if (gpu_bytes_max)
        *gpu_bytes_max = gmax;
    if (gpu_max)
        *gpu_max = gwho;
    if (host_bytes_max)
        *host_bytes_max = hmax;
}

void gq_plan_free(gq_plan *p)
{
    if (!p)
        return;
    free(p->items);
    free(p->flows);
    free(p->report);
    p->items = NULL;
    p->flows = NULL;
    p->report = NULL;
    p->n = p->cap = p->nflows = p->flows_cap = 0;
}
