/* NVML through dlopen. The types and constants below are the ones of the
 * public nvml.h (NVML API Reference, driver 450 and later), declared by hand
 * so that gpuqual builds without the driver's headers and runs without its
 * library. Only what gpuqual calls is declared. */
#include "topo/nvml.h"

#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/units.h"
#include "topo/pcitree.h"

/* ---- the slice of nvml.h that gpuqual uses -------------------------------- */
typedef int nvml_ret;                   /* nvmlReturn_t */
typedef struct gq_nvml_dev_s *nvml_dev; /* nvmlDevice_t */

enum {
    NVML_SUCCESS = 0,
    NVML_ERROR_NOT_SUPPORTED = 3,
    NVML_ERROR_GPU_IS_LOST = 15,
};

/* nvmlPciInfo_t as nvmlDeviceGetPciInfo_v3 / GetNvLinkRemotePciInfo_v2 fill
 * it. Padded: older layouts carried reserved words after busId, and a driver
 * writing a larger struct must not run past our buffer. */
typedef union nvml_pci_info {
    struct {
        char busIdLegacy[16];
        unsigned domain, bus, device, pciDeviceId, pciSubSystemId;
        char busId[32];
    } v;
    unsigned char pad[256];
} nvml_pci_info;

typedef struct nvml_memory { /* nvmlMemory_t (v1) */
    unsigned long long total, free, used;
} nvml_memory;

/* nvmlProcessInfo_t as nvmlDevice{Compute,Graphics}RunningProcesses_v3 fill
 * it (nvml.h, R510 and later; the same layout as nvmlProcessInfo_v2_t):
 * 4 bytes of pid, 4 of padding, 8 of memory, two 4-byte instance ids: 24
 * bytes on LP64. tests/unit/test_nvml_layout.c pins the offsets and
 * tests/gpu checks them against a real call (this process must be listed). */
typedef struct nvml_process_info {
    unsigned int pid;
    unsigned long long usedGpuMemory; /* NVML_VALUE_NOT_AVAILABLE (all ones) when unknown */
    unsigned int gpuInstanceId;
    unsigned int computeInstanceId;
} nvml_process_info;
#define NVML_ERROR_INSUFFICIENT_SIZE 7

typedef struct nvml_utilization { /* nvmlUtilization_t */
    unsigned gpu, memory;
} nvml_utilization;

typedef union nvml_value { /* nvmlValue_t */
    double dVal;
    unsigned uiVal;
    unsigned long ulVal;
    unsigned long long ullVal;
    long long sllVal;
    int siVal;
    unsigned short usVal;
} nvml_value;

typedef struct nvml_field_value { /* nvmlFieldValue_t */
    unsigned fieldId, scopeId;
    long long timestamp, latencyUsec;
    int valueType; /* nvmlValueType_t */
    nvml_ret nvmlReturn;
    nvml_value value;
} nvml_field_value;

enum { /* nvmlValueType_t */
       NVML_VALUE_TYPE_DOUBLE = 0,
       NVML_VALUE_TYPE_UNSIGNED_INT = 1,
       NVML_VALUE_TYPE_UNSIGNED_LONG = 2,
       NVML_VALUE_TYPE_UNSIGNED_LONG_LONG = 3,
       NVML_VALUE_TYPE_SIGNED_LONG_LONG = 4,
       NVML_VALUE_TYPE_SIGNED_INT = 5,
       NVML_VALUE_TYPE_UNSIGNED_SHORT = 6,
};

#define NVML_FI_DEV_MEMORY_TEMP 82
#define NVML_NVLINK_MAX_LINKS 18
#define NVML_TEMPERATURE_GPU 0
#define NVML_TEMPERATURE_THRESHOLD_SLOWDOWN 1
#define NVML_CLOCK_SM 1
#define NVML_CLOCK_MEM 2
#define NVML_MEMORY_ERROR_TYPE_CORRECTED 0
#define NVML_MEMORY_ERROR_TYPE_UNCORRECTED 1
#define NVML_VOLATILE_ECC 0
#define NVML_FEATURE_ENABLED 1
#define NVML_NVLINK_DEVICE_TYPE_GPU 0x00
#define NVML_NVLINK_DEVICE_TYPE_SWITCH 0x02

enum { /* nvmlGpuP2PCapsIndex_t */
       NVML_P2P_CAPS_INDEX_READ = 0,
       NVML_P2P_CAPS_INDEX_WRITE = 1,
       NVML_P2P_CAPS_INDEX_NVLINK = 2,
};

enum { /* nvmlGpuP2PStatus_t */
       NVML_P2P_STATUS_OK = 0,
       NVML_P2P_STATUS_CHIPSET_NOT_SUPPORTED = 1,
       NVML_P2P_STATUS_GPU_NOT_SUPPORTED = 2,
       NVML_P2P_STATUS_IOH_TOPOLOGY_NOT_SUPPORTED = 3,
       NVML_P2P_STATUS_DISABLED_BY_REGKEY = 4,
       NVML_P2P_STATUS_NOT_SUPPORTED = 5,
};

