/* A stand-in libnvidia-ml.so.1 for tests/unit/test_nvml_identity.c (loaded by
 * topo/nvml.c with dlopen through LD_LIBRARY_PATH): five GPUs by bus id
 * (0000:00:06.0 to 0000:00:0a.0, handles 1 to 5), with the answers a driver
 * gives, including "not supported", an error and a lost GPU.
 *
 * NVLink: GPU 1 has links 0-1 to GPU 2, link 2 to an NVSwitch, link 3 to a
 * bus NVML names but that is no GPU of the test (0000:00:99.0), link 4
 * inactive; GPU 2 has links 0-1 to GPU 1 and links 2-3 to an NVSwitch; GPU 3
 * has links 0-2 to an NVSwitch and link 3 whose far end NVML cannot read.
 * GPUs 4 and 5 have no switch: GPU 4 two links and GPU 5 one link whose far
 * end NVML cannot read, and NVML says that pair is NVLink-capable.
 *
 * Telemetry: GPU 1 answers every sample field; GPU 2 is lost (every call
 * GPU_IS_LOST); GPU 3 answers NOT_SUPPORTED to every field. Processes: GPU 1
 * lists 70 compute processes (more than the first buffer of 64, so the
 * caller retries with a larger one) and two graphics ones, one of them also
 * a compute process. The old entry points (PCIe width, ECC mode, ...) keep
 * the fixed answers of the identity test. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OK 0
#define INVALID_ARGUMENT 2
#define NOT_SUPPORTED 3
#define INSUFFICIENT_SIZE 7
#define GPU_IS_LOST 15
#define UNKNOWN_ERROR 999

typedef union pci_info {
    struct {
        char busIdLegacy[16];
        unsigned domain, bus, device, pciDeviceId, pciSubSystemId;
        char busId[32];
    } v;
    unsigned char pad[256];
} pci_info;

typedef struct memory {
    unsigned long long total, free, used;
} memory;

typedef struct utilization {
    unsigned gpu, memory;
} utilization;

typedef struct field_value {
    unsigned fieldId, scopeId;
    long long timestamp, latencyUsec;
    int valueType;
    int nvmlReturn;
    union {
        double dVal;
        unsigned uiVal;
        unsigned long ulVal;
        unsigned long long ullVal;
        long long sllVal;
        int siVal;
        unsigned short usVal;
    } value;
} field_value;

typedef struct process_info {
    unsigned int pid;
    unsigned long long usedGpuMemory;
    unsigned int gpuInstanceId, computeInstanceId;
} process_info;

int nvmlInit_v2(void);
int nvmlShutdown(void);
const char *nvmlErrorString(int r);
int nvmlSystemGetDriverVersion(char *buf, unsigned len);
int nvmlSystemGetCudaDriverVersion_v2(int *v);
int nvmlDeviceGetHandleByPciBusId_v2(const char *bus, void **dev);
int nvmlDeviceGetVbiosVersion(void *dev, char *buf, unsigned len);
int nvmlDeviceGetSerial(void *dev, char *buf, unsigned len);
int nvmlDeviceGetEccMode(void *dev, int *cur, int *pending);
int nvmlDeviceGetMigMode(void *dev, unsigned *cur, unsigned *pending);
int nvmlDeviceGetPersistenceMode(void *dev, int *mode);
int nvmlDeviceGetName(void *dev, char *buf, unsigned len);
int nvmlDeviceGetUUID(void *dev, char *buf, unsigned len);
int nvmlDeviceGetMemoryInfo(void *dev, memory *m);
int nvmlDeviceGetCurrPcieLinkGeneration(void *dev, unsigned *u);
int nvmlDeviceGetCurrPcieLinkWidth(void *dev, unsigned *u);
int nvmlDeviceGetMaxPcieLinkGeneration(void *dev, unsigned *u);
int nvmlDeviceGetMaxPcieLinkWidth(void *dev, unsigned *u);
int nvmlDeviceGetEnforcedPowerLimit(void *dev, unsigned *u);
int nvmlDeviceGetNvLinkState(void *dev, unsigned link, int *active);
int nvmlDeviceGetNvLinkRemoteDeviceType(void *dev, unsigned link, int *type);
int nvmlDeviceGetNvLinkRemotePciInfo_v2(void *dev, unsigned link, pci_info *pi);
int nvmlDeviceGetP2PStatus(void *a, void *b, int index, int *status);
int nvmlDeviceGetTopologyCommonAncestor(void *a, void *b, int *level);
int nvmlDeviceGetTemperature(void *dev, int sensor, unsigned *u);
int nvmlDeviceGetTemperatureThreshold(void *dev, int kind, unsigned *u);
int nvmlDeviceGetFieldValues(void *dev, int n, field_value *fv);
int nvmlDeviceGetPowerUsage(void *dev, unsigned *u);
int nvmlDeviceGetClockInfo(void *dev, int clock, unsigned *u);
int nvmlDeviceGetUtilizationRates(void *dev, utilization *u);
int nvmlDeviceGetCurrentClocksEventReasons(void *dev, unsigned long long *r);
int nvmlDeviceGetPcieReplayCounter(void *dev, unsigned *u);
int nvmlDeviceGetTotalEccErrors(void *dev, int type, int counter, unsigned long long *n);
int nvmlDeviceGetRemappedRows(void *dev, unsigned *corr, unsigned *unc, unsigned *pending, unsigned *failure);
int nvmlDeviceGetComputeRunningProcesses_v3(void *dev, unsigned *count, process_info *p);
int nvmlDeviceGetGraphicsRunningProcesses_v3(void *dev, unsigned *count, process_info *p);

static long which(void *dev)
{
    return (long)(char *)dev;
}

/* GPU 1 answers, GPU 2 is lost, the others do not support the call. */
static int telemetry(void *dev)
{
    return which(dev) == 1 ? OK : which(dev) == 2 ? GPU_IS_LOST : NOT_SUPPORTED;
}

