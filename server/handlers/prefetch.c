/*
 * Prefetch routes (see handlers.h): POST /v1/prefetch queues a job of files
 * and prefixes (store/prefetch.h) and answers its progress at once (202);
 * GET /v1/prefetch answers every job kept.
 */
#include "handlers/handlers.h"
#include "http/json_body.h"
#include "http/response.h"
#include "store/prefetch.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#define MAX_NAMES 10000
#define WANT "want {\"files\": [\"name.zt\", ...], \"prefix\": \"dir/\"} (either or both)"

static enum MHD_Result send_json_obj(struct MHD_Connection *c, ztd_req *r, unsigned status,
                                     json_t *o)
{
    char *text = o ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(o);
    if (!text)
        return ztd_fail(c, r, ZTD_ERR_INTERNAL);
    enum MHD_Result ret = ztd_json(c, r, status, text, strlen(text), 1);
    free(text);
    return ret;
}

/* A name or prefix as a request may give it: relative, no empty, "." or
 * hidden segment (what the router accepts in a URL), not too long. */
static bool acceptable(const char *s, bool prefix)
{
    size_t n = strlen(s);
    if (n > 4096 || (!prefix && n == 0) || s[0] == '/')
        return false;
    for (const char *seg = s; *seg;) {
        const char *end = strchr(seg, '/');
        size_t len = end ? (size_t)(end - seg) : strlen(seg);
        if ((len == 0 && end) || seg[0] == '.')
            return false;
        if (!end)
            break;
        seg = end + 1;
    }
    return true;
}

/* names from "files" (array) and "prefix" (string or array); -1 when malformed. */
static int take(json_t *v, bool prefix, const char **names, size_t *n)
{
    if (!v)
        return 0;
    if (prefix && json_is_string(v)) {
        if (!acceptable(json_string_value(v), true) || *n == MAX_NAMES)
            return -1;
        names[(*n)++] = json_string_value(v);
        return 0;
    }
    if (!json_is_array(v))
        return -1;
    size_t i;
    json_t *x;
    json_array_foreach(v, i, x)
    {
        if (!json_is_string(x) || !acceptable(json_string_value(x), prefix) || *n == MAX_NAMES)
            return -1;
        names[(*n)++] = json_string_value(x);
    }
    return 0;
}

enum MHD_Result ztd_prefetch_post(ztd_server *s, struct MHD_Connection *c, ztd_req *r)
{
    if (!s->prefetch)
        return ztd_fail(c, r, ZTD_ERR_NO_UPSTREAM);
    ztd_json_text body = ztd_json_body(r);
    json_error_t je;
    json_t *root = body.p ? json_loadb(body.p, body.n, JSON_REJECT_DUPLICATES, &je) : NULL;
    if (!json_is_object(root)) {
        json_decref(root);
        return ztd_error(c, r, ZTD_ERR_BAD_JSON, "the body must be a JSON object: %s",
                         body.p ? je.text : "(empty)");
    }
    const char **names = calloc(MAX_NAMES, sizeof(*names));
    size_t n = 0;
    uint64_t id = 0;
    enum MHD_Result ret;
    if (!names) {
        ret = ztd_fail(c, r, ZTD_ERR_INTERNAL);
    } else if (take(json_object_get(root, "files"), false, names, &n) != 0 ||
               take(json_object_get(root, "prefix"), true, names, &n) != 0 || n == 0) {
        ret = ztd_error(c, r, ZTD_ERR_BAD_REQUEST,
                        "%s; names are relative, without empty, '.' or hidden segments, at "
                        "most %d in all",
                        WANT, MAX_NAMES);
    } else if (ztd_prefetch_submit(s->prefetch, names, n, false, &id) != 0) {
        ret = ztd_fail(c, r, ZTD_ERR_INTERNAL);
    } else {
        ret = send_json_obj(c, r, 202, ztd_prefetch_job_json(s->prefetch, id));
    }
    free(names);
    json_decref(root);
    return ret;
}

enum MHD_Result ztd_prefetch_status(ztd_server *s, struct MHD_Connection *c, ztd_req *r)
{
    if (!s->prefetch)
        return ztd_fail(c, r, ZTD_ERR_NO_UPSTREAM);
    return send_json_obj(c, r, 200, ztd_prefetch_json(s->prefetch));
}
