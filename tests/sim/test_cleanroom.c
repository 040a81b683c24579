/* The clean room (src/measure/cleanroom.c) and the per-GPU lock
 * (src/measure/gpulock.c), on the simulator: a GPU another process uses
 * (--sim-fault gpuN:busy) gets its records flagged contaminated and
 * invalid, naming the process; its idle peer's records stay clean; a second
 * gpuqual on a locked GPU waits or refuses; and the NVML process struct has
 * nvml.h's layout. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "backend/backend.h"
#include "backend/sim/sim.h"
#include "measure/cleanroom.h"
#include "measure/gpulock.h"
#include "measure/harness.h"
#include "topo/nvml.h"

typedef struct sim {
    gq_backend be;
    gq_topo *t;
} sim;

static void sim_open(sim *s, const char *machine, const char *faults)
{
    gq_backend_register_builtin();
    gq_backend_opts bo;
    gq_sim_opts(&bo, machine, 1, 0, faults);
    gq_err e = {0};
    if (gq_backend_open(&s->be, "sim", &bo, &e))
        fail_msg("open sim %s: %s", machine, e.msg);
    s->t = calloc(1, sizeof *s->t);
    assert_non_null(s->t);
    gq_topo_init(s->t);
    assert_int_equal(s->be.ops->discover(&s->be, s->t, &e), GQ_OK);
}

static void sim_close(sim *s)
{
    gq_backend_close(&s->be);
    free(s->t);
}

/* host -> GPU g, one flow */
static void h2d(gq_measurement *m, int g)
{
    memset(m, 0, sizeof *m);
    snprintf(m->test, sizeof m->test, "host_to_device_memcpy_ce");
    m->nflows = 1;
    m->report[0] = true;
    m->flows[0] = (gq_flow){.src = {GQ_EP_HOST, GQ_NUMA_LOCAL},
                            .dst = {GQ_EP_GPU, g},
                            .method = GQ_METHOD_CE,
                            .exec_gpu = g,
                            .bytes = 64u << 20};
}

static void busy_gpu_is_flagged_and_peer_is_clean(void **state)
{
    (void)state;
    sim s;
    sim_open(&s, "h200x2", "gpu1:busy");
    gq_cleanroom cr;
    gq_cleanroom_init(&cr, &s.be);
    assert_true(cr.on);
    int gpus[2] = {0, 1};
    gq_cleanroom_step(&cr, gpus, 2, GQ_CLEAN_STEP_S);
    gq_harness_opts o;
    gq_harness_opts_default(&o);
    o.clean = &cr;
    o.rounds = 3;
    gq_recordset rs = {0};
    gq_measurement m;
    gq_err e = {0};
    for (int g = 0; g < 2; g++) {
        h2d(&m, g);
        assert_int_equal(gq_harness_measure(&s.be, s.t, &m, &o, &rs, NULL, &e), GQ_OK);
    }
    assert_int_equal(rs.n, 2);
    /* GPU 0 is idle: clean and valid */
    assert_true(rs.v[0].valid);
    assert_int_equal(rs.v[0].flags & GQ_FLAG_CONTAMINATED, 0);
    assert_string_equal(rs.v[0].contaminated, "");
    /* GPU 1 runs the injected process: flagged, invalid, the process named */
    assert_false(rs.v[1].valid);
    assert_true(rs.v[1].flags & GQ_FLAG_CONTAMINATED);
    assert_non_null(
        strstr(rs.v[1].contaminated, "process gpu 1 pid 4242 sim-load: compute process 4242 (sim-load)"));
    /* the step's utilization sample saw it too (100% > 10%) */
    assert_non_null(strstr(rs.v[1].contaminated, "utilization gpu 1: 100% utilization"));
    assert_int_equal(cr.contaminated, 1);
    char note[300];
    gq_cleanroom_note(&cr, note, sizeof note);
    assert_non_null(strstr(note, "1 measurement flagged contaminated"));
    /* the busy fault also slows the GPU's link to 60%: its figure is lower */
    assert_true(rs.v[1].value.median < 0.7 * rs.v[0].value.median);
    gq_records_free(&rs);
    sim_close(&s);
}

static void no_clean_room_no_flags(void **state)
{
    (void)state;
    sim s;
    sim_open(&s, "h200x2", "gpu0:busy");
    gq_harness_opts o;
    gq_harness_opts_default(&o);
    o.clean = NULL; /* nothing watches: nothing is claimed either way */
    o.rounds = 3;
    gq_recordset rs = {0};
    gq_measurement m;
    gq_err e = {0};
    h2d(&m, 0);
    assert_int_equal(gq_harness_measure(&s.be, s.t, &m, &o, &rs, NULL, &e), GQ_OK);
    assert_string_equal(rs.v[0].contaminated, "");
    gq_records_free(&rs);
    sim_close(&s);
}

