/*
 * test_pull_names.c: zt pull's local names (cli/tool_pull_names.c): a name a
 * server lists is written under DIR only when it cannot leave DIR, and paths
 * are joined with exactly one '/'; a name that may be a v2 shard of a root
 * in the same listing (Appendix B) is recognised as such.
 */
#include "cli_test.h"

static void safe_names(void **state)
{
    (void)state;
    const char *ok[] = {"m.zt", "a/b.zt", "a/b/c.zt", ".hidden.zt", "a/..b", "...", "a/.b/c"};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
        assert_true(tool_pull_safe_rel(ok[i]));
    const char *bad[] = {"",     "/etc/passwd", "..",   ".",    "../m.zt", "a/../../m.zt",
                         "a/..", "a/./b",       "a//b", "a/b/", "./m.zt",  "/"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_false(tool_pull_safe_rel(bad[i]));
    /* An S3 key is anything: a backslash (a path separator elsewhere) and a
     * segment longer than a file name may be are refused too. */
    assert_false(tool_pull_safe_rel("a\\b.json"));
    assert_false(tool_pull_safe_rel("..\\..\\etc"));
    char seg[TOOL_PULL_SEGMENT_MAX + 8];
    memset(seg, 'x', sizeof seg);
    seg[TOOL_PULL_SEGMENT_MAX] = 0;
    assert_true(tool_pull_safe_rel(seg));
    seg[TOOL_PULL_SEGMENT_MAX] = 'x';
    seg[TOOL_PULL_SEGMENT_MAX + 1] = 0;
    assert_false(tool_pull_safe_rel(seg));
    char deep[2 * TOOL_PULL_SEGMENT_MAX + 16];
    snprintf(deep, sizeof deep, "a/%s/b", seg);
    assert_false(tool_pull_safe_rel(deep));
}

static void joins(void **state)
{
    (void)state;
    const char *cases[][3] = {
        {"dir", "m.zt", "dir/m.zt"},
        {"dir/", "m.zt", "dir/m.zt"},
        {"", "m.zt", "m.zt"},
        {"/", "m.zt", "/m.zt"},
        {"http://127.0.0.1:1/f/", "a%20b.zt", "http://127.0.0.1:1/f/a%20b.zt"},
        {"a/b", "c/d", "a/b/c/d"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *s = tool_path_join(cases[i][0], cases[i][1]);
        assert_non_null(s);
        assert_string_equal(s, cases[i][2]);
        free(s);
    }
}

static void shard_names(void **state)
{
    (void)state;
    const char *yes[][2] = {
        {"d/model-00001-of-00002.zt", "d/model.zt"},
        {"model-a.zt", "model.zt"},
        {"a/b/m-x.y.zt", "a/b/m.zt"},
    };
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
        assert_true(tool_pull_shard_of(yes[i][0], yes[i][1]));
    const char *no[][2] = {
        {"d/model.zt", "d/model.zt"},
        {"model-.zt", "model.zt"},
        {"e/model-1.zt", "d/model.zt"},
        {"d/model-1/x.zt", "d/model.zt"},
        {"d/model-1.safetensors", "d/model.zt"},
        {"d/model-1.zt", "d/model.safetensors"},
        {"d/modelx-1.zt", "d/model.zt"},
        {"d/model.zt", "d/model-1.zt"},
    };
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
        assert_false(tool_pull_shard_of(no[i][0], no[i][1]));
}

/* A listed name is cut below the prefix only when it starts with it (issue
 * 27: it used to drop strlen(prefix) bytes of any name). */
static void names_below_prefix(void **state)
{
    (void)state;
    assert_string_equal(tool_pull_rel("llama/m.zt", "llama/"), "m.zt");
    assert_string_equal(tool_pull_rel("llama/a/m.zt", "llama/"), "a/m.zt");
    assert_string_equal(tool_pull_rel("m.zt", ""), "m.zt");
    assert_string_equal(tool_pull_rel("a b/m.zt", "a b/"), "m.zt");
    assert_null(tool_pull_rel("other/m.zt", "llama/"));
    assert_null(tool_pull_rel("xxxxxx../m.zt", "llama/")); /* same length, other bytes */
    assert_null(tool_pull_rel("llama/", "llama/"));        /* nothing below */
    assert_null(tool_pull_rel("llama/../m.zt", "llama/")); /* leaves DIR */
    assert_null(tool_pull_rel("llam", "llama/"));
    char *d = tool_url_unescape("a%20b/%2Fx%zz%4");
    assert_non_null(d);
    assert_string_equal(d, "a b//x%zz%4");
    free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(safe_names), cmocka_unit_test(joins),
                                       cmocka_unit_test(shard_names),
                                       cmocka_unit_test(names_below_prefix)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
