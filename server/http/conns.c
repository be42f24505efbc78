/*
 * The connection registry (see conns.h): a record per connection, in one of
 * three lists under one mutex: `waiting` (for a request's headers) in the order
 * they started waiting, so the oldest is the head, `busy` (a request is being
 * received, handled or answered) and `draining` (a refused request whose body
 * is read and dropped before the refusal goes out), oldest first too.
 *
 * Why shutdown(fd) from another thread cannot hit a reused descriptor
 * (libmicrohttpd 0.9.75, src/microhttpd/daemon.c):
 *  1. A record is added by the MHD_CONNECTION_NOTIFY_STARTED callback, which
 *     internal_add_connection() makes once the socket is the connection's, and
 *     is removed, under the registry's mutex, by MHD_CONNECTION_NOTIFY_CLOSED.
 *  2. libmicrohttpd closes a connection's socket only after that callback has
 *     returned: MHD_cleanup_connections() calls it, then later
 *     MHD_socket_close_chk_(pos->socket_fd); the failure path of
 *     internal_add_connection() likewise notifies CLOSED before its close.
 *     The other closes of a client socket (new_connection_close_(), refusals
 *     at accept) are of sockets that never got STARTED. MHD_connection_close_()
 *     only shuts the socket down. Upgraded connections (which close elsewhere)
 *     are never created: the daemon has no MHD_ALLOW_UPGRADE.
 *  3. shutdown() is only called here with the mutex held, on a record found in
 *     a list. By 1, its CLOSED callback has not returned yet (it would block on
 *     the mutex first), so by 2 the descriptor is still that connection's
 *     socket: no close, hence no reuse, can happen between finding the record
 *     and the shutdown. A record that was shut down leaves both lists
 *     (state DOOMED), so it is never shut down twice.
 * After shutdown(SHUT_RDWR), the next read returns 0 and the next send fails
 * (EPIPE), and epoll reports the socket (EPOLLIN|EPOLLOUT|EPOLLHUP), so
 * libmicrohttpd's thread closes the connection whatever state it is in,
 * including the stall described at ztd_conns_sweep().
 */
#include "http/conns.h"
#include "core/clock.h"
#include "core/log.h"
#include "core/metrics.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>

/* min_body_rate is measured over windows this long; the first one, from the
 * end of the headers, is the grace period for a client to start its body. */
#define BODY_WINDOW_MS 10000
/* Pinned files are fstat()ed at least this often without an inotify event. */
#define FILE_CHECK_MS 1000

typedef enum conn_state {
    WAITING,   /* for a request: after accept, or between keep-alive requests */
    RECEIVING, /* headers complete, the body (if any) arriving */
    ANSWERING, /* the request is complete: being handled and answered */
    DRAINING,  /* refused; its body is read and dropped, then the refusal sent */
    DOOMED,    /* shut down here; libmicrohttpd has yet to close it */
} conn_state;

typedef struct conn {
    struct conn *prev, *next; /* in a list; unlinked when DOOMED */
    ztd_conns *reg;
    int fd;
    conn_state state;
    uint64_t since_ms;   /* WAITING: start of the header deadline; RECEIVING: of the window */
    uint64_t body, mark; /* RECEIVING: body bytes so far, and when the window started */
    uint64_t seen;       /* RECEIVING: body bytes at the previous sweep */
    bool drained;        /* DRAINING: the body is all read, the refusal going out */
    ztd_entry *pin;      /* the file the response is read from, or NULL */
    char addr[INET6_ADDRSTRLEN];
} conn;

struct ztd_conns {
    pthread_mutex_t mu;
    conn waiting, busy, draining; /* sentinels of circular lists */
    size_t nwaiting, nbusy, ndraining;
    size_t mark; /* more live connections than this: evict; more busy: 503 */
    uint64_t header_timeout_ms, min_body_rate;
    int send_lowat;
    uint64_t next_file_check;
    uint64_t cuts[ZTD_CUT_REASONS]; /* since the last log line */
    char changed[128];              /* a file that changed under a response, for the log */
};

static const char *const k_why[ZTD_CUT_REASONS] = {
    [ZTD_CUT_HEADER_TIMEOUT] = "no complete request headers within header_timeout",
    [ZTD_CUT_SLOW_BODY] = "request body slower than min_body_rate",
    [ZTD_CUT_EVICTED] = "idle or draining a refused body, closed near connection_limit",
    [ZTD_CUT_FILE_CHANGED] = "response aborted: its file changed on disk",
    [ZTD_CUT_CLIENT_GONE] = "the client closed its side in the middle of a request body",
};

