/* The backend seam: the one interface between "what to measure" (src/core,
 * src/analysis, src/cli) and "how bytes move" (CUDA, or the simulated fabric).
 *
 * Modelled on fio's struct ioengine_ops: each backend fills one static const
 * gq_backend_ops with designated initializers; gq_backend_register() checks
 * its version and required hooks. Nothing above this header includes a CUDA
 * header.
 *
 * Unit of work: a *flow* is one worker's stream of back-to-back copies of the
 * same buffer (src -> dst, by one method). A *group* of flows runs
 * concurrently: the backend starts them together (barrier) and reports each
 * flow's own window [t_start, t_end] on ONE clock shared by all flows, plus the
 * bytes whose copies completed inside that window. The harness (measure/harness.c)
 * owns rounds, the overlap rule, statistics, the sanity guard and records; the
 * backend only moves bytes and tells time.
 */
#ifndef GQ_BACKEND_BACKEND_H
#define GQ_BACKEND_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/flow.h"
#include "core/status.h"
#include "core/types.h"
#include "topo/topo.h"

#define GQ_BACKEND_OPS_VERSION 4

/* Opaque prepared group: buffers allocated, peer access set, patterns filled. */
typedef struct gq_group gq_group;

typedef struct gq_run_opts {
    /* Exactly one of reps / duration_s is used: reps > 0 runs that many copies
     * per flow; otherwise each flow copies back-to-back until duration_s has
     * passed since the common start and counts only copies completed by then. */
    int reps;
    double duration_s;
    bool verify; /* check the data pattern at dst after the timed part */
    /* Duration runs only; NULL or 0 for a flow = whole copies. Otherwise
     * flow i's copies are moved as pieces of at most grain[i] bytes, each
     * with its own completion, and its window may end at any completed
     * piece: bytes_done then counts whole pieces. A finer grain lets the
     * windows of unequal flows end close to the deadline together, so a
     * short round still meets the overlap rule. */
    const uint64_t *grain;
} gq_run_opts;

typedef struct gq_flow_result {
    int tag;
    int status;            /* GQ_OK or a negative gq_status */
    char error[200];       /* for status != GQ_OK: e.g. the CUDA error string */
    double t_start, t_end; /* seconds on the backend's clock (CUDA: CLOCK_MONOTONIC) */
    uint64_t bytes_done;   /* bytes of completed copies (or pieces, with a grain) inside the window */
    int copies_done;       /* whole copies completed inside the window */
    bool verified;         /* verify was requested and ran */
    bool verify_ok;
    uint64_t bad_offset;  /* first mismatching byte offset when !verify_ok */
    int host_numa_actual; /* where the host buffer's pages are: node, -1 n/a or unknown, -2 mixed */
} gq_flow_result;

/* Collectives (ops version 4): NCCL's all-reduce, all-gather, ... over a
 * group of GPUs, as nccl-tests run them, several groups at once if asked.
 * The backend only runs iterations and tells time; rounds, medians, the
 * bandwidth formulas, the overlap rule between groups and the sanity guard
 * live above the seam (src/measure). */
typedef enum gq_coll_op {
    GQ_COLL_ALL_REDUCE = 0,
    GQ_COLL_ALL_GATHER,
    GQ_COLL_REDUCE_SCATTER,
    GQ_COLL_ALL_TO_ALL,
    GQ_COLL_BROADCAST,
    GQ_COLL_NOPS
} gq_coll_op;

#define GQ_COLL_MAX_GROUPS 32
typedef struct gq_coll_group {
    int ngpus;             /* ranks, 1..GQ_MAX_GPUS */
    int gpus[GQ_MAX_GPUS]; /* rank r runs on GPU gpus[r] */
} gq_coll_group;

typedef struct gq_coll_req {
    gq_coll_op op;
    /* nccl-tests' "size" column for this op, in bytes of float32 data
     * (all-reduce, broadcast: each rank's buffer; all-gather: the whole
     * gathered output; reduce-scatter: the whole input; all-to-all: each
     * rank's send buffer). A multiple of 4 * ngpus of every group. */
    uint64_t bytes;
    int ngroups;                              /* 1..GQ_COLL_MAX_GROUPS, run at once */
    gq_coll_group groups[GQ_COLL_MAX_GROUPS]; /* no GPU in two groups */
    int warmup;                               /* untimed iterations first (nccl-tests -w) */
    int iters;                                /* timed iterations, back to back (nccl-tests -n), >= 1 */
    bool verify;                              /* check every rank's result after the timed part */
    /* nccl-tests' -e (the sweep's largest size, bytes; 0: bytes). As
     * nccl-tests' startColl does "to avoid cache effects", iteration i
     * (warmup and timed parts each count from 0) moves its send and receive
     * pointers by bytes x (i % (span / bytes)) within buffers allocated for
     * the span, so a small size does not reuse one L2-warm pair. A backend
     * allocates only the slices the run touches (gq_coll_slices). */
    uint64_t span;
} gq_coll_req;

