#include "topo/host.h"

#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

bool gq_host_read_line(const char *path, char *buf, size_t n)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    bool ok = fgets(buf, (int)n, f) != NULL;
    fclose(f);
    if (!ok)
        return false;
    buf[strcspn(buf, "\n")] = 0;
    /* DMI strings come padded with spaces. */
    size_t l = strlen(buf);
    while (l > 0 && buf[l - 1] == ' ')
        buf[--l] = 0;
    return true;
}

static bool has_word(const char *list, const char *word)
{
    size_t lw = strlen(word);
    for (const char *p = list; (p = strstr(p, word)) != NULL; p += lw) {
        bool start = p == list || p[-1] == ' ' || p[-1] == '\t';
        bool end = p[lw] == 0 || p[lw] == ' ' || p[lw] == '\n';
        if (start && end)
            return true;
    }
    return false;
}

void gq_host_cpuinfo_scan(FILE *f, char *model, size_t n, bool *hyp)
{
    char line[4096];
    *hyp = false;
    if (!f)
        return;
    bool have_model = false, have_flags = false;
    while (fgets(line, sizeof line, f) && !(have_model && have_flags)) {
        char *colon = strchr(line, ':');
        if (!colon)
            continue;
        char *v = colon + 1;
        while (*v == ' ' || *v == '\t')
            v++;
        v[strcspn(v, "\n")] = 0;
        if (!have_model && (!strncmp(line, "model name", 10) || !strncmp(line, "Model Name", 10) ||
                            !strncmp(line, "cpu model", 9))) {
            snprintf(model, n, "%s", v);
            have_model = true;
        } else if (!have_flags && !strncmp(line, "flags", 5)) {
            *hyp = has_word(v, "hypervisor");
            have_flags = true;
        }
    }
}

/* /proc/cpuinfo: the model name and whether "hypervisor" is among the flags. */
static void scan_cpuinfo(char *model, size_t n, bool *hyp)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    gq_host_cpuinfo_scan(f, model, n, hyp);
    if (f)
        fclose(f);
}

void gq_host_vm_facts(gq_vm_facts *f)
{
    char model[8];
    memset(f, 0, sizeof *f);
    scan_cpuinfo(model, sizeof model, &f->cpuinfo_hypervisor);
#if defined(__x86_64__) || defined(__i386__)
    unsigned a, b, c, d;
    /* Leaf 0x40000000 is only meaningful when CPUID.1:ECX[31] says a
     * hypervisor is present; on bare metal it echoes other leaves. */
    if (__get_cpuid(1, &a, &b, &c, &d) && (c & (1u << 31))) {
        __cpuid(0x40000000, a, b, c, d);
        memcpy(f->cpuid_vendor + 0, &b, 4);
        memcpy(f->cpuid_vendor + 4, &c, 4);
        memcpy(f->cpuid_vendor + 8, &d, 4);
        f->cpuid_vendor[12] = 0;
        f->cpuinfo_hypervisor = true;
    }
#endif
    gq_host_read_line("/sys/class/dmi/id/sys_vendor", f->dmi_vendor, sizeof f->dmi_vendor);
    gq_host_read_line("/sys/class/dmi/id/product_name", f->dmi_product, sizeof f->dmi_product);
    gq_host_read_line("/sys/hypervisor/type", f->hyp_type, sizeof f->hyp_type);
    gq_host_read_line("/proc/cmdline", f->cmdline, sizeof f->cmdline);
}

static bool contains(const char *hay, const char *needle)
{
    return hay && *hay && strcasestr(hay, needle) != NULL;
}

