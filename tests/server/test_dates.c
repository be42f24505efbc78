/*
 * test_dates.c: unit tests for server/core/dates.c (the calendar, and HTTP-dates in their three
 * formats, parsed and formatted).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/dates.h"

/* Sun, 06 Nov 1994 08:49:37 GMT, the example date of RFC 9110. */
#define LM 784111777

static void civil_roundtrip(void **state)
{
    (void)state;
    assert_int_equal(ztd_days_from_civil(1970, 1, 1), 0);
    assert_int_equal(ztd_days_from_civil(1969, 12, 31), -1);
    assert_int_equal(ztd_days_from_civil(2000, 3, 1), 11017);
    /* every day from year -1 to 2400, there and back */
    for (int64_t z = ztd_days_from_civil(-1, 1, 1); z < ztd_days_from_civil(2401, 1, 1); z++) {
        int64_t y;
        unsigned m, d;
        ztd_civil_from_days(z, &y, &m, &d);
        assert_int_equal(ztd_days_from_civil(y, m, d), z);
        assert_in_range(m, 1, 12);
        assert_in_range(d, 1, 31);
    }
}

/* ---- HTTP-date ------------------------------------------------------------------------ */

static int64_t utc(int y, int mo, int d, int h, int mi, int s)
{
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    tm.tm_year = y - 1900;
    tm.tm_mon = mo - 1;
    tm.tm_mday = d;
    tm.tm_hour = h;
    tm.tm_min = mi;
    tm.tm_sec = s;
    return (int64_t)timegm(&tm);
}

static void date_three_formats(void **state)
{
    int64_t t = -1;

    assert_int_equal(ztd_http_date_parse("Sun, 06 Nov 1994 08:49:37 GMT", &t), 0);
    assert_int_equal(t, LM);
    t = -1;
    assert_int_equal(ztd_http_date_parse("Sunday, 06-Nov-94 08:49:37 GMT", &t), 0);
    assert_int_equal(t, LM);
    t = -1;
    assert_int_equal(ztd_http_date_parse("Sun Nov  6 08:49:37 1994", &t), 0);
    assert_int_equal(t, LM);
    assert_int_equal(ztd_http_date_parse("Thu Nov 10 08:49:37 1994", &t), 0);
    assert_int_equal(t, LM + 4 * 86400);

    assert_int_equal(ztd_http_date_parse("Thu, 01 Jan 1970 00:00:00 GMT", &t), 0);
    assert_int_equal(t, 0);
    assert_int_equal(ztd_http_date_parse("Wed, 31 Dec 1969 23:59:59 GMT", &t), 0);
    assert_int_equal(t, -1);
    assert_int_equal(ztd_http_date_parse("Thu, 29 Feb 2024 12:00:00 GMT", &t), 0);
    assert_int_equal(t, 1709208000);
    assert_int_equal(ztd_http_date_parse("Tue, 29 Feb 2000 00:00:00 GMT", &t), 0);
    assert_int_equal(t, utc(2000, 2, 29, 0, 0, 0));
    assert_int_equal(ztd_http_date_parse("Fri, 31 Dec 9999 23:59:59 GMT", &t), 0);
    assert_int_equal(t, utc(9999, 12, 31, 23, 59, 59));
    /* a leap second rolls over */
    assert_int_equal(ztd_http_date_parse("Sat, 31 Dec 2016 23:59:60 GMT", &t), 0);
    assert_int_equal(t, utc(2017, 1, 1, 0, 0, 0));

    /* RFC 850 two-digit years: 70-99 are 19xx, 00-69 are 20xx */
    assert_int_equal(ztd_http_date_parse("Thursday, 01-Jan-70 00:00:00 GMT", &t), 0);
    assert_int_equal(t, 0);
    assert_int_equal(ztd_http_date_parse("Friday, 01-Jan-21 00:00:00 GMT", &t), 0);
    assert_int_equal(t, utc(2021, 1, 1, 0, 0, 0));
    assert_int_equal(ztd_http_date_parse("Friday, 31-Dec-99 23:59:59 GMT", &t), 0);
    assert_int_equal(t, utc(1999, 12, 31, 23, 59, 59));
    assert_int_equal(ztd_http_date_parse("Sunday, 01-Jan-69 00:00:00 GMT", &t), 0);
    assert_int_equal(t, utc(2069, 1, 1, 0, 0, 0));

    /* names in any case, surrounding whitespace */
    assert_int_equal(ztd_http_date_parse("sun, 06 NOV 1994 08:49:37 gmt", &t), 0);
    assert_int_equal(t, LM);
    assert_int_equal(ztd_http_date_parse(" \tSun, 06 Nov 1994 08:49:37 GMT \t", &t), 0);
    assert_int_equal(t, LM);
    assert_int_equal(ztd_http_date_parse("SUNDAY, 06-nov-94 08:49:37 GMT", &t), 0);
    assert_int_equal(t, LM);
    /* the weekday is not checked against the date */
    assert_int_equal(ztd_http_date_parse("Mon, 06 Nov 1994 08:49:37 GMT", &t), 0);
    assert_int_equal(t, LM);
}

