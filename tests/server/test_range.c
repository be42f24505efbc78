/*
 * test_range.c: unit tests for server/http/range.c (Range, If-Range, conditional requests,
 * entity-tag lists and multipart/byteranges framing).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "http/range.h"
#include "store/validators.h"

/* Sun, 06 Nov 1994 08:49:37 GMT, the example date of RFC 9110. */
#define LM 784111777
#define ETAG "\"sha256:abc\""

static const ztd_validators V = {ETAG, LM};

static ztd_request_headers get_headers(void)
{
    ztd_request_headers h;
    memset(&h, 0, sizeof h);
    h.is_get_or_head = 1;
    return h;
}

static ztd_range_result parse(const char *value, uint64_t length, unsigned max_parts,
                              ztd_span *spans, size_t *n)
{
    return ztd_parse_range(value, length, max_parts, spans, n);
}

#define ASSERT_SPAN(s, st, ln)                                                                     \
    do {                                                                                           \
        assert_int_equal((s).start, (st));                                                         \
        assert_int_equal((s).len, (ln));                                                           \
    } while (0)

/* ---- ztd_parse_range ------------------------------------------------------------------ */

static void range_single_forms(void **state)
{
    ztd_span s[ZTD_MAX_RANGES];
    size_t n = 99;

    assert_int_equal(parse("bytes=0-499", 1000, 8, s, &n), ZTD_RANGE_OK);
    assert_int_equal(n, 1);
    ASSERT_SPAN(s[0], 0, 500);

    assert_int_equal(parse("bytes=999-999", 1000, 8, s, &n), ZTD_RANGE_OK);
    ASSERT_SPAN(s[0], 999, 1);
    assert_int_equal(parse("bytes=0-0", 1000, 8, s, &n), ZTD_RANGE_OK);
    ASSERT_SPAN(s[0], 0, 1);

    /* open-ended */
    assert_int_equal(parse("bytes=990-", 1000, 8, s, &n), ZTD_RANGE_OK);
    ASSERT_SPAN(s[0], 990, 10);
    assert_int_equal(parse("bytes=0-", 1000, 8, s, &n), ZTD_RANGE_OK);
    ASSERT_SPAN(s[0], 0, 1000);

    /* last-pos clamped to length - 1 */
    assert_int_equal(parse("bytes=900-5000", 1000, 8, s, &n), ZTD_RANGE_OK);
    ASSERT_SPAN(s[0], 900, 100);

    /* suffix */
    assert_int_equal(parse("bytes=-100", 1000, 8, s, &n), ZTD_RANGE_OK);
    ASSERT_SPAN(s[0], 900, 100);
    assert_int_equal(parse("bytes=-1", 1000, 8, s, &n), ZTD_RANGE_OK);
    ASSERT_SPAN(s[0], 999, 1);
    assert_int_equal(parse("bytes=-5000", 1000, 8, s, &n), ZTD_RANGE_OK);
    ASSERT_SPAN(s[0], 0, 1000);
    assert_int_equal(parse("bytes=-1000", 1000, 8, s, &n), ZTD_RANGE_OK);
    ASSERT_SPAN(s[0], 0, 1000);

    /* leading zeros are still decimal */
    assert_int_equal(parse("bytes=000010-000019", 1000, 8, s, &n), ZTD_RANGE_OK);
    ASSERT_SPAN(s[0], 10, 10);
}

static void range_unit_case_and_whitespace(void **state)
{
    ztd_span s[ZTD_MAX_RANGES];
    size_t n;

    assert_int_equal(parse("BYTES=1-2", 10, 8, s, &n), ZTD_RANGE_OK);
    ASSERT_SPAN(s[0], 1, 2);
    assert_int_equal(parse("Bytes=1-2", 10, 8, s, &n), ZTD_RANGE_OK);
    assert_int_equal(parse("  bytes= 0-1 ,\t2-3 ", 10, 8, s, &n), ZTD_RANGE_OK);
    assert_int_equal(n, 2);
    ASSERT_SPAN(s[0], 0, 2);
    ASSERT_SPAN(s[1], 2, 2);
}

static void range_empty_elements(void **state)
{
    ztd_span s[ZTD_MAX_RANGES];
    size_t n;

    assert_int_equal(parse("bytes=0-1,,2-3", 10, 8, s, &n), ZTD_RANGE_OK);
    assert_int_equal(n, 2);
    ASSERT_SPAN(s[0], 0, 2);
    ASSERT_SPAN(s[1], 2, 2);
    assert_int_equal(parse("bytes=,0-1,", 10, 8, s, &n), ZTD_RANGE_OK);
    assert_int_equal(n, 1);
    assert_int_equal(parse("bytes= , ,5-", 10, 8, s, &n), ZTD_RANGE_OK);
    ASSERT_SPAN(s[0], 5, 5);
}

static void range_multiple_keep_order(void **state)
{
    ztd_span s[ZTD_MAX_RANGES];
    size_t n;

    assert_int_equal(parse("bytes=500-599,0-99,-10", 1000, 8, s, &n), ZTD_RANGE_OK);
    assert_int_equal(n, 3);
    ASSERT_SPAN(s[0], 500, 100);
    ASSERT_SPAN(s[1], 0, 100);
    ASSERT_SPAN(s[2], 990, 10);

    /* adjacent and overlapping ranges are not merged */
    assert_int_equal(parse("bytes=0-9,10-19,5-14", 1000, 8, s, &n), ZTD_RANGE_OK);
    assert_int_equal(n, 3);
    ASSERT_SPAN(s[0], 0, 10);
    ASSERT_SPAN(s[1], 10, 10);
    ASSERT_SPAN(s[2], 5, 10);

    /* unsatisfiable members are dropped, the rest kept */
    assert_int_equal(parse("bytes=5000-6000,0-9,-0", 1000, 8, s, &n), ZTD_RANGE_OK);
    assert_int_equal(n, 1);
    ASSERT_SPAN(s[0], 0, 10);
}

