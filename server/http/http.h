/*
 * libmicrohttpd glue: the daemon, the two-phase access handler, per-request
 * state, response helpers (JSON errors, common headers) and the access log.
 * Route handlers live in serve_files.c; they only see this interface.
 */
#ifndef ZTD_HTTP_H
#define ZTD_HTTP_H

#include <microhttpd.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "store/catalog.h"
#include "core/config.h"
#include "http/headers.h"
#include "http/router.h"

typedef struct ztd_server {
    const ztd_config *cfg;
    ztd_catalog *catalog;
    struct MHD_Daemon *daemon;
    int listen_fd;
    unsigned port;
    int inflight;                  /* atomic: requests between arrival and completion */
    bool draining;                 /* atomic: shutting down */
    struct ztd_tokens *tokens;     /* NULL without tokens_file */
    struct ztd_sessions *sessions; /* component upload sessions */
    struct ztd_conns *conns;       /* every open connection (conns.h) */
    pthread_mutex_t publish_mu;    /* preconditions + rename + rescan, atomically */
    char *tls_cert, *tls_key;      /* PEM text when serving HTTPS */
    int uploads_active;            /* atomic: whole-file PUTs and open sessions */
    struct ztd_staging *staging;   /* NULL: uploads are disabled */
} ztd_server;

typedef struct ztd_upload ztd_upload;

typedef struct ztd_req {
    struct timespec t0; /* arrival, wall clock (log time) */
    uint64_t t0_us;     /* arrival, monotonic (duration) */
    ztd_route_match *match;
    ztd_entry *pin; /* released when MHD is done with the response */
    int status;
    uint64_t bytes;
    uint64_t acked0; /* connection bytes the client had acknowledged at arrival */
    char *target;    /* request target as sent, query cut off: for the access log */
    char method[16];
    char request_id[ZTD_REQUEST_ID_MAX + 1];
    void *owned;                   /* malloc'ed body bytes freed at completion */
    bool responded;                /* a response is queued: ignore the rest of the body */
    bool in_data;                  /* inside the body callback: responses are deferred */
    struct MHD_Response *deferred; /* refusal held back until the body has been read */
    unsigned deferred_status;
    uint64_t drained; /* body bytes dropped after a deferred error */
    bool body_route;  /* PUT/POST/DELETE routes handled by upload.c */
    ztd_upload *up;   /* whole-file PUT state */
    void *sreq;       /* upload-session component PUT state */
    char *body;       /* small JSON request bodies */
    size_t body_len, body_cap;
    bool counted;

    const char *path;     /* what is routed: target, or its path after an absolute-form
                             authority (framing.h) */
    bool started;         /* the access handler has run (the state is born before it) */
    bool defer_early;     /* first call, and the body comes regardless: defer refusals */
    uint64_t deferred_ms; /* monotonic: when the refusal was held back */
} ztd_req;

/* Bind the listen address and start the daemon: 0, -1, or ZTD_HTTP_CONFIG
 * when the configuration is at fault (TLS files). */
#define ZTD_HTTP_CONFIG (-2)
int ztd_http_start(ztd_server *s);
/* Stop accepting, wait up to the grace period for in-flight requests, stop. */
void ztd_http_stop(ztd_server *s);

/* Per-request route matches, recycled per thread. */
ztd_route_match *ztd_match_new(void);
void ztd_match_free(ztd_route_match *m);

/* Route handler (serve_files.c). */
enum MHD_Result ztd_serve(ztd_server *s, struct MHD_Connection *c, ztd_req *r, const char *method);

#endif
