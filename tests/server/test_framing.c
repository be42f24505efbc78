/*
 * test_framing.c: unit tests for server/http/framing.c, the RFC 9112 framing checks of a request's
 * head (Content-Length, Transfer-Encoding, Host, header names and values, NUL in the target,
 * absolute-form). Headers are given as libmicrohttpd hands them over: "Content-Length : 5"
 * arrives as the name "Content-Length " (connection.c cuts the line at the colon and keeps
 * the space), a value without its leading whitespace.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "http/framing.h"
#include "http/head_wire.h"

static ztd_framing f;

/* hv: name, value, name, value, ..., NULL. sent_len 0 means strlen(target). */
static unsigned run(const char *version, const char *target, size_t sent_len, const char *const *hv)
{
    ztd_framing_begin(&f, version, target, sent_len ? sent_len : strlen(target));
    for (size_t i = 0; hv && hv[i]; i += 2)
        ztd_framing_header(&f, hv[i], strlen(hv[i]), hv[i + 1], strlen(hv[i + 1]));
    return ztd_framing_end(&f);
}

#define H(...) ((const char *const[]){__VA_ARGS__, NULL})

static void expect_ok(const char *version, const char *target, const char *const *hv)
{
    unsigned st = run(version, target, 0, hv);
    if (st)
        fail_msg("%s %s: %u %s, want 0", version, target, st, f.message);
    assert_null(f.message);
}

static void expect_fail(unsigned want, const char *message, const char *version, const char *target,
                        const char *const *hv)
{
    unsigned st = run(version, target, 0, hv);
    if (st != want)
        fail_msg("%s %s: %u (%s), want %u (%s)", version, target, st, f.message ? f.message : "-",
                 want, message);
    assert_string_equal(f.message, message);
    assert_string_equal(f.code, want == 501 ? "not_implemented" : "bad_request");
    assert_false(f.has_body);
    assert_false(f.chunked);
    assert_false(f.expect_continue);
}

static void plain_requests(void **state)
{
    (void)state;
    expect_ok("HTTP/1.1", "/v1/files", H("Host", "127.0.0.1:7070"));
    assert_false(f.has_body);
    assert_false(f.has_length);
    assert_string_equal(f.path, "/v1/files");
    expect_ok("HTTP/1.0", "/healthz", NULL);            /* HTTP/1.0 needs no Host */
    expect_ok("HTTP/1.1", "/x", H("Host", ""));         /* empty Host is allowed */
    expect_ok("HTTP/1.1", "/x", H("host", "[::1]:80")); /* names in any case */
    expect_ok("HTTP/1.1", "/x?a=1&b", H("Host", "h", "X-Tab", "a\tb", "X-Obs", "caf\xc3\xa9"));
    assert_string_equal(f.path, "/x?a=1&b"); /* the query is the caller's to cut */
}

static void lengths(void **state)
{
    (void)state;
    expect_ok("HTTP/1.1", "/u", H("Host", "h", "Content-Length", "1048576"));
    assert_true(f.has_length);
    assert_true(f.has_body);
    assert_int_equal(f.content_length, 1048576);
    expect_ok("HTTP/1.1", "/u", H("Host", "h", "Content-Length", "0"));
    assert_true(f.has_length);
    assert_false(f.has_body);
    expect_ok("HTTP/1.1", "/u", H("Host", "h", "Content-Length", "9999999999999999999 "));
    assert_int_equal(f.content_length, 9999999999999999999ull);

    const char *dup = "more than one Content-Length header";
    expect_fail(400, dup, "HTTP/1.1", "/u",
                H("Host", "h", "Content-Length", "5", "Content-Length", "40"));
    expect_fail(400, dup, "HTTP/1.1", "/u",
                H("Host", "h", "Content-Length", "5", "Content-Length", "5"));
    const char *digits = "Content-Length must be 1 to 19 digits";
    expect_fail(400, digits, "HTTP/1.1", "/u", H("Host", "h", "Content-Length", "5, 5"));
    expect_fail(400, digits, "HTTP/1.1", "/u", H("Host", "h", "Content-Length", "+5"));
    expect_fail(400, digits, "HTTP/1.1", "/u", H("Host", "h", "Content-Length", ""));
    expect_fail(400, digits, "HTTP/1.1", "/u",
                H("Host", "h", "Content-Length", "18446744073709551615"));
}

