/*
 * libmicrohttpd glue. The access handler is two-phase: the first call for a
 * request only allocates its state and returns MHD_YES; the response is queued
 * on the second call. Queuing on the first call makes MHD close the
 * connection and costs 4-6x throughput (docs/internals/request.md).
 */
#include "http/http.h"
#include "core/clock.h"
#include "core/config.h"
#include "http/conns.h"
#include "http/framing.h"
#include "http/head_wire.h"
#include "http/headers.h"
#include "core/hex.h"
#include "core/log.h"
#include "core/metrics.h"
#include "core/workq.h"
#include "http/mhd_log.h"
#include "http/query.h"
#include "http/body.h"
#include "http/response.h"
#include "http/request_auth.h"
#include "http/routes.h"
#include "http/tcp_acked.h"
#include "http/unix_listen.h"
#include "store/catalog.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

/* Route matches are ~16 KiB (room for 4 KiB names); a malloc/free of that per
 * request let glibc return and regrow its heap top, a measurable share of a
 * small GET. Each MHD worker thread keeps one spare instead. */
static pthread_key_t g_spare_key;
static pthread_once_t g_spare_once = PTHREAD_ONCE_INIT;

static void spare_key_init(void)
{
    pthread_key_create(&g_spare_key, free);
}

static ztd_route_match *ztd_match_new(void)
{
    pthread_once(&g_spare_once, spare_key_init);
    ztd_route_match *m = pthread_getspecific(g_spare_key);
    if (m) {
        pthread_setspecific(g_spare_key, NULL);
        return m;
    }
    return malloc(sizeof(*m));
}

static void ztd_match_free(ztd_route_match *m)
{
    if (!m)
        return;
    pthread_once(&g_spare_once, spare_key_init);
    if (!pthread_getspecific(g_spare_key) && pthread_setspecific(g_spare_key, m) == 0)
        return;
    free(m);
}

/* Keep the URL exactly as sent: the router decodes it (so %2F and / can be told apart). */
static size_t keep_escaped(void *cls, struct MHD_Connection *c, char *s)
{
    (void)cls;
    (void)c;
    return strlen(s);
}

/* X-Request-Id: the client's when it is a sane token (true), else 16 random hex digits. */
static bool request_id(struct MHD_Connection *c, char out[ZTD_REQUEST_ID_MAX + 1])
{
    const char *v = ztd_header(c, "X-Request-Id");
    if (ztd_request_id_valid(v)) {
        memcpy(out, v, strlen(v) + 1);
        return true;
    }
    static __thread uint64_t state;
    if (!state && getentropy(&state, sizeof(state)) != 0)
        state = (uint64_t)(uintptr_t)out ^ (uint64_t)time(NULL);
    state = state * 6364136223846793005ull + 1442695040888963407ull; /* PCG step */
    uint64_t x = state ^ (state >> 29);
    for (int i = 15; i >= 0; i--, x >>= 4)
        out[i] = ztd_hex_digit((unsigned)x);
    out[16] = 0;
    return false;
}

/* Called by libmicrohttpd once per request, with the request target as sent (query
 * included; a NUL byte ends it early) before it splits and cuts it: the per-request state
 * is born here, and libmicrohttpd hands it to every call of the access handler. */
static void *uri_logged(void *cls, const char *uri, struct MHD_Connection *c)
{
    (void)cls;
    (void)c;
    ztd_req *r = calloc(1, sizeof(*r));
    if (r)
        r->target = strdup(uri); /* NULL: the first call fails the request */
    return r;
}

/* The target's length on the wire, NUL bytes included. libmicrohttpd 0.9.x parses the
 * request line in place and gives the handler pointers into it: the target (url) runs up
 * to the NUL that replaced the space before the version "HTTP/x.y" (connection.c,
 * parse_initial_message_line), whatever NUL bytes it holds. 1.0 refuses a NUL in the
 * request line itself and lays the line out differently, so there the length seen is
 * taken as the length sent. */
