#include "cli/outwrap.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

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

static void emit(wrap *w, const char *s, size_t len)
{
    errno = 0;
    if (gq_text_cols(s, len) <= w->width) {
        fwrite(s, 1, len, w->under);
        fputc('\n', w->under);
    } else
        gq_wrap_line(w->under, s, len, w->width, gq_wrap_hang(s, len, w->width));
    if (ferror(w->under) && errno && !write_errno)
        write_errno = errno;
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
            if (!b)
                return -1;
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

void gq_outwrap_end(void)
{
    if (!saved)
        return;
    FILE *f = stdout;
    stdout = saved;
    saved = NULL;
    fclose(f);
}
