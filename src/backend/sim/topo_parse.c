/* Topology files for the simulated fabric, the declarations: the table of
 * declaration kinds and their attributes, and building nodes and links from
 * one parsed line (see topo_load.c for the overview).
 */
#include "backend/sim/sim.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "backend/sim/topo_internal.h"
#include "core/units.h"

/* ---- declarations --------------------------------------------------------- */

typedef struct attr_spec {
    const char *name;
    vtype t;
    double lo, hi; /* VT_INT, VT_PCT (percent), VT_NUM */
    int slot;
} attr_spec;

typedef struct decl_spec {
    const char *kw;
    decl_id id;
    int npos;
    vtype pos[2];
    const char *usage; /* shown when positional arguments are missing */
    const attr_spec *attrs;
} decl_spec;

#define END_ATTRS                                                                                            \
    {                                                                                                        \
        .name = NULL                                                                                         \
    }

static const attr_spec a_none[] = {END_ATTRS};
static const attr_spec a_cpu[] = {
    {.name = "sockets", .t = VT_INT, .lo = 1, .hi = 64, .slot = S_SOCKETS},
    {.name = "cores", .t = VT_INT, .lo = 1, .hi = 65536, .slot = S_CORES},
    END_ATTRS,
};
static const attr_spec a_vm[] = {
    {.name = "gpu-numa", .t = VT_INT, .lo = -1, .hi = GQ_MAX_NUMA - 1, .slot = S_GPUNUMA},
    END_ATTRS,
};
static const attr_spec a_staging[] = {
    {.name = "driver", .t = VT_PCT, .lo = 1, .hi = 1000, .slot = S_DRIVER},
    {.name = "chunk-cost", .t = VT_TIME, .slot = S_CHUNKCOST},
    END_ATTRS,
};
static const attr_spec a_latency[] = {
    {.name = "copy", .t = VT_TIME, .slot = S_COPY},
    {.name = "chase", .t = VT_TIME, .slot = S_CHASE},
    {.name = "staged", .t = VT_TIME, .slot = S_STAGED},
    END_ATTRS,
};
static const attr_spec a_noise[] = {
    {.name = "skew", .t = VT_TIME, .slot = S_SKEW},
    {.name = "rounds", .t = VT_PCT, .lo = 0, .hi = 100, .slot = S_SKEWROUNDS},
    {.name = "drift", .t = VT_PCT, .lo = 0, .hi = 100, .slot = S_DRIFT},
    END_ATTRS,
};
static const attr_spec a_memory[] = {
    {.name = "numa", .t = VT_INT, .lo = 0, .hi = GQ_MAX_NUMA - 1, .slot = S_NUMA},
    {.name = "size", .t = VT_SIZE, .slot = S_SIZE},
    {.name = "avail", .t = VT_SIZE, .slot = S_AVAIL},
    {.name = "lat", .t = VT_TIME, .slot = S_LAT},
    END_ATTRS,
};
static const attr_spec a_socket[] = {
    {.name = "numa", .t = VT_INT, .lo = 0, .hi = GQ_MAX_NUMA - 1, .slot = S_NUMA},
    {.name = "bus", .t = VT_WORD, .slot = S_BUS},
    {.name = "p2p-flowcap", .t = VT_BW, .slot = S_P2PFLOW},
    {.name = "p2p-cost", .t = VT_TIME, .slot = S_P2PCOST},
    END_ATTRS,
};
static const attr_spec a_bridge[] = {
    {.name = "bus", .t = VT_WORD, .slot = S_BUS},
    {.name = "p2p-flowcap", .t = VT_BW, .slot = S_P2PFLOW},
    {.name = "p2p-cost", .t = VT_TIME, .slot = S_P2PCOST},
    END_ATTRS,
};
static const attr_spec a_gpu[] = {
    {.name = "index", .t = VT_INT, .lo = 0, .hi = GQ_MAX_GPUS - 1, .slot = S_INDEX},
    {.name = "model", .t = VT_STR, .slot = S_MODEL},
    {.name = "mem", .t = VT_SIZE, .slot = S_MEM},
    {.name = "bus", .t = VT_WORD, .slot = S_BUS},
    {.name = "cc", .t = VT_CC, .slot = S_CC},
    {.name = "sms", .t = VT_INT, .lo = 1, .hi = 100000, .slot = S_SMS},
    {.name = "power", .t = VT_WATT, .slot = S_POWER},
    {.name = "clock", .t = VT_MHZ, .slot = S_CLOCK},
    {.name = "local-copy", .t = VT_BW, .slot = S_LOCALCOPY},
    {.name = "memlat", .t = VT_TIME, .slot = S_MEMLAT},
    {.name = "max-rate", .t = VT_GTS, .slot = S_MAXRATE},
    {.name = "max-width", .t = VT_WIDTH, .slot = S_MAXWIDTH},
    {.name = "p2p", .t = VT_WORD, .slot = S_P2PSTATUS},
    END_ATTRS,
};
#define LINK_COMMON                                                                                          \
    {.name = "cap", .t = VT_BW, .slot = S_CAP}, {.name = "fwd", .t = VT_BW, .slot = S_FWD},                  \
        {.name = "rev", .t = VT_BW, .slot = S_REV}, {.name = "duplex", .t = VT_BW, .slot = S_DUPLEX},        \
        {.name = "weights", .t = VT_PAIR, .lo = 0, .hi = 1e6, .slot = S_WEIGHTS},                            \
        {.name = "flowcap", .t = VT_BW, .slot = S_FLOWCAP},                                                  \
        {.name = "p2p-flowcap", .t = VT_BW, .slot = S_P2PFLOW},                                              \
        {.name = "p2p-fwd", .t = VT_BW, .slot = S_P2PFWD},                                                   \
        {.name = "p2p-rev", .t = VT_BW, .slot = S_P2PREV},                                                   \
        {.name = "sm", .t = VT_PCT, .lo = 1, .hi = 100, .slot = S_SM},                                       \
        {.name = "lat", .t = VT_TIME, .slot = S_LAT},                                                        \
    {                                                                                                        \
        .name = "cost", .t = VT_TIME, .slot = S_COST                                                         \
    }
