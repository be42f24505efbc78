/*
 * Component decoding: raw components are copied from the mapping; zstd ones
 * are decompressed streaming, and the output is capped at, and must equal,
 * the manifest's uncompressed_length (a "length lie" is an error, not a
 * buffer overrun). Also the one-shot read and push-stream helpers.
 */
#include "internal.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>
#include <zstd_errors.h>

struct zt_decoder {
    const struct zt_component *c;
    const uint8_t *src; /* memory mode: the stored bytes */
    int fd;             /* pread mode (mapped files): read from here */
    uint64_t base;      /* pread mode: where the stored bytes start in fd */
    uint8_t *in;        /* pread mode input buffer */
    size_t in_len, in_pos, in_cap;
    uint64_t src_len, src_pos; /* bytes of the component consumed (memory) or read (pread) */
    uint64_t out_total, out_want;
    ZSTD_DStream *zs;
    bool done;
    bool frame_open;     /* inside a frame (or none seen yet) */
    bool pulled, pushed; /* zt_decoder_read or zt_decoder_push was called */
    uint8_t *out;        /* push mode: zstd output buffer */
    size_t out_cap;
    const zt_file *f; /* for the object's name in messages, looked up only then */
};

/* The name of the object that holds the component: a scan of the objects,
 * so only for a message (made per decoder, it cost O(objects) each). */
static const char *dobj(const zt_decoder *d)
{
    return zt__component_object(d->f, d->c);
}

static zt_status dfail(const zt_decoder *d, zt_error *err, zt_status code, const char *msg,
                       uint64_t a)
{
    return zt__fail(err, code, dobj(d), d->c->role, 1, d->c->offset, msg, (unsigned long long)a);
}

const char *zt__component_object(const zt_file *f, const struct zt_component *c)
{
    for (size_t i = 0; i < f->model.nobj; i++) {
        const struct zt_object *o = &f->model.objs[i];
        if (c >= o->comps && c < o->comps + o->ncomp)
            return o->name;
    }
    return NULL;
}

/* A decoder of c over src: pread from src->fd at base when mapped, else
 * memory at src->data + c->offset (neither for a no_data file: pushed). */
static zt_status decoder_make(const zt_file *f, const zt_component *c, const zt__source *src,
                              uint64_t base, zt_decoder **out, zt_error *err)
{
    zt_decoder *d = zt__calloc(1, sizeof(*d));
    if (!d)
        return ZT_FAIL(err, ZT_E_NOMEM, "out of memory");
    d->c = c;
    d->src = src->data ? src->data + c->offset : NULL;
    d->src_len = c->length;
    d->fd = src->mapped ? src->fd : -1;
    d->base = base;
    d->out_want = zt_component_decoded_length(c);
    d->f = f;
    if (c->encoding == ZT_ENC_ZSTD) {
        d->zs = ZSTD_createDStream();
        if (!d->zs) {
            zt__free(d);
            return ZT_FAIL(err, ZT_E_NOMEM, "out of memory creating a zstd stream");
        }
        ZSTD_initDStream(d->zs);
        d->frame_open = true;
        /* Bound the window so a hostile frame cannot ask for gigabytes: no
         * more than the writer ever produces (ztensor.h). */
        ZSTD_DCtx_setParameter(d->zs, ZSTD_d_windowLogMax, ZT_ZSTD_WINDOW_LOG_MAX);
    }
    *out = d;
    return ZT_OK;
}

zt_status zt_decoder_new(const zt_file *f, const zt_component *c, zt_decoder **out, zt_error *err)
{
    /* v2: the bytes may be in a shard; an unknown encoding is never decoded
     * (§5.3); a seekable stream's rules are checked before its first byte.
     * A file opened from its manifest alone has no bytes to check: its
     * decoder is pushed them (a remote reader), and the frames' checksums,
     * the exact decoded length and the part's digest are checked as they
     * pass. */
    zt__source src = {0};
    zt_status st = f->no_data ? ZT_OK : zt__component_source(f, c, &src, err);
    if (!st && c->encoding == ZT_ENC_OTHER)
        st = zt__fail(err, ZT_E_UNSUPPORTED, zt__component_object(f, c), c->role, 1, c->offset,
                      "v2 §5.3: encoding \"%.60s\" is not one this reader decodes",
                      c->encoding_name);
    if (!st && c->seekable && !f->no_data)
        st = zt__seekable_check(f, zt__component_object(f, c), c, err);
    if (st)
        return st;
    return decoder_make(f, c, &src, c->offset, out, err);
}