static size_t target_sent_len(const char *url, const char *version, const char *target)
{
    size_t seen = strlen(target);
#if MHD_VERSION < 0x01000000
    if (url && version && version > url + seen && version[-1] == '\0')
        return (size_t)(version - url) - 1;
#else
    (void)url;
    (void)version;
#endif
    return seen;
}

/* Headers go to framing one behind: a value's length on the wire is known once the next
 * header's name (or the end of the head) shows where its line ended (head_wire.h). */
typedef struct head_walk {
    ztd_framing *f;
    const char *end; /* the end of the head in libmicrohttpd's buffer, or NULL */
    const char *key, *value;
    size_t key_size, value_size;
} head_walk;

static void flush_header(head_walk *w, const char *next, bool last)
{
    if (!w->key)
        return;
    size_t n = w->value_size;
#if MHD_VERSION < 0x01000000
    if (w->end)
        n = ztd_value_wire_len(w->value, w->value_size, next, last);
#else
    (void)next;
    (void)last;
#endif
    ztd_framing_header(w->f, w->key, w->key_size, w->value, n);
    w->key = NULL;
}

static enum MHD_Result add_header(void *cls, enum MHD_ValueKind kind, const char *key,
                                  size_t key_size, const char *value, size_t value_size)
{
    (void)kind;
    head_walk *w = cls;
    flush_header(w, key, false);
    w->key = key;
    w->key_size = key_size;
    w->value = value;
    w->value_size = value_size;
    return MHD_YES;
}

/* Where the head ends in libmicrohttpd's buffer: it starts at the method. */
static const char *head_end(struct MHD_Connection *c, const char *method)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE);
    return ci && method ? method + ci->header_size : NULL;
}

/* RFC 9112 framing of the request's head (framing.h). A refusal goes out at once, with
 * Connection: close: nothing after this head on the connection is read as a request. */
static int check_framing(struct MHD_Connection *c, ztd_req *r, const char *method, const char *url,
                         const char *version, ztd_framing *f, enum MHD_Result *ret)
{
    ztd_framing_begin(f, version, r->target, target_sent_len(url, version, r->target));
    head_walk w = {.f = f, .end = head_end(c, method)};
    MHD_get_connection_values_n(c, MHD_HEADER_KIND, add_header, &w);
    flush_header(&w, w.end, true);
    ztd_framing_end(f);
    char *q = strchr(r->target, '?'); /* the router and the logs take no query */
    if (q)
        *q = 0;
    if (f->status) {
        ztd_err e = f->status == 501 ? ZTD_ERR_NOT_IMPLEMENTED : ZTD_ERR_BAD_REQUEST;
        *ret = ztd_error_hdr(c, r, e, "Connection", "close", "%s", f->message);
        return -1;
    }
    r->path = f->path;
    return 0;
}

/* Is the request allowed the scope its route needs? Otherwise its 401 or 403
 * is queued. */
static bool authorized(ztd_server *s, struct MHD_Connection *c, ztd_req *r, ztd_scope need,
                       enum MHD_Result *ret)
{
    switch (ztd_request_auth(s, c, need)) {
    case ZTD_AUTH_OK:
        return true;
    case ZTD_AUTH_WRITES_DISABLED:
        *ret = ztd_fail(c, r, ZTD_ERR_WRITES_DISABLED);
        return false;
    case ZTD_AUTH_FORBIDDEN:
        *ret = ztd_error(c, r, ZTD_ERR_FORBIDDEN, "this token may not %s",
                         need == ZTD_SCOPE_WRITE ? "write" : "read");
        return false;
    case ZTD_AUTH_INVALID:
        *ret = ztd_error_hdr(c, r, ZTD_ERR_TOKEN_UNKNOWN, "WWW-Authenticate",
                             "Bearer realm=\"ztensord\", error=\"invalid_token\"", "%s",
                             ztd_err_message(ZTD_ERR_TOKEN_UNKNOWN));
        return false;
    default:
        *ret = ztd_error_hdr(c, r, ZTD_ERR_TOKEN_MISSING, "WWW-Authenticate",
                             "Bearer realm=\"ztensord\"", "%s",
                             ztd_err_message(ZTD_ERR_TOKEN_MISSING));
        return false;
    }
}

