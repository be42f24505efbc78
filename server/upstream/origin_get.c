/*
 * One JSON document from a ztensord upstream, by path, with the upstream's
 * token and timeouts (upstream.h: ztd_upstream_get_json): for the fronts
 * that ask the origin for more than files (the Hugging Face front's repository
 * metadata). Blocking: called off libmicrohttpd's threads.
 */
#include "upstream/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ztensor/ztensor_remote_experimental.h>

ztd_err ztd_upstream_get_json(ztd_upstream *u, const char *path, size_t max, json_t **out,
                              int *status, char *msg, size_t cap)
{
    *out = NULL;
    *status = 0;
    size_t bl = strlen(u->base);
    while (bl && u->base[bl - 1] == '/')
        bl--;
    size_t n = bl + strlen(path) + 1;
    char *url = malloc(n);
    if (!url) {
        snprintf(msg, cap, "out of memory");
        return ZTD_ERR_INTERNAL;
    }
    snprintf(url, n, "%.*s%s", (int)bl, u->base, path);
    char etag[256], *body = NULL;
    size_t len = 0;
    int timed_out = 0;
    int rc = zt_remote_http_get(url, u->token, NULL, u->opt.connect_timeout, u->opt.stall_timeout,
                                max, status, &body, &len, etag, &timed_out);
    ztd_err err = ZTD_ERR_NONE;
    if (rc != 0) {
        snprintf(msg, cap, "out of memory");
        err = ZTD_ERR_INTERNAL;
    } else if (*status == 0) {
        snprintf(msg, cap, "upstream %s: %s", url,
                 timed_out == 1   ? "timed out"
                 : timed_out == 2 ? "answer too large"
                                  : "no answer");
        err = timed_out == 1 ? ZTD_ERR_UPSTREAM_TIMEOUT : ZTD_ERR_UPSTREAM_FAILED;
    } else if (body && !(*out = json_loadb(body, len, 0, NULL))) {
        snprintf(msg, cap, "upstream %s: HTTP %d, not JSON", url, *status);
        err = ZTD_ERR_UPSTREAM_FAILED;
    }
    free(body);
    free(url);
    return err;
}
