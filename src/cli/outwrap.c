#include "cli/outwrap.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "core/ascii.h"
#include "render/wrap.h"

typedef struct wrap {
    FILE *under;
    int width;
    char *buf; /* the current line, not yet ended */
    size_t n, cap;
} wrap;

static FILE *saved;
static int write_errno; /* why writing to the real stdout failed, for the one error line */

int gq_outwrap_errno(void)
{
    return write_errno;
}

bool gq_outwrap_format(const char *format)
{
    return !format || !strcmp(format, "table") || !strcmp(format, "summary");
}

static void emit_to(FILE *f, int width, const char *s, size_t len)
{
    if (gq_text_cols(s, len) <= width) {
        fwrite(s, 1, len, f);
        fputc('\n', f);
    } else
        gq_wrap_line(f, s, len, width, gq_wrap_hang(s, len, width));
}

static void emit(wrap *w, const char *s, size_t len)
{
    errno = 0;
    char *mem = NULL, *plain = NULL;
    size_t nmem = 0;
    FILE *m = gq_ascii_locale() ? open_memstream(&mem, &nmem) : NULL;
    if (m) { /* a terminal without UTF-8: the wrapped lines in ASCII (core/ascii.h) */
        emit_to(m, w->width, s, len);
        fclose(m);
        size_t need = mem ? gq_ascii_text(mem, nmem, NULL, 0) : 0;
        if (mem && (plain = malloc(need + 1))) {
            gq_ascii_text(mem, nmem, plain, need + 1);
            fwrite(plain, 1, need, w->under);
        } else if (mem)
            fwrite(mem, 1, nmem, w->under);
    } else
        emit_to(w->under, w->width, s, len);
    if (ferror(w->under) && errno && !write_errno)
        write_errno = errno;
    free(mem);
    free(plain);
}

static ssize_t wrap_write(void *cookie, const char *s, size_t len)
{
    wrap *w = cookie;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '\n') {
            emit(w, w->buf, w->n);
            w->n = 0;
            continue;
        }
        if (w->n + 1 >= w->cap) {
            size_t cap = w->cap ? w->cap * 2 : 1024;
            char *b = realloc(w->buf, cap);
            if (!b) { /* the stream's error; the one line names why */
                if (!write_errno)
                    write_errno = ENOMEM;
                errno = ENOMEM;
                return -1;
            }
            w->buf = b;
            w->cap = cap;
        }
        w->buf[w->n++] = s[i];
    }
    return (ssize_t)len;
}

static int wrap_close(void *cookie)
{
    wrap *w = cookie;
    errno = 0;
    if (w->n)
        fwrite(w->buf, 1, w->n, w->under); /* a last line without a newline */
    int rc = fflush(w->under);
    if ((rc || ferror(w->under)) && errno && !write_errno)
        write_errno = errno;
    free(w->buf);
    free(w);
    return rc;
}

bool gq_outwrap_begin(int width)
{
    if (saved || width < 20)
        return false;
    write_errno = 0;
    wrap *w = calloc(1, sizeof *w);
    if (!w)
        return false;
    w->under = stdout;
    w->width = width;
    cookie_io_functions_t io = {.write = wrap_write, .close = wrap_close};
    FILE *f = fopencookie(w, "w", io);
    if (!f) {
        free(w);
        return false;
    }
    fflush(stdout);
    if (isatty(fileno(stdout)))
        setvbuf(f, NULL, _IOLBF, 0); /* a terminal sees each line as it comes, as before */
    saved = stdout;
    stdout = f;
    return true;
}

/* stderr in ASCII: each write mapped (core/ascii.h), a UTF-8 sequence cut
 * between two writes kept until its end comes. */
typedef struct plain_err {
    FILE *under;
    char carry[4];
    size_t ncarry;
} plain_err;

static ssize_t plain_write(void *cookie, const char *s, size_t len)
{
    plain_err *p = cookie;
    char out[1024];
    size_t u = 0;
    for (size_t i = 0; i < len; i++) {
        if (p->ncarry || (unsigned char)s[i] >= 0x80) {
            p->carry[p->ncarry++] = s[i];
            size_t used;
            const char *r = gq_ascii_of(p->carry, p->ncarry, &used);
            if (!used && p->ncarry < sizeof p->carry)
                continue;
            if (!used)
                r = "?";
            p->ncarry = 0;
            for (; *r; r++) {
                if (u == sizeof out) {
                    fwrite(out, 1, u, p->under);
                    u = 0;
                }
                out[u++] = *r;
            }
            continue;
        }
        if (u == sizeof out) {
            fwrite(out, 1, u, p->under);
            u = 0;
        }
        out[u++] = s[i];
    }
    fwrite(out, 1, u, p->under);
    fflush(p->under);
    return (ssize_t)len;
}

static int plain_close(void *cookie)
{
    plain_err *p = cookie;
    int rc = fflush(p->under);
    free(p);
    return rc;
}

bool gq_outwrap_plain_stderr(void)
{
    if (!gq_ascii_locale())
        return false;
    plain_err *p = calloc(1, sizeof *p);
    if (!p)
        return false;
    p->under = stderr;
    cookie_io_functions_t io = {.write = plain_write, .close = plain_close};
    FILE *f = fopencookie(p, "w", io);
    if (!f) {
        free(p);
        return false;
    }
    setvbuf(f, NULL, _IONBF, 0);
    stderr = f;
    return true;
}

void gq_outwrap_end(void)
{
    if (!saved)
        return;
    FILE *f = stdout;
    stdout = saved;
    saved = NULL;
    fclose(f);
}