static enum MHD_Result take_query_name(void *cls, enum MHD_ValueKind kind, const char *key,
                                       size_t key_size, const char *value, size_t value_size)
{
    (void)kind;
    (void)value;
    (void)value_size;
    return ztd_query_name(cls, key, key_size) ? MHD_NO : MHD_YES;
}

/* A route that reads its query: no parameter named twice (query.h). Otherwise its 400
 * is queued. */
static bool query_ok(struct MHD_Connection *c, ztd_req *r, enum MHD_Result *ret)
{
    if (!r->route->query)
        return true;
    ztd_query_names q;
    ztd_query_begin(&q);
    MHD_get_connection_values_n(c, MHD_GET_ARGUMENT_KIND, take_query_name, &q);
    if (q.status == ZTD_QUERY_OK)
        return true;
    char name[65];
    ztd_query_bad_name(&q, name, sizeof(name));
    if (q.status == ZTD_QUERY_TOO_MANY)
        *ret = ztd_error(c, r, ZTD_ERR_BAD_REQUEST, "more than %d query parameters", ZTD_QUERY_MAX);
    else
        *ret = ztd_error(c, r, ZTD_ERR_BAD_REQUEST,
                         "query parameter \"%s\" is given more than once", name);
    return false;
}

/* The router found no route: its answer (400, 404, 405 with Allow, 414). */
static enum MHD_Result no_route(struct MHD_Connection *c, ztd_req *r)
{
    const ztd_route_match *m = r->match;
    switch (m->status) {
    case ZTD_ROUTE_OK: /* a front's route that no front answers */
        return ztd_error(c, r, ZTD_ERR_NOT_FOUND, "no such endpoint");
    case ZTD_ROUTE_METHOD_NOT_ALLOWED:
        return ztd_error_hdr(c, r, ZTD_ERR_METHOD_NOT_ALLOWED, "Allow", m->allow,
                             "%s is not allowed here; allowed: %s", r->method, m->allow);
    case ZTD_ROUTE_NOT_FOUND:
        return ztd_error(c, r, ZTD_ERR_NOT_FOUND, "%s",
                         m->message ? m->message : "no such endpoint");
    case ZTD_ROUTE_URI_TOO_LONG:
        return ztd_error(c, r, ZTD_ERR_URI_TOO_LONG, "%s", m->message ? m->message : "too long");
    default:
        return ztd_error(c, r, ZTD_ERR_BAD_REQUEST, "%s", m->message ? m->message : "bad path");
    }
}

/* The first call for a request: state only, and the route from the table.
 * Routes that take a body are authorised and begun now, so that a refusal
 * (401, 413, 412, ...) goes out before the client sends a body it would
 * waste. A client that sends its body without Expect: 100-continue would not
 * read that refusal until its body is written: for it the refusal waits until
 * the body has been read and dropped (up to lingering_max; a larger declared
 * body is refused at once). Every other answer waits for the last call: one
 * queued now would cost keep-alive (docs/internals/request.md). */
