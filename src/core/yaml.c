/* YAML to JSON values (core/yaml.h). */
#include "core/yaml.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <yaml.h>

#define MAX_DEPTH 64

typedef struct frame {
    json_t *v;       /* object or array */
    char *key;       /* object: the key waiting for its value (owned), or NULL */
    size_t key_line; /* where that key was */
} frame;

static bool all_digits(const char *s)
{
    if (*s == '+' || *s == '-')
        s++;
    if (!*s)
        return false;
    for (; *s; s++)
        if (!isdigit((unsigned char)*s))
            return false;
    return true;
}

/* A plain scalar's JSON value. */
static json_t *plain(const char *s)
{
    if (!*s || !strcmp(s, "~") || !strcasecmp(s, "null"))
        return json_null();
    if (!strcasecmp(s, "true"))
        return json_true();
    if (!strcasecmp(s, "false"))
        return json_false();
    if (all_digits(s)) {
        errno = 0;
        long long v = strtoll(s, NULL, 10);
        if (errno == 0)
            return json_integer(v);
    }
    /* a real: digits, one dot, an exponent; never hex, inf or nan */
    bool digit = false, ok = true;
    const char *p = s;
    if (*p == '+' || *p == '-')
        p++;
    for (; *p && *p != 'e' && *p != 'E'; p++) {
        if (isdigit((unsigned char)*p))
            digit = true;
        else if (*p != '.')
            ok = false;
    }
    if (ok && digit && strchr(s, '.') == strrchr(s, '.')) {
        char *end = NULL;
        errno = 0;
        double d = strtod(s, &end);
        if (end && !*end && isfinite(d) && errno == 0)
            return json_real(d);
    }
    return json_string(s);
}

static int fail(gq_err *err, const char *name, size_t line, const char *fmt, const char *what)
{
    char msg[256];
    snprintf(msg, sizeof msg, fmt, what);
    return gq_err_set(err, GQ_E_USAGE, "%s: line %zu: %s", name, line, msg);
}

/* Attach v to the top frame (or make it the root). Steals v. */
static int attach(frame *st, int depth, json_t **root, json_t *v, size_t line, const char *name, gq_err *err)
{
    if (!v)
        return gq_err_set(err, GQ_E_NOMEM, "%s: out of memory", name);
    if (depth == 0) {
        *root = v;
        return GQ_OK;
    }
    frame *f = &st[depth - 1];
    if (json_is_array(f->v))
        return json_array_append_new(f->v, v) ? gq_err_set(err, GQ_E_NOMEM, "%s: out of memory", name)
                                              : GQ_OK;
    if (!f->key) {
        /* a key: only a scalar (string) may be one */
        if (!json_is_string(v)) {
            json_decref(v);
            return fail(err, name, line, "%s", "a mapping key must be a plain or quoted scalar");
        }
        if (json_object_get(f->v, json_string_value(v))) {
            int rc = fail(err, name, line, "duplicate key '%s'", json_string_value(v));
            json_decref(v);
            return rc;
        }
        f->key = strdup(json_string_value(v));
        f->key_line = line;
        json_decref(v);
        return f->key ? GQ_OK : gq_err_set(err, GQ_E_NOMEM, "%s: out of memory", name);
    }
    int rc = json_object_set_new(f->v, f->key, v);
    free(f->key);
    f->key = NULL;
    return rc ? gq_err_set(err, GQ_E_NOMEM, "%s: out of memory", name) : GQ_OK;
}

int gq_yaml_to_json(const char *text, size_t len, const char *name, json_t **out, gq_err *err)
{
    *out = NULL;
    yaml_parser_t p;
    if (!yaml_parser_initialize(&p))
        return gq_err_set(err, GQ_E_NOMEM, "%s: out of memory", name);
    yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
    frame st[MAX_DEPTH];
    int depth = 0, docs = 0, rc = GQ_OK;
    json_t *root = NULL;
    bool done = false;
    while (!done && rc == GQ_OK) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&p, &ev)) {
            rc = gq_err_set(err, GQ_E_USAGE, "%s: not valid YAML at line %zu: %s", name,
                            (size_t)p.problem_mark.line + 1, p.problem ? p.problem : "parse error");
            break;
        }
        size_t line = ev.start_mark.line + 1;
        switch (ev.type) {
        case YAML_STREAM_END_EVENT: done = true; break;
        case YAML_DOCUMENT_START_EVENT:
            if (++docs > 1)
                rc = fail(err, name, line, "%s", "more than one YAML document; give one");
            break;
        case YAML_ALIAS_EVENT:
            rc = fail(err, name, line, "%s", "aliases (*name) are not accepted; write the value out");
            break;
        case YAML_SCALAR_EVENT:
            if (ev.data.scalar.anchor) {
                rc = fail(err, name, line, "%s", "anchors (&name) are not accepted");
                break;
            }
            rc = attach(st, depth, &root,
                        ev.data.scalar.style == YAML_PLAIN_SCALAR_STYLE
                            ? plain((const char *)ev.data.scalar.value)
                            : json_string((const char *)ev.data.scalar.value),
                        line, name, err);
            break;
        case YAML_SEQUENCE_START_EVENT:
        case YAML_MAPPING_START_EVENT: {
            const unsigned char *anchor = ev.type == YAML_SEQUENCE_START_EVENT ? ev.data.sequence_start.anchor
                                                                               : ev.data.mapping_start.anchor;
            if (anchor) {
                rc = fail(err, name, line, "%s", "anchors (&name) are not accepted");
                break;
            }
            if (depth >= MAX_DEPTH) {
                rc = fail(err, name, line, "nested deeper than %s levels", "64");
                break;
            }
            if (depth > 0 && json_is_object(st[depth - 1].v) && !st[depth - 1].key) {
                rc = fail(err, name, line, "%s", "a mapping key must be a plain or quoted scalar");
                break;
            }
            json_t *c = ev.type == YAML_SEQUENCE_START_EVENT ? json_array() : json_object();
            if (!c) {
                rc = gq_err_set(err, GQ_E_NOMEM, "%s: out of memory", name);
                break;
            }
            st[depth].v = c;
            st[depth].key = NULL;
            depth++;
            break;
        }
        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT: {
            json_t *c = st[--depth].v;
            free(st[depth].key);
            st[depth].key = NULL;
            rc = attach(st, depth, &root, c, line, name, err);
            break;
        }
        default: break;
        }
        yaml_event_delete(&ev);
    }
    while (depth > 0) {
        depth--;
        free(st[depth].key);
        json_decref(st[depth].v);
    }
    yaml_parser_delete(&p);
    if (rc == GQ_OK && !root)
        rc = gq_err_set(err, GQ_E_USAGE, "%s: the YAML document is empty", name);
    if (rc) {
        json_decref(root);
        return rc;
    }
    *out = root;
    return GQ_OK;
}

int gq_yaml_looks_like(const char *path, const char *text)
{
    size_t n = path ? strlen(path) : 0;
    if ((n >= 5 && !strcasecmp(path + n - 5, ".yaml")) || (n >= 4 && !strcasecmp(path + n - 4, ".yml")))
        return 1;
    const char *s = text;
    while (s && *s) {
        while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n')
            s++;
        if (*s == '#') {
            while (*s && *s != '\n')
                s++;
            continue;
        }
        return *s && *s != '{' && *s != '[';
    }
    return 0;
}
