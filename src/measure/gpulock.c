/* Per-GPU advisory locks (measure/gpulock.h). */
#include "measure/gpulock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/interrupt.h"
#include "core/units.h"

static bool usable_dir(const char *d)
{
    struct stat st;
    return d && *d && stat(d, &st) == 0 && S_ISDIR(st.st_mode) && access(d, W_OK | X_OK) == 0;
}

static const char *lock_dir(void)
{
    const char *env = getenv("GQ_LOCK_DIR");
    if (env && *env)
        return env;
    if (usable_dir("/run/lock"))
        return "/run/lock";
    const char *x = getenv("XDG_RUNTIME_DIR");
    if (usable_dir(x))
        return x;
    return "/tmp";
}

/* A file-name-safe key for GPU g. */
static void gpu_key(const gq_topo *t, int g, char *buf, size_t n)
{
    const char *src = "";
    if (g >= 0 && g < t->ngpu)
        src = t->gpu[g].uuid[0] ? t->gpu[g].uuid : t->gpu[g].pci_bus_id;
    if (!*src) {
        snprintf(buf, n, "gpu%d", g);
        return;
    }
    size_t k = 0;
    for (const char *p = src; *p && k + 1 < n; p++)
        buf[k++] = (char)((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
                                  *p == '-'
                              ? *p
                              : '_');
    buf[k] = '\0';
}

static void holder(int fd, char *buf, size_t n)
{
    buf[0] = '\0';
    ssize_t r = pread(fd, buf, n - 1, 0);
    if (r <= 0) {
        snprintf(buf, n, "unknown process");
        return;
    }
    buf[r] = '\0';
    char *nl = strchr(buf, '\n');
    if (nl)
        *nl = '\0';
}

int gq_gpulock_acquire(gq_gpulock *lk, const gq_topo *t, const int *gpus, int n, double wait_s,
                       const char *what, gq_err *err)
{
    memset(lk, 0, sizeof *lk);
    snprintf(lk->dir, sizeof lk->dir, "%s", lock_dir());
    double t0 = gq_now_mono();
    for (int i = 0; i < n; i++) {
        bool dup = false;
        for (int k = 0; k < i && !dup; k++)
            dup = gpus[k] == gpus[i];
        if (dup)
            continue;
        char key[96], path[512];
        gpu_key(t, gpus[i], key, sizeof key);
        snprintf(path, sizeof path, "%s/gpuqual-%s.lock", lk->dir, key);
        int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (fd < 0) {
            gq_gpulock_release(lk);
            return gq_err_set(err, GQ_E_IO,
                              "cannot open the GPU lock %s: %s (set GQ_LOCK_DIR to a writable directory)",
                              path, strerror(errno));
        }
        (void)fchmod(fd, 0666); /* other users' gpuqual must be able to take it too */
        for (;;) {
            if (flock(fd, LOCK_EX | LOCK_NB) == 0)
                break;
            if (errno != EWOULDBLOCK && errno != EINTR) {
                int e = errno;
                close(fd);
                gq_gpulock_release(lk);
                return gq_err_set(err, GQ_E_IO, "cannot lock %s: %s", path, strerror(e));
            }
            if (gq_interrupt_requested() || gq_now_mono() - t0 >= wait_s) {
                char who[200];
                holder(fd, who, sizeof who);
                close(fd);
                gq_gpulock_release(lk);
                return gq_err_set(
                    err, GQ_E_BUSY,
                    "GPU %d is in use by another gpuqual (%s)%s; wait for it with --wait-busy TIME", gpus[i],
                    who, wait_s > 0 ? ", still after --wait-busy" : "");
            }
            struct timespec ts = {0, 200000000L};
            nanosleep(&ts, NULL);
        }
        char line[200];
        int l = snprintf(line, sizeof line, "pid %d, %s\n", (int)getpid(), what ? what : "gpuqual");
        if (ftruncate(fd, 0) == 0 && l > 0)
            (void)!pwrite(fd, line, (size_t)l < sizeof line ? (size_t)l : sizeof line - 1, 0);
        lk->fd[lk->n++] = fd;
    }
    return GQ_OK;
}

void gq_gpulock_release(gq_gpulock *lk)
{
    for (int i = 0; i < lk->n; i++)
        if (lk->fd[i] >= 0)
            close(lk->fd[i]); /* drops the lock; the file stays for the next one */
    lk->n = 0;
}