static enum MHD_Result first_call(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                  const char *url, const char *method, const char *version)
{
    r->started = true;
    clock_gettime(CLOCK_REALTIME, &r->t0);
    r->t0_us = ztd_now_us();
    size_t ml = strnlen(method, sizeof(r->method) - 1);
    memcpy(r->method, method, ml); /* r is zeroed: NUL-terminated */
    r->counted = true;
    r->acked0 = ztd_tcp_acked(c); /* nothing of this request's response is sent yet */
    __atomic_add_fetch(&s->inflight, 1, __ATOMIC_RELAXED);
    ztd_metrics_inflight(1);
    r->send_request_id =
        request_id(c, r->request_id) || s->cfg->request_id_header == ZTD_REQUEST_ID_ALWAYS;
    if (!r->target)
        return MHD_NO;
    ztd_framing f;
    enum MHD_Result ret;
    if (check_framing(c, r, method, url, version, &f, &ret) != 0)
        return ret;
    if (!ztd_conns_admit(c, r->path)) /* queued now, so MHD closes the connection after it */
        return ztd_fail(c, r, ZTD_ERR_OVERLOADED);
    if (!(r->match = ztd_match_new()))
        return MHD_NO;
    if (ztd_route(method, r->path, r->match) == ZTD_ROUTE_OK)
        r->route = ztd_route_def_of(s->routes, r->match->route);
    if (!r->route || r->route->body == ZTD_REQ_BODY_NONE)
        return MHD_YES;
    r->defer_early = f.has_body && !f.expect_continue && s->cfg->lingering_max > 0 &&
                     (f.chunked || f.content_length <= s->cfg->lingering_max);
    ret = MHD_YES;
    if (authorized(s, c, r, r->route->scope, &ret) && query_ok(c, r, &ret) && r->route->begin)
        ret = r->route->begin(s, c, r);
    r->defer_early = false;
    return ret;
}

/* The last call: the request, and its body if any, is complete. */
static enum MHD_Result last_call(ztd_server *s, struct MHD_Connection *c, ztd_req *r)
{
    enum MHD_Result ret;
    if (!r->route)
        return no_route(c, r);
    if (r->route->body == ZTD_REQ_BODY_NONE &&
        (!authorized(s, c, r, r->route->scope, &ret) || !query_ok(c, r, &ret)))
        return ret;
    return r->route->handler(s, c, r);
}

/* libmicrohttpd takes no response while a body is being read. A refusal held
 * back (one found mid-body, 413, 507, ...; or one before a body the client sends
 * regardless) is kept, the rest of the body read and dropped, and the refusal sent
 * at the end: RFC 9112 §9.6's staged close, done before the answer because
 * libmicrohttpd cannot half-close after it. Past lingering_max bytes or
 * lingering_timeout the connection is cut instead. */
static enum MHD_Result send_deferred(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                     size_t *upload_size)
{
    if (*upload_size) {
        r->drained += *upload_size;
        *upload_size = 0;
        uint64_t ms = ztd_now_ms() - r->deferred_ms;
        if (r->drained <= s->cfg->lingering_max && ms <= s->cfg->lingering_timeout_ms)
            return MHD_YES;
        ztd_log(ZTD_LOG_INFO,
                "%u %s: closing after %llu body bytes in %llu ms (lingering_max, "
                "lingering_timeout)",
                r->deferred_status, r->target ? r->target : "", (unsigned long long)r->drained,
                (unsigned long long)ms);
        return MHD_NO;
    }
    enum MHD_Result ret = MHD_queue_response(c, r->deferred_status, r->deferred);
    MHD_destroy_response(r->deferred);
    r->deferred = NULL;
    return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_size, void **con_cls)
{
    ztd_server *s = cls;
    ztd_req *r = *con_cls;
    if (!r)
        return MHD_NO; /* uri_logged() could not allocate it */
    if (!r->started) {
        enum MHD_Result ret = first_call(s, c, r, url, method, version);
        if (r->deferred) /* refused before its body: the body is drained */
            ztd_conns_draining(c);
        return ret;
    }
    ztd_conns_body(c, *upload_size); /* every path below takes all it is given */
    if (r->deferred) {
        ztd_conns_draining(c); /* refused mid-body, or already draining */
        return send_deferred(s, c, r, upload_size);
    }
    if (r->responded) {
        *upload_size = 0; /* MHD drops the rest of the body and closes */
        return MHD_YES;
    }
    if (*upload_size && r->route && r->route->data) {
        size_t n = *upload_size;
        *upload_size = 0;
        r->in_data = true;
        enum MHD_Result ret = r->route->data(s, c, r, upload_data, n);
        r->in_data = false;
        return ret;
    }
    if (*upload_size) {
        *upload_size = 0; /* a body nobody asked for */
        return MHD_YES;
    }
    return last_call(s, c, r);
}

