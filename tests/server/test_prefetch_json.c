/* Unit tests for server/http/prefetch_json.c: the body of POST /v1/prefetch. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "http/prefetch_json.h"

static ztd_err parse(const char *body, ztd_prefetch_request *r, char *msg)
{
    return ztd_prefetch_parse(body, body ? strlen(body) : 0, r, msg, 512);
}

static void accepts_files_and_prefixes(void **state)
{
    (void)state;
    ztd_prefetch_request r;
    char msg[512];
    assert_int_equal(
        parse("{\"files\": [\"a.zt\", \"d/b.zt\"], \"prefix\": [\"\", \"x/\"]}", &r, msg),
        ZTD_ERR_NONE);
    assert_int_equal(r.n, 4);
    assert_string_equal(r.names[0], "a.zt");
    assert_string_equal(r.names[1], "d/b.zt");
    assert_string_equal(r.names[2], "");
    assert_string_equal(r.names[3], "x/");
    ztd_prefetch_request_free(&r);
    assert_int_equal(parse("{\"prefix\": \"llama/\"}", &r, msg), ZTD_ERR_NONE);
    assert_int_equal(r.n, 1);
    ztd_prefetch_request_free(&r);
}

static void refuses_malformed_json(void **state)
{
    (void)state;
    ztd_prefetch_request r;
    char msg[512];
    const char *bad[] = {NULL, "", "[]", "{", "{\"files\": [\"a.zt\"], \"files\": []}", "\"x\""};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(parse(bad[i], &r, msg), ZTD_ERR_BAD_JSON);
        assert_null(r.root);
        assert_null(r.names);
        assert_non_null(strstr(msg, "JSON object"));
    }
}

static void refuses_bad_names(void **state)
{
    (void)state;
    ztd_prefetch_request r;
    char msg[512];
    const char *bad[] = {"{}",
                         "{\"files\": []}",
                         "{\"files\": \"a.zt\"}",
                         "{\"files\": [1]}",
                         "{\"files\": [\"\"]}",
                         "{\"files\": [\"../x.zt\"]}",
                         "{\"files\": [\"a/../x.zt\"]}",
                         "{\"files\": [\"/abs.zt\"]}",
                         "{\"files\": [\"a//b.zt\"]}",
                         "{\"prefix\": \".hidden/\"}",
                         "{\"prefix\": 3}"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(parse(bad[i], &r, msg), ZTD_ERR_BAD_REQUEST);
        assert_null(r.names);
        assert_non_null(strstr(msg, "relative"));
    }
}

static void bounds_the_count(void **state)
{
    (void)state;
    static char body[16 * (ZTD_PREFETCH_MAX_NAMES + 2)];
    size_t n = (size_t)snprintf(body, sizeof(body), "{\"files\": [");
    for (int i = 0; i <= ZTD_PREFETCH_MAX_NAMES; i++)
        n += (size_t)snprintf(body + n, sizeof(body) - n, "%s\"f%d.zt\"", i ? "," : "", i);
    snprintf(body + n, sizeof(body) - n, "]}");
    ztd_prefetch_request r;
    char msg[512];
    assert_int_equal(parse(body, &r, msg), ZTD_ERR_BAD_REQUEST); /* 10001 names */
    char *last = strrchr(body, ',');
    strcpy(last, "]}");
    assert_int_equal(parse(body, &r, msg), ZTD_ERR_NONE); /* 10000 */
    assert_int_equal(r.n, ZTD_PREFETCH_MAX_NAMES);
    ztd_prefetch_request_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(accepts_files_and_prefixes),
        cmocka_unit_test(refuses_malformed_json),
        cmocka_unit_test(refuses_bad_names),
        cmocka_unit_test(bounds_the_count),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
