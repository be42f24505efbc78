/*
 * The canonical request of SigV4 for S3 (see sigv4_canon.h). Paths and query
 * parameters are decoded and encoded again with AWS's rule (keep A-Z a-z 0-9
 * - _ . ~, and '/' in paths; every other byte as %XX in uppercase), so that a
 * client's choice between "~" and "%7E", or "%2b" and "%2B", signs the same.
 */
#include "s3/sigv4_canon.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/hex.h"
#include "core/lex.h"

typedef struct sbuf {
    char *p;
    size_t n, cap;
    bool bad; /* out of memory or over ZTD_SIGV4_MAX_CANONICAL */
} sbuf;

static void sb_put(sbuf *b, const char *s, size_t n)
{
    if (b->bad)
        return;
    if (b->n + n + 1 > b->cap) {
        size_t nc = b->cap ? b->cap : 1024;
        while (nc < b->n + n + 1)
            nc *= 2;
        char *np = nc <= ZTD_SIGV4_MAX_CANONICAL * 2 ? realloc(b->p, nc) : NULL;
        if (!np || b->n + n > ZTD_SIGV4_MAX_CANONICAL) {
            b->bad = true;
            return;
        }
        b->p = np;
        b->cap = nc;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
}

static void sb_str(sbuf *b, const char *s)
{
    sb_put(b, s, strlen(s));
}

static bool unreserved(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_' || c == '.' || c == '~';
}

static void sb_encode(sbuf *b, const char *s, size_t n, bool keep_slash)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (unreserved(c) || (keep_slash && c == '/')) {
            sb_put(b, (const char *)&c, 1);
        } else {
            char e[3] = {'%', ztd_hex_digit_upper(c >> 4), ztd_hex_digit_upper(c)};
            sb_put(b, e, 3);
        }
    }
}

/* Percent-decode s[0, n) into a new NUL-terminated buffer; NULL on a bad escape or no memory.
 * In a query (plus_space), '+' is a space as in HTML forms: botocore sends its query through
 * urlencode(), which writes spaces as '+', while it signs them as %20 (a '+' is sent as %2B). */
static char *decode(const char *s, size_t n, bool plus_space, size_t *out_len, bool *bad_escape)
{
    char *o = malloc(n + 1);
    size_t k = 0;
    *bad_escape = false;
    if (!o)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        if (s[i] != '%') {
            o[k++] = plus_space && s[i] == '+' ? ' ' : s[i];
            continue;
        }
        int hi = i + 1 < n ? ztd_hex_value(s[i + 1]) : -1;
        int lo = i + 2 < n ? ztd_hex_value(s[i + 2]) : -1;
        if (hi < 0 || lo < 0) {
            free(o);
            *bad_escape = true;
            return NULL;
        }
        o[k++] = (char)(hi << 4 | lo);
        i += 2;
    }
    o[k] = '\0';
    *out_len = k;
    return o;
}

void ztd_s3_query_free(ztd_s3_query *q)
{
    for (size_t i = 0; q && q->p && i < q->n; i++) {
        free(q->p[i].name);
        free(q->p[i].value);
    }
    if (q) {
        free(q->p);
        q->p = NULL;
        q->n = 0;
    }
}

static ztd_s3err qfail(char *msg, size_t cap, const char *why)
{
    snprintf(msg, cap, "%s", why);
    return ZTD_S3E_INVALID_URI;
}

ztd_s3err ztd_s3_query_parse(const char *raw, ztd_s3_query *q, char *msg, size_t cap)
{
    q->p = NULL;
    q->n = 0;
    if (!raw || !*raw)
        return ZTD_S3E_OK;
    size_t len = strlen(raw);
    if (len > ZTD_SIGV4_MAX_QUERY)
        return qfail(msg, cap, "the query string is longer than 16384 bytes");
    q->p = calloc(ZTD_SIGV4_MAX_PARAMS, sizeof(*q->p));
    if (!q->p)
        return ZTD_S3E_INTERNAL;
    for (const char *s = raw; *s;) {
        const char *amp = strchr(s, '&');
        size_t n = amp ? (size_t)(amp - s) : strlen(s);
        if (n > 0) { /* "a=1&&b=2": an empty piece is no parameter */
            if (q->n == ZTD_SIGV4_MAX_PARAMS)
                return qfail(msg, cap, "more than 256 query parameters");
            const char *eq = memchr(s, '=', n);
            size_t nl = eq ? (size_t)(eq - s) : n;
            bool bad1 = false, bad2 = false;
            ztd_s3_param *p = &q->p[q->n];
            p->name = decode(s, nl, true, &p->nlen, &bad1);
            p->value = eq ? decode(eq + 1, n - nl - 1, true, &p->vlen, &bad2)
                          : decode("", 0, true, &p->vlen, &bad2);
            q->n++;
            if (bad1 || bad2)
                return qfail(msg, cap, "a query parameter has a bad percent-escape");
            if (!p->name || !p->value)
                return ZTD_S3E_INTERNAL;
        }
        s += n + (amp ? 1 : 0);
    }
    return ZTD_S3E_OK;
}

const char *ztd_s3_query_get(const ztd_s3_query *q, const char *name, size_t *count)
{
    const char *first = NULL;
    size_t c = 0, nl = strlen(name);
    for (size_t i = 0; i < q->n; i++)
        if (q->p[i].nlen == nl && !memcmp(q->p[i].name, name, nl)) {
            if (!first)
                first = q->p[i].value;
            c++;
        }
    if (count)
        *count = c;
    return first;
}

static bool name_eq_ci(const char *a, const char *b, size_t bn)
{
    size_t i = 0;
    for (; i < bn; i++)
        if (!a[i] || ztd_ascii_lower(a[i]) != ztd_ascii_lower(b[i]))
            return false;
    return a[i] == '\0';
}

