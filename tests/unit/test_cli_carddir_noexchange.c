/* Replacing an earlier card where renameat2(RENAME_EXCHANGE) is refused with
 * EINVAL (some NFS and FUSE file systems, older kernels): src/cli/carddir.c
 * moves the earlier card aside as DIR.old-RUNID, moves the new one in, and
 * removes the earlier one; when it cannot (it holds a folder of its own), one
 * warning on stderr names where it is left. This program is linked with
 * -Wl,--wrap=renameat2 (CMakeLists.txt), so its renameat2() fails. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "cli/carddir.h"
#include "core/status.h"

int __wrap_renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath,
                     unsigned int flags);

static int calls;

int __wrap_renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, unsigned int flags)
{
    (void)olddirfd;
    (void)oldpath;
    (void)newdirfd;
    (void)newpath;
    (void)flags;
    calls++;
    errno = EINVAL;
    return -1;
}

static char top[64];

static int setup(void **state)
{
    (void)state;
    snprintf(top, sizeof top, "/tmp/gq-noexch-XXXXXX");
    return mkdtemp(top) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", top);
    return system(cmd) == 0 ? 0 : -1;
}

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

static void test_earlier_card_left_is_named(void **state)
{
    (void)state;
    const char *run_id = "20261207T000000Z-0000abcd";
    char dir[128], partial[256], p[512], err_path[128];
    snprintf(dir, sizeof dir, "%s/card", top);
    assert_int_equal(mkdir(dir, 0700), 0);
    snprintf(p, sizeof p, "%s/card.json", dir);
    put(p, "{\"old\": true}\n");
    /* a folder inside the earlier card: removing it leaves the card */
    snprintf(p, sizeof p, "%s/extra", dir);
    assert_int_equal(mkdir(p, 0700), 0);
    gq_err e = {0};
    assert_int_equal(gq_carddir_begin(dir, run_id, partial, sizeof partial, &e), GQ_OK);
    snprintf(p, sizeof p, "%s/card.json", partial);
    put(p, "{\"new\": true}\n");

    /* stderr into a file while the card is committed */
    snprintf(err_path, sizeof err_path, "%s/stderr.txt", top);
    fflush(stderr);
    int saved = dup(STDERR_FILENO);
    int fd = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(saved >= 0 && fd >= 0);
    dup2(fd, STDERR_FILENO);
    close(fd);
    int rc = gq_carddir_commit(dir, partial, run_id, &e);
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    assert_int_equal(rc, GQ_OK);
    assert_true(calls >= 1);

    /* the new card is in place; the earlier one is left aside, and named */
    snprintf(p, sizeof p, "%s/card.json", dir);
    FILE *f = fopen(p, "r");
    assert_non_null(f);
    char buf[1024] = "";
    assert_non_null(fgets(buf, sizeof buf, f));
    fclose(f);
    assert_string_equal(buf, "{\"new\": true}\n");
    char old[256];
    snprintf(old, sizeof old, "%s.old-%s", dir, run_id);
    struct stat st;
    assert_int_equal(stat(old, &st), 0);
    f = fopen(err_path, "r");
    assert_non_null(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    char want[512];
    snprintf(want, sizeof want, "gpuqual: warning: the earlier card is left in '%s'\n", old);
    assert_string_equal(buf, want);
}

/* Without the exchange: when the earlier card cannot be moved aside (its
 * .old- name is taken by a folder that is not empty) the error names both
 * cards; when the new card cannot be moved in (its partial folder is gone)
 * the earlier card is moved back and the error names the move. */
static void test_swap_refusals(void **state)
{
    (void)state;
    char dir[128], partial[256], p[512], want[1200];
    gq_err e = {0};
    snprintf(dir, sizeof dir, "%s/card", top);
    assert_int_equal(mkdir(dir, 0700), 0);
    snprintf(p, sizeof p, "%s/card.json", dir);
    put(p, "{\"old\": true}\n");
    snprintf(p, sizeof p, "%s.old-r1", dir);
    assert_int_equal(mkdir(p, 0700), 0);
    snprintf(p, sizeof p, "%s.old-r1/x", dir);
    put(p, "taken\n");
    assert_int_equal(gq_carddir_begin(dir, "r1", partial, sizeof partial, &e), GQ_OK);
    assert_int_equal(gq_carddir_commit(dir, partial, "r1", &e), GQ_E_FAIL);
    snprintf(want, sizeof want,
             "cannot move the earlier card '%s' aside: Directory not empty; the new card is in '%s'", dir,
             partial);
    assert_string_equal(e.msg, want);

    snprintf(partial, sizeof partial, "%s.partial-r2", dir); /* never made */
    assert_int_equal(gq_carddir_commit(dir, partial, "r2", &e), GQ_E_FAIL);
    snprintf(want, sizeof want, "cannot move the card from '%s' to '%s': No such file or directory", partial,
             dir);
    assert_string_equal(e.msg, want);
    snprintf(p, sizeof p, "%s/card.json", dir); /* the earlier card is back */
    struct stat st;
    assert_int_equal(stat(p, &st), 0);
    snprintf(p, sizeof p, "%s.old-r2", dir);
    assert_int_not_equal(stat(p, &st), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_earlier_card_left_is_named, setup, teardown),
        cmocka_unit_test_setup_teardown(test_swap_refusals, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
