/*
 * The runtime version calls, through the shared library a program loads:
 * they must be exported and agree with the header the program was built with.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <ztensor/ztensor.h>

static void number_matches_header(void **state)
{
    (void)state;
    assert_int_equal(zt_version_number(), ZT_VERSION_NUMBER);
    assert_int_equal(ZT_VERSION_NUMBER,
                     ZT_VERSION_MAJOR * 10000 + ZT_VERSION_MINOR * 100 + ZT_VERSION_PATCH);
}

static void string_matches_number(void **state)
{
    (void)state;
    char want[32];
    unsigned v = zt_version_number();
    snprintf(want, sizeof(want), "%u.%u.%u", v / 10000, v / 100 % 100, v % 100);
    assert_string_equal(zt_version_string(), want);
    assert_string_equal(zt_version_string(), ZT_VERSION_STRING);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(number_matches_header),
        cmocka_unit_test(string_matches_number),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
