#include "topo/snapshot.h"
#include "core/version.h"
#include "core/infile.h"
#include "core/runid.h"
#include "core/json.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

/* ---- names of enums in JSON ------------------------------------------------ */

static const char *const level_names[] = {
    [GQ_LEVEL_X] = "X",     [GQ_LEVEL_NV] = "NV",     [GQ_LEVEL_PIX] = "PIX", [GQ_LEVEL_PXB] = "PXB",
    [GQ_LEVEL_PHB] = "PHB", [GQ_LEVEL_NODE] = "NODE", [GQ_LEVEL_SYS] = "SYS",
};
#define NLEVELS ((int)(sizeof level_names / sizeof level_names[0]))

static const char *const p2p_names[] = {
    [GQ_P2P_OK] = "OK",   [GQ_P2P_CNS] = "CNS", [GQ_P2P_GNS] = "GNS",
    [GQ_P2P_TNS] = "TNS", [GQ_P2P_NS] = "NS",   [GQ_P2P_DISABLED] = "DS",
};
#define NP2P ((int)(sizeof p2p_names / sizeof p2p_names[0]))

static const char *const kind_names[] = {
    [GQ_PCI_HOSTBRIDGE] = "hostbridge",
    [GQ_PCI_BRIDGE] = "bridge",
    [GQ_PCI_GPU] = "gpu",
    [GQ_PCI_OTHER] = "other",
};
#define NKINDS ((int)(sizeof kind_names / sizeof kind_names[0]))

/* ---- to JSON: unknown values become null ---------------------------------- */

static json_t *int_or_null(long long v, long long unknown)
{
    return v == unknown ? json_null() : json_integer(v);
}

static json_t *name_or_null(const char *const *names, int n, int v)
{
    return (v > 0 && v < n && names[v]) ? json_string(names[v]) : json_null();
}

static json_t *matrix(const gq_topo *t, int which)
{
    json_t *rows = json_array();
    for (int i = 0; i < t->ngpu; i++) {
        json_t *row = json_array();
        for (int j = 0; j < t->ngpu; j++) {
            json_t *v;
            switch (which) {
            case 0: v = name_or_null(level_names, NLEVELS, t->level[i][j]); break;
            case 1: v = name_or_null(level_names, NLEVELS, t->pci_level[i][j]); break;
            case 2: v = int_or_null(t->nvlinks[i][j], -1); break;
            case 3: v = t->p2p_cuda[i][j] < 0 ? json_null() : json_boolean(t->p2p_cuda[i][j] != 0); break;
            default: v = name_or_null(p2p_names, NP2P, t->p2p_nvml[i][j]); break;
            }
            json_array_append_new(row, v);
        }
        json_array_append_new(rows, row);
    }
    return rows;
}

