/*
 * fuzz_aws_chunked.c: libFuzzer target for server/s3/aws_chunked.c (and checksum.c): an
 * aws-chunked body from a stranger.
 *
 * This file defines LLVMFuzzerTestOneInput and nothing else: no main. Link it with
 * -fsanitize=fuzzer, or with a driver that replays a corpus through the same entry point.
 *
 * Input layout: byte 0 picks the mode (signed, signed with trailers, unsigned with trailers)
 * and the declared trailer (none, or one of the five checksums); byte 1 the size of the
 * pieces it is pushed in (1-256); byte 2 whether x-amz-decoded-content-length is declared
 * (as bytes 3-4, little-endian); the rest is the body. Signed modes use the AWS docs' example
 * key, date, scope and seed signature.
 *
 * Invariants (a violation calls __builtin_trap): every verdict is one of the enum's values and
 * an error has a message naming a byte; pushed in pieces or whole, the verdict and the
 * decoded bytes are the same; the sink saw exactly ztd_awsc_decoded() bytes, never more than
 * declared; OK means the declared length was met. And a round trip: the rest of the input,
 * framed as boto3 frames it (unsigned, CRC32 trailer), decodes to itself.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "s3/aws_chunked.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond))                                                                               \
            __builtin_trap();                                                                      \
    } while (0)

#define SEED "4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9"

typedef struct out {
    uint8_t *p;
    size_t n, cap;
} out;

static int sink(void *ctx, const uint8_t *p, size_t n)
{
    out *o = ctx;
    CHECK(o->n + n <= o->cap); /* never more than the body could hold */
    memcpy(o->p + o->n, p, n);
    o->n += n;
    return 0;
}

static const char *trailers[] = {NULL,
                                 "x-amz-checksum-crc32",
                                 "x-amz-checksum-crc32c",
                                 "x-amz-checksum-crc64nvme",
                                 "x-amz-checksum-sha1",
                                 "x-amz-checksum-sha256"};

static ztd_s3err decode(ztd_awsc_mode mode, const char *trailer, int64_t declared, const uint8_t *b,
                        size_t n, size_t step, out *o)
{
    uint8_t key[ZTD_SIGV4_KEY_LEN];
    ztd_sigv4_signing_key("wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", 40, "20130524", "us-east-1",
                          key);
    ztd_awsc_config c = {mode,
                         key,
                         "20130524T000000Z",
                         "20130524/us-east-1/s3/aws4_request",
                         SEED,
                         declared,
                         trailer,
                         sink,
                         o};
    ztd_s3err e;
    ztd_awsc *d = ztd_awsc_new(&c, &e);
    CHECK(d && e == ZTD_S3E_OK);
    for (size_t i = 0; i < n && !e; i += step)
        e = ztd_awsc_push(d, b + i, n - i < step ? n - i : step);
    if (!e)
        e = ztd_awsc_finish(d);
    CHECK((unsigned)e < ZTD_S3E_COUNT_);
    CHECK(e == ZTD_S3E_OK || strstr(ztd_awsc_message(d), "byte "));
    CHECK(ztd_awsc_decoded(d) == o->n);
    CHECK(declared < 0 || o->n <= (uint64_t)declared);
    CHECK(e != ZTD_S3E_OK || declared < 0 || o->n == (uint64_t)declared);
    ztd_awsc_free(d);
    return e;
}

/* The bytes framed as boto3 frames them: chunks of up to 1000, "0", the CRC32 trailer. */
static void round_trip(const uint8_t *p, size_t n)
{
    size_t cap = n + n / 1000 * 16 + 128;
    uint8_t *b = malloc(cap), *got = malloc(n + 1);
    out o = {got, 0, n};
    size_t k = 0;
    for (size_t i = 0; i < n; i += 1000) {
        size_t m = n - i < 1000 ? n - i : 1000;
        k += (size_t)snprintf((char *)b + k, cap - k, "%zx\r\n", m);
        memcpy(b + k, p + i, m);
        k += m;
        memcpy(b + k, "\r\n", 2);
        k += 2;
    }
    ztd_s3_ck c;
    uint8_t d[ZTD_S3_CK_MAX];
    char b64[16];
    ztd_s3_ck_init(&c, ZTD_S3_CK_CRC32);
    ztd_s3_ck_update(&c, p, n);
    ztd_s3_b64_encode(d, ztd_s3_ck_final(&c, d), b64);
    ztd_s3_ck_free(&c);
    k += (size_t)snprintf((char *)b + k, cap - k, "0\r\nx-amz-checksum-crc32:%s\r\n\r\n", b64);
    CHECK(decode(ZTD_AWSC_UNSIGNED_TRAILER, trailers[1], (int64_t)n, b, k, 777, &o) == ZTD_S3E_OK);
    CHECK(o.n == n && (n == 0 || !memcmp(got, p, n)));
    free(b);
    free(got);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 5)
        return 0;
    ztd_awsc_mode mode = (ztd_awsc_mode)(data[0] % 3);
    const char *trailer = trailers[(data[0] / 3) % 6];
    size_t step = (size_t)data[1] + 1;
    int64_t declared = data[2] & 1 ? (int64_t)(data[3] | data[4] << 8) : -1;
    const uint8_t *b = data + 5;
    size_t n = size - 5;
    uint8_t *o1 = malloc(n + 1), *o2 = malloc(n + 1);
    out a = {o1, 0, n}, w = {o2, 0, n};
    ztd_s3err e1 = decode(mode, trailer, declared, b, n, step, &a);
    ztd_s3err e2 = decode(mode, trailer, declared, b, n, n ? n : 1, &w);
    CHECK(e1 == e2 && a.n == w.n && (a.n == 0 || !memcmp(o1, o2, a.n)));
    free(o1);
    free(o2);
    round_trip(b, n);
    return 0;
}
