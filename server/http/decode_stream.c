/*
 * Components decoded on the fly (see decode_stream.h). A decoded span is
 * checked and decoded up to its first bytes before its response is queued,
 * so that a component that does not decode gets a clear error, and a body
 * that fails later ends its connection at once.
 */
#include "http/decode_stream.h"
#include "core/log.h"
#include "http/response.h"
#include "store/decoders.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#define BLOCK (256u * 1024)
/* Decoded before the response is queued: a component that fails at its start
 * (or before the range) gets a clear error instead of a 200 cut short, and a
 * span this small needs no decoder once the response is made. */
#define DECODE_HEAD (64u * 1024)

struct ztd_dstream {
    zt_decoder *d;
    ztd_entry *entry; /* retained */
    const zt_file *zf;
    const zt_component *zc;
    uint64_t at, end; /* decoded offsets: the next byte to produce, the span's end */
};

ssize_t ztd_body_cut(int sock)
{
    /* libmicrohttpd 0.9.75 closes the connection when a content reader reports
     * an error, but under MHD_USE_TURBO without a shutdown(), and when the
     * error comes from the first read (made from its idle handler) it frees
     * the connection only at its next event: the client waited for
     * connection_timeout. The shutdown tells the client at once and wakes the
     * daemon's epoll to clean up. */
    if (sock >= 0)
        shutdown(sock, SHUT_RDWR);
    return MHD_CONTENT_READER_END_WITH_ERROR;
}

void ztd_dstream_free(ztd_dstream *s)
{
    if (!s)
        return;
    zt_decoder_free(s->d);
    ztd_entry_release(s->entry);
    free(s);
}

/* The decoder ends only at the component's end, which no span passes; but a
 * response must never be left waiting for bytes that will not come. */
static zt_status ended_early(zt_error *err, uint64_t at)
{
    memset(err, 0, sizeof(*err));
    err->code = ZT_E_SIZE;
    snprintf(err->message, sizeof(err->message), "decoded data ends early, at byte %llu",
             (unsigned long long)at);
    return ZT_E_SIZE;
}

zt_status ztd_dstream_read(ztd_dstream *s, char *buf, size_t cap, size_t *got, zt_error *err)
{
    *got = 0;
    if (cap > s->end - s->at)
        cap = (size_t)(s->end - s->at);
    while (*got < cap) {
        size_t n;
        zt_status st = zt_decoder_read(s->d, buf + *got, cap - *got, &n, err);
        if (!st && n == 0)
            st = ended_early(err, s->at);
        if (st) {
            ztd_decode_mark_bad(&s->entry->decode_marks, s->zf, s->zc, err);
            return st;
        }
        *got += n;
        s->at += n;
    }
    return ZT_OK;
}

static zt_status skip_to(ztd_dstream *s, uint64_t skip, zt_error *err)
{
    char scratch[16384];
    uint64_t end = s->end;
    s->end = skip;
    zt_status st = ZT_OK;
    while (!st && s->at < skip) {
        size_t n;
        st = ztd_dstream_read(s, scratch, sizeof(scratch), &n, err);
    }
    s->end = end;
    return st;
}

/* Frames are checked once per component, by the first response that decodes to
 * its end (where a frame shorter than declared would cut it). */
static zt_status check_frames(ztd_entry *e, const ztd_body_seg *g, uint64_t span_end, zt_error *err)
{
    if (span_end != g->len ||
        ztd_decode_get(&e->decode_marks, g->zf, g->zc) != ZTD_DECODE_UNCHECKED)
        return ZT_OK;
    zt_status st = g->stored_at_fd ? zt_component_check_frames_at(g->zf, g->zc, g->fd, g->off, err)
                                   : zt_component_check_frames(g->zf, g->zc, err);
    if (!st)
        ztd_decode_mark_ok(&e->decode_marks, g->zf, g->zc);
    else if (ztd_decode_is_data_error(st))
        ztd_decode_mark_bad(&e->decode_marks, g->zf, g->zc, err);
    return st;
}

ztd_dstream *ztd_dstream_open(ztd_entry *e, const ztd_body_seg *g, uint64_t start, uint64_t len,
                              zt_error *err)
{
    memset(err, 0, sizeof(*err));
    ztd_dstream *s = calloc(1, sizeof(*s));
    if (!s) {
        err->code = ZT_E_NOMEM;
        return NULL;
    }
    s->entry = e;
    ztd_entry_retain(e);
    s->zf = g->zf;
    s->zc = g->zc;
    s->end = start + len;
    zt_status st = check_frames(e, g, start + len, err);
    if (!st)
        st = g->stored_at_fd ? zt_decoder_new_at(g->zf, g->zc, g->fd, g->off, &s->d, err)
                             : zt_decoder_new(g->zf, g->zc, &s->d, err);
    if (!st)
        st = skip_to(s, start, err);
    if (st) {
        ztd_dstream_free(s);
        return NULL;
    }
    return s;
}