static void client_addr(struct MHD_Connection *c, char *buf, size_t cap)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    buf[0] = 0;
    if (!ci || !ci->client_addr)
        return;
    const struct sockaddr *sa = ci->client_addr;
    if (sa->sa_family == AF_INET)
        inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, buf, (socklen_t)cap);
    else if (sa->sa_family == AF_INET6)
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, buf, (socklen_t)cap);
    else if (sa->sa_family == AF_UNIX)
        snprintf(buf, cap, "unix:"); /* as nginx logs it: a local peer has no address */
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    ztd_server *s = cls;
    ztd_req *r = *con_cls;
    ztd_conns_done(c); /* before the pin is released */
    if (!r)
        return;
    *con_cls = NULL;
    if (!r->started) { /* libmicrohttpd refused the head itself; the handler never ran */
        free(r->target);
        free(r);
        return;
    }
    uint64_t us = ztd_now_us() - r->t0_us;
    bool complete = toe == MHD_REQUEST_TERMINATED_COMPLETED_OK;
    uint64_t sent = complete      ? r->bytes
                    : r->deferred ? 0 /* the error was never queued */
                                  : ztd_tcp_delivered(r->acked0, ztd_tcp_acked(c), r->bytes);
    ztd_metrics_request(r->route ? r->route->id : ZTD_ROUTE_NONE, r->status, sent, us);
    if (r->route && r->route->upload)
        ztd_metrics_upload_outcome(!r->responded      ? ZTD_UPLOAD_ABORTED
                                   : r->status >= 500 ? ZTD_UPLOAD_FAILED
                                   : r->status >= 400 ? ZTD_UPLOAD_REJECTED
                                                      : ZTD_UPLOAD_PUBLISHED);
    if (ztd_access_log_enabled()) {
        char client[64];
        client_addr(c, client, sizeof(client));
        ztd_access_entry e = {
            .time = r->t0,
            .client = client,
            .method = r->method,
            .path = r->target ? r->target : "",
            .protocol = "HTTP/1.1",
            .status = r->status,
            .bytes = sent,
            .duration_us = us,
            .request_id = r->request_id,
        };
        ztd_access_log_write(&e);
    }
    if (r->deferred)
        MHD_destroy_response(r->deferred);
    ztd_req_set_ctx(r, NULL, NULL); /* the handler's state, whatever it is */
    if (r->front && r->front_free)
        r->front_free(r->front);
    for (size_t i = 0; i < sizeof(r->joined) / sizeof(r->joined[0]); i++)
        free(r->joined[i]);
    ztd_match_free(r->match);
    free(r->target);
    if (r->counted) {
        __atomic_sub_fetch(&s->inflight, 1, __ATOMIC_RELAXED);
        ztd_metrics_inflight(-1);
    }
    free(r);
}

/* `listen unix:PATH`: the socket file is ours to remove at stop. */
static int bind_unix(ztd_server *s, const char *path)
{
    if (!(s->unix_id = calloc(1, sizeof(*s->unix_id))))
        return -1;
    s->listen_fd = ztd_unix_listen(path, ztd_listen_mode(s->cfg->listen_mode), s->unix_id);
    if (s->listen_fd >= 0)
        return 0;
    free(s->unix_id); /* nothing of ours to remove at stop */
    s->unix_id = NULL;
    return -1;
}

static void unlink_unix(ztd_server *s)
{
    if (!s->unix_id)
        return;
    ztd_unix_unlink(ztd_listen_unix_path(s->cfg->listen), s->unix_id);
    free(s->unix_id);
    s->unix_id = NULL;
}