static void range_unsatisfiable(void **state)
{
    ztd_span s[ZTD_MAX_RANGES];
    size_t n = 7;

    assert_int_equal(parse("bytes=1000-", 1000, 8, s, &n), ZTD_RANGE_UNSATISFIABLE);
    assert_int_equal(n, 0);
    assert_int_equal(parse("bytes=1000-2000", 1000, 8, s, &n), ZTD_RANGE_UNSATISFIABLE);
    assert_int_equal(parse("bytes=-0", 1000, 8, s, &n), ZTD_RANGE_UNSATISFIABLE);
    assert_int_equal(parse("bytes=5000-,-0,1000-1000", 1000, 8, s, &n), ZTD_RANGE_UNSATISFIABLE);
    /* the largest number that parses is merely unsatisfiable */
    assert_int_equal(parse("bytes=18446744073709551615-", 1000, 8, s, &n), ZTD_RANGE_UNSATISFIABLE);
    /* length 0: nothing is satisfiable, not even a suffix */
    assert_int_equal(parse("bytes=0-", 0, 8, s, &n), ZTD_RANGE_UNSATISFIABLE);
    assert_int_equal(parse("bytes=-5", 0, 8, s, &n), ZTD_RANGE_UNSATISFIABLE);
}

static void range_invalid_syntax(void **state)
{
    static const char *const bad[] = {
        "",
        "bytes",
        "bytes=",
        "bytes=,",
        "bytes= , ",
        "bytes 0-1",
        "bytes =0-1",
        "items=0-1",
        "bytes=abc",
        "bytes=5-1", /* last < first */
        "bytes=+1-2",
        "bytes=1-+2",
        "bytes=-",
        "bytes=--1",
        "bytes=-+1",
        "bytes=1",
        "bytes=1-2-3",
        "bytes=0x10-20",
        "bytes=0 -1",
        "bytes=0- 1",
        "bytes=0-1 2-3",
        "bytes=0-1;2-3",
        "bytes=0-1,x",
        "bytes=1e3-",
        "bytes=99999999999999999999999-1",                       /* last < first */
        "bytes=99999999999999999999999-99999999999999999999998", /* last < first, both huge */
        "bytes=99999999999999999999999-0099999999999999999999998",
        "bytesx=0-1",
    };
    ztd_span s[ZTD_MAX_RANGES];
    size_t n;

    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        n = 5;
        if (parse(bad[i], 1000, 8, s, &n) != ZTD_RANGE_IGNORE_SYNTAX)
            fail_msg("accepted \"%s\"", bad[i]);
        assert_int_equal(n, 0);
    }
    assert_int_equal(parse(NULL, 1000, 8, s, &n), ZTD_RANGE_IGNORE_SYNTAX);
    /* a syntax error anywhere wins over everything else */
    assert_int_equal(parse("bytes=0-0,2-2,4-4,junk", 1000, 2, s, &n), ZTD_RANGE_IGNORE_SYNTAX);
    assert_int_equal(parse("bytes=5000-,junk", 1000, 2, s, &n), ZTD_RANGE_IGNORE_SYNTAX);
}

static void range_uint64_limits(void **state)
{
    ztd_span s[ZTD_MAX_RANGES];
    size_t n;

    assert_int_equal(parse("bytes=0-18446744073709551615", 1000, 8, s, &n), ZTD_RANGE_OK);
    ASSERT_SPAN(s[0], 0, 1000);
    assert_int_equal(parse("bytes=0-", UINT64_MAX, 8, s, &n), ZTD_RANGE_OK);
    ASSERT_SPAN(s[0], 0, UINT64_MAX);
    assert_int_equal(parse("bytes=-1", UINT64_MAX, 8, s, &n), ZTD_RANGE_OK);
    ASSERT_SPAN(s[0], UINT64_MAX - 1, 1);
    assert_int_equal(parse("bytes=18446744073709551614-", UINT64_MAX, 8, s, &n), ZTD_RANGE_OK);
    ASSERT_SPAN(s[0], UINT64_MAX - 1, 1);
    /* numbers past UINT64_MAX: past any end (an overlong LAST is "to the end") */
    assert_int_equal(parse("bytes=0-18446744073709551616", 1000, 8, s, &n), ZTD_RANGE_OK);
    ASSERT_SPAN(s[0], 0, 1000);
    assert_int_equal(parse("bytes=0-99999999999999999999999", 1000, 8, s, &n), ZTD_RANGE_OK);
    ASSERT_SPAN(s[0], 0, 1000);
    assert_int_equal(parse("bytes=10-000099999999999999999999999999", 1000, 8, s, &n),
                     ZTD_RANGE_OK);
    ASSERT_SPAN(s[0], 10, 990);
    assert_int_equal(parse("bytes=-18446744073709551616", 1000, 8, s, &n), ZTD_RANGE_OK);
    ASSERT_SPAN(s[0], 0, 1000);
    assert_int_equal(parse("bytes=0-99999999999999999999999", UINT64_MAX, 8, s, &n), ZTD_RANGE_OK);
    ASSERT_SPAN(s[0], 0, UINT64_MAX);
    assert_int_equal(parse("bytes=18446744073709551616-", 1000, 8, s, &n), ZTD_RANGE_UNSATISFIABLE);
    assert_int_equal(parse("bytes=99999999999999999999999-", UINT64_MAX, 8, s, &n),
                     ZTD_RANGE_UNSATISFIABLE);
    assert_int_equal(parse("bytes=99999999999999999999999-99999999999999999999999", 1000, 8, s, &n),
                     ZTD_RANGE_UNSATISFIABLE);
    assert_int_equal(
        parse("bytes=99999999999999999999998-099999999999999999999999", 1000, 8, s, &n),
        ZTD_RANGE_UNSATISFIABLE);
    assert_int_equal(parse("bytes=0-1,99999999999999999999999-", 1000, 8, s, &n), ZTD_RANGE_OK);
    assert_int_equal(n, 1);
    ASSERT_SPAN(s[0], 0, 2);
    /* sum of huge overlapping spans must not wrap around */
    assert_int_equal(parse("bytes=0-,0-", UINT64_MAX, 8, s, &n), ZTD_RANGE_IGNORE_TOO_LARGE);
}

