/*
 * Opening a remote file. The first round trip asks for both ends of the file
 * at once: the first 16 bytes (the whole open window for a .safetensors URL,
 * whose header is at the start) and the last open_window bytes, which hold
 * the footer and usually the whole manifest; their Content-Range gives the
 * size. libztensor's zt_manifest_locate says where the manifest is; when the
 * window did not hold it, one more request fetches exactly that. Then
 * zt_open_manifest builds and validates the model from those bytes, and the
 * validator of the first answers is pinned for every later request.
 */
#include "remote_internal.h"

#include <stdlib.h>
#include <string.h>

#define URL_MAX 8192

typedef struct window {
    uint8_t *p;
    uint64_t at; /* file offset of p[0] */
    size_t len, cap;
} window;

static int to_window(void *ud, uint64_t at, const uint8_t *p, size_t n, zt_error *err)
{
    window *w = ud;
    (void)err;
    if (w->len == 0)
        w->at = at;
    if (n > w->cap - w->len)
        return -1; /* cannot happen: the transport never delivers more than asked */
    memcpy(w->p + w->len, p, n);
    w->len += n;
    return 0;
}

static zt_status window_new(window *w, size_t cap, zt_error *err, const char *url)
{
    memset(w, 0, sizeof(*w));
    w->cap = cap;
    if (!(w->p = malloc(cap ? cap : 1)))
        return ztr__fail(err, ZT_E_NOMEM, url, NULL, NULL, 0, 0,
                         "out of memory for %zu bytes of the file's ends", cap);
    return ZT_OK;
}

/* Fetch one range [start, start + len) (or the last len bytes) into w. */
static zt_status fetch(zt_remote_file *rf, const ztr_pin *pin, uint64_t start, uint64_t len,
                       bool suffix, double deadline, window *w, zt_error *err)
{
    zt_status st = window_new(w, (size_t)len, err, rf->url);
    if (st)
        return st;
    ztr_xfer x = {.start = start, .len = len, .suffix = suffix, .on_body = to_window, .ud = w};
    ztr_batch b = {.r = rf->r,
                   .url = rf->url,
                   .pin = pin,
                   .x = &x,
                   .n = 1,
                   .conns = 1,
                   .deadline = deadline,
                   .err = err};
    return ztr__run(&b);
}

/* Round one: both ends at once, no validator yet; the answers must agree. */
static zt_status first_round(zt_remote_file *rf, bool st_hint, double deadline, window *head,
                             window *tail, zt_error *err)
{
    size_t wsize = rf->r->opt.open_window;
    zt_status st = window_new(head, wsize, err, rf->url);
    if (!st && !st_hint)
        st = window_new(tail, wsize, err, rf->url);
    if (st)
        return st;
    ztr_xfer x[2] = {
        {.start = 0,
         .len = st_hint ? wsize : 16,
         .accept_full = true,
         .on_body = to_window,
         .ud = head},
        {.len = wsize, .suffix = true, .accept_full = true, .on_body = to_window, .ud = tail},
    };
    ztr_batch b = {.r = rf->r,
                   .url = rf->url,
                   .x = x,
                   .n = st_hint ? 1 : 2,
                   .conns = 2,
                   .deadline = deadline,
                   .err = err};
    if ((st = ztr__run(&b)))
        return st;
    if (!st_hint &&
        (x[0].total != x[1].total || strcmp(x[0].etag, x[1].etag) || strcmp(x[0].lm, x[1].lm)))
        return ztr__fail(err, ZT_E_CHANGED, rf->url, NULL, NULL, 0, 0,
                         "the file changed while being opened (%llu bytes, %s, then %llu bytes, "
                         "%s)",
                         (unsigned long long)x[0].total, x[0].etag[0] ? x[0].etag : x[0].lm,
                         (unsigned long long)x[1].total, x[1].etag[0] ? x[1].etag : x[1].lm);
    /* A server that ignores Range: keep the whole file (at most open_window). */
    window *full = x[0].full ? head : !st_hint && x[1].full ? tail : NULL;
    if (full) {
        rf->whole = full->p;
        full->p = NULL;
        free(head->p);
        head->p = NULL;
        *head = (window){.p = rf->whole, .len = full->len, .cap = full->cap};
    }
    ztr_pin *pin = &rf->pin;
    memcpy(pin->etag, x[0].etag, sizeof(pin->etag));
    memcpy(pin->lm, x[0].lm, sizeof(pin->lm));
    pin->strong = ztr__etag_kind(pin->etag, strlen(pin->etag)) == 1;
    pin->size = x[0].total;
    return ZT_OK;
}

/* The bytes held at the file's two ends, as zt_manifest_locate wants them. */
static void ends(const window *head, const window *tail, uint64_t size, const uint8_t **h,
                 size_t *hl, const uint8_t **t, size_t *tl)
{
    *h = head->p;
    *hl = head->len;
    *t = NULL;
    *tl = 0;
    if (head->len == size) { /* the whole file: it is also the tail */
        *t = head->p;
        *tl = head->len;
    } else if (tail->p && tail->len && tail->at + tail->len == size) {
        *t = tail->p;
        *tl = tail->len;
    }
}

