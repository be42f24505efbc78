/*
 * query.h: the query parameters of a route that reads them, each given at most once.
 *
 * libmicrohttpd keeps every "name=value" of the query, and a handler that looks a name up
 * takes the first while one that walks them all takes the last: "?limit=1&limit=10000"
 * would mean one thing to a proxy or a cache key and another to the server. So a route that
 * reads its query (routes.h, `query`) refuses a request that names a parameter twice, with
 * 400 naming it. Names are compared after percent-decoding ("limit" and "%6Cimit" are the
 * same); empty names ("?&", "?=x") are not parameters. At most ZTD_QUERY_MAX parameters are
 * taken (the routes read two or three), which keeps the comparison cheap: more is a 400 too.
 * Pure: unit tests (tests/server/test_query.c) reach every branch without a socket.
 */
#ifndef ZTD_QUERY_H
#define ZTD_QUERY_H

#include <stddef.h>

#define ZTD_QUERY_MAX 32

typedef enum ztd_query_status {
    ZTD_QUERY_OK = 0,
    ZTD_QUERY_DUPLICATE = 1, /* bad names the parameter given twice (its second spelling) */
    ZTD_QUERY_TOO_MANY = 2,  /* more than ZTD_QUERY_MAX parameters */
} ztd_query_status;

typedef struct ztd_query_names {
    ztd_query_status status; /* the first problem found; later names change nothing */
    const char *bad;         /* DUPLICATE: the name as sent, not NUL-terminated */
    size_t bad_len;
    size_t n;
    const char *name[ZTD_QUERY_MAX]; /* borrowed from the caller */
    size_t len[ZTD_QUERY_MAX];
} ztd_query_names;

void ztd_query_begin(ztd_query_names *q);
/* One parameter name as sent (still percent-encoded, len bytes, no NUL needed); it must
 * outlive q. Returns q->status. */
ztd_query_status ztd_query_name(ztd_query_names *q, const char *name, size_t len);
/* The bad name for an error message: at most 64 bytes of it, each byte outside printable
 * ASCII (and '"', '\\') written as '?'; NUL-terminated in out (cap >= 1). */
void ztd_query_bad_name(const ztd_query_names *q, char *out, size_t cap);

#endif
