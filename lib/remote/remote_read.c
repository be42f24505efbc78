/*
 * Reading components of a remote file. Every read, single or many, becomes
 * a list of consumers (one per component or range asked for) and a plan of
 * range requests ("parts") for the transport: a large stored read is split
 * into chunk_size parts that land in parallel straight into the caller's
 * buffer; small neighbours (components sit at most 63 bytes of padding
 * apart) share one request; a zstd component read decoded stays in one
 * request, whose bytes are decoded as they arrive (zt_decoder_push). A whole
 * component's digest is computed over its stored bytes in order, as the
 * prefix of landed bytes grows, and checked when the last byte lands. A
 * digest over the decoded bytes (v2 §3.4, zt_component_digest_scope) hashes
 * a decoder's output instead: of the read itself when it is decoded, of a
 * decoder pushed the stored bytes in order when they are read stored (a
 * pull), on this thread.
 */
#include "remote_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MERGE_GAP 4096 /* bytes of a gap worth fetching to save a request */

enum { C_POS = 0, C_ZDEC, C_ZRANGE };

typedef struct consumer {
    const zt_component *c;
    int kind;
    uint64_t cs, ce; /* the file's bytes [cs, ce) it needs */
    uint8_t *buf;
    size_t cap;
    uint64_t landed;  /* bytes delivered */
    uint64_t from;    /* C_POS: bytes in buf before the read (a resumed pull) */
    uint64_t told;    /* C_POS: landed prefix last passed to io->on_prefix */
    zt_hasher *h;     /* whole component with a digest */
    bool of_decoded;  /* h is over the decoded bytes (an encoded v2 part) */
    zt_decoder *vdec; /* C_POS with of_decoded: decodes the stored bytes for h */
    uint64_t hashed;  /* C_POS: bytes of buf landed in order (the hash frontier) */
    uint64_t queued;  /* C_POS: bytes of buf handed to the hasher */
    bool deferred;    /* landed; its digest is checked once the lanes are done */
    bool drop;        /* buf is a file mapping (a pull): release pages once hashed */
    size_t part0, np; /* its parts: np > 1 when split in chunks */
    zt_decoder *dec;
    zt_status dec_st;             /* first decode error, reported after the digest */
    zt_error *dec_err;            /* with dec only: a pull has thousands of consumers */
    uint64_t out_pos, skip, take; /* decoded bytes: drop `skip`, keep `take` */
    bool done;
    zt_remote_request *req;
} consumer;

typedef struct reader reader;
typedef struct part_ctx {
    reader *rd;
    size_t index;                /* in rd->parts */
    size_t first, count, cursor; /* consumers it feeds (sorted by cs) */
} part_ctx;

struct reader {
    zt_remote_file *rf;
    consumer *cons;
    size_t ncons;
    ztr_xfer *parts;
    part_ctx *pctx;
    size_t nparts, chunk;
    ztr_lanes *lanes; /* hashing threads, or NULL: hash on this thread */
    /* Flow control of a pull (window > 0): bytes of hashed consumers landed,
     * handed to the lanes, and hashed on this thread (ztr__read_spans). */
    uint64_t window, landed, queued, hashed_here;
    const ztr_pull_io *io; /* a pull's additions, or NULL */
    ztr_drop drop;         /* pages of this thread to release (a pull) */
    zt_remote_request *reqs;
};

#define HASH_BATCH (1u << 20)   /* bytes handed to a lane at once */
#define LANES_FROM (4ull << 20) /* bytes to hash before threads are worth it */
#define MAX_LANES 4
#define MIN_CHUNK (256u << 10) /* a pull's chunks cut to fit its window */
#define PAGE_MIN 4096          /* bytes worth a release of their own */

static const char *object_of(const zt_file *f, const zt_component *c)
{
    for (size_t i = 0; i < zt_file_object_count(f); i++) {
        const zt_object *o = zt_file_object_at(f, i);
        for (size_t k = 0; k < zt_object_component_count(o); k++)
            if (zt_object_component_at(o, k) == c)
                return zt_object_name(o);
    }
    return NULL;
}

