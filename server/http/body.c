/*
 * Byte responses (see body.h): the plan, made once per request, and the
 * response for it. A span within one segment goes out its own way: a file
 * span with sendfile through MHD's fd response (the fd is dup()ed per
 * response, as MHD closes it), memory as it is, a decoded component through
 * its decoder (decode_stream.h), a complete cache item as a file. A span
 * across segments goes out as an iovec or a reader (seg_stream.h); several
 * ranges of one file or memory segment as multipart/byteranges read with
 * pread.
 */
#include "http/body.h"
#include "http/conns.h"
#include "http/decode_stream.h"
#include "http/seg_stream.h"
#include "core/log.h"
#include "upstream/items.h"
#include "http/range.h"
#include "http/response.h"

#include <openssl/evp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define BLOCK (256u * 1024)
#define ZTD_SMALL_BODY (64u * 1024) /* spans up to this go out from memory, see small_response */

static int conn_socket(struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    return ci ? ci->connect_fd : -1;
}

/* ---- multipart/byteranges from a file */

typedef struct mpart {
    int fd;
    uint64_t base; /* representation offset in the file */
    const char *mem;
    size_t n; /* segments: 2 per span + trailer */
    struct seg {
        uint64_t at, len; /* position in the body */
        char *text;       /* header text, or NULL for data */
        uint64_t src;     /* data: offset within the representation */
    } * segs;
    ztd_entry *entry;
    int sock;
} mpart;

static void mpart_free(void *cls)
{
    mpart *m = cls;
    for (size_t i = 0; i < m->n; i++)
        free(m->segs[i].text);
    free(m->segs);
    if (m->fd >= 0)
        close(m->fd);
    ztd_entry_release(m->entry);
    free(m);
}

static ssize_t mpart_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    mpart *m = cls;
    size_t i = 0;
    while (i < m->n && pos >= m->segs[i].at + m->segs[i].len)
        i++;
    if (i == m->n)
        return MHD_CONTENT_READER_END_OF_STREAM;
    const struct seg *s = &m->segs[i];
    uint64_t within = pos - s->at, avail = s->len - within;
    size_t n = avail < max ? (size_t)avail : max;
    if (s->text) {
        memcpy(buf, s->text + within, n);
        return (ssize_t)n;
    }
    if (m->mem) {
        memcpy(buf, m->mem + s->src + within, n);
        return (ssize_t)n;
    }
    ssize_t r = pread(m->fd, buf, n, (off_t)(m->base + s->src + within));
    return r > 0 ? r : ztd_body_cut(m->sock);
}

static int add_seg(mpart *m, uint64_t *at, char *text, uint64_t len, uint64_t src)
{
    if (!text && len == 0)
        return -1;
    m->segs[m->n++] = (struct seg){*at, len, text, src};
    *at += len;
    return 0;
}

static struct MHD_Response *multipart_response(const ztd_body *b, const ztd_plan *p, int sock,
                                               char *ctype_out, size_t ctcap, uint64_t *body_len)
{
    char boundary[40];
    uint64_t seed;
    if (getentropy(&seed, sizeof(seed)) != 0)
        seed = (uint64_t)(uintptr_t)p ^ (uint64_t)time(NULL);
    ztd_multipart_boundary(boundary, seed);
    mpart *m = calloc(1, sizeof(*m));
    if (!m || !(m->segs = calloc(2 * p->nspans + 1, sizeof(*m->segs)))) {
        free(m);
        return NULL;
    }
    const ztd_body_seg *g = &b->segs[0];
    m->fd = g->kind == ZTD_SEG_FILE ? dup(g->fd) : -1;
    m->mem = g->kind == ZTD_SEG_MEM ? (const char *)g->mem : NULL;
    m->base = g->off;
    m->entry = b->entry;
    ztd_entry_retain(m->entry);
    m->sock = sock;
    uint64_t at = 0;
    for (size_t i = 0; i < p->nspans; i++) {
        const ztd_span *sp = &p->spans[i];
        size_t hl = ztd_multipart_part_header(NULL, 0, boundary, b->content_type, sp->start,
                                              sp->start + sp->len - 1, b->len);
        char *h = malloc(hl + 1);
        if (!h) {
            mpart_free(m);
            return NULL;
        }
        ztd_multipart_part_header(h, hl + 1, boundary, b->content_type, sp->start,
                                  sp->start + sp->len - 1, b->len);
        add_seg(m, &at, h, hl, 0);
        add_seg(m, &at, NULL, sp->len, sp->start);
    }
    size_t tl = ztd_multipart_trailer(NULL, 0, boundary);
    char *t = malloc(tl + 1);
    if (!t) {
        mpart_free(m);
        return NULL;
    }
    ztd_multipart_trailer(t, tl + 1, boundary);
    add_seg(m, &at, t, tl, 0);
    snprintf(ctype_out, ctcap, "multipart/byteranges; boundary=%s", boundary);
    *body_len = at;
    return ztd_reader_response(at, BLOCK, mpart_read, m, mpart_free);
}