/* FAKE_NVML_INIT_FAIL set: nvmlInit fails. */
int nvmlInit_v2(void)
{
    return getenv("FAKE_NVML_INIT_FAIL") ? UNKNOWN_ERROR : OK;
}

int nvmlShutdown(void)
{
    return OK;
}

const char *nvmlErrorString(int r)
{
    return r == UNKNOWN_ERROR ? "Unknown Error" : r == 6 ? "Not Found" : NULL;
}

int nvmlSystemGetDriverVersion(char *buf, unsigned len)
{
    snprintf(buf, len, "570.86.15");
    return OK;
}

int nvmlSystemGetCudaDriverVersion_v2(int *v)
{
    *v = 12080;
    return OK;
}

int nvmlDeviceGetHandleByPciBusId_v2(const char *bus, void **dev)
{
    static const char *const ids[] = {"00:06.0", "00:07.0", "00:08.0", "00:09.0", "00:0a.0"};
    for (int i = 0; i < 5; i++)
        if (strstr(bus, ids[i])) {
            *dev = (char *)0 + i + 1;
            return OK;
        }
    return 6; /* NVML_ERROR_NOT_FOUND */
}

int nvmlDeviceGetVbiosVersion(void *dev, char *buf, unsigned len)
{
    if (which(dev) == 2)
        return NOT_SUPPORTED;
    snprintf(buf, len, "96.00.9F.00.01");
    return OK;
}

int nvmlDeviceGetSerial(void *dev, char *buf, unsigned len)
{
    if (which(dev) == 2)
        return UNKNOWN_ERROR;
    snprintf(buf, len, "1654224000001");
    return OK;
}

int nvmlDeviceGetEccMode(void *dev, int *cur, int *pending)
{
    *cur = which(dev) == 1 ? 1 : 0;
    *pending = *cur;
    return OK;
}

int nvmlDeviceGetMigMode(void *dev, unsigned *cur, unsigned *pending)
{
    if (which(dev) == 1)
        return NOT_SUPPORTED;
    *cur = *pending = 1;
    return OK;
}

int nvmlDeviceGetPersistenceMode(void *dev, int *mode)
{
    *mode = which(dev) == 1 ? 1 : 0;
    return OK;
}

int nvmlDeviceGetName(void *dev, char *buf, unsigned len)
{
    snprintf(buf, len, "NVIDIA H200 #%ld", which(dev));
    return OK;
}

int nvmlDeviceGetUUID(void *dev, char *buf, unsigned len)
{
    if (which(dev) == 3)
        return UNKNOWN_ERROR;
    snprintf(buf, len, "GPU-0000000%ld-aaaa-bbbb-cccc-dddddddddddd", which(dev));
    return OK;
}

int nvmlDeviceGetMemoryInfo(void *dev, memory *m)
{
    if (which(dev) == 3)
        return NOT_SUPPORTED;
    m->total = 150754820096ull; /* 143771 MiB */
    m->used = 3ull * 1024 * 1024 * 1024 / 2;
    m->free = m->total - m->used;
    return OK;
}

