/*
 * The SigV4 primitives that both the request verifier and the aws-chunked
 * verifier use: HMAC-SHA256, the signing key derived from a secret
 * (AWS4+secret -> date -> region -> "s3" -> "aws4_request"), a signature over
 * a string-to-sign, and the constant-time check of a presented hex signature.
 * The secret itself only passes through ztd_sigv4_signing_key(); everything
 * after that holds the derived key, which callers wipe when done.
 */
#ifndef ZTD_SIGV4_KEY_H
#define ZTD_SIGV4_KEY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ZTD_SIGV4_KEY_LEN 32
#define ZTD_SIGV4_SIG_HEX 64 /* a signature: 64 lowercase hex digits */

/* out = HMAC-SHA256(key, msg). */
void ztd_sigv4_hmac(const uint8_t *key, size_t klen, const void *msg, size_t mlen, uint8_t out[32]);
/* The signing key of secret for date (YYYYMMDD) and region, service "s3". */
void ztd_sigv4_signing_key(const char *secret, size_t slen, const char *date, const char *region,
                           uint8_t out[ZTD_SIGV4_KEY_LEN]);
/* hex = lowercase hex of HMAC-SHA256(key, string_to_sign): 64 digits plus NUL. */
void ztd_sigv4_sign(const uint8_t key[ZTD_SIGV4_KEY_LEN], const char *sts, size_t len,
                    char hex[ZTD_SIGV4_SIG_HEX + 1]);
/* hex = lowercase hex of SHA-256(data): 64 digits plus NUL. */
void ztd_sigv4_sha256_hex(const void *data, size_t len, char hex[65]);
/* Is presented (n chars, either case) the same 64-digit signature as want (lowercase)? The
 * comparison of the digits' values is constant-time (CRYPTO_memcmp); a wrong length or a
 * non-hex digit is false. */
bool ztd_sigv4_sig_equal(const char *want, const char *presented, size_t n);
/* Zero n bytes in a way the compiler keeps (OPENSSL_cleanse). */
void ztd_sigv4_wipe(void *p, size_t n);

#endif
