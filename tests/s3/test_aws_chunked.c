/*
 * test_aws_chunked.c: server/s3/aws_chunked.c, checksum.c and body_check.c.
 * The AWS docs' signed chunked upload (PUT /examplebucket/chunkObject.txt,
 * 65536 + 1024 bytes of 'a', seed 4f232c43..., chunk signatures ad80c730...,
 * 0055627c..., b6c6ea8a...) is verified end to end through sigv4.c and the
 * decoder, pushed in pieces of every size; then tampering, truncation, the
 * unsigned trailer form boto3 sends, and the CRC check values of "123456789".
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
#include <zlib.h>

#include "s3/aws_chunked.h"
#include "s3/body_check.h"
#include "s3/sigv4.h"
#include "core/hex.h"

#define AK "AKIAIOSFODNN7EXAMPLE"
#define SECRET "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
#define T0 1369353600
#define SEED "4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9"
#define SIG1 "ad80c730a21e5b8d04586a2213dd63b9a0e99e0e2307b0ade35a65485a288648"
#define SIG2 "0055627c9e194cb4542bae2aa5492e3c1575bbb81b612b7d234b86a503ef5497"
#define SIG3 "b6c6ea8a5354eaf15b3cb7646744f4275b71ea724fed81ceb9323e279d449df9"

typedef struct sink {
    uint8_t *p;
    size_t n, cap;
} sink;

static int collect(void *ctx, const uint8_t *p, size_t n)
{
    sink *s = ctx;
    if (s->n + n > s->cap)
        return -1;
    memcpy(s->p + s->n, p, n);
    s->n += n;
    return 0;
}

/* The doc's body: 10000;chunk-signature=SIG1 ... 400;... 0;... */
static size_t doc_body(uint8_t *b)
{
    size_t n = 0;
    n += (size_t)sprintf((char *)b + n, "10000;chunk-signature=" SIG1 "\r\n");
    memset(b + n, 'a', 65536);
    n += 65536;
    n += (size_t)sprintf((char *)b + n, "\r\n400;chunk-signature=" SIG2 "\r\n");
    memset(b + n, 'a', 1024);
    n += 1024;
    n += (size_t)sprintf((char *)b + n, "\r\n0;chunk-signature=" SIG3 "\r\n\r\n");
    return n;
}

/* The seed request of the doc's example, verified: fills a. */
static void doc_seed(ztd_s3_auth *a)
{
    const char *text = "write " AK " " SECRET "\n";
    char err[128];
    ztd_s3_keys *k = ztd_s3_keys_parse(text, strlen(text), err, sizeof(err));
    ztd_s3_header h[] = {
        {"Host", "s3.amazonaws.com"},
        {"x-amz-date", "20130524T000000Z"},
        {"x-amz-storage-class", "REDUCED_REDUNDANCY"},
        {"x-amz-content-sha256", "STREAMING-AWS4-HMAC-SHA256-PAYLOAD"},
        {"Content-Encoding", "aws-chunked"},
        {"x-amz-decoded-content-length", "66560"},
        {"Content-Length", "66824"},
        {"Authorization",
         "AWS4-HMAC-SHA256 Credential=" AK "/20130524/us-east-1/s3/aws4_request,SignedHeaders="
         "content-encoding;content-length;host;x-amz-content-sha256;x-amz-date;"
         "x-amz-decoded-content-length;x-amz-storage-class,Signature=" SEED},
    };
    ztd_s3_request r = {"PUT", "/examplebucket/chunkObject.txt", NULL, h, 8, T0};
    assert_int_equal(ztd_sigv4_verify(&r, k, a), ZTD_S3E_OK);
    assert_int_equal(a->payload, ZTD_S3_PAYLOAD_STREAMING);
    assert_string_equal(a->seed_signature, SEED);
    ztd_s3_keys_free(k);
}

static ztd_awsc *signed_decoder(const ztd_s3_auth *a, sink *s, int64_t declared)
{
    ztd_awsc_config c = {ZTD_AWSC_SIGNED,
                         a->signing_key,
                         a->amz_date,
                         a->scope_str,
                         a->seed_signature,
                         declared,
                         NULL,
                         collect,
                         s};
    ztd_s3err e;
    ztd_awsc *d = ztd_awsc_new(&c, &e);
    assert_non_null(d);
    return d;
}

