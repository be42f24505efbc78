/*
 * fuzz_auth.c: libFuzzer target for server/http/auth.c: the tokens file and the Authorization check.
 *
 * This file defines LLVMFuzzerTestOneInput and nothing else: no main. Link it with
 * -fsanitize=fuzzer, or with a driver that replays a corpus through the same entry point.
 *
 * Input layout: up to the first '\n', a candidate token T; the rest, a tokens file (NUL bytes
 * included, its exact length passed). The rest is also, cut at its first NUL, an
 * Authorization header checked against what that file gave.
 *
 * Invariants (a violation calls __builtin_trap): a file either parses or gives a message
 * naming its line; a check answers one of the four results, MISSING for anything that does
 * not start with "Bearer "; when T is 16 to 512 token characters, the file "write T" parses
 * to one token, "Bearer T" is OK for reading and writing, "read T" forbids writing, and T
 * with one more character is INVALID.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "http/auth.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond))                                                                               \
            __builtin_trap();                                                                      \
    } while (0)

static bool token_text(const uint8_t *p, size_t n)
{
    static const char ok[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                             "-._~+/=";
    if (n < 16 || n > 512)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!p[i] || !strchr(ok, p[i]))
            return false;
    return true;
}

/* A tokens file of one line "SCOPE T", parsed; it must parse. */
static ztd_tokens *one_token(const char *scope, const uint8_t *tok, size_t n)
{
    char file[600], err[256];
    snprintf(file, sizeof(file), "%s %.*s\n", scope, (int)n, (const char *)tok);
    ztd_tokens *t = ztd_tokens_parse(file, strlen(file), err, sizeof(err));
    CHECK(t && ztd_tokens_count(t) == 1);
    return t;
}

static void check_known_token(const uint8_t *tok, size_t n)
{
    char hdr[600], longer[608];
    snprintf(hdr, sizeof(hdr), "Bearer %.*s", (int)n, (const char *)tok);
    snprintf(longer, sizeof(longer), "%sA", hdr);
    ztd_tokens *t = one_token("write", tok, n);
    CHECK(ztd_auth_check(t, hdr, ZTD_SCOPE_READ) == ZTD_AUTH_OK);
    CHECK(ztd_auth_check(t, hdr, ZTD_SCOPE_WRITE) == ZTD_AUTH_OK);
    CHECK(ztd_auth_check(t, longer, ZTD_SCOPE_READ) == ZTD_AUTH_INVALID);
    ztd_tokens_free(t);
    t = one_token("read", tok, n);
    CHECK(ztd_auth_check(t, hdr, ZTD_SCOPE_READ) == ZTD_AUTH_OK);
    CHECK(ztd_auth_check(t, hdr, ZTD_SCOPE_WRITE) == ZTD_AUTH_FORBIDDEN);
    ztd_tokens_free(t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nl = memchr(data, '\n', size);
    size_t tn = nl ? (size_t)(nl - data) : size;
    const uint8_t *rest = nl ? nl + 1 : data + size;
    size_t rn = (size_t)(data + size - rest);
    if (token_text(data, tn))
        check_known_token(data, tn);

    char *file = malloc(rn ? rn : 1), err[256] = "";
    if (!file)
        return 0;
    memcpy(file, rest, rn);
    ztd_tokens *t = ztd_tokens_parse(file, rn, err, sizeof(err));
    CHECK(t || !strncmp(err, "line ", 5) || !strcmp(err, "out of memory"));
    free(file);

    const uint8_t *nul = memchr(rest, 0, rn);
    size_t hn = nul ? (size_t)(nul - rest) : rn;
    char *h = malloc(hn + 1);
    if (h) {
        memcpy(h, rest, hn);
        h[hn] = '\0';
        ztd_auth_result r = ztd_auth_check(t, h, ZTD_SCOPE_READ);
        CHECK(r == ZTD_AUTH_OK || r == ZTD_AUTH_MISSING || r == ZTD_AUTH_INVALID ||
              r == ZTD_AUTH_FORBIDDEN);
        const char *p = h + strspn(h, " ");
        CHECK(!strncasecmp(p, "bearer ", 7) || r == ZTD_AUTH_MISSING);
        CHECK(r != ZTD_AUTH_OK || (t && ztd_tokens_count(t) > 0));
        free(h);
    }
    ztd_tokens_free(t);
    return 0;
}
