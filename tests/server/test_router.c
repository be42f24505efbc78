/*
 * test_router.c: unit tests for server/http/router.c (routes, methods and Allow, percent-decoding,
 * the file-name rule and the traversal checks).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "http/router.h"
#include "store/names.h"

static ztd_route_match m; /* 16 KiB: static rather than on the stack */

#define HEX64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static void expect_route(const char *method, const char *path, ztd_route_id route)
{
    ztd_route_status st = ztd_route(method, path, &m);
    if (st != ZTD_ROUTE_OK || m.route != route)
        fail_msg("%s %s: status %d route %s (%s), want route %s", method, path, (int)st,
                 ztd_route_name(m.route), m.message ? m.message : "-", ztd_route_name(route));
    assert_int_equal(m.status, ZTD_ROUTE_OK);
    assert_null(m.message);
    assert_non_null(m.allow);
}

static void expect_status(const char *method, const char *path, ztd_route_status want)
{
    ztd_route_status st = ztd_route(method, path, &m);
    if (st != want)
        fail_msg("%s %s: status %d (%s), want %d", method, path, (int)st,
                 m.message ? m.message : "-", (int)want);
    assert_int_equal(m.status, want);
    assert_int_equal(m.route, ZTD_ROUTE_NONE);
    assert_non_null(m.message);
    /* nothing half-decoded is left behind */
    assert_int_equal(m.file_len, 0);
    assert_string_equal(m.file, "");
    assert_int_equal(m.object_len, 0);
    assert_int_equal(m.component_len, 0);
    assert_int_equal(m.key_len, 0);
    assert_int_equal(m.upload_id_len, 0);
    assert_string_equal(m.blob, "");
}

static void expect_405(const char *method, const char *path, const char *allow)
{
    expect_status(method, path, ZTD_ROUTE_METHOD_NOT_ALLOWED);
    assert_non_null(m.allow);
    assert_string_equal(m.allow, allow);
}

static void expect_file(const char *method, const char *path, ztd_route_id route, const char *file)
{
    expect_route(method, path, route);
    assert_string_equal(m.file, file);
    assert_int_equal(m.file_len, strlen(file));
}

/* ---- routes and methods --------------------------------------------------------------- */

static void static_routes(void **state)
{
    expect_route("GET", "/healthz", ZTD_ROUTE_HEALTHZ);
    expect_route("HEAD", "/healthz", ZTD_ROUTE_HEALTHZ);
    assert_string_equal(m.allow, "GET, HEAD");
    expect_route("GET", "/readyz", ZTD_ROUTE_READYZ);
    expect_route("GET", "/metrics", ZTD_ROUTE_METRICS);
    expect_route("GET", "/v1/files", ZTD_ROUTE_LIST);
    expect_route("HEAD", "/v1/files", ZTD_ROUTE_LIST);
    expect_405("POST", "/healthz", "GET, HEAD");
    expect_405("DELETE", "/readyz", "GET, HEAD");
    expect_405("PUT", "/metrics", "GET, HEAD");
    expect_405("POST", "/v1/files", "GET, HEAD");
    /* methods are case-sensitive */
    expect_405("get", "/healthz", "GET, HEAD");
    expect_405("", "/healthz", "GET, HEAD");
}

static void file_routes(void **state)
{
    expect_file("GET", "/v1/files/model.zt", ZTD_ROUTE_MANIFEST, "model.zt");
    assert_string_equal(m.allow, "GET, HEAD, PUT, DELETE");
    expect_file("HEAD", "/v1/files/model.zt", ZTD_ROUTE_MANIFEST, "model.zt");
    expect_file("PUT", "/v1/files/model.zt", ZTD_ROUTE_PUT_FILE, "model.zt");
    expect_file("DELETE", "/v1/files/model.zt", ZTD_ROUTE_DELETE_FILE, "model.zt");
    expect_405("POST", "/v1/files/model.zt", "GET, HEAD, PUT, DELETE");
    expect_405("PATCH", "/v1/files/model.zt", "GET, HEAD, PUT, DELETE");

    expect_file("GET", "/v1/files/model.zt/raw", ZTD_ROUTE_RAW, "model.zt");
    expect_file("HEAD", "/v1/files/model.zt/raw", ZTD_ROUTE_RAW, "model.zt");
    expect_405("PUT", "/v1/files/model.zt/raw", "GET, HEAD");
    expect_file("GET", "/v1/files/model.zt/safetensors", ZTD_ROUTE_VIEW, "model.zt");
    expect_file("HEAD", "/v1/files/d/m.alt/safetensors", ZTD_ROUTE_VIEW, "d/m.alt");
    expect_file("GET", "/v1/files/s.safetensors/safetensors", ZTD_ROUTE_VIEW, "s.safetensors");
    expect_405("DELETE", "/v1/files/model.zt/safetensors", "GET, HEAD");

    expect_file("GET", "/v1/files/model.zt/objects/layer0.weight", ZTD_ROUTE_OBJECT, "model.zt");
    assert_string_equal(m.object, "layer0.weight");
    assert_int_equal(m.object_len, 13);
    assert_int_equal(m.component_len, 0);
    expect_405("DELETE", "/v1/files/model.zt/objects/w", "GET, HEAD");

    expect_file("HEAD", "/v1/files/model.zt/objects/w/data", ZTD_ROUTE_COMPONENT, "model.zt");
    assert_string_equal(m.object, "w");
    assert_string_equal(m.component, "data");
    assert_int_equal(m.component_len, 4);
    expect_405("PUT", "/v1/files/model.zt/objects/w/data", "GET, HEAD");
}

