/*
 * test_sigv4.c: server/s3/sigv4.c against AWS's documented SigV4 examples
 * (the S3 API reference's GET Object with Range, PUT Object, GET Bucket
 * lifecycle, list objects and presigned GET, all with the example key
 * AKIAIOSFODNN7EXAMPLE at 20130524T000000Z), then tampering, clock skew,
 * expiry and malformed forms; and the keys file of server/s3/s3_keys.c.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "s3/sigv4.h"

#define AK "AKIAIOSFODNN7EXAMPLE"
#define SECRET "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
#define T0 1369353600 /* 2013-05-24T00:00:00Z */
#define EMPTY "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
#define CRED "Credential=" AK "/20130524/us-east-1/s3/aws4_request"
#define HOST "examplebucket.s3.amazonaws.com"

static ztd_s3_keys *keys(void)
{
    const char *text =
        "# the AWS docs' example key\nwrite " AK " " SECRET "\nread RO" AK " " SECRET "\n";
    char err[256];
    ztd_s3_keys *k = ztd_s3_keys_parse(text, strlen(text), err, sizeof(err));
    assert_non_null(k);
    return k;
}

typedef struct req {
    ztd_s3_header h[16];
    ztd_s3_request r;
} req;

static void add(req *q, const char *name, const char *value)
{
    q->h[q->r.n_headers].name = name;
    q->h[q->r.n_headers].value = value;
    q->r.n_headers++;
}

static void init(req *q, const char *method, const char *path, const char *query)
{
    memset(q, 0, sizeof(*q));
    q->r.method = method;
    q->r.path = path;
    q->r.query = query;
    q->r.headers = q->h;
    q->r.now = T0;
}

static ztd_s3err verify(req *q, ztd_s3_auth *a)
{
    ztd_s3_keys *k = keys();
    ztd_s3err e = ztd_sigv4_verify(&q->r, k, a);
    /* whatever the verdict, no message carries the secret or the signature */
    assert_null(strstr(a->msg, SECRET));
    assert_null(strstr(a->msg, "EXAMPLEKEY"));
    ztd_s3_keys_free(k);
    return e;
}

/* GET /test.txt with Range: bytes=0-9 (Authorization header example). */
static void get_range(req *q, const char *authz)
{
    init(q, "GET", "/test.txt", NULL);
    add(q, "Host", HOST);
    add(q, "Range", "bytes=0-9");
    add(q, "x-amz-content-sha256", EMPTY);
    add(q, "x-amz-date", "20130524T000000Z");
    add(q, "Authorization", authz);
}

#define GET_RANGE_SIG "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41"
#define GET_RANGE_AUTHZ                                                                            \
    "AWS4-HMAC-SHA256 " CRED ",SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,"          \
    "Signature=" GET_RANGE_SIG

static void aws_get_object_range(void **state)
{
    (void)state;
    req q;
    ztd_s3_auth a;
    get_range(&q, GET_RANGE_AUTHZ);
    assert_int_equal(verify(&q, &a), ZTD_S3E_OK);
    assert_int_equal(a.scope, ZTD_S3_SCOPE_WRITE);
    assert_string_equal(a.access_key, AK);
    assert_string_equal(a.region, "us-east-1");
    assert_string_equal(a.scope_str, "20130524/us-east-1/s3/aws4_request");
    assert_string_equal(a.seed_signature, GET_RANGE_SIG);
    assert_int_equal(a.payload, ZTD_S3_PAYLOAD_SHA256);
    assert_false(a.presigned);
    ztd_s3_auth_clear(&a);
    /* spaces after the commas, the path with an escaped unreserved byte: same signature */
    get_range(&q, "AWS4-HMAC-SHA256 " CRED ", SignedHeaders=host;range;x-amz-content-sha256;"
                  "x-amz-date, Signature=" GET_RANGE_SIG);
    q.r.path = "/tes%74.txt";
    assert_int_equal(verify(&q, &a), ZTD_S3E_OK);
    /* the canonical request, as the AWS docs print it */
    ztd_s3_query qq = {0};
    ztd_s3err e;
    char msg[128];
    char *cr = ztd_sigv4_canonical_request(&q.r, &qq, "host;range;x-amz-content-sha256;x-amz-date",
                                           EMPTY, false, &e, msg, sizeof(msg));
    assert_non_null(cr);
    assert_string_equal(cr, "GET\n/test.txt\n\nhost:" HOST "\nrange:bytes=0-9\n"
                            "x-amz-content-sha256:" EMPTY "\nx-amz-date:20130524T000000Z\n\n"
                            "host;range;x-amz-content-sha256;x-amz-date\n" EMPTY);
    free(cr);
}

