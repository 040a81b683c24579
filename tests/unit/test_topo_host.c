/* VM detection from the platform's facts (DMI, CPUID, cpuinfo, /sys/hypervisor,
 * the kernel command line), and the host fields of this machine: each
 * checked against what the machine's files, sysconf and hwloc say, whatever
 * they say (a VM or not, DMI or none). */
#include <glob.h>
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
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "topo/host.h"

typedef struct vm_case {
    const char *what;
    bool flag;
    const char *cpuid, *vendor, *product, *hyp, *cmdline;
    bool vm;
    const char *name;
} vm_case;

static const vm_case cases[] = {
    {.what = "bare metal", .vendor = "Supermicro", .product = "SYS-821GE-TNHR", .vm = false, .name = ""},
    {.what = "Amazon metal instance",
     .vendor = "Amazon EC2",
     .product = "p5.48xlarge",
     .vm = false,
     .name = ""},
    {.what = "Amazon Nitro VM",
     .flag = true,
     .cpuid = "KVMKVMKVM",
     .vendor = "Amazon EC2",
     .product = "p4d.24xlarge",
     .vm = true,
     .name = "kvm"},
    {.what = "Firecracker (no DMI)",
     .flag = true,
     .cpuid = "KVMKVMKVM",
     .cmdline = "console=ttyS0 reboot=k panic=1 -- --firecracker-init --addr 0.0.0.0:2024",
     .vm = true,
     .name = "firecracker"},
    {.what = "QEMU/KVM",
     .flag = true,
     .cpuid = "KVMKVMKVM",
     .vendor = "QEMU",
     .product = "Standard PC (Q35 + ICH9, 2009)",
     .vm = true,
     .name = "kvm"},
    {.what = "KVM without DMI", .flag = true, .cpuid = "KVMKVMKVM", .vm = true, .name = "kvm"},
    {.what = "VMware",
     .flag = true,
     .cpuid = "VMwareVMware",
     .vendor = "VMware, Inc.",
     .product = "VMware Virtual Platform",
     .vm = true,
     .name = "vmware"},
    {.what = "Hyper-V",
     .flag = true,
     .cpuid = "Microsoft Hv",
     .vendor = "Microsoft Corporation",
     .product = "Virtual Machine",
     .vm = true,
     .name = "hyper-v"},
    {.what = "Xen PV (no CPUID flag)", .hyp = "xen", .vm = true, .name = "xen"},
    {.what = "Xen HVM",
     .flag = true,
     .cpuid = "XenVMMXenVMM",
     .vendor = "Xen",
     .product = "HVM domU",
     .vm = true,
     .name = "xen"},
    {.what = "Xen HVM guest known by its DMI product alone (no flag, no signature, no /sys/hypervisor)",
     .vendor = "Example Cloud",
     .product = "HVM domU",
     .vm = true,
     .name = "xen"},
    {.what = "arm64 guest: no cpuinfo flag, DMI says KVM",
     .vendor = "QEMU",
     .product = "KVM Virtual Machine",
     .vm = true,
     .name = "kvm"},
    {.what = "unknown hypervisor", .flag = true, .vm = true, .name = ""},
};

static void fill(gq_vm_facts *f, const vm_case *c)
{
    memset(f, 0, sizeof *f);
    f->cpuinfo_hypervisor = c->flag;
    snprintf(f->cpuid_vendor, sizeof f->cpuid_vendor, "%s", c->cpuid ? c->cpuid : "");
    snprintf(f->dmi_vendor, sizeof f->dmi_vendor, "%s", c->vendor ? c->vendor : "");
    snprintf(f->dmi_product, sizeof f->dmi_product, "%s", c->product ? c->product : "");
    snprintf(f->hyp_type, sizeof f->hyp_type, "%s", c->hyp ? c->hyp : "");
    snprintf(f->cmdline, sizeof f->cmdline, "%s", c->cmdline ? c->cmdline : "");
}

static void test_classify(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gq_vm_facts f;
        char name[32] = "junk";
        fill(&f, &cases[i]);
        bool vm = gq_host_classify_vm(&f, name, sizeof name);
        if (vm != cases[i].vm || strcmp(name, cases[i].name) != 0)
            fail_msg("%s: got vm=%d '%s', want vm=%d '%s'", cases[i].what, vm, name, cases[i].vm,
                     cases[i].name);
    }
}

/* The first line of a file, trailing spaces cut (as DMI pads them); ""
 * when the file cannot be read. */
static const char *first_line(const char *path, char *buf, size_t n)
{
    buf[0] = 0;
    FILE *f = fopen(path, "r");
    if (f) {
        if (!fgets(buf, (int)n, f))
            buf[0] = 0;
        fclose(f);
    }
    buf[strcspn(buf, "\n")] = 0;
    for (size_t l = strlen(buf); l > 0 && buf[l - 1] == ' ';)
        buf[--l] = 0;
    return buf;
}