enum { /* nvmlGpuTopologyLevel_t */
       NVML_TOPOLOGY_INTERNAL = 0,
       NVML_TOPOLOGY_SINGLE = 10,
       NVML_TOPOLOGY_MULTIPLE = 20,
       NVML_TOPOLOGY_HOSTBRIDGE = 30,
       NVML_TOPOLOGY_NODE = 40,
       NVML_TOPOLOGY_SYSTEM = 50,
};

/* ---- entry points ------------------------------------------------------- */
typedef struct nvml_fns {
    nvml_ret (*Init)(void);
    nvml_ret (*Shutdown)(void);
    const char *(*ErrorString)(nvml_ret);
    nvml_ret (*SystemGetDriverVersion)(char *, unsigned);
    nvml_ret (*SystemGetCudaDriverVersion)(int *);
    nvml_ret (*DeviceGetCount)(unsigned *);
    nvml_ret (*DeviceGetHandleByIndex)(unsigned, nvml_dev *);
    nvml_ret (*DeviceGetHandleByPciBusId)(const char *, nvml_dev *);
    nvml_ret (*DeviceGetName)(nvml_dev, char *, unsigned);
    nvml_ret (*DeviceGetUUID)(nvml_dev, char *, unsigned);
    nvml_ret (*DeviceGetPciInfo)(nvml_dev, nvml_pci_info *);
    nvml_ret (*DeviceGetMemoryInfo)(nvml_dev, nvml_memory *);
    nvml_ret (*DeviceGetCurrPcieLinkGeneration)(nvml_dev, unsigned *);
    nvml_ret (*DeviceGetCurrPcieLinkWidth)(nvml_dev, unsigned *);
    nvml_ret (*DeviceGetMaxPcieLinkGeneration)(nvml_dev, unsigned *);
    nvml_ret (*DeviceGetMaxPcieLinkWidth)(nvml_dev, unsigned *);
    nvml_ret (*DeviceGetEnforcedPowerLimit)(nvml_dev, unsigned *);
    nvml_ret (*DeviceGetNvLinkState)(nvml_dev, unsigned, int *);
    nvml_ret (*DeviceGetNvLinkRemotePciInfo)(nvml_dev, unsigned, nvml_pci_info *);
    nvml_ret (*DeviceGetNvLinkRemoteDeviceType)(nvml_dev, unsigned, int *);
    nvml_ret (*DeviceGetP2PStatus)(nvml_dev, nvml_dev, int, int *);
    nvml_ret (*DeviceGetTopologyCommonAncestor)(nvml_dev, nvml_dev, int *);
    nvml_ret (*DeviceGetTemperature)(nvml_dev, int, unsigned *);
    nvml_ret (*DeviceGetFieldValues)(nvml_dev, int, nvml_field_value *);
    nvml_ret (*DeviceGetPowerUsage)(nvml_dev, unsigned *);
    nvml_ret (*DeviceGetClockInfo)(nvml_dev, int, unsigned *);
    nvml_ret (*DeviceGetUtilizationRates)(nvml_dev, nvml_utilization *);
    nvml_ret (*DeviceGetCurrentClocksEventReasons)(nvml_dev, unsigned long long *);
    nvml_ret (*DeviceGetPcieReplayCounter)(nvml_dev, unsigned *);
    nvml_ret (*DeviceGetTotalEccErrors)(nvml_dev, int, int, unsigned long long *);
    nvml_ret (*DeviceGetRemappedRows)(nvml_dev, unsigned *, unsigned *, unsigned *, unsigned *);
    nvml_ret (*DeviceGetTemperatureThreshold)(nvml_dev, int, unsigned *);
    nvml_ret (*DeviceGetComputeRunningProcesses)(nvml_dev, unsigned *, nvml_process_info *);
    nvml_ret (*DeviceGetGraphicsRunningProcesses)(nvml_dev, unsigned *, nvml_process_info *);
    nvml_ret (*DeviceGetVbiosVersion)(nvml_dev, char *, unsigned);
    nvml_ret (*DeviceGetSerial)(nvml_dev, char *, unsigned);
    nvml_ret (*DeviceGetEccMode)(nvml_dev, int *, int *);           /* nvmlEnableState_t current, pending */
    nvml_ret (*DeviceGetMigMode)(nvml_dev, unsigned *, unsigned *); /* current, pending */
    nvml_ret (*DeviceGetPersistenceMode)(nvml_dev, int *);          /* nvmlEnableState_t */
} nvml_fns;

/* Each entry: the struct slot and the symbol names to try, newest first
 * (versioned entry points, and names NVIDIA renamed). */
typedef struct nvml_sym {
    size_t off;
    const char *names[3];
    bool required;
} nvml_sym;

