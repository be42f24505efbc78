/*
 * libztensor-remote's experimental API: what ztensord's pull-through cache
 * needs from an origin beyond file reads, so that no file of the server uses
 * libcurl itself. Not part of the stable interface in ztensor_remote.h: it may
 * change or go away in any release (as ztensor_experimental.h).
 */
#ifndef ZTENSOR_REMOTE_EXPERIMENTAL_H
#define ZTENSOR_REMOTE_EXPERIMENTAL_H

#include "ztensor_remote.h"

#include <stddef.h>

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

#ifdef __cplusplus
}
#endif

#endif