static const attr_spec a_pcie[] = {
    LINK_COMMON,
    {.name = "up", .t = VT_BW, .slot = S_UP},
    {.name = "down", .t = VT_BW, .slot = S_DOWN},
    {.name = "rate", .t = VT_GTS, .slot = S_RATE},
    {.name = "width", .t = VT_WIDTH, .slot = S_WIDTH},
    {.name = "max-rate", .t = VT_GTS, .slot = S_MAXRATE},
    {.name = "max-width", .t = VT_WIDTH, .slot = S_MAXWIDTH},
    END_ATTRS,
};
static const attr_spec a_nvlink[] = {
    LINK_COMMON,
    {.name = "links", .t = VT_INT, .lo = 1, .hi = 64, .slot = S_LINKS},
    {.name = "rate", .t = VT_BW, .slot = S_NVRATE},
    END_ATTRS,
};
static const attr_spec a_fabric[] = {
    LINK_COMMON,
    {.name = "read", .t = VT_BW, .slot = S_READ},
    {.name = "write", .t = VT_BW, .slot = S_WRITE},
    END_ATTRS,
};

static const decl_spec decls[] = {
    {.kw = "machine", .id = D_MACHINE, .npos = 1, .pos = {VT_NAME}, .usage = "machine NAME", .attrs = a_none},
    {.kw = "title", .id = D_TITLE, .npos = 1, .pos = {VT_STR}, .usage = "title \"TEXT\"", .attrs = a_none},
    {.kw = "cpu",
     .id = D_CPU,
     .npos = 1,
     .pos = {VT_STR},
     .usage = "cpu \"MODEL\" sockets N cores N",
     .attrs = a_cpu},
    {.kw = "vm",
     .id = D_VM,
     .npos = 1,
     .pos = {VT_WORD},
     .usage = "vm HYPERVISOR [gpu-numa N]",
     .attrs = a_vm},
    {.kw = "noise",
     .id = D_NOISE,
     .npos = 1,
     .pos = {VT_PCT},
     .usage = "noise PERCENT % [skew TIME [rounds PERCENT %]] [drift PERCENT %]",
     .attrs = a_noise},
    {.kw = "p2p",
     .id = D_P2P,
     .npos = 1,
     .pos = {VT_WORD},
     .usage = "p2p OK|CNS|GNS|TNS|NS|DS",
     .attrs = a_none},
    {.kw = "staging",
     .id = D_STAGING,
     .npos = 0,
     .usage = "staging driver PERCENT % chunk-cost TIME",
     .attrs = a_staging},
    {.kw = "latency",
     .id = D_LATENCY,
     .npos = 0,
     .usage = "latency copy TIME chase TIME staged TIME",
     .attrs = a_latency},
    {.kw = "memory",
     .id = D_MEMORY,
     .npos = 1,
     .pos = {VT_NAME},
     .usage = "memory NAME numa N size SIZE",
     .attrs = a_memory},
    {.kw = "socket",
     .id = D_SOCKET,
     .npos = 1,
     .pos = {VT_NAME},
     .usage = "socket NAME [numa N]",
     .attrs = a_socket},
    {.kw = "switch", .id = D_SWITCH, .npos = 1, .pos = {VT_NAME}, .usage = "switch NAME", .attrs = a_bridge},
    {.kw = "bridge", .id = D_BRIDGE, .npos = 1, .pos = {VT_NAME}, .usage = "bridge NAME", .attrs = a_bridge},
    {.kw = "nvswitch",
     .id = D_NVSWITCH,
     .npos = 1,
     .pos = {VT_NAME},
     .usage = "nvswitch NAME",
     .attrs = a_none},
    {.kw = "gpu",
     .id = D_GPU,
     .npos = 1,
     .pos = {VT_NAME},
     .usage = "gpu NAME model \"MODEL\" mem SIZE",
     .attrs = a_gpu},
    {.kw = "pcie",
     .id = D_PCIE,
     .npos = 2,
     .pos = {VT_NAME, VT_NAME},
     .usage = "pcie CHILD PARENT up BW down BW",
     .attrs = a_pcie},
    {.kw = "nvlink",
     .id = D_NVLINK,
     .npos = 2,
     .pos = {VT_NAME, VT_NAME},
     .usage = "nvlink GPU GPU links N rate BW",
     .attrs = a_nvlink},
    {.kw = "fabric",
     .id = D_FABRIC,
     .npos = 2,
     .pos = {VT_NAME, VT_NAME},
     .usage = "fabric A B cap BW",
     .attrs = a_fabric},
};
#define NDECLS ((int)(sizeof decls / sizeof decls[0]))