static void aws_put_object(void **state)
{
    (void)state;
    req q;
    ztd_s3_auth a;
    init(&q, "PUT", "/test%24file.text", NULL);
    add(&q, "Host", HOST);
    add(&q, "Date", "Fri, 24 May 2013 00:00:00 GMT");
    add(&q, "x-amz-date", "20130524T000000Z");
    add(&q, "x-amz-storage-class", "REDUCED_REDUNDANCY");
    add(&q, "x-amz-content-sha256",
        "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072");
    add(&q, "Authorization",
        "AWS4-HMAC-SHA256 " CRED ",SignedHeaders=date;host;x-amz-content-sha256;x-amz-date;"
        "x-amz-storage-class,Signature="
        "98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd");
    assert_int_equal(verify(&q, &a), ZTD_S3E_OK);
    assert_int_equal(a.payload, ZTD_S3_PAYLOAD_SHA256);
    assert_int_equal(a.payload_sha256[0], 0x44);
    assert_int_equal(a.payload_sha256[31], 0x72);
    /* '$' sent raw is the same path */
    q.r.path = "/test$file.text";
    assert_int_equal(verify(&q, &a), ZTD_S3E_OK);
    q.r.path = "/test%24file.texT";
    assert_int_equal(verify(&q, &a), ZTD_S3E_SIGNATURE_DOES_NOT_MATCH);
}

static void bucket_get(req *q, const char *query, const char *sig)
{
    static char authz[400];
    snprintf(authz, sizeof(authz),
             "AWS4-HMAC-SHA256 " CRED ",SignedHeaders=host;x-amz-content-sha256;x-amz-date,"
             "Signature=%s",
             sig);
    init(q, "GET", "/", query);
    add(q, "Host", HOST);
    add(q, "x-amz-content-sha256", EMPTY);
    add(q, "x-amz-date", "20130524T000000Z");
    add(q, "Authorization", authz);
}

static void aws_bucket_queries(void **state)
{
    (void)state;
    req q;
    ztd_s3_auth a;
    const char *lc = "fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543";
    const char *ls = "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7";
    bucket_get(&q, "lifecycle", lc);
    assert_int_equal(verify(&q, &a), ZTD_S3E_OK);
    bucket_get(&q, "lifecycle=", lc);
    assert_int_equal(verify(&q, &a), ZTD_S3E_OK);
    bucket_get(&q, "max-keys=2&prefix=J", ls);
    assert_int_equal(verify(&q, &a), ZTD_S3E_OK);
    bucket_get(&q, "prefix=J&max-keys=2", ls); /* any order: the canonical form sorts */
    assert_int_equal(verify(&q, &a), ZTD_S3E_OK);
    bucket_get(&q, "prefix=%4A&max-keys=2", ls); /* %4A is J */
    assert_int_equal(verify(&q, &a), ZTD_S3E_OK);
    bucket_get(&q, "prefix=K&max-keys=2", ls);
    assert_int_equal(verify(&q, &a), ZTD_S3E_SIGNATURE_DOES_NOT_MATCH);
    bucket_get(&q, "prefix=J&max-keys=2&x", ls);
    assert_int_equal(verify(&q, &a), ZTD_S3E_SIGNATURE_DOES_NOT_MATCH);
    bucket_get(&q, "prefix=%4&max-keys=2", ls);
    assert_int_equal(verify(&q, &a), ZTD_S3E_INVALID_URI);
}

#define PRESIGN_Q                                                                                  \
    "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=" AK                                        \
    "%2F20130524%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400"  \
    "&X-Amz-SignedHeaders=host&X-Amz-Signature="                                                   \
    "aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404"

static void presigned(req *q, const char *query, int64_t now)
{
    init(q, "GET", "/test.txt", query);
    add(q, "Host", HOST);
    q->r.now = now;
}