/* A plain byte span of a pull (ztr__read_spans) has no component. */
static const char *role_of(const consumer *c)
{
    return c->c ? zt_component_role(c->c) : NULL;
}

static zt_status cfail(reader *rd, const consumer *c, zt_error *err, zt_status code, uint64_t off,
                       const char *fmt, ...) __attribute__((format(printf, 6, 7)));
static zt_status cfail(reader *rd, const consumer *c, zt_error *err, zt_status code, uint64_t off,
                       const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return ztr__fail(err, code, rd->rf->url, c->c ? object_of(rd->rf->zf, c->c) : NULL, role_of(c),
                     1, off, "%s", msg);
}

/* The transport names the object and component of a failed request (a part
 * may feed several: the one holding the failing byte). */
static void part_where(void *ud, const ztr_xfer *x, uint64_t at, const char **obj,
                       const char **comp)
{
    const part_ctx *pc = x->ud;
    reader *rd = ud;
    for (size_t k = 0; k < pc->count; k++) {
        const consumer *c = &rd->cons[pc->first + k];
        if ((at >= c->cs && at < c->ce) || k + 1 == pc->count) {
            *obj = c->c ? object_of(rd->rf->zf, c->c) : NULL;
            *comp = role_of(c);
            return;
        }
    }
}

/* ---- consumers */

static int hash_sink(void *ud, const void *data, size_t n)
{
    zt_hasher_update(ud, data, n);
    return 0;
}

/* Stored bytes of c, in order, into its digest: through vdec when the digest
 * is over the decoded bytes. A decoding error is kept for settle(). */
static void hash_stored(consumer *c, const uint8_t *p, size_t n)
{
    if (!c->vdec)
        zt_hasher_update(c->h, p, n);
    else if (!c->dec_st)
        c->dec_st = zt_decoder_push(c->vdec, p, n, hash_sink, c->h, c->dec_err);
}

/* The digest check and the request's status, once every byte is hashed. */
static zt_status settle(reader *rd, consumer *c, zt_error *err)
{
    c->deferred = false;
    if (c->vdec && !c->dec_st)
        c->dec_st = zt_decoder_push_end(c->vdec, hash_sink, c->h, c->dec_err);
    if (c->vdec && c->dec_st) /* bytes that do not decode: a transfer to retry, like a mismatch */
        return cfail(rd, c, err, ZT_E_DIGEST_MISMATCH, zt_component_offset(c->c),
                     "the stored bytes received do not decode (%s), so they cannot match the "
                     "digest of the decoded bytes, %s",
                     c->dec_err->message, zt_component_digest(c->c));
    if (c->h) {
        uint8_t got[32];
        size_t n = zt_hasher_final(c->h, got), want_n;
        const uint8_t *want = zt_component_digest_bytes(c->c, &want_n);
        if (n != want_n || memcmp(got, want, n) != 0) {
            char hex[80];
            zt_digest_format(zt_component_digest_kind(c->c), got, hex);
            return cfail(rd, c, err, ZT_E_DIGEST_MISMATCH, zt_component_offset(c->c),
                         "the %s bytes received hash to %s, the manifest says %s",
                         c->of_decoded ? "decoded" : "stored", hex, zt_component_digest(c->c));
        }
    }
    if (c->dec_st) {
        *err = *c->dec_err;
        ztr__add_url(err, rd->rf->url);
        return c->dec_st;
    }
    if (c->req) {
        c->req->status = ZT_OK;
        c->req->len = c->kind == C_POS ? (size_t)(c->ce - c->cs) : (size_t)c->out_pos;
    }
    return ZT_OK;
}

/* Every byte of c has landed. Its bytes may still be in a lane's queue: then
 * the check waits for the end of the call (ztr__lanes_wait in run()). */
static zt_status complete(reader *rd, consumer *c, zt_error *err)
{
    c->done = true;
    if (c->h && rd->lanes && c->kind == C_POS && !c->vdec) {
        c->deferred = true;
        return ZT_OK;
    }
    return settle(rd, c, err);
}