bool gq_tp_is_keyword(const char *s)
{
    for (int i = 0; i < NDECLS; i++)
        if (!strcmp(decls[i].kw, s))
            return true;
    return false;
}
/* ---- building the machine -------------------------------------------------- */

static int parse_p2p_status(const char *s, gq_p2p_status *out);

static int gen_from_gts(double gts)
{
    static const double g[] = {2.5, 5, 8, 16, 32, 64};
    for (int i = 0; i < 6; i++)
        if (gts == g[i])
            return i + 1;
    return 0;
}

static int find_node(const gq_sim_machine *m, const char *name)
{
    for (int i = 0; i < m->nnode; i++)
        if (!strcmp(m->nodes[i].name, name))
            return i;
    return -1;
}

const char *gq_tp_kind_name(gq_sim_node_kind k)
{
    switch (k) {
    case GQ_SIM_MEMORY: return "memory";
    case GQ_SIM_SOCKET: return "socket";
    case GQ_SIM_SWITCH: return "switch";
    case GQ_SIM_BRIDGE: return "bridge";
    case GQ_SIM_GPU: return "gpu";
    case GQ_SIM_NVSWITCH: return "nvswitch";
    }
    return "node";
}

static int unknown_node(pctx *p, int col, const char *name, const char *role)
{
    /* did-you-mean over the declared names */
    const char *best = NULL;
    int bestd = 1 << 30;
    for (int i = 0; i < p->m->nnode; i++) {
        int d = gq_levenshtein(name, p->m->nodes[i].name);
        if (d < bestd) {
            bestd = d;
            best = p->m->nodes[i].name;
        }
    }
    size_t len = strlen(name);
    if (best && bestd <= (len < 6 ? 1 : 2))
        return gq_tp_err(p, col,
                         "%s '%s' is not declared; did you mean '%s'? (declare nodes before linking them)",
                         role, name, best);
    return gq_tp_err(p, col, "%s '%s' is not declared: a link to nowhere (declare nodes before linking them)",
                     role, name);
}

