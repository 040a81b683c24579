/* Host side of the CUDA backend: pinned buffers on a NUMA node, their page
 * placement, the pool that reuses them, and the sysfs facts about a GPU. */
#include "backend/cuda/cuda_priv.h"

#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifdef GQ_HAVE_NUMA
#include <numa.h>
#endif

/* Pooled plus in-use pinned host bytes above which pooled buffers are freed
 * rather than kept: a group that needs more still gets it, but the pool never
 * adds to peak RSS beyond this. 1.25 GiB is what the largest catalog group
 * needs with 512 MiB buffers on 2 GPUs (two measured host buffers plus the
 * interferers' shared, folded one), so every test reuses the pool and the
 * catalog's peak RSS stays under 2 GiB (CUDA contexts and NVML take ~0.5). */
#define GQ_CUDA_HOST_POOL_CAP (1280ull * 1024 * 1024)

int gq_cuda_fail(gq_err *err, cudaError_t e, const char *call, const char *file, int line)
{
    const char *base = strrchr(file, '/');
    base = base ? base + 1 : file;
    char name[96];
    /* The call text up to its argument list keeps the line readable. */
    snprintf(name, sizeof name, "%.*s", (int)strcspn(call, "("), call);
    return gq_err_set(err, e == cudaErrorMemoryAllocation ? GQ_E_NOMEM : GQ_E_BACKEND, "%s:%d: %s: %s (%s)",
                      base, line, name, cudaGetErrorString(e), cudaGetErrorName(e));
}

int gq_cuda_numa_count(void)
{
    DIR *d = opendir("/sys/devices/system/node");
    int n = 0;
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)))
            if (strncmp(e->d_name, "node", 4) == 0 && isdigit((unsigned char)e->d_name[4]))
                n++;
        closedir(d);
    }
    return n > 0 ? n : 1;
}

static int read_line(const char *path, char *buf, size_t n)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    if (!fgets(buf, (int)n, f)) {
        fclose(f);
        return -1;
    }
    fclose(f);
    buf[strcspn(buf, "\n")] = '\0';
    return 0;
}

void gq_cuda_sysfs_dev(const char *busid, int *numa, char *cpulist, size_t n)
{
    char bus[32], path[128], line[256];
    size_t i;
    for (i = 0; busid[i] && i + 1 < sizeof bus; i++)
        bus[i] = (char)tolower((unsigned char)busid[i]);
    bus[i] = '\0';
    *numa = -1;
    cpulist[0] = '\0';
    snprintf(path, sizeof path, "/sys/bus/pci/devices/%s/numa_node", bus);
    if (read_line(path, line, sizeof line) == 0)
        *numa = atoi(line) >= 0 ? atoi(line) : -1;
    snprintf(path, sizeof path, "/sys/bus/pci/devices/%s/local_cpulist", bus);
    if (read_line(path, line, sizeof line) == 0)
        snprintf(cpulist, n, "%s", line);
}

int gq_cuda_numa_resolve(const cuda_be *b, int node, int gpu, int *out, gq_err *err)
{
    if (node == GQ_NUMA_LOCAL) {
        int g = gpu >= 0 && gpu < b->ngpu ? b->dev[gpu].numa : -1;
        *out = g >= 0 && g < b->numa_nodes ? g : 0;
        return GQ_OK;
    }
    if (node < 0 || node >= b->numa_nodes)
        return gq_err_set(err, GQ_E_USAGE, "host NUMA node %d does not exist: this machine has %d (0-%d)",
                          node, b->numa_nodes, b->numa_nodes - 1);
    *out = node;
    return GQ_OK;
}