/* Hand c's bytes [queued, upto) to its lane (or hash them here). */
static void hash_more(reader *rd, consumer *c, uint64_t upto)
{
    const uint8_t *p = c->buf + c->queued;
    size_t n = (size_t)(upto - c->queued);
    if (rd->lanes && !c->vdec &&
        ztr__lanes_push(rd->lanes, (unsigned)(c - rd->cons), c->h, p, n, c->drop)) {
        rd->queued += n;
    } else {
        if (!c->vdec)
            ztr__lanes_wait(rd->lanes); /* out of memory: what was queued goes first */
        hash_stored(c, p, n);
        if (c->drop)
            ztr__drop_add(&rd->drop, p, n);
        rd->hashed_here += n;
    }
    c->queued = upto;
}

static const uint8_t *page_floor(const uint8_t *p)
{
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    return (const uint8_t *)((uintptr_t)p / page * page);
}

/* Hash buf's bytes from the frontier on, as far as they have landed: in
 * part k they have up to `cur_end` when k is the part being fed now. */
static int advance_hash(reader *rd, consumer *c, size_t cur, uint64_t cur_end, zt_error *err)
{
    uint64_t size = c->ce - c->cs;
    while (c->hashed < size) {
        size_t k = c->np > 1 ? (size_t)((c->hashed - c->from) / rd->chunk) : 0;
        size_t pi = c->part0 + k;
        const ztr_xfer *p = &rd->parts[pi];
        uint64_t end = pi == cur ? cur_end : p->start + p->got;
        if (end > c->ce)
            end = c->ce;
        if (end <= c->cs + c->hashed)
            break;
        c->hashed = end - c->cs;
    }
    const ztr_pull_io *io = rd->io;
    if (io && io->on_prefix && c->req && c->np > 1 && c->hashed < size &&
        c->hashed - c->told >= io->prefix_step) { /* (only a split one can resume inside) */
        c->told = c->hashed;
        if (io->on_prefix(io->ud, (size_t)(c->req - rd->reqs), c->hashed, err))
            return -1;
    }
    uint64_t upto = c->hashed;
    if (c->drop && upto < size) { /* whole pages, so that each is released once hashed */
        const uint8_t *edge = page_floor(c->buf + upto);
        upto = edge > c->buf ? (uint64_t)(edge - c->buf) : 0;
    }
    if (upto > c->queued &&
        (!rd->lanes || c->vdec || upto == size || upto - c->queued >= HASH_BATCH))
        hash_more(rd, c, upto);
    return 0;
}

static int decoded_sink(void *ud, const void *data, size_t n)
{
    consumer *c = ud;
    uint64_t lo = c->out_pos, hi = c->out_pos + n;
    c->out_pos = hi;
    if (c->of_decoded && c->h) /* a whole decoded read: its digest is over these */
        zt_hasher_update(c->h, data, n);
    uint64_t want_lo = c->skip, want_hi = c->skip + c->take;
    uint64_t a = lo > want_lo ? lo : want_lo, b = hi < want_hi ? hi : want_hi;
    if (a < b) /* take <= cap was checked at planning */
        memcpy(c->buf + (a - want_lo), (const uint8_t *)data + (a - lo), (size_t)(b - a));
    return 0;
}

/* n bytes to dst in a consumer's buffer: with pwrite when the buffer is a
 * pull's file mapping (ztr_pull_io.file_map), copied otherwise. */