zt_status zt_decoder_new_at(const zt_file *f, const zt_component *c, int fd, uint64_t at,
                            zt_decoder **out, zt_error *err)
{
    if (fd < 0)
        return ZT_FAIL(err, ZT_E_ARG, "zt_decoder_new_at: no fd");
    if (c->encoding == ZT_ENC_OTHER)
        return zt__fail(err, ZT_E_UNSUPPORTED, zt__component_object(f, c), c->role, 1, c->offset,
                        "v2 §5.3: encoding \"%.60s\" is not one this reader decodes",
                        c->encoding_name);
    zt__source src = {NULL, fd, true};
    return decoder_make(f, c, &src, at, out, err);
}

/* pread() keeps a file truncated under a reader from raising SIGBUS. */
static zt_status pread_some(zt_decoder *d, uint8_t *dst, size_t cap, size_t *got, zt_error *err)
{
    uint64_t left = d->src_len - d->src_pos;
    size_t want = left < cap ? (size_t)left : cap;
    *got = 0;
    if (!want)
        return ZT_OK;
    for (;;) {
        ssize_t r = pread(d->fd, dst, want, (off_t)(d->base + d->src_pos));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return zt__fail(err, r == 0 ? ZT_E_TRUNCATED : ZT_E_IO, dobj(d), d->c->role, 1,
                            d->c->offset + d->src_pos, "read: %s",
                            r == 0 ? "file shrank while being read" : strerror(errno));
        d->src_pos += (uint64_t)r;
        *got = (size_t)r;
        return ZT_OK;
    }
}

/* The next input window for zstd; *exhausted when every stored byte was consumed. */
static zt_status next_input(zt_decoder *d, ZSTD_inBuffer *ib, zt_error *err)
{
    if (d->fd < 0) {
        *ib = (ZSTD_inBuffer){d->src + d->src_pos, (size_t)(d->src_len - d->src_pos), 0};
        return ZT_OK;
    }
    if (d->in_pos == d->in_len) {
        if (!d->in) {
            d->in_cap = ZSTD_DStreamInSize();
            if (!(d->in = zt__malloc(d->in_cap)))
                return ZT_FAIL(err, ZT_E_NOMEM, "out of memory");
        }
        zt_status st = pread_some(d, d->in, d->in_cap, &d->in_len, err);
        if (st)
            return st;
        d->in_pos = 0;
    }
    *ib = (ZSTD_inBuffer){d->in + d->in_pos, d->in_len - d->in_pos, 0};
    return ZT_OK;
}

static void consumed(zt_decoder *d, size_t n)
{
    if (d->fd < 0)
        d->src_pos += n;
    else
        d->in_pos += n;
}

static bool exhausted(const zt_decoder *d)
{
    return d->src_pos == d->src_len && (d->fd < 0 || d->in_pos == d->in_len);
}

static zt_status read_zstd(zt_decoder *d, uint8_t *buf, size_t cap, size_t *out_len, zt_error *err)
{
    size_t room = cap;
    if (room > d->out_want - d->out_total)
        room = (size_t)(d->out_want - d->out_total);
    /* Once the quota is used, decode into a 1-byte probe: any output is a lie. */
    uint8_t probe;
    for (;;) {
        ZSTD_inBuffer ib;
        zt_status st = next_input(d, &ib, err);
        if (st)
            return st;
        ZSTD_outBuffer ob = room ? (ZSTD_outBuffer){buf, room, 0} : (ZSTD_outBuffer){&probe, 1, 0};
        size_t r = ZSTD_decompressStream(d->zs, &ob, &ib);
        consumed(d, ib.pos);
        if (ZSTD_isError(r) && ZSTD_getErrorCode(r) == ZSTD_error_frameParameter_windowTooLarge)
            return dfail(d, err, ZT_E_LIMIT,
                         "zstd frame needs a window over %llu bytes (ZT_ZSTD_WINDOW_LOG_MAX)",
                         1ull << ZT_ZSTD_WINDOW_LOG_MAX);
        if (ZSTD_isError(r))
            return zt__fail(err, ZT_E_ZSTD, dobj(d), d->c->role, 1, d->c->offset, "zstd: %s",
                            ZSTD_getErrorName(r));
        if (ib.pos || ob.pos)
            d->frame_open = r != 0;
        if (ob.pos && !room)
            return dfail(d, err, ZT_E_SIZE,
                         "zstd data decodes to more than uncompressed_length %llu", d->out_want);
        if (ob.pos) {
            d->out_total += ob.pos;
            *out_len = ob.pos;
            return ZT_OK;
        }
        if (ib.pos == 0 && exhausted(d)) {
            if (d->frame_open)
                return dfail(d, err, ZT_E_ZSTD, "zstd frame is truncated (%llu bytes decoded)",
                             d->out_total);
            if (d->out_total != d->out_want)
                return dfail(d, err, ZT_E_SIZE,
                             "zstd data decodes to fewer bytes than uncompressed_length %llu",
                             d->out_want);
            d->done = true;
            *out_len = 0;
            return ZT_OK;
        }
    }
}