static void range_too_many(void **state)
{
    ztd_span s[ZTD_MAX_RANGES];
    size_t n;
    char buf[2048];
    size_t o;

    assert_int_equal(parse("bytes=0-0,2-2,4-4", 1000, 3, s, &n), ZTD_RANGE_OK);
    assert_int_equal(n, 3);
    n = 9;
    assert_int_equal(parse("bytes=0-0,2-2,4-4,6-6", 1000, 3, s, &n), ZTD_RANGE_IGNORE_TOO_MANY);
    assert_int_equal(n, 0);
    /* only satisfiable ranges count */
    assert_int_equal(parse("bytes=0-0,2-2,5000-6000,-0", 1000, 2, s, &n), ZTD_RANGE_OK);
    assert_int_equal(n, 2);
    /* max_parts 0 disables ranges */
    assert_int_equal(parse("bytes=0-0", 1000, 0, NULL, &n), ZTD_RANGE_IGNORE_TOO_MANY);
    assert_int_equal(parse("bytes=5000-", 1000, 0, NULL, &n), ZTD_RANGE_UNSATISFIABLE);

    /* max_parts above ZTD_MAX_RANGES is clamped to it */
    o = (size_t)snprintf(buf, sizeof buf, "bytes=");
    for (int i = 0; i < ZTD_MAX_RANGES; i++)
        o += (size_t)snprintf(buf + o, sizeof buf - o, "%s%d-%d", i ? "," : "", i * 2, i * 2);
    assert_int_equal(parse(buf, 1000, 1000, s, &n), ZTD_RANGE_OK);
    assert_int_equal(n, ZTD_MAX_RANGES);
    ASSERT_SPAN(s[ZTD_MAX_RANGES - 1], (ZTD_MAX_RANGES - 1) * 2, 1);
    snprintf(buf + o, sizeof buf - o, ",999-999");
    assert_int_equal(parse(buf, 1000, 1000, s, &n), ZTD_RANGE_IGNORE_TOO_MANY);
}

static void range_sum_exceeds_length(void **state)
{
    ztd_span s[ZTD_MAX_RANGES];
    size_t n;

    assert_int_equal(parse("bytes=0-,0-", 1000, 8, s, &n), ZTD_RANGE_IGNORE_TOO_LARGE);
    assert_int_equal(n, 0);
    assert_int_equal(parse("bytes=0-599,400-999", 1000, 8, s, &n), ZTD_RANGE_IGNORE_TOO_LARGE);
    assert_int_equal(parse("bytes=-600,-600", 1000, 8, s, &n), ZTD_RANGE_IGNORE_TOO_LARGE);
    /* overlapping but adding up to exactly the length is fine */
    assert_int_equal(parse("bytes=0-499,400-899", 1000, 8, s, &n), ZTD_RANGE_OK);
    assert_int_equal(n, 2);
    /* too many is reported before too large */
    assert_int_equal(parse("bytes=0-,0-,0-", 1000, 2, s, &n), ZTD_RANGE_IGNORE_TOO_MANY);
}

/* ---- ztd_plan_request: Range and If-Range --------------------------------------------- */

static void plan_no_headers(void **state)
{
    ztd_request_headers h = get_headers();
    ztd_plan p;

    assert_int_equal(ztd_plan_request(&h, &V, 1000, 8, &p), ZTD_PLAN_FULL);
    assert_int_equal(p.status, ZTD_PLAN_FULL);
    assert_int_equal(p.nspans, 0);
    assert_int_equal(p.range, ZTD_RANGE_ABSENT);
    assert_int_equal(ztd_plan_request(NULL, &V, 1000, 8, &p), ZTD_PLAN_FULL);
    assert_int_equal(ztd_plan_request(&h, NULL, 1000, 8, &p), ZTD_PLAN_FULL);
}

