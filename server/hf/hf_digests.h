/*
 * The content digest of each repository file, which commit ids and the
 * clients' cache names are made of (docs/HF.md, "Revisions"):
 *  - a zTensor v2 file whose bytes the /raw ETag names ("zt2.<hex>",
 *    zt_file_identity: sha256 of the content digest, which is made of the
 *    components' sha256 digests, the footer and the size): that hex, known
 *    without reading the blobs;
 *  - any other file: the sha256 of its bytes. The background verifier hashes
 *    every local file without a v2 identity after start-up and after each
 *    rescan (ztd_entry_file_sha256); a request that comes first hashes the
 *    file itself, once per file version (name, device, inode, size, mtime,
 *    ctime), off libmicrohttpd's threads, kept in a bounded table of this
 *    front; concurrent requests for one version wait for the one hashing.
 */
#ifndef ZTD_HF_DIGESTS_H
#define ZTD_HF_DIGESTS_H

#include <stdbool.h>
#include <stdint.h>

#include "store/catalog.h"

/* Most versions remembered; past it the table starts again empty. */
#define ZTD_HF_DIGESTS_MAX (1u << 20)

/* e's digest into out when known now: true, and *is_sha256 says whether it is
 * the sha256 of e's bytes (else the zTensor identity). Never blocks. */
bool ztd_hf_digest_known(const ztd_entry *e, uint8_t out[32], bool *is_sha256);

/* Hash e's bytes (ROOT/e->name, checked to be the entry's version) unless
 * known or being hashed; waits for another thread hashing it. Blocks: call
 * off libmicrohttpd's threads. 0, or -1 with why in msg (file gone or
 * replaced, read error, not a local file). */
int ztd_hf_digest_compute(const char *root, const ztd_entry *e, char *msg, size_t cap);

/* A safetensors view's digest from its file's (src): the sha256 of
 * "ztensord safetensors view\n" and those 32 bytes. */
void ztd_hf_view_digest(const uint8_t src[32], uint8_t out[32]);
/* The digest of an S3 store's object that has no zTensor identity, from what
 * the store's listing says of it, without reading its bytes
 * (hf_store_repo.h): the sha256 of "ztensord s3 object\n", its ETag as the
 * store gives it (quotes included), a NUL and its size in decimal. */
void ztd_hf_store_digest(const char *etag, uint64_t size, uint8_t out[32]);

/* Versions in the table, and files hashed since start (for the tests). */
void ztd_hf_digest_stats(uint64_t *rows, uint64_t *hashed);

#endif
