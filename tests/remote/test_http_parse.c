/*
 * test_http_parse.c: libztensor-remote's pure parsers (lib/remote/http_parse.c),
 * the code that reads what a server sends: Content-Range, Retry-After,
 * entity-tags, status and header lines, error bodies, and the mapping of a
 * caller's URL to the URL whose bytes are read.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "remote_internal.h"

static int cr(const char *s, ztr_content_range *out)
{
    return ztr__parse_content_range(s, strlen(s), out);
}

static void content_range_valid(void **state)
{
    (void)state;
    ztr_content_range r;
    assert_int_equal(cr("bytes 0-99/1000", &r), 0);
    assert_false(r.unsatisfied);
    assert_true(r.total_known);
    assert_int_equal(r.first, 0);
    assert_int_equal(r.last, 99);
    assert_int_equal(r.total, 1000);
    assert_int_equal(cr("  BYTES 5-5/6 \r\n", &r), 0);
    assert_int_equal(r.first, 5);
    assert_int_equal(r.total, 6);
    assert_int_equal(cr("bytes 0-99/*", &r), 0);
    assert_false(r.total_known);
    assert_int_equal(cr("bytes */1000", &r), 0);
    assert_true(r.unsatisfied);
    assert_int_equal(r.total, 1000);
    assert_int_equal(cr("bytes 18446744073709551613-18446744073709551614/18446744073709551615", &r),
                     0);
    assert_int_equal(r.last, UINT64_MAX - 1);
}

