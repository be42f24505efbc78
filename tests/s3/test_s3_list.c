/* The S3 listing's page (server/s3/s3_list.h) over sorted names: prefix,
 * delimiter and common prefixes, start-after (and resuming after a common
 * prefix), max-keys, a bucket's base directory, skipped names; and bucket
 * names (server/core/buckets.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/buckets.h"
#include "s3/s3_list.h"

static const char *name_at(const void *names, size_t i)
{
    return ((const char *const *)names)[i];
}

static bool skip_bad(const void *names, size_t i)
{
    return strstr(name_at(names, i), "BAD") != NULL;
}

static const char *const k_names[] = {
    "a.zt",  "d/BAD.zt", "d/x/1.zt", "d/x/2.zt",   "d/y.zt", "d/z/3.zt",
    "dd.zt", "m/a/b.zt", "m/c.zt",   "other/o.zt", "z+.zt",
};
#define K_N (sizeof(k_names) / sizeof(k_names[0]))

/* The page as text: "key" for keys, "key/" for prefixes, "+" if truncated. */
static void page_text(const ztd_s3_list_req *q, char *out, size_t cap)
{
    static ztd_s3_list_page pg;
    ztd_s3_list(q, k_names, K_N, name_at, skip_bad, &pg);
    size_t o = 0;
    out[0] = 0;
    for (size_t i = 0; i < pg.n; i++) {
        const char *k = k_names[pg.items[i].index] + q->base_len;
        int n = pg.items[i].prefix_len ? (int)pg.items[i].prefix_len : (int)strlen(k);
        o += (size_t)snprintf(out + o, cap - o, "%s%.*s", i ? " " : "", n, k);
    }
    if (pg.truncated)
        snprintf(out + o, cap - o, " +");
}

static ztd_s3_list_req req(const char *prefix, const char *delim, const char *after, size_t max)
{
    ztd_s3_list_req q = {
        "", 0, prefix, strlen(prefix), delim, strlen(delim), after, after ? strlen(after) : 0, max};
    return q;
}

static void expect(ztd_s3_list_req q, const char *want)
{
    char got[1024];
    page_text(&q, got, sizeof(got));
    assert_string_equal(got, want);
}

static void test_all_and_prefix(void **state)
{
    (void)state;
    expect(req("", "", NULL, 1000),
           "a.zt d/x/1.zt d/x/2.zt d/y.zt d/z/3.zt dd.zt m/a/b.zt m/c.zt other/o.zt z+.zt");
    expect(req("d/", "", NULL, 1000), "d/x/1.zt d/x/2.zt d/y.zt d/z/3.zt");
    expect(req("d", "", NULL, 1000), "d/x/1.zt d/x/2.zt d/y.zt d/z/3.zt dd.zt");
    expect(req("nothing", "", NULL, 1000), "");
    expect(req("zz", "", NULL, 1000), "");
}

static void test_delimiter(void **state)
{
    (void)state;
    expect(req("", "/", NULL, 1000), "a.zt d/ dd.zt m/ other/ z+.zt");
    expect(req("d/", "/", NULL, 1000), "d/x/ d/y.zt d/z/");
    expect(req("m/", "/", NULL, 1000), "m/a/ m/c.zt");
    /* a delimiter of several bytes, and one that is not '/' */
    expect(req("", ".z", NULL, 1000), "a.z d/x/1.z d/x/2.z d/y.z d/z/3.z dd.z m/a/b.z m/c.z "
                                      "other/o.z z+.z");
    expect(req("", "x", NULL, 1000), "a.zt d/x d/y.zt d/z/3.zt dd.zt m/a/b.zt m/c.zt other/o.zt "
                                     "z+.zt");
}

