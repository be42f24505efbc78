/*
 * A whole file arriving as one request body, as PUT /v1/files and the S3
 * front's PutObject both take it: streamed into a staging file through a
 * 1 MiB buffer (write-back as it goes, so the fsync before publishing waits
 * for the last few MiB), its sha256 computed on another core when asked
 * for, and its first component hashed from the page cache while the body
 * arrives (body_hash.h); then checked (structure, every digest, fsync) and
 * published (publish.h). No HTTP here: the fronts map errors to answers.
 * _check_publish blocks on the disk: run it off libmicrohttpd's threads.
 */
#ifndef ZTD_PUT_FILE_H
#define ZTD_PUT_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/errors.h"
#include "store/publish.h"
#include "store/staging.h"

typedef struct ztd_put_file ztd_put_file;

/* A staging file of kind `kind` ("put", "s3put"); with want_sha256 the body's
 * sha256 is computed as it arrives. NULL with errno set (ENOMEM, or the
 * staging file's creation error). */
ztd_put_file *ztd_put_file_new(ztd_staging *st, const char *kind, bool want_sha256);
/* Bytes of the body, in order. 0, or -1 with errno (the write's). */
int ztd_put_file_write(ztd_put_file *p, const void *data, size_t n);
/* len bytes read from fd (from offset off on), in the kernel where it can
 * (copy_file_range), as if written: for bodies assembled from files (S3
 * multipart parts). Not for a p made with want_sha256. 0, or -1 with errno
 * (EIO when fd holds fewer bytes). */
int ztd_put_file_append_fd(ztd_put_file *p, int fd, uint64_t off, uint64_t len);
/* Bytes received so far. */
uint64_t ztd_put_file_received(const ztd_put_file *p);
/* The body is complete: the last bytes written, hashing stopped; with
 * want_sha256 its digest in sha256. 0, or -1 with errno. */
int ztd_put_file_end(ztd_put_file *p, uint8_t sha256[32]);
/* Check the staged file (structure, every digest, fsync) and publish it as
 * rel under pc. *nobj: its objects. The staging file is gone afterwards,
 * published or removed. */
ztd_err ztd_put_file_publish(ztd_put_file *p, ztd_publisher *pub, const char *rel,
                             const ztd_preconds *pc, size_t *nobj, ztd_published *out, char *msg,
                             size_t cap);
/* Bytes the first component's hasher had done, and components it answered
 * (for the debug log). */
uint64_t ztd_put_file_hashed(const ztd_put_file *p);
unsigned ztd_put_file_answered(const ztd_put_file *p);
/* Removes the staging file unless published; accepts NULL. */
void ztd_put_file_free(ztd_put_file *p);

#endif