static void file_extensions(void **state)
{
    expect_file("GET", "/v1/files/a.safetensors", ZTD_ROUTE_MANIFEST, "a.safetensors");
    expect_file("GET", "/v1/files/a.alt/raw", ZTD_ROUTE_RAW, "a.alt");
    expect_file("GET", "/v1/files/a.b.zt", ZTD_ROUTE_MANIFEST, "a.b.zt");
    /* case-sensitive, and must be a suffix: other names are plain files' */
    expect_file("GET", "/v1/files/a.ZT", ZTD_ROUTE_MANIFEST, "a.ZT");
    expect_file("GET", "/v1/files/a.Safetensors", ZTD_ROUTE_MANIFEST, "a.Safetensors");
    expect_file("GET", "/v1/files/model.zt.bak", ZTD_ROUTE_MANIFEST, "model.zt.bak");
    expect_file("GET", "/v1/files/model", ZTD_ROUTE_MANIFEST, "model");
    expect_file("GET", "/v1/files/dir/model", ZTD_ROUTE_MANIFEST, "dir/model");
    expect_file("GET", "/v1/files/zt", ZTD_ROUTE_MANIFEST, "zt");
}

/* Names with no segment ending in a tensor extension are plain files': the
 * whole path, or what precedes a literal last "/raw" or "/safetensors". */
static void plain_files(void **state)
{
    expect_file("GET", "/v1/files/config.json", ZTD_ROUTE_MANIFEST, "config.json");
    expect_file("HEAD", "/v1/files/config.json", ZTD_ROUTE_MANIFEST, "config.json");
    assert_string_equal(m.allow, "GET, HEAD, PUT, DELETE");
    expect_file("PUT", "/v1/files/m/tokenizer.json", ZTD_ROUTE_PUT_FILE, "m/tokenizer.json");
    expect_file("DELETE", "/v1/files/m/README", ZTD_ROUTE_DELETE_FILE, "m/README");
    expect_file("GET", "/v1/files/config.json/raw", ZTD_ROUTE_RAW, "config.json");
    assert_string_equal(m.allow, "GET, HEAD");
    expect_file("HEAD", "/v1/files/a/b/c.txt/raw", ZTD_ROUTE_RAW, "a/b/c.txt");
    expect_file("GET", "/v1/files/a%2Fb/c.txt/raw", ZTD_ROUTE_RAW, "a/b/c.txt");
    expect_file("GET", "/v1/files/config.json/safetensors", ZTD_ROUTE_VIEW, "config.json");
    expect_405("PUT", "/v1/files/config.json/raw", "GET, HEAD");
    expect_405("POST", "/v1/files/config.json", "GET, HEAD, PUT, DELETE");
    /* non-ASCII and awkward characters, decoded */
    expect_file("GET", "/v1/files/d%C3%A9j%C3%A0%20vu.txt/raw", ZTD_ROUTE_RAW,
                "d\xc3\xa9j\xc3\xa0 vu.txt");
    /* the ambiguity router.h documents: a last literal "raw" is the route... */
    expect_file("GET", "/v1/files/d/raw", ZTD_ROUTE_RAW, "d");
    expect_file("GET", "/v1/files/d/raw/raw", ZTD_ROUTE_RAW, "d/raw");
    /* ... unless it is the only segment, or encoded (segment or slash) */
    expect_file("GET", "/v1/files/raw", ZTD_ROUTE_MANIFEST, "raw");
    expect_file("GET", "/v1/files/raw/raw", ZTD_ROUTE_RAW, "raw");
    expect_file("GET", "/v1/files/safetensors", ZTD_ROUTE_MANIFEST, "safetensors");
    expect_file("GET", "/v1/files/d/%72aw", ZTD_ROUTE_MANIFEST, "d/raw");
    expect_file("GET", "/v1/files/d%2Fraw", ZTD_ROUTE_MANIFEST, "d/raw");
    expect_file("GET", "/v1/files/d%2Fraw/raw", ZTD_ROUTE_RAW, "d/raw");
    expect_file("GET", "/v1/files/d/rawx", ZTD_ROUTE_MANIFEST, "d/rawx");
    /* tensor-only routes under a plain name are a (longer) plain name here;
     * the handler answers not_a_tensor_file */
    expect_file("GET", "/v1/files/config.json/objects/x", ZTD_ROUTE_MANIFEST,
                "config.json/objects/x");
    /* a tensor extension anywhere keeps today's rule */
    expect_file("GET", "/v1/files/d/m.zt/raw", ZTD_ROUTE_RAW, "d/m.zt");
    expect_status("GET", "/v1/files/d.zt/config.json", ZTD_ROUTE_NOT_FOUND);
    /* the traversal rules hold for plain names, /raw or not */
    static const char *const bad[] = {
        "/v1/files/../etc/passwd",
        "/v1/files/../etc/passwd/raw",
        "/v1/files/a/../b",
        "/v1/files/%2e%2e/secret/raw",
        "/v1/files/%2Fetc%2Fpasswd",
        "/v1/files/.env",
        "/v1/files/.env/raw",
        "/v1/files/a/.git/config/raw",
        "/v1/files/a//b/raw",
        "/v1/files/a/",
        "/v1/files//raw",
        "/v1/files/a%00b/raw",
        "/v1/files/.ztensord-staging/put-1/raw",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        expect_status("GET", bad[i], ZTD_ROUTE_BAD_REQUEST);
        expect_status("PUT", bad[i], ZTD_ROUTE_BAD_REQUEST);
        expect_status("DELETE", bad[i], ZTD_ROUTE_BAD_REQUEST);
    }
}

