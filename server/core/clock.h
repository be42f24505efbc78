/*
 * The monotonic clock, in the units the server counts in: deadlines and idle
 * times in milliseconds, request durations in microseconds. One home, so no
 * file does its own timespec arithmetic.
 */
#ifndef ZTD_CLOCK_H
#define ZTD_CLOCK_H

#include <stdint.h>

/* CLOCK_MONOTONIC in milliseconds and in microseconds. */
uint64_t ztd_now_ms(void);
uint64_t ztd_now_us(void);

#endif
