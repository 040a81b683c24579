#define _POSIX_C_SOURCE 200809L
#include "core/units.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* strtod reads "0x10" as sixteen and "0x1p4" too; gpuqual's numbers are decimal. */
static bool is_hex(const char *s)
{
    if (*s == '+' || *s == '-')
        s++;
    return s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
}

int gq_parse_double(const char *s, double *out, gq_err *err)
{
    if (!s || !*s)
        return gq_err_set(err, GQ_E_USAGE, "empty number, expected a decimal number");
    char *end;
    errno = 0;
    if (is_hex(s))
        return gq_err_set(err, GQ_E_USAGE, "'%s': hexadecimal is not accepted, expected a decimal number", s);
    double v = strtod(s, &end);
    if (end == s || *end || errno == ERANGE || !isfinite(v) || isspace((unsigned char)*s))
        return gq_err_set(err, GQ_E_USAGE, "'%s' is not a number", s);
    *out = v;
    return GQ_OK;
}

int gq_parse_int(const char *s, long lo, long hi, long *out, gq_err *err)
{
    if (!s || !*s)
        return gq_err_set(err, GQ_E_USAGE, "empty value, expected a whole number");
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || *end || errno == ERANGE || isspace((unsigned char)*s))
        return gq_err_set(err, GQ_E_USAGE, "'%s' is not a whole number", s);
    if (v < lo || v > hi)
        return gq_err_set(err, GQ_E_USAGE, "%ld is out of range, expected %ld..%ld", v, lo, hi);
    *out = v;
    return GQ_OK;
}

int gq_parse_size(const char *s, uint64_t unit, uint64_t *out, gq_err *err)
{
    if (!s || !*s)
        return gq_err_set(err, GQ_E_USAGE, "empty size, expected e.g. 512, 4K, 64MiB or 1G");
    if (unit == 0)
        unit = 1;
    char *end;
    errno = 0;
    if (!isdigit((unsigned char)*s) && *s != '.')
        return gq_err_set(err, GQ_E_USAGE, "'%s' is not a size, expected e.g. 512, 4K, 64MiB or 1G", s);
    if (is_hex(s))
        return gq_err_set(err, GQ_E_USAGE,
                          "'%s': hexadecimal is not accepted, expected a decimal size (e.g. 16, 4K)", s);
    double v = strtod(s, &end);
    if (end == s || errno == ERANGE || !isfinite(v))
        return gq_err_set(err, GQ_E_USAGE, "'%s' is not a size, expected e.g. 512, 4K, 64MiB or 1G", s);
    static const struct {
        const char *suf;
        uint64_t mul;
    } sufs[] = {
        {"", 0},
        {"B", 1},
        {"K", GQ_KiB},
        {"KiB", GQ_KiB},
        {"KB", 1000},
        {"M", GQ_MiB},
        {"MiB", GQ_MiB},
        {"MB", 1000000},
        {"G", GQ_GiB},
        {"GiB", GQ_GiB},
        {"GB", 1000000000ull},
        {"T", GQ_GiB * 1024},
        {"TiB", GQ_GiB * 1024},
    };
    uint64_t mul = 0;
    bool found = false;
    for (size_t i = 0; i < sizeof sufs / sizeof sufs[0]; i++) {
        if (strcasecmp(end, sufs[i].suf) == 0) {
            mul = sufs[i].mul ? sufs[i].mul : unit;
            found = true;
            break;
        }
    }
    if (!found)
        return gq_err_set(err, GQ_E_USAGE, "'%s': unknown size unit '%s', expected B, K/KiB, M/MiB, G/GiB", s,
                          end);
    double bytes = v * (double)mul;
    if (bytes < 1)
        return gq_err_set(err, GQ_E_USAGE, "size '%s' must be greater than zero", s);
    if (bytes > 1.8e19)
        return gq_err_set(err, GQ_E_USAGE, "size '%s' is too large", s);
    if (bytes != floor(bytes))
        return gq_err_set(err, GQ_E_USAGE, "size '%s' is not a whole number of bytes", s);
    *out = (uint64_t)bytes;
    return GQ_OK;
}

