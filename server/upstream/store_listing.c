/* An S3 store's objects as a listing (see store_listing.h). */
#include "upstream/store_listing.h"
#include "core/dates.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct list_ctx {
    json_t *files;
    size_t strip; /* "PREFIX/": the bytes of a key before its name */
    int failed;
} list_ctx;

/* "2026-11-27T21:12:11.000Z" (S3's LastModified) as Unix seconds; -1 if not that form. */
static long long iso_seconds(const char *s)
{
    int y, mo, d, h, mi, sec;
    if (!s || sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d", &y, &mo, &d, &h, &mi, &sec) != 6 || mo < 1 ||
        mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60)
        return -1;
    return (long long)ztd_days_from_civil(y, (unsigned)mo, (unsigned)d) * 86400 + h * 3600 +
           mi * 60 + sec;
}

static int on_object(void *ud, const char *key, uint64_t size, const char *etag,
                     const char *last_modified)
{
    list_ctx *x = ud;
    size_t n = strlen(key);
    if (n <= x->strip || key[n - 1] == '/' || (x->strip && key[x->strip - 1] != '/'))
        return 0; /* the prefix itself, a directory marker, or PREFIXsomething */
    char date[32] = "";
    long long t = iso_seconds(last_modified);
    ztd_http_date_format(t < 0 ? 0 : t, date);
    json_t *o =
        json_pack("{s:s, s:I, s:s, s:s, s:s}", "name", key + x->strip, "size", (json_int_t)size,
                  "etag", etag ? etag : "", "last_modified", date, "status", "ok");
    if (!o || json_array_append_new(x->files, o) != 0) {
        x->failed = 1;
        return 1;
    }
    return 0;
}

ztd_err ztd_store_list(const zt_remote_options *opt, const char *s3url, json_t **files, char *msg,
                       size_t cap)
{
    *files = NULL;
    const char *path = strchr(s3url + 5, '/'); /* s3://BUCKET[/PREFIX] */
    size_t plen = path ? strlen(path + 1) : 0;
    list_ctx x = {json_array(), plen ? plen + (path[plen] != '/') : 0, 0};
    zt_remote *r = NULL;
    zt_error ze;
    zt_status st = x.files ? zt_remote_new(opt, &r, &ze) : ZT_E_NOMEM;
    if (st == ZT_OK)
        st = zt_remote_s3_list(r, s3url, on_object, &x, &ze);
    zt_remote_free(r);
    if (st == ZT_OK && x.failed)
        st = ZT_E_NOMEM;
    if (st != ZT_OK) {
        snprintf(msg, cap, "upstream %s: the store's listing: %s", s3url,
                 st == ZT_E_NOMEM ? "out of memory" : ze.message);
        json_decref(x.files);
        return st == ZT_E_NOMEM ? ZTD_ERR_INTERNAL : ZTD_ERR_UPSTREAM_FAILED;
    }
    *files = x.files; /* ListObjectsV2 gives keys in byte order: sorted by name */
    return ZTD_ERR_NONE;
}