size_t ztd_conns_mark(unsigned connection_limit)
{
    /* A sixteenth of the limit, 1 to 64 connections (none when there is one slot). */
    size_t reserve = connection_limit / 16;
    if (reserve > 64)
        reserve = 64;
    if (reserve < 1 && connection_limit > 1)
        reserve = 1;
    return connection_limit - reserve;
}

static void list_init(conn *head)
{
    head->prev = head->next = head;
}

static void list_add_tail(conn *head, conn *x)
{
    x->prev = head->prev;
    x->next = head;
    head->prev->next = x;
    head->prev = x;
}

static void list_del(conn *x)
{
    x->prev->next = x->next;
    x->next->prev = x->prev;
    x->prev = x->next = NULL;
}

ztd_conns *ztd_conns_new(const ztd_conns_limits *lim)
{
    ztd_conns *r = calloc(1, sizeof(*r));
    if (!r)
        return NULL;
    pthread_mutex_init(&r->mu, NULL);
    list_init(&r->waiting);
    list_init(&r->busy);
    list_init(&r->draining);
    r->mark = ztd_conns_mark(lim->connection_limit);
    r->header_timeout_ms = lim->header_timeout_ms;
    r->min_body_rate = lim->min_body_rate;
    r->send_lowat = lim->send_lowat;
    return r;
}

void ztd_conns_free(ztd_conns *r)
{
    if (!r)
        return;
    pthread_mutex_destroy(&r->mu);
    free(r);
}

/* ---- under the mutex */

/* Put x (in no list) in state st, at the tail of that state's list. */
static void link_conn(ztd_conns *r, conn *x, conn_state st)
{
    x->state = st;
    if (st == WAITING) {
        list_add_tail(&r->waiting, x);
        r->nwaiting++;
    } else if (st == DRAINING) {
        list_add_tail(&r->draining, x);
        r->ndraining++;
    } else {
        list_add_tail(&r->busy, x);
        r->nbusy++;
    }
}

static void set_waiting(ztd_conns *r, conn *x, uint64_t now)
{
    link_conn(r, x, WAITING);
    x->since_ms = now;
}

static void unlink_conn(ztd_conns *r, conn *x)
{
    if (x->state == DOOMED)
        return;
    list_del(x);
    if (x->state == WAITING)
        r->nwaiting--;
    else if (x->state == DRAINING)
        r->ndraining--;
    else
        r->nbusy--;
}

/* Close the connection (see the top of the file for why this fd is its own). */
static void cut(ztd_conns *r, conn *x, ztd_conn_cut why)
{
    unlink_conn(r, x);
    x->state = DOOMED;
    shutdown(x->fd, SHUT_RDWR);
    r->cuts[why]++;
    ztd_metrics_conn_cut(why);
    /* Per connection only at debug level: this runs under the mutex. */
    ztd_log(ZTD_LOG_DEBUG, "connection from %s closed: %s", x->addr, k_why[why]);
}

/* ---- libmicrohttpd's callbacks and hooks */

static void client_addr(struct MHD_Connection *c, char *buf, size_t cap)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    buf[0] = 0;
    const struct sockaddr *sa = ci ? ci->client_addr : NULL;
    if (sa && sa->sa_family == AF_INET)
        inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, buf, (socklen_t)cap);
    else if (sa && sa->sa_family == AF_INET6)
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, buf, (socklen_t)cap);
    else if (sa && sa->sa_family == AF_UNIX)
        snprintf(buf, cap, "unix:");
}

/* At most `lowat` bytes not yet sent wait in the socket: a write then returns
 * early and epoll reports the socket writable only once the kernel has sent
 * most of them. Without it, the unsent rest of each 128 KiB sendfile() of
 * libmicrohttpd waits in a socket buffer of up to 4 MiB and is sent from the
 * softirq that takes the peer's ACKs, on the peer's core when the peer is on
 * this machine (docs/PERFORMANCE.md, "TCP_NOTSENT_LOWAT"). A Unix socket
 * refuses the option (ENOPROTOOPT), which changes nothing. */
static void set_lowat(int fd, int lowat)
{
    if (lowat > 0)
        (void)setsockopt(fd, IPPROTO_TCP, TCP_NOTSENT_LOWAT, &lowat, sizeof(lowat));
}