static void plan_range(void **state)
{
    ztd_request_headers h = get_headers();
    ztd_plan p;

    h.range = "bytes=10-19";
    assert_int_equal(ztd_plan_request(&h, &V, 1000, 8, &p), ZTD_PLAN_PARTIAL);
    assert_int_equal(p.range, ZTD_RANGE_OK);
    assert_int_equal(p.nspans, 1);
    ASSERT_SPAN(p.spans[0], 10, 10);

    h.range = "bytes=100-199,0-9";
    assert_int_equal(ztd_plan_request(&h, &V, 1000, 8, &p), ZTD_PLAN_PARTIAL);
    assert_int_equal(p.nspans, 2);
    ASSERT_SPAN(p.spans[0], 100, 100);
    ASSERT_SPAN(p.spans[1], 0, 10);

    h.range = "bytes=2000-";
    assert_int_equal(ztd_plan_request(&h, &V, 1000, 8, &p), ZTD_PLAN_UNSATISFIABLE);
    assert_int_equal(p.range, ZTD_RANGE_UNSATISFIABLE);
    assert_int_equal(p.nspans, 0);

    h.range = "bytes=-0";
    assert_int_equal(ztd_plan_request(&h, &V, 1000, 8, &p), ZTD_PLAN_UNSATISFIABLE);

    h.range = "bytes=oops";
    assert_int_equal(ztd_plan_request(&h, &V, 1000, 8, &p), ZTD_PLAN_FULL);
    assert_int_equal(p.range, ZTD_RANGE_IGNORE_SYNTAX);
    assert_int_equal(p.nspans, 0);

    h.range = "pages=1-2";
    assert_int_equal(ztd_plan_request(&h, &V, 1000, 8, &p), ZTD_PLAN_FULL);

    h.range = "bytes=0-0,2-2,4-4";
    assert_int_equal(ztd_plan_request(&h, &V, 1000, 2, &p), ZTD_PLAN_FULL);
    assert_int_equal(p.range, ZTD_RANGE_IGNORE_TOO_MANY);
    assert_int_equal(ztd_plan_request(&h, &V, 1000, 0, &p), ZTD_PLAN_FULL);

    h.range = "bytes=0-,0-";
    assert_int_equal(ztd_plan_request(&h, &V, 1000, 8, &p), ZTD_PLAN_FULL);
    assert_int_equal(p.range, ZTD_RANGE_IGNORE_TOO_LARGE);
    assert_int_equal(p.nspans, 0);
}

static void plan_range_zero_length_is_full(void **state)
{
    ztd_request_headers h = get_headers();
    ztd_plan p;

    h.range = "bytes=0-";
    assert_int_equal(ztd_plan_request(&h, &V, 0, 8, &p), ZTD_PLAN_FULL);
    assert_int_equal(p.nspans, 0);
    h.range = "bytes=-5";
    assert_int_equal(ztd_plan_request(&h, &V, 0, 8, &p), ZTD_PLAN_FULL);
    h.range = "bytes=5-";
    assert_int_equal(ztd_plan_request(&h, &V, 0, 8, &p), ZTD_PLAN_FULL);
}

static void plan_range_only_for_get_and_existing(void **state)
{
    ztd_request_headers h = get_headers();
    ztd_plan p;

    h.range = "bytes=0-9";
    h.is_get_or_head = 0;
    assert_int_equal(ztd_plan_request(&h, &V, 1000, 8, &p), ZTD_PLAN_FULL);
    assert_int_equal(p.range, ZTD_RANGE_ABSENT);
    h.is_get_or_head = 1;
    assert_int_equal(ztd_plan_request(&h, NULL, 1000, 8, &p), ZTD_PLAN_FULL);
    assert_int_equal(p.range, ZTD_RANGE_ABSENT);
}

static void plan_if_range(void **state)
{
    ztd_request_headers h = get_headers();
    ztd_plan p;
    ztd_validators weakv = {"W/\"sha256:abc\"", LM};
    ztd_validators nolm = {ETAG, ZTD_TIME_UNKNOWN};
    ztd_validators noetag = {NULL, LM};

    h.range = "bytes=0-9";

    h.if_range = ETAG;
    assert_int_equal(ztd_plan_request(&h, &V, 1000, 8, &p), ZTD_PLAN_PARTIAL);
    h.if_range = " " ETAG " ";
    assert_int_equal(ztd_plan_request(&h, &V, 1000, 8, &p), ZTD_PLAN_PARTIAL);

    h.if_range = "\"sha256:abd\"";
    assert_int_equal(ztd_plan_request(&h, &V, 1000, 8, &p), ZTD_PLAN_FULL);
    assert_int_equal(p.range, ZTD_RANGE_IGNORE_IF_RANGE);
    assert_int_equal(p.nspans, 0);

    /* weak tags never satisfy If-Range, even when the opaque part is equal */
    h.if_range = "W/" ETAG;
    assert_int_equal(ztd_plan_request(&h, &V, 1000, 8, &p), ZTD_PLAN_FULL);
    assert_int_equal(p.range, ZTD_RANGE_IGNORE_IF_RANGE);
    h.if_range = ETAG;
    assert_int_equal(ztd_plan_request(&h, &weakv, 1000, 8, &p), ZTD_PLAN_FULL);
    h.if_range = "W/" ETAG;
    assert_int_equal(ztd_plan_request(&h, &weakv, 1000, 8, &p), ZTD_PLAN_FULL);
    h.if_range = ETAG;
    assert_int_equal(ztd_plan_request(&h, &noetag, 1000, 8, &p), ZTD_PLAN_FULL);

    /* a list or a malformed tag is not an entity-tag */
    h.if_range = ETAG ", " ETAG;
    assert_int_equal(ztd_plan_request(&h, &V, 1000, 8, &p), ZTD_PLAN_FULL);
    h.if_range = "\"sha256:abc";
    assert_int_equal(ztd_plan_request(&h, &V, 1000, 8, &p), ZTD_PLAN_FULL);

    /* dates must be exactly equal, in any of the three formats */
    h.if_range = "Sun, 06 Nov 1994 08:49:37 GMT";
    assert_int_equal(ztd_plan_request(&h, &V, 1000, 8, &p), ZTD_PLAN_PARTIAL);
    h.if_range = "Sunday, 06-Nov-94 08:49:37 GMT";
    assert_int_equal(ztd_plan_request(&h, &V, 1000, 8, &p), ZTD_PLAN_PARTIAL);
    h.if_range = "Sun Nov  6 08:49:37 1994";
    assert_int_equal(ztd_plan_request(&h, &V, 1000, 8, &p), ZTD_PLAN_PARTIAL);
    h.if_range = "Sun, 06 Nov 1994 08:49:38 GMT";
    assert_int_equal(ztd_plan_request(&h, &V, 1000, 8, &p), ZTD_PLAN_FULL);
    h.if_range = "Sun, 06 Nov 1994 08:49:36 GMT";
    assert_int_equal(ztd_plan_request(&h, &V, 1000, 8, &p), ZTD_PLAN_FULL);
    h.if_range = "Sun, 06 Nov 1994 08:49:37 GMT";
    assert_int_equal(ztd_plan_request(&h, &nolm, 1000, 8, &p), ZTD_PLAN_FULL);
    h.if_range = "not a date";
    assert_int_equal(ztd_plan_request(&h, &V, 1000, 8, &p), ZTD_PLAN_FULL);
    h.if_range = "";
    assert_int_equal(ztd_plan_request(&h, &V, 1000, 8, &p), ZTD_PLAN_FULL);

    /* If-Range holds but the range is unsatisfiable: 416; If-Range fails: 200 */
    h.range = "bytes=5000-";
    h.if_range = ETAG;
    assert_int_equal(ztd_plan_request(&h, &V, 1000, 8, &p), ZTD_PLAN_UNSATISFIABLE);
    h.if_range = "\"other\"";
    assert_int_equal(ztd_plan_request(&h, &V, 1000, 8, &p), ZTD_PLAN_FULL);

    /* If-Range without Range changes nothing */
    h.range = NULL;
    assert_int_equal(ztd_plan_request(&h, &V, 1000, 8, &p), ZTD_PLAN_FULL);
    assert_int_equal(p.range, ZTD_RANGE_ABSENT);
}

