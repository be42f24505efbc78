/*
 * test_clock.c: the server's clock (server/core/clock.c): deadlines for
 * pthread_cond_timedwait and pthread_timedjoin_np, ms from now on a clock.
 * Every bound is taken from the clock read before and after the call, so no
 * assertion depends on how long a step takes.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <time.h>

#include "core/clock.h"

static int64_t ns_of(struct timespec t)
{
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void check(clockid_t clock, int64_t ms, int64_t want_ms)
{
    struct timespec before, after;
    clock_gettime(clock, &before);
    struct timespec d = ztd_deadline(clock, ms);
    clock_gettime(clock, &after);
    assert_true(d.tv_nsec >= 0 && d.tv_nsec < 1000000000);
    assert_true(ns_of(d) >= ns_of(before) + want_ms * 1000000);
    assert_true(ns_of(d) <= ns_of(after) + want_ms * 1000000);
}

static void deadlines_on_both_clocks(void **state)
{
    (void)state;
    static const int64_t ms[] = {0, 1, 999, 1000, 1001, 1500, 60000, 3600123};
    for (size_t i = 0; i < sizeof(ms) / sizeof(ms[0]); i++) {
        check(CLOCK_MONOTONIC, ms[i], ms[i]);
        check(CLOCK_REALTIME, ms[i], ms[i]);
    }
}

static void a_past_deadline_is_now(void **state)
{
    (void)state;
    check(CLOCK_MONOTONIC, -1, 0);
    check(CLOCK_MONOTONIC, -2500, 0);
    check(CLOCK_REALTIME, -1, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(deadlines_on_both_clocks),
        cmocka_unit_test(a_past_deadline_is_now),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
