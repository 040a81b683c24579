/* The clean room on a real GPU (tests/gpu/run.sh runs it; never in CI).
 *
 * 1. NVML's process list, read through gpuqual's own declaration of
 *    nvmlProcessInfo_t (topo/nvml.c): once this process holds a context on GPU
 *    0 it must be listed under its pid (or, in a PID namespace, under one pid
 *    not visible here), with a plausible amount of memory (1 MiB .. the GPU's
 *    total). A wrong struct layout gives garbage pids and sizes.
 * 2. The backend's observe hook leaves this process out: on an idle GPU no
 *    other process is listed, and the note says nothing.
 * Prints what it read, for bench/results. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/backend.h"
#include "measure/cleanroom.h"
#include "topo/nvml.h"

static int failures;
#define CHECK(c, ...)                                                                                        \
    do {                                                                                                     \
        if (!(c)) {                                                                                          \
            printf("FAIL: ");                                                                                \
            printf(__VA_ARGS__);                                                                             \
            printf("\n");                                                                                    \
            failures++;                                                                                      \
        }                                                                                                    \
    } while (0)

int main(void)
{
    gq_backend_register_builtin();
    gq_backend be;
    gq_backend_opts bo = {0};
    gq_err e = {0};
    if (gq_backend_open(&be, "cuda", &bo, &e)) {
        printf("test_gpu_cleanroom: no CUDA backend: %s\nRESULT: FAIL\n", e.msg);
        return 1;
    }
    gq_topo *t = calloc(1, sizeof *t);
    gq_topo_init(t);
    if (be.ops->discover(&be, t, &e)) {
        printf("discover: %s\nRESULT: FAIL\n", e.msg);
        return 1;
    }
    /* observe first: it makes sure this process holds a context on GPU 0 */
    gq_gpu_load l;
    int rc = be.ops->observe(&be, 0, &l, &e);
    CHECK(rc == GQ_OK, "observe GPU 0: %s", e.msg);
    printf("observe GPU 0: procs_known %d, other processes %d (total %d), utilization %.0f%%, memory in use "
           "%.0f MiB\n",
           l.procs_known, l.nprocs, l.nprocs_total, l.util_pct, l.mem_used_mib);
    for (int i = 0; i < l.nprocs; i++)
        printf("  other: pid %d %s (%s), %.0f MiB\n", l.procs[i].pid, l.procs[i].name,
               l.procs[i].visible ? "visible" : "not visible here", l.procs[i].mem_mib);
    CHECK(l.procs_known, "the process list could not be read");

    /* the raw list, through our own struct */
    if (gq_nvml_open(&e) == GQ_OK) {
        gq_nvml_dev d;
        if (gq_nvml_device_by_bus_id(t->gpu[0].pci_bus_id, &d, &e) == GQ_OK) {
            gq_nvml_proc p[GQ_NVML_MAX_PROCS];
            int n = 0, total = 0;
            rc = gq_nvml_processes(d, p, GQ_NVML_MAX_PROCS, &n, &total, &e);
            CHECK(rc == GQ_OK, "gq_nvml_processes: %s", e.msg);
            int self = (int)getpid(), found = 0;
            for (int i = 0; i < n; i++) {
                bool invisible = kill((pid_t)p[i].pid, 0) != 0;
                printf("  nvml: pid %u, %.1f MiB, %s%s\n", p[i].pid, p[i].used_bytes / 1048576.0,
                       p[i].graphics ? "graphics" : "compute",
                       (int)p[i].pid == self ? " (this process)"
                       : invisible           ? " (not visible here)"
                                             : "");
                if ((int)p[i].pid == self || invisible)
                    found++;
                CHECK(p[i].pid > 0 && p[i].pid < (1u << 22), "pid %u is not a pid: wrong struct layout?",
                      p[i].pid);
                CHECK(p[i].used_bytes == ~0ull ||
                          (p[i].used_bytes >= (1u << 20) && p[i].used_bytes <= t->gpu[0].mem_bytes),
                      "pid %u holds %llu bytes: wrong struct layout?", p[i].pid, p[i].used_bytes);
            }
            CHECK(found >= 1, "this process (pid %d) is not in NVML's list of GPU 0", self);
            printf("layout: sizeof %zu, offsets %zu %zu %zu %zu\n", gq_nvml_process_info_size(),
                   gq_nvml_process_info_offset(0), gq_nvml_process_info_offset(1),
                   gq_nvml_process_info_offset(2), gq_nvml_process_info_offset(3));
        }
        gq_nvml_close();
    }

    gq_cleanroom cr;
    gq_cleanroom_init(&cr, &be);
    int g0[1] = {0};
    gq_cleanroom_step(&cr, g0, 1, GQ_CLEAN_STEP_S);
    gq_contam cs = {0};
    bool seen = gq_cleanroom_check(&cr, g0, 1, &cs);
    char sum[300];
    gq_contam_summary(&cs, sum, sizeof sum);
    printf("clean room on GPU 0: %s\n", seen ? sum : "nothing seen");
    if (getenv("GQ_EXPECT_BUSY"))
        CHECK(seen, "GQ_EXPECT_BUSY is set but nothing was seen on GPU 0");
    else
        CHECK(!seen, "GPU 0 should be idle, but: %s", sum);
    gq_backend_close(&be);
    free(t);
    printf("RESULT: %s\n", failures ? "FAIL" : "PASS");
    return failures ? 1 : 0;
}
