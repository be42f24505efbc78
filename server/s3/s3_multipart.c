/*
 * S3 multipart uploads (s3_multipart.h): the table of uploads, the parts'
 * staging files, and Complete's concatenation, check and publish.
 */
#include "s3/s3_multipart.h"
#include "core/log.h"
#include "core/metrics.h"
#include "core/partition.h"
#include "core/wbuf.h"
#include "http/headers.h"
#include "http/offload.h"
#include "http/response.h"
#include "s3/s3_error.h"
#include "s3/s3_mpu_xml.h"
#include "s3/s3_sums.h"
#include "store/body_hash.h"
#include "store/publish.h"
#include "store/put_file.h"
#include "store/staging.h"
#include "store/uploads.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_UPLOADS 1000
#define MIN_PART (5ull << 20)
#define MAX_PART (5ull << 30)
#define WBUF (1u << 20)
#define DOC_MAX (2u << 20) /* 10,000 parts of about 100 bytes */

typedef struct part {
    int number;
    char name[ZTD_STAGING_NAME_MAX]; /* its own file, or "" (in the assembly file at off) */
    uint64_t off;
    uint64_t size;
    char etag[40]; /* 32 hex (the part's MD5), or 32 hex "-1" (not an MD5) */
    int64_t mtime_ns;
} part;

typedef struct mpu {
    char id[33];
    const ztd_bucket *bucket;
    char rel[2 * ZTD_PATH_MAX + 2];
    char key[ZTD_PATH_MAX + 1];
    int64_t initiated_ns;
    ztd_staging *st;
    part *parts; /* sorted by number */
    size_t n, cap;
    bool completing;
    /* The assembly file: when the parts have one size (psize, all but the
     * last), part N is written straight to offset (N-1) * psize, so that
     * Complete publishes the file itself instead of copying; its contiguous
     * head of parts is hashed as it arrives (body_hash.h). slot[N] says
     * what is at part N's place. */
    int afd;
    char aname[ZTD_STAGING_NAME_MAX];
    uint64_t psize;
    uint8_t *slot;
    unsigned writers;  /* parts being written to it */
    int head;          /* parts 1..head are in it, each psize bytes but the last */
    uint64_t head_end; /* their bytes */
    ztd_body_hash *bh;
    struct mpu *next;
} mpu;

enum { SLOT_FREE, SLOT_BUSY, SLOT_FULL, SLOT_SPENT }; /* SPENT: never written again */

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static mpu *g_list;
static size_t g_count;

static int64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* Locked: the upload id names for q's bucket and key, or NULL. */
static mpu *find_locked(const char *id, const ztd_s3_req *q)
{
    for (mpu *m = g_list; m; m = m->next)
        if (!strcmp(m->id, id) && m->bucket == q->bucket && !strcmp(m->key, q->key))
            return m;
    return NULL;
}

static mpu *find_id_locked(const char *id)
{
    for (mpu *m = g_list; m; m = m->next)
        if (!strcmp(m->id, id))
            return m;
    return NULL;
}

typedef struct {
    const mpu *m;
    int number;
} part_key;

static bool part_below(const void *ctx, size_t i)
{
    const part_key *k = ctx;
    return k->m->parts[i].number < k->number;
}

/* Locked: part number k of m, or NULL. */
static part *find_part_locked(mpu *m, int k)
{
    part_key key = {m, k};
    size_t lo = ztd_partition_point(0, m->n, part_below, &key);
    return lo < m->n && m->parts[lo].number == k ? &m->parts[lo] : NULL;
}

/* Locked: extend the assembly file's head over the parts now in place, and
 * tell its hasher. A part shorter than psize ends the head for good. */
static void head_advance_locked(mpu *m)
{
    while (m->head < ZTD_S3_MAX_PARTS && m->head_end == (uint64_t)m->head * m->psize &&
           m->slot[m->head + 1] == SLOT_FULL) {
        const part *p = find_part_locked(m, m->head + 1);
        if (!p || p->name[0])
            break;
        m->head++;
        m->head_end = p->off + p->size;
    }
    if (m->bh)
        ztd_body_hash_written(m->bh, m->head_end);
}

static void mpu_free(mpu *m)
{
    for (size_t i = 0; i < m->n; i++)
        ztd_staging_remove(m->st, m->parts[i].name);
    ztd_body_hash_free(m->bh); /* before the fd it reads is closed */
    if (m->afd >= 0)
        close(m->afd);
    ztd_staging_remove(m->st, m->aname);
    free(m->slot);
    free(m->parts);
    free(m);
}

