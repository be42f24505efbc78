/*
 * Fills (see upstream.h): a component of an upstream file fetched into its
 * cache item on the store's own threads, each with a libztensor-remote
 * session of its own, checked against its digest, then published. On the
 * same threads, checks: an item found in the cache directory at start-up is
 * hashed again against the component's digest before its first use, and
 * fetched again when its bytes do not match (upstream/items.h).
 */
#include "core/hex.h"
#include "core/log.h"
#include "upstream/internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- fills */

typedef struct fill {
    ztd_job job;
    ztd_upstream *u;
    ztd_entry *e;
    const zt_component *c; /* NULL: the whole of a plain file (its sha256 in e, if known) */
    ztd_cache_item *it;
    zt_hasher *h;
    zt_decoder *dec; /* a v2 part whose digest is over its decoded bytes */
    zt_status dec_st;
    uint64_t got;
    int write_errno;
    uint8_t *buf; /* bytes not yet written, up to FILL_WRITE */
    size_t nbuf, cap;
} fill;

/* Bytes arrive in libcurl's pieces (16 KiB). Written as they come, the page
 * cache holds the item in 16 KiB folios, and every later sendfile of it pays
 * for that: a 512 MiB item written 16 KiB at a time went out at 6.5-8.6 GB/s,
 * the same bytes written 2 MiB at a time at 9.2-13.7 GB/s (curl from a warm
 * tier on loopback). So they are gathered and written 2 MiB at a time. */
#define FILL_WRITE ((size_t)2 << 20)

/* Write what is gathered: readers waiting on the item see it from now on. */
static int flush(fill *f)
{
    if (f->nbuf && ztd_cache_write(f->it, f->buf, f->nbuf) != 0) {
        f->write_errno = errno ? errno : EIO;
        return -1;
    }
    f->nbuf = 0;
    return 0;
}

/* What the item is, for messages: the component's role, or the file's bytes. */
static const char *what(const fill *f)
{
    return f->c ? zt_component_role(f->c) : "(the file's bytes)";
}

/* The digest the bytes must match, as text. */
static const char *want_text(const fill *f, char *buf, size_t cap)
{
    if (f->c)
        return zt_component_digest(f->c);
    const uint8_t *sha = ztd_entry_plain_sha256_known(f->e);
    if (!sha || cap < 72)
        return "?";
    memcpy(buf, "sha256:", 7);
    ztd_hex_encode(sha, 32, buf + 7);
    buf[71] = 0;
    return buf;
}

static int hash_sink(void *ud, const void *data, size_t n)
{
    zt_hasher_update(ud, data, n);
    return 0;
}

/* Stored bytes into the digest: through the decoder when the digest is over
 * the decoded bytes. */
static void hash_bytes(fill *f, const uint8_t *p, size_t n)
{
    if (f->dec && !f->dec_st) {
        zt_error ze;
        f->dec_st = zt_decoder_push(f->dec, p, n, hash_sink, f->h, &ze);
    } else if (f->h && !f->dec) {
        zt_hasher_update(f->h, p, n);
    }
}

static int fill_bytes(void *ud, uint64_t pos, const uint8_t *p, size_t n)
{
    fill *f = ud;
    (void)pos; /* in order: pos == f->got */
    for (size_t done = 0; done < n;) {
        size_t k = n - done < f->cap - f->nbuf ? n - done : f->cap - f->nbuf;
        memcpy(f->buf + f->nbuf, p + done, k);
        f->nbuf += k;
        done += k;
        if (f->nbuf == f->cap && flush(f) != 0)
            return -1;
    }
    hash_bytes(f, p, n);
    f->got += n;
    COUNT(f->u, bytes, n);
    return 0;
}

static void fill_failed(fill *f, ztd_err err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void fill_failed(fill *f, ztd_err err, const char *fmt, ...)
{
    struct ztd_upstream_entry *up = f->e->up;
    char m[sizeof(up->fill_msg)];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m, sizeof(m), fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&up->mu);
    up->fill_err = err;
    memcpy(up->fill_msg, m, sizeof(m));
    pthread_mutex_unlock(&up->mu);
    ztd_log(ZTD_LOG_WARN, "%s", m);
}

/* Did the bytes hash to the manifest's digest (over the decoded bytes for an
 * encoded v2 part, as libztensor-remote checks them)? Stored bytes that do
 * not decode cannot match it. */
