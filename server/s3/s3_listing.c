/*
 * ListObjectsV2 and ListObjects (v1) over the catalog's snapshot (and on a
 * sidecar the upstream's listing, the root's files winning): the
 * arguments, the page (s3_list.h: binary search, so a page costs its own
 * length), and the XML. A continuation token is the base64 of the last key
 * or common prefix of the page before; clients treat it as opaque.
 */
#include "s3/s3_error.h"
#include "s3/s3_internal.h"
#include "s3/s3_list.h"
#include "core/dates.h"
#include "http/upstream_files.h"
#include "store/names.h"

#include <jansson.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S3_NS "http://s3.amazonaws.com/doc/2006-03-01/"
#define ARG_MAX_LEN ZTD_PATH_MAX

typedef struct list_args {
    bool v2, url, owner;
    char prefix[ARG_MAX_LEN + 1], delim[ARG_MAX_LEN + 1];
    char start_after[ARG_MAX_LEN + 1], token[ARG_MAX_LEN + 1], marker[ARG_MAX_LEN + 1];
    long prefix_len, delim_len, start_after_len, token_len, marker_len;
    char after[ARG_MAX_LEN + 1]; /* decoded token, or start-after, or marker */
    long after_len;
    size_t max_keys;
} list_args;

/* An object of the listing: a catalog entry (e), or on a sidecar a file of
 * the upstream's listing the catalog does not hold (j). */
typedef struct s3_obj {
    const char *name;
    const ztd_entry *e;
    const json_t *j;
} s3_obj;

static const char *obj_name(const void *names, size_t i)
{
    return ((const s3_obj *)names)[i].name;
}

static bool obj_skip(const void *names, size_t i)
{
    (void)names;
    (void)i;
    return false;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const s3_obj *)a)->name, ((const s3_obj *)b)->name);
}

/* The snapshot's listed entries, and the upstream's files (up, may be NULL)
 * that the root does not hold, sorted by name: malloc'ed, NULL when out of
 * memory. An upstream is a stranger: a name no client could ask for, or a
 * file it cannot serve, is not listed. */
static s3_obj *objects(const ztd_snapshot *snap, const json_t *up, size_t *n)
{
    size_t nup = json_array_size(up), k = 0;
    s3_obj *v = malloc((snap->n + nup + 1) * sizeof(*v));
    if (!v)
        return NULL;
    for (size_t i = 0; i < snap->n; i++)
        if (ztd_s3_entry_listed(snap->entries[i]))
            v[k++] = (s3_obj){snap->entries[i]->name, snap->entries[i], NULL};
    size_t local = k;
    for (size_t i = 0; i < nup; i++) {
        const json_t *f = json_array_get(up, i);
        const char *name = json_string_value(json_object_get(f, "name"));
        const char *st = json_string_value(json_object_get(f, "status"));
        if (name && json_is_integer(json_object_get(f, "size")) && st && strcmp(st, "error") &&
            !ztd_file_path_problem(name, strlen(name)) &&
            !ztd_snapshot_find(snap, name, strlen(name)))
            v[k++] = (s3_obj){name, NULL, f};
    }
    if (k > local)
        qsort(v, k, sizeof(*v), by_name);
    *n = k;
    return v;
}

/* An optional argument: its decoded length, 0 when absent, -2 when bad. */
static long opt_arg(struct MHD_Connection *c, const char *name, char *out)
{
    long n = ztd_s3_arg(c, name, out, ARG_MAX_LEN + 1);
    if (n == -1) {
        out[0] = 0;
        return 0;
    }
    return n;
}

