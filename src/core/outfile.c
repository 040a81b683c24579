#define _POSIX_C_SOURCE 200809L
#include "core/outfile.h"

#include <errno.h>
#include <libgen.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int gq_outfile_check(const char *path, gq_err *err)
{
    if (!path || !strcmp(path, "-"))
        return GQ_OK;
    char tmp[1024];
    /* the temp name and the messages must hold the whole path: a cut one
     * would write somewhere else */
    if (strlen(path) >= 1000)
        return gq_err_set(err, GQ_E_IO,
                          "cannot write '%.60s...': the path is %zu characters, expected under 1000", path,
                          strlen(path));
    struct stat st;
    size_t len = strlen(path);
    if (len && path[len - 1] == '/')
        return gq_err_set(err, GQ_E_IO,
                          "cannot write '%s': a name ending in '/' is a directory, expected a file name",
                          path);
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return gq_err_set(err, GQ_E_IO, "cannot write '%s': it is a directory, expected a file name", path);
    snprintf(tmp, sizeof tmp, "%s", path);
    char *dir = dirname(tmp);
    if (access(dir, F_OK) != 0)
        return gq_err_set(err, GQ_E_IO, "cannot write '%s': directory '%s' does not exist", path, dir);
    if (access(dir, W_OK) != 0)
        return gq_err_set(err, GQ_E_IO, "cannot write '%s': directory '%s' is not writable", path, dir);
    if (access(path, F_OK) == 0 && access(path, W_OK) != 0)
        return gq_err_set(err, GQ_E_IO, "cannot write '%s': file is not writable", path);
    return GQ_OK;
}

int gq_outfile_open(gq_outfile *o, const char *path, gq_err *err)
{
    memset(o, 0, sizeof *o);
    if (!strcmp(path, "-")) {
        o->f = stdout;
        o->is_stdout = true;
        return GQ_OK;
    }
    int rc = gq_outfile_check(path, err);
    if (rc)
        return rc;
    snprintf(o->path, sizeof o->path, "%s", path);
    /* A device or a pipe (/dev/null, /dev/stdout, a FIFO) is written in place:
     * renaming a temp file over it would replace the device node. */
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        o->f = fopen(path, "w");
        if (!o->f)
            return gq_err_set(err, GQ_E_IO, "cannot write '%s': %s", path, strerror(errno));
        return GQ_OK;
    }
    snprintf(o->tmp, sizeof o->tmp, "%s.tmp-%ld", path, (long)getpid());
    o->f = fopen(o->tmp, "w");
    if (!o->f)
        return gq_err_set(err, GQ_E_IO, "cannot write '%s': %s", path, strerror(errno));
    return GQ_OK;
}

int gq_outfile_commit(gq_outfile *o, gq_err *err)
{
    if (!o->f)
        return GQ_OK;
    if (o->is_stdout) {
        fflush(stdout);
        o->f = NULL;
        return GQ_OK;
    }
    int bad = ferror(o->f) || fflush(o->f) != 0;
    int e = errno;
    if (o->tmp[0] && !bad && fsync(fileno(o->f)) != 0) {
        bad = 1;
        e = errno;
    }
    if (fclose(o->f) != 0 && !bad) {
        bad = 1;
        e = errno;
    }
    o->f = NULL;
    if (bad) {
        if (o->tmp[0])
            unlink(o->tmp);
        return gq_err_set(err, GQ_E_IO, "writing '%s' failed: %s", o->path, e ? strerror(e) : "write error");
    }
    if (!o->tmp[0])
        return GQ_OK;
    if (rename(o->tmp, o->path) != 0) {
        int e2 = errno;
        unlink(o->tmp);
        return gq_err_set(err, GQ_E_IO, "cannot write '%s': %s", o->path, strerror(e2));
    }
    return GQ_OK;
}

void gq_outfile_abort(gq_outfile *o)
{
    if (o->f && !o->is_stdout) {
        fclose(o->f);
        if (o->tmp[0])
            unlink(o->tmp);
    }
    o->f = NULL;
}

int gq_outfile_write(const char *path, int (*write)(FILE *f, void *arg, gq_err *err), void *arg, gq_err *err)
{
    gq_outfile o;
    int rc = gq_outfile_open(&o, path, err);
    if (rc)
        return rc;
    if ((rc = write(o.f, arg, err))) {
        gq_outfile_abort(&o);
        return rc;
    }
    return gq_outfile_commit(&o, err);
}