json_t *gq_topo_to_json(const gq_topo *t)
{
    json_t *o = json_object();
    json_object_set_new(o, "source", json_string(t->source));
    json_object_set_new(o, "simulated", json_boolean(t->simulated));
    json_object_set_new(o, "synthetic", json_boolean(t->synthetic));

    json_t *h = json_object();
    json_object_set_new(h, "hostname", json_string(t->hostname));
    json_object_set_new(h, "cpu_model", json_string(t->cpu_model));
    json_object_set_new(h, "sockets", int_or_null(t->sockets, -1));
    json_object_set_new(h, "cores", int_or_null(t->cores, -1));
    json_object_set_new(h, "cpus", int_or_null(t->cpus, -1));
    json_object_set_new(h, "numa_nodes", json_integer(t->numa_nodes));
    json_object_set_new(h, "vm", json_boolean(t->is_vm));
    json_object_set_new(h, "hypervisor", json_string(t->hypervisor));
    json_object_set_new(h, "driver_version", json_string(t->driver_version));
    json_object_set_new(h, "cuda_driver_version", int_or_null(t->cuda_driver_version, -1));
    json_object_set_new(h, "cuda_runtime_version", int_or_null(t->cuda_runtime_version, -1));
    json_object_set_new(h, "nvml", json_boolean(t->nvml_loaded));
    json_object_set_new(o, "host", h);

    json_t *gpus = json_array();
    for (int i = 0; i < t->ngpu; i++) {
        const gq_gpu_info *g = &t->gpu[i];
        json_t *x = json_object();
        json_object_set_new(x, "index", json_integer(g->index));
        json_object_set_new(x, "name", json_string(g->name));
        json_object_set_new(x, "uuid", json_string(g->uuid));
        json_object_set_new(x, "mem_bytes",
                            g->mem_bytes ? json_integer((json_int_t)g->mem_bytes) : json_null());
        json_object_set_new(x, "pci_bus_id", json_string(g->pci_bus_id));
        json_object_set_new(x, "cc_major", int_or_null(g->cc_major, -1));
        json_object_set_new(x, "cc_minor", int_or_null(g->cc_minor, -1));
        json_object_set_new(x, "sm_count", int_or_null(g->sm_count, -1));
        json_object_set_new(x, "pcie_gen_cur", int_or_null(g->pcie_gen_cur, -1));
        json_object_set_new(x, "pcie_width_cur", int_or_null(g->pcie_width_cur, -1));
        json_object_set_new(x, "pcie_gen_max", int_or_null(g->pcie_gen_max, -1));
        json_object_set_new(x, "pcie_width_max", int_or_null(g->pcie_width_max, -1));
        json_object_set_new(x, "pcie_gbps", gq_json_num_if(g->pcie_gbps, g->pcie_gbps != 0));
        json_object_set_new(x, "numa_node", int_or_null(g->numa_node, -1));
        json_object_set_new(x, "cpulist", json_string(g->cpulist));
        json_object_set_new(x, "power_limit_w", gq_json_num_if(g->power_limit_w, g->power_limit_w != 0));
        json_object_set_new(x, "nvlinks_total", int_or_null(g->nvlinks_total, -1));
        json_object_set_new(x, "nvswitch_links", int_or_null(g->nvswitch_links, -1));
        json_object_set_new(x, "nvlink_gbps_per_link",
                            gq_json_num_if(g->nvlink_gbps_per_link, g->nvlink_gbps_per_link != 0));
        gq_gpu_identity_to_json(g, x);
        json_array_append_new(gpus, x);
    }
    json_object_set_new(o, "gpus", gpus);

    json_t *links = json_object();
    json_object_set_new(links, "level", matrix(t, 0));
    json_object_set_new(links, "pci_level", matrix(t, 1));
    json_object_set_new(links, "nvlinks", matrix(t, 2));
    json_object_set_new(links, "p2p_cuda", matrix(t, 3));
    json_object_set_new(links, "p2p_nvml", matrix(t, 4));
    json_object_set_new(o, "links", links);

    json_t *pci = json_array();
    for (int n = 0; n < t->npci; n++) {
        const gq_pci_node *p = &t->pci[n];
        json_t *x = json_object();
        json_object_set_new(
            x, "kind",
            json_string((int)p->kind >= 0 && (int)p->kind < NKINDS ? kind_names[p->kind] : "other"));
        json_object_set_new(x, "parent", int_or_null(p->parent, -1));
        json_object_set_new(x, "gpu", int_or_null(p->gpu, -1));
        json_object_set_new(x, "numa_node", int_or_null(p->numa_node, -1));
        json_object_set_new(x, "bus_id", json_string(p->bus_id));
        json_object_set_new(x, "label", json_string(p->label));
        json_object_set_new(x, "link_gbps", gq_json_num_if(p->link_gbps, p->link_gbps != 0));
        json_object_set_new(x, "link_gen", int_or_null(p->link_gen > 0 ? p->link_gen : -1, -1));
        json_object_set_new(x, "link_width", int_or_null(p->link_width > 0 ? p->link_width : -1, -1));
        json_object_set_new(x, "link_gen_max", int_or_null(p->link_gen_max > 0 ? p->link_gen_max : -1, -1));
        json_object_set_new(x, "link_width_max",
                            int_or_null(p->link_width_max > 0 ? p->link_width_max : -1, -1));
        json_array_append_new(pci, x);
    }
    json_object_set_new(o, "pci", pci);

    json_t *w = json_array();
    for (int i = 0; i < t->nwarnings; i++)
        json_array_append_new(w, json_string(t->warnings[i]));
    json_object_set_new(o, "warnings", w);
    return o;
}