static void aws_presigned_get(void **state)
{
    (void)state;
    req q;
    ztd_s3_auth a;
    presigned(&q, PRESIGN_Q, T0 + 3600);
    assert_int_equal(verify(&q, &a), ZTD_S3E_OK);
    assert_true(a.presigned);
    assert_int_equal(a.payload, ZTD_S3_PAYLOAD_UNSIGNED);
    presigned(&q, PRESIGN_Q, T0 + 86400);
    assert_int_equal(verify(&q, &a), ZTD_S3E_OK);
    presigned(&q, PRESIGN_Q, T0 + 86401);
    assert_int_equal(verify(&q, &a), ZTD_S3E_EXPIRED);
    assert_string_equal(ztd_s3err_code(ZTD_S3E_EXPIRED), "AccessDenied");
    presigned(&q, PRESIGN_Q, T0 - 901);
    assert_int_equal(verify(&q, &a), ZTD_S3E_EXPIRED);
    presigned(&q, PRESIGN_Q "&extra=1", T0);
    assert_int_equal(verify(&q, &a), ZTD_S3E_SIGNATURE_DOES_NOT_MATCH);
    /* X-Amz-Expires beyond a week, given twice, missing */
    char bad[600];
    snprintf(bad, sizeof(bad), "%s", PRESIGN_Q);
    memcpy(strstr(bad, "86400"), "99999", 5);
    presigned(&q, bad, T0);
    assert_int_equal(verify(&q, &a), ZTD_S3E_SIGNATURE_DOES_NOT_MATCH);
    char *e = strstr(bad, "99999");
    memmove(e + 1, e, strlen(e) + 1);
    memcpy(e, "604801", 6);
    presigned(&q, bad, T0);
    assert_int_equal(verify(&q, &a), ZTD_S3E_AUTH_QUERY_ERROR);
    presigned(&q, PRESIGN_Q "&X-Amz-Expires=1", T0);
    assert_int_equal(verify(&q, &a), ZTD_S3E_AUTH_QUERY_ERROR);
    presigned(&q, "X-Amz-Algorithm=AWS4-HMAC-SHA256", T0);
    assert_int_equal(verify(&q, &a), ZTD_S3E_AUTH_QUERY_ERROR);
    /* both forms at once */
    presigned(&q, PRESIGN_Q, T0);
    add(&q, "Authorization", GET_RANGE_AUTHZ);
    assert_int_equal(verify(&q, &a), ZTD_S3E_INVALID_ARGUMENT);
}

/* Every single flipped character of the signature, and of every signed input, is refused. */
static void flipped_bytes(void **state)
{
    (void)state;
    req q;
    ztd_s3_auth a;
    char authz[] = GET_RANGE_AUTHZ;
    char *sig = strstr(authz, "Signature=") + 10;
    for (size_t i = 0; i < 64; i++) {
        char was = sig[i];
        sig[i] = was == '0' ? '1' : '0';
        get_range(&q, authz);
        assert_int_equal(verify(&q, &a), ZTD_S3E_SIGNATURE_DOES_NOT_MATCH);
        sig[i] = was;
    }
    get_range(&q, authz);
    assert_int_equal(verify(&q, &a), ZTD_S3E_OK);
    get_range(&q, authz);
    q.h[1].value = "bytes=0-8";
    assert_int_equal(verify(&q, &a), ZTD_S3E_SIGNATURE_DOES_NOT_MATCH);
    get_range(&q, authz);
    q.h[0].value = "examplebucket.s3.amazonaws.co";
    assert_int_equal(verify(&q, &a), ZTD_S3E_SIGNATURE_DOES_NOT_MATCH);
    get_range(&q, authz);
    q.r.method = "PUT";
    assert_int_equal(verify(&q, &a), ZTD_S3E_SIGNATURE_DOES_NOT_MATCH);
    get_range(&q, authz);
    q.r.path = "/test.txT";
    assert_int_equal(verify(&q, &a), ZTD_S3E_SIGNATURE_DOES_NOT_MATCH);
    get_range(&q, authz);
    q.r.query = "a=b";
    assert_int_equal(verify(&q, &a), ZTD_S3E_SIGNATURE_DOES_NOT_MATCH);
    /* a header value's spaces are trimmed and collapsed before signing */
    get_range(&q, authz);
    q.h[1].value = "  bytes=0-9 ";
    assert_int_equal(verify(&q, &a), ZTD_S3E_OK);
    get_range(&q, authz);
    add(&q, "range", "bytes=0-9"); /* a repeat joins with ',' */
    assert_int_equal(verify(&q, &a), ZTD_S3E_SIGNATURE_DOES_NOT_MATCH);
    /* a signed header that is absent */
    get_range(&q, authz);
    q.h[1].name = "X-Range";
    assert_int_equal(verify(&q, &a), ZTD_S3E_SIGNATURE_DOES_NOT_MATCH);
    assert_non_null(strstr(a.msg, "range"));
}