#define SLOT(f) offsetof(nvml_fns, f)
static const nvml_sym syms[] = {
    {.off = SLOT(Init), .names = {"nvmlInit_v2", "nvmlInit"}, .required = true},
    {.off = SLOT(Shutdown), .names = {"nvmlShutdown"}, .required = true},
    {.off = SLOT(ErrorString), .names = {"nvmlErrorString"}},
    {.off = SLOT(SystemGetDriverVersion), .names = {"nvmlSystemGetDriverVersion"}},
    {.off = SLOT(SystemGetCudaDriverVersion),
     .names = {"nvmlSystemGetCudaDriverVersion_v2", "nvmlSystemGetCudaDriverVersion"}},
    {.off = SLOT(DeviceGetCount), .names = {"nvmlDeviceGetCount_v2", "nvmlDeviceGetCount"}},
    {.off = SLOT(DeviceGetHandleByIndex),
     .names = {"nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex"}},
    {.off = SLOT(DeviceGetHandleByPciBusId),
     .names = {"nvmlDeviceGetHandleByPciBusId_v2", "nvmlDeviceGetHandleByPciBusId"}},
    {.off = SLOT(DeviceGetName), .names = {"nvmlDeviceGetName"}},
    {.off = SLOT(DeviceGetUUID), .names = {"nvmlDeviceGetUUID"}},
    {.off = SLOT(DeviceGetPciInfo), .names = {"nvmlDeviceGetPciInfo_v3"}},
    {.off = SLOT(DeviceGetMemoryInfo), .names = {"nvmlDeviceGetMemoryInfo"}},
    {.off = SLOT(DeviceGetCurrPcieLinkGeneration), .names = {"nvmlDeviceGetCurrPcieLinkGeneration"}},
    {.off = SLOT(DeviceGetCurrPcieLinkWidth), .names = {"nvmlDeviceGetCurrPcieLinkWidth"}},
    {.off = SLOT(DeviceGetMaxPcieLinkGeneration), .names = {"nvmlDeviceGetMaxPcieLinkGeneration"}},
    {.off = SLOT(DeviceGetMaxPcieLinkWidth), .names = {"nvmlDeviceGetMaxPcieLinkWidth"}},
    {.off = SLOT(DeviceGetEnforcedPowerLimit), .names = {"nvmlDeviceGetEnforcedPowerLimit"}},
    {.off = SLOT(DeviceGetNvLinkState), .names = {"nvmlDeviceGetNvLinkState"}},
    {.off = SLOT(DeviceGetNvLinkRemotePciInfo), .names = {"nvmlDeviceGetNvLinkRemotePciInfo_v2"}},
    {.off = SLOT(DeviceGetNvLinkRemoteDeviceType), .names = {"nvmlDeviceGetNvLinkRemoteDeviceType"}},
    {.off = SLOT(DeviceGetP2PStatus), .names = {"nvmlDeviceGetP2PStatus"}},
    {.off = SLOT(DeviceGetTopologyCommonAncestor), .names = {"nvmlDeviceGetTopologyCommonAncestor"}},
    {.off = SLOT(DeviceGetTemperature), .names = {"nvmlDeviceGetTemperature"}},
    {.off = SLOT(DeviceGetFieldValues), .names = {"nvmlDeviceGetFieldValues"}},
    {.off = SLOT(DeviceGetPowerUsage), .names = {"nvmlDeviceGetPowerUsage"}},
    {.off = SLOT(DeviceGetClockInfo), .names = {"nvmlDeviceGetClockInfo"}},
    {.off = SLOT(DeviceGetUtilizationRates), .names = {"nvmlDeviceGetUtilizationRates"}},
    {.off = SLOT(DeviceGetCurrentClocksEventReasons),
     .names = {"nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"}},
    {.off = SLOT(DeviceGetPcieReplayCounter), .names = {"nvmlDeviceGetPcieReplayCounter"}},
    {.off = SLOT(DeviceGetTotalEccErrors), .names = {"nvmlDeviceGetTotalEccErrors"}},
    {.off = SLOT(DeviceGetRemappedRows), .names = {"nvmlDeviceGetRemappedRows"}},
    {.off = SLOT(DeviceGetTemperatureThreshold), .names = {"nvmlDeviceGetTemperatureThreshold"}},
    /* Only the _v3 entry points: _v2 has the same layout but older drivers'
     * _v2 filled it differently, and _v1 has no instance ids (16 bytes). */
    {.off = SLOT(DeviceGetComputeRunningProcesses), .names = {"nvmlDeviceGetComputeRunningProcesses_v3"}},
    {.off = SLOT(DeviceGetGraphicsRunningProcesses), .names = {"nvmlDeviceGetGraphicsRunningProcesses_v3"}},
    {.off = SLOT(DeviceGetVbiosVersion), .names = {"nvmlDeviceGetVbiosVersion"}},
    {.off = SLOT(DeviceGetSerial), .names = {"nvmlDeviceGetSerial"}},
    {.off = SLOT(DeviceGetEccMode), .names = {"nvmlDeviceGetEccMode"}},
    {.off = SLOT(DeviceGetMigMode), .names = {"nvmlDeviceGetMigMode"}},
    {.off = SLOT(DeviceGetPersistenceMode), .names = {"nvmlDeviceGetPersistenceMode"}},
};
#undef SLOT

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static void *lib;
static int refs;
static nvml_fns fn;

