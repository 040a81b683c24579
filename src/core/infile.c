#include "core/infile.h"

#include <stdio.h>
#include <sys/stat.h>

int gq_infile_check(const char *path, const char *what, gq_err *err)
{
    struct stat st;
    if (!path || !*path)
        return gq_err_set(err, GQ_E_USAGE, "empty file name, expected %s", what);
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return gq_err_set(err, GQ_E_USAGE, "'%s' is a directory, expected %s", path, what);
    return GQ_OK; /* a missing or unreadable file: the caller's open names the reason */
}

const char *gq_infile_size_text(long long bytes, char *buf, unsigned cap)
{
    static const char *const unit[] = {"KiB", "MiB", "GiB", "TiB"};
    if (bytes < 1024) {
        snprintf(buf, cap, "%lld byte%s", bytes, bytes == 1 ? "" : "s");
        return buf;
    }
    double v = (double)bytes / 1024;
    int u = 0;
    while (v >= 1024 && u < 3) {
        v /= 1024;
        u++;
    }
    snprintf(buf, cap, v < 10 ? "%.1f %s" : "%.0f %s", v, unit[u]);
    return buf;
}

int gq_infile_check_size(const char *path, const char *what, long long limit, gq_err *err)
{
    int rc = gq_infile_check(path, what, err);
    struct stat st;
    if (rc || stat(path, &st) != 0 || !S_ISREG(st.st_mode) || (long long)st.st_size <= limit)
        return rc;
    char a[32], b[32];
    return gq_err_set(err, GQ_E_USAGE,
                      "'%s' is %s (%lld bytes), over the %s limit for %s; is it the right file?", path,
                      gq_infile_size_text((long long)st.st_size, a, sizeof a), (long long)st.st_size,
                      gq_infile_size_text(limit, b, sizeof b), what);
}
