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

/* jansson's callback: up to buflen bytes into buffer, 0 at the end, -1 on an error */
static size_t next_block(void *buffer, size_t buflen, void *arg)
{
    FILE *f = arg;
    if (gq_interrupt_requested()) /* SIGTERM or Ctrl-C: stop reading now */
        return (size_t)-1;
    size_t n = fread(buffer, 1, buflen, f);
    return n ? n : (ferror(f) ? (size_t)-1 : 0);
}

json_t *gq_json_loadf(FILE *f, size_t flags, json_error_t *je)
{
    return json_load_callback(next_block, f, flags, je);
}