static void test_pages(void **state)
{
    (void)state;
    expect(req("", "/", NULL, 2), "a.zt d/ +");
    /* resuming after a common prefix skips its whole run */
    expect(req("", "/", "d/", 2), "dd.zt m/ +");
    expect(req("", "/", "m/", 2), "other/ z+.zt");
    expect(req("", "", "d/x/1.zt", 2), "d/x/2.zt d/y.zt +");
    expect(req("", "", "z+.zt", 2), "");
    /* start-after before the prefix starts at the prefix */
    expect(req("m/", "", "a", 5), "m/a/b.zt m/c.zt");
    /* exactly full: not truncated */
    expect(req("m/", "", NULL, 2), "m/a/b.zt m/c.zt");
    /* max-keys 0: nothing, not truncated */
    expect(req("", "", NULL, 0), "");
    /* a page of one, all the way: every key once, in order */
    char got[1024], all[4096] = "";
    const char *after = NULL;
    static char last[256];
    for (int i = 0; i < 20; i++) {
        ztd_s3_list_req q = req("", "", after, 1);
        static ztd_s3_list_page pg;
        ztd_s3_list(&q, k_names, K_N, name_at, skip_bad, &pg);
        if (!pg.n)
            break;
        snprintf(last, sizeof(last), "%s", k_names[pg.items[0].index]);
        strcat(all, last);
        strcat(all, " ");
        after = last;
        if (!pg.truncated)
            break;
    }
    (void)got;
    assert_string_equal(all, "a.zt d/x/1.zt d/x/2.zt d/y.zt d/z/3.zt dd.zt m/a/b.zt m/c.zt "
                             "other/o.zt z+.zt ");
}

static void test_base(void **state)
{
    (void)state;
    ztd_s3_list_req q = {"d/", 2, "", 0, "/", 1, NULL, 0, 1000};
    expect(q, "x/ y.zt z/");
    ztd_s3_list_req q2 = {"m/", 2, "a", 1, "", 0, NULL, 0, 1000};
    expect(q2, "a/b.zt");
}

static void test_many(void **state)
{
    (void)state;
    enum { N = 100000 };
    char **names = malloc(N * sizeof(*names));
    assert_non_null(names);
    for (int i = 0; i < N; i++) {
        names[i] = malloc(32);
        snprintf(names[i], 32, "m/%06d.zt", i);
    }
    static ztd_s3_list_page pg;
    ztd_s3_list_req q = {"", 0, "m/", 2, "", 0, "m/050000.zt", 11, 1000};
    ztd_s3_list(&q, names, N, name_at, NULL, &pg);
    assert_int_equal(pg.n, 1000);
    assert_true(pg.truncated);
    assert_string_equal(names[pg.items[0].index], "m/050001.zt");
    assert_string_equal(names[pg.items[999].index], "m/051000.zt");
    for (int i = 0; i < N; i++)
        free(names[i]);
    free(names);
}

static void test_bucket_names(void **state)
{
    (void)state;
    assert_null(ztd_bucket_name_problem("models", 6));
    assert_null(ztd_bucket_name_problem("a.b-c", 5));
    assert_non_null(ztd_bucket_name_problem("readyz", 6));
    assert_non_null(ztd_bucket_name_problem("xn--abc", 7));
    assert_non_null(ztd_bucket_name_problem("abc-", 4));
    assert_non_null(ztd_bucket_name_problem("abc_d", 5));
    ztd_buckets b;
    char why[256];
    assert_int_equal(ztd_buckets_parse("models,llm=a/b", &b, why, sizeof(why)), 0);
    assert_int_equal(b.n, 2);
    assert_string_equal(ztd_buckets_find(&b, "llm", 3)->dir, "a/b");
    assert_string_equal(ztd_buckets_find(&b, "models", 6)->dir, "");
    assert_null(ztd_buckets_find(&b, "model", 5));
    ztd_buckets_free(&b);
    assert_int_equal(ztd_buckets_parse("abc=a//b", &b, why, sizeof(why)), -1);
    assert_non_null(strstr(why, "empty segment"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_all_and_prefix), cmocka_unit_test(test_delimiter),
        cmocka_unit_test(test_pages),          cmocka_unit_test(test_base),
        cmocka_unit_test(test_many),           cmocka_unit_test(test_bucket_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
