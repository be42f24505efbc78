/*
 * The route table: for each route the router knows (router.h), who answers
 * it and on what terms. http.c reads it and nothing else decides:
 *  - scope: the token scope needed (auth.h), checked once by http.c: before
 *    the body for routes that take one, so that a refusal comes before the
 *    client sends it; after the request otherwise (docs/internals/request.md);
 *  - body: what the route does with a request body;
 *  - begin, data: for routes with a body, called after the head (begin may
 *    refuse) and with each piece of the body (data);
 *  - query: the route reads query parameters, so a name given twice is a 400
 *    (query.h), checked with the scope;
 *  - handler: the request is complete: answer it. It may be called again,
 *    when the answer waits for work done off libmicrohttpd's threads
 *    (http/offload.h).
 * Handlers live in handlers/, one file per family, and never call each other;
 * the /v1 table is handlers/routes.c's, given to http.c as ztd_server.routes.
 */
#ifndef ZTD_ROUTES_H
#define ZTD_ROUTES_H

#include <microhttpd.h>
#include <stdbool.h>
#include <stddef.h>

#include "core/server.h"
#include "http/auth.h"
#include "http/handler.h"
#include "http/request.h"
#include "http/router.h"

typedef enum ztd_req_body {
    ZTD_REQ_BODY_NONE,   /* none taken: a body sent anyway is read and dropped */
    ZTD_REQ_BODY_JSON,   /* a small JSON document, collected (json_body.h) */
    ZTD_REQ_BODY_STREAM, /* streamed to data() as it arrives */
} ztd_req_body;

typedef struct ztd_route_def {
    ztd_route_id id;
    const char *methods; /* as the router accepts them for this route */
    ztd_scope scope;     /* ZTD_SCOPE_NONE: no token needed */
    ztd_req_body body;
    ztd_handler *begin;     /* may be NULL */
    ztd_data_handler *data; /* NULL unless body is not NONE */
    ztd_handler *handler;
    bool upload; /* counted in ztensord_uploads_total */
    bool query;  /* reads query parameters: each at most once (query.h) */
} ztd_route_def;

/* The row of route id in a front's table of ZTD_ROUTE_COUNT rows (indexed by
 * route id); NULL for ZTD_ROUTE_NONE, out-of-range values and rows without a
 * handler. */
static inline const ztd_route_def *ztd_route_def_of(const ztd_route_def *table, ztd_route_id id)
{
    if (!table || (unsigned)id >= ZTD_ROUTE_COUNT || !table[id].handler)
        return NULL;
    return &table[id];
}

#endif
