/*
 * The transport: ztr__run() drives a batch of range requests over at most N
 * of the session's connections at once (libcurl's multi interface; the
 * session, in session.c, keeps the connections from one call to the next).
 * It adds the pinned validator to every request, checks every answer
 * against the range asked for and the validator, retries connection errors,
 * 408, 429 and 5xx with exponential backoff and jitter (never sooner than
 * Retry-After), and resumes a request that stalled or broke from the last
 * byte it delivered. The first failure that is not worth a retry stops the
 * batch.
 */
#include "remote_internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum { XFER_PENDING = 0, XFER_RUNNING, XFER_WAIT, XFER_DONE };
enum { V_OK = 0, V_RETRY, V_FATAL };

#define MAX_ERROR_BODY (64u << 10) /* an error body longer than this is cut off */

/* ---- one request */

static void copy_value(char *dst, size_t cap, const char *v, size_t n)
{
    if (n >= cap) /* too long to be ours: never equal to anything pinned */
        n = 0;
    memcpy(dst, v, n);
    dst[n] = 0;
}

static size_t on_header(char *p, size_t size, size_t nmemb, void *ud)
{
    ztr_xfer *x = ud;
    size_t n = size * nmemb;
    ztr_resp *r = &x->resp;
    x->last_byte = x->batch->now;
    const char *v;
    size_t vl;
    int code;
    if (ztr__parse_status_line(p, n, &code) == 0) {
        /* A new response (after a redirect or a 100): forget the last one's headers. */
        memset(r, 0, sizeof(*r));
        r->status = code;
        r->content_length = -1;
    } else if (ztr__header_is(p, n, "content-range", &v, &vl)) {
        r->has_range = true;
        r->range_bad = ztr__parse_content_range(v, vl, &r->cr) != 0;
    } else if (ztr__header_is(p, n, "etag", &v, &vl)) {
        copy_value(r->etag, sizeof(r->etag), v, vl);
    } else if (ztr__header_is(p, n, "last-modified", &v, &vl)) {
        copy_value(r->lm, sizeof(r->lm), v, vl);
    } else if (ztr__header_is(p, n, "content-encoding", &v, &vl)) {
        r->coded = !(vl == 8 && !strncasecmp(v, "identity", 8));
    } else if (ztr__header_is(p, n, "retry-after", &v, &vl)) {
        r->has_retry_after = ztr__parse_retry_after(v, vl, time(NULL), &r->retry_after) == 0;
    } else if (ztr__header_is(p, n, "content-length", &v, &vl)) {
        uint64_t cl = 0;
        size_t i = 0;
        for (; i < vl && v[i] >= '0' && v[i] <= '9' && cl < (1ull << 62); i++)
            cl = cl * 10 + (uint64_t)(v[i] - '0');
        r->content_length = i == vl && vl ? (int64_t)cl : -1;
    }
    return n;
}