static bool digest_ok(fill *f)
{
    if (!f->h)
        return true;
    zt_error ze;
    if (f->dec && !f->dec_st)
        f->dec_st = zt_decoder_push_end(f->dec, hash_sink, f->h, &ze);
    if (f->dec_st)
        return false;
    uint8_t got[32];
    size_t n = zt_hasher_final(f->h, got), want_n = 32;
    const uint8_t *want =
        f->c ? zt_component_digest_bytes(f->c, &want_n) : ztd_entry_plain_sha256_known(f->e);
    return want && n == want_n && !memcmp(got, want, n);
}

static void fill_free(fill *f)
{
    zt_hasher_free(f->h);
    zt_decoder_free(f->dec);
    free(f->buf);
    ztd_cache_item_release(f->it);
    ztd_entry_release(f->e);
    free(f);
}

static void fill_run(ztd_job *job)
{
    fill *f = (fill *)job;
    ztd_upstream *u = f->u;
    const zt_component *c = f->c;
    uint64_t off = c ? zt_component_offset(c) : 0, len = c ? zt_component_length(c) : f->e->size;
    zt_remote *s = ztd_up_thread_session(u);
    zt_error ze = {0};
    /* the root's, or the part's shard's; a plain file's own */
    zt_remote_file *rf = c ? ztd_up_file_of(f->e, c) : f->e->up->rf;
    char wt[80];
    zt_status st =
        s && rf ? zt_remote_read_stream(s, rf, off, len, fill_bytes, f, &ze) : ZT_E_NOMEM;
    if (!st)
        flush(f);
    free(f->buf); /* not held through the digest check and fsync below */
    f->buf = NULL;
    bool ok = false;
    if (f->write_errno) {
        fill_failed(f, f->write_errno == ENOSPC ? ZTD_ERR_INSUFFICIENT_STORAGE : ZTD_ERR_INTERNAL,
                    "upstream cache: writing component \"%s\" of \"%s\" failed: %s", what(f),
                    f->e->name, strerror(f->write_errno));
    } else if (st) {
        COUNT(u, errors, 1);
        char m[400];
        ztd_err e = ztd_up_err_of_remote(u, f->e->name, &ze, m, sizeof(m));
        if (st == ZT_E_CHANGED)
            ztd_up_expire(u, f->e);
        fill_failed(f, e == ZTD_ERR_FILE_INVALID ? ZTD_ERR_UPSTREAM_FAILED : e, "%s", m);
    } else if (f->got != len) {
        fill_failed(f, ZTD_ERR_UPSTREAM_FAILED,
                    "upstream %s: %s: %" PRIu64 " of %" PRIu64 " bytes of component \"%s\" came",
                    u->base, f->e->name, f->got, len, what(f));
    } else if (!digest_ok(f)) {
        COUNT(u, digest_failures, 1);
        fill_failed(f, ZTD_ERR_UPSTREAM_FAILED,
                    "upstream %s: the bytes of component \"%s\" of \"%s\" do not hash to %s; "
                    "nothing was cached",
                    u->base, what(f), f->e->name, want_text(f, wt, sizeof(wt)));
    } else {
        ok = true;
    }
    ztd_cache_state end = ztd_cache_fill_done(f->it, ok);
    if (ok && end != ZTD_CACHE_COMPLETE)
        fill_failed(f, ZTD_ERR_INSUFFICIENT_STORAGE,
                    "upstream cache: component \"%s\" of \"%s\" could not be made durable", what(f),
                    f->e->name);
    if (!ok || end != ZTD_CACHE_COMPLETE)
        COUNT(u, fill_failures, 1);
    COUNT(u, fills_running, (uint64_t)-1);
    fill_free(f);
}

static void item_key(const ztd_entry *e, const zt_component *c, ztd_cache_key *k)
{
    if (!c) { /* a plain file: by its sha256 when the origin says it, else by version */
        const uint8_t *sha = ztd_entry_plain_sha256_known(e);
        if (sha) {
            k->kind = ZTD_CACHE_BLOB;
            memcpy(k->id, sha, 32);
        } else {
            ztd_cache_part_key(k, e->up->url, e->up->validator, "", "(plain file)");
        }
        return;
    }
    size_t n = 0;
    const uint8_t *d = zt_component_digest_bytes(c, &n);
    /* A sha256 names the stored bytes unless it is over an encoded part's
     * decoded bytes (v2): those are keyed as digest-less ones. */
    bool of_stored = zt_component_digest_scope(c) == ZT_DIGEST_OF_STORED ||
                     zt_component_encoding(c) == ZT_ENC_RAW;
    if (zt_component_digest_kind(c) == ZT_DIGEST_SHA256 && d && n == 32 && of_stored) {
        k->kind = ZTD_CACHE_BLOB;
        memcpy(k->id, d, 32);
        return;
    }
    char where[64];
    snprintf(where, sizeof(where), "@%" PRIu64, zt_component_offset(c));
    const zt_remote_file *rf = ztd_up_file_of(e, c); /* a v2 part's shard: its own version */
    if (rf && rf != e->up->rf)
        ztd_cache_part_key(k, zt_remote_file_url(rf), ztd_up_validator(rf), where,
                           zt_component_role(c));
    else
        ztd_cache_part_key(k, e->up->url, e->up->validator, where, zt_component_role(c));
}

