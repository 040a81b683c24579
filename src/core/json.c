#include "core/json.h"

#include <math.h>

#include "core/interrupt.h"

json_t *gq_json_num(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

json_t *gq_json_num_if(double v, bool known)
{
    return known ? gq_json_num(v) : json_null();
}

typedef struct source {
    FILE *f;
    long long left; /* bytes it may still read; < 0: no limit */
    bool over;
} source;

/* jansson's callback: up to buflen bytes into buffer, 0 at the end, -1 on an error */
static size_t next_block(void *buffer, size_t buflen, void *arg)
{
    source *s = arg;
    if (gq_interrupt_requested()) /* SIGTERM or Ctrl-C: stop reading now */
        return (size_t)-1;
    size_t n = fread(buffer, 1, buflen, s->f);
    if (s->left >= 0) {
        if ((long long)n > s->left) {
            s->over = true;
            return (size_t)-1;
        }
        s->left -= (long long)n;
    }
    return n ? n : (ferror(s->f) ? (size_t)-1 : 0);
}

json_t *gq_json_loadf(FILE *f, size_t flags, json_error_t *je)
{
    source s = {.f = f, .left = -1};
    return json_load_callback(next_block, &s, flags, je);
}

json_t *gq_json_loadf_max(FILE *f, size_t flags, long long max, bool *over, json_error_t *je)
{
    source s = {.f = f, .left = max};
    json_t *j = json_load_callback(next_block, &s, flags, je);
    if (over)
        *over = s.over;
    return j;
}

const char *gq_json_type_word(const json_t *v)
{
    if (!v)
        return "missing";
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "a list";
    case JSON_STRING: return "a string";
    case JSON_INTEGER:
    case JSON_REAL: return "a number";
    case JSON_TRUE:
    case JSON_FALSE: return "a boolean";
    default: return "null";
    }
}