/* A fact file's first line loses its newline and DMI's padding: a line of
 * spaces alone reads "", so /sys/hypervisor/type holding only spaces does
 * not make a VM. */
static void test_read_line(void **state)
{
    (void)state;
    char path[] = "/tmp/gq-hostline-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    static const struct {
        const char *text, *want;
        bool ok;
    } c[] = {
        {"   \n", "", true},
        {" ", "", true},
        {"Xen   \nsecond\n", "Xen", true},
        {"HVM domU  ", "HVM domU", true},
        {" a b \n", " a b", true},
        {"", "", false},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fputs(c[i].text, f);
        fclose(f);
        gq_vm_facts v;
        memset(&v, 0, sizeof v);
        bool ok = gq_host_read_line(path, v.hyp_type, sizeof v.hyp_type);
        if (ok != c[i].ok || (ok && strcmp(v.hyp_type, c[i].want)))
            fail_msg("'%s': got %d '%s', want %d '%s'", c[i].text, ok, v.hyp_type, c[i].ok, c[i].want);
        char name[32];
        if (ok && !c[i].want[0])
            assert_false(gq_host_classify_vm(&v, name, sizeof name));
    }
    unlink(path);
    char buf[8] = "junk";
    assert_false(gq_host_read_line("/nonexistent/gq/hyp", buf, sizeof buf));
}

/* The facts are what the files say on this machine, present or not. */
static void test_this_host_facts(void **state)
{
    (void)state;
    gq_vm_facts f;
    char want[1024];
    gq_host_vm_facts(&f);
    assert_string_equal(f.dmi_vendor, first_line("/sys/class/dmi/id/sys_vendor", want, sizeof f.dmi_vendor));
    assert_string_equal(f.dmi_product,
                        first_line("/sys/class/dmi/id/product_name", want, sizeof f.dmi_product));
    assert_string_equal(f.hyp_type, first_line("/sys/hypervisor/type", want, sizeof f.hyp_type));
    assert_string_equal(f.cmdline, first_line("/proc/cmdline", want, sizeof f.cmdline));
    /* a hypervisor is present when the first "flags" line of /proc/cpuinfo
     * has the word, or (x86) CPUID.1:ECX[31] is set */
    FILE *ci = fopen("/proc/cpuinfo", "r");
    bool present = false;
    char line[8192];
    while (ci && fgets(line, sizeof line, ci))
        if (!strncmp(line, "flags", 5)) {
            line[strcspn(line, "\n")] = ' ';
            present = strstr(line, " hypervisor ") != NULL;
            break;
        }
    if (ci)
        fclose(ci);
#if defined(__x86_64__) || defined(__i386__)
    unsigned a, b, c, d;
    if (__get_cpuid(1, &a, &b, &c, &d) && (c & (1u << 31)))
        present = true;
#endif
    assert_int_equal(f.cpuinfo_hypervisor, present);
}

static void test_this_host(void **state)
{
    (void)state;
    static gq_topo t;
    gq_topo_init(&t);
    gq_host_fill(&t, NULL);
    /* Whatever the machine, these are always knowable. */
    assert_true(t.hostname[0] != 0);
    assert_true(t.numa_nodes >= 1);
    assert_true(t.cpus >= 1);
    /* without hwloc: the online CPUs and the NUMA nodes sysfs lists (or
     * the one node gq_topo_init assumes when sysfs has none) */
    assert_int_equal(t.cpus, sysconf(_SC_NPROCESSORS_ONLN));
    glob_t g;
    int nodes = glob("/sys/devices/system/node/node[0-9]*", 0, NULL, &g) == 0 ? (int)g.gl_pathc : 0;
    if (nodes)
        globfree(&g);
    assert_int_equal(t.numa_nodes, nodes > 0 ? nodes : 1);
    /* VM or not, and which, is the classification of this machine's facts */
    gq_vm_facts f;
    char name[32];
    gq_host_vm_facts(&f);
    bool vm = gq_host_classify_vm(&f, name, sizeof name);
    assert_int_equal(t.is_vm, vm);
    assert_string_equal(t.hypervisor, name);
    if (!t.is_vm)
        assert_string_equal(t.hypervisor, "");
    /* with hwloc: its counts */
    hwloc_topology_t topo;
    assert_int_equal(hwloc_topology_init(&topo), 0);
    assert_int_equal(hwloc_topology_load(topo), 0);
    static gq_topo h;
    gq_topo_init(&h);
    gq_host_fill(&h, topo);
    int pus = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
    int pkgs = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE);
    int cores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
    int numa = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
    hwloc_topology_destroy(topo);
    assert_true(pus >= 1 && numa >= 1);
    assert_int_equal(h.cpus, pus);
    assert_int_equal(h.sockets, pkgs > 0 ? pkgs : -1);
    assert_int_equal(h.cores, cores > 0 ? cores : -1);
    assert_int_equal(h.numa_nodes, numa);
    assert_string_equal(h.hostname, t.hostname);
    assert_int_equal(h.is_vm, t.is_vm);
}

