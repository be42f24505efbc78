/*
 * Plain HTTP GETs to the upstream that are not file reads (those go through
 * libztensor-remote): telling what kind of server it is, and its listing.
 * Blocking; run off libmicrohttpd's threads.
 */
#ifndef ZTD_UPSTREAM_ORIGIN_HTTP_H
#define ZTD_UPSTREAM_ORIGIN_HTTP_H

#include <stddef.h>

/* ZTD_UPSTREAM_ZTENSORD when BASE/v1/files?limit=1 answers 200 with a JSON
 * listing, ZTD_UPSTREAM_PLAIN when it answers anything else, and
 * ZTD_UPSTREAM_AUTO when it cannot be reached. token may be NULL. */
int ztd_upstream_probe(const char *base, const char *token, double connect_timeout, double timeout);

/* A GET of url. *status gets the HTTP status (0 when unreachable: *timed_out
 * says whether a timeout was why), *body the body (malloc'ed, NUL-terminated,
 * at most max bytes; the caller frees it), etag (256 bytes) its ETag or "";
 * *timed_out is 1 when a timeout, 2 when a body larger than max, was why
 * there is no status.
 * if_none_match may be NULL. 0, or -1 when out of memory. */
int ztd_upstream_http_get(const char *url, const char *token, const char *if_none_match,
                          double connect_timeout, double timeout, size_t max, int *status,
                          char **body, size_t *len, char etag[256], int *timed_out);

#endif
