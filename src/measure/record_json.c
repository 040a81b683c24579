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
};

static const char *method_names[] = {"ce", "sm", "staged", "driver_staged"};
static const char *dir_names[] = {"h2d", "d2h", "p2p", "local"};

/* ---- record <-> JSON ----------------------------------------------------- */

static json_t *stat_json(const gq_stat *s)
{
    json_t *o = json_object();
    json_object_set_new(o, "median", json_real(s->median));
    json_object_set_new(o, "min", json_real(s->min));
    json_object_set_new(o, "max", json_real(s->max));
    json_object_set_new(o, "spread", json_real(s->spread));
    return o;
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
        json_array_append_new(sm, json_real(r->samples[i]));
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
    return o;
}

static int need(const json_t *j, const char *key, json_t **v, gq_err *err)
{
    *v = json_object_get(j, key);
    if (!*v)
        return gq_err_set(err, GQ_E_USAGE, "record: missing field '%s'", key);
    return GQ_OK;
}

static int get_stat(const json_t *o, gq_stat *s, const char *key, gq_err *err)
{
    static const char *names[] = {"median", "min", "max", "spread"};
    double *dst[] = {&s->median, &s->min, &s->max, &s->spread};
    if (!json_is_object(o))
        return gq_err_set(err, GQ_E_USAGE, "record: field '%s' must be an object {median,min,max,spread}",
                          key);
    for (int i = 0; i < 4; i++) {
        json_t *v = json_object_get(o, names[i]);
        if (!json_is_number(v))
            return gq_err_set(err, GQ_E_USAGE, "record: field '%s.%s' must be a number", key, names[i]);
        *dst[i] = json_number_value(v);
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
    if (!json_is_string(v) || json_string_length(v) >= sizeof r->test)
        return gq_err_set(err, GQ_E_USAGE, "record: field 'test' must be a string of at most %zu characters",
                          sizeof r->test - 1);
    snprintf(r->test, sizeof r->test, "%s", json_string_value(v));
    if ((rc = need(j, "method", &v, err)))
        return rc;
    int m = lookup(json_string_value(v), method_names, 4);
    if (m < 0)
        return gq_err_set(err, GQ_E_USAGE,
                          "record '%s': field 'method' must be one of ce, sm, staged, driver_staged",
                          r->test);
    r->method = (gq_method)m;
    static const char *eps[2] = {"src", "dst"};
    gq_endpoint *epd[2] = {&r->src, &r->dst};
    for (int i = 0; i < 2; i++) {
        if ((rc = need(j, eps[i], &v, err)))
            return rc;
        if (!json_is_string(v) || parse_endpoint(json_string_value(v), epd[i]))
            return gq_err_set(err, GQ_E_USAGE, "record '%s': field '%s' must be \"gpu:N\" or \"host:N\"",
                              r->test, eps[i]);
    }
    if ((rc = need(j, "direction", &v, err)))
        return rc;
    int d = lookup(json_string_value(v), dir_names, 4);
    if (d < 0)
        return gq_err_set(err, GQ_E_USAGE,
                          "record '%s': field 'direction' must be one of h2d, d2h, p2p, local", r->test);
    r->direction = (gq_direction)d;
    r->dirs = 1u << d;
    json_t *dl = json_object_get(j, "directions");
    if (json_is_array(dl) && json_array_size(dl) > 0) {
        r->dirs = 0;
        size_t i;
        json_t *x;
        json_array_foreach(dl, i, x)
        {
            int k = lookup(json_string_value(x), dir_names, 4);
            if (k < 0)
                return gq_err_set(err, GQ_E_USAGE,
                                  "record '%s': field 'directions' holds an unknown direction", r->test);
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
    if ((rc = need(j, "bytes", &v, err)))
        return rc;
    if (!json_is_integer(v) || json_integer_value(v) < 0)
        return gq_err_set(err, GQ_E_USAGE, "record '%s': field 'bytes' must be a non-negative integer",
                          r->test);
    r->bytes = (uint64_t)json_integer_value(v);
    if ((rc = need(j, "rounds", &v, err)))
        return rc;
    if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > GQ_MAX_ROUNDS)
        return gq_err_set(err, GQ_E_USAGE, "record '%s': field 'rounds' must be an integer 0..%d", r->test,
                          GQ_MAX_ROUNDS);
    r->rounds = (int)json_integer_value(v);
    json_t *gb = json_object_get(j, "gbps"), *lat = json_object_get(j, "latency_ns");
    if (!gb && !lat)
        return gq_err_set(err, GQ_E_USAGE, "record '%s': missing field 'gbps' (or 'latency_ns')", r->test);
    r->is_latency = lat && !gb;
    if ((rc = get_stat(r->is_latency ? lat : gb, &r->value, r->is_latency ? "latency_ns" : "gbps", err)))
        return gq_err_prefix(err, "%s", r->test);
    r->value.n = r->rounds;
    json_t *sm = json_object_get(j, "samples");
    if (json_is_array(sm)) {
        size_t i;
        json_t *x;
        int n = 0;
        json_array_foreach(sm, i, x)
        {
            if (!json_is_number(x) || n >= GQ_MAX_ROUNDS)
                return gq_err_set(err, GQ_E_USAGE,
                                  "record '%s': field 'samples' must hold at most %d numbers", r->test,
                                  GQ_MAX_ROUNDS);
            r->samples[n++] = json_number_value(x);
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
        return gq_err_set(err, GQ_E_USAGE, "record '%s': field 'valid' must be true or false", r->test);
    r->valid = json_is_true(v);
    if ((rc = need(j, "flags", &v, err)))
        return rc;
    if (!json_is_array(v))
        return gq_err_set(err, GQ_E_USAGE, "record '%s': field 'flags' must be a list of strings", r->test);
    {
        size_t i;
        json_t *x;
        json_array_foreach(v, i, x)
        {
            if (!json_is_string(x))
                return gq_err_set(err, GQ_E_USAGE, "record '%s': field 'flags' must be a list of strings",
                                  r->test);
            /* flags added by later versions are ignored: 'valid' already says what they mean */
            for (size_t k = 0; k < sizeof flag_names / sizeof flag_names[0]; k++)
                if (!strcmp(json_string_value(x), flag_names[k].name))
                    r->flags |= flag_names[k].flag;
        }
    }
    return GQ_OK;
}

/* The optional fields: error, capacity, GPUs, placement, window, time. */
static int read_optional(const json_t *j, gq_record *r, gq_err *err)
{
    json_t *v;
    if ((v = json_object_get(j, "error")) && json_is_string(v))
        snprintf(r->error, sizeof r->error, "%s", json_string_value(v));
    if ((v = json_object_get(j, "capacity_gbps")) && json_is_number(v))
        r->capacity_gbps = json_number_value(v);
    r->aggregate = json_is_true(json_object_get(j, "aggregate"));
    r->sum = json_is_true(json_object_get(j, "sum"));
    if ((v = json_object_get(j, "gpus")) && json_is_array(v)) {
        size_t i;
        json_t *x;
        json_array_foreach(v, i, x)
        {
            if (!json_is_integer(x) || r->ngpus >= GQ_MAX_GPUS)
                return gq_err_set(err, GQ_E_USAGE, "record '%s': field 'gpus' must be a list of GPU indices",
                                  r->test);
            r->gpus[r->ngpus++] = (int)json_integer_value(x);
        }
    }
    if ((v = json_object_get(j, "overlap")) && json_is_number(v))
        r->overlap = json_number_value(v);
    if ((v = json_object_get(j, "group")) && json_is_integer(v))
        r->group = (int)json_integer_value(v);
    if ((v = json_object_get(j, "flow_tag")) && json_is_integer(v))
        r->flow_tag = (int)json_integer_value(v);
    if ((v = json_object_get(j, "exec_gpu")) && json_is_integer(v))
        r->exec_gpu = (int)json_integer_value(v);
    if ((v = json_object_get(j, "host_numa_requested")) && json_is_integer(v))
        r->host_numa_req = (int)json_integer_value(v);
    if ((v = json_object_get(j, "host_numa_actual"))) {
        if (json_is_integer(v))
            r->host_numa_actual = (int)json_integer_value(v);
        else if (json_is_string(v) && !strcmp(json_string_value(v), "mixed"))
            r->host_numa_actual = -2;
    }
    if ((v = json_object_get(j, "window_s")) && json_is_number(v))
        r->window_s = json_number_value(v);
    if ((v = json_object_get(j, "timestamp"))) {
        if (json_is_string(v)) {
            if (parse_iso_time(json_string_value(v), &r->timestamp))
                return gq_err_set(err, GQ_E_USAGE, "record '%s': field 'timestamp' must be ISO-8601 UTC",
                                  r->test);
        } else if (json_is_number(v)) {
            r->timestamp = json_number_value(v);
        }
    }
    return GQ_OK;
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
        return gq_err_set(err, GQ_E_USAGE, "record: not a JSON object");
    int rc;
    if ((rc = read_identity(j, r, err)) || (rc = read_value(j, r, err)) || (rc = read_flags(j, r, err)) ||
        (rc = read_optional(j, r, err)))
        return rc;
    r->simulated = json_is_true(json_object_get(j, "simulated"));
    return GQ_OK;
}

/* ---- the document -------------------------------------------------------- */
