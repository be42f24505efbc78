/*
 * The JSON bodies of upload sessions (see upload_json.h). jansson parses,
 * rejecting duplicate keys and invalid UTF-8; everything after is checks on
 * the tree, whose strings the results borrow.
 */
#include "http/upload_json.h"
#include "store/names.h"

#include <jansson.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One JSON object, or the 400 bad_json answer. */
static json_t *load_object(const char *body, size_t len, char *msg, size_t cap, ztd_err *e)
{
    json_error_t je;
    json_t *j = len ? json_loadb(body, len, JSON_REJECT_DUPLICATES, &je) : NULL;
    if (j && json_is_object(j))
        return j;
    *e = ztd_errf(msg, cap, ZTD_ERR_BAD_JSON, "%s%s%s", ztd_err_message(ZTD_ERR_BAD_JSON),
                  j ? "" : ": ", j ? "" : (len ? je.text : "(empty)"));
    json_decref(j);
    return NULL;
}

/* A relative .zt path: no leading '/', no empty segment, no segment starting
 * with '.', none before the last with a served extension (the router would
 * end the file's name there), at most 255 bytes a segment. */
static bool valid_rel_name(const char *p)
{
    size_t n = strlen(p);
    if (n < 4 || n >= PATH_MAX - 64 || strcmp(p + n - 3, ".zt"))
        return false;
    for (const char *seg = p;;) {
        const char *slash = strchr(seg, '/');
        size_t len = slash ? (size_t)(slash - seg) : strlen(seg);
        if (len == 0 || seg[0] == '.' || len > 255)
            return false;
        if (!slash)
            return true;
        if (ztd_file_ext_served(seg, len))
            return false;
        seg = slash + 1;
    }
}

ztd_err ztd_open_parse(const char *body, size_t len, ztd_open_request *out, char *msg, size_t cap)
{
    ztd_err e = ZTD_ERR_NONE;
    *out = (ztd_open_request){0};
    json_t *j = load_object(body, len, msg, cap, &e);
    if (!j)
        return e;
    const char *file = json_string_value(json_object_get(j, "file"));
    json_t *attrs = json_object_get(j, "attributes");
    if (!file || !valid_rel_name(file) || (attrs && !json_is_object(attrs)))
        e = ztd_errf(msg, cap, ZTD_ERR_BAD_REQUEST,
                     "want {\"file\": \"relative/name.zt\", \"attributes\": {...}}; names have no "
                     "empty, '.' or hidden segments and end in .zt");
    else if (!(out->file = strdup(file)) ||
             (attrs && !(out->attributes = json_dumps(attrs, JSON_COMPACT))))
        e = ztd_errf(msg, cap, ZTD_ERR_INTERNAL, "out of memory");
    json_decref(j);
    if (e)
        ztd_open_request_free(out);
    return e;
}

void ztd_open_request_free(ztd_open_request *o)
{
    free(o->file);
    free(o->attributes);
    *o = (ztd_open_request){0};
}

static ztd_err parse_shape(ztd_commit_object *o, json_t *shape, char *msg, size_t cap)
{
    o->ndim = json_array_size(shape);
    if (!(o->dims = calloc(o->ndim ? o->ndim : 1, sizeof(*o->dims))))
        return ztd_errf(msg, cap, ZTD_ERR_INTERNAL, "out of memory");
    for (size_t i = 0; i < o->ndim; i++) {
        json_t *d = json_array_get(shape, i);
        if (!json_is_integer(d) || json_integer_value(d) < 0)
            return ztd_errf(msg, cap, ZTD_ERR_INVALID_OBJECTS,
                            "object \"%s\": shape[%zu] must be a non-negative integer", o->name, i);
        o->dims[i] = (uint64_t)json_integer_value(d);
    }
    return ZTD_ERR_NONE;
}

static ztd_err parse_parts(ztd_commit_object *o, json_t *comps, char *msg, size_t cap)
{
    if (!(o->parts = calloc(json_object_size(comps) + 1, sizeof(*o->parts))))
        return ztd_errf(msg, cap, ZTD_ERR_INTERNAL, "out of memory");
    const char *role;
    json_t *cv;
    json_object_foreach(comps, role, cv)
    {
        const char *key = json_string_value(json_object_get(cv, "key"));
        const char *dt = json_string_value(json_object_get(cv, "dtype"));
        zt_dtype d = dt ? zt_dtype_parse(dt, strlen(dt)) : ZT_DTYPE_INVALID;
        if (!d && dt)
            d = zt_dtype_parse_long(dt, strlen(dt));
        if (!key || !d)
            return ztd_errf(msg, cap, ZTD_ERR_INVALID_OBJECTS, "object \"%s\" component \"%s\": %s",
                            o->name, role,
                            !key ? "\"key\" names no uploaded component" : "bad or missing dtype");
        o->parts[o->nparts++] =
            (ztd_commit_part){role, key, d, json_string_value(json_object_get(cv, "type"))};
    }
    return ZTD_ERR_NONE;
}

static ztd_err parse_object(ztd_commit_object *o, const char *name, json_t *spec, char *msg,
                            size_t cap)
{
    json_t *shape = json_object_get(spec, "shape"), *comps = json_object_get(spec, "components");
    json_t *attrs = json_object_get(spec, "attributes");
    const char *format = json_string_value(json_object_get(spec, "format"));
    o->name = name;
    o->format = format ? format : "dense";
    if (!json_is_array(shape) || json_array_size(shape) > ZT_MAX_NDIM || !json_is_object(comps) ||
        json_object_size(comps) > ZTD_COMMIT_MAX_PARTS || (attrs && !json_is_object(attrs)))
        return ztd_errf(msg, cap, ZTD_ERR_INVALID_OBJECTS,
                        "object \"%s\": want {\"shape\": [..], \"format\", \"attributes\", "
                        "\"components\": {ROLE: {\"key\", \"dtype\", \"type\"}}}",
                        name);
    ztd_err e = parse_shape(o, shape, msg, cap);
    if (!e)
        e = parse_parts(o, comps, msg, cap);
    if (!e && attrs && !(o->attributes = json_dumps(attrs, JSON_COMPACT)))
        e = ztd_errf(msg, cap, ZTD_ERR_INTERNAL, "out of memory");
    return e;
}

ztd_err ztd_commit_parse(const char *body, size_t len, ztd_commit *out, char *msg, size_t cap)
{
    ztd_err e = ZTD_ERR_NONE;
    *out = (ztd_commit){0};
    json_t *j = load_object(body, len, msg, cap, &e);
    if (!j)
        return e;
    out->doc = j;
    json_t *objs = json_object_get(j, "objects");
    if (!json_is_object(objs))
        e = ztd_errf(msg, cap, ZTD_ERR_BAD_REQUEST, "want {\"objects\": {NAME: {...}}}");
    else if (!(out->objects = calloc(json_object_size(objs) + 1, sizeof(*out->objects))))
        e = ztd_errf(msg, cap, ZTD_ERR_INTERNAL, "out of memory");
    const char *name;
    json_t *spec;
    if (!e)
        json_object_foreach(objs, name, spec)
        {
            if ((e = parse_object(&out->objects[out->n++], name, spec, msg, cap)))
                break;
        }
    if (e)
        ztd_commit_free(out);
    return e;
}

void ztd_commit_free(ztd_commit *c)
{
    for (size_t i = 0; c->objects && i < c->n; i++) {
        free(c->objects[i].dims);
        free(c->objects[i].attributes);
        free(c->objects[i].parts);
    }
    free(c->objects);
    json_decref(c->doc);
    *c = (ztd_commit){0};
}