static void started(ztd_conns *r, struct MHD_Connection *c, void **socket_context)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (ci)
        set_lowat(ci->connect_fd, r->send_lowat);
    conn *x = ci ? calloc(1, sizeof(*x)) : NULL;
    *socket_context = x;
    if (!x)
        return; /* not tracked: no deadline, but served */
    x->reg = r;
    x->fd = ci->connect_fd;
    client_addr(c, x->addr, sizeof(x->addr));
    pthread_mutex_lock(&r->mu);
    set_waiting(r, x, ztd_now_ms());
    /* Near the limit, make room: the connection that has waited longest for a
     * request goes (never the new one, the tail), else the oldest draining a
     * refused body (its client only loses the refusal). One per new connection
     * keeps the count at the mark while idle or refused clients keep coming. */
    if (r->nwaiting + r->nbusy + r->ndraining > r->mark) {
        if (r->nwaiting > 1)
            cut(r, r->waiting.next, ZTD_CUT_EVICTED);
        else if (r->ndraining)
            cut(r, r->draining.next, ZTD_CUT_EVICTED);
    }
    pthread_mutex_unlock(&r->mu);
}

void ztd_conns_notify(void *cls, struct MHD_Connection *c, void **socket_context,
                      enum MHD_ConnectionNotificationCode code)
{
    ztd_conns *r = cls;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        started(r, c, socket_context);
        return;
    }
    conn *x = *socket_context;
    if (!x)
        return;
    pthread_mutex_lock(&r->mu);
    unlink_conn(r, x);
    pthread_mutex_unlock(&r->mu);
    free(x);
    *socket_context = NULL;
}

static conn *conn_of(struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci ? ci->socket_context : NULL;
}

/* c's record with its registry locked, or NULL (nothing locked) when c has
 * none. */
static conn *locked(struct MHD_Connection *c)
{
    conn *x = conn_of(c);
    if (x)
        pthread_mutex_lock(&x->reg->mu);
    return x;
}

static bool open_route(const char *url)
{
    return !strcmp(url, "/healthz") || !strcmp(url, "/readyz") || !strcmp(url, "/metrics");
}

bool ztd_conns_admit(struct MHD_Connection *c, const char *url)
{
    conn *x = locked(c);
    if (!x)
        return true;
    ztd_conns *r = x->reg;
    if (x->state == WAITING) {
        unlink_conn(r, x);
        link_conn(r, x, RECEIVING);
        x->since_ms = ztd_now_ms();
        x->body = x->mark = 0;
    }
    bool over = r->nbusy > r->mark;
    pthread_mutex_unlock(&r->mu);
    return !over || open_route(url);
}

void ztd_conns_draining(struct MHD_Connection *c)
{
    conn *x = locked(c);
    if (!x)
        return;
    ztd_conns *r = x->reg;
    if (x->state == RECEIVING) {
        unlink_conn(r, x);
        link_conn(r, x, DRAINING);
    }
    pthread_mutex_unlock(&r->mu);
}

void ztd_conns_body(struct MHD_Connection *c, size_t n)
{
    conn *x = locked(c);
    if (!x)
        return;
    if (x->state == RECEIVING || x->state == DRAINING) {
        if (n)
            x->body += n;
        else if (x->state == DRAINING)
            x->drained = true; /* still evictable while the refusal goes out */
        else
            x->state = ANSWERING;
    }
    pthread_mutex_unlock(&x->reg->mu);
}

void ztd_conns_pin(struct MHD_Connection *c, ztd_entry *e)
{
    conn *x = locked(c);
    if (!x)
        return;
    x->pin = e;
    pthread_mutex_unlock(&x->reg->mu);
}

void ztd_conns_done(struct MHD_Connection *c)
{
    conn *x = locked(c);
    if (!x)
        return;
    ztd_conns *r = x->reg;
    x->pin = NULL;
    if (x->state == RECEIVING || x->state == ANSWERING || x->state == DRAINING) {
        unlink_conn(r, x);
        x->drained = false;
        set_waiting(r, x, ztd_now_ms()); /* the next request's header deadline starts now */
    }
    pthread_mutex_unlock(&r->mu);
}

/* ---- the sweep */

/* Are there bytes in the socket that the server has not read yet? Then a
 * deadline missed is the server's delay (a worker busy with a publish, a
 * loaded machine), not the client's slowness: the client is not cut. */
static bool server_behind(const conn *x)
{
    int pending = 0;
    return ioctl(x->fd, FIONREAD, &pending) == 0 && pending > 0;
}

/* Has the client of a body that made no progress since the last sweep closed
 * its side? libmicrohttpd 0.9.75 takes a short read as "drained" and, with
 * edge-triggered epoll, never reads a FIN that came in the same wake-up
 * (connection.c, recv_param_adapter): the upload would hold its slot and
 * staging file until connection_timeout. A peek that reads 0 bytes is a FIN
 * with nothing left to read; more bytes pending are only in flight. */
