/* GPU identity from NVML (topo/nvml.c, loaded with dlopen): VBIOS, serial
 * and the ECC, MIG and persistence modes, against a stand-in
 * libnvidia-ml.so.1 (tests/unit/fake_nvml.c, found through LD_LIBRARY_PATH,
 * which CMake sets for this test): a value, "not supported" where NVML says
 * so, unknown on another error. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "topo/nvml.h"
#include "topo/topo.h"
#include "../test_util.h"

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

static gq_topo *topo_of(int n, const char *const *bus)
{
    gq_topo *t = calloc(1, sizeof *t);
    assert_non_null(t);
    gq_topo_init(t);
    t->ngpu = n;
    for (int i = 0; i < n; i++)
        snprintf(t->gpu[i].pci_bus_id, sizeof t->gpu[i].pci_bus_id, "%s", bus[i]);
    gq_nvml_fill_topo(t);
    if (!t->nvml_loaded)
        fail_msg("NVML did not load: %s", t->warnings[0]);
    return t;
}

/* Discovery through NVML: the driver versions, each GPU's UUID, name,
 * memory, PCIe link and power limit (kept unknown where NVML fails), and the
 * NVLink census: direct links counted per peer, links to an NVSwitch credited
 * to every pair of switch-attached GPUs at the smaller count, links to a bus
 * that is no GPU of the machine counted in the total only. */
static void test_fill_gpu_and_switch_links(void **state)
{
    (void)state;
    static const char *const bus[] = {"0000:00:06.0", "0000:00:07.0", "0000:00:08.0"};
    gq_topo *t = calloc(1, sizeof *t);
    assert_non_null(t);
    gq_topo_init(t);
    snprintf(t->gpu[1].name, sizeof t->gpu[1].name, "kept");
    snprintf(t->driver_version, sizeof t->driver_version, "1.2.3");
    t->ngpu = 3;
    for (int i = 0; i < 3; i++)
        snprintf(t->gpu[i].pci_bus_id, sizeof t->gpu[i].pci_bus_id, "%s", bus[i]);
    gq_nvml_fill_topo(t);
    assert_true(t->nvml_loaded);
    assert_string_equal(t->driver_version, "1.2.3"); /* a version already known is kept */
    assert_int_equal(t->cuda_driver_version, 12080);
    assert_int_equal(t->nwarnings, 0);

    assert_string_equal(t->gpu[0].uuid, "GPU-00000001-aaaa-bbbb-cccc-dddddddddddd");
    assert_string_equal(t->gpu[0].name, "NVIDIA H200 #1");
    assert_string_equal(t->gpu[1].name, "kept"); /* a name already known is kept */
    assert_string_equal(t->gpu[2].uuid, "");     /* an error: unknown */
    assert_true(t->gpu[0].mem_bytes == 150754820096ull);
    assert_true(t->gpu[2].mem_bytes == 0);
    assert_int_equal(t->gpu[0].pcie_gen_cur, 4);
    assert_int_equal(t->gpu[0].pcie_width_cur, 8);
    assert_int_equal(t->gpu[0].pcie_gen_max, 5);
    assert_int_equal(t->gpu[0].pcie_width_max, 16);
    assert_int_equal(t->gpu[1].pcie_gen_cur, -1); /* lost: unknown */
    assert_int_equal(t->gpu[1].pcie_width_cur, -1);
    assert_int_equal(t->gpu[2].pcie_width_max, 16);
    assert_near(t->gpu[0].power_limit_w, 700.5, 1e-9);
    assert_near(t->gpu[1].power_limit_w, 0, 0);

    /* GPU 0: 2 links to GPU 1, 1 to a switch, 1 to a stranger, 1 inactive */
    assert_int_equal(t->gpu[0].nvlinks_total, 4);
    assert_int_equal(t->gpu[0].nvswitch_links, 1);
    assert_int_equal(t->gpu[1].nvlinks_total, 4); /* 2 to GPU 0, 2 to a switch */
    assert_int_equal(t->gpu[1].nvswitch_links, 2);
    assert_int_equal(t->gpu[2].nvlinks_total, 4); /* 3 to a switch, 1 unreadable */
    assert_int_equal(t->gpu[2].nvswitch_links, 3);
    assert_int_equal(t->nvlinks[0][1], 2);
    assert_int_equal(t->nvlinks[1][0], 2);
    assert_int_equal(t->nvlinks[0][2], 1); /* through the switch: the smaller count */
    assert_int_equal(t->nvlinks[2][0], 1);
    assert_int_equal(t->nvlinks[1][2], 2);
    assert_int_equal(t->nvlinks[2][1], 2);
    assert_int_equal(t->nvlinks[0][0], -1);

    assert_int_equal(t->p2p_nvml[0][1], GQ_P2P_OK);
    assert_int_equal(t->p2p_nvml[1][0], GQ_P2P_OK);
    assert_int_equal(t->p2p_nvml[0][2], GQ_P2P_CNS);
    assert_int_equal(t->p2p_nvml[1][2], GQ_P2P_GNS);
    assert_int_equal(t->pci_level[0][1], GQ_LEVEL_PIX); /* NVML's "internal": one board */
    assert_int_equal(t->pci_level[0][2], GQ_LEVEL_PIX);
    assert_int_equal(t->pci_level[1][2], GQ_LEVEL_PXB);
    assert_int_equal(t->pci_level[2][1], GQ_LEVEL_PXB);
    free(t);
}

