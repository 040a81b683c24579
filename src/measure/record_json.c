/* Records as JSON (the contract in core/record.h; field by field in
 * docs/json.md): the codec the journal writes and reads, and that every
 * saved document's "records" array uses. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "measure/record_json.h"
#include "core/json.h"
#include "measure/sanity.h"

const char *gq_rec_endpoint(gq_endpoint e, char *buf, size_t n)
{
    if (e.kind == GQ_EP_GPU) {
        if (e.index == GQ_EP_MANY)
            snprintf(buf, n, "gpu:*");
        else
            snprintf(buf, n, "gpu:%d", e.index);
    } else if (e.index == GQ_EP_MANY) {
        snprintf(buf, n, "host:*");
    } else if (e.index == GQ_NUMA_LOCAL) {
        snprintf(buf, n, "host:local");
    } else {
        snprintf(buf, n, "host:%d", e.index);
    }
    return buf;
}

/* The inverse; 0 on success, -1 when s is none of those forms. */
static int parse_endpoint(const char *s, gq_endpoint *e)
{
    if (!s)
        return -1;
    const char *rest;
    if (!strncmp(s, "gpu:", 4)) {
        e->kind = GQ_EP_GPU;
        rest = s + 4;
    } else if (!strncmp(s, "host:", 5)) {
        e->kind = GQ_EP_HOST;
        rest = s + 5;
        if (!strcmp(rest, "local")) {
            e->index = GQ_NUMA_LOCAL;
            return 0;
        }
    } else {
        return -1;
    }
    if (!strcmp(rest, "*")) {
        e->index = GQ_EP_MANY;
        return 0;
    }
    char *end;
    long v = strtol(rest, &end, 10);
    if (end == rest || *end || v < 0 || v > 1 << 20)
        return -1;
    e->index = (int)v;
    return 0;
}

const char *gq_iso_time(double unix_s, char *buf, size_t n)
{
    if (!(unix_s > 0)) {
        snprintf(buf, n, "1970-01-01T00:00:00.000Z");
        return buf;
    }
    time_t sec = (time_t)floor(unix_s);
    int ms = (int)((unix_s - (double)sec) * 1000.0 + 0.5);
    if (ms >= 1000) {
        sec++;
        ms -= 1000;
    }
    struct tm tm;
    gmtime_r(&sec, &tm);
    char base[32];
    strftime(base, sizeof base, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf, n, "%s.%03dZ", base, ms);
    return buf;
}

static int parse_iso_time(const char *s, double *out)
{
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    double sec = 0;
    int used = 0;
    if (!s || sscanf(s, "%4d-%2d-%2dT%2d:%2d:%lf%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
                     &tm.tm_min, &sec, &used) != 6)
        return -1;
    if (s[used] != 'Z' && s[used] != 0)
        return -1;
    /* Each field within its calendar range (and the seconds finite) before
     * any conversion: "3.3e70" seconds would overflow the int. */
    if (tm.tm_mon < 1 || tm.tm_mon > 12 || tm.tm_mday < 1 || tm.tm_mday > 31 || tm.tm_hour < 0 ||
        tm.tm_hour > 23 || tm.tm_min < 0 || tm.tm_min > 59 || !(sec >= 0 && sec < 61))
        return -1;
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    tm.tm_sec = (int)floor(sec);
    time_t t = timegm(&tm);
    if (t == (time_t)-1)
        return -1;
    *out = (double)t + (sec - floor(sec));
    return 0;
}

static const struct {
    unsigned flag;
    const char *name;
} flag_names[] = {
    {GQ_FLAG_IMPOSSIBLE, "impossible"},
    {GQ_FLAG_OVERLAP, "overlap"},
    {GQ_FLAG_VERIFY_FAILED, "verify_failed"},
    {GQ_FLAG_ERROR, "error"},
    {GQ_FLAG_SPREAD, "spread"},
    {GQ_FLAG_NUMA_MISPLACED, "numa_misplaced"},
    {GQ_FLAG_INCOMPLETE, "incomplete"},
    {GQ_FLAG_OVERLAP_RETRIED, "overlap_retried"},
    {GQ_FLAG_CONTAMINATED, "contaminated"},
};

