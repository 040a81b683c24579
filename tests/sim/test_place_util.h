/* Helpers for the placement sim tests: run the gpuqual binary, parse its
 * JSON, look things up. Header-only, included by tests/sim/test_place_*.c. */
#ifndef GQ_TESTS_SIM_PLACE_UTIL_H
#define GQ_TESTS_SIM_PLACE_UTIL_H

#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>

/* Run `GQ_BIN args` (stderr discarded); returns the exit code and, when out
 * is non-NULL, stdout parsed as JSON (NULL if it is not JSON). */
static inline int gq_run_json(const char *args, json_t **out)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s %s 2>/dev/null", GQ_BIN, args);
    FILE *p = popen(cmd, "r");
    if (!p)
        return -1;
    size_t cap = 1 << 20, len = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (len + 4096 > cap) {
            cap *= 2;
            buf = realloc(buf, cap);
        }
        size_t r = fread(buf + len, 1, 4096, p);
        if (r == 0)
            break;
        len += r;
    }
    buf[len] = 0;
    int st = pclose(p);
    if (out) {
        json_error_t je;
        *out = json_loads(buf, 0, &je);
        if (!*out)
            fprintf(stderr, "not JSON from '%s': %s\n%.400s\n", cmd, je.text, buf);
    }
    free(buf);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/* The number at key of o; a missing key or one that is not a number fails
 * the test (so that two missing figures never compare as equal). */
static inline double jnum(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    if (!json_is_number(v))
        fail_msg("no number at \"%s\"%s", key, o ? "" : " (no object)");
    return json_number_value(v);
}

/* The integer at key of o; missing, or not an integer, fails the test. */
static inline int jint(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    if (!json_is_integer(v))
        fail_msg("no integer at \"%s\"", key);
    return (int)json_integer_value(v);
}

/* Is prefill -> decode among the document's pairs (key "pairs" of obj)?
 * A document with no "pairs" array fails the test. */
static inline int has_pair(const json_t *obj, int p, int d)
{
    size_t i;
    const json_t *v;
    if (!json_is_array(json_object_get(obj, "pairs")))
        fail_msg("no \"pairs\" array");
    json_array_foreach(json_object_get(obj, "pairs"), i, v)
    {
        if (json_integer_value(json_object_get(v, "prefill")) == p &&
            json_integer_value(json_object_get(v, "decode")) == d)
            return 1;
    }
    return 0;
}

/* Does a note of the document contain a (and b when non-NULL)? A document
 * with no "notes" array fails the test. */
static inline int has_note(const json_t *doc, const char *a, const char *b)
{
    size_t i;
    const json_t *v;
    if (!json_is_array(json_object_get(doc, "notes")))
        fail_msg("no \"notes\" array");
    json_array_foreach(json_object_get(doc, "notes"), i, v)
    {
        const char *s = json_string_value(v);
        if (s && strstr(s, a) && (!b || strstr(s, b)))
            return 1;
    }
    return 0;
}

#endif
