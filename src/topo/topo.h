/* What discovery found: GPUs, the links between them, and the host.
 *
 * Filled by a backend's discover() (CUDA: CUDA runtime + NVML via dlopen +
 * hwloc + sysfs; sim: what a real discovery would report for the topology
 * file's machine, never its hidden bottlenecks), or replayed from a snapshot.
 * Fields that could not be read hold the "unknown" values documented per field
 * (-1 for ints, 0.0 for doubles, "" for strings).
 *
 * Plain data, no pointers: a gq_topo can be copied with memcpy and compared
 * with the JSON round-trip in tests.
 */
#ifndef GQ_TOPO_TOPO_H
#define GQ_TOPO_TOPO_H

#include <stdbool.h>
#include <stdint.h>

#include "core/status.h"
#include "core/types.h"

#define GQ_MAX_PCI_NODES 256
#define GQ_TOPO_MAX_WARN 8

/* nvidia-smi topo -m levels, from nearest to farthest. */
typedef enum gq_link_level {
    GQ_LEVEL_UNKNOWN = 0,
    GQ_LEVEL_X,    /* self */
    GQ_LEVEL_NV,   /* NVLink (count in nvlinks[][]) */
    GQ_LEVEL_PIX,  /* at most one PCIe bridge */
    GQ_LEVEL_PXB,  /* several PCIe bridges, no host bridge */
    GQ_LEVEL_PHB,  /* through a PCIe host bridge (CPU) */
    GQ_LEVEL_NODE, /* between host bridges within one NUMA node */
    GQ_LEVEL_SYS,  /* across the CPU interconnect (QPI/UPI/xGMI) */
} gq_link_level;

/* NVML P2P status, with nvidia-smi topo -p2p codes. */
typedef enum gq_p2p_status {
    GQ_P2P_UNKNOWN = 0,
    GQ_P2P_OK,       /* "OK" */
    GQ_P2P_CNS,      /* chipset not supported */
    GQ_P2P_GNS,      /* GPU not supported */
    GQ_P2P_TNS,      /* topology not supported */
    GQ_P2P_NS,       /* not supported (other) */
    GQ_P2P_DISABLED, /* disabled by regkey/driver ("DS") */
} gq_p2p_status;

/* A GPU setting that is on, off, not offered by the GPU, or not known
 * (written as "enabled", "disabled", "not supported", "unknown"). */
typedef enum gq_mode { GQ_MODE_UNKNOWN = 0, GQ_MODE_ENABLED, GQ_MODE_DISABLED, GQ_MODE_UNSUPPORTED } gq_mode;
/* The name above; "unknown" for any other value. */
const char *gq_mode_name(int m);
/* The inverse (exact case); -1 when s is none of the four. */
int gq_mode_from_name(const char *s);

typedef struct gq_gpu_info {
    int index; /* CUDA device ordinal */
    char name[96];
    char uuid[80];       /* "GPU-xxxxxxxx-..." */
    uint64_t mem_bytes;  /* total device memory, 0 unknown */
    char pci_bus_id[32]; /* "0000:00:06.0" */
    int cc_major, cc_minor;
    int sm_count;
    int pcie_gen_cur, pcie_width_cur; /* negotiated now; -1 unknown */
    int pcie_gen_max, pcie_width_max; /* what the link can do */
    double pcie_gbps;                 /* theoretical per-direction GB/s of the negotiated link, 0 unknown */
    int numa_node;                    /* -1 when the platform does not say */
    char cpulist[256];                /* local CPUs, "0-15,32-47"; "" unknown */
    double power_limit_w;             /* enforced power limit; 0 unknown */
    int nvlinks_total;                /* active NVLinks on this GPU; -1 unknown */
    double nvlink_gbps_per_link;      /* per direction; 0 unknown */
    /* Identity: board serial and VBIOS version ("" unknown, or "not
     * supported"), and the ECC, MIG and persistence modes (gq_mode). */
    char serial[64], vbios[64];
    int ecc_mode, mig_mode, persistence_mode;
    int nvswitch_links; /* of nvlinks_total, those to an NVSwitch; -1 unknown */
} gq_gpu_info;

