/*
 * framing.c: is a request's head framed unambiguously? See framing.h for the rules.
 *
 * The checks sit in front of libmicrohttpd's own lenient parsing: a request refused here is
 * answered and its connection closed before a byte of its body (or of whatever a proxy
 * would have taken for the next request) is read. Pure and allocation-free, so that a unit
 * test and a fuzzer reach it without a socket.
 */
#include "http/framing.h"

#include <string.h>
#include <strings.h>

/* The first broken rule is the one reported. */
static void fail(ztd_framing *f, unsigned status, const char *message)
{
    if (f->status)
        return;
    f->status = status;
    f->code = status == 501 ? "not_implemented" : "bad_request";
    f->message = message;
}

static bool is_alnum(unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* RFC 9110 §5.6.2 tchar. */
static bool is_token(const char *s, size_t n)
{
    if (n == 0)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!is_alnum((unsigned char)s[i]) && !memchr("!#$%&'*+-.^_`|~", s[i], 15))
            return false;
    return true;
}

/* RFC 3986 uri-host [":" port] characters: unreserved, sub-delims, '%', ':', '[', ']'. No
 * '@' (userinfo is not allowed in http URIs), no '/', '?', '#', whitespace or controls. */
static bool is_authority(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!is_alnum((unsigned char)s[i]) && !memchr("-._~!$&'()*+,;=%:[]", s[i], 19))
            return false;
    return true;
}

/* A field value may hold HTAB, but no other control character (RFC 9110 §5.5); a bare CR
 * would be one. */
static bool has_control(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if ((c < 0x20 && c != '\t') || c == 0x7f)
            return true;
    }
    return false;
}

static bool is_ows(char c)
{
    return c == ' ' || c == '\t';
}

/* Strip optional whitespace around a value. */
static const char *trim(const char *s, size_t *n)
{
    while (*n && is_ows(s[0])) {
        s++;
        (*n)--;
    }
    while (*n && is_ows(s[*n - 1]))
        (*n)--;
    return s;
}

static bool name_is(const char *name, size_t n, const char *want)
{
    return n == strlen(want) && strncasecmp(name, want, n) == 0;
}

void ztd_framing_begin(ztd_framing *f, const char *version, const char *target, size_t sent_len)
{
    memset(f, 0, sizeof(*f));
    f->minor = -1;
    f->path = target ? target : "";
    if (version && strncmp(version, "HTTP/1.", 7) == 0 && version[7] >= '0' && version[7] <= '9' &&
        version[8] == '\0')
        f->minor = version[7] - '0';
    else
        fail(f, 400, "the HTTP version is not HTTP/1.x");
    if (!target) {
        fail(f, 400, "no request target");
        return;
    }
    if (strnlen(target, sent_len) < sent_len)
        fail(f, 400, "NUL byte in the request target");
    size_t scheme = strncasecmp(target, "http://", 7) == 0    ? 7
                    : strncasecmp(target, "https://", 8) == 0 ? 8
                                                              : 0;
    if (!scheme)
        return; /* origin-form, or a form the router refuses */
    const char *authority = target + scheme;
    size_t alen = strcspn(authority, "/?#");
    if (alen == 0 || !is_authority(authority, alen)) {
        fail(f, 400, "absolute-form target: the authority must be host[:port]");
        return;
    }
    /* RFC 9112 §3.2.2: the path after the authority is what is asked for; an empty path is
     * "/" (§3.2.1). */
    f->path = authority[alen] == '/' ? authority + alen : "/";
}

/* Tally the codings of one Transfer-Encoding value (a comma list of codings, each perhaps
 * with ";parameters"; empty members allowed by RFC 9110 §5.6.1). */
