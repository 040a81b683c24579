/* Saved documents as JSON (docs/json.md), and atomic JSON files. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/infile.h"
#include "core/outfile.h"
#include "core/units.h"
#include "render/render.h"
#include "render/render_util.h"

/* ---- small helpers shared by the renderers (render_util.h) --------------- */

static json_t *host_json(const gq_topo *t)
{
    json_t *h = json_object();
    json_object_set_new(h, "hostname", json_string(t->hostname));
    json_object_set_new(h, "source", json_string(t->source));
    json_object_set_new(h, "simulated", json_boolean(t->simulated));
    json_object_set_new(h, "driver_version", json_string(t->driver_version));
    json_object_set_new(h, "cuda_driver_version",
                        t->cuda_driver_version >= 0 ? json_integer(t->cuda_driver_version) : json_null());
    json_object_set_new(h, "cuda_runtime_version",
                        t->cuda_runtime_version >= 0 ? json_integer(t->cuda_runtime_version) : json_null());
    json_object_set_new(h, "nvml_loaded", json_boolean(t->nvml_loaded));
    json_object_set_new(h, "cpu_model", json_string(t->cpu_model));
    json_object_set_new(h, "sockets", t->sockets >= 0 ? json_integer(t->sockets) : json_null());
    json_object_set_new(h, "cores", t->cores >= 0 ? json_integer(t->cores) : json_null());
    json_object_set_new(h, "numa_nodes", json_integer(t->numa_nodes));
    json_object_set_new(h, "is_vm", json_boolean(t->is_vm));
    json_object_set_new(h, "hypervisor", json_string(t->hypervisor));
    return h;
}

static json_t *gpus_json(const gq_topo *t)
{
    json_t *a = json_array();
    for (int i = 0; i < t->ngpu && i < GQ_MAX_GPUS; i++) {
        const gq_gpu_info *g = &t->gpu[i];
        json_t *o = json_object();
        json_object_set_new(o, "index", json_integer(g->index));
        json_object_set_new(o, "name", json_string(g->name));
        json_object_set_new(o, "uuid", json_string(g->uuid));
        json_object_set_new(o, "pci_bus_id", json_string(g->pci_bus_id));
        json_object_set_new(o, "mem_bytes", json_integer((json_int_t)g->mem_bytes));
        json_object_set_new(o, "pcie_gen",
                            g->pcie_gen_cur >= 0 ? json_integer(g->pcie_gen_cur) : json_null());
        json_object_set_new(o, "pcie_width",
                            g->pcie_width_cur >= 0 ? json_integer(g->pcie_width_cur) : json_null());
        json_object_set_new(o, "pcie_gen_max",
                            g->pcie_gen_max >= 0 ? json_integer(g->pcie_gen_max) : json_null());
        json_object_set_new(o, "pcie_width_max",
                            g->pcie_width_max >= 0 ? json_integer(g->pcie_width_max) : json_null());
        json_object_set_new(o, "pcie_gbps", gq_json_num_if(g->pcie_gbps, g->pcie_gbps > 0));
        json_object_set_new(o, "numa_node", g->numa_node >= 0 ? json_integer(g->numa_node) : json_null());
        json_object_set_new(o, "nvlinks",
                            g->nvlinks_total >= 0 ? json_integer(g->nvlinks_total) : json_null());
        json_object_set_new(o, "power_limit_w", gq_json_num_if(g->power_limit_w, g->power_limit_w > 0));
        json_array_append_new(a, o);
    }
    return a;
}

json_t *gq_doc_to_json(const gq_doc *d)
{
    json_t *root = json_object();
    if (!root)
        return NULL;
    char ts[40];
    bool simulated = d->simulated || (d->topo && d->topo->simulated);
    json_object_set_new(root, "tool", json_string("gpuqual"));
    json_object_set_new(root, "schema_version", json_integer(GQ_SCHEMA_VERSION));
    json_object_set_new(root, "kind", json_string(d->kind ? d->kind : "run"));
    json_object_set_new(root, "version", json_string(d->version ? d->version : "unknown"));
    json_object_set_new(root, "git", json_string(d->git ? d->git : "unknown"));
    json_object_set_new(root, "timestamp", json_string(gq_iso_time(gq_now_unix(), ts, sizeof ts)));
    json_object_set_new(root, "simulated", json_boolean(simulated));
    json_object_set_new(root, "incomplete", json_boolean(d->incomplete));
    json_object_set_new(root, "options", d->options ? json_deep_copy(d->options) : json_object());
    if (d->topo) {
        json_object_set_new(root, "host", host_json(d->topo));
        json_object_set_new(root, "gpus", gpus_json(d->topo));
        json_t *t = gq_topo_to_json(d->topo);
        if (t)
            json_object_set_new(root, "topology", t);
    }
    json_t *recs = json_array();
    for (int i = 0; d->records && i < d->records->n; i++) {
        json_t *r = gq_record_to_json(&d->records->v[i]);
        if (!r) {
            json_decref(recs);
            json_decref(root);
            return NULL;
        }
        json_array_append_new(recs, r);
    }
    json_object_set_new(root, "records", recs);
    if (d->sections && json_is_object(d->sections)) {
        const char *k;
        json_t *v;
        json_object_foreach(d->sections, k, v) json_object_set(root, k, v);
    }
    return root;
}