static const char *method_names[] = {"ce", "sm", "staged", "driver_staged"};
static const char *dir_names[] = {"h2d", "d2h", "p2p", "local"};

/* ---- record <-> JSON ----------------------------------------------------- */

static json_t *stat_json(const gq_stat *s)
{
    json_t *o = json_object();
    json_object_set_new(o, "median", gq_json_num(s->median));
    json_object_set_new(o, "min", gq_json_num(s->min));
    json_object_set_new(o, "max", gq_json_num(s->max));
    json_object_set_new(o, "spread", gq_json_num(s->spread));
    return o;
}

static int bad(gq_err *err, const char *key, const json_t *v, const char *expected);

/* One entry of the summary, "KIND gpu G[ pid P][ NAME]: DETAIL", as
 * {"kind","gpu","pid","name","detail"} (core/record.h). */
static json_t *contamination_entry(const char *e, size_t len)
{
    char buf[240], kind[16] = "", name[64] = "";
    snprintf(buf, sizeof buf, "%.*s", (int)len, e);
    char *colon = strstr(buf, ": ");
    const char *detail = colon ? colon + 2 : "";
    if (colon)
        *colon = 0;
    int gpu = -1, pid = -1, used = 0;
    if (sscanf(buf, "%15s gpu %d%n", kind, &gpu, &used) < 2)
        return json_pack("{s:s, s:n, s:n, s:n, s:s#}", "kind", "process", "gpu", "pid", "name", "detail", e,
                         (int)len);
    const char *rest = buf + used;
    int u2 = 0;
    if (sscanf(rest, " pid %d%n", &pid, &u2) == 1)
        rest += u2;
    sscanf(rest, " %63s", name);
    return json_pack("{s:s, s:i, s:o, s:o, s:s}", "kind", kind, "gpu", gpu, "pid",
                     pid >= 0 ? json_integer(pid) : json_null(), "name",
                     name[0] ? json_string(name) : json_null(), "detail", detail);
}

static json_t *contaminated_json(const char *s)
{
    if (!s[0])
        return json_null();
    json_t *a = json_array();
    while (*s) {
        const char *end = strstr(s, "; ");
        size_t len = end ? (size_t)(end - s) : strlen(s);
        json_t *e = contamination_entry(s, len);
        if (e)
            json_array_append_new(a, e);
        s += len;
        if (*s)
            s += 2;
    }
    return a;
}

/* The "contaminated" array back into the summary (null or absent: clean). */
static int read_contaminated(const json_t *j, gq_record *r, gq_err *err)
{
    json_t *v = json_object_get(j, "contaminated");
    if (!v || json_is_null(v))
        return GQ_OK;
    if (!json_is_array(v))
        return bad(err, "contaminated", v, "null or a list of {kind, gpu, pid, name, detail}");
    bool was_valid = r->valid;
    size_t i;
    json_t *x;
    json_array_foreach(v, i, x)
    {
        char path[64];
        snprintf(path, sizeof path, "contaminated[%zu]", i);
        if (!json_is_object(x))
            return bad(err, path, x, "an object {kind, gpu, pid, name, detail}");
        json_t *k = json_object_get(x, "kind"), *g = json_object_get(x, "gpu"),
               *p = json_object_get(x, "pid");
        json_t *n = json_object_get(x, "name"), *d = json_object_get(x, "detail");
        snprintf(path, sizeof path, "contaminated[%zu].kind", i);
        if (!json_is_string(k) || !gq_contamination_kind_ok(json_string_value(k)))
            return bad(err, path, k, "one of \"process\", \"utilization\", \"memory\", \"lock\", \"sim\"");
        snprintf(path, sizeof path, "contaminated[%zu].gpu", i);
        if (json_is_null(g) && json_is_string(d)) {
            /* an entry the writer could not read as "KIND gpu G" (cut at the summary's size):
             * kept as its text, so it is written back the same */
            gq_record_contaminate_raw(r, json_string_value(d));
            continue;
        }
        if (!json_is_integer(g) || json_integer_value(g) < 0 || json_integer_value(g) >= GQ_MAX_GPUS)
            return bad(err, path, g, "a GPU index 0..63, or null for an entry cut short");
        snprintf(path, sizeof path, "contaminated[%zu].pid", i);
        if (p && !json_is_null(p) && !json_is_integer(p))
            return bad(err, path, p, "a process id or null");
        snprintf(path, sizeof path, "contaminated[%zu].name", i);
        if (n && !json_is_null(n) && !json_is_string(n))
            return bad(err, path, n, "a string or null");
        snprintf(path, sizeof path, "contaminated[%zu].detail", i);
        if (!json_is_string(d))
            return bad(err, path, d, "a string");
        gq_record_contaminate(r, json_string_value(k), (int)json_integer_value(g),
                              json_is_integer(p) ? (int)json_integer_value(p) : -1, json_string_value(n),
                              json_string_value(d));
    }
    if (was_valid && json_array_size(v) > 0)
        return gq_err_set(err, GQ_E_USAGE, "valid: is true on a contaminated record, expected false");
    return GQ_OK;
}