static void refuse_undecodable(ztd_body_fail *f, const ztd_entry *e, zt_status code,
                               const char *why)
{
    f->err = ztd_err_of_zt(code, ZTD_OP_DECODE);
    snprintf(f->msg, sizeof(f->msg),
             "\"%s\": the component cannot be decoded: %s; its stored bytes are served to "
             "requests with Accept-Encoding: zstd",
             e->name, why);
}

bool ztd_dstream_refused(ztd_entry *e, const ztd_body_seg *g, ztd_body_fail *f)
{
    zt_status code;
    const char *why = ztd_decode_why(&e->decode_marks, g->zf, g->zc, &code);
    if (why)
        refuse_undecodable(f, e, code, why);
    return why != NULL;
}

void ztd_dstream_failed(ztd_entry *e, const ztd_body_seg *g, const zt_error *err, ztd_body_fail *f)
{
    if (ztd_decode_is_data_error(err->code)) {
        ztd_decode_mark_bad(&e->decode_marks, g->zf, g->zc, err);
        refuse_undecodable(f, e, err->code, err->message);
    } else if (ztd_err_of_zt(err->code, ZTD_OP_DECODE) == ZTD_ERR_FILE_CHANGED) {
        f->err = ZTD_ERR_FILE_CHANGED;
        snprintf(f->msg, sizeof(f->msg),
                 "\"%s\" could not be read (%s); retry once it has been rescanned", e->name,
                 err->message);
    } /* else out of memory: the caller's 500 */
}

bool ztd_dstream_slot(unsigned max_decode_streams, ztd_body_fail *f)
{
    if (ztd_decode_acquire(max_decode_streams))
        return true;
    f->err = ZTD_ERR_TOO_MANY_DECODERS;
    snprintf(f->msg, sizeof(f->msg),
             "%u zstd components are being decoded already (max_decode_streams); retry, or "
             "accept zstd (Accept-Encoding: zstd) to get the stored bytes",
             max_decode_streams);
    return false;
}

/* ---- the response for one decoded span */

typedef struct dresp {
    ztd_dstream *s;
    char *head; /* decoded ahead, sent first */
    size_t head_len, head_pos;
    int sock;
} dresp;

static void dresp_free(void *cls)
{
    dresp *x = cls;
    ztd_dstream_free(x->s);
    free(x->head);
    free(x);
    ztd_decode_release(); /* after the decoder's memory is freed: it may trim */
}

static ssize_t dresp_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    dresp *x = cls;
    (void)pos; /* libmicrohttpd reads in order */
    if (x->head) {
        size_t n = x->head_len - x->head_pos < max ? x->head_len - x->head_pos : max;
        memcpy(buf, x->head + x->head_pos, n);
        if ((x->head_pos += n) == x->head_len) {
            free(x->head);
            x->head = NULL;
        }
        return (ssize_t)n;
    }
    if (x->s->at == x->s->end)
        return MHD_CONTENT_READER_END_OF_STREAM;
    uint64_t at = x->s->at;
    size_t n;
    zt_error err;
    if (ztd_dstream_read(x->s, buf, max, &n, &err) == ZT_OK)
        return (ssize_t)n;
    ztd_log(ZTD_LOG_ERROR,
            "decoding \"%s\" failed after %llu decoded bytes; response cut short: %s",
            x->s->entry->name, (unsigned long long)at, err.message);
    return ztd_body_cut(x->sock);
}

struct MHD_Response *ztd_decode_response(const ztd_req *r, ztd_entry *e, const ztd_body_seg *g,
                                         uint64_t start, uint64_t len, int sock,
                                         unsigned max_decode_streams, ztd_body_fail *f)
{
    if (ztd_dstream_refused(e, g, f))
        return NULL;
    if (!strcmp(r->method, "HEAD"))
        return ztd_head_response(len);
    if (!ztd_dstream_slot(max_decode_streams, f))
        return NULL;
    dresp *x = calloc(1, sizeof(*x));
    zt_error err = {0};
    if (!x || !(x->s = ztd_dstream_open(e, g, start, len, &err))) {
        if (x)
            ztd_dstream_failed(e, g, &err, f);
        free(x);
        ztd_decode_release();
        return NULL;
    }
    x->sock = sock;
    x->head_len = len < DECODE_HEAD ? (size_t)len : DECODE_HEAD;
    size_t n;
    if (!(x->head = malloc(x->head_len)) ||
        ztd_dstream_read(x->s, x->head, x->head_len, &n, &err)) {
        if (x->head)
            ztd_dstream_failed(e, g, &err, f);
        dresp_free(x);
        return NULL;
    }
    if (x->s->at == x->s->end) { /* all of it decoded: no decoder to keep */
        struct MHD_Response *resp =
            MHD_create_response_from_buffer_with_free_callback(x->head_len, x->head, free);
        if (resp)
            x->head = NULL;
        dresp_free(x);
        return resp;
    }
    return ztd_reader_response(len, BLOCK, dresp_read, x, dresp_free);
}
