/* The shared vocabulary of every layer: limits, where a buffer lives, how a
 * copy is executed, GEMM precisions, and one telemetry sample. No dependency
 * at all (src/core is the bottom layer; see docs/architecture.md). */
#ifndef GQ_CORE_TYPES_H
#define GQ_CORE_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The schema of every gpuqual document and journal line (docs/json.md). */
#define GQ_SCHEMA_VERSION 2

#define GQ_MAX_GPUS 64
#define GQ_MAX_NUMA 16

/* Where a buffer lives. For host, index is a NUMA node, or GQ_NUMA_LOCAL
 * (the node local to the flow's GPU; falls back to node 0). */
typedef enum gq_ep_kind { GQ_EP_HOST = 0, GQ_EP_GPU = 1 } gq_ep_kind;
#define GQ_NUMA_LOCAL (-1)
/* Endpoint index of an aggregate's endpoint that spans several GPUs or NUMA
 * nodes ("gpu:*", "host:*"). */
#define GQ_EP_MANY (-2)
typedef struct gq_endpoint {
    gq_ep_kind kind;
    int index;
} gq_endpoint;

/* The one GPU an endpoint names: its index, or -1 for host memory, for the
 * all-GPUs endpoint "gpu:*" (index -2) and for an index out of range. */
static inline int gq_ep_gpu(gq_endpoint e)
{
    return e.kind == GQ_EP_GPU && e.index >= 0 && e.index < GQ_MAX_GPUS ? e.index : -1;
}

/* How the copy is executed. */
typedef enum gq_method {
    GQ_METHOD_CE = 0,            /* copy engine (cudaMemcpyAsync) */
    GQ_METHOD_SM = 1,            /* SM copy kernel, 16-byte accesses */
    GQ_METHOD_STAGED = 2,        /* GPU -> pinned host -> GPU, chunked, double-buffered, pipelined */
    GQ_METHOD_DRIVER_STAGED = 3, /* GPU -> GPU with peer access disabled: the driver stages
                                    (p2pBandwidthLatencyTest "P2P=Disabled") */
} gq_method;

typedef enum gq_precision { GQ_PREC_BF16 = 0, GQ_PREC_FP16, GQ_PREC_FP32, GQ_PREC_FP64 } gq_precision;

/* One telemetry sample of one GPU (NVML or the sim's model). -1 / NAN = unknown. */
typedef struct gq_sample {
    double t; /* seconds, backend clock */
    double temp_c, mem_temp_c;
    double power_w, power_limit_w;
    double sm_clock_mhz, mem_clock_mhz;
    double util_pct;
    uint64_t clock_reasons; /* NVML clocks-event reason bitmask */
    int pcie_gen, pcie_width;
    uint64_t pcie_replay;                    /* cumulative replay counter */
    uint64_t ecc_corrected, ecc_uncorrected; /* volatile, cumulative */
    int remapped_rows;                       /* pending + failed; -1 unknown */
    bool lost;                               /* GPU fell off the bus / no longer answers */
    double temp_slowdown_c;                  /* the GPU's slowdown temperature threshold; NAN unknown */
} gq_sample;

/* Bits of gq_sample.clock_reasons: NVML's nvmlClocksEventReason* values. */
#define GQ_CLK_GPU_IDLE 0x1ull
#define GQ_CLK_APP_CLOCKS 0x2ull
#define GQ_CLK_SW_POWER_CAP 0x4ull
#define GQ_CLK_HW_SLOWDOWN 0x8ull
#define GQ_CLK_SYNC_BOOST 0x10ull
#define GQ_CLK_SW_THERMAL 0x20ull
#define GQ_CLK_HW_THERMAL 0x40ull
#define GQ_CLK_HW_POWER_BRAKE 0x80ull
#define GQ_CLK_DISPLAY_CLOCKS 0x100ull

const char *gq_method_name(gq_method m); /* "ce", "sm", "staged", "driver_staged" */
const char *gq_precision_name(gq_precision p);
/* "gpu:N" or "host:N" ("host:local"; "gpu:*" or "host:*" for GQ_EP_MANY). buf >= 24 bytes. */
const char *gq_endpoint_str(gq_endpoint e, char *buf, size_t n);

#endif