/* A job for component c of e and its item: the buffer, the hasher (and the
 * decoder of a digest over decoded bytes), references taken; NULL when out
 * of memory. */
static fill *fill_new(ztd_upstream *u, ztd_entry *e, const zt_component *c, ztd_cache_item *it)
{
    fill *f = calloc(1, sizeof(*f));
    if (!f)
        return NULL;
    zt_digest_kind dk = !c ? ZT_DIGEST_NONE : zt_component_digest_kind(c);
    if (!c && ztd_entry_plain_sha256_known(e))
        dk = ZT_DIGEST_SHA256;
    uint64_t len = c ? zt_component_length(c) : e->size;
    f->cap = len < FILL_WRITE ? (size_t)len + !len : FILL_WRITE;
    bool of_decoded = c && zt_component_digest_scope(c) == ZT_DIGEST_OF_DECODED &&
                      zt_component_encoding(c) != ZT_ENC_RAW;
    if (of_decoded && zt_component_encoding(c) == ZT_ENC_OTHER)
        dk = ZT_DIGEST_NONE; /* nothing here decodes it: its stored bytes (for /raw) go unchecked */
    zt_error ze;
    if (!(f->buf = malloc(f->cap)) || (dk != ZT_DIGEST_NONE && !(f->h = zt_hasher_new(dk))) ||
        (f->h && of_decoded && zt_decoder_new(e->file, c, &f->dec, &ze) != ZT_OK)) {
        zt_hasher_free(f->h);
        free(f->buf);
        free(f);
        return NULL;
    }
    f->u = u;
    f->e = e;
    ztd_entry_retain(e);
    f->c = c;
    f->it = it;
    ztd_cache_item_retain(it);
    return f;
}

static ztd_err start_fill(ztd_upstream *u, ztd_entry *e, const zt_component *c, ztd_cache_item *it)
{
    fill *f = fill_new(u, e, c, it);
    if (!f)
        return ZTD_ERR_INTERNAL;
    f->job.run = fill_run;
    COUNT(u, fills, 1);
    COUNT(u, fills_running, 1);
    ztd_workq_submit(u->fills, &f->job);
    return ZTD_ERR_NONE;
}

/* ---- checks */

/* Hash the item's file as a fill hashes what it receives. */
static bool file_matches(fill *f)
{
    int fd = ztd_cache_item_fd(f->it);
    uint64_t size = ztd_cache_item_size(f->it);
    for (uint64_t at = 0; at < size;) {
        size_t want = size - at < f->cap ? (size_t)(size - at) : f->cap;
        ssize_t n = pread(fd, f->buf, want, (off_t)at);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            ztd_log(ZTD_LOG_WARN,
                    "upstream cache: reading a cached item failed at byte %" PRIu64 ": %s", at,
                    n < 0 ? strerror(errno) : "short file");
            return false;
        }
        hash_bytes(f, f->buf, (size_t)n);
        at += (uint64_t)n;
    }
    return digest_ok(f);
}

/* An item found at start-up: served only once its bytes hash to the
 * component's digest (an item without one: its size matched at open). */
static void check_run(ztd_job *job)
{
    fill *f = (fill *)job;
    char wt[80];
    bool ok = !f->h || file_matches(f);
    if (!ok)
        ztd_log(ZTD_LOG_WARN,
                "upstream cache: the cached bytes of component \"%s\" of \"%s\" do not hash to "
                "%s (changed in the cache directory while no ztensord held it): fetching them "
                "again",
                what(f), f->e->name, want_text(f, wt, sizeof(wt)));
    ztd_cache_state st = ztd_cache_check_done(f->it, ok);
    if (st == ZTD_CACHE_FILL && start_fill(f->u, f->e, f->c, f->it) != ZTD_ERR_NONE)
        ztd_cache_fill_done(f->it, false);
    fill_free(f);
}