/* ---- a file span copied through user space (TLS cannot use sendfile) */

typedef struct fstream {
    int fd, sock;
    uint64_t off, len;
} fstream;

/* pread, not the mapping: a file cut short under us ends the response with an
 * error instead of raising SIGBUS. */
static ssize_t fstream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    fstream *f = cls;
    if (pos >= f->len)
        return MHD_CONTENT_READER_END_OF_STREAM;
    if (max > f->len - pos)
        max = (size_t)(f->len - pos);
    ssize_t r = pread(f->fd, buf, max, (off_t)(f->off + pos));
    return r > 0 ? r : ztd_body_cut(f->sock);
}

static void fstream_free(void *cls)
{
    fstream *f = cls;
    close(f->fd);
    free(f);
}

static struct MHD_Response *copy_response(const ztd_body_seg *g, uint64_t start, uint64_t len,
                                          int sock)
{
    fstream *f = malloc(sizeof(*f));
    if (!f || (f->fd = dup(g->fd)) < 0) {
        free(f);
        return NULL;
    }
    f->sock = sock;
    f->off = g->off + start;
    f->len = len;
    return ztd_reader_response(len, 64 * 1024, fstream_read, f, fstream_free);
}

/* Small spans are read into memory: one pread, and libmicrohttpd sends
 * headers and body in one go. The sendfile path (dup, sendfile, close, and
 * socket cork toggling around it) measured half the requests per second of
 * this for 4 KiB components; large spans keep sendfile. */

/* Their buffers are recycled per thread: a malloc of a few KiB per request
 * made glibc consolidate its fastbins every time. */
#define SPARE_BUFS 16

typedef struct spare_buf {
    struct spare_buf *next;
} spare_buf;

typedef struct spare_list {
    spare_buf *head;
    unsigned n;
} spare_list;

static pthread_key_t g_bufs_key;
static pthread_once_t g_bufs_once = PTHREAD_ONCE_INIT;

static void spare_list_free(void *p)
{
    spare_list *l = p;
    while (l->head) {
        spare_buf *b = l->head;
        l->head = b->next;
        free(b);
    }
    free(l);
}

static void bufs_key_init(void)
{
    pthread_key_create(&g_bufs_key, spare_list_free);
}

static spare_list *thread_spares(void)
{
    pthread_once(&g_bufs_once, bufs_key_init);
    spare_list *l = pthread_getspecific(g_bufs_key);
    if (!l && (l = calloc(1, sizeof(*l))) && pthread_setspecific(g_bufs_key, l) != 0) {
        free(l);
        l = NULL;
    }
    return l;
}

static void *small_buf_get(void)
{
    spare_list *l = thread_spares();
    if (!l || !l->head)
        return malloc(ZTD_SMALL_BODY);
    spare_buf *b = l->head;
    l->head = b->next;
    l->n--;
    return b;
}

static void small_buf_put(void *p)
{
    spare_list *l = thread_spares();
    if (!l || l->n >= SPARE_BUFS) {
        free(p);
        return;
    }
    spare_buf *b = p;
    b->next = l->head;
    l->head = b;
    l->n++;
}

static struct MHD_Response *small_response(const ztd_body_seg *g, uint64_t start, uint64_t len)
{
    char *buf = small_buf_get();
    if (!buf)
        return NULL;
    ssize_t r = pread(g->fd, buf, (size_t)len, (off_t)(g->off + start));
    if (r != (ssize_t)len) { /* the file shrank since fstat: refuse like a bad span */
        small_buf_put(buf);
        return NULL;
    }
    struct MHD_Response *resp =
        MHD_create_response_from_buffer_with_free_callback((size_t)len, buf, small_buf_put);
    if (!resp)
        small_buf_put(buf);
    return resp;
}

/* ---- a span: within one segment, or across several */

