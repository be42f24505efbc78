/*
 * router.c: maps a method and a raw URL path to a route and decoded names.
 *
 * The file-name rule and the traversal checks are the security boundary between URLs and the
 * served directory; they are store/names.c's, and every URL goes through them here, in one
 * pure function that unit tests and a fuzzer drive directly. router.h lists the rules.
 */
#include "http/router.h"
#include "core/hex.h"
#include "store/names.h"

#include <string.h>

static const char ALLOW_GET[] = "GET, HEAD";
static const char ALLOW_FILE[] = "GET, HEAD, PUT, DELETE";
static const char ALLOW_POST[] = "POST";
static const char ALLOW_PUT[] = "PUT";
static const char ALLOW_UPLOAD[] = "GET, HEAD, DELETE";
static const char ALLOW_PREFETCH[] = "GET, HEAD, POST";
static const char ALLOW_HF[] = "GET, HEAD, POST";
static const char ALLOW_S3[] = "GET, HEAD, PUT, POST, DELETE";

typedef struct method_route {
    const char *method;
    ztd_route_id route;
} method_route;

#define GET_ROUTE(r)                                                                               \
    {                                                                                              \
        {"GET", (r)},                                                                              \
        {                                                                                          \
            "HEAD", (r)                                                                            \
        }                                                                                          \
    }

static void clear_names(ztd_route_match *out)
{
    out->file[0] = out->object[0] = out->component[0] = out->upload_id[0] = out->key[0] = '\0';
    out->blob[0] = '\0';
    out->file_len = out->object_len = out->component_len = out->upload_id_len = 0;
    out->key_len = 0;
}

/* Any failure leaves no half-decoded name behind for a caller to misuse. */
static ztd_route_status fail(ztd_route_match *out, ztd_route_status st, const char *msg)
{
    clear_names(out);
    out->status = st;
    out->route = ZTD_ROUTE_NONE;
    out->allow = NULL;
    out->message = msg;
    return st;
}

/* The path matched a resource: pick the route for the method, or 405 with Allow. */
static ztd_route_status dispatch(ztd_route_match *out, const char *method, const char *allow,
                                 const method_route *table, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (strcmp(method, table[i].method) == 0) {
            out->status = ZTD_ROUTE_OK;
            out->route = table[i].route;
            out->allow = allow;
            out->message = NULL;
            return ZTD_ROUTE_OK;
        }
    }
    fail(out, ZTD_ROUTE_METHOD_NOT_ALLOWED, "method not allowed");
    out->allow = allow;
    return ZTD_ROUTE_METHOD_NOT_ALLOWED;
}

#define DISPATCH(out, method, allow, table)                                                        \
    dispatch((out), (method), (allow), (table), sizeof(table) / sizeof((table)[0]))

long ztd_url_decode(const char *s, size_t n, char *dst, size_t cap, bool plus_is_space)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '%') {
            int hi, lo;
            if (n - i < 3)
                return -1;
            hi = ztd_hex_value(s[i + 1]);
            lo = ztd_hex_value(s[i + 2]);
            if (hi < 0 || lo < 0)
                return -1;
            c = (char)(hi * 16 + lo);
            i += 2;
        } else if (c == '+' && plus_is_space) {
            c = ' ';
        }
        if (o == cap)
            return -1;
        dst[o++] = c;
    }
    dst[o] = '\0';
    return (long)o;
}

/* Decode one raw segment into a name field; 404 if empty, 400 if invalid. */
static ztd_route_status take_name(ztd_route_match *out, const char *seg, size_t n, char *dst,
                                  size_t *dst_len)
{
    long len;
    const char *why;

    if (n == 0)
        return fail(out, ZTD_ROUTE_NOT_FOUND, "empty name in path");
    len = ztd_url_decode(seg, n, dst, ZTD_PATH_MAX, false);
    if (len < 0)
        return fail(out, ZTD_ROUTE_BAD_REQUEST, "malformed percent-encoding");
    if ((why = ztd_name_problem(dst, (size_t)len)) != NULL)
        return fail(out, ZTD_ROUTE_BAD_REQUEST, why);
    *dst_len = (size_t)len;
    return ZTD_ROUTE_OK;
}

static size_t seg_len(const char *p)
{
    const char *slash = strchr(p, '/');
    return slash ? (size_t)(slash - p) : strlen(p);
}

/* What follows a file's name: nothing (the file itself), /raw or /safetensors. */
typedef enum file_tail { TAIL_NONE, TAIL_RAW, TAIL_VIEW } file_tail;