/* ---- ztd_plan_request: preconditions -------------------------------------------------- */

static void plan_if_match(void **state)
{
    ztd_request_headers h = get_headers();
    ztd_plan p;
    ztd_validators weakv = {"W/\"sha256:abc\"", LM};
    ztd_validators noetag = {NULL, LM};

    h.if_match = ETAG;
    assert_int_equal(ztd_plan_request(&h, &V, 1000, 8, &p), ZTD_PLAN_FULL);
    h.if_match = "\"x\", " ETAG;
    assert_int_equal(ztd_plan_request(&h, &V, 1000, 8, &p), ZTD_PLAN_FULL);
    h.if_match = "\"x\", \"y\"";
    assert_int_equal(ztd_plan_request(&h, &V, 1000, 8, &p), ZTD_PLAN_PRECONDITION_FAILED);
    assert_int_equal(p.nspans, 0);
    /* strong comparison: W/ never matches */
    h.if_match = "W/" ETAG;
    assert_int_equal(ztd_plan_request(&h, &V, 1000, 8, &p), ZTD_PLAN_PRECONDITION_FAILED);
    h.if_match = "W/" ETAG;
    assert_int_equal(ztd_plan_request(&h, &weakv, 1000, 8, &p), ZTD_PLAN_PRECONDITION_FAILED);
    /* "*" matches any existing representation, etag or not */
    h.if_match = "*";
    assert_int_equal(ztd_plan_request(&h, &V, 1000, 8, &p), ZTD_PLAN_FULL);
    assert_int_equal(ztd_plan_request(&h, &noetag, 1000, 8, &p), ZTD_PLAN_FULL);
    assert_int_equal(ztd_plan_request(&h, NULL, 0, 8, &p), ZTD_PLAN_PRECONDITION_FAILED);
    h.if_match = ETAG;
    assert_int_equal(ztd_plan_request(&h, &noetag, 1000, 8, &p), ZTD_PLAN_PRECONDITION_FAILED);
    assert_int_equal(ztd_plan_request(&h, NULL, 0, 8, &p), ZTD_PLAN_PRECONDITION_FAILED);
    /* malformed never matches */
    h.if_match = "sha256:abc";
    assert_int_equal(ztd_plan_request(&h, &V, 1000, 8, &p), ZTD_PLAN_PRECONDITION_FAILED);
    h.if_match = "";
    assert_int_equal(ztd_plan_request(&h, &V, 1000, 8, &p), ZTD_PLAN_PRECONDITION_FAILED);
    /* applies to every method */
    h.is_get_or_head = 0;
    h.if_match = "\"x\"";
    assert_int_equal(ztd_plan_request(&h, &V, 1000, 8, &p), ZTD_PLAN_PRECONDITION_FAILED);
}

static void plan_if_unmodified_since(void **state)
{
    ztd_request_headers h = get_headers();
    ztd_plan p;
    ztd_validators nolm = {ETAG, ZTD_TIME_UNKNOWN};

    h.if_unmodified_since = "Sun, 06 Nov 1994 08:49:36 GMT"; /* one second before LM */
    assert_int_equal(ztd_plan_request(&h, &V, 1000, 8, &p), ZTD_PLAN_PRECONDITION_FAILED);
    h.is_get_or_head = 0;
    assert_int_equal(ztd_plan_request(&h, &V, 1000, 8, &p), ZTD_PLAN_PRECONDITION_FAILED);
    h.is_get_or_head = 1;
    h.if_unmodified_since = "Sun, 06 Nov 1994 08:49:37 GMT";
    assert_int_equal(ztd_plan_request(&h, &V, 1000, 8, &p), ZTD_PLAN_FULL);
    h.if_unmodified_since = "Mon, 07 Nov 1994 00:00:00 GMT";
    assert_int_equal(ztd_plan_request(&h, &V, 1000, 8, &p), ZTD_PLAN_FULL);
    h.if_unmodified_since = "garbage";
    assert_int_equal(ztd_plan_request(&h, &V, 1000, 8, &p), ZTD_PLAN_FULL);
    h.if_unmodified_since = "Thu, 01 Jan 1970 00:00:00 GMT";
    assert_int_equal(ztd_plan_request(&h, &nolm, 1000, 8, &p), ZTD_PLAN_FULL);
    assert_int_equal(ztd_plan_request(&h, NULL, 0, 8, &p), ZTD_PLAN_FULL);
    /* ignored when If-Match is present (and If-Match passes) */
    h.if_match = ETAG;
    assert_int_equal(ztd_plan_request(&h, &V, 1000, 8, &p), ZTD_PLAN_FULL);
}

