/*
 * The connection registry: every open client connection, what it is doing and
 * since when. libmicrohttpd only has an idle timeout, which a client sending
 * one byte now and then never reaches; with this registry the main loop
 * enforces, about once a second (see docs/OPERATIONS.md):
 *  - header_timeout: a request's headers must be complete this long after the
 *    connection was accepted, or after the previous request on it ended;
 *  - min_body_rate: a request body must arrive at this many bytes per second,
 *    over 10 s windows;
 *  - headroom: near connection_limit the connections that wait for a request
 *    (idle keep-alive, or nothing sent yet), oldest first, then those draining
 *    the body of a refused request, oldest first, are closed to make room; when
 *    busy connections alone (never draining ones) fill the limit less a
 *    reserve, requests other than /healthz, /readyz and /metrics are answered
 *    503 `overloaded`;
 *  - in-place changes: a response whose file changed on disk since the catalog
 *    opened it is cut short, so no client takes a mix of old and new bytes for
 *    a complete body (and the entry is marked stale for later requests).
 * Connections are closed with shutdown(2) on their socket; libmicrohttpd then
 * sees the end of the stream and closes them itself. conns.c says why that
 * cannot hit a reused descriptor.
 */
#ifndef ZTD_CONNS_H
#define ZTD_CONNS_H

#include <microhttpd.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store/catalog.h"

typedef struct ztd_conns ztd_conns;

typedef struct ztd_conns_limits {
    unsigned connection_limit;  /* libmicrohttpd's MHD_OPTION_CONNECTION_LIMIT */
    uint64_t header_timeout_ms; /* 0: no deadline */
    uint64_t min_body_rate;     /* bytes per second; 0: none */
    int send_lowat;             /* TCP_NOTSENT_LOWAT of each TCP connection; 0: the kernel's */
} ztd_conns_limits;

/* NULL when out of memory. */
ztd_conns *ztd_conns_new(const ztd_conns_limits *lim);
/* Only once libmicrohttpd has closed every connection (after MHD_stop_daemon).
 * Accepts NULL. */
void ztd_conns_free(ztd_conns *r);

/* The MHD_OPTION_NOTIFY_CONNECTION callback; cls is the registry. */
void ztd_conns_notify(void *cls, struct MHD_Connection *c, void **socket_context,
                      enum MHD_ConnectionNotificationCode code);

/* Hooks on libmicrohttpd's threads. Each is a no-op for a connection the
 * registry could not record (out of memory). */

/* A request's headers are complete (the access handler's first call). False
 * when busy connections fill the limit less the reserve and the request is not
 * for /healthz, /readyz or /metrics: answer 503 overloaded. */
bool ztd_conns_admit(struct MHD_Connection *c, const char *url);
/* The request was refused and its body is being read and dropped before the
 * refusal is sent (http.c, send_deferred): the connection no longer counts as
 * busy, and may be closed to make room like an idle one. */
void ztd_conns_draining(struct MHD_Connection *c);
/* The handler was given n bytes of the request body; n = 0: the request is
 * complete (the handler's last call). */
void ztd_conns_body(struct MHD_Connection *c, size_t n);
/* The response being queued is read from e's file while it is sent. e must
 * stay alive until ztd_conns_done() (the request's pin). */
void ztd_conns_pin(struct MHD_Connection *c, ztd_entry *e);
/* The request is over (MHD's completion callback), before its pin is released. */
void ztd_conns_done(struct MHD_Connection *c);

/* On the main loop: about once a second, and at once when inotify reports a
 * file written in place (files_changed). Closes the connections past a
 * deadline and the responses whose file changed. Accepts NULL. */
void ztd_conns_sweep(ztd_conns *r, bool files_changed);

/* Connections waiting for a request, busy with one, and draining a refused body. */
void ztd_conns_counts(ztd_conns *r, size_t *waiting, size_t *busy, size_t *draining);

/* The limit less the reserve: room kept for health checks and new connections. */
size_t ztd_conns_mark(unsigned connection_limit);

#endif