/* The file's name is out->file[0..o): checked, then the route of its tail
 * for method. */
static ztd_route_status route_named(ztd_route_match *out, const char *method, size_t o,
                                    file_tail tail)
{
    static const method_route file_routes[] = {{"GET", ZTD_ROUTE_MANIFEST},
                                               {"HEAD", ZTD_ROUTE_MANIFEST},
                                               {"PUT", ZTD_ROUTE_PUT_FILE},
                                               {"DELETE", ZTD_ROUTE_DELETE_FILE}};
    static const method_route raw_routes[] = GET_ROUTE(ZTD_ROUTE_RAW);
    static const method_route view_routes[] = GET_ROUTE(ZTD_ROUTE_VIEW);
    const char *why;
    out->file_len = o;
    if ((why = ztd_file_path_problem(out->file, o)) != NULL)
        return fail(out, ZTD_ROUTE_BAD_REQUEST, why);
    if (tail == TAIL_RAW)
        return DISPATCH(out, method, ALLOW_GET, raw_routes);
    if (tail == TAIL_VIEW)
        return DISPATCH(out, method, ALLOW_GET, view_routes);
    return DISPATCH(out, method, ALLOW_FILE, file_routes);
}

/* A path with no segment ending in a tensor extension: a plain file's. The
 * whole path (decoded, o bytes in out->file) is the name, unless its last
 * raw segment is literally "raw" or "safetensors" after at least one other:
 * then the name is what precedes it (last_at: where the last segment starts
 * in out->file; last: its raw text). */
static ztd_route_status route_plain(ztd_route_match *out, const char *method, size_t o,
                                    size_t last_at, const char *last)
{
    file_tail tail = last_at == 0                       ? TAIL_NONE
                     : strcmp(last, "raw") == 0         ? TAIL_RAW
                     : strcmp(last, "safetensors") == 0 ? TAIL_VIEW
                                                        : TAIL_NONE;
    if (tail != TAIL_NONE)
        o = last_at - 1; /* without "/raw" */
    out->file[o] = '\0';
    return route_named(out, method, o, tail);
}

/* A directory's model.safetensors.index.json (store/view_names.h) ends {file} too. */
static bool is_index_name(const char *s, size_t n)
{
    static const char name[] = "model.safetensors.index.json";
    return n == sizeof(name) - 1 && !memcmp(s, name, n);
}

static ztd_route_status route_file(ztd_route_match *out, const char *method, const char *p)
{
    static const method_route object_routes[] = GET_ROUTE(ZTD_ROUTE_OBJECT);
    static const method_route component_routes[] = GET_ROUTE(ZTD_ROUTE_COMPONENT);
    size_t o = 0, last_at = 0; /* where the last segment's decoded text starts */
    const char *last = p;      /* ... and its raw text */
    const char *why;
    ztd_route_status st;

    /* Collect raw segments until one decodes to a name with a file extension. */
    for (int first = 1;; first = 0) {
        size_t n = seg_len(p);
        long len;

        if (!first)
            out->file[o++] = '/';
        last_at = o;
        last = p;
        len = ztd_url_decode(p, n, out->file + o, ZTD_PATH_MAX - o, false);
        if (len < 0)
            return fail(out, ZTD_ROUTE_BAD_REQUEST, "malformed percent-encoding");
        p += n;
        if (ztd_file_ext_served(out->file + o, (size_t)len) ||
            is_index_name(out->file + o, (size_t)len)) {
            o += (size_t)len;
            break;
        }
        o += (size_t)len;
        if (*p == '\0')
            return route_plain(out, method, o, last_at, last);
        p++; /* the '/' */
    }
    if (*p == '\0')
        return route_named(out, method, o, TAIL_NONE);
    if (strcmp(p, "/raw") == 0)
        return route_named(out, method, o, TAIL_RAW);
    if (strcmp(p, "/safetensors") == 0)
        return route_named(out, method, o, TAIL_VIEW);
    out->file_len = o;
    if ((why = ztd_file_path_problem(out->file, o)) != NULL)
        return fail(out, ZTD_ROUTE_BAD_REQUEST, why);
    if (strncmp(p, "/objects/", 9) != 0)
        return fail(out, ZTD_ROUTE_NOT_FOUND, "no such route under the file");
    p += 9;
    {
        size_t n = seg_len(p);
        if ((st = take_name(out, p, n, out->object, &out->object_len)) != ZTD_ROUTE_OK)
            return st;
        p += n;
    }
    if (*p == '\0')
        return DISPATCH(out, method, ALLOW_GET, object_routes);
    p++;
    {
        size_t n = seg_len(p);
        if (p[n] != '\0')
            return fail(out, ZTD_ROUTE_NOT_FOUND, "too many segments after the object");
        if ((st = take_name(out, p, n, out->component, &out->component_len)) != ZTD_ROUTE_OK)
            return st;
    }
    return DISPATCH(out, method, ALLOW_GET, component_routes);
}