static int add_node(pctx *p, gq_sim_node_kind kind, const tok *kwt)
{
    gq_sim_machine *m = p->m;
    const val *nv = &p->v[S_POS0];
    int prev = find_node(m, nv->str);
    if (prev >= 0)
        return gq_tp_err(p, nv->col, "duplicate node '%s' (first declared at line %d)", nv->str,
                         m->nodes[prev].line);
    if (m->nnode == GQ_SIM_MAX_NODES)
        return gq_tp_err(p, kwt->col, "too many nodes (at most %d)", GQ_SIM_MAX_NODES);
    gq_sim_node *n = &m->nodes[m->nnode];
    memset(n, 0, sizeof *n);
    n->kind = kind;
    snprintf(n->name, sizeof n->name, "%.*s", GQ_SIM_NAME_MAX - 1, nv->str);
    n->line = p->line;
    n->col = kwt->col;
    n->numa = p->v[S_NUMA].set ? (int)p->v[S_NUMA].num : -1;
    n->gpu = -1;
    n->parent_link = -1;
    if (p->v[S_BUS].set)
        snprintf(n->bus, sizeof n->bus, "%.31s", p->v[S_BUS].str);
    n->p2p_flowcap = p->v[S_P2PFLOW].set ? p->v[S_P2PFLOW].num : 0;
    n->p2p_cost = p->v[S_P2PCOST].set ? p->v[S_P2PCOST].num : 0;
    if (kind == GQ_SIM_MEMORY) {
        if (!p->v[S_SIZE].set)
            return gq_tp_err(p, kwt->col, "memory '%s' needs 'size SIZE' (e.g. size 256 GiB)", n->name);
        n->size = (uint64_t)p->v[S_SIZE].num;
        n->avail = p->v[S_AVAIL].set ? (uint64_t)p->v[S_AVAIL].num : n->size / 10 * 9;
        if (n->avail > n->size)
            return gq_tp_err(p, p->v[S_AVAIL].col, "memory '%s': 'avail' is larger than 'size'", n->name);
        n->lat = p->v[S_LAT].set ? p->v[S_LAT].num : 100e-9;
        if (n->numa < 0)
            n->numa = 0;
    }
    if (kind == GQ_SIM_GPU) {
        if (m->ngpu == GQ_MAX_GPUS)
            return gq_tp_err(p, kwt->col, "too many GPUs (at most %d)", GQ_MAX_GPUS);
        if (!p->v[S_MODEL].set)
            return gq_tp_err(p, kwt->col, "gpu '%s' needs 'model \"NAME\"'", n->name);
        if (!p->v[S_MEM].set)
            return gq_tp_err(p, kwt->col, "gpu '%s' needs 'mem SIZE' (e.g. mem 24 GiB)", n->name);
        int idx = m->ngpu;
        if (p->v[S_INDEX].set) {
            idx = (int)p->v[S_INDEX].num;
            p->gpu_index_given = true;
        } else {
            p->gpu_index_missing = true;
        }
        if (p->gpu_index_given && p->gpu_index_missing)
            return gq_tp_err(p, kwt->col, "give 'index N' to every gpu or to none");
        if (p->gpu_index_given && idx >= GQ_MAX_GPUS)
            return gq_tp_err(p, p->v[S_INDEX].col, "GPU index %d is out of range", idx);
        for (int g = 0; g < m->ngpu; g++)
            if (p->gpu_index_given && m->nodes[m->gpus[g].node].gpu == idx)
                return gq_tp_err(p, p->v[S_INDEX].col, "GPU index %d is used twice (first by '%s')", idx,
                                 m->nodes[m->gpus[g].node].name);
        gq_sim_gpu *g = &m->gpus[m->ngpu];
        memset(g, 0, sizeof *g);
        g->node = m->nnode;
        n->gpu = idx;
        snprintf(g->model, sizeof g->model, "%.95s", p->v[S_MODEL].str);
        g->mem = (uint64_t)p->v[S_MEM].num;
        if (p->v[S_BUS].set)
            snprintf(g->bus, sizeof g->bus, "%.31s", p->v[S_BUS].str);
        g->cc_major = p->v[S_CC].set ? (int)p->v[S_CC].num : -1;
        g->cc_minor = p->v[S_CC].set ? (int)p->v[S_CC].num2 : -1;
        g->sms = p->v[S_SMS].set ? (int)p->v[S_SMS].num : -1;
        g->power_w = p->v[S_POWER].set ? p->v[S_POWER].num : 0;
        g->clock_mhz = p->v[S_CLOCK].set ? p->v[S_CLOCK].num : 0;
        g->local_copy = p->v[S_LOCALCOPY].set ? p->v[S_LOCALCOPY].num : 500e9;
        g->memlat = p->v[S_MEMLAT].set ? p->v[S_MEMLAT].num : 300e-9;
        g->max_gts = p->v[S_MAXRATE].set ? p->v[S_MAXRATE].num : 0;
        g->max_width = p->v[S_MAXWIDTH].set ? (int)p->v[S_MAXWIDTH].num : 0;
        g->p2p = -1;
        if (p->v[S_P2PSTATUS].set) {
            gq_p2p_status st;
            if (parse_p2p_status(p->v[S_P2PSTATUS].str, &st))
                return gq_tp_err(p, p->v[S_P2PSTATUS].col,
                                 "unknown P2P status '%s'; use OK, CNS, GNS, TNS, NS or DS",
                                 p->v[S_P2PSTATUS].str);
            g->p2p = (int)st;
        }
        m->ngpu++;
    }
    m->nnode++;
    return GQ_OK;
}

static bool node_is(const gq_sim_node *n, unsigned mask)
{
    return (mask >> n->kind) & 1u;
}
#define K(k) (1u << (k))

/* The link's ends suit its kind (a PCIe child under a parent without a loop,
 * NVLink between GPUs, no fabric to a GPU) and are not linked already. */