static void latency_is_flagged_too(void **state)
{
    (void)state;
    sim s;
    sim_open(&s, "h200x2", "gpu0:busy");
    gq_cleanroom cr;
    gq_cleanroom_init(&cr, &s.be);
    gq_harness_opts o;
    gq_harness_opts_default(&o);
    o.clean = &cr;
    o.rounds = 3;
    gq_recordset rs = {0};
    gq_err e = {0};
    gq_latency_req q = {
        .kind = GQ_LAT_POINTER_CHASE, .target = {GQ_EP_HOST, GQ_NUMA_LOCAL}, .exec_gpu = 0, .iters = 1000};
    assert_int_equal(gq_harness_latency(&s.be, s.t, "host_device_latency_sm", &q, &o, &rs, NULL, &e), GQ_OK);
    assert_true(rs.v[0].flags & GQ_FLAG_CONTAMINATED);
    assert_false(rs.v[0].valid);
    /* counted once for the note the commands print */
    assert_int_equal(cr.contaminated, 1);
    char note[512];
    gq_cleanroom_note(&cr, note, sizeof note);
    assert_non_null(strstr(note, "1 measurement"));
    gq_records_free(&rs);
    sim_close(&s);
}

static char lockdir[64];

static int lock_setup(void **state)
{
    (void)state;
    snprintf(lockdir, sizeof lockdir, "/tmp/gq-lock-XXXXXX");
    if (!mkdtemp(lockdir))
        return -1;
    return setenv("GQ_LOCK_DIR", lockdir, 1);
}

static int lock_teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", lockdir);
    unsetenv("GQ_LOCK_DIR");
    return system(cmd) == 0 ? 0 : -1;
}

/* The lock file holds the holder's one line and nothing more: "pid N,
 * WHAT" and a newline, whatever the stack buffer it was formatted in holds
 * after it; a WHAT too long for the line is cut to the buffer's 199
 * characters, never read past it. */
static void lock_file_holds_one_line(void **state)
{
    (void)state;
    sim s;
    sim_open(&s, "h200x2", NULL);
    char big[400];
    memset(big, 'w', sizeof big - 1);
    big[sizeof big - 1] = 0;
    const char *whats[] = {"gpuqual test", big};
    for (int w = 0; w < 2; w++) {
        gq_gpulock lk;
        gq_err e = {0};
        int gpus[1] = {1};
        assert_int_equal(gq_gpulock_acquire(&lk, s.t, gpus, 1, 0, whats[w], &e), GQ_OK);
        char cmd[160];
        snprintf(cmd, sizeof cmd, "cat '%s'/gpuqual-*.lock", lockdir);
        FILE *p = popen(cmd, "r");
        assert_non_null(p);
        char got[1024];
        size_t n = fread(got, 1, sizeof got, p);
        pclose(p);
        gq_gpulock_release(&lk);
        char want[1024];
        int l = snprintf(want, sizeof want, "pid %d, %s\n", (int)getpid(), whats[w]);
        size_t wn = l < 200 ? (size_t)l : 199;
        assert_int_equal(n, wn);
        assert_memory_equal(got, want, wn);
    }
    sim_close(&s);
}

/* Without $GQ_LOCK_DIR and with /run/lock not writable (a read-only mount
 * over it in a private mount namespace, where the system allows one), the
 * lock files go to $XDG_RUNTIME_DIR, not /tmp. Skipped where neither a mount
 * namespace nor an unusable /run/lock can be had. */
static void lock_in_xdg_runtime_dir(void **state)
{
    (void)state;
    sim s;
    sim_open(&s, "h200x2", NULL);
    char xdg[] = "/tmp/gq-xdg-XXXXXX";
    assert_non_null(mkdtemp(xdg));
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        bool hidden = unshare(CLONE_NEWNS) == 0 && mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0 &&
                      mount("tmpfs", "/run/lock", "tmpfs", MS_RDONLY, NULL) == 0;
        if (!hidden && access("/run/lock", W_OK) == 0)
            _exit(77);
        unsetenv("GQ_LOCK_DIR");
        setenv("XDG_RUNTIME_DIR", xdg, 1);
        gq_gpulock lk;
        gq_err e = {0};
        int gpus[1] = {0};
        if (gq_gpulock_acquire(&lk, s.t, gpus, 1, 0, "gpuqual test", &e) != GQ_OK) {
            fprintf(stderr, "acquire: %s\n", e.msg);
            _exit(2);
        }
        int ok = !strcmp(lk.dir, xdg);
        if (!ok)
            fprintf(stderr, "the lock is in '%s', not '%s'\n", lk.dir, xdg);
        gq_gpulock_release(&lk);
        _exit(ok ? 0 : 1);
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    char rm[64];
    snprintf(rm, sizeof rm, "rm -rf '%s'", xdg);
    assert_int_equal(system(rm), 0);
    sim_close(&s);
    assert_true(WIFEXITED(st));
    if (WEXITSTATUS(st) == 77)
        skip();
    assert_int_equal(WEXITSTATUS(st), 0);
}

