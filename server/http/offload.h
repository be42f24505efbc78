/*
 * Blocking work for a request, off libmicrohttpd's threads. A handler that
 * must verify, fsync or publish starts that work here: the connection is
 * suspended (MHD_suspend_connection), so the thread goes on serving its other
 * connections; the work runs on the server's work queue (core/workq.h), then
 * resumes the connection, and libmicrohttpd calls the route's handler again,
 * which finds the work done and answers. docs/internals/request.md.
 *
 * libmicrohttpd 0.9.75's rules, which this follows: suspend only from the
 * access handler; resume from any thread (it wakes the connection's worker
 * through its inter-thread channel, MHD_USE_ITC); never stop the daemon with
 * a connection suspended (ztd_http_stop drains the queue first).
 */
#ifndef ZTD_OFFLOAD_H
#define ZTD_OFFLOAD_H

#include <microhttpd.h>
#include <stdbool.h>

#include "core/server.h"
#include "core/workq.h"

typedef struct ztd_offload {
    ztd_job job;
    void (*fn)(struct ztd_offload *o); /* the work, on a queue thread */
    struct MHD_Connection *c;
    bool started; /* the handler's own: ztd_offload_start was called */
    int done;     /* atomic: fn has run */
} ztd_offload;

/* Run fn(o) off this thread, with the connection suspended until it has run;
 * o (usually inside the request's state) must live until the request ends.
 * false: return MHD_YES now, and answer when the handler is called again.
 * true: fn ran here (there is no work queue): answer now. A handler does
 *     if (!o->started && !ztd_offload_start(s, c, o, fn))
 *         return MHD_YES;
 *     if (!ztd_offload_done(o))
 *         return MHD_YES;
 *     ... answer from what fn left ... */
bool ztd_offload_start(ztd_server *s, struct MHD_Connection *c, ztd_offload *o,
                       void (*fn)(ztd_offload *o));
/* The same on the upstream's own queue (s->waitq), for opens and waits on
 * an upstream: they may take upstream_timeout each, and must not hold the
 * queue that publishes uploads. */
bool ztd_offload_wait(ztd_server *s, struct MHD_Connection *c, ztd_offload *o,
                      void (*fn)(ztd_offload *o));
/* Has the work run? */
bool ztd_offload_done(const ztd_offload *o);

#endif
