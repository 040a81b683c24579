#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "core/outfile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/interrupt.h"

static void dir_of(const char *path, char *buf, size_t cap)
{
    char tmp[1024];
    snprintf(tmp, sizeof tmp, "%s", path);
    snprintf(buf, cap, "%s", dirname(tmp));
}

static const char *base_of(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

static bool node_in_place(mode_t m)
{
    return S_ISCHR(m) || S_ISFIFO(m);
}

bool gq_outfile_is_device(const char *path)
{
    struct stat st;
    return path && strcmp(path, "-") && stat(path, &st) == 0 && node_in_place(st.st_mode);
}

static uint64_t rnd_state;

static uint64_t rnd_next(void)
{
    if (!rnd_state) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        rnd_state = ((uint64_t)ts.tv_nsec << 20) ^ (uint64_t)ts.tv_sec ^ ((uint64_t)getpid() << 40) ^
                    (uint64_t)(uintptr_t)&ts;
        int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
        if (fd >= 0) {
            uint64_t v = 0;
            if (read(fd, &v, sizeof v) == (ssize_t)sizeof v)
                rnd_state ^= v;
            close(fd);
        }
        rnd_state |= 1;
    }
    rnd_state ^= rnd_state << 13; /* xorshift64 */
    rnd_state ^= rnd_state >> 7;
    rnd_state ^= rnd_state << 17;
    return rnd_state;
}

void gq_outfile_tmpname(char *buf, size_t cap, const char *dir)
{
    static const char abc[] = "abcdefghijklmnopqrstuvwxyz0123456789";
    char r[7];
    uint64_t v = rnd_next();
    for (int i = 0; i < 6; i++, v /= 36)
        r[i] = abc[v % 36];
    r[6] = 0;
    snprintf(buf, cap, "%s/.gq-%ld-%s", dir, (long)getpid(), r);
}

int gq_outfile_sweep(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, ".gq-", 4))
            continue;
        char *end;
        long pid = strtol(e->d_name + 4, &end, 10);
        if (pid <= 0 || *end != '-' || pid == (long)getpid())
            continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
            continue; /* alive, or not ours to judge (EPERM: alive) */
        struct stat st;
        if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
            unlinkat(dirfd(d), e->d_name, 0) == 0)
            n++;
    }
    closedir(d);
    return n;
}

void gq_outfile_sync_dir(const char *path)
{
    char dir[1024];
    dir_of(path, dir, sizeof dir);
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        (void)fsync(fd);
        close(fd);
    }
}

static int check_node(const char *path, gq_err *err)
{
    struct stat lst, st;
    if (lstat(path, &lst) != 0)
        return GQ_OK; /* a new file */
    if (S_ISLNK(lst.st_mode)) {
        if (stat(path, &st) == 0 && node_in_place(st.st_mode))
            return GQ_OK;
        return gq_err_set(err, GQ_E_IO,
                          "cannot write '%s': it is a symbolic link, which gpuqual follows only to a device "
                          "or a pipe; give the path of a regular file",
                          path);
    }
    if (S_ISDIR(lst.st_mode))
        return gq_err_set(err, GQ_E_IO, "cannot write '%s': it is a directory, expected a file name", path);
    if (node_in_place(lst.st_mode))
        return GQ_OK;
    if (!S_ISREG(lst.st_mode))
        return gq_err_set(err, GQ_E_IO,
                          "cannot write '%s': it is not a regular file, a character device or a pipe", path);
    if (access(path, W_OK) != 0)
        return gq_err_set(err, GQ_E_IO, "cannot write '%s': file is not writable", path);
    return GQ_OK;
}

