/*
 * Listing a ztensord prefix (zt_remote_list): the pages of
 * GET /v1/files?prefix=P&limit=N&cursor=C, each parsed by a pure function
 * (fuzz_listing feeds it anything) and handed to the caller entry by entry.
 * A page is a plain GET, retried like a range request (network errors, 5xx,
 * 429) with the session's backoff.
 */
#include "remote_internal.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PAGE_LIMIT 1000
#define BODY_MAX (16u << 20) /* a page of 1000 names is about 150 KB */
#define MAX_PAGES 100000

int ztr__parse_listing(const char *body, size_t n, ztr_list_fn fn, void *ud, char *cursor,
                       size_t cap)
{
    json_t *root = json_loadb(body, n, JSON_REJECT_DUPLICATES, NULL);
    json_t *files = json_object_get(root, "files");
    json_t *next = json_object_get(root, "next_cursor");
    int rc = json_is_array(files) && (!next || json_is_string(next)) ? 0 : -1;
    cursor[0] = 0;
    if (!rc && next) {
        const char *c = json_string_value(next);
        if (!c[0] || strlen(c) >= cap)
            rc = -1;
        else
            memcpy(cursor, c, strlen(c) + 1);
    }
    for (size_t i = 0; !rc && i < json_array_size(files); i++) {
        json_t *f = json_array_get(files, i);
        const char *name = json_string_value(json_object_get(f, "name"));
        const char *etag = json_string_value(json_object_get(f, "etag"));
        const char *status = json_string_value(json_object_get(f, "status"));
        json_t *size = json_object_get(f, "size");
        if (!name || !name[0] || !json_is_integer(size) || json_integer_value(size) < 0) {
            rc = -1;
            break;
        }
        if (fn(ud, name, (uint64_t)json_integer_value(size), etag ? etag : "",
               status && !strcmp(status, "ok")))
            rc = 1;
    }
    json_decref(root);
    return rc;
}

typedef struct page {
    char *p;
    size_t n;
    bool over;
} page;

static size_t on_body(char *p, size_t size, size_t nmemb, void *ud)
{
    page *pg = ud;
    size_t n = size * nmemb;
    if (n > BODY_MAX - pg->n) {
        pg->over = true;
        return 0;
    }
    char *q = realloc(pg->p, pg->n + n + 1);
    if (!q)
        return 0;
    memcpy(q + pg->n, p, n);
    pg->p = q;
    pg->n += n;
    return n;
}

/* One GET of url into pg, retried; the final HTTP status in *code. */
static zt_status get_page(zt_remote *r, const char *url, page *pg, long *code, zt_error *err)
{
    char auth[4200];
    struct curl_slist *h = NULL;
    if (r->token) {
        snprintf(auth, sizeof(auth), "Authorization: Bearer %s", r->token);
        if (!(h = curl_slist_append(NULL, auth)))
            return ztr__fail(err, ZT_E_NOMEM, url, NULL, NULL, 0, 0, "out of memory");
    }
    double wait = r->opt.backoff;
    zt_status st = ZT_OK;
    for (unsigned attempt = 0;; attempt++) {
        CURL *e = ztr__easy_get(r);
        if (!e) {
            st = ztr__fail(err, ZT_E_NOMEM, url, NULL, NULL, 0, 0, "out of memory");
            break;
        }
        free(pg->p);
        *pg = (page){0};
        char eb[CURL_ERROR_SIZE] = "";
        curl_easy_setopt(e, CURLOPT_URL, url);
        curl_easy_setopt(e, CURLOPT_HTTPHEADER, h);
        curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
        curl_easy_setopt(e, CURLOPT_WRITEDATA, pg);
        curl_easy_setopt(e, CURLOPT_ERRORBUFFER, eb);
        curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
        curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, (long)(r->opt.connect_timeout * 1000));
        curl_easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT, 1L);
        curl_easy_setopt(e, CURLOPT_LOW_SPEED_TIME, (long)(r->opt.stall_timeout + 0.999));
        if (r->ca_file)
            curl_easy_setopt(e, CURLOPT_CAINFO, r->ca_file);
        if (r->opt.insecure) {
            curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L);
            curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
        }
        CURLcode cc = curl_easy_perform(e);
        *code = 0;
        curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, code);
        ztr__easy_put(r, e);
        bool transient = (cc != CURLE_OK && !pg->over) || *code == 429 || *code >= 500;
        if (!transient || attempt >= r->opt.max_retries) {
            if (pg->over)
                st = ztr__fail(err, ZT_E_LIMIT, url, NULL, NULL, 0, 0,
                               "a listing page over %u bytes", BODY_MAX);
            else if (cc != CURLE_OK)
                st = ztr__fail(err, ZT_E_NETWORK, url, NULL, NULL, 0, 0, "%s",
                               eb[0] ? eb : curl_easy_strerror(cc));
            break;
        }
        usleep((useconds_t)((wait * (0.5 + ztr__rand01(r))) * 1e6));
        wait = wait * 2 < r->opt.max_backoff ? wait * 2 : r->opt.max_backoff;
    }
    curl_slist_free_all(h);
    return st;
}