/* ---- from JSON -------------------------------------------------------------- */

/* Fetch obj[key]; `where` is the path of obj ("" for the root, "gpus[1]."). */
static int field(const json_t *obj, const char *where, const char *key, json_t **out, gq_err *err)
{
    *out = json_object_get(obj, key);
    if (!*out)
        return gq_err_set(err, GQ_E_USAGE, "field '%s%s' is missing", where, key);
    return GQ_OK;
}

static int get_str(const json_t *obj, const char *where, const char *key, char *dst, size_t n, gq_err *err)
{
    json_t *v;
    if (field(obj, where, key, &v, err))
        return GQ_E_USAGE;
    if (!json_is_string(v))
        return gq_err_set(err, GQ_E_USAGE, "field '%s%s' must be a string", where, key);
    if (json_string_length(v) >= n)
        return gq_err_set(err, GQ_E_USAGE, "field '%s%s' is longer than %zu characters", where, key, n - 1);
    snprintf(dst, n, "%s", json_string_value(v));
    return GQ_OK;
}

static int get_bool(const json_t *obj, const char *where, const char *key, bool *dst, gq_err *err)
{
    json_t *v;
    if (field(obj, where, key, &v, err))
        return GQ_E_USAGE;
    if (!json_is_boolean(v))
        return gq_err_set(err, GQ_E_USAGE, "field '%s%s' must be true or false", where, key);
    *dst = json_is_true(v);
    return GQ_OK;
}

/* An integer in [lo, hi]; null (when nullable) gives `unknown`. */
static int get_int(const json_t *obj, const char *where, const char *key, bool nullable, int unknown,
                   long long lo, long long hi, int *dst, gq_err *err)
{
    json_t *v;
    if (field(obj, where, key, &v, err))
        return GQ_E_USAGE;
    if (nullable && json_is_null(v)) {
        *dst = unknown;
        return GQ_OK;
    }
    if (!json_is_integer(v))
        return gq_err_set(err, GQ_E_USAGE, "field '%s%s' must be an integer%s", where, key,
                          nullable ? " or null" : "");
    json_int_t x = json_integer_value(v);
    if (x < lo || x > hi)
        return gq_err_set(err, GQ_E_USAGE, "field '%s%s' is %lld, expected %lld..%lld", where, key,
                          (long long)x, lo, hi);
    *dst = (int)x;
    return GQ_OK;
}

/* A field snapshots before the link readings of bridges did not have:
 * absent or null is unknown (0). */
static int get_opt_int(const json_t *obj, const char *where, const char *key, long long lo, long long hi,
                       int *dst, gq_err *err)
{
    if (!json_object_get(obj, key)) {
        *dst = 0;
        return GQ_OK;
    }
    return get_int(obj, where, key, true, 0, lo, hi, dst, err);
}

/* A number >= 0; null gives 0.0 (unknown). */
static int get_num(const json_t *obj, const char *where, const char *key, double *dst, gq_err *err)
{
    json_t *v;
    if (field(obj, where, key, &v, err))
        return GQ_E_USAGE;
    if (json_is_null(v)) {
        *dst = 0.0;
        return GQ_OK;
    }
    if (!json_is_number(v) || json_number_value(v) < 0)
        return gq_err_set(err, GQ_E_USAGE, "field '%s%s' must be a number >= 0 or null", where, key);
    *dst = json_number_value(v);
    return GQ_OK;
}