/* Locked: take m out of the table. */
static void unlink_locked(mpu *m)
{
    for (mpu **p = &g_list; *p; p = &(*p)->next)
        if (*p == m) {
            *p = m->next;
            g_count--;
            return;
        }
}

static bool upload_id_of(struct MHD_Connection *c, char id[33])
{
    char v[80];
    long n = ztd_s3_arg(c, "uploadId", v, sizeof(v));
    if (n != 32)
        return false;
    memcpy(id, v, 33);
    return true;
}

static void hex(const uint8_t *b, size_t n, char *out)
{
    static const char d[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = d[b[i] >> 4];
        out[2 * i + 1] = d[b[i] & 15];
    }
    out[2 * n] = 0;
}

/* ---- CreateMultipartUpload */

enum MHD_Result ztd_s3_mpu_create(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                  const ztd_s3_req *q)
{
    const char *why;
    uint8_t rnd[16];
    if ((why = ztd_s3_key_problem(q)))
        return ztd_s3_error(c, r, ZTD_S3_INVALID_ARGUMENT, "key \"%s\": %s", q->key, why);
    if (!s->staging)
        return ztd_s3_error(c, r, ZTD_S3_ACCESS_DENIED, "uploads are disabled on this server");
    mpu *m = calloc(1, sizeof(*m));
    if (!m || getentropy(rnd, sizeof(rnd)) != 0) {
        free(m);
        return ztd_s3_fail(c, r, ZTD_S3_INTERNAL);
    }
    hex(rnd, sizeof(rnd), m->id);
    m->bucket = q->bucket;
    snprintf(m->rel, sizeof(m->rel), "%s", q->name);
    snprintf(m->key, sizeof(m->key), "%s", q->key);
    m->initiated_ns = now_ns();
    m->st = s->staging;
    m->afd = -1;
    pthread_mutex_lock(&g_mu);
    bool full = g_count >= MAX_UPLOADS;
    if (!full) {
        m->next = g_list;
        g_list = m;
        g_count++;
    }
    pthread_mutex_unlock(&g_mu);
    if (full) {
        free(m);
        return ztd_s3_error(c, r, ZTD_S3_SERVICE_UNAVAILABLE,
                            "%d multipart uploads are open: complete or abort some", MAX_UPLOADS);
    }
    ztd_xml x;
    ztd_xml_begin(&x);
    ztd_xml_open(&x, "InitiateMultipartUploadResult", "http://s3.amazonaws.com/doc/2006-03-01/");
    ztd_xml_elem_str(&x, "Bucket", q->bucket->name);
    ztd_xml_elem(&x, "Key", q->key, q->key_len);
    ztd_xml_elem_str(&x, "UploadId", m->id);
    ztd_xml_close(&x, "InitiateMultipartUploadResult");
    return ztd_s3_xml_answer(c, r, 200, &x);
}

/* ---- a request's state: a part arriving, or Complete's document */

typedef struct mpw {
    bool complete;
    ztd_server *s;
    char id[33];
    /* a part */
    int number;
    int fd;
    char name[ZTD_STAGING_NAME_MAX];
    bool in_slot;      /* fd is the assembly file's, written from off, at most cap bytes */
    uint64_t off, cap; /* ... */
    uint64_t flushed;  /* bytes written to fd */
    uint8_t *buf;
    size_t blen;
    uint64_t size;
    ztd_s3_sums sums;      /* the client's checksums, and the MD5 for the ETag */
    ztd_awsc *dec;         /* an aws-chunked part: the decoder, which feeds stage_part() */
    ztd_s3_sink_fail fail; /* stage_part() refused: why */
    /* Complete */
    char *doc;
    size_t dlen;
    part *parts; /* the ones to join, in order */
    size_t n;
    bool direct; /* they are the assembly file, in order: publish it */
    mpu *m;      /* taken out of the table while completing */
    ztd_offload work;
    ztd_err err;
    char msg[512];
    ztd_published out;
    size_t nobj;
} mpw;

static void slot_release(mpw *w);

static void w_free(void *p)
{
    mpw *w = p;
    slot_release(w);
    if (w->fd >= 0)
        close(w->fd);
    if (w->name[0])
        ztd_staging_remove(w->s->staging, w->name);
    ztd_awsc_free(w->dec);
    free(w->buf);
    ztd_s3_sums_free(&w->sums);
    free(w->doc);
    free(w->parts);
    free(w);
}