/* Percent-encodes s for a query value into out; false when cap is short. */
static bool query_escape(const char *s, char *out, size_t cap)
{
    size_t n = 0;
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                     strchr("-._~/%", c);
        if (n + 4 > cap)
            return false;
        if (plain) {
            out[n++] = (char)c;
        } else {
            n += (size_t)snprintf(out + n, cap - n, "%%%02X", c);
        }
    }
    out[n] = 0;
    return true;
}

zt_status zt_remote_list(zt_remote *r, const char *url, zt_remote_list_fn fn, void *ud,
                         zt_error *err)
{
    if (!r || !url || !fn)
        return ztr__fail(err, ZT_E_ARG, url, NULL, NULL, 0, 0, "NULL argument");
    const char *files = strstr(url, "/v1/files/");
    if (!files || strchr(url, '?') || strchr(url, '#'))
        return ztr__fail(err, ZT_E_ARG, url, NULL, NULL, 0, 0,
                         "not a ztensord prefix URL (http://HOST/v1/files/PREFIX)");
    size_t base = (size_t)(files - url) + 9, cap = strlen(url) * 3 + 8500;
    char *q = malloc(cap), *esc = malloc(cap), *cursor = malloc(8300);
    page pg = {0};
    zt_status st = q && esc && cursor
                       ? ZT_OK
                       : ztr__fail(err, ZT_E_NOMEM, url, NULL, NULL, 0, 0, "out of memory");
    if (!st && !query_escape(url + base + 1, esc, cap))
        st = ztr__fail(err, ZT_E_ARG, url, NULL, NULL, 0, 0, "URL too long");
    if (cursor)
        cursor[0] = 0;
    for (unsigned pages = 0; !st; pages++) {
        snprintf(q, cap, "%.*s?prefix=%s&limit=%u%s%s", (int)base, url, esc, PAGE_LIMIT,
                 cursor[0] ? "&cursor=" : "", cursor);
        long code;
        if ((st = get_page(r, q, &pg, &code, err)))
            break;
        if (code != 200) {
            char why[200];
            ztr__error_summary(pg.p ? pg.p : "", pg.n, why, sizeof(why));
            st = ztr__fail(err, code == 404 ? ZT_E_NOT_FOUND : ZT_E_HTTP, q, NULL, NULL, 0, 0,
                           "HTTP %ld: %s", code, why);
            break;
        }
        char prev[64];
        snprintf(prev, sizeof(prev), "%s", cursor);
        int rc = ztr__parse_listing(pg.p ? pg.p : "", pg.n, fn, ud, cursor, 8300);
        if (rc < 0)
            st = ztr__fail(err, ZT_E_JSON, q, NULL, NULL, 0, 0, "not a file listing");
        else if (rc > 0 || !cursor[0])
            break;
        else if (pages + 1 >= MAX_PAGES || !strcmp(prev, cursor))
            st = ztr__fail(err, ZT_E_HTTP, q, NULL, NULL, 0, 0, "the listing's pages do not end");
    }
    free(pg.p);
    free(q);
    free(esc);
    free(cursor);
    return st;
}
