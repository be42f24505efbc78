/*
 * The append-only streaming writer. Component bytes pass through once: they
 * are hashed (and zstd-compressed when asked) on the way to the file, then
 * padded to 64 bytes. Objects only refer to finished components. finish()
 * appends the canonical CBOR manifest, its size and the footer magic.
 *
 * Digests: a component's bytes are hashed as they are buffered; once a
 * component outgrows the 1 MiB output buffer, each buffer is handed, after its
 * write(), to a background thread that hashes it (hash_pipe.c) while this
 * thread goes on receiving and writing. When the file will be fsynced, the
 * writer starts write-back every few MiB (sync_file_range), so that the final
 * fsync waits for the last few MiB only.
 *
 * It never seeks backwards (zt_writer_cancel() truncates the component being
 * written, and a zt_writer_finish() that fails before publishing truncates the
 * manifest it began: the two exceptions, both how a full disk is recovered
 * from). Memory is O(objects), never O(data). A writer
 * opened on a path writes a hidden temporary file beside it and publishes with
 * fsync, rename, fsync of the directory, so readers see the old file or the new
 * one; a writer that dies leaves only a temporary file without a footer, which
 * the reader rejects.
 *
 * With the option format = ZT_FORMAT_V2 it writes zTensor v2 instead (the
 * encodings in v2/v2_writer.c): the v2 magic, blobs at `alignment` (64 KiB,
 * canonical placement, by default; the first at or after 4096), digests
 * (xxh3 or sha256) of the bytes given, zstd as zt.zstd-seekable/1 (1 MiB
 * frames with checksums, then the seek table), a raw part identical to an
 * earlier one cut back out and aliased to it (canonical form §6.3 rule 3,
 * confirmed on the bytes read back, not on the digest), and at finish the
 * deterministic manifest and the 40-byte footer.
 */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_getCParams */
#include <zstd.h>

#define OUTBUF (1u << 20)

typedef struct wcomp {
    zt_written_component info;
    zt_dtype dtype;
    const char *type;
    bool used;
} wcomp;

typedef struct wobj {
    const char *name;
    size_t name_len;
    struct zt_object model;
} wobj;

struct zt_writer {
    int fd;
    bool own_fd, do_fsync, in_comp, finished, failed;
    bool hash_inline;    /* option: never hash on a background thread */
    zt__hash_pipe *pipe; /* created for the first component that outgrows OUTBUF */
    bool piped;          /* the current component's hasher is on the pipe */
    uint64_t written;    /* bytes handed to write(), i.e. the fd's offset */
    zt_writeback wb;     /* with do_fsync: write-back started as the file grows */
    char *path, *tmp;
    uint64_t pos;
    uint8_t *out;
    size_t out_len;
    zt__arena arena;
    wcomp *comps;
    size_t ncomp, capcomp;
    wobj *objs;
    size_t nobj, capobj;
    const zt_value *attributes;
    /* the component in progress */
    zt_component_spec cur;
    uint64_t cur_start, cur_in;
    zt_hasher *hash;
    ZSTD_CStream *zs;
    uint8_t *zbuf;
    size_t zcap;
    /* zTensor v2 */
    bool v2;
    uint64_t align;              /* blob placement */
    bool hash_input;             /* the open part's digest is over the bytes given */
    uint64_t frame_in, frame_at; /* seekable: input in the open frame; where it starts */
    uint32_t *fcs, *fds;         /* seekable: compressed and decoded size of each frame */
    size_t nframes, capframes;
    size_t *dd; /* dedup: raw parts with a digest, by digest (id + 1; 0 free) */
    size_t dd_cap, dd_n;
};

static zt_status io_fail(zt_writer *w, zt_error *err, const char *what)
{
    int e = errno;
    w->failed = true;
    return zt__fail(err, e == ENOSPC || e == EDQUOT ? ZT_E_NOSPACE : ZT_E_IO, NULL, NULL, 1, w->pos,
                    "%s: %s", what, strerror(e));
}

/* Ask the kernel to start writing back what is written so far (no waiting). */
static void start_writeback(zt_writer *w)
{
    if (w->do_fsync)
        zt_writeback_note(&w->wb, w->written);
}

static zt_status raw_write(zt_writer *w, const void *p, size_t n, zt_error *err)
{
    const uint8_t *s = p;
    while (n) {
        ssize_t r = write(w->fd, s, n);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return io_fail(w, err, "write");
        }
        s += r;
        n -= (size_t)r;
        w->written += (uint64_t)r;
    }
    start_writeback(w);
    return ZT_OK;
}

/* Does the current component's digest go through the output buffer (hashed
 * when a buffer is retired) rather than in stored()? */
static bool deferred_hash(const zt_writer *w)
{
    return w->in_comp && w->cur.digest != ZT_DIGEST_NONE && !w->hash_inline && !w->hash_input;
}

/* A written buffer of the current component: to the pipe (starting it with the
 * component's hasher on first use), or hashed here if no thread can be had. */
static void retire(zt_writer *w)
{
    if (!w->piped) {
        if (!w->pipe)
            w->pipe = zt__hash_pipe_new(OUTBUF);
        if (!w->pipe) {
            zt_hasher_update(w->hash, w->out, w->out_len);
            return;
        }
        zt__hash_pipe_start(w->pipe, w->hash);
        w->hash = NULL;
        w->piped = true;
    }
    w->out = zt__hash_pipe_submit(w->pipe, w->out, w->out_len);
}

static zt_status flush(zt_writer *w, zt_error *err)
{
    uint64_t before = w->written;
    zt_status st = w->out_len ? raw_write(w, w->out, w->out_len, err) : ZT_OK;
    if (st) {
        /* Keep what did not reach the file, so that pos - out_len stays the file's end
         * and cut_back() after a full disk loses nothing before the point it cuts to. */
        size_t done = (size_t)(w->written - before);
        memmove(w->out, w->out + done, w->out_len - done);
        w->out_len -= done;
        return st;
    }
    if (w->out_len && deferred_hash(w))
        retire(w);
    w->out_len = 0;
    return ZT_OK;
}