static ztd_route_status route_blob(ztd_route_match *out, const char *method, const char *p)
{
    static const method_route blob_routes[] = GET_ROUTE(ZTD_ROUTE_BLOB);
    static const char bad[] = "blob digest must be sha256: and 64 hex digits";
    char digest[ZTD_PATH_MAX + 1];
    size_t n = seg_len(p);
    long len;

    if (n == 0 || p[n] != '\0')
        return fail(out, ZTD_ROUTE_NOT_FOUND, "no such blob route");
    len = ztd_url_decode(p, n, digest, ZTD_PATH_MAX, false);
    if (len < 0)
        return fail(out, ZTD_ROUTE_BAD_REQUEST, "malformed percent-encoding");
    if (len != 7 + 64 || memcmp(digest, "sha256:", 7) != 0)
        return fail(out, ZTD_ROUTE_BAD_REQUEST, bad);
    for (int i = 0; i < 64; i++) {
        int v = ztd_hex_value(digest[7 + i]);
        if (v < 0)
            return fail(out, ZTD_ROUTE_BAD_REQUEST, bad);
        out->blob[i] = ztd_hex_digit((unsigned)v);
    }
    out->blob[64] = '\0';
    return DISPATCH(out, method, ALLOW_GET, blob_routes);
}

static int is_id_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
}

static ztd_route_status route_upload(ztd_route_match *out, const char *method, const char *p)
{
    static const method_route upload_routes[] = {{"GET", ZTD_ROUTE_UPLOAD_STATUS},
                                                 {"HEAD", ZTD_ROUTE_UPLOAD_STATUS},
                                                 {"DELETE", ZTD_ROUTE_UPLOAD_ABORT}};
    static const method_route commit_routes[] = {{"POST", ZTD_ROUTE_UPLOAD_COMMIT}};
    static const method_route component_routes[] = {{"PUT", ZTD_ROUTE_UPLOAD_COMPONENT}};
    char id[ZTD_PATH_MAX + 1];
    size_t n = seg_len(p);
    long len;

    if (n == 0)
        return fail(out, ZTD_ROUTE_NOT_FOUND, "empty upload id");
    len = ztd_url_decode(p, n, id, ZTD_PATH_MAX, false);
    if (len < 0)
        return fail(out, ZTD_ROUTE_BAD_REQUEST, "malformed percent-encoding");
    if (len > ZTD_UPLOAD_ID_MAX)
        return fail(out, ZTD_ROUTE_BAD_REQUEST, "upload id too long");
    for (long i = 0; i < len; i++)
        if (!is_id_char(id[i]))
            return fail(out, ZTD_ROUTE_BAD_REQUEST,
                        "upload id has a character outside "
                        "[A-Za-z0-9_-]");
    memcpy(out->upload_id, id, (size_t)len + 1);
    out->upload_id_len = (size_t)len;
    p += n;

    if (*p == '\0')
        return DISPATCH(out, method, ALLOW_UPLOAD, upload_routes);
    if (strcmp(p, "/commit") == 0)
        return DISPATCH(out, method, ALLOW_POST, commit_routes);
    if (strncmp(p, "/components/", 12) == 0) {
        ztd_route_status st;
        p += 12;
        n = seg_len(p);
        if (p[n] != '\0')
            return fail(out, ZTD_ROUTE_NOT_FOUND, "too many segments after the key");
        if ((st = take_name(out, p, n, out->key, &out->key_len)) != ZTD_ROUTE_OK)
            return st;
        return DISPATCH(out, method, ALLOW_PUT, component_routes);
    }
    return fail(out, ZTD_ROUTE_NOT_FOUND, "no such route under the upload");
}

static int bad_raw_char(unsigned char c)
{
    return c < 0x20 || c == 0x7f || c == ' ' || c == '?' || c == '#';
}

/* Is the path's first segment one of ztensord's own (never an S3 bucket)? */
static bool own_first_segment(const char *path)
{
    static const char *const own[] = {"v1", "hf", "healthz", "readyz", "metrics"};
    size_t n = seg_len(path + 1);
    for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++)
        if (n == strlen(own[i]) && !memcmp(path + 1, own[i], n))
            return true;
    return false;
}

