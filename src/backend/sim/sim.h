/* The simulated fabric: internal interface between the topology parser
 * (topo_load.c, topo_parse.c, topo_lex.c), the fabric model (fabric.c:
 * routing and the max-min solver) and the backend ops (sim_backend.c,
 * sim_discover.c, sim_run.c). Nothing outside
 * src/backend/sim and its tests includes this header; the rest of gpuqual
 * sees the simulator only through gq_backend_sim_ops.
 *
 * Units inside the model are SI: bytes, bytes per second, seconds. The
 * topology file format is documented in docs/topology-format.md.
 */
#ifndef GQ_BACKEND_SIM_SIM_H
#define GQ_BACKEND_SIM_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend/backend.h"
#include "core/status.h"
#include "topo/topo.h"

/* Limits of what one topology file may declare; the parser rejects more with
 * a FILE:LINE:COL message, so the model never grows without bound. */
#define GQ_SIM_MAX_FILE (1024 * 1024) /* bytes */
#define GQ_SIM_MAX_NODES 1024
#define GQ_SIM_MAX_LINKS 4096
#define GQ_SIM_NAME_MAX 48

typedef enum gq_sim_node_kind {
    GQ_SIM_MEMORY = 0, /* host memory of one NUMA node */
    GQ_SIM_SOCKET,     /* CPU socket and its PCIe root complex (a host bridge) */
    GQ_SIM_SWITCH,     /* PCIe switch */
    GQ_SIM_BRIDGE,     /* root port, IO-die quadrant or other PCIe bridge */
    GQ_SIM_GPU,
    GQ_SIM_NVSWITCH, /* an NVLink switch: every GPU on it reaches every other, sharing its own links */
} gq_sim_node_kind;

typedef enum gq_sim_link_kind {
    GQ_SIM_LINK_PCIE = 0, /* child -> parent edge of the PCIe tree */
    GQ_SIM_LINK_NVLINK,   /* a bundle of NVLinks between two GPUs, or between a GPU and an NVSwitch */
    GQ_SIM_LINK_FABRIC,   /* anything else: memory channels, CPU interconnect */
} gq_sim_link_kind;

typedef struct gq_sim_node {
    gq_sim_node_kind kind;
    char name[GQ_SIM_NAME_MAX];
    int line, col;        /* where it was declared */
    int numa;             /* memory, socket: NUMA node the OS shows; -1 unset */
    char bus[32];         /* PCI bus id for discovery; "" none */
    double p2p_flowcap;   /* B/s: one peer-to-peer stream turning in this bridge; 0 = none */
    double p2p_cost;      /* s: per-transfer cost of such a stream */
    uint64_t size, avail; /* memory: bytes, and bytes that can be pinned */
    double lat;           /* memory: access latency, s */
    int gpu;              /* GQ_SIM_GPU: GPU index; else -1 */
    int parent_link;      /* index of the PCIe link to its parent; -1 none */
    int nlinks;           /* links touching it */
} gq_sim_node;

typedef struct gq_sim_gpu {
    int node; /* index into nodes[] */
    char model[96];
    uint64_t mem; /* bytes */
    char bus[32];
    int cc_major, cc_minor;
    int sms;
    double power_w, clock_mhz;
    double local_copy; /* B/s of an on-device copy, bytes copied (device memory moves twice that) */
    double memlat;     /* s: device memory access latency (pointer chase target) */
    double max_gts;    /* PCIe the card can do; 0 = as negotiated */
    int max_width;
    int p2p; /* gq_p2p_status of every pair with this GPU that no NVLink joins; -1: the machine's */
} gq_sim_gpu;

typedef struct gq_sim_link {
    gq_sim_link_kind kind;
    int a, b;             /* node indices; direction 0 is a -> b, 1 is b -> a */
    double cap[2];        /* B/s per direction */
    double duplex;        /* B/s for both directions together; 0 = none */
    double w[2];          /* share of each direction under the duplex limit */
    double flowcap;       /* B/s: each stream on this link at most; 0 = none */
    double p2p_flowcap;   /* B/s: each peer-to-peer stream on this link at most; 0 = none */
    double p2p_dircap[2]; /* B/s: the same per direction (p2p-fwd, p2p-rev); 0 = none */
    double sm_frac;       /* SM-copy streams at most this fraction of cap; 0 = none */
    double lat;           /* s, one way */
    double cost;          /* s per transfer */
    double gts;           /* PCIe: negotiated rate per lane; 0 = not PCIe or unknown */
    int width;            /* PCIe lanes */
    double max_gts;       /* PCIe between bridges and sockets: the most the link can do; 0 = as negotiated */
    int max_width;
    int nvl;         /* NVLink: number of links in the bundle */
    double nvl_rate; /* NVLink: B/s per link per direction (theoretical) */
    int line, col;
} gq_sim_link;

