/* The one atomic writer (src/core/outfile.c): nothing half-written is left
 * under the final name, devices are written in place, directories refused. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/interrupt.h"
#include "core/outfile.h"

static char dir[256];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/gq-outfile-XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static int count_files(void)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "ls -A '%s' | wc -l", dir);
    FILE *p = popen(cmd, "r");
    int n = -1;
    if (p) {
        if (fscanf(p, "%d", &n) != 1)
            n = -1;
        pclose(p);
    }
    return n;
}

static void test_commit_and_abort(void **state)
{
    (void)state;
    char path[300];
    snprintf(path, sizeof path, "%s/out.txt", dir);
    gq_outfile o;
    gq_err e = {0};
    assert_int_equal(gq_outfile_open(&o, path, &e), GQ_OK);
    fputs("hello\n", o.f);
    assert_int_not_equal(access(path, F_OK), 0); /* not under its name before commit */
    assert_int_equal(gq_outfile_commit(&o, &e), GQ_OK);
    assert_int_equal(access(path, F_OK), 0);
    assert_int_equal(count_files(), 1);
    assert_int_equal(gq_outfile_open(&o, path, &e), GQ_OK);
    fputs("half", o.f);
    gq_outfile_abort(&o);
    assert_int_equal(count_files(), 1); /* the temp file is gone, the old file kept */
    FILE *f = fopen(path, "r");
    char line[16] = "";
    assert_non_null(fgets(line, sizeof line, f));
    fclose(f);
    assert_string_equal(line, "hello\n");
}

static void test_refusals_and_devices(void **state)
{
    (void)state;
    gq_outfile o;
    gq_err e = {0};
    assert_int_equal(gq_outfile_open(&o, dir, &e), GQ_E_IO);
    assert_non_null(strstr(e.msg, "it is a directory"));
    char path[300];
    snprintf(path, sizeof path, "%s/no/such/x.json", dir);
    assert_int_equal(gq_outfile_check(path, &e), GQ_E_IO);
    assert_non_null(strstr(e.msg, "does not exist"));
    assert_int_equal(gq_outfile_check(NULL, &e), GQ_OK);
    assert_int_equal(gq_outfile_check("-", &e), GQ_OK);
    assert_int_equal(gq_outfile_open(&o, "/dev/null", &e), GQ_OK); /* written in place */
    fputs("x", o.f);
    assert_int_equal(gq_outfile_commit(&o, &e), GQ_OK);
    struct stat st;
    assert_int_equal(stat("/dev/null", &st), 0);
    assert_true(S_ISCHR(st.st_mode));
}

static int write_two(FILE *f, void *arg, gq_err *err)
{
    (void)err;
    fputs((const char *)arg, f);
    return GQ_OK;
}

static int write_fails(FILE *f, void *arg, gq_err *err)
{
    (void)f;
    (void)arg;
    return gq_err_set(err, GQ_E_FAIL, "no");
}

static void test_write_in_one_call(void **state)
{
    (void)state;
    char path[300];
    snprintf(path, sizeof path, "%s/one.txt", dir);
    gq_err e = {0};
    assert_int_equal(gq_outfile_write(path, write_two, "ab", &e), GQ_OK);
    assert_int_equal(access(path, F_OK), 0);
    unlink(path);
    assert_int_equal(gq_outfile_write(path, write_fails, NULL, &e), GQ_E_FAIL);
    assert_int_not_equal(access(path, F_OK), 0);
    assert_int_equal(count_files(), 0);
}

static void slurp(const char *path, char *buf, size_t cap)
{
    buf[0] = 0;
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    size_t n = fread(buf, 1, cap - 1, f);
    buf[n] = 0;
    fclose(f);
}

/* A link planted under the output name, or under a temporary name the
 * writer could pick, never redirects the write. */
