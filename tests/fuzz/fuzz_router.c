/*
 * fuzz_router.c: libFuzzer target for server/http/router.c.
 *
 * This file defines LLVMFuzzerTestOneInput and nothing else: no main. Link it with
 * -fsanitize=fuzzer, or with a driver that replays a corpus through the same entry point.
 *
 * Input layout: the first byte picks the method from a small table, the rest is the raw path
 * (cut at the first NUL, as a C string would be).
 *
 * Invariants (a violation calls __builtin_trap): the status is one of 0/400/404/405/414 and
 * agrees with the struct; a failure leaves every name empty; a 405 carries an Allow value; on
 * success every name is as long as its length field (so contains no NUL), is valid UTF-8, and
 * the file path is relative, has no empty, "." or ".." segment nor any segment starting with
 * '.', and either ends in a served extension (a tensor file) or is a plain file's, which only
 * the file, /raw and /safetensors routes name (never objects); a blob digest is 64 lowercase
 * hex digits; an upload id is 1-64 characters of [A-Za-z0-9_-]. Finally, re-encoding the decoded names and routing
 * again yields the same names (the decoding is canonical).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "http/router.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) __builtin_trap();                                                             \
    } while (0)

static const char *const methods[] = {"GET", "HEAD", "PUT", "DELETE", "POST", "PATCH", "get", ""};

static ztd_route_match m, again;
static char path2[3 * ZTD_PATH_MAX + 64];

static int utf8_ok(const unsigned char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        unsigned c = s[i];
        size_t len;
        uint32_t cp;
        if (c < 0x80) {
            i++;
            continue;
        }
        if ((c & 0xE0) == 0xC0) {
            len = 2;
            cp = c & 0x1F;
        } else if ((c & 0xF0) == 0xE0) {
            len = 3;
            cp = c & 0x0F;
        } else if ((c & 0xF8) == 0xF0) {
            len = 4;
            cp = c & 0x07;
        } else {
            return 0;
        }
        if (n - i < len) return 0;
        for (size_t k = 1; k < len; k++) {
            if ((s[i + k] & 0xC0) != 0x80) return 0;
            cp = cp << 6 | (s[i + k] & 0x3F);
        }
        if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000))
            return 0;
        if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
        i += len;
    }
    return 1;
}

static void check_name(const char *s, size_t len, int nonempty)
{
    CHECK(strlen(s) == len);
    CHECK(utf8_ok((const unsigned char *)s, len));
    if (nonempty) CHECK(len > 0);
}

static void check_file(const char *s, size_t len)
{
    size_t start = 0;

    check_name(s, len, 1);
    CHECK(s[0] != '/');
    for (size_t i = 0; i <= len; i++) {
        if (i < len && s[i] != '/') continue;
        CHECK(i > start);       /* no empty segment */
        CHECK(s[start] != '.'); /* no ".", "..", hidden entry */
        start = i + 1;
    }
    if ((len >= 3 && memcmp(s + len - 3, ".zt", 3) == 0) ||
        (len >= 4 && memcmp(s + len - 4, ".alt", 4) == 0) ||
        (len >= 12 && memcmp(s + len - 12, ".safetensors", 12) == 0))
        return;
    /* a plain file: no objects under it */
    CHECK(m.route != ZTD_ROUTE_OBJECT && m.route != ZTD_ROUTE_COMPONENT);
}

/* Percent-encode everything but unreserved characters (so '/' becomes %2F). */
static size_t encode(char *dst, const char *s, size_t n)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
            c == '-' || c == '_' || c == '.' || c == '~') {
            dst[o++] = (char)c;
        } else {
            dst[o++] = '%';
            dst[o++] = hex[c >> 4];
            dst[o++] = hex[c & 15];
        }
    }
    dst[o] = '\0';
    return o;
}

static size_t put(char *dst, const char *lit)
{
    size_t n = strlen(lit);
    memcpy(dst, lit, n + 1);
    return n;
}