static void file_nested_and_encoded_slash(void **state)
{
    expect_file("GET", "/v1/files/a/b/c.safetensors/objects/x", ZTD_ROUTE_OBJECT,
                "a/b/c.safetensors");
    assert_string_equal(m.object, "x");
    /* %2F and a literal '/' name the same file */
    expect_file("GET", "/v1/files/llama/model.zt", ZTD_ROUTE_MANIFEST, "llama/model.zt");
    expect_file("GET", "/v1/files/llama%2Fmodel.zt", ZTD_ROUTE_MANIFEST, "llama/model.zt");
    expect_file("GET", "/v1/files/llama%2fmodel.zt/raw", ZTD_ROUTE_RAW, "llama/model.zt");
    expect_file("GET", "/v1/files/a%2Fb/c%2Fd.zt", ZTD_ROUTE_MANIFEST, "a/b/c/d.zt");
    /* the first segment ending in an extension ends the file part */
    expect_status("GET", "/v1/files/d.zt/m.zt", ZTD_ROUTE_NOT_FOUND);
    expect_file("GET", "/v1/files/d.zt%2Fm.zt", ZTD_ROUTE_MANIFEST, "d.zt/m.zt");
    expect_file("GET", "/v1/files/d.zt/objects/m.zt", ZTD_ROUTE_OBJECT, "d.zt");
    assert_string_equal(m.object, "m.zt");
    /* an extension hidden behind an encoded slash does not end the file part early */
    expect_file("GET", "/v1/files/x.zt%2Fy/z.alt", ZTD_ROUTE_MANIFEST, "x.zt/y/z.alt");
}

static void file_tail_not_found(void **state)
{
    expect_status("GET", "/v1/files/", ZTD_ROUTE_NOT_FOUND);
    expect_status("GET", "/v1/files/x.zt/", ZTD_ROUTE_NOT_FOUND);
    expect_status("GET", "/v1/files/x.zt/raw/", ZTD_ROUTE_NOT_FOUND);
    expect_status("GET", "/v1/files/x.zt/rawx", ZTD_ROUTE_NOT_FOUND);
    expect_status("GET", "/v1/files/x.zt/safetensors/", ZTD_ROUTE_NOT_FOUND);
    expect_status("GET", "/v1/files/x.zt/Safetensors", ZTD_ROUTE_NOT_FOUND);
    expect_status("GET", "/v1/files/x.zt/foo", ZTD_ROUTE_NOT_FOUND);
    expect_status("GET", "/v1/files/x.zt/objects", ZTD_ROUTE_NOT_FOUND);
    expect_status("GET", "/v1/files/x.zt/objects/", ZTD_ROUTE_NOT_FOUND);
    expect_status("GET", "/v1/files/x.zt/objects//c", ZTD_ROUTE_NOT_FOUND);
    expect_status("GET", "/v1/files/x.zt/objects/a/", ZTD_ROUTE_NOT_FOUND);
    expect_status("GET", "/v1/files/x.zt/objects/a/b/c", ZTD_ROUTE_NOT_FOUND);
    expect_status("GET", "/v1/files/x.zt/%72aw", ZTD_ROUTE_NOT_FOUND); /* literals not decoded */
}

