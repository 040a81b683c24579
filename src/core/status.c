#include "core/status.h"

#include <stdio.h>
#include <string.h>

/* An error is one line: a control character that came from the user's input
 * (a name or key read from a file) is shown as a space, never as a line break. */
static void one_line(char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            *s = ' ';
}

static int err_vset(gq_err *e, int code, const char *fmt, va_list ap)
{
    if (e) {
        e->code = code;
        vsnprintf(e->msg, sizeof e->msg, fmt, ap);
        one_line(e->msg);
    }
    return code;
}

int gq_err_set(gq_err *e, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    err_vset(e, code, fmt, ap);
    va_end(ap);
    return code;
}

int gq_err_prefix(gq_err *e, const char *fmt, ...)
{
    if (!e)
        return GQ_E_FAIL;
    char pre[256], old[sizeof e->msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(pre, sizeof pre, fmt, ap);
    va_end(ap);
    snprintf(old, sizeof old, "%s", e->msg);
    char buf[sizeof pre + sizeof old + 4];
    snprintf(buf, sizeof buf, "%s: %s", pre, old);
    snprintf(e->msg, sizeof e->msg, "%.*s", (int)(sizeof e->msg - 1), buf);
    one_line(e->msg);
    return e->code;
}

int gq_status_exit_code(int status)
{
    switch (status) {
    case GQ_OK: return 0;
    case GQ_E_USAGE:
    case GQ_E_IO: return 2;
    case GQ_E_NODEV: return 3;
    case GQ_E_BUSY: return 6;
    case GQ_E_INTR: return 130;
    default: return 1;
    }
}

const char *gq_status_name(int status)
{
    switch (status) {
    case GQ_OK: return "ok";
    case GQ_E_FAIL: return "failed";
    case GQ_E_USAGE: return "usage";
    case GQ_E_NODEV: return "no-device";
    case GQ_E_IO: return "io";
    case GQ_E_NOMEM: return "no-memory";
    case GQ_E_BACKEND: return "backend";
    case GQ_E_INTR: return "interrupted";
    case GQ_E_UNSUPP: return "unsupported";
    case GQ_E_BUSY: return "busy";
    default: return "error";
    }
}