/* Appends stored bytes to the file (buffered) and advances pos. */
static zt_status emit(zt_writer *w, const void *p, size_t n, zt_error *err)
{
    zt_status st;
    if (deferred_hash(w)) {
        /* Everything through the buffer, which is what gets hashed. */
        for (const uint8_t *s = p; n;) {
            if (w->out_len == OUTBUF && (st = flush(w, err)))
                return st;
            size_t k = OUTBUF - w->out_len < n ? OUTBUF - w->out_len : n;
            memcpy(w->out + w->out_len, s, k);
            w->out_len += k;
            w->pos += k;
            s += k;
            n -= k;
        }
        return ZT_OK;
    }
    if (n >= OUTBUF) {
        if ((st = flush(w, err)))
            return st;
        uint64_t before = w->written;
        if ((st = raw_write(w, p, n, err))) {
            w->pos += w->written - before; /* what did reach the file, as flush() keeps it */
            return st;
        }
    } else {
        if (OUTBUF - w->out_len < n && (st = flush(w, err)))
            return st;
        memcpy(w->out + w->out_len, p, n);
        w->out_len += n;
    }
    w->pos += n;
    return ZT_OK;
}

static zt_status pad_to(zt_writer *w, uint64_t align, zt_error *err)
{
    static const uint8_t zeros[4096];
    size_t pad = (size_t)((align - w->pos % align) % align);
    zt_status st = ZT_OK;
    while (pad && !st) {
        size_t k = pad < sizeof(zeros) ? pad : sizeof(zeros);
        st = emit(w, zeros, k, err);
        pad -= k;
    }
    return st;
}

static uint64_t blob_align(const zt_writer *w)
{
    return w->v2 ? w->align : ZT_ALIGNMENT;
}

void zt_writer_options_init(zt_writer_options *o)
{
    memset(o, 0, sizeof(*o));
    o->size = sizeof(*o);
    o->fsync = 1;
    o->mode = 0644;
}

static zt_status writer_new(int fd, const zt_writer_options *in, zt_writer **out, zt_error *err)
{
    zt_writer_options given;
    zt_writer_options_init(&given);
    if (in)
        memcpy(&given, in, ZT__OPTS_SIZE(in, given));
    const zt_writer_options *opt = in ? &given : NULL;
    /* Callers (zt_writer_open's cleanup) test *out after a failure. */
    *out = NULL;
    zt_writer *w = zt__calloc(1, sizeof(*w));
    if (!w)
        return ZT_FAIL(err, ZT_E_NOMEM, "out of memory");
    w->fd = fd;
    w->do_fsync = opt ? opt->fsync != 0 : true;
    zt_writeback_init(&w->wb, fd);
    w->hash_inline = opt && opt->digest_inline;
    w->v2 = opt && opt->format == ZT_FORMAT_V2;
    w->align = opt && opt->alignment ? opt->alignment : 65536;
    if ((opt && opt->format && opt->format != ZT_FORMAT_V2) || (w->v2 && w->align % ZT_V2_ALIGN)) {
        zt__free(w);
        return ZT_FAIL(err, ZT_E_ARG,
                       "format must be 0 (1.2) or ZT_FORMAT_V2, and a v2 "
                       "alignment a multiple of 4096");
    }
    zt__arena_init(&w->arena);
    w->out = zt__malloc(OUTBUF);
    if (!w->out) {
        zt__free(w);
        return ZT_FAIL(err, ZT_E_NOMEM, "out of memory");
    }
    *out = w;
    return w->v2 ? emit(w, zt__v2_magic, 8, err) : emit(w, "ZTEN1000", 8, err);
}

zt_status zt_writer_open_fd(int fd, const zt_writer_options *opt, zt_writer **out, zt_error *err)
{
    if (fd < 0 || !out)
        return ZT_FAIL(err, ZT_E_ARG, "bad fd");
    return writer_new(fd, opt, out, err);
}

zt_status zt_writer_open(const char *path, const zt_writer_options *opt, zt_writer **out,
                         zt_error *err)
{
    if (!path || !out)
        return ZT_FAIL(err, ZT_E_ARG, "NULL argument");
    char *dcopy = zt__strndup(path, strlen(path)), *bcopy = zt__strndup(path, strlen(path));
    size_t tlen = strlen(path) + 32;
    char *tmp = zt__malloc(tlen);
    if (!dcopy || !bcopy || !tmp) {
        zt__free(dcopy);
        zt__free(bcopy);
        zt__free(tmp);
        return ZT_FAIL(err, ZT_E_NOMEM, "out of memory");
    }
    snprintf(tmp, tlen, "%s/.%s.tmp.XXXXXX", dirname(dcopy), basename(bcopy));
    zt__free(dcopy);
    zt__free(bcopy);
    int fd = mkostemp(tmp, O_CLOEXEC);
    if (fd < 0) {
        zt_status st =
            ZT_FAIL(err, errno == ENOSPC ? ZT_E_NOSPACE : ZT_E_IO, "%s: %s", tmp, strerror(errno));
        zt__free(tmp);
        return st;
    }
    fchmod(fd, (mode_t)(opt && opt->mode ? opt->mode : 0644));
    zt_status st = writer_new(fd, opt, out, err);
    if (st) {
        close(fd);
        unlink(tmp);
        zt__free(tmp);
        if (*out)
            zt__free((*out)->out), zt__free(*out), *out = NULL;
        return st;
    }
    (*out)->own_fd = true;
    (*out)->tmp = tmp;
    (*out)->path = zt__strndup(path, strlen(path));
    if (!(*out)->path) {
        zt_writer_free(*out);
        *out = NULL;
        return ZT_FAIL(err, ZT_E_NOMEM, "out of memory");
    }
    return ZT_OK;
}

