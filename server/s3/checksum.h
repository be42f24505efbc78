/*
 * The checksums S3 clients send with a body (x-amz-checksum-crc32, -crc32c,
 * -crc64nvme, -sha1, -sha256, and Content-MD5), computed incrementally, and
 * their base64 text. CRC32 is crc32_fast.h (folding, zlib as fallback); CRC32C (Castagnoli, reflected
 * 0x82F63B78) and CRC64NVME (reflected 0x9A6C9329AC4BC9B5, init and xorout
 * all ones) are table-driven here. Values are big-endian bytes, as S3 sends
 * them in base64.
 */
#ifndef ZTD_S3_CHECKSUM_H
#define ZTD_S3_CHECKSUM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum ztd_s3_ck_alg {
    ZTD_S3_CK_NONE = 0,
    ZTD_S3_CK_CRC32,
    ZTD_S3_CK_CRC32C,
    ZTD_S3_CK_CRC64NVME,
    ZTD_S3_CK_SHA1,
    ZTD_S3_CK_SHA256,
    ZTD_S3_CK_MD5
} ztd_s3_ck_alg;

#define ZTD_S3_CK_MAX 32 /* bytes of the longest digest */

/* A running checksum. Init, update, final; free releases the hash context (safe to call
 * twice, or on a zeroed struct). */
typedef struct ztd_s3_ck {
    ztd_s3_ck_alg alg;
    uint64_t crc;
    void *md; /* EVP_MD_CTX for the SHA and MD5 kinds */
} ztd_s3_ck;

/* The algorithm of a header or trailer name ("x-amz-checksum-crc32", any case); NONE if it
 * is not one. Content-MD5 is not in this family: use ZTD_S3_CK_MD5 directly. */
ztd_s3_ck_alg ztd_s3_ck_from_name(const char *name);
/* "x-amz-checksum-crc32" etc. ("content-md5" for MD5); static storage. */
const char *ztd_s3_ck_name(ztd_s3_ck_alg alg);
/* Digest length in bytes: 4, 4, 8, 20, 32, 16; 0 for NONE. */
size_t ztd_s3_ck_len(ztd_s3_ck_alg alg);

/* 0, or -1 when out of memory (c is then safe to free). */
int ztd_s3_ck_init(ztd_s3_ck *c, ztd_s3_ck_alg alg);
void ztd_s3_ck_update(ztd_s3_ck *c, const void *p, size_t n);
/* The digest into out (ztd_s3_ck_len bytes); c must not be updated afterwards. */
size_t ztd_s3_ck_final(ztd_s3_ck *c, uint8_t out[ZTD_S3_CK_MAX]);
void ztd_s3_ck_free(ztd_s3_ck *c);

/* The raw CRCs, chainable: start from 0 (the ~ is inside). */
uint32_t ztd_crc32c(uint32_t crc, const void *p, size_t n);
uint64_t ztd_crc64nvme(uint64_t crc, const void *p, size_t n);

/* Strict base64 (RFC 4648 §4, padding required, no spaces): decoded bytes in *n (at most
 * cap), or -1. */
int ztd_s3_b64_decode(const char *s, size_t len, uint8_t *out, size_t cap, size_t *n);
/* Base64 of n bytes (n <= 48) with padding, NUL-terminated, into out (>= 4*ceil(n/3)+1). */
void ztd_s3_b64_encode(const uint8_t *p, size_t n, char *out);

#endif
