#include "core/types.h"

#include <stdio.h>

const char *gq_method_name(gq_method m)
{
    switch (m) {
    case GQ_METHOD_CE: return "ce";
    case GQ_METHOD_SM: return "sm";
    case GQ_METHOD_STAGED: return "staged";
    case GQ_METHOD_DRIVER_STAGED: return "driver_staged";
    }
    return "?";
}

const char *gq_precision_name(gq_precision p)
{
    switch (p) {
    case GQ_PREC_BF16: return "bf16";
    case GQ_PREC_FP16: return "fp16";
    case GQ_PREC_FP32: return "fp32";
    case GQ_PREC_FP64: return "fp64";
    }
    return "?";
}

const char *gq_endpoint_str(gq_endpoint e, char *buf, size_t n)
{
    if (e.index == GQ_EP_MANY)
        snprintf(buf, n, "%s:*", e.kind == GQ_EP_GPU ? "gpu" : "host");
    else if (e.kind == GQ_EP_GPU)
        snprintf(buf, n, "gpu:%d", e.index);
    else if (e.index == GQ_NUMA_LOCAL)
        snprintf(buf, n, "host:local");
    else
        snprintf(buf, n, "host:%d", e.index);
    return buf;
}
