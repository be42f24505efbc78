/*
 * A whole-file PUT's body hashed as it arrives (see body_hash.h), on the
 * libztensor hash thread: the receiving thread writes each 1 MiB buffer and
 * hands it over, no copy.
 *
 * The manifest is at the end of the body, so while the bytes arrive nothing
 * says where a component ends, and SHA-256 cannot be combined from the
 * digests of pieces. What can be done exactly: one SHA-256 chain from byte
 * CHAIN_START, where libztensor's writer puts the first component, with a copy
 * of its state every STEP bytes (the last RING copies kept). Once the
 * manifest is read, the component that starts at CHAIN_START and ends at E is
 * the copy at or before E plus fewer than STEP bytes re-read from the staging
 * file: a 1 GiB component costs 1 MiB of hashing after the body instead of
 * 1 GiB. Every other component (other offsets, or an end more than RING
 * steps before the body's end) is hashed by verification as before.
 */
#include "store/body_hash.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include <ztensor/ztensor_experimental.h>

#define CHAIN_START 64u
#define STEP (1u << 20)
#define RING 64u

struct ztd_body_hash {
    zt_hash_thread *t;
    int fd;
    zt_hasher *whole;      /* NULL unless asked for */
    zt_hasher *chain;      /* bytes [CHAIN_START, CHAIN_START + chain_len) */
    zt_hasher *ring[RING]; /* ring[k % RING]: state after k * STEP chain bytes */
    uint64_t body_len, chain_len;
    bool broken;       /* a checkpoint could not be taken: answer nothing */
    unsigned answered; /* atomic */
};

/* On the hash thread: the bytes after body_len. */
static void consume(void *ud, const uint8_t *buf, size_t len)
{
    ztd_body_hash *b = ud;
    if (b->whole)
        zt_hasher_update(b->whole, buf, len);
    uint64_t skip = b->body_len < CHAIN_START ? CHAIN_START - b->body_len : 0;
    b->body_len += len;
    if (skip >= len)
        return;
    buf += skip;
    len -= skip;
    while (len) {
        size_t k = STEP - (size_t)(b->chain_len % STEP);
        k = k < len ? k : len;
        zt_hasher_update(b->chain, buf, k);
        b->chain_len += k;
        buf += k;
        len -= k;
        if (b->chain_len % STEP == 0 &&
            zt_hasher_copy(b->ring[(b->chain_len / STEP) % RING], b->chain) != ZT_OK)
            b->broken = true;
    }
}

ztd_body_hash *ztd_body_hash_new(bool whole, int fd, size_t bufsize, uint8_t **first)
{
    ztd_body_hash *b = calloc(1, sizeof(*b));
    if (!b)
        return NULL;
    b->fd = fd;
    bool ok = (!whole || (b->whole = zt_hasher_new(ZT_DIGEST_SHA256))) &&
              (b->chain = zt_hasher_new(ZT_DIGEST_SHA256));
    for (unsigned i = 0; ok && i < RING; i++)
        ok = (b->ring[i] = zt_hasher_new(ZT_DIGEST_SHA256)) != NULL;
    if (!ok || !(b->t = zt_hash_thread_new_fn(ZT_DIGEST_SHA256, bufsize, first, consume, b))) {
        ztd_body_hash_free(b, NULL);
        return NULL;
    }
    return b;
}

uint8_t *ztd_body_hash_submit(ztd_body_hash *b, uint8_t *buf, size_t len)
{
    return zt_hash_thread_submit(b->t, buf, len);
}

void ztd_body_hash_final(ztd_body_hash *b, uint8_t out[32])
{
    uint8_t none[32];
    zt_hash_thread_final(b->t, none); /* waits for the queue */
    if (b->whole)
        zt_hasher_final(b->whole, out);
}

/* Bytes [off, off + n) of the staging file into h. */
static bool hash_back(const ztd_body_hash *b, zt_hasher *h, uint64_t off, size_t n)
{
    uint8_t *buf = n ? malloc(n) : NULL;
    size_t got = 0;
    while (buf && got < n) {
        ssize_t r = pread(b->fd, buf + got, n - got, (off_t)(off + got));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    if (got == n)
        zt_hasher_update(h, buf, n);
    free(buf);
    return got == n;
}

int ztd_body_hash_known(void *ud, uint64_t offset, uint64_t length, uint8_t out[32])
{
    ztd_body_hash *b = ud;
    uint64_t k = length / STEP, top = b->chain_len / STEP;
    /* Only the chain's own start, and an end whose checkpoint is still kept. */
    if (b->broken || offset != CHAIN_START || length > b->chain_len || k + RING <= top)
        return 0;
    zt_hasher *h = zt_hasher_new(ZT_DIGEST_SHA256);
    bool ok = h && (k == 0 || zt_hasher_copy(h, b->ring[k % RING]) == ZT_OK) &&
              hash_back(b, h, CHAIN_START + k * STEP, (size_t)(length - k * STEP));
    if (ok) {
        zt_hasher_final(h, out);
        __atomic_add_fetch(&b->answered, 1, __ATOMIC_RELAXED);
    }
    zt_hasher_free(h);
    return ok;
}

unsigned ztd_body_hash_answered(const ztd_body_hash *b)
{
    return __atomic_load_n(&b->answered, __ATOMIC_RELAXED);
}

void ztd_body_hash_free(ztd_body_hash *b, uint8_t *held)
{
    if (!b) {
        free(held);
        return;
    }
    if (b->t)
        zt_hash_thread_free(b->t, held);
    else
        free(held);
    zt_hasher_free(b->whole);
    zt_hasher_free(b->chain);
    for (unsigned i = 0; i < RING; i++)
        zt_hasher_free(b->ring[i]);
    free(b);
}
