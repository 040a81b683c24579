/* A saved fleet document read back (doc/fleet_doc.h). */
#include "doc/fleet_doc.h"

#include <string.h>

int gq_fleet_doc_read(const json_t *root, const char *path, gq_fleet_doc *out, gq_err *err)
{
    memset(out, 0, sizeof *out);
    const json_t *fl = json_object_get(root, "fleet");
    if (!json_is_object(fl))
        return gq_err_set(err, GQ_E_USAGE, "%s: fleet: expected the fleet section (an object)", path);
    const json_t *nodes = json_object_get(fl, "nodes"), *th = json_object_get(fl, "threshold_pct");
    const json_t *tc = json_object_get(fl, "threshold_c");
    if (!json_is_array(nodes) || json_array_size(nodes) == 0 || json_array_size(nodes) > (1 << 24))
        return gq_err_set(err, GQ_E_USAGE, "%s: fleet.nodes: expected a list of 1 or more nodes", path);
    double pct = json_number_value(th);
    if (!json_is_number(th) || !(pct > 0 && pct < 1000))
        return gq_err_set(err, GQ_E_USAGE,
                          "%s: fleet.threshold_pct: expected a number above 0 and below 1000", path);
    out->nodes = nodes;
    out->n = (int)json_array_size(nodes);
    out->threshold_pct = pct;
    if (json_is_number(tc) && json_number_value(tc) > 0 && json_number_value(tc) < 1000)
        out->threshold_c = json_number_value(tc);
    return GQ_OK;
}

int gq_fleet_doc_payload(const gq_fleet_doc *d, const char *path, int i, json_t **p, bool *is_error,
                         gq_err *err)
{
    *p = NULL;
    const json_t *e = json_array_get(d->nodes, (size_t)i);
    if (!json_is_object(e))
        return gq_err_set(err, GQ_E_USAGE, "%s: fleet.nodes[%d]: expected an object", path, i);
    const json_t *host = json_object_get(e, "host");
    json_t *h = json_is_string(host) ? json_incref((json_t *)host) : json_null();
    *is_error = json_is_string(json_object_get(e, "error"));
    if (*is_error)
        *p = json_pack("{s:i, s:o, s:O, s:i}", "rank", i, "host", h, "error", json_object_get(e, "error"),
                       "status", GQ_E_BACKEND);
    else
        *p = json_pack("{s:i, s:o, s:{s:s, s:i, s:s, s:O}}", "rank", i, "host", h, "summary", "tool",
                       "gpuqual", "schema_version", 2, "kind", "fleet-node", "node", e);
    return *p ? GQ_OK : gq_err_set(err, GQ_E_NOMEM, "out of memory");
}
