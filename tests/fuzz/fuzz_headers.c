/*
 * fuzz_headers.c: libFuzzer target for server/http/headers.c, the pure parsers of request headers.
 *
 * This file defines LLVMFuzzerTestOneInput and nothing else: no main. Link it with
 * -fsanitize=fuzzer, or with a driver that replays a corpus through the same entry point.
 *
 * Input layout: the whole input, cut at its first NUL and copied into an exact-size buffer, is
 * the value of each header in turn: Accept-Encoding, Content-Digest, X-Request-Id and
 * If-None-Match.
 *
 * Invariants (a violation calls __builtin_trap): every parser gives the same answer twice;
 * zstd is acceptable only when the value names "zstd" (any case) or holds a '*'; a digest is
 * reported present only when the value names "sha-256" (any case), and a malformed value
 * leaves nothing present; a request id is valid exactly when it is 1 to 64 characters of
 * [A-Za-z0-9-_.:], checked here by a second, plainer implementation; "*" is found only in a
 * value that holds one.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "http/headers.h"
#include "store/validators.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond))                                                                               \
            __builtin_trap();                                                                      \
    } while (0)

static bool contains_ci(const char *s, const char *lit)
{
    for (size_t n = strlen(lit); *s; s++)
        if (!strncasecmp(s, lit, n))
            return true;
    return false;
}

static bool plain_request_id(const char *s)
{
    static const char ok[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.:";
    size_t n = strlen(s);
    return n >= 1 && n <= 64 && strspn(s, ok) == n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nul = memchr(data, 0, size);
    size_t n = nul ? (size_t)(nul - data) : size;
    char *v = malloc(n + 1);
    if (!v)
        return 0;
    memcpy(v, data, n);
    v[n] = '\0';

    bool z = ztd_accepts_zstd(v);
    CHECK(z == ztd_accepts_zstd(v));
    CHECK(!z || contains_ci(v, "zstd") || strchr(v, '*'));
    double qg = ztd_accept_q(v, "gzip");
    CHECK(qg >= 0 && qg == qg); /* never negative, never NaN */
    CHECK(qg == 0 || contains_ci(v, "gzip") || strchr(v, '*'));
    CHECK((ztd_accept_q(v, "zstd") > 0) == z);

    ztd_digest_want a, b;
    int rc = ztd_parse_digest_header(v, &a);
    CHECK(rc == 0 || rc == -1);
    CHECK(ztd_parse_digest_header(v, &b) == rc && a.present == b.present);
    CHECK(!a.present || contains_ci(v, "sha-256"));
    CHECK(!(a.present && rc == 0) || !memcmp(a.sha256, b.sha256, 32));

    CHECK(ztd_request_id_valid(v) == plain_request_id(v));

    CHECK(!ztd_if_none_match_star(v) || strchr(v, '*'));
    free(v);
    return 0;
}
