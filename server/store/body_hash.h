/*
 * A whole-file PUT's body hashed as it arrives, on a thread beside the one
 * that receives it, so that verifying the upload afterwards has less to hash.
 * See body_hash.c for what can and cannot be known this way.
 */
#ifndef ZTD_BODY_HASH_H
#define ZTD_BODY_HASH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct ztd_body_hash ztd_body_hash;

/* whole: also the SHA-256 of the whole body (for Content-Digest). fd: the
 * staging file the body is written to, read back for the last bytes of a
 * component. Returns NULL when no thread or memory can be had (the caller
 * hashes inline, or leaves it all to verification); else *first is the
 * first buffer (bufsize bytes) to fill. */
ztd_body_hash *ztd_body_hash_new(bool whole, int fd, size_t bufsize, uint8_t **first);
/* Hand over a filled buffer (already written to fd); returns the next to fill. */
uint8_t *ztd_body_hash_submit(ztd_body_hash *b, uint8_t *buf, size_t len);
/* Wait for every buffer; the whole body's SHA-256 in out when `whole`. */
void ztd_body_hash_final(ztd_body_hash *b, uint8_t out[32]);
/* zt_verify_options.known_sha256 (ud: the ztd_body_hash), after final(). */
int ztd_body_hash_known(void *ud, uint64_t offset, uint64_t length, uint8_t out[32]);
/* How many components known() answered (for the debug log and the tests). */
unsigned ztd_body_hash_answered(const ztd_body_hash *b);
void ztd_body_hash_free(ztd_body_hash *b, uint8_t *held);

#endif
