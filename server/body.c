/*
 * Byte responses (see body.h). A file span goes out with sendfile through
 * MHD's fd response (the fd is dup()ed per response, as MHD closes it);
 * several ranges as multipart/byteranges read with pread; a zstd component is
 * decoded on the fly by libztensor's pull decoder (pread-based, so a file
 * truncated in place gives a short response, never SIGBUS).
 */
#include "body.h"
#include "log.h"
#include "range.h"

#include <openssl/evp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define BLOCK (256u * 1024)
#define ZTD_SMALL_BODY (64u * 1024) /* spans up to this go out from memory, see small_response */

/* ---- decoded component stream (single span at most) */

typedef struct dstream {
    zt_decoder *d;
    ztd_entry *entry;
    uint64_t skip, left;
} dstream;

static ssize_t dstream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    dstream *s = cls;
    (void)pos;
    zt_error err;
    while (s->skip) {
        char scratch[16384];
        size_t n, want = s->skip < sizeof(scratch) ? (size_t)s->skip : sizeof(scratch);
        if (zt_decoder_read(s->d, scratch, want, &n, &err) || n == 0)
            return MHD_CONTENT_READER_END_WITH_ERROR;
        s->skip -= n;
    }
    if (!s->left)
        return MHD_CONTENT_READER_END_OF_STREAM;
    if (max > s->left)
        max = (size_t)s->left;
    size_t n;
    if (zt_decoder_read(s->d, buf, max, &n, &err) || n == 0) {
        ztd_log(ZTD_LOG_ERROR, "decoding %s: %s", s->entry->name, err.message);
        return MHD_CONTENT_READER_END_WITH_ERROR;
    }
    s->left -= n;
    return (ssize_t)n;
}

static void dstream_free(void *cls)
{
    dstream *s = cls;
    zt_decoder_free(s->d);
    ztd_entry_release(s->entry);
    free(s);
}

static struct MHD_Response *decode_response(const ztd_body *b, uint64_t start, uint64_t len)
{
    dstream *s = calloc(1, sizeof(*s));
    zt_error err;
    if (!s || zt_decoder_new(b->zf, b->zc, &s->d, &err)) {
        free(s);
        return NULL;
    }
    s->entry = b->entry;
    ztd_entry_retain(s->entry);
    s->skip = start;
    s->left = len;
    struct MHD_Response *resp =
        MHD_create_response_from_callback(len, BLOCK, dstream_read, s, dstream_free);
    if (!resp)
        dstream_free(s);
    return resp;
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
    return r > 0 ? r : MHD_CONTENT_READER_END_WITH_ERROR;
}

static int add_seg(mpart *m, uint64_t *at, char *text, uint64_t len, uint64_t src)
{
    if (!text && len == 0)
        return -1;
    m->segs[m->n++] = (struct seg){*at, len, text, src};
    *at += len;
    return 0;
}

static struct MHD_Response *multipart_response(const ztd_body *b, const ztd_plan *p,
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
    m->fd = b->kind == ZTD_BODY_FD ? dup(b->fd) : -1;
    m->mem = b->kind == ZTD_BODY_MEM ? b->mem : NULL;
    m->base = b->off;
    m->entry = b->entry;
    ztd_entry_retain(m->entry);
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
    struct MHD_Response *resp =
        MHD_create_response_from_callback(at, BLOCK, mpart_read, m, mpart_free);
    if (!resp)
        mpart_free(m);
    return resp;
}

/* ---- a file span copied through user space (TLS cannot use sendfile) */

typedef struct fstream {
    int fd;
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
    return r > 0 ? r : MHD_CONTENT_READER_END_WITH_ERROR;
}

static void fstream_free(void *cls)
{
    fstream *f = cls;
    close(f->fd);
    free(f);
}