/* Push body in pieces of step bytes; the verdict of finish (or of the first failing push). */
static ztd_s3err run(ztd_awsc *d, const uint8_t *b, size_t n, size_t step)
{
    for (size_t i = 0; i < n; i += step) {
        ztd_s3err e = ztd_awsc_push(d, b + i, n - i < step ? n - i : step);
        if (e)
            return e;
    }
    return ztd_awsc_finish(d);
}

static void aws_chunked_example(void **state)
{
    (void)state;
    static uint8_t body[70000], out[70000];
    size_t n = doc_body(body);
    assert_int_equal(n, 66824); /* the doc's Content-Length */
    ztd_s3_auth a;
    doc_seed(&a);
    size_t steps[] = {1, 2, 3, 7, 64, 4096, 65536, 100000};
    for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
        sink s = {out, 0, sizeof(out)};
        ztd_awsc *d = signed_decoder(&a, &s, 66560);
        assert_int_equal(run(d, body, n, steps[i]), ZTD_S3E_OK);
        assert_int_equal(s.n, 66560);
        assert_int_equal(ztd_awsc_decoded(d), 66560);
        for (size_t j = 0; j < s.n; j++)
            assert_int_equal(out[j], 'a');
        ztd_awsc_free(d);
    }
    /* a flipped data byte, a flipped signature digit, chunks in the wrong order */
    size_t where[] = {100, 90 + 65536 + 2 + 50, 30, 90 + 65536 + 2 + 25};
    for (size_t i = 0; i < 4; i++) {
        sink s = {out, 0, sizeof(out)};
        body[where[i]] ^= 1;
        ztd_awsc *d = signed_decoder(&a, &s, 66560);
        assert_int_equal(run(d, body, n, 4096), ZTD_S3E_SIGNATURE_DOES_NOT_MATCH);
        assert_non_null(strstr(ztd_awsc_message(d), "byte "));
        ztd_awsc_free(d);
        body[where[i]] ^= 1;
    }
    /* truncated anywhere: INCOMPLETE_BODY */
    size_t cuts[] = {0, 10, 90, 5000, 65626, n - 2, n - 1};
    for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
        sink s = {out, 0, sizeof(out)};
        ztd_awsc *d = signed_decoder(&a, &s, 66560);
        assert_int_equal(run(d, body, cuts[i], 4096), ZTD_S3E_INCOMPLETE_BODY);
        ztd_awsc_free(d);
    }
    /* a declared length that disagrees; bytes after the end */
    sink s = {out, 0, sizeof(out)};
    ztd_awsc *d = signed_decoder(&a, &s, 66559);
    assert_int_equal(run(d, body, n, 4096), ZTD_S3E_INVALID_CHUNK_SIZE);
    ztd_awsc_free(d);
    s.n = 0;
    d = signed_decoder(&a, &s, 70000);
    assert_int_equal(run(d, body, n, 4096), ZTD_S3E_INCOMPLETE_BODY);
    ztd_awsc_free(d);
    s.n = 0;
    d = signed_decoder(&a, &s, -1);
    assert_int_equal(ztd_awsc_push(d, body, n), ZTD_S3E_OK);
    assert_int_equal(ztd_awsc_push(d, (const uint8_t *)"x", 1), ZTD_S3E_MALFORMED_CHUNK);
    assert_int_equal(ztd_awsc_finish(d), ZTD_S3E_MALFORMED_CHUNK);
    ztd_awsc_free(d);
    ztd_s3_auth_clear(&a);
}

/* The AWS docs' signed upload with trailers (sigv4-streaming-trailers): the same 65536 + 1024
 * bytes of 'a', seed 106e2a8a..., a CRC32C trailer sOO8/Q== and its trailer signature. */
#define TSEED "106e2a8a18243abcf37539882f36619c00e2dfc72633413f02d3b74544bfeb8e"
#define TSIG1 "b474d8862b1487a5145d686f57f013e54db672cee1c953b3010fb58501ef5aa2"
#define TSIG2 "1c1344b170168f8e65b41376b44b20fe354e373826ccbbe2c1d40a8cae51e5c7"
#define TSIG3 "2ca2aba2005185cf7159c6277faf83795951dd77a3a99e6e65d5c9f85863f992"
#define TTRAILER "d81f82fc3505edab99d459891051a732e8730629a2e4a59689829ca17fe2e435"

