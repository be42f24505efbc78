/*
 * Hashing beside the transfers. A whole component's digest is computed over
 * its stored bytes in order, and sha256 on one core (about 1.8 GB/s here) is
 * slower than loopback or a fast network: hashed on the thread that drives
 * libcurl, a 512 MiB read went from 5.4 GB/s to 1.3 GB/s. So the reader hands
 * each component's newly landed prefix to one of a few lanes (threads); a
 * component always goes to the same lane, so its bytes are hashed in order.
 * The bytes are the caller's buffer, final once landed: nothing is copied.
 */
#include "remote_internal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

typedef struct seg {
    zt_hasher *h;
    const uint8_t *p;
    size_t n;
    bool drop; /* the pages are a file mapping's: let them go once hashed */
    struct seg *next;
} seg;

typedef struct lane {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t work, idle;
    seg *head, *tail;
    bool busy, stop, started;
    ztr_drop drop;            /* this lane's pages hashed, not yet released */
    _Atomic uint64_t *hashed; /* the set's count */
    int fd;                   /* >= 0: segments to drop are read from fd (ztr__lanes_read_from) */
    const uint8_t *base;      /* the mapping of fd */
    uint8_t *buf;             /* READ_BUF bytes for those reads */
} lane;

struct ztr_lanes {
    lane *l;
    unsigned n;
    _Atomic uint64_t hashed; /* bytes hashed (and released) by every lane */
};

#define READ_BUF (256u << 10) /* read and hashed while in the cache */

/* s's bytes into its hasher: read with pread from the file that the mapping
 * maps, when the lane has one, so that their pages are never mapped into
 * this process (reading through the mapping mapped more than the bytes
 * hashed: up to 27 MB of the pull's window, released only once hashed);
 * through the mapping otherwise, or from where a read fails. */
static void hash_seg(lane *l, const seg *s)
{
    size_t at = 0;
    if (s->drop && l->fd >= 0 && (l->buf || (l->buf = malloc(READ_BUF))))
        while (at < s->n) {
            size_t k = s->n - at < READ_BUF ? s->n - at : READ_BUF;
            if (pread(l->fd, l->buf, k, (off_t)(s->p + at - l->base)) != (ssize_t)k)
                break;
            zt_hasher_update(s->h, l->buf, k);
            at += k;
        }
    if (at < s->n) {
        zt_hasher_update(s->h, s->p + at, s->n - at);
        if (s->drop)
            ztr__drop_add(&l->drop, s->p + at, s->n - at);
    }
}

static void *run_lane(void *arg)
{
    lane *l = arg;
    pthread_mutex_lock(&l->mu);
    for (;;) {
        while (!l->head && !l->stop)
            pthread_cond_wait(&l->work, &l->mu);
        if (!l->head)
            break;
        seg *s = l->head;
        l->head = s->next;
        if (!l->head)
            l->tail = NULL;
        l->busy = true;
        pthread_mutex_unlock(&l->mu);
        hash_seg(l, s);
        atomic_fetch_add_explicit(l->hashed, s->n, memory_order_release);
        free(s);
        pthread_mutex_lock(&l->mu);
        if (!l->head) { /* idle: what was hashed goes now */
            pthread_mutex_unlock(&l->mu);
            ztr__drop_flush(&l->drop);
            pthread_mutex_lock(&l->mu);
        }
        l->busy = false;
        if (!l->head)
            pthread_cond_broadcast(&l->idle);
    }
    pthread_mutex_unlock(&l->mu);
    return NULL;
}

ztr_lanes *ztr__lanes_new(unsigned n)
{
    ztr_lanes *L = calloc(1, sizeof(*L));
    if (!L || !(L->l = calloc(n, sizeof(*L->l)))) {
        free(L);
        return NULL;
    }
    atomic_init(&L->hashed, 0);
    for (unsigned i = 0; i < n; i++) {
        lane *l = &L->l[i];
        pthread_mutex_init(&l->mu, NULL);
        pthread_cond_init(&l->work, NULL);
        pthread_cond_init(&l->idle, NULL);
        l->hashed = &L->hashed;
        l->fd = -1;
        l->started = pthread_create(&l->thread, NULL, run_lane, l) == 0;
        L->n = i + 1;
        if (!l->started) {
            ztr__lanes_free(L);
            return NULL;
        }
    }
    return L;
}