/* A node of the PCIe tree: host bridge, switch/bridge, or a GPU endpoint. */
typedef enum gq_pci_kind { GQ_PCI_HOSTBRIDGE, GQ_PCI_BRIDGE, GQ_PCI_GPU, GQ_PCI_OTHER } gq_pci_kind;
typedef struct gq_pci_node {
    gq_pci_kind kind;
    int parent;       /* index into pci[], -1 for a root */
    int gpu;          /* for GQ_PCI_GPU: GPU index; else -1 */
    int numa_node;    /* -1 unknown */
    char bus_id[32];  /* "0000:3a:00.0" or "" */
    char label[64];   /* "HostBridge", "PCIBridge", "GPU 0" ... */
    double link_gbps; /* upstream link per-direction GB/s, 0 unknown */
    /* The upstream link as discovery read it (for a bridge: sysfs
     * current_link_speed/width and max_link_speed/width of a switch's
     * upstream port; for a GPU, its own link): the generation and width it
     * trained at, and the most it can do; 0 unknown. */
    int link_gen, link_width, link_gen_max, link_width_max;
} gq_pci_node;

typedef struct gq_topo {
    bool simulated;  /* true when produced by the sim backend */
    char source[64]; /* "cuda", "snapshot:FILE", "sim:NAME" */
    int ngpu;
    gq_gpu_info gpu[GQ_MAX_GPUS];

    /* Pairwise, [i][j]; diagonal is "self". */
    int p2p_cuda[GQ_MAX_GPUS][GQ_MAX_GPUS];           /* cudaDeviceCanAccessPeer: 1/0, -1 unknown */
    unsigned char p2p_nvml[GQ_MAX_GPUS][GQ_MAX_GPUS]; /* gq_p2p_status (read) */
    int nvlinks[GQ_MAX_GPUS][GQ_MAX_GPUS];            /* NVLinks joining i and j; -1 unknown */
    unsigned char level[GQ_MAX_GPUS][GQ_MAX_GPUS];    /* gq_link_level */
    /* The PCIe-only level (PIX..SYS) even where NVLink joins the pair and
     * level[][] says NV: host-staged copies take this path. */
    unsigned char pci_level[GQ_MAX_GPUS][GQ_MAX_GPUS];

    /* Software. */
    char driver_version[32];  /* "580.159.04" */
    int cuda_driver_version;  /* 13000; -1 unknown */
    int cuda_runtime_version; /* -1 unknown */
    bool nvml_loaded;

    /* Host. */
    char hostname[64];
    char cpu_model[128];
    int sockets;    /* -1 unknown */
    int cores;      /* -1 unknown */
    int numa_nodes; /* >= 1 */
    bool is_vm;
    char hypervisor[32]; /* "kvm", "firecracker"...; "" unknown */
    int npci;
    gq_pci_node pci[GQ_MAX_PCI_NODES];

    int cpus; /* logical CPUs (vCPUs in a VM); -1 unknown */
    /* A snapshot that was written by hand or by a tool rather than captured
     * by discovery on a machine (e.g. tests/snapshots/h200x2-synthetic.json). */
    bool synthetic;
    /* Things discovery could not read (NVML absent, hwloc failed, ...), one
     * line each, for the command to print. Library code never prints. */
    int nwarnings;
    char warnings[GQ_TOPO_MAX_WARN][200];
} gq_topo;

/* Names for enums ("NV", "PIX", ...; "OK", "CNS", ...). Never NULL. */
const char *gq_level_name(gq_link_level l);
const char *gq_p2p_status_name(gq_p2p_status s);

/* Theoretical per-direction PCIe bandwidth in GB/s (10^9 B/s):
 * GT/s x width x encoding / 8. Gen1/2 use 8b/10b, Gen3+ 128b/130b.
 * Returns 0 for unknown gen/width. */
double gq_pcie_gbps(int gen, int width);

/* Initialise every field to "unknown". */
void gq_topo_init(gq_topo *t);

/* Append one warning line to t->warnings (printf format). An identical line
 * already there is not repeated; beyond GQ_TOPO_MAX_WARN lines the rest are
 * dropped. */
void gq_topo_warn(gq_topo *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Restrict a topology to the GPUs sel[0..nsel) (CUDA ordinals, in that
 * order): out gets those GPUs at positions 0..nsel-1 (gpu[k].index keeps the
 * ordinal), the pairwise matrices re-indexed, and the PCIe tree with each
 * unselected GPU turned into a GQ_PCI_OTHER node. `in` and `out` must not be
 * the same object. Returns GQ_E_USAGE when an entry of sel is out of range. */
int gq_topo_select(const gq_topo *in, const int *sel, int nsel, gq_topo *out, gq_err *err);

/* Per-direction NVLink rate of one link in GB/s for a compute capability:
 * 6.0 NVLink1 20, 7.0 NVLink2 25, 8.0 NVLink3 25, 9.0 NVLink4 25,
 * 10.x NVLink5 50; 0 when the architecture has no known NVLink rate. */
double gq_nvlink_gbps_per_link(int cc_major, int cc_minor);

#endif
