/*
 * fuzz_upload_json.c: libFuzzer target for server/http/upload_json.c, the JSON bodies of upload
 * sessions (the open request and the commit).
 *
 * This file defines LLVMFuzzerTestOneInput and nothing else: no main. Link it with
 * -fsanitize=fuzzer, or with a driver that replays a corpus through the same entry point.
 *
 * Input layout: the whole input is the body, given to both parsers.
 *
 * Invariants (a violation calls __builtin_trap): each parser answers success or one of the
 * errors it documents, with a message; after a refusal nothing is left allocated in the
 * result; an accepted open request names a .zt file with no empty, hidden or "." segment,
 * and its attributes (if any) are a JSON object; an accepted commit has at most 64
 * dimensions and 64 components an object, each component with a key and a valid dtype.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "http/upload_json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond))                                                                               \
            __builtin_trap();                                                                      \
    } while (0)

static void check_open(const char *body, size_t n)
{
    ztd_open_request o;
    char msg[512] = "";
    ztd_err e = ztd_open_parse(body, n, &o, msg, sizeof(msg));
    if (e) {
        CHECK(e == ZTD_ERR_BAD_JSON || e == ZTD_ERR_BAD_REQUEST || e == ZTD_ERR_INTERNAL);
        CHECK(msg[0] && !o.file && !o.attributes);
        return;
    }
    size_t len = strlen(o.file);
    CHECK(len >= 4 && !strcmp(o.file + len - 3, ".zt") && o.file[0] != '/');
    CHECK(!strstr(o.file, "//") && !strstr(o.file, "/.") && o.file[0] != '.');
    CHECK(!o.attributes || o.attributes[0] == '{');
    ztd_open_request_free(&o);
}

static void check_commit(const char *body, size_t n)
{
    ztd_commit c;
    char msg[512] = "";
    ztd_err e = ztd_commit_parse(body, n, &c, msg, sizeof(msg));
    if (e) {
        CHECK(e == ZTD_ERR_BAD_JSON || e == ZTD_ERR_BAD_REQUEST || e == ZTD_ERR_INVALID_OBJECTS ||
              e == ZTD_ERR_INTERNAL);
        CHECK(msg[0] && !c.objects && !c.doc && c.n == 0);
        return;
    }
    for (size_t i = 0; i < c.n; i++) {
        const ztd_commit_object *o = &c.objects[i];
        CHECK(o->name && o->format && o->ndim <= ZT_MAX_NDIM);
        CHECK(o->nparts <= ZTD_COMMIT_MAX_PARTS);
        CHECK(!o->attributes || o->attributes[0] == '{');
        for (size_t k = 0; k < o->nparts; k++)
            CHECK(o->parts[k].role && o->parts[k].key && o->parts[k].dtype != ZT_DTYPE_INVALID);
    }
    ztd_commit_free(&c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *body = malloc(size ? size : 1);
    if (!body)
        return 0;
    memcpy(body, data, size);
    check_open(body, size);
    check_commit(body, size);
    free(body);
    return 0;
}