static int verdict(ztr_xfer *x, int v, zt_status why, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int verdict(ztr_xfer *x, int v, zt_status why, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(x->reason, sizeof(x->reason), fmt, ap);
    va_end(ap);
    x->why = why;
    return v;
}

/* The response is the version opened: same ETag, or same Last-Modified. */
static bool same_version(const ztr_pin *pin, const ztr_resp *r)
{
    if (pin->etag[0] && r->etag[0])
        return strcmp(pin->etag, r->etag) == 0;
    if (pin->lm[0] && r->lm[0])
        return strcmp(pin->lm, r->lm) == 0;
    return true;
}

static void keep_validators(ztr_xfer *x)
{
    memcpy(x->etag, x->resp.etag, sizeof(x->etag));
    memcpy(x->lm, x->resp.lm, sizeof(x->lm));
}

static int check_206(ztr_batch *b, ztr_xfer *x)
{
    const ztr_resp *r = &x->resp;
    const ztr_content_range *cr = &r->cr;
    if (!r->has_range || r->range_bad || cr->unsatisfied || !cr->total_known)
        return verdict(x, V_FATAL, ZT_E_HTTP, "206 without a valid Content-Range with the size");
    uint64_t total = cr->total, first, end;
    if (b->pin && total != b->pin->size)
        return verdict(x, V_FATAL, ZT_E_CHANGED, "the file is now %llu bytes, it was %llu",
                       (unsigned long long)total, (unsigned long long)b->pin->size);
    if (b->pin && !same_version(b->pin, r))
        return verdict(x, V_FATAL, ZT_E_CHANGED, "the file was replaced: ETag %s, opened as %s",
                       r->etag[0] ? r->etag : r->lm, b->pin->etag[0] ? b->pin->etag : b->pin->lm);
    if (x->suffix) {
        first = total > x->len ? total - x->len : 0;
        end = total;
    } else {
        first = x->start + x->got;
        end = x->start + x->len < total ? x->start + x->len : total;
    }
    if (end <= first || cr->first != first || cr->last != end - 1)
        return verdict(
            x, V_FATAL, ZT_E_HTTP, "asked for bytes %llu-%llu, the server sent %llu-%llu/%llu",
            (unsigned long long)first, (unsigned long long)(end - 1), (unsigned long long)cr->first,
            (unsigned long long)cr->last, (unsigned long long)total);
    if (x->suffix)
        x->start = first;
    x->suffix = false;
    x->len = end - x->start;
    x->total = total;
    keep_validators(x);
    return V_OK;
}

/* What the status and headers of an answer mean for this request. */
static int check(ztr_batch *b, ztr_xfer *x)
{
    const ztr_resp *r = &x->resp;
    int s = r->status;
    if ((s == 200 || s == 206) && r->coded)
        return verdict(x, V_FATAL, ZT_E_HTTP,
                       "the server sent a Content-Encoding that was not asked for");
    if (s == 206)
        return check_206(b, x);
    if (s == 200 && x->accept_full && x->got == 0 && !b->pin) {
        uint64_t cap = b->r->opt.open_window;
        if (r->content_length < 0 || (uint64_t)r->content_length > cap)
            return verdict(x, V_FATAL, ZT_E_HTTP,
                           "the server ignores Range requests: it answered 200 with the whole "
                           "file (%lld bytes; -1: unknown), more than the %llu read at open; "
                           "a file this large needs a server that answers Range requests",
                           (long long)r->content_length, (unsigned long long)cap);
        x->full = true;
        x->suffix = false;
        x->start = 0;
        x->len = x->total = (uint64_t)r->content_length;
        keep_validators(x);
        return V_OK;
    }
    if (s == 200 && b->pin && !same_version(b->pin, r))
        return verdict(x, V_FATAL, ZT_E_CHANGED,
                       "the file was replaced: 200 with ETag %s, opened as %s",
                       r->etag[0] ? r->etag : r->lm, b->pin->etag[0] ? b->pin->etag : b->pin->lm);
    if (s == 200)
        return verdict(x, V_FATAL, ZT_E_HTTP,
                       "the server answered a Range request with 200 and the whole file");
    if (s == 412 && b->pin)
        return verdict(x, V_FATAL, ZT_E_CHANGED,
                       "412: the file is no longer the version opened (%s)",
                       b->pin->etag[0] ? b->pin->etag : b->pin->lm);
    if (s == 416 && b->pin)
        return verdict(x, V_FATAL, ZT_E_CHANGED, "416: the file is no longer the %llu bytes opened",
                       (unsigned long long)b->pin->size);
    if ((s == 404 || s == 410) && b->pin)
        return verdict(x, V_FATAL, ZT_E_CHANGED, "%d: the file opened is gone", s);
    if (s == 404 || s == 410)
        return verdict(x, V_FATAL, ZT_E_NOT_FOUND, "HTTP %d", s);
    if (s == 408 || s == 429 || (s >= 500 && s <= 599))
        return verdict(x, V_RETRY, ZT_E_HTTP, "HTTP %d", s);
    return verdict(x, V_FATAL, ZT_E_HTTP, "HTTP %d", s);
}

static void fail(ztr_batch *b, ztr_xfer *x, zt_status code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void fail(ztr_batch *b, ztr_xfer *x, zt_status code, const char *fmt, ...)
{
    if (b->failed)
        return;
    b->failed = true;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    uint64_t at = x ? x->start + x->got : 0;
    const char *obj = x ? x->obj : NULL, *comp = x ? x->comp : NULL;
    if (x && b->where)
        b->where(b->where_ud, x, at, &obj, &comp);
    /* A suffix request's first byte is not known before its answer. */
    ztr__fail(b->err, code, b->url, obj, comp, x && !x->suffix, at, "%s", msg);
}

static size_t on_write(char *p, size_t size, size_t nmemb, void *ud)
{
    ztr_xfer *x = ud;
    ztr_batch *b = x->batch;
    size_t n = size * nmemb;
    x->last_byte = b->now;
    if (!x->checked) {
        x->verdict = check(b, x);
        x->checked = true;
    }
    if (x->verdict != V_OK) {
        ztr_resp *r = &x->resp;
        if (r->status >= 200 && r->status <= 299)
            return 0; /* a wrong 2xx: its body is not an error message, stop at once */
        size_t keep = sizeof(r->body) - r->body_len;
        keep = n < keep ? n : keep;
        memcpy(r->body + r->body_len, p, keep);
        r->body_len += keep;
        r->discarded += n;
        return r->discarded > MAX_ERROR_BODY ? 0 : n;
    }
    if (n > x->len - x->got) {
        x->verdict =
            verdict(x, V_FATAL, ZT_E_HTTP, "the server sent more than the %llu bytes asked",
                    (unsigned long long)x->len);
        return 0;
    }
    int rc = x->on_body(x->ud, x->start + x->got, (const uint8_t *)p, n, b->err);
    if (rc < 0) {
        b->failed = true;
        return 0;
    }
    x->got += n;
    __atomic_add_fetch(&b->r->received, (uint64_t)n, __ATOMIC_RELAXED);
    if (rc > 0) { /* the consumer has what it wanted */
        x->len = x->got;
        return 0;
    }
    return n;
}

static struct curl_slist *request_headers(const ztr_batch *b, const ztr_xfer *x)
{
    char line[400];
    struct curl_slist *h = NULL, *t;
    if (x->suffix)
        snprintf(line, sizeof(line), "Range: bytes=-%llu", (unsigned long long)x->len);
    else
        snprintf(line, sizeof(line), "Range: bytes=%llu-%llu",
                 (unsigned long long)(x->start + x->got),
                 (unsigned long long)(x->start + x->len - 1));
    if (!(h = curl_slist_append(NULL, line)))
        return NULL;
    const ztr_pin *pin = b->pin;
    if (pin && pin->strong) {
        snprintf(line, sizeof(line), "If-Match: %s", pin->etag);
        if (!(t = curl_slist_append(h, line)))
            goto oom;
        snprintf(line, sizeof(line), "If-Range: %s", pin->etag);
        if (!(t = curl_slist_append(h, line)))
            goto oom;
    } else if (pin && pin->lm[0]) {
        snprintf(line, sizeof(line), "If-Unmodified-Since: %s", pin->lm);
        if (!(t = curl_slist_append(h, line)))
            goto oom;
        snprintf(line, sizeof(line), "If-Range: %s", pin->lm);
        if (!(t = curl_slist_append(h, line)))
            goto oom;
    }
    if (ztr__auth_headers(b->r, &h))
        return NULL;
    return h;
oom:
    curl_slist_free_all(h);
    return NULL;
}

static void set_options(ztr_batch *b, ztr_xfer *x, CURL *e)
{
    const zt_remote_options *o = &b->r->opt;
    curl_easy_setopt(e, CURLOPT_URL, b->url);
    curl_easy_setopt(e, CURLOPT_PRIVATE, x);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, x);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_write);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, x);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, x->errbuf);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, x->hdrs);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(e, CURLOPT_MAXREDIRS, 5L);
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(e, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(e, CURLOPT_USERAGENT, "libztensor-remote/" ZT_VERSION_STRING);
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, (long)(o->connect_timeout * 1000));
    if (b->deadline > 0) {
        double left = b->deadline - ztr__now();
        curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)(left > 0.001 ? left * 1000 : 1));
    }
    curl_easy_setopt(e, CURLOPT_BUFFERSIZE, 512L * 1024);
    curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
    if (b->r->ca_file)
        curl_easy_setopt(e, CURLOPT_CAINFO, b->r->ca_file);
    if (o->insecure) {
        curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
    }
    ztr__auth_setopt(b->r, e);
}