static void transfer_encodings(void **state)
{
    (void)state;
    expect_ok("HTTP/1.1", "/u", H("Host", "h", "Transfer-Encoding", "chunked"));
    assert_true(f.chunked);
    assert_true(f.has_body);
    assert_false(f.has_length);
    expect_ok("HTTP/1.1", "/u", H("Host", "h", "transfer-encoding", "Chunked"));

    expect_fail(400, "both Content-Length and Transfer-Encoding", "HTTP/1.1", "/u",
                H("Host", "h", "Content-Length", "5", "Transfer-Encoding", "chunked"));
    expect_fail(400, "both Content-Length and Transfer-Encoding", "HTTP/1.1", "/u",
                H("Host", "h", "Transfer-Encoding", "chunked", "Content-Length", "0"));
    expect_fail(400, "Transfer-Encoding in an HTTP/1.0 request", "HTTP/1.0", "/u",
                H("Transfer-Encoding", "chunked"));
    const char *unknown_length =
        "chunked is not the final transfer coding: the body length is unknown";
    expect_fail(400, unknown_length, "HTTP/1.1", "/u",
                H("Host", "h", "Transfer-Encoding", "identity"));
    expect_fail(400, unknown_length, "HTTP/1.1", "/u",
                H("Host", "h", "Transfer-Encoding", "chunked, gzip"));
    expect_fail(400, unknown_length, "HTTP/1.1", "/u", H("Host", "h", "Transfer-Encoding", ""));
    expect_fail(400, unknown_length, "HTTP/1.1", "/u",
                H("Host", "h", "Transfer-Encoding", "chunked", "Transfer-Encoding", "gzip"));
    expect_fail(501, "only the chunked transfer coding is implemented", "HTTP/1.1", "/u",
                H("Host", "h", "Transfer-Encoding", "gzip, chunked"));
    expect_fail(501, "only the chunked transfer coding is implemented", "HTTP/1.1", "/u",
                H("Host", "h", "Transfer-Encoding", "gzip", "Transfer-Encoding", "chunked"));
    const char *twice = "the chunked transfer coding is applied more than once";
    expect_fail(400, twice, "HTTP/1.1", "/u",
                H("Host", "h", "Transfer-Encoding", "chunked, chunked"));
    expect_fail(400, twice, "HTTP/1.1", "/u",
                H("Host", "h", "Transfer-Encoding", "chunked", "Transfer-Encoding", "chunked"));
    /* Valid lists that libmicrohttpd would not read as chunked: it compares the whole
     * value with "chunked", so its body would have no end. */
    const char *exact = "Transfer-Encoding must be exactly \"chunked\"";
    expect_fail(400, exact, "HTTP/1.1", "/u", H("Host", "h", "Transfer-Encoding", "chunked "));
    expect_fail(400, exact, "HTTP/1.1", "/u", H("Host", "h", "Transfer-Encoding", ", chunked"));
    expect_fail(400, exact, "HTTP/1.1", "/u", H("Host", "h", "Transfer-Encoding", "chunked;x=1"));
}

static void header_names_and_values(void **state)
{
    (void)state;
    const char *token = "a header name is not a token (whitespace before the colon?)";
    /* "Content-Length : 38", as libmicrohttpd 0.9.75 hands it over */
    expect_fail(400, token, "HTTP/1.1", "/", H("Host", "h", "Content-Length ", "38"));
    expect_fail(400, token, "HTTP/1.1", "/", H("Host", "h", "Transfer-Encoding\t", "chunked"));
    expect_fail(400, token, "HTTP/1.1", "/", H("Host", "h", " Host", "h"));
    expect_fail(400, token, "HTTP/1.1", "/", H("Host", "h", "", "x"));
    expect_fail(400, token, "HTTP/1.1", "/", H("Host", "h", "a(b)", "x"));
    expect_fail(400, token, "HTTP/1.1", "/", H("Host", "h", "na\xc3\xafve", "x"));
    const char *ctl = "a header value holds a control character";
    expect_fail(400, ctl, "HTTP/1.1", "/", H("Host", "h", "X-A", "a\rb"));
    expect_fail(400, ctl, "HTTP/1.1", "/", H("Host", "h", "X-A", "a\x7f"));
    expect_fail(400, ctl, "HTTP/1.1", "/", H("Host", "h", "X-A", "\x01"));
    /* the first broken rule is the one reported */
    expect_fail(400, token, "HTTP/1.1", "/", H("Bad Name", "x", "X-A", "\x01"));
    /* a NUL, given with the value's length on the wire (head_wire.h) */
    const char *nul = "a header value holds a NUL byte";
    ztd_framing_begin(&f, "HTTP/1.1", "/", 1);
    ztd_framing_header(&f, "Host", 4, "h", 1);
    ztd_framing_header(&f, "X-A", 3, "a\0b", 3);
    assert_int_equal(ztd_framing_end(&f), 400);
    assert_string_equal(f.message, nul);
    ztd_framing_begin(&f, "HTTP/1.1", "/", 1);
    ztd_framing_header(&f, "Range", 5, "\0", 1);
    ztd_framing_header(&f, "Host", 4, "h", 1);
    assert_int_equal(ztd_framing_end(&f), 400);
    assert_string_equal(f.message, nul);
}

