/*
 * zt_remote_open_bytes_in (ztensor_remote_experimental.h): a remote file that
 * is not a tensor file (config.json, tokenizer.json) opened as bytes only:
 * one HEAD (head.c) pins its validator and size, and keeps what the server
 * says the bytes hash to (Repr-Digest's sha-256). There is no model; the
 * span reads (zt_remote_read_stream) and zt_remote_revalidate work on it as
 * on any opened file, every request pinned to that version.
 */
#include "remote_internal.h"
#include "ztensor/ztensor_remote_experimental.h"

#include <stdlib.h>
#include <string.h>

zt_status zt_remote_open_bytes_in(zt_remote *r, const char *url, zt_remote_file **out,
                                  zt_error *err)
{
    if (!r || !url || !out)
        return ztr__fail(err, ZT_E_ARG, url, NULL, NULL, 0, 0, "NULL argument");
    *out = NULL;
    if (strncmp(url, "http://", 7) && strncmp(url, "https://", 8))
        return ztr__fail(err, ZT_E_ARG, NULL, NULL, NULL, 0, 0, "not an http(s) URL: %.300s", url);
    zt_remote_file *rf = calloc(1, sizeof(*rf));
    ztr_head *h = malloc(sizeof(*h));
    if (!rf || !h || !(rf->url = strdup(url))) {
        free(rf);
        free(h);
        return ztr__fail(err, ZT_E_NOMEM, url, NULL, NULL, 0, 0, "out of memory");
    }
    rf->r = r;
    zt_status st = ztr__head(r, url, ztr__deadline(r), h, err);
    if (!st) {
        memcpy(rf->pin.etag, h->etag, sizeof(rf->pin.etag));
        memcpy(rf->pin.lm, h->lm, sizeof(rf->pin.lm));
        rf->pin.strong = ztr__etag_kind(rf->pin.etag, strlen(rf->pin.etag)) == 1;
        rf->pin.size = (uint64_t)h->size;
        rf->has_sha256 = h->has_repr_sha256;
        memcpy(rf->sha256, h->repr_sha256, 32);
    }
    free(h);
    if (st) {
        zt_remote_close(rf);
        return st;
    }
    *out = rf;
    return ZT_OK;
}

bool zt_remote_file_sha256(const zt_remote_file *rf, uint8_t out[32])
{
    if (!rf || !rf->has_sha256)
        return false;
    memcpy(out, rf->sha256, 32);
    return true;
}