static void clock_skew(void **state)
{
    (void)state;
    req q;
    ztd_s3_auth a;
    int64_t ok[] = {T0 - 900, T0 + 900}, bad[] = {T0 - 901, T0 + 901, 0, T0 + 86400 * 365};
    for (size_t i = 0; i < 2; i++) {
        get_range(&q, GET_RANGE_AUTHZ);
        q.r.now = ok[i];
        assert_int_equal(verify(&q, &a), ZTD_S3E_OK);
    }
    for (size_t i = 0; i < 4; i++) {
        get_range(&q, GET_RANGE_AUTHZ);
        q.r.now = bad[i];
        assert_int_equal(verify(&q, &a), ZTD_S3E_REQUEST_TIME_TOO_SKEWED);
        assert_int_equal(ztd_s3err_status(ZTD_S3E_REQUEST_TIME_TOO_SKEWED), 403);
    }
}

static void malformed(void **state)
{
    (void)state;
    static const struct {
        const char *authz;
        ztd_s3err want;
    } cases[] = {
        {"AWS " AK ":frJIUN8DYpKDtOLCwo//yllqDzg=", ZTD_S3E_UNSUPPORTED_AUTH},
        {"Bearer 0123456789abcdef", ZTD_S3E_UNSUPPORTED_AUTH},
        {"AWS4-HMAC-SHA256", ZTD_S3E_UNSUPPORTED_AUTH},
        {"AWS4-HMAC-SHA256 ", ZTD_S3E_AUTH_HEADER_MALFORMED},
        {"AWS4-HMAC-SHA256 " CRED ",SignedHeaders=host;range", ZTD_S3E_AUTH_HEADER_MALFORMED},
        {"AWS4-HMAC-SHA256 " CRED "," CRED ",Signature=" GET_RANGE_SIG,
         ZTD_S3E_AUTH_HEADER_MALFORMED},
        {"AWS4-HMAC-SHA256 Credential=" AK
         "/20130524/us-east-1/s3,SignedHeaders=host,Signature=" GET_RANGE_SIG,
         ZTD_S3E_AUTH_HEADER_MALFORMED},
        {"AWS4-HMAC-SHA256 Credential=" AK "/20130524/us-east-1/ec2/aws4_request,SignedHeaders="
         "host,Signature=" GET_RANGE_SIG,
         ZTD_S3E_AUTH_HEADER_MALFORMED},
        {"AWS4-HMAC-SHA256 Credential=" AK "/20130525/us-east-1/s3/aws4_request,SignedHeaders="
         "host,Signature=" GET_RANGE_SIG,
         ZTD_S3E_AUTH_HEADER_MALFORMED},
        {"AWS4-HMAC-SHA256 " CRED ",SignedHeaders=range,Signature=" GET_RANGE_SIG,
         ZTD_S3E_AUTH_HEADER_MALFORMED}, /* host not signed */
        {"AWS4-HMAC-SHA256 " CRED ",SignedHeaders=host;;range,Signature=" GET_RANGE_SIG,
         ZTD_S3E_AUTH_HEADER_MALFORMED},
        {"AWS4-HMAC-SHA256 " CRED ",SignedHeaders=host;Range,Signature=" GET_RANGE_SIG,
         ZTD_S3E_AUTH_HEADER_MALFORMED},
        {"AWS4-HMAC-SHA256 " CRED ",SignedHeaders=host;host,Signature=" GET_RANGE_SIG,
         ZTD_S3E_AUTH_HEADER_MALFORMED},
        {"AWS4-HMAC-SHA256 " CRED ",SignedHeaders=host,Signature=f0e8",
         ZTD_S3E_AUTH_HEADER_MALFORMED},
        {"AWS4-HMAC-SHA256 " CRED ",SignedHeaders=host,Signature=" GET_RANGE_SIG ",",
         ZTD_S3E_AUTH_HEADER_MALFORMED},
        {"AWS4-HMAC-SHA256 Credential=NOSUCHKEY/20130524/us-east-1/s3/aws4_request,SignedHeaders="
         "host;range;x-amz-content-sha256;x-amz-date,Signature=" GET_RANGE_SIG,
         ZTD_S3E_INVALID_ACCESS_KEY_ID},
        {"AWS4-HMAC-SHA256 Credential=" AK "/20130524/eu-west-3/s3/aws4_request,SignedHeaders="
         "host;range;x-amz-content-sha256;x-amz-date,Signature=" GET_RANGE_SIG,
         ZTD_S3E_SIGNATURE_DOES_NOT_MATCH}, /* another region: another key */
    };
    req q;
    ztd_s3_auth a;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        get_range(&q, cases[i].authz);
        ztd_s3err got = verify(&q, &a);
        if (got != cases[i].want)
            fail_msg("case %zu: got %s, want %s (%s)", i, ztd_s3err_name(got),
                     ztd_s3err_name(cases[i].want), a.msg);
        assert_string_not_equal(a.msg, "");
    }
    /* no credentials at all */
    init(&q, "GET", "/test.txt", "list-type=2");
    add(&q, "Host", HOST);
    assert_int_equal(verify(&q, &a), ZTD_S3E_ANONYMOUS);
    /* header form without x-amz-content-sha256, or with a value that is none of the forms */
    get_range(&q, GET_RANGE_AUTHZ);
    q.h[2].name = "x-amz-meta-x";
    assert_int_equal(verify(&q, &a), ZTD_S3E_MISSING_SECURITY_HEADER);
    get_range(&q, GET_RANGE_AUTHZ);
    q.h[2].value = "STREAMING-AWS4-ECDSA-P256-SHA256-PAYLOAD";
    assert_int_equal(verify(&q, &a), ZTD_S3E_INVALID_ARGUMENT);
    /* an unsigned checksum header cannot ride along */
    get_range(&q, GET_RANGE_AUTHZ);
    add(&q, "x-amz-checksum-crc32", "AAAAAA==");
    assert_int_equal(verify(&q, &a), ZTD_S3E_ACCESS_DENIED);
    /* no usable date */
    get_range(&q, GET_RANGE_AUTHZ);
    q.h[3].value = "2013-05-24T00:00:00Z";
    assert_int_equal(verify(&q, &a), ZTD_S3E_ACCESS_DENIED);
    get_range(&q, GET_RANGE_AUTHZ);
    add(&q, "Authorization", GET_RANGE_AUTHZ);
    assert_int_equal(verify(&q, &a), ZTD_S3E_INVALID_ARGUMENT);
}