int nvmlDeviceGetCurrPcieLinkGeneration(void *dev, unsigned *u)
{
    if (telemetry(dev))
        return telemetry(dev);
    *u = 4;
    return OK;
}

int nvmlDeviceGetCurrPcieLinkWidth(void *dev, unsigned *u)
{
    if (telemetry(dev))
        return telemetry(dev);
    *u = 8;
    return OK;
}

int nvmlDeviceGetMaxPcieLinkGeneration(void *dev, unsigned *u)
{
    (void)dev;
    *u = 5;
    return OK;
}

int nvmlDeviceGetMaxPcieLinkWidth(void *dev, unsigned *u)
{
    (void)dev;
    *u = 16;
    return OK;
}

int nvmlDeviceGetEnforcedPowerLimit(void *dev, unsigned *u)
{
    if (telemetry(dev))
        return telemetry(dev);
    *u = 700500; /* mW */
    return OK;
}

/* ---- NVLink (see the comment at the top) ---- */
enum { TO_GPU1 = 1, TO_GPU2, TO_SWITCH, TO_STRANGER, TO_UNREADABLE, INACTIVE };

static int link_of(void *dev, unsigned link)
{
    static const int map[6][5] = {
        {0},
        {TO_GPU2, TO_GPU2, TO_SWITCH, TO_STRANGER, INACTIVE},
        {TO_GPU1, TO_GPU1, TO_SWITCH, TO_SWITCH},
        {TO_SWITCH, TO_SWITCH, TO_SWITCH, TO_UNREADABLE},
        {TO_UNREADABLE, TO_UNREADABLE},
        {TO_UNREADABLE},
    };
    long w = which(dev);
    return w >= 1 && w <= 5 && link < 5 ? map[w][link] : 0;
}

int nvmlDeviceGetNvLinkState(void *dev, unsigned link, int *active)
{
    int k = link_of(dev, link);
    if (!k)
        return INVALID_ARGUMENT; /* past the GPU's last link */
    *active = k != INACTIVE;
    return OK;
}

int nvmlDeviceGetNvLinkRemoteDeviceType(void *dev, unsigned link, int *type)
{
    *type = link_of(dev, link) == TO_SWITCH ? 2 : 0;
    return OK;
}

int nvmlDeviceGetNvLinkRemotePciInfo_v2(void *dev, unsigned link, pci_info *pi)
{
    const char *bus = NULL;
    switch (link_of(dev, link)) {
    case TO_GPU1: bus = "00000000:00:06.0"; break;
    case TO_GPU2: bus = "00000000:00:07.0"; break;
    case TO_STRANGER: bus = "00000000:00:99.0"; break;
    default: return UNKNOWN_ERROR;
    }
    memset(pi, 0, sizeof *pi);
    snprintf(pi->v.busId, sizeof pi->v.busId, "%s", bus);
    return OK;
}

/* Read capability: by the pair's sum of handles, each status once. NVLink
 * capability: only GPUs 4 and 5. */
int nvmlDeviceGetP2PStatus(void *a, void *b, int index, int *status)
{
    long s = which(a) + which(b);
    if (index == 2) {
        *status = s == 9 ? 0 : 5;
        return OK;
    }
    if (s == 8)
        return UNKNOWN_ERROR;
    *status = (int)(s - 3); /* 1+2 OK (0), 1+3 chipset (1), 1+4 GPU (2), 1+5 topology (3), 2+5 regkey (4), 4+5
                               6: none of NVML's */
    return OK;
}

int nvmlDeviceGetTopologyCommonAncestor(void *a, void *b, int *level)
{
    long s = which(a) + which(b);
    static const int levels[] = {0, 10, 20, 30, 40, 50, 60};
    *level = levels[s - 3]; /* 1+2 internal, 1+3 single, 1+4 multiple, ... 4+5 60: none of NVML's */
    return OK;
}

/* ---- telemetry ---- */
int nvmlDeviceGetTemperature(void *dev, int sensor, unsigned *u)
{
    if (telemetry(dev))
        return telemetry(dev);
    *u = sensor == 0 ? 61 : 0;
    return OK;
}

int nvmlDeviceGetTemperatureThreshold(void *dev, int kind, unsigned *u)
{
    if (telemetry(dev))
        return telemetry(dev);
    *u = kind == 1 ? 90 : 0;
    return OK;
}