/* [start, start + len) of file segment g. */
static struct MHD_Response *file_response(const ztd_body *b, const ztd_body_seg *g, uint64_t start,
                                          uint64_t len, int sock)
{
    if (b->tls)
        return copy_response(g, start, len, sock);
    if (len <= ZTD_SMALL_BODY)
        return small_response(g, start, len);
    int fd = dup(g->fd);
    if (fd < 0)
        return NULL;
    struct MHD_Response *resp = MHD_create_response_from_fd_at_offset64(len, fd, g->off + start);
    if (!resp)
        close(fd);
    return resp;
}

/* A complete cache item's span is a file span (sendfile); false when the
 * item is still filling. */
static bool item_as_file(const ztd_body_seg *g, ztd_body_seg *out)
{
    uint64_t ready;
    if (!g->item || ztd_cache_item_state(g->item, &ready) != ZTD_CACHE_COMPLETE)
        return false; /* none held (the answer reads no byte), or filling */
    *out = ztd_seg_file(ztd_cache_item_fd(g->item), g->off, g->len);
    out->immutable = true;
    return true;
}

static struct MHD_Response *span_response(const ztd_req *r, const ztd_body *b, uint64_t start,
                                          uint64_t len, int sock, ztd_body_fail *f)
{
    if (len == 0)
        return MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
    bool head = !strcmp(r->method, "HEAD");
    uint64_t at;
    const ztd_body_seg *g = &b->segs[ztd_seg_find(b->segs, b->nsegs, start, &at)];
    ztd_body_seg whole;
    if (start + len <= at + g->len) { /* within one segment */
        uint64_t in = start - at;
        switch (g->kind) {
        case ZTD_SEG_FILE:
            return file_response(b, g, in, len, sock);
        case ZTD_SEG_MEM:
            return MHD_create_response_from_buffer((size_t)len, (void *)(g->mem + in),
                                                   MHD_RESPMEM_PERSISTENT);
        case ZTD_SEG_DECODE:
            return ztd_decode_response(r, b->entry, g, in, len, sock, b->max_decode_streams, f);
        case ZTD_SEG_ITEM:
            if (item_as_file(g, &whole))
                return file_response(b, &whole, in, len, sock);
            break; /* filling: the reader */
        }
    }
    struct MHD_Response *mapped =
        b->tls || head ? NULL : ztd_seg_mapped_response(b->segs, b->nsegs, b->entry, start, len);
    if (mapped)
        return mapped;
    return ztd_seg_stream_response(b->segs, b->nsegs, b->entry, start, len, sock, head,
                                   b->max_decode_streams, f);
}

/* MHD_add_response_header, noting a failure (out of memory) in *ok. */
static void add(struct MHD_Response *resp, const char *name, const char *value, bool *ok)
{
    if (MHD_add_response_header(resp, name, value) != MHD_YES)
        *ok = false;
}

/* false: a header could not be added (out of memory). */
static bool validator_headers(struct MHD_Response *resp, const ztd_body *b)
{
    char date[32];
    bool ok = true;
    if (b->etag[0])
        add(resp, "ETag", b->etag, &ok);
    if (!b->last_modified_text)
        ztd_http_date_format(b->last_modified, date);
    add(resp, "Last-Modified", b->last_modified_text ? b->last_modified_text : date, &ok);
    if (b->cache_control && b->cache_control[0])
        add(resp, "Cache-Control", b->cache_control, &ok);
    if (b->vary_accept_encoding)
        add(resp, "Vary", "Accept-Encoding", &ok);
    return ok;
}

static bool representation_headers(struct MHD_Response *resp, const ztd_body *b)
{
    bool ok = validator_headers(resp, b);
    add(resp, "Accept-Ranges", "bytes", &ok);
    if (b->content_encoding)
        add(resp, "Content-Encoding", b->content_encoding, &ok);
    if (b->content_disposition)
        add(resp, "Content-Disposition", b->content_disposition, &ok);
    if (b->sha256) {
        char v[64] = "sha-256=:";
        int n = EVP_EncodeBlock((unsigned char *)v + 9, b->sha256, 32); /* 44 chars */
        v[9 + n] = ':';
        v[10 + n] = 0;
        add(resp, "Repr-Digest", v, &ok);
    }
    if (b->add_headers && !b->add_headers(resp, b->ctx))
        ok = false;
    return ok;
}