static void content_range_invalid(void **state)
{
    (void)state;
    ztr_content_range r;
    const char *bad[] = {"",
                         "bytes",
                         "bytes ",
                         "bytes 0-99",
                         "bytes 99-0/1000",
                         "bytes 0-1000/1000",
                         "bytes=0-99/1000",
                         "bytes 0-99/1000x",
                         "bytes -1-2/3",
                         "bytes 0-18446744073709551616/18446744073709551617",
                         "bytes */*",
                         "bytes 0 -99/1000",
                         "items 0-99/1000",
                         "bytes0-99/1000",
                         "bytes 0-99/",
                         "bytes */"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (cr(bad[i], &r) != -1)
            fail_msg("\"%s\" was accepted", bad[i]);
}

static void retry_after(void **state)
{
    (void)state;
    double s;
    assert_int_equal(ztr__parse_retry_after("5", 1, 0, &s), 0);
    assert_true(s == 5.0);
    assert_int_equal(ztr__parse_retry_after(" 120 \r\n", 7, 0, &s), 0);
    assert_true(s == 120.0);
    assert_int_equal(ztr__parse_retry_after("99999999999999", 14, 0, &s), 0);
    assert_true(s == 1e9);
    /* 2015-10-21 07:28:00 UTC is 1445412480. */
    const char *d = "Wed, 21 Oct 2015 07:28:00 GMT";
    assert_int_equal(ztr__parse_retry_after(d, strlen(d), 1445412480 - 30, &s), 0);
    assert_true(s == 30.0);
    assert_int_equal(ztr__parse_retry_after(d, strlen(d), 1445412480 + 30, &s), 0);
    assert_true(s == 0.0);
    const char *bad[] = {"", "-1", "5s", "1.5", "soon", "Wed, 99 Foo 2015 99:99:99 GMT"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (ztr__parse_retry_after(bad[i], strlen(bad[i]), 0, &s) != -1)
            fail_msg("\"%s\" was accepted", bad[i]);
}

static void etags(void **state)
{
    (void)state;
    struct {
        const char *s;
        int kind;
    } t[] = {{"\"abc\"", 1},       {"W/\"abc\"", 2}, {"\"\"", 1},
             {"abc", 0},           {"\"a\"b\"", 0},  {"W/", 0},
             {"\"a b\"", 0},       {"\"", 0},        {"w/\"a\"", 0},
             {"\"sha256:ab\"", 1}, {"\"x\x7f\"", 0}, {"\"\xc3\xa9\"", 1}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (ztr__etag_kind(t[i].s, strlen(t[i].s)) != t[i].kind)
            fail_msg("%s: got %d, want %d", t[i].s, ztr__etag_kind(t[i].s, strlen(t[i].s)),
                     t[i].kind);
}

static void status_lines(void **state)
{
    (void)state;
    int code = 0;
    const char *ok[] = {"HTTP/1.1 206 Partial Content\r\n", "HTTP/2 200\r\n", "HTTP/1.0 503\r\n"};
    const int want[] = {206, 200, 503};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(ztr__parse_status_line(ok[i], strlen(ok[i]), &code), 0);
        assert_int_equal(code, want[i]);
    }
    const char *bad[] = {"HTTP/1.1 20\r\n",     "HTTX/1.1 200 OK\r\n", "HTTP/1.1 2000 x\r\n",
                         "Content-Type: x\r\n", "HTTP/1.1 099 x\r\n",  "HTTP/1.1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (ztr__parse_status_line(bad[i], strlen(bad[i]), &code) != -1)
            fail_msg("\"%s\" was accepted", bad[i]);
}

static void header_lines(void **state)
{
    (void)state;
    const char *v;
    size_t n;
    const char *l = "ETag:  \"x\" \r\n";
    assert_true(ztr__header_is(l, strlen(l), "etag", &v, &n));
    assert_int_equal(n, 3);
    assert_memory_equal(v, "\"x\"", 3);
    l = "etag:\"y\"";
    assert_true(ztr__header_is(l, strlen(l), "ETag", &v, &n));
    assert_int_equal(n, 3);
    l = "ETagX: y\r\n";
    assert_false(ztr__header_is(l, strlen(l), "etag", &v, &n));
    l = "ETa";
    assert_false(ztr__header_is(l, strlen(l), "etag", &v, &n));
    l = "Content-Length:\r\n";
    assert_true(ztr__header_is(l, strlen(l), "content-length", &v, &n));
    assert_int_equal(n, 0);
}

static void url(const char *in, unsigned flags, const char *want, bool want_st)
{
    char out[256];
    bool st = !want_st;
    const char *why = NULL;
    int rc = ztr__data_url(in, flags, out, sizeof out, &st, &why);
    if (!want) {
        if (rc != -1)
            fail_msg("%s was accepted as %s", in, out);
        assert_non_null(why);
        return;
    }
    if (rc != 0)
        fail_msg("%s refused: %s", in, why);
    assert_string_equal(out, want);
    assert_int_equal(st, want_st);
}

static void data_urls(void **state)
{
    (void)state;
    url("http://h:1/v1/files/a.zt", 0, "http://h:1/v1/files/a.zt/raw", false);
    url("HTTP://h/v1/files/dir/b.zt?x=1#frag", 0, "HTTP://h/v1/files/dir/b.zt/raw?x=1", false);
    url("http://h/v1/files/a.zt/raw", 0, "http://h/v1/files/a.zt/raw", false);
    url("http://h/cache/v1/files/a.alt", 0, "http://h/cache/v1/files/a.alt/raw", false);
    url("http://h/v1/files/m.safetensors", 0, "http://h/v1/files/m.safetensors/raw", true);
    url("http://h/v1/files/m.safetensors/raw", 0, "http://h/v1/files/m.safetensors/raw", true);
    url("http://h/v1/files/a.zt", ZT_REMOTE_PLAIN_URL, "http://h/v1/files/a.zt", false);
    url("http://h/v1/files/a.zt/objects/x/data", 0, "http://h/v1/files/a.zt/objects/x/data", false);
    url("http://h/v1/files/", 0, "http://h/v1/files/", false);
    url("http://h/files/a.zt", 0, "http://h/files/a.zt", false);
    url("https://h/x/model.safetensors?download=1", 0, "https://h/x/model.safetensors?download=1",
        true);
    url("http://h", 0, "http://h", false);
    url("http://h?q=/v1/files/a.zt", 0, "http://h?q=/v1/files/a.zt", false);
    url("ftp://h/a.zt", 0, NULL, false);
    url("http:///a.zt", 0, NULL, false);
    url("http://h/a b.zt", 0, NULL, false);
    url("http://h/a\n.zt", 0, NULL, false);
    url("file:///etc/passwd", 0, NULL, false);
    char longurl[300];
    memset(longurl, 'a', sizeof longurl);
    memcpy(longurl, "http://h/", 9);
    longurl[sizeof longurl - 1] = 0;
    url(longurl, 0, NULL, false);
}

static void error_bodies(void **state)
{
    (void)state;
    char out[300];
    const char *j = "{\"error\":{\"code\":\"precondition_failed\",\"message\":\"a \\\"quoted\\\" "
                    "message\"}}";
    ztr__error_summary(j, strlen(j), out, sizeof out);
    assert_string_equal(out, "precondition_failed: a \"quoted\" message");
    const char *t = "<html>\r\n<b>502 Bad\x01Gateway</b>\r\n</html>\n";
    ztr__error_summary(t, strlen(t), out, sizeof out);
    assert_string_equal(out, "502 Bad?Gateway");
    /* nginx's and Python http.server's error pages: the title, not the page */
    const char *ng = "<html>\r\n<head><title>404 Not Found</title></head>\r\n<body>\r\n"
                     "<center><h1>404 Not Found</h1></center>\r\n<hr><center>nginx/1.22.1"
                     "</center>\r\n</body>\r\n</html>\r\n";
    ztr__error_summary(ng, strlen(ng), out, sizeof out);
    assert_string_equal(out, "404 Not Found");
    const char *py = "<!DOCTYPE HTML>\n<html lang=\"en\">\n    <head>\n        <meta "
                     "charset=\"utf-8\">\n        <TITLE>Error\n   response</TITLE>\n    "
                     "</head>\n    <body>\n        <h1>Error response</h1>\n";
    ztr__error_summary(py, strlen(py), out, sizeof out);
    assert_string_equal(out, "Error response");
    const char *notitle = "  <!doctype html><p>a &amp; b</p>";
    ztr__error_summary(notitle, strlen(notitle), out, sizeof out);
    assert_string_equal(out, "a &amp; b");
    ztr__error_summary("<xml>x</xml>", 12, out, sizeof out);
    assert_string_equal(out, "<xml>x</xml>");
    ztr__error_summary("", 0, out, sizeof out);
    assert_string_equal(out, "");
    const char *half = "{\"error\":{\"code\":\"x\",\"mess";
    ztr__error_summary(half, strlen(half), out, 8);
    assert_string_equal(out, "{\"error");
    const char *nul = "a\0b";
    ztr__error_summary(nul, 3, out, sizeof out);
    assert_string_equal(out, "a?b");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(content_range_valid), cmocka_unit_test(content_range_invalid),
        cmocka_unit_test(retry_after),         cmocka_unit_test(etags),
        cmocka_unit_test(status_lines),        cmocka_unit_test(header_lines),
        cmocka_unit_test(data_urls),           cmocka_unit_test(error_bodies),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