/* A head as libmicrohttpd 0.9.75 leaves it in its buffer: line ends and colons replaced by
 * NULs in place. */
static void value_wire_lengths(void **state)
{
    (void)state;
    /* "X-A: a\0b\r\nY: c\r\n\r\n" after the parse */
    static const char h1[] = "X-A\0 a\0b\0\0Y\0 c\0\0\0\0";
    const char *v1 = h1 + 5, *k2 = h1 + 10, *v2 = h1 + 13, *end = h1 + sizeof(h1) - 1;
    assert_int_equal(ztd_value_wire_len(v1, 1, k2, false), 3); /* "a\0b" */
    assert_int_equal(ztd_value_wire_len(v2, 1, end, true), 1); /* "c" */
    /* clean lines, CRLF and bare LF: the reported length */
    static const char h2[] = "A\0 xy\0\0B\0 z\0C\0 w\0\0";
    assert_int_equal(ztd_value_wire_len(h2 + 3, 2, h2 + 7, false), 2);
    assert_int_equal(ztd_value_wire_len(h2 + 10, 1, h2 + 12, false), 1);
    assert_int_equal(ztd_value_wire_len(h2 + 15, 1, h2 + sizeof(h2) - 1, true), 1);
    /* "A: a\0" CRLF, and the last header "A: a\0" CRLF CRLF: the NUL is seen */
    static const char h3[] = "A\0 a\0\0\0B\0 b\0\0\0\0\0";
    assert_int_equal(ztd_value_wire_len(h3 + 3, 1, h3 + 7, false), 2);
    assert_int_equal(ztd_value_wire_len(h3 + 10, 1, h3 + sizeof(h3) - 1, true), 2);
    /* "A: a\0" then a bare LF: cannot be told from "a" CRLF */
    assert_int_equal(ztd_value_wire_len(h3 + 3, 1, h3 + 6, false), 1);
    /* a next line that cannot follow: the reported length */
    assert_int_equal(ztd_value_wire_len(v1, 1, NULL, false), 1);
    assert_int_equal(ztd_value_wire_len(v2, 1, h1, false), 1);
    assert_int_equal(ztd_value_wire_len(v1, 3, v1 + 2, false), 3);
    assert_int_equal(ztd_value_wire_len(NULL, 0, h1, true), 0);
}

static void hosts(void **state)
{
    (void)state;
    expect_fail(400, "an HTTP/1.1 request needs a Host header", "HTTP/1.1", "/", NULL);
    expect_fail(400, "an HTTP/1.1 request needs a Host header", "HTTP/1.2", "/", NULL);
    expect_fail(400, "more than one Host header", "HTTP/1.1", "/", H("Host", "a", "Host", "a"));
    expect_fail(400, "more than one Host header", "HTTP/1.0", "/", H("Host", "a", "HOST", "b"));
    const char *bad = "the Host header is not host[:port]";
    expect_fail(400, bad, "HTTP/1.1", "/", H("Host", "a b"));
    expect_fail(400, bad, "HTTP/1.1", "/", H("Host", "user@h"));
    expect_fail(400, bad, "HTTP/1.1", "/", H("Host", "h/x"));
    expect_ok("HTTP/1.1", "/", H("Host", "h:80 ")); /* trailing whitespace is not the value */
}