int nvmlDeviceGetFieldValues(void *dev, int n, field_value *fv)
{
    if (telemetry(dev))
        return telemetry(dev);
    /* FAKE_NVML_VTYPE=N: the values come as NVML's value type N (0 double,
     * 1 unsigned int (the default), 2 unsigned long, 3 unsigned long long,
     * 4 signed long long, 5 signed int, 6 unsigned short), 73 in each */
    const char *vt = getenv("FAKE_NVML_VTYPE");
    int type = vt ? atoi(vt) : 1;
    for (int i = 0; i < n; i++) {
        fv[i].valueType = type;
        fv[i].nvmlReturn = fv[i].fieldId == 82 ? OK : NOT_SUPPORTED;
        memset(&fv[i].value, 0xff, sizeof fv[i].value); /* bytes a wrong member would read */
        switch (type) {
        case 0: fv[i].value.dVal = 73; break;
        case 2: fv[i].value.ulVal = 73; break;
        case 3: fv[i].value.ullVal = 73; break;
        case 4: fv[i].value.sllVal = 73; break;
        case 5: fv[i].value.siVal = 73; break;
        case 6: fv[i].value.usVal = 73; break;
        default: fv[i].value.uiVal = 73; break;
        }
    }
    return OK;
}

int nvmlDeviceGetPowerUsage(void *dev, unsigned *u)
{
    if (telemetry(dev))
        return telemetry(dev);
    *u = 412250; /* mW */
    return OK;
}

int nvmlDeviceGetClockInfo(void *dev, int clock, unsigned *u)
{
    if (telemetry(dev))
        return telemetry(dev);
    *u = clock == 1 ? 1980 : clock == 2 ? 3201 : 0;
    return OK;
}

int nvmlDeviceGetUtilizationRates(void *dev, utilization *u)
{
    if (telemetry(dev))
        return telemetry(dev);
    u->gpu = 87;
    u->memory = 40;
    return OK;
}

int nvmlDeviceGetCurrentClocksEventReasons(void *dev, unsigned long long *r)
{
    if (telemetry(dev))
        return telemetry(dev);
    *r = 0x84; /* software power cap, hardware power brake */
    return OK;
}

int nvmlDeviceGetPcieReplayCounter(void *dev, unsigned *u)
{
    if (telemetry(dev))
        return telemetry(dev);
    *u = 3;
    return OK;
}

int nvmlDeviceGetTotalEccErrors(void *dev, int type, int counter, unsigned long long *n)
{
    if (telemetry(dev))
        return telemetry(dev);
    if (counter != 0)
        return INVALID_ARGUMENT; /* only the volatile counter here */
    *n = type == 0 ? 11 : type == 1 ? 2 : 999;
    return OK;
}

int nvmlDeviceGetRemappedRows(void *dev, unsigned *corr, unsigned *unc, unsigned *pending, unsigned *failure)
{
    if (telemetry(dev))
        return telemetry(dev);
    *corr = 5;
    *unc = 1;
    *pending = *failure = 0;
    return OK;
}

/* 70 compute processes on GPU 1 (pids 1000-1069), none elsewhere. */
int nvmlDeviceGetComputeRunningProcesses_v3(void *dev, unsigned *count, process_info *p)
{
    unsigned n = which(dev) == 1 ? 70 : 0;
    if (which(dev) == 3)
        return NOT_SUPPORTED;
    if (*count < n) {
        *count = n;
        return INSUFFICIENT_SIZE;
    }
    for (unsigned i = 0; i < n; i++) {
        memset(&p[i], 0, sizeof p[i]);
        p[i].pid = 1000 + i;
        p[i].usedGpuMemory = (i + 1) * 1024ull * 1024;
    }
    *count = n;
    return OK;
}

/* Two graphics processes on GPU 1: 1005 (also a compute process) and 2000. */
int nvmlDeviceGetGraphicsRunningProcesses_v3(void *dev, unsigned *count, process_info *p)
{
    unsigned n = which(dev) == 1 ? 2 : 0;
    if (*count < n) {
        *count = n;
        return INSUFFICIENT_SIZE;
    }
    for (unsigned i = 0; i < n; i++) {
        memset(&p[i], 0, sizeof p[i]);
        p[i].pid = i == 0 ? 1005 : 2000;
        p[i].usedGpuMemory = ~0ull;
    }
    *count = n;
    return OK;
}
