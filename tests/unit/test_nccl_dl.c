/* NCCL loaded at run time (backend/cuda/nccl_dl.c; it includes no CUDA or
 * NCCL header, so it is tested here without either): with GQ_NCCL_LIB naming
 * a missing file, the one line that says NCCL is missing and how to get it,
 * and GQ_E_NOLIB (exit 7); a library without ncclSend (NCCL before 2.7)
 * refused by name; a whole one (tests/unit/fake_nccl.c, version 2.23.4)
 * loaded with every entry point and its version as text. The tests run in
 * this order: a success is kept for the process's lifetime. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "backend/cuda/nccl_dl.h"
#include "core/status.h"

static const char advice[] = "; install NCCL (libnccl2) or set GQ_NCCL_LIB";

static bool ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), m = strlen(tail);
    return n >= m && !strcmp(s + n - m, tail);
}

static void test_default_name(void **state)
{
    (void)state;
    unsetenv("GQ_NCCL_LIB");
    assert_string_equal(gq_nccl_libname(), "libnccl.so.2");
    setenv("GQ_NCCL_LIB", "", 1); /* empty: the default */
    assert_string_equal(gq_nccl_libname(), "libnccl.so.2");
    unsetenv("GQ_NCCL_LIB");
}

static void test_missing(void **state)
{
    (void)state;
    const gq_nccl *nc = NULL;
    gq_err e = {0};
    setenv("GQ_NCCL_LIB", "/nonexistent/libnccl-absent.so.2", 1);
    assert_int_equal(gq_nccl_load(&nc, &e), GQ_E_NOLIB);
    assert_null(nc);
    assert_int_equal(e.code, GQ_E_NOLIB);
    assert_int_equal(gq_status_exit_code(e.code), 7);
    /* "NCCL not found: <name>: <dlerror's reason>; install ..." */
    if (strncmp(e.msg, "NCCL not found: /nonexistent/libnccl-absent.so.2: ", 50) || !ends_with(e.msg, advice))
        fail_msg("unexpected line: '%s'", e.msg);
    assert_null(strchr(e.msg, '\n'));
    assert_true(strlen(e.msg) < 240); /* fits gq_coll_info.why whole */
    /* the name once, not twice (dlerror names the file already) */
    assert_null(strstr(e.msg + 20, "libnccl-absent.so.2: /nonexistent"));
    unsetenv("GQ_NCCL_LIB");
}

/* A very long name: the line is cut in the middle, the advice stays whole. */
static void test_missing_long_name(void **state)
{
    (void)state;
    char name[400];
    memset(name, 'x', sizeof name);
    memcpy(name, "/nonexistent/", 13);
    name[sizeof name - 1] = 0;
    setenv("GQ_NCCL_LIB", name, 1);
    const gq_nccl *nc = NULL;
    gq_err e = {0};
    assert_int_equal(gq_nccl_load(&nc, &e), GQ_E_NOLIB);
    assert_true(strlen(e.msg) < 240);
    if (strncmp(e.msg, "NCCL not found: /nonexistent/xxx", 32) || !ends_with(e.msg, advice))
        fail_msg("unexpected line: '%s'", e.msg);
    unsetenv("GQ_NCCL_LIB");
}

static void test_too_old(void **state)
{
    (void)state;
    const gq_nccl *nc = NULL;
    gq_err e = {0};
    setenv("GQ_NCCL_LIB", GQ_FAKE_NCCL_OLD, 1);
    assert_int_equal(gq_nccl_load(&nc, &e), GQ_E_NOLIB);
    assert_null(nc);
    if (!strstr(e.msg, "has no ncclSend") || !strstr(e.msg, "install NCCL 2.7 or later"))
        fail_msg("unexpected line: '%s'", e.msg);
    unsetenv("GQ_NCCL_LIB");
}

static void test_loaded(void **state)
{
    (void)state;
    const gq_nccl *nc = NULL;
    gq_err e = {0};
    setenv("GQ_NCCL_LIB", GQ_FAKE_NCCL, 1);
    if (gq_nccl_load(&nc, &e) != GQ_OK)
        fail_msg("the stand-in did not load: %s", e.msg);
    assert_non_null(nc);
    assert_int_equal(nc->version, 22304);
    const char *base = strrchr(GQ_FAKE_NCCL, '/');
    char want[200];
    snprintf(want, sizeof want, "%s (NCCL 2.23.4)", base ? base + 1 : GQ_FAKE_NCCL);
    assert_string_equal(nc->library, want);
    assert_non_null(nc->comm_init_all);
    assert_non_null(nc->comm_abort);
    assert_non_null(nc->send);
    assert_non_null(nc->recv);
    /* an NCCL failure is told in NCCL's words */
    gq_ncclComm_t comm[1] = {NULL};
    int dev = 0;
    gq_ncclResult_t r = nc->comm_init_all(comm, 1, &dev);
    assert_int_equal(r, gq_ncclInvalidUsage);
    assert_string_equal(gq_nccl_strerror(nc, r), "invalid usage (run with NCCL_DEBUG=WARN for details)");
    /* kept: a second call gives the same table, whatever the environment says now */
    setenv("GQ_NCCL_LIB", "/nonexistent/libnccl-absent.so.2", 1);
    const gq_nccl *again = NULL;
    assert_int_equal(gq_nccl_load(&again, &e), GQ_OK);
    assert_ptr_equal(again, nc);
    unsetenv("GQ_NCCL_LIB");
}

static void test_version_text(void **state)
{
    (void)state;
    char v[32];
    gq_nccl_version_text(22304, v, sizeof v); /* 2.9 on: X*10000 + Y*100 + Z */
    assert_string_equal(v, "2.23.4");
    gq_nccl_version_text(21805, v, sizeof v);
    assert_string_equal(v, "2.18.5");
    gq_nccl_version_text(2708, v, sizeof v); /* 2.8 and older: X*1000 + Y*100 + Z */
    assert_string_equal(v, "2.7.8");
    gq_nccl_version_text(30001, v, sizeof v);
    assert_string_equal(v, "3.0.1");
    assert_string_equal(gq_nccl_strerror(NULL, gq_ncclSystemError), "NCCL error 2");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_name),
        cmocka_unit_test(test_missing),
        cmocka_unit_test(test_missing_long_name),
        cmocka_unit_test(test_too_old),
        cmocka_unit_test(test_loaded),
        cmocka_unit_test(test_version_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