static void plan_if_none_match(void **state)
{
    ztd_request_headers h = get_headers();
    ztd_plan p;
    ztd_validators weakv = {"W/\"sha256:abc\"", LM};

    h.if_none_match = ETAG;
    assert_int_equal(ztd_plan_request(&h, &V, 1000, 8, &p), ZTD_PLAN_NOT_MODIFIED);
    assert_int_equal(p.nspans, 0);
    h.is_get_or_head = 0;
    assert_int_equal(ztd_plan_request(&h, &V, 1000, 8, &p), ZTD_PLAN_PRECONDITION_FAILED);
    h.is_get_or_head = 1;
    /* weak comparison */
    h.if_none_match = "W/" ETAG;
    assert_int_equal(ztd_plan_request(&h, &V, 1000, 8, &p), ZTD_PLAN_NOT_MODIFIED);
    h.if_none_match = ETAG;
    assert_int_equal(ztd_plan_request(&h, &weakv, 1000, 8, &p), ZTD_PLAN_NOT_MODIFIED);
    /* lists */
    h.if_none_match = "\"a\" ,W/\"b\",, " ETAG;
    assert_int_equal(ztd_plan_request(&h, &V, 1000, 8, &p), ZTD_PLAN_NOT_MODIFIED);
    h.if_none_match = "\"a\", \"b\"";
    assert_int_equal(ztd_plan_request(&h, &V, 1000, 8, &p), ZTD_PLAN_FULL);
    /* "*": any existing representation; a PUT that creates passes */
    h.if_none_match = "*";
    assert_int_equal(ztd_plan_request(&h, &V, 1000, 8, &p), ZTD_PLAN_NOT_MODIFIED);
    h.is_get_or_head = 0;
    assert_int_equal(ztd_plan_request(&h, &V, 1000, 8, &p), ZTD_PLAN_PRECONDITION_FAILED);
    assert_int_equal(ztd_plan_request(&h, NULL, 0, 8, &p), ZTD_PLAN_FULL);
    h.is_get_or_head = 1;
    /* malformed never matches */
    h.if_none_match = "sha256:abc";
    assert_int_equal(ztd_plan_request(&h, &V, 1000, 8, &p), ZTD_PLAN_FULL);
}

static void plan_if_modified_since(void **state)
{
    ztd_request_headers h = get_headers();
    ztd_plan p;
    ztd_validators nolm = {ETAG, ZTD_TIME_UNKNOWN};

    h.if_modified_since = "Sun, 06 Nov 1994 08:49:37 GMT";
    assert_int_equal(ztd_plan_request(&h, &V, 1000, 8, &p), ZTD_PLAN_NOT_MODIFIED);
    h.if_modified_since = "Mon, 07 Nov 1994 00:00:00 GMT";
    assert_int_equal(ztd_plan_request(&h, &V, 1000, 8, &p), ZTD_PLAN_NOT_MODIFIED);
    h.if_modified_since = "Sun, 06 Nov 1994 08:49:36 GMT";
    assert_int_equal(ztd_plan_request(&h, &V, 1000, 8, &p), ZTD_PLAN_FULL);
    h.if_modified_since = "Sun, 06 Nov 1994";
    assert_int_equal(ztd_plan_request(&h, &V, 1000, 8, &p), ZTD_PLAN_FULL);
    h.if_modified_since = "Sun, 06 Nov 1994 08:49:37 GMT";
    assert_int_equal(ztd_plan_request(&h, &nolm, 1000, 8, &p), ZTD_PLAN_FULL);
    /* GET/HEAD only */
    h.is_get_or_head = 0;
    assert_int_equal(ztd_plan_request(&h, &V, 1000, 8, &p), ZTD_PLAN_FULL);
    h.is_get_or_head = 1;
    /* ignored when If-None-Match is present */
    h.if_none_match = "\"other\"";
    assert_int_equal(ztd_plan_request(&h, &V, 1000, 8, &p), ZTD_PLAN_FULL);
}

static void plan_precedence(void **state)
{
    ztd_request_headers h = get_headers();
    ztd_plan p;

    /* If-Match failure beats a matching If-None-Match (412, not 304) */
    h.if_match = "\"nope\"";
    h.if_none_match = ETAG;
    assert_int_equal(ztd_plan_request(&h, &V, 1000, 8, &p), ZTD_PLAN_PRECONDITION_FAILED);

    /* If-Unmodified-Since failure beats If-None-Match */
    h = get_headers();
    h.if_unmodified_since = "Thu, 01 Jan 1970 00:00:00 GMT";
    h.if_none_match = ETAG;
    assert_int_equal(ztd_plan_request(&h, &V, 1000, 8, &p), ZTD_PLAN_PRECONDITION_FAILED);

    /* passing If-Match, then a matching If-None-Match: 304 */
    h = get_headers();
    h.if_match = ETAG;
    h.if_none_match = ETAG;
    assert_int_equal(ztd_plan_request(&h, &V, 1000, 8, &p), ZTD_PLAN_NOT_MODIFIED);

    /* preconditions come before Range: 304 and 412 beat 206 and 416 */
    h = get_headers();
    h.range = "bytes=0-9";
    h.if_none_match = ETAG;
    assert_int_equal(ztd_plan_request(&h, &V, 1000, 8, &p), ZTD_PLAN_NOT_MODIFIED);
    assert_int_equal(p.nspans, 0);
    h = get_headers();
    h.range = "bytes=5000-";
    h.if_modified_since = "Sun, 06 Nov 1994 08:49:37 GMT";
    assert_int_equal(ztd_plan_request(&h, &V, 1000, 8, &p), ZTD_PLAN_NOT_MODIFIED);
    h = get_headers();
    h.range = "bytes=5000-";
    h.if_match = "\"nope\"";
    assert_int_equal(ztd_plan_request(&h, &V, 1000, 8, &p), ZTD_PLAN_PRECONDITION_FAILED);

    /* every precondition passes: the Range is served */
    h = get_headers();
    h.range = "bytes=0-9";
    h.if_match = ETAG;
    h.if_unmodified_since = "Sun, 06 Nov 1994 08:49:37 GMT";
    h.if_none_match = "\"other\"";
    h.if_modified_since = "Thu, 01 Jan 1970 00:00:00 GMT";
    h.if_range = ETAG;
    assert_int_equal(ztd_plan_request(&h, &V, 1000, 8, &p), ZTD_PLAN_PARTIAL);
    ASSERT_SPAN(p.spans[0], 0, 10);

    /* If-Modified-Since says modified, Range is then honoured */
    h = get_headers();
    h.range = "bytes=-1";
    h.if_modified_since = "Thu, 01 Jan 1970 00:00:00 GMT";
    assert_int_equal(ztd_plan_request(&h, &V, 1000, 8, &p), ZTD_PLAN_PARTIAL);
    ASSERT_SPAN(p.spans[0], 999, 1);
}