static const char *errstr(nvml_ret r)
{
    static _Thread_local char buf[32]; /* samplers of several GPUs may fail at once */
    if (fn.ErrorString) {
        const char *s = fn.ErrorString(r);
        if (s)
            return s;
    }
    snprintf(buf, sizeof buf, "NVML error %d", r);
    return buf;
}

/* Called with the lock held. */
static int load_library(gq_err *err)
{
    /* The loader's path first; then where GPU containers mount the driver's
     * libraries without adding them to the loader's cache. */
    static const char *const libnames[] = {"libnvidia-ml.so.1", "libnvidia-ml.so",
                                           "/usr/local/nvidia/lib64/libnvidia-ml.so.1"};
    char first_error[256] = "";
    if (lib)
        return GQ_OK;
    for (size_t i = 0; i < sizeof libnames / sizeof libnames[0] && !lib; i++) {
        lib = dlopen(libnames[i], RTLD_NOW | RTLD_LOCAL);
        if (!lib && !first_error[0]) {
            const char *e = dlerror();
            snprintf(first_error, sizeof first_error, "%s", e ? e : libnames[i]);
        }
    }
    if (!lib)
        return gq_err_set(err, GQ_E_UNSUPP, "%s", first_error);
    memset(&fn, 0, sizeof fn);
    for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++) {
        void *p = NULL;
        for (int k = 0; k < 3 && syms[i].names[k] && !p; k++)
            p = dlsym(lib, syms[i].names[k]);
        if (!p && syms[i].required) {
            char name[64];
            snprintf(name, sizeof name, "%s", syms[i].names[0]);
            dlclose(lib);
            lib = NULL;
            return gq_err_set(err, GQ_E_UNSUPP, "libnvidia-ml has no %s", name);
        }
        /* POSIX guarantees a data pointer from dlsym converts to a function pointer. */
        memcpy((char *)&fn + syms[i].off, &p, sizeof p);
    }
    return GQ_OK;
}

int gq_nvml_open(gq_err *err)
{
    int rc = GQ_OK;
    pthread_mutex_lock(&lock);
    if (refs > 0) {
        refs++;
        goto out;
    }
    if ((rc = load_library(err)))
        goto out;
    nvml_ret r = fn.Init();
    if (r != NVML_SUCCESS) {
        rc = gq_err_set(err, GQ_E_UNSUPP, "nvmlInit failed: %s", errstr(r));
        goto out;
    }
    refs = 1;
out:
    pthread_mutex_unlock(&lock);
    return rc;
}

void gq_nvml_close(void)
{
    pthread_mutex_lock(&lock);
    /* The library stays mapped: NVML may keep threads of its own, and a
     * later open is cheaper. */
    if (refs > 0 && --refs == 0)
        fn.Shutdown();
    pthread_mutex_unlock(&lock);
}

static int need_open(gq_err *err)
{
    pthread_mutex_lock(&lock);
    int open = refs > 0;
    pthread_mutex_unlock(&lock);
    if (!open)
        return gq_err_set(err, GQ_E_UNSUPP, "NVML is not loaded");
    return GQ_OK;
}

int gq_nvml_device_by_bus_id(const char *bus_id, gq_nvml_dev *d, gq_err *err)
{
    char norm[32];
    *d = NULL;
    if (need_open(err))
        return GQ_E_UNSUPP;
    if (!fn.DeviceGetHandleByPciBusId)
        return gq_err_set(err, GQ_E_UNSUPP, "libnvidia-ml has no nvmlDeviceGetHandleByPciBusId");
    if (!gq_pci_bus_id_normalize(bus_id, norm, sizeof norm))
        return gq_err_set(err, GQ_E_USAGE, "'%s' is not a PCI bus id (expected e.g. 0000:3b:00.0)", bus_id);
    nvml_ret r = fn.DeviceGetHandleByPciBusId(norm, d);
    if (r != NVML_SUCCESS)
        return gq_err_set(err, GQ_E_FAIL, "NVML does not know the GPU at %s: %s", norm, errstr(r));
    return GQ_OK;
}

static gq_p2p_status map_p2p(int s)
{
    switch (s) {
    case NVML_P2P_STATUS_OK: return GQ_P2P_OK;
    case NVML_P2P_STATUS_CHIPSET_NOT_SUPPORTED: return GQ_P2P_CNS;
    case NVML_P2P_STATUS_GPU_NOT_SUPPORTED: return GQ_P2P_GNS;
    case NVML_P2P_STATUS_IOH_TOPOLOGY_NOT_SUPPORTED: return GQ_P2P_TNS;
    case NVML_P2P_STATUS_DISABLED_BY_REGKEY: return GQ_P2P_DISABLED;
    case NVML_P2P_STATUS_NOT_SUPPORTED: return GQ_P2P_NS;
    default: return GQ_P2P_UNKNOWN;
    }
}