/* 0, or -1 with the reason in *why. */
static int parse_args(struct MHD_Connection *c, list_args *a, const char **why)
{
    char v[64];
    long n;
    a->v2 = ztd_s3_has_arg(c, "list-type");
    if (a->v2 && (ztd_s3_arg(c, "list-type", v, sizeof(v)) != 1 || v[0] != '2'))
        return *why = "Invalid list type specified", -1;
    if ((a->prefix_len = opt_arg(c, "prefix", a->prefix)) < 0 ||
        (a->delim_len = opt_arg(c, "delimiter", a->delim)) < 0 ||
        (a->start_after_len = opt_arg(c, "start-after", a->start_after)) < 0 ||
        (a->token_len = opt_arg(c, "continuation-token", a->token)) < 0 ||
        (a->marker_len = opt_arg(c, "marker", a->marker)) < 0)
        return *why = "an argument is badly percent-encoded or too long", -1;
    a->max_keys = ZTD_S3_MAX_KEYS;
    if ((n = ztd_s3_arg(c, "max-keys", v, sizeof(v))) != -1) {
        unsigned long long k = 0;
        if (n <= 0 || n > 18)
            return *why = "Provided max-keys not an integer or within integer range", -1;
        for (long i = 0; i < n; i++) {
            if (v[i] < '0' || v[i] > '9')
                return *why = "Provided max-keys not an integer or within integer range", -1;
            k = k * 10 + (unsigned)(v[i] - '0');
        }
        if (k > 2147483647ull)
            return *why = "Provided max-keys not an integer or within integer range", -1;
        a->max_keys = k < ZTD_S3_MAX_KEYS ? (size_t)k : ZTD_S3_MAX_KEYS;
    }
    if ((n = ztd_s3_arg(c, "encoding-type", v, sizeof(v))) != -1) {
        if (n != 3 || memcmp(v, "url", 3) != 0)
            return *why = "Invalid Encoding Method specified in Request", -1;
        a->url = true;
    }
    if ((n = ztd_s3_arg(c, "fetch-owner", v, sizeof(v))) != -1)
        a->owner = n == 4 && memcmp(v, "true", 4) == 0;
    if (!a->v2)
        a->owner = true; /* v1 always names the owner */
    a->after_len = -1;
    if (a->v2 && ztd_s3_has_arg(c, "continuation-token")) {
        size_t tl = (size_t)a->token_len;
        int k = tl && tl % 4 == 0 ? EVP_DecodeBlock((unsigned char *)a->after,
                                                    (const unsigned char *)a->token, (int)tl)
                                  : -1;
        if (k < 0)
            return *why = "The continuation token provided is incorrect", -1;
        k -= (a->token[tl - 1] == '=') + (tl > 1 && a->token[tl - 2] == '=');
        if (k <= 0 || memchr(a->after, 0, (size_t)k))
            return *why = "The continuation token provided is incorrect", -1;
        a->after[k] = 0;
        a->after_len = k;
    } else if (a->v2 ? a->start_after_len > 0 : a->marker_len > 0) {
        const char *s = a->v2 ? a->start_after : a->marker;
        a->after_len = a->v2 ? a->start_after_len : a->marker_len;
        memcpy(a->after, s, (size_t)a->after_len + 1);
    }
    return 0;
}

/* Text as S3's encoding-type=url writes it: all but unreserved bytes and
 * '/' percent-encoded. */
static void put_text(ztd_xml *x, const char *name, const char *s, size_t n, bool url)
{
    static const char hex[] = "0123456789ABCDEF";
    if (!url)
        return ztd_xml_elem(x, name, s, n);
    ztd_xml_open(x, name, NULL);
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        bool keep = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                    (ch >= '0' && ch <= '9') || ch == '-' || ch == '_' || ch == '.' || ch == '~' ||
                    ch == '/';
        char e[3] = {'%', hex[ch >> 4], hex[ch & 15]};
        if (keep)
            ztd_xml_text(x, (const char *)&ch, 1);
        else
            ztd_xml_text(x, e, 3);
    }
    ztd_xml_close(x, name);
}

static void put_owner(ztd_xml *x)
{
    ztd_xml_open(x, "Owner", NULL);
    ztd_xml_elem_str(x, "ID", "ztensord");
    ztd_xml_elem_str(x, "DisplayName", "ztensord");
    ztd_xml_close(x, "Owner");
}

