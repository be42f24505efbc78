/*
 * fuzz_hf_path.c: libFuzzer target for server/hf/hf_path.c, the Hugging Face
 * front's URL grammar. The first byte picks the method (GET, HEAD, POST,
 * PUT), the rest (up to a NUL) follows "/hf/" as the raw path.
 * Invariants (a broken one traps): an accepted request names an operation, a
 * repository id of one or two parts of [A-Za-z0-9._-] without "..", a
 * revision without control bytes, "..", or a leading '.' or '/', and a path
 * whose segments are non-empty and never start with '.' (so never "..").
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hf/hf_path.h"

#define CHECK(c)                                                                                   \
    do {                                                                                           \
        if (!(c))                                                                                  \
            __builtin_trap();                                                                      \
    } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_ok(const ztd_hf_target *t)
{
    CHECK(t->op != ZTD_HF_NONE);
    CHECK(t->repo_len > 0 && t->repo_len == strlen(t->repo) && !strstr(t->repo, ".."));
    size_t slashes = 0;
    for (size_t i = 0; i < t->repo_len; i++) {
        char c = t->repo[i];
        slashes += c == '/';
        CHECK((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-' || c == '/');
    }
    CHECK(slashes <= 1 && t->repo[0] != '.' && t->repo[0] != '/');
    CHECK(t->rev_len > 0 && t->rev_len == strlen(t->rev) && t->rev[0] != '.' && t->rev[0] != '/');
    CHECK(!strstr(t->rev, ".."));
    for (size_t i = 0; i < t->rev_len; i++)
        CHECK((unsigned char)t->rev[i] >= 0x20 && t->rev[i] != 0x7f);
    CHECK(t->path_len == strlen(t->path));
    CHECK(t->op != ZTD_HF_RESOLVE || t->path_len > 0);
    for (const char *s = t->path; t->path_len && s;) { /* every segment */
        CHECK(*s && *s != '/' && *s != '.');
        const char *n = strchr(s, '/');
        s = n ? n + 1 : NULL;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *methods[] = {"GET", "HEAD", "POST", "PUT"};
    const char *method = methods[size ? data[0] % 4 : 0];
    size_t n = size ? size - 1 : 0;
    char *path = malloc(n + 5);
    ztd_hf_target *t = malloc(sizeof(*t));
    if (!path || !t) {
        free(path);
        free(t);
        return 0;
    }
    memcpy(path, "/hf/", 4);
    if (n)
        memcpy(path + 4, data + 1, n);
    path[n + 4] = 0;
    int st = ztd_hf_parse(method, path, t);
    CHECK(st == t->status);
    CHECK(st == 0 || st == 400 || st == 404 || st == 405);
    if (st == 0)
        check_ok(t);
    else
        CHECK(t->message && t->op == ZTD_HF_NONE);
    free(path);
    free(t);
    return 0;
}