/* The slices of req->bytes a run touches: min(span / bytes, max(warmup,
 * iters)), at least 1. Iteration i uses slice i % gq_coll_slices(req), the
 * same slice as nccl-tests' i % (span / bytes) for every i below
 * max(warmup, iters); later untimed iterations stay within the slices. */
static inline uint64_t gq_coll_slices(const gq_coll_req *req)
{
    uint64_t steps = req->bytes && req->span > req->bytes ? req->span / req->bytes : 1;
    uint64_t most = (uint64_t)(req->warmup > req->iters ? req->warmup : req->iters);
    uint64_t n = steps < most ? steps : most;
    return n ? n : 1;
}

typedef struct gq_coll_result { /* one per group, in group order */
    int status;                 /* GQ_OK or a negative gq_status */
    char error[200];
    double t_start, t_end; /* the group's timed window (all iters), backend clock; the
                              timed parts of all groups start after one barrier */
    int iters_done;
    bool verified, verify_ok;
} gq_coll_result;

typedef struct gq_coll_info {
    bool available;    /* collectives can run (NCCL loaded; the sim: always) */
    char library[160]; /* what was loaded, e.g. "libnccl.so.2 (NCCL 2.23.4)", or "simulated ring/tree" */
    char why[240];     /* !available: one line, e.g. "NCCL not found (libnccl.so.2: cannot open ...)" */
} gq_coll_info;

typedef struct gq_backend gq_backend;

/* What else is using a GPU (the clean room, measure/cleanroom.h). */
#define GQ_LOAD_MAX_PROCS 8
typedef struct gq_gpu_proc {
    int pid;        /* as the driver reports it */
    char name[48];  /* from /proc/PID/comm; "" when the process is not visible here */
    bool graphics;  /* from the graphics list (else compute) */
    bool visible;   /* the pid exists in this process's PID namespace */
    double mem_mib; /* memory it holds on the GPU; < 0 unknown */
} gq_gpu_proc;

typedef struct gq_gpu_load {
    bool procs_known; /* the running-process lists could be read */
    int nprocs;       /* processes other than this one, up to GQ_LOAD_MAX_PROCS listed */
    int nprocs_total; /* all of them, when more than fit */
    gq_gpu_proc procs[GQ_LOAD_MAX_PROCS];
    double util_pct;     /* GPU utilization over the driver's last sample period; < 0 unknown */
    double mem_used_mib; /* device memory in use by every process; < 0 unknown */
} gq_gpu_load;

/* Backend options, as fio's engines own theirs (ioengine_ops.options):
 * each backend declares its options in a table (name, value kind, bounds,
 * help) that the CLI can list, and parses them into its own options struct
 * (opaque to the seam) through its opt_parse hook. The seam carries no
 * backend's fields, only the KEY=VALUE pairs the caller collected. */
typedef enum gq_backend_opt_kind {
    GQ_BE_OPT_STR = 0, /* non-empty text */
    GQ_BE_OPT_INT,     /* whole number within [lo, hi] */
    GQ_BE_OPT_DOUBLE,  /* finite number within [lo, hi] */
} gq_backend_opt_kind;

typedef struct gq_backend_opt {
    const char *name; /* the command-line name without "--", e.g. "sim-seed"; NULL ends a table */
    gq_backend_opt_kind kind;
    const char *arg;  /* the value's placeholder in help, e.g. "N" */
    const char *def;  /* the default as help shows it; NULL = none */
    const char *help; /* one line */
    double lo, hi;    /* bounds of INT and DOUBLE values; lo == hi = none */
    bool opens;       /* giving this option selects this backend (sim: --sim) */
    /* The values shell completion offers, NULL-terminated (sim: the built-in
     * machines; a file name is accepted too); NULL: none. */
    const char *const *(*values)(void);
} gq_backend_opt;