const char *ztd_s3_header_get(const ztd_s3_request *req, const char *name, size_t *count)
{
    const char *first = NULL;
    size_t c = 0, nl = strlen(name);
    for (size_t i = 0; i < req->n_headers; i++)
        if (req->headers[i].name && name_eq_ci(req->headers[i].name, name, nl)) {
            if (!first)
                first = req->headers[i].value ? req->headers[i].value : "";
            c++;
        }
    if (count)
        *count = c;
    return first;
}

/* Trimall: no leading or trailing spaces/tabs, each inner run as one space. */
static void sb_trimall(sbuf *b, const char *v)
{
    bool space = false, any = false;
    for (size_t i = 0; v[i] && i < ZTD_SIGV4_MAX_VALUE; i++) {
        if (ztd_is_ows(v[i])) {
            space = any;
            continue;
        }
        if (space)
            sb_put(b, " ", 1);
        sb_put(b, &v[i], 1);
        space = false;
        any = true;
    }
}

/* "name:v1,v2\n" for one signed name (nl bytes of names); false when no header has it. */
static bool sb_header(sbuf *b, const ztd_s3_request *req, const char *name, size_t nl)
{
    bool found = false;
    sb_put(b, name, nl);
    sb_put(b, ":", 1);
    for (size_t i = 0; i < req->n_headers; i++) {
        const ztd_s3_header *h = &req->headers[i];
        if (!h->name || !name_eq_ci(h->name, name, nl))
            continue;
        if (found)
            sb_put(b, ",", 1);
        sb_trimall(b, h->value ? h->value : "");
        found = true;
    }
    sb_put(b, "\n", 1);
    return found;
}

typedef struct enc_param {
    char *name, *value;
} enc_param;

static int cmp_param(const void *a, const void *b)
{
    const enc_param *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : strcmp(x->value, y->value);
}

static char *encoded(const char *s, size_t n)
{
    sbuf b = {0};
    sb_encode(&b, s, n, false);
    if (!b.bad && !b.p)
        sb_put(&b, "", 0);
    if (b.bad) {
        free(b.p);
        return NULL;
    }
    return b.p;
}

/* The canonical query: each parameter encoded, sorted by name then value, joined by '&'. */
static bool sb_query(sbuf *b, const ztd_s3_query *q, bool presigned)
{
    enc_param *e = calloc(q->n ? q->n : 1, sizeof(*e));
    size_t n = 0;
    bool ok = e != NULL;
    for (size_t i = 0; ok && i < q->n; i++) {
        if (presigned && !strcmp(q->p[i].name, "X-Amz-Signature"))
            continue;
        e[n].name = encoded(q->p[i].name, q->p[i].nlen);
        e[n].value = encoded(q->p[i].value, q->p[i].vlen);
        ok = e[n].name && e[n].value;
        n++;
    }
    if (ok)
        qsort(e, n, sizeof(*e), cmp_param);
    for (size_t i = 0; ok && i < n; i++) {
        if (i)
            sb_put(b, "&", 1);
        sb_str(b, e[i].name);
        sb_put(b, "=", 1);
        sb_str(b, e[i].value);
    }
    for (size_t i = 0; e && i < n; i++) {
        free(e[i].name);
        free(e[i].value);
    }
    free(e);
    return ok;
}

static char *cfail(sbuf *b, ztd_s3err *err, ztd_s3err e, char *msg, size_t cap, const char *why)
{
    free(b->p);
    *err = e;
    snprintf(msg, cap, "%s", why);
    return NULL;
}

char *ztd_sigv4_canonical_request(const ztd_s3_request *req, const ztd_s3_query *q,
                                  const char *signed_headers, const char *payload, bool presigned,
                                  ztd_s3err *err, char *msg, size_t cap)
{
    sbuf b = {0};
    const char *path = req->path && *req->path ? req->path : "/";
    size_t plen = strlen(path), dlen = 0;
    if (plen > ZTD_SIGV4_MAX_PATH)
        return cfail(&b, err, ZTD_S3E_INVALID_URI, msg, cap, "the path is longer than 8192 bytes");
    bool bad = false;
    char *dec = decode(path, plen, false, &dlen, &bad);
    if (!dec)
        return cfail(&b, err, bad ? ZTD_S3E_INVALID_URI : ZTD_S3E_INTERNAL, msg, cap,
                     bad ? "the path has a bad percent-escape" : "out of memory");
    sb_str(&b, req->method ? req->method : "");
    sb_put(&b, "\n", 1);
    sb_encode(&b, dec, dlen, true);
    free(dec);
    sb_put(&b, "\n", 1);
    if (!sb_query(&b, q, presigned))
        return cfail(&b, err, ZTD_S3E_INTERNAL, msg, cap, "out of memory");
    sb_put(&b, "\n", 1);
    for (const char *s = signed_headers; *s;) {
        const char *semi = strchr(s, ';');
        size_t nl = semi ? (size_t)(semi - s) : strlen(s);
        if (!sb_header(&b, req, s, nl)) {
            char why[200];
            snprintf(why, sizeof(why), "signed header %.*s is not in the request",
                     (int)(nl < 128 ? nl : 128), s);
            return cfail(&b, err, ZTD_S3E_SIGNATURE_DOES_NOT_MATCH, msg, cap, why);
        }
        s += nl + (semi ? 1 : 0);
    }
    sb_put(&b, "\n", 1);
    sb_str(&b, signed_headers);
    sb_put(&b, "\n", 1);
    sb_str(&b, payload);
    if (b.bad)
        return cfail(&b, err, ZTD_S3E_INTERNAL, msg, cap, "the canonical request is too large");
    *err = ZTD_S3E_OK;
    return b.p;
}