/* Without a switch, links whose far end NVML cannot name are credited to a
 * pair only when NVML says the pair is NVLink-capable, at the smaller count. */
static void test_unresolved_links(void **state)
{
    (void)state;
    static const char *const bus[] = {"0000:00:06.0", "0000:00:09.0", "0000:00:0a.0"};
    gq_topo *t = topo_of(3, bus);
    assert_string_equal(t->driver_version, "570.86.15");
    assert_int_equal(t->gpu[0].nvlinks_total, 4); /* its peer 0000:00:07.0 is not in this machine */
    assert_int_equal(t->gpu[0].nvswitch_links, 1);
    assert_int_equal(t->gpu[1].nvlinks_total, 2);
    assert_int_equal(t->gpu[1].nvswitch_links, 0);
    assert_int_equal(t->gpu[2].nvlinks_total, 1);
    assert_int_equal(t->nvlinks[0][1], 0); /* not NVLink-capable per NVML */
    assert_int_equal(t->nvlinks[0][2], 0);
    assert_int_equal(t->nvlinks[1][2], 1);
    assert_int_equal(t->nvlinks[2][1], 1);
    assert_int_equal(t->p2p_nvml[0][1], GQ_P2P_GNS);
    assert_int_equal(t->p2p_nvml[0][2], GQ_P2P_TNS);
    assert_int_equal(t->p2p_nvml[1][2], GQ_P2P_UNKNOWN); /* a status NVML does not define */
    assert_int_equal(t->pci_level[0][1], GQ_LEVEL_PXB);
    assert_int_equal(t->pci_level[0][2], GQ_LEVEL_PHB);
    assert_int_equal(t->pci_level[1][2], GQ_LEVEL_UNKNOWN);
    free(t);
}

/* A GPU NVML does not know is warned about and left unknown; the rest are
 * filled; an error from NVML leaves the pair's status unknown. */
static void test_unknown_gpu_and_levels(void **state)
{
    (void)state;
    static const char *const bus[] = {"0000:00:07.0", "0000:00:08.0", "0000:00:0a.0", "0000:00:0b.0"};
    gq_topo *t = topo_of(4, bus);
    assert_int_equal(t->nwarnings, 1);
    assert_string_equal(
        t->warnings[0],
        "GPU 3: NVML does not know the GPU at 0000:00:0b.0: Not Found; its NVML fields read unknown");
    assert_int_equal(t->gpu[3].nvlinks_total, -1);
    assert_int_equal(t->gpu[3].nvswitch_links, -1);
    assert_int_equal(t->nvlinks[0][3], -1);
    assert_int_equal(t->gpu[0].nvlinks_total, 4); /* 2 to a GPU not in this machine, 2 to a switch */
    assert_int_equal(t->nvlinks[0][1], 2);
    assert_int_equal(t->nvlinks[0][2], 0);
    assert_int_equal(t->nvlinks[1][2], 0);
    assert_int_equal(t->p2p_nvml[0][2], GQ_P2P_DISABLED);
    assert_int_equal(t->p2p_nvml[1][2], GQ_P2P_UNKNOWN); /* NVML's error */
    assert_int_equal(t->pci_level[0][2], GQ_LEVEL_NODE);
    assert_int_equal(t->pci_level[1][2], GQ_LEVEL_SYS);
    free(t);
}

