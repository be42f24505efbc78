/*
 * Dates (see dates.h): Howard Hinnant's public-domain algorithms between days
 * since 1970-01-01 and the proleptic Gregorian calendar, and HTTP-dates on top.
 */
#include "core/dates.h"
#include "core/lex.h"

#include <stdio.h>
#include <string.h>

static const char *const wkday_short[7] = {"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"};
static const char *const wkday_long[7] = {"Monday", "Tuesday",  "Wednesday", "Thursday",
                                          "Friday", "Saturday", "Sunday"};
static const char *const month_name[12] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                           "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

/* Howard Hinnant's days_from_civil: proleptic Gregorian date to days since 1970-01-01. */
int64_t ztd_days_from_civil(int64_t y, unsigned m, unsigned d)
{
    int64_t era;
    unsigned yoe, doy, doe;

    y -= m <= 2;
    era = (y >= 0 ? y : y - 399) / 400;
    yoe = (unsigned)(y - era * 400);
    doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

void ztd_civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
    int64_t era;
    unsigned doe, yoe, doy, mp;

    z += 719468;
    era = (z >= 0 ? z : z - 146096) / 146097;
    doe = (unsigned)(z - era * 146097);
    yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    mp = (5 * doy + 2) / 153;
    *d = doy - (153 * mp + 2) / 5 + 1;
    *m = mp < 10 ? mp + 3 : mp - 9;
    *y = (int64_t)yoe + era * 400 + (*m <= 2);
}

static unsigned days_in_month(int64_t y, unsigned m)
{
    static const unsigned dim[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return m == 2 && leap ? 29 : dim[m - 1];
}

/* Exactly n digits. */
static int fixed_digits(const char **pp, int n, unsigned *out)
{
    const char *p = *pp;
    unsigned v = 0;
    for (int i = 0; i < n; i++, p++) {
        if (!ztd_is_digit(*p))
            return -1;
        v = v * 10 + (unsigned)(*p - '0');
    }
    *pp = p;
    *out = v;
    return 0;
}

static int expect(const char **pp, char c)
{
    if (**pp != c)
        return -1;
    (*pp)++;
    return 0;
}

/* Index of the name at *pp among names[0..n), case-insensitively; advances past it. A
 * prefix match is enough because the caller then requires the exact delimiter. */
static int name_index(const char **pp, const char *const *names, int n)
{
    for (int i = 0; i < n; i++) {
        if (ztd_prefix_ci(*pp, names[i])) {
            *pp += strlen(names[i]);
            return i;
        }
    }
    return -1;
}

static int parse_month(const char **pp, unsigned *mon)
{
    int i = name_index(pp, month_name, 12);
    if (i < 0)
        return -1;
    *mon = (unsigned)i + 1;
    return 0;
}

static int parse_clock(const char **pp, unsigned *hh, unsigned *mi, unsigned *ss)
{
    if (fixed_digits(pp, 2, hh) || expect(pp, ':') || fixed_digits(pp, 2, mi) || expect(pp, ':') ||
        fixed_digits(pp, 2, ss))
        return -1;
    return *hh <= 23 && *mi <= 59 && *ss <= 60 ? 0 : -1;
}

static int parse_gmt(const char **pp)
{
    if (!ztd_prefix_ci(*pp, "GMT"))
        return -1;
    *pp += 3;
    return 0;
}

int ztd_http_date_parse(const char *s, int64_t *out)
{
    const char *p;
    unsigned day, mon, yy, hh, mi, ss;
    int64_t year;

    if (s == NULL)
        return -1;
    p = ztd_skip_ows(s);
    if (name_index(&p, wkday_long, 7) >= 0) {
        /* RFC 850: Sunday, 06-Nov-94 08:49:37 GMT */
        if (expect(&p, ',') || expect(&p, ' ') || fixed_digits(&p, 2, &day) || expect(&p, '-') ||
            parse_month(&p, &mon) || expect(&p, '-') || fixed_digits(&p, 2, &yy) ||
            expect(&p, ' ') || parse_clock(&p, &hh, &mi, &ss) || expect(&p, ' ') || parse_gmt(&p))
            return -1;
        year = yy < 70 ? 2000 + yy : 1900 + yy;
    } else if (name_index(&p, wkday_short, 7) >= 0) {
        if (*p == ',') {
            /* IMF-fixdate: Sun, 06 Nov 1994 08:49:37 GMT */
            p++;
            if (expect(&p, ' ') || fixed_digits(&p, 2, &day) || expect(&p, ' ') ||
                parse_month(&p, &mon) || expect(&p, ' ') || fixed_digits(&p, 4, &yy) ||
                expect(&p, ' ') || parse_clock(&p, &hh, &mi, &ss) || expect(&p, ' ') ||
                parse_gmt(&p))
                return -1;
        } else {
            /* asctime: Sun Nov  6 08:49:37 1994 */
            if (expect(&p, ' ') || parse_month(&p, &mon) || expect(&p, ' '))
                return -1;
            if (*p == ' ') {
                p++;
                if (fixed_digits(&p, 1, &day))
                    return -1;
            } else if (fixed_digits(&p, 2, &day)) {
                return -1;
            }
            if (expect(&p, ' ') || parse_clock(&p, &hh, &mi, &ss) || expect(&p, ' ') ||
                fixed_digits(&p, 4, &yy))
                return -1;
        }
        year = yy;
    } else {
        return -1;
    }
    if (*ztd_skip_ows(p) != '\0')
        return -1;
    if (day < 1 || day > days_in_month(year, mon))
        return -1;
    *out = ztd_days_from_civil(year, mon, day) * 86400 + (int64_t)hh * 3600 + (int64_t)mi * 60 +
           (int64_t)ss;
    return 0;
}

void ztd_http_date_format(int64_t t, char out[32])
{
    const int64_t lo = ztd_days_from_civil(0, 1, 1) * 86400;
    const int64_t hi = ztd_days_from_civil(9999, 12, 31) * 86400 + 86399;
    int64_t days, secs, y;
    unsigned m, d;
    int wd;

    if (t < lo)
        t = lo;
    if (t > hi)
        t = hi;
    days = t / 86400;
    secs = t % 86400;
    if (secs < 0) {
        secs += 86400;
        days--;
    }
    ztd_civil_from_days(days, &y, &m, &d);
    /* 1970-01-01 was a Thursday, index 3 in wkday_short (Monday first). */
    wd = (int)(((days % 7) + 7 + 3) % 7);
    snprintf(out, 32, "%s, %02u %s %04d %02d:%02d:%02d GMT", wkday_short[wd], d, month_name[m - 1],
             (int)y, (int)(secs / 3600), (int)(secs / 60 % 60), (int)(secs % 60));
}