static bool has_host(const gq_record *r)
{
    return r->src.kind == GQ_EP_HOST || r->dst.kind == GQ_EP_HOST;
}

json_t *gq_record_to_json(const gq_record *r)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    char a[32], b[32], ts[40];
    json_object_set_new(o, "test", json_string(r->test));
    json_object_set_new(o, "method", json_string(gq_method_name(r->method)));
    json_object_set_new(o, "src", json_string(gq_rec_endpoint(r->src, a, sizeof a)));
    json_object_set_new(o, "dst", json_string(gq_rec_endpoint(r->dst, b, sizeof b)));
    json_object_set_new(o, "direction", json_string(gq_direction_name(r->direction)));
    if (r->aggregate || r->sum) {
        json_t *d = json_array();
        for (int k = 0; k < 4; k++)
            if (r->dirs & (1u << k))
                json_array_append_new(d, json_string(dir_names[k]));
        json_object_set_new(o, "directions", d);
    }
    json_object_set_new(o, "exec_gpu", r->exec_gpu >= 0 ? json_integer(r->exec_gpu) : json_null());
    json_object_set_new(o, "bytes", json_integer((json_int_t)r->bytes));
    json_object_set_new(o, "rounds", json_integer(r->rounds));
    json_object_set_new(o, r->is_latency ? "latency_ns" : "gbps", stat_json(&r->value));
    json_t *sm = json_array();
    for (int i = 0; i < r->value.n && i < GQ_MAX_ROUNDS; i++)
        json_array_append_new(sm, gq_json_num(r->samples[i]));
    json_object_set_new(o, "samples", sm);
    json_object_set_new(o, "valid", json_boolean(r->valid));
    json_t *fl = json_array();
    for (size_t i = 0; i < sizeof flag_names / sizeof flag_names[0]; i++)
        if (r->flags & flag_names[i].flag)
            json_array_append_new(fl, json_string(flag_names[i].name));
    json_object_set_new(o, "flags", fl);
    if (r->error[0])
        json_object_set_new(o, "error", json_string(r->error));
    json_object_set_new(o, "capacity_gbps", gq_json_num_if(r->capacity_gbps, r->capacity_gbps > 0));
    json_object_set_new(o, "aggregate", json_boolean(r->aggregate));
    json_object_set_new(o, "sum", json_boolean(r->sum));
    json_t *g = json_array();
    for (int i = 0; i < r->ngpus && i < GQ_MAX_GPUS; i++)
        json_array_append_new(g, json_integer(r->gpus[i]));
    json_object_set_new(o, "gpus", g);
    json_object_set_new(o, "overlap", gq_json_num_if(r->overlap, r->overlap >= 0));
    json_object_set_new(o, "group", json_integer(r->group));
    json_object_set_new(o, "flow_tag", r->flow_tag >= 0 ? json_integer(r->flow_tag) : json_null());
    if (!has_host(r))
        json_object_set_new(o, "host_numa_requested", json_null());
    else if (r->host_numa_req < 0)
        json_object_set_new(o, "host_numa_requested", json_string("local"));
    else
        json_object_set_new(o, "host_numa_requested", json_integer(r->host_numa_req));
    if (r->host_numa_actual == -2)
        json_object_set_new(o, "host_numa_actual", json_string("mixed"));
    else if (r->host_numa_actual >= 0)
        json_object_set_new(o, "host_numa_actual", json_integer(r->host_numa_actual));
    else
        json_object_set_new(o, "host_numa_actual", json_null());
    json_object_set_new(o, "window_s", json_real(r->window_s));
    json_object_set_new(o, "timestamp", json_string(gq_iso_time(r->timestamp, ts, sizeof ts)));
    json_object_set_new(o, "simulated", json_boolean(r->simulated));
    json_object_set_new(o, "contaminated", contaminated_json(r->contaminated));
    return o;
}