static gq_nvml_dev dev_at(const char *bus)
{
    gq_nvml_dev d = NULL;
    gq_err e = {0};
    if (gq_nvml_device_by_bus_id(bus, &d, &e))
        fail_msg("%s", e.msg);
    return d;
}

/* One telemetry sample: every field as NVML gives it (mW to W, the memory
 * temperature from the field values, ECC by type, remapped rows summed); a
 * lost GPU is flagged with every field unknown; a GPU that supports nothing
 * reads unknown and not lost. */
static void test_sample(void **state)
{
    (void)state;
    gq_sample s;
    gq_err e = {0};
    assert_int_equal(gq_nvml_sample((gq_nvml_dev)1, &s, &e), GQ_E_UNSUPP); /* not open */
    assert_non_null(strstr(e.msg, "NVML is not loaded"));
    assert_true(isnan(s.temp_c));
    assert_int_equal(gq_nvml_open(&e), GQ_OK);
    assert_int_equal(gq_nvml_sample(NULL, &s, &e), GQ_E_USAGE);

    assert_int_equal(gq_nvml_sample(dev_at("0000:00:06.0"), &s, &e), GQ_OK);
    assert_false(s.lost);
    assert_near(s.temp_c, 61, 0);
    assert_near(s.temp_slowdown_c, 90, 0);
    assert_near(s.mem_temp_c, 73, 0);
    assert_near(s.power_w, 412.25, 1e-9);
    assert_near(s.power_limit_w, 700.5, 1e-9);
    assert_near(s.sm_clock_mhz, 1980, 0);
    assert_near(s.mem_clock_mhz, 3201, 0);
    assert_near(s.util_pct, 87, 0);
    assert_true(s.clock_reasons == 0x84);
    assert_int_equal(s.pcie_gen, 4);
    assert_int_equal(s.pcie_width, 8);
    assert_true(s.pcie_replay == 3);
    assert_true(s.ecc_corrected == 11);
    assert_true(s.ecc_uncorrected == 2);
    assert_int_equal(s.remapped_rows, 6);

    assert_int_equal(gq_nvml_sample(dev_at("0000:00:07.0"), &s, &e), GQ_OK);
    assert_true(s.lost);
    assert_true(isnan(s.temp_c) && isnan(s.temp_slowdown_c) && isnan(s.mem_temp_c) && isnan(s.power_w));
    assert_true(isnan(s.power_limit_w) && isnan(s.sm_clock_mhz) && isnan(s.mem_clock_mhz) &&
                isnan(s.util_pct));
    assert_true(s.clock_reasons == GQ_SAMPLE_U64_UNKNOWN && s.pcie_replay == GQ_SAMPLE_U64_UNKNOWN);
    assert_true(s.ecc_corrected == GQ_SAMPLE_U64_UNKNOWN && s.ecc_uncorrected == GQ_SAMPLE_U64_UNKNOWN);
    assert_int_equal(s.pcie_gen, -1);
    assert_int_equal(s.pcie_width, -1);
    assert_int_equal(s.remapped_rows, -1);

    assert_int_equal(gq_nvml_sample(dev_at("0000:00:08.0"), &s, &e), GQ_OK);
    assert_false(s.lost); /* not supported is not lost */
    assert_true(isnan(s.temp_c) && isnan(s.util_pct));
    assert_int_equal(s.remapped_rows, -1);
    gq_nvml_close();
}

/* The process lists: the compute list grows past the first buffer (70 > 64),
 * a process with a graphics context too is listed once, and max caps what
 * is listed but not the total. A driver that cannot list is refused. */