static mpw *w_of(ztd_req *r)
{
    return ztd_req_ctx_of(r, w_free);
}

/* Locked: part w->number, of len bytes, goes to its place in m's assembly
 * file when the place is free and the size fits (w->in_slot, w->fd a dup
 * of the file); otherwise it gets a file of its own. The first part of at
 * least MIN_PART bytes sets psize. */
static void slot_take_locked(ztd_server *s, mpu *m, mpw *w, uint64_t len)
{
    if (!len)
        return;
    if (!m->psize && len >= MIN_PART) {
        if (!m->slot && !(m->slot = calloc(ZTD_S3_MAX_PARTS + 1, 1)))
            return;
        if ((m->afd = ztd_staging_create(m->st, "s3mpu", m->aname)) < 0)
            return;
        m->psize = len;
        m->bh = ztd_body_hash_new(m->afd); /* NULL: verification hashes it all */
    }
    if (m->afd < 0 || len > m->psize || m->slot[w->number] != SLOT_FREE ||
        !ztd_uploads_size_ok(s->uploads, 0, (uint64_t)w->number * m->psize))
        return;
    if ((w->fd = fcntl(m->afd, F_DUPFD_CLOEXEC, 0)) < 0)
        return;
    m->slot[w->number] = SLOT_BUSY;
    m->writers++;
    w->in_slot = true;
    w->off = (uint64_t)(w->number - 1) * m->psize;
    w->cap = len;
}

/* A part written to its place but not kept: the place is free again (its
 * bytes were never hashed: the head stops at a place not FULL). */
static void slot_release(mpw *w)
{
    if (!w->in_slot)
        return;
    pthread_mutex_lock(&g_mu);
    mpu *m = find_id_locked(w->id);
    if (m && m->slot[w->number] == SLOT_BUSY) {
        m->slot[w->number] = SLOT_FREE;
        m->writers--;
    }
    pthread_mutex_unlock(&g_mu);
    w->in_slot = false;
}

static int part_number_of(struct MHD_Connection *c)
{
    char v[16];
    long n = ztd_s3_arg(c, "partNumber", v, sizeof(v));
    int k = 0;
    if (n <= 0 || n > 5)
        return -1;
    for (long i = 0; i < n; i++) {
        if (v[i] < '0' || v[i] > '9')
            return -1;
        k = k * 10 + (v[i] - '0');
    }
    return k >= 1 && k <= ZTD_S3_MAX_PARTS ? k : -1;
}

static int part_sink(void *ctx, const uint8_t *p, size_t n);

enum MHD_Result ztd_s3_part_begin(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                  const ztd_s3_req *q, const ztd_s3_auth *auth)
{
    const char *v, *cl = ztd_header(c, "Content-Length");
    char id[33], msg[256];
    int perr = 0;
    int64_t decoded = -1;
    if (!ztd_s3_payload_open(c, auth, part_sink, NULL, NULL, &decoded, &perr, msg, sizeof(msg)))
        return ztd_s3_error(c, r, (ztd_s3_err)perr, "%s", msg);
    int number = part_number_of(c);
    if (number < 0)
        return ztd_s3_error(c, r, ZTD_S3_INVALID_ARGUMENT,
                            "Part number must be an integer between 1 and 10000, inclusive");
    uint64_t declared = decoded >= 0 ? (uint64_t)decoded : cl ? strtoull(cl, NULL, 10) : 0;

