/*
 * One plain GET with libcurl's easy interface (zt_remote_http_get, see
 * ztensor_remote_experimental.h): ztensord asks its upstream what kind of
 * server it is, and for its listing, with it.
 */
#include "ztensor/ztensor_remote_experimental.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef struct sink {
    char *p;
    size_t n, cap, max;
    char *etag;
    bool too_large;
} sink;

/* Room for need bytes and a NUL, doubling from 4 KiB. */
static int grow(sink *s, size_t need)
{
    if (need < s->cap)
        return 0;
    size_t cap = s->cap ? s->cap : 4096;
    while (cap <= need)
        cap *= 2;
    char *p = realloc(s->p, cap);
    if (!p)
        return -1;
    s->p = p;
    s->cap = cap;
    return 0;
}

static size_t on_body(char *p, size_t size, size_t nmemb, void *ud)
{
    sink *s = ud;
    size_t n = size * nmemb;
    if (s->n + n > s->max) {
        s->too_large = true;
        return 0; /* fails the transfer */
    }
    if (grow(s, s->n + n) != 0)
        return 0;
    memcpy(s->p + s->n, p, n);
    s->n += n;
    s->p[s->n] = 0;
    return n;
}

static size_t on_header(char *p, size_t size, size_t nmemb, void *ud)
{
    sink *s = ud;
    size_t n = size * nmemb;
    if (n > 5 && !strncasecmp(p, "etag:", 5)) {
        const char *v = p + 5;
        while (*v == ' ' || *v == '\t')
            v++;
        size_t vl = (size_t)(p + n - v);
        while (vl && (v[vl - 1] == '\r' || v[vl - 1] == '\n' || v[vl - 1] == ' '))
            vl--;
        if (vl < 256) {
            memcpy(s->etag, v, vl);
            s->etag[vl] = 0;
        }
    }
    return n;
}

int zt_remote_http_get(const char *url, const char *token, const char *if_none_match,
                       double connect_timeout, double timeout, size_t max, int *status, char **body,
                       size_t *len, char etag[256], int *timed_out)
{
    *status = 0;
    *body = NULL;
    *len = 0;
    *timed_out = 0;
    etag[0] = 0;
    CURL *e = curl_easy_init();
    if (!e)
        return -1;
    sink s = {.max = max, .etag = etag};
    struct curl_slist *h = NULL;
    char line[600];
    if (token) {
        snprintf(line, sizeof(line), "Authorization: Bearer %s", token);
        h = curl_slist_append(h, line);
    }
    if (if_none_match && if_none_match[0]) {
        snprintf(line, sizeof(line), "If-None-Match: %s", if_none_match);
        h = curl_slist_append(h, line);
    }
    curl_easy_setopt(e, CURLOPT_URL, url);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, (long)(connect_timeout * 1000));
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)(timeout * 1000));
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, &s);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, &s);
    CURLcode rc = curl_easy_perform(e);
    long code = 0;
    curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &code);
    curl_easy_cleanup(e);
    curl_slist_free_all(h);
    if (rc != CURLE_OK) {
        *timed_out = s.too_large ? 2 : rc == CURLE_OPERATION_TIMEDOUT;
        free(s.p);
        return 0;
    }
    *status = (int)code;
    *body = s.p;
    *len = s.n;
    return 0;
}
