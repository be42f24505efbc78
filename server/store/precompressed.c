/*
 * Precompressed bytes (see precompressed.h). Levels: zstd 9 and gzip 6 compress a
 * 228 KB manifest in a few milliseconds, once per file version, on a work
 * queue thread; higher levels gained little on manifests for many times the
 * time, which a large manifest would take from uploads waiting on that queue.
 */
#include "store/precompressed.h"
#include "core/log.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#define ZSTD_LEVEL 9
#define GZIP_LEVEL 6

/* In a slot while its job runs (never dereferenced). */
static max_align_t g_pending_mark;
#define PENDING ((ztd_coded *)(void *)&g_pending_mark)

const char *ztd_coding_name(ztd_coding k)
{
    return k == ZTD_CODING_ZSTD ? "zstd" : "gzip";
}

static ztd_coded *code_zstd(const char *src, size_t n)
{
    size_t cap = ZSTD_compressBound(n);
    ztd_coded *c = malloc(sizeof(*c) + cap);
    if (!c)
        return NULL;
    size_t r = ZSTD_compress(c->bytes, cap, src, n, ZSTD_LEVEL);
    c->len = ZSTD_isError(r) ? 0 : r;
    return c;
}

/* One gzip member (RFC 1952): deflate with zlib's gzip wrapper (window bits 15 + 16). */
static ztd_coded *code_gzip(const char *src, size_t n)
{
    z_stream z;
    memset(&z, 0, sizeof(z));
    if (deflateInit2(&z, GZIP_LEVEL, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return NULL;
    size_t cap = deflateBound(&z, (uLong)n) + 32;
    ztd_coded *c = malloc(sizeof(*c) + cap);
    if (!c) {
        deflateEnd(&z);
        return NULL;
    }
    c->len = 0;
    z.next_in = (Bytef *)(uintptr_t)src;
    z.avail_in = (uInt)n;
    z.next_out = (Bytef *)c->bytes;
    z.avail_out = (uInt)cap;
    if (n <= UINT32_MAX && cap <= UINT32_MAX && deflate(&z, Z_FINISH) == Z_STREAM_END)
        c->len = z.total_out;
    deflateEnd(&z);
    return c;
}

ztd_coded *ztd_code(const char *src, size_t n, ztd_coding k)
{
    return k == ZTD_CODING_ZSTD ? code_zstd(src, n) : code_gzip(src, n);
}

/* Compressed, or a 0-length mark when it cannot be or is not smaller: the
 * identity bytes are then served for good. */
static ztd_coded *make(const char *src, size_t n, ztd_coding k)
{
    ztd_coded *c = ztd_code(src, n, k);
    if (c && c->len >= n)
        c->len = 0;
    if (!c && (c = malloc(sizeof(*c))))
        c->len = 0;
    if (!c)
        ztd_log(ZTD_LOG_WARN, "out of memory compressing a manifest (%s)", ztd_coding_name(k));
    return c;
}

typedef struct code_job {
    ztd_job job; /* first: the queue hands it back */
    ztd_coded_set *set;
    ztd_coding k;
    const char *src;
    size_t n;
    ztd_coded_owner owner;
} code_job;

/* NULL (out of memory) leaves the slot empty: a later request tries again. */
static void fill(ztd_coded_set *set, ztd_coding k, const char *src, size_t n)
{
    __atomic_store_n(&set->coded[k], make(src, n, k), __ATOMIC_RELEASE);
}

static void run(ztd_job *job)
{
    code_job *j = (code_job *)job;
    fill(j->set, j->k, j->src, j->n);
    j->owner.release(j->owner.p);
    free(j);
}

const ztd_coded *ztd_coded_get(ztd_coded_set *set, ztd_coding k, const char *src, size_t n,
                               ztd_workq *q, const ztd_coded_owner *owner)
{
    ztd_coded *c = __atomic_load_n(&set->coded[k], __ATOMIC_ACQUIRE);
    if (c == PENDING)
        return NULL;
    if (c)
        return c->len ? c : NULL;
    ztd_coded *none = NULL;
    if (!__atomic_compare_exchange_n(&set->coded[k], &none, PENDING, false, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE))
        return NULL; /* another request started it */
    code_job *j = q ? malloc(sizeof(*j)) : NULL;
    if (!j) {
        fill(set, k, src, n); /* no queue (or no memory for a job): here */
        c = __atomic_load_n(&set->coded[k], __ATOMIC_ACQUIRE);
        return c && c->len ? c : NULL;
    }
    *j = (code_job){.set = set, .k = k, .src = src, .n = n, .owner = *owner};
    j->job.run = run;
    owner->retain(owner->p);
    ztd_workq_submit(q, &j->job);
    return NULL;
}

void ztd_coded_set_free(ztd_coded_set *set)
{
    for (int k = 0; k < ZTD_CODINGS; k++)
        if (set->coded[k] != PENDING)
            free(set->coded[k]);
}
