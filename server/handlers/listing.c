/*
 * Paging of the file listing (listing.h): query arguments, the page over the
 * sorted names (two binary searches), the cursor, and the page's JSON.
 */
#include "handlers/listing.h"
#include "http/offload.h"
#include "http/response.h"
#include "store/names.h"
#include "upstream/upstream.h"
#include "upstream/origin_listing.h"

#include <jansson.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>

void ztd_listing_init(ztd_listing_query *q)
{
    memset(q, 0, sizeof(*q));
    q->limit = ZTD_LISTING_DEFAULT_LIMIT;
}

static int hexval(char c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

/* Percent-decoding ('+' is a space, as in forms) into out (cap bytes with
 * the NUL). -1 on a bad escape, a NUL byte, or too long. */
static int decode(const char *s, char *out, size_t cap, size_t *len)
{
    size_t n = 0;
    for (; *s; s++) {
        int c = (unsigned char)*s;
        if (c == '%') {
            int hi = hexval(s[1]), lo = hi < 0 ? -1 : hexval(s[2]);
            if (lo < 0)
                return -1;
            c = hi << 4 | lo;
            s += 2;
        } else if (c == '+') {
            c = ' ';
        }
        if (c == 0 || n + 1 >= cap)
            return -1;
        out[n++] = (char)c;
    }
    out[n] = 0;
    *len = n;
    return 0;
}

static int parse_cursor(ztd_listing_query *q, const char *v, const char **why)
{
    size_t n = strlen(v);
    *why = "cursor must be a next_cursor of an earlier page";
    if (n == 0 || n % 2 || n / 2 > ZTD_LISTING_MAX_NAME)
        return -1;
    for (size_t i = 0; i < n / 2; i++) {
        int hi = hexval(v[2 * i]), lo = hexval(v[2 * i + 1]);
        if (hi < 0 || lo < 0 || (hi | lo) == 0)
            return -1;
        q->after[i] = (char)(hi << 4 | lo);
    }
    q->after[n / 2] = 0;
    q->after_len = n / 2;
    q->has_after = true;
    return 0;
}

int ztd_listing_arg(ztd_listing_query *q, const char *key, const char *value, const char **why)
{
    if (!value)
        value = "";
    if (!strcmp(key, "prefix")) {
        q->paged = true;
        *why = "prefix must be percent-encoded UTF-8 of at most 4096 bytes, without NUL";
        return decode(value, q->prefix, sizeof(q->prefix), &q->prefix_len);
    }
    if (!strcmp(key, "cursor")) {
        q->paged = true;
        return parse_cursor(q, value, why);
    }
    if (!strcmp(key, "limit")) {
        q->paged = true;
        size_t v = 0, i = 0;
        for (; value[i] >= '0' && value[i] <= '9' && v <= ZTD_LISTING_MAX_LIMIT; i++)
            v = v * 10 + (size_t)(value[i] - '0');
        *why = "limit must be an integer from 1 to 10000";
        if (i == 0 || value[i] || v < 1 || v > ZTD_LISTING_MAX_LIMIT)
            return -1;
        q->limit = v;
        return 0;
    }
    return 0;
}

/* The first index whose name is not below key (key_len bytes; `past`: the
 * first whose name is above it). */
static size_t lower_bound(const void *entries, size_t n, ztd_listing_name_fn name, const char *key,
                          bool past)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(name(entries, mid), key);
        if (c < 0 || (past && c == 0))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static bool has_prefix(const char *s, const ztd_listing_query *q)
{
    return !strncmp(s, q->prefix, q->prefix_len);
}

void ztd_listing_page(const ztd_listing_query *q, const void *entries, size_t n,
                      ztd_listing_name_fn name, size_t *first, size_t *count, bool *more)
{
    size_t i = lower_bound(entries, n, name, q->prefix, false);
    if (q->has_after && strcmp(q->after, q->prefix) >= 0)
        i = lower_bound(entries, n, name, q->after, true);
    /* Names with the prefix are contiguous in byte order. */
    size_t k = 0;
    while (i + k < n && k < q->limit && has_prefix(name(entries, i + k), q))
        k++;
    *first = i;
    *count = k;
    *more = i + k < n && has_prefix(name(entries, i + k), q);
}

void ztd_listing_cursor(const char *name, char *out)
{
    for (; *name; name++) {
        *out++ = "0123456789abcdef"[(unsigned char)*name >> 4];
        *out++ = "0123456789abcdef"[(unsigned char)*name & 15];
    }
    *out = 0;
}

static const char *entry_name(const void *entries, size_t i)
{
    return ((ztd_entry *const *)entries)[i]->name;
}

char *ztd_listing_json(const ztd_snapshot *s, const ztd_listing_query *q, size_t *len)
{
    size_t first, count;
    bool more;
    ztd_listing_page(q, s->entries, s->n, entry_name, &first, &count, &more);
    json_t *arr = json_array();
    for (size_t i = 0; arr && i < count; i++)
        if (json_array_append_new(arr, ztd_entry_json(s->entries[first + i]))) {
            json_decref(arr);
            arr = NULL;
        }
    json_t *root = arr ? json_pack("{s:o, s:I}", "files", arr, "count", (json_int_t)count) : NULL;
    if (root && more) {
        const char *last = s->entries[first + count - 1]->name;
        char *cur = malloc(2 * strlen(last) + 1);
        if (cur) {
            ztd_listing_cursor(last, cur);
            json_object_set_new(root, "next_cursor", json_string(cur));
            free(cur);
        }
        if (!cur || !json_object_get(root, "next_cursor")) {
            json_decref(root);
            root = NULL;
        }
    }
    char *out = root ? json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(root);
    if (out)
        *len = strlen(out);
    return out;
}

typedef struct arg_ctx {
    ztd_listing_query *q;
    const char *why;
    bool bad;
} arg_ctx;

static enum MHD_Result take_arg(void *cls, enum MHD_ValueKind kind, const char *key,
                                const char *value)
{
    (void)kind;
    arg_ctx *a = cls;
    if (!a->bad && ztd_listing_arg(a->q, key, value, &a->why) != 0)
        a->bad = true;
    return MHD_YES;
}

/* The listing's ETag: of its bytes, so that a tier revalidates it cheaply. */
static void listing_etag(const char *json, size_t len, char out[48])
{
    unsigned char md[32];
    unsigned int ml = 0;
    EVP_Digest(json, len, md, &ml, EVP_sha256(), NULL);
    memcpy(out, "\"list-", 6);
    for (int i = 0; i < 16; i++)
        snprintf(out + 6 + 2 * i, 3, "%02x", md[i]);
    memcpy(out + 38, "\"", 2);
}

static enum MHD_Result send_listing(struct MHD_Connection *c, ztd_req *r, const char *json,
                                    size_t len)
{
    char etag[48];
    listing_etag(json, len, etag);
    const char *inm = ztd_header(c, "If-None-Match");
    struct MHD_Response *resp;
    unsigned status = 200;
    if (inm && strstr(inm, etag)) { /* the whole list of tags, or ours alone */
        resp = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
        status = 304;
        len = 0;
    } else {
        char *copy = malloc(len ? len : 1);
        if (copy)
            memcpy(copy, json, len);
        resp = copy ? ztd_response_owned(copy, len, "application/json") : NULL;
    }
    if (!resp)
        return ztd_fail(c, r, ZTD_ERR_INTERNAL);
    MHD_add_response_header(resp, "ETag", etag);
    return ztd_queue(c, r, status, resp, len);
}

/* ---- with a ztensord upstream: its files and the root's, the root's winning */

typedef struct merged {
    json_t **v; /* borrowed from the snapshot's JSON and the upstream's listing */
    size_t n;
} merged;

static const char *json_name(const void *entries, size_t i)
{
    return json_string_value(json_object_get(((json_t *const *)entries)[i], "name"));
}

static int by_name(const void *a, const void *b)
{
    return strcmp(json_name(a, 0), json_name(b, 0));
}

static char *merged_page(const ztd_snapshot *s, json_t *up, const ztd_listing_query *q, size_t *len)
{
    size_t nup = json_array_size(up), n = 0;
    json_t *local = json_array();
    json_t **v = malloc((s->n + nup + 1) * sizeof(*v));
    char *out = NULL;
    if (!local || !v)
        goto done;
    for (size_t i = 0; i < s->n; i++) {
        json_t *e = ztd_entry_json(s->entries[i]);
        if (!e || json_array_append_new(local, e))
            goto done;
        v[n++] = e;
    }
    for (size_t i = 0; i < nup; i++) {
        json_t *e = json_array_get(up, i);
        const char *name = json_string_value(json_object_get(e, "name"));
        /* an upstream is a stranger: a name no client could ask for is not listed */
        if (name && !ztd_file_path_problem(name, strlen(name)) &&
            !ztd_snapshot_find(s, name, strlen(name)))
            v[n++] = e;
    }
    qsort(v, n, sizeof(*v), by_name);
    size_t first, count;
    bool more;
    ztd_listing_query all = *q;
    if (!q->paged) /* no paging parameter: every file, as without an upstream */
        all.limit = (size_t)-1;
    ztd_listing_page(&all, v, n, json_name, &first, &count, &more);
    json_t *arr = json_array();
    for (size_t i = 0; arr && i < count; i++)
        json_array_append(arr, v[first + i]);
    json_t *root = arr ? json_pack("{s:o, s:I}", "files", arr, "count", (json_int_t)count) : NULL;
    if (root && more) {
        const char *last = json_name(v, first + count - 1);
        char *cur = malloc(2 * strlen(last) + 1);
        if (cur) {
            ztd_listing_cursor(last, cur);
            json_object_set_new(root, "next_cursor", json_string(cur));
            free(cur);
        }
    }
    out = root ? json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(root);
    if (out)
        *len = strlen(out);
done:
    free(v);
    json_decref(local);
    return out;
}

typedef struct list_job {
    ztd_offload off;
    ztd_server *s;
    json_t *files;
    ztd_err err;
    char msg[600];
} list_job;

static void list_job_free(void *p)
{
    list_job *j = p;
    json_decref(j->files);
    free(j);
}

static void fetch_listing(ztd_offload *o)
{
    list_job *j = (list_job *)o;
    ztd_upstream_tell_kind(j->s->upstream);
    if (!ztd_upstream_kind_known(j->s->upstream)) { /* not "no files": we cannot tell */
        j->err = ZTD_ERR_UPSTREAM_FAILED;
        snprintf(j->msg, sizeof(j->msg),
                 "upstream %s cannot be reached, or answered its probe with something else "
                 "than a ztensord listing or a file server's answer (upstream_kind auto could "
                 "not tell which it is; it is asked again at the next request)",
                 ztd_upstream_url(j->s->upstream));
        return;
    }
    ztd_uplist *l = ztd_upstream_listing(j->s->upstream);
    j->err = l ? ztd_uplist_get(l, &j->files, j->msg, sizeof(j->msg)) : ZTD_ERR_NONE;
}

/* The upstream's files (a new reference), NULL for none (a plain upstream),
 * or *wait when the handler must return and be called again. */
static json_t *upstream_files(ztd_server *s, struct MHD_Connection *c, ztd_req *r, bool *wait,
                              ztd_err *err, const char **msg)
{
    *wait = false;
    *err = ZTD_ERR_NONE;
    list_job *j = r->ctx_free == list_job_free ? r->ctx : NULL;
    if (!j) {
        ztd_uplist *l = ztd_upstream_listing(s->upstream);
        json_t *f = l ? ztd_uplist_peek(l) : NULL;
        if (f || (!l && ztd_upstream_kind_known(s->upstream)))
            return f;
        if (!(j = calloc(1, sizeof(*j)))) {
            *err = ZTD_ERR_INTERNAL;
            return NULL;
        }
        j->s = s;
        ztd_req_set_ctx(r, j, list_job_free);
        if (!ztd_offload_start(s, c, &j->off, fetch_listing)) {
            *wait = true;
            return NULL;
        }
    }
    if (!ztd_offload_done(&j->off)) {
        *wait = true;
        return NULL;
    }
    *err = j->err;
    *msg = j->msg;
    return j->files ? json_incref(j->files) : NULL;
}

enum MHD_Result ztd_listing_route(ztd_server *s, struct MHD_Connection *c, ztd_req *r)
{
    json_t *up = NULL;
    if (s->upstream) {
        bool wait;
        ztd_err err;
        const char *msg = "";
        up = upstream_files(s, c, r, &wait, &err, &msg);
        if (wait)
            return MHD_YES;
        if (err)
            return ztd_error(c, r, err, "%s", msg);
    }
    ztd_listing_query *q = malloc(sizeof(*q));
    if (!q) {
        json_decref(up);
        return ztd_fail(c, r, ZTD_ERR_INTERNAL);
    }
    ztd_listing_init(q);
    arg_ctx a = {q, NULL, false};
    MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, take_arg, &a);
    if (a.bad) {
        free(q);
        json_decref(up);
        return ztd_error(c, r, ZTD_ERR_BAD_REQUEST, "%s", a.why);
    }
    ztd_snapshot *snap = ztd_catalog_acquire(s->catalog);
    enum MHD_Result ret;
    if (!snap) {
        ret = ztd_fail(c, r, ZTD_ERR_NOT_READY);
    } else if (!q->paged && !up) {
        size_t len;
        const char *json = ztd_snapshot_list_json(snap, &len);
        ret = json ? send_listing(c, r, json, len) : ztd_fail(c, r, ZTD_ERR_INTERNAL);
    } else {
        size_t len;
        char *json = up ? merged_page(snap, up, q, &len) : ztd_listing_json(snap, q, &len);
        ret = json ? send_listing(c, r, json, len) : ztd_fail(c, r, ZTD_ERR_INTERNAL);
        free(json);
    }
    ztd_snapshot_release(snap);
    json_decref(up);
    free(q);
    return ret;
}
