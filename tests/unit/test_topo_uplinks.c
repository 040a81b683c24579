/* Discovery of the links above the GPUs from sysfs (a fake tree in a
 * temporary directory): a switch's upstream port reports its uplink, whose
 * maximum is also capped by the port above it; root ports, downstream ports
 * (whose registers describe the link below them) and the GPUs themselves
 * keep 0. A GPU's own sysfs files (NUMA node, local CPUs, link, x32
 * included), read by discovery. And the PCIe tree from hwloc (an XML topology in tests/data/hwloc):
 * each node's NUMA node is that of its socket, or unknown when hwloc attaches
 * it to the whole machine. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "topo/discover.h"
#include "topo/pcitree.h"
#include "topo/topo.h"

static gq_topo T;
static char root[256];

static int node(gq_pci_kind kind, int parent, int gpu, const char *bus)
{
    gq_pci_node *n = &T.pci[T.npci];
    memset(n, 0, sizeof *n);
    n->kind = kind;
    n->parent = parent;
    n->gpu = gpu;
    n->numa_node = 0;
    snprintf(n->bus_id, sizeof n->bus_id, "%s", bus);
    return T.npci++;
}

static void put(const char *bus, const char *file, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/sys", root);
    mkdir(path, 0700);
    snprintf(path, sizeof path, "%s/sys/bus", root);
    mkdir(path, 0700);
    snprintf(path, sizeof path, "%s/sys/bus/pci", root);
    mkdir(path, 0700);
    snprintf(path, sizeof path, "%s/sys/bus/pci/devices", root);
    mkdir(path, 0700);
    snprintf(path, sizeof path, "%s/sys/bus/pci/devices/%s", root, bus);
    mkdir(path, 0700);
    snprintf(path, sizeof path, "%s/sys/bus/pci/devices/%s/%s", root, bus, file);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "%s\n", text);
    fclose(f);
}

static void link_files(const char *bus, const char *cur, const char *curw, const char *max, const char *maxw)
{
    put(bus, "current_link_speed", cur);
    put(bus, "current_link_width", curw);
    put(bus, "max_link_speed", max);
    put(bus, "max_link_width", maxw);
}

/* host bridge -> root port -> switch upstream port -> downstream port -> GPU 0
 * host bridge -> root port -> GPU 1 */
static void uplink_from_upstream_port(void **state)
{
    (void)state;
    snprintf(root, sizeof root, "%s/gq-uplinks-XXXXXX", P_tmpdir);
    assert_non_null(mkdtemp(root));
    gq_topo_init(&T);
    T.ngpu = 2;
    int hb = node(GQ_PCI_HOSTBRIDGE, -1, -1, "0000:00");
    int rp = node(GQ_PCI_BRIDGE, hb, -1, "0000:00:01.0");
    int usp = node(GQ_PCI_BRIDGE, rp, -1, "0000:01:00.0");
    int dsp = node(GQ_PCI_BRIDGE, usp, -1, "0000:02:00.0");
    int gpu0 = node(GQ_PCI_GPU, dsp, 0, "0000:03:00.0");
    int rp2 = node(GQ_PCI_BRIDGE, hb, -1, "0000:00:02.0");
    node(GQ_PCI_GPU, rp2, 1, "0000:04:00.0");
    /* the uplink trained at Gen4 x8; the switch can do Gen5 x16, the root port Gen4 x16 */
    link_files("0000:00:01.0", "16.0 GT/s PCIe", "8", "16.0 GT/s PCIe", "16");
    link_files("0000:01:00.0", "16.0 GT/s PCIe", "8", "32.0 GT/s PCIe", "16");
    link_files("0000:02:00.0", "32.0 GT/s PCIe", "16", "32.0 GT/s PCIe", "16");
    link_files("0000:00:02.0", "2.5 GT/s PCIe", "16", "32.0 GT/s PCIe", "16");
    /* GPU 0's own registers, under three bridges as an upstream port is: only
     * a bridge's are an uplink */
    link_files("0000:03:00.0", "32.0 GT/s PCIe", "16", "32.0 GT/s PCIe", "16");
    gq_pcitree_bridge_links(&T, root);
    assert_int_equal(T.pci[usp].link_gen, 4);
    assert_int_equal(T.pci[usp].link_width, 8);
    assert_int_equal(T.pci[usp].link_gen_max, 4); /* the root port above can do no more than Gen4 */
    assert_int_equal(T.pci[usp].link_width_max, 16);
    /* root ports and downstream ports: their registers describe the link below them */
    assert_int_equal(T.pci[rp].link_width, 0);
    assert_int_equal(T.pci[dsp].link_width, 0);
    assert_int_equal(T.pci[rp2].link_width, 0);
    assert_int_equal(T.pci[gpu0].link_gen, 0);
    assert_int_equal(T.pci[gpu0].link_width, 0);
    assert_int_equal(T.pci[gpu0].link_gen_max, 0);
    assert_int_equal(T.pci[gpu0].link_width_max, 0);
    /* unreadable files leave the link unknown */
    T.pci[usp].link_width = -5;
    snprintf(T.pci[usp].bus_id, sizeof T.pci[usp].bus_id, "0000:09:00.0");
    gq_pcitree_bridge_links(&T, root);
    assert_int_equal(T.pci[usp].link_width, 0);
    assert_int_equal(T.pci[usp].link_width_max, 0);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    assert_int_equal(system(cmd), 0);
}

