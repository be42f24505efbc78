/*
 * fuzz_s3_listing.c: libFuzzer target for S3's XML answers as zt pull reads
 * them (lib/remote/s3_listing.c, expat): a ListObjectsV2 page and an error
 * document. The first input byte gives max_keys (1 to 256); the rest is the
 * document, given to both parsers.
 * Invariants (a broken one traps): every key handed over is non-empty,
 * NUL-terminated and at most 1024 bytes, without a NUL inside; no more keys
 * than max_keys; a page that parses as truncated has a token; a failure says
 * why, with a byte offset; an error's code is printable and NUL-terminated.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "remote_internal.h"

#define CHECK(c)                                                                                   \
    do {                                                                                           \
        if (!(c))                                                                                  \
            __builtin_trap();                                                                      \
    } while (0)

typedef struct seen {
    unsigned n, max;
} seen;

static int on_key(void *ud, const ztr_s3_object *o)
{
    seen *s = ud;
    size_t n = strnlen(o->key, sizeof(o->key));
    CHECK(n > 0 && n <= ZTR_S3_KEY_MAX);
    CHECK(strnlen(o->etag, sizeof(o->etag)) < sizeof(o->etag));
    CHECK(++s->n <= s->max);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    unsigned max = (unsigned)data[0] + 1;
    const char *doc = (const char *)data + 1;
    size_t n = size - 1;
    ztr_s3_page *page = calloc(1, sizeof(*page));
    if (!page)
        return 0;
    page->max_keys = max;
    seen s = {0, max};
    char why[300];
    int rc = ztr__s3_parse_listing(doc, n, page, on_key, &s, why, sizeof(why));
    CHECK(rc == 0 || rc == -1);
    if (rc == 0) {
        CHECK(page->keys == s.n);
        CHECK(!page->truncated || page->next_token[0]);
        CHECK(strnlen(page->next_token, sizeof(page->next_token)) <= ZTR_S3_TOKEN_MAX);
    } else {
        CHECK(why[0] && strstr(why, "byte"));
    }
    free(page);
    char code[64], msg[200];
    if (ztr__s3_parse_error(doc, n, code, sizeof(code), msg, sizeof(msg)) == 0) {
        CHECK(code[0] && strnlen(code, sizeof(code)) < sizeof(code));
        for (const char *p = code; *p; p++)
            CHECK((unsigned char)*p >= 0x20);
    }
    return 0;
}