/* Locate the manifest and fetch what the ends did not hold; at most two more
 * requests (a missing tail, then a manifest larger than the window). */
static zt_status load_manifest(zt_remote_file *rf, double deadline, window *head, window *tail,
                               zt_error *err)
{
    const zt_open_options *oo = &rf->r->opt.open;
    uint64_t size = rf->pin.size;
    for (int round = 0; round < 3; round++) {
        const uint8_t *h, *t;
        size_t hl, tl;
        ends(head, tail, size, &h, &hl, &t, &tl);
        zt_file_kind kind = ZT_KIND_ZT_1_2;
        uint64_t off, len;
        zt_status st = zt_manifest_locate(h, hl, t, tl, size, oo, &kind, &off, &len, err);
        bool want_tail = st == ZT_E_ARG && kind != ZT_KIND_SAFETENSORS && hl >= 16 && !tl;
        if (st && !want_tail) {
            ztr__add_url(err, rf->url);
            return st;
        }
        window *w = kind == ZT_KIND_SAFETENSORS ? head : tail;
        uint64_t need_start = kind == ZT_KIND_SAFETENSORS ? 0 : off;
        uint64_t need_end = kind == ZT_KIND_SAFETENSORS ? off + len : size;
        if (want_tail) {
            need_start = size > rf->r->opt.open_window ? size - rf->r->opt.open_window : 0;
            need_end = size;
        } else if (need_end <= hl || (tl && need_start >= size - tl)) {
            st = zt_open_manifest(h, hl, t, tl, size, oo, &rf->zf, err);
            if (st)
                ztr__add_url(err, rf->url);
            return st;
        }
        free(w->p);
        if ((st = fetch(rf, &rf->pin, need_start, need_end - need_start, false, deadline, w, err)))
            return st;
    }
    return ztr__fail(err, ZT_E_HTTP, rf->url, NULL, NULL, 0, 0,
                     "the manifest could not be located in three rounds of requests");
}

zt_status zt_remote_open_in(zt_remote *r, const char *url, zt_remote_file **out, zt_error *err)
{
    if (!r || !url || !out)
        return ztr__fail(err, ZT_E_ARG, url, NULL, NULL, 0, 0, "NULL argument");
    *out = NULL;
    char *data = malloc(URL_MAX);
    zt_remote_file *rf = calloc(1, sizeof(*rf));
    if (!data || !rf) {
        free(data);
        free(rf);
        return ztr__fail(err, ZT_E_NOMEM, url, NULL, NULL, 0, 0, "out of memory");
    }
    rf->r = r;
    rf->url = data;
    bool st_hint;
    const char *why;
    if (ztr__data_url(url, r->opt.flags, data, URL_MAX, &st_hint, &why)) {
        zt_remote_close(rf);
        return ztr__fail(err, ZT_E_ARG, NULL, NULL, NULL, 0, 0, "%s: %.300s", why, url);
    }
    double deadline = ztr__deadline(r);
    window head = {0}, tail = {0};
    zt_status st = first_round(rf, st_hint, deadline, &head, &tail, err);
    if (!st)
        st = load_manifest(rf, deadline, &head, &tail, err);
    if (st) {
        if (head.p != rf->whole)
            free(head.p);
        free(tail.p);
        zt_remote_close(rf);
        return st;
    }
    /* Kept: the bytes the model was built from, which a pull compares. */
    if (head.p != rf->whole)
        rf->head = head.p;
    rf->head_len = head.len;
    rf->tail = tail.p;
    rf->tail_at = tail.at;
    rf->tail_len = tail.p ? tail.len : 0;
    *out = rf;
    return ZT_OK;
}

zt_status zt_remote_open(const char *url, const zt_remote_options *opt, zt_remote_file **out,
                         zt_error *err)
{
    if (!out)
        return ztr__fail(err, ZT_E_ARG, url, NULL, NULL, 0, 0, "NULL argument");
    *out = NULL;
    zt_remote *r;
    zt_status st = zt_remote_new(opt, &r, err);
    if (st)
        return st;
    if ((st = zt_remote_open_in(r, url, out, err))) {
        zt_remote_free(r);
        return st;
    }
    (*out)->own_session = true;
    return ZT_OK;
}

void zt_remote_close(zt_remote_file *rf)
{
    if (!rf)
        return;
    zt_close(rf->zf);
    free(rf->whole);
    free(rf->head);
    free(rf->tail);
    if (rf->own_session)
        zt_remote_free(rf->r);
    free(rf->url);
    free(rf);
}

void ztr__file_forget_ends(zt_remote_file *rf)
{
    free(rf->head);
    free(rf->tail);
    rf->head = rf->tail = NULL;
    rf->tail_len = 0;
    rf->tail_at = 0;
    if (!rf->whole)
        rf->head_len = 0;
}

const zt_file *zt_remote_file_zt(const zt_remote_file *rf)
{
    return rf->zf;
}

const char *zt_remote_file_url(const zt_remote_file *rf)
{
    return rf->url;
}

const char *zt_remote_file_etag(const zt_remote_file *rf)
{
    return rf->pin.strong ? rf->pin.etag : "";
}

const char *zt_remote_file_last_modified(const zt_remote_file *rf)
{
    return rf->pin.lm;
}