static zt_status start(ztr_batch *b, ztr_xfer *x)
{
    x->batch = b;
    x->checked = false;
    x->verdict = V_OK;
    x->errbuf[0] = 0;
    x->reason[0] = 0;
    memset(&x->resp, 0, sizeof(x->resp));
    x->resp.content_length = -1;
    x->hdrs = request_headers(b, x);
    CURL *e = x->hdrs ? ztr__easy_get(b->r) : NULL;
    if (!e) {
        curl_slist_free_all(x->hdrs);
        x->hdrs = NULL;
        fail(b, x, ZT_E_NOMEM, "out of memory starting a request");
        return ZT_E_NOMEM;
    }
    set_options(b, x, e);
    if (curl_multi_add_handle(b->r->multi, e) != CURLM_OK) {
        curl_slist_free_all(x->hdrs);
        x->hdrs = NULL;
        curl_easy_cleanup(e);
        fail(b, x, ZT_E_NETWORK, "libcurl refused a request");
        return ZT_E_NETWORK;
    }
    x->easy = e;
    x->state = XFER_RUNNING;
    return ZT_OK;
}

static void stop(ztr_batch *b, ztr_xfer *x)
{
    curl_multi_remove_handle(b->r->multi, x->easy);
    ztr__easy_put(b->r, x->easy);
    x->easy = NULL;
    curl_slist_free_all(x->hdrs);
    x->hdrs = NULL;
}

