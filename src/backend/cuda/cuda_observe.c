/* The CUDA backend's observe hook (backend/backend.h): what else uses a GPU,
 * from NVML's running-process lists, utilization and memory in use.
 *
 * Which entry is this process: the one whose pid is getpid(). Inside a PID
 * namespace (a container) NVML reports host pids, so this process may not
 * be listed under its own pid. The hook first makes sure this process holds
 * a context on the GPU (cudaFree(0) on it), so it is always listed; when no
 * entry has our pid, one of the entries whose pid does not exist in our
 * namespace is ours, and the others are counted as foreign processes "not
 * visible from this container". Their names cannot be read there.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "backend/cuda/cuda_internal.h"

static void proc_name(int pid, char *buf, size_t n)
{
    char path[64];
    buf[0] = '\0';
    snprintf(path, sizeof path, "/proc/%d/comm", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    if (fgets(buf, (int)n, f)) {
        size_t l = strlen(buf);
        while (l > 0 && (buf[l - 1] == '\n' || buf[l - 1] == '\r'))
            buf[--l] = '\0';
    }
    fclose(f);
}

static bool pid_visible(int pid)
{
    return pid > 0 && (kill((pid_t)pid, 0) == 0 || errno == EPERM);
}

int gq_cuda_observe(gq_backend *be, int gpu, gq_gpu_load *out, gq_err *err)
{
    memset(out, 0, sizeof *out);
    out->util_pct = out->mem_used_mib = -1;
    gq_nvml_dev d;
    int rc = gq_cuda_nvml_dev(be, gpu, &d, err);
    if (rc)
        return rc;
    /* Hold a context on the GPU, so that this process is in the lists. */
    int prev = -1;
    if (cudaGetDevice(&prev) == cudaSuccess && cudaSetDevice(gpu) == cudaSuccess) {
        (void)cudaFree(0);
        if (prev >= 0)
            (void)cudaSetDevice(prev);
    }
    gq_nvml_proc p[GQ_NVML_MAX_PROCS];
    int n = 0, total = 0;
    gq_err le = {0};
    if (gq_nvml_processes(d, p, GQ_NVML_MAX_PROCS, &n, &total, &le) == GQ_OK) {
        out->procs_known = true;
        int self = (int)getpid();
        bool self_listed = false;
        for (int i = 0; i < n; i++)
            self_listed |= (int)p[i].pid == self;
        bool invisible_self_taken = self_listed;
        for (int i = 0; i < n; i++) {
            int pid = (int)p[i].pid;
            if (pid == self)
                continue;
            bool vis = pid_visible(pid);
            if (!vis && !invisible_self_taken) {
                invisible_self_taken = true; /* ours, under the host's pid */
                continue;
            }
            out->nprocs_total++;
            if (out->nprocs < GQ_LOAD_MAX_PROCS) {
                gq_gpu_proc *q = &out->procs[out->nprocs++];
                q->pid = pid;
                q->visible = vis;
                q->graphics = p[i].graphics;
                q->mem_mib = p[i].used_bytes == ~0ull ? -1 : (double)p[i].used_bytes / (1024.0 * 1024.0);
                if (vis)
                    proc_name(pid, q->name, sizeof q->name);
            }
        }
        out->nprocs_total += total > n ? total - n : 0;
        if (out->nprocs < out->nprocs_total && out->nprocs == 0)
            out->nprocs = 0;
    }
    gq_err ue = {0};
    (void)gq_nvml_load(d, &out->util_pct, &out->mem_used_mib, &ue);
    if (!out->procs_known && out->util_pct < 0)
        return gq_err_set(err, GQ_E_UNSUPP, "GPU %d: NVML cannot list processes (%s)", gpu, le.msg);
    return GQ_OK;
}