static gq_link_level map_level(int l)
{
    switch (l) {
    case NVML_TOPOLOGY_INTERNAL: /* two GPUs on one board: behind the board's own switch */
    case NVML_TOPOLOGY_SINGLE: return GQ_LEVEL_PIX;
    case NVML_TOPOLOGY_MULTIPLE: return GQ_LEVEL_PXB;
    case NVML_TOPOLOGY_HOSTBRIDGE: return GQ_LEVEL_PHB;
    case NVML_TOPOLOGY_NODE: return GQ_LEVEL_NODE;
    case NVML_TOPOLOGY_SYSTEM: return GQ_LEVEL_SYS;
    default: return GQ_LEVEL_UNKNOWN;
    }
}

static int find_gpu_by_bus(const gq_topo *t, const char *bus_id)
{
    char norm[32];
    if (!gq_pci_bus_id_normalize(bus_id, norm, sizeof norm))
        return -1;
    for (int i = 0; i < t->ngpu; i++)
        if (!strcmp(t->gpu[i].pci_bus_id, norm))
            return i;
    return -1;
}

/* A string NVML reads into buf: the text, "not supported" where NVML says
 * so, "" (unknown) on another error or without the entry point. */
static void fill_str(char *out, size_t n, nvml_ret (*get)(nvml_dev, char *, unsigned), nvml_dev d)
{
    char buf[96] = "";
    nvml_ret r = get ? get(d, buf, sizeof buf) : -1;
    buf[sizeof buf - 1] = 0;
    if (r == NVML_SUCCESS)
        snprintf(out, n, "%s", buf);
    else if (r == NVML_ERROR_NOT_SUPPORTED)
        snprintf(out, n, "not supported");
    else if (n)
        out[0] = 0;
}

/* An NVML mode (1 enabled, 0 disabled) as a gq_mode. */
static int mode_of(nvml_ret r, long v)
{
    if (r == NVML_ERROR_NOT_SUPPORTED)
        return GQ_MODE_UNSUPPORTED;
    if (r != NVML_SUCCESS)
        return GQ_MODE_UNKNOWN;
    return v == 1 ? GQ_MODE_ENABLED : v == 0 ? GQ_MODE_DISABLED : GQ_MODE_UNKNOWN;
}

/* VBIOS, serial, and the ECC, MIG and persistence modes. */
static void fill_identity(gq_gpu_info *g, nvml_dev d)
{
    int cur = -1, pending = -1;
    unsigned ucur = 2, upending = 2;
    nvml_ret r;
    fill_str(g->vbios, sizeof g->vbios, fn.DeviceGetVbiosVersion, d);
    fill_str(g->serial, sizeof g->serial, fn.DeviceGetSerial, d);
    /* each call before its value is read: the order of a call's arguments is unspecified */
    if (fn.DeviceGetEccMode) {
        r = fn.DeviceGetEccMode(d, &cur, &pending);
        g->ecc_mode = mode_of(r, cur);
    }
    if (fn.DeviceGetMigMode) {
        r = fn.DeviceGetMigMode(d, &ucur, &upending);
        g->mig_mode = mode_of(r, (long)ucur);
    }
    cur = -1;
    if (fn.DeviceGetPersistenceMode) {
        r = fn.DeviceGetPersistenceMode(d, &cur);
        g->persistence_mode = mode_of(r, cur);
    }
}

static void fill_gpu(gq_gpu_info *g, nvml_dev d)
{
    fill_identity(g, d);
    char buf[128];
    unsigned u;
    nvml_memory m;
    if (fn.DeviceGetUUID && fn.DeviceGetUUID(d, buf, sizeof buf) == NVML_SUCCESS)
        snprintf(g->uuid, sizeof g->uuid, "%.*s", (int)sizeof g->uuid - 1, buf);
    if (!g->name[0] && fn.DeviceGetName && fn.DeviceGetName(d, buf, sizeof buf) == NVML_SUCCESS)
        snprintf(g->name, sizeof g->name, "%.*s", (int)sizeof g->name - 1, buf);
    /* NVML's total is nvidia-smi's (143771 MiB on H200); CUDA's totalGlobalMem
     * is smaller by what the driver reserves, and is kept only without NVML. */
    if (fn.DeviceGetMemoryInfo && fn.DeviceGetMemoryInfo(d, &m) == NVML_SUCCESS)
        g->mem_bytes = m.total;
    if (fn.DeviceGetCurrPcieLinkGeneration && fn.DeviceGetCurrPcieLinkGeneration(d, &u) == NVML_SUCCESS)
        g->pcie_gen_cur = (int)u;
    if (fn.DeviceGetCurrPcieLinkWidth && fn.DeviceGetCurrPcieLinkWidth(d, &u) == NVML_SUCCESS)
        g->pcie_width_cur = (int)u;
    if (fn.DeviceGetMaxPcieLinkGeneration && fn.DeviceGetMaxPcieLinkGeneration(d, &u) == NVML_SUCCESS)
        g->pcie_gen_max = (int)u;
    if (fn.DeviceGetMaxPcieLinkWidth && fn.DeviceGetMaxPcieLinkWidth(d, &u) == NVML_SUCCESS)
        g->pcie_width_max = (int)u;
    if (fn.DeviceGetEnforcedPowerLimit && fn.DeviceGetEnforcedPowerLimit(d, &u) == NVML_SUCCESS)
        g->power_limit_w = u / 1000.0;
}

