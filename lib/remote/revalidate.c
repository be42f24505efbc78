/*
 * Revalidation of an open file (zt_remote_revalidate, see
 * ztensor_remote_experimental.h): is the file at the origin still the version
 * opened? One HEAD request carrying the pinned validator (If-None-Match with
 * a strong ETag), so that no answer has a body: 304 costs the origin no body
 * bytes, and a changed file is found by its validator, not by reading its
 * manifest again. The request runs on the session's multi handle, so that it
 * reuses the session's connections. Connection failures, 408, 429 and 500,
 * 502, 503, 504 are retried with the session's backoff, within its total
 * timeout; every other answer is a verdict.
 */
#include "remote_internal.h"
#include "ztensor/ztensor_remote_experimental.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* What a HEAD answered. */
typedef struct head_resp {
    int status;
    char etag[256], lm[64];
    int64_t length; /* Content-Length, -1 when absent */
} head_resp;

static void copy_value(char *dst, size_t cap, const char *v, size_t n)
{
    if (n >= cap) { /* too long to be the one pinned: another one, never none */
        snprintf(dst, cap, "(%zu bytes)", n);
        return;
    }
    memcpy(dst, v, n);
    dst[n] = 0;
}

static size_t on_header(char *p, size_t size, size_t nmemb, void *ud)
{
    head_resp *r = ud;
    size_t n = size * nmemb;
    const char *v;
    size_t vl;
    int code;
    if (ztr__parse_status_line(p, n, &code) == 0) { /* a new response (redirect, 100) */
        memset(r, 0, sizeof(*r));
        r->status = code;
        r->length = -1;
    } else if (ztr__header_is(p, n, "etag", &v, &vl)) {
        copy_value(r->etag, sizeof(r->etag), v, vl);
    } else if (ztr__header_is(p, n, "last-modified", &v, &vl)) {
        copy_value(r->lm, sizeof(r->lm), v, vl);
    } else if (ztr__header_is(p, n, "content-length", &v, &vl)) {
        uint64_t cl = 0;
        size_t i = 0;
        for (; i < vl && v[i] >= '0' && v[i] <= '9' && cl < (1ull << 62); i++)
            cl = cl * 10 + (uint64_t)(v[i] - '0');
        r->length = i == vl && vl ? (int64_t)cl : -1;
    }
    return n;
}

/* The request's headers into *out (NULL: none); -1 when out of memory. */
static int head_headers(const zt_remote *r, const ztr_pin *pin, struct curl_slist **out)
{
    char line[400];
    struct curl_slist *h = NULL;
    *out = NULL;
    if (pin->strong) {
        snprintf(line, sizeof(line), "If-None-Match: %s", pin->etag);
        if (!(h = curl_slist_append(NULL, line)))
            return -1;
    }
    if (ztr__auth_headers(r, &h)) /* a bearer token, or an S3 origin's signing headers */
        return -1;
    *out = h;
    return 0;
}

/* One HEAD on the session's multi handle; the answer in *resp. */
static CURLcode head_once(zt_remote *r, const zt_remote_file *rf, struct curl_slist *hdrs,
                          double deadline, head_resp *resp, char errbuf[CURL_ERROR_SIZE])
{
    const zt_remote_options *o = &r->opt;
    CURL *e = ztr__easy_get(r);
    if (!e)
        return CURLE_OUT_OF_MEMORY;
    memset(resp, 0, sizeof(*resp));
    resp->length = -1;
    errbuf[0] = 0;
    double left = deadline > 0 ? deadline - ztr__now() : o->stall_timeout;
    curl_easy_setopt(e, CURLOPT_URL, rf->url);
    curl_easy_setopt(e, CURLOPT_NOBODY, 1L);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, resp);
    ztr__easy_base(r, e, errbuf);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(e, CURLOPT_MAXREDIRS, 5L);
    curl_easy_setopt(e, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(e, CURLOPT_USERAGENT, "libztensor-remote/" ZT_VERSION_STRING);
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)(left > 0.001 ? left * 1000 : 1));
    ztr__auth_setopt(r, e); /* SigV4 for an S3 origin */
    CURLcode rc = CURLE_FAILED_INIT;
    if (curl_multi_add_handle(r->multi, e) == CURLM_OK) {
        int still = 1, left_msgs;
        while (still && curl_multi_perform(r->multi, &still) == CURLM_OK)
            if (still) /* CURLOPT_TIMEOUT_MS ends it */
                curl_multi_poll(r->multi, NULL, 0, 1000, NULL);
        CURLMsg *m;
        while ((m = curl_multi_info_read(r->multi, &left_msgs)))
            if (m->msg == CURLMSG_DONE && m->easy_handle == e)
                rc = m->data.result;
        curl_multi_remove_handle(r->multi, e);
    }
    ztr__easy_put(r, e);
    return rc;
}

/* Worth another try: the connection went wrong (as the transport's
 * retryable()), or the server said so. */