uint64_t zt_writer_position(const zt_writer *w)
{
    return w->pos;
}

static zt_status check_usable(zt_writer *w, bool want_in_comp, zt_error *err)
{
    if (w->failed)
        return ZT_FAIL(err, ZT_E_STATE, "writer failed earlier");
    if (w->finished)
        return ZT_FAIL(err, ZT_E_STATE, "writer is finished");
    if (w->in_comp != want_in_comp)
        return ZT_FAIL(err, ZT_E_STATE,
                       want_in_comp ? "no component is open" : "a component is still open");
    return ZT_OK;
}

static void drop_current(zt_writer *w);

zt_status zt_writer_begin(zt_writer *w, const zt_component_spec *spec, zt_error *err)
{
    zt_status st = check_usable(w, false, err);
    if (st)
        return st;
    if (!spec || !zt_dtype_width(spec->dtype))
        return ZT_FAIL(err, ZT_E_DTYPE, "component spec has an invalid dtype");
    if (w->v2 && spec->dtype == ZT_DTYPE_BOOL)
        return ZT_FAIL(err, ZT_E_DTYPE, "v2 has no bool dtype: use u8 with logical type bool");
    if (w->v2 && spec->digest == ZT_DIGEST_CRC32C)
        return ZT_FAIL(err, ZT_E_ARG, "v2 digests are xxh3 or sha256, not crc32c");
    /* Flush what came before, so a later cancel never loses earlier bytes. */
    if ((st = pad_to(w, blob_align(w), err)) || (st = flush(w, err)))
        return st;
    w->cur = *spec;
    w->cur_start = w->pos;
    w->cur_in = 0;
    w->hash_input = w->v2 && spec->encoding == ZT_ENC_ZSTD && spec->digest != ZT_DIGEST_NONE;
    w->frame_in = 0;
    w->frame_at = w->pos;
    w->nframes = 0;
    if (spec->digest != ZT_DIGEST_NONE && !(w->hash = zt_hasher_new(spec->digest)))
        return ZT_FAIL(err, ZT_E_NOMEM, "out of memory creating a hasher");
    if (spec->encoding == ZT_ENC_ZSTD) {
        w->zs = ZSTD_createCStream();
        w->zcap = ZSTD_CStreamOutSize();
        w->zbuf = zt__malloc(w->zcap);
        if (!w->zs || !w->zbuf) {
            drop_current(w); /* the hasher too: a retried begin would leak it */
            return ZT_FAIL(err, ZT_E_NOMEM, "out of memory creating a zstd stream");
        }
        int level = spec->zstd_level ? spec->zstd_level : 3;
        ZSTD_CCtx_setParameter(w->zs, ZSTD_c_compressionLevel, level);
        /* Levels 20-22 would ask decoders for up to a 128 MiB window; keep
         * them to the one every zt_decoder accepts (their other parameters stay). */
        if (ZSTD_getCParams(level, ZSTD_CONTENTSIZE_UNKNOWN, 0).windowLog > ZT_ZSTD_WINDOW_LOG_MAX)
            ZSTD_CCtx_setParameter(w->zs, ZSTD_c_windowLog, ZT_ZSTD_WINDOW_LOG_MAX);
        ZSTD_CCtx_setParameter(w->zs, ZSTD_c_checksumFlag, w->v2);
    }
    w->in_comp = true;
    return ZT_OK;
}

static zt_status stored(zt_writer *w, const void *p, size_t n, zt_error *err)
{
    if (w->hash && !deferred_hash(w) && !w->hash_input)
        zt_hasher_update(w->hash, p, n);
    return emit(w, p, n, err);
}

static zt_status zstd_pump(zt_writer *w, const void *p, size_t n, ZSTD_EndDirective mode,
                           zt_error *err)
{
    ZSTD_inBuffer in = {p, n, 0};
    for (;;) {
        ZSTD_outBuffer ob = {w->zbuf, w->zcap, 0};
        size_t r = ZSTD_compressStream2(w->zs, &ob, &in, mode);
        if (ZSTD_isError(r)) {
            w->failed = true;
            return ZT_FAIL(err, ZT_E_ZSTD, "zstd: %s", ZSTD_getErrorName(r));
        }
        zt_status st = stored(w, w->zbuf, ob.pos, err);
        if (st)
            return st;
        if (mode == ZSTD_e_end ? r == 0 : in.pos == in.size)
            return ZT_OK;
    }
}

/* v2: ends the open seekable frame and records its sizes. */
static zt_status end_frame(zt_writer *w, zt_error *err)
{
    zt_status st = zstd_pump(w, NULL, 0, ZSTD_e_end, err);
    if (st)
        return st;
    if (w->nframes == w->capframes) {
        size_t cap = w->capframes ? 2 * w->capframes : 64;
        uint32_t *a = zt__realloc(w->fcs, cap * sizeof(*a)), *b;
        if (a)
            w->fcs = a;
        if (!a || !(b = zt__realloc(w->fds, cap * sizeof(*b))))
            return ZT_FAIL(err, ZT_E_NOMEM, "out of memory");
        w->fds = b;
        w->capframes = cap;
    }
    w->fcs[w->nframes] = (uint32_t)(w->pos - w->frame_at);
    w->fds[w->nframes++] = (uint32_t)w->frame_in;
    w->frame_at = w->pos;
    w->frame_in = 0;
    return ZT_OK;
}

/* v2: input cut into frames of ZT_V2_FRAME decoded bytes. */
static zt_status seekable_write(zt_writer *w, const uint8_t *p, size_t len, zt_error *err)
{
    zt_status st = ZT_OK;
    while (len && !st) {
        size_t k = ZT_V2_FRAME - w->frame_in < len ? ZT_V2_FRAME - w->frame_in : len;
        st = zstd_pump(w, p, k, ZSTD_e_continue, err);
        w->frame_in += k;
        p += k;
        len -= k;
        if (!st && w->frame_in == ZT_V2_FRAME)
            st = end_frame(w, err);
    }
    return st;
}