/* Does any segment read a catalog file that may change in place? */
static bool reads_file(const ztd_body *b)
{
    for (size_t i = 0; i < b->nsegs; i++)
        if (ztd_seg_reads_file(&b->segs[i]))
            return true;
    return false;
}

/* Is a file now shorter than a segment's end? (Small spans are read with
 * pread, which notices by itself; see span_failed.) */
static bool shrunk(const ztd_body *b)
{
    struct stat sb;
    for (size_t i = 0; i < b->nsegs; i++) {
        const ztd_body_seg *g = &b->segs[i];
        if (g->kind == ZTD_SEG_FILE && fstat(g->fd, &sb) == 0 &&
            (uint64_t)sb.st_size < g->off + g->len)
            return true;
    }
    return false;
}

/* A span could not be turned into a response: a reason recorded in f, the
 * file shrank, or memory ran out. */
static enum MHD_Result span_failed(struct MHD_Connection *c, ztd_req *r, const ztd_body *b,
                                   const ztd_body_fail *f)
{
    if (f->err)
        return ztd_error(c, r, f->err, "%s", f->msg);
    if (shrunk(b))
        return ztd_error(c, r, ZTD_ERR_FILE_CHANGED,
                         "\"%s\" is shorter on disk than when it was opened (truncated in "
                         "place?); retry once it has been rescanned",
                         b->entry ? b->entry->name : "");
    return ztd_error(c, r, ZTD_ERR_INTERNAL, "could not create the response");
}

/* Has the file changed in place since the catalog opened it? Its bytes then no
 * longer match the validators (and a file cut short would stall sendfile, see
 * conns.c): refuse, and let the rescan the change triggers settle it. Small
 * spans skip the fstat, as before, and rely on the stale mark that inotify or
 * the connection sweep sets. Memory and cache items never change. */
static bool file_changed(const ztd_body *b)
{
    if (!reads_file(b))
        return false;
    if (b->nsegs == 1 && b->segs[0].kind == ZTD_SEG_FILE && b->len <= ZTD_SMALL_BODY)
        return ztd_entry_stale(b->entry);
    return ztd_entry_changed(b->entry);
}

/* Will the response read the file while it is sent? Not a small span of one
 * file segment, which span_response() reads into memory at once. */
static bool reads_while_sending(const ztd_body *b, const ztd_plan *p)
{
    if ((p->status != ZTD_PLAN_PARTIAL && p->status != ZTD_PLAN_FULL) || !reads_file(b))
        return false;
    if (b->nsegs > 1 || b->segs[0].kind != ZTD_SEG_FILE || b->tls ||
        (p->status == ZTD_PLAN_PARTIAL && p->nspans > 1))
        return true;
    uint64_t len = p->status == ZTD_PLAN_FULL ? b->len : p->spans[0].len;
    return len > ZTD_SMALL_BODY;
}

/* RFC 9110 §13.1.3: an If-Modified-Since date later than now is ignored. */
static const char *future_date(const char *v)
{
    int64_t t;
    if (v && ztd_http_date_parse(v, &t) == 0 && t > (int64_t)time(NULL))
        return NULL;
    return v;
}

void ztd_body_plan(struct MHD_Connection *c, const ztd_body *b, ztd_plan *plan)
{
    /* The lists and Range read with every line of them (a Range sent twice is invalid). */
    char *own[3];
    ztd_request_headers h = {
        .range = ztd_header_all(c, "Range", &own[0]),
        .if_range = ztd_header(c, "If-Range"),
        .if_match = ztd_header_all(c, "If-Match", &own[1]),
        .if_none_match = ztd_header_all(c, "If-None-Match", &own[2]),
        .if_modified_since = future_date(ztd_header(c, "If-Modified-Since")),
        .if_unmodified_since = ztd_header(c, "If-Unmodified-Since"),
        .is_get_or_head = 1,
    };
    ztd_validators v = {b->etag[0] ? b->etag : NULL, b->last_modified};
    ztd_plan_request(&h, &v, b->len, b->max_ranges, plan);
    for (int i = 0; i < 3; i++)
        free(own[i]);
}

/* A cached component that is complete, in one item, is a file span: sent as
 * a local file is, with multipart ranges. b itself otherwise. */
static const ztd_body *item_body_as_file(const ztd_body *b, ztd_body *out)
{
    ztd_body_seg g;
    if (b->nsegs != 1 || b->segs[0].kind != ZTD_SEG_ITEM || !item_as_file(&b->segs[0], &g))
        return b;
    *out = *b;
    ztd_body_single(out, g);
    return out;
}