static size_t doc_trailer_body(uint8_t *b, const char *crc, const char *tsig)
{
    size_t n = 0;
    n += (size_t)sprintf((char *)b + n, "10000;chunk-signature=" TSIG1 "\r\n");
    memset(b + n, 'a', 65536);
    n += 65536;
    n += (size_t)sprintf((char *)b + n, "\r\n400;chunk-signature=" TSIG2 "\r\n");
    memset(b + n, 'a', 1024);
    n += 1024;
    n += (size_t)sprintf((char *)b + n,
                         "\r\n0;chunk-signature=" TSIG3 "\r\nx-amz-checksum-crc32c:%s\r\n"
                         "x-amz-trailer-signature:%s\r\n\r\n",
                         crc, tsig);
    return n;
}

static void aws_chunked_trailer_example(void **state)
{
    (void)state;
    const char *text = "write " AK " " SECRET "\n";
    char err[128];
    ztd_s3_keys *k = ztd_s3_keys_parse(text, strlen(text), err, sizeof(err));
    ztd_s3_header h[] = {
        {"Host", "s3.amazonaws.com"},
        {"x-amz-date", "20130524T000000Z"},
        {"x-amz-storage-class", "REDUCED_REDUNDANCY"},
        {"x-amz-content-sha256", "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER"},
        {"Content-Encoding", "aws-chunked"},
        {"x-amz-decoded-content-length", "66560"},
        {"x-amz-trailer", "x-amz-checksum-crc32c"},
        {"Authorization",
         "AWS4-HMAC-SHA256 Credential=" AK "/20130524/us-east-1/s3/aws4_request,SignedHeaders="
         "content-encoding;host;x-amz-content-sha256;x-amz-date;x-amz-decoded-content-length;"
         "x-amz-storage-class;x-amz-trailer,Signature=" TSEED},
    };
    ztd_s3_request r = {"PUT", "/examplebucket/chunkObject.txt", NULL, h, 8, T0};
    ztd_s3_auth a;
    assert_int_equal(ztd_sigv4_verify(&r, k, &a), ZTD_S3E_OK);
    assert_int_equal(a.payload, ZTD_S3_PAYLOAD_STREAMING_TRAILER);
    ztd_s3_keys_free(k);
    static uint8_t body[70000], out[70000];
    struct {
        const char *crc, *tsig;
        ztd_s3err want;
    } cases[] = {
        {"sOO8/Q==", TTRAILER, ZTD_S3E_OK},
        {"sOO8/A==", TTRAILER, ZTD_S3E_SIGNATURE_DOES_NOT_MATCH}, /* the trailer is signed */
        {"sOO8/Q==", TSIG3, ZTD_S3E_SIGNATURE_DOES_NOT_MATCH},
    };
    for (size_t i = 0; i < 3; i++) {
        size_t n = doc_trailer_body(body, cases[i].crc, cases[i].tsig);
        sink s = {out, 0, sizeof(out)};
        ztd_awsc_config c = {ZTD_AWSC_SIGNED_TRAILER,
                             a.signing_key,
                             a.amz_date,
                             a.scope_str,
                             a.seed_signature,
                             66560,
                             "x-amz-checksum-crc32c",
                             collect,
                             &s};
        ztd_s3err e;
        ztd_awsc *d = ztd_awsc_new(&c, &e);
        assert_non_null(d);
        ztd_s3err got = run(d, body, n, 1000);
        if (got != cases[i].want)
            fail_msg("case %zu: got %s (%s)", i, ztd_s3err_name(got), ztd_awsc_message(d));
        if (got == ZTD_S3E_OK) {
            const char *b64;
            assert_int_equal(ztd_awsc_checksum(d, &b64), ZTD_S3_CK_CRC32C);
            assert_string_equal(b64, "sOO8/Q==");
            assert_int_equal(s.n, 66560);
        }
        ztd_awsc_free(d);
    }
    ztd_s3_auth_clear(&a);
}