    if (declared > MAX_PART)
        return ztd_s3_error(c, r, ZTD_S3_ENTITY_TOO_LARGE, "a part is at most 5 GiB");
    if (!ztd_uploads_disk_ok(s->uploads, declared))
        return ztd_s3_error(c, r, ZTD_S3_INSUFFICIENT_STORAGE,
                            "not enough free disk for %llu bytes plus the reserve",
                            (unsigned long long)declared);
    pthread_mutex_lock(&g_mu);
    mpu *m = upload_id_of(c, id) ? find_locked(id, q) : NULL;
    bool ok = m && !m->completing;
    pthread_mutex_unlock(&g_mu);
    if (!ok)
        return ztd_s3_fail(c, r, ZTD_S3_NO_SUCH_UPLOAD);
    mpw *w = calloc(1, sizeof(*w));
    if (!w)
        return MHD_NO;
    w->s = s;
    w->fd = -1;
    memcpy(w->id, id, sizeof(id));
    w->number = number;
    ztd_req_set_ctx(r, w, w_free);
    if (!ztd_s3_payload_open(c, auth, part_sink, w, &w->dec, &decoded, &perr, msg, sizeof(msg)))
        return ztd_s3_error(c, r, (ztd_s3_err)perr, "%s", msg);
    if ((v = ztd_s3_sums_take(c, &w->sums)))
        return ztd_s3_error(c, r, ZTD_S3_INVALID_DIGEST, "%s", v);
    /* The ETag is the part's MD5 unless the client checks the part with a
     * checksum of its own (the SDKs that send one do not compare part ETags
     * with an MD5): docs/S3.md */
    bool md5 = !ztd_s3_sums_any(&w->sums) && !ztd_header(c, "x-amz-trailer");
    if (!(w->buf = malloc(WBUF)) || !ztd_s3_sums_start(&w->sums, md5, true))
        return ztd_s3_fail(c, r, ZTD_S3_INTERNAL);
    /* the part's length, when it is known before its body: an aws-chunked
     * part's from x-amz-decoded-content-length (the decoder holds the part
     * to it), also inside HTTP chunked as boto3 sends over https */
    uint64_t known = w->dec                               ? (decoded >= 0 ? (uint64_t)decoded : 0)
                     : ztd_header(c, "Transfer-Encoding") ? 0
                                                          : declared;
    pthread_mutex_lock(&g_mu);
    if ((m = find_locked(id, q)) && !m->completing)
        slot_take_locked(s, m, w, known);
    pthread_mutex_unlock(&g_mu);
    if (!w->in_slot && (w->fd = ztd_staging_create(s->staging, "s3part", w->name)) < 0)
        return ztd_s3_error(c, r, ZTD_S3_INTERNAL, "cannot create a staging file: %s",
                            strerror(errno));
    return MHD_YES;
}

static int flush_part(mpw *w)
{
    if (ztd_pwrite_all(w->fd, w->buf, w->blen, w->off + w->flushed) != 0)
        return -1;
    if (w->blen) /* write-back now: Complete's fsync then waits for little */
        sync_file_range(w->fd, (off_t)(w->off + w->flushed), (off_t)w->blen, SYNC_FILE_RANGE_WRITE);
    w->flushed += w->blen;
    w->blen = 0;
    return 0;
}

/* Part bytes (decoded, for aws-chunked) into its staging file: 0, or -1
 * with w->fail.failed and why. */
static int stage_part(mpw *w, const uint8_t *data, size_t n)
{
    if (w->in_slot && w->size + n > w->cap) {
        w->fail.failed = true;
        w->fail.err = ZTD_S3_INVALID_ARGUMENT;
        snprintf(w->fail.msg, sizeof(w->fail.msg), "the part is longer than its length header");
        return -1;
    }
    if (w->size + n > MAX_PART || !ztd_uploads_size_ok(w->s->uploads, w->size, n)) {
        w->fail.failed = true;
        w->fail.err = ZTD_S3_ENTITY_TOO_LARGE;
        snprintf(w->fail.msg, sizeof(w->fail.msg), "a part is at most 5 GiB and max_upload_size");
        return -1;
    }
    w->size += n;
    ztd_metrics_upload_bytes(n);
    ztd_s3_sums_update(&w->sums, data, n);
    while (n) {
        if (ztd_wbuf_fill(w->buf, &w->blen, WBUF, &data, &n) && flush_part(w) != 0) {
            w->fail.failed = true;
            w->fail.err = ZTD_S3_INTERNAL;
            snprintf(w->fail.msg, sizeof(w->fail.msg), "writing a part: %s", strerror(errno));
            return -1;
        }
    }
    return 0;
}

static int part_sink(void *ctx, const uint8_t *p, size_t n)
{
    return ctx ? stage_part(ctx, p, n) : -1;
}

/* Locked: put p in m's sorted parts, replacing a part of the same number
 * (whose file is removed). */
static bool add_part_locked(mpu *m, const part *p)
{
    size_t i = 0;
    while (i < m->n && m->parts[i].number < p->number)
        i++;
    if (i < m->n && m->parts[i].number == p->number) {
        if (m->parts[i].name[0])
            ztd_staging_remove(m->st, m->parts[i].name);
        else /* its place may have been hashed: never written again */
            m->slot[p->number] = SLOT_SPENT;
        m->parts[i] = *p;
        return true;
    }
    if (m->n == m->cap) {
        size_t cap = m->cap ? 2 * m->cap : 16;
        part *np = realloc(m->parts, cap * sizeof(*np));
        if (!np)
            return false;
        m->parts = np;
        m->cap = cap;
    }
    memmove(m->parts + i + 1, m->parts + i, (m->n - i) * sizeof(*p));
    m->parts[i] = *p;
    m->n++;
    return true;
}

