/* measure/gpulock: where the lock files live, their names, a GPU named twice,
 * a lock held by another open file (the message names the holder, or an
 * unknown process when its file is empty), and a lock file that cannot be
 * opened (nothing stays held). */
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "measure/gpulock.h"

static char g_dir[PATH_MAX];

static int setup(void **state)
{
    (void)state;
    snprintf(g_dir, sizeof g_dir, "/tmp/gq_gpulock_XXXXXX");
    assert_non_null(mkdtemp(g_dir));
    setenv("GQ_LOCK_DIR", g_dir, 1);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    assert_int_equal(system(cmd), 0);
    return 0;
}

static bool is_dir_w(const char *d)
{
    struct stat st;
    return d && *d && stat(d, &st) == 0 && S_ISDIR(st.st_mode) && access(d, W_OK | X_OK) == 0;
}

/* Without $GQ_LOCK_DIR: /run/lock when it is a writable directory, else
 * $XDG_RUNTIME_DIR when it is one, else /tmp. No GPU is locked (n = 0), so
 * no file is made there. */
static void lock_dir_order(void **state)
{
    (void)state;
    char file[PATH_MAX];
    snprintf(file, sizeof file, "%s/plain", g_dir);
    FILE *f = fopen(file, "w");
    assert_non_null(f);
    fclose(f);
    const char *run_lock = is_dir_w("/run/lock") ? "/run/lock" : NULL;
    gq_topo t;
    gq_topo_init(&t);
    gq_gpulock lk;
    unsetenv("GQ_LOCK_DIR");
    setenv("XDG_RUNTIME_DIR", g_dir, 1);
    assert_int_equal(gq_gpulock_acquire(&lk, &t, NULL, 0, 0, "t", NULL), GQ_OK);
    assert_string_equal(lk.dir, run_lock ? run_lock : g_dir);
    /* a file, not a directory: passed over */
    setenv("XDG_RUNTIME_DIR", file, 1);
    assert_int_equal(gq_gpulock_acquire(&lk, &t, NULL, 0, 0, "t", NULL), GQ_OK);
    assert_string_equal(lk.dir, run_lock ? run_lock : "/tmp");
    unsetenv("XDG_RUNTIME_DIR");
    assert_int_equal(gq_gpulock_acquire(&lk, &t, NULL, 0, 0, "t", NULL), GQ_OK);
    assert_string_equal(lk.dir, run_lock ? run_lock : "/tmp");
    setenv("GQ_LOCK_DIR", g_dir, 1);
    assert_int_equal(gq_gpulock_acquire(&lk, &t, NULL, 0, 0, "t", NULL), GQ_OK);
    assert_string_equal(lk.dir, g_dir);
}

static int lock_path(char *p, size_t n, const char *key)
{
    return snprintf(p, n, "%s/gpuqual-%s.lock", g_dir, key);
}

/* A GPU without UUID or bus id is locked by its index; one named twice is
 * locked once; the file says who holds it. */
static void index_key_and_duplicates(void **state)
{
    (void)state;
    gq_topo t;
    gq_topo_init(&t);
    t.ngpu = 2;
    snprintf(t.gpu[1].pci_bus_id, sizeof t.gpu[1].pci_bus_id, "0000:3b:00.0");
    int gpus[] = {0, 0, 1, 7};
    gq_gpulock lk;
    assert_int_equal(gq_gpulock_acquire(&lk, &t, gpus, 4, 0, "gpuqual card", NULL), GQ_OK);
    assert_int_equal(lk.n, 3);
    char p[PATH_MAX];
    lock_path(p, sizeof p, "gpu0");
    assert_int_equal(access(p, F_OK), 0);
    lock_path(p, sizeof p, "gpu7");
    assert_int_equal(access(p, F_OK), 0);
    lock_path(p, sizeof p, "0000_3b_00_0");
    assert_int_equal(access(p, F_OK), 0);
    FILE *f = fopen(p, "r");
    assert_non_null(f);
    char line[200] = "";
    assert_non_null(fgets(line, sizeof line, f));
    fclose(f);
    char want[200];
    snprintf(want, sizeof want, "pid %d, gpuqual card\n", (int)getpid());
    assert_string_equal(line, want);
    gq_gpulock_release(&lk);
    assert_int_equal(lk.n, 0);
}

/* Held through another open file: busy at once (wait 0), naming the
 * holder from its file, or "unknown process" when the file is empty. */
static void busy_names_holder(void **state)
{
    (void)state;
    gq_topo t;
    gq_topo_init(&t);
    char p[PATH_MAX];
    lock_path(p, sizeof p, "gpu2");
    int fd = open(p, O_RDWR | O_CREAT, 0666);
    assert_true(fd >= 0);
    assert_int_equal(flock(fd, LOCK_EX | LOCK_NB), 0);
    int gpus[] = {2};
    gq_gpulock lk;
    gq_err err = {0};
    assert_int_equal(gq_gpulock_acquire(&lk, &t, gpus, 1, 0, "x", &err), GQ_E_BUSY);
    assert_string_equal(err.msg, "GPU 2 is in use by another gpuqual (unknown process); wait for it with "
                                 "--wait-busy TIME");
    assert_int_equal(lk.n, 0);
    assert_int_equal(pwrite(fd, "pid 42, gpuqual run\nmore\n", 25, 0), 25);
    assert_int_equal(gq_gpulock_acquire(&lk, &t, gpus, 1, 0, "x", &err), GQ_E_BUSY);
    assert_string_equal(err.msg, "GPU 2 is in use by another gpuqual (pid 42, gpuqual run); wait for it with "
                                 "--wait-busy TIME");
    close(fd);
    /* released: now it is ours */
    assert_int_equal(gq_gpulock_acquire(&lk, &t, gpus, 1, 0, "x", &err), GQ_OK);
    gq_gpulock_release(&lk);
}

/* A lock file that cannot be opened (a symbolic link: O_NOFOLLOW): an I/O
 * error naming it and GQ_LOCK_DIR, and the GPU locked before it is let go. */
static void open_failure_releases(void **state)
{
    (void)state;
    gq_topo t;
    gq_topo_init(&t);
    char p[PATH_MAX];
    lock_path(p, sizeof p, "gpu1");
    assert_int_equal(symlink("/nonexistent", p), 0);
    int gpus[] = {0, 1};
    gq_gpulock lk;
    gq_err err = {0};
    assert_int_equal(gq_gpulock_acquire(&lk, &t, gpus, 2, 0, "x", &err), GQ_E_IO);
    assert_int_equal(lk.n, 0);
    char want[PATH_MAX + 64];
    snprintf(want, sizeof want, "cannot open the GPU lock %s: ", p);
    assert_true(strncmp(err.msg, want, strlen(want)) == 0);
    assert_non_null(strstr(err.msg, "(set GQ_LOCK_DIR to a writable directory)"));
    /* GPU 0's lock was dropped: another open file takes it */
    lock_path(p, sizeof p, "gpu0");
    int fd = open(p, O_RDWR);
    assert_true(fd >= 0);
    assert_int_equal(flock(fd, LOCK_EX | LOCK_NB), 0);
    close(fd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(lock_dir_order, setup, teardown),
        cmocka_unit_test_setup_teardown(index_key_and_duplicates, setup, teardown),
        cmocka_unit_test_setup_teardown(busy_names_holder, setup, teardown),
        cmocka_unit_test_setup_teardown(open_failure_releases, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
