/* The body of POST /v1/prefetch (see prefetch_json.h). */
#include "http/prefetch_json.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WANT "want {\"files\": [\"name.zt\", ...], \"prefix\": \"dir/\"} (either or both)"

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
        if (!acceptable(json_string_value(v), true) || *n == ZTD_PREFETCH_MAX_NAMES)
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
        if (!json_is_string(x) || !acceptable(json_string_value(x), prefix) ||
            *n == ZTD_PREFETCH_MAX_NAMES)
            return -1;
        names[(*n)++] = json_string_value(x);
    }
    return 0;
}

ztd_err ztd_prefetch_parse(const char *body, size_t len, ztd_prefetch_request *out, char *msg,
                           size_t cap)
{
    memset(out, 0, sizeof(*out));
    json_error_t je;
    json_t *root = body ? json_loadb(body, len, JSON_REJECT_DUPLICATES, &je) : NULL;
    if (!json_is_object(root)) {
        json_decref(root);
        snprintf(msg, cap, "the body must be a JSON object: %s", body ? je.text : "(empty)");
        return ZTD_ERR_BAD_JSON;
    }
    out->root = root;
    if (!(out->names = calloc(ZTD_PREFETCH_MAX_NAMES, sizeof(*out->names)))) {
        ztd_prefetch_request_free(out);
        snprintf(msg, cap, "out of memory");
        return ZTD_ERR_INTERNAL;
    }
    if (take(json_object_get(root, "files"), false, out->names, &out->n) != 0 ||
        take(json_object_get(root, "prefix"), true, out->names, &out->n) != 0 || out->n == 0) {
        ztd_prefetch_request_free(out);
        snprintf(msg, cap,
                 "%s; names are relative, without empty, '.' or hidden segments, at most %d in "
                 "all",
                 WANT, ZTD_PREFETCH_MAX_NAMES);
        return ZTD_ERR_BAD_REQUEST;
    }
    return ZTD_ERR_NONE;
}

void ztd_prefetch_request_free(ztd_prefetch_request *r)
{
    free(r->names);
    json_decref(r->root);
    memset(r, 0, sizeof(*r));
}