int gq_doc_load(const char *path, json_t **root, gq_recordset *out_records, gq_err *err)
{
    *root = NULL;
    json_error_t je;
    int crc = gq_infile_check(path, "a gpuqual JSON document", err);
    if (crc)
        return crc;
    json_t *j = json_load_file(path, 0, &je);
    if (!j) {
        if (access(path, R_OK) != 0)
            return gq_err_set(err, GQ_E_IO, "cannot read '%s': %s", path, strerror(errno));
        return gq_err_set(err, GQ_E_USAGE, "'%s' is not JSON (line %d: %s)", path, je.line, je.text);
    }
    int rc = GQ_OK;
    const char *tool = json_string_value(json_object_get(j, "tool"));
    json_t *sv = json_object_get(j, "schema_version");
    if (!json_is_object(j) || !tool || strcmp(tool, "gpuqual") != 0) {
        if (json_is_object(j) && json_object_get(j, "nvbandwidth"))
            rc = gq_err_set(err, GQ_E_USAGE, "'%s' is nvbandwidth's JSON, not a gpuqual document", path);
        else
            rc = gq_err_set(err, GQ_E_USAGE, "'%s' is not a gpuqual document (no \"tool\": \"gpuqual\")",
                            path);
        goto out;
    }
    if (!json_is_integer(sv) || json_integer_value(sv) < 1) {
        rc = gq_err_set(err, GQ_E_USAGE, "'%s' has no valid schema_version", path);
        goto out;
    }
    if (json_integer_value(sv) > GQ_SCHEMA_VERSION) {
        rc = gq_err_set(
            err, GQ_E_USAGE,
            "'%s' has schema_version %lld, newer than this gpuqual reads (%d); use a newer gpuqual", path,
            (long long)json_integer_value(sv), GQ_SCHEMA_VERSION);
        goto out;
    }
    if (out_records) {
        json_t *recs = json_object_get(j, "records");
        if (recs && !json_is_array(recs)) {
            rc = gq_err_set(err, GQ_E_USAGE, "'%s': \"records\" must be a list", path);
            goto out;
        }
        size_t i;
        json_t *x;
        json_array_foreach(recs, i, x)
        {
            gq_record r;
            gq_err rerr = {0};
            if (gq_record_from_json(x, &r, &rerr)) {
                rc = gq_err_set(err, GQ_E_USAGE, "'%s': record %zu: %s", path, i, rerr.msg);
                goto out;
            }
            if ((rc = gq_records_push(out_records, &r))) {
                gq_err_set(err, rc, "out of memory reading '%s'", path);
                goto out;
            }
        }
    }
out:
    if (rc)
        json_decref(j);
    else
        *root = j;
    return rc;
}

int gq_json_write_file(const json_t *j, const char *path, gq_err *err)
{
    if (!strcmp(path, "-")) {
        errno = 0;
        if (json_dumpf(j, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER) != 0 || fputc('\n', stdout) == EOF ||
            fflush(stdout) != 0)
            return gq_err_set(err, GQ_E_IO, "writing the JSON to stdout failed: %s",
                              errno ? strerror(errno) : "write error");
        return GQ_OK;
    }
    gq_outfile o;
    int rc = gq_outfile_open(&o, path, err);
    if (rc)
        return rc;
    int bad = json_dumpf(j, o.f, JSON_INDENT(2) | JSON_PRESERVE_ORDER) != 0;
    bad |= fputc('\n', o.f) == EOF;
    if (bad) {
        int e = errno;
        gq_outfile_abort(&o);
        return gq_err_set(err, GQ_E_IO, "writing '%s' failed: %s", path, e ? strerror(e) : "write error");
    }
    return gq_outfile_commit(&o, err);
}
