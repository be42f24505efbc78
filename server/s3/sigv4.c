/*
 * SigV4 verification (see sigv4.h): parse one of the two forms into the same
 * parts (credential, signed headers, signature, date, payload), check the
 * time, then recompute the signature over the canonical request with the
 * key's signing key and compare in constant time.
 */
#include "s3/sigv4.h"

#include <openssl/sha.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/dates.h"
#include "core/hex.h"
#include "core/lex.h"

#define ALGO "AWS4-HMAC-SHA256"

/* The parts both forms give. */
typedef struct parts {
    char cred[ZTD_S3_MAX_KEY_ID + 8 + ZTD_SIGV4_MAX_REGION + 24 + 1];
    char signed_headers[ZTD_SIGV4_MAX_SIGNED * (ZTD_SIGV4_MAX_HEADER_NAME + 1) + 1];
    char sig[ZTD_SIGV4_SIG_HEX + 8];
    size_t sig_len;
    int64_t t;
    const char *payload;
} parts;

static ztd_s3err fail(ztd_s3_auth *out, ztd_s3err e, const char *why)
{
    snprintf(out->msg, sizeof(out->msg), "%s", why);
    return e;
}

static bool digits(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!ztd_is_digit(s[i]))
            return false;
    return true;
}

static unsigned num(const char *s, size_t n)
{
    unsigned v = 0;
    for (size_t i = 0; i < n; i++)
        v = v * 10 + (unsigned)(s[i] - '0');
    return v;
}

/* "YYYYMMDDTHHMMSSZ" -> Unix seconds; -1 when it is not one. */
static int parse_amz_date(const char *s, int64_t *t)
{
    if (strlen(s) != 16 || s[8] != 'T' || s[15] != 'Z' || !digits(s, 8) || !digits(s + 9, 6))
        return -1;
    unsigned y = num(s, 4), mo = num(s + 4, 2), d = num(s + 6, 2);
    unsigned h = num(s + 9, 2), mi = num(s + 11, 2), se = num(s + 13, 2);
    if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 60)
        return -1;
    int64_t days = ztd_days_from_civil(y, mo, d);
    int64_t y2;
    unsigned m2, d2;
    ztd_civil_from_days(days, &y2, &m2, &d2);
    if (m2 != mo || d2 != d) /* 20130231 */
        return -1;
    *t = days * 86400 + h * 3600 + mi * 60 + se;
    return 0;
}

static void format_amz_date(int64_t t, char out[17])
{
    int64_t y, days = t >= 0 ? t / 86400 : (t - 86399) / 86400, sec = t - days * 86400;
    unsigned m, d;
    ztd_civil_from_days(days, &y, &m, &d);
    if (y < 0 || y > 9999)
        y = y < 0 ? 0 : 9999;
    snprintf(out, 17, "%04u%02u%02uT%02u%02u%02uZ", (unsigned)y, m, d, (unsigned)(sec / 3600),
             (unsigned)(sec / 60 % 60), (unsigned)(sec % 60));
}

/* Credential "AK/YYYYMMDD/REGION/s3/aws4_request" into out; bad is the error for this form. */
static ztd_s3err parse_credential(const char *c, ztd_s3_auth *out, ztd_s3err bad)
{
    const char *f[5];
    size_t fl[5], k = 0;
    for (const char *s = c; k < 5; k++) {
        const char *slash = strchr(s, '/');
        f[k] = s;
        fl[k] = slash ? (size_t)(slash - s) : strlen(s);
        if (!slash) {
            k++;
            break;
        }
        s = slash + 1;
    }
    if (k != 5 || strchr(f[4], '/'))
        return fail(out, bad, "the credential must be ACCESS_KEY/DATE/REGION/s3/aws4_request");
    if (fl[0] == 0 || fl[0] > ZTD_S3_MAX_KEY_ID)
        return fail(out, bad, "the credential's access key id is empty or too long");
    if (fl[1] != 8 || !digits(f[1], 8))
        return fail(out, bad, "the credential's date must be YYYYMMDD");
    if (fl[2] == 0 || fl[2] > ZTD_SIGV4_MAX_REGION)
        return fail(out, bad, "the credential's region must be 1 to 64 characters");
    for (size_t i = 0; i < fl[2]; i++)
        if ((unsigned char)f[2][i] <= ' ' || (unsigned char)f[2][i] >= 0x7f)
            return fail(out, bad, "the credential's region has a space or a control character");
    if (fl[3] != 2 || memcmp(f[3], "s3", 2))
        return fail(out, bad, "the credential's service must be s3");
    if (fl[4] != 12 || memcmp(f[4], "aws4_request", 12))
        return fail(out, bad, "the credential must end in aws4_request");
    memcpy(out->access_key, f[0], fl[0]);
    out->access_key[fl[0]] = '\0';
    memcpy(out->region, f[2], fl[2]);
    out->region[fl[2]] = '\0';
    snprintf(out->scope_str, sizeof(out->scope_str), "%.8s/%s/s3/aws4_request", f[1], out->region);
    return ZTD_S3E_OK;
}

