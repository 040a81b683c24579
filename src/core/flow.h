/* What a measurement asks a backend to do, in the vocabulary both sides
 * share: a flow (one worker's stream of copies, gq_flow) and a latency
 * request (gq_latency_req). The backend seam (backend/backend.h) runs them;
 * the catalog, the harness and the analyses that plan measurements
 * (measure/measurement.h: probes, placement) describe them, without the
 * seam. See backend/backend.h for how a group of flows runs.
 */
#ifndef GQ_CORE_FLOW_H
#define GQ_CORE_FLOW_H

#include <stdbool.h>
#include <stdint.h>

#include "core/types.h"

typedef struct gq_flow {
    gq_endpoint src, dst;
    gq_method method;
    /* GPU whose copy engine / SMs / stream execute the copy. For GPU<->GPU
     * over P2P: src GPU = "write" (push), dst GPU = "read" (pull), as in
     * nvbandwidth. For host<->GPU it is the GPU end. */
    int exec_gpu;
    uint64_t bytes;       /* per copy; > 0 */
    uint64_t chunk_bytes; /* STAGED only: pipeline chunk; 0 = backend default (8 MiB) */
    int tag;              /* caller's id, copied to the result; backends ignore it */
    /* An interfering flow: it only loads the fabric while other flows are
     * measured; its figures are not reported. Its data is not checked, so a
     * backend may share its host source buffer with other interfering flows
     * of the group and move each copy as several transfers over a smaller
     * buffer (the bytes per copy stay `bytes`), which bounds pinned host
     * memory. The catalog sets it on every flow it does not report.
     * In a counted run (reps > 0) an interferer does not stop at reps: it
     * copies until every flow of the group that is not an interferer has
     * finished its copies (so it loads the fabric for the whole of their
     * windows, however its rate compares with theirs), and then stops. */
    bool interferer;
    /* The source is read-only host memory that may be one buffer shared
     * with the other flows of the group that set it (same NUMA node and
     * size); each flow's destination is still its own and still checked. */
    bool share_src;
    /* 1 + index of this flow's split-warp partner in the group, or 0. Two
     * SM flows that name each other (same exec_gpu, same bytes) run as ONE
     * kernel whose warps alternate between them, as nvbandwidth's
     * split-warp copy does: both report the kernel's window, and each its
     * own bytes. Each keeps its own buffers, filled and checked as usual. */
    int split_with;
} gq_flow;

typedef enum gq_lat_kind {
    GQ_LAT_POINTER_CHASE = 0, /* SM kernel chasing pointers in the remote memory (nvbandwidth *_latency_sm) */
    GQ_LAT_COPY = 1,          /* tiny cudaMemcpyAsync round trips (p2pBandwidthLatencyTest latency) */
} gq_lat_kind;

typedef struct gq_latency_req {
    gq_lat_kind kind;
    gq_endpoint target; /* memory being chased / written */
    int exec_gpu;       /* GPU running the chase / issuing the copy */
    bool p2p;           /* for GPU targets: peer access on (true) or staged by driver */
    int iters;          /* loads or copies to average over */
} gq_latency_req;

#endif
