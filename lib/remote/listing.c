/*
 * Listing a ztensord prefix (zt_remote_list): the pages of
 * GET /v1/files?prefix=P&limit=N&cursor=C, each parsed by a pure function
 * (fuzz_listing feeds it anything) and handed to the caller entry by entry.
 * A page is a plain GET, retried like a range request (network errors, 5xx,
 * 429) with the session's backoff. Every entry and cursor passes the walk's
 * checks (listing_walk.c) before the caller sees it: a server that loops,
 * repeats a name, lists outside the prefix or never ends is an error.
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

/* A safetensors view ("view_of") or a model's index ("format":
 * "safetensors-index"): bytes the server makes from its files, listed for
 * clients that download objects (S3, Hugging Face), not files a pull stores:
 * the files they are made of are listed too. */
static bool listed_virtual(json_t *f)
{
    const char *format = json_string_value(json_object_get(f, "format"));
    return json_object_get(f, "view_of") || (format && (!strcmp(format, "safetensors-view") ||
                                                        !strcmp(format, "safetensors-index")));
}

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
        if (listed_virtual(f))
            continue;
        /* "corrupt" is served, but for components whose bytes the server found
         * wrong (issue 26): fetched, so that the pull fails naming them */
        if (fn(ud, name, (uint64_t)json_integer_value(size), etag ? etag : "",
               status && (!strcmp(status, "ok") || !strcmp(status, "corrupt"))))
            rc = 1;
    }
    json_decref(root);
    return rc;
}

static size_t on_body(char *p, size_t size, size_t nmemb, void *ud)
{
    ztr_page *pg = ud;
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

/* The walk's deadline passed (or would before the next attempt). */
static zt_status too_late(zt_remote *r, double deadline, const char *url, const char *why,
                          zt_error *err)
{
    char dn[80];
    return ztr__fail(err, ZT_E_NETWORK, url, NULL, NULL, 0, 0, "%s%s%s passed", why,
                     why[0] ? "; " : "", ztr__deadline_name(r, deadline, dn, sizeof(dn)));
}

/* One GET of url into pg, retried, ending by deadline (0: none); the final
 * HTTP status in *code. A page that arrives slower than the session's
 * min_rate (1 byte/s at least) over a stall_timeout is dropped and retried,
 * like a range request. */
zt_status ztr__get_page(zt_remote *r, const char *url, double deadline, ztr_page *pg, long *code,
                        zt_error *err)
{
    struct curl_slist *h = NULL;
    if (ztr__auth_headers(r, &h))
        return ztr__fail(err, ZT_E_NOMEM, url, NULL, NULL, 0, 0, "out of memory");
    double wait = r->opt.backoff;
    zt_status st = ZT_OK;
    for (unsigned attempt = 0;; attempt++) {
        double left = deadline > 0 ? deadline - ztr__now() : 0;
        if (deadline > 0 && left <= 0) {
            st = too_late(r, deadline, url, "", err);
            break;
        }
        CURL *e = ztr__easy_get(r);
        if (!e) {
            st = ztr__fail(err, ZT_E_NOMEM, url, NULL, NULL, 0, 0, "out of memory");
            break;
        }
        free(pg->p);
        *pg = (ztr_page){0};
        char eb[CURL_ERROR_SIZE] = "";
        curl_easy_setopt(e, CURLOPT_URL, url);
        curl_easy_setopt(e, CURLOPT_HTTPHEADER, h);
        curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
        curl_easy_setopt(e, CURLOPT_WRITEDATA, pg);
        ztr__easy_base(r, e, eb);
        long rate = r->opt.min_rate > 1 ? (long)(r->opt.min_rate + 0.5) : 1;
        curl_easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT, rate);
        curl_easy_setopt(e, CURLOPT_LOW_SPEED_TIME, (long)(r->opt.stall_timeout + 0.999));
        curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, deadline > 0 ? (long)(left * 1000) + 1 : 0L);
        ztr__auth_setopt(r, e);
        CURLcode cc = curl_easy_perform(e);
        *code = 0;
        curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, code);
        ztr__easy_put(r, e);
        if (*code > 0)
            r->answered = true;
        /* As transport.c: a refused connection or a name that does not
         * resolve is a wrong address until a server answered here. */
        bool unreachable =
            (cc == CURLE_COULDNT_CONNECT || cc == CURLE_COULDNT_RESOLVE_HOST) && !r->answered;
        bool transient =
            (cc != CURLE_OK && !pg->over && !unreachable) || *code == 429 || *code >= 500;
        double wait_s = wait * (0.5 + ztr__rand01(r));
        if (transient && deadline > 0 && ztr__now() + wait_s >= deadline) {
            char why[CURL_ERROR_SIZE + 32];
            if (cc)
                snprintf(why, sizeof(why), "%s", eb[0] ? eb : curl_easy_strerror(cc));
            else
                snprintf(why, sizeof(why), "HTTP %ld", *code);
            st = too_late(r, deadline, url, why, err);
            break;
        }
        if (!transient || attempt >= r->opt.max_retries) {
            if (pg->over)
                st = ztr__fail(err, ZT_E_LIMIT, url, NULL, NULL, 0, 0,
                               "a listing page over %u bytes", BODY_MAX);
            else if (cc != CURLE_OK)
                st = ztr__fail(err, ZT_E_NETWORK, url, NULL, NULL, 0, 0, "%s%s",
                               eb[0] ? eb : curl_easy_strerror(cc),
                               unreachable ? "; not retried: no server has answered at this "
                                             "address yet"
                                           : "");
            break;
        }
        usleep((useconds_t)(wait_s * 1e6));
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