static void targets(void **state)
{
    (void)state;
    /* libmicrohttpd cuts "/a.zt\0.evil" to "/a.zt"; the length sent tells. */
    assert_int_equal(run("HTTP/1.1", "/a.zt", 11, H("Host", "h")), 400);
    assert_string_equal(f.message, "NUL byte in the request target");
    assert_int_equal(run("HTTP/1.1", "/a.zt", 6, H("Host", "h")), 400);
    assert_int_equal(run("HTTP/1.1", "", 1, H("Host", "h")), 400);
    assert_int_equal(run("HTTP/1.1", "/a.zt", 5, H("Host", "h")), 0);

    expect_ok("HTTP/1.1", "http://127.0.0.1:7070/v1/files", H("Host", "127.0.0.1:7070"));
    assert_string_equal(f.path, "/v1/files");
    expect_ok("HTTP/1.1", "HTTPS://h/healthz?x=1", H("Host", "other"));
    assert_string_equal(f.path, "/healthz?x=1");
    expect_ok("HTTP/1.1", "http://h", H("Host", "h"));
    assert_string_equal(f.path, "/");
    expect_ok("HTTP/1.1", "http://h?x", H("Host", "h"));
    assert_string_equal(f.path, "/");
    expect_ok("HTTP/1.1", "http://[::1]:80/x", H("Host", "h"));
    assert_string_equal(f.path, "/x");
    const char *authority = "absolute-form target: the authority must be host[:port]";
    expect_fail(400, authority, "HTTP/1.1", "http:///x", H("Host", "h"));
    expect_fail(400, authority, "HTTP/1.1", "http://user@h/x", H("Host", "h"));
    expect_fail(400, authority, "HTTP/1.1", "http://h\\x/y", H("Host", "h"));
    /* other forms are the router's to refuse */
    expect_ok("HTTP/1.1", "ftp://h/x", H("Host", "h"));
    assert_string_equal(f.path, "ftp://h/x");
    expect_ok("HTTP/1.1", "*", H("Host", "h"));
}

static void versions_and_expect(void **state)
{
    (void)state;
    expect_fail(400, "the HTTP version is not HTTP/1.x", "HTTP/2.0", "/", H("Host", "h"));
    expect_fail(400, "the HTTP version is not HTTP/1.x", "HTTP/1.10", "/", H("Host", "h"));
    expect_fail(400, "the HTTP version is not HTTP/1.x", "", "/", H("Host", "h"));
    assert_int_equal(run(NULL, "/", 0, H("Host", "h")), 400);

    expect_ok("HTTP/1.1", "/u", H("Host", "h", "Content-Length", "9", "Expect", "100-Continue"));
    assert_true(f.expect_continue);
    assert_true(f.has_body);
    expect_ok("HTTP/1.1", "/u", H("Host", "h", "Expect", "100-continue "));
    assert_true(f.expect_continue);
    expect_ok("HTTP/1.1", "/u", H("Host", "h", "Expect", "something-else"));
    assert_false(f.expect_continue);
    /* libmicrohttpd sends 100 Continue to HTTP/1.1 only; an HTTP/1.0 client sends its body */
    expect_ok("HTTP/1.0", "/u", H("Expect", "100-continue"));
    assert_false(f.expect_continue);
}

static void null_arguments(void **state)
{
    (void)state;
    ztd_framing_begin(&f, "HTTP/1.1", NULL, 0);
    assert_int_equal(ztd_framing_end(&f), 400);
    assert_string_equal(f.message, "no request target");
    assert_string_equal(f.path, "");
    ztd_framing_begin(&f, "HTTP/1.1", "/", 1);
    ztd_framing_header(&f, "Host", 4, NULL, 0);
    ztd_framing_header(&f, NULL, 0, "x", 1);
    assert_int_equal(ztd_framing_end(&f), 400);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(plain_requests),
        cmocka_unit_test(lengths),
        cmocka_unit_test(transfer_encodings),
        cmocka_unit_test(header_names_and_values),
        cmocka_unit_test(value_wire_lengths),
        cmocka_unit_test(hosts),
        cmocka_unit_test(targets),
        cmocka_unit_test(versions_and_expect),
        cmocka_unit_test(null_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