typedef struct gq_sim_machine {
    char name[64];
    char file[128]; /* what error messages call the file */
    char title[160];
    char cpu_model[128];
    int sockets, cores;
    bool vm;
    char hypervisor[32];
    int vm_gpu_numa;      /* NUMA node a VM guest reports for its GPUs */
    double noise;         /* FRAC, the noise model's scale (GQ_SIM_NOISE_DEFAULT) */
    double skew_s;        /* test hook: a worker starts this late ... */
    double skew_share;    /* ... in this share of the run calls (noise ... skew T rounds P %) */
    double drift_share;   /* test hook: the share of the model's run-to-run drift (noise ... drift P %; 1) */
    gq_p2p_status p2p;    /* P2P status between GPUs without NVLink */
    double driver_factor; /* driver-staged rate = factor / (1/d2h + 1/h2d) */
    double chunk_cost;    /* s per chunk of gpuqual's pipelined staging */
    double lat_copy;      /* s: fixed cost of one small cudaMemcpyAsync */
    double lat_chase;     /* s: fixed part of one dependent load by an SM */
    double lat_staged;    /* s: extra cost of a copy the driver stages through host */

    int nnode, nlink, ngpu;
    gq_sim_node *nodes;
    gq_sim_link *links;
    gq_sim_gpu gpus[GQ_MAX_GPUS];
    /* Adjacency: for node n, adj[adj_off[n] .. adj_off[n+1]) are link indices,
     * in declaration order. Built after parsing. */
    int *adj_off, *adj;
} gq_sim_machine;

/* ---- topo_load.c ----------------------------------------------------------- */

/* Parse a topology from text (len bytes; need not be NUL-terminated). `fname`
 * names it in messages. On success *out is a new machine (free with
 * gq_sim_machine_free). On failure returns GQ_E_USAGE with
 * "FNAME:LINE:COL: message" in *err and *out is NULL. Never crashes or hangs
 * on any input (fuzzed by tests/fuzz/fuzz_topo.c). */
int gq_sim_parse(const char *text, size_t len, const char *fname, gq_sim_machine **out, gq_err *err);

/* Read and parse a topology file (at most GQ_SIM_MAX_FILE bytes). Missing,
 * unreadable, empty, binary and huge files are GQ_E_USAGE with FILE:1:1 (or
 * the offending line and column). */
int gq_sim_load_file(const char *path, gq_sim_machine **out, gq_err *err);

/* A built-in machine by name, or a file: a spec that names an existing file,
 * or contains '/' or ends in ".topo", is a file; otherwise it must be a
 * built-in name (with a did-you-mean). NULL means the default machine,
 * rtx4090x8. */
int gq_sim_load(const char *spec, gq_sim_machine **out, gq_err *err);

void gq_sim_machine_free(gq_sim_machine *m);

/* Built-in machines: examples/topologies/NAME.topo embedded at build time
 * (the file is generated by src/backend/sim/embed_topos.cmake). */
typedef struct gq_sim_builtin {
    const char *name;
    const char *text;
    size_t len;
} gq_sim_builtin;
extern const gq_sim_builtin gq_sim_builtins[];
extern const int gq_sim_nbuiltins;
/* The built-in machines' names, NULL-terminated (--sim's completion). */
const char *const *gq_sim_builtin_names(void);

/* ---- fabric.c -------------------------------------------------------------- */

/* A hop of a route: a link crossed in one direction. */
typedef struct gq_sim_hop {
    int link;
    int dir; /* 0: a -> b, 1: b -> a */
} gq_sim_hop;

#define GQ_SIM_MAX_HOPS 64

