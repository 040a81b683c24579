#include "core/interrupt.h"

#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t flag;

void gq_interrupt_request(void)
{
    flag = 1;
}

bool gq_interrupt_requested(void)
{
    return flag != 0;
}

void gq_interrupt_clear(void)
{
    flag = 0;
}

/* A slot is free (0), being filled (1) or listed (2); the handler reads only
 * listed slots, whose name is complete. */
static atomic_int state[GQ_CLEANUP_SLOTS];
static char names[GQ_CLEANUP_SLOTS][GQ_CLEANUP_PATH];

int gq_cleanup_add(const char *path)
{
    if (!path || strlen(path) >= GQ_CLEANUP_PATH)
        return -1;
    for (int i = 0; i < GQ_CLEANUP_SLOTS; i++) {
        int want = 0;
        if (atomic_compare_exchange_strong(&state[i], &want, 1)) {
            memcpy(names[i], path, strlen(path) + 1);
            atomic_store(&state[i], 2);
            return i;
        }
    }
    return -1;
}

void gq_cleanup_remove(int slot)
{
    if (slot >= 0 && slot < GQ_CLEANUP_SLOTS)
        atomic_store(&state[slot], 0);
}

void gq_cleanup_run(void)
{
    for (int i = 0; i < GQ_CLEANUP_SLOTS; i++)
        if (atomic_load(&state[i]) == 2)
            unlink(names[i]);
}
