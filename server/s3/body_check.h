/*
 * Whole-body checks of a plain (not aws-chunked) upload, from its headers:
 * Content-MD5, one x-amz-checksum-ALG, and the SHA-256 that
 * x-amz-content-sha256 signed. Fed the body as it arrives; the verdict
 * comes at the end, before anything is published. For aws-chunked bodies the
 * checksum comes in a trailer instead: aws_chunked.h checks it.
 */
#ifndef ZTD_BODY_CHECK_H
#define ZTD_BODY_CHECK_H

#include <stdbool.h>
#include <stdint.h>

#include "s3/checksum.h"
#include "s3/s3err.h"
#include "s3/sigv4_canon.h"

typedef struct ztd_s3_body_check {
    ztd_s3_ck md5, alg, sha;
    uint8_t want_md5[16], want_alg[ZTD_S3_CK_MAX], want_sha[32];
    bool has_md5, has_alg, has_sha;
    char msg[160];
} ztd_s3_body_check;

/*
 * Read the checks from req's headers; payload_sha256 is ztd_s3_auth's payload_sha256 when its
 * payload is ZTD_S3_PAYLOAD_SHA256, else NULL. Errors: INVALID_DIGEST (Content-MD5 or the
 * checksum is not base64 of its size), INVALID_ARGUMENT (two checksum headers, or one
 * given twice), INTERNAL (out of memory). Call ztd_s3_body_check_free() either way.
 */
ztd_s3err ztd_s3_body_check_init(ztd_s3_body_check *bc, const ztd_s3_request *req,
                                 const uint8_t *payload_sha256);
void ztd_s3_body_check_update(ztd_s3_body_check *bc, const void *p, size_t n);
/* OK, BAD_DIGEST (MD5 or the checksum differ; msg names which) or CONTENT_SHA256_MISMATCH. */
ztd_s3err ztd_s3_body_check_finish(ztd_s3_body_check *bc);
void ztd_s3_body_check_free(ztd_s3_body_check *bc);

#endif
