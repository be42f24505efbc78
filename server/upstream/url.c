/*
 * Where a file is at the upstream (see internal.h): the URL the
 * entries open and the shards of a v2 root are fetched from, which depends on
 * whether the upstream is a ztensord or a plain HTTP server.
 */
#include "core/hex.h"
#include "upstream/internal.h"
#include "core/config.h"

#include <stdio.h>

bool ztd_upstream_is_ztensord(const ztd_upstream *u)
{
    return __atomic_load_n(&u->kind, __ATOMIC_ACQUIRE) == ZTD_UPSTREAM_ZTENSORD;
}

/* false when the URL does not fit in cap (a cut URL names another file). */
bool ztd_up_file_url(const ztd_upstream *u, const char *name, char *out, size_t cap)
{
    char enc[NAME_URL_MAX];
    if (!ztd_percent_encode_path(name, enc, sizeof(enc)))
        return false;
    int n = ztd_upstream_is_ztensord(u) ? snprintf(out, cap, "%s/v1/files/%s", u->base, enc)
                                        : snprintf(out, cap, "%s/%s", u->base, enc);
    return n >= 0 && (size_t)n < cap;
}