static int check_link_ends(pctx *p, gq_sim_link_kind kind, const tok *kwt, int a, int b)
{
    gq_sim_machine *m = p->m;
    const val *va = &p->v[S_POS0], *vb = &p->v[S_POS1];
    gq_sim_node *na = &m->nodes[a], *nb = &m->nodes[b];
    switch (kind) {
    case GQ_SIM_LINK_PCIE:
        if (!node_is(na, K(GQ_SIM_GPU) | K(GQ_SIM_SWITCH) | K(GQ_SIM_BRIDGE)))
            return gq_tp_err(p, va->col, "a PCIe child must be a gpu, switch or bridge; '%s' is a %s",
                             na->name, gq_tp_kind_name(na->kind));
        if (!node_is(nb, K(GQ_SIM_SOCKET) | K(GQ_SIM_SWITCH) | K(GQ_SIM_BRIDGE)))
            return gq_tp_err(p, vb->col, "a PCIe parent must be a socket, switch or bridge; '%s' is a %s",
                             nb->name, gq_tp_kind_name(nb->kind));
        if (na->parent_link >= 0)
            return gq_tp_err(p, va->col, "'%s' already has a PCIe parent ('%s', line %d)", na->name,
                             m->nodes[m->links[na->parent_link].b].name, m->links[na->parent_link].line);
        for (int up = b, guard = 0; up >= 0 && guard <= m->nnode; guard++) {
            if (up == a)
                return gq_tp_err(p, vb->col, "linking '%s' under '%s' makes a loop in the PCIe tree",
                                 na->name, nb->name);
            int pl = m->nodes[up].parent_link;
            up = pl >= 0 ? m->links[pl].b : -1;
        }
        break;
    case GQ_SIM_LINK_NVLINK:
        if (na->kind != GQ_SIM_GPU)
            return gq_tp_err(p, va->col, "NVLink starts at a GPU ('nvlink GPU GPU|NVSWITCH'); '%s' is a %s",
                             na->name, gq_tp_kind_name(na->kind));
        if (nb->kind != GQ_SIM_GPU && nb->kind != GQ_SIM_NVSWITCH)
            return gq_tp_err(p, vb->col, "NVLink joins a GPU to a GPU or an nvswitch; '%s' is a %s", nb->name,
                             gq_tp_kind_name(nb->kind));
        break;
    case GQ_SIM_LINK_FABRIC:
        if (na->kind == GQ_SIM_NVSWITCH || nb->kind == GQ_SIM_NVSWITCH)
            return gq_tp_err(p, (na->kind == GQ_SIM_NVSWITCH ? va : vb)->col,
                             "an nvswitch joins GPUs through 'nvlink GPU NVSWITCH' only ('%s')",
                             (na->kind == GQ_SIM_NVSWITCH ? na : nb)->name);
        if (na->kind == GQ_SIM_GPU)
            return gq_tp_err(p, va->col, "GPUs attach through 'pcie' or 'nvlink', not 'fabric' ('%s')",
                             na->name);
        if (nb->kind == GQ_SIM_GPU)
            return gq_tp_err(p, vb->col, "GPUs attach through 'pcie' or 'nvlink', not 'fabric' ('%s')",
                             nb->name);
        if (na->kind == GQ_SIM_MEMORY && nb->kind == GQ_SIM_MEMORY)
            return gq_tp_err(p, vb->col,
                             "a link between two memory nodes carries nothing; link memory to a socket");
        break;
    }
    for (int l = 0; l < m->nlink; l++) {
        const gq_sim_link *o = &m->links[l];
        if ((o->a == a && o->b == b) || (o->a == b && o->b == a))
            return gq_tp_err(p, kwt->col,
                             "a second link between '%s' and '%s' (first at line %d); merge them", na->name,
                             nb->name, o->line);
    }
    return GQ_OK;
}

/* The slots holding the capacities a -> b (*fwd) and b -> a (*rev): up/down
 * and read/write are aliases of fwd/rev. */
static int link_dir_slots(pctx *p, gq_sim_link_kind kind, const gq_sim_node *na, const gq_sim_node *nb,
                          int *fwd, int *rev)
{
    val *v = p->v;
    /* Direction aliases: up/down on PCIe (up = child -> parent = a -> b),
     * read/write on a fabric link to memory (read = out of memory). */
    int fwd_slot = S_FWD, rev_slot = S_REV;
    if (kind == GQ_SIM_LINK_PCIE) {
        if (v[S_UP].set && v[S_FWD].set)
            return gq_tp_err(p, v[S_UP].col, "'up' and 'fwd' name the same direction; give one");
        if (v[S_DOWN].set && v[S_REV].set)
            return gq_tp_err(p, v[S_DOWN].col, "'down' and 'rev' name the same direction; give one");
        /* name the directions as the line does */
        if (v[S_UP].set || (v[S_DOWN].set && !v[S_FWD].set))
            fwd_slot = S_UP;
        if (v[S_DOWN].set || (v[S_UP].set && !v[S_REV].set))
            rev_slot = S_DOWN;
    }
    if (kind == GQ_SIM_LINK_FABRIC && (v[S_READ].set || v[S_WRITE].set)) {
        int memend = na->kind == GQ_SIM_MEMORY ? 0 : (nb->kind == GQ_SIM_MEMORY ? 1 : -1);
        int col = v[S_READ].set ? v[S_READ].col : v[S_WRITE].col;
        if (memend < 0)
            return gq_tp_err(p, col,
                             "'read' and 'write' apply to a link to a memory node; use 'fwd' and 'rev'");
        if (v[S_FWD].set || v[S_REV].set)
            return gq_tp_err(p, col, "give 'read'/'write' or 'fwd'/'rev', not both");
        /* read leaves memory: a -> b when memory is a */
        if (memend == 0) {
            fwd_slot = S_READ;
            rev_slot = S_WRITE;
        } else {
            fwd_slot = S_WRITE;
            rev_slot = S_READ;
        }
    }
    *fwd = fwd_slot;
    *rev = rev_slot;
    return GQ_OK;
}

/* The link's capacity per direction: given, per direction, or from its PCIe
 * rate and width or its NVLink count and rate; the PCIe and NVLink fields. */