static void rm_root(void)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    assert_int_equal(system(cmd), 0);
}

/* A GPU's own sysfs files: its NUMA node, local CPUs and PCIe link, an x32
 * link included (the widest PCIe defines); -1 (the platform does not say), a
 * width past x32 and an unknown speed leave them unknown, and so do files
 * that are not there. */
static void gpu_sysfs(void **state)
{
    (void)state;
    snprintf(root, sizeof root, "%s/gq-gpusysfs-XXXXXX", P_tmpdir);
    assert_non_null(mkdtemp(root));
    gq_topo_init(&T);
    T.ngpu = 3;
    const char *bus[3] = {"0000:c1:00.0", "0000:c2:00.0", "0000:c3:00.0"};
    for (int i = 0; i < 3; i++)
        snprintf(T.gpu[i].pci_bus_id, sizeof T.gpu[i].pci_bus_id, "%s", bus[i]);
    put(bus[0], "numa_node", "1");
    put(bus[0], "local_cpulist", "8-15");
    link_files(bus[0], "16.0 GT/s PCIe", "32", "32.0 GT/s PCIe", "32");
    put(bus[1], "numa_node", "-1");
    link_files(bus[1], "Unknown", "33", "2.5 GT/s PCIe", "0");
    gq_pcitree_sysfs(&T, root);
    assert_int_equal(T.gpu[0].numa_node, 1);
    assert_string_equal(T.gpu[0].cpulist, "8-15");
    assert_int_equal(T.gpu[0].pcie_gen_cur, 4);
    assert_int_equal(T.gpu[0].pcie_width_cur, 32);
    assert_int_equal(T.gpu[0].pcie_gen_max, 5);
    assert_int_equal(T.gpu[0].pcie_width_max, 32);
    assert_int_equal(T.gpu[1].numa_node, -1);
    assert_int_equal(T.gpu[1].pcie_gen_cur, -1);
    assert_int_equal(T.gpu[1].pcie_width_cur, -1);
    assert_int_equal(T.gpu[1].pcie_gen_max, 1);
    assert_int_equal(T.gpu[1].pcie_width_max, -1);
    assert_int_equal(T.gpu[2].numa_node, -1);
    assert_string_equal(T.gpu[2].cpulist, "");
    assert_int_equal(T.gpu[2].pcie_width_cur, -1);
    rm_root();
}

/* Discovery reads the GPUs' sysfs files (here under a fake root, for a GPU
 * at a bus address no machine has, so that hwloc and NVML know nothing of
 * it): without them the NUMA node, the local CPUs and the PCIe link would
 * read unknown. */