/* Per GPU: links to each other GPU, to NVSwitches, and links whose far end
 * could not be told (or is not one of t's GPUs). */
typedef struct nvlink_census {
    int direct[GQ_MAX_GPUS];
    int to_switch;
    int unresolved;
    bool known;
} nvlink_census;

static void count_nvlinks(const gq_topo *t, int i, nvml_dev d, nvlink_census *c)
{
    memset(c, 0, sizeof *c);
    if (!fn.DeviceGetNvLinkState)
        return;
    c->known = true;
    for (unsigned l = 0; l < NVML_NVLINK_MAX_LINKS; l++) {
        int active = 0;
        if (fn.DeviceGetNvLinkState(d, l, &active) != NVML_SUCCESS || active != NVML_FEATURE_ENABLED)
            continue; /* NOT_SUPPORTED on a GPU without NVLink, INVALID_ARGUMENT past its last link */
        int type = -1;
        if (fn.DeviceGetNvLinkRemoteDeviceType &&
            fn.DeviceGetNvLinkRemoteDeviceType(d, l, &type) == NVML_SUCCESS &&
            type == NVML_NVLINK_DEVICE_TYPE_SWITCH) {
            c->to_switch++;
            continue;
        }
        nvml_pci_info pi;
        memset(&pi, 0, sizeof pi);
        int j = -1;
        if (fn.DeviceGetNvLinkRemotePciInfo && fn.DeviceGetNvLinkRemotePciInfo(d, l, &pi) == NVML_SUCCESS) {
            pi.v.busId[sizeof pi.v.busId - 1] = 0;
            j = find_gpu_by_bus(t, pi.v.busId);
        }
        if (j >= 0 && j != i)
            c->direct[j]++;
        else
            c->unresolved++;
    }
}

static void fill_pairs(gq_topo *t, nvml_dev *devs, const nvlink_census *cen)
{
    for (int i = 0; i < t->ngpu; i++) {
        if (!devs[i])
            continue;
        if (cen[i].known)
            t->gpu[i].nvlinks_total = 0;
        for (int j = 0; j < t->ngpu; j++) {
            if (cen[i].known)
                t->gpu[i].nvlinks_total += cen[i].direct[j];
            if (i == j || !devs[j])
                continue;
            int v;
            if (fn.DeviceGetP2PStatus &&
                fn.DeviceGetP2PStatus(devs[i], devs[j], NVML_P2P_CAPS_INDEX_READ, &v) == NVML_SUCCESS)
                t->p2p_nvml[i][j] = (unsigned char)map_p2p(v);
            if (fn.DeviceGetTopologyCommonAncestor &&
                fn.DeviceGetTopologyCommonAncestor(devs[i], devs[j], &v) == NVML_SUCCESS)
                t->pci_level[i][j] = (unsigned char)map_level(v);
            if (!cen[i].known || !cen[j].known)
                continue;
            int n = cen[i].direct[j];
            /* Through NVSwitches every GPU reaches every other at its own
             * link count, which is what nvidia-smi topo -m shows (NV18 on
             * HGX H100). Links whose far end NVML could not name are
             * credited only when NVML says the pair is NVLink-capable. */
            if (n == 0 && cen[i].to_switch > 0 && cen[j].to_switch > 0)
                n = cen[i].to_switch < cen[j].to_switch ? cen[i].to_switch : cen[j].to_switch;
            if (n == 0 && cen[i].unresolved > 0 && cen[j].unresolved > 0 && fn.DeviceGetP2PStatus &&
                fn.DeviceGetP2PStatus(devs[i], devs[j], NVML_P2P_CAPS_INDEX_NVLINK, &v) == NVML_SUCCESS &&
                v == NVML_P2P_STATUS_OK)
                n = cen[i].unresolved < cen[j].unresolved ? cen[i].unresolved : cen[j].unresolved;
            t->nvlinks[i][j] = n;
        }
        if (cen[i].known) {
            t->gpu[i].nvlinks_total += cen[i].to_switch + cen[i].unresolved;
            t->gpu[i].nvswitch_links = cen[i].to_switch;
        }
    }
}