zt_status zt_writer_write(zt_writer *w, const void *data, size_t len, zt_error *err)
{
    zt_status st = check_usable(w, true, err);
    if (st || len == 0)
        return st;
    w->cur_in += len;
    if (w->hash_input)
        zt_hasher_update(w->hash, data, len);
    if (w->zs && w->v2)
        return seekable_write(w, data, len, err);
    if (w->zs)
        return zstd_pump(w, data, len, ZSTD_e_continue, err);
    return stored(w, data, len, err);
}

zt_status zt_writer_digest_so_far(zt_writer *w, uint8_t out[32], size_t *len, zt_error *err)
{
    zt_status st = check_usable(w, true, err);
    if (st)
        return st;
    if (w->cur.digest == ZT_DIGEST_NONE)
        return ZT_FAIL(err, ZT_E_STATE, "the open component has no digest");
    if (w->piped) { /* collect the pipe's state; the next full buffer restarts it */
        if ((st = flush(w, err)))
            return st;
        w->hash = zt__hash_pipe_finish(w->pipe);
        w->piped = false;
    }
    bool buffered = deferred_hash(w); /* out holds bytes the hasher has not seen */
    size_t n = zt__hasher_peek(w->hash, buffered ? w->out : NULL, buffered ? w->out_len : 0, out);
    if (!n)
        return ZT_FAIL(err, ZT_E_NOMEM, "out of memory");
    if (len)
        *len = n;
    return ZT_OK;
}

static void drop_current(zt_writer *w)
{
    if (w->piped)
        w->hash = zt__hash_pipe_finish(w->pipe);
    w->piped = false;
    zt_hasher_free(w->hash);
    w->hash = NULL;
    ZSTD_freeCStream(w->zs);
    w->zs = NULL;
    zt__free(w->zbuf);
    w->zbuf = NULL;
    w->in_comp = false;
}

/* Are the file's bytes at a and b (n each) the same? Read back with pread. */
static zt_status same_bytes(zt_writer *w, uint64_t a, uint64_t b, uint64_t n, bool *same,
                            zt_error *err)
{
    uint8_t *x = zt__malloc(2u << 16), *y = x + (1u << 16);
    zt_status st = x ? ZT_OK : ZT_FAIL(err, ZT_E_NOMEM, "out of memory");
    *same = x != NULL;
    for (uint64_t done = 0; !st && *same && done < n;) {
        size_t k = n - done < (1u << 16) ? (size_t)(n - done) : 1u << 16;
        if (pread(w->fd, x, k, (off_t)(a + done)) != (ssize_t)k ||
            pread(w->fd, y, k, (off_t)(b + done)) != (ssize_t)k)
            st = io_fail(w, err, "read back");
        else
            *same = !memcmp(x, y, k);
        done += k;
    }
    zt__free(x);
    return st;
}

/* The dedup index: open addressing on a hash of the digest string. */
static size_t dd_slot(const zt_writer *w, const char *digest)
{
    return (size_t)zt__hash(digest, strlen(digest)) & (w->dd_cap - 1);
}

static zt_status dd_insert(zt_writer *w, size_t id, zt_error *err)
{
    if (2 * (w->dd_n + 1) > w->dd_cap) { /* grow, and put every entry back */
        size_t cap = w->dd_cap ? 2 * w->dd_cap : 256, *old = w->dd, oldcap = w->dd_cap;
        if (!(w->dd = zt__calloc(cap, sizeof(*w->dd)))) {
            w->dd = old;
            return ZT_FAIL(err, ZT_E_NOMEM, "out of memory");
        }
        w->dd_cap = cap;
        w->dd_n = 0;
        for (size_t i = 0; i < oldcap; i++)
            if (old[i])
                dd_insert(w, old[i] - 1, err);
        zt__free(old);
    }
    size_t h = dd_slot(w, w->comps[id].info.digest);
    while (w->dd[h])
        h = (h + 1) & (w->dd_cap - 1);
    w->dd[h] = id + 1;
    w->dd_n++;
    return ZT_OK;
}

/* v2 canonical form (§6.3 rule 3): a raw part whose bytes equal an earlier
 * raw part's is cut back out and refers to the earlier blob. Candidates are
 * found by digest and length, and confirmed on the bytes. Regular files only.
 * c is comps[w->ncomp], not yet counted. */
static zt_status dedup(zt_writer *w, wcomp *c, zt_error *err)
{
    struct stat sb;
    if (c->info.encoding != ZT_ENC_RAW || !c->info.digest[0] || !c->info.length ||
        fstat(w->fd, &sb) != 0 || !S_ISREG(sb.st_mode))
        return ZT_OK;
    for (size_t h = w->dd_cap ? dd_slot(w, c->info.digest) : 0; w->dd_cap && w->dd[h];
         h = (h + 1) & (w->dd_cap - 1)) {
        const zt_written_component *e = &w->comps[w->dd[h] - 1].info;
        bool same = false;
        if (e->length != c->info.length || strcmp(e->digest, c->info.digest))
            continue;
        zt_status st = flush(w, err);
        if (!st)
            st = same_bytes(w, e->offset, c->info.offset, e->length, &same, err);
        if (st || !same)
            return st;
        if (ftruncate(w->fd, (off_t)c->info.offset) != 0 ||
            lseek(w->fd, (off_t)c->info.offset, SEEK_SET) < 0)
            return io_fail(w, err, "truncate");
        w->pos = w->written = c->info.offset;
        start_writeback(w); /* truncated back: write-back starts again from here */
        c->info.offset = e->offset;
        return ZT_OK;
    }
    return dd_insert(w, w->ncomp, err);
}

