/*
 * test_remote.c: which FILE arguments zt opens as remote files
 * (cli/tool_remote.c): http:// and https:// URLs, in any case; nothing else.
 */
#include "cli_test.h"

static void urls(void **state)
{
    (void)state;
    const char *yes[] = {"http://127.0.0.1/m.zt", "https://h/m.zt", "HTTP://H/x", "Https://h",
                         "http://"};
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
        assert_true(tool_is_url(yes[i]));
    const char *no[] = {"",       "m.zt",     "/srv/http://x", "ftp://h/m.zt",
                        "http:/", "http:x/y", "file:///m.zt",  "httpx://h"};
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
        assert_false(tool_is_url(no[i]));
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(urls)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