/* SignedHeaders: 1 to 64 lowercase names of token characters, ';'-separated, no repeats. */
static bool signed_list_ok(const char *s)
{
    const char *names[ZTD_SIGV4_MAX_SIGNED];
    size_t lens[ZTD_SIGV4_MAX_SIGNED], n = 0;
    while (*s) {
        const char *semi = strchr(s, ';');
        size_t l = semi ? (size_t)(semi - s) : strlen(s);
        if (l == 0 || l > ZTD_SIGV4_MAX_HEADER_NAME || n == ZTD_SIGV4_MAX_SIGNED)
            return false;
        for (size_t i = 0; i < l; i++) {
            char c = s[i];
            if (!((c >= 'a' && c <= 'z') || ztd_is_digit(c) || (c && strchr("-_.!#$%&'*+^`|~", c))))
                return false;
        }
        for (size_t j = 0; j < n; j++)
            if (lens[j] == l && !memcmp(names[j], s, l))
                return false;
        names[n] = s;
        lens[n++] = l;
        s += l;
        if (semi && !*++s)
            return false; /* a trailing ';' */
    }
    return n > 0;
}

static bool in_list(const char *list, const char *name)
{
    size_t nl = strlen(name);
    for (const char *s = list; *s;) {
        const char *semi = strchr(s, ';');
        size_t l = semi ? (size_t)(semi - s) : strlen(s);
        if (l == nl && !memcmp(s, name, nl))
            return true;
        s += l + (semi ? 1 : 0);
    }
    return false;
}

static bool copy(char *dst, size_t cap, const char *s, size_t n)
{
    if (n >= cap)
        return false;
    memcpy(dst, s, n);
    dst[n] = '\0';
    return true;
}

/* x-amz-content-sha256's value into out->payload; false when it is none of the allowed ones. */
static bool parse_payload(const char *v, ztd_s3_auth *out)
{
    static const struct {
        const char *s;
        ztd_s3_payload p;
    } named[] = {
        {"UNSIGNED-PAYLOAD", ZTD_S3_PAYLOAD_UNSIGNED},
        {"STREAMING-AWS4-HMAC-SHA256-PAYLOAD", ZTD_S3_PAYLOAD_STREAMING},
        {"STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER", ZTD_S3_PAYLOAD_STREAMING_TRAILER},
        {"STREAMING-UNSIGNED-PAYLOAD-TRAILER", ZTD_S3_PAYLOAD_STREAMING_UNSIGNED_TRAILER},
    };
    for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++)
        if (!strcmp(v, named[i].s)) {
            out->payload = named[i].p;
            return true;
        }
    out->payload = ZTD_S3_PAYLOAD_SHA256;
    return strlen(v) == 64 && ztd_hex_decode(v, 32, out->payload_sha256) == 0;
}