/* Decoding fails closed: every message is "KEY: expected WHAT" with KEY the
 * path inside the record (gbps.median), so a caller prefixes the file and
 * the record's own path (r.json: records[3].gbps.median: ...). */

static int need(const json_t *j, const char *key, json_t **v, gq_err *err)
{
    *v = json_object_get(j, key);
    if (!*v)
        return gq_err_set(err, GQ_E_USAGE, "%s: missing, expected a value", key);
    return GQ_OK;
}

static int bad(gq_err *err, const char *key, const json_t *v, const char *expected)
{
    if (json_is_string(v))
        return gq_err_set(err, GQ_E_USAGE, "%s: is \"%.40s\", expected %s", key, json_string_value(v),
                          expected);
    return gq_err_set(err, GQ_E_USAGE, "%s: is %s, expected %s", key, gq_json_type_word(v), expected);
}

static int get_stat(const json_t *o, gq_stat *s, const char *key, bool valid, gq_err *err)
{
    static const char *names[] = {"median", "min", "max", "spread"};
    double *dst[] = {&s->median, &s->min, &s->max, &s->spread};
    if (!json_is_object(o))
        return bad(err, key, o, "an object {median, min, max, spread}");
    for (int i = 0; i < 4; i++) {
        json_t *v = json_object_get(o, names[i]);
        char path[64];
        snprintf(path, sizeof path, "%s.%s", key, names[i]);
        /* the median is required; the rest, and an invalid record's median,
         * may be null (not measured) */
        if (json_is_number(v))
            *dst[i] = json_number_value(v);
        else if ((v == NULL && i > 0) || (json_is_null(v) && (i > 0 || !valid)))
            *dst[i] = NAN;
        else if (!v)
            return gq_err_set(err, GQ_E_USAGE, "%s: missing, expected a number", path);
        else
            return bad(err, path, v, "a number");
    }
    return GQ_OK;
}

static int lookup(const char *s, const char *const *names, int n)
{
    for (int i = 0; s && i < n; i++)
        if (!strcmp(s, names[i]))
            return i;
    return -1;
}