static int parse_host(const json_t *h, gq_topo *t, gq_err *err)
{
    const char *w = "host.";
    if (!json_is_object(h))
        return gq_err_set(err, GQ_E_USAGE, "field 'host' must be an object");
    if (get_str(h, w, "hostname", t->hostname, sizeof t->hostname, err) ||
        get_str(h, w, "cpu_model", t->cpu_model, sizeof t->cpu_model, err) ||
        get_int(h, w, "sockets", true, -1, 1, 1024, &t->sockets, err) ||
        get_int(h, w, "cores", true, -1, 1, 1 << 20, &t->cores, err) ||
        get_int(h, w, "cpus", true, -1, 1, 1 << 20, &t->cpus, err) ||
        get_int(h, w, "numa_nodes", false, 1, 1, 4096, &t->numa_nodes, err) ||
        get_bool(h, w, "vm", &t->is_vm, err) ||
        get_str(h, w, "hypervisor", t->hypervisor, sizeof t->hypervisor, err) ||
        get_str(h, w, "driver_version", t->driver_version, sizeof t->driver_version, err) ||
        get_int(h, w, "cuda_driver_version", true, -1, 0, 1000000, &t->cuda_driver_version, err) ||
        get_int(h, w, "cuda_runtime_version", true, -1, 0, 1000000, &t->cuda_runtime_version, err) ||
        get_bool(h, w, "nvml", &t->nvml_loaded, err))
        return GQ_E_USAGE;
    return GQ_OK;
}

static int parse_gpu(const json_t *x, int i, gq_gpu_info *g, gq_err *err)
{
    char w[32];
    snprintf(w, sizeof w, "gpus[%d].", i);
    if (!json_is_object(x))
        return gq_err_set(err, GQ_E_USAGE, "field 'gpus[%d]' must be an object", i);
    json_t *mem;
    if (field(x, w, "mem_bytes", &mem, err))
        return GQ_E_USAGE;
    if (json_is_null(mem))
        g->mem_bytes = 0;
    else if (json_is_integer(mem) && json_integer_value(mem) > 0)
        g->mem_bytes = (uint64_t)json_integer_value(mem);
    else
        return gq_err_set(err, GQ_E_USAGE, "field '%smem_bytes' must be a positive integer or null", w);
    if (get_int(x, w, "index", false, -1, 0, 1 << 20, &g->index, err) ||
        get_str(x, w, "name", g->name, sizeof g->name, err) ||
        get_str(x, w, "uuid", g->uuid, sizeof g->uuid, err) ||
        get_str(x, w, "pci_bus_id", g->pci_bus_id, sizeof g->pci_bus_id, err) ||
        get_int(x, w, "cc_major", true, -1, 0, 100, &g->cc_major, err) ||
        get_int(x, w, "cc_minor", true, -1, 0, 100, &g->cc_minor, err) ||
        get_int(x, w, "sm_count", true, -1, 1, 1 << 20, &g->sm_count, err) ||
        get_int(x, w, "pcie_gen_cur", true, -1, 1, 6, &g->pcie_gen_cur, err) ||
        get_int(x, w, "pcie_width_cur", true, -1, 1, 32, &g->pcie_width_cur, err) ||
        get_int(x, w, "pcie_gen_max", true, -1, 1, 6, &g->pcie_gen_max, err) ||
        get_int(x, w, "pcie_width_max", true, -1, 1, 32, &g->pcie_width_max, err) ||
        get_num(x, w, "pcie_gbps", &g->pcie_gbps, err) ||
        get_int(x, w, "numa_node", true, -1, 0, 4095, &g->numa_node, err) ||
        get_str(x, w, "cpulist", g->cpulist, sizeof g->cpulist, err) ||
        get_num(x, w, "power_limit_w", &g->power_limit_w, err) ||
        get_int(x, w, "nvlinks_total", true, -1, 0, 1024, &g->nvlinks_total, err) ||
        get_num(x, w, "nvlink_gbps_per_link", &g->nvlink_gbps_per_link, err) ||
        /* optional: snapshots written before NVSwitches were told apart lack it */
        (json_object_get(x, "nvswitch_links") &&
         get_int(x, w, "nvswitch_links", true, -1, 0, 1024, &g->nvswitch_links, err)))
        return GQ_E_USAGE;
    return gq_gpu_identity_from_json(x, w, g, err);
}

static const char *mode_names[] = {"unknown", "enabled", "disabled", "not supported"};

/* gq_mode_name is in topo/identity.c; the same names, in gq_mode's order. */
int gq_mode_from_name(const char *s)
{
    for (int k = 0; s && k < 4; k++)
        if (!strcmp(s, mode_names[k]))
            return k;
    return -1;
}