bool gq_host_classify_vm(const gq_vm_facts *f, char *name, size_t n)
{
    static const struct {
        const char *vendor;  /* substring of DMI sys_vendor, or NULL */
        const char *product; /* substring of DMI product_name, or NULL */
        const char *name;
        bool proves_vm; /* only virtual machines carry this DMI string */
    } dmi[] = {
        {.vendor = "VMware", .name = "vmware", .proves_vm = true},
        {.product = "VMware", .name = "vmware", .proves_vm = true},
        {.vendor = "Microsoft Corporation",
         .product = "Virtual Machine",
         .name = "hyper-v",
         .proves_vm = true},
        {.vendor = "Xen", .name = "xen", .proves_vm = true},
        {.product = "HVM domU", .name = "xen", .proves_vm = true},
        {.vendor = "innotek", .name = "virtualbox", .proves_vm = true},
        {.product = "VirtualBox", .name = "virtualbox", .proves_vm = true},
        {.vendor = "Parallels", .name = "parallels", .proves_vm = true},
        {.product = "KVM", .name = "kvm", .proves_vm = true},
        {.vendor = "QEMU", .name = "kvm", .proves_vm = true},
        {.vendor = "OpenStack", .name = "kvm", .proves_vm = true},
        {.product = "OpenStack", .name = "kvm", .proves_vm = true},
        {.vendor = "Google", .name = "kvm"},
        {.vendor = "Amazon EC2", .name = "kvm"}, /* Nitro; the metal instances say so too */
    };
    static const struct {
        const char *sig, *name;
    } cpuid[] = {
        {"KVMKVMKVM", "kvm"},      {"Microsoft Hv", "hyper-v"},  {"VMwareVMware", "vmware"},
        {"XenVMMXenVMM", "xen"},   {"TCGTCGTCGTCG", "qemu"},     {"ACRNACRNACRN", "acrn"},
        {"bhyve bhyve ", "bhyve"}, {" lrpepyh vr", "parallels"},
    };
    const char *nm = "";
    bool vm = f->cpuinfo_hypervisor || f->hyp_type[0] || f->cpuid_vendor[0];

    /* Firecracker has no DMI table; its guest init names it on the command line. */
    if (contains(f->cmdline, "firecracker")) {
        vm = true;
        nm = "firecracker";
        goto out;
    }
    for (size_t i = 0; i < sizeof dmi / sizeof dmi[0]; i++) {
        if (dmi[i].vendor && !contains(f->dmi_vendor, dmi[i].vendor))
            continue;
        if (dmi[i].product && !contains(f->dmi_product, dmi[i].product))
            continue;
        vm = vm || dmi[i].proves_vm;
        nm = dmi[i].name;
        goto out;
    }
    if (contains(f->hyp_type, "xen")) {
        nm = "xen";
        goto out;
    }
    for (size_t i = 0; i < sizeof cpuid / sizeof cpuid[0]; i++)
        if (f->cpuid_vendor[0] && !strncmp(f->cpuid_vendor, cpuid[i].sig, strlen(cpuid[i].sig))) {
            nm = cpuid[i].name;
            goto out;
        }
out:
    snprintf(name, n, "%s", vm ? nm : "");
    return vm;
}

int gq_host_count_nodes(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    if (!d)
        return -1;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        unsigned k;
        char tail;
        if (sscanf(e->d_name, "node%u%c", &k, &tail) == 1)
            n++;
    }
    closedir(d);
    return n;
}

void gq_host_fill(gq_topo *t, hwloc_topology_t topo)
{
    gq_host_fill_at(t, topo, "/sys/devices/system/node");
}

void gq_host_fill_at(gq_topo *t, hwloc_topology_t topo, const char *node_dir)
{
    char host[256];
    bool hyp;
    if (gethostname(host, sizeof host) == 0) {
        host[sizeof host - 1] = 0;
        snprintf(t->hostname, sizeof t->hostname, "%.*s", (int)sizeof t->hostname - 1, host);
    }
    scan_cpuinfo(t->cpu_model, sizeof t->cpu_model, &hyp);
    if (topo) {
        int packages = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE);
        int cores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
        int pus = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
        int numa = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
        t->sockets = packages > 0 ? packages : -1;
        t->cores = cores > 0 ? cores : -1;
        t->cpus = pus > 0 ? pus : -1;
        if (numa > 0)
            t->numa_nodes = numa;
        hwloc_obj_t pkg = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PACKAGE, 0);
        const char *m = pkg ? hwloc_obj_get_info_by_name(pkg, "CPUModel") : NULL;
        if (!t->cpu_model[0] && m)
            snprintf(t->cpu_model, sizeof t->cpu_model, "%s", m);
    } else {
        int numa = gq_host_count_nodes(node_dir);
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        if (numa > 0)
            t->numa_nodes = numa;
        t->cpus = cpus > 0 ? (int)cpus : -1;
    }
    gq_vm_facts f;
    gq_host_vm_facts(&f);
    t->is_vm = gq_host_classify_vm(&f, t->hypervisor, sizeof t->hypervisor);
}