/* Recompute the signature of the parsed request p and compare it with the presented one. */
static ztd_s3err check_signature(const ztd_s3_request *req, const ztd_s3_query *q,
                                 const ztd_s3_keys *keys, const parts *p, ztd_s3_auth *out)
{
    char date[9];
    memcpy(date, out->amz_date, 8);
    date[8] = '\0';
    if (!ztd_s3_keys_signing_key(keys, out->access_key, date, out->region, out->signing_key,
                                 &out->scope))
        return fail(out, ZTD_S3E_INVALID_ACCESS_KEY_ID,
                    "the access key id does not exist in our records");
    ztd_s3err e;
    char *cr = ztd_sigv4_canonical_request(req, q, p->signed_headers, p->payload, out->presigned,
                                           &e, out->msg, sizeof(out->msg));
    if (!cr)
        return e;
    char crhash[65], sts[256], mine[ZTD_SIGV4_SIG_HEX + 1];
    ztd_sigv4_sha256_hex(cr, strlen(cr), crhash);
    free(cr);
    int n = snprintf(sts, sizeof(sts), ALGO "\n%s\n%s\n%s", out->amz_date, out->scope_str, crhash);
    ztd_sigv4_sign(out->signing_key, sts, (size_t)n, mine);
    if (!ztd_sigv4_sig_equal(mine, p->sig, p->sig_len))
        return fail(out, ZTD_S3E_SIGNATURE_DOES_NOT_MATCH,
                    "the request signature we calculated does not match the signature you "
                    "provided; check your key and signing method");
    memcpy(out->seed_signature, mine, sizeof(mine));
    return ZTD_S3E_OK;
}

/* One "Name=value" of the Authorization header into its slot (each exactly once). */
static bool auth_component(const char *s, size_t n, parts *p, unsigned *seen)
{
    static const char *names[] = {"Credential=", "SignedHeaders=", "Signature="};
    for (unsigned k = 0; k < 3; k++) {
        size_t kl = strlen(names[k]);
        if (n < kl || memcmp(s, names[k], kl))
            continue;
        if (*seen & (1u << k))
            return false;
        *seen |= 1u << k;
        s += kl;
        n -= kl;
        if (k == 2)
            p->sig_len = n;
        return k == 0   ? copy(p->cred, sizeof(p->cred), s, n)
               : k == 1 ? copy(p->signed_headers, sizeof(p->signed_headers), s, n)
                        : copy(p->sig, sizeof(p->sig), s, n);
    }
    return false;
}

static bool parse_authorization(const char *v, parts *p)
{
    const char *s = ztd_skip_ows(v + strlen(ALGO));
    unsigned seen = 0;
    while (*s) {
        const char *comma = strchr(s, ',');
        size_t n = comma ? (size_t)(comma - s) : strlen(s);
        while (n && ztd_is_ows(s[n - 1]))
            n--;
        if (!auth_component(s, n, p, &seen))
            return false;
        s = comma ? ztd_skip_ows(comma + 1) : s + n + strlen(s + n);
        if (comma && !*s)
            return false;
    }
    return seen == 7;
}

/* Headers that steer how the body is checked must be signed in the header form. */
static const char *unsigned_integrity_header(const ztd_s3_request *req, const char *list)
{
    static const char *must[] = {"x-amz-content-sha256", "x-amz-date",
                                 "x-amz-decoded-content-length", "x-amz-trailer", "content-md5"};
    for (size_t i = 0; i < req->n_headers; i++) {
        const char *h = req->headers[i].name;
        if (!h)
            continue;
        char low[ZTD_SIGV4_MAX_HEADER_NAME + 1];
        size_t k = 0;
        for (; h[k] && k < ZTD_SIGV4_MAX_HEADER_NAME; k++)
            low[k] = ztd_ascii_lower(h[k]);
        low[k] = '\0';
        bool needed = !strncmp(low, "x-amz-checksum-", 15);
        for (size_t j = 0; !needed && j < sizeof(must) / sizeof(must[0]); j++)
            needed = !strcmp(low, must[j]);
        if (needed && !in_list(list, low))
            return h;
    }
    return NULL;
}

/* The request's time for the header form: x-amz-date, else Date. */
static ztd_s3err header_time(const ztd_s3_request *req, parts *p, ztd_s3_auth *out)
{
    size_t nd = 0, nD = 0;
    const char *xd = ztd_s3_header_get(req, "x-amz-date", &nd);
    const char *d = ztd_s3_header_get(req, "date", &nD);
    if (nd > 1 || (!xd && nD > 1))
        return fail(out, ZTD_S3E_INVALID_ARGUMENT, "the request has more than one date header");
    if (xd) {
        if (parse_amz_date(xd, &p->t) != 0)
            return fail(out, ZTD_S3E_ACCESS_DENIED,
                        "x-amz-date must be an ISO 8601 basic time like 20130524T000000Z");
        memcpy(out->amz_date, xd, 17);
        return ZTD_S3E_OK;
    }
    if (!d || ztd_http_date_parse(d, &p->t) != 0)
        return fail(out, ZTD_S3E_ACCESS_DENIED,
                    "AWS authentication requires a valid Date or x-amz-date header");
    format_amz_date(p->t, out->amz_date);
    return ZTD_S3E_OK;
}