void gq_gpu_identity_to_json(const gq_gpu_info *g, json_t *x)
{
    json_object_set_new(x, "serial", json_string(g->serial[0] ? g->serial : "unknown"));
    json_object_set_new(x, "vbios", json_string(g->vbios[0] ? g->vbios : "unknown"));
    json_object_set_new(x, "ecc_mode", json_string(gq_mode_name(g->ecc_mode)));
    json_object_set_new(x, "mig_mode", json_string(gq_mode_name(g->mig_mode)));
    json_object_set_new(x, "persistence_mode", json_string(gq_mode_name(g->persistence_mode)));
}

/* An optional identity string: absent leaves "" (unknown). */
static int opt_str(const json_t *x, const char *w, const char *key, char *dst, size_t n, gq_err *err)
{
    json_t *v = json_object_get(x, key);
    if (!v || json_is_null(v))
        return GQ_OK;
    if (!json_is_string(v) || json_string_length(v) >= n)
        return gq_err_set(err, GQ_E_USAGE, "field '%s%s' must be a string of at most %zu characters or null",
                          w, key, n - 1);
    if (strcmp(json_string_value(v), "unknown"))
        snprintf(dst, n, "%s", json_string_value(v));
    return GQ_OK;
}

int gq_gpu_identity_from_json(const json_t *x, const char *w, gq_gpu_info *g, gq_err *err)
{
    if (opt_str(x, w, "serial", g->serial, sizeof g->serial, err) ||
        opt_str(x, w, "vbios", g->vbios, sizeof g->vbios, err))
        return GQ_E_USAGE;
    static const char *keys[] = {"ecc_mode", "mig_mode", "persistence_mode"};
    int *dst[] = {&g->ecc_mode, &g->mig_mode, &g->persistence_mode};
    for (int k = 0; k < 3; k++) {
        json_t *v = json_object_get(x, keys[k]);
        if (!v || json_is_null(v))
            continue;
        int m = gq_mode_from_name(json_string_value(v));
        if (m < 0)
            return gq_err_set(
                err, GQ_E_USAGE,
                "field '%s%s' must be \"enabled\", \"disabled\", \"not supported\" or \"unknown\"", w,
                keys[k]);
        *dst[k] = m;
    }
    return GQ_OK;
}

static int enum_value(const char *const *names, int n, const char *s)
{
    for (int k = 1; k < n; k++)
        if (names[k] && !strcmp(names[k], s))
            return k;
    return -1;
}

/* One ngpu x ngpu matrix of links; `which` as in matrix(). */
static int parse_matrix(const json_t *links, const char *key, int which, gq_topo *t, gq_err *err)
{
    json_t *m;
    if (field(links, "links.", key, &m, err))
        return GQ_E_USAGE;
    if (!json_is_array(m) || (int)json_array_size(m) != t->ngpu)
        return gq_err_set(err, GQ_E_USAGE, "field 'links.%s' must be an array of %d rows (one per GPU)", key,
                          t->ngpu);
    for (int i = 0; i < t->ngpu; i++) {
        json_t *row = json_array_get(m, (size_t)i);
        if (!json_is_array(row) || (int)json_array_size(row) != t->ngpu)
            return gq_err_set(err, GQ_E_USAGE, "field 'links.%s[%d]' must be an array of %d values", key, i,
                              t->ngpu);
        for (int j = 0; j < t->ngpu; j++) {
            json_t *v = json_array_get(row, (size_t)j);
            bool null = json_is_null(v);
            int k;
            switch (which) {
            case 0:
            case 1:
                k = null                ? GQ_LEVEL_UNKNOWN
                    : json_is_string(v) ? enum_value(level_names, NLEVELS, json_string_value(v))
                                        : -1;
                if (k < 0)
                    return gq_err_set(
                        err, GQ_E_USAGE,
                        "field 'links.%s[%d][%d]' must be one of X, NV, PIX, PXB, PHB, NODE, SYS or null",
                        key, i, j);
                if (which == 0)
                    t->level[i][j] = (unsigned char)k;
                else
                    t->pci_level[i][j] = (unsigned char)k;
                break;
            case 2:
                if (!null &&
                    (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > 1024))
                    return gq_err_set(err, GQ_E_USAGE,
                                      "field 'links.%s[%d][%d]' must be an integer >= 0 or null", key, i, j);
                t->nvlinks[i][j] = null ? -1 : (int)json_integer_value(v);
                break;
            case 3:
                if (!null && !json_is_boolean(v))
                    return gq_err_set(err, GQ_E_USAGE, "field 'links.%s[%d][%d]' must be true, false or null",
                                      key, i, j);
                t->p2p_cuda[i][j] = null ? -1 : json_is_true(v);
                break;
            default:
                k = null                ? GQ_P2P_UNKNOWN
                    : json_is_string(v) ? enum_value(p2p_names, NP2P, json_string_value(v))
                                        : -1;
                if (k < 0)
                    return gq_err_set(
                        err, GQ_E_USAGE,
                        "field 'links.%s[%d][%d]' must be one of OK, CNS, GNS, TNS, NS, DS or null", key, i,
                        j);
                t->p2p_nvml[i][j] = (unsigned char)k;
                break;
            }
        }
    }
    return GQ_OK;
}

