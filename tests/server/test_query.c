/*
 * Unit tests for server/http/query.c: query parameter names given at most once, compared
 * after percent-decoding; at most ZTD_QUERY_MAX of them.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "http/query.h"

/* The status after feeding the names of a NULL-terminated list. */
static ztd_query_status feed(ztd_query_names *q, const char *const *names)
{
    ztd_query_begin(q);
    for (; *names; names++)
        ztd_query_name(q, *names, strlen(*names));
    return q->status;
}

#define L(...) ((const char *const[]){__VA_ARGS__, NULL})

static void distinct_names(void **state)
{
    (void)state;
    ztd_query_names q;
    assert_int_equal(feed(&q, L("prefix", "limit", "cursor")), ZTD_QUERY_OK);
    assert_int_equal(q.n, 3);
    assert_int_equal(feed(&q, L("a", "A", "a%", "a%2", "%61b")), ZTD_QUERY_OK); /* case counts */
    assert_int_equal(feed(&q, L("", "", "x")), ZTD_QUERY_OK); /* empty names are not names */
    assert_int_equal(q.n, 1);
    ztd_query_begin(&q);
    assert_int_equal(ztd_query_name(&q, NULL, 0), ZTD_QUERY_OK);
}

static void duplicates(void **state)
{
    (void)state;
    ztd_query_names q;
    char name[65];
    assert_int_equal(feed(&q, L("limit", "prefix", "limit")), ZTD_QUERY_DUPLICATE);
    ztd_query_bad_name(&q, name, sizeof(name));
    assert_string_equal(name, "limit");
    assert_int_equal(feed(&q, L("limit", "%6Cimit")), ZTD_QUERY_DUPLICATE);
    ztd_query_bad_name(&q, name, sizeof(name));
    assert_string_equal(name, "%6Cimit"); /* named as sent */
    assert_int_equal(feed(&q, L("%6c%69mit", "limit")), ZTD_QUERY_DUPLICATE);
    assert_int_equal(feed(&q, L("a%", "a%")), ZTD_QUERY_DUPLICATE);
    assert_int_equal(feed(&q, L("a%25", "a%")), ZTD_QUERY_DUPLICATE); /* %25 is '%' */
    /* the first problem stays */
    assert_int_equal(feed(&q, L("x", "x", "y", "y")), ZTD_QUERY_DUPLICATE);
    ztd_query_bad_name(&q, name, sizeof(name));
    assert_string_equal(name, "x");
}

static void too_many(void **state)
{
    (void)state;
    ztd_query_names q;
    char names[ZTD_QUERY_MAX + 1][8];
    ztd_query_begin(&q);
    for (int i = 0; i < ZTD_QUERY_MAX; i++) {
        snprintf(names[i], sizeof(names[i]), "p%d", i);
        assert_int_equal(ztd_query_name(&q, names[i], strlen(names[i])), ZTD_QUERY_OK);
    }
    /* a duplicate is still found at the cap; a new name is one too many */
    assert_int_equal(ztd_query_name(&q, "p0", 2), ZTD_QUERY_DUPLICATE);
    ztd_query_begin(&q);
    for (int i = 0; i < ZTD_QUERY_MAX; i++)
        ztd_query_name(&q, names[i], strlen(names[i]));
    snprintf(names[ZTD_QUERY_MAX], sizeof(names[0]), "p%d", ZTD_QUERY_MAX);
    assert_int_equal(ztd_query_name(&q, names[ZTD_QUERY_MAX], strlen(names[ZTD_QUERY_MAX])),
                     ZTD_QUERY_TOO_MANY);
}

static void bad_name_for_messages(void **state)
{
    (void)state;
    ztd_query_names q;
    char name[65], small[4];
    assert_int_equal(feed(&q, L("a\"b\\c\x01\xff", "a\"b\\c\x01\xff")), ZTD_QUERY_DUPLICATE);
    ztd_query_bad_name(&q, name, sizeof(name));
    assert_string_equal(name, "a?b?c??");
    ztd_query_bad_name(&q, small, sizeof(small));
    assert_string_equal(small, "a?b");
    char long_name[200];
    memset(long_name, 'n', sizeof(long_name) - 1);
    long_name[sizeof(long_name) - 1] = 0;
    assert_int_equal(feed(&q, L(long_name, long_name)), ZTD_QUERY_DUPLICATE);
    ztd_query_bad_name(&q, name, sizeof(name));
    assert_int_equal(strlen(name), 64);
    ztd_query_begin(&q);
    ztd_query_bad_name(&q, name, sizeof(name));
    assert_string_equal(name, "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(distinct_names),
        cmocka_unit_test(duplicates),
        cmocka_unit_test(too_many),
        cmocka_unit_test(bad_name_for_messages),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
