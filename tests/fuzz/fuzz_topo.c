/* libFuzzer target for the topology parser (and, for inputs that parse, the
 * routes, discovery and one simulated run on that machine).
 *
 * Build and run (clang; the library is instrumented too in this mode):
 *   cmake -S . -B /tmp/b-fuzz -G Ninja -DGQ_FUZZ=ON -DGQ_CUDA=OFF -DGQ_TESTS=OFF -DCMAKE_C_COMPILER=clang
 *   ninja -C /tmp/b-fuzz fuzz_topo
 *   mkdir -p /tmp/corpus && /tmp/b-fuzz/fuzz_topo -max_total_time=60 -dict=tests/fuzz/topo.dict \
 *       /tmp/corpus examples/topologies tests/sim/bad tests/sim/good
 * A crash or hang found here becomes a case in tests/sim/test_topo_parse.c.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "backend/backend.h"
#include "backend/sim/sim.h"

static void check_message(const gq_err *e)
{
    /* Every rejection is one line that starts with the file's name. */
    if (strncmp(e->msg, "fuzz:", 5) != 0 && strncmp(e->msg, "out of memory", 13) != 0)
        abort();
    if (strchr(e->msg, '\n'))
        abort();
}

static void exercise(const uint8_t *data, size_t size, const gq_sim_machine *m)
{
    gq_sim_hop h[GQ_SIM_MAX_HOPS];
    for (int a = 0; a < m->ngpu; a++) {
        if (gq_sim_nearest_memory(m, m->gpus[a].node, -1) < 0)
            abort(); /* the parser promised a path to memory */
        for (int b = 0; b < m->ngpu && b < 8; b++)
            (void)gq_sim_route(m, m->gpus[a].node, m->gpus[b].node, true, h, GQ_SIM_MAX_HOPS);
    }
    /* Open the backend on the same text through a memory file. */
    int fd = memfd_create("topo", 0);
    if (fd < 0)
        return;
    if (write(fd, data, size) != (ssize_t)size) {
        close(fd);
        return;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    gq_backend be;
    gq_backend_opts o;
    gq_sim_opts(&o, path, 1, -1, NULL);
    gq_err e = {0};
    gq_backend_register_builtin();
    if (gq_backend_open(&be, "sim", &o, &e) == GQ_OK) {
        static gq_topo t;
        gq_topo_init(&t);
        if (be.ops->discover(&be, &t, &e) == GQ_OK && t.ngpu > 0) {
            gq_flow f[4];
            int n = 0;
            f[n++] = (gq_flow){
                .src = {GQ_EP_HOST, GQ_NUMA_LOCAL}, .dst = {GQ_EP_GPU, 0}, .exec_gpu = 0, .bytes = 1 << 20};
            f[n++] = (gq_flow){.src = {GQ_EP_GPU, 0},
                               .dst = {GQ_EP_GPU, t.ngpu - 1},
                               .exec_gpu = 0,
                               .method = GQ_METHOD_CE,
                               .bytes = 1 << 20};
            f[n++] = (gq_flow){.src = {GQ_EP_GPU, t.ngpu - 1},
                               .dst = {GQ_EP_GPU, 0},
                               .exec_gpu = 0,
                               .method = t.ngpu > 1 ? GQ_METHOD_STAGED : GQ_METHOD_CE,
                               .bytes = 1 << 20};
            f[n++] =
                (gq_flow){.src = {GQ_EP_GPU, 0}, .dst = {GQ_EP_HOST, 0}, .exec_gpu = 0, .bytes = 3 << 20};
            gq_group *g = NULL;
            if (be.ops->prepare(&be, f, n, &g, &e) == GQ_OK) {
                gq_flow_result r[4];
                gq_run_opts ro = {.reps = 3};
                be.ops->run(&be, g, &ro, r, &e);
                ro = (gq_run_opts){.duration_s = 0.01};
                be.ops->run(&be, g, &ro, r, &e);
                be.ops->release(&be, g);
            }
            gq_latency_req q = {
                .kind = GQ_LAT_COPY, .target = {GQ_EP_GPU, t.ngpu - 1}, .exec_gpu = 0, .iters = 1};
            double ns;
            be.ops->latency(&be, &q, &ns, &e);
        }
        gq_backend_close(&be);
    }
    close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gq_sim_machine *m = NULL;
    gq_err e = {0};
    int rc = gq_sim_parse((const char *)data, size, "fuzz", &m, &e);
    if (rc != GQ_OK) {
        if (m)
            abort();
        check_message(&e);
        return 0;
    }
    exercise(data, size, m);
    gq_sim_machine_free(m);
    return 0;
}