static int parse_pci(const json_t *arr, gq_topo *t, gq_err *err)
{
    if (!json_is_array(arr))
        return gq_err_set(err, GQ_E_USAGE, "field 'pci' must be an array");
    if (json_array_size(arr) > GQ_MAX_PCI_NODES)
        return gq_err_set(err, GQ_E_USAGE, "field 'pci' has %zu nodes, at most %d are allowed",
                          json_array_size(arr), GQ_MAX_PCI_NODES);
    t->npci = (int)json_array_size(arr);
    for (int n = 0; n < t->npci; n++) {
        json_t *x = json_array_get(arr, (size_t)n);
        gq_pci_node *p = &t->pci[n];
        char w[32], kind[16];
        snprintf(w, sizeof w, "pci[%d].", n);
        if (!json_is_object(x))
            return gq_err_set(err, GQ_E_USAGE, "field 'pci[%d]' must be an object", n);
        if (get_str(x, w, "kind", kind, sizeof kind, err))
            return GQ_E_USAGE;
        int k = -1;
        for (int i = 0; i < NKINDS; i++)
            if (!strcmp(kind, kind_names[i]))
                k = i;
        if (k < 0)
            return gq_err_set(err, GQ_E_USAGE, "field '%skind' must be one of hostbridge, bridge, gpu, other",
                              w);
        p->kind = (gq_pci_kind)k;
        /* Parents come before their children, so the tree has no cycle. */
        if (n == 0 && json_is_integer(json_object_get(x, "parent")))
            return gq_err_set(err, GQ_E_USAGE,
                              "field 'pci[0].parent' must be null: the first node is a root");
        if (get_int(x, w, "parent", true, -1, 0, n - 1, &p->parent, err) ||
            get_int(x, w, "gpu", true, -1, 0, t->ngpu - 1, &p->gpu, err) ||
            get_int(x, w, "numa_node", true, -1, 0, 4095, &p->numa_node, err) ||
            get_str(x, w, "bus_id", p->bus_id, sizeof p->bus_id, err) ||
            get_str(x, w, "label", p->label, sizeof p->label, err) ||
            get_num(x, w, "link_gbps", &p->link_gbps, err) ||
            get_opt_int(x, w, "link_gen", 1, 16, &p->link_gen, err) ||
            get_opt_int(x, w, "link_width", 1, 32, &p->link_width, err) ||
            get_opt_int(x, w, "link_gen_max", 1, 16, &p->link_gen_max, err) ||
            get_opt_int(x, w, "link_width_max", 1, 32, &p->link_width_max, err))
            return GQ_E_USAGE;
        if ((p->kind == GQ_PCI_GPU) != (p->gpu >= 0))
            return gq_err_set(err, GQ_E_USAGE,
                              "field '%sgpu' must be a GPU index exactly when kind is \"gpu\"", w);
    }
    return GQ_OK;
}