zt_status zt_decoder_read(zt_decoder *d, void *buf, size_t cap, size_t *out_len, zt_error *err)
{
    *out_len = 0;
    if (d->pushed)
        return zt__fail(err, ZT_E_STATE, dobj(d), d->c->role, 0, 0,
                        "zt_decoder_read on a decoder fed with zt_decoder_push");
    if (!d->src && d->fd < 0)
        return zt__fail(err, ZT_E_UNSUPPORTED, dobj(d), d->c->role, 1, d->c->offset,
                        "the file was opened from its manifest alone: push its stored bytes "
                        "with zt_decoder_push");
    d->pulled = true;
    if (d->done || cap == 0)
        return ZT_OK;
    if (!d->zs && d->fd >= 0) {
        zt_status st = pread_some(d, buf, cap, out_len, err);
        if (!st && *out_len == 0)
            d->done = true;
        return st;
    }
    if (!d->zs) {
        uint64_t left = d->src_len - d->src_pos;
        size_t n = left < cap ? (size_t)left : cap;
        memcpy(buf, d->src + d->src_pos, n);
        d->src_pos += n;
        *out_len = n;
        if (n == 0)
            d->done = true;
        return ZT_OK;
    }
    return read_zstd(d, buf, cap, out_len, err);
}

void zt_decoder_free(zt_decoder *d)
{
    if (!d)
        return;
    zt__free(d->in);
    zt__free(d->out);
    ZSTD_freeDStream(d->zs);
    zt__free(d);
}

/* ---- push mode: stored bytes arrive from elsewhere (a socket), in order */

static zt_status push_state(zt_decoder *d, zt_error *err)
{
    if (d->pulled)
        return zt__fail(err, ZT_E_STATE, dobj(d), d->c->role, 0, 0,
                        "zt_decoder_push on a decoder read with zt_decoder_read");
    d->pushed = true;
    if (d->zs && !d->out) {
        d->out_cap = ZSTD_DStreamOutSize();
        if (!(d->out = zt__malloc(d->out_cap)))
            return ZT_FAIL(err, ZT_E_NOMEM, "out of memory");
    }
    return ZT_OK;
}

/* Decode what zstd can from *ib (which may be empty, to flush) into sink. The
 * output buffer is fixed, so a frame that decodes to more than the manifest
 * says is stopped after one buffer past the quota. */
static zt_status push_zstd(zt_decoder *d, ZSTD_inBuffer *ib, zt_sink_fn sink, void *ud,
                           zt_error *err)
{
    for (;;) {
        ZSTD_outBuffer ob = {d->out, d->out_cap, 0};
        size_t before = ib->pos;
        size_t r = ZSTD_decompressStream(d->zs, &ob, ib);
        if (ZSTD_isError(r))
            return zt__fail(err, ZT_E_ZSTD, dobj(d), d->c->role, 1, d->c->offset, "zstd: %s",
                            ZSTD_getErrorName(r));
        /* Only a call that moved tells where we are: after a frame's end, zstd
         * asks for the next frame's header even when no input follows. */
        if (ib->pos > before || ob.pos)
            d->frame_open = r != 0;
        if (ob.pos > d->out_want - d->out_total)
            return dfail(d, err, ZT_E_SIZE,
                         "zstd data decodes to more than uncompressed_length %llu", d->out_want);
        d->out_total += ob.pos;
        if (ob.pos && sink(ud, d->out, ob.pos))
            return zt__fail(err, ZT_E_IO, dobj(d), d->c->role, 0, 0, "output failed");
        /* A full output buffer may leave decoded bytes inside zstd. */
        if (ib->pos == ib->size && ob.pos < ob.size)
            return ZT_OK;
        if (ib->pos == before && !ob.pos)
            return dfail(d, err, ZT_E_ZSTD, "zstd stopped making progress (%llu bytes decoded)",
                         d->out_total);
    }
}

