/*
 * The checksums an S3 client sends with a plain (not aws-chunked, or
 * decoded) body, as PutObject and UploadPart both check them: Content-MD5,
 * x-amz-checksum-sha256, x-amz-checksum-crc32 and a hex
 * x-amz-content-sha256. Read from the headers before the body, fed the body
 * as it arrives, and judged before anything is kept. The body's sha256 may
 * come from the caller (PutObject hashes on another core) or be computed
 * here (UploadPart); the MD5 is also computed when the caller asks for it
 * (a part's ETag).
 */
#ifndef ZTD_S3_SUMS_H
#define ZTD_S3_SUMS_H

#include <microhttpd.h>
#include <stdbool.h>
#include <stdint.h>

#include "s3/s3_error.h"

typedef struct ztd_s3_sums {
    void *mctx, *sctx; /* EVP_MD_CTX: the MD5 and sha256 computed here */
    uint32_t crc;
    bool want_md5, want_sha, want_csha, want_crc;
    uint8_t md5_want[16], sha_want[32], csha_want[32], crc_want[4];
    uint8_t md5[16]; /* after ztd_s3_sums_hold, when has_md5 */
    bool has_md5;
} ztd_s3_sums;

/* Read the client's checksums from c's headers into k (zeroed here): NULL,
 * or why one is malformed or not supported (answer InvalidDigest). */
const char *ztd_s3_sums_take(struct MHD_Connection *c, ztd_s3_sums *k);
/* Does the check need the body's sha256 (x-amz-checksum-sha256 or a hex
 * x-amz-content-sha256)? */
bool ztd_s3_sums_need_sha(const ztd_s3_sums *k);
/* Did the client send a checksum of its own besides Content-MD5? */
bool ztd_s3_sums_any(const ztd_s3_sums *k);
/* Make the hash contexts: the MD5 when Content-MD5 was sent or md5 asks for
 * it, the sha256 here when own_sha and it is needed. false: out of memory. */
bool ztd_s3_sums_start(ztd_s3_sums *k, bool md5, bool own_sha);
void ztd_s3_sums_update(ztd_s3_sums *k, const void *p, size_t n);
/* The verdict on the whole body: true, or false with the S3 error and its
 * message. sha: the body's sha256 when the caller computed it (NULL: the
 * one computed here). Afterwards k->md5 holds the MD5 when k->has_md5. */
bool ztd_s3_sums_hold(ztd_s3_sums *k, const uint8_t *sha, ztd_s3_err *err, const char **msg);
void ztd_s3_sums_free(ztd_s3_sums *k);

#endif