/* Worth another try: the connection, not the request, went wrong. A refused
 * connection or a name that does not resolve is tried again only once the
 * server has answered in this session (a restart); before, the address is
 * wrong, and retrying it for seconds helps nobody. */
static bool retryable(const zt_remote *r, CURLcode rc)
{
    switch (rc) {
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_CONNECT:
        return r->answered;
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
    case CURLE_AGAIN:
        return true;
    default:
        return false;
    }
}

static void retry(ztr_batch *b, ztr_xfer *x, zt_status code, const char *why, double after)
{
    const zt_remote_options *o = &b->r->opt;
    if (++x->fails > o->max_retries) {
        fail(b, x, code, "%s; gave up after %u attempts", why, x->fails);
        return;
    }
    double delay = o->backoff * pow(2.0, (double)(x->fails - 1));
    if (delay > o->max_backoff)
        delay = o->max_backoff;
    delay *= 0.5 + 0.5 * ztr__rand01(b->r);
    if (after > o->max_backoff) {
        fail(b, x, code, "%s; Retry-After: %.0f s is longer than max_backoff (%.0f s)", why, after,
             o->max_backoff);
        return;
    }
    if (after > delay)
        delay = after;
    double now = ztr__now();
    if (b->deadline > 0 && now + delay > b->deadline) {
        char dn[80];
        fail(b, x, ZT_E_NETWORK, "%s; %s ends before the next attempt", why,
             ztr__deadline_name(b->r, b->deadline, dn, sizeof(dn)));
        return;
    }
    x->not_before = now + delay;
    x->state = XFER_WAIT;
}

