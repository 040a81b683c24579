/* The PCIe tree from hwloc where no other test goes: an XML topology that
 * cannot be read, a device with no bridge above it, an NVIDIA GPU that CUDA
 * does not list, a tree larger than the card keeps (cut, with a warning), an
 * upstream port narrower than the bridge below it, and a GPU without a bus
 * address. Written for issue 30 (lines no test ran). */
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

#include "topo/pcitree.h"
#include "topo/topo.h"

static gq_topo T;
static char dir[256];

static const char *const head =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE topology SYSTEM \"hwloc2.dtd\">\n"
    "<topology version=\"2.0\">\n"
    "  <object type=\"Machine\" os_index=\"0\" cpuset=\"0x00000001\" complete_cpuset=\"0x00000001\" "
    "allowed_cpuset=\"0x00000001\" nodeset=\"0x00000001\" complete_nodeset=\"0x00000001\" "
    "allowed_nodeset=\"0x00000001\" gp_index=\"1\">\n"
    "    <object type=\"Package\" os_index=\"0\" cpuset=\"0x00000001\" complete_cpuset=\"0x00000001\" "
    "nodeset=\"0x00000001\" complete_nodeset=\"0x00000001\" gp_index=\"2\">\n"
    "      <object type=\"NUMANode\" os_index=\"0\" cpuset=\"0x00000001\" complete_cpuset=\"0x00000001\" "
    "nodeset=\"0x00000001\" complete_nodeset=\"0x00000001\" gp_index=\"3\" local_memory=\"1073741824\"/>\n"
    "      <object type=\"Core\" os_index=\"0\" cpuset=\"0x00000001\" complete_cpuset=\"0x00000001\" "
    "nodeset=\"0x00000001\" complete_nodeset=\"0x00000001\" gp_index=\"4\">\n"
    "        <object type=\"PU\" os_index=\"0\" cpuset=\"0x00000001\" complete_cpuset=\"0x00000001\" "
    "nodeset=\"0x00000001\" complete_nodeset=\"0x00000001\" gp_index=\"5\"/>\n"
    "      </object>\n";
static const char *const tail = "    </object>\n  </object>\n</topology>\n";

/* Writes an XML topology with `body` inside the package; its path in path. */
static void write_xml(char *path, size_t n, const char *name, const char *body)
{
    snprintf(path, n, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "%s%s%s", head, body, tail);
    fclose(f);
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "%s/gq-pcitree-XXXXXX", P_tmpdir);
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) ? -1 : 0;
}

static void load(const char *path, hwloc_topology_t *topo)
{
    gq_err e = {0};
    if (gq_hwloc_load(topo, path, &e))
        fail_msg("%s", e.msg);
}

static void unreadable_xml(void **state)
{
    (void)state;
    hwloc_topology_t topo = (hwloc_topology_t)1;
    gq_err e = {0};
    char path[400];
    snprintf(path, sizeof path, "%s/no-such.xml", dir);
    assert_int_equal(gq_hwloc_load(&topo, path, &e), GQ_E_IO);
    assert_null(topo);
    char want[500];
    snprintf(want, sizeof want, "hwloc: cannot read XML topology '%s'", path);
    assert_string_equal(e.msg, want);
}

/* An NVIDIA display controller straight below the package (no bridge seen),
 * with no CUDA GPU at its address: a root of the tree, named as a GPU that
 * CUDA does not list; a NIC beside it keeps its class name. */
static void root_device_not_visible(void **state)
{
    (void)state;
    char path[400];
    write_xml(path, sizeof path, "root.xml",
              "      <object type=\"PCIDev\" gp_index=\"20\" pci_busid=\"0000:41:00.0\" "
              "pci_type=\"0302 [10de:2335] [10de:18be] a1\" pci_link_speed=\"63.015385\"/>\n"
              "      <object type=\"PCIDev\" gp_index=\"21\" pci_busid=\"0000:42:00.0\" "
              "pci_type=\"0200 [15b3:1021] [15b3:0023] 00\" pci_link_speed=\"31.507692\"/>\n");
    hwloc_topology_t topo;
    load(path, &topo);
    gq_topo_init(&T);
    T.ngpu = 1;
    snprintf(T.gpu[0].pci_bus_id, sizeof T.gpu[0].pci_bus_id, "0000:81:00.0");
    gq_pcitree_fill(&T, topo);
    hwloc_topology_destroy(topo);
    assert_int_equal(T.npci, 2);
    assert_int_equal(T.pci[0].parent, -1);
    assert_int_equal(T.pci[0].kind, GQ_PCI_OTHER);
    assert_string_equal(T.pci[0].bus_id, "0000:41:00.0");
    assert_string_equal(T.pci[0].label, "NVIDIA GPU 2335 (not visible to CUDA)");
    assert_int_equal(T.pci[1].parent, -1);
    assert_string_equal(T.pci[1].bus_id, "0000:42:00.0");
    if (!strstr(T.pci[1].label, "15b3:1021") || strstr(T.pci[1].label, "not visible"))
        fail_msg("the NIC is labelled '%s'", T.pci[1].label);
    /* GPU 0 is not in the tree: said once */
    assert_int_equal(T.nwarnings, 1);
    assert_non_null(strstr(T.warnings[0], "GPU 0 (0000:81:00.0) is not in hwloc's PCIe tree"));
}

