/*
 * GET /v1/files (handlers.h): the page's JSON over a catalog snapshot,
 * merged with the upstream's listing when there is one. The query and the
 * choice of the page are http/listing_query.c's.
 */
#include "handlers/handlers.h"
#include "core/json_line.h"
#include "http/listing_query.h"
#include "store/catalog.h"
#include "http/response.h"
#include "store/names.h"
#include "http/upstream_files.h"

#include <jansson.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>

static const char *entry_name(const void *entries, size_t i)
{
    return ((ztd_entry *const *)entries)[i]->name;
}

/* {"files":[...],"count":N[,"next_cursor":"..."]} for the page; malloc'ed,
 * NULL when out of memory. */
static char *listing_json(const ztd_snapshot *s, const ztd_listing_query *q, size_t *len)
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
    char *out = ztd_json_line(root, len);
    json_decref(root);
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

/* Sends json (malloc'ed; taken over, NULL when out of memory). */
static enum MHD_Result send_listing(struct MHD_Connection *c, ztd_req *r, char *json, size_t len)
{
    if (!json)
        return ztd_fail(c, r, ZTD_ERR_INTERNAL);
    char etag[48];
    listing_etag(json, len, etag);
    const char *inm = ztd_header(c, "If-None-Match");
    struct MHD_Response *resp;
    unsigned status = 200;
    if (inm && strstr(inm, etag)) { /* the whole list of tags, or ours alone */
        free(json);
        resp = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
        status = 304;
        len = 0;
    } else {
        resp = ztd_response_owned(json, len, "application/json");
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
    out = ztd_json_line(root, len);
    json_decref(root);
done:
    free(v);
    json_decref(local);
    return out;
}

enum MHD_Result ztd_list_files(ztd_server *s, struct MHD_Connection *c, ztd_req *r)
{
    json_t *up = NULL;
    if (s->upstream) {
        bool wait;
        ztd_err err;
        const char *msg = "";
        up = ztd_answer_upstream_files(s, c, r, &wait, &err, &msg);
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
    } else {
        size_t len = 0;
        char *json = !q->paged && !up ? ztd_snapshot_list_json(snap, &len)
                     : up             ? merged_page(snap, up, q, &len)
                                      : listing_json(snap, q, &len);
        ret = send_listing(c, r, json, len);
    }
    ztd_snapshot_release(snap);
    json_decref(up);
    free(q);
    return ret;
}