void ztd_body_single(ztd_body *b, ztd_body_seg s)
{
    b->one = s;
    b->segs = &b->one;
    b->nsegs = 1;
    b->len = s.len;
}

/* Several ranges go out as multipart/byteranges from one file or memory
 * segment; other bodies answer them with the whole (RFC 9110 lets a server
 * ignore Range). */
static bool multipart_ok(const ztd_body *b)
{
    return b->nsegs == 1 && (b->segs[0].kind == ZTD_SEG_FILE || b->segs[0].kind == ZTD_SEG_MEM);
}

/* ---- answers shared by every request (body.h: b->shared) */

static uint64_t g_shared_limit, g_shared_bytes; /* atomic */

void ztd_body_set_shared_limit(uint64_t bytes)
{
    __atomic_store_n(&g_shared_limit, bytes, __ATOMIC_RELAXED);
}

void ztd_body_destroy_shared(void *answer)
{
    MHD_destroy_response(answer);
}

bool ztd_body_shared_room(uint64_t len)
{
    return ztd_body_shared_bytes() + len <= __atomic_load_n(&g_shared_limit, __ATOMIC_RELAXED);
}

uint64_t ztd_body_shared_bytes(void)
{
    return __atomic_load_n(&g_shared_bytes, __ATOMIC_RELAXED);
}

/* A span's copy: its length is kept before the bytes, for the budget. */
#define SPAN_HEAD 16

static void shared_span_free(void *bytes)
{
    char *p = (char *)bytes - SPAN_HEAD;
    uint64_t len;
    memcpy(&len, p, sizeof(len));
    __atomic_sub_fetch(&g_shared_bytes, len, __ATOMIC_RELAXED);
    free(p);
}

/* The file span b in memory, as a response; NULL when the budget is spent,
 * memory runs out or the file is shorter than the span. */
static struct MHD_Response *shared_span_response(const ztd_body *b)
{
    uint64_t limit = __atomic_load_n(&g_shared_limit, __ATOMIC_RELAXED);
    if (__atomic_add_fetch(&g_shared_bytes, b->len, __ATOMIC_RELAXED) > limit) {
        __atomic_sub_fetch(&g_shared_bytes, b->len, __ATOMIC_RELAXED);
        return NULL;
    }
    char *p = malloc(SPAN_HEAD + (size_t)b->len);
    const ztd_body_seg *g = &b->segs[0];
    if (!p || pread(g->fd, p + SPAN_HEAD, (size_t)b->len, (off_t)g->off) != (ssize_t)b->len) {
        free(p);
        __atomic_sub_fetch(&g_shared_bytes, b->len, __ATOMIC_RELAXED);
        return NULL;
    }
    memcpy(p, &b->len, sizeof(b->len));
    struct MHD_Response *resp = MHD_create_response_from_buffer_with_free_callback(
        (size_t)b->len, p + SPAN_HEAD, shared_span_free);
    if (!resp)
        shared_span_free(p + SPAN_HEAD);
    return resp;
}

/* The 200 answer from b->shared, built by the first request that finds it
 * empty (two that race both build, one keeps its own). One response for every
 * request: no header copies, no allocation, and libmicrohttpd sends headers
 * and body in one sendmsg as before. NULL: no answer could be built to share
 * (the caller answers as without a slot). */
static struct MHD_Response *shared_response(const ztd_body *b)
{
    void *built = __atomic_load_n(b->shared, __ATOMIC_ACQUIRE);
    struct MHD_Response *resp = built;
    if (!resp) {
        if (b->shared_asked && !__atomic_exchange_n(b->shared_asked, 1, __ATOMIC_RELAXED))
            return NULL; /* asked for the first time: answered alone (body.h) */
        resp = b->segs[0].kind == ZTD_SEG_MEM
                   ? MHD_create_response_from_buffer((size_t)b->len, (void *)b->segs[0].mem,
                                                     MHD_RESPMEM_PERSISTENT)
                   : shared_span_response(b);
        if (!resp)
            return NULL;
        /* A header lost to a failed allocation would be lost for every request
         * of this file version: such a response is not kept. */
        bool ok = representation_headers(resp, b);
        add(resp, "Content-Type", b->content_type, &ok);
        if (!ok || !ztd_response_server_header(resp)) {
            MHD_destroy_response(resp);
            return NULL;
        }
        void *none = NULL;
        if (!__atomic_compare_exchange_n(b->shared, &none, (void *)resp, false, __ATOMIC_ACQ_REL,
                                         __ATOMIC_ACQUIRE)) {
            MHD_destroy_response(resp);
            resp = none;
        }
    }
    return resp;
}