int gq_topo_from_json(const json_t *j, gq_topo *t, gq_err *err)
{
    json_t *v;
    gq_topo_init(t);
    if (!json_is_object(j))
        return gq_err_set(err, GQ_E_USAGE, "the topology must be a JSON object");
    if (get_str(j, "", "source", t->source, sizeof t->source, err) ||
        get_bool(j, "", "simulated", &t->simulated, err) || get_bool(j, "", "synthetic", &t->synthetic, err))
        return GQ_E_USAGE;
    if (field(j, "", "host", &v, err) || parse_host(v, t, err))
        return GQ_E_USAGE;
    if (field(j, "", "gpus", &v, err))
        return GQ_E_USAGE;
    if (!json_is_array(v))
        return gq_err_set(err, GQ_E_USAGE, "field 'gpus' must be an array");
    size_t n = json_array_size(v);
    if (n < 1 || n > GQ_MAX_GPUS)
        return gq_err_set(err, GQ_E_USAGE, "field 'gpus' has %zu GPUs, expected 1 to %d", n, GQ_MAX_GPUS);
    t->ngpu = (int)n;
    for (int i = 0; i < t->ngpu; i++) {
        if (parse_gpu(json_array_get(v, (size_t)i), i, &t->gpu[i], err))
            return GQ_E_USAGE;
        if (t->gpu[i].index >= t->ngpu)
            return gq_err_set(err, GQ_E_USAGE, "field 'gpus[%d].index' is %d, expected 0..%d", i,
                              t->gpu[i].index, t->ngpu - 1);
        for (int k = 0; k < i; k++)
            if (t->gpu[k].index == t->gpu[i].index)
                return gq_err_set(err, GQ_E_USAGE,
                                  "field 'gpus[%d].index' repeats GPU %d, expected each GPU once", i,
                                  t->gpu[i].index);
    }
    if (field(j, "", "links", &v, err))
        return GQ_E_USAGE;
    if (!json_is_object(v))
        return gq_err_set(err, GQ_E_USAGE, "field 'links' must be an object");
    if (parse_matrix(v, "level", 0, t, err) || parse_matrix(v, "pci_level", 1, t, err) ||
        parse_matrix(v, "nvlinks", 2, t, err) || parse_matrix(v, "p2p_cuda", 3, t, err) ||
        parse_matrix(v, "p2p_nvml", 4, t, err))
        return GQ_E_USAGE;
    if (field(j, "", "pci", &v, err) || parse_pci(v, t, err))
        return GQ_E_USAGE;
    if (field(j, "", "warnings", &v, err))
        return GQ_E_USAGE;
    if (!json_is_array(v))
        return gq_err_set(err, GQ_E_USAGE, "field 'warnings' must be an array of strings");
    for (size_t i = 0; i < json_array_size(v); i++) {
        json_t *s = json_array_get(v, i);
        if (!json_is_string(s))
            return gq_err_set(err, GQ_E_USAGE, "field 'warnings[%zu]' must be a string", i);
        if (t->nwarnings < GQ_TOPO_MAX_WARN)
            snprintf(t->warnings[t->nwarnings++], sizeof t->warnings[0], "%s", json_string_value(s));
    }
    return GQ_OK;
}

/* ---- documents ---------------------------------------------------------------- */