/* boto3's default: HEX\r\n DATA\r\n ... 0\r\n x-amz-checksum-crc32:B64\r\n \r\n */
static size_t unsigned_body(uint8_t *b, const char *data, const char *trailer)
{
    size_t n = strlen(data), h = n / 2;
    return (size_t)sprintf((char *)b, "%zx\r\n%.*s\r\n%zx\r\n%s\r\n0\r\n%s\r\n\r\n", h, (int)h,
                           data, n - h, data + h, trailer);
}

static ztd_s3err unsigned_run(const uint8_t *b, size_t n, const char *declared, sink *s)
{
    ztd_awsc_config c = {
        ZTD_AWSC_UNSIGNED_TRAILER, NULL, NULL, NULL, NULL, -1, declared, collect, s};
    ztd_s3err e;
    ztd_awsc *d = ztd_awsc_new(&c, &e);
    assert_non_null(d);
    e = run(d, b, n, 3);
    if (e == ZTD_S3E_OK) {
        const char *b64;
        assert_int_not_equal(ztd_awsc_checksum(d, &b64), ZTD_S3_CK_NONE);
        assert_string_not_equal(b64, "");
    }
    ztd_awsc_free(d);
    return e;
}

static void unsigned_trailer(void **state)
{
    (void)state;
    uint8_t body[512], out[512];
    const char *data = "123456789";
    /* crc32("123456789") = cbf43926 -> y/Q5Jg== ; crc32c e3069283 -> 4waSgw== */
    struct {
        const char *declared, *trailer;
        ztd_s3err want;
    } cases[] = {
        {"x-amz-checksum-crc32", "x-amz-checksum-crc32:y/Q5Jg==", ZTD_S3E_OK},
        {"x-amz-checksum-crc32c", "x-amz-checksum-crc32c:4waSgw==", ZTD_S3E_OK},
        {"x-amz-checksum-crc64nvme", "x-amz-checksum-crc64nvme:rosUhgp5mIg=", ZTD_S3E_OK},
        {"x-amz-checksum-crc32", "x-amz-checksum-crc32:y/Q5Jw==", ZTD_S3E_BAD_DIGEST},
        {"x-amz-checksum-crc32", "x-amz-checksum-crc32:y/Q5", ZTD_S3E_INVALID_DIGEST},
        {"x-amz-checksum-crc32", "x-amz-checksum-crc32c:4waSgw==", ZTD_S3E_MALFORMED_TRAILER},
        {NULL, "x-amz-checksum-crc32:y/Q5Jg==", ZTD_S3E_MALFORMED_TRAILER},
        {"x-amz-checksum-crc32", "x-amz-meta-a:b", ZTD_S3E_MALFORMED_TRAILER},
        {"x-amz-checksum-crc32", "no colon", ZTD_S3E_MALFORMED_TRAILER},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        sink s = {out, 0, sizeof(out)};
        size_t n = unsigned_body(body, data, cases[i].trailer);
        ztd_s3err got = unsigned_run(body, n, cases[i].declared, &s);
        if (got != cases[i].want)
            fail_msg("case %zu: got %s want %s", i, ztd_s3err_name(got),
                     ztd_s3err_name(cases[i].want));
        if (got == ZTD_S3E_OK)
            assert_memory_equal(out, data, 9);
    }
    /* framing errors */
    const char *bad[] = {"9;chunk-signature=00\r\n123456789\r\n0\r\n\r\n",
                         "9\n123456789\r\n0\r\n\r\n", "9\r\n123456789XX0\r\n\r\n", "zz\r\n",
                         "00000000000000001\r\n"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        sink s = {out, 0, sizeof(out)};
        ztd_s3err got = unsigned_run((const uint8_t *)bad[i], strlen(bad[i]), NULL, &s);
        assert_true(got == ZTD_S3E_MALFORMED_CHUNK || got == ZTD_S3E_INVALID_CHUNK_SIZE);
    }
    /* a chunk header line past 256 bytes */
    char longl[400];
    memset(longl, '0', sizeof(longl));
    sink s = {out, 0, sizeof(out)};
    assert_int_equal(unsigned_run((const uint8_t *)longl, sizeof(longl), NULL, &s),
                     ZTD_S3E_MALFORMED_CHUNK);
}

