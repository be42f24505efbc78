/*
 * libztensor-remote's experimental API: what ztensord's pull-through cache
 * needs from an origin beyond file reads, so that no file of the server uses
 * libcurl itself. Not part of the stable interface in ztensor_remote.h: it may
 * change or go away in any release (as ztensor_experimental.h).
 */
#ifndef ZTENSOR_REMOTE_EXPERIMENTAL_H
#define ZTENSOR_REMOTE_EXPERIMENTAL_H

#include "ztensor_remote.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One plain GET of url (http or https), blocking, on a connection of its own.
 * bearer_token and if_none_match may be NULL (no header). *status gets the
 * HTTP status (0 when there is none: *timed_out then says why: 1 a timeout, 2
 * a body larger than max, 0 anything else); *body the body, NUL-terminated, at
 * most max bytes, NULL when empty or when there is no status (the caller frees
 * it with free()); *len its length; etag (256 bytes) the response's ETag or "".
 * Returns 0, or -1 when out of memory (nothing was sent). */
ZT_REMOTE_API int zt_remote_http_get(const char *url, const char *bearer_token,
                                     const char *if_none_match, double connect_timeout,
                                     double timeout, size_t max, int *status, char **body,
                                     size_t *len, char etag[256], int *timed_out);

/* Is the file at rf's URL still the version rf pinned at open? One HEAD
 * request in session r (which rf's reads may share), with If-None-Match: the
 * pinned ETag when it is strong: no answer has a body, so a 304 costs the
 * server no body bytes. ZT_OK: the same version (304 with no other ETag, or
 * 200 with the pinned validator and size). ZT_E_CHANGED: another version, or
 * an answer that cannot tell (405, 501, 403, a 200 without the validator...):
 * open the file again to know. ZT_E_NOT_FOUND: 404 or 410. ZT_E_NETWORK and
 * ZT_E_HTTP (408, 429, 500, 502-504): the server could not be asked, after
 * the session's retries and within its total_timeout; ZT_E_NOMEM. */
ZT_REMOTE_API zt_status zt_remote_revalidate(zt_remote *r, const zt_remote_file *rf, zt_error *err);

/* The file at url opened as bytes only (a plain file: config.json, a
 * tokenizer), not as a tensor file: one HEAD pins its validator (strong ETag,
 * else Last-Modified) and size; zt_remote_file_zt gives NULL, and only the
 * span reads (zt_remote_read_stream, zt_remote_read_spans), the accessors and
 * zt_remote_revalidate apply. url is used as given (a ztensord file's bytes
 * are at BASE/v1/files/NAME/raw). Errors: ZT_E_NOT_FOUND (404), ZT_E_HTTP
 * (another status, no Content-Length), ZT_E_NETWORK, ZT_E_NOMEM. */
ZT_REMOTE_API zt_status zt_remote_open_bytes_in(zt_remote *r, const char *url, zt_remote_file **out,
                                                zt_error *err);
/* What the server said a file opened by zt_remote_open_bytes_in hashes to
 * (Repr-Digest's sha-256) into out: false when it said nothing. */
ZT_REMOTE_API bool zt_remote_file_sha256(const zt_remote_file *rf, uint8_t out[32]);

/* Body bytes the session's transfers have received so far (answers to
 * range requests, listings, opens; retries included): what a progress
 * display shows as fetched while a batch is in flight. Any thread may call
 * it while another uses the session. */
ZT_REMOTE_API uint64_t zt_remote_bytes_received(const zt_remote *r);

/* The content mark zt pull keeps on a file it completed (the extended
 * attribute user.ztensor.content: key, then the file's mtime), by which a
 * later pull skips it without fetching: set on fd (best effort: a
 * filesystem without user xattrs keeps none), and checked on DIRFD/LEAF
 * (a regular file, not a link; size UINT64_MAX: any size). key is the
 * caller's content key (what the file's bytes are, not where they came
 * from). */
ZT_REMOTE_API void zt_remote_content_mark(int fd, const char *key);
ZT_REMOTE_API bool zt_remote_content_done(int dirfd, const char *leaf, const char *key,
                                          uint64_t size);

#ifdef __cplusplus
}
#endif

#endif