/* An upstream file's ETag and date as the listing gives them: its validator
 * in the S3 form (ztd_s3_etag's "-1"), its last_modified (the epoch when
 * the upstream gives none: stable, so sync tools see no change). */
static void upstream_fields(const json_t *f, char date[32], char etag[96], uint64_t *size)
{
    const char *t = json_string_value(json_object_get(f, "etag"));
    const char *lm = json_string_value(json_object_get(f, "last_modified"));
    size_t n = t ? strlen(t) : 0;
    int64_t when = 0;
    if (!lm || ztd_http_date_parse(lm, &when) != 0)
        when = 0;
    ztd_s3_iso_time(when * 1000000000, date);
    if (n >= 2 && n + 3 < 96 && t[0] == '"' && t[n - 1] == '"' && !memchr(t, '-', n))
        snprintf(etag, 96, "%.*s-1\"", (int)(n - 1), t);
    else if (n >= 2 && n < 96 && t[0] == '"' && t[n - 1] == '"')
        memcpy(etag, t, n + 1);
    else
        strcpy(etag, "\"\"");
    json_int_t sz = json_integer_value(json_object_get(f, "size"));
    *size = sz > 0 ? (uint64_t)sz : 0;
}

static void put_contents(ztd_xml *x, const s3_obj *o, size_t base_len, const list_args *a)
{
    char date[32], etag[96];
    uint64_t size;
    if (o->e) {
        ztd_s3_iso_time(o->e->mtime_ns, date);
        ztd_s3_etag(o->e, etag);
        size = o->e->size;
    } else {
        upstream_fields(o->j, date, etag, &size);
    }
    ztd_xml_open(x, "Contents", NULL);
    put_text(x, "Key", o->name + base_len, strlen(o->name) - base_len, a->url);
    ztd_xml_elem_str(x, "LastModified", date);
    ztd_xml_elem_str(x, "ETag", etag);
    ztd_xml_elem_u64(x, "Size", size);
    if (a->owner)
        put_owner(x);
    ztd_xml_elem_str(x, "StorageClass", "STANDARD");
    ztd_xml_close(x, "Contents");
}

/* The head of the result, before the items. */
static void put_head(ztd_xml *x, const ztd_s3_req *q, const list_args *a, size_t count,
                     bool truncated)
{
    ztd_xml_open(x, "ListBucketResult", S3_NS);
    ztd_xml_elem_str(x, "Name", q->bucket->name);
    put_text(x, "Prefix", a->prefix, (size_t)a->prefix_len, a->url);
    if (a->v2) {
        if (a->start_after_len > 0)
            put_text(x, "StartAfter", a->start_after, (size_t)a->start_after_len, a->url);
        if (a->token_len > 0)
            ztd_xml_elem(x, "ContinuationToken", a->token, (size_t)a->token_len);
        ztd_xml_elem_u64(x, "KeyCount", count);
    } else {
        put_text(x, "Marker", a->marker, (size_t)a->marker_len, a->url);
    }
    ztd_xml_elem_u64(x, "MaxKeys", a->max_keys);
    if (a->delim_len > 0)
        put_text(x, "Delimiter", a->delim, (size_t)a->delim_len, a->url);
    if (a->url)
        ztd_xml_elem_str(x, "EncodingType", "url");
    ztd_xml_elem_str(x, "IsTruncated", truncated ? "true" : "false");
}

/* Where the next page starts: NextContinuationToken (v2), or NextMarker
 * (v1, when a delimiter was given: otherwise clients use the last key). */
static void put_next(ztd_xml *x, const list_args *a, const char *last, size_t n)
{
    if (!a->v2) {
        if (a->delim_len > 0)
            put_text(x, "NextMarker", last, n, a->url);
        return;
    }
    char *tok = malloc(4 * (n / 3 + 1) + 1);
    if (!tok) {
        x->failed = true;
        return;
    }
    int k = EVP_EncodeBlock((unsigned char *)tok, (const unsigned char *)last, (int)n);
    ztd_xml_elem(x, "NextContinuationToken", tok, (size_t)k);
    free(tok);
}

