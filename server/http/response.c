/*
 * Responses (see response.h). Every error goes through verror(), which takes
 * its status, code and Retry-After from the error table.
 */
#include "core/json_line.h"
#include "http/response.h"
#include "core/clock.h"
#include "core/hex.h"
#include "core/log.h"
#include "core/metrics.h"

#include <jansson.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char *ztd_header(struct MHD_Connection *c, const char *name)
{
    return MHD_lookup_connection_value(c, MHD_HEADER_KIND, name);
}

typedef struct joined {
    const char *name, *first;
    char *text; /* every line joined by ", ", from the second line on; else NULL */
    size_t len;
    bool oom;
} joined;

static enum MHD_Result join_line(void *cls, enum MHD_ValueKind kind, const char *key,
                                 const char *value)
{
    joined *j = cls;
    (void)kind;
    if (!key || !value || strcasecmp(key, j->name))
        return MHD_YES;
    if (!j->first) {
        j->first = value;
        return MHD_YES;
    }
    const char *head = j->text ? "" : j->first;
    size_t add = strlen(head) + 2 + strlen(value);
    char *t = realloc(j->text, j->len + add + 1);
    if (!t) {
        j->oom = true;
        return MHD_NO;
    }
    j->len += (size_t)sprintf(t + j->len, "%s, %s", head, value);
    j->text = t;
    return MHD_YES;
}

const char *ztd_header_all(struct MHD_Connection *c, const char *name, char **owned)
{
    joined j = {.name = name};
    MHD_get_connection_values(c, MHD_HEADER_KIND, join_line, &j);
    if (j.oom) { /* out of memory: the first line alone, as ztd_header() reads it */
        free(j.text);
        j.text = NULL;
    }
    *owned = j.text;
    return j.text ? j.text : j.first;
}

const char *ztd_header_list(struct MHD_Connection *c, ztd_req *r, const char *name)
{
    char *own;
    const char *v = ztd_header_all(c, name, &own);
    if (!own)
        return v;
    for (size_t i = 0; i < sizeof(r->joined) / sizeof(r->joined[0]); i++)
        if (!r->joined[i]) {
            r->joined[i] = own;
            return own;
        }
    free(own); /* no room: the first line alone, as ztd_header() reads it */
    return ztd_header(c, name);
}

bool ztd_response_server_header(struct MHD_Response *resp)
{
    return MHD_add_response_header(resp, "Server", "ztensord/" ZT_VERSION_STRING) == MHD_YES;
}

static void record(ztd_req *r, unsigned status, uint64_t body_len)
{
    r->status = (int)status;
    r->bytes = strcmp(r->method, "HEAD") ? body_len : 0; /* HEAD sends no body */
    r->responded = true;
}

enum MHD_Result ztd_queue(struct MHD_Connection *c, ztd_req *r, unsigned status,
                          struct MHD_Response *resp, uint64_t body_len)
{
    if (!resp)
        return MHD_NO;
    ztd_response_server_header(resp);
    if (r->send_request_id || status >= 400) /* an error can always be found in the log */
        MHD_add_response_header(resp, "X-Request-Id", r->request_id);
    record(r, status, body_len);
    if (r->in_data || r->defer_early) {
        r->deferred = resp;
        r->deferred_status = status;
        r->deferred_ms = ztd_now_ms();
        return MHD_YES;
    }
    enum MHD_Result ret = MHD_queue_response(c, status, resp);
    MHD_destroy_response(resp);
    return ret;
}

bool ztd_req_can_share(const ztd_req *r)
{
    return !r->send_request_id && !r->in_data && !r->defer_early;
}

enum MHD_Result ztd_queue_shared(struct MHD_Connection *c, ztd_req *r, unsigned status,
                                 struct MHD_Response *resp, uint64_t body_len)
{
    record(r, status, body_len);
    return MHD_queue_response(c, status, resp); /* takes a reference of its own */
}

struct MHD_Response *ztd_response_owned(char *body, size_t n, const char *content_type)
{
    struct MHD_Response *resp = MHD_create_response_from_buffer(n, body, MHD_RESPMEM_MUST_FREE);
    if (!resp) {
        free(body);
        return NULL;
    }
    MHD_add_response_header(resp, "Content-Type", content_type);
    return resp;
}

struct MHD_Response *ztd_reader_response(uint64_t len, size_t block, MHD_ContentReaderCallback rd,
                                         void *cls, MHD_ContentReaderFreeCallback fr)
{
    struct MHD_Response *resp = MHD_create_response_from_callback(len, block, rd, cls, fr);
    if (!resp && fr)
        fr(cls);
    return resp;
}