zt_status zt_writer_end(zt_writer *w, size_t *id, zt_error *err)
{
    zt_status st = check_usable(w, true, err);
    if (st)
        return st;
    if (w->zs && w->v2) { /* the last frame, then the seek table */
        if ((w->frame_in || !w->nframes) && (st = end_frame(w, err)))
            return st;
        zt__buf tb = {0};
        zt__v2_seek_table(&tb, w->fcs, w->fds, w->nframes);
        st = tb.oom ? ZT_FAIL(err, ZT_E_NOMEM, "out of memory") : stored(w, tb.p, tb.len, err);
        zt__buf_free(&tb);
        w->nframes = 0; /* a retried end() must not write it twice */
        ZSTD_freeCStream(w->zs);
        w->zs = NULL;
    }
    if (st || (w->zs && (st = zstd_pump(w, NULL, 0, ZSTD_e_end, err))))
        return st;
    if (w->ncomp == w->capcomp) {
        size_t cap = w->capcomp ? w->capcomp * 2 : 64;
        wcomp *nc = zt__realloc(w->comps, cap * sizeof(*nc));
        if (!nc)
            return ZT_FAIL(err, ZT_E_NOMEM, "out of memory");
        w->comps = nc;
        w->capcomp = cap;
    }
    wcomp *c = &w->comps[w->ncomp];
    memset(c, 0, sizeof(*c));
    c->dtype = w->cur.dtype;
    if (w->cur.type && !(c->type = zt__arena_strndup(&w->arena, w->cur.type, strlen(w->cur.type))))
        return ZT_FAIL(err, ZT_E_NOMEM, "out of memory");
    /* Nothing fails after this but I/O: a retried end() must not hash twice. */
    /* The digest of the bytes still buffered: here, or through the pipe. */
    if (deferred_hash(w) && !w->piped)
        zt_hasher_update(w->hash, w->out, w->out_len);
    else if (w->piped) {
        if ((st = flush(w, err)))
            return st;
        w->hash = zt__hash_pipe_finish(w->pipe);
        w->piped = false;
    }
    c->info.offset = w->cur_start;
    c->info.length = w->pos - w->cur_start;
    c->info.uncompressed_length = w->cur_in;
    c->info.encoding = w->cur.encoding;
    c->info.digest_kind = w->cur.digest;
    if (w->hash) {
        uint8_t bin[32];
        zt_hasher_final(w->hash, bin);
        zt_digest_format(w->cur.digest, bin, c->info.digest);
        if (w->cur.digest == ZT_DIGEST_SHA256)
            memcpy(c->info.sha256, bin, 32);
    }
    drop_current(w);
    if (w->v2 && (st = dedup(w, c, err)))
        return st;
    if (id)
        *id = w->ncomp;
    w->ncomp++;
    return w->v2 ? ZT_OK : pad_to(w, ZT_ALIGNMENT, err);
}

/* Cut the file back to `to` (buffered bytes dropped, written ones truncated) and make the
 * writer usable again: how a full disk is recovered from. */
static zt_status cut_back(zt_writer *w, uint64_t to, zt_error *err)
{
    uint64_t on_disk = w->pos - w->out_len;
    if (to >= on_disk) {
        w->out_len = (size_t)(to - on_disk); /* drop only buffered bytes */
    } else {
        w->out_len = 0;
        if (ftruncate(w->fd, (off_t)to) != 0 || lseek(w->fd, (off_t)to, SEEK_SET) < 0)
            return io_fail(w, err, "truncate");
        w->written = to;
        start_writeback(w); /* truncated back: write-back starts again from here */
    }
    w->pos = to;
    w->failed = false;
    return ZT_OK;
}

zt_status zt_writer_cancel(zt_writer *w, zt_error *err)
{
    /* Allowed after a write error too: cutting the component back is how a
     * full disk is recovered from. */
    if (w->finished || !w->in_comp)
        return ZT_FAIL(err, ZT_E_STATE, "no component is open");
    drop_current(w);
    return cut_back(w, w->cur_start, err);
}

zt_status zt_writer_component_info(const zt_writer *w, size_t id, zt_written_component *out)
{
    if (id >= w->ncomp)
        return ZT_E_NOT_FOUND;
    *out = w->comps[id].info;
    return ZT_OK;
}

zt_status zt_writer_set_component_type(zt_writer *w, size_t id, zt_dtype dtype, const char *type,
                                       zt_error *err)
{
    if (id >= w->ncomp)
        return ZT_FAIL(err, ZT_E_NOT_FOUND, "unknown component id %zu", id);
    if (!zt_dtype_width(dtype))
        return ZT_FAIL(err, ZT_E_DTYPE, "invalid dtype");
    const char *t = NULL;
    if (type && !(t = zt__arena_strndup(&w->arena, type, strlen(type))))
        return ZT_FAIL(err, ZT_E_NOMEM, "out of memory");
    w->comps[id].dtype = dtype;
    w->comps[id].type = t;
    return ZT_OK;
}

size_t zt_writer_object_count(const zt_writer *w)
{
    return w->nobj;
}

void zt_writer_drop_objects(zt_writer *w, size_t keep)
{
    if (keep < w->nobj)
        w->nobj = keep;
}

zt_status zt_writer_set_attributes(zt_writer *w, const char *json, zt_error *err)
{
    const zt_value *v = NULL;
    zt_status st = json ? zt__json_to_value(json, &w->arena, &v, err) : ZT_OK;
    if (st)
        return st;
    if (v && v->kind != ZT_VAL_MAP)
        return ZT_FAIL(err, ZT_E_ARG, "file attributes must be a JSON object");
    w->attributes = v;
    return ZT_OK;
}