static int bind_listen(ztd_server *s)
{
    const char *path = ztd_listen_unix_path(s->cfg->listen);
    if (path)
        return bind_unix(s, path);
    char host[256], why[256];
    unsigned port;
    if (ztd_listen_parse(s->cfg->listen, host, sizeof(host), &port, why, sizeof(why)) != 0) {
        ztd_log(ZTD_LOG_ERROR, "listen %s: %s", s->cfg->listen, why);
        return -1;
    }
    struct addrinfo hints = {.ai_family = AF_UNSPEC,
                             .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_PASSIVE | AI_NUMERICSERV},
                    *res;
    char ps[16];
    snprintf(ps, sizeof(ps), "%u", port);
    int rc = getaddrinfo(host[0] ? host : NULL, ps, &hints, &res);
    if (rc != 0) {
        ztd_log(ZTD_LOG_ERROR, "listen %s: %s", s->cfg->listen, gai_strerror(rc));
        return -1;
    }
    int fd = -1;
    for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd < 0)
            continue;
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, 1024) == 0)
            break;
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd < 0) {
        ztd_log(ZTD_LOG_ERROR, "listen %s: %s", s->cfg->listen, strerror(errno));
        return -1;
    }
    s->listen_fd = fd;
    return 0;
}

static unsigned socket_port(int fd)
{
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    if (getsockname(fd, (struct sockaddr *)&ss, &sl) != 0)
        return 0;
    if (ss.ss_family == AF_INET6)
        return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
    return ss.ss_family == AF_INET ? ntohs(((struct sockaddr_in *)&ss)->sin_port) : 0;
}

/* A whole small file (PEM) into a NUL-terminated buffer. */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = malloc(1 << 20);
    size_t n = buf ? fread(buf, 1, (1 << 20) - 1, f) : 0;
    fclose(f);
    if (buf)
        buf[n] = 0;
    return buf;
}

static int load_tls(ztd_server *s)
{
    if (!s->cfg->tls_cert[0] && !s->cfg->tls_key[0])
        return 0;
    if (!s->cfg->tls_cert[0] || !s->cfg->tls_key[0]) {
        ztd_log(ZTD_LOG_ERROR, "tls: both tls_cert and tls_key are needed");
        return -1;
    }
    if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
        ztd_log(ZTD_LOG_ERROR, "tls: this libmicrohttpd was built without TLS");
        return -1;
    }
    if (!(s->tls_cert = slurp(s->cfg->tls_cert)) || !(s->tls_key = slurp(s->cfg->tls_key))) {
        ztd_log(ZTD_LOG_ERROR, "tls: cannot read %s: %s",
                s->tls_cert ? s->cfg->tls_key : s->cfg->tls_cert, strerror(errno));
        return -1;
    }
    return 0;
}

/* libmicrohttpd clears a connection's whole memory pool between requests, so
 * a large pool (for bigger upload chunks) costs every small GET a memset of it:
 * 256 KiB measured 3x fewer 4 KiB requests per second than MHD's default. */
#define ZTD_CONNECTION_POOL (32u << 10)
/* After the grace period, how long the answers of offloaded work get to go out. */
#define STOP_ANSWER_MS 1000