static struct MHD_Response *copy_response(const ztd_body *b, uint64_t start, uint64_t len)
{
    fstream *f = malloc(sizeof(*f));
    if (!f || (f->fd = dup(b->fd)) < 0) {
        free(f);
        return NULL;
    }
    f->off = b->off + start;
    f->len = len;
    struct MHD_Response *resp =
        MHD_create_response_from_callback(len, 64 * 1024, fstream_read, f, fstream_free);
    if (!resp)
        fstream_free(f);
    return resp;
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

static struct MHD_Response *small_response(const ztd_body *b, uint64_t start, uint64_t len)
{
    char *buf = small_buf_get();
    if (!buf)
        return NULL;
    ssize_t r = pread(b->fd, buf, (size_t)len, (off_t)(b->off + start));
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

/* ---- single span */

static struct MHD_Response *span_response(const ztd_body *b, uint64_t start, uint64_t len)
{
    if (len == 0)
        return MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
    switch (b->kind) {
    case ZTD_BODY_FD: {
        if (b->tls)
            return copy_response(b, start, len);
        if (len <= ZTD_SMALL_BODY)
            return small_response(b, start, len);
        int fd = dup(b->fd);
        if (fd < 0)
            return NULL;
        struct MHD_Response *resp =
            MHD_create_response_from_fd_at_offset64(len, fd, b->off + start);
        if (!resp)
            close(fd);
        return resp;
    }
    case ZTD_BODY_MEM:
        return MHD_create_response_from_buffer((size_t)len, (void *)(b->mem + start),
                                               MHD_RESPMEM_PERSISTENT);
    case ZTD_BODY_DECODE:
        return decode_response(b, start, len);
    }
    return NULL;
}

static void validator_headers(struct MHD_Response *resp, const ztd_body *b)
{
    char date[32];
    if (b->etag[0])
        MHD_add_response_header(resp, "ETag", b->etag);
    if (!b->last_modified_text)
        ztd_http_date_format(b->last_modified, date);
    MHD_add_response_header(resp, "Last-Modified",
                            b->last_modified_text ? b->last_modified_text : date);
    if (b->cache_control && b->cache_control[0])
        MHD_add_response_header(resp, "Cache-Control", b->cache_control);
    if (b->vary_accept_encoding)
        MHD_add_response_header(resp, "Vary", "Accept-Encoding");
}

static void representation_headers(struct MHD_Response *resp, const ztd_body *b)
{
    validator_headers(resp, b);
    MHD_add_response_header(resp, "Accept-Ranges", "bytes");
    if (b->content_encoding)
        MHD_add_response_header(resp, "Content-Encoding", b->content_encoding);
    if (b->sha256) {
        char v[64] = "sha-256=:";
        int n = EVP_EncodeBlock((unsigned char *)v + 9, b->sha256, 32); /* 44 chars */
        v[9 + n] = ':';
        v[10 + n] = 0;
        MHD_add_response_header(resp, "Repr-Digest", v);
    }
    if (b->add_headers)
        b->add_headers(resp, b->ctx);
}

/* Is the file now shorter than the representation's end? (Small spans are
 * read with pread, which notices by itself; see span_failed.) */
static bool shrunk(const ztd_body *b)
{
    struct stat sb;
    return fstat(b->fd, &sb) == 0 && (uint64_t)sb.st_size < b->off + b->len;
}

/* A span could not be turned into a response: the file shrank, or memory ran out. */
static enum MHD_Result span_failed(struct MHD_Connection *c, ztd_req *r, const ztd_body *b)
{
    if (b->kind == ZTD_BODY_FD && shrunk(b))
        return ztd_error_hdr(c, r, 503, "file_changed", "Retry-After", "1",
                             "\"%s\" is shorter on disk than when it was opened (truncated in "
                             "place?); retry once it has been rescanned",
                             b->entry ? b->entry->name : "");
    return ztd_error(c, r, 500, "internal", "could not create the response");
}

/* RFC 9110 §13.1.3: an If-Modified-Since date later than now is ignored. */
static const char *future_date(const char *v)
{
    int64_t t;
    if (v && ztd_http_date_parse(v, &t) == 0 && t > (int64_t)time(NULL))
        return NULL;
    return v;
}

enum MHD_Result ztd_send_body(struct MHD_Connection *c, ztd_req *r, const ztd_body *b)
{
    /* A file cut short in place since the catalog opened it: sendfile would
     * stop at its end and libmicrohttpd would wait on the connection until the
     * timeout. Refuse now; the rescan the change triggers settles it. */
    if (b->kind == ZTD_BODY_FD && b->len > ZTD_SMALL_BODY && shrunk(b))
        return ztd_error_hdr(c, r, 503, "file_changed", "Retry-After", "1",
                             "\"%s\" is shorter on disk than when it was opened (truncated in "
                             "place?); retry once it has been rescanned",
                             b->entry ? b->entry->name : "");
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
    ztd_plan plan;
    ztd_plan_request(&h, &v, b->len, b->max_ranges, &plan);
    for (int i = 0; i < 3; i++)
        free(own[i]);
    /* Ranges of a stream decoded on the fly: one span (decode and skip), not several. */
    if (plan.status == ZTD_PLAN_PARTIAL && plan.nspans > 1 && b->kind == ZTD_BODY_DECODE)
        plan.status = ZTD_PLAN_FULL;
    char cr[96];
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
        return ztd_error(c, r, MHD_HTTP_PRECONDITION_FAILED, "precondition_failed",
                         "a precondition (If-Match or If-Unmodified-Since) does not hold; "
                         "current ETag is %s",
                         b->etag[0] ? b->etag : "none");
    case ZTD_PLAN_UNSATISFIABLE:
        ztd_content_range(cr, sizeof(cr), NULL, b->len);
        return ztd_error_hdr(c, r, MHD_HTTP_RANGE_NOT_SATISFIABLE, "range_not_satisfiable",
                             "Content-Range", cr,
                             "no requested range overlaps the %llu bytes of the representation",
                             (unsigned long long)b->len);
    case ZTD_PLAN_PARTIAL:
        if (plan.nspans > 1) {
            char ctype[128];
            uint64_t blen;
            struct MHD_Response *resp = multipart_response(b, &plan, ctype, sizeof(ctype), &blen);
            if (!resp)
                return ztd_error(c, r, 500, "internal", "out of memory");
            representation_headers(resp, b);
            MHD_add_response_header(resp, "Content-Type", ctype);
            return ztd_queue(c, r, MHD_HTTP_PARTIAL_CONTENT, resp, blen);
        } else {
            const ztd_span *sp = &plan.spans[0];
            struct MHD_Response *resp = span_response(b, sp->start, sp->len);
            if (!resp)
                return span_failed(c, r, b);
            representation_headers(resp, b);
            MHD_add_response_header(resp, "Content-Type", b->content_type);
            ztd_content_range(cr, sizeof(cr), sp, b->len);
            MHD_add_response_header(resp, "Content-Range", cr);
            return ztd_queue(c, r, MHD_HTTP_PARTIAL_CONTENT, resp, sp->len);
        }
    case ZTD_PLAN_FULL:
        break;
    }
    struct MHD_Response *resp = span_response(b, 0, b->len);
    if (!resp)
        return span_failed(c, r, b);
    representation_headers(resp, b);
    MHD_add_response_header(resp, "Content-Type", b->content_type);
    return ztd_queue(c, r, MHD_HTTP_OK, resp, b->len);
}
