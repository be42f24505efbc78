/*
 * A background hasher for the writer (see internal.h). The writer hands over
 * each 1 MiB output buffer once it has been written to the file, and takes a
 * free one back; the pipe's thread digests the buffers in order. Writing and
 * hashing then run on two cores: SHA-256 on one core is about as fast as a
 * disk or a loopback socket, so doing both in one thread halves throughput.
 *
 * Buffers are interchangeable: the caller always holds exactly one, the pipe
 * the others (queued or free). No buffer is copied.
 */
#include "internal.h"

#include <pthread.h>

#define PIPE_BUFS 4 /* the caller's one, plus three in flight */

struct zt__hash_pipe {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    size_t bufsize;
    zt_hasher *h; /* owned while started */
    struct slot {
        uint8_t *buf;
        size_t len;
    } queue[PIPE_BUFS];
    size_t qhead, qlen; /* ring of buffers to hash */
    uint8_t *free_bufs[PIPE_BUFS];
    size_t nfree;
    bool busy, stop, running;
};

static void *pipe_main(void *arg)
{
    zt__hash_pipe *p = arg;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->qlen && !p->stop)
            pthread_cond_wait(&p->cv, &p->mu);
        if (!p->qlen)
            break;
        struct slot s = p->queue[p->qhead];
        p->qhead = (p->qhead + 1) % PIPE_BUFS;
        p->qlen--;
        p->busy = true;
        pthread_mutex_unlock(&p->mu);
        zt_hasher_update(p->h, s.buf, s.len);
        pthread_mutex_lock(&p->mu);
        p->busy = false;
        p->free_bufs[p->nfree++] = s.buf;
        pthread_cond_broadcast(&p->cv);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

zt__hash_pipe *zt__hash_pipe_new(size_t bufsize)
{
    zt__hash_pipe *p = zt__calloc(1, sizeof(*p));
    if (!p)
        return NULL;
    p->bufsize = bufsize;
    for (size_t i = 0; i + 1 < PIPE_BUFS; i++) {
        if (!(p->free_bufs[p->nfree] = zt__malloc(bufsize))) {
            zt__hash_pipe_free(p);
            return NULL;
        }
        p->nfree++;
    }
    if (pthread_mutex_init(&p->mu, NULL) != 0) {
        zt__hash_pipe_free(p);
        return NULL;
    }
    if (pthread_cond_init(&p->cv, NULL) != 0) {
        pthread_mutex_destroy(&p->mu);
        zt__hash_pipe_free(p);
        return NULL;
    }
    if (pthread_create(&p->thread, NULL, pipe_main, p) != 0) {
        pthread_cond_destroy(&p->cv);
        pthread_mutex_destroy(&p->mu);
        zt__hash_pipe_free(p);
        return NULL;
    }
    p->running = true;
    return p;
}

void zt__hash_pipe_start(zt__hash_pipe *p, zt_hasher *h)
{
    pthread_mutex_lock(&p->mu);
    p->h = h;
    pthread_mutex_unlock(&p->mu);
}

uint8_t *zt__hash_pipe_submit(zt__hash_pipe *p, uint8_t *buf, size_t len)
{
    pthread_mutex_lock(&p->mu);
    /* The caller held one buffer, so there is room: PIPE_BUFS slots in all. */
    p->queue[(p->qhead + p->qlen) % PIPE_BUFS] = (struct slot){buf, len};
    p->qlen++;
    pthread_cond_broadcast(&p->cv);
    while (!p->nfree)
        pthread_cond_wait(&p->cv, &p->mu);
    uint8_t *out = p->free_bufs[--p->nfree];
    pthread_mutex_unlock(&p->mu);
    return out;
}

zt_hasher *zt__hash_pipe_finish(zt__hash_pipe *p)
{
    pthread_mutex_lock(&p->mu);
    while (p->qlen || p->busy)
        pthread_cond_wait(&p->cv, &p->mu);
    zt_hasher *h = p->h;
    p->h = NULL;
    pthread_mutex_unlock(&p->mu);
    return h;
}

void zt__hash_pipe_free(zt__hash_pipe *p)
{
    if (!p)
        return;
    if (p->running) {
        zt_hasher_free(zt__hash_pipe_finish(p));
        pthread_mutex_lock(&p->mu);
        p->stop = true;
        pthread_cond_broadcast(&p->cv);
        pthread_mutex_unlock(&p->mu);
        pthread_join(p->thread, NULL);
        pthread_cond_destroy(&p->cv);
        pthread_mutex_destroy(&p->mu);
    }
    for (size_t i = 0; i < p->nfree; i++)
        zt__free(p->free_bufs[i]);
    zt__free(p);
}

/* ---- the public face: one digest over a stream of buffers */

struct zt_hash_thread {
    zt__hash_pipe *pipe;
};

zt_hash_thread *zt_hash_thread_new(zt_digest_kind kind, size_t bufsize, uint8_t **first)
{
    zt_hash_thread *t = zt__calloc(1, sizeof(*t));
    zt_hasher *h = zt_hasher_new(kind);
    uint8_t *buf = bufsize ? zt__malloc(bufsize) : NULL;
    if (!t || !h || !buf || !(t->pipe = zt__hash_pipe_new(bufsize))) {
        zt__free(t);
        zt_hasher_free(h);
        zt__free(buf);
        return NULL;
    }
    zt__hash_pipe_start(t->pipe, h);
    *first = buf;
    return t;
}

uint8_t *zt_hash_thread_submit(zt_hash_thread *t, uint8_t *buf, size_t len)
{
    return zt__hash_pipe_submit(t->pipe, buf, len);
}

size_t zt_hash_thread_final(zt_hash_thread *t, uint8_t out[32])
{
    zt_hasher *h = zt__hash_pipe_finish(t->pipe);
    size_t n = h ? zt_hasher_final(h, out) : 0;
    zt_hasher_free(h);
    return n;
}

void zt_hash_thread_free(zt_hash_thread *t, uint8_t *held)
{
    if (!t)
        return;
    zt__free(held);
    zt__hash_pipe_free(t->pipe);
    zt__free(t);
}