static ztd_s3err header_form(const ztd_s3_request *req, const ztd_s3_query *q,
                             const ztd_s3_keys *keys, const char *authz, ztd_s3_auth *out)
{
    const ztd_s3err bad = ZTD_S3E_AUTH_HEADER_MALFORMED;
    parts p = {0};
    if (strlen(authz) > ZTD_SIGV4_MAX_AUTHORIZATION)
        return fail(out, bad, "the Authorization header is too long");
    if (strncmp(authz, ALGO, strlen(ALGO)) || !ztd_is_ows(authz[strlen(ALGO)]))
        return fail(out, ZTD_S3E_UNSUPPORTED_AUTH,
                    "the authorization mechanism you have provided is not supported; "
                    "please use AWS4-HMAC-SHA256");
    if (!parse_authorization(authz, &p))
        return fail(out, bad,
                    "the Authorization header must be AWS4-HMAC-SHA256 Credential=..., "
                    "SignedHeaders=..., Signature=...");
    ztd_s3err e = parse_credential(p.cred, out, bad);
    if (e)
        return e;
    if (!signed_list_ok(p.signed_headers) || !in_list(p.signed_headers, "host"))
        return fail(out, bad, "SignedHeaders must be 1 to 64 lowercase names, host among them");
    if (p.sig_len != ZTD_SIGV4_SIG_HEX)
        return fail(out, bad, "the signature must be 64 hexadecimal digits");
    if ((e = header_time(req, &p, out)))
        return e;
    if (memcmp(out->amz_date, out->scope_str, 8))
        return fail(out, bad, "the credential's date is not the request's date");
    size_t np = 0;
    p.payload = ztd_s3_header_get(req, "x-amz-content-sha256", &np);
    if (!p.payload)
        return fail(out, ZTD_S3E_MISSING_SECURITY_HEADER,
                    "missing required header for this request: x-amz-content-sha256");
    if (np > 1 || !parse_payload(p.payload, out))
        return fail(out, ZTD_S3E_INVALID_ARGUMENT,
                    "x-amz-content-sha256 must be UNSIGNED-PAYLOAD, STREAMING-AWS4-HMAC-SHA256-"
                    "PAYLOAD[-TRAILER], STREAMING-UNSIGNED-PAYLOAD-TRAILER or a SHA-256 in hex");
    const char *uns = unsigned_integrity_header(req, p.signed_headers);
    if (uns) {
        snprintf(out->msg, sizeof(out->msg),
                 "there were headers present in the request which were not signed: %.64s", uns);
        return ZTD_S3E_ACCESS_DENIED;
    }
    int64_t skew = req->now - p.t;
    if (skew > ZTD_SIGV4_MAX_SKEW || skew < -ZTD_SIGV4_MAX_SKEW)
        return fail(out, ZTD_S3E_REQUEST_TIME_TOO_SKEWED,
                    "the difference between the request time and the current time is too large");
    return check_signature(req, q, keys, &p, out);
}

/* One required presigned parameter, exactly once, into dst. */
static ztd_s3err qparam(const ztd_s3_query *q, const char *name, char *dst, size_t cap,
                        ztd_s3_auth *out)
{
    size_t c = 0;
    const char *v = ztd_s3_query_get(q, name, &c);
    if (c != 1 || !copy(dst, cap, v, strlen(v))) {
        snprintf(out->msg, sizeof(out->msg), "%s must be given once%s", name,
                 c == 1 ? ", and it is too long" : "");
        return ZTD_S3E_AUTH_QUERY_ERROR;
    }
    return ZTD_S3E_OK;
}