/* CURLE_OK, or a failure; stalled: the engine dropped it for silence. */
static void finish(ztr_batch *b, ztr_xfer *x, CURLcode rc, bool stalled)
{
    char why[CURL_ERROR_SIZE + 320];
    stop(b, x);
    x->state = XFER_DONE;
    if (b->failed)
        return;
    if (x->got > x->got_at_start && !x->slow)
        x->fails = 0; /* progress: only consecutive failures count */
    if (x->resp.status)
        b->r->answered = true;
    if (!x->checked && x->resp.status && !stalled) {
        x->verdict = check(b, x);
        x->checked = true;
    }
    char summary[300] = "";
    if (x->checked && x->verdict != V_OK && (x->resp.status < 200 || x->resp.status > 299))
        ztr__error_summary(x->resp.body, x->resp.body_len, summary, sizeof(summary));
    if (x->checked && x->verdict != V_OK)
        snprintf(why, sizeof(why), "%s%s%s", x->reason, summary[0] ? "; the server says: " : "",
                 summary);
    if (x->checked && x->verdict == V_FATAL) {
        fail(b, x, x->why, "%s", why);
        return;
    }
    if (x->checked && x->verdict == V_RETRY) {
        retry(b, x, x->why, why, x->resp.has_retry_after ? x->resp.retry_after : 0);
        return;
    }
    if (x->checked && x->got == x->len)
        return; /* complete (or stopped by its consumer, or stalled after its last byte) */
    if (stalled || rc == CURLE_OK || retryable(b->r, rc)) {
        if (b->deadline > 0 && b->now >= b->deadline) {
            char dn[80];
            fail(b, x, ZT_E_NETWORK, "%s passed: %s",
                 ztr__deadline_name(b->r, b->deadline, dn, sizeof(dn)),
                 x->errbuf[0] ? x->errbuf : curl_easy_strerror(rc));
            return;
        }
        if (stalled && x->slow)
            snprintf(
                why, sizeof(why),
                "fewer than %.0f bytes in %.3g s (min_rate x stall_timeout) after %llu of %llu",
                b->r->opt.min_rate * b->r->opt.stall_timeout, b->r->opt.stall_timeout,
                (unsigned long long)x->got, (unsigned long long)x->len);
        else if (stalled)
            snprintf(why, sizeof(why), "no byte for %.3g s (stall_timeout) after %llu of %llu",
                     b->r->opt.stall_timeout, (unsigned long long)x->got,
                     (unsigned long long)x->len);
        else if (rc == CURLE_OK)
            snprintf(why, sizeof(why), "the response ended after %llu of %llu bytes",
                     (unsigned long long)x->got, (unsigned long long)x->len);
        else
            snprintf(why, sizeof(why), "%s", x->errbuf[0] ? x->errbuf : curl_easy_strerror(rc));
        retry(b, x, ZT_E_NETWORK, why, 0);
        return;
    }
    if (rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST)
        fail(b, x, ZT_E_NETWORK, "%s; not retried: no server has answered at this address yet",
             x->errbuf[0] ? x->errbuf : curl_easy_strerror(rc));
    else
        fail(b, x, ZT_E_NETWORK, "%s", x->errbuf[0] ? x->errbuf : curl_easy_strerror(rc));
}

/* How often a closed gate is looked at again: the lanes that open it do not
 * wake the poll. */
#define GATE_POLL_MS 2

/* The running requests, at most b->conns of them. */
typedef struct running {
    ztr_xfer **x;
    size_t n;
} running;

static void launch(ztr_batch *b, running *run, ztr_xfer *x)
{
    x->got_at_start = x->got;
    x->last_byte = b->now;
    x->window_at = b->now;
    x->window_got = x->got;
    x->slow = false;
    if (start(b, x) == ZT_OK)
        run->x[run->n++] = x;
}

/* Starts what may start; returns the earliest time a waiting request may. */
static double start_some(ztr_batch *b, size_t *cursor, running *run, size_t *waiting)
{
    double next = 0;
    for (size_t i = 0; *waiting && i < b->n && run->n < b->conns && !b->failed; i++) {
        ztr_xfer *x = &b->x[i];
        if (x->state != XFER_WAIT)
            continue;
        if (x->not_before > b->now) {
            next = next == 0 || x->not_before < next ? x->not_before : next;
            continue;
        }
        (*waiting)--;
        launch(b, run, x);
    }
    b->gated = false;
    while (*cursor < b->n && run->n < b->conns && !b->failed) {
        if (b->gate) {
            uint64_t inflight = 0;
            for (size_t i = 0; i < run->n; i++)
                inflight += run->x[i]->len - run->x[i]->got;
            if (!b->gate(b->gate_ud, &b->x[*cursor], inflight)) {
                b->gated = true;
                break;
            }
        }
        launch(b, run, &b->x[(*cursor)++]);
    }
    return next;
}

