/*
 * test_tcp_acked.c: unit tests for server/http/tcp_acked.c, the bytes a response
 * cut short delivered: the acknowledged bytes between two readings, capped
 * at the body length, and 0 when a reading is unknown or goes backwards.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "http/tcp_acked.h"

static void delivered(void **state)
{
    (void)state;
    assert_int_equal(ztd_tcp_delivered(1000, 1000 + 4096, 1 << 20), 4096);
    assert_int_equal(ztd_tcp_delivered(0, 5u << 20, 1 << 20), 1 << 20); /* capped */
    assert_int_equal(ztd_tcp_delivered(7, 7, 100), 0);
    assert_int_equal(ztd_tcp_delivered(ZTD_ACKED_UNKNOWN, 5000, 100), 0);
    assert_int_equal(ztd_tcp_delivered(5000, ZTD_ACKED_UNKNOWN, 100), 0);
    assert_int_equal(ztd_tcp_delivered(5000, 4000, 100), 0);
    assert_int_equal(ztd_tcp_delivered(0, 100, 0), 0); /* HEAD, or no response queued */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(delivered),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