/* The fronts that parse their own paths: /hf (the Hugging Face front) and
 * any path that is not ztensord's own (the S3 front's buckets). */
static ztd_route_status route_front(ztd_route_match *out, const char *method, const char *path)
{
    static const method_route hf[] = {
        {"GET", ZTD_ROUTE_HF}, {"HEAD", ZTD_ROUTE_HF}, {"POST", ZTD_ROUTE_HF}};
    static const method_route s3[] = {{"GET", ZTD_ROUTE_S3},
                                      {"HEAD", ZTD_ROUTE_S3},
                                      {"PUT", ZTD_ROUTE_S3},
                                      {"POST", ZTD_ROUTE_S3},
                                      {"DELETE", ZTD_ROUTE_S3}};
    if (!strcmp(path, "/hf") || !strncmp(path, "/hf/", 4))
        return DISPATCH(out, method, ALLOW_HF, hf);
    if (!own_first_segment(path))
        return DISPATCH(out, method, ALLOW_S3, s3);
    return fail(out, ZTD_ROUTE_NOT_FOUND, "no such route");
}

ztd_route_status ztd_route(const char *method, const char *path, ztd_route_match *out)
{
    static const method_route healthz[] = GET_ROUTE(ZTD_ROUTE_HEALTHZ);
    static const method_route readyz[] = GET_ROUTE(ZTD_ROUTE_READYZ);
    static const method_route metrics[] = GET_ROUTE(ZTD_ROUTE_METRICS);
    static const method_route list[] = GET_ROUTE(ZTD_ROUTE_LIST);
    static const method_route upload_new[] = {{"POST", ZTD_ROUTE_UPLOAD_NEW}};
    static const method_route prefetch[] = {{"GET", ZTD_ROUTE_PREFETCH_STATUS},
                                            {"HEAD", ZTD_ROUTE_PREFETCH_STATUS},
                                            {"POST", ZTD_ROUTE_PREFETCH}};
    size_t len;

    fail(out, ZTD_ROUTE_BAD_REQUEST, "no method or path");
    if (method == NULL || path == NULL)
        return ZTD_ROUTE_BAD_REQUEST;

    len = strnlen(path, ZTD_PATH_MAX + 1);
    if (len > ZTD_PATH_MAX)
        return fail(out, ZTD_ROUTE_URI_TOO_LONG, "path too long");
    if (path[0] != '/')
        return fail(out, ZTD_ROUTE_BAD_REQUEST, "path must start with '/'");
    for (size_t i = 0; i < len; i++)
        if (bad_raw_char((unsigned char)path[i]))
            return fail(out, ZTD_ROUTE_BAD_REQUEST, "invalid character in path");

    if (strcmp(path, "/healthz") == 0)
        return DISPATCH(out, method, ALLOW_GET, healthz);
    if (strcmp(path, "/readyz") == 0)
        return DISPATCH(out, method, ALLOW_GET, readyz);
    if (strcmp(path, "/metrics") == 0)
        return DISPATCH(out, method, ALLOW_GET, metrics);
    if (strcmp(path, "/v1/files") == 0)
        return DISPATCH(out, method, ALLOW_GET, list);
    if (strncmp(path, "/v1/files/", 10) == 0 && path[10] != '\0')
        return route_file(out, method, path + 10);
    if (strncmp(path, "/v1/blobs/", 10) == 0)
        return route_blob(out, method, path + 10);
    if (strcmp(path, "/v1/uploads") == 0)
        return DISPATCH(out, method, ALLOW_POST, upload_new);
    if (strncmp(path, "/v1/uploads/", 12) == 0)
        return route_upload(out, method, path + 12);
    if (strcmp(path, "/v1/prefetch") == 0)
        return DISPATCH(out, method, ALLOW_PREFETCH, prefetch);
    return route_front(out, method, path);
}

const char *ztd_route_name(ztd_route_id route)
{
    static const char *const names[ZTD_ROUTE_COUNT] = {
#define ZTD__ROUTE_NAME(id, name) [ZTD_ROUTE_##id] = #name,
        ZTD_ROUTES(ZTD__ROUTE_NAME)
#undef ZTD__ROUTE_NAME
    };
    if ((unsigned)route >= ZTD_ROUTE_COUNT || names[route] == NULL)
        return "none";
    return names[route];
}
