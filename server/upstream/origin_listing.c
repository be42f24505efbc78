/* The upstream's kind, and its listing cached and revalidated (see origin_listing.h). */
#include "upstream/origin_listing.h"
#include "upstream/store_listing.h"
#include "core/clock.h"
#include "core/config.h"
#include "core/partition.h"

#include <ztensor/ztensor_remote_experimental.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Bytes of a listing body: about 100,000 files. Parsed, a listing takes some
 * 15 times its size in memory; a larger one is refused (502) rather than let
 * an upstream make this server hold gigabytes. */
#define MAX_LISTING (16u << 20)

struct ztd_uplist {
    char *base, *token;
    const zt_remote_options *store; /* an S3 store's (base is then its s3:// URL) */
    ztd_uplist_more_fn *more;       /* adds to a store's listing (its views), or NULL */
    void *more_ctx;
    double connect_timeout, timeout;
    uint64_t ttl_ms;
    pthread_mutex_t mu; /* one fetch at a time; the fields below */
    json_t *files;      /* sorted by name, or NULL */
    char etag[256];
    uint64_t checked; /* ztd_now_ms() */
};

ztd_uplist *ztd_uplist_new(const char *base, const char *token, double connect_timeout,
                           double timeout, uint64_t ttl_ms)
{
    ztd_uplist *l = calloc(1, sizeof(*l));
    if (!l || !(l->base = strdup(base)) || (token && !(l->token = strdup(token)))) {
        ztd_uplist_free(l);
        return NULL;
    }
    l->connect_timeout = connect_timeout;
    l->timeout = timeout;
    l->ttl_ms = ttl_ms;
    pthread_mutex_init(&l->mu, NULL);
    return l;
}

ztd_uplist *ztd_uplist_new_store(const zt_remote_options *opt, const char *s3url, uint64_t ttl_ms)
{
    ztd_uplist *l = ztd_uplist_new(s3url, NULL, 0, 0, ttl_ms);
    if (l)
        l->store = opt;
    return l;
}

void ztd_uplist_set_more(ztd_uplist *l, ztd_uplist_more_fn *fn, void *ctx)
{
    l->more = fn;
    l->more_ctx = ctx;
}

void ztd_uplist_free(ztd_uplist *l)
{
    if (!l)
        return;
    json_decref(l->files);
    if (l->base)
        pthread_mutex_destroy(&l->mu);
    free(l->base);
    free(l->token);
    free(l);
}

static json_t *fresh(ztd_uplist *l)
{
    if (!l->files || ztd_now_ms() - l->checked >= l->ttl_ms)
        return NULL;
    return json_incref(l->files);
}

json_t *ztd_uplist_peek(ztd_uplist *l)
{
    pthread_mutex_lock(&l->mu);
    json_t *j = fresh(l);
    pthread_mutex_unlock(&l->mu);
    return j;
}

static int by_name(const void *a, const void *b)
{
    const char *x = json_string_value(json_object_get(*(json_t *const *)a, "name"));
    const char *y = json_string_value(json_object_get(*(json_t *const *)b, "name"));
    return strcmp(x ? x : "", y ? y : "");
}

/* The listing objects of files sorted by name, in a new array (a new
 * reference); NULL when one is not an object with a name, or out of memory. */
static json_t *sorted(const json_t *files)
{
    size_t n = json_array_size(files);
    json_t **v = malloc((n ? n : 1) * sizeof(*v));
    json_t *out = v ? json_array() : NULL;
    for (size_t i = 0; out && i < n; i++) {
        v[i] = json_array_get(files, i);
        if (!json_is_object(v[i]) || !json_is_string(json_object_get(v[i], "name"))) {
            json_decref(out);
            out = NULL;
        }
    }
    if (out) {
        qsort(v, n, sizeof(*v), by_name);
        for (size_t i = 0; i < n; i++)
            json_array_append(out, v[i]);
    }
    free(v);
    return out;
}

/* The "files" array of a listing body, checked and sorted (a new reference). */
static json_t *parse(const char *body, size_t len)
{
    json_t *root = json_loadb(body, len, 0, NULL);
    json_t *files = json_object_get(root, "files");
    json_t *out = json_is_array(files) ? sorted(files) : NULL;
    json_decref(root);
    return out;
}

/* An S3 store's listing, fetched whole, under l->mu. */
static ztd_err refresh_store(ztd_uplist *l, char *msg, size_t cap)
{
    json_t *files = NULL, *all = NULL;
    ztd_err err = ztd_store_list(l->store, l->base, &files, msg, cap);
    if (!err && l->more && (l->more(l->more_ctx, files) != 0 || !(all = sorted(files)))) {
        snprintf(msg, cap, "upstream %s: the store's listing: out of memory", l->base);
        err = ZTD_ERR_INTERNAL;
    }
    if (all) {
        json_decref(files);
        files = all;
    }
    if (!err) {
        json_decref(l->files);
        l->files = files;
        l->checked = ztd_now_ms();
    } else {
        json_decref(files);
    }
    return err;
}