static int link_capacity(pctx *p, gq_sim_link_kind kind, const tok *kwt, gq_sim_link *L, int fwd_slot,
                         int rev_slot)
{
    gq_sim_machine *m = p->m;
    const gq_sim_node *na = &m->nodes[L->a], *nb = &m->nodes[L->b];
    val *v = p->v;
    bool any_dir = v[fwd_slot].set || v[rev_slot].set;
    if (v[S_CAP].set && any_dir)
        return gq_tp_err(p, v[S_CAP].col,
                         "give either 'cap' (both directions) or a capacity per direction, not both");
    if (kind == GQ_SIM_LINK_PCIE) {
        L->gts = v[S_RATE].set ? v[S_RATE].num : 0;
        L->width = v[S_WIDTH].set ? (int)v[S_WIDTH].num : 0;
        if (v[S_RATE].set != v[S_WIDTH].set)
            return gq_tp_err(p, (v[S_RATE].set ? v[S_RATE] : v[S_WIDTH]).col,
                             "give both 'rate GT/s' and 'width xN'");
        /* A trained-down uplink: what the link of a switch or bridge could do */
        for (int k = 0; k < 2; k++) {
            const val *mx = &v[k ? S_MAXWIDTH : S_MAXRATE];
            const char *nm = k ? "max-width" : "max-rate";
            if (!mx->set)
                continue;
            if (na->kind == GQ_SIM_GPU)
                return gq_tp_err(p, mx->col, "'%s' of a GPU's own link goes on its gpu line (gpu %s ... %s)",
                                 nm, na->name, nm);
            if (!v[S_RATE].set)
                return gq_tp_err(p, mx->col, "'%s' needs the trained link too: 'rate GT/s' and 'width xN'",
                                 nm);
            if (k ? mx->num < v[S_WIDTH].num : mx->num < v[S_RATE].num)
                return gq_tp_err(p, mx->col,
                                 "'%s' is below the trained '%s': the maximum is what the link can do", nm,
                                 k ? "width" : "rate");
        }
        L->max_gts = v[S_MAXRATE].set ? v[S_MAXRATE].num : 0;
        L->max_width = v[S_MAXWIDTH].set ? (int)v[S_MAXWIDTH].num : 0;
    }
    if (kind == GQ_SIM_LINK_NVLINK) {
        L->nvl = v[S_LINKS].set ? (int)v[S_LINKS].num : 0;
        L->nvl_rate = v[S_NVRATE].set ? v[S_NVRATE].num : 0;
        if (!L->nvl)
            return gq_tp_err(p, kwt->col, "nvlink needs 'links N' (the number of NVLinks in the bundle)");
    }
    if (v[S_CAP].set) {
        L->cap[0] = L->cap[1] = v[S_CAP].num;
    } else if (any_dir) {
        if (!v[fwd_slot].set || !v[rev_slot].set) {
            static const char *const names[NSLOT] = {
                [S_FWD] = "fwd",   [S_REV] = "rev",   [S_UP] = "up",
                [S_DOWN] = "down", [S_READ] = "read", [S_WRITE] = "write"};
            int have = v[fwd_slot].set ? fwd_slot : rev_slot, miss = v[fwd_slot].set ? rev_slot : fwd_slot;
            return gq_tp_err(p, v[have].col,
                             "'%s' is given but '%s' is missing: give both directions, or 'cap'", names[have],
                             names[miss]);
        }
        L->cap[0] = v[fwd_slot].num;
        L->cap[1] = v[rev_slot].num;
    } else if (kind == GQ_SIM_LINK_PCIE && L->gts > 0) {
        L->cap[0] = L->cap[1] = gq_pcie_gbps(gen_from_gts(L->gts), L->width) * 1e9;
    } else if (kind == GQ_SIM_LINK_NVLINK && L->nvl_rate > 0) {
        L->cap[0] = L->cap[1] = L->nvl * L->nvl_rate;
    } else {
        return gq_tp_err(p, kwt->col, "the link %s-%s needs a capacity: 'cap BW', or one per direction",
                         na->name, nb->name);
    }
    return GQ_OK;
}

/* Duplex limit and weights, flow caps, SM share, latency and cost. */
static int link_extras(pctx *p, gq_sim_link *L)
{
    val *v = p->v;
    L->duplex = v[S_DUPLEX].set ? v[S_DUPLEX].num : 0;
    if (v[S_WEIGHTS].set) {
        if (!v[S_DUPLEX].set)
            return gq_tp_err(p, v[S_WEIGHTS].col, "'weights' share a duplex limit; give 'duplex BW' too");
        L->w[0] = v[S_WEIGHTS].num;
        L->w[1] = v[S_WEIGHTS].num2;
    }
    L->flowcap = v[S_FLOWCAP].set ? v[S_FLOWCAP].num : 0;
    L->p2p_flowcap = v[S_P2PFLOW].set ? v[S_P2PFLOW].num : 0;
    if (v[S_P2PFWD].set != v[S_P2PREV].set)
        return gq_tp_err(p, (v[S_P2PFWD].set ? v[S_P2PFWD] : v[S_P2PREV]).col,
                         "give both 'p2p-fwd' and 'p2p-rev' (a peer-to-peer stream cap per direction)");
    if (v[S_P2PFWD].set && v[S_P2PFLOW].set)
        return gq_tp_err(p, v[S_P2PFWD].col, "give either 'p2p-flowcap' or 'p2p-fwd'/'p2p-rev', not both");
    L->p2p_dircap[0] = v[S_P2PFWD].set ? v[S_P2PFWD].num : 0;
    L->p2p_dircap[1] = v[S_P2PREV].set ? v[S_P2PREV].num : 0;
    L->sm_frac = v[S_SM].set ? v[S_SM].num : 0;
    L->lat = v[S_LAT].set ? v[S_LAT].num : 0;
    L->cost = v[S_COST].set ? v[S_COST].num : 0;
    return GQ_OK;
}

