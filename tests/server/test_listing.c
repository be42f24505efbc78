/*
 * test_listing.c: unit tests for server/http/listing_query.c (paging of GET /v1/files):
 * query arguments, pages over sorted names, prefixes, cursors.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "http/listing_query.h"

static const char *NAMES[] = {"a.zt",       "llama/1.zt",  "llama/2.zt",
                              "llama/3.zt", "llama2/x.zt", "z.zt"};
#define N (sizeof(NAMES) / sizeof(NAMES[0]))

static const char *name_at(const void *e, size_t i)
{
    return ((const char *const *)e)[i];
}

static void page(const ztd_listing_query *q, size_t *first, size_t *count, bool *more)
{
    ztd_listing_page(q, NAMES, N, name_at, first, count, more);
}

static void args(ztd_listing_query *q, const char *prefix, const char *limit, const char *cursor)
{
    const char *why;
    ztd_listing_init(q);
    if (prefix)
        assert_int_equal(ztd_listing_arg(q, "prefix", prefix, &why), 0);
    if (limit)
        assert_int_equal(ztd_listing_arg(q, "limit", limit, &why), 0);
    if (cursor)
        assert_int_equal(ztd_listing_arg(q, "cursor", cursor, &why), 0);
}

static void test_prefix(void **st)
{
    (void)st;
    ztd_listing_query q;
    size_t f, n;
    bool more;
    args(&q, "llama%2F", NULL, NULL);
    assert_true(q.paged);
    assert_string_equal(q.prefix, "llama/");
    page(&q, &f, &n, &more);
    assert_int_equal(f, 1);
    assert_int_equal(n, 3); /* not llama2/ */
    assert_false(more);
    args(&q, "nothing", NULL, NULL);
    page(&q, &f, &n, &more);
    assert_int_equal(n, 0);
    assert_false(more);
    args(&q, "", NULL, NULL); /* empty prefix: everything */
    page(&q, &f, &n, &more);
    assert_int_equal(f, 0);
    assert_int_equal(n, N);
}

/* Walking the pages with the cursor gives every name once, in order. */
static void test_cursor_walk(void **st)
{
    (void)st;
    for (size_t lim = 1; lim <= N + 1; lim++) {
        char limit[8], cursor[2 * 64 + 1] = "";
        snprintf(limit, sizeof(limit), "%zu", lim);
        size_t seen = 0;
        for (int pages = 0; pages < 20; pages++) {
            ztd_listing_query q;
            args(&q, NULL, limit, cursor[0] ? cursor : NULL);
            size_t f, n;
            bool more;
            page(&q, &f, &n, &more);
            assert_true(n <= lim);
            assert_int_equal(f, seen);
            seen += n;
            if (!more)
                break;
            ztd_listing_cursor(NAMES[f + n - 1], cursor);
        }
        assert_int_equal(seen, N);
    }
}

/* A cursor naming a file that is gone still continues after its place. */
static void test_cursor_gone(void **st)
{
    (void)st;
    char cur[64];
    ztd_listing_cursor("llama/2.zz", cur);
    ztd_listing_query q;
    args(&q, "llama/", "10", cur);
    size_t f, n;
    bool more;
    page(&q, &f, &n, &more);
    assert_int_equal(f, 3);
    assert_int_equal(n, 1);
    ztd_listing_cursor("a", cur); /* before the prefix: the prefix's start */
    args(&q, "llama/", "10", cur);
    page(&q, &f, &n, &more);
    assert_int_equal(f, 1);
    assert_int_equal(n, 3);
}

static void test_bad_args(void **st)
{
    (void)st;
    ztd_listing_query q;
    const char *why = NULL;
    const char *bad_limits[] = {"0", "", "-1", "10001", "1x", "99999999999999999999999"};
    for (size_t i = 0; i < sizeof(bad_limits) / sizeof(*bad_limits); i++) {
        ztd_listing_init(&q);
        assert_int_equal(ztd_listing_arg(&q, "limit", bad_limits[i], &why), -1);
        assert_non_null(why);
    }
    ztd_listing_init(&q);
    assert_int_equal(ztd_listing_arg(&q, "limit", NULL, &why), -1);
    const char *bad_cursors[] = {"", "a", "zz", "00", "6100"};
    for (size_t i = 0; i < sizeof(bad_cursors) / sizeof(*bad_cursors); i++) {
        ztd_listing_init(&q);
        assert_int_equal(ztd_listing_arg(&q, "cursor", bad_cursors[i], &why), -1);
    }
    const char *bad_prefixes[] = {"%", "%4", "%zz", "a%00b"};
    for (size_t i = 0; i < sizeof(bad_prefixes) / sizeof(*bad_prefixes); i++) {
        ztd_listing_init(&q);
        assert_int_equal(ztd_listing_arg(&q, "prefix", bad_prefixes[i], &why), -1);
    }
    static char longp[ZTD_LISTING_MAX_NAME + 2];
    memset(longp, 'a', sizeof(longp) - 1);
    ztd_listing_init(&q);
    assert_int_equal(ztd_listing_arg(&q, "prefix", longp, &why), -1);
    ztd_listing_init(&q); /* unknown keys are ignored and do not page */
    assert_int_equal(ztd_listing_arg(&q, "x", "1", &why), 0);
    assert_false(q.paged);
    assert_int_equal(ztd_listing_arg(&q, "limit", "10000", &why), 0);
    assert_int_equal(q.limit, 10000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_prefix),
        cmocka_unit_test(test_cursor_walk),
        cmocka_unit_test(test_cursor_gone),
        cmocka_unit_test(test_bad_args),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
