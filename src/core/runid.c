#include "core/runid.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

void gq_run_id_make(char buf[32])
{
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    uint32_t rnd = 0;
    if (getrandom(&rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd) {
        /* no entropy source: the clock and the process still tell runs apart */
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        rnd = (uint32_t)ts.tv_nsec * 2654435761u ^ (uint32_t)getpid();
    }
    strftime(buf, 32, "%Y%m%dT%H%M%SZ", &tm);
    snprintf(buf + 16, 16, "-%08x", rnd);
}

bool gq_run_id_valid(const char *s)
{
    if (!s || strlen(s) != 25)
        return false;
    for (int i = 0; i < 25; i++) {
        char c = s[i];
        bool ok = i == 8    ? c == 'T'
                  : i == 15 ? c == 'Z'
                  : i == 16 ? c == '-'
                  : i < 16  ? (c >= '0' && c <= '9')
                            : ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'));
        if (!ok)
            return false;
    }
    return true;
}

static char current[32];
static pthread_once_t current_once = PTHREAD_ONCE_INIT;

static void make_current(void)
{
    gq_run_id_make(current);
}

const char *gq_run_id_current(void)
{
    pthread_once(&current_once, make_current);
    return current;
}