static int add_link(pctx *p, gq_sim_link_kind kind, const tok *kwt)
{
    gq_sim_machine *m = p->m;
    const val *va = &p->v[S_POS0], *vb = &p->v[S_POS1];
    int a = find_node(m, va->str), b = find_node(m, vb->str);
    const char *ra = kind == GQ_SIM_LINK_PCIE ? "child" : "node",
               *rb = kind == GQ_SIM_LINK_PCIE ? "parent" : "node";
    if (a < 0)
        return unknown_node(p, va->col, va->str, ra);
    if (b < 0)
        return unknown_node(p, vb->col, vb->str, rb);
    if (a == b)
        return gq_tp_err(p, vb->col, "a link from '%s' to itself", va->str);
    if (m->nlink == GQ_SIM_MAX_LINKS)
        return gq_tp_err(p, kwt->col, "too many links (at most %d)", GQ_SIM_MAX_LINKS);
    int rc;
    if ((rc = check_link_ends(p, kind, kwt, a, b)))
        return rc;
    gq_sim_node *na = &m->nodes[a], *nb = &m->nodes[b];

    gq_sim_link *L = &m->links[m->nlink];
    memset(L, 0, sizeof *L);
    L->kind = kind;
    L->a = a;
    L->b = b;
    L->line = p->line;
    L->col = kwt->col;
    L->w[0] = L->w[1] = 1.0;
    int fwd_slot = S_FWD, rev_slot = S_REV;
    if ((rc = link_dir_slots(p, kind, na, nb, &fwd_slot, &rev_slot)) ||
        (rc = link_capacity(p, kind, kwt, L, fwd_slot, rev_slot)) || (rc = link_extras(p, L)))
        return rc;
    if (kind == GQ_SIM_LINK_PCIE)
        na->parent_link = m->nlink;
    na->nlinks++;
    nb->nlinks++;
    m->nlink++;
    return GQ_OK;
}

