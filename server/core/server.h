/*
 * What a running ztensord is made of, as its parts see it: the configuration
 * and the long-lived objects that main.c creates and route handlers use.
 * Only pointers, so that this header needs none of theirs.
 */
#ifndef ZTD_SERVER_H
#define ZTD_SERVER_H

#include <stdbool.h>

struct ztd_config;
struct ztd_catalog;
struct ztd_secret_table;
struct ztd_sessions;
struct ztd_conns;
struct ztd_staging;
struct ztd_uploads;
struct ztd_publisher;
struct ztd_workq;
struct ztd_unix_id;
struct ztd_upstream;
struct ztd_prefetch;
struct ztd_route_def;
struct MHD_Daemon;

typedef struct ztd_server {
    const struct ztd_config *cfg;
    struct ztd_catalog *catalog;
    struct ztd_secret_table *tokens; /* http/auth.h's ztd_tokens; NULL without tokens_file */
    struct ztd_staging *staging;     /* NULL: uploads are disabled */
    struct ztd_uploads *uploads;     /* upload slots and limits */
    struct ztd_sessions *sessions;   /* component upload sessions */
    struct ztd_publisher *publisher; /* preconditions, rename, catalog update */
    struct ztd_workq *workq;         /* blocking work, off libmicrohttpd's threads (NULL: none) */
    struct ztd_workq *waitq; /* with upstream: opens and waits on the upstream, never on workq,
                                so that a slow upstream cannot stall publishing (NULL: workq) */
    struct ztd_upstream *upstream; /* --upstream (upstream/upstream.h), or NULL */
    struct ztd_prefetch *prefetch; /* with upstream (upstream/prefetch.h), else NULL */
    /* The front's route table, indexed by route id (http/routes.h), set by main.c: */
    const struct ztd_route_def *routes;
    /* Set by ztd_http_start: */
    struct MHD_Daemon *daemon;
    struct ztd_conns *conns; /* every open connection (http/conns.h) */
    int listen_fd;
    unsigned port;               /* 0 on a Unix socket */
    struct ztd_unix_id *unix_id; /* the socket file of `listen unix:PATH`, removed at stop */
    char *tls_cert, *tls_key;    /* PEM text when serving HTTPS */
    int inflight;                /* atomic: requests between arrival and completion */
    bool draining;               /* atomic: shutting down */
} ztd_server;

#endif
