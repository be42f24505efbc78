/* The monotonic clock (see clock.h). */
#include "core/clock.h"

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

struct timespec ztd_deadline(clockid_t clock, int64_t ms)
{
    struct timespec t;
    clock_gettime(clock, &t);
    if (ms < 0)
        ms = 0;
    t.tv_sec += (time_t)(ms / 1000);
    t.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (t.tv_nsec >= 1000000000L) {
        t.tv_sec++;
        t.tv_nsec -= 1000000000L;
    }
    return t;
}