static zt_status grow_objs(zt_writer *w, zt_error *err)
{
    if (w->nobj < w->capobj)
        return ZT_OK;
    size_t cap = w->capobj ? w->capobj * 2 : 64;
    wobj *no = zt__realloc(w->objs, cap * sizeof(*no));
    if (!no)
        return ZT_FAIL(err, ZT_E_NOMEM, "out of memory");
    w->objs = no;
    w->capobj = cap;
    return ZT_OK;
}

/* Builds the model object for validation and the manifest. */
static zt_status fill_object(zt_writer *w, struct zt_object *o, const char *name,
                             const char *format, size_t ndim, const uint64_t *shape, size_t ncomp,
                             const char *const *roles, const size_t *ids, zt_error *err)
{
    zt__arena *a = &w->arena;
    o->name_len = strlen(name);
    o->name = zt__arena_strndup(a, name, o->name_len);
    o->format = zt__arena_strndup(a, format, strlen(format));
    o->source_name = "";
    o->has_shape = true;
    o->ndim = ndim;
    o->shape = zt__arena_alloc(a, (ndim ? ndim : 1) * sizeof(uint64_t));
    o->ncomp = ncomp;
    o->comps = zt__arena_alloc(a, (ncomp ? ncomp : 1) * sizeof(*o->comps));
    if (!o->name || !o->format || !o->shape || !o->comps)
        return ZT_FAIL(err, ZT_E_NOMEM, "out of memory");
    if (ndim)
        memcpy(o->shape, shape, ndim * sizeof(uint64_t));
    memset(o->comps, 0, (ncomp ? ncomp : 1) * sizeof(*o->comps));
    for (size_t i = 0; i < ncomp; i++) {
        if (ids[i] >= w->ncomp)
            return zt__fail(err, ZT_E_ARG, name, roles[i], 0, 0, "unknown component id %zu",
                            ids[i]);
        const wcomp *c = &w->comps[ids[i]];
        struct zt_component *m = &o->comps[i];
        if (!(m->role = zt__arena_strndup(a, roles[i], strlen(roles[i]))))
            return ZT_FAIL(err, ZT_E_NOMEM, "out of memory");
        m->dtype = c->dtype;
        m->type = c->type;
        m->offset = c->info.offset;
        m->length = c->info.length;
        m->encoding = c->info.encoding;
        m->uncompressed_length = c->info.uncompressed_length;
        m->has_uncompressed = c->info.encoding == ZT_ENC_ZSTD;
        m->digest_kind = c->info.digest_kind;
        if (c->info.digest[0] &&
            !(m->digest = zt__arena_strndup(a, c->info.digest, strlen(c->info.digest))))
            return ZT_FAIL(err, ZT_E_NOMEM, "out of memory");
        if (w->v2) { /* v2 digests cover the bytes given; zstd is written seekable */
            m->digest_decoded = m->digest != NULL;
            m->seekable = m->encoding == ZT_ENC_ZSTD;
            m->encoding_name = m->seekable ? "zt.zstd-seekable/1" : NULL;
        }
    }
    return ZT_OK;
}

static zt_status add_object(zt_writer *w, const char *name, const char *format, size_t ndim,
                            const uint64_t *shape, const char *attributes_json,
                            const zt_value *attributes, size_t ncomp, const char *const *roles,
                            const size_t *ids, zt_error *err);

zt_status zt_writer_add_object(zt_writer *w, const char *name, const char *format, size_t ndim,
                               const uint64_t *shape, const char *attributes_json, size_t ncomp,
                               const char *const *roles, const size_t *ids, zt_error *err)
{
    return add_object(w, name, format, ndim, shape, attributes_json, NULL, ncomp, roles, ids, err);
}

zt_status zt_writer_add_object_values(zt_writer *w, const char *name, const char *format,
                                      size_t ndim, const uint64_t *shape,
                                      const zt_value *attributes, size_t ncomp,
                                      const char *const *roles, const size_t *ids, zt_error *err)
{
    if (attributes && attributes->kind != ZT_VAL_MAP)
        return zt__fail(err, ZT_E_ARG, name, NULL, 0, 0, "attributes must be a map");
    return add_object(w, name, format, ndim, shape, NULL, attributes, ncomp, roles, ids, err);
}

zt_status zt_writer_set_attribute_values(zt_writer *w, const zt_value *map, zt_error *err)
{
    if (map && map->kind != ZT_VAL_MAP)
        return ZT_FAIL(err, ZT_E_ARG, "file attributes must be a map");
    w->attributes = map;
    return ZT_OK;
}

static zt_status add_object(zt_writer *w, const char *name, const char *format, size_t ndim,
                            const uint64_t *shape, const char *attributes_json,
                            const zt_value *attributes, size_t ncomp, const char *const *roles,
                            const size_t *ids, zt_error *err)
{
    zt_status st = check_usable(w, false, err);
    if (st)
        return st;
    if (!name || !format || (ncomp && (!roles || !ids)) || (ndim && !shape))
        return ZT_FAIL(err, ZT_E_ARG, "NULL argument");
    if (ndim > ZT_MAX_NDIM)
        return zt__fail(err, ZT_E_LIMIT, name, NULL, 0, 0, "%zu dimensions (max %d)", ndim,
                        ZT_MAX_NDIM);
    if ((st = grow_objs(w, err)))
        return st;
    wobj *ob = &w->objs[w->nobj];
    memset(ob, 0, sizeof(*ob));
    if ((st = fill_object(w, &ob->model, name, format, ndim, shape, ncomp, roles, ids, err)))
        return st;
    if (attributes_json) {
        const zt_value *v;
        if ((st = zt__json_to_value(attributes_json, &w->arena, &v, err)))
            return st;
        if (v->kind != ZT_VAL_MAP)
            return zt__fail(err, ZT_E_ARG, name, NULL, 0, 0, "attributes must be a JSON object");
        ob->model.attributes = v;
    } else {
        ob->model.attributes = attributes;
    }
    for (size_t i = 0; i < ncomp; i++)
        for (size_t j = i + 1; j < ncomp; j++)
            if (!strcmp(roles[i], roles[j]))
                return zt__fail(err, ZT_E_DUPLICATE, name, roles[i], 0, 0,
                                "component role given twice");
    zt__validate_opts vo = {.data_end = w->pos,
                            .data_start = 8,
                            .max_uncompressed = UINT64_MAX,
                            .require_alignment = true};
    if ((st = w->v2 ? zt__v2_writer_check(&ob->model, err)
                    : zt__validate_object(&ob->model, &vo, err)))
        return st;
    ob->name = ob->model.name;
    ob->name_len = ob->model.name_len;
    w->nobj++;
    return ZT_OK;
}