/* A child holds GPU 0's lock for hold_ms, then exits. */
static pid_t hold_in_child(const gq_topo *t, int hold_ms, int *ready_fd)
{
    int p[2];
    assert_int_equal(pipe(p), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(p[0]);
        gq_gpulock lk;
        gq_err e = {0};
        int gpus[1] = {0};
        int rc = gq_gpulock_acquire(&lk, t, gpus, 1, 0, "gpuqual test-holder", &e);
        char c = rc == GQ_OK ? 'y' : 'n';
        (void)!write(p[1], &c, 1);
        usleep((useconds_t)hold_ms * 1000);
        _exit(rc == GQ_OK ? 0 : 1);
    }
    close(p[1]);
    *ready_fd = p[0];
    char c = 0;
    assert_int_equal(read(p[0], &c, 1), 1);
    assert_int_equal(c, 'y');
    return pid;
}

static void second_gpuqual_refused_then_waits(void **state)
{
    (void)state;
    sim s;
    sim_open(&s, "h200x2", NULL);
    int fd;
    pid_t child = hold_in_child(s.t, 1500, &fd);
    gq_gpulock lk;
    gq_err e = {0};
    int gpus[2] = {1, 0};
    /* without waiting: refused, naming the GPU, the holder and --wait-busy; GPU 1 is not kept */
    assert_int_equal(gq_gpulock_acquire(&lk, s.t, gpus, 2, 0, "gpuqual test", &e), GQ_E_BUSY);
    assert_non_null(strstr(e.msg, "GPU 0 is in use by another gpuqual"));
    assert_non_null(strstr(e.msg, "gpuqual test-holder"));
    assert_non_null(strstr(e.msg, "--wait-busy"));
    assert_int_equal(lk.n, 0);
    assert_int_equal(gq_status_exit_code(GQ_E_BUSY), 6);
    /* waiting long enough: the child lets go and the lock is ours */
    assert_int_equal(gq_gpulock_acquire(&lk, s.t, gpus, 2, 10, "gpuqual test", &e), GQ_OK);
    assert_int_equal(lk.n, 2);
    gq_gpulock_release(&lk);
    int st = 0;
    waitpid(child, &st, 0);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    close(fd);
    /* the same process may take it again once released */
    assert_int_equal(gq_gpulock_acquire(&lk, s.t, gpus, 2, 0, "gpuqual test", &e), GQ_OK);
    gq_gpulock_release(&lk);
    sim_close(&s);
}

/* The command frame takes the lock: a gpuqual run on a GPU this test holds
 * exits 6 at once with one line, and waits with --wait-busy. */
static void frame_refuses_and_waits(void **state)
{
    (void)state;
    sim s;
    sim_open(&s, "h200x2", NULL);
    int fd;
    pid_t child = hold_in_child(s.t, 2500, &fd);
    char cmd[1024], err[512] = "";
    snprintf(cmd, sizeof cmd,
             "'%s' run --sim h200x2 --sim-lock -q -t host_to_device_memcpy_ce >/dev/null 2>'%s/err.txt'",
             GQ_BIN, lockdir);
    int st = system(cmd);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 6);
    char path[128];
    snprintf(path, sizeof path, "%s/err.txt", lockdir);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t n = fread(err, 1, sizeof err - 1, f);
    fclose(f);
    err[n] = 0;
    assert_non_null(strstr(err, "GPU 0 is in use by another gpuqual (pid"));
    assert_non_null(strchr(err, '\n'));
    assert_null(strchr(err, '\n') + 1 < err + n ? strchr(strchr(err, '\n') + 1, '\n') : NULL);
    /* --wait-busy outlasts the holder */
    snprintf(
        cmd, sizeof cmd,
        "'%s' run --sim h200x2 --sim-lock --wait-busy 20s -q -t host_to_device_memcpy_ce >/dev/null 2>&1",
        GQ_BIN);
    st = system(cmd);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
    waitpid(child, &st, 0);
    close(fd);
    sim_close(&s);
}

static void nvml_process_struct_layout(void **state)
{
    (void)state;
    /* nvml.h: { unsigned int pid; unsigned long long usedGpuMemory;
     *           unsigned int gpuInstanceId; unsigned int computeInstanceId; } */
    assert_int_equal(gq_nvml_process_info_size(), 24);
    assert_int_equal(gq_nvml_process_info_offset(0), 0);
    assert_int_equal(gq_nvml_process_info_offset(1), 8);
    assert_int_equal(gq_nvml_process_info_offset(2), 16);
    assert_int_equal(gq_nvml_process_info_offset(3), 20);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(busy_gpu_is_flagged_and_peer_is_clean),
        cmocka_unit_test(no_clean_room_no_flags),
        cmocka_unit_test(latency_is_flagged_too),
        cmocka_unit_test_setup_teardown(second_gpuqual_refused_then_waits, lock_setup, lock_teardown),
        cmocka_unit_test_setup_teardown(frame_refuses_and_waits, lock_setup, lock_teardown),
        cmocka_unit_test_setup_teardown(lock_file_holds_one_line, lock_setup, lock_teardown),
        cmocka_unit_test(nvml_process_struct_layout),
        cmocka_unit_test(lock_in_xdg_runtime_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
