/*
 * fuzz_listing_query.c: libFuzzer target for server/http/listing_query.c, the paging of
 * GET /v1/files: the input is a query string (split on '&' and the first
 * '=' of each argument, as libmicrohttpd hands them over, still encoded),
 * then the page is chosen over a fixed sorted list of names.
 * Invariants (a broken one traps): a page holds at most `limit` names, all
 * with the prefix, in order, all after the cursor's name; `more` only when
 * the next name has the prefix too.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "http/listing_query.h"

#define CHECK(c)                                                                                   \
    do {                                                                                           \
        if (!(c))                                                                                  \
            __builtin_trap();                                                                      \
    } while (0)

/* Sorted by strcmp (bytes as unsigned), as the catalog sorts them. */
static const char *NAMES[] = {"",           "a",      "a/b.zt",        "a/c.zt",
                              "ab.zt",      "b/z.zt", "b/\xc3\xa9.zt", "llama/1.zt",
                              "llama/2.zt", "z"};
#define N (sizeof(NAMES) / sizeof(NAMES[0]))

static const char *name_at(const void *e, size_t i)
{
    return ((const char *const *)e)[i];
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *q = malloc(size + 1);
    if (!q)
        return 0;
    memcpy(q, data, size);
    q[size] = 0;
    ztd_listing_query *lq = malloc(sizeof(*lq));
    if (!lq) {
        free(q);
        return 0;
    }
    ztd_listing_init(lq);
    bool bad = false;
    for (char *save = NULL, *arg = strtok_r(q, "&", &save); arg && !bad;
         arg = strtok_r(NULL, "&", &save)) {
        char *eq = strchr(arg, '=');
        if (eq)
            *eq = 0;
        const char *why = NULL;
        if (ztd_listing_arg(lq, arg, eq ? eq + 1 : NULL, &why)) {
            CHECK(why && *why);
            bad = true;
        }
    }
    if (!bad) {
        size_t first, count;
        bool more;
        ztd_listing_page(lq, NAMES, N, name_at, &first, &count, &more);
        CHECK(count <= lq->limit && first <= N && count <= N - first);
        for (size_t i = first; i < first + count; i++) {
            CHECK(!strncmp(NAMES[i], lq->prefix, lq->prefix_len));
            CHECK(!lq->has_after || strcmp(NAMES[i], lq->after) > 0);
        }
        if (more)
            CHECK(first + count < N && !strncmp(NAMES[first + count], lq->prefix, lq->prefix_len));
        if (count) {
            char *cur = malloc(2 * strlen(NAMES[first + count - 1]) + 1);
            if (cur) {
                ztd_listing_cursor(NAMES[first + count - 1], cur);
                free(cur);
            }
        }
    }
    free(lq);
    free(q);
    return 0;
}
