/*
 * Byte spans of a remote file for a server that caches them (ztensord's
 * --upstream): a span streamed to a callback in order as it arrives, so that
 * whoever waits for its first bytes need not wait for its last, and a set of
 * small spans into buffers at once. Both run in a session given by the
 * caller, which may differ from the one the file was opened in: a server
 * opens files in one session and fills its cache from several threads, each
 * with a session of its own (a session is used by one thread at a time).
 * The pinned validator, retries, backoff and resumption of the transport
 * apply as to every other read.
 */
#include "remote_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct stream_ctx {
    zt_remote_stream_fn fn;
    void *ud;
    uint64_t start;
} stream_ctx;

static int to_stream(void *ud, uint64_t at, const uint8_t *p, size_t n, zt_error *err)
{
    stream_ctx *s = ud;
    if (s->fn(s->ud, at - s->start, p, n) == 0)
        return 0;
    memset(err, 0, sizeof(*err));
    err->code = ZT_E_IO;
    snprintf(err->message, sizeof(err->message),
             "the consumer of the stream stopped it at byte %llu of the file",
             (unsigned long long)at);
    return -1;
}

static zt_status check_span(const zt_remote_file *rf, uint64_t off, uint64_t len, zt_error *err)
{
    if (off > rf->pin.size || len > rf->pin.size - off)
        return ztr__fail(err, ZT_E_ARG, rf->url, NULL, NULL, 1, off,
                         "%llu bytes at %llu are beyond the file's %llu bytes",
                         (unsigned long long)len, (unsigned long long)off,
                         (unsigned long long)rf->pin.size);
    return ZT_OK;
}

zt_status zt_remote_read_stream(zt_remote *r, zt_remote_file *rf, uint64_t offset, uint64_t len,
                                zt_remote_stream_fn fn, void *ud, zt_error *err)
{
    zt_status st = check_span(rf, offset, len, err);
    if (st || len == 0)
        return st;
    if (rf->whole) { /* opened from a server that ignores Range: the bytes are here */
        return fn(ud, 0, rf->whole + offset, (size_t)len) == 0
                   ? ZT_OK
                   : ztr__fail(err, ZT_E_IO, rf->url, NULL, NULL, 1, offset,
                               "the consumer of the stream stopped it");
    }
    stream_ctx s = {fn, ud, offset};
    ztr_xfer x = {.start = offset, .len = len, .on_body = to_stream, .ud = &s};
    ztr_batch b = {.r = r ? r : rf->r,
                   .url = rf->url,
                   .pin = &rf->pin,
                   .x = &x,
                   .n = 1,
                   .conns = 1,
                   .deadline = ztr__deadline(r ? r : rf->r),
                   .err = err};
    return ztr__run(&b);
}

static int to_buf(void *ud, uint64_t at, const uint8_t *p, size_t n, zt_error *err)
{
    (void)err;
    zt_remote_span *sp = ud;
    memcpy((uint8_t *)sp->buf + (at - sp->offset), p, n);
    return 0;
}

zt_status zt_remote_read_spans(zt_remote *r, zt_remote_file *rf, zt_remote_span *spans, size_t n,
                               unsigned connections, zt_error *err)
{
    zt_status st = ZT_OK;
    size_t nx = 0;
    for (size_t i = 0; i < n && !st; i++)
        if (!(st = check_span(rf, spans[i].offset, spans[i].len, err)) && spans[i].len)
            nx++;
    if (st || nx == 0)
        return st;
    if (rf->whole) {
        for (size_t i = 0; i < n; i++)
            memcpy(spans[i].buf, rf->whole + spans[i].offset, (size_t)spans[i].len);
        return ZT_OK;
    }
    ztr_xfer *x = calloc(nx, sizeof(*x));
    if (!x)
        return ztr__fail(err, ZT_E_NOMEM, rf->url, NULL, NULL, 0, 0, "out of memory");
    for (size_t i = 0, k = 0; i < n; i++)
        if (spans[i].len)
            x[k++] = (ztr_xfer){
                .start = spans[i].offset, .len = spans[i].len, .on_body = to_buf, .ud = &spans[i]};
    zt_remote *s = r ? r : rf->r;
    ztr_batch b = {.r = s,
                   .url = rf->url,
                   .pin = &rf->pin,
                   .x = x,
                   .n = nx,
                   .conns = connections ? connections : s->opt.connections,
                   .deadline = ztr__deadline(s),
                   .err = err};
    st = ztr__run(&b);
    free(x);
    return st;
}

uint64_t zt_remote_file_size(const zt_remote_file *rf)
{
    return rf->pin.size;
}

zt_status zt_remote_file_ends(const zt_remote_file *rf, const uint8_t **head, size_t *head_len,
                              const uint8_t **tail, uint64_t *tail_at, size_t *tail_len)
{
    *head = rf->whole ? rf->whole : rf->head;
    *head_len = rf->head_len;
    *tail = rf->tail;
    *tail_at = rf->tail_at;
    *tail_len = rf->tail_len;
    return ZT_OK;
}