/* Route between two nodes over PCIe and fabric links (NVLink only when it
 * joins the two GPUs directly and `nvlink` is true). GPUs and memory nodes are
 * never crossed, only reached. Fewest hops; ties go to the links declared
 * first; the route from b to a is the route from a to b reversed. Returns the
 * number of hops, or -1 when there is no route. */
int gq_sim_route(const gq_sim_machine *m, int from, int to, bool nvlink, gq_sim_hop *hops, int max);

/* Nearest memory node to a node (fewest hops) among those with NUMA node
 * `numa`, or among all when numa < 0. -1 when none is reachable. */
int gq_sim_nearest_memory(const gq_sim_machine *m, int node, int numa);

/* NVLink bundle joining GPUs i and j (link index), or -1. */
int gq_sim_nvlink_between(const gq_sim_machine *m, int gi, int gj);

/* An NVSwitch both GPUs i and j have NVLinks to: the switch's node index,
 * with GPU i's bundle in *li and GPU j's in *lj (either may be NULL); -1 when
 * none. Through it the pair gets the smaller of the two bundles, and each
 * GPU's bundle is shared by all its peers. */
int gq_sim_nvswitch_between(const gq_sim_machine *m, int gi, int gj, int *li, int *lj);

/* NVLinks joining GPUs i and j, directly or through an NVSwitch (the smaller
 * bundle); 0 none. */
int gq_sim_nvlinks(const gq_sim_machine *m, int gi, int gj);

/* NCCL's effective NVLink rate per link and direction (B/s) for a GPU of
 * compute capability major.minor: its topology model's (ncclTopoNVLinkBw,
 * NVIDIA/nccl src/graph/topo.h), which the simulated ring is held to over
 * NVLink (sim_coll.c). */
double gq_sim_nccl_nvlink_rate(int cc_major, int cc_minor);

/* P2P status of a GPU pair: OK when NVLink joins them (directly or through
 * an NVSwitch), else a GPU's own status when it has one that is not OK, else
 * the machine's. */
gq_p2p_status gq_sim_pair_p2p(const gq_sim_machine *m, int gi, int gj);

/* The max-min solver. A problem has constraints (a capacity each) and flows;
 * a flow uses constraints through entries (coefficient a: capacity consumed
 * per unit of the flow's rate; weight w: its share of the constraint when the
 * constraint is the bottleneck) and may have a demand cap of its own.
 * gq_sim_solve() fills rate[] by weighted progressive filling: the flow with
 * the smallest attainable rate is fixed first (with every flow tied with it),
 * the capacity it uses is taken away, and the rest continue; with all weights
 * 1 this is exactly max-min fairness. Flows with active == false get rate 0
 * and use nothing. */
typedef struct gq_sim_entry {
    int c;
    double a, w;
} gq_sim_entry;

typedef struct gq_sim_problem {
    int nc;      /* constraints */
    double *cap; /* [nc] */
    int nf;      /* flows */
    int *first;  /* [nf + 1]: entries of flow f are ent[first[f] .. first[f+1]) */
    gq_sim_entry *ent;
    double *demand; /* [nf]: cap on the flow's own rate; 0 = none */
    bool *active;   /* [nf] */
    double *rate;   /* [nf], output */
    /* scratch, sized by gq_sim_problem_alloc */
    double *rem, *sum, *x, *cand;
    int *todo;
    int iterations; /* output: filling steps taken (for the benchmark) */
} gq_sim_problem;

/* Allocate a problem for nc constraints, nf flows and ne entries in total.
 * Returns NULL when out of memory. Free with gq_sim_problem_free. */
gq_sim_problem *gq_sim_problem_alloc(int nc, int nf, int ne);
void gq_sim_problem_free(gq_sim_problem *p);
void gq_sim_solve(gq_sim_problem *p);

/* Deterministic noise in [-1, 1] from a key (splitmix64 based). */
double gq_sim_noise_unit(uint64_t key);
uint64_t gq_sim_hash(uint64_t a, uint64_t b);

/* ---- noise.c: the measured noise model ---------------------------------------- */

/* FRAC (--sim-noise, or the topology's `noise`) is the amplitude of the
 * round-to-round jitter of a host path that shares a link with other copies;
 * every part of the model is a fixed multiple of it (docs/method.md, "The
 * simulator's noise", with the real runs each multiple came from). */
#define GQ_SIM_NOISE_DEFAULT 0.01 /* the calibrated FRAC: every topology's default */