static void encode_component(zt__buf *b, const struct zt_component *c)
{
    /* Canonical key order: type, dtype, digest, length, offset, encoding,
     * uncompressed_length (shorter keys first, then bytewise). */
    zt__cbor_head(b, 5, 4 + (c->type != NULL) + (c->digest != NULL) + c->has_uncompressed);
    if (c->type) {
        zt__cbor_text(b, "type", 4);
        zt__cbor_text(b, c->type, strlen(c->type));
    }
    zt__cbor_text(b, "dtype", 5);
    zt__cbor_text(b, zt_dtype_name(c->dtype), strlen(zt_dtype_name(c->dtype)));
    if (c->digest) {
        zt__cbor_text(b, "digest", 6);
        zt__cbor_text(b, c->digest, strlen(c->digest));
    }
    zt__cbor_text(b, "length", 6);
    zt__cbor_uint(b, c->length);
    zt__cbor_text(b, "offset", 6);
    zt__cbor_uint(b, c->offset);
    zt__cbor_text(b, "encoding", 8);
    zt__cbor_text(b, c->encoding == ZT_ENC_ZSTD ? "zstd" : "raw", c->encoding ? 4 : 3);
    if (c->has_uncompressed) {
        zt__cbor_text(b, "uncompressed_length", 19);
        zt__cbor_uint(b, c->uncompressed_length);
    }
}

static void encode_object(zt__buf *b, const struct zt_object *o)
{
    /* shape, format, attributes, components */
    zt__cbor_head(b, 5, 3 + (o->attributes != NULL));
    zt__cbor_text(b, "shape", 5);
    zt__cbor_head(b, 4, o->ndim);
    for (size_t i = 0; i < o->ndim; i++)
        zt__cbor_uint(b, o->shape[i]);
    zt__cbor_text(b, "format", 6);
    zt__cbor_text(b, o->format, strlen(o->format));
    if (o->attributes) {
        zt__cbor_text(b, "attributes", 10);
        zt__cbor_value(b, o->attributes);
    }
    zt__cbor_text(b, "components", 10);
    zt__cbor_head(b, 5, o->ncomp);
    const char *keys[64];
    size_t lens[64], idx[64];
    const char **k = o->ncomp <= 64 ? keys : zt__malloc(o->ncomp * sizeof(*k));
    size_t *l = o->ncomp <= 64 ? lens : zt__malloc(o->ncomp * sizeof(*l));
    size_t *x = o->ncomp <= 64 ? idx : zt__malloc(o->ncomp * sizeof(*x));
    if (!k || !l || !x) {
        b->oom = true;
    } else {
        for (size_t i = 0; i < o->ncomp; i++) {
            k[i] = o->comps[i].role;
            l[i] = strlen(k[i]);
            x[i] = i;
        }
        zt__cbor_sort_keys(k, l, x, o->ncomp);
        for (size_t i = 0; i < o->ncomp; i++) {
            zt__cbor_text(b, k[x[i]], l[x[i]]);
            encode_component(b, &o->comps[x[i]]);
        }
    }
    if (k != keys)
        zt__free((void *)k);
    if (l != lens)
        zt__free(l);
    if (x != idx)
        zt__free(x);
}

