/*
 * The checksums a client sends with a plain body (s3_sums.h).
 */
#include "s3/s3_sums.h"
#include "http/response.h"
#include "s3/crc32_fast.h"

#include <openssl/evp.h>
#include <stdio.h>
#include <string.h>

/* Base64 header value of exactly n decoded bytes into out; false otherwise. */
static bool b64_exact(const char *v, uint8_t *out, size_t n)
{
    uint8_t buf[64];
    size_t len = strlen(v);
    if (len == 0 || len % 4 || len > 4 * ((sizeof(buf) + 2) / 3))
        return false;
    int k = EVP_DecodeBlock(buf, (const unsigned char *)v, (int)len);
    if (k < 0)
        return false;
    k -= (v[len - 1] == '=') + (v[len - 2] == '=');
    if ((size_t)k != n)
        return false;
    memcpy(out, buf, n);
    return true;
}

static bool hex64(const char *v, uint8_t out[32])
{
    if (strlen(v) != 64)
        return false;
    for (int i = 0; i < 32; i++) {
        unsigned x;
        if (sscanf(v + 2 * i, "%2x", &x) != 1 || !strchr("0123456789abcdefABCDEF", v[2 * i]) ||
            !strchr("0123456789abcdefABCDEF", v[2 * i + 1]))
            return false;
        out[i] = (uint8_t)x;
    }
    return true;
}

const char *ztd_s3_sums_take(struct MHD_Connection *c, ztd_s3_sums *k)
{
    const char *v;
    memset(k, 0, sizeof(*k));
    if ((v = ztd_header(c, "Content-MD5")) && !(k->want_md5 = b64_exact(v, k->md5_want, 16)))
        return "Content-MD5 is not the base64 of 16 bytes";
    if ((v = ztd_header(c, "x-amz-checksum-sha256")) &&
        !(k->want_sha = b64_exact(v, k->sha_want, 32)))
        return "x-amz-checksum-sha256 is not the base64 of 32 bytes";
    if ((v = ztd_header(c, "x-amz-content-sha256")) && strcmp(v, "UNSIGNED-PAYLOAD") != 0 &&
        strncmp(v, "STREAMING-", 10) != 0) {
        if (!(k->want_csha = hex64(v, k->csha_want)))
            return "x-amz-content-sha256 is neither UNSIGNED-PAYLOAD nor 64 hex digits";
    }
    if ((v = ztd_header(c, "x-amz-checksum-crc32")) &&
        !(k->want_crc = b64_exact(v, k->crc_want, 4)))
        return "x-amz-checksum-crc32 is not the base64 of 4 bytes";
    if (ztd_header(c, "x-amz-checksum-crc32c") || ztd_header(c, "x-amz-checksum-crc64nvme") ||
        ztd_header(c, "x-amz-checksum-sha1"))
        return "only the sha256 and crc32 checksums are supported";
    return NULL;
}

bool ztd_s3_sums_need_sha(const ztd_s3_sums *k)
{
    return k->want_sha || k->want_csha;
}

bool ztd_s3_sums_any(const ztd_s3_sums *k)
{
    return k->want_sha || k->want_csha || k->want_crc;
}

static void *md_new(const EVP_MD *md)
{
    EVP_MD_CTX *x = EVP_MD_CTX_new();
    if (x && !EVP_DigestInit_ex(x, md, NULL)) {
        EVP_MD_CTX_free(x);
        x = NULL;
    }
    return x;
}

bool ztd_s3_sums_start(ztd_s3_sums *k, bool md5, bool own_sha)
{
    if ((md5 || k->want_md5) && !(k->mctx = md_new(EVP_md5())))
        return false;
    if (own_sha && ztd_s3_sums_need_sha(k) && !(k->sctx = md_new(EVP_sha256())))
        return false;
    return true;
}

void ztd_s3_sums_update(ztd_s3_sums *k, const void *p, size_t n)
{
    if (k->mctx)
        EVP_DigestUpdate(k->mctx, p, n);
    if (k->sctx)
        EVP_DigestUpdate(k->sctx, p, n);
    if (k->want_crc)
        k->crc = ztd_crc32(k->crc, p, n);
}

bool ztd_s3_sums_hold(ztd_s3_sums *k, const uint8_t *sha, ztd_s3_err *err, const char **msg)
{
    uint8_t own[EVP_MAX_MD_SIZE];
    unsigned n = 0;
    uint8_t crc[4] = {(uint8_t)(k->crc >> 24), (uint8_t)(k->crc >> 16), (uint8_t)(k->crc >> 8),
                      (uint8_t)k->crc};
    *err = ZTD_S3_BAD_DIGEST;
    if (k->mctx && !k->has_md5) {
        if (!EVP_DigestFinal_ex(k->mctx, own, &n)) {
            *err = ZTD_S3_INTERNAL;
            *msg = "hashing the body failed";
            return false;
        }
        memcpy(k->md5, own, 16);
        k->has_md5 = true;
    }
    if (k->sctx && !sha) {
        if (!EVP_DigestFinal_ex(k->sctx, own, &n)) {
            *err = ZTD_S3_INTERNAL;
            *msg = "hashing the body failed";
            return false;
        }
        sha = own;
    }
    if (ztd_s3_sums_need_sha(k) && !sha) {
        *err = ZTD_S3_INTERNAL;
        *msg = "the body's sha256 was not computed";
        return false;
    }
    if (k->want_md5 && memcmp(k->md5, k->md5_want, 16) != 0)
        *msg = "The Content-MD5 you specified did not match what we received.";
    else if (k->want_sha && memcmp(sha, k->sha_want, 32) != 0)
        *msg = "The SHA256 you specified did not match the calculated checksum.";
    else if (k->want_csha && memcmp(sha, k->csha_want, 32) != 0) {
        *err = ZTD_S3_CONTENT_SHA256_MISMATCH;
        *msg = "The provided 'x-amz-content-sha256' header does not match what was computed.";
    } else if (k->want_crc && memcmp(crc, k->crc_want, 4) != 0)
        *msg = "The CRC32 you specified did not match the calculated checksum.";
    else
        return true;
    return false;
}

void ztd_s3_sums_free(ztd_s3_sums *k)
{
    EVP_MD_CTX_free(k->mctx);
    EVP_MD_CTX_free(k->sctx);
    k->mctx = k->sctx = NULL;
}