void gq_nvml_fill_topo(gq_topo *t)
{
    gq_err e = {0};
    nvml_dev devs[GQ_MAX_GPUS] = {0};
    nvlink_census cen[GQ_MAX_GPUS];
    memset(cen, 0, sizeof cen);

    t->nvml_loaded = false;
    if (gq_nvml_open(&e)) {
        gq_topo_warn(
            t,
            "NVML not available (%s): NVLinks, NVML P2P status, power limit and driver version read unknown",
            e.msg);
        return;
    }
    t->nvml_loaded = true;
    char buf[96];
    if (!t->driver_version[0] && fn.SystemGetDriverVersion &&
        fn.SystemGetDriverVersion(buf, sizeof buf) == NVML_SUCCESS)
        snprintf(t->driver_version, sizeof t->driver_version, "%.*s", (int)sizeof t->driver_version - 1, buf);
    int v;
    if (t->cuda_driver_version < 0 && fn.SystemGetCudaDriverVersion &&
        fn.SystemGetCudaDriverVersion(&v) == NVML_SUCCESS)
        t->cuda_driver_version = v;
    for (int i = 0; i < t->ngpu; i++) {
        if (gq_nvml_device_by_bus_id(t->gpu[i].pci_bus_id, &devs[i], &e)) {
            gq_topo_warn(t, "GPU %d: %s; its NVML fields read unknown", t->gpu[i].index, e.msg);
            devs[i] = NULL;
            continue;
        }
        fill_gpu(&t->gpu[i], devs[i]);
        count_nvlinks(t, i, devs[i], &cen[i]);
    }
    fill_pairs(t, devs, cen);
    gq_nvml_close();
}

/* ---- telemetry ----------------------------------------------------------- */

static double field_as_double(const nvml_field_value *f)
{
    switch (f->valueType) {
    case NVML_VALUE_TYPE_DOUBLE: return f->value.dVal;
    case NVML_VALUE_TYPE_UNSIGNED_INT: return f->value.uiVal;
    case NVML_VALUE_TYPE_UNSIGNED_LONG: return (double)f->value.ulVal;
    case NVML_VALUE_TYPE_UNSIGNED_LONG_LONG: return (double)f->value.ullVal;
    case NVML_VALUE_TYPE_SIGNED_LONG_LONG: return (double)f->value.sllVal;
    case NVML_VALUE_TYPE_SIGNED_INT: return f->value.siVal;
    case NVML_VALUE_TYPE_UNSIGNED_SHORT: return f->value.usVal;
    default: return NAN;
    }
}

int gq_nvml_sample(gq_nvml_dev d, gq_sample *s, gq_err *err)
{
    unsigned u, u2, u3, u4;
    unsigned long long ull;
    nvml_ret r;
    bool lost = false;

    memset(s, 0, sizeof *s);
    s->t = gq_now_mono();
    s->temp_c = s->mem_temp_c = s->power_w = s->power_limit_w = s->temp_slowdown_c = NAN;
    s->sm_clock_mhz = s->mem_clock_mhz = s->util_pct = NAN;
    s->clock_reasons = s->pcie_replay = s->ecc_corrected = s->ecc_uncorrected = GQ_SAMPLE_U64_UNKNOWN;
    s->pcie_gen = s->pcie_width = s->remapped_rows = -1;
    if (need_open(err))
        return GQ_E_UNSUPP;
    if (!d)
        return gq_err_set(err, GQ_E_USAGE, "NVML sample: no device");

#define TRY(call) ((r = (call)) == NVML_SUCCESS || ((lost |= (r == NVML_ERROR_GPU_IS_LOST)), false))
    if (fn.DeviceGetTemperature && TRY(fn.DeviceGetTemperature(d, NVML_TEMPERATURE_GPU, &u)))
        s->temp_c = u;
    if (fn.DeviceGetTemperatureThreshold &&
        TRY(fn.DeviceGetTemperatureThreshold(d, NVML_TEMPERATURE_THRESHOLD_SLOWDOWN, &u)) && u > 0)
        s->temp_slowdown_c = u;
    if (fn.DeviceGetFieldValues) {
        nvml_field_value fv;
        memset(&fv, 0, sizeof fv);
        fv.fieldId = NVML_FI_DEV_MEMORY_TEMP;
        /* HBM boards report it; GDDR boards answer NOT_SUPPORTED per field. */
        if (TRY(fn.DeviceGetFieldValues(d, 1, &fv)) && fv.nvmlReturn == NVML_SUCCESS)
            s->mem_temp_c = field_as_double(&fv);
    }
    if (fn.DeviceGetPowerUsage && TRY(fn.DeviceGetPowerUsage(d, &u)))
        s->power_w = u / 1000.0;
    if (fn.DeviceGetEnforcedPowerLimit && TRY(fn.DeviceGetEnforcedPowerLimit(d, &u)))
        s->power_limit_w = u / 1000.0;
    if (fn.DeviceGetClockInfo && TRY(fn.DeviceGetClockInfo(d, NVML_CLOCK_SM, &u)))
        s->sm_clock_mhz = u;
    if (fn.DeviceGetClockInfo && TRY(fn.DeviceGetClockInfo(d, NVML_CLOCK_MEM, &u)))
        s->mem_clock_mhz = u;
    nvml_utilization ut;
    if (fn.DeviceGetUtilizationRates && TRY(fn.DeviceGetUtilizationRates(d, &ut)))
        s->util_pct = ut.gpu;
    if (fn.DeviceGetCurrentClocksEventReasons && TRY(fn.DeviceGetCurrentClocksEventReasons(d, &ull)))
        s->clock_reasons = ull;
    if (fn.DeviceGetCurrPcieLinkGeneration && TRY(fn.DeviceGetCurrPcieLinkGeneration(d, &u)))
        s->pcie_gen = (int)u;
    if (fn.DeviceGetCurrPcieLinkWidth && TRY(fn.DeviceGetCurrPcieLinkWidth(d, &u)))
        s->pcie_width = (int)u;
    if (fn.DeviceGetPcieReplayCounter && TRY(fn.DeviceGetPcieReplayCounter(d, &u)))
        s->pcie_replay = u;
    if (fn.DeviceGetTotalEccErrors &&
        TRY(fn.DeviceGetTotalEccErrors(d, NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_VOLATILE_ECC, &ull)))
        s->ecc_corrected = ull;
    if (fn.DeviceGetTotalEccErrors &&
        TRY(fn.DeviceGetTotalEccErrors(d, NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC, &ull)))
        s->ecc_uncorrected = ull;
    if (fn.DeviceGetRemappedRows && TRY(fn.DeviceGetRemappedRows(d, &u, &u2, &u3, &u4)))
        s->remapped_rows = (int)(u + u2);
#undef TRY
    s->lost = lost;
    return GQ_OK;
}

