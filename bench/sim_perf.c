/* Speed of the simulated fabric's solver: one concurrent step of 64 GPUs
 * with 4,096 flows (every ordered GPU pair over P2P, plus each GPU's local
 * copy), on a generated machine of 2 sockets x 4 PCIe Gen5 switches x 8
 * GPUs. Prints the time of prepare (routing every flow), of one run by
 * duration (one max-min solve: the "concurrent step") and of one run by
 * count (a re-solve every time a flow finishes), each the best of N tries.
 *
 * Usage: sim_perf [TRIES]     (bench/sim-perf.sh builds and runs it)
 * Exit status 0; the figures are for people, not a pass/fail test.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/backend.h"
#include "backend/sim/sim.h"
#include "core/units.h"

#define NGPU 64

static int write_machine(char *path, size_t n)
{
    snprintf(path, n, "/tmp/gq-sim-perf-XXXXXX");
    int fd = mkstemp(path);
    if (fd < 0)
        return -1;
    FILE *f = fdopen(fd, "w");
    if (!f)
        return -1;
    fprintf(f, "machine perf64\ncpu \"bench\" sockets 2 cores 128\np2p OK\n");
    for (int s = 0; s < 2; s++) {
        fprintf(
            f, "memory mem%d numa %d size 1024 GiB\nsocket cpu%d numa %d p2p-flowcap 50 GB/s p2p-cost 5 us\n",
            s, s, s, s);
        fprintf(f, "fabric mem%d cpu%d read 400 GB/s write 350 GB/s\n", s, s);
    }
    fprintf(f, "fabric cpu0 cpu1 cap 120 GB/s duplex 200 GB/s p2p-flowcap 40 GB/s\n");
    for (int w = 0; w < 8; w++) {
        fprintf(f, "switch sw%d p2p-flowcap 52 GB/s p2p-cost 3 us\n", w);
        fprintf(f, "pcie sw%d cpu%d rate 32 GT/s width x16 up 56 GB/s down 57 GB/s duplex 100 GB/s\n", w,
                w / 4);
    }
    for (int g = 0; g < NGPU; g++) {
        fprintf(f, "gpu gpu%d index %d model \"Bench GPU\" mem 80 GiB local-copy 1500 GB/s\n", g, g);
        fprintf(
            f,
            "pcie gpu%d sw%d rate 32 GT/s width x16 up 56.6 GB/s down 57.9 GB/s duplex 101 GB/s weights 56 "
            "46 lat 300 ns cost 1 us\n",
            g, g / 8);
    }
    fclose(f);
    return 0;
}

int main(int argc, char **argv)
{
    int tries = argc > 1 ? atoi(argv[1]) : 5;
    if (tries < 1)
        tries = 1;
    char path[64];
    if (write_machine(path, sizeof path)) {
        perror("sim_perf: temporary file");
        return 1;
    }
    gq_backend be;
    gq_err e = {0};
    gq_backend_register_builtin();
    gq_backend_opts o;
    gq_sim_opts(&o, path, 1, -1, NULL);
    int rc = gq_backend_open(&be, "sim", &o, &e);
    unlink(path);
    if (rc) {
        fprintf(stderr, "sim_perf: %s\n", e.msg);
        return 1;
    }
    static gq_flow f[NGPU * NGPU];
    static gq_flow_result r[NGPU * NGPU];
    int n = 0;
    for (int a = 0; a < NGPU; a++)
        for (int b = 0; b < NGPU; b++)
            f[n++] = (gq_flow){.src = {GQ_EP_GPU, a},
                               .dst = {GQ_EP_GPU, b},
                               .method = GQ_METHOD_CE,
                               .exec_gpu = b,
                               .bytes = 256 * GQ_MiB};
    double best_prep = 1e9, best_dur = 1e9, best_reps = 1e9;
    double p2p = 0, local = 0;
    for (int t = 0; t < tries; t++) {
        gq_group *g = NULL;
        double t0 = gq_now_mono();
        if ((rc = be.ops->prepare(&be, f, n, &g, &e))) {
            fprintf(stderr, "sim_perf: prepare: %s\n", e.msg);
            return 1;
        }
        double t1 = gq_now_mono();
        gq_run_opts ro = {.duration_s = 1.0};
        be.ops->run(&be, g, &ro, r, &e);
        double t2 = gq_now_mono();
        ro = (gq_run_opts){.reps = 2};
        be.ops->run(&be, g, &ro, r, &e);
        double t3 = gq_now_mono();
        be.ops->release(&be, g);
        best_prep = t1 - t0 < best_prep ? t1 - t0 : best_prep;
        best_dur = t2 - t1 < best_dur ? t2 - t1 : best_dur;
        best_reps = t3 - t2 < best_reps ? t3 - t2 : best_reps;
    }
    for (int i = 0; i < n; i++) {
        double gbps = (double)r[i].bytes_done / (r[i].t_end - r[i].t_start) / 1e9;
        if (f[i].src.index == f[i].dst.index)
            local += gbps / NGPU;
        else
            p2p += gbps / (n - NGPU);
    }
    printf("sim solver: %d GPUs, %d concurrent flows, best of %d\n", NGPU, n, tries);
    printf("  prepare (route every flow)         %8.2f ms\n", best_prep * 1e3);
    printf("  one concurrent step (run by time)  %8.2f ms   (target: under 50 ms)\n", best_dur * 1e3);
    printf("  run by count (re-solve per finish) %8.2f ms\n", best_reps * 1e3);
    printf("  last run (simulated): P2P streams %.2f GB/s each on average, local copies %.0f GB/s\n", p2p,
           local);
    gq_backend_close(&be);
    return 0;
}
