#include "core/infile.h"

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