/* The pages holding [p, p + n) leave this process's memory. A shared file
 * mapping keeps their bytes (dirty ones too) in the page cache, so the pages
 * at both ends go as well although a neighbour may still be landing or being
 * hashed there: its next access faults the page back in, with its bytes.
 * Keeping them instead kept every boundary page of a 100,000-object file
 * mapped until the end of its batch (56 MiB). */
void ztr__drop_pages(const uint8_t *p, size_t n)
{
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), a = (uintptr_t)p / page * page,
              b = ((uintptr_t)p + n + page - 1) / page * page;
    if (b > a)
        madvise((void *)a, b - a, MADV_DONTNEED);
}

/* Releasing pages is a system call and, in a process with several threads,
 * a TLB shootdown; done per component of a file of 100,000 small objects it
 * tripled the pull's system time. So neighbouring ranges are gathered and
 * released together, a MiB or so at a time. */
#define DROP_AT (1u << 20)

void ztr__drop_flush(ztr_drop *d)
{
    if (d->hi > d->lo)
        ztr__drop_pages((const uint8_t *)d->lo, (size_t)(d->hi - d->lo));
    d->lo = d->hi = 0;
}

void ztr__drop_add(ztr_drop *d, const uint8_t *p, size_t n)
{
    uintptr_t lo = (uintptr_t)p, hi = lo + n, page = (uintptr_t)sysconf(_SC_PAGESIZE);
    if (d->hi > d->lo && (lo > d->hi + page || hi + page < d->lo))
        ztr__drop_flush(d); /* not a neighbour */
    if (d->hi > d->lo) {
        lo = lo < d->lo ? lo : d->lo;
        hi = hi > d->hi ? hi : d->hi;
    }
    d->lo = lo;
    d->hi = hi;
    if (hi - lo >= DROP_AT)
        ztr__drop_flush(d);
}

bool ztr__lanes_push(ztr_lanes *L, unsigned k, zt_hasher *h, const uint8_t *p, size_t n, bool drop)
{
    seg *s = malloc(sizeof(*s));
    if (!s)
        return false;
    *s = (seg){h, p, n, drop, NULL};
    lane *l = &L->l[k % L->n];
    pthread_mutex_lock(&l->mu);
    if (l->tail)
        l->tail->next = s;
    else
        l->head = s;
    l->tail = s;
    pthread_cond_signal(&l->work);
    pthread_mutex_unlock(&l->mu);
    return true;
}

void ztr__lanes_read_from(ztr_lanes *L, int fd, const uint8_t *base)
{
    for (unsigned i = 0; L && i < L->n; i++) {
        pthread_mutex_lock(&L->l[i].mu);
        L->l[i].fd = fd;
        L->l[i].base = base;
        pthread_mutex_unlock(&L->l[i].mu);
    }
}

uint64_t ztr__lanes_hashed(ztr_lanes *L)
{
    return L ? atomic_load_explicit(&L->hashed, memory_order_acquire) : 0;
}

void ztr__lanes_wait(ztr_lanes *L)
{
    for (unsigned i = 0; L && i < L->n; i++) {
        lane *l = &L->l[i];
        pthread_mutex_lock(&l->mu);
        while (l->head || l->busy)
            pthread_cond_wait(&l->idle, &l->mu);
        pthread_mutex_unlock(&l->mu);
    }
}

void ztr__lanes_free(ztr_lanes *L)
{
    if (!L)
        return;
    for (unsigned i = 0; i < L->n; i++) {
        lane *l = &L->l[i];
        if (l->started) {
            pthread_mutex_lock(&l->mu);
            l->stop = true;
            pthread_cond_signal(&l->work);
            pthread_mutex_unlock(&l->mu);
            pthread_join(l->thread, NULL); /* after the queue is empty */
        }
        pthread_mutex_destroy(&l->mu);
        pthread_cond_destroy(&l->work);
        pthread_cond_destroy(&l->idle);
        free(l->buf);
    }
    free(L->l);
    free(L);
}