int gq_outfile_check_chars(const char *what, const char *path, gq_err *err)
{
    for (size_t i = 0; path && path[i]; i++) {
        unsigned char c = (unsigned char)path[i];
        if (c < 0x20 || c == 0x7f)
            return gq_err_set(err, GQ_E_USAGE,
                              "%s%scannot write '%s': it holds a control character (%s) at byte %zu; give a "
                              "path without control characters",
                              what ? what : "", what ? ": " : "", path,
                              c == '\n'   ? "a newline"
                              : c == '\t' ? "a tab"
                              : c == '\r' ? "a carriage return"
                              : c == 0x1b ? "an escape"
                                          : "a control byte",
                              i + 1);
    }
    return GQ_OK;
}

int gq_outfile_check(const char *path, gq_err *err)
{
    if (!path || !strcmp(path, "-"))
        return GQ_OK;
    int crc = gq_outfile_check_chars(NULL, path, err);
    if (crc)
        return crc;
    size_t len = strlen(path);
    /* the messages and the names must hold the whole path: a cut one would
     * write somewhere else */
    if (len >= 1000) {
        char q[96];
        return gq_err_set(err, GQ_E_IO, "cannot write '%s': the path is %zu characters, expected under 1000",
                          gq_ellipsize(q, sizeof q, path, 60), len);
    }
    if (len == 0)
        return gq_err_set(err, GQ_E_IO, "cannot write '': expected a file name");
    if (path[len - 1] == '/')
        return gq_err_set(err, GQ_E_IO,
                          "cannot write '%s': a name ending in '/' is a directory, expected a file name",
                          path);
    if (strlen(base_of(path)) > NAME_MAX) {
        char q[96];
        return gq_err_set(err, GQ_E_IO, "cannot write '%s': the file name is %zu bytes, expected at most %d",
                          gq_ellipsize(q, sizeof q, path, 60), strlen(base_of(path)), NAME_MAX);
    }
    int rc = check_node(path, err);
    if (rc)
        return rc;
    if (gq_outfile_is_device(path))
        return GQ_OK;
    char dir[1024];
    dir_of(path, dir, sizeof dir);
    struct stat st;
    if (stat(dir, &st) != 0)
        return gq_err_set(err, GQ_E_IO, "cannot write '%s': directory '%s' does not exist", path, dir);
    if (!S_ISDIR(st.st_mode))
        return gq_err_set(err, GQ_E_IO, "cannot write '%s': %s ('%s' is a file)", path, strerror(ENOTDIR),
                          dir);
    if (access(dir, W_OK | X_OK) != 0)
        return gq_err_set(err, GQ_E_IO, "cannot write '%s': directory '%s' is not writable", path, dir);
    gq_outfile_sweep(dir);
    return GQ_OK;
}

static int open_in_place(gq_outfile *o, const char *path, gq_err *err)
{
    int fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
    struct stat st;
    if (fd < 0)
        return gq_err_set(err, GQ_E_IO, "cannot write '%s': %s", path, strerror(errno));
    if (fstat(fd, &st) != 0 || !node_in_place(st.st_mode)) {
        close(fd); /* replaced between the check and the open */
        return gq_err_set(err, GQ_E_IO,
                          "cannot write '%s': it changed while opening; expected a device or a pipe", path);
    }
    o->in_place = true;
    o->f = fdopen(fd, "w");
    if (!o->f) {
        close(fd);
        return gq_err_set(err, GQ_E_NOMEM, "cannot write '%s': out of memory", path);
    }
    return GQ_OK;
}

/* Create DIR/.gq-PID-XXXXXX exclusively, never through a link; listed for
 * cleanup. */
static int open_named(gq_outfile *o, const char *dir)
{
    for (int tries = 0; tries < 100; tries++) {
        gq_outfile_tmpname(o->tmp, sizeof o->tmp, dir);
        o->slot = gq_cleanup_add(o->tmp);
        int fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (fd >= 0)
            return fd;
        int e = errno;
        gq_cleanup_remove(o->slot);
        o->slot = -1;
        if (e != EEXIST) {
            errno = e;
            break;
        }
    }
    o->tmp[0] = 0;
    return -1;
}

