#include "cli/progress.h"

#include <stdarg.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "core/units.h"

void gq_progress_init(gq_progress *p, bool enabled, long total)
{
    memset(p, 0, sizeof *p);
    p->on = enabled && isatty(STDERR_FILENO);
    p->total = total > 0 ? total : 1;
    p->t0 = gq_now_mono();
}

long gq_progress_tenths(double seconds)
{
    return seconds > 0 ? (long)(seconds * 10 + 0.5) : 0;
}

bool gq_progress_wanted(bool quiet, const char *format)
{
    return !quiet && !(format && !strncmp(format, "nvbandwidth", 11));
}

void gq_progress_set_total(gq_progress *p, long total)
{
    p->total = total > 0 ? total : 1;
}

void gq_progress_on_round(void *arg, const char *test, int round, int rounds)
{
    gq_progress *p = arg;
    if (round <= p->last_round || p->last_rounds == 0) {
        /* a new measurement: the previous one counts whole */
        p->base += p->last_rounds;
        p->last_rounds = rounds;
    }
    p->last_round = round;
    gq_progress_step(p, "%s round %d/%d", test, round, rounds);
    gq_progress_update(p, p->base + round);
}

static int term_width(void)
{
    struct winsize ws;
    if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20)
        return ws.ws_col;
    return 80;
}

void gq_progress_format(char *buf, size_t n, int width, long done, long total, double elapsed,
                        const char *step)
{
    if (total <= 0)
        total = 1;
    if (done > total)
        done = total;
    if (done < 0)
        done = 0;
    double frac = (double)done / (double)total;
    char bar[32];
    int cells = 20, full = (int)(frac * cells + 0.5);
    for (int i = 0; i < cells; i++)
        bar[i] = i < full ? '#' : '.';
    bar[cells] = 0;
    char left[32] = "";
    if (done > 0 && done < total) {
        long s = (long)(elapsed * (double)(total - done) / (double)done + 0.5);
        snprintf(left, sizeof left, "  ~%ld:%02ld left", s / 60, s % 60);
    }
    char line[512];
    snprintf(line, sizeof line, "[%s] %3d%%%s  %s", bar, (int)(frac * 100.0), left, step ? step : "");
    if (width > 0 && (size_t)width < sizeof line)
        line[width - 1] = 0; /* never wrap: the bar is redrawn with \r */
    snprintf(buf, n, "%s", line);
}

static void draw(gq_progress *p)
{
    char line[512];
    gq_progress_format(line, sizeof line, term_width(), p->done, p->total, gq_now_mono() - p->t0, p->step);
    fprintf(stderr, "\r\033[K%s", line);
    fflush(stderr);
    p->drawn = true;
    p->last_draw = gq_now_mono();
}

void gq_progress_step(gq_progress *p, const char *fmt, ...)
{
    if (!p->on)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->step, sizeof p->step, fmt, ap);
    va_end(ap);
    if (!p->drawn || gq_now_mono() - p->last_draw >= 0.1)
        draw(p);
}

void gq_progress_update(gq_progress *p, long done)
{
    p->done = done;
    if (!p->on)
        return;
    if (gq_now_mono() - p->last_draw < 0.1 && done < p->total)
        return;
    draw(p);
}

void gq_progress_clear(gq_progress *p)
{
    if (p->on && p->drawn) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
        p->drawn = false;
    }
}
