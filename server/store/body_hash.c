/*
 * A whole-file PUT's first component hashed while the body arrives (see
 * body_hash.h).
 *
 * The manifest is at the end of the body, so while the bytes arrive nothing
 * says where a component ends, and SHA-256 cannot be combined from the
 * digests of pieces. What can be done exactly: one SHA-256 chain from byte
 * CHAIN_START, where libztensor's writer puts the first component, with a copy
 * of its state every STEP bytes (the last RING copies kept). Once the manifest
 * is read, the component that starts at CHAIN_START and ends at E is either
 * the copy at or before E plus fewer than STEP bytes re-read (the chain got
 * past E), or the chain's state continued from where it stopped to E: either
 * way less to hash after the body than from scratch. Every other component is
 * hashed by verification as before.
 *
 * The chain is speculation (little use when the first component is a small
 * part of the file), so it never holds the receiving up: the thread reads what
 * has been written back from the page cache at its own pace, at the lowest CPU
 * priority, and stops when the body is complete.
 */
#include "store/body_hash.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>
#include <ztensor/ztensor.h>
#include <ztensor/ztensor_experimental.h>

#define CHAIN_START 64u
#define STEP (1u << 20)
#define RING 64u

struct ztd_body_hash {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int fd;
    uint64_t written;      /* under mu */
    bool stop;             /* under mu */
    bool broken;           /* a read or a checkpoint failed: answer nothing */
    zt_hasher *chain;      /* bytes [CHAIN_START, CHAIN_START + chain_len) */
    zt_hasher *ring[RING]; /* ring[k % RING]: state after k * STEP chain bytes */
    uint64_t chain_len;
    uint8_t *buf;      /* STEP bytes */
    unsigned answered; /* atomic */
};

/* Bytes [off, off + n) of the file into h (buf: at least n bytes). */
static bool hash_back(int fd, uint8_t *buf, zt_hasher *h, uint64_t off, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = pread(fd, buf + got, n - got, (off_t)(off + got));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return false;
        got += (size_t)r;
    }
    zt_hasher_update(h, buf, n);
    return true;
}

/* Wait until the next whole STEP of the chain is in the file; false once stopped. */
static bool next_step(ztd_body_hash *b)
{
    pthread_mutex_lock(&b->mu);
    while (!b->stop && b->written < CHAIN_START + b->chain_len + STEP)
        pthread_cond_wait(&b->cv, &b->mu);
    bool go = !b->stop;
    pthread_mutex_unlock(&b->mu);
    return go;
}

static void *run(void *arg)
{
    ztd_body_hash *b = arg;
    /* Only a core nobody else wants (see above). */
    (void)setpriority(PRIO_PROCESS, (id_t)gettid(), 19);
    while (!b->broken && next_step(b)) {
        if (!hash_back(b->fd, b->buf, b->chain, CHAIN_START + b->chain_len, STEP) ||
            zt_hasher_copy(b->ring[(b->chain_len / STEP + 1) % RING], b->chain) != ZT_OK)
            b->broken = true;
        else
            b->chain_len += STEP;
    }
    return NULL;
}

static void body_hash_destroy(ztd_body_hash *b)
{
    zt_hasher_free(b->chain);
    for (unsigned i = 0; i < RING; i++)
        zt_hasher_free(b->ring[i]);
    free(b->buf);
    free(b);
}

ztd_body_hash *ztd_body_hash_new(int fd)
{
    ztd_body_hash *b = calloc(1, sizeof(*b));
    if (!b)
        return NULL;
    b->fd = fd;
    bool ok = (b->buf = malloc(STEP)) && (b->chain = zt_hasher_new(ZT_DIGEST_SHA256));
    for (unsigned i = 0; ok && i < RING; i++)
        ok = (b->ring[i] = zt_hasher_new(ZT_DIGEST_SHA256)) != NULL;
    if (!ok || pthread_mutex_init(&b->mu, NULL) != 0) {
        body_hash_destroy(b);
        return NULL;
    }
    if (pthread_cond_init(&b->cv, NULL) != 0) {
        pthread_mutex_destroy(&b->mu);
        body_hash_destroy(b);
        return NULL;
    }
    if (pthread_create(&b->thread, NULL, run, b) != 0) {
        pthread_cond_destroy(&b->cv);
        pthread_mutex_destroy(&b->mu);
        body_hash_destroy(b);
        return NULL;
    }
    return b;
}

void ztd_body_hash_written(ztd_body_hash *b, uint64_t written)
{
    pthread_mutex_lock(&b->mu);
    b->written = written;
    pthread_cond_signal(&b->cv);
    pthread_mutex_unlock(&b->mu);
}

void ztd_body_hash_stop(ztd_body_hash *b)
{
    pthread_mutex_lock(&b->mu);
    bool joined = b->stop;
    b->stop = true;
    pthread_cond_signal(&b->cv);
    pthread_mutex_unlock(&b->mu);
    if (!joined)
        pthread_join(b->thread, NULL);
}

int ztd_body_hash_known(void *ud, uint64_t offset, uint64_t length, uint8_t out[32])
{
    ztd_body_hash *b = ud;
    uint64_t k = length / STEP, top = b->chain_len / STEP;
    /* Only the chain's own start; past the chain's end, from its last state;
     * before it, from a checkpoint still kept. */
    if (b->broken || offset != CHAIN_START || (k < top && k + RING <= top))
        return 0;
    uint64_t from = k < top ? k * STEP : b->chain_len;
    zt_hasher *h = zt_hasher_new(ZT_DIGEST_SHA256);
    uint8_t *buf = malloc(STEP);
    bool ok = h && buf &&
              (from == 0 || zt_hasher_copy(h, k < top ? b->ring[k % RING] : b->chain) == ZT_OK);
    for (uint64_t at = from; ok && at < length; at += STEP) {
        size_t n = length - at < STEP ? (size_t)(length - at) : STEP;
        ok = hash_back(b->fd, buf, h, CHAIN_START + at, n);
    }
    if (ok) {
        zt_hasher_final(h, out);
        __atomic_add_fetch(&b->answered, 1, __ATOMIC_RELAXED);
    }
    zt_hasher_free(h);
    free(buf);
    return ok;
}

uint64_t ztd_body_hash_done(const ztd_body_hash *b)
{
    return b->chain_len;
}

unsigned ztd_body_hash_answered(const ztd_body_hash *b)
{
    return __atomic_load_n(&b->answered, __ATOMIC_RELAXED);
}

void ztd_body_hash_free(ztd_body_hash *b)
{
    if (!b)
        return;
    ztd_body_hash_stop(b);
    pthread_cond_destroy(&b->cv);
    pthread_mutex_destroy(&b->mu);
    body_hash_destroy(b);
}