zt_status zt_decoder_push(zt_decoder *d, const void *stored, size_t len, zt_sink_fn sink, void *ud,
                          zt_error *err)
{
    zt_status st = push_state(d, err);
    if (st || !len)
        return st;
    if (len > d->src_len - d->src_pos)
        return zt__fail(err, ZT_E_SIZE, dobj(d), d->c->role, 1, d->c->offset + d->src_pos,
                        "%zu more stored bytes than the component's length %llu", len,
                        (unsigned long long)d->src_len);
    d->src_pos += len;
    if (!d->zs) {
        d->out_total += len;
        if (sink(ud, stored, len))
            return zt__fail(err, ZT_E_IO, dobj(d), d->c->role, 0, 0, "output failed");
        return ZT_OK;
    }
    ZSTD_inBuffer ib = {stored, len, 0};
    return push_zstd(d, &ib, sink, ud, err);
}

zt_status zt_decoder_push_end(zt_decoder *d, zt_sink_fn sink, void *ud, zt_error *err)
{
    zt_status st = push_state(d, err);
    if (st)
        return st;
    if (d->src_pos != d->src_len)
        return zt__fail(err, ZT_E_TRUNCATED, dobj(d), d->c->role, 1, d->c->offset + d->src_pos,
                        "%llu of the component's %llu stored bytes were pushed",
                        (unsigned long long)d->src_pos, (unsigned long long)d->src_len);
    if (d->zs) {
        static const uint8_t none;
        ZSTD_inBuffer ib = {&none, 0, 0};
        if ((st = push_zstd(d, &ib, sink, ud, err)))
            return st;
        if (d->frame_open)
            return dfail(d, err, ZT_E_ZSTD, "zstd frame is truncated (%llu bytes decoded)",
                         d->out_total);
        if (d->out_total != d->out_want)
            return dfail(d, err, ZT_E_SIZE,
                         "zstd data decodes to fewer bytes than uncompressed_length %llu",
                         d->out_want);
    }
    d->done = true;
    return ZT_OK;
}

zt_status zt_component_stream(const zt_file *f, const zt_component *c, zt_sink_fn sink, void *ud,
                              zt_error *err)
{
    if (f->no_data)
        return zt__fail(err, ZT_E_UNSUPPORTED, zt__component_object(f, c), c->role, 1, c->offset,
                        "the file was opened from its manifest alone: it has no data bytes");
    if (c->encoding == ZT_ENC_RAW && !c->shard) {
        if (c->length && sink(ud, f->data + c->offset, (size_t)c->length))
            return ZT_FAIL(err, ZT_E_IO, "output failed");
        return ZT_OK;
    }
    zt_decoder *d;
    zt_status st = zt_decoder_new(f, c, &d, err);
    if (st)
        return st;
    size_t cap = ZSTD_DStreamOutSize();
    uint8_t *buf = zt__malloc(cap);
    if (!buf) {
        zt_decoder_free(d);
        return ZT_FAIL(err, ZT_E_NOMEM, "out of memory");
    }
    for (;;) {
        size_t n;
        st = zt_decoder_read(d, buf, cap, &n, err);
        if (st || n == 0)
            break;
        if (sink(ud, buf, n)) {
            st = ZT_FAIL(err, ZT_E_IO, "output failed");
            break;
        }
    }
    zt__free(buf);
    zt_decoder_free(d);
    return st;
}

typedef struct membuf {
    uint8_t *p;
    size_t cap, len;
} membuf;

static int mem_sink(void *ud, const void *data, size_t n)
{
    membuf *m = ud;
    if (n > m->cap - m->len)
        return 1;
    memcpy(m->p + m->len, data, n);
    m->len += n;
    return 0;
}

zt_status zt_component_read(const zt_file *f, const zt_component *c, void *buf, size_t cap,
                            size_t *out_len, zt_error *err)
{
    uint64_t want = zt_component_decoded_length(c);
    if (want > cap)
        return zt__fail(err, ZT_E_ARG, zt__component_object(f, c), c->role, 0, 0,
                        "buffer of %zu bytes is smaller than the %llu decoded bytes", cap,
                        (unsigned long long)want);
    membuf m = {buf, cap, 0};
    zt_status st = zt_component_stream(f, c, mem_sink, &m, err);
    if (out_len)
        *out_len = m.len;
    return st;
}