static bool may_share(const ztd_req *r, const ztd_body *b)
{
    return b->shared && ztd_req_can_share(r) && b->nsegs == 1 &&
           (b->segs[0].kind == ZTD_SEG_MEM ||
            (b->segs[0].kind == ZTD_SEG_FILE && b->len > 0 && b->len <= ZTD_SHARED_SPAN_MAX));
}

enum MHD_Result ztd_send_body(struct MHD_Connection *c, ztd_req *r, const ztd_body *b)
{
    if (file_changed(b))
        return ztd_error(c, r, ZTD_ERR_FILE_CHANGED,
                         "\"%s\" changed on disk since it was opened (written or truncated "
                         "in place?); retry once it has been rescanned",
                         b->entry->name);
    ztd_body whole;
    b = item_body_as_file(b, &whole);
    ztd_plan plan;
    ztd_body_plan(c, b, &plan);
    if (reads_while_sending(b, &plan))
        ztd_conns_pin(c, b->entry); /* a change to the file aborts it: ztd_conns_sweep */
    if (plan.status == ZTD_PLAN_PARTIAL && plan.nspans > 1 && !multipart_ok(b))
        plan.status = ZTD_PLAN_FULL;
    char cr[96];
    int sock = conn_socket(c);
    ztd_body_fail fail = {0};
    switch (plan.status) {
    case ZTD_PLAN_NOT_MODIFIED: {
        struct MHD_Response *resp =
            MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
        if (!resp)
            return MHD_NO;
        validator_headers(resp, b);
        return ztd_queue(c, r, MHD_HTTP_NOT_MODIFIED, resp, 0);
    }
    case ZTD_PLAN_PRECONDITION_FAILED:
        return ztd_error(c, r, ZTD_ERR_PRECONDITION_FAILED,
                         "a precondition (If-Match or If-Unmodified-Since) does not hold; "
                         "current ETag is %s",
                         b->etag[0] ? b->etag : "none");
    case ZTD_PLAN_UNSATISFIABLE:
        ztd_content_range(cr, sizeof(cr), NULL, b->len);
        return ztd_error_hdr(c, r, ZTD_ERR_RANGE_NOT_SATISFIABLE, "Content-Range", cr,
                             "no requested range overlaps the %llu bytes of the representation",
                             (unsigned long long)b->len);
    case ZTD_PLAN_PARTIAL:
        if (plan.nspans > 1) {
            char ctype[128];
            uint64_t blen;
            struct MHD_Response *resp =
                multipart_response(b, &plan, sock, ctype, sizeof(ctype), &blen);
            if (!resp)
                return ztd_fail(c, r, ZTD_ERR_INTERNAL);
            representation_headers(resp, b);
            MHD_add_response_header(resp, "Content-Type", ctype);
            return ztd_queue(c, r, MHD_HTTP_PARTIAL_CONTENT, resp, blen);
        } else {
            const ztd_span *sp = &plan.spans[0];
            struct MHD_Response *resp = span_response(r, b, sp->start, sp->len, sock, &fail);
            if (!resp)
                return span_failed(c, r, b, &fail);
            representation_headers(resp, b);
            MHD_add_response_header(resp, "Content-Type", b->content_type);
            ztd_content_range(cr, sizeof(cr), sp, b->len);
            MHD_add_response_header(resp, "Content-Range", cr);
            return ztd_queue(c, r, MHD_HTTP_PARTIAL_CONTENT, resp, sp->len);
        }
    case ZTD_PLAN_FULL:
        break;
    }
    struct MHD_Response *shared = may_share(r, b) ? shared_response(b) : NULL;
    if (shared)
        return ztd_queue_shared(c, r, MHD_HTTP_OK, shared, b->len);
    struct MHD_Response *resp = span_response(r, b, 0, b->len, sock, &fail);
    if (!resp)
        return span_failed(c, r, b, &fail);
    representation_headers(resp, b);
    MHD_add_response_header(resp, "Content-Type", b->content_type);
    return ztd_queue(c, r, MHD_HTTP_OK, resp, b->len);
}