/* ---- ztd_etag_list_match -------------------------------------------------------------- */

static void etag_lists(void **state)
{
    /* strong (If-Match) and weak (If-None-Match) comparison, RFC 9110 §8.8.3.2 table */
    assert_int_equal(ztd_etag_list_match("W/\"1\"", "W/\"1\"", 0), 0);
    assert_int_equal(ztd_etag_list_match("W/\"1\"", "W/\"1\"", 1), 1);
    assert_int_equal(ztd_etag_list_match("W/\"1\"", "W/\"2\"", 0), 0);
    assert_int_equal(ztd_etag_list_match("W/\"1\"", "W/\"2\"", 1), 0);
    assert_int_equal(ztd_etag_list_match("W/\"1\"", "\"1\"", 0), 0);
    assert_int_equal(ztd_etag_list_match("W/\"1\"", "\"1\"", 1), 1);
    assert_int_equal(ztd_etag_list_match("\"1\"", "\"1\"", 0), 1);
    assert_int_equal(ztd_etag_list_match("\"1\"", "\"1\"", 1), 1);

    /* lists, whitespace, empty elements */
    assert_int_equal(ztd_etag_list_match("\"x\", \"a\"", "\"a\"", 0), 1);
    assert_int_equal(ztd_etag_list_match("\"x\",\"y\"", "\"a\"", 1), 0);
    assert_int_equal(ztd_etag_list_match(" , \"a\" ,, ", "\"a\"", 0), 1);
    assert_int_equal(ztd_etag_list_match("\t\"a\"\t", "\"a\"", 0), 1);
    assert_int_equal(ztd_etag_list_match("\"\"", "\"\"", 0), 1);

    /* "*" */
    assert_int_equal(ztd_etag_list_match("*", "\"a\"", 0), 1);
    assert_int_equal(ztd_etag_list_match(" * ", "\"a\"", 1), 1);
    assert_int_equal(ztd_etag_list_match("*", NULL, 0), 0);
    assert_int_equal(ztd_etag_list_match("*, \"a\"", "\"a\"", 0), 0);
    assert_int_equal(ztd_etag_list_match("\"a\", *", "\"a\"", 0), 0);
    assert_int_equal(ztd_etag_list_match("**", "\"a\"", 0), 0);

    /* opaque tags compare byte for byte, case-sensitively, including obs-text */
    assert_int_equal(ztd_etag_list_match("\"A\"", "\"a\"", 1), 0);
    assert_int_equal(ztd_etag_list_match("\"a\"", "\"ab\"", 1), 0);
    assert_int_equal(ztd_etag_list_match("\"caf\xc3\xa9\"", "\"caf\xc3\xa9\"", 0), 1);

    /* malformed values never match, even after a matching element */
    assert_int_equal(ztd_etag_list_match("a", "\"a\"", 1), 0);
    assert_int_equal(ztd_etag_list_match("\"a", "\"a\"", 1), 0);
    assert_int_equal(ztd_etag_list_match("\"a\" \"b\"", "\"a\"", 1), 0);
    assert_int_equal(ztd_etag_list_match("\"a\"x", "\"a\"", 1), 0);
    assert_int_equal(ztd_etag_list_match("\"a\", junk", "\"a\"", 1), 0);
    assert_int_equal(ztd_etag_list_match("w/\"a\"", "\"a\"", 1), 0);
    assert_int_equal(ztd_etag_list_match("W/ \"a\"", "\"a\"", 1), 0);
    assert_int_equal(ztd_etag_list_match("\"a b\"", "\"a b\"", 1), 0);
    assert_int_equal(ztd_etag_list_match("\"a\tb\"", "\"a\tb\"", 1), 0);
    assert_int_equal(ztd_etag_list_match("", "\"a\"", 1), 0);
    assert_int_equal(ztd_etag_list_match("  ", "\"a\"", 1), 0);
    assert_int_equal(ztd_etag_list_match(",", "\"a\"", 1), 0);
    assert_int_equal(ztd_etag_list_match(NULL, "\"a\"", 1), 0);
    assert_int_equal(ztd_etag_list_match("\"a\"", NULL, 1), 0);
    /* a malformed current etag matches nothing but "*" */
    assert_int_equal(ztd_etag_list_match("\"a\"", "a", 1), 0);
    assert_int_equal(ztd_etag_list_match("*", "a", 1), 1);
}