/* "2026-11-30T12:00:00Z" for now. */
static void iso8601_now(char *buf, size_t n)
{
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

json_t *gq_topo_doc(const gq_topo *t, const char *kind, int schema_version)
{
    char ts[32];
    json_t *root = json_object();
    json_t *body = gq_topo_to_json(t);
    if (!root || !body) {
        json_decref(root);
        json_decref(body);
        return NULL;
    }
    iso8601_now(ts, sizeof ts);
    json_object_set_new(root, "tool", json_string("gpuqual"));
    json_object_set_new(root, "kind", json_string(kind));
    json_object_set_new(root, "schema_version", json_integer(schema_version));
    json_object_set_new(root, "run_id", json_string(gq_run_id_current()));
    json_object_set_new(root, "version", json_string(gq_version));
    json_object_set_new(root, "git", json_string(gq_git_rev));
    json_object_set_new(root, "timestamp", json_string(ts));
    json_object_update(root, body);
    json_decref(body);
    return root;
}

json_t *gq_snapshot_to_json(const gq_topo *t)
{
    return gq_topo_doc(t, GQ_SNAPSHOT_KIND, GQ_SNAPSHOT_SCHEMA);
}

/* Check the header (a gpuqual document of kind gpuqual-snapshot or topo,
 * schema not newer than this build reads) and parse the topology into *t
 * (gq_topo_init()ed first). GQ_E_USAGE with one line naming what is wrong. */
static int snapshot_from_json(const json_t *root, gq_topo *t, gq_err *err)
{
    gq_topo_init(t);
    if (!json_is_object(root))
        return gq_err_set(err, GQ_E_USAGE, "not a gpuqual snapshot (the document is not a JSON object)");
    json_t *tool = json_object_get(root, "tool"), *kind = json_object_get(root, "kind");
    if (!json_is_string(tool) || strcmp(json_string_value(tool), "gpuqual") != 0 || !json_is_string(kind))
        return gq_err_set(err, GQ_E_USAGE,
                          "not a gpuqual snapshot (expected \"tool\":\"gpuqual\" and \"kind\":\"%s\"; "
                          "record one with gpuqual topo --save-snapshot FILE)",
                          GQ_SNAPSHOT_KIND);
    const char *k = json_string_value(kind);
    int readable;
    if (!strcmp(k, GQ_SNAPSHOT_KIND))
        readable = GQ_SNAPSHOT_SCHEMA;
    else if (!strcmp(k, "topo"))
        readable = GQ_SCHEMA_VERSION;
    else
        return gq_err_set(err, GQ_E_USAGE, "not a gpuqual snapshot (\"kind\" is \"%s\", expected \"%s\")", k,
                          GQ_SNAPSHOT_KIND);
    json_t *sv = json_object_get(root, "schema_version");
    if (!sv)
        return gq_err_set(err, GQ_E_USAGE, "field 'schema_version' is missing");
    if (!json_is_integer(sv) || json_integer_value(sv) < 1)
        return gq_err_set(err, GQ_E_USAGE, "field 'schema_version' must be an integer >= 1");
    if (json_integer_value(sv) > readable)
        return gq_err_set(err, GQ_E_USAGE,
                          "schema_version %lld is newer than this gpuqual reads (%d); use a newer gpuqual",
                          (long long)json_integer_value(sv), readable);
    return gq_topo_from_json(root, t, err);
}

int gq_snapshot_load(const char *path, gq_topo *t, gq_err *err)
{
    json_error_t je;
    struct stat st;
    json_t *root = NULL;
    int rc = GQ_OK;
    gq_topo_init(t);
    /* a file too large is refused from its size (a directory below, by name) */
    if (stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
        gq_infile_check_size(path, "a snapshot (topo --save-snapshot)", GQ_INFILE_TEXT_MAX, err))
        return err ? err->code : GQ_E_USAGE;
    FILE *f = fopen(path, "r");
    if (!f)
        return gq_err_set(err, GQ_E_IO, "cannot read snapshot '%s': %s", path, strerror(errno));
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        rc = gq_err_set(err, GQ_E_IO, "cannot read snapshot '%s': it is a directory", path);
        goto out;
    }
    bool over = false;
    root = gq_json_loadf_max(f, JSON_REJECT_DUPLICATES, GQ_INFILE_TEXT_MAX, &over, &je);
    if (!root && over) {
        rc = gq_err_set(err, GQ_E_USAGE, "snapshot '%s' holds more than %s; is it the right file?", path,
                        GQ_INFILE_TEXT_MAX_TEXT);
        goto out;
    }
    if (!root) {
        rc = gq_err_set(err, GQ_E_USAGE, "snapshot '%s' is not valid JSON: %s (line %d, column %d)", path,
                        je.text, je.line, je.column);
        goto out;
    }
    if ((rc = snapshot_from_json(root, t, err))) {
        gq_err_prefix(err, "snapshot '%s'", path);
        goto out;
    }
    const char *base = strrchr(path, '/');
    snprintf(t->source, sizeof t->source, "snapshot:%.*s", (int)sizeof t->source - 10,
             base ? base + 1 : path);
out:
    json_decref(root);
    fclose(f);
    return rc;
}
