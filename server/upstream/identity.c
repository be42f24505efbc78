/*
 * The zTensor identity of an upstream v2 file whose validator does not carry
 * it (an S3 store's object: its ETag is the store's, not "zt2.<hex>"), for the
 * Hugging Face front's digests (hf/hf_store_repo.h). The identity is the
 * core's (zt_file_identity_with): the manifest and footer, which the open
 * read, and the bytes between components, which /raw of the file fetches
 * anyway (ztd_upstream_segments); the blobs are never read. Kept with the
 * entry, which is one version of the file.
 */
#include "upstream/internal.h"
#include "core/hex.h"

#include <ztensor/ztensor_experimental.h>

#include <stdio.h>
#include <string.h>

enum { ZTD_UP_ID_UNKNOWN = 0, ZTD_UP_ID_DEFINED, ZTD_UP_ID_NONE };

typedef struct gap_reader {
    const ztd_upstream_seg *segs;
    size_t n;
} gap_reader;

/* A zt_bytes_at_fn over the entry's segments: bytes between components only. */
static int read_gap(void *ctx, uint64_t off, size_t n, uint8_t *dst)
{
    const gap_reader *g = ctx;
    for (size_t i = 0; i < g->n && n; i++) {
        const ztd_upstream_seg *s = &g->segs[i];
        if (off < s->at || off >= s->at + s->len)
            continue;
        if (s->comp || !s->mem)
            return -1;
        size_t k = s->at + s->len - off < n ? (size_t)(s->at + s->len - off) : n;
        memcpy(dst, s->mem + (off - s->at), k);
        dst += k;
        off += k;
        n -= k;
    }
    return n ? -1 : 0;
}

ztd_err ztd_upstream_identity(ztd_upstream *u, ztd_entry *e, uint8_t out[32], bool *defined,
                              char *msg, size_t cap)
{
    struct ztd_upstream_entry *up = e->up;
    *defined = false;
    if (!up || !e->file || zt_file_get_kind(e->file) != ZT_KIND_ZT_2)
        return ZTD_ERR_NONE;
    int state = __atomic_load_n(&up->identity, __ATOMIC_ACQUIRE);
    if (state == ZTD_UP_ID_UNKNOWN) {
        gap_reader g;
        ztd_err err = ztd_upstream_segments(u, e, &g.segs, &g.n, msg, cap);
        if (err == ZTD_ERR_UPSTREAM_UNSUPPORTED) /* overlapping parts: no identity either */
            __atomic_store_n(&up->identity, ZTD_UP_ID_NONE, __ATOMIC_RELEASE);
        if (err)
            return err == ZTD_ERR_UPSTREAM_UNSUPPORTED ? ZTD_ERR_NONE : err;
        char id[80];
        uint8_t d[32];
        zt_error ze;
        zt_status st = zt_file_identity_with(e->file, read_gap, &g, id, &ze);
        if (st == ZT_OK && ztd_hex_decode(id + 7, 32, d) == 0)
            state = ZTD_UP_ID_DEFINED;
        else if (st == ZT_E_NOT_FOUND || st == ZT_E_UNSUPPORTED || st == ZT_OK)
            state = ZTD_UP_ID_NONE;
        else {
            snprintf(msg, cap, "\"%s\": its zTensor identity: %s", e->name, ze.message);
            return ZTD_ERR_INTERNAL;
        }
        pthread_mutex_lock(&up->mu); /* the first to finish sets it; the same bytes */
        if (!__atomic_load_n(&up->identity, __ATOMIC_ACQUIRE)) {
            if (state == ZTD_UP_ID_DEFINED)
                memcpy(up->id, d, 32);
            __atomic_store_n(&up->identity, state, __ATOMIC_RELEASE);
        }
        state = __atomic_load_n(&up->identity, __ATOMIC_ACQUIRE);
        pthread_mutex_unlock(&up->mu);
    }
    if (state == ZTD_UP_ID_DEFINED)
        memcpy(out, up->id, 32);
    *defined = state == ZTD_UP_ID_DEFINED;
    return ZTD_ERR_NONE;
}