/* Ends x (curl finished it, or it stalled) and takes it off the running list. */
static void end(ztr_batch *b, running *run, ztr_xfer *x, CURLcode rc, bool stalled, size_t *waiting)
{
    for (size_t i = 0; i < run->n; i++)
        if (run->x[i] == x) {
            run->x[i] = run->x[--run->n];
            break;
        }
    finish(b, x, rc, stalled);
    if (x->state == XFER_WAIT)
        (*waiting)++;
}

/* Did x receive less than min_rate over the window that just ended? Each
 * stall_timeout starts a new window. */
static bool too_slow(ztr_batch *b, ztr_xfer *x, double stall)
{
    double rate = b->r->opt.min_rate;
    if (rate <= 0 || b->now - x->window_at < stall)
        return false;
    x->slow = (double)(x->got - x->window_got) < rate * stall;
    x->window_at = b->now;
    x->window_got = x->got;
    return x->slow;
}

/* No byte for stall_timeout, or too few (min_rate): drop the connection and
 * resume elsewhere. */
static void check_stalls(ztr_batch *b, running *run, size_t *waiting)
{
    double stall = b->r->opt.stall_timeout;
    for (size_t i = 0; i < run->n && !b->failed;) {
        ztr_xfer *x = run->x[i];
        if (too_slow(b, x, stall) || b->now - x->last_byte > stall)
            end(b, run, x, CURLE_OK, true, waiting); /* moves another into slot i */
        else
            i++;
    }
}

zt_status ztr__run(ztr_batch *b)
{
    if (!b->err)
        b->err = &b->scratch;
    b->failed = false;
    if (!b->conns)
        b->conns = 1;
    running run = {calloc(b->conns, sizeof(ztr_xfer *)), 0};
    if (!run.x)
        return ztr__fail(b->err, ZT_E_NOMEM, b->url, NULL, NULL, 0, 0, "out of memory");
    size_t cursor = 0, waiting = 0;
    /* Wake often enough to see a stall soon after stall_timeout. */
    int tick_ms = (int)(b->r->opt.stall_timeout * 1000 / 4);
    tick_ms = tick_ms < 50 ? 50 : tick_ms > 1000 ? 1000 : tick_ms;
    for (;;) {
        b->now = ztr__now();
        if (b->deadline > 0 && b->now >= b->deadline) {
            char dn[80];
            fail(b, run.n ? run.x[0] : NULL, ZT_E_NETWORK, "%s passed",
                 ztr__deadline_name(b->r, b->deadline, dn, sizeof(dn)));
            break;
        }
        double next = start_some(b, &cursor, &run, &waiting);
        if (b->failed)
            break;
        if (!run.n) {
            if (!waiting && cursor == b->n)
                break;
            if (b->gated && !waiting) { /* the hashing lanes are catching up */
                curl_multi_poll(b->r->multi, NULL, 0, GATE_POLL_MS, NULL);
                continue;
            }
            double until = next - b->now;
            if (b->deadline > 0 && b->deadline - b->now < until)
                until = b->deadline - b->now;
            curl_multi_poll(b->r->multi, NULL, 0, (int)(until * 1000) + 1, NULL);
            continue;
        }
        int still = 0;
        if (curl_multi_perform(b->r->multi, &still) != CURLM_OK) {
            fail(b, NULL, ZT_E_NETWORK, "libcurl's multi interface failed");
            break;
        }
        CURLMsg *m;
        int left;
        while (!b->failed && (m = curl_multi_info_read(b->r->multi, &left))) {
            if (m->msg != CURLMSG_DONE)
                continue;
            ztr_xfer *x = NULL;
            curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&x);
            end(b, &run, x, m->data.result, false, &waiting);
        }
        check_stalls(b, &run, &waiting);
        if (b->failed)
            break;
        int wait_ms = tick_ms;
        if (waiting && next > 0 && (next - b->now) * 1000 < wait_ms)
            wait_ms = (int)((next - b->now) * 1000) + 1;
        if (b->gated && wait_ms > GATE_POLL_MS)
            wait_ms = GATE_POLL_MS; /* look at the gate again soon */
        if (still)
            curl_multi_poll(b->r->multi, NULL, 0, wait_ms, NULL);
    }
    for (size_t i = 0; i < run.n; i++)
        stop(b, run.x[i]);
    free(run.x);
    return b->failed ? b->err->code : ZT_OK;
}
