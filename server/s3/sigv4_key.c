/*
 * SigV4's keyed-hash steps over OpenSSL (see sigv4_key.h).
 */
#include "s3/sigv4_key.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>
#include <string.h>

#include "core/hex.h"

void ztd_sigv4_hmac(const uint8_t *key, size_t klen, const void *msg, size_t mlen, uint8_t out[32])
{
    unsigned int olen = 32;
    if (!HMAC(EVP_sha256(), key, (int)klen, msg, mlen, out, &olen))
        memset(out, 0, 32); /* cannot happen with SHA-256; a zero key then matches nothing */
}

void ztd_sigv4_signing_key(const char *secret, size_t slen, const char *date, const char *region,
                           uint8_t out[ZTD_SIGV4_KEY_LEN])
{
    uint8_t k0[4 + 256], a[32], b[32];
    if (slen > sizeof(k0) - 4)
        slen = sizeof(k0) - 4; /* s3_keys caps secrets well below this */
    memcpy(k0, "AWS4", 4);
    memcpy(k0 + 4, secret, slen);
    ztd_sigv4_hmac(k0, 4 + slen, date, strlen(date), a);
    ztd_sigv4_hmac(a, 32, region, strlen(region), b);
    ztd_sigv4_hmac(b, 32, "s3", 2, a);
    ztd_sigv4_hmac(a, 32, "aws4_request", 12, out);
    ztd_sigv4_wipe(k0, sizeof(k0));
    ztd_sigv4_wipe(a, sizeof(a));
    ztd_sigv4_wipe(b, sizeof(b));
}

void ztd_sigv4_sign(const uint8_t key[ZTD_SIGV4_KEY_LEN], const char *sts, size_t len,
                    char hex[ZTD_SIGV4_SIG_HEX + 1])
{
    uint8_t mac[32];
    ztd_sigv4_hmac(key, ZTD_SIGV4_KEY_LEN, sts, len, mac);
    ztd_hex_encode(mac, 32, hex);
}

void ztd_sigv4_sha256_hex(const void *data, size_t len, char hex[65])
{
    uint8_t d[32];
    SHA256(data, len, d);
    ztd_hex_encode(d, 32, hex);
}

bool ztd_sigv4_sig_equal(const char *want, const char *presented, size_t n)
{
    uint8_t a[32], b[32];
    if (n != ZTD_SIGV4_SIG_HEX || ztd_hex_decode(presented, 32, b) != 0 ||
        ztd_hex_decode(want, 32, a) != 0)
        return false;
    return CRYPTO_memcmp(a, b, 32) == 0;
}

void ztd_sigv4_wipe(void *p, size_t n)
{
    OPENSSL_cleanse(p, n);
}