int gq_parse_duration(const char *s, double *out, gq_err *err)
{
    if (!s || !*s)
        return gq_err_set(err, GQ_E_USAGE, "empty duration, expected e.g. 30s, 5m or 1h");
    char *end;
    errno = 0;
    if (!isdigit((unsigned char)*s) && *s != '.')
        return gq_err_set(err, GQ_E_USAGE, "'%s' is not a duration, expected e.g. 30s, 5m or 1h", s);
    if (is_hex(s))
        return gq_err_set(err, GQ_E_USAGE, "'%s': hexadecimal is not accepted, expected e.g. 30s, 5m or 1h",
                          s);
    double v = strtod(s, &end);
    if (end == s || errno == ERANGE || !isfinite(v))
        return gq_err_set(err, GQ_E_USAGE, "'%s' is not a duration, expected e.g. 30s, 5m or 1h", s);
    double mul;
    if (!*end || !strcmp(end, "s"))
        mul = 1;
    else if (!strcmp(end, "ms"))
        mul = 1e-3;
    else if (!strcmp(end, "m") || !strcmp(end, "min"))
        mul = 60;
    else if (!strcmp(end, "h"))
        mul = 3600;
    else
        return gq_err_set(err, GQ_E_USAGE, "'%s': unknown duration unit '%s', expected ms, s, m or h", s,
                          end);
    double secs = v * mul;
    if (secs <= 0)
        return gq_err_set(err, GQ_E_USAGE, "duration '%s' must be greater than zero", s);
    if (!isfinite(secs) || secs > GQ_DURATION_MAX_S)
        return gq_err_set(err, GQ_E_USAGE, "duration '%s' is over the 168h maximum (7 days)", s);
    if (secs < GQ_DURATION_MIN_S)
        return gq_err_set(err, GQ_E_USAGE, "duration '%s' is under the 1ms minimum", s);
    *out = secs;
    return GQ_OK;
}

const char *gq_fmt_size(uint64_t b, char *buf, size_t n)
{
    /* %.15g: every figure here is exact, and none is written with an exponent */
    if (b >= GQ_GiB * 1024 && b % (GQ_GiB * 256) == 0)
        snprintf(buf, n, "%.15g TiB", (double)b / ((double)GQ_GiB * 1024));
    else if (b >= GQ_GiB && b % (GQ_GiB / 4) == 0)
        snprintf(buf, n, "%.15g GiB", (double)b / GQ_GiB);
    else if (b >= GQ_MiB && b % (GQ_MiB / 4) == 0)
        snprintf(buf, n, "%.15g MiB", (double)b / GQ_MiB);
    else if (b >= GQ_KiB && b % GQ_KiB == 0)
        snprintf(buf, n, "%.15g KiB", (double)b / GQ_KiB);
    else
        snprintf(buf, n, "%llu B", (unsigned long long)b);
    return buf;
}

int gq_levenshtein(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 64 || lb > 64)
        return 99;
    int d[65][65];
    for (size_t i = 0; i <= la; i++)
        d[i][0] = (int)i;
    for (size_t j = 0; j <= lb; j++)
        d[0][j] = (int)j;
    for (size_t i = 1; i <= la; i++)
        for (size_t j = 1; j <= lb; j++) {
            int c = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            if (d[i - 1][j] + 1 < c)
                c = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < c)
                c = d[i][j - 1] + 1;
            d[i][j] = c;
        }
    return d[la][lb];
}

const char *gq_closest(const char *word, const char *const *cands)
{
    const char *best = NULL;
    int bestd = 1 << 30;
    size_t lw = strlen(word);
    for (int i = 0; cands && cands[i]; i++) {
        int d = gq_levenshtein(word, cands[i]);
        /* a prefix of a long name is a good guess too */
        if (lw >= 3 && strncmp(cands[i], word, lw) == 0)
            d = 1;
        if (d < bestd) {
            bestd = d;
            best = cands[i];
        }
    }
    int limit = lw <= 4 ? 1 : (int)(lw / 3) + 1;
    return bestd <= limit ? best : NULL;
}

double gq_now_mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double gq_now_unix(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
