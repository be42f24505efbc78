/*
 * Dates without the C library's time zones (gmtime_r takes a lock, timegm is
 * not standard): days since 1970-01-01 to and from the proleptic Gregorian
 * calendar in UTC, and HTTP-dates (RFC 9110 §5.6.7) on top. Pure functions;
 * the log's timestamps and the server's Last-Modified both use them.
 */
#ifndef ZTD_DATES_H
#define ZTD_DATES_H

#include <stdint.h>

/* Days since 1970-01-01 of year y, month m (1-12), day d (1-31); no checks. */
int64_t ztd_days_from_civil(int64_t y, unsigned m, unsigned d);
/* The inverse: the date of day z. */
void ztd_civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d);

/*
 * HTTP-date (RFC 9110 §5.6.7). Parsing accepts IMF-fixdate "Sun, 06 Nov 1994 08:49:37 GMT",
 * RFC 850 "Sunday, 06-Nov-94 08:49:37 GMT" and asctime "Sun Nov  6 08:49:37 1994", with
 * surrounding spaces/tabs. Day and month names are matched case-insensitively; the weekday
 * is checked to be a weekday name but not checked against the date.
 * Fields are range-checked (day within the month, leap years, hour <= 23, minute <= 59,
 * second <= 60). RFC 850 two-digit years 70-99 mean 19xx and 00-69 mean 20xx (fixed pivot: no
 * clock here). Returns 0 and sets *out to Unix seconds, or -1 and leaves *out alone.
 */
int ztd_http_date_parse(const char *s, int64_t *out);

/* Write t as an IMF-fixdate (29 characters plus NUL). Times before year 0000 or after 9999
 * are clamped to the first/last representable second. */
void ztd_http_date_format(int64_t t, char out[32]);

#endif