enum MHD_Result ztd_s3_part_end(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                const ztd_s3_req *q)
{
    mpw *w = w_of(r);
    ztd_s3_err se;
    const char *why;
    if (!w || w->complete)
        return ztd_s3_fail(c, r, ZTD_S3_INTERNAL);
    ztd_s3err ce = w->dec ? ztd_awsc_finish(w->dec) : ZTD_S3E_OK;
    if (ce != ZTD_S3E_OK) /* the part is not kept; w_free removes its file */
        return ztd_s3_error(c, r, ztd_s3_err_from(ce), "%s", ztd_awsc_message(w->dec));
    if (flush_part(w) != 0)
        return ztd_s3_error(c, r, ZTD_S3_INTERNAL, "writing a part: %s", strerror(errno));
    if (!ztd_s3_sums_hold(&w->sums, NULL, &se, &why))
        return ztd_s3_error(c, r, se, "%s", why);
    part p = {.number = w->number, .off = w->off, .size = w->size, .mtime_ns = now_ns()};
    memcpy(p.name, w->name, sizeof(p.name));
    if (w->sums.has_md5) {
        hex(w->sums.md5, 16, p.etag);
    } else { /* unique, and in a form no client takes for an MD5 */
        uint8_t rnd[16];
        if (getentropy(rnd, sizeof(rnd)) != 0)
            return ztd_s3_fail(c, r, ZTD_S3_INTERNAL);
        hex(rnd, sizeof(rnd), p.etag);
        memcpy(p.etag + 32, "-1", 3);
    }
    pthread_mutex_lock(&g_mu);
    mpu *m = find_locked(w->id, q);
    bool ok = m && !m->completing && add_part_locked(m, &p);
    if (ok && w->in_slot) {
        m->slot[p.number] = SLOT_FULL;
        m->writers--;
        w->in_slot = false;
        head_advance_locked(m);
    }
    pthread_mutex_unlock(&g_mu);
    if (!ok)
        return ztd_s3_fail(c, r, ZTD_S3_NO_SUCH_UPLOAD);
    w->name[0] = 0; /* the upload's now */
    char etag[48];
    snprintf(etag, sizeof(etag), "\"%s\"", p.etag);
    return ztd_s3_empty_answer(c, r, 200, "ETag", etag);
}

/* ---- Complete */

enum MHD_Result ztd_s3_complete_begin(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                      const ztd_s3_req *q)
{
    mpw *w = calloc(1, sizeof(*w));
    if (!w)
        return MHD_NO;
    w->s = s;
    w->fd = -1;
    w->complete = true;
    ztd_req_set_ctx(r, w, w_free);
    if (!upload_id_of(c, w->id))
        return ztd_s3_fail(c, r, ZTD_S3_NO_SUCH_UPLOAD);
    return MHD_YES;
}

bool ztd_s3_mpu_data(ztd_server *s, struct MHD_Connection *c, ztd_req *r, const char *data,
                     size_t n, enum MHD_Result *ret)
{
    mpw *w = w_of(r);
    if (!w)
        return false;
    if (!w->complete) {
        *ret = ztd_s3_feed(c, r, w->dec, part_sink, w, &w->fail, data, n);
        return true;
    }
    *ret = MHD_YES;
    if (w->dlen + n > DOC_MAX) {
        *ret = ztd_s3_error(c, r, ZTD_S3_MALFORMED_XML, "the document exceeds %u bytes", DOC_MAX);
        return true;
    }
    char *d = realloc(w->doc, w->dlen + n + 1);
    if (!d) {
        *ret = MHD_NO;
        return true;
    }
    memcpy(d + w->dlen, data, n);
    w->dlen += n;
    d[w->dlen] = 0;
    w->doc = d;
    return true;
}

/* The list against the upload's parts: the parts to join into w, or the
 * error. Locked. */
