/* Names of the GPU modes NVML reports (topo.h). */
#include "topo/topo.h"

const char *gq_mode_name(int m)
{
    switch (m) {
    case GQ_MODE_ENABLED: return "enabled";
    case GQ_MODE_DISABLED: return "disabled";
    case GQ_MODE_UNSUPPORTED: return "not supported";
    default: return "unknown";
    }
}
