/* A stand-in libnvidia-ml.so.1 for tests/unit/test_nvml_identity.c (loaded by
 * topo/nvml.c with dlopen through LD_LIBRARY_PATH): two GPUs by bus id, with
 * the identity answers a driver gives, including "not supported" and an
 * error. Only the entry points the identity needs; the rest are absent, as
 * in an old driver. */
#include <stdio.h>
#include <string.h>

#define OK 0
#define NOT_SUPPORTED 3
#define UNKNOWN_ERROR 999

int nvmlInit_v2(void);
int nvmlShutdown(void);
int nvmlDeviceGetHandleByPciBusId_v2(const char *bus, void **dev);
int nvmlDeviceGetVbiosVersion(void *dev, char *buf, unsigned len);
int nvmlDeviceGetSerial(void *dev, char *buf, unsigned len);
int nvmlDeviceGetEccMode(void *dev, int *cur, int *pending);
int nvmlDeviceGetMigMode(void *dev, unsigned *cur, unsigned *pending);
int nvmlDeviceGetPersistenceMode(void *dev, int *mode);

static long which(void *dev)
{
    return (long)(char *)dev;
}

int nvmlInit_v2(void)
{
    return OK;
}

int nvmlShutdown(void)
{
    return OK;
}

int nvmlDeviceGetHandleByPciBusId_v2(const char *bus, void **dev)
{
    if (strstr(bus, "00:06.0"))
        *dev = (char *)0 + 1;
    else if (strstr(bus, "00:07.0"))
        *dev = (char *)0 + 2;
    else
        return 6; /* NVML_ERROR_NOT_FOUND */
    return OK;
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