static int check_list_locked(const mpu *m, const ztd_s3_part_ref *refs, size_t n, mpw *w)
{
    if (!(w->parts = malloc(n * sizeof(*w->parts))))
        return ZTD_S3_INTERNAL;
    for (size_t i = 1; i < n; i++)
        if (refs[i].number <= refs[i - 1].number)
            return ZTD_S3_INVALID_PART_ORDER;
    for (size_t i = 0, k = 0; i < n; i++) {
        while (k < m->n && m->parts[k].number < refs[i].number)
            k++; /* both ascending */
        if (k == m->n || m->parts[k].number != refs[i].number ||
            strcasecmp(m->parts[k].etag, refs[i].etag) != 0)
            return ZTD_S3_INVALID_PART;
        w->parts[i] = m->parts[k];
    }
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++) {
        if (i + 1 < n && w->parts[i].size < MIN_PART)
            return ZTD_S3_ENTITY_TOO_SMALL;
        total += w->parts[i].size;
    }
    if (!ztd_uploads_size_ok(w->s->uploads, 0, total))
        return ZTD_S3_ENTITY_TOO_LARGE;
    w->n = n;
    return -1;
}

/* Locked: are the parts to join the assembly file itself, in order, with
 * nothing else in it that a truncation to their size would cut? */
static bool direct_ok_locked(const mpu *m, const mpw *w)
{
    if (m->afd < 0 || !m->aname[0] || m->writers || !w->n)
        return false;
    for (size_t i = 0; i < w->n; i++) {
        const part *p = &w->parts[i];
        if (p->name[0] || p->number != (int)i + 1 || p->off != i * m->psize ||
            (i + 1 < w->n && p->size != m->psize))
            return false;
    }
    for (size_t i = 0; i < m->n; i++)
        if (!m->parts[i].name[0] && m->parts[i].number > (int)w->n)
            return false;
    return true;
}

/* The parts are the assembly file: a second name for it is checked and
 * published (a refusal leaves the upload's file as it was). */
static void direct_job(mpw *w)
{
    mpu *m = w->m;
    char name[ZTD_STAGING_NAME_MAX];
    uint64_t total = 0;
    for (size_t i = 0; i < w->n; i++)
        total += w->parts[i].size;
    if (ztd_staging_link(m->st, m->aname, "s3mpu", name) != 0 ||
        ftruncate(m->afd, (off_t)total) != 0) {
        w->err = ZTD_ERR_STAGING_FAILED;
        snprintf(w->msg, sizeof(w->msg), "cannot stage the assembled parts: %s", strerror(errno));
        ztd_staging_remove(m->st, name);
        return;
    }
    if (m->bh)
        ztd_body_hash_stop(m->bh); /* verification goes on from where it got to */
    ztd_staged f = {m->afd, name, total, m->bh ? ztd_body_hash_known : NULL, m->bh};
    ztd_preconds none = {NULL, NULL};
    w->err = ztd_publish_check(w->s->publisher, &f, m->rel, true, true, &w->nobj, w->msg,
                               sizeof(w->msg));
    if (w->err)
        return;
    /* The file is good: its other name goes now, while it is still in the
     * staging directory (unlinked after the rename, it would change the
     * published file's link count, and the catalog would take the file for
     * changed and hash it again). Should the commit fail, the parts stay
     * readable through m->afd, and a Complete again copies them. */
    ztd_staging_remove(m->st, m->aname);
    m->aname[0] = 0;
    w->err = ztd_publish_commit(w->s->publisher, &f, m->rel, &none, true, &w->out, w->msg,
                                sizeof(w->msg));
}

static void complete_job(ztd_offload *o)
{
    mpw *w = (mpw *)((char *)o - offsetof(mpw, work));
    if (w->direct)
        return direct_job(w);
    ztd_put_file *f = ztd_put_file_new(w->s->staging, "s3mpu", false);
    uint8_t sha[32];
    w->err = ZTD_ERR_NONE;
    if (!f) {
        w->err = ZTD_ERR_STAGING_FAILED;
        snprintf(w->msg, sizeof(w->msg), "cannot create a staging file: %s", strerror(errno));
    }
    for (size_t i = 0; !w->err && i < w->n; i++) {
        const part *p = &w->parts[i];
        int fd = p->name[0] ? ztd_staging_open_file(w->s->staging, p->name) : w->m->afd;
        if (fd < 0 || ztd_put_file_append_fd(f, fd, p->name[0] ? 0 : p->off, p->size) != 0) {
            w->err = ZTD_ERR_STAGING_LOST;
            snprintf(w->msg, sizeof(w->msg), "part %d could not be read back: %s",
                     w->parts[i].number, strerror(errno));
        }
        if (fd >= 0 && p->name[0])
            close(fd);
    }
    if (!w->err && ztd_put_file_end(f, sha) != 0) {
        w->err = ZTD_ERR_WRITE_FAILED;
        snprintf(w->msg, sizeof(w->msg), "writing the staging file: %s", strerror(errno));
    }
    if (!w->err) {
        ztd_preconds none = {NULL, NULL};
        w->err = ztd_put_file_publish(f, w->s->publisher, w->m->rel, &none, &w->nobj, &w->out,
                                      w->msg, sizeof(w->msg));
    }
    ztd_put_file_free(f);
}