static void discover_reads_sysfs(void **state)
{
    (void)state;
    /* Discovery loads this machine's hwloc topology too. hwloc's PCI component (libpciaccess) keeps
     * allocations past its plugin's unloading, which LeakSanitizer reports as leaks of an unknown
     * module in CI's ASan build; this test reads sysfs only, so that component stays off. */
    setenv("HWLOC_COMPONENTS", "-pci", 1);
    snprintf(root, sizeof root, "%s/gq-discover-XXXXXX", P_tmpdir);
    assert_non_null(mkdtemp(root));
    static gq_topo t;
    gq_topo_init(&t);
    t.ngpu = 1;
    snprintf(t.gpu[0].pci_bus_id, sizeof t.gpu[0].pci_bus_id, "FFFE:FE:1F.7");
    put("fffe:fe:1f.7", "numa_node", "0");
    put("fffe:fe:1f.7", "local_cpulist", "0");
    link_files("fffe:fe:1f.7", "16.0 GT/s PCIe", "16", "16.0 GT/s PCIe", "16");
    gq_topo_discover_at(&t, root);
    assert_string_equal(t.gpu[0].pci_bus_id, "fffe:fe:1f.7");
    assert_int_equal(t.gpu[0].numa_node, 0);
    assert_string_equal(t.gpu[0].cpulist, "0");
    assert_int_equal(t.gpu[0].pcie_gen_cur, 4);
    assert_int_equal(t.gpu[0].pcie_width_cur, 16);
    assert_int_equal(t.gpu[0].pcie_width_max, 16);
    assert_true(t.gpu[0].pcie_gbps > 0);
    rm_root();
}

static int pci_at(const char *bus)
{
    for (int n = 0; n < T.npci; n++)
        if (!strcmp(T.pci[n].bus_id, bus))
            return n;
    fail_msg("no PCIe node %s", bus);
    return -1;
}

/* Two sockets: GPU 0 under socket 1, a NIC under socket 0, GPU 1 attached to
 * the whole machine. */
static void numa_from_hwloc(void **state)
{
    (void)state;
    hwloc_topology_t topo;
    gq_err e = {0};
    if (gq_hwloc_load(&topo, GQ_TEST_DATA "/data/hwloc/two-sockets.xml", &e))
        fail_msg("%s", e.msg);
    gq_topo_init(&T);
    T.ngpu = 2;
    snprintf(T.gpu[0].pci_bus_id, sizeof T.gpu[0].pci_bus_id, "0000:81:00.0");
    snprintf(T.gpu[1].pci_bus_id, sizeof T.gpu[1].pci_bus_id, "0000:c1:00.0");
    gq_pcitree_fill(&T, topo);
    hwloc_topology_destroy(topo);
    assert_int_equal(T.npci, 9);
    int g0 = pci_at("0000:81:00.0"), g1 = pci_at("0000:c1:00.0"), nic = pci_at("0000:01:00.0");
    assert_int_equal(T.pci[g0].kind, GQ_PCI_GPU);
    assert_int_equal(T.pci[g0].gpu, 0);
    assert_int_equal(T.pci[g0].numa_node, 1);
    assert_int_equal(T.pci[pci_at("0000:80:01.0")].numa_node, 1);
    assert_int_equal(T.gpu[0].numa_node, 1);
    assert_string_equal(T.gpu[0].cpulist, "2-3");
    assert_int_equal(T.pci[nic].kind, GQ_PCI_OTHER);
    assert_int_equal(T.pci[nic].numa_node, 0);
    assert_int_equal(T.pci[g1].kind, GQ_PCI_GPU);
    assert_int_equal(T.pci[g1].numa_node, -1); /* the whole machine: no locality */
    assert_int_equal(T.gpu[1].numa_node, -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(uplink_from_upstream_port),
                                       cmocka_unit_test(gpu_sysfs), cmocka_unit_test(discover_reads_sysfs),
                                       cmocka_unit_test(numa_from_hwloc)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