static void test_symlinks_not_followed(void **state)
{
    (void)state;
    char victim[300], link[300], tmpl[300], buf[64];
    snprintf(victim, sizeof victim, "%s/victim", dir);
    FILE *f = fopen(victim, "w");
    fputs("precious", f);
    fclose(f);
    snprintf(link, sizeof link, "%s/out.json", dir);
    assert_int_equal(symlink(victim, link), 0);
    gq_outfile o;
    gq_err e = {0};
    assert_int_equal(gq_outfile_check(link, &e), GQ_E_IO);
    assert_non_null(strstr(e.msg, "symbolic link"));
    assert_int_equal(gq_outfile_open(&o, link, &e), GQ_E_IO);
    slurp(victim, buf, sizeof buf);
    assert_string_equal(buf, "precious");
    /* a link to a directory or to nothing is refused too */
    unlink(link);
    assert_int_equal(symlink("/nonexistent/x", link), 0);
    assert_int_equal(gq_outfile_check(link, &e), GQ_E_IO);
    unlink(link);
    /* a link to a character device is followed (written in place) */
    assert_int_equal(symlink("/dev/null", link), 0);
    assert_int_equal(gq_outfile_open(&o, link, &e), GQ_OK);
    fputs("x", o.f);
    assert_int_equal(gq_outfile_commit(&o, &e), GQ_OK);
    struct stat st;
    assert_int_equal(lstat(link, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    unlink(link);
    /* links planted under every temporary name this process could pick (the
     * random part cannot be guessed; plant many) are never written through */
    for (int i = 0; i < 200; i++) {
        gq_outfile_tmpname(tmpl, sizeof tmpl, dir);
        if (symlink(victim, tmpl) != 0)
            continue;
    }
    char path[300];
    snprintf(path, sizeof path, "%s/real.json", dir);
    assert_int_equal(gq_outfile_open(&o, path, &e), GQ_OK);
    fputs("new", o.f);
    assert_int_equal(gq_outfile_commit(&o, &e), GQ_OK);
    slurp(victim, buf, sizeof buf);
    assert_string_equal(buf, "precious");
    slurp(path, buf, sizeof buf);
    assert_string_equal(buf, "new");
}

/* Leftovers of a process that no longer exists are swept by the next check;
 * a live process's are kept. */
static void test_sweep_dead_leftovers(void **state)
{
    (void)state;
    pid_t child = fork();
    if (child == 0)
        _exit(0);
    int ws;
    waitpid(child, &ws, 0);
    char dead[300], live[300], other[300];
    snprintf(dead, sizeof dead, "%s/.gq-%ld-abcdef", dir, (long)child);
    snprintf(live, sizeof live, "%s/.gq-%ld-abcdef", dir, (long)getppid());
    snprintf(other, sizeof other, "%s/.gqnot-%ld-abcdef", dir, (long)child);
    fclose(fopen(dead, "w"));
    fclose(fopen(live, "w"));
    fclose(fopen(other, "w"));
    char path[300];
    snprintf(path, sizeof path, "%s/x.json", dir);
    gq_err e = {0};
    assert_int_equal(gq_outfile_check(path, &e), GQ_OK);
    assert_int_not_equal(access(dead, F_OK), 0);
    assert_int_equal(access(live, F_OK), 0);
    assert_int_equal(access(other, F_OK), 0);
}

/* The file gets 0666 less the umask; a 255-byte name works; 256 is refused
 * before any work; a name ending in '/' is refused. */
static void test_mode_and_names(void **state)
{
    (void)state;
    mode_t old = umask(027);
    char path[600];
    snprintf(path, sizeof path, "%s/m.json", dir);
    gq_err e = {0};
    assert_int_equal(gq_outfile_write(path, write_two, "ab", &e), GQ_OK);
    umask(old);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0640);
    char name[260];
    memset(name, 'n', 255);
    name[255] = 0;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    assert_int_equal(gq_outfile_write(path, write_two, "ab", &e), GQ_OK);
    assert_int_equal(access(path, F_OK), 0);
    strcat(path, "n");
    assert_int_equal(gq_outfile_check(path, &e), GQ_E_IO);
    assert_non_null(strstr(e.msg, "256 bytes"));
    snprintf(path, sizeof path, "%s/out.json/", dir);
    assert_int_equal(gq_outfile_check(path, &e), GQ_E_IO);
    assert_non_null(strstr(e.msg, "a name ending in '/' is a directory"));
}

/* A commit that cannot write (/dev/full) fails with the reason; /dev/null
 * works though fsync on it fails. */
static void test_device_errors(void **state)
{
    (void)state;
    gq_err e = {0};
    assert_int_equal(gq_outfile_write("/dev/full", write_two, "ab", &e), GQ_E_IO);
    assert_non_null(strstr(e.msg, "No space"));
    assert_int_equal(gq_outfile_write("/dev/null", write_two, "ab", &e), GQ_OK);
}

/* Where O_TMPFILE cannot be used (no /proc/self/fd, as in some containers,
 * or a file system without it), the temporary file is a named one beside the
 * target. access() is wrapped here (the executable's symbol comes first) so
 * that "/proc/self/fd" reads as missing while no_proc is set. */
static bool no_proc;

int access(const char *p, int mode)
{
    if (no_proc && !strcmp(p, "/proc/self/fd")) {
        errno = ENOENT;
        return -1;
    }
    return (int)syscall(SYS_faccessat, AT_FDCWD, p, mode, 0);
}

/* An aborted or failed output removes its temporary file, named or not, and
 * leaves the old file (if any) as it was. */
static void test_abort_and_failure_remove_temp(void **state)
{
    (void)state;
    char path[300], sub[400];
    snprintf(path, sizeof path, "%s/out.txt", dir);
    gq_err e = {0};
    for (int named = 0; named < 2; named++) {
        no_proc = named;
        gq_outfile o;
        assert_int_equal(gq_outfile_open(&o, path, &e), GQ_OK);
        if (named) { /* the named temporary file is there while writing */
            assert_false(o.anon);
            assert_true(o.tmp[0] != 0);
            assert_int_equal(access(o.tmp, F_OK), 0);
            assert_int_equal(count_files(), 1);
        }
        fputs("half", o.f);
        gq_outfile_abort(&o);
        assert_int_equal(count_files(), 0);
        /* a write callback that fails: nothing left either */
        assert_int_equal(gq_outfile_write(path, write_fails, NULL, &e), GQ_E_FAIL);
        assert_int_equal(count_files(), 0);
        /* a commit that cannot rename (a directory took the name meanwhile):
         * the error, and no temporary file left beside the directory */
        assert_int_equal(gq_outfile_open(&o, path, &e), GQ_OK);
        fputs("whole", o.f);
        assert_int_equal(mkdir(path, 0700), 0);
        snprintf(sub, sizeof sub, "%s/keep", path);
        fclose(fopen(sub, "w"));
        assert_int_equal(gq_outfile_commit(&o, &e), GQ_E_IO);
        assert_non_null(strstr(e.msg, path));
        assert_int_equal(count_files(), 1);
        unlink(sub);
        rmdir(path);
        /* and a commit that works leaves only the file */
        assert_int_equal(gq_outfile_write(path, write_two, "ab", &e), GQ_OK);
        assert_int_equal(count_files(), 1);
        unlink(path);
    }
    no_proc = false;
}

/* How many clean-up slots are free (each taken, then given back). */
static int free_slots(void)
{
    int slot[GQ_CLEANUP_SLOTS + 1], n = 0;
    while (n <= GQ_CLEANUP_SLOTS && (slot[n] = gq_cleanup_add("/nonexistent/gq-slot")) >= 0)
        n++;
    for (int i = 0; i < n; i++)
        gq_cleanup_remove(slot[i]);
    return n;
}

/* The refusals no other test reaches: an empty name, a node that is neither
 * a regular file, a character device nor a pipe (a socket), a file or a
 * directory without write permission (root may write anyway: checked only
 * for other users), and standard output failing at commit. */
static void test_more_refusals(void **state)
{
    (void)state;
    gq_err e = {0};
    gq_outfile o;
    assert_int_equal(gq_outfile_check("", &e), GQ_E_IO);
    assert_string_equal(e.msg, "cannot write '': expected a file name");
    char path[300];
    snprintf(path, sizeof path, "%s/sock", dir);
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    assert_true(s >= 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
    assert_int_equal(bind(s, (struct sockaddr *)&sa, sizeof sa), 0);
    char want[400];
    snprintf(want, sizeof want, "cannot write '%s': it is not a regular file, a character device or a pipe",
             path);
    assert_int_equal(gq_outfile_open(&o, path, &e), GQ_E_IO);
    assert_string_equal(e.msg, want);
    close(s);
    if (geteuid() != 0) {
        snprintf(path, sizeof path, "%s/ro.txt", dir);
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fclose(f);
        assert_int_equal(chmod(path, 0444), 0);
        assert_int_equal(gq_outfile_check(path, &e), GQ_E_IO);
        snprintf(want, sizeof want, "cannot write '%s': file is not writable", path);
        assert_string_equal(e.msg, want);
        char sub[300];
        snprintf(sub, sizeof sub, "%s/ro", dir);
        assert_int_equal(mkdir(sub, 0555), 0);
        snprintf(path, sizeof path, "%s/x.txt", sub);
        assert_int_equal(gq_outfile_check(path, &e), GQ_E_IO);
        snprintf(want, sizeof want, "cannot write '%s': directory '%s' is not writable", path, sub);
        assert_string_equal(e.msg, want);
    }
    /* the unnamed file cannot be given a name: its directory went away */
    char sub[300];
    snprintf(sub, sizeof sub, "%s/gone", dir);
    assert_int_equal(mkdir(sub, 0700), 0);
    snprintf(path, sizeof path, "%s/x.txt", sub);
    int slots = free_slots();
    assert_int_equal(gq_outfile_open(&o, path, &e), GQ_OK);
    if (o.anon) { /* O_TMPFILE: nothing in the directory until the commit */
        fputs("x", o.f);
        assert_int_equal(rmdir(sub), 0);
        assert_int_equal(gq_outfile_commit(&o, &e), GQ_E_IO);
        snprintf(want, sizeof want, "writing '%s' failed: %s", path, strerror(ENOENT));
        assert_string_equal(e.msg, want);
        assert_null(o.f);
        assert_int_equal(o.slot, -1);
        assert_int_equal(free_slots(), slots); /* no name left listed for clean-up */
    } else {
        gq_outfile_abort(&o);
    }
    /* standard output on a full device: the commit says so */
    fflush(stdout);
    int keep = dup(1), full = open("/dev/full", O_WRONLY);
    assert_true(keep >= 0 && full >= 0);
    assert_int_equal(gq_outfile_open(&o, "-", &e), GQ_OK);
    assert_true(o.is_stdout);
    dup2(full, 1);
    fputs("lost\n", o.f);
    int rc = gq_outfile_commit(&o, &e);
    clearerr(stdout);
    dup2(keep, 1);
    close(keep);
    close(full);
    assert_int_equal(rc, GQ_E_FAIL);
    assert_string_equal(e.msg, "writing to standard output failed: No space left on device");
    assert_null(o.f);
    /* and a good one is fine */
    assert_int_equal(gq_outfile_open(&o, "-", &e), GQ_OK);
    assert_int_equal(gq_outfile_commit(&o, &e), GQ_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_commit_and_abort, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refusals_and_devices, setup, teardown),
        cmocka_unit_test_setup_teardown(test_write_in_one_call, setup, teardown),
        cmocka_unit_test_setup_teardown(test_symlinks_not_followed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sweep_dead_leftovers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_mode_and_names, setup, teardown),
        cmocka_unit_test_setup_teardown(test_device_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_abort_and_failure_remove_temp, setup, teardown),
        cmocka_unit_test_setup_teardown(test_more_refusals, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