static int pages_node(const void *p, uint64_t bytes)
{
    enum { SAMPLES = 64 };
    long page = sysconf(_SC_PAGESIZE);
    if (page <= 0 || bytes == 0)
        return -1;
    uint64_t npages = (bytes + (uint64_t)page - 1) / (uint64_t)page;
    unsigned long cnt = npages < SAMPLES ? (unsigned long)npages : SAMPLES;
    void *pages[SAMPLES];
    int status[SAMPLES];
    uintptr_t base = (uintptr_t)p & ~((uintptr_t)page - 1);
    for (unsigned long i = 0; i < cnt; i++)
        pages[i] = (void *)(base + (uintptr_t)((npages - 1) * i / (cnt > 1 ? cnt - 1 : 1)) * (uintptr_t)page);
    /* nodes == NULL: move nothing, report where each page is. */
    if (syscall(SYS_move_pages, 0, cnt, pages, NULL, status, 0) != 0)
        return -1;
    int node = status[0];
    for (unsigned long i = 0; i < cnt; i++) {
        if (status[i] < 0)
            return -1;
        if (status[i] != node)
            return -2;
    }
    return node;
}

static int effective_mode(const cuda_be *b)
{
    if (b->tune.host_alloc != GQ_CUDA_HOST_AUTO)
        return b->tune.host_alloc;
#ifdef GQ_HAVE_NUMA
    if (b->numa_nodes > 1)
        return GQ_CUDA_HOST_REGISTER;
#endif
    return GQ_CUDA_HOST_CUDA;
}

static void host_free(cuda_hbuf *h)
{
    if (!h)
        return;
    if (h->mode == GQ_CUDA_HOST_CUDA) {
        cudaFreeHost(h->p);
    } else {
        cudaHostUnregister(h->p);
#ifdef GQ_HAVE_NUMA
        if (numa_available() >= 0)
            numa_free(h->p, h->bytes);
        else
            munmap(h->p, h->bytes);
#else
        munmap(h->p, h->bytes);
#endif
    }
    free(h);
}

static int host_alloc(cuda_be *b, uint64_t bytes, int node, int mode, cuda_hbuf **out, gq_err *err)
{
    int rc = GQ_OK;
    void *p = NULL;
    bool registered = false;
    cuda_hbuf *h = calloc(1, sizeof *h);
    if (!h)
        return gq_err_set(err, GQ_E_NOMEM, "out of memory");
    h->bytes = bytes;
    h->node = node;
    h->mode = mode;
    if (mode == GQ_CUDA_HOST_CUDA) {
        CK(cudaHostAlloc(&p, bytes, cudaHostAllocPortable | cudaHostAllocMapped));
        h->p = p;
    } else {
#ifdef GQ_HAVE_NUMA
        if (numa_available() >= 0)
            p = numa_alloc_onnode(bytes, node);
        else
            p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
#else
        p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
#endif
        if (!p || p == MAP_FAILED) {
            p = NULL;
            rc = gq_err_set(err, GQ_E_NOMEM, "cannot allocate %llu bytes of host memory on NUMA node %d",
                            (unsigned long long)bytes, node);
            goto out;
        }
        h->p = p;
        /* Registering faults the pages in under the node binding set above. */
        CK(cudaHostRegister(p, bytes, cudaHostRegisterPortable | cudaHostRegisterMapped));
        registered = true;
    }
    CK(cudaHostGetDevicePointer(&h->dptr, h->p, 0));
    h->actual = pages_node(h->p, bytes);
    *out = h;
    return GQ_OK;
out:
    if (mode != GQ_CUDA_HOST_CUDA && p) {
        if (registered)
            cudaHostUnregister(p);
#ifdef GQ_HAVE_NUMA
        if (numa_available() >= 0)
            numa_free(p, bytes);
        else
            munmap(p, bytes);
#else
        munmap(p, bytes);
#endif
    } else if (p) {
        cudaFreeHost(p);
    }
    free(h);
    return rc;
}

