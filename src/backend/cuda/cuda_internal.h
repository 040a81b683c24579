/* Internal to the CUDA backend (src/backend/cuda). Only files in this folder
 * include CUDA headers. */
#ifndef GQ_BACKEND_CUDA_INTERNAL_H
#define GQ_BACKEND_CUDA_INTERNAL_H

#include "backend/backend.h"

/* CUDA-runtime part of discovery: device count, names, memory, bus ids,
 * compute capability, cudaDeviceCanAccessPeer, runtime/driver versions; then
 * the host parts (NVML, hwloc, sysfs) through src/topo. GQ_E_NODEV when there
 * is no GPU or driver, with the CUDA error text. (cuda_discover.c) */
int gq_cuda_discover(gq_topo *t, gq_err *err);

#endif
