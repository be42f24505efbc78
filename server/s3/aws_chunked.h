/*
 * A push decoder for "Content-Encoding: aws-chunked" bodies, the three forms
 * SigV4 streaming uses:
 *   signed        HEX;chunk-signature=SIG\r\n DATA\r\n ... 0;chunk-signature=SIG\r\n \r\n
 *   signed with trailers: the same, then after the last chunk
 *                 x-amz-checksum-ALG:BASE64\r\n x-amz-trailer-signature:SIG\r\n \r\n
 *   unsigned with trailers (boto3's default):
 *                 HEX\r\n DATA\r\n ... 0\r\n x-amz-checksum-ALG:BASE64\r\n \r\n
 * Chunk signatures chain from the request's seed signature (string to sign
 * "AWS4-HMAC-SHA256-PAYLOAD\n" DATE "\n" SCOPE "\n" PREV "\n" sha256("") "\n"
 * sha256(chunk)); the trailer signature chains from the last chunk's
 * ("AWS4-HMAC-SHA256-TRAILER\n" DATE "\n" SCOPE "\n" PREV "\n" sha256 of the
 * trailer lines, each "name:value\n"). The declared trailing checksum is
 * computed over the decoded bytes.
 *
 * Decoded bytes go to the sink as they arrive, BEFORE their chunk's
 * signature (checked at the chunk's end) and the checksum (at the end) are
 * known good: the consumer stages them and publishes only when
 * ztd_awsc_finish() returns OK. Bounded: a chunk header or trailer line is
 * at most 256 bytes, at most 8 trailer lines, a chunk size at most 16 hex
 * digits and never past x-amz-decoded-content-length when that is given.
 */
#ifndef ZTD_AWS_CHUNKED_H
#define ZTD_AWS_CHUNKED_H

#include <stddef.h>
#include <stdint.h>

#include "s3/checksum.h"
#include "s3/s3err.h"
#include "s3/sigv4_key.h"

#define ZTD_AWSC_MAX_LINE 256
#define ZTD_AWSC_MAX_TRAILERS 8

typedef enum ztd_awsc_mode {
    ZTD_AWSC_SIGNED = 0,      /* STREAMING-AWS4-HMAC-SHA256-PAYLOAD */
    ZTD_AWSC_SIGNED_TRAILER,  /* STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER */
    ZTD_AWSC_UNSIGNED_TRAILER /* STREAMING-UNSIGNED-PAYLOAD-TRAILER */
} ztd_awsc_mode;

/* Receives decoded bytes; returns 0, or non-zero to stop (the push then answers INTERNAL). */
typedef int (*ztd_awsc_sink)(void *ctx, const uint8_t *p, size_t n);

typedef struct ztd_awsc_config {
    ztd_awsc_mode mode;
    /* Signed modes: the request's signing key, x-amz-date, credential scope and signature
     * (ztd_s3_auth's signing_key, amz_date, scope_str, seed_signature); copied. */
    const uint8_t *signing_key;
    const char *amz_date, *scope, *seed_signature;
    /* x-amz-decoded-content-length, or -1 when not given. */
    int64_t decoded_length;
    /* x-amz-trailer's value (e.g. "x-amz-checksum-crc32"), or NULL: the checksum trailer that
     * must come, computed while decoding. A checksum trailer not declared here is refused. */
    const char *trailer;
    ztd_awsc_sink sink;
    void *sink_ctx;
} ztd_awsc_config;

typedef struct ztd_awsc ztd_awsc;

/* A decoder (caller frees with ztd_awsc_free), or NULL with *err set: INVALID_ARGUMENT for
 * an x-amz-trailer that is not one checksum header, or missing signing parts in a signed
 * mode; INTERNAL when out of memory. */
ztd_awsc *ztd_awsc_new(const ztd_awsc_config *cfg, ztd_s3err *err);
/* Wipes the key copy and frees; NULL is fine. */
void ztd_awsc_free(ztd_awsc *d);

/*
 * Feed the next n encoded bytes (any split). OK, or the first error, after which every call
 * returns it again:
 *   MALFORMED_CHUNK          framing not as above (missing CRLF, a bad extension...);
 *   INVALID_CHUNK_SIZE       a size that is not 1-16 hex digits, or runs past the declared
 *                            decoded length;
 *   SIGNATURE_DOES_NOT_MATCH a chunk's or the trailer's signature;
 *   MALFORMED_TRAILER        a trailer line that is not name:value, too many, an undeclared
 *                            checksum, a missing declared one or trailer signature;
 *   BAD_DIGEST               the trailing checksum does not match the decoded bytes;
 *   INVALID_DIGEST           the trailing checksum is not base64 of the right length;
 *   INTERNAL                 the sink said stop.
 * ztd_awsc_message() says which, with the byte offset in the encoded body.
 */
ztd_s3err ztd_awsc_push(ztd_awsc *d, const uint8_t *p, size_t n);
/* The body ended: OK only if the final chunk and its trailers were complete and the decoded
 * length is the declared one; else INCOMPLETE_BODY (or the earlier error). */
ztd_s3err ztd_awsc_finish(ztd_awsc *d);
/* Why the last error happened (never a secret); "" when none. Owned by d. */
const char *ztd_awsc_message(const ztd_awsc *d);
/* Decoded bytes so far. */
uint64_t ztd_awsc_decoded(const ztd_awsc *d);
/* After a successful finish: the verified trailing checksum's algorithm and its base64 value
 * (owned by d), or NONE and "". */
ztd_s3_ck_alg ztd_awsc_checksum(const ztd_awsc *d, const char **b64);

#endif
