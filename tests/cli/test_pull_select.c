/*
 * test_pull_select.c: zt pull --tensors/--exclude-tensors and --include/--exclude (cli/tool_pull_select.c,
 * tool_pull_selected): an object is chosen when it matches an --include (or
 * there is none) and no --exclude; the patterns are fnmatch globs.
 */
#include "cli_test.h"

static int sel(const char *name, const char **inc, size_t ninc, const char **exc, size_t nexc)
{
    tool_globs g = {.include = inc, .exclude = exc, .ninclude = ninc, .nexclude = nexc};
    return tool_pull_selected(name, &g);
}

static void no_patterns_choose_all(void **state)
{
    (void)state;
    assert_true(sel("model.layers.0.weight", NULL, 0, NULL, 0));
    assert_true(sel("", NULL, 0, NULL, 0));
}

static void includes(void **state)
{
    (void)state;
    const char *inc[] = {"model.layers.1.*", "lm_head.weight"};
    assert_true(sel("model.layers.1.mlp.weight", inc, 2, NULL, 0));
    assert_true(sel("lm_head.weight", inc, 2, NULL, 0));
    assert_false(sel("model.layers.10.mlp.weight", inc, 2, NULL, 0));
    assert_false(sel("lm_head.weight.scale", inc, 2, NULL, 0));
    assert_false(sel("model.embed", inc, 2, NULL, 0));
    const char *cls[] = {"layer.[0-3].w", "a?c"};
    assert_true(sel("layer.2.w", cls, 2, NULL, 0));
    assert_false(sel("layer.4.w", cls, 2, NULL, 0));
    assert_true(sel("abc", cls, 2, NULL, 0));
    assert_false(sel("abbc", cls, 2, NULL, 0));
}

static void excludes_win(void **state)
{
    (void)state;
    const char *inc[] = {"model.*"};
    const char *exc[] = {"*.bias", "model.layers.3.*"};
    assert_true(sel("model.layers.2.weight", inc, 1, exc, 2));
    assert_false(sel("model.layers.2.bias", inc, 1, exc, 2));
    assert_false(sel("model.layers.3.weight", inc, 1, exc, 2));
    assert_false(sel("other.bias", NULL, 0, exc, 2));
    assert_true(sel("other.weight", NULL, 0, exc, 2));
    /* '*' crosses '/' and '.': fnmatch without FNM_PATHNAME or FNM_PERIOD */
    const char *any[] = {"*"};
    assert_false(sel("a/b/.c", NULL, 0, any, 1));
    assert_true(sel("a/b/.c", any, 1, NULL, 0));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(no_patterns_choose_all),
        cmocka_unit_test(includes),
        cmocka_unit_test(excludes_win),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