static ssize_t no_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)cls, (void)pos, (void)buf, (void)max;
    return MHD_CONTENT_READER_END_WITH_ERROR;
}

struct MHD_Response *ztd_head_response(uint64_t len)
{
    return MHD_create_response_from_callback(len, 4096, no_read, NULL, NULL);
}

enum MHD_Result ztd_json(struct MHD_Connection *c, ztd_req *r, unsigned status, const char *json,
                         size_t len, int copy)
{
    struct MHD_Response *resp = MHD_create_response_from_buffer(
        len, (void *)json, copy ? MHD_RESPMEM_MUST_COPY : MHD_RESPMEM_PERSISTENT);
    if (!resp)
        return MHD_NO;
    MHD_add_response_header(resp, "Content-Type", "application/json");
    return ztd_queue(c, r, status, resp, len);
}

static enum MHD_Result send_error(struct MHD_Connection *c, ztd_req *r, ztd_err e,
                                  const char *hname, const char *hval, const char *msg)
{
    if (r->error_answer) { /* once: the front's own failure falls back to JSON */
        enum MHD_Result (*answer)(struct MHD_Connection *, ztd_req *, ztd_err, const char *) =
            r->error_answer;
        r->error_answer = NULL;
        ztd_metrics_error(e);
        return answer(c, r, e, msg);
    }
    unsigned status = ztd_err_status(e);
    const char *code = ztd_err_code(e);
    json_t *j = json_pack("{s:{s:s, s:s}}", "error", "code", code, "message", msg);
    size_t n = 0;
    char *s = ztd_json_line(j, &n);
    json_decref(j);
    if (!s)
        return MHD_NO;
    ztd_metrics_error(e);
    ztd_log((ztd_log_level)ztd_err_log_level(e), "%u %s: %s (%s)", status, code, msg,
            r->target ? r->target : "");
    struct MHD_Response *resp = ztd_response_owned(s, n, "application/json");
    if (!resp)
        return MHD_NO;
    MHD_add_response_header(resp, "Cache-Control", "no-store");
    if (ztd_err_retry_after(e)) {
        char ra[16];
        snprintf(ra, sizeof(ra), "%u", ztd_err_retry_after(e));
        MHD_add_response_header(resp, "Retry-After", ra);
    }
    if (hname)
        MHD_add_response_header(resp, hname, hval);
    return ztd_queue(c, r, status, resp, n);
}

static enum MHD_Result verror(struct MHD_Connection *c, ztd_req *r, ztd_err e, const char *hname,
                              const char *hval, const char *fmt, va_list ap)
{
    char msg[1024];
    vsnprintf(msg, sizeof(msg), fmt, ap);
    return send_error(c, r, e, hname, hval, msg);
}

enum MHD_Result ztd_fail(struct MHD_Connection *c, ztd_req *r, ztd_err e)
{
    return send_error(c, r, e, NULL, NULL, ztd_err_message(e));
}

enum MHD_Result ztd_error(struct MHD_Connection *c, ztd_req *r, ztd_err e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    enum MHD_Result ret = verror(c, r, e, NULL, NULL, fmt, ap);
    va_end(ap);
    return ret;
}

enum MHD_Result ztd_error_hdr(struct MHD_Connection *c, ztd_req *r, ztd_err e, const char *hname,
                              const char *hval, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    enum MHD_Result ret = verror(c, r, e, hname, hval, fmt, ap);
    va_end(ap);
    return ret;
}

enum MHD_Result ztd_published_answer(struct MHD_Connection *c, ztd_req *r, const char *rel,
                                     uint64_t size, size_t objects, const char *etag, bool replaced)
{
    json_t *j = json_pack("{s:s, s:I, s:I, s:s, s:b}", "name", rel, "size", (json_int_t)size,
                          "objects", (json_int_t)objects, "etag", etag, "replaced", replaced);
    size_t n = 0;
    char *body = ztd_json_line(j, &n);
    json_decref(j);
    if (!body)
        return MHD_NO;
    struct MHD_Response *resp = ztd_response_owned(body, n, "application/json");
    if (!resp)
        return MHD_NO;
    char loc[PATH_MAX * 3] = "/v1/files/";
    ztd_percent_encode_path(rel, loc + 10, sizeof(loc) - 10); /* fits: rel < PATH_MAX */
    MHD_add_response_header(resp, "ETag", etag);
    MHD_add_response_header(resp, "Location", loc);
    return ztd_queue(c, r, replaced ? 200 : 201, resp, n);
}
