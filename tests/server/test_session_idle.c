/*
 * test_session_idle.c: the idle test of upload sessions (server/store/sessions.c).
 * The sweep reads the clock, then takes the table's lock; a request that
 * releases a session (or opens one) in between stamps it later than the
 * sweep's "now". Such a session was just used: it must not count as idle
 * for 2^64 ms, which expired busy sessions under load (found by the soak).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "store/sessions.h"

static void idle(void **state)
{
    (void)state;
    uint64_t hour = 3600 * 1000;
    assert_false(ztd_session_idle(1000000, 1000000 - 10, hour));
    assert_false(ztd_session_idle(1000000, 1000000 - hour, hour)); /* exactly the timeout */
    assert_true(ztd_session_idle(1000000 + hour + 1, 1000000, hour));
    assert_true(ztd_session_idle(5000, 0, 1000));
}

static void used_after_the_clock_was_read(void **state)
{
    (void)state;
    uint64_t hour = 3600 * 1000;
    assert_false(ztd_session_idle(1000000, 1000001, hour));
    assert_false(ztd_session_idle(1000000, 1000000 + hour * 2, hour));
    assert_false(ztd_session_idle(0, UINT64_MAX, 0));
    assert_false(ztd_session_idle(7, 7, 0));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(idle),
        cmocka_unit_test(used_after_the_clock_was_read),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
