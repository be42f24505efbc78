/*
 * fuzz_pull.c: libFuzzer target for what zt pull parses besides the ranges
 * (fuzz_remote has those): a page of ztensord's file listing
 * (lib/remote/listing.c) and the state file left beside a partial file
 * (lib/remote/pull_state.c). The first input byte picks the parser (even:
 * listing; odd: state file, with the second byte as the number of
 * components); the rest is its input.
 * Invariants (a broken one traps): names handed over are non-empty; the
 * cursor is NUL-terminated within its buffer; a parsed state counts only
 * components below the number given, each once.
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

static int on_entry(void *ud, const char *name, uint64_t size, const char *etag, int ok)
{
    (void)size;
    (void)ok;
    CHECK(name && name[0] && etag);
    return ++*(int *)ud > 100000; /* stop, as a caller may */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    if (data[0] % 2 == 0) {
        char cursor[64];
        int n = 0;
        int rc = ztr__parse_listing((const char *)data + 1, size - 1, on_entry, &n, cursor,
                                    sizeof(cursor));
        CHECK(rc >= -1 && rc <= 1);
        CHECK(memchr(cursor, 0, sizeof(cursor)) != NULL);
        return 0;
    }
    size_t ncomp = data[1];
    uint8_t *done = malloc(ncomp + 1);
    uint64_t *prefix = malloc((ncomp + 1) * sizeof(*prefix));
    if (!done || !prefix) {
        free(done);
        free(prefix);
        return 0;
    }
    ztr_pull_state st;
    if (ztr__pull_state_parse((const char *)data + 2, size - 2, &st, done, prefix, ncomp) == 0) {
        size_t n = 0;
        for (size_t i = 0; i < ncomp; i++)
            n += done[i] == 1;
        CHECK(n == st.ndone);
        CHECK(memchr(st.etag, 0, sizeof(st.etag)) && memchr(st.lm, 0, sizeof(st.lm)));
        char head[512];
        CHECK(ztr__pull_state_header(head, sizeof(head), &st, ncomp) > 0);
    }
    free(done);
    free(prefix);
    return 0;
}
