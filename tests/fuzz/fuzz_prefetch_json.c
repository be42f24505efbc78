/*
 * fuzz_prefetch_json.c: libFuzzer target for server/http/prefetch_json.c, the
 * body of POST /v1/prefetch (a client with the write scope).
 *
 * Input layout: the whole input is the body.
 *
 * Invariants (a violation calls __builtin_trap): the parser answers success
 * or one of the errors it documents, with a message; after a refusal nothing
 * is left in the result; an accepted body gives 1 to 10000 names, each at most
 * 4096 bytes, relative, with no empty segment and no segment starting with '.'
 * (a file name is not empty).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "http/prefetch_json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond))                                                                               \
            __builtin_trap();                                                                      \
    } while (0)

static bool name_ok(const char *s)
{
    size_t n = strlen(s);
    if (n > 4096 || s[0] == '/')
        return false;
    for (size_t i = 0, start = 0; i <= n; i++) {
        if (i < n && s[i] != '/')
            continue;
        if (i < n && i == start)
            return false; /* an empty segment before a '/' */
        if (i > start && s[start] == '.')
            return false;
        start = i + 1;
    }
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ztd_prefetch_request r;
    char msg[512];
    msg[0] = 0;
    ztd_err err = ztd_prefetch_parse(size ? (const char *)data : NULL, size, &r, msg, sizeof(msg));
    if (err) {
        CHECK(err == ZTD_ERR_BAD_JSON || err == ZTD_ERR_BAD_REQUEST || err == ZTD_ERR_INTERNAL);
        CHECK(msg[0] != 0);
        CHECK(!r.root && !r.names && r.n == 0);
        return 0;
    }
    CHECK(r.root && r.names && r.n >= 1 && r.n <= ZTD_PREFETCH_MAX_NAMES);
    for (size_t i = 0; i < r.n; i++)
        CHECK(r.names[i] && name_ok(r.names[i]));
    ztd_prefetch_request_free(&r);
    CHECK(!r.root && !r.names && r.n == 0);
    return 0;
}
