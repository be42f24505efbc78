/*
 * Listing an S3 prefix (zt_remote_s3_list): ListObjectsV2 pages of
 * s3_max_keys keys, fetched like a ztensord listing's pages (ztr__get_page:
 * retried, bounded by the session's deadline and min_rate), parsed by expat
 * (s3_listing.c), and walked with the same checks (listing_walk.c): a
 * continuation token that comes back, a key not after the one before or
 * outside the prefix, and the caps on keys and bytes of keys. An error answer
 * is named by S3's own code and message.
 */
#include "remote_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PAGES 1000000

typedef struct s3_walk {
    ztr_walk w;
    zt_remote_s3_list_fn fn;
    void *ud;
    zt_status code; /* why the walk stopped a page, or ZT_OK */
    char why[600];
} s3_walk;

static int on_key(void *ud, const ztr_s3_object *o)
{
    s3_walk *c = ud;
    int r = ztr__walk_entry(&c->w, o->key, c->why, sizeof(c->why));
    if (r) {
        c->code = r == -1 ? ZT_E_HTTP : r == -2 ? ZT_E_LIMIT : ZT_E_NOMEM;
        return 1;
    }
    return c->fn(c->ud, o->key, o->size, o->etag, o->last_modified);
}

/* An answer other than 200: S3's <Error> named, or the body's start. */
static zt_status answer_fail(const char *url, long code, const ztr_page *pg, zt_error *err)
{
    char scode[64], msg[300], summary[400];
    const char *body = pg->p ? pg->p : "";
    if (ztr__s3_parse_error(body, pg->n, scode, sizeof(scode), msg, sizeof(msg)) == 0)
        snprintf(summary, sizeof(summary), "%s: %s", scode, msg);
    else if (pg->n)
        ztr__error_summary(body, pg->n, summary, sizeof(summary));
    else
        snprintf(summary, sizeof(summary), "no body%s",
                 code == 403 ? " (access denied: check the credentials and the bucket's policy)"
                             : "");
    return ztr__fail(err, code == 404 ? ZT_E_NOT_FOUND : ZT_E_HTTP, url, NULL, NULL, 0, 0,
                     "HTTP %ld: %s", code, summary);
}

zt_status zt_remote_s3_list(zt_remote *r, const char *url, zt_remote_s3_list_fn fn, void *ud,
                            zt_error *err)
{
    if (!r || !url || !fn)
        return ztr__fail(err, ZT_E_ARG, url, NULL, NULL, 0, 0, "NULL argument");
    if (!r->s3_region)
        return ztr__fail(err, ZT_E_ARG, url, NULL, NULL, 0, 0, "not an S3 session (s3_region)");
    char bucket[64];
    const char *prefix;
    zt_status st = zt_remote_s3_split(url, bucket, &prefix, err);
    if (st)
        return st;
    ztr_s3_page *page = calloc(1, sizeof(*page));
    char *token = calloc(1, ZTR_S3_TOKEN_MAX + 1), *q = NULL;
    s3_walk c = {.fn = fn, .ud = ud};
    ztr_page pg = {0};
    /* The walk's prefix is %XX-decoded: give it one with no '%' left. */
    char *wprefix = malloc(strlen(prefix) * 3 + 1);
    if (!page || !token || !wprefix ||
        !ztr__s3_escape(prefix, true, wprefix, strlen(prefix) * 3 + 1) ||
        ztr__walk_init(&c.w, wprefix, r->opt.list_max_entries, r->opt.list_max_bytes))
        st = ztr__fail(err, ZT_E_NOMEM, url, NULL, NULL, 0, 0, "out of memory");
    double deadline = ztr__deadline(r); /* the whole walk is one call */
    for (unsigned pages = 0; !st; pages++) {
        free(q);
        if (!(q = ztr__s3_list_url(r, bucket, prefix, token))) {
            st = ztr__fail(err, ZT_E_NOMEM, url, NULL, NULL, 0, 0, "out of memory");
            break;
        }
        long code;
        if ((st = ztr__get_page(r, q, deadline, &pg, &code, err)))
            break;
        if (code != 200) {
            st = answer_fail(q, code, &pg, err);
            break;
        }
        page->max_keys = r->opt.s3_max_keys;
        char why[300];
        int rc = ztr__s3_parse_listing(pg.p ? pg.p : "", pg.n, page, on_key, &c, why, sizeof(why));
        if (rc < 0)
            st =
                ztr__fail(err, ZT_E_HTTP, q, NULL, NULL, 0, 0, "not a ListObjectsV2 page: %s", why);
        else if (c.code)
            st = ztr__fail(err, c.code, q, NULL, NULL, 0, 0, "%s", c.why);
        else if (rc > 0 || !page->truncated)
            break;
        else if (pages + 1 >= MAX_PAGES)
            st = ztr__fail(err, ZT_E_HTTP, q, NULL, NULL, 0, 0,
                           "the listing's pages do not end: over %u pages", MAX_PAGES);
        else if ((rc = ztr__walk_cursor(&c.w, page->next_token, c.why, sizeof(c.why))) != 0)
            st = ztr__fail(err, rc > 0 ? ZT_E_HTTP : ZT_E_NOMEM, q, NULL, NULL, 0, 0, "%s", c.why);
        else
            memcpy(token, page->next_token, strlen(page->next_token) + 1);
    }
    ztr__walk_free(&c.w);
    free(pg.p);
    free(q);
    free(token);
    free(page);
    free(wprefix);
    return st;
}