int gq_cuda_host_get(cuda_be *b, uint64_t bytes, int node, cuda_hbuf **out, gq_err *err)
{
    int mode = effective_mode(b);
    *out = NULL;
    pthread_mutex_lock(&b->pool_mu);
    /* Best fit among pooled buffers of at least `bytes` and at most twice
     * that: pinning costs ~0.1 s per 512 MiB, and the catalog asks for
     * 512 MiB and 256 MiB buffers in turn. h->bytes stays the real size. */
    cuda_hbuf **best = NULL;
    for (cuda_hbuf **pp = &b->pool; *pp; pp = &(*pp)->next) {
        const cuda_hbuf *h = *pp;
        if (h->bytes >= bytes && h->bytes / 2 <= bytes && h->node == node && h->mode == mode &&
            (!best || h->bytes < (*best)->bytes))
            best = pp;
    }
    if (best) {
        cuda_hbuf *h = *best;
        *best = h->next;
        h->next = NULL;
        b->host_pooled -= h->bytes;
        b->host_in_use += h->bytes;
        pthread_mutex_unlock(&b->pool_mu);
        *out = h;
        return GQ_OK;
    }
    while (b->pool && b->host_in_use + b->host_pooled + bytes > GQ_CUDA_HOST_POOL_CAP) {
        cuda_hbuf *h = b->pool;
        b->pool = h->next;
        b->host_pooled -= h->bytes;
        host_free(h);
    }
    pthread_mutex_unlock(&b->pool_mu);
    int rc = host_alloc(b, bytes, node, mode, out, err);
    if (rc == GQ_E_NOMEM) {
        /* Pinned memory is scarce: give the whole pool back and try once more. */
        gq_cuda_host_pool_drain(b);
        rc = host_alloc(b, bytes, node, mode, out, err);
    }
    if (rc == GQ_OK) {
        pthread_mutex_lock(&b->pool_mu);
        b->host_in_use += bytes;
        pthread_mutex_unlock(&b->pool_mu);
    }
    return rc;
}

void gq_cuda_host_put(cuda_be *b, cuda_hbuf *h)
{
    if (!h)
        return;
    pthread_mutex_lock(&b->pool_mu);
    b->host_in_use -= h->bytes;
    if (b->host_in_use + b->host_pooled + h->bytes <= GQ_CUDA_HOST_POOL_CAP) {
        h->next = b->pool;
        b->pool = h;
        b->host_pooled += h->bytes;
        h = NULL;
    }
    pthread_mutex_unlock(&b->pool_mu);
    host_free(h);
}

void gq_cuda_host_pool_drain(cuda_be *b)
{
    pthread_mutex_lock(&b->pool_mu);
    cuda_hbuf *h = b->pool;
    b->pool = NULL;
    b->host_pooled = 0;
    pthread_mutex_unlock(&b->pool_mu);
    while (h) {
        cuda_hbuf *n = h->next;
        host_free(h);
        h = n;
    }
}

static int meminfo_kib(const char *path, const char *key, uint64_t *kib)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char line[256];
    int found = -1;
    while (fgets(line, sizeof line, f)) {
        char *k = strstr(line, key);
        if (k) {
            unsigned long long v;
            if (sscanf(k + strlen(key), " %llu", &v) == 1) {
                *kib = v;
                found = 0;
            }
            break;
        }
    }
    fclose(f);
    return found;
}

int gq_cuda_host_avail(int node, uint64_t *bytes, gq_err *err)
{
    uint64_t kib = 0;
    if (node < 0) {
        if (meminfo_kib("/proc/meminfo", "MemAvailable:", &kib) != 0)
            return gq_err_set(err, GQ_E_IO, "cannot read MemAvailable from /proc/meminfo");
        *bytes = kib * 1024;
        return GQ_OK;
    }
#ifdef GQ_HAVE_NUMA
    if (numa_available() >= 0) {
        long long fr = 0;
        if (numa_node_size64(node, &fr) >= 0 && fr >= 0) {
            *bytes = (uint64_t)fr;
            return GQ_OK;
        }
    }
#endif
    char path[96];
    snprintf(path, sizeof path, "/sys/devices/system/node/node%d/meminfo", node);
    if (meminfo_kib(path, "MemFree:", &kib) != 0)
        return gq_err_set(err, GQ_E_IO, "cannot read the free memory of NUMA node %d from %s", node, path);
    *bytes = kib * 1024;
    return GQ_OK;
}