static bool client_gone(conn *x)
{
    if (x->body != x->seen) {
        x->seen = x->body;
        return false;
    }
    char b;
    return recv(x->fd, &b, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
}

/* Is a body arriving: one being received, or one being drained? */
static bool body_arriving(const conn *x)
{
    return x->state == RECEIVING || (x->state == DRAINING && !x->drained);
}

/* The connections of the busy or the draining list (head). */
static void sweep_list(ztd_conns *r, conn *head, uint64_t now, bool check_files)
{
    for (conn *x = head->next, *next; x != head; x = next) {
        next = x->next;
        if (body_arriving(x) && client_gone(x)) {
            cut(r, x, ZTD_CUT_CLIENT_GONE);
            continue;
        }
        uint64_t elapsed = now - x->since_ms;
        if (body_arriving(x) && r->min_body_rate && elapsed >= BODY_WINDOW_MS) {
            if ((double)(x->body - x->mark) * 1000 < (double)r->min_body_rate * (double)elapsed &&
                !server_behind(x)) {
                cut(r, x, ZTD_CUT_SLOW_BODY);
                continue;
            }
            x->since_ms = now;
            x->mark = x->body;
        }
        if (x->pin && check_files && ztd_entry_changed(x->pin)) {
            if (!r->changed[0])
                snprintf(r->changed, sizeof(r->changed), "%s", x->pin->name);
            cut(r, x, ZTD_CUT_FILE_CHANGED);
        }
    }
}

/* Once per sweep, after the mutex is released: a line per reason, not per
 * connection (a flood would otherwise write a line per connection). */
static void log_cuts(const uint64_t cuts[ZTD_CUT_REASONS], const char *changed)
{
    for (int i = 0; i < ZTD_CUT_REASONS; i++) {
        if (!cuts[i])
            continue;
        if (i == ZTD_CUT_FILE_CHANGED)
            ztd_log(ZTD_LOG_WARN,
                    "%llu responses aborted: \"%s\" (or another file) changed on disk while "
                    "being sent; replace served files by rename, never in place",
                    (unsigned long long)cuts[i], changed);
        else
            ztd_log(ZTD_LOG_INFO, "closed %llu connections: %s", (unsigned long long)cuts[i],
                    k_why[i]);
    }
}

/* A file cut short under a sendfile() response: sendfile returns 0 at the
 * end of the file, libmicrohttpd 0.9.75 (MHD_send_sendfile_) takes that as
 * "nothing sent, not write-ready" and waits for an epoll edge that never comes,
 * until connection_timeout; if the file grows again meanwhile (cp over it:
 * truncate, then write), the response continues with the new bytes. Cutting
 * the connection here ends both. */
void ztd_conns_sweep(ztd_conns *r, bool files_changed)
{
    if (!r)
        return;
    /* The clock is read under the lock: read before it, a connection that began
     * its request meanwhile would have a later since_ms, now - since_ms would
     * wrap, and a request that had just arrived would be cut (seen in the soak). */
    pthread_mutex_lock(&r->mu);
    uint64_t now = ztd_now_ms();
    while (r->header_timeout_ms && r->nwaiting &&
           now - r->waiting.next->since_ms >= r->header_timeout_ms) {
        conn *x = r->waiting.next;
        if (server_behind(x)) { /* not the client's delay: a new deadline, at the back */
            unlink_conn(r, x);
            set_waiting(r, x, now);
            continue;
        }
        cut(r, x, ZTD_CUT_HEADER_TIMEOUT);
    }
    bool check_files = files_changed || now >= r->next_file_check;
    if (check_files)
        r->next_file_check = now + FILE_CHECK_MS;
    sweep_list(r, &r->busy, now, check_files);
    sweep_list(r, &r->draining, now, false);
    uint64_t cuts[ZTD_CUT_REASONS];
    char changed[sizeof(r->changed)];
    memcpy(cuts, r->cuts, sizeof(cuts));
    memcpy(changed, r->changed, sizeof(changed));
    memset(r->cuts, 0, sizeof(r->cuts));
    r->changed[0] = 0;
    pthread_mutex_unlock(&r->mu);
    log_cuts(cuts, changed);
}

void ztd_conns_counts(ztd_conns *r, size_t *waiting, size_t *busy, size_t *draining)
{
    *waiting = *busy = *draining = 0;
    if (!r)
        return;
    pthread_mutex_lock(&r->mu);
    *waiting = r->nwaiting;
    *busy = r->nbusy;
    *draining = r->ndraining;
    pthread_mutex_unlock(&r->mu);
}