size_t gq_nvml_process_info_size(void)
{
    return sizeof(nvml_process_info);
}

size_t gq_nvml_process_info_offset(int field)
{
    switch (field) {
    case 0: return offsetof(nvml_process_info, pid);
    case 1: return offsetof(nvml_process_info, usedGpuMemory);
    case 2: return offsetof(nvml_process_info, gpuInstanceId);
    default: return offsetof(nvml_process_info, computeInstanceId);
    }
}

/* One of the two lists, appended to out[*n..max). */
static nvml_ret list_procs(nvml_ret (*get)(nvml_dev, unsigned *, nvml_process_info *), nvml_dev d,
                           bool graphics, gq_nvml_proc *out, int max, int *n, int *total)
{
    unsigned cap = 64;
    nvml_process_info *v = NULL;
    nvml_ret r = NVML_SUCCESS;
    for (int tries = 0; tries < 4; tries++) {
        nvml_process_info *nv = realloc(v, cap * sizeof *v);
        if (!nv) {
            free(v);
            return NVML_ERROR_INSUFFICIENT_SIZE;
        }
        v = nv;
        unsigned count = cap;
        r = get(d, &count, v);
        if (r == NVML_ERROR_INSUFFICIENT_SIZE && count > cap && count < 65536) {
            cap = count + 16; /* processes may start between the two calls */
            continue;
        }
        if (r == NVML_SUCCESS) {
            for (unsigned i = 0; i < count && i < cap; i++) {
                (*total)++;
                if (*n < max) {
                    out[*n].pid = v[i].pid;
                    out[*n].used_bytes = v[i].usedGpuMemory;
                    out[*n].graphics = graphics;
                    (*n)++;
                }
            }
        }
        break;
    }
    free(v);
    return r;
}

int gq_nvml_processes(gq_nvml_dev d, gq_nvml_proc *out, int max, int *n, int *total, gq_err *err)
{
    *n = *total = 0;
    if (need_open(err))
        return GQ_E_UNSUPP;
    if (!fn.DeviceGetComputeRunningProcesses)
        return gq_err_set(err, GQ_E_UNSUPP,
                          "this driver's NVML has no nvmlDeviceGetComputeRunningProcesses_v3");
    nvml_ret r = list_procs(fn.DeviceGetComputeRunningProcesses, d, false, out, max, n, total);
    if (r != NVML_SUCCESS)
        return gq_err_set(err, GQ_E_UNSUPP, "nvmlDeviceGetComputeRunningProcesses_v3: %s", errstr(r));
    if (fn.DeviceGetGraphicsRunningProcesses) {
        /* A process with both a compute and a graphics context is listed twice. */
        int n0 = *n;
        gq_nvml_proc g[GQ_NVML_MAX_PROCS];
        int gn = 0, gt = 0;
        r = list_procs(fn.DeviceGetGraphicsRunningProcesses, d, true, g, GQ_NVML_MAX_PROCS, &gn, &gt);
        if (r == NVML_SUCCESS)
            for (int i = 0; i < gn; i++) {
                bool seen = false;
                for (int k = 0; k < n0 && !seen; k++)
                    seen = out[k].pid == g[i].pid;
                if (seen)
                    continue;
                (*total)++;
                if (*n < max)
                    out[(*n)++] = g[i];
            }
    }
    return GQ_OK;
}

int gq_nvml_load(gq_nvml_dev d, double *util_pct, double *mem_used_mib, gq_err *err)
{
    *util_pct = *mem_used_mib = -1;
    if (need_open(err))
        return GQ_E_UNSUPP;
    nvml_utilization u;
    if (fn.DeviceGetUtilizationRates && fn.DeviceGetUtilizationRates(d, &u) == NVML_SUCCESS)
        *util_pct = u.gpu;
    nvml_memory m;
    if (fn.DeviceGetMemoryInfo && fn.DeviceGetMemoryInfo(d, &m) == NVML_SUCCESS)
        *mem_used_mib = (double)m.used / (1024.0 * 1024.0);
    return GQ_OK;
}
