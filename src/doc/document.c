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
#include "core/interrupt.h"
#include "core/json.h"
#include "core/outfile.h"
#include "core/runid.h"
#include "core/units.h"
#include "doc/card_codec.h"
#include "doc/document.h"
#include "doc/analysis_json.h"
#include "doc/decode.h"

/* ---- the root: host and GPUs --------------------------------------------- */

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
        gq_gpu_identity_to_json(g, o);
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
    json_object_set_new(root, "run_id", json_string(d->run_id ? d->run_id : gq_run_id_current()));
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

/* Read and parse path: duplicate keys refused; a directory named as one;
 * FIFOs and /dev/fd/N read as streams. */
static int load_json(const char *path, json_t **out, gq_err *err)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return gq_err_set(err, GQ_E_IO, "cannot read '%s': %s", path, strerror(errno));
    if (S_ISDIR(st.st_mode))
        return gq_err_set(err, GQ_E_USAGE, "'%s' is a directory, expected a gpuqual JSON document", path);
    int rc = gq_infile_check_size(path, "a gpuqual document", GQ_INFILE_DOC_MAX, err);
    if (rc)
        return rc;
    FILE *f = fopen(path, "r");
    if (!f)
        return gq_err_set(err, GQ_E_IO, "cannot read '%s': %s", path, strerror(errno));
    json_error_t je;
    bool over = false; /* a stream larger than a file may be */
    *out = gq_json_loadf_max(f, JSON_REJECT_DUPLICATES, GQ_INFILE_DOC_MAX, &over, &je);
    int e = ferror(f) ? errno : 0;
    fclose(f);
    if (*out)
        return GQ_OK;
    if (over)
        return gq_err_set(err, GQ_E_USAGE,
                          "'%s' holds more than %s, the limit for a gpuqual document; is it the right file?",
                          path, GQ_INFILE_DOC_MAX_TEXT);
    if (gq_interrupt_requested())
        return gq_err_set(err, GQ_E_INTR, "reading '%s' was interrupted", path);
    if (e)
        return gq_err_set(err, GQ_E_IO, "cannot read '%s': %s", path, strerror(e));
    if (strstr(je.text, "duplicate object key"))
        return gq_err_set(err, GQ_E_USAGE, "%s: line %d: %s, expected each key once", path, je.line, je.text);
    return gq_err_set(err, GQ_E_USAGE, "'%s' is not JSON (line %d: %s)", path, je.line, je.text);
}

/* tool and schema_version: a gpuqual document this version reads. */
static int check_header(const char *path, const json_t *j, gq_err *err)
{
    const char *tool = json_string_value(json_object_get(j, "tool"));
    json_t *sv = json_object_get(j, "schema_version");
    if (!json_is_object(j) || !tool || strcmp(tool, "gpuqual") != 0) {
        if (json_is_object(j) && json_object_get(j, "nvbandwidth"))
            return gq_err_set(err, GQ_E_USAGE, "'%s' is nvbandwidth's JSON, not a gpuqual document", path);
        return gq_err_set(err, GQ_E_USAGE, "'%s' is not a gpuqual document (no \"tool\": \"gpuqual\")", path);
    }
    if (!json_is_integer(sv) || json_integer_value(sv) < 1)
        return gq_err_set(err, GQ_E_USAGE,
                          "%s: schema_version: missing or not a positive integer, expected 1..%d", path,
                          GQ_SCHEMA_VERSION);
    if (json_integer_value(sv) > GQ_SCHEMA_VERSION)
        return gq_err_set(
            err, GQ_E_USAGE,
            "'%s' has schema_version %lld, newer than this gpuqual reads (%d); use a newer gpuqual", path,
            (long long)json_integer_value(sv), GQ_SCHEMA_VERSION);
    json_t *rid = json_object_get(j, "run_id");
    if (rid && !json_is_null(rid) && !json_is_string(rid))
        return gq_err_set(err, GQ_E_USAGE,
                          "%s: run_id: is not a string, expected \"YYYYMMDDTHHMMSSZ-xxxxxxxx\"", path);
    return GQ_OK;
}

/* The document's GPU count: its gpus[] (indices 0..n-1, each once), or -1
 * when it has none. */
static int doc_gpus(const char *path, const json_t *j, int *ngpu, gq_err *err)
{
    *ngpu = -1;
    json_t *g = json_object_get(j, "gpus");
    if (!g || json_is_null(g))
        return GQ_OK;
    if (!json_is_array(g) || json_array_size(g) > GQ_MAX_GPUS)
        return gq_err_set(err, GQ_E_USAGE, "%s: gpus: expected a list of at most %d GPUs", path, GQ_MAX_GPUS);
    bool seen[GQ_MAX_GPUS] = {0};
    size_t i;
    json_t *x;
    json_array_foreach(g, i, x)
    {
        json_t *ix = json_object_get(x, "index");
        if (!json_is_object(x) || !json_is_integer(ix) || json_integer_value(ix) < 0 ||
            json_integer_value(ix) >= (json_int_t)json_array_size(g))
            return gq_err_set(err, GQ_E_USAGE, "%s: gpus[%zu].index: expected a GPU index 0..%zu", path, i,
                              json_array_size(g) - 1);
        if (seen[json_integer_value(ix)])
            return gq_err_set(err, GQ_E_USAGE,
                              "%s: gpus[%zu].index: GPU %lld is repeated, expected each GPU once", path, i,
                              (long long)json_integer_value(ix));
        seen[json_integer_value(ix)] = true;
    }
    *ngpu = (int)json_array_size(g);
    return GQ_OK;
}

