/*
 * The state of one request as the HTTP layer keeps it, from the first call of
 * the access handler to libmicrohttpd's completion callback: timing and what
 * the access log needs, the route, a refusal held back until the body is read
 * (docs/internals/request.md), and the route handler's own state, which the
 * layer only frees. Route handlers read the route match and own `ctx`.
 */
#ifndef ZTD_REQUEST_H
#define ZTD_REQUEST_H

#include <microhttpd.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "core/errors.h"
#include "http/headers.h"
#include "http/router.h"

struct ztd_route_def;

/* How a front dresses the byte answers of one request (hf/): a strong
 * validator of its own in place of the file's, and headers of its own added
 * to 200, 206 and HEAD answers. Owned by the front's state (ztd_req.front). */
typedef struct ztd_dress {
    char etag[96]; /* with quotes; "" keeps the file's */
    bool (*add_headers)(struct MHD_Response *resp, const void *ctx); /* false: one failed */
    const void *ctx;
} ztd_dress;

typedef struct ztd_req {
    struct timespec t0; /* arrival, wall clock (log time) */
    uint64_t t0_us;     /* arrival, monotonic (duration) */
    char *target;       /* request target as sent, query cut off: for the access log */
    const char *path;   /* what is routed: target, or its path after an absolute-form
                           authority (framing.h) */
    char method[16];
    char request_id[ZTD_REQUEST_ID_MAX + 1];
    bool send_request_id;   /* on every response, not only on errors (request_id_header) */
    ztd_route_match *match; /* the router's result */
    const struct ztd_route_def *route; /* its row in the route table; NULL: no route */
    int status;                        /* answered with */
    uint64_t bytes;                    /* body bytes of the answer */
    uint64_t acked0;                   /* connection bytes the client had acknowledged at arrival */
    bool started;                      /* the access handler has run (the state is born before) */
    bool counted;                      /* in the in-flight count */
    bool responded;                    /* a response is queued: ignore the rest of the body */
    bool in_data;                      /* inside the body callback: responses are deferred */
    bool defer_early;                  /* first call, and the body comes regardless */
    struct MHD_Response *deferred;     /* refusal held back until the body has been read */
    unsigned deferred_status;
    uint64_t deferred_ms; /* monotonic: when the refusal was held back */
    uint64_t drained;     /* body bytes dropped after a deferred refusal */
    /* The route handler's state, freed by ctx_free (if set) when the request ends,
     * completed or not. */
    void *ctx;
    void (*ctx_free)(void *ctx);
    char *joined[4]; /* header lines joined by ztd_header_list, freed at the end */
    /* A front's own state beside ctx, which the shared read answers
     * (source_answer.h) take over: freed by front_free when the request ends. */
    void *front;
    void (*front_free)(void *front);
    const ztd_dress *dress; /* NULL: byte answers as /v1 makes them */
    /* A front's form for the errors of the layers it shares (source_answer.h,
     * object_answer.h: a file missing upstream, a wait that failed): given
     * the error and its message, it queues the answer. NULL: /v1's JSON. */
    enum MHD_Result (*error_answer)(struct MHD_Connection *c, struct ztd_req *r, ztd_err e,
                                    const char *msg);
} ztd_req;

/* Hand the request's state to ctx (freed with ctx_free at the end); whatever
 * it held before is freed now. */
void ztd_req_set_ctx(ztd_req *r, void *ctx, void (*ctx_free)(void *ctx));

/* The request's state if a handler set it with this ctx_free (the state's
 * kind), else NULL: a handler called again finds what it left. */
void *ztd_req_ctx_of(const ztd_req *r, void (*ctx_free)(void *ctx));

#endif
