/* GPU identity from NVML (topo/nvml.c, loaded with dlopen): VBIOS, serial
 * and the ECC, MIG and persistence modes, against a stand-in
 * libnvidia-ml.so.1 (tests/unit/fake_nvml.c, found through LD_LIBRARY_PATH,
 * which CMake sets for this test): a value, "not supported" where NVML says
 * so, unknown on another error. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "topo/nvml.h"
#include "topo/topo.h"

static void test_identity(void **state)
{
    gq_topo *t = calloc(1, sizeof *t);
    assert_non_null(t);
    gq_topo_init(t);
    t->ngpu = 2;
    snprintf(t->gpu[0].pci_bus_id, sizeof t->gpu[0].pci_bus_id, "0000:00:06.0");
    snprintf(t->gpu[1].pci_bus_id, sizeof t->gpu[1].pci_bus_id, "0000:00:07.0");
    t->gpu[1].index = 1;
    gq_nvml_fill_topo(t);
    if (!t->nvml_loaded)
        fail_msg("NVML did not load: %s", t->warnings[0]);
    assert_string_equal(t->gpu[0].vbios, "96.00.9F.00.01");
    assert_string_equal(t->gpu[0].serial, "1654224000001");
    assert_int_equal(t->gpu[0].ecc_mode, GQ_MODE_ENABLED);
    assert_int_equal(t->gpu[0].mig_mode, GQ_MODE_UNSUPPORTED);
    assert_int_equal(t->gpu[0].persistence_mode, GQ_MODE_ENABLED);
    assert_string_equal(t->gpu[1].vbios, "not supported");
    assert_string_equal(t->gpu[1].serial, ""); /* an error: unknown, never a guess */
    assert_int_equal(t->gpu[1].ecc_mode, GQ_MODE_DISABLED);
    assert_int_equal(t->gpu[1].mig_mode, GQ_MODE_ENABLED);
    assert_int_equal(t->gpu[1].persistence_mode, GQ_MODE_DISABLED);
    free(t);
}

static void test_mode_names(void **state)
{
    assert_string_equal(gq_mode_name(GQ_MODE_ENABLED), "enabled");
    assert_string_equal(gq_mode_name(GQ_MODE_DISABLED), "disabled");
    assert_string_equal(gq_mode_name(GQ_MODE_UNSUPPORTED), "not supported");
    assert_string_equal(gq_mode_name(GQ_MODE_UNKNOWN), "unknown");
    assert_string_equal(gq_mode_name(42), "unknown");
}

/* A device is looked up only while NVML is open: before the first open and
 * after the last close the call says NVML is not loaded; in between it finds
 * the stand-in's GPU by its bus id. */
static void test_lookup_needs_open(void **state)
{
    (void)state;
    gq_nvml_dev d = NULL;
    gq_err e = {0};
    assert_int_equal(gq_nvml_device_by_bus_id("0000:00:06.0", &d, &e), GQ_E_UNSUPP);
    assert_non_null(strstr(e.msg, "NVML is not loaded"));
    assert_int_equal(gq_nvml_open(&e), GQ_OK);
    assert_int_equal(gq_nvml_device_by_bus_id("0000:00:06.0", &d, &e), GQ_OK);
    gq_nvml_close();
    e.msg[0] = 0;
    assert_int_equal(gq_nvml_device_by_bus_id("0000:00:06.0", &d, &e), GQ_E_UNSUPP);
    assert_non_null(strstr(e.msg, "NVML is not loaded"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_lookup_needs_open),
                                       cmocka_unit_test(test_identity), cmocka_unit_test(test_mode_names)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