static ztd_s3_err s3_err_of(ztd_err e)
{
    unsigned st = ztd_err_status(e);
    return st == 503   ? ZTD_S3_SERVICE_UNAVAILABLE
           : st == 507 ? ZTD_S3_INSUFFICIENT_STORAGE
           : st < 500  ? ZTD_S3_INVALID_OBJECT
                       : ZTD_S3_INTERNAL;
}

static enum MHD_Result complete_answer(struct MHD_Connection *c, ztd_req *r, mpw *w)
{
    mpu *m = w->m;
    pthread_mutex_lock(&g_mu);
    if (w->err)
        m->completing = false; /* the upload stays: abort it, or complete it again */
    else
        unlink_locked(m);
    pthread_mutex_unlock(&g_mu);
    if (w->err)
        return ztd_s3_error(c, r, s3_err_of(w->err), "%s", w->msg);
    ztd_log(ZTD_LOG_INFO, "S3 CompleteMultipartUpload published %s (%llu bytes, %zu parts, %s)",
            m->rel, (unsigned long long)w->out.size, w->n,
            w->direct ? "written in place" : "copied");
    char etag[96];
    size_t n = strlen(w->out.etag);
    snprintf(etag, sizeof(etag), "%.*s-1\"", (int)(n ? n - 1 : 0), w->out.etag);
    ztd_xml x;
    ztd_xml_begin(&x);
    ztd_xml_open(&x, "CompleteMultipartUploadResult", "http://s3.amazonaws.com/doc/2006-03-01/");
    ztd_xml_elem_str(&x, "Location", r->path);
    ztd_xml_elem_str(&x, "Bucket", m->bucket->name);
    ztd_xml_elem_str(&x, "Key", m->key);
    ztd_xml_elem_str(&x, "ETag", etag);
    ztd_xml_close(&x, "CompleteMultipartUploadResult");
    w->m = NULL;
    mpu_free(m);
    return ztd_s3_xml_answer(c, r, 200, &x);
}

enum MHD_Result ztd_s3_complete(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                const ztd_s3_req *q)
{
    mpw *w = w_of(r);
    char why[256];
    size_t n = 0;
    if (!w || !w->complete)
        return ztd_s3_fail(c, r, ZTD_S3_INTERNAL);
    ztd_s3_part_ref *refs =
        ztd_s3_complete_parse(w->doc ? w->doc : "", w->dlen, &n, why, sizeof(why));
    if (!refs)
        return ztd_s3_error(c, r, ZTD_S3_MALFORMED_XML, "%s", why);
    pthread_mutex_lock(&g_mu);
    mpu *m = find_locked(w->id, q);
    int e = !m || m->completing ? ZTD_S3_NO_SUCH_UPLOAD : check_list_locked(m, refs, n, w);
    if (e < 0) {
        m->completing = true;
        w->m = m;
        w->direct = direct_ok_locked(m, w);
    }
    pthread_mutex_unlock(&g_mu);
    free(refs);
    if (e >= 0)
        return ztd_s3_fail(c, r, (ztd_s3_err)e);
    if (!ztd_offload_start(s, c, &w->work, complete_job))
        return MHD_YES;
    return complete_answer(c, r, w);
}

bool ztd_s3_mpu_resume(ztd_server *s, struct MHD_Connection *c, ztd_req *r, enum MHD_Result *out)
{
    mpw *w = w_of(r);
    if (!w || !w->complete || !w->work.started)
        return false;
    *out = ztd_offload_done(&w->work) ? complete_answer(c, r, w) : MHD_YES;
    return true;
}

/* ---- Abort, and the lists */