/* Fetch (or revalidate) under l->mu. */
static ztd_err refresh(ztd_uplist *l, char *msg, size_t cap)
{
    if (l->store)
        return refresh_store(l, msg, cap);
    char url[4200], etag[256];
    snprintf(url, sizeof(url), "%s/v1/files", l->base);
    int status, timed_out;
    char *body;
    size_t len;
    if (zt_remote_http_get(url, l->token, l->files ? l->etag : NULL, l->connect_timeout, l->timeout,
                           MAX_LISTING, &status, &body, &len, etag, &timed_out) != 0) {
        snprintf(msg, cap, "out of memory");
        return ZTD_ERR_INTERNAL;
    }
    ztd_err err = ZTD_ERR_NONE;
    json_t *files = NULL;
    if (status == 304 && l->files) {
        l->checked = ztd_now_ms();
    } else if (status == 200 && (files = parse(body, len))) {
        json_decref(l->files);
        l->files = files;
        snprintf(l->etag, sizeof(l->etag), "%s", etag);
        l->checked = ztd_now_ms();
    } else {
        err = timed_out == 1 ? ZTD_ERR_UPSTREAM_TIMEOUT : ZTD_ERR_UPSTREAM_FAILED;
        if (timed_out == 2)
            snprintf(msg, cap,
                     "upstream %s: the listing is larger than %u MiB, the most this server "
                     "reads",
                     l->base, MAX_LISTING >> 20);
        else if (status == 0)
            snprintf(msg, cap, "upstream %s: the listing could not be fetched (%s)", l->base,
                     timed_out ? "timed out" : "cannot connect");
        else
            snprintf(msg, cap, "upstream %s: the listing answered HTTP %d%s", l->base, status,
                     status == 200 ? " with something else than a listing" : "");
    }
    free(body);
    return err;
}

ztd_err ztd_uplist_get(ztd_uplist *l, json_t **out, char *msg, size_t cap)
{
    pthread_mutex_lock(&l->mu);
    ztd_err err = ZTD_ERR_NONE;
    if (!(*out = fresh(l))) {
        err = refresh(l, msg, cap);
        if (err && l->files) { /* served as it was, tried again after ttl */
            l->checked = ztd_now_ms();
            err = ZTD_ERR_NONE;
        }
        *out = err ? NULL : json_incref(l->files);
    }
    pthread_mutex_unlock(&l->mu);
    return err;
}

int ztd_upstream_probe(const char *base, const char *token, double connect_timeout, double timeout)
{
    char url[4200], etag[256];
    snprintf(url, sizeof(url), "%s/v1/files?limit=1", base);
    int status, timed_out;
    char *body;
    size_t len;
    if (zt_remote_http_get(url, token, NULL, connect_timeout, timeout, 1 << 20, &status, &body,
                           &len, etag, &timed_out) != 0 ||
        status == 0)
        return ZTD_UPSTREAM_AUTO;
    int kind = status == 200 && body && body[0] == '{' && strstr(body, "\"files\"")
                   ? ZTD_UPSTREAM_ZTENSORD
                   : ZTD_UPSTREAM_PLAIN;
    free(body);
    return kind;
}

typedef struct {
    const json_t *files;
    const char *name;
} name_key;

static const char *name_at(const json_t *files, size_t i)
{
    return json_string_value(json_object_get(json_array_get(files, i), "name"));
}

static bool name_below(const void *ctx, size_t i)
{
    const name_key *k = ctx;
    const char *n = name_at(k->files, i);
    return !n || strcmp(n, k->name) < 0;
}

json_t *ztd_uplist_find(const json_t *files, const char *name)
{
    /* the array is sorted by name (checked when it was fetched) */
    name_key k = {files, name};
    size_t n = json_array_size(files);
    size_t i = ztd_partition_point(0, n, name_below, &k);
    const char *at = i < n ? name_at(files, i) : NULL;
    return at && !strcmp(at, name) ? json_array_get(files, i) : NULL;
}

char *ztd_uplist_view_of(const json_t *files, const char *name)
{
    const char *of = json_string_value(json_object_get(ztd_uplist_find(files, name), "view_of"));
    return of ? strdup(of) : NULL;
}

char *ztd_uplist_view_of_fetched(ztd_uplist *l, const char *name)
{
    json_t *files = NULL;
    char msg[600];
    if (!l || ztd_uplist_get(l, &files, msg, sizeof(msg)) != ZTD_ERR_NONE)
        return NULL;
    char *of = ztd_uplist_view_of(files, name);
    json_decref(files);
    return of;
}