/* /proc/cpuinfo's text: the first model name, and the hypervisor flag of the
 * first "flags" line only (a CPU listed later does not change it), on x86's
 * and arm64's spellings; no flags line, or no file, is no flag. */
static void test_cpuinfo_text(void **state)
{
    (void)state;
    static const struct {
        const char *text, *model;
        bool hyp;
    } c[] = {
        {"processor\t: 0\nmodel name\t: Intel(R) Xeon(R) Gold 6338\nflags\t\t: fpu vme hypervisor lahf_lm\n\n"
         "processor\t: 1\nmodel name\t: Other CPU\nflags\t\t: fpu vme lahf_lm\n",
         "Intel(R) Xeon(R) Gold 6338", true},
        {"processor\t: 0\nmodel name\t: AMD EPYC 9654\nflags\t\t: fpu vme lahf_lm\n\n"
         "processor\t: 1\nmodel name\t: AMD EPYC 9654\nflags\t\t: fpu hypervisor\n",
         "AMD EPYC 9654", false},
        {"flags\t\t: fpu hypervisors xhypervisor\nmodel name\t: Late Model\n", "Late Model", false},
        {"flags\t\t: hypervisor\n", "", true},
        {"processor\t: 0\nModel Name\t: Neoverse-V2\nFeatures\t: fp asimd\n", "Neoverse-V2", false},
        {"cpu model\t: R5000\n", "R5000", false},
        {"", "", false},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        char buf[1024];
        snprintf(buf, sizeof buf, "%s", c[i].text);
        FILE *f = fmemopen(buf, strlen(buf) + 1, "r");
        assert_non_null(f);
        char model[64] = "";
        bool hyp = !c[i].hyp;
        gq_host_cpuinfo_scan(f, model, sizeof model, &hyp);
        fclose(f);
        if (strcmp(model, c[i].model) || hyp != c[i].hyp)
            fail_msg("case %zu: model '%s', hypervisor %d; want '%s', %d", i, model, hyp, c[i].model,
                     c[i].hyp);
    }
    bool hyp = true;
    gq_host_cpuinfo_scan(NULL, NULL, 0, &hyp);
    assert_false(hyp);
}

/* The NUMA nodes of a sysfs node directory, from a fixture: node0, node1
 * and node7 count; has_cpu, possible, online, nodeX and node1a (sysfs's
 * own files and names that only begin like a node) do not; an empty
 * directory has none and a missing one is -1. */
static void test_count_nodes(void **state)
{
    (void)state;
    char dir[64] = "/tmp/gq-nodes-XXXXXX", p[128];
    assert_non_null(mkdtemp(dir));
    assert_int_equal(gq_host_count_nodes(dir), 0);
    /* without hwloc, a node directory that lists no node (an empty mount in
     * a container) leaves the one node gq_topo_init assumes, never 0 */
    static gq_topo t;
    gq_topo_init(&t);
    gq_host_fill_at(&t, NULL, dir);
    assert_int_equal(t.numa_nodes, 1);
    const char *dirs[] = {"node0", "node1", "node7", "nodeX", "node1a", "power"};
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, dirs[i]);
        assert_int_equal(mkdir(p, 0700), 0);
        if (i == 0)
            assert_int_equal(gq_host_count_nodes(dir), 1);
    }
    const char *files[] = {"has_cpu", "possible", "online"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, files[i]);
        FILE *f = fopen(p, "w");
        assert_non_null(f);
        fputs("0-7\n", f);
        fclose(f);
    }
    assert_int_equal(gq_host_count_nodes(dir), 3);
    gq_topo_init(&t);
    gq_host_fill_at(&t, NULL, dir);
    assert_int_equal(t.numa_nodes, 3);
    snprintf(p, sizeof p, "rm -rf '%s'", dir);
    assert_int_equal(system(p), 0);
    assert_int_equal(gq_host_count_nodes(dir), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_classify),        cmocka_unit_test(test_read_line),
        cmocka_unit_test(test_this_host_facts), cmocka_unit_test(test_this_host),
        cmocka_unit_test(test_cpuinfo_text),    cmocka_unit_test(test_count_nodes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