/* A checked option value: the text, and the number for INT and DOUBLE. */
typedef struct gq_backend_val {
    const char *str;
    long long i;
    double d;
} gq_backend_val;

typedef struct gq_backend_kv {
    const char *key;   /* an option name of the backend's table */
    const char *value; /* the caller's string, alive until gq_backend_open returns */
} gq_backend_kv;

#define GQ_BACKEND_MAX_KV 16

typedef struct gq_backend_opts {
    int nkv;
    gq_backend_kv kv[GQ_BACKEND_MAX_KV];
    /* storage for values formatted by gq_backend_opts_addf */
    char store[1024];
    size_t used;
} gq_backend_opts;

/* Append KEY=VALUE (the strings are borrowed; a key given again replaces
 * the earlier value). GQ_E_USAGE when full. */
int gq_backend_opts_add(gq_backend_opts *o, const char *key, const char *value, gq_err *err);
/* Same, with the value formatted into o's own storage. */
int gq_backend_opts_addf(gq_backend_opts *o, gq_err *err, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* The value of KEY in o, or NULL. */
const char *gq_backend_opts_get(const gq_backend_opts *o, const char *key);

typedef struct gq_backend_ops {
    int version; /* GQ_BACKEND_OPS_VERSION */
    const char *name;
    unsigned flags; /* GQ_BE_* */

    /* The backend's own options: a table ended by a NULL name (NULL = the
     * backend takes none), the size of the struct they are parsed into, and
     * the hooks that fill it. The seam checks each KEY=VALUE against the
     * table (known name, value kind, bounds) before opt_parse sees it, so
     * opt_parse only checks what the table cannot say (e.g. a fault spec's
     * grammar) and stores the value; opt_default (optional) sets the
     * defaults first. Strings stored may point into the gq_backend_opts and
     * are valid until init returns. Errors are one line that names the
     * option and what is right. */
    const gq_backend_opt *options;
    size_t opts_size;
    void (*opt_default)(void *bopts);
    int (*opt_parse)(void *bopts, const gq_backend_opt *opt, const gq_backend_val *v, gq_err *err);

    /* Required. Sets be->priv, the backend's own state (stress models
     * included). bopts is the backend's options struct filled by the hooks
     * above (NULL when opts_size is 0); init checks what needs the machine
     * (e.g. a fault on a GPU the machine does not have).
     * GQ_E_NODEV when there is no device/driver. */
    int (*init)(gq_backend *be, const gq_backend_opts *o, const void *bopts, gq_err *err);
    void (*fini)(gq_backend *be);
    /* Required. Fill *t (already gq_topo_init()ed). */
    int (*discover)(gq_backend *be, gq_topo *t, gq_err *err);

    /* Required for transfers. prepare allocates and fills buffers for the
     * flows (host buffers pinned on the flow's NUMA node) and enables or
     * disables peer access as each flow's method needs. A prepared group is
     * run any number of times, then released. */
    int (*prepare)(gq_backend *be, const gq_flow *flows, int nflows, gq_group **out, gq_err *err);
    /* Run every flow of the group concurrently from a synchronized start.
     * res[] has nflows entries, in flow order. A per-flow failure is reported
     * in res[i].status; the return value is GQ_OK unless the whole run failed. */
    int (*run)(gq_backend *be, gq_group *g, const gq_run_opts *o, gq_flow_result *res, gq_err *err);
    void (*release)(gq_backend *be, gq_group *g);

    /* Optional. Average one-way latency in ns. */
    int (*latency)(gq_backend *be, const gq_latency_req *r, double *ns, gq_err *err);

    /* Optional. Free/total device memory of a GPU, and host memory that can be
     * pinned on a NUMA node (-1 = any), for rejecting buffers that cannot fit
     * before anything runs. */
    int (*mem_info)(gq_backend *be, int gpu, uint64_t *free_bytes, uint64_t *total_bytes, gq_err *err);
    int (*host_mem_avail)(gq_backend *be, int numa, uint64_t *bytes, gq_err *err);

    /* Optional. Clock used for windows, seconds. */
    double (*now)(gq_backend *be);

    /* Optional: stress. Start a GEMM load on a GPU (returns immediately; the load
     * runs until stress_stop), poll its progress (completed GEMMs, faulty
     * elements found so far, achieved TFLOP/s), and sample telemetry. */
    int (*stress_start)(gq_backend *be, int gpu, gq_precision p, gq_err *err);
    int (*stress_poll)(gq_backend *be, int gpu, uint64_t *gemms, uint64_t *faulty, double *tflops,
                       gq_err *err);
    int (*stress_stop)(gq_backend *be, int gpu, gq_err *err);
    int (*sample)(gq_backend *be, int gpu, gq_sample *s, gq_err *err);

    /* Optional. Let `seconds` pass on the backend's clock (between stress
     * samples). Without it callers sleep for real; a GQ_BE_VIRTUAL_TIME
     * backend that runs stress must have it: it advances the model clock, so
     * a 5-minute simulated stress takes no wall time. */
    void (*wait)(gq_backend *be, double seconds);

    /* Optional (version 3): what else uses a GPU now, for the clean room
     * (measure/cleanroom.h): the driver's compute and graphics process
     * lists without this process, utilization and memory in use. Cheap
     * enough to call before and after every measurement. GQ_E_UNSUPP when
     * the backend cannot tell (then nothing is claimed clean or busy). */
    int (*observe)(gq_backend *be, int gpu, gq_gpu_load *out, gq_err *err);
    /* Optional (version 4): collectives. coll_probe says whether they can
     * run here and with what (never fails for lack of a library: it fills
     * info->why). coll_run runs req's groups at once: warmup iterations,
     * a barrier, then iters timed iterations per group; res[] has
     * req->ngroups entries. A group whose timed part ends first keeps
     * running untimed iterations until every group's has ended (as an
     * interfering copy does), so each window lies under the others' load;
     * they finish before the data check. GQ_E_NOLIB (the library is
     * missing: info->why's line) or GQ_E_UNSUPP when !available. */
    int (*coll_probe)(gq_backend *be, gq_coll_info *info);
    int (*coll_run)(gq_backend *be, const gq_coll_req *req, gq_coll_result *res, gq_err *err);
} gq_backend_ops;

#define GQ_BE_SIMULATED 0x1u    /* figures are model output, not measurements */
#define GQ_BE_VIRTUAL_TIME 0x2u /* now() is model time; no wall-clock sleeping needed */

struct gq_backend {
    const gq_backend_ops *ops;
    void *priv;
};

/* Registry. Checks version and required hooks; returns GQ_E_FAIL with a message
 * naming the missing hook. Built-in backends ("cuda" when built with CUDA,
 * "sim") are registered by gq_backend_register_builtin(). */
int gq_backend_register(const gq_backend_ops *ops, gq_err *err);
void gq_backend_register_builtin(void);
const gq_backend_ops *gq_backend_find(const char *name);
/* Names of registered backends, NULL-terminated. */
const char *const *gq_backend_names(void);

/* Check o's KEY=VALUE pairs against backend `name`'s options and parse them
 * through its hooks without opening it: a command refuses a bad option
 * before it starts work. Checks that need the machine happen at open. */
int gq_backend_check_opts(const char *name, const gq_backend_opts *o, gq_err *err);
/* The options table of backend `name` (NULL when it has none or is not built in). */
const gq_backend_opt *gq_backend_options(const char *name);

/* Open: find by name, parse o's options (as gq_backend_check_opts), init.
 * On failure *be is left closed. */
int gq_backend_open(gq_backend *be, const char *name, const gq_backend_opts *o, gq_err *err);
void gq_backend_close(gq_backend *be);

static inline bool gq_backend_simulated(const gq_backend *be)
{
    return be && be->ops && (be->ops->flags & GQ_BE_SIMULATED);
}

/* The staging chunk of a GQ_METHOD_STAGED flow: chunk_bytes, or 8 MiB,
 * but never more than 128 chunks per copy (larger copies get larger chunks,
 * 4 KiB-aligned), and never more than the copy. */
uint64_t gq_flow_stage_chunk(const gq_flow *f);
/* The smallest piece a backend moves a flow's copy in with a grain: whole
 * staging chunks for STAGED, 16 bytes otherwise. A grain is rounded up to it. */
uint64_t gq_flow_piece_quantum(const gq_flow *f);

/* GQ_E_USAGE naming the flow unless every split_with of the group names a
 * partner that names it back, both SM copies executed by the same GPU with
 * the same bytes, both interferers or neither. Backends call it from prepare. */
int gq_flows_check_splits(const gq_flow *flows, int n, gq_err *err);

#endif