static int parse_p2p_status(const char *s, gq_p2p_status *out)
{
    static const struct {
        const char *n;
        gq_p2p_status s;
    } t[] = {{"OK", GQ_P2P_OK},   {"CNS", GQ_P2P_CNS}, {"GNS", GQ_P2P_GNS},
             {"TNS", GQ_P2P_TNS}, {"NS", GQ_P2P_NS},   {"DS", GQ_P2P_DISABLED}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (!strcmp(t[i].n, s)) {
            *out = t[i].s;
            return 0;
        }
    return -1;
}

int gq_tp_declaration(pctx *p)
{
    const tok *kwt = &p->t[0];
    if (kwt->quoted)
        return gq_tp_err(p, kwt->col, "a line starts with a keyword, not a quoted string");
    const decl_spec *d = NULL;
    for (int i = 0; i < NDECLS; i++)
        if (!strcmp(decls[i].kw, kwt->s))
            d = &decls[i];
    if (!d) {
        const char *names[NDECLS + 1];
        for (int i = 0; i < NDECLS; i++)
            names[i] = decls[i].kw;
        names[NDECLS] = NULL;
        const char *near = gq_closest(kwt->s, names);
        if (near)
            return gq_tp_err(p, kwt->col, "unknown keyword '%s'; did you mean '%s'?", kwt->s, near);
        return gq_tp_err(p, kwt->col, "unknown keyword '%s' (see docs/topology-format.md)", kwt->s);
    }
    if (d->id != D_MACHINE && !p->m->name[0])
        return gq_tp_err(p, kwt->col, "a topology starts with 'machine NAME', before '%s'", d->kw);
    if (d->id <= D_LATENCY) {
        if (p->seen[d->id])
            return gq_tp_err(p, kwt->col, "'%s' is declared twice (first at line %d)", d->kw, p->seen[d->id]);
        p->seen[d->id] = p->line;
    }
    memset(p->v, 0, sizeof p->v);
    int ti = 1;
    for (int k = 0; k < d->npos; k++) {
        if (ti >= p->nt)
            return gq_tp_err(p, p->t[p->nt - 1].col, "'%s' needs its arguments: %s", d->kw, d->usage);
        int rc = gq_tp_value(p, d->pos[k], -1e300, 1e300, d->kw, &ti, &p->v[S_POS0 + k]);
        if (rc)
            return rc;
    }
    /* attributes: NAME VALUE [UNIT] ... */
    while (ti < p->nt) {
        const tok *at = &p->t[ti];
        const attr_spec *a = NULL;
        for (const attr_spec *s = d->attrs; s->name; s++)
            if (!at->quoted && !strcmp(s->name, at->s))
                a = s;
        if (!a) {
            if (gq_tp_is_keyword(at->s))
                return gq_tp_err(p, at->col, "'%s' starts a new declaration; put it on its own line", at->s);
            const char *names[48];
            int n = 0;
            for (const attr_spec *s = d->attrs; s->name && n < 47; s++)
                names[n++] = s->name;
            names[n] = NULL;
            if (n == 0)
                return gq_tp_err(p, at->col, "unexpected '%s': '%s' takes no attributes (%s)", at->s, d->kw,
                                 d->usage);
            const char *near = gq_closest(at->s, names);
            if (near)
                return gq_tp_err(p, at->col, "unknown attribute '%s' for %s; did you mean '%s'?", at->s,
                                 d->kw, near);
            return gq_tp_err(p, at->col, "unknown attribute '%s' for %s", at->s, d->kw);
        }
        if (p->v[a->slot].set)
            return gq_tp_err(p, at->col, "'%s' is given twice", a->name);
        ti++;
        int rc = gq_tp_value(p, a->t, a->lo, a->hi, a->name, &ti, &p->v[a->slot]);
        if (rc)
            return rc;
    }

    gq_sim_machine *m = p->m;
    val *v = p->v;
    switch (d->id) {
    case D_MACHINE:
        if (m->name[0])
            return gq_tp_err(p, kwt->col, "'machine' is declared twice");
        snprintf(m->name, sizeof m->name, "%.63s", v[S_POS0].str);
        return GQ_OK;
    case D_TITLE: snprintf(m->title, sizeof m->title, "%s", v[S_POS0].str); return GQ_OK;
    case D_CPU:
        snprintf(m->cpu_model, sizeof m->cpu_model, "%s", v[S_POS0].str);
        m->sockets = v[S_SOCKETS].set ? (int)v[S_SOCKETS].num : -1;
        m->cores = v[S_CORES].set ? (int)v[S_CORES].num : -1;
        return GQ_OK;
    case D_VM:
        m->vm = true;
        snprintf(m->hypervisor, sizeof m->hypervisor, "%.31s", v[S_POS0].str);
        m->vm_gpu_numa = v[S_GPUNUMA].set ? (int)v[S_GPUNUMA].num : -1;
        return GQ_OK;
    case D_NOISE:
        if (v[S_POS0].num > 0.5)
            return gq_tp_err(p, v[S_POS0].col, "noise is a relative amplitude between 0 %% and 50 %%");
        if (v[S_POS0].num < 0)
            return gq_tp_err(p, v[S_POS0].col, "noise cannot be negative");
        m->noise = v[S_POS0].num;
        if (v[S_SKEWROUNDS].set && !v[S_SKEW].set)
            return gq_tp_err(p, v[S_SKEWROUNDS].col,
                             "'rounds' says how often the skew comes; give 'skew TIME' too");
        if (v[S_SKEW].set && v[S_SKEW].num > 1.0)
            return gq_tp_err(p, v[S_SKEW].col, "a start skew of %g s is longer than a round; at most 1 s",
                             v[S_SKEW].num);
        m->skew_s = v[S_SKEW].set ? v[S_SKEW].num : 0;
        m->skew_share = v[S_SKEW].set ? (v[S_SKEWROUNDS].set ? v[S_SKEWROUNDS].num : 1.0) : 0;
        m->drift_share = v[S_DRIFT].set ? v[S_DRIFT].num : 1.0;
        return GQ_OK;
    case D_P2P:
        if (parse_p2p_status(v[S_POS0].str, &m->p2p))
            return gq_tp_err(p, v[S_POS0].col, "unknown P2P status '%s'; use OK, CNS, GNS, TNS, NS or DS",
                             v[S_POS0].str);
        return GQ_OK;
    case D_STAGING:
        if (v[S_DRIVER].set)
            m->driver_factor = v[S_DRIVER].num;
        if (v[S_CHUNKCOST].set)
            m->chunk_cost = v[S_CHUNKCOST].num;
        return GQ_OK;
    case D_LATENCY:
        if (v[S_COPY].set)
            m->lat_copy = v[S_COPY].num;
        if (v[S_CHASE].set)
            m->lat_chase = v[S_CHASE].num;
        if (v[S_STAGED].set)
            m->lat_staged = v[S_STAGED].num;
        return GQ_OK;
    case D_MEMORY: return add_node(p, GQ_SIM_MEMORY, kwt);
    case D_SOCKET: return add_node(p, GQ_SIM_SOCKET, kwt);
    case D_SWITCH: return add_node(p, GQ_SIM_SWITCH, kwt);
    case D_BRIDGE: return add_node(p, GQ_SIM_BRIDGE, kwt);
    case D_NVSWITCH: return add_node(p, GQ_SIM_NVSWITCH, kwt);
    case D_GPU: return add_node(p, GQ_SIM_GPU, kwt);
    case D_PCIE: return add_link(p, GQ_SIM_LINK_PCIE, kwt);
    case D_NVLINK: return add_link(p, GQ_SIM_LINK_NVLINK, kwt);
    case D_FABRIC: return add_link(p, GQ_SIM_LINK_FABRIC, kwt);
    case ND: break;
    }
    return GQ_OK;
}