static void awkward_names(void **state)
{
    expect_route("GET", "/v1/files/m.zt/objects/%20a%3Fb%23c%25d", ZTD_ROUTE_OBJECT);
    assert_string_equal(m.object, " a?b#c%d");
    assert_int_equal(m.object_len, 8);
    expect_route("GET", "/v1/files/m.zt/objects/caf%C3%A9/%e2%82%ac", ZTD_ROUTE_COMPONENT);
    assert_string_equal(m.object, "caf\xc3\xa9");
    assert_string_equal(m.component, "\xe2\x82\xac");
    expect_route("GET", "/v1/files/m.zt/objects/%F0%9F%A6%99", ZTD_ROUTE_OBJECT);
    assert_string_equal(m.object, "\xf0\x9f\xa6\x99");
    expect_route("GET", "/v1/files/m.zt/objects/a%2Fb/c", ZTD_ROUTE_COMPONENT);
    assert_string_equal(m.object, "a/b");
    assert_string_equal(m.component, "c");
    /* '+' is not a space in a path */
    expect_route("GET", "/v1/files/m.zt/objects/a+b", ZTD_ROUTE_OBJECT);
    assert_string_equal(m.object, "a+b");
    /* object names are manifest keys, not paths: dots are ordinary */
    expect_route("GET", "/v1/files/m.zt/objects/../..", ZTD_ROUTE_COMPONENT);
    assert_string_equal(m.object, "..");
    assert_string_equal(m.component, "..");
    expect_route("GET", "/v1/files/m.zt/objects/%2E", ZTD_ROUTE_OBJECT);
    assert_string_equal(m.object, ".");
    /* file names may be UTF-8, encoded or raw, and contain a backslash */
    expect_file("GET", "/v1/files/caf%C3%A9.zt", ZTD_ROUTE_MANIFEST, "caf\xc3\xa9.zt");
    expect_file("GET", "/v1/files/caf\xc3\xa9.zt", ZTD_ROUTE_MANIFEST, "caf\xc3\xa9.zt");
    expect_file("GET", "/v1/files/a%5Cb.zt", ZTD_ROUTE_MANIFEST, "a\\b.zt");
    expect_file("GET", "/v1/files/a\\b.zt", ZTD_ROUTE_MANIFEST, "a\\b.zt");
    expect_file("GET", "/v1/files/my%20model%2B1.zt", ZTD_ROUTE_MANIFEST, "my model+1.zt");
    expect_file("GET", "/v1/files/a%3Fb%23c.zt", ZTD_ROUTE_MANIFEST, "a?b#c.zt");
    expect_file("GET", "/v1/files/a..b.zt", ZTD_ROUTE_MANIFEST, "a..b.zt");
}