static void check_reencoded(void)
{
    size_t o = 0;

    if (m.route != ZTD_ROUTE_OBJECT && m.route != ZTD_ROUTE_COMPONENT &&
        m.route != ZTD_ROUTE_MANIFEST && m.route != ZTD_ROUTE_RAW && m.route != ZTD_ROUTE_VIEW)
        return;
    o += put(path2, "/v1/files/");
    o += encode(path2 + o, m.file, m.file_len);
    if (m.route == ZTD_ROUTE_OBJECT || m.route == ZTD_ROUTE_COMPONENT) {
        o += put(path2 + o, "/objects/");
        o += encode(path2 + o, m.object, m.object_len);
    }
    if (m.route == ZTD_ROUTE_COMPONENT) {
        path2[o++] = '/';
        o += encode(path2 + o, m.component, m.component_len);
    }
    if (m.route == ZTD_ROUTE_RAW) o += put(path2 + o, "/raw");
    if (m.route == ZTD_ROUTE_VIEW) o += put(path2 + o, "/safetensors");
    if (o > ZTD_PATH_MAX) {
        CHECK(ztd_route("GET", path2, &again) == ZTD_ROUTE_URI_TOO_LONG);
        return;
    }
    CHECK(ztd_route("GET", path2, &again) == ZTD_ROUTE_OK);
    CHECK(again.route == (m.route == ZTD_ROUTE_PUT_FILE || m.route == ZTD_ROUTE_DELETE_FILE
                              ? ZTD_ROUTE_MANIFEST
                              : m.route));
    CHECK(again.file_len == m.file_len && memcmp(again.file, m.file, m.file_len) == 0);
    CHECK(again.object_len == m.object_len && memcmp(again.object, m.object, m.object_len) == 0);
    CHECK(again.component_len == m.component_len &&
          memcmp(again.component, m.component, m.component_len) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *method;
    char *path;
    ztd_route_status st;

    if (size < 1) return 0;
    method = methods[data[0] % (sizeof methods / sizeof methods[0])];
    path = malloc(size);
    if (path == NULL) return 0;
    memcpy(path, data + 1, size - 1);
    path[size - 1] = '\0';

    st = ztd_route(method, path, &m);
    CHECK(st == m.status);
    CHECK(st == ZTD_ROUTE_OK || st == ZTD_ROUTE_BAD_REQUEST || st == ZTD_ROUTE_NOT_FOUND ||
          st == ZTD_ROUTE_METHOD_NOT_ALLOWED || st == ZTD_ROUTE_URI_TOO_LONG);
    CHECK((st == ZTD_ROUTE_URI_TOO_LONG) == (strlen(path) > ZTD_PATH_MAX));
    CHECK(strcmp(ztd_route_name(m.route), "") != 0);

    if (st != ZTD_ROUTE_OK) {
        CHECK(m.route == ZTD_ROUTE_NONE);
        CHECK(m.message != NULL);
        CHECK((m.allow != NULL) == (st == ZTD_ROUTE_METHOD_NOT_ALLOWED));
        CHECK(m.file_len == 0 && m.file[0] == '\0');
        CHECK(m.object_len == 0 && m.object[0] == '\0');
        CHECK(m.component_len == 0 && m.component[0] == '\0');
        CHECK(m.key_len == 0 && m.key[0] == '\0');
        CHECK(m.upload_id_len == 0 && m.upload_id[0] == '\0');
        CHECK(m.blob[0] == '\0');
        free(path);
        return 0;
    }

    CHECK(m.route > ZTD_ROUTE_NONE && m.route < ZTD_ROUTE_COUNT);
    CHECK(m.allow != NULL && m.message == NULL);
    CHECK(path[0] == '/');
    check_name(m.file, m.file_len, 0);
    check_name(m.object, m.object_len, 0);
    check_name(m.component, m.component_len, 0);
    check_name(m.key, m.key_len, 0);
    CHECK(strlen(m.upload_id) == m.upload_id_len && m.upload_id_len <= ZTD_UPLOAD_ID_MAX);

    switch (m.route) {
    case ZTD_ROUTE_COMPONENT:
        CHECK(m.component_len > 0);
        /* fall through */
    case ZTD_ROUTE_OBJECT:
        CHECK(m.object_len > 0);
        /* fall through */
    case ZTD_ROUTE_MANIFEST:
    case ZTD_ROUTE_PUT_FILE:
    case ZTD_ROUTE_DELETE_FILE:
    case ZTD_ROUTE_RAW:
    case ZTD_ROUTE_VIEW:
        check_file(m.file, m.file_len);
        check_reencoded();
        break;
    case ZTD_ROUTE_BLOB:
        CHECK(strlen(m.blob) == 64);
        for (int i = 0; i < 64; i++)
            CHECK((m.blob[i] >= '0' && m.blob[i] <= '9') || (m.blob[i] >= 'a' && m.blob[i] <= 'f'));
        break;
    case ZTD_ROUTE_UPLOAD_COMPONENT:
        CHECK(m.key_len > 0);
        /* fall through */
    case ZTD_ROUTE_UPLOAD_STATUS:
    case ZTD_ROUTE_UPLOAD_ABORT:
    case ZTD_ROUTE_UPLOAD_COMMIT:
        CHECK(m.upload_id_len > 0);
        for (size_t i = 0; i < m.upload_id_len; i++) {
            char c = m.upload_id[i];
            CHECK((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '_' || c == '-');
        }
        break;
    default:
        CHECK(m.file_len == 0 && m.upload_id_len == 0 && m.blob[0] == '\0');
        break;
    }
    free(path);
    return 0;
}
