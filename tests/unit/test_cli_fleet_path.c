/* gpuqual --version run from a directory whose absolute path is so long that
 * "DIR/gpuqual-fleet" does not fit in the 4096-byte buffer (while DIR/gpuqual
 * itself still fits): no gpuqual-fleet is named, "mpi: no" (issue 30:
 * main.c's fleet_program), also when the cut name is a file that exists. */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include <stdbool.h>

static void copy_file(const char *from, const char *to)
{
    int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0755);
    assert_true(in >= 0 && out >= 0);
    char buf[65536];
    ssize_t k;
    while ((k = read(in, buf, sizeof buf)) > 0)
        assert_int_equal(write(out, buf, (size_t)k), k);
    assert_int_equal(k, 0);
    close(in);
    assert_int_equal(close(out), 0);
}

/* gpuqual --version from a directory TARGET bytes long; with FLEE, an
 * executable "gpuqual-flee" beside it: "DIR/gpuqual-fleet" cut at the
 * buffer's end, which must not be taken for the fleet program. */
static void from_directory(size_t target, bool flee)
{
    char base[] = "/tmp/gq-longpath-XXXXXX";
    assert_non_null(mkdtemp(base));
    char *home = getcwd(NULL, 0);
    assert_non_null(home);
    assert_int_equal(chdir(base), 0);
    size_t cur = strlen(base);
    char name[256];
    int levels = 0;
    while (cur < target) {
        size_t len = target - cur - 1 > 200 ? 200 : target - cur - 1;
        if (target - cur - 1 > 200 && target - cur - 1 - 200 < 2)
            len = 150; /* leave room for a last component */
        memset(name, 'd', len);
        name[len] = 0;
        assert_int_equal(mkdir(name, 0755), 0);
        assert_int_equal(chdir(name), 0);
        cur += 1 + len;
        levels++;
    }
    assert_int_equal(cur, target);
    copy_file(GQ_BIN, "gpuqual");
    if (flee)
        copy_file(GQ_BIN, "gpuqual-flee");
    int fd[2];
    assert_int_equal(pipe(fd), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(fd[1], 1);
        close(fd[0]);
        execl("./gpuqual", "gpuqual", "--version", (char *)NULL);
        _exit(127);
    }
    close(fd[1]);
    char out[8192];
    size_t n = 0;
    ssize_t k;
    while (n < sizeof out - 1 && (k = read(fd[0], out + n, sizeof out - 1 - n)) > 0)
        n += (size_t)k;
    out[n] = 0;
    close(fd[0]);
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    /* clean up before asserting on the output */
    unlink("gpuqual");
    unlink("gpuqual-flee");
    for (int i = 0; i < levels; i++) {
        char here[4200];
        assert_non_null(getcwd(here, sizeof here));
        assert_int_equal(chdir(".."), 0);
        rmdir(strrchr(here, '/') + 1);
    }
    rmdir(base);
    assert_int_equal(chdir(home), 0);
    free(home);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    if (!strstr(out, "mpi: no;") || strstr(out, "mpi: yes"))
        fail_msg("from a %zu-byte directory:\n%s", target, out);
}

static void long_directory(void **state)
{
    (void)state;
    from_directory(4084, false); /* + "/gpuqual-fleet" is 4098 bytes */
}

/* + "/gpuqual-fleet" is exactly 4096 bytes, one more than the buffer holds
 * with its NUL (mutation round 9, main.c:33) */
static void directory_one_over(void **state)
{
    (void)state;
    from_directory(4082, true);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(long_directory),
        cmocka_unit_test(directory_one_over),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
