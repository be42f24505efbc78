/*
 * A whole-file PUT's first component hashed while the body arrives, on a
 * thread of its own that reads the staging file back from the page cache, so
 * that verifying the upload afterwards has less to hash. See body_hash.c.
 */
#ifndef ZTD_BODY_HASH_H
#define ZTD_BODY_HASH_H

#include <stdint.h>

typedef struct ztd_body_hash ztd_body_hash;

/* fd: the staging file the body is written to. NULL when no thread or memory
 * can be had (verification then hashes everything, as without it). */
ztd_body_hash *ztd_body_hash_new(int fd);
/* The receiving thread: the first `written` bytes are in the file. */
void ztd_body_hash_written(ztd_body_hash *b, uint64_t written);
/* The body is complete (or abandoned): the thread stops where it got to. */
void ztd_body_hash_stop(ztd_body_hash *b);
/* zt_verify_options.known_sha256 (ud: the ztd_body_hash), after stop(). */
int ztd_body_hash_known(void *ud, uint64_t offset, uint64_t length, uint8_t out[32]);
/* Bytes the thread had hashed when stopped, and components known() answered
 * (for the debug log and the tests). */
uint64_t ztd_body_hash_done(const ztd_body_hash *b);
unsigned ztd_body_hash_answered(const ztd_body_hash *b);
void ztd_body_hash_free(ztd_body_hash *b);

#endif