static void invalid_encoding(void **state)
{
    static const char *const bad[] = {
        "/v1/files/m.zt/objects/%FF",          /* not UTF-8 */
        "/v1/files/m.zt/objects/%C0%AF",       /* overlong '/' */
        "/v1/files/m.zt/objects/%E0%80%AF",    /* overlong */
        "/v1/files/m.zt/objects/%ED%A0%80",    /* surrogate */
        "/v1/files/m.zt/objects/%F4%90%80%80", /* above U+10FFFF */
        "/v1/files/m.zt/objects/%F0%8F%BF%BF", /* overlong 4-byte */
        "/v1/files/m.zt/objects/%F5%80%80%80", /* lead byte past F4 */
        "/v1/files/m.zt/objects/%C3",          /* truncated */
        "/v1/files/m.zt/objects/%C3a",         /* bad continuation */
        "/v1/files/m.zt/objects/%80",          /* lone continuation */
        "/v1/files/m.zt/objects/a%00b",        /* NUL */
        "/v1/files/m.zt/objects/w/%FF",
        "/v1/files/m.zt/objects/w/%00",
        "/v1/files/m.zt/objects/%",
        "/v1/files/m.zt/objects/%4",
        "/v1/files/m.zt/objects/%G0",
        "/v1/files/m.zt/objects/%%",
        "/v1/files/m.zt/objects/a%2",
        "/v1/files/%FF.zt",
        "/v1/files/\xff.zt",
        "/v1/files/a%00.zt",
        "/v1/files/%.zt",
        "/v1/files/%zz/a.zt",
        "/v1/files/dir%/a.zt",
        "/v1/uploads/abc/components/%FF",
        "/v1/uploads/abc/components/%00",
        "/v1/uploads/abc/components/%Z1",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        expect_status("GET", bad[i], ZTD_ROUTE_BAD_REQUEST);
    /* the method does not matter: the path is checked first */
    expect_status("PUT", "/v1/uploads/abc/components/%FF", ZTD_ROUTE_BAD_REQUEST);
}

static void traversal(void **state)
{
    static const char *const bad[] = {
        "/v1/files/../x.zt",
        "/v1/files/../../etc/passwd.zt",
        "/v1/files/a/../x.zt",
        "/v1/files/%2e%2e/x.zt",
        "/v1/files/%2E%2E/x.zt",
        "/v1/files/%2e%2e%2fx.zt",
        "/v1/files/%2E%2E%2Fx.zt",
        "/v1/files/.%2e/x.zt",
        "/v1/files/a%2F..%2Fx.zt",
        "/v1/files/a%2F..%2F..%2Fx.zt/raw",
        "/v1/files/%2Fetc/passwd.zt",
        "/v1/files/%2Fetc%2Fpasswd.zt",
        "/v1/files/%2fx.zt",
        "/v1/files//x.zt",
        "/v1/files/a//x.zt",
        "/v1/files/a%2F%2Fx.zt",
        "/v1/files/a%2F/x.zt",
        "/v1/files/./x.zt",
        "/v1/files/a/%2E/x.zt",
        "/v1/files/.ztensord-staging/x.zt",
        "/v1/files/%2Eztensord-staging/x.zt",
        "/v1/files/a/.hidden/x.zt",
        "/v1/files/.x.zt",
        "/v1/files/.zt",
        "/v1/files/a/.zt",
        "/v1/files/x%2F.zt",
        "/v1/files/..%5C..%5Cx.zt",
        "/v1/files/..\\x.zt",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        expect_status("GET", bad[i], ZTD_ROUTE_BAD_REQUEST);
        expect_status("PUT", bad[i], ZTD_ROUTE_BAD_REQUEST);
        expect_status("DELETE", bad[i], ZTD_ROUTE_BAD_REQUEST);
    }
    expect_status("GET", "/v1/files/%2Fetc%2Fpasswd.zt", ZTD_ROUTE_BAD_REQUEST);
    assert_string_equal(m.message, "file path must be relative");
    expect_status("GET", "/v1/files/a/../x.zt", ZTD_ROUTE_BAD_REQUEST);
    assert_string_equal(m.message, "file path segment starts with '.'");
    expect_status("GET", "/v1/files/a//x.zt", ZTD_ROUTE_BAD_REQUEST);
    assert_string_equal(m.message, "file path has an empty segment");
    /* a name without a tensor extension is a plain file's: the same rules */
    expect_status("GET", "/v1/files/../../etc/passwd", ZTD_ROUTE_BAD_REQUEST);
    assert_string_equal(m.message, "file path segment starts with '.'");
}

static void blobs(void **state)
{
    expect_route("GET", "/v1/blobs/sha256:" HEX64, ZTD_ROUTE_BLOB);
    assert_string_equal(m.blob, HEX64);
    assert_string_equal(m.allow, "GET, HEAD");
    expect_route("HEAD",
                 "/v1/blobs/sha256:0123456789ABCDEF0123456789abcdef0123456789ABCDEF"
                 "0123456789AbCdEf",
                 ZTD_ROUTE_BLOB);
    assert_string_equal(m.blob, HEX64);
    expect_route("GET", "/v1/blobs/sha256%3A" HEX64, ZTD_ROUTE_BLOB);
    assert_string_equal(m.blob, HEX64);
    expect_405("PUT", "/v1/blobs/sha256:" HEX64, "GET, HEAD");
    expect_405("DELETE", "/v1/blobs/sha256:" HEX64, "GET, HEAD");

    expect_status("GET", "/v1/blobs/sha256:" HEX64 "0", ZTD_ROUTE_BAD_REQUEST);
    expect_status("GET", "/v1/blobs/sha256:0123456789abcdef", ZTD_ROUTE_BAD_REQUEST);
    expect_status(
        "GET", "/v1/blobs/sha256:g123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
        ZTD_ROUTE_BAD_REQUEST);
    expect_status("GET", "/v1/blobs/sha512:" HEX64, ZTD_ROUTE_BAD_REQUEST);
    expect_status("GET", "/v1/blobs/SHA256:" HEX64, ZTD_ROUTE_BAD_REQUEST);
    expect_status("GET", "/v1/blobs/" HEX64, ZTD_ROUTE_BAD_REQUEST);
    expect_status("GET", "/v1/blobs/sha256:%zz", ZTD_ROUTE_BAD_REQUEST);
    expect_status("GET", "/v1/blobs/", ZTD_ROUTE_NOT_FOUND);
    expect_status("GET", "/v1/blobs", ZTD_ROUTE_NOT_FOUND);
    expect_status("GET", "/v1/blobs/sha256:" HEX64 "/x", ZTD_ROUTE_NOT_FOUND);
    expect_status("GET", "/v1/blobs/sha256:" HEX64 "/", ZTD_ROUTE_NOT_FOUND);
}

static void uploads(void **state)
{
    expect_route("POST", "/v1/uploads", ZTD_ROUTE_UPLOAD_NEW);
    assert_string_equal(m.allow, "POST");
    expect_405("GET", "/v1/uploads", "POST");

    expect_route("GET", "/v1/uploads/abc-123_X", ZTD_ROUTE_UPLOAD_STATUS);
    assert_string_equal(m.upload_id, "abc-123_X");
    assert_int_equal(m.upload_id_len, 9);
    expect_route("HEAD", "/v1/uploads/abc", ZTD_ROUTE_UPLOAD_STATUS);
    expect_route("DELETE", "/v1/uploads/abc", ZTD_ROUTE_UPLOAD_ABORT);
    assert_string_equal(m.upload_id, "abc");
    expect_405("PUT", "/v1/uploads/abc", "GET, HEAD, DELETE");
    expect_405("POST", "/v1/uploads/abc", "GET, HEAD, DELETE");

    expect_route("POST", "/v1/uploads/abc/commit", ZTD_ROUTE_UPLOAD_COMMIT);
    assert_string_equal(m.upload_id, "abc");
    expect_405("GET", "/v1/uploads/abc/commit", "POST");
    expect_405("PUT", "/v1/uploads/abc/commit", "POST");

    expect_route("PUT", "/v1/uploads/abc/components/w%2Fq%3Adata", ZTD_ROUTE_UPLOAD_COMPONENT);
    assert_string_equal(m.upload_id, "abc");
    assert_string_equal(m.key, "w/q:data");
    assert_int_equal(m.key_len, 8);
    expect_405("POST", "/v1/uploads/abc/components/k", "PUT");
    expect_405("GET", "/v1/uploads/abc/components/k", "PUT");

    /* ids: [A-Za-z0-9_-]{1,64}, decoded first */
    expect_route("GET", "/v1/uploads/%41b", ZTD_ROUTE_UPLOAD_STATUS);
    assert_string_equal(m.upload_id, "Ab");
    expect_route("GET",
                 "/v1/uploads/0123456789012345678901234567890123456789012345678901234567890123",
                 ZTD_ROUTE_UPLOAD_STATUS);
    assert_int_equal(m.upload_id_len, 64);
    expect_status("GET",
                  "/v1/uploads/01234567890123456789012345678901234567890123456789012345678901234",
                  ZTD_ROUTE_BAD_REQUEST);
    expect_status("GET", "/v1/uploads/a.b", ZTD_ROUTE_BAD_REQUEST);
    expect_status("GET", "/v1/uploads/..", ZTD_ROUTE_BAD_REQUEST);
    expect_status("GET", "/v1/uploads/%2E%2E", ZTD_ROUTE_BAD_REQUEST);
    expect_status("DELETE", "/v1/uploads/a%2Fb", ZTD_ROUTE_BAD_REQUEST);
    expect_status("GET", "/v1/uploads/a%00", ZTD_ROUTE_BAD_REQUEST);
    expect_status("GET", "/v1/uploads/%zz", ZTD_ROUTE_BAD_REQUEST);

    expect_status("GET", "/v1/uploads/", ZTD_ROUTE_NOT_FOUND);
    expect_status("GET", "/v1/uploads/abc/", ZTD_ROUTE_NOT_FOUND);
    expect_status("POST", "/v1/uploads/abc/other", ZTD_ROUTE_NOT_FOUND);
    expect_status("POST", "/v1/uploads/abc/commit/", ZTD_ROUTE_NOT_FOUND);
    expect_status("PUT", "/v1/uploads/abc/components", ZTD_ROUTE_NOT_FOUND);
    expect_status("PUT", "/v1/uploads/abc/components/", ZTD_ROUTE_NOT_FOUND);
    expect_status("PUT", "/v1/uploads/abc/components/a/b", ZTD_ROUTE_NOT_FOUND);
}

static void unknown_and_malformed_paths(void **state)
{
    /* what is not ztensord's own goes to the S3 front, which parses it */
    expect_route("GET", "/", ZTD_ROUTE_S3);
    expect_route("GET", "/nope", ZTD_ROUTE_S3);
    expect_route("DELETE", "/nope/a/b", ZTD_ROUTE_S3);
    expect_route("GET", "//healthz", ZTD_ROUTE_S3);
    expect_route("GET", "/HEALTHZ", ZTD_ROUTE_S3);
    expect_route("POST", "/V1/files", ZTD_ROUTE_S3);
    expect_route("GET", "/v2/files/a.zt", ZTD_ROUTE_S3);
    expect_route("GET", "/v1x/files", ZTD_ROUTE_S3);
    expect_route("GET", "/hfx", ZTD_ROUTE_S3);
    expect_status("PATCH", "/nope", ZTD_ROUTE_METHOD_NOT_ALLOWED);
    /* /hf is the Hugging Face front's */
    expect_route("GET", "/hf", ZTD_ROUTE_HF);
    expect_route("POST", "/hf/api/models/a/b/paths-info/main", ZTD_ROUTE_HF);
    expect_status("PUT", "/hf/a/b", ZTD_ROUTE_METHOD_NOT_ALLOWED);
    /* ztensord's own first segments are never buckets */
    expect_status("GET", "/healthz/", ZTD_ROUTE_NOT_FOUND);
    expect_status("GET", "/metrics/x", ZTD_ROUTE_NOT_FOUND);
    expect_status("PUT", "/readyz/x", ZTD_ROUTE_NOT_FOUND);
    expect_status("GET", "/v1", ZTD_ROUTE_NOT_FOUND);
    expect_status("GET", "/v1/", ZTD_ROUTE_NOT_FOUND);
    expect_status("GET", "/v1/files/", ZTD_ROUTE_NOT_FOUND);
    expect_status("GET", "/v1/%66iles", ZTD_ROUTE_NOT_FOUND);
    expect_status("GET", "/v1/filesx/a.zt", ZTD_ROUTE_NOT_FOUND);
    expect_status("GET", "/v1/uploadsx", ZTD_ROUTE_NOT_FOUND);

    expect_status("GET", "", ZTD_ROUTE_BAD_REQUEST);
    expect_status("GET", "healthz", ZTD_ROUTE_BAD_REQUEST);
    expect_status("OPTIONS", "*", ZTD_ROUTE_BAD_REQUEST);
    expect_status("GET", "http://host/healthz", ZTD_ROUTE_BAD_REQUEST);
    expect_status("GET", "/v1/files/a.zt?x=1", ZTD_ROUTE_BAD_REQUEST);
    expect_status("GET", "/v1/files/a.zt#frag", ZTD_ROUTE_BAD_REQUEST);
    expect_status("GET", "/v1/files/a b.zt", ZTD_ROUTE_BAD_REQUEST);
    expect_status("GET", "/v1/files/a\tb.zt", ZTD_ROUTE_BAD_REQUEST);
    expect_status("GET", "/v1/files/a\r\nb.zt", ZTD_ROUTE_BAD_REQUEST);
    expect_status("GET", "/healthz\x7f", ZTD_ROUTE_BAD_REQUEST);
    expect_status(NULL, "/healthz", ZTD_ROUTE_BAD_REQUEST);
    expect_status("GET", NULL, ZTD_ROUTE_BAD_REQUEST);
}

static void path_length_limits(void **state)
{
    static char path[ZTD_PATH_MAX + 64];
    const char *prefix = "/v1/files/", *suffix = ".zt";
    size_t fill;

    /* exactly ZTD_PATH_MAX bytes is accepted */
    fill = ZTD_PATH_MAX - strlen(prefix) - strlen(suffix);
    strcpy(path, prefix);
    memset(path + strlen(prefix), 'a', fill);
    strcpy(path + strlen(prefix) + fill, suffix);
    assert_int_equal(strlen(path), ZTD_PATH_MAX);
    expect_route("GET", path, ZTD_ROUTE_MANIFEST);
    assert_int_equal(m.file_len, fill + 3);
    assert_memory_equal(m.file + fill, ".zt", 4);

    /* one more byte is 414, whatever the path */
    strcpy(path + strlen(prefix) + fill, "b.zt");
    assert_int_equal(strlen(path), ZTD_PATH_MAX + 1);
    expect_status("GET", path, ZTD_ROUTE_URI_TOO_LONG);
    memset(path, '/', ZTD_PATH_MAX + 1);
    path[ZTD_PATH_MAX + 1] = '\0';
    expect_status("GET", path, ZTD_ROUTE_URI_TOO_LONG);

    /* long object and component names fill their buffers */
    strcpy(path, "/v1/files/m.zt/objects/");
    fill = (ZTD_PATH_MAX - strlen(path) - 2) / 2;
    memset(path + strlen(path), 'o', fill);
    path[23 + fill] = '\0';
    strcat(path, "/");
    memset(path + strlen(path), 'c', ZTD_PATH_MAX - strlen(path));
    path[ZTD_PATH_MAX] = '\0';
    expect_route("GET", path, ZTD_ROUTE_COMPONENT);
    assert_int_equal(m.object_len, fill);
    assert_int_equal(m.component_len, ZTD_PATH_MAX - 24 - fill);
    assert_int_equal(strlen(m.component), m.component_len);

    /* a fully encoded long file name decodes to a third of its length */
    strcpy(path, "/v1/files/");
    while (strlen(path) + 3 + 3 <= ZTD_PATH_MAX)
        strcat(path, "%41");
    strcat(path, ".zt");
    expect_route("GET", path, ZTD_ROUTE_MANIFEST);
    assert_int_equal(m.file_len, (strlen(path) - 13) / 3 + 3);
    assert_int_equal(m.file[0], 'A');
}

static void failure_resets_previous_match(void **state)
{
    expect_route("GET", "/v1/files/m.zt/objects/w/data", ZTD_ROUTE_COMPONENT);
    assert_int_equal(m.file_len, 4);
    expect_status("GET", "/v1/files/../m.zt/objects/w/data", ZTD_ROUTE_BAD_REQUEST);
    assert_null(m.allow);
    expect_route("GET", "/v1/blobs/sha256:" HEX64, ZTD_ROUTE_BLOB);
    expect_status("GET", "/v1/nope", ZTD_ROUTE_NOT_FOUND);
    /* a successful match clears fields the route does not use */
    expect_route("GET", "/v1/files/m.zt/objects/w/data", ZTD_ROUTE_COMPONENT);
    expect_route("GET", "/v1/files/m.zt", ZTD_ROUTE_MANIFEST);
    assert_int_equal(m.object_len, 0);
    assert_string_equal(m.object, "");
    assert_int_equal(m.component_len, 0);
}

static void route_names(void **state)
{
    const char *seen[ZTD_ROUTE_COUNT];

    assert_string_equal(ztd_route_name(ZTD_ROUTE_NONE), "none");
    assert_string_equal(ztd_route_name(ZTD_ROUTE_MANIFEST), "manifest");
    assert_string_equal(ztd_route_name(ZTD_ROUTE_COMPONENT), "component");
    assert_string_equal(ztd_route_name(ZTD_ROUTE_VIEW), "view");
    assert_string_equal(ztd_route_name(ZTD_ROUTE_UPLOAD_COMMIT), "upload_commit");
    assert_string_equal(ztd_route_name(ZTD_ROUTE_COUNT), "none");
    assert_string_equal(ztd_route_name((ztd_route_id)(ZTD_ROUTE_COUNT + 5)), "none");
    /* every route has its own name */
    for (int i = 1; i < ZTD_ROUTE_COUNT; i++) {
        seen[i] = ztd_route_name((ztd_route_id)i);
        assert_string_not_equal(seen[i], "none");
        for (int j = 1; j < i; j++)
            assert_string_not_equal(seen[i], seen[j]);
    }
}

/* The path rule applied to names from elsewhere (an upstream's listing). */
static void file_path_problem(void **state)
{
    (void)state;
    const char *fine[] = {"a.zt", "d/e/f.zt", "llama 3/\xc3\xa9.zt", "a..b.zt"};
    for (size_t i = 0; i < sizeof(fine) / sizeof(fine[0]); i++)
        assert_null(ztd_file_path_problem(fine[i], strlen(fine[i])));
    const char *bad[] = {"",         "../x.zt",      "a/../../x.zt", "/abs.zt", "a//b.zt",
                         "a/./b.zt", ".hidden/x.zt", "a/",           "\xff.zt"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_non_null(ztd_file_path_problem(bad[i], strlen(bad[i])));
    assert_non_null(ztd_file_path_problem("a\0b.zt", 6));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(static_routes),
        cmocka_unit_test(file_routes),
        cmocka_unit_test(file_extensions),
        cmocka_unit_test(plain_files),
        cmocka_unit_test(file_nested_and_encoded_slash),
        cmocka_unit_test(file_tail_not_found),
        cmocka_unit_test(awkward_names),
        cmocka_unit_test(invalid_encoding),
        cmocka_unit_test(traversal),
        cmocka_unit_test(blobs),
        cmocka_unit_test(uploads),
        cmocka_unit_test(unknown_and_malformed_paths),
        cmocka_unit_test(path_length_limits),
        cmocka_unit_test(failure_resets_previous_match),
        cmocka_unit_test(route_names),
        cmocka_unit_test(file_path_problem),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
