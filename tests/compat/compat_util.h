/* Shared by tests/compat: run `nvbandwidth` (a link to gpuqual named
 * nvbandwidth, as a consumer finds it) with an environment and arguments,
 * and read the saved real outputs of nvbandwidth v0.8 (bench/reference). */
#ifndef GQ_TESTS_COMPAT_UTIL_H
#define GQ_TESTS_COMPAT_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define REF_DIR GQ_TEST_DATA "/../bench/reference"

typedef struct proc_out {
    char *out; /* stdout */
    char *err; /* stderr */
    int rc;    /* exit status, or -1 */
} proc_out;

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0;
    char *b = malloc(cap);
    size_t got;
    while (b && (got = fread(b + n, 1, cap - n - 1, f)) > 0) {
        n += got;
        if (cap - n < 2) {
            char *nb = realloc(b, cap *= 2);
            if (!nb) {
                free(b);
                b = NULL;
            }
            b = nb;
        }
    }
    fclose(f);
    if (b)
        b[n] = 0;
    return b;
}

/* A directory holding a link named nvbandwidth to the gpuqual under test. */
static const char *nvbw_dir(void)
{
    static char dir[256];
    if (dir[0])
        return dir;
    snprintf(dir, sizeof dir, "/tmp/gq-compat-XXXXXX");
    if (!mkdtemp(dir))
        return NULL;
    char link[300];
    snprintf(link, sizeof link, "%s/nvbandwidth", dir);
    if (symlink(GQ_BIN, link) != 0)
        return NULL;
    return dir;
}

static void nvbw_dir_remove(void)
{
    const char *d = nvbw_dir();
    char p[300];
    snprintf(p, sizeof p, "%s/nvbandwidth", d);
    unlink(p);
    snprintf(p, sizeof p, "%s/out", d);
    unlink(p);
    snprintf(p, sizeof p, "%s/err", d);
    unlink(p);
    rmdir(d);
}

/* Run "ENV <dir>/nvbandwidth ARGS" through sh, as a consumer's subprocess. */
static proc_out run_nvbw(const char *env, const char *args)
{
    proc_out r = {0};
    const char *d = nvbw_dir();
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "env %s %s/nvbandwidth %s >%s/out 2>%s/err", env ? env : "", d, args, d, d);
    int st = system(cmd);
    r.rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    char p[300];
    snprintf(p, sizeof p, "%s/out", d);
    r.out = slurp(p);
    snprintf(p, sizeof p, "%s/err", d);
    r.err = slurp(p);
    return r;
}

static void proc_free(proc_out *r)
{
    free(r->out);
    free(r->err);
}

#endif