static void transfer_codings(ztd_framing *f, const char *v, size_t n)
{
    f->te_exact = f->encodings == 1 && n == 7 && strncasecmp(v, "chunked", 7) == 0;
    size_t i = 0;
    while (i < n) {
        while (i < n && (is_ows(v[i]) || v[i] == ','))
            i++;
        if (i == n)
            break;
        size_t start = i;
        while (i < n && v[i] != ',' && v[i] != ';' && !is_ows(v[i]))
            i++;
        bool chunked = i - start == 7 && strncasecmp(v + start, "chunked", 7) == 0;
        f->te_chunked += chunked;
        f->te_other |= !chunked;
        f->te_last_chunk = chunked;
        while (i < n && v[i] != ',')
            i++; /* parameters */
    }
}

static void content_length(ztd_framing *f, const char *v, size_t n)
{
    v = trim(v, &n);
    uint64_t x = 0;
    bool ok = n >= 1 && n <= 19; /* 19 digits always fit in 64 bits */
    for (size_t i = 0; ok && i < n; i++) {
        ok = v[i] >= '0' && v[i] <= '9';
        x = x * 10 + (uint64_t)(v[i] - '0');
    }
    if (!ok) {
        fail(f, 400, "Content-Length must be 1 to 19 digits");
        return;
    }
    f->has_length = true;
    f->content_length = x;
}

void ztd_framing_header(ztd_framing *f, const char *name, size_t name_len, const char *value,
                        size_t value_len)
{
    if (!value) {
        value = "";
        value_len = 0;
    }
    if (!name || !is_token(name, name_len)) {
        fail(f, 400, "a header name is not a token (whitespace before the colon?)");
        return;
    }
    if (memchr(value, '\0', value_len)) {
        fail(f, 400, "a header value holds a NUL byte");
        return;
    }
    if (has_control(value, value_len)) {
        fail(f, 400, "a header value holds a control character");
        return;
    }
    if (name_is(name, name_len, "Host")) {
        size_t n = value_len;
        const char *v = trim(value, &n);
        f->hosts++;
        if (!is_authority(v, n))
            fail(f, 400, "the Host header is not host[:port]");
    } else if (name_is(name, name_len, "Content-Length")) {
        f->lengths++;
        content_length(f, value, value_len);
    } else if (name_is(name, name_len, "Transfer-Encoding")) {
        f->encodings++;
        transfer_codings(f, value, value_len);
    } else if (name_is(name, name_len, "Expect")) {
        size_t n = value_len;
        const char *v = trim(value, &n);
        if (n == 12 && strncasecmp(v, "100-continue", 12) == 0)
            f->expect_continue = true;
    }
}

static void transfer_encoding_verdict(ztd_framing *f)
{
    if (f->lengths)
        fail(f, 400, "both Content-Length and Transfer-Encoding");
    else if (f->minor == 0)
        fail(f, 400, "Transfer-Encoding in an HTTP/1.0 request");
    else if (!f->te_last_chunk)
        fail(f, 400, "chunked is not the final transfer coding: the body length is unknown");
    else if (f->te_chunked > 1)
        fail(f, 400, "the chunked transfer coding is applied more than once");
    else if (f->te_other)
        fail(f, 501, "only the chunked transfer coding is implemented");
    else if (!f->te_exact)
        fail(f, 400, "Transfer-Encoding must be exactly \"chunked\"");
    f->chunked = true;
}

unsigned ztd_framing_end(ztd_framing *f)
{
    if (f->hosts > 1)
        fail(f, 400, "more than one Host header");
    else if (f->hosts == 0 && f->minor >= 1)
        fail(f, 400, "an HTTP/1.1 request needs a Host header");
    if (f->lengths > 1)
        fail(f, 400, "more than one Content-Length header");
    if (f->encodings)
        transfer_encoding_verdict(f);
    if (f->status) {
        f->chunked = f->has_length = f->has_body = f->expect_continue = false;
        f->content_length = 0;
        return f->status;
    }
    f->has_body = f->chunked || (f->has_length && f->content_length > 0);
    f->expect_continue = f->expect_continue && f->minor >= 1;
    return 0;
}