static ztd_s3err query_form(const ztd_s3_request *req, const ztd_s3_query *q,
                            const ztd_s3_keys *keys, ztd_s3_auth *out)
{
    const ztd_s3err bad = ZTD_S3E_AUTH_QUERY_ERROR;
    parts p = {0};
    char algo[32], date[20], exp[16];
    out->presigned = true;
    ztd_s3err e;
    if ((e = qparam(q, "X-Amz-Algorithm", algo, sizeof(algo), out)) ||
        (e = qparam(q, "X-Amz-Credential", p.cred, sizeof(p.cred), out)) ||
        (e = qparam(q, "X-Amz-Date", date, sizeof(date), out)) ||
        (e = qparam(q, "X-Amz-Expires", exp, sizeof(exp), out)) ||
        (e = qparam(q, "X-Amz-SignedHeaders", p.signed_headers, sizeof(p.signed_headers), out)) ||
        (e = qparam(q, "X-Amz-Signature", p.sig, sizeof(p.sig), out)))
        return e;
    p.sig_len = strlen(p.sig);
    if (strcmp(algo, ALGO))
        return fail(out, bad, "X-Amz-Algorithm only supports AWS4-HMAC-SHA256");
    if ((e = parse_credential(p.cred, out, bad)))
        return e;
    if (parse_amz_date(date, &p.t) != 0)
        return fail(out, bad, "X-Amz-Date must be an ISO 8601 basic time like 20130524T000000Z");
    memcpy(out->amz_date, date, 17);
    if (memcmp(out->amz_date, out->scope_str, 8))
        return fail(out, bad, "the credential's date is not X-Amz-Date's");
    size_t el = strlen(exp);
    if (el == 0 || el > 6 || !digits(exp, el) || num(exp, el) > ZTD_SIGV4_MAX_EXPIRES)
        return fail(out, bad, "X-Amz-Expires must be 0 to 604800 seconds");
    if (!signed_list_ok(p.signed_headers) || !in_list(p.signed_headers, "host"))
        return fail(out, bad,
                    "X-Amz-SignedHeaders must be 1 to 64 lowercase names, host among them");
    if (p.sig_len != ZTD_SIGV4_SIG_HEX)
        return fail(out, bad, "X-Amz-Signature must be 64 hexadecimal digits");
    if (p.t - req->now > ZTD_SIGV4_MAX_SKEW)
        return fail(out, ZTD_S3E_EXPIRED, "request is not valid yet");
    if (req->now > p.t + (int64_t)num(exp, el))
        return fail(out, ZTD_S3E_EXPIRED, "request has expired");
    out->payload = ZTD_S3_PAYLOAD_UNSIGNED;
    p.payload = "UNSIGNED-PAYLOAD";
    return check_signature(req, q, keys, &p, out);
}

ztd_s3err ztd_sigv4_verify(const ztd_s3_request *req, const ztd_s3_keys *keys, ztd_s3_auth *out)
{
    memset(out, 0, sizeof(*out));
    if (req->n_headers > ZTD_SIGV4_MAX_HEADERS)
        return fail(out, ZTD_S3E_INVALID_ARGUMENT, "more than 256 request headers");
    ztd_s3_query q;
    ztd_s3err e = ztd_s3_query_parse(req->query, &q, out->msg, sizeof(out->msg));
    if (e) {
        ztd_s3_query_free(&q);
        return e;
    }
    size_t na = 0, nq = 0, nc = 0, ns = 0;
    const char *authz = ztd_s3_header_get(req, "authorization", &na);
    ztd_s3_query_get(&q, "X-Amz-Algorithm", &nq);
    ztd_s3_query_get(&q, "X-Amz-Credential", &nc);
    ztd_s3_query_get(&q, "X-Amz-Signature", &ns);
    bool query = nq + nc + ns > 0;
    if (na > 1)
        e = fail(out, ZTD_S3E_INVALID_ARGUMENT, "more than one Authorization header");
    else if (authz && query)
        e = fail(out, ZTD_S3E_INVALID_ARGUMENT, "only one auth mechanism allowed");
    else if (authz)
        e = header_form(req, &q, keys, authz, out);
    else if (query)
        e = query_form(req, &q, keys, out);
    else
        e = ZTD_S3E_ANONYMOUS;
    ztd_s3_query_free(&q);
    if (e != ZTD_S3E_OK) {
        ztd_sigv4_wipe(out->signing_key, sizeof(out->signing_key));
        out->scope = ZTD_S3_SCOPE_NONE;
        out->seed_signature[0] = '\0';
    } else {
        out->msg[0] = '\0';
    }
    return e;
}

void ztd_s3_auth_clear(ztd_s3_auth *a)
{
    if (a)
        ztd_sigv4_wipe(a, sizeof(*a));
}
