/* The host side of discovery: CPU model, sockets, cores, NUMA nodes,
 * hostname, and whether this is a virtual machine (and which hypervisor).
 */
#ifndef GQ_TOPO_HOST_H
#define GQ_TOPO_HOST_H

#include <hwloc.h>
#include <stdbool.h>
#include <stdio.h>
#include <stddef.h>

#include "topo/topo.h"

/* Fill t->hostname, cpu_model, sockets, cores, cpus, numa_nodes, is_vm and
 * hypervisor. `topo` may be NULL (hwloc failed): counts then come from
 * sysfs or stay unknown. Never fails. */
void gq_host_fill(gq_topo *t, hwloc_topology_t topo);
/* The same, with the sysfs NUMA node directory given (gq_host_fill: the
 * system's /sys/devices/system/node; a test: its fixture). A directory that
 * lists no node leaves the one node gq_topo_init assumes. */
void gq_host_fill_at(gq_topo *t, hwloc_topology_t topo, const char *node_dir);

/* How many NUMA nodes a sysfs node directory (/sys/devices/system/node, or
 * a test's fixture) lists: its entries named node<N> and nothing more;
 * -1 when the directory cannot be read. */
int gq_host_count_nodes(const char *dir);

/* What the platform says about virtualisation; each string "" when absent. */
typedef struct gq_vm_facts {
    bool cpuinfo_hypervisor; /* "hypervisor" among /proc/cpuinfo flags */
    char cpuid_vendor[16];   /* CPUID leaf 0x40000000 signature, x86 guests */
    char dmi_vendor[128];    /* /sys/class/dmi/id/sys_vendor */
    char dmi_product[128];   /* /sys/class/dmi/id/product_name */
    char hyp_type[32];       /* /sys/hypervisor/type ("xen") */
    char cmdline[1024];      /* /proc/cmdline (Firecracker's init names itself there) */
} gq_vm_facts;

/* Read /proc/cpuinfo's text from f (NULL: nothing): model gets the first
 * model name ("model name", "Model Name" or "cpu model"), *hyp whether the
 * first "flags" line has the word "hypervisor" (false without one). */
void gq_host_cpuinfo_scan(FILE *f, char *model, size_t n, bool *hyp);

/* The first line of the file at path into buf (n bytes), its newline and
 * trailing spaces cut (DMI pads its strings): a line of spaces alone is "".
 * False when the file cannot be read or is empty. */
bool gq_host_read_line(const char *path, char *buf, size_t n);

/* Read the facts above from this machine. */
void gq_host_vm_facts(gq_vm_facts *f);

/* Decide from the facts whether this is a VM and, when it can be told, the
 * hypervisor: "firecracker", "kvm", "vmware", "xen", "hyper-v", "qemu",
 * "virtualbox", "parallels", "bhyve", "acrn" ("" when a VM cannot be named).
 * A DMI vendor alone does not make a VM (Amazon's metal instances say
 * "Amazon EC2" too); the CPU's hypervisor flag, a hypervisor signature,
 * /sys/hypervisor or a product name that only VMs carry does. Pure. */
bool gq_host_classify_vm(const gq_vm_facts *f, char *name, size_t n);

#endif