static void content_range(void **state)
{
    ztd_span s = {0, 500};
    char buf[64];

    assert_int_equal(ztd_content_range(buf, sizeof buf, &s, 1000), 16);
    assert_string_equal(buf, "bytes 0-499/1000");
    s.start = 999;
    s.len = 1;
    ztd_content_range(buf, sizeof buf, &s, 1000);
    assert_string_equal(buf, "bytes 999-999/1000");
    assert_int_equal(ztd_content_range(buf, sizeof buf, NULL, 1000), 12);
    assert_string_equal(buf, "bytes */1000");
    /* truncation reports the needed length */
    assert_int_equal(ztd_content_range(buf, 5, NULL, 1000), 12);
    assert_string_equal(buf, "byte");
    assert_int_equal(ztd_content_range(NULL, 0, NULL, 1000), 12);
    /* the largest value fits ZTD_CONTENT_RANGE_MAX */
    {
        char big[ZTD_CONTENT_RANGE_MAX];
        ztd_span all = {0, UINT64_MAX};
        size_t n = ztd_content_range(big, sizeof big, &all, UINT64_MAX);
        assert_true(n < sizeof big);
        assert_string_equal(big, "bytes 0-18446744073709551614/18446744073709551615");
        all.start = UINT64_MAX - 1;
        all.len = 1;
        n = ztd_content_range(big, sizeof big, &all, UINT64_MAX);
        assert_int_equal(n, 68);
        assert_string_equal(big,
                            "bytes 18446744073709551614-18446744073709551614/18446744073709551615");
    }
}

static void multipart_pieces(void **state)
{
    char b1[40], b2[40], buf[256];
    size_t n;

    ztd_multipart_boundary(b1, 1);
    ztd_multipart_boundary(b2, 1);
    assert_string_equal(b1, b2);
    ztd_multipart_boundary(b2, 2);
    assert_string_not_equal(b1, b2);
    assert_true(strlen(b1) > 16 && strlen(b1) < 40);
    for (const char *c = b1; *c; c++)
        assert_true((*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'z') || *c == '-');

    n = ztd_multipart_part_header(buf, sizeof buf, "B", "application/octet-stream", 0, 9, 100);
    assert_string_equal(buf, "\r\n--B\r\nContent-Type: application/octet-stream\r\n"
                             "Content-Range: bytes 0-9/100\r\n\r\n");
    assert_int_equal(n, strlen(buf));
    n = ztd_multipart_part_header(buf, sizeof buf, "B", NULL, 90, 99, 100);
    assert_string_equal(buf, "\r\n--B\r\nContent-Range: bytes 90-99/100\r\n\r\n");
    assert_int_equal(n, strlen(buf));
    n = ztd_multipart_trailer(buf, sizeof buf, "B");
    assert_string_equal(buf, "\r\n--B--\r\n");
    assert_int_equal(n, 9);
}

static void multipart_length_matches_body(void **state)
{
    ztd_request_headers h = get_headers();
    ztd_plan p;
    char boundary[40], body[4096];
    char data[1000];
    size_t o = 0;
    const char *ct = "application/x-ztensor";

    for (int i = 0; i < 1000; i++)
        data[i] = (char)('a' + i % 26);
    h.range = "bytes=900-,0-9,-5";
    assert_int_equal(ztd_plan_request(&h, &V, 1000, 8, &p), ZTD_PLAN_PARTIAL);
    assert_int_equal(p.nspans, 3);
    ztd_multipart_boundary(boundary, 42);
    for (size_t i = 0; i < p.nspans; i++) {
        o += ztd_multipart_part_header(body + o, sizeof body - o, boundary, ct, p.spans[i].start,
                                       p.spans[i].start + p.spans[i].len - 1, 1000);
        memcpy(body + o, data + p.spans[i].start, p.spans[i].len);
        o += p.spans[i].len;
    }
    o += ztd_multipart_trailer(body + o, sizeof body - o, boundary);
    assert_int_equal(ztd_multipart_length(&p, boundary, ct, 1000), o);
    assert_int_equal(ztd_multipart_length(&p, boundary, NULL, 1000),
                     o - p.nspans * strlen("Content-Type: application/x-ztensor\r\n"));
    /* the body starts with CRLF and the boundary, as nginx's does */
    assert_memory_equal(body, "\r\n--ztensord-", 13);
    assert_memory_equal(body + o - 4 - strlen(boundary) - 4, "\r\n--", 4);

    p.nspans = 0;
    assert_int_equal(ztd_multipart_length(&p, boundary, ct, 1000), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(range_single_forms),
        cmocka_unit_test(range_unit_case_and_whitespace),
        cmocka_unit_test(range_empty_elements),
        cmocka_unit_test(range_multiple_keep_order),
        cmocka_unit_test(range_unsatisfiable),
        cmocka_unit_test(range_invalid_syntax),
        cmocka_unit_test(range_uint64_limits),
        cmocka_unit_test(range_too_many),
        cmocka_unit_test(range_sum_exceeds_length),
        cmocka_unit_test(plan_no_headers),
        cmocka_unit_test(plan_range),
        cmocka_unit_test(plan_range_zero_length_is_full),
        cmocka_unit_test(plan_range_only_for_get_and_existing),
        cmocka_unit_test(plan_if_range),
        cmocka_unit_test(plan_if_match),
        cmocka_unit_test(plan_if_unmodified_since),
        cmocka_unit_test(plan_if_none_match),
        cmocka_unit_test(plan_if_modified_since),
        cmocka_unit_test(plan_precedence),
        cmocka_unit_test(etag_lists),
        cmocka_unit_test(content_range),
        cmocka_unit_test(multipart_pieces),
        cmocka_unit_test(multipart_length_matches_body),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