typedef struct walk_ctx {
    ztr_walk w;
    zt_remote_list_fn fn;
    void *ud;
    zt_status code; /* why the walk stopped a page, or ZT_OK */
    char why[600];
} walk_ctx;

/* Each entry through the walk's checks, then to the caller. */
static int on_listed(void *ud, const char *name, uint64_t size, const char *etag, int ok)
{
    walk_ctx *c = ud;
    int r = ztr__walk_entry(&c->w, name, c->why, sizeof(c->why));
    if (r) {
        c->code = r == -1 ? ZT_E_HTTP : r == -2 ? ZT_E_LIMIT : ZT_E_NOMEM;
        return 1;
    }
    return c->fn(c->ud, name, size, etag, ok);
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
    ztr_page pg = {0};
    zt_status st = q && esc && cursor
                       ? ZT_OK
                       : ztr__fail(err, ZT_E_NOMEM, url, NULL, NULL, 0, 0, "out of memory");
    if (!st && !query_escape(url + base + 1, esc, cap))
        st = ztr__fail(err, ZT_E_ARG, url, NULL, NULL, 0, 0, "URL too long");
    if (cursor)
        cursor[0] = 0;
    walk_ctx c = {.fn = fn, .ud = ud};
    double deadline = ztr__deadline(r); /* the whole walk is one call */
    if (!st && ztr__walk_init(&c.w, url + base + 1, r->opt.list_max_entries, r->opt.list_max_bytes))
        st = ztr__fail(err, ZT_E_NOMEM, url, NULL, NULL, 0, 0, "out of memory");
    for (unsigned pages = 0; !st; pages++) {
        snprintf(q, cap, "%.*s?prefix=%s&limit=%u%s%s", (int)base, url, esc, PAGE_LIMIT,
                 cursor[0] ? "&cursor=" : "", cursor);
        long code;
        if ((st = ztr__get_page(r, q, deadline, &pg, &code, err)))
            break;
        if (code != 200) {
            char why[200];
            ztr__error_summary(pg.p ? pg.p : "", pg.n, why, sizeof(why));
            st = ztr__fail(err, code == 404 ? ZT_E_NOT_FOUND : ZT_E_HTTP, q, NULL, NULL, 0, 0,
                           "HTTP %ld: %s", code, why);
            break;
        }
        int rc = ztr__parse_listing(pg.p ? pg.p : "", pg.n, on_listed, &c, cursor, 8300);
        if (rc < 0)
            st = ztr__fail(err, ZT_E_JSON, q, NULL, NULL, 0, 0, "not a file listing");
        else if (c.code)
            st = ztr__fail(err, c.code, q, NULL, NULL, 0, 0, "%s", c.why);
        else if (rc > 0 || !cursor[0])
            break;
        else if (pages + 1 >= MAX_PAGES)
            st = ztr__fail(err, ZT_E_HTTP, q, NULL, NULL, 0, 0,
                           "the listing's pages do not end: over %u pages", MAX_PAGES);
        else if ((rc = ztr__walk_cursor(&c.w, cursor, c.why, sizeof(c.why))) != 0)
            st = ztr__fail(err, rc > 0 ? ZT_E_HTTP : ZT_E_NOMEM, q, NULL, NULL, 0, 0, "%s", c.why);
    }
    ztr__walk_free(&c.w);
    free(pg.p);
    free(q);
    free(esc);
    free(cursor);
    return st;
}