/* The class of a path, which sets the size of each part. */
typedef enum gq_sim_path_class {
    GQ_SIM_PC_HOST = 0, /* host <-> GPU, and copies staged through host memory */
    GQ_SIM_PC_P2P,      /* GPU <-> GPU over PCIe */
    GQ_SIM_PC_NVLINK,   /* GPU <-> GPU over NVLink (directly or through an NVSwitch) */
    GQ_SIM_PC_LOCAL,    /* a copy inside one GPU */
    GQ_SIM_NPC
} gq_sim_path_class;

/* The parts of one class, each a multiple of FRAC: amplitudes of triangular
 * draws on [-1, 1] (standard deviation amplitude / sqrt 6), and the
 * probability of a slow round. Index [0] is a flow alone, [1] a flow that
 * shares a link (or its GPU) with another flow of the same run. */
typedef struct gq_sim_noise_params {
    double jitter[2];    /* round to round, per flow */
    double drift_common; /* run to run (per seed), common to the class */
    double drift_path;   /* run to run, each path its own */
    double drift_shared; /* the common drift's multiple for a shared flow */
    double slow_p[2];    /* probability per round and flow of a slow round (shared: in a pair) */
} gq_sim_noise_params;
extern const gq_sim_noise_params gq_sim_noise_bw[GQ_SIM_NPC];  /* bandwidth figures */
extern const gq_sim_noise_params gq_sim_noise_lat[GQ_SIM_NPC]; /* latency figures (jitter[0], drift) */

#define GQ_SIM_JITTER_CORR 0.8 /* share of a shared flow's jitter common to the run's shared flows */
#define GQ_SIM_SLOW_MIN 2.0    /* a slow round is slower by 2 to 6 x FRAC (log scale) */
#define GQ_SIM_SLOW_MAX 6.0
#define GQ_SIM_SKEW_S 0.010 /* each worker leaves the barrier within FRAC x 10 ms of the first */

/* One flow's draw in one run call, and its parts (in units of FRAC). */
typedef struct gq_sim_noise_parts {
    double factor; /* exp(FRAC x (drift + jitter - slow)); exactly 1 with FRAC 0 */
    double drift, jitter, slow;
    bool slowed; /* this round is a slow one */
} gq_sim_noise_parts;

/* Uniform on [0, 1) from a key. */
double gq_sim_uniform(uint64_t key);

/* The factor of a flow's rate in a run call (its drift scaled by drift_share, the
 * topology's test hook, 1 otherwise): `nshared` is how many flows of
 * the call share a link or GPU with another (0: this one does not), `path`
 * names the path (its drift), `flow` the flow (its own jitter), `call` the
 * run call (the round). A shared flow's slow rounds come with probability
 * slow_p[1] x 2 / max(2, nshared): a run of shared flows has 2 x slow_p[1]
 * of its rounds slow in one flow, as the pairs measured had. parts may be
 * NULL. */
double gq_sim_flow_noise(uint64_t seed, double frac, double drift_share, gq_sim_path_class cls, int nshared,
                         uint64_t path, uint64_t flow, uint64_t call, gq_sim_noise_parts *parts);

/* When a flow's worker leaves the barrier, after the first possible instant:
 * uniform in [0, FRAC x GQ_SIM_SKEW_S). 0 with FRAC 0. */
double gq_sim_start_delay(uint64_t seed, double frac, uint64_t flow, uint64_t call);

/* The topology's `noise ... skew TIME rounds P %` test hook: which of nflows
 * flows starts TIME late in this run call (in a share P of the calls), or -1. */
int gq_sim_late_flow(uint64_t seed, double share, int nflows, uint64_t call);

/* The factor of a latency figure (a time) in a query: exp(FRAC x (drift + jitter)). */
double gq_sim_latency_noise(uint64_t seed, double frac, gq_sim_path_class cls, uint64_t path, uint64_t call);

/* The options of a simulated machine as the seam's KEY=VALUE pairs, for
 * tests and benches that open the sim backend directly: --sim topology
 * (NULL = the default machine), --sim-seed, --sim-noise (< 0 = the
 * topology's: not given), --sim-fault (NULL = none). Resets *o first. */
int gq_sim_opts(gq_backend_opts *o, const char *topology, uint64_t seed, double noise, const char *faults);

#endif
