/*
 * The bytes of an open zt_file: reading at an offset, and where a
 * component's stored bytes are (this file, or one of its v2 shards). The
 * format readers (zTensor 1 and 2, safetensors, GGUF/ollama, the other
 * foreign formats) and the decoder all read through here, below the reader
 * that dispatches to them, so that calls between them go one way.
 */
#include "internal.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

/* A file opened from its manifest alone has bytes only at both ends, and only
 * while it is being opened. Callers never ask for bytes past f->size. */
static zt_status read_window(const zt_file *f, uint64_t off, size_t len, uint8_t *dst,
                             zt_error *err)
{
    uint64_t tail_start = f->size - f->win_tail_len;
    if (off > f->size || len > f->size - off)
        return zt__fail(err, ZT_E_TRUNCATED, NULL, NULL, 1, off,
                        "%zu bytes needed past the end of the %llu-byte file", len,
                        (unsigned long long)f->size);
    while (len) {
        size_t n;
        if (off < f->win_head_len) {
            n = f->win_head_len - off < len ? (size_t)(f->win_head_len - off) : len;
            memcpy(dst, f->win_head + off, n);
        } else if (f->win_tail_len && off >= tail_start) {
            n = len;
            memcpy(dst, f->win_tail + (off - tail_start), n);
        } else {
            return zt__fail(err, f->win_head ? ZT_E_TRUNCATED : ZT_E_UNSUPPORTED, NULL, NULL, 1,
                            off,
                            "%zu bytes needed that are not among those given (the first %zu "
                            "and the last %zu of %llu): the file was opened from its manifest "
                            "alone",
                            len, f->win_head_len, f->win_tail_len, (unsigned long long)f->size);
        }
        off += n;
        dst += n;
        len -= n;
    }
    return ZT_OK;
}

/* The caller's own bytes for [off, off+len) when one window holds them all,
 * else NULL: the manifest is parsed in place instead of from a copy (a
 * 100,000-object manifest is 17 MB, held twice while the model was built). */
const uint8_t *zt__window_span(const zt_file *f, uint64_t off, size_t len)
{
    uint64_t tail_start = f->size - f->win_tail_len;
    if (!f->no_data || off > f->size || len > f->size - off)
        return NULL;
    if (f->win_head && off + len <= f->win_head_len)
        return f->win_head + off;
    if (f->win_tail && f->win_tail_len && off >= tail_start)
        return f->win_tail + (off - tail_start);
    return NULL;
}

/* Structural bytes are read with pread() when the file is mapped, so a file
 * truncated under us gives an error here instead of SIGBUS. */
zt_status zt__read_at(const zt_file *f, uint64_t off, size_t len, uint8_t *dst, zt_error *err)
{
    if (f->no_data)
        return read_window(f, off, len, dst, err);
    if (!f->mapped) {
        memcpy(dst, f->data + off, len);
        return ZT_OK;
    }
    size_t got = 0;
    while (got < len) {
        ssize_t r = pread(f->fd, dst + got, len - got, (off_t)(off + got));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return zt__fail(err, r == 0 ? ZT_E_TRUNCATED : ZT_E_IO, NULL, NULL, 1, off + got,
                            "read: %s", r == 0 ? "file shrank while being read" : strerror(errno));
        got += (size_t)r;
    }
    return ZT_OK;
}

zt_status zt__component_source(const zt_file *f, const struct zt_component *c, zt__source *out,
                               zt_error *err)
{
    if (!c->shard) {
        *out = (zt__source){f->data, f->fd, f->mapped};
        return ZT_OK;
    }
    const zt__shard *s = &f->model.v2->shards[c->shard - 1];
    if (s->status)
        return zt__fail(err, s->status, NULL, c->role, 0, 0, "%s", s->message);
    *out = (zt__source){s->data, s->fd, true};
    return ZT_OK;
}

int zt_component_fd(const zt_file *f, const zt_component *c)
{
    zt__source src = {0};
    return zt__component_source(f, c, &src, NULL) ? -1 : src.fd;
}

const uint8_t *zt_component_stored(const zt_file *f, const zt_component *c)
{
    if (f->no_data)
        return NULL;
    zt__source src = {0};
    return zt__component_source(f, c, &src, NULL) ? NULL : src.data + c->offset;
}