/* The record's identity: test, method, endpoints and directions. */
static int read_identity(const json_t *j, gq_record *r, gq_err *err)
{
    json_t *v;
    int rc;
    if ((rc = need(j, "test", &v, err)))
        return rc;
    if (!json_is_string(v) || json_string_length(v) == 0 || json_string_length(v) >= sizeof r->test)
        return bad(err, "test", v, "a test name of 1 to 63 characters");
    snprintf(r->test, sizeof r->test, "%s", json_string_value(v));
    if ((rc = need(j, "method", &v, err)))
        return rc;
    int m = lookup(json_string_value(v), method_names, 4);
    if (m < 0)
        return bad(err, "method", v, "one of \"ce\", \"sm\", \"staged\", \"driver_staged\"");
    r->method = (gq_method)m;
    static const char *eps[2] = {"src", "dst"};
    gq_endpoint *epd[2] = {&r->src, &r->dst};
    for (int i = 0; i < 2; i++) {
        if ((rc = need(j, eps[i], &v, err)))
            return rc;
        if (!json_is_string(v) || parse_endpoint(json_string_value(v), epd[i]))
            return bad(err, eps[i], v, "\"gpu:N\", \"host:N\", \"host:local\", \"gpu:*\" or \"host:*\"");
        if (epd[i]->kind == GQ_EP_GPU && epd[i]->index >= GQ_MAX_GPUS)
            return gq_err_set(err, GQ_E_USAGE, "%s: GPU %d is out of range, expected 0..%d", eps[i],
                              epd[i]->index, GQ_MAX_GPUS - 1);
    }
    if ((rc = need(j, "direction", &v, err)))
        return rc;
    int d = lookup(json_string_value(v), dir_names, 4);
    if (d < 0)
        return bad(err, "direction", v, "one of \"h2d\", \"d2h\", \"p2p\", \"local\"");
    r->direction = (gq_direction)d;
    r->dirs = 1u << d;
    json_t *dl = json_object_get(j, "directions");
    if (dl && !json_is_null(dl) && !json_is_array(dl))
        return bad(err, "directions", dl, "a list of directions");
    if (json_is_array(dl) && json_array_size(dl) > 0) {
        r->dirs = 0;
        size_t i;
        json_t *x;
        json_array_foreach(dl, i, x)
        {
            int k = lookup(json_string_value(x), dir_names, 4);
            char path[32];
            snprintf(path, sizeof path, "directions[%zu]", i);
            if (k < 0)
                return bad(err, path, x, "one of \"h2d\", \"d2h\", \"p2p\", \"local\"");
            r->dirs |= 1u << k;
        }
    }
    return GQ_OK;
}

/* The size, the rounds, the figure (gbps or latency_ns) and its samples. */
static int read_value(const json_t *j, gq_record *r, gq_err *err)
{
    json_t *v;
    int rc;
    json_t *gb = json_object_get(j, "gbps"), *lat = json_object_get(j, "latency_ns");
    if (!gb && !lat)
        return gq_err_set(err, GQ_E_USAGE, "gbps: missing, expected an object {median, ...} (or latency_ns)");
    r->is_latency = lat && !gb;
    if ((rc = need(j, "bytes", &v, err)))
        return rc;
    if (!json_is_integer(v) || json_integer_value(v) < (r->is_latency ? 0 : 1))
        return bad(err, "bytes", v, r->is_latency ? "an integer >= 0" : "an integer > 0");
    r->bytes = (uint64_t)json_integer_value(v);
    if ((rc = need(j, "rounds", &v, err)))
        return rc;
    if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > GQ_MAX_ROUNDS)
        return bad(err, "rounds", v, "an integer 0..64");
    r->rounds = (int)json_integer_value(v);
    json_t *valid = json_object_get(j, "valid");
    if ((rc = get_stat(r->is_latency ? lat : gb, &r->value, r->is_latency ? "latency_ns" : "gbps",
                       !json_is_false(valid), err)))
        return rc;
    r->value.n = r->rounds;
    json_t *sm = json_object_get(j, "samples");
    if (sm && !json_is_null(sm) && !json_is_array(sm))
        return bad(err, "samples", sm, "a list of numbers");
    if (json_is_array(sm)) {
        size_t i;
        json_t *x;
        int n = 0;
        json_array_foreach(sm, i, x)
        {
            char path[32];
            snprintf(path, sizeof path, "samples[%zu]", i);
            if (n >= GQ_MAX_ROUNDS)
                return gq_err_set(err, GQ_E_USAGE, "samples: holds more than %d values", GQ_MAX_ROUNDS);
            if (!json_is_number(x) && !json_is_null(x))
                return bad(err, path, x, "a number or null");
            r->samples[n++] = json_is_null(x) ? NAN : json_number_value(x);
        }
        r->value.n = n;
    }
    return GQ_OK;
}