/* A GPU a record names that the document does not have: its key, or NULL. */
static const char *gpu_beyond(const gq_record *r, int ngpu, int *which)
{
    if (ngpu < 0)
        return NULL;
    if (r->src.kind == GQ_EP_GPU && r->src.index != GQ_EP_MANY && r->src.index >= ngpu)
        return *which = r->src.index, "src";
    if (r->dst.kind == GQ_EP_GPU && r->dst.index != GQ_EP_MANY && r->dst.index >= ngpu)
        return *which = r->dst.index, "dst";
    if (r->exec_gpu >= ngpu)
        return *which = r->exec_gpu, "exec_gpu";
    for (int k = 0; k < r->ngpus; k++)
        if (r->gpus[k] >= ngpu)
            return *which = r->gpus[k], "gpus";
    return NULL;
}

int gq_doc_records_from_json(const char *path, const json_t *recs, int ngpu, gq_recordset *out, gq_err *err)
{
    if (!recs || json_is_null(recs))
        return GQ_OK;
    if (!json_is_array(recs))
        return gq_err_set(err, GQ_E_USAGE, "%s: records: expected a list of records", path);
    size_t i;
    json_t *x;
    json_array_foreach(recs, i, x)
    {
        gq_record r;
        gq_err rerr = {0};
        if (gq_record_from_json(x, &r, &rerr))
            return gq_err_set(err, GQ_E_USAGE, "%s: records[%zu].%s", path, i, rerr.msg);
        int g = 0;
        const char *key = gpu_beyond(&r, ngpu, &g);
        if (key)
            return gq_err_set(err, GQ_E_USAGE, "%s: records[%zu].%s: GPU %d is out of range, expected 0..%d",
                              path, i, key, g, ngpu - 1);
        int rc = gq_records_push(out, &r);
        if (rc)
            return gq_err_set(err, rc, "out of memory reading '%s'", path);
    }
    return GQ_OK;
}

/* The saved topology, when present, decoded in full; its GPU count must
 * be the document's. */
static int doc_topology(const char *path, const json_t *j, int *ngpu, gq_err *err)
{
    const json_t *tj = json_object_get(j, "topology");
    if (!tj || json_is_null(tj))
        return GQ_OK;
    gq_topo *t = malloc(sizeof *t);
    if (!t)
        return gq_err_set(err, GQ_E_NOMEM, "out of memory reading '%s'", path);
    gq_err terr = {0};
    int rc = GQ_OK;
    if (gq_topo_from_json(tj, t, &terr) != GQ_OK)
        rc = gq_err_set(err, GQ_E_USAGE, "%s: topology: %s", path, terr.msg);
    else if (*ngpu >= 0 && t->ngpu != *ngpu)
        rc = gq_err_set(err, GQ_E_USAGE, "%s: topology.gpus: holds %d GPUs, expected the document's %d", path,
                        t->ngpu, *ngpu);
    else
        *ngpu = t->ngpu;
    free(t);
    return rc;
}

int gq_doc_check_sections(const char *path, const json_t *j, int ngpu, gq_err *err)
{
    int rc = GQ_OK;
    if (json_object_get(j, "domains")) {
        gq_domains *d = malloc(sizeof *d);
        if (!d)
            return gq_err_set(err, GQ_E_NOMEM, "out of memory reading '%s'", path);
        rc = gq_domains_from_json(path, j, ngpu, d, err);
        free(d);
    }
    if (!rc && json_object_get(j, "bottlenecks")) {
        gq_bottlenecks *b = malloc(sizeof *b);
        if (!b)
            return gq_err_set(err, GQ_E_NOMEM, "out of memory reading '%s'", path);
        rc = gq_bottlenecks_from_json(path, j, ngpu, b, err);
        free(b);
    }
    /* the card section's shape; its fields are the card codec's (gq_doc_load) */
    const json_t *card = json_object_get(j, "card");
    if (!rc && card && !json_is_object(card))
        rc = gq_dec_bad(path, "card", card, "an object", err);
    return rc;
}

int gq_doc_load(const char *path, json_t **root, gq_recordset *out_records, gq_err *err)
{
    *root = NULL;
    json_t *j = NULL;
    int rc = load_json(path, &j, err), ngpu = -1;
    if (rc)
        return rc;
    if ((rc = check_header(path, j, err)) || (rc = doc_gpus(path, j, &ngpu, err)) ||
        (rc = doc_topology(path, j, &ngpu, err)) || (rc = gq_doc_check_sections(path, j, ngpu, err)))
        goto out;
    /* the card section read by the card's one codec, fail closed, as report
     * reads it: whatever report refuses, every command that loads a document
     * (compare, place --input, kv --input) refuses too */
    json_t *card = json_object_get(j, "card");
    if (card && (rc = gq_card_read(card, path, err)))
        goto out;
    if (out_records &&
        (rc = gq_doc_records_from_json(path, json_object_get(j, "records"), ngpu, out_records, err)))
        gq_records_free(out_records);
out:
    if (rc)
        json_decref(j);
    else
        *root = j;
    return rc;
}

int gq_doc_write_file(const json_t *j, const char *path, gq_err *err)
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