static bool transient(CURLcode rc, int status)
{
    switch (rc) {
    case CURLE_OK:
        break;
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_CONNECT:
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
    return status == 408 || status == 429 || status == 500 || status == 502 || status == 503 ||
           status == 504;
}

/* The verdict on an answer that is not worth another try. */
static zt_status verdict(const zt_remote_file *rf, const head_resp *h, zt_error *err)
{
    const ztr_pin *pin = &rf->pin;
    const char *was = pin->strong ? pin->etag : pin->lm;
    if (h->status == 404 || h->status == 410)
        return ztr__fail(err, ZT_E_NOT_FOUND, rf->url, NULL, NULL, 0, 0, "HTTP %d", h->status);
    if (h->status == 304) {
        if (!pin->strong) /* nothing was asked that a 304 answers */
            return ztr__fail(err, ZT_E_CHANGED, rf->url, NULL, NULL, 0, 0,
                             "304 to a HEAD without a condition: the version cannot be told");
        /* RFC 9110 15.4.5: a 304 carries the ETag a 200 would: another one is
         * another version, whatever the status says. */
        if (h->etag[0] && strcmp(h->etag, pin->etag))
            return ztr__fail(err, ZT_E_CHANGED, rf->url, NULL, NULL, 0, 0,
                             "304 with ETag %s, opened as %s", h->etag, was);
        return ZT_OK;
    }
    if (h->status != 200)
        return ztr__fail(err, ZT_E_CHANGED, rf->url, NULL, NULL, 0, 0,
                         "HEAD answered HTTP %d: the version cannot be told without opening "
                         "the file again",
                         h->status);
    /* 200: a server that does not evaluate If-None-Match (or one whose file
     * changed): the same version only with the same validator and size. */
    bool same = pin->strong ? !strcmp(h->etag, pin->etag) : pin->lm[0] && !strcmp(h->lm, pin->lm);
    if (!same)
        return ztr__fail(err, ZT_E_CHANGED, rf->url, NULL, NULL, 0, 0,
                         "the file was replaced: %s, opened as %s",
                         pin->strong ? (h->etag[0] ? h->etag : "no ETag")
                                     : (h->lm[0] ? h->lm : "no Last-Modified"),
                         was);
    if (h->length >= 0 && (uint64_t)h->length != pin->size)
        return ztr__fail(err, ZT_E_CHANGED, rf->url, NULL, NULL, 0, 0,
                         "the file is now %lld bytes, it was %llu", (long long)h->length,
                         (unsigned long long)pin->size);
    return ZT_OK;
}

static void sleep_s(double s)
{
    struct timespec t = {(time_t)s, (long)((s - floor(s)) * 1e9)};
    nanosleep(&t, NULL);
}

zt_status zt_remote_revalidate(zt_remote *r, const zt_remote_file *rf, zt_error *err)
{
    if (!r || !rf)
        return ztr__fail(err, ZT_E_ARG, NULL, NULL, NULL, 0, 0, "NULL argument");
    if (!rf->pin.strong && !rf->pin.lm[0])
        return ztr__fail(err, ZT_E_CHANGED, rf->url, NULL, NULL, 0, 0,
                         "no validator was pinned: the version cannot be told");
    struct curl_slist *hdrs;
    if (head_headers(r, &rf->pin, &hdrs))
        return ztr__fail(err, ZT_E_NOMEM, rf->url, NULL, NULL, 0, 0, "out of memory");
    const zt_remote_options *o = &r->opt;
    double deadline = ztr__deadline(r);
    head_resp h;
    char errbuf[CURL_ERROR_SIZE];
    zt_status st = ZT_OK;
    for (unsigned attempt = 1;; attempt++) {
        CURLcode rc = head_once(r, rf, hdrs, deadline, &h, errbuf);
        if (!transient(rc, h.status)) {
            st = rc == CURLE_OK ? verdict(rf, &h, err)
                 : rc == CURLE_OUT_OF_MEMORY
                     ? ztr__fail(err, ZT_E_NOMEM, rf->url, NULL, NULL, 0, 0, "out of memory")
                     : ztr__fail(err, ZT_E_NETWORK, rf->url, NULL, NULL, 0, 0, "HEAD: %s",
                                 errbuf[0] ? errbuf : curl_easy_strerror(rc));
            break;
        }
        double delay = o->backoff * pow(2.0, (double)(attempt - 1));
        delay = (delay > o->max_backoff ? o->max_backoff : delay) * (0.5 + 0.5 * ztr__rand01(r));
        if (attempt > o->max_retries || (deadline > 0 && ztr__now() + delay > deadline)) {
            char why[CURL_ERROR_SIZE + 40];
            if (rc == CURLE_OK)
                snprintf(why, sizeof(why), "HTTP %d", h.status);
            else
                snprintf(why, sizeof(why), "%s", errbuf[0] ? errbuf : curl_easy_strerror(rc));
            st = ztr__fail(err, rc == CURLE_OK ? ZT_E_HTTP : ZT_E_NETWORK, rf->url, NULL, NULL, 0,
                           0, "HEAD: %s; gave up after %u attempts", why, attempt);
            break;
        }
        sleep_s(delay);
    }
    curl_slist_free_all(hdrs);
    return st;
}