static int land(reader *rd, uint8_t *dst, const uint8_t *p, size_t n, zt_error *err)
{
    const ztr_pull_io *io = rd->io;
    if (!io || !io->file_map) {
        memcpy(dst, p, n);
        return 0;
    }
    off_t off = (off_t)(dst - io->file_map);
    while (n) {
        ssize_t w = pwrite(io->fd, p, n, off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            int e = w < 0 ? errno : EIO;
            ztr__fail(err, e == ENOSPC || e == EDQUOT ? ZT_E_NOSPACE : ZT_E_IO, rd->rf->url, NULL,
                      NULL, 1, (uint64_t)off, "cannot write the bytes received: %s", strerror(e));
            return -1;
        }
        p += w;
        off += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Stored bytes [lo, lo + n) of the file for consumer c, fed by part `cur`.
 * 0: go on; 1: c has all it wants (a decoded range); -1: failure in *err. */
static int feed(reader *rd, consumer *c, size_t cur, uint64_t lo, const uint8_t *p, size_t n,
                zt_error *err)
{
    c->landed += n;
    bool last = c->landed == c->ce - c->cs;
    if (c->kind == C_POS) {
        if (land(rd, c->buf + (lo - c->cs), p, n, err))
            return -1;
        if (c->h && c->drop)
            rd->landed += n;
        else if (c->drop && n >= PAGE_MIN && !rd->io->file_map) /* not hashed: may go now */
            ztr__drop_add(&rd->drop, c->buf + (lo - c->cs), n);
        /* (a few bytes of padding between components: their page goes with
         * a neighbour's, or at the end of the batch) */
        if (c->h && advance_hash(rd, c, cur, lo + n, err))
            return -1;
        return last && complete(rd, c, err) ? -1 : 0;
    }
    if (c->h && !c->of_decoded)
        zt_hasher_update(c->h, p, n);
    if (!c->dec_st) {
        c->dec_st = zt_decoder_push(c->dec, p, n, decoded_sink, c, c->dec_err);
        if (!c->dec_st && last)
            c->dec_st = zt_decoder_push_end(c->dec, decoded_sink, c, c->dec_err);
        /* Without a digest to tell a corrupt transfer apart, fail at once. */
        if (c->dec_st && !c->h && !last) {
            *err = *c->dec_err;
            ztr__add_url(err, rd->rf->url);
            return -1;
        }
    }
    if (c->kind == C_ZRANGE && !c->dec_st && c->out_pos >= c->skip + c->take) {
        c->done = true;
        return 1;
    }
    if (last)
        return complete(rd, c, err) ? -1 : 0;
    return 0;
}

static int part_body(void *ud, uint64_t at, const uint8_t *p, size_t n, zt_error *err)
{
    part_ctx *pc = ud;
    reader *rd = pc->rd;
    uint64_t end = at + n;
    if (rd->io && rd->io->cancel && *rd->io->cancel) {
        ztr__fail(err, ZT_E_IO, rd->rf->url, NULL, NULL, 0, 0, "interrupted");
        return -1;
    }
    consumer *cons = rd->cons + pc->first;
    while (pc->cursor < pc->count && cons[pc->cursor].ce <= at)
        pc->cursor++;
    for (size_t k = pc->cursor; k < pc->count && cons[k].cs < end; k++) {
        consumer *c = &cons[k];
        uint64_t lo = at > c->cs ? at : c->cs, hi = end < c->ce ? end : c->ce;
        if (lo >= hi || c->done)
            continue;
        int rc = feed(rd, c, pc->index, lo, p + (lo - at), (size_t)(hi - lo), err);
        if (rc)
            return rc; /* a decoded range has its own part: stopping it stops nobody else */
    }
    return 0;
}

/* ---- flow control of a pull */

/* May part x start? Bytes landed but not hashed, plus those in flight, stay
 * within the window; when nothing is in flight and the lanes' queues are
 * empty, the next part always may (what is landed then is waiting for it). */
static bool part_gate(void *ud, const ztr_xfer *x, uint64_t inflight)
{
    reader *rd = ud;
    uint64_t hashed = ztr__lanes_hashed(rd->lanes);
    uint64_t pending = rd->landed - rd->hashed_here - hashed;
    if (pending + inflight + x->len <= rd->window)
        return true;
    return inflight == 0 && rd->queued == hashed;
}

/* ---- planning */

static int by_start(const void *a, const void *b)
{
    const consumer *x = a, *y = b;
    if (x->cs != y->cs)
        return x->cs < y->cs ? -1 : 1;
    return x->ce < y->ce ? -1 : x->ce > y->ce;
}

static bool alone(const reader *rd, const consumer *c)
{
    return c->kind == C_ZRANGE || (c->kind == C_POS && c->ce - c->cs > rd->chunk);
}

static void add_part(reader *rd, uint64_t start, uint64_t end, size_t first, size_t count)
{
    size_t i = rd->nparts++;
    if (!rd->parts) /* counting */
        return;
    rd->parts[i] =
        (ztr_xfer){.start = start, .len = end - start, .on_body = part_body, .ud = &rd->pctx[i]};
    rd->pctx[i] = (part_ctx){.rd = rd, .index = i, .first = first, .count = count};
}

/* Cuts rd's consumers into parts: counts them when rd->parts is NULL, adds
 * them otherwise. Counted first so that the parts array is as long as the
 * plan (a part is ~2 KB: a pull's batch of 4,096 small components in a few
 * shared requests would otherwise allocate, and on reused heap memory zero,
 * a bound of 16 MB). */
static void cut(reader *rd)
{
    for (size_t i = 0; i < rd->ncons;) {
        consumer *c = &rd->cons[i];
        if (c->cs == c->ce) { /* nothing to fetch */
            i++;
            continue;
        }
        if (alone(rd, c)) {
            c->part0 = rd->nparts;
            uint64_t step = c->kind == C_POS ? rd->chunk : c->ce - c->cs;
            for (uint64_t s = c->cs + c->from; s < c->ce; s += step)
                add_part(rd, s, c->ce - s < step ? c->ce : s + step, i, 1);
            c->np = rd->nparts - c->part0;
            i++;
            continue;
        }
        uint64_t ps = c->cs, pe = c->ce;
        size_t j = i + 1;
        while (j < rd->ncons && !alone(rd, &rd->cons[j]) && rd->cons[j].cs <= pe + MERGE_GAP &&
               (rd->cons[j].ce > pe ? rd->cons[j].ce : pe) - ps <= rd->chunk) {
            if (rd->cons[j].ce > pe)
                pe = rd->cons[j].ce;
            j++;
        }
        for (size_t k = i; k < j; k++) {
            rd->cons[k].part0 = rd->nparts;
            rd->cons[k].np = 1;
        }
        add_part(rd, ps, pe, i, j - i);
        i = j;
    }
}

static zt_status plan(reader *rd, zt_error *err)
{
    qsort(rd->cons, rd->ncons, sizeof(*rd->cons), by_start);
    cut(rd);
    size_t nparts = rd->nparts;
    rd->nparts = 0;
    rd->parts = calloc(nparts ? nparts : 1, sizeof(*rd->parts));
    rd->pctx = calloc(nparts ? nparts : 1, sizeof(*rd->pctx));
    if (!rd->parts || !rd->pctx)
        return ztr__fail(err, ZT_E_NOMEM, rd->rf->url, NULL, NULL, 0, 0,
                         "out of memory planning %zu requests", nparts);
    cut(rd);
    return ZT_OK;
}

/* ---- consumers from what the caller asked for */

static zt_status setup(reader *rd, consumer *c, const zt_component *comp, unsigned flags,
                       uint64_t off, uint64_t len, bool whole, void *buf, size_t cap, zt_error *err)
{
    bool stored = (flags & ZT_REMOTE_STORED) || zt_component_encoding(comp) == ZT_ENC_RAW;
    uint64_t total = stored ? zt_component_length(comp) : zt_component_decoded_length(comp);
    memset(c, 0, sizeof(*c));
    c->c = comp;
    c->buf = buf;
    c->cap = cap;
    if (flags & ~ZT_REMOTE_STORED)
        return cfail(rd, c, err, ZT_E_ARG, zt_component_offset(comp), "unknown flags 0x%x", flags);
    if (whole)
        len = total;
    if (off > total || len > total - off || len > cap || (len && !buf))
        return cfail(rd, c, err, ZT_E_ARG, zt_component_offset(comp),
                     "%llu bytes at %llu of the %llu %s bytes do not fit %s",
                     (unsigned long long)len, (unsigned long long)off, (unsigned long long)total,
                     stored ? "stored" : "decoded", len > cap ? "the buffer" : "the component");
    if (zt_component_shard(comp) >= 0) /* its offset is in another file */
        return cfail(rd, c, err, ZT_E_SHARD, zt_component_offset(comp),
                     "the part is in shard \"%s\", a file of its own (v2 §7): open that file",
                     zt_file_shard_name(rd->rf->zf, (size_t)zt_component_shard(comp)));
    if (zt_component_offset(comp) + zt_component_length(comp) > rd->rf->pin.size)
        return cfail(rd, c, err, ZT_E_ARG, zt_component_offset(comp),
                     "the component lies outside this file's %llu bytes",
                     (unsigned long long)rd->rf->pin.size);
    uint64_t start = zt_component_offset(comp);
    if (stored) {
        c->kind = C_POS;
        c->cs = start + off;
        c->ce = c->cs + len;
    } else {
        c->kind = whole ? C_ZDEC : C_ZRANGE;
        c->cs = start;
        c->ce = start + zt_component_length(comp);
        c->skip = off;
        c->take = len;
        if (!(c->dec_err = calloc(1, sizeof(*c->dec_err))))
            return ztr__fail(err, ZT_E_NOMEM, rd->rf->url, NULL, NULL, 0, 0, "out of memory");
        zt_status st = zt_decoder_new(rd->rf->zf, comp, &c->dec, err);
        if (st)
            return st;
    }
    if (whole && zt_component_digest_kind(comp) != ZT_DIGEST_NONE &&
        !(c->h = zt_hasher_new(zt_component_digest_kind(comp))))
        return ztr__fail(err, ZT_E_NOMEM, rd->rf->url, NULL, NULL, 0, 0, "out of memory");
    /* Raw bytes are their own decoding: only an encoded part needs a decoder. */
    c->of_decoded = zt_component_digest_scope(comp) == ZT_DIGEST_OF_DECODED &&
                    zt_component_encoding(comp) != ZT_ENC_RAW;
    if (c->h && c->of_decoded && c->kind == C_POS) {
        if (!(c->dec_err = calloc(1, sizeof(*c->dec_err))))
            return ztr__fail(err, ZT_E_NOMEM, rd->rf->url, NULL, NULL, 0, 0, "out of memory");
        zt_status st = zt_decoder_new(rd->rf->zf, comp, &c->vdec, err);
        if (st)
            return st;
    }
    return ZT_OK;
}

static void reader_free(reader *rd)
{
    ztr__drop_flush(&rd->drop);
    ztr__lanes_free(rd->lanes); /* first: its threads may still use the hashers */
    for (size_t i = 0; i < rd->ncons; i++) {
        zt_hasher_free(rd->cons[i].h);
        zt_decoder_free(rd->cons[i].dec);
        zt_decoder_free(rd->cons[i].vdec);
        free(rd->cons[i].dec_err);
    }
    free(rd->cons);
    free(rd->parts);
    free(rd->pctx);
}

/* Plans, runs and finishes rd's consumers. */
/* Hashing threads when there is enough to hash and a core to spare. */
static void start_lanes(reader *rd)
{
    uint64_t bytes = 0;
    for (size_t i = 0; i < rd->ncons; i++)
        if (rd->cons[i].h && rd->cons[i].kind == C_POS && !rd->cons[i].vdec)
            bytes += rd->cons[i].ce - rd->cons[i].cs;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (bytes < LANES_FROM || cpus < 2)
        return;
    rd->lanes = ztr__lanes_new(cpus - 1 < MAX_LANES ? (unsigned)(cpus - 1) : MAX_LANES);
    if (rd->io && rd->io->file_map)
        ztr__lanes_read_from(rd->lanes, rd->io->fd, rd->io->file_map);
}

static zt_status run(reader *rd, unsigned conns, zt_error *err)
{
    zt_status st = plan(rd, err);
    if (!st)
        start_lanes(rd);
    for (size_t i = 0; !st && i < rd->ncons; i++) {
        consumer *c = &rd->cons[i];
        if (c->cs == c->ce && !c->done) {
            if (c->dec && !c->dec_st)
                c->dec_st = zt_decoder_push_end(c->dec, decoded_sink, c, c->dec_err);
            st = complete(rd, c, err);
        }
    }
    if (st)
        return st;
    if (rd->rf->whole) { /* the file is in memory: no request */
        for (size_t i = 0; i < rd->nparts; i++) {
            const ztr_xfer *x = &rd->parts[i];
            if (part_body(x->ud, x->start, rd->rf->whole + x->start, (size_t)x->len, err) < 0)
                return err->code;
        }
        rd->nparts = 0;
    }
    zt_remote *r = rd->rf->r;
    ztr_batch b = {.r = r,
                   .url = rd->rf->url,
                   .pin = &rd->rf->pin,
                   .x = rd->parts,
                   .n = rd->nparts,
                   .conns = conns ? conns : r->opt.connections,
                   .deadline = ztr__deadline(r),
                   .err = err,
                   .where = part_where,
                   .where_ud = rd,
                   .gate = rd->window ? part_gate : NULL,
                   .gate_ud = rd};
    if ((st = ztr__run(&b)))
        return st;
    ztr__lanes_wait(rd->lanes);
    for (size_t i = 0; i < rd->ncons; i++)
        if (rd->cons[i].deferred && (st = settle(rd, &rd->cons[i], err)))
            return st;
    for (size_t i = 0; i < rd->ncons; i++)
        if (!rd->cons[i].done)
            return cfail(rd, &rd->cons[i], err, ZT_E_STATE, rd->cons[i].cs + rd->cons[i].landed,
                         "internal error: the read ended before this component did");
    return ZT_OK;
}

zt_status zt_remote_read_range(zt_remote_file *rf, const zt_component *c, unsigned flags,
                               uint64_t offset, void *buf, size_t len, zt_error *err)
{
    zt_error local;
    if (!err)
        err = &local;
    if (!rf || !c)
        return ztr__fail(err, ZT_E_ARG, rf ? rf->url : NULL, NULL, NULL, 0, 0, "NULL argument");
    reader rd = {.rf = rf, .chunk = rf->r->opt.chunk_size, .ncons = 1};
    if (!(rd.cons = calloc(1, sizeof(*rd.cons))))
        return ztr__fail(err, ZT_E_NOMEM, rf->url, NULL, NULL, 0, 0, "out of memory");
    bool stored = (flags & ZT_REMOTE_STORED) || zt_component_encoding(c) == ZT_ENC_RAW;
    uint64_t total = stored ? zt_component_length(c) : zt_component_decoded_length(c);
    bool whole = offset == 0 && len == total;
    zt_status st = setup(&rd, rd.cons, c, flags, offset, len, whole, buf, len, err);
    if (!st)
        st = run(&rd, 0, err);
    reader_free(&rd);
    return st;
}

zt_status zt_remote_read_component(zt_remote_file *rf, const zt_component *c, unsigned flags,
                                   void *buf, size_t cap, size_t *out_len, zt_error *err)
{
    if (out_len)
        *out_len = 0;
    if (!rf || !c)
        return ztr__fail(err, ZT_E_ARG, rf ? rf->url : NULL, NULL, NULL, 0, 0, "NULL argument");
    zt_remote_request req = {.component = c, .flags = flags, .buf = buf, .cap = cap};
    zt_status st = zt_remote_read_many(rf, &req, 1, 0, err);
    if (out_len)
        *out_len = req.len;
    return st;
}

zt_status zt_remote_read_many(zt_remote_file *rf, zt_remote_request *reqs, size_t n,
                              unsigned connections, zt_error *err)
{
    zt_error local;
    if (!err)
        err = &local;
    if (!rf || (!reqs && n))
        return ztr__fail(err, ZT_E_ARG, rf ? rf->url : NULL, NULL, NULL, 0, 0, "NULL argument");
    if (connections > 256)
        return ztr__fail(err, ZT_E_ARG, rf->url, NULL, NULL, 0, 0, "%u connections: at most 256",
                         connections);
    for (size_t i = 0; i < n; i++) {
        reqs[i].len = 0;
        reqs[i].status = ZT_E_STATE;
    }
    reader rd = {.rf = rf, .chunk = rf->r->opt.chunk_size, .ncons = n};
    if (!(rd.cons = calloc(n ? n : 1, sizeof(*rd.cons))))
        return ztr__fail(err, ZT_E_NOMEM, rf->url, NULL, NULL, 0, 0, "out of memory");
    zt_status st = ZT_OK;
    for (size_t i = 0; i < n && !st; i++) {
        if (!reqs[i].component)
            st =
                ztr__fail(err, ZT_E_ARG, rf->url, NULL, NULL, 0, 0, "request %zu: no component", i);
        else
            st = setup(&rd, &rd.cons[i], reqs[i].component, reqs[i].flags, 0, 0, true, reqs[i].buf,
                       reqs[i].cap, err);
        rd.cons[i].req = &reqs[i];
    }
    if (!st)
        st = run(&rd, connections, err);
    for (size_t i = 0; st && i < n; i++)
        if (reqs[i].status != ZT_OK)
            reqs[i].status = st;
    reader_free(&rd);
    return st;
}

/* c's first `from` bytes are in its buffer (a resumed pull): hash them from
 * there, releasing the pages as it goes, and fetch the rest. Only for a
 * component split in chunks: a smaller one shares its request. */
static bool resume_at(reader *rd, consumer *c, uint64_t from)
{
    uint64_t size = c->ce - c->cs;
    if (c->kind != C_POS || size <= rd->chunk || from >= size)
        return false;
    for (uint64_t at = 0; c->h && at < from;) {
        size_t k = from - at < HASH_BATCH ? (size_t)(from - at) : HASH_BATCH;
        hash_stored(c, c->buf + at, k);
        if (c->drop)
            ztr__drop_pages(c->buf + at, k);
        at += k;
    }
    c->from = c->landed = c->hashed = c->queued = c->told = from;
    return true;
}

zt_status ztr__read_spans(zt_remote_file *rf, zt_remote_request *reqs, size_t n,
                          const ztr_span *spans, size_t nspans, uint8_t *base, uint64_t base_off,
                          unsigned connections, const ztr_pull_io *io, zt_error *err)
{
    uint64_t window = io ? io->window : 0;
    for (size_t i = 0; i < n; i++) {
        reqs[i].len = 0;
        reqs[i].status = ZT_E_STATE;
    }
    reader rd = {.rf = rf,
                 .chunk = rf->r->opt.chunk_size,
                 .ncons = n + nspans,
                 .window = window,
                 .io = io,
                 .reqs = reqs};
    unsigned conns = connections ? connections : rf->r->opt.connections;
    if (window && rd.chunk > window / conns) /* every connection busy inside the window */
        rd.chunk = window / conns > MIN_CHUNK ? (size_t)(window / conns) : MIN_CHUNK;
    if (!(rd.cons = calloc(rd.ncons ? rd.ncons : 1, sizeof(*rd.cons))))
        return ztr__fail(err, ZT_E_NOMEM, rf->url, NULL, NULL, 0, 0, "out of memory");
    zt_status st = ZT_OK;
    for (size_t i = 0; i < n && !st; i++) {
        st = setup(&rd, &rd.cons[i], reqs[i].component, reqs[i].flags, 0, 0, true, reqs[i].buf,
                   reqs[i].cap, err);
        rd.cons[i].req = &reqs[i];
        rd.cons[i].drop = window > 0;
        if (!st && io && io->from && io->from[i] && !resume_at(&rd, &rd.cons[i], io->from[i]))
            io->from[i] = 0; /* fetched whole */
    }
    for (size_t i = 0; i < nspans && !st; i++) {
        consumer *c = &rd.cons[n + i];
        if (spans[i].start > rf->pin.size || spans[i].len > rf->pin.size - spans[i].start ||
            spans[i].start < base_off)
            st = ztr__fail(err, ZT_E_ARG, rf->url, NULL, NULL, 1, spans[i].start,
                           "a span of %llu bytes outside the file",
                           (unsigned long long)spans[i].len);
        *c = (consumer){.kind = C_POS,
                        .cs = spans[i].start,
                        .ce = spans[i].start + spans[i].len,
                        .buf = base + (spans[i].start - base_off),
                        .cap = (size_t)spans[i].len,
                        .drop = window > 0};
    }
    if (!st)
        st = run(&rd, connections, err);
    for (size_t i = 0; st && i < n; i++)
        if (reqs[i].status != ZT_OK)
            reqs[i].status = st;
    reader_free(&rd);
    return st;
}