static enum MHD_Result page_answer(struct MHD_Connection *c, ztd_req *r, const ztd_s3_req *q,
                                   const list_args *a, const s3_obj *objs, size_t nobjs)
{
    ztd_s3_list_page *pg = malloc(sizeof(*pg));
    if (!pg)
        return ztd_s3_fail(c, r, ZTD_S3_INTERNAL);
    size_t base_len = q->bucket->dir_len ? q->bucket->dir_len + 1 : 0;
    char *base = malloc(base_len + 1);
    if (!base) {
        free(pg);
        return ztd_s3_fail(c, r, ZTD_S3_INTERNAL);
    }
    memcpy(base, q->bucket->dir, q->bucket->dir_len);
    base[base_len ? base_len - 1 : 0] = '/';
    base[base_len] = 0;
    ztd_s3_list_req lq = {base,
                          base_len,
                          a->prefix,
                          (size_t)a->prefix_len,
                          a->delim,
                          (size_t)a->delim_len,
                          a->after_len >= 0 ? a->after : NULL,
                          a->after_len >= 0 ? (size_t)a->after_len : 0,
                          a->max_keys};
    ztd_s3_list(&lq, objs, nobjs, obj_name, obj_skip, pg);
    ztd_xml x;
    ztd_xml_begin(&x);
    put_head(&x, q, a, pg->n, pg->truncated);
    for (size_t i = 0; i < pg->n; i++)
        if (!pg->items[i].prefix_len)
            put_contents(&x, &objs[pg->items[i].index], base_len, a);
    for (size_t i = 0; i < pg->n; i++) {
        if (!pg->items[i].prefix_len)
            continue;
        ztd_xml_open(&x, "CommonPrefixes", NULL);
        put_text(&x, "Prefix", objs[pg->items[i].index].name + base_len, pg->items[i].prefix_len,
                 a->url);
        ztd_xml_close(&x, "CommonPrefixes");
    }
    if (pg->truncated && pg->n) {
        const ztd_s3_list_item *it = &pg->items[pg->n - 1];
        const char *name = objs[it->index].name;
        put_next(&x, a, name + base_len, it->prefix_len ? it->prefix_len : strlen(name) - base_len);
    }
    ztd_xml_close(&x, "ListBucketResult");
    free(base);
    free(pg);
    return ztd_s3_xml_answer(c, r, 200, &x);
}

enum MHD_Result ztd_s3_list_objects(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                    const ztd_s3_req *q)
{
    list_args *a = calloc(1, sizeof(*a));
    const char *why = NULL;
    if (!a)
        return ztd_s3_fail(c, r, ZTD_S3_INTERNAL);
    if (parse_args(c, a, &why) != 0) {
        free(a);
        return ztd_s3_error(c, r, ZTD_S3_INVALID_ARGUMENT, "%s", why);
    }
    json_t *up = NULL;
    if (s->upstream) { /* a sidecar lists the upstream's files too */
        bool wait;
        ztd_err err;
        const char *msg = "";
        up = ztd_answer_upstream_files(s, c, r, &wait, &err, &msg);
        if (wait || err) {
            free(a);
            return wait ? MHD_YES : ztd_s3_shared_error(c, r, err, msg);
        }
    }
    ztd_snapshot *snap = ztd_catalog_acquire(s->catalog);
    size_t n = 0;
    s3_obj *objs = snap ? objects(snap, up, &n) : NULL;
    enum MHD_Result ret =
        !snap  ? ztd_s3_error(c, r, ZTD_S3_SERVICE_UNAVAILABLE, "the catalog is not ready yet")
        : objs ? page_answer(c, r, q, a, objs, n)
               : ztd_s3_fail(c, r, ZTD_S3_INTERNAL);
    free(objs);
    ztd_snapshot_release(snap);
    json_decref(up);
    free(a);
    return ret;
}
