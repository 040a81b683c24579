/* PLACEHOLDER: replaced by the discovery work (issue 2). */
#include "backend/cuda/cuda_internal.h"

int gq_cuda_discover(gq_topo *t, gq_err *err)
{
    (void)t;
    return gq_err_set(err, GQ_E_NODEV, "CUDA discovery is not implemented yet");
}