static void crc_check_values(void **state)
{
    (void)state;
    const char *v = "123456789";
    assert_int_equal(ztd_crc32c(0, v, 9), 0xe3069283u);
    assert_true(ztd_crc64nvme(0, v, 9) == 0xae8b14860a799888ull);
    assert_int_equal(crc32(0, (const Bytef *)v, 9), 0xcbf43926u);
    /* chained in pieces */
    assert_int_equal(ztd_crc32c(ztd_crc32c(0, v, 4), v + 4, 5), 0xe3069283u);
    assert_true(ztd_crc64nvme(ztd_crc64nvme(0, v, 1), v + 1, 8) == 0xae8b14860a799888ull);
    uint8_t d[32];
    ztd_s3_ck c;
    assert_int_equal(ztd_s3_ck_init(&c, ZTD_S3_CK_CRC64NVME), 0);
    ztd_s3_ck_update(&c, v, 9);
    assert_int_equal(ztd_s3_ck_final(&c, d), 8);
    assert_int_equal(d[0], 0xae);
    assert_int_equal(d[7], 0x88);
    ztd_s3_ck_free(&c);
    char b64[16];
    ztd_s3_b64_encode(d, 8, b64);
    assert_string_equal(b64, "rosUhgp5mIg=");
    size_t n;
    assert_int_equal(ztd_s3_b64_decode("rosUhgp5mIg=", 12, d, 8, &n), 0);
    assert_int_equal(n, 8);
    assert_int_equal(ztd_s3_b64_decode("rosUhgp5mIg", 11, d, 8, &n), -1);
    assert_int_equal(ztd_s3_b64_decode("ro=Uhgp5mIg=", 12, d, 8, &n), -1);
    assert_int_equal(ztd_s3_ck_from_name("X-Amz-Checksum-CRC32C"), ZTD_S3_CK_CRC32C);
    assert_int_equal(ztd_s3_ck_from_name("x-amz-checksum-crc3"), ZTD_S3_CK_NONE);
}

static ztd_s3err body_verdict(const char *hname, const char *hval, const char *body,
                              const uint8_t *sha)
{
    ztd_s3_header h[] = {{hname, hval}};
    ztd_s3_request r = {"PUT", "/b/k", NULL, h, hname ? 1 : 0, 0};
    ztd_s3_body_check bc;
    ztd_s3err e = ztd_s3_body_check_init(&bc, &r, sha);
    if (e == ZTD_S3E_OK) {
        ztd_s3_body_check_update(&bc, body, strlen(body));
        e = ztd_s3_body_check_finish(&bc);
    }
    ztd_s3_body_check_free(&bc);
    return e;
}

static void whole_body(void **state)
{
    (void)state;
    /* The AWS docs' PUT example body, its SHA-256 and MD5 */
    const char *w = "Welcome to Amazon S3.";
    uint8_t sha[32];
    assert_int_equal(
        ztd_hex_decode("44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072", 32, sha),
        0);
    assert_int_equal(body_verdict(NULL, NULL, w, sha), ZTD_S3E_OK);
    assert_int_equal(body_verdict(NULL, NULL, "Welcome to Amazon S3!", sha),
                     ZTD_S3E_CONTENT_SHA256_MISMATCH);
    assert_int_equal(body_verdict("x-amz-checksum-crc32", "y/Q5Jg==", "123456789", NULL),
                     ZTD_S3E_OK);
    assert_int_equal(body_verdict("x-amz-checksum-crc32", "y/Q5Jg==", "123456780", NULL),
                     ZTD_S3E_BAD_DIGEST);
    assert_int_equal(body_verdict("x-amz-checksum-crc32", "y/Q5", "123456789", NULL),
                     ZTD_S3E_INVALID_DIGEST);
    /* md5("123456789") = 25f9e794323b453885f5181f1b624d0b */
    assert_int_equal(body_verdict("Content-MD5", "JfnnlDI7RTiF9RgfG2JNCw==", "123456789", NULL),
                     ZTD_S3E_OK);
    assert_int_equal(body_verdict("Content-MD5", "JfnnlDI7RTiF9RgfG2JNCw==", "12345678", NULL),
                     ZTD_S3E_BAD_DIGEST);
    assert_int_equal(body_verdict("Content-MD5", "nope", "1", NULL), ZTD_S3E_INVALID_DIGEST);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(aws_chunked_example), cmocka_unit_test(aws_chunked_trailer_example),
        cmocka_unit_test(unsigned_trailer),    cmocka_unit_test(crc_check_values),
        cmocka_unit_test(whole_body),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