int ztd_http_start(ztd_server *s)
{
    ztd_body_set_shared_limit(s->cfg->shared_response_memory);
    ztd_catalog_answer_free(ztd_body_destroy_shared);
    if (s->listen_fd < 0 && bind_listen(s) != 0)
        return -1;
    s->port = socket_port(s->listen_fd);
    if (load_tls(s) != 0) {
        unlink_unix(s);
        return ZTD_HTTP_CONFIG;
    }
    unsigned threads = s->cfg->threads;
    if (!threads) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        threads = n > 0 ? (unsigned)n : 1;
    }
    ztd_conns_limits lim = {.connection_limit = s->cfg->connection_limit,
                            .header_timeout_ms = s->cfg->header_timeout_ms,
                            .min_body_rate = s->cfg->min_body_rate,
                            .send_lowat = (int)s->cfg->send_lowat};
    if (!(s->conns = ztd_conns_new(&lim))) {
        unlink_unix(s);
        return -1;
    }
    /* Suspend and resume (http/offload.h) need the inter-thread channel, which
     * MHD_ALLOW_SUSPEND_RESUME includes: a resume from a work-queue thread wakes
     * the connection's worker through it. */
    unsigned flags = MHD_USE_EPOLL_INTERNAL_THREAD | MHD_USE_TURBO | MHD_USE_ITC |
                     MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG;
    struct MHD_OptionItem tls[] = {
        {MHD_OPTION_HTTPS_MEM_CERT, 0, s->tls_cert},
        {MHD_OPTION_HTTPS_MEM_KEY, 0, s->tls_key},
        {MHD_OPTION_END, 0, NULL},
    };
    if (s->tls_cert)
        flags |= MHD_USE_TLS;
    else
        tls[0].option = MHD_OPTION_END;
    s->daemon = MHD_start_daemon(
        flags, 0, NULL, NULL, on_request, s, MHD_OPTION_EXTERNAL_LOGGER, ztd_mhd_log, NULL,
        MHD_OPTION_LISTEN_SOCKET, s->listen_fd, MHD_OPTION_THREAD_POOL_SIZE, threads,
        MHD_OPTION_CONNECTION_LIMIT, s->cfg->connection_limit, MHD_OPTION_CONNECTION_TIMEOUT,
        (unsigned)((s->cfg->connection_timeout_ms + 999) / 1000), MHD_OPTION_NOTIFY_COMPLETED,
        on_completed, s, MHD_OPTION_NOTIFY_CONNECTION, ztd_conns_notify, s->conns,
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, s->cfg->max_connections_per_address,
        MHD_OPTION_URI_LOG_CALLBACK, uri_logged, s, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
        (size_t)ZTD_CONNECTION_POOL, MHD_OPTION_UNESCAPE_CALLBACK, keep_escaped, NULL,
        MHD_OPTION_ARRAY, tls, MHD_OPTION_END);
    if (!s->daemon) {
        ztd_log(ZTD_LOG_ERROR, "could not start the HTTP daemon%s",
                s->tls_cert ? " (check the TLS certificate and key)" : "");
        ztd_conns_free(s->conns);
        s->conns = NULL;
        unlink_unix(s);
        return -1;
    }
    return 0;
}

/* Wait up to ms for the requests in flight to end; how many are left. */
static int wait_inflight(ztd_server *s, uint64_t ms)
{
    uint64_t t0 = ztd_now_ms();
    int n;
    while ((n = __atomic_load_n(&s->inflight, __ATOMIC_ACQUIRE)) > 0 && ztd_now_ms() - t0 < ms)
        usleep(20000);
    return n;
}

void ztd_http_stop(ztd_server *s)
{
    if (!s->daemon)
        return;
    __atomic_store_n(&s->draining, true, __ATOMIC_RELEASE);
    int lfd = MHD_quiesce_daemon(s->daemon);
    if (lfd >= 0)
        close(lfd);
    unlink_unix(s); /* new clients find no socket rather than a refusing one */
    int n = wait_inflight(s, s->cfg->shutdown_grace_ms);
    if (n)
        ztd_log(ZTD_LOG_WARN, "shutdown: %d requests still in flight after %llu ms, closing", n,
                (unsigned long long)s->cfg->shutdown_grace_ms);
    /* A request waiting for work off the workers is suspended, and
     * libmicrohttpd must not stop with one: let the work finish, which resumes
     * it, and give its answer a moment to go out. */
    if (s->waitq)
        ztd_workq_drain(s->waitq);
    if (s->workq) {
        ztd_workq_drain(s->workq);
        if (n)
            wait_inflight(s, STOP_ANSWER_MS);
    }
    MHD_stop_daemon(s->daemon);
    s->daemon = NULL;
    ztd_conns_free(s->conns); /* every connection is closed now */
    s->conns = NULL;
    free(s->tls_cert);
    free(s->tls_key);
    s->tls_cert = s->tls_key = NULL;
}