static void date_garbage(void **state)
{
    static const char *const bad[] = {
        "",
        "   ",
        "yesterday",
        "784111777",
        "Sun, 06 Nov 1994 08:49:37",
        "Sun, 06 Nov 1994 08:49:37 UTC",
        "Sun, 06 Nov 1994 08:49:37 GMTx",
        "Sun, 06 Nov 1994 08:49:37 GMT; length=12",
        "Sun, 6 Nov 1994 08:49:37 GMT",
        "Sun, 06 Nov 94 08:49:37 GMT",
        "Sun,06 Nov 1994 08:49:37 GMT",
        "Sun, 06  Nov 1994 08:49:37 GMT",
        "Sun, 00 Nov 1994 08:49:37 GMT",
        "Sun, 31 Nov 1994 08:49:37 GMT",
        "Sun, 32 Dec 1994 08:49:37 GMT",
        "Sun, 29 Feb 2023 08:49:37 GMT",
        "Thu, 29 Feb 1900 08:49:37 GMT",
        "Sun, 06 Foo 1994 08:49:37 GMT",
        "Sun, 06 Nov 1994 24:00:00 GMT",
        "Sun, 06 Nov 1994 08:60:00 GMT",
        "Sun, 06 Nov 1994 08:49:61 GMT",
        "Sun, 06 Nov 1994 8:49:37 GMT",
        "Sun, 06 Nov 1994 08:49 GMT",
        "Sun, 06 Nov -994 08:49:37 GMT",
        "Xyz, 06 Nov 1994 08:49:37 GMT",
        "Sunday, 06-Nov-1994 08:49:37 GMT",
        "Sunday, 06 Nov 94 08:49:37 GMT",
        "Sunday, 06-Nov-94 08:49:37",
        "Sun Nov 6 08:49:37 1994",
        "Sun Nov  6 08:49:37 94",
        "Sun Nov 06 08:49:37 1994 GMT",
        "Sun Nov  0 08:49:37 1994",
        "Sun",
        "Sun,",
        "Sunday",
    };
    int64_t t = 12345;

    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (ztd_http_date_parse(bad[i], &t) != -1)
            fail_msg("accepted \"%s\"", bad[i]);
    assert_int_equal(t, 12345); /* untouched on failure */
    assert_int_equal(ztd_http_date_parse(NULL, &t), -1);
}

static void date_format(void **state)
{
    char buf[32];

    ztd_http_date_format(LM, buf);
    assert_string_equal(buf, "Sun, 06 Nov 1994 08:49:37 GMT");
    ztd_http_date_format(0, buf);
    assert_string_equal(buf, "Thu, 01 Jan 1970 00:00:00 GMT");
    ztd_http_date_format(-1, buf);
    assert_string_equal(buf, "Wed, 31 Dec 1969 23:59:59 GMT");
    ztd_http_date_format(1709208000, buf);
    assert_string_equal(buf, "Thu, 29 Feb 2024 12:00:00 GMT");
    ztd_http_date_format(INT64_MAX, buf);
    assert_string_equal(buf, "Fri, 31 Dec 9999 23:59:59 GMT");
    ztd_http_date_format(INT64_MIN, buf);
    assert_string_equal(buf, "Sat, 01 Jan 0000 00:00:00 GMT");
}

/* Compare with the C library across 1900..2500 and round-trip through the parser. */
static void date_format_matches_libc_and_roundtrips(void **state)
{
    const int64_t lo = utc(1900, 1, 1, 0, 0, 0), hi = utc(2500, 1, 1, 0, 0, 0);
    char mine[32], libc[64];

    for (int64_t t = lo; t < hi; t += 86400 * 7 + 3607) {
        time_t tt = (time_t)t;
        struct tm tm;
        int64_t back = 0;

        gmtime_r(&tt, &tm);
        strftime(libc, sizeof libc, "%a, %d %b %Y %H:%M:%S GMT", &tm);
        ztd_http_date_format(t, mine);
        assert_string_equal(mine, libc);
        assert_int_equal(strlen(mine), 29);
        assert_int_equal(ztd_http_date_parse(mine, &back), 0);
        assert_int_equal(back, t);
    }
}

/* ---- Content-Range and multipart ------------------------------------------------------ */

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(civil_roundtrip),
        cmocka_unit_test(date_three_formats),
        cmocka_unit_test(date_garbage),
        cmocka_unit_test(date_format),
        cmocka_unit_test(date_format_matches_libc_and_roundtrips),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
