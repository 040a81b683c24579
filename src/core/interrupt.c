#include "core/interrupt.h"

#include <signal.h>

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
