/*
 * Whole-body checksums of a plain upload (see body_check.h).
 */
#include "s3/body_check.h"

#include <stdio.h>
#include <string.h>

static ztd_s3err fail(ztd_s3_body_check *bc, ztd_s3err e, const char *why, const char *name)
{
    snprintf(bc->msg, sizeof(bc->msg), why, name);
    return e;
}

static bool b64_exact(const char *v, uint8_t *out, size_t want)
{
    size_t n = 0;
    return ztd_s3_b64_decode(v, strlen(v), out, want, &n) == 0 && n == want;
}

/* The one x-amz-checksum-ALG header, if any. */
static ztd_s3err checksum_header(ztd_s3_body_check *bc, const ztd_s3_request *req)
{
    ztd_s3_ck_alg found = ZTD_S3_CK_NONE;
    const char *val = NULL, *name = NULL;
    for (size_t i = 0; i < req->n_headers; i++) {
        ztd_s3_ck_alg a =
            req->headers[i].name ? ztd_s3_ck_from_name(req->headers[i].name) : ZTD_S3_CK_NONE;
        if (a == ZTD_S3_CK_NONE)
            continue;
        if (found != ZTD_S3_CK_NONE)
            return fail(bc, ZTD_S3E_INVALID_ARGUMENT, "more than one checksum header%s", "");
        found = a;
        name = ztd_s3_ck_name(a);
        val = req->headers[i].value ? req->headers[i].value : "";
    }
    if (found == ZTD_S3_CK_NONE)
        return ZTD_S3E_OK;
    if (!b64_exact(val, bc->want_alg, ztd_s3_ck_len(found)))
        return fail(bc, ZTD_S3E_INVALID_DIGEST, "%s is not base64 of its size", name);
    bc->has_alg = true;
    return ztd_s3_ck_init(&bc->alg, found) ? ZTD_S3E_INTERNAL : ZTD_S3E_OK;
}

ztd_s3err ztd_s3_body_check_init(ztd_s3_body_check *bc, const ztd_s3_request *req,
                                 const uint8_t *payload_sha256)
{
    memset(bc, 0, sizeof(*bc));
    size_t nm = 0;
    const char *md5 = ztd_s3_header_get(req, "content-md5", &nm);
    if (nm > 1)
        return fail(bc, ZTD_S3E_INVALID_ARGUMENT, "Content-MD5 is given twice%s", "");
    if (md5) {
        if (!b64_exact(md5, bc->want_md5, 16))
            return fail(bc, ZTD_S3E_INVALID_DIGEST,
                        "the Content-MD5 you specified is not "
                        "valid%s",
                        "");
        bc->has_md5 = true;
        if (ztd_s3_ck_init(&bc->md5, ZTD_S3_CK_MD5))
            return ZTD_S3E_INTERNAL;
    }
    ztd_s3err e = checksum_header(bc, req);
    if (e)
        return e;
    if (payload_sha256) {
        memcpy(bc->want_sha, payload_sha256, 32);
        bc->has_sha = true;
        if (ztd_s3_ck_init(&bc->sha, ZTD_S3_CK_SHA256))
            return ZTD_S3E_INTERNAL;
    }
    return ZTD_S3E_OK;
}

void ztd_s3_body_check_update(ztd_s3_body_check *bc, const void *p, size_t n)
{
    if (bc->has_md5)
        ztd_s3_ck_update(&bc->md5, p, n);
    if (bc->has_alg)
        ztd_s3_ck_update(&bc->alg, p, n);
    if (bc->has_sha)
        ztd_s3_ck_update(&bc->sha, p, n);
}

ztd_s3err ztd_s3_body_check_finish(ztd_s3_body_check *bc)
{
    uint8_t d[ZTD_S3_CK_MAX];
    if (bc->has_sha && (ztd_s3_ck_final(&bc->sha, d), memcmp(d, bc->want_sha, 32)))
        return fail(bc, ZTD_S3E_CONTENT_SHA256_MISMATCH,
                    "the provided x-amz-content-sha256 does not match what was computed%s", "");
    if (bc->has_md5 && (ztd_s3_ck_final(&bc->md5, d), memcmp(d, bc->want_md5, 16)))
        return fail(bc, ZTD_S3E_BAD_DIGEST,
                    "the Content-MD5 you specified did not match what we received%s", "");
    if (bc->has_alg) {
        size_t l = ztd_s3_ck_final(&bc->alg, d);
        if (memcmp(d, bc->want_alg, l))
            return fail(bc, ZTD_S3E_BAD_DIGEST,
                        "the %s you specified did not match the calculated checksum",
                        ztd_s3_ck_name(bc->alg.alg));
    }
    return ZTD_S3E_OK;
}

void ztd_s3_body_check_free(ztd_s3_body_check *bc)
{
    ztd_s3_ck_free(&bc->md5);
    ztd_s3_ck_free(&bc->alg);
    ztd_s3_ck_free(&bc->sha);
}
