/* VM detection from the platform's facts (DMI, CPUID, cpuinfo, /sys/hypervisor,
 * the kernel command line), and the host fields of this machine. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

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
    if (!t.is_vm)
        assert_string_equal(t.hypervisor, "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_classify),
        cmocka_unit_test(test_this_host),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