/* 'valid' and the flags this version knows. */
static int read_flags(const json_t *j, gq_record *r, gq_err *err)
{
    json_t *v;
    int rc;
    if ((rc = need(j, "valid", &v, err)))
        return rc;
    if (!json_is_boolean(v))
        return bad(err, "valid", v, "true or false");
    r->valid = json_is_true(v);
    if ((rc = need(j, "flags", &v, err)))
        return rc;
    if (!json_is_array(v))
        return bad(err, "flags", v, "a list of flag names");
    size_t i;
    json_t *x;
    json_array_foreach(v, i, x)
    {
        char path[32];
        snprintf(path, sizeof path, "flags[%zu]", i);
        if (!json_is_string(x))
            return bad(err, path, x, "a flag name");
        /* flags added by later versions are ignored: 'valid' already says what they mean */
        for (size_t k = 0; k < sizeof flag_names / sizeof flag_names[0]; k++)
            if (!strcmp(json_string_value(x), flag_names[k].name))
                r->flags |= flag_names[k].flag;
    }
    return GQ_OK;
}

/* An optional integer field: absent or null leaves *out as it is. */
static int opt_int(const json_t *j, const char *key, int lo, int hi, int *out, gq_err *err)
{
    json_t *v = json_object_get(j, key);
    if (!v || json_is_null(v))
        return GQ_OK;
    if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi) {
        char what[64];
        snprintf(what, sizeof what, "an integer %d..%d or null", lo, hi);
        return bad(err, key, v, what);
    }
    *out = (int)json_integer_value(v);
    return GQ_OK;
}

static int opt_num(const json_t *j, const char *key, double *out, gq_err *err)
{
    json_t *v = json_object_get(j, key);
    if (!v || json_is_null(v))
        return GQ_OK;
    if (!json_is_number(v))
        return bad(err, key, v, "a number or null");
    *out = json_number_value(v);
    return GQ_OK;
}

static int opt_bool(const json_t *j, const char *key, bool *out, gq_err *err)
{
    json_t *v = json_object_get(j, key);
    if (!v || json_is_null(v))
        return GQ_OK;
    if (!json_is_boolean(v))
        return bad(err, key, v, "true or false");
    *out = json_is_true(v);
    return GQ_OK;
}

/* "gpus": the GPUs of an aggregate, each in range and named once. */
static int read_gpus(const json_t *j, gq_record *r, gq_err *err)
{
    json_t *v = json_object_get(j, "gpus");
    if (!v || json_is_null(v))
        return GQ_OK;
    if (!json_is_array(v))
        return bad(err, "gpus", v, "a list of GPU indices");
    size_t i;
    json_t *x;
    json_array_foreach(v, i, x)
    {
        char path[32];
        snprintf(path, sizeof path, "gpus[%zu]", i);
        if (!json_is_integer(x) || json_integer_value(x) < 0 || json_integer_value(x) >= GQ_MAX_GPUS)
            return bad(err, path, x, "a GPU index 0..63");
        int g = (int)json_integer_value(x);
        for (int k = 0; k < r->ngpus; k++)
            if (r->gpus[k] == g)
                return gq_err_set(err, GQ_E_USAGE, "%s: GPU %d is repeated, expected each GPU once", path, g);
        r->gpus[r->ngpus++] = g;
    }
    return GQ_OK;
}

