#include "core/workers.h"

#include <ctype.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define GQ_CPU_BITS 1024

typedef struct worker {
    gq_workers *w;
    int idx;
    bool pin;
    cpu_set_t set;
    pthread_t th;
} worker;

struct gq_workers {
    int n;
    gq_worker_fn fn;
    void *arg;
    worker *v;
    /* The start gate: threads wait here until every thread exists, so that
     * a failed creation never leaves a worker stuck in the barrier. */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int gate; /* 0 closed, 1 run, -1 abort */
    /* A counting barrier of n + 1 (generation-based, reusable). */
    int arrived;
    unsigned long generation;
};

int gq_cpulist_parse(const char *list, unsigned long long *mask, int nbits)
{
    memset(mask, 0, (size_t)(nbits / 64) * sizeof *mask);
    int count = 0;
    const char *p = list;
    while (*p) {
        while (isspace((unsigned char)*p))
            p++;
        if (!*p)
            break;
        if (!isdigit((unsigned char)*p))
            return -1;
        char *e;
        long a = strtol(p, &e, 10), b = a;
        p = e;
        if (*p == '-') {
            p++;
            if (!isdigit((unsigned char)*p))
                return -1;
            b = strtol(p, &e, 10);
            p = e;
        }
        if (b < a)
            return -1;
        for (long c = a; c <= b && c < nbits; c++) {
            if (!(mask[c / 64] & (1ull << (c % 64))))
                count++;
            mask[c / 64] |= 1ull << (c % 64);
        }
        while (isspace((unsigned char)*p))
            p++;
        if (*p == ',')
            p++;
        else if (*p)
            return -1;
    }
    return count;
}

static void *trampoline(void *p)
{
    worker *k = p;
    gq_workers *w = k->w;
    if (k->pin)
        (void)pthread_setaffinity_np(pthread_self(), sizeof k->set, &k->set);
    pthread_mutex_lock(&w->mu);
    while (w->gate == 0)
        pthread_cond_wait(&w->cv, &w->mu);
    int go = w->gate > 0;
    pthread_mutex_unlock(&w->mu);
    if (go)
        w->fn(w->arg, k->idx, w);
    return NULL;
}

int gq_workers_start(gq_workers **out, int n, gq_worker_fn fn, void *arg, const char *const *cpulists,
                     gq_err *err)
{
    *out = NULL;
    if (n < 1)
        return gq_err_set(err, GQ_E_FAIL, "workers: need at least one worker, got %d", n);
    gq_workers *w = calloc(1, sizeof *w);
    if (!w || !(w->v = calloc((size_t)n, sizeof *w->v))) {
        free(w);
        return gq_err_set(err, GQ_E_NOMEM, "workers: out of memory for %d workers", n);
    }
    w->n = n;
    w->fn = fn;
    w->arg = arg;
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
    int created = 0, rc = GQ_OK;
    for (int i = 0; i < n; i++) {
        worker *k = &w->v[i];
        k->w = w;
        k->idx = i;
        CPU_ZERO(&k->set);
        if (cpulists && cpulists[i] && cpulists[i][0]) {
            unsigned long long mask[GQ_CPU_BITS / 64];
            if (gq_cpulist_parse(cpulists[i], mask, GQ_CPU_BITS) > 0) {
                for (int c = 0; c < GQ_CPU_BITS && c < CPU_SETSIZE; c++)
                    if (mask[c / 64] & (1ull << (c % 64)))
                        CPU_SET(c, &k->set);
                k->pin = true;
            }
        }
        int e = pthread_create(&k->th, NULL, trampoline, k);
        if (e) {
            rc = gq_err_set(err, GQ_E_FAIL, "workers: cannot create thread %d of %d: %s", i + 1, n,
                            strerror(e));
            break;
        }
        created++;
    }
    pthread_mutex_lock(&w->mu);
    w->gate = rc == GQ_OK ? 1 : -1;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
    if (rc != GQ_OK) {
        for (int i = 0; i < created; i++)
            pthread_join(w->v[i].th, NULL);
        pthread_cond_destroy(&w->cv);
        pthread_mutex_destroy(&w->mu);
        free(w->v);
        free(w);
        return rc;
    }
    *out = w;
    return GQ_OK;
}

void gq_workers_barrier(gq_workers *w)
{
    pthread_mutex_lock(&w->mu);
    unsigned long gen = w->generation;
    if (++w->arrived == w->n + 1) {
        w->arrived = 0;
        w->generation++;
        pthread_cond_broadcast(&w->cv);
    } else {
        while (gen == w->generation)
            pthread_cond_wait(&w->cv, &w->mu);
    }
    pthread_mutex_unlock(&w->mu);
}

void gq_workers_join(gq_workers *w)
{
    if (!w)
        return;
    for (int i = 0; i < w->n; i++)
        pthread_join(w->v[i].th, NULL);
    pthread_cond_destroy(&w->cv);
    pthread_mutex_destroy(&w->mu);
    free(w->v);
    free(w);
}