int gq_outfile_open(gq_outfile *o, const char *path, gq_err *err)
{
    memset(o, 0, sizeof *o);
    o->slot = -1;
    if (!strcmp(path, "-")) {
        o->f = stdout;
        o->is_stdout = true;
        return GQ_OK;
    }
    int rc = gq_outfile_check(path, err);
    if (rc)
        return rc;
    snprintf(o->path, sizeof o->path, "%s", path);
    if (gq_outfile_is_device(path))
        return open_in_place(o, path, err);
    char dir[1024];
    dir_of(path, dir, sizeof dir);
    int fd = -1;
#ifdef O_TMPFILE
    if (access("/proc/self/fd", X_OK) == 0 && (fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666)) >= 0)
        o->anon = true;
#endif
    if (fd < 0 && (fd = open_named(o, dir)) < 0)
        return gq_err_set(err, GQ_E_IO, "cannot write '%s': %s", path, strerror(errno));
    o->f = fdopen(fd, "w");
    if (!o->f) {
        close(fd);
        gq_outfile_abort(o);
        return gq_err_set(err, GQ_E_NOMEM, "cannot write '%s': out of memory", path);
    }
    return GQ_OK;
}

/* Give the unnamed file a temporary name beside the target. */
static int link_anon(gq_outfile *o)
{
    char dir[1024], proc[64];
    dir_of(o->path, dir, sizeof dir);
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", fileno(o->f));
    for (int tries = 0; tries < 100; tries++) {
        gq_outfile_tmpname(o->tmp, sizeof o->tmp, dir);
        o->slot = gq_cleanup_add(o->tmp);
        if (linkat(AT_FDCWD, proc, AT_FDCWD, o->tmp, AT_SYMLINK_FOLLOW) == 0)
            return 0;
        int e = errno;
        gq_cleanup_remove(o->slot);
        o->slot = -1;
        o->tmp[0] = 0;
        if (e != EEXIST) {
            errno = e;
            return -1;
        }
    }
    return -1;
}

static void drop_tmp(gq_outfile *o)
{
    if (o->tmp[0])
        unlink(o->tmp);
    o->tmp[0] = 0;
    gq_cleanup_remove(o->slot);
    o->slot = -1;
}

int gq_outfile_commit(gq_outfile *o, gq_err *err)
{
    if (!o->f)
        return GQ_OK;
    if (o->is_stdout) {
        int bad = fflush(stdout) != 0 || ferror(stdout);
        o->f = NULL;
        return bad ? gq_err_set(err, GQ_E_FAIL, "writing to standard output failed: %s", strerror(errno))
                   : GQ_OK;
    }
    int bad = ferror(o->f) || fflush(o->f) != 0;
    int e = errno;
    /* a device or a pipe cannot always be synced (/dev/null says EINVAL) */
    if (!o->in_place && !bad && fsync(fileno(o->f)) != 0) {
        bad = 1;
        e = errno;
    }
    if (!o->in_place && !bad && o->anon && link_anon(o) != 0) {
        bad = 1;
        e = errno;
    }
    if (fclose(o->f) != 0 && !bad) {
        bad = 1;
        e = errno;
    }
    o->f = NULL;
    if (bad) {
        drop_tmp(o);
        return gq_err_set(err, GQ_E_IO, "writing '%s' failed: %s", o->path, e ? strerror(e) : "write error");
    }
    if (o->in_place)
        return GQ_OK;
    if (rename(o->tmp, o->path) != 0) {
        int e2 = errno;
        drop_tmp(o);
        return gq_err_set(err, GQ_E_IO, "cannot write '%s': %s", o->path, strerror(e2));
    }
    o->tmp[0] = 0;
    gq_cleanup_remove(o->slot);
    o->slot = -1;
    gq_outfile_sync_dir(o->path);
    return GQ_OK;
}

void gq_outfile_abort(gq_outfile *o)
{
    if (!o->f && !o->tmp[0])
        return; /* never opened, or already committed */
    if (o->f && !o->is_stdout)
        fclose(o->f);
    if (!o->is_stdout)
        drop_tmp(o);
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