/* More PCI devices than the tree keeps: the first GQ_MAX_PCI_NODES, and a warning. */
static void tree_cut(void **state)
{
    (void)state;
    size_t cap = 400 * 160, used = 0;
    char *body = malloc(cap);
    assert_non_null(body);
    used += (size_t)snprintf(body + used, cap - used,
                             "      <object type=\"Bridge\" gp_index=\"20\" bridge_type=\"0-1\" depth=\"0\" "
                             "bridge_pci=\"0000:[00-0f]\">\n");
    for (int i = 0; i < GQ_MAX_PCI_NODES + 40; i++)
        used += (size_t)snprintf(
            body + used, cap - used,
            "        <object type=\"PCIDev\" gp_index=\"%d\" pci_busid=\"0000:%02x:%02x.%x\" "
            "pci_type=\"0200 [15b3:1021] [15b3:0023] 00\"/>\n",
            100 + i, 1 + i / 256, i / 8 % 32, i % 8);
    snprintf(body + used, cap - used, "      </object>\n");
    char path[400];
    write_xml(path, sizeof path, "big.xml", body);
    free(body);
    hwloc_topology_t topo;
    load(path, &topo);
    gq_topo_init(&T);
    gq_pcitree_fill(&T, topo);
    hwloc_topology_destroy(topo);
    assert_int_equal(T.npci, GQ_MAX_PCI_NODES);
    assert_int_equal(T.pci[0].kind, GQ_PCI_HOSTBRIDGE);
    assert_string_equal(T.pci[GQ_MAX_PCI_NODES - 1].bus_id, "0000:01:1f.6");
    assert_int_equal(T.nwarnings, 1);
    char want[100];
    snprintf(want, sizeof want, "the PCIe tree has more than %d nodes; the rest is not shown",
             GQ_MAX_PCI_NODES);
    assert_string_equal(T.warnings[0], want);
}

static void put(const char *bus, const char *file, const char *text)
{
    char path[512];
    static const char *const parts[] = {"/sys", "/sys/bus", "/sys/bus/pci", "/sys/bus/pci/devices"};
    for (int i = 0; i < 4; i++) {
        snprintf(path, sizeof path, "%s%s", dir, parts[i]);
        mkdir(path, 0700);
    }
    snprintf(path, sizeof path, "%s/sys/bus/pci/devices/%s", dir, bus);
    mkdir(path, 0700);
    snprintf(path, sizeof path, "%s/sys/bus/pci/devices/%s/%s", dir, bus, file);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "%s\n", text);
    fclose(f);
}

static int node(gq_pci_kind kind, int parent, const char *bus)
{
    gq_pci_node *n = &T.pci[T.npci];
    memset(n, 0, sizeof *n);
    n->kind = kind;
    n->parent = parent;
    n->gpu = -1;
    snprintf(n->bus_id, sizeof n->bus_id, "%s", bus);
    return T.npci++;
}

/* host bridge -> root port (Gen5 x8 at most) -> switch upstream port (Gen4
 * x16 at most): the uplink can do no more than x8, nor more than Gen4. */
static void uplink_narrow_root_port(void **state)
{
    (void)state;
    gq_topo_init(&T);
    int hb = node(GQ_PCI_HOSTBRIDGE, -1, "0000:00");
    node(GQ_PCI_BRIDGE, hb, "0000:00:03.0");
    int usp = node(GQ_PCI_BRIDGE, 1, "0000:05:00.0");
    put("0000:00:03.0", "max_link_speed", "32.0 GT/s PCIe");
    put("0000:00:03.0", "max_link_width", "8");
    put("0000:05:00.0", "current_link_speed", "16.0 GT/s PCIe");
    put("0000:05:00.0", "current_link_width", "8");
    put("0000:05:00.0", "max_link_speed", "16.0 GT/s PCIe");
    put("0000:05:00.0", "max_link_width", "16");
    gq_pcitree_bridge_links(&T, dir);
    assert_int_equal(T.pci[usp].link_gen, 4);
    assert_int_equal(T.pci[usp].link_width, 8);
    assert_int_equal(T.pci[usp].link_gen_max, 4);
    assert_int_equal(T.pci[usp].link_width_max, 8);
}

/* A GPU without a bus address reads no sysfs file (not those of the
 * devices directory itself); the one after it still does. */
static void gpu_without_bus_id(void **state)
{
    (void)state;
    gq_topo_init(&T);
    T.ngpu = 2;
    T.gpu[0].numa_node = -1;
    T.gpu[1].numa_node = -1;
    snprintf(T.gpu[1].pci_bus_id, sizeof T.gpu[1].pci_bus_id, "0000:0b:00.0");
    put("0000:0b:00.0", "numa_node", "1");
    /* files where an empty bus address would look */
    char path[400];
    snprintf(path, sizeof path, "%s/sys/bus/pci/devices/numa_node", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("3\n", f);
    fclose(f);
    gq_pcitree_sysfs(&T, dir);
    assert_int_equal(T.gpu[0].numa_node, -1);
    assert_int_equal(T.gpu[1].numa_node, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(unreadable_xml),     cmocka_unit_test(root_device_not_visible),
        cmocka_unit_test(tree_cut),           cmocka_unit_test(uplink_narrow_root_port),
        cmocka_unit_test(gpu_without_bus_id),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