enum MHD_Result ztd_s3_mpu_abort(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                 const ztd_s3_req *q)
{
    char id[33];
    pthread_mutex_lock(&g_mu);
    mpu *m = upload_id_of(c, id) ? find_locked(id, q) : NULL;
    bool ok = m && !m->completing;
    if (ok)
        unlink_locked(m);
    pthread_mutex_unlock(&g_mu);
    if (!ok)
        return ztd_s3_fail(c, r, ZTD_S3_NO_SUCH_UPLOAD);
    mpu_free(m);
    return ztd_s3_empty_answer(c, r, 204, NULL, NULL);
}

enum MHD_Result ztd_s3_list_parts(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                  const ztd_s3_req *q)
{
    char id[33], v[16], date[32];
    int marker = 0;
    if (ztd_s3_arg(c, "part-number-marker", v, sizeof(v)) > 0)
        marker = atoi(v);
    ztd_xml x;
    ztd_xml_begin(&x);
    pthread_mutex_lock(&g_mu);
    mpu *m = upload_id_of(c, id) ? find_locked(id, q) : NULL;
    if (m) {
        size_t shown = 0, i = 0;
        ztd_xml_open(&x, "ListPartsResult", "http://s3.amazonaws.com/doc/2006-03-01/");
        ztd_xml_elem_str(&x, "Bucket", m->bucket->name);
        ztd_xml_elem_str(&x, "Key", m->key);
        ztd_xml_elem_str(&x, "UploadId", m->id);
        ztd_xml_elem_u64(&x, "PartNumberMarker", (uint64_t)marker);
        ztd_xml_elem_u64(&x, "MaxParts", 1000);
        while (i < m->n && m->parts[i].number <= marker)
            i++;
        bool more = m->n - i > 1000;
        ztd_xml_elem_str(&x, "IsTruncated", more ? "true" : "false");
        for (; i < m->n && shown < 1000; i++, shown++) {
            const part *p = &m->parts[i];
            char etag[48];
            snprintf(etag, sizeof(etag), "\"%s\"", p->etag);
            ztd_s3_iso_time(p->mtime_ns, date);
            ztd_xml_open(&x, "Part", NULL);
            ztd_xml_elem_u64(&x, "PartNumber", (uint64_t)p->number);
            ztd_xml_elem_str(&x, "LastModified", date);
            ztd_xml_elem_str(&x, "ETag", etag);
            ztd_xml_elem_u64(&x, "Size", p->size);
            ztd_xml_close(&x, "Part");
            if (more && shown == 999)
                ztd_xml_elem_u64(&x, "NextPartNumberMarker", (uint64_t)p->number);
        }
        ztd_xml_close(&x, "ListPartsResult");
    }
    pthread_mutex_unlock(&g_mu);
    if (!m) {
        ztd_xml_discard(&x);
        return ztd_s3_fail(c, r, ZTD_S3_NO_SUCH_UPLOAD);
    }
    return ztd_s3_xml_answer(c, r, 200, &x);
}

enum MHD_Result ztd_s3_list_mpus(ztd_server *s, struct MHD_Connection *c, ztd_req *r,
                                 const ztd_s3_req *q)
{
    char date[32];
    ztd_xml x;
    ztd_xml_begin(&x);
    ztd_xml_open(&x, "ListMultipartUploadsResult", "http://s3.amazonaws.com/doc/2006-03-01/");
    ztd_xml_elem_str(&x, "Bucket", q->bucket->name);
    ztd_xml_elem_str(&x, "KeyMarker", "");
    ztd_xml_elem_str(&x, "UploadIdMarker", "");
    ztd_xml_elem_u64(&x, "MaxUploads", MAX_UPLOADS);
    ztd_xml_elem_str(&x, "IsTruncated", "false");
    pthread_mutex_lock(&g_mu);
    for (mpu *m = g_list; m; m = m->next) {
        if (m->bucket != q->bucket)
            continue;
        ztd_s3_iso_time(m->initiated_ns, date);
        ztd_xml_open(&x, "Upload", NULL);
        ztd_xml_elem_str(&x, "Key", m->key);
        ztd_xml_elem_str(&x, "UploadId", m->id);
        ztd_xml_elem_str(&x, "StorageClass", "STANDARD");
        ztd_xml_elem_str(&x, "Initiated", date);
        ztd_xml_close(&x, "Upload");
    }
    pthread_mutex_unlock(&g_mu);
    ztd_xml_close(&x, "ListMultipartUploadsResult");
    return ztd_s3_xml_answer(c, r, 200, &x);
}
