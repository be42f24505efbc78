/* The monotonic clock (see clock.h). */
#include "core/clock.h"

#include <time.h>

uint64_t ztd_now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000 + (uint64_t)t.tv_nsec / 1000;
}

uint64_t ztd_now_ms(void)
{
    return ztd_now_us() / 1000;
}
