/*
 * Body checksums for S3 (see checksum.h). The CRC tables are built once,
 * under pthread_once, from the reflected polynomials.
 */
#include "s3/checksum.h"

#include <openssl/evp.h>
#include <pthread.h>
#include <string.h>

#include "core/lex.h"
#include "s3/crc32_fast.h"

/* Both CRCs are reflected: one byte-at-a-time table loop serves both, the
 * 32-bit one in the low half of a 64-bit register (its table entries and
 * running value stay below 2^32). */
static uint64_t t32c[256], t64[256];
static pthread_once_t tables_once = PTHREAD_ONCE_INIT;

static void build_table(uint64_t t[256], uint64_t poly)
{
    for (uint64_t i = 0; i < 256; i++) {
        uint64_t c = i;
        for (int k = 0; k < 8; k++)
            c = (c & 1) ? (c >> 1) ^ poly : c >> 1;
        t[i] = c;
    }
}

static void build_tables(void)
{
    build_table(t32c, 0x82F63B78u);
    build_table(t64, 0x9A6C9329AC4BC9B5ull);
}

static uint64_t table_crc(const uint64_t t[256], uint64_t crc, const void *p, size_t n)
{
    pthread_once(&tables_once, build_tables);
    const uint8_t *b = p;
    for (size_t i = 0; i < n; i++)
        crc = t[(crc ^ b[i]) & 0xff] ^ (crc >> 8);
    return crc;
}

uint32_t ztd_crc32c(uint32_t crc, const void *p, size_t n)
{
    return ~(uint32_t)table_crc(t32c, (uint32_t)~crc, p, n);
}

uint64_t ztd_crc64nvme(uint64_t crc, const void *p, size_t n)
{
    return ~table_crc(t64, ~crc, p, n);
}

static const struct {
    const char *name;
    size_t len;
} algs[] = {
    [ZTD_S3_CK_NONE] = {"", 0},
    [ZTD_S3_CK_CRC32] = {"x-amz-checksum-crc32", 4},
    [ZTD_S3_CK_CRC32C] = {"x-amz-checksum-crc32c", 4},
    [ZTD_S3_CK_CRC64NVME] = {"x-amz-checksum-crc64nvme", 8},
    [ZTD_S3_CK_SHA1] = {"x-amz-checksum-sha1", 20},
    [ZTD_S3_CK_SHA256] = {"x-amz-checksum-sha256", 32},
    [ZTD_S3_CK_MD5] = {"content-md5", 16},
};

ztd_s3_ck_alg ztd_s3_ck_from_name(const char *name)
{
    for (int a = ZTD_S3_CK_CRC32; a <= ZTD_S3_CK_SHA256; a++) {
        const char *w = algs[a].name;
        size_t i = 0;
        while (w[i] && name[i] && ztd_ascii_lower(name[i]) == w[i])
            i++;
        if (!w[i] && !name[i])
            return (ztd_s3_ck_alg)a;
    }
    return ZTD_S3_CK_NONE;
}

const char *ztd_s3_ck_name(ztd_s3_ck_alg alg)
{
    return (unsigned)alg <= ZTD_S3_CK_MD5 ? algs[alg].name : "";
}

size_t ztd_s3_ck_len(ztd_s3_ck_alg alg)
{
    return (unsigned)alg <= ZTD_S3_CK_MD5 ? algs[alg].len : 0;
}

int ztd_s3_ck_init(ztd_s3_ck *c, ztd_s3_ck_alg alg)
{
    memset(c, 0, sizeof(*c));
    c->alg = alg;
    const EVP_MD *md = alg == ZTD_S3_CK_SHA1     ? EVP_sha1()
                       : alg == ZTD_S3_CK_SHA256 ? EVP_sha256()
                       : alg == ZTD_S3_CK_MD5    ? EVP_md5()
                                                 : NULL;
    if (!md)
        return 0;
    EVP_MD_CTX *x = EVP_MD_CTX_new();
    if (!x || !EVP_DigestInit_ex(x, md, NULL)) {
        EVP_MD_CTX_free(x);
        return -1;
    }
    c->md = x;
    return 0;
}

void ztd_s3_ck_update(ztd_s3_ck *c, const void *p, size_t n)
{
    switch (c->alg) {
    case ZTD_S3_CK_CRC32:
        c->crc = ztd_crc32((uint32_t)c->crc, p, n);
        break;
    case ZTD_S3_CK_CRC32C:
        c->crc = ztd_crc32c((uint32_t)c->crc, p, n);
        break;
    case ZTD_S3_CK_CRC64NVME:
        c->crc = ztd_crc64nvme(c->crc, p, n);
        break;
    default:
        if (c->md)
            EVP_DigestUpdate(c->md, p, n);
    }
}

size_t ztd_s3_ck_final(ztd_s3_ck *c, uint8_t out[ZTD_S3_CK_MAX])
{
    size_t len = ztd_s3_ck_len(c->alg);
    if (c->alg == ZTD_S3_CK_CRC32 || c->alg == ZTD_S3_CK_CRC32C || c->alg == ZTD_S3_CK_CRC64NVME) {
        for (size_t i = 0; i < len; i++)
            out[i] = (uint8_t)(c->crc >> (8 * (len - 1 - i)));
    } else if (c->md) {
        unsigned int ol = 0;
        EVP_DigestFinal_ex(c->md, out, &ol);
    }
    return len;
}

void ztd_s3_ck_free(ztd_s3_ck *c)
{
    EVP_MD_CTX_free(c->md);
    c->md = NULL;
}

static int b64v(char ch)
{
    if (ch >= 'A' && ch <= 'Z')
        return ch - 'A';
    if (ch >= 'a' && ch <= 'z')
        return ch - 'a' + 26;
    if (ch >= '0' && ch <= '9')
        return ch - '0' + 52;
    return ch == '+' ? 62 : ch == '/' ? 63 : -1;
}

int ztd_s3_b64_decode(const char *s, size_t len, uint8_t *out, size_t cap, size_t *n)
{
    if (len % 4)
        return -1;
    size_t k = 0;
    for (size_t i = 0; i < len; i += 4) {
        int v[4], pad = 0;
        for (int j = 0; j < 4; j++) {
            bool last = i + 4 == len;
            if (last && s[i + j] == '=' && j >= 2 && (j == 3 || s[i + 3] == '=')) {
                v[j] = 0;
                pad++;
                continue;
            }
            if ((v[j] = b64v(s[i + j])) < 0 || pad)
                return -1;
        }
        uint32_t w =
            (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12 | (uint32_t)v[2] << 6 | (uint32_t)v[3];
        size_t m = 3 - (size_t)pad;
        if (k + m > cap)
            return -1;
        for (size_t j = 0; j < m; j++)
            out[k++] = (uint8_t)(w >> (16 - 8 * j));
    }
    *n = k;
    return 0;
}

void ztd_s3_b64_encode(const uint8_t *p, size_t n, char *out)
{
    EVP_EncodeBlock((unsigned char *)out, p, (int)n);
}
