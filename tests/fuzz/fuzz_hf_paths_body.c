/*
 * fuzz_hf_paths_body.c: libFuzzer target for server/hf/hf_paths_body.c, the
 * body of POST .../paths-info. The first byte picks the Content-Type (JSON,
 * a form, none), the rest is the body.
 * Invariants (a broken one traps): accepted, at most ZTD_HF_PATHS_MAX paths,
 * each NUL-terminated without an inner NUL and at most ZTD_PATH_MAX bytes;
 * refused, a reason and nothing kept.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "hf/hf_paths_body.h"
#include "http/router.h"

#define CHECK(c)                                                                                   \
    do {                                                                                           \
        if (!(c))                                                                                  \
            __builtin_trap();                                                                      \
    } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *types[] = {"application/json", "application/x-www-form-urlencoded", NULL};
    const char *ct = types[size ? data[0] % 3 : 0];
    const char *body = size ? (const char *)data + 1 : NULL;
    ztd_hf_paths p;
    const char *msg;
    int rc = ztd_hf_paths_parse(ct, body, size ? size - 1 : 0, &p, &msg);
    if (rc == 0) {
        CHECK(p.n <= ZTD_HF_PATHS_MAX);
        for (size_t i = 0; i < p.n; i++)
            CHECK(strlen(p.paths[i]) <= ZTD_PATH_MAX);
        ztd_hf_paths_free(&p);
    } else {
        CHECK(rc == -1 && msg && p.n == 0 && !p.paths);
    }
    return 0;
}