/* The NUMA placement fields: an integer, "local"/"mixed", or null. */
static int read_numa(const json_t *j, gq_record *r, gq_err *err)
{
    json_t *v = json_object_get(j, "host_numa_requested");
    if (json_is_string(v) && !strcmp(json_string_value(v), "local"))
        r->host_numa_req = -1;
    else if (v && !json_is_null(v) && !json_is_string(v) && !json_is_integer(v))
        return bad(err, "host_numa_requested", v, "a NUMA node, \"local\" or null");
    else if (json_is_string(v))
        return bad(err, "host_numa_requested", v, "a NUMA node, \"local\" or null");
    else if (json_is_integer(v) && (json_integer_value(v) < 0 || json_integer_value(v) > 4096))
        return bad(err, "host_numa_requested", v, "a NUMA node 0..4096");
    else if (json_is_integer(v))
        r->host_numa_req = (int)json_integer_value(v);
    v = json_object_get(j, "host_numa_actual");
    if (json_is_string(v) && !strcmp(json_string_value(v), "mixed"))
        r->host_numa_actual = -2;
    else if (json_is_integer(v) && json_integer_value(v) >= 0 && json_integer_value(v) <= 4096)
        r->host_numa_actual = (int)json_integer_value(v);
    else if (v && !json_is_null(v))
        return bad(err, "host_numa_actual", v, "a NUMA node, \"mixed\" or null");
    return GQ_OK;
}

/* The optional fields: error, capacity, GPUs, placement, window, time. */
static int read_optional(const json_t *j, gq_record *r, gq_err *err)
{
    json_t *v;
    int rc;
    if ((v = json_object_get(j, "error")) && !json_is_null(v)) {
        if (!json_is_string(v))
            return bad(err, "error", v, "a string");
        snprintf(r->error, sizeof r->error, "%s", json_string_value(v));
    }
    if ((rc = opt_num(j, "capacity_gbps", &r->capacity_gbps, err)) ||
        (rc = opt_bool(j, "aggregate", &r->aggregate, err)) || (rc = opt_bool(j, "sum", &r->sum, err)) ||
        (rc = read_gpus(j, r, err)) || (rc = opt_num(j, "overlap", &r->overlap, err)) ||
        (rc = opt_int(j, "group", -1, 1 << 30, &r->group, err)) ||
        (rc = opt_int(j, "flow_tag", -1, 1 << 20, &r->flow_tag, err)) ||
        (rc = opt_int(j, "exec_gpu", -1, GQ_MAX_GPUS - 1, &r->exec_gpu, err)) ||
        (rc = read_numa(j, r, err)) || (rc = opt_num(j, "window_s", &r->window_s, err)) ||
        (rc = opt_bool(j, "simulated", &r->simulated, err)))
        return rc;
    if (!(r->capacity_gbps >= 0))
        r->capacity_gbps = 0;
    if ((v = json_object_get(j, "timestamp")) && !json_is_null(v)) {
        if (json_is_string(v)) {
            if (parse_iso_time(json_string_value(v), &r->timestamp))
                return bad(err, "timestamp", v, "ISO-8601 UTC (2026-11-30T12:00:00Z)");
        } else if (json_is_number(v)) {
            r->timestamp = json_number_value(v);
        } else {
            return bad(err, "timestamp", v, "ISO-8601 UTC (2026-11-30T12:00:00Z)");
        }
    }
    return read_contaminated(j, r, err);
}

/* The sanity guard on a figure read back: a record that says it is valid
 * must hold a figure that could be one. */
static int check_plausible(const gq_record *r, gq_err *err)
{
    char why[160];
    if (!r->valid || gq_sanity_plausible(r, why, sizeof why))
        return GQ_OK;
    return gq_err_set(err, GQ_E_USAGE, "%s.median: %s, expected a figure a valid record can hold",
                      r->is_latency ? "latency_ns" : "gbps", why);
}

int gq_record_from_json(const json_t *j, gq_record *r, gq_err *err)
{
    memset(r, 0, sizeof *r);
    r->flow_tag = -1;
    r->exec_gpu = -1;
    r->overlap = -1;
    r->host_numa_req = -1;
    r->host_numa_actual = -1;
    if (!json_is_object(j))
        return bad(err, "record", j, "an object");
    int rc;
    if ((rc = read_identity(j, r, err)) || (rc = read_value(j, r, err)) || (rc = read_flags(j, r, err)) ||
        (rc = read_optional(j, r, err)))
        return rc;
    return check_plausible(r, err);
}

/* ---- the document -------------------------------------------------------- */
