#include "core/status.h"

#include <stdbool.h>
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

static bool boundary(char c)
{
    return c == ' ' || c == ',' || c == ';' || c == '/';
}

const char *gq_ellipsize(char *buf, size_t cap, const char *s, size_t max)
{
    if (!cap)
        return buf;
    size_t n = strlen(s);
    if (n <= max) {
        snprintf(buf, cap, "%s", s);
        return buf;
    }
    size_t cut = 0; /* after the last boundary within max */
    for (size_t i = 0; i < max && i < n; i++)
        if (boundary(s[i]))
            cut = i + 1;
    if (!cut) { /* one word: whole up to its end when it fits */
        size_t w = 0;
        while (w < n && !boundary(s[w]))
            w++;
        cut = w + 4 <= cap ? w : cap > 4 ? cap - 4 : 0;
    }
    if (cut + 4 > cap)
        cut = cap > 4 ? cap - 4 : 0;
    while (cut > 0 && s[cut - 1] == ' ')
        cut--;
    snprintf(buf, cap, "%.*s...", (int)cut, s);
    return buf;
}

/* A message longer than its buffer ends at a word, with "...". */
static void end_at_word(char *msg, size_t cap, size_t full)
{
    if (full < cap || cap < 8)
        return;
    size_t cut = cap - 4;
    while (cut > cap / 2 && !boundary(msg[cut - 1]) && !boundary(msg[cut]))
        cut--;
    while (cut > 0 && msg[cut - 1] == ' ')
        cut--;
    memcpy(msg + cut, "...", 4);
}

static int err_vset(gq_err *e, int code, const char *fmt, va_list ap)
{
    if (e) {
        e->code = code;
        int full = vsnprintf(e->msg, sizeof e->msg, fmt, ap);
        if (full > 0)
            end_at_word(e->msg, sizeof e->msg, (size_t)full);
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
    int full = snprintf(buf, sizeof buf, "%s: %s", pre, old);
    snprintf(e->msg, sizeof e->msg, "%.*s", (int)(sizeof e->msg - 1), buf);
    if (full > 0)
        end_at_word(e->msg, sizeof e->msg, (size_t)full);
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
    case GQ_E_NOLIB: return 7;
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
    case GQ_E_NOLIB: return "no-library";
    default: return "error";
    }
}
