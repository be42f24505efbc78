/*
 * The monotonic clock, in the units the server counts in: deadlines and idle
 * times in milliseconds, request durations in microseconds. One home, so no
 * file does its own timespec arithmetic.
 */
#ifndef ZTD_CLOCK_H
#define ZTD_CLOCK_H

#include <stdint.h>
#include <time.h>

/* CLOCK_MONOTONIC in milliseconds and in microseconds. */
uint64_t ztd_now_ms(void);
uint64_t ztd_now_us(void);

/* The time ms milliseconds from now on clock (0 for a negative ms), as the
 * absolute deadline pthread_cond_timedwait (on the condition's clock) and
 * pthread_timedjoin_np (CLOCK_REALTIME) take. */
struct timespec ztd_deadline(clockid_t clock, int64_t ms);

#endif