static void read_scope(void **state)
{
    (void)state;
    req q;
    ztd_s3_auth a;
    /* the key id is not part of what is signed: the "read" key RO... with the same secret signs
     * the same request identically, and its scope comes back */
    get_range(&q,
              "AWS4-HMAC-SHA256 Credential=RO" AK "/20130524/us-east-1/s3/aws4_request,"
              "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,Signature=" GET_RANGE_SIG);
    assert_int_equal(verify(&q, &a), ZTD_S3E_OK);
    assert_int_equal(a.scope, ZTD_S3_SCOPE_READ);
    assert_string_equal(a.access_key, "RO" AK);
}

static ztd_s3_keys *parse(const char *text, char *err)
{
    err[0] = '\0';
    return ztd_s3_keys_parse(text, strlen(text), err, 256);
}

static void keys_file(void **state)
{
    (void)state;
    char err[256];
    ztd_s3_keys *k = parse("\n# c\n  write AK1 secret12 \r\nread AK2\tsecret34\n", err);
    assert_non_null(k);
    assert_int_equal(ztd_s3_keys_count(k), 2);
    uint8_t key[32];
    ztd_s3_scope sc;
    assert_true(ztd_s3_keys_signing_key(k, "AK2", "20130524", "us-east-1", key, &sc));
    assert_int_equal(sc, ZTD_S3_SCOPE_READ);
    assert_false(ztd_s3_keys_signing_key(k, "AK3", "20130524", "us-east-1", key, &sc));
    assert_int_equal(sc, ZTD_S3_SCOPE_NONE);
    ztd_s3_keys_free(k);
    static const struct {
        const char *text, *want;
    } bad[] = {
        {"admin AK1 secret12\n", "line 1: scope"},
        {"\nwrite AK1\n", "line 2: want"},
        {"write AK1 secret12 extra\n", "line 1: want"},
        {"write A secret12\n", "line 1: an access key id must be 3"},
        {"write AK/1 secret12\n", "line 1: an access key id may only"},
        {"write AK1 short\n", "line 1: a secret access key must be 8"},
        {"write AK1 secr\x01t12\n", "line 1: a secret access key must be printable"},
        {"write AK1 secret12\nread AK1 secret34\n", "line 2: this access key id was given"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_null(parse(bad[i].text, err));
        if (strncmp(err, bad[i].want, strlen(bad[i].want)))
            fail_msg("case %zu: %s", i, err);
        assert_null(strstr(err, "secret1"));
        assert_null(strstr(err, "secret3"));
        assert_null(strstr(err, "secr\x01"));
    }
}

/* The table grows through several doublings and keeps every key; the
 * 4097th is refused on its own line. */
static void keys_file_many(void **state)
{
    (void)state;
    size_t cap = (ZTD_S3_KEYS_MAX + 1) * 32;
    char *text = malloc(cap), err[256];
    assert_non_null(text);
    size_t o = 0;
    for (int i = 0; i < ZTD_S3_KEYS_MAX; i++)
        o += (size_t)snprintf(text + o, cap - o, "%s AK%05d secret%05d\n", i % 2 ? "read" : "write",
                              i, i);
    ztd_s3_keys *k = parse(text, err);
    assert_non_null(k);
    assert_int_equal(ztd_s3_keys_count(k), ZTD_S3_KEYS_MAX);
    uint8_t got[32], want[32];
    ztd_s3_scope sc;
    for (int i = 0; i < ZTD_S3_KEYS_MAX; i += 97) {
        char id[16], secret[16];
        snprintf(id, sizeof(id), "AK%05d", i);
        snprintf(secret, sizeof(secret), "secret%05d", i);
        assert_true(ztd_s3_keys_signing_key(k, id, "20130524", "us-east-1", got, &sc));
        assert_int_equal(sc, i % 2 ? ZTD_S3_SCOPE_READ : ZTD_S3_SCOPE_WRITE);
        ztd_sigv4_signing_key(secret, strlen(secret), "20130524", "us-east-1", want);
        assert_memory_equal(got, want, 32);
    }
    ztd_s3_keys_free(k);
    snprintf(text + o, cap - o, "read AK99999 secret99999\n");
    assert_null(parse(text, err));
    assert_string_equal(err, "line 4097: more than 4096 keys");
    free(text);
}

static void keys_file_mode(void **state)
{
    (void)state;
    const char *tmp = getenv("ZT_TEST_TMP") ? getenv("ZT_TEST_TMP") : "/tmp";
    char path[512], err[512];
    snprintf(path, sizeof(path), "%s/s3keys-%d", tmp, (int)getpid());
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("write AK1 secret12\n", f);
    fclose(f);
    assert_int_equal(chmod(path, 0644), 0);
    ztd_s3_keys *k = ztd_s3_keys_load(path, err, sizeof(err));
    assert_null(k);
    assert_non_null(strstr(err, "mode 0644"));
    assert_non_null(strstr(err, path));
    assert_int_equal(chmod(path, 0640), 0);
    assert_null(ztd_s3_keys_load(path, err, sizeof(err)));
    assert_int_equal(chmod(path, 0600), 0);
    k = ztd_s3_keys_load(path, err, sizeof(err));
    assert_non_null(k);
    assert_int_equal(ztd_s3_keys_count(k), 1);
    ztd_s3_keys_free(k);
    unlink(path);
    assert_null(ztd_s3_keys_load(path, err, sizeof(err)));
    assert_non_null(strstr(err, "No such file"));
    assert_null(ztd_s3_keys_load(tmp, err, sizeof(err)));
    assert_non_null(strstr(err, "not a regular file"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(aws_get_object_range),
        cmocka_unit_test(aws_put_object),
        cmocka_unit_test(aws_bucket_queries),
        cmocka_unit_test(aws_presigned_get),
        cmocka_unit_test(flipped_bytes),
        cmocka_unit_test(clock_skew),
        cmocka_unit_test(malformed),
        cmocka_unit_test(read_scope),
        cmocka_unit_test(keys_file),
        cmocka_unit_test(keys_file_many),
        cmocka_unit_test(keys_file_mode),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
