/* Commands run in-process (gq_frame_main) against stand-in backends, for
 * the paths a simulated machine never takes: no GPU or driver (topo), and a
 * GPU whose memory query fails between two queries (sweep). Each case reads
 * the one error line the command printed on stderr. This program never calls
 * gq_backend_register_builtin(): it registers only its own backends, so a
 * command without --sim finds no "cuda" backend in any build. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "../cli_inproc.h"

#include "backend/backend.h"
#include "cli/commands.h"
#include "cli/frame.h"
#include "core/status.h"

extern const gq_backend_ops gq_backend_sim_ops;

static size_t count(const char *hay, const char *needle)
{
    size_t c = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
        c++;
    return c;
}

/* A stand-in "cuda" backend on a machine without a usable GPU: its init
 * fails as the CUDA backend's does without a device, or its discovery fails
 * with the message cuda_discover.c gives (which names the cause already). */
static int nodev_mode; /* 1: init fails, 2: discover fails */

static int nodev_init(gq_backend *be, const gq_backend_opts *o, const void *bopts, gq_err *err)
{
    (void)o;
    (void)bopts;
    be->priv = NULL;
    if (nodev_mode == 1)
        return gq_err_set(err, GQ_E_NODEV, "no CUDA device found");
    return GQ_OK;
}

static void nodev_fini(gq_backend *be)
{
    (void)be;
}

static int nodev_discover(gq_backend *be, gq_topo *t, gq_err *err)
{
    (void)be;
    (void)t;
    return gq_err_set(err, GQ_E_NODEV, "no NVIDIA GPU or driver found (CUDA sees 0 devices)");
}

static int nodev_prepare(gq_backend *be, const gq_flow *f, int n, gq_group **out, gq_err *err)
{
    (void)be;
    (void)f;
    (void)n;
    (void)out;
    return gq_err_set(err, GQ_E_NODEV, "no device");
}

static int nodev_run(gq_backend *be, gq_group *g, const gq_run_opts *o, gq_flow_result *res, gq_err *err)
{
    (void)be;
    (void)g;
    (void)o;
    (void)res;
    return gq_err_set(err, GQ_E_NODEV, "no device");
}

static void nodev_release(gq_backend *be, gq_group *g)
{
    (void)be;
    (void)g;
}

static const gq_backend_ops nodev_cuda = {
    .version = GQ_BACKEND_OPS_VERSION,
    .name = "cuda",
    .init = nodev_init,
    .fini = nodev_fini,
    .discover = nodev_discover,
    .prepare = nodev_prepare,
    .run = nodev_run,
    .release = nodev_release,
};

/* `gpuqual topo` without --sim says once that there is no NVIDIA GPU or
 * driver, with the reason in parentheses and how to go on (--sim): in a
 * build without CUDA, where the backend's init fails, and where discovery
 * fails with a message that already says so (never "no NVIDIA GPU ... (no
 * NVIDIA GPU ...)"). Exit 3 (no device). */
static void test_topo_without_a_gpu(void **state)
{
    (void)state;
    char err[4096];
    char *argv[] = {"gpuqual", "topo", NULL};
    assert_null(gq_backend_find("cuda")); /* this program registers no CUDA backend before this */
    int code = gq_test_run_cmd(&gq_frame_topo, argv, err, sizeof err, NULL, 0);
    assert_int_equal(code, 3);
    assert_string_equal(err,
                        "gpuqual: no NVIDIA GPU or driver found (this gpuqual was built without CUDA; use "
                        "--sim NAME (e.g. --sim rtx4090x8) for a simulated machine)\n");

    gq_err e = {0};
    assert_int_equal(gq_backend_register(&nodev_cuda, &e), GQ_OK);
    nodev_mode = 1;
    code = gq_test_run_cmd(&gq_frame_topo, argv, err, sizeof err, NULL, 0);
    assert_int_equal(code, 3);
    assert_string_equal(err,
                        "gpuqual: no NVIDIA GPU or driver found (no CUDA device found); use --sim NAME (e.g. "
                        "--sim rtx4090x8) for a simulated machine\n");
    nodev_mode = 2;
    code = gq_test_run_cmd(&gq_frame_topo, argv, err, sizeof err, NULL, 0);
    assert_int_equal(code, 3);
    assert_int_equal(count(err, "no NVIDIA GPU or driver found"), 1);
    assert_string_equal(err,
                        "gpuqual: no NVIDIA GPU or driver found (CUDA sees 0 devices); use --sim NAME (e.g. "
                        "--sim h200x2) for a simulated machine, or --from-snapshot FILE\n");
    nodev_mode = 0;
}

/* The simulator, except that GPU 0 drops off the bus once its memory has
 * been asked for: every later mem_info fails. */
static gq_backend_ops lost_sim;
static int mem_calls;

static int lost_mem_info(gq_backend *be, int gpu, uint64_t *free_bytes, uint64_t *total_bytes, gq_err *err)
{
    if (mem_calls++ > 0)
        return gq_err_set(err, GQ_E_BACKEND, "GPU %d: cudaMemGetInfo: unspecified launch failure", gpu);
    return gq_backend_sim_ops.mem_info(be, gpu, free_bytes, total_bytes, err);
}

/* sweep: --max too large for GPU 0, and GPU 0 lost before sweep asks again
 * how much it has free: the refusal is the first check's own line, which
 * names --max (the option that set the largest size) and GPU 0's free
 * memory. Exit 2, one line. */
static void test_sweep_gpu_lost_between_queries(void **state)
{
    (void)state;
    lost_sim = gq_backend_sim_ops;
    lost_sim.mem_info = lost_mem_info;
    gq_err e = {0};
    /* registered before the simulator could be: "sim" is this one here */
    assert_int_equal(gq_backend_register(&lost_sim, &e), GQ_OK);
    assert_ptr_equal(gq_backend_find("sim"), &lost_sim);
    char err[4096];
    char *argv[] = {"gpuqual", "sweep", "--sim", "h200x2", "--gpus", "0", "--max", "1T", "-q", NULL};
    mem_calls = 0;
    int code = gq_test_run_cmd(&gq_frame_sweep, argv, err, sizeof err, NULL, 0);
    assert_true(mem_calls >= 2); /* the check's query, then sweep's own */
    assert_int_equal(code, 2);
    assert_int_equal(count(err, "\n"), 1);
    if (!strstr(err, "gpuqual: --max 1 TiB is too large: GPU 0 has ") ||
        !strstr(err, " GiB free; give a smaller --max\n"))
        fail_msg("sweep: unexpected refusal: %s", err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_topo_without_a_gpu),
        cmocka_unit_test(test_sweep_gpu_lost_between_queries),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