static ztd_err start_check(ztd_upstream *u, ztd_entry *e, const zt_component *c, ztd_cache_item *it)
{
    fill *f = fill_new(u, e, c, it);
    if (!f)
        return ZTD_ERR_INTERNAL;
    f->job.run = check_run;
    ztd_workq_submit(u->fills, &f->job);
    return ZTD_ERR_NONE;
}

static ztd_err item_of(ztd_upstream *u, ztd_entry *e, const zt_component *c, ztd_cache_item **out,
                       char *msg, size_t cap);

ztd_err ztd_upstream_item(ztd_upstream *u, ztd_entry *e, const zt_component *c,
                          ztd_cache_item **out, char *msg, size_t cap)
{
    if (!ztd_upstream_part_servable(e, c)) {
        snprintf(
            msg, cap,
            "component \"%s\" of \"%s\" is in shard %d, which is missing or wrong at the upstream",
            zt_component_role(c), e->name, zt_component_shard(c));
        return ZTD_ERR_SHARD_UNAVAILABLE;
    }
    return item_of(u, e, c, out, msg, cap);
}

ztd_err ztd_upstream_plain_item(ztd_upstream *u, ztd_entry *e, ztd_cache_item **out, char *msg,
                                size_t cap)
{
    return item_of(u, e, NULL, out, msg, cap);
}

/* The item of c (NULL: the whole of plain file e), its fill or check started. */
static ztd_err item_of(ztd_upstream *u, ztd_entry *e, const zt_component *c, ztd_cache_item **out,
                       char *msg, size_t cap)
{
    ztd_cache_key k;
    item_key(e, c, &k);
    int eno = 0;
    uint64_t size = c ? zt_component_length(c) : e->size;
    ztd_cache_state st = ztd_cache_acquire(u->cache, &k, size, out, &eno);
    switch (st) {
    case ZTD_CACHE_COMPLETE:
    case ZTD_CACHE_FILLING:
        return ZTD_ERR_NONE;
    case ZTD_CACHE_CHECK:
        if (start_check(u, e, c, *out) == ZTD_ERR_NONE)
            return ZTD_ERR_NONE;
        if (ztd_cache_check_done(*out, false) ==
            ZTD_CACHE_FILL) /* the file stays unchecked: it goes */
            ztd_cache_fill_done(*out, false);
        ztd_cache_item_release(*out);
        *out = NULL;
        snprintf(msg, cap, "out of memory");
        return ZTD_ERR_INTERNAL;
    case ZTD_CACHE_FILL:
        if (start_fill(u, e, c, *out) == ZTD_ERR_NONE)
            return ZTD_ERR_NONE;
        ztd_cache_fill_done(*out, false);
        ztd_cache_item_release(*out);
        *out = NULL;
        snprintf(msg, cap, "out of memory");
        return ZTD_ERR_INTERNAL;
    case ZTD_CACHE_FULL:
        snprintf(msg, cap,
                 "the upstream cache (cache_size) cannot make room for the %" PRIu64
                 " bytes of component \"%s\" of \"%s\": everything in it is being sent",
                 size, c ? zt_component_role(c) : "(the file's bytes)", e->name);
        return ZTD_ERR_CACHE_FULL;
    case ZTD_CACHE_IOERR:
        snprintf(msg, cap, "the upstream cache failed: %s", strerror(eno));
        return ztd_err_of_errno(eno, ZTD_ERR_INTERNAL);
    case ZTD_CACHE_FAILED:
    default:
        snprintf(msg, cap,
                 "component \"%s\" of \"%s\" is cached with another size than the manifest "
                 "says; retry",
                 c ? zt_component_role(c) : "(the file's bytes)", e->name);
        return ZTD_ERR_UPSTREAM_FAILED;
    }
}

bool ztd_upstream_item_complete(ztd_upstream *u, const ztd_entry *e, const zt_component *c)
{
    ztd_cache_key k;
    item_key(e, c, &k);
    return ztd_cache_is_complete(u->cache, &k);
}

ztd_err ztd_upstream_fill_error(ztd_entry *e, char *msg, size_t cap)
{
    struct ztd_upstream_entry *up = e->up;
    pthread_mutex_lock(&up->mu);
    ztd_err err = up->fill_err;
    snprintf(msg, cap, "%s", up->fill_msg);
    pthread_mutex_unlock(&up->mu);
    return err;
}