static zt_status encode_manifest(zt_writer *w, zt__buf *b, zt_error *err)
{
    size_t n = w->nobj;
    const char **keys = zt__malloc((n ? n : 1) * sizeof(*keys));
    size_t *lens = zt__malloc((n ? n : 1) * sizeof(*lens));
    size_t *idx = zt__malloc((n ? n : 1) * sizeof(*idx));
    zt_status st = ZT_OK;
    if (!keys || !lens || !idx) {
        st = ZT_FAIL(err, ZT_E_NOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        keys[i] = w->objs[i].name;
        lens[i] = w->objs[i].name_len;
        idx[i] = i;
    }
    zt__cbor_sort_keys(keys, lens, idx, n);
    for (size_t i = 1; i < n; i++)
        if (lens[idx[i]] == lens[idx[i - 1]] &&
            !memcmp(keys[idx[i]], keys[idx[i - 1]], lens[idx[i]])) {
            st = zt__fail(err, ZT_E_DUPLICATE, keys[idx[i]], NULL, 0, 0, "object name added twice");
            goto out;
        }
    /* Root keys: objects, version, attributes. */
    zt__cbor_head(b, 5, 2 + (w->attributes != NULL));
    zt__cbor_text(b, "objects", 7);
    zt__cbor_head(b, 5, n);
    for (size_t i = 0; i < n; i++) {
        zt__cbor_text(b, keys[idx[i]], lens[idx[i]]);
        encode_object(b, &w->objs[idx[i]].model);
    }
    zt__cbor_text(b, "version", 7);
    zt__cbor_text(b, ZT_FORMAT_VERSION, strlen(ZT_FORMAT_VERSION));
    if (w->attributes) {
        zt__cbor_text(b, "attributes", 10);
        zt__cbor_value(b, w->attributes);
    }
    if (b->oom)
        st = ZT_FAIL(err, ZT_E_NOMEM, "out of memory encoding the manifest");
out:
    zt__free(keys);
    zt__free(lens);
    zt__free(idx);
    return st;
}

static zt_status publish(zt_writer *w, zt_error *err)
{
    /* EINVAL: the fd is a pipe or socket (streaming a .zt), nothing to sync. */
    if (w->do_fsync && fsync(w->fd) != 0 && errno != EINVAL)
        return io_fail(w, err, "fsync");
    if (!w->tmp)
        return ZT_OK;
    /* Everything that can fail for want of memory or of the directory comes
     * before the rename: a failed finish must not have published the file. */
    int dfd = AT_FDCWD;
    if (w->do_fsync) {
        char *d = zt__strndup(w->path, strlen(w->path));
        if (!d)
            return ZT_FAIL(err, ZT_E_NOMEM, "out of memory");
        dfd = open(dirname(d), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        zt__free(d);
        if (dfd < 0)
            return io_fail(w, err, "open of the directory");
    }
    /* tmp is beside path: with the directory open, both are named within it. */
    const char *src = w->tmp, *dst = w->path;
    if (dfd != AT_FDCWD) {
        const char *s1 = strrchr(src, '/'), *s2 = strrchr(dst, '/');
        src = s1 ? s1 + 1 : src;
        dst = s2 ? s2 + 1 : dst;
    }
    zt_status st =
        zt_publish_rename(dfd, src, dfd, dst, w->do_fsync ? 0 : ZT_PUBLISH_NOSYNC, NULL, err);
    if (dfd != AT_FDCWD)
        close(dfd);
    if (st) {
        w->failed = true;
        return st;
    }
    zt__free(w->tmp);
    w->tmp = NULL;
    return ZT_OK;
}

/* v2: names unique, then the manifest blob at the alignment and the footer. */
static zt_status finish_v2(zt_writer *w, zt_error *err)
{
    size_t n = w->nobj;
    const struct zt_object **objs = zt__malloc((n ? n : 1) * sizeof(*objs));
    const char **keys = zt__malloc((n ? n : 1) * sizeof(*keys));
    size_t *lens = zt__malloc((n ? n : 1) * sizeof(*lens)),
           *idx = zt__malloc((n ? n : 1) * sizeof(size_t));
    zt_status st = objs && keys && lens && idx ? ZT_OK : ZT_FAIL(err, ZT_E_NOMEM, "out of memory");
    for (size_t i = 0; !st && i < n; i++) {
        objs[i] = &w->objs[i].model;
        keys[i] = w->objs[i].name;
        lens[i] = w->objs[i].name_len;
        idx[i] = i;
    }
    if (!st)
        zt__cbor_sort_keys(keys, lens, idx, n);
    for (size_t i = 1; !st && i < n; i++)
        if (lens[idx[i]] == lens[idx[i - 1]] &&
            !memcmp(keys[idx[i]], keys[idx[i - 1]], lens[idx[i]]))
            st = zt__fail(err, ZT_E_DUPLICATE, keys[idx[i]], NULL, 0, 0, "object name added twice");
    if (!st)
        st = zt__v2_attrs_check(w->attributes, err);

    zt__buf b = {0};
    if (!st && !(st = pad_to(w, w->align, err))) {
        zt__v2_encode_manifest(&b, objs, n, w->attributes);
        if (b.oom)
            st = ZT_FAIL(err, ZT_E_NOMEM, "out of memory encoding the manifest");
    }
    zt__free(objs), zt__free(keys), zt__free(lens), zt__free(idx);
    uint8_t footer[ZT_V2_FOOTER];
    if (!st) {
        zt__v2_footer_bytes(footer, w->pos, b.len, zt__xxh3(b.p, b.len));
        st = emit(w, b.p, b.len, err);
    }
    zt__buf_free(&b);
    return st ? st : emit(w, footer, ZT_V2_FOOTER, err);
}

zt_status zt_writer_finish(zt_writer *w, zt_error *err)
{
    zt_status st = check_usable(w, false, err);
    if (st)
        return st;
    if (w->v2) {
        if (!(st = finish_v2(w, err)) && !(st = flush(w, err)))
            st = publish(w, err);
        w->failed = st != ZT_OK;
        w->finished = st == ZT_OK;
        return st;
    }
    zt__buf b = {0};
    if ((st = encode_manifest(w, &b, err))) {
        zt__buf_free(&b);
        return st;
    }
    uint64_t data_end = w->pos;
    uint8_t tail[16];
    zt__put_le64(tail, b.len);
    memcpy(tail + 8, "ZTEN1000", 8);
    st = emit(w, b.p, b.len, err);
    zt__buf_free(&b);
    if (!st)
        st = emit(w, tail, 16, err);
    if (!st)
        st = flush(w, err);
    if (!st)
        st = publish(w, err);
    if (st) {
        /* Until the rename (w->tmp still set, or no path at all) nothing is published: cut
         * the manifest back out, so that the same writer can finish once the disk has room
         * again (an upload session's commit is retried that way). After the rename the
         * file is out there and the writer stays failed. */
        zt_error ignored;
        if (!((w->tmp || !w->path) && cut_back(w, data_end, &ignored) == ZT_OK))
            w->failed = true;
        return st;
    }
    w->finished = true;
    return ZT_OK;
}

void zt_writer_free(zt_writer *w)
{
    if (!w)
        return;
    drop_current(w);
    zt__hash_pipe_free(w->pipe);
    if (w->tmp)
        unlink(w->tmp);
    if (w->own_fd)
        close(w->fd);
    zt__free(w->tmp);
    zt__free(w->path);
    zt__free(w->out);
    zt__free(w->comps);
    zt__free(w->objs);
    zt__free(w->fcs);
    zt__free(w->fds);
    zt__free(w->dd);
    zt__arena_free(&w->arena);
    zt__free(w);
}