static void test_processes_and_load(void **state)
{
    (void)state;
    gq_nvml_proc p[80];
    int n = -1, total = -1;
    gq_err e = {0};
    assert_int_equal(gq_nvml_processes((gq_nvml_dev)1, p, 80, &n, &total, &e), GQ_E_UNSUPP);
    assert_int_equal(n, 0);
    assert_int_equal(total, 0);
    assert_int_equal(gq_nvml_open(&e), GQ_OK);
    gq_nvml_dev d = dev_at("0000:00:06.0");
    assert_int_equal(gq_nvml_processes(d, p, 80, &n, &total, &e), GQ_OK);
    assert_int_equal(n, 71);
    assert_int_equal(total, 71);
    assert_int_equal(p[0].pid, 1000);
    assert_true(p[0].used_bytes == 1024ull * 1024);
    assert_false(p[0].graphics);
    assert_int_equal(p[69].pid, 1069);
    assert_int_equal(p[70].pid, 2000);
    assert_true(p[70].graphics);
    assert_true(p[70].used_bytes == ~0ull);

    assert_int_equal(gq_nvml_processes(d, p, 64, &n, &total, &e), GQ_OK);
    assert_int_equal(n, 64);
    assert_int_equal(total, 71);
    assert_int_equal(p[63].pid, 1063);

    assert_int_equal(gq_nvml_processes(dev_at("0000:00:09.0"), p, 80, &n, &total, &e), GQ_OK);
    assert_int_equal(n, 0);
    assert_int_equal(total, 0);
    assert_int_equal(gq_nvml_processes(dev_at("0000:00:08.0"), p, 80, &n, &total, &e), GQ_E_UNSUPP);
    assert_string_equal(e.msg, "nvmlDeviceGetComputeRunningProcesses_v3: NVML error 3");

    double util, mib;
    assert_int_equal(gq_nvml_load(d, &util, &mib, &e), GQ_OK);
    assert_near(util, 87, 0);
    assert_near(mib, 1536, 1e-9);
    assert_int_equal(gq_nvml_load(dev_at("0000:00:08.0"), &util, &mib, &e), GQ_OK);
    assert_near(util, -1, 0);
    assert_near(mib, -1, 0);
    gq_nvml_close();
    assert_int_equal(gq_nvml_load(d, &util, &mib, &e), GQ_E_UNSUPP);
}

/* Opens are counted: NVML stays loaded until the last close. A failing
 * nvmlInit is refused with NVML's words; a bus id that is none is refused
 * before NVML is asked. (issue 30) */
static void test_open_count_and_refusals(void **state)
{
    (void)state;
    gq_err e = {0};
    gq_nvml_dev d = NULL;
    setenv("FAKE_NVML_INIT_FAIL", "1", 1);
    assert_int_equal(gq_nvml_open(&e), GQ_E_UNSUPP);
    assert_string_equal(e.msg, "nvmlInit failed: Unknown Error");
    unsetenv("FAKE_NVML_INIT_FAIL");
    assert_int_equal(gq_nvml_device_by_bus_id("0000:00:06.0", &d, &e), GQ_E_UNSUPP);

    assert_int_equal(gq_nvml_open(&e), GQ_OK);
    assert_int_equal(gq_nvml_open(&e), GQ_OK);
    gq_nvml_close();
    assert_int_equal(gq_nvml_device_by_bus_id("0000:00:06.0", &d, &e), GQ_OK); /* one open left */
    assert_int_equal(gq_nvml_device_by_bus_id("06.0", &d, &e), GQ_E_USAGE);
    assert_string_equal(e.msg, "'06.0' is not a PCI bus id (expected e.g. 0000:3b:00.0)");
    assert_null(d);
    gq_nvml_close();
    assert_int_equal(gq_nvml_device_by_bus_id("0000:00:06.0", &d, &e), GQ_E_UNSUPP);
    assert_non_null(strstr(e.msg, "NVML is not loaded"));
}

/* A field value is read as the type NVML says it has: each of the seven
 * gives the memory temperature's 73 C; a type NVML does not have, unknown. */
static void test_field_value_types(void **state)
{
    (void)state;
    gq_err e = {0};
    gq_sample s;
    assert_int_equal(gq_nvml_open(&e), GQ_OK);
    gq_nvml_dev d = dev_at("0000:00:06.0");
    for (int type = 0; type <= 7; type++) {
        char v[8];
        snprintf(v, sizeof v, "%d", type);
        setenv("FAKE_NVML_VTYPE", v, 1);
        assert_int_equal(gq_nvml_sample(d, &s, &e), GQ_OK);
        if (type < 7 ? s.mem_temp_c != 73 : !isnan(s.mem_temp_c))
            fail_msg("value type %d: memory temperature %g", type, s.mem_temp_c);
    }
    unsetenv("FAKE_NVML_VTYPE");
    gq_nvml_close();
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_lookup_needs_open),
                                       cmocka_unit_test(test_identity),
                                       cmocka_unit_test(test_mode_names),
                                       cmocka_unit_test(test_fill_gpu_and_switch_links),
                                       cmocka_unit_test(test_unresolved_links),
                                       cmocka_unit_test(test_unknown_gpu_and_levels),
                                       cmocka_unit_test(test_sample),
                                       cmocka_unit_test(test_processes_and_load),
                                       cmocka_unit_test(test_open_count_and_refusals),
                                       cmocka_unit_test(test_field_value_types)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
