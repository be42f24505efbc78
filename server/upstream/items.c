/*
 * The upstream cache's store (see items.h and docs/internals/cache.md): the
 * index of items, single flight, references, and LRU eviction within the size
 * bound. The files themselves are items_disk.c's.
 *
 * One mutex guards the index, every item's state, ready count and reference
 * count, and the stats; each item has a condition variable for its waiters.
 * The LRU list holds exactly the evictable items (complete, unreferenced),
 * most recently released first, so eviction takes its tail and can never
 * pick an item a response still holds.
 */
#include "upstream/items.h"
#include "core/grow.h"
#include "core/clock.h"
#include "core/log.h"
#include "upstream/items_disk.h"

#include <errno.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/random.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <ztensor/ztensor_experimental.h>

#define INITIAL_BUCKETS 256

struct ztd_cache_item {
    ztd_cache *c;
    ztd_cache_key key;
    uint64_t size;
    uint64_t ready;        /* bytes [0, ready) are in the file */
    ztd_cache_state state; /* COMPLETE, FILLING or FAILED */
    int fd;                /* open while referenced (and while filling) */
    unsigned refs;
    unsigned waiters; /* threads in ztd_cache_wait: skip the broadcast without any */
    bool indexed;
    bool unchecked; /* found at open: re-hashed before its first use (CHECK) */
    int64_t stamp;  /* recency at open (mtime), for the first LRU order */
    pthread_cond_t cond;
    ztd_cache_item *hnext;       /* hash chain */
    ztd_cache_item *prev, *next; /* LRU list, while complete and unreferenced */
    zt_writeback wb;
    char tmp[ZTD_CACHE_TMP_NAME]; /* the fill file's name in tmp/ */
};

struct ztd_cache {
    pthread_mutex_t mu;
    ztd_cache_disk disk;
    ztd_cache_item **buckets;
    size_t nbuckets, count;
    ztd_cache_item lru;  /* sentinel: lru.next is the most recent, lru.prev the least */
    uint64_t serial;     /* names fill files */
    uint64_t seed;       /* keys the hash: digests are chosen by whoever chose the bytes */
    pthread_cond_t room; /* broadcast when an item stops being referenced or is dropped */
    unsigned room_waiters;
    uint64_t room_gen; /* counts those events */
    ztd_cache_stats st;
};

/* ---- the index: a chained hash table on the key (ids are digests) ---- */

/* A keyed mix of the whole key: a digest is the sha256 of bytes an upstream
 * chose, and a few million tries find many alike in their low bits. */
static size_t bucket(const ztd_cache *c, const ztd_cache_key *k)
{
    uint64_t h = c->seed ^ (uint64_t)k->kind;
    for (size_t i = 0; i < sizeof(k->id); i += 8) {
        uint64_t w;
        memcpy(&w, k->id + i, sizeof(w));
        h = (h ^ w) * 0x9e3779b97f4a7c15u;
        h ^= h >> 29;
    }
    return (size_t)h & (c->nbuckets - 1);
}

static bool same_key(const ztd_cache_key *a, const ztd_cache_key *b)
{
    return a->kind == b->kind && memcmp(a->id, b->id, sizeof(a->id)) == 0;
}

static ztd_cache_item *find(ztd_cache *c, const ztd_cache_key *k)
{
    for (ztd_cache_item *it = c->buckets[bucket(c, k)]; it; it = it->hnext)
        if (same_key(&it->key, k))
            return it;
    return NULL;
}

/* Double the table when it is full; when that allocation fails, chains grow. */
static void grow(ztd_cache *c)
{
    size_t n = c->nbuckets * 2;
    ztd_cache_item **b = calloc(n, sizeof(*b));
    if (!b)
        return;
    ztd_cache_item **old = c->buckets;
    size_t oldn = c->nbuckets;
    c->buckets = b, c->nbuckets = n;
    for (size_t i = 0; i < oldn; i++)
        for (ztd_cache_item *it = old[i], *nx; it; it = nx) {
            nx = it->hnext;
            size_t j = bucket(c, &it->key);
            it->hnext = b[j], b[j] = it;
        }
    free(old);
}

static void index_add(ztd_cache *c, ztd_cache_item *it)
{
    if (c->count >= c->nbuckets)
        grow(c);
    size_t j = bucket(c, &it->key);
    it->hnext = c->buckets[j], c->buckets[j] = it;
    it->indexed = true;
    c->count++;
    c->st.bytes += it->size;
    if (it->state == ZTD_CACHE_COMPLETE)
        c->st.items++;
    else
        c->st.filling++;
}

static void index_remove(ztd_cache *c, ztd_cache_item *it)
{
    for (ztd_cache_item **p = &c->buckets[bucket(c, &it->key)]; *p; p = &(*p)->hnext)
        if (*p == it) {
            *p = it->hnext;
            break;
        }
    it->indexed = false;
    c->count--;
    c->st.bytes -= it->size;
    if (it->state == ZTD_CACHE_COMPLETE)
        c->st.items--;
    else
        c->st.filling--;
}

/* ---- the LRU list ---- */

static void lru_push(ztd_cache *c, ztd_cache_item *it)
{
    it->prev = &c->lru, it->next = c->lru.next;
    c->lru.next->prev = it, c->lru.next = it;
}

static void lru_unlink(ztd_cache_item *it)
{
    it->prev->next = it->next, it->next->prev = it->prev;
    it->prev = it->next = NULL;
}

/* ---- items ---- */

static ztd_cache_tree tree_of(const ztd_cache_key *k)
{
    return k->kind == ZTD_CACHE_PART ? ZTD_CACHE_TREE_PARTS : ZTD_CACHE_TREE_BLOBS;
}

static ztd_cache_item *item_new(ztd_cache *c, const ztd_cache_key *k, uint64_t size,
                                ztd_cache_state state)
{
    ztd_cache_item *it = calloc(1, sizeof(*it));
    if (!it)
        return NULL;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    int rc = pthread_cond_init(&it->cond, &ca);
    pthread_condattr_destroy(&ca);
    if (rc != 0) {
        free(it);
        return NULL;
    }
    it->c = c, it->key = *k, it->size = size, it->state = state, it->fd = -1;
    return it;
}

static void item_free(ztd_cache_item *it)
{
    if (it->fd >= 0)
        close(it->fd);
    pthread_cond_destroy(&it->cond);
    free(it);
}

/* Remove an unreferenced complete item, file and all. */
static void drop(ztd_cache *c, ztd_cache_item *it)
{
    lru_unlink(it);
    index_remove(c, it);
    ztd_cache_disk_remove_item(&c->disk, tree_of(&it->key), it->key.id);
    item_free(it);
}

static void evict(ztd_cache *c, ztd_cache_item *it)
{
    c->st.evictions++;
    c->st.evicted_bytes += it->size;
    drop(c, it);
}

/* Evict least recently used items until `size` more bytes fit. */
static bool make_room(ztd_cache *c, uint64_t size)
{
    if (size > c->st.max_bytes)
        return false;
    while (c->st.bytes + size > c->st.max_bytes && c->lru.prev != &c->lru)
        evict(c, c->lru.prev);
    return c->st.bytes + size <= c->st.max_bytes;
}

/* Take a reference on a complete item, opening its file for the first one:
 * 0. A file gone, or replaced by one of another size or by something that is
 * not a regular file, drops the item: 1 (the caller fetches it again). Any
 * other failure: -1 with errno. */
static int hold_complete(ztd_cache *c, ztd_cache_item *it)
{
    if (it->refs == 0) {
        uint64_t size = 0;
        int fd = ztd_cache_disk_open_item(&c->disk, tree_of(&it->key), it->key.id, &size);
        if (fd < 0 || size != it->size) {
            int e = fd < 0 ? errno : ESTALE;
            if (fd >= 0)
                close(fd);
            if (e == ENOENT || e == ELOOP || e == EINVAL || e == ESTALE) {
                ztd_log(ZTD_LOG_WARN, "cache: an item's file was %s: fetching it again",
                        e == ENOENT ? "removed" : "replaced");
                drop(c, it);
                return 1;
            }
            errno = e;
            return -1;
        }
        lru_unlink(it);
        it->fd = fd;
    }
    it->refs++;
    return 0;
}

/* Take the first reference on an item found at open, for its checker: the
 * file open, no byte ready, FILLING until ztd_cache_check_done. 0, or as
 * hold_complete: 1 (dropped: fetch it again), -1 with errno. */
static int begin_check(ztd_cache *c, ztd_cache_item *it)
{
    int rc = hold_complete(c, it);
    if (rc != 0)
        return rc;
    it->unchecked = false;
    it->state = ZTD_CACHE_FILLING;
    it->ready = 0;
    c->st.items--, c->st.filling++;
    c->st.checks++;
    return 0;
}

/* ---- open and close ---- */

typedef struct found_list {
    ztd_cache_item **v;
    size_t n, cap;
    ztd_cache *c;
} found_list;

static void found(void *arg, ztd_cache_tree tree, const uint8_t id[32], uint64_t size,
                  int64_t mtime_ns)
{
    found_list *l = arg;
    ztd_cache_key k = {.kind = tree == ZTD_CACHE_TREE_PARTS ? ZTD_CACHE_PART : ZTD_CACHE_BLOB};
    memcpy(k.id, id, sizeof(k.id));
    if (ZTD_GROW_ITEMS(l->v, l->cap, l->n + 1, 64) != 0)
        return; /* not indexed: a later fill replaces the file */
    ztd_cache_item *it = item_new(l->c, &k, size, ZTD_CACHE_COMPLETE);
    if (it) {
        it->stamp = mtime_ns;
        it->unchecked = true; /* on disk while nobody watched it */
        l->v[l->n++] = it;
    }
}

static int by_stamp(const void *a, const void *b)
{
    const ztd_cache_item *x = *(ztd_cache_item *const *)a, *y = *(ztd_cache_item *const *)b;
    return (x->stamp > y->stamp) - (x->stamp < y->stamp);
}

/* Index what the walk found, oldest first so the newest ends most recent. */
static void rebuild(ztd_cache *c, const char *dir)
{
    found_list l = {.c = c};
    ztd_cache_scan removed;
    ztd_cache_disk_scan(&c->disk, found, &l, &removed);
    if (l.n)
        qsort(l.v, l.n, sizeof(*l.v), by_stamp);
    for (size_t i = 0; i < l.n; i++) {
        index_add(c, l.v[i]);
        lru_push(c, l.v[i]);
    }
    free(l.v);
    make_room(c, 0);
    ztd_log(ZTD_LOG_INFO,
            "cache: %s: %llu items, %llu bytes (limit %llu); removed %u unfinished fills, %u "
            "strays; evicted %llu",
            dir, (unsigned long long)c->st.items, (unsigned long long)c->st.bytes,
            (unsigned long long)c->st.max_bytes, removed.tmp_files, removed.strays,
            (unsigned long long)c->st.evictions);
}

ztd_cache *ztd_cache_open(const char *dir, uint64_t max_bytes, char *err, size_t err_cap)
{
    ztd_cache *c = calloc(1, sizeof(*c));
    if (c)
        c->buckets = calloc(INITIAL_BUCKETS, sizeof(*c->buckets));
    if (!c || !c->buckets) {
        if (err)
            snprintf(err, err_cap, "out of memory");
        free(c);
        errno = ENOMEM;
        return NULL;
    }
    if (ztd_cache_disk_open(&c->disk, dir, err, err_cap) != 0) {
        int e = errno;
        free(c->buckets);
        free(c);
        errno = e;
        return NULL;
    }
    pthread_mutex_init(&c->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&c->room, &ca);
    pthread_condattr_destroy(&ca);
    c->nbuckets = INITIAL_BUCKETS;
    c->lru.prev = c->lru.next = &c->lru;
    c->st.max_bytes = max_bytes;
    if (getentropy(&c->seed, sizeof(c->seed)) != 0)
        c->seed = (uint64_t)(uintptr_t)c ^ ztd_now_us();
    rebuild(c, dir);
    return c;
}

void ztd_cache_close(ztd_cache *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->nbuckets; i++)
        for (ztd_cache_item *it = c->buckets[i], *nx; it; it = nx) {
            nx = it->hnext;
            if (it->state == ZTD_CACHE_FILLING && it->tmp[0]) /* a check has none */
                ztd_cache_disk_remove_tmp(&c->disk, it->tmp);
            item_free(it);
        }
    free(c->buckets);
    ztd_cache_disk_close(&c->disk);
    pthread_mutex_destroy(&c->mu);
    pthread_cond_destroy(&c->room);
    free(c);
}

/* ---- acquire, lookup, release ---- */

/* A new item for key with its fill file: FILL, FULL or IOERR. */
static ztd_cache_state start_fill(ztd_cache *c, const ztd_cache_key *key, uint64_t size,
                                  ztd_cache_item **out, int *err_no)
{
    if (!make_room(c, size))
        return ZTD_CACHE_FULL;
    ztd_cache_item *it = item_new(c, key, size, ZTD_CACHE_FILLING);
    if (!it) {
        *err_no = ENOMEM;
        return ZTD_CACHE_IOERR;
    }
    it->fd = ztd_cache_disk_create_tmp(&c->disk, ++c->serial, it->tmp);
    if (it->fd < 0) {
        *err_no = errno;
        item_free(it);
        return ZTD_CACHE_IOERR;
    }
    zt_writeback_init(&it->wb, it->fd);
    it->refs = 1;
    index_add(c, it);
    c->st.misses++;
    *out = it;
    return ZTD_CACHE_FILL;
}

ztd_cache_state ztd_cache_acquire(ztd_cache *c, const ztd_cache_key *key, uint64_t size,
                                  ztd_cache_item **out, int *err_no)
{
    int dummy;
    if (!err_no)
        err_no = &dummy;
    *out = NULL;
    *err_no = 0;
    pthread_mutex_lock(&c->mu);
    ztd_cache_item *it = find(c, key);
    /* Another size under one key: a stale file nobody holds goes; one in use
     * stays and this caller cannot have it. */
    if (it && it->size != size && it->state == ZTD_CACHE_COMPLETE && it->refs == 0) {
        drop(c, it);
        it = NULL;
    }
    int held = 0;
    bool check = it && it->state == ZTD_CACHE_COMPLETE && it->size == size && it->unchecked;
    if (it && it->state == ZTD_CACHE_COMPLETE && it->size == size &&
        (held = check ? begin_check(c, it) : hold_complete(c, it)) == 1)
        it = NULL; /* its file was gone: fetch it again */
    ztd_cache_state st;
    if (it && check && held == 0) {
        *out = it, st = ZTD_CACHE_CHECK;
    } else if (it && it->size != size) {
        st = ZTD_CACHE_FAILED;
    } else if (it && it->state == ZTD_CACHE_FILLING) {
        it->refs++;
        c->st.waits++;
        *out = it, st = ZTD_CACHE_FILLING;
    } else if (it && held == 0) {
        c->st.hits++;
        *out = it, st = ZTD_CACHE_COMPLETE;
    } else if (it) {
        *err_no = errno, st = ZTD_CACHE_IOERR;
    } else {
        st = start_fill(c, key, size, out, err_no);
    }
    pthread_mutex_unlock(&c->mu);
    return st;
}

ztd_cache_item *ztd_cache_lookup(ztd_cache *c, const ztd_cache_key *key)
{
    pthread_mutex_lock(&c->mu);
    ztd_cache_item *it = find(c, key);
    if (it && (it->state != ZTD_CACHE_COMPLETE || it->unchecked || hold_complete(c, it) != 0))
        it = NULL;
    if (it)
        c->st.hits++;
    pthread_mutex_unlock(&c->mu);
    return it;
}

bool ztd_cache_is_complete(ztd_cache *c, const ztd_cache_key *key)
{
    pthread_mutex_lock(&c->mu);
    ztd_cache_item *it = find(c, key);
    bool complete = it && it->state == ZTD_CACHE_COMPLETE;
    pthread_mutex_unlock(&c->mu);
    return complete;
}

void ztd_cache_item_retain(ztd_cache_item *it)
{
    pthread_mutex_lock(&it->c->mu);
    it->refs++;
    pthread_mutex_unlock(&it->c->mu);
}

/* The last reference went while the item was filling: its filler left
 * without ending the fill. */
static void abandon(ztd_cache *c, ztd_cache_item *it)
{
    ztd_log(ZTD_LOG_WARN, "cache: a fill was released without ztd_cache_fill_done");
    if (it->tmp[0]) /* a check has none: its file stays, unchecked at the next open */
        ztd_cache_disk_remove_tmp(&c->disk, it->tmp);
    index_remove(c, it);
    c->st.fill_failures++;
    item_free(it);
}

void ztd_cache_item_release(ztd_cache_item *it)
{
    if (!it)
        return;
    ztd_cache *c = it->c;
    pthread_mutex_lock(&c->mu);
    if (--it->refs == 0) {
        if (!it->indexed) {
            item_free(it);
        } else if (it->state == ZTD_CACHE_FILLING) {
            abandon(c, it);
        } else {
            /* Unreferenced files are closed: thousands of items must not
             * hold thousands of fds. */
            close(it->fd);
            it->fd = -1;
            lru_push(c, it);
        }
        c->room_gen++;
        if (c->room_waiters)
            pthread_cond_broadcast(&c->room);
    }
    pthread_mutex_unlock(&c->mu);
}

uint64_t ztd_cache_room_gen(ztd_cache *c)
{
    pthread_mutex_lock(&c->mu);
    uint64_t g = c->room_gen;
    pthread_mutex_unlock(&c->mu);
    return g;
}

bool ztd_cache_wait_room(ztd_cache *c, uint64_t seen, int timeout_ms)
{
    struct timespec until = ztd_deadline(CLOCK_MONOTONIC, timeout_ms);
    int rc = 0;
    pthread_mutex_lock(&c->mu);
    c->room_waiters++;
    while (c->room_gen == seen && rc == 0)
        rc = pthread_cond_timedwait(&c->room, &c->mu, &until);
    c->room_waiters--;
    bool changed = c->room_gen != seen;
    pthread_mutex_unlock(&c->mu);
    return changed;
}

int ztd_cache_item_fd(const ztd_cache_item *it)
{
    return it->fd;
}

uint64_t ztd_cache_item_size(const ztd_cache_item *it)
{
    return it->size;
}

/* ---- filling ---- */

static void set_ready(ztd_cache_item *it, uint64_t ready)
{
    pthread_mutex_lock(&it->c->mu);
    it->ready = ready;
    if (it->waiters)
        pthread_cond_broadcast(&it->cond);
    pthread_mutex_unlock(&it->c->mu);
}

int ztd_cache_write(ztd_cache_item *it, const void *buf, size_t len)
{
    /* Only the filler moves `ready`, so it reads it without the lock. */
    uint64_t at = it->ready;
    if (it->state != ZTD_CACHE_FILLING || len > it->size - at) {
        errno = it->state != ZTD_CACHE_FILLING ? EINVAL : EFBIG;
        return -1;
    }
    const unsigned char *p = buf;
    size_t done = 0;
    int rc = 0;
    while (done < len) {
        ssize_t n = pwrite(it->fd, p + done, len - done, (off_t)(at + done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (n == 0)
                errno = ENOSPC;
            rc = -1;
            break;
        }
        done += (size_t)n;
    }
    int e = errno;
    if (done)
        set_ready(it, at + done);
    zt_writeback_note(&it->wb, at + done);
    errno = e;
    return rc;
}

/* fsync, then rename into place. false with the item's files removed. */
static bool publish(ztd_cache *c, ztd_cache_item *it, bool ok)
{
    if (ok && it->ready == it->size && fsync(it->fd) == 0 &&
        ztd_cache_disk_publish(&c->disk, it->tmp, tree_of(&it->key), it->key.id) == 0)
        return true;
    if (ok) /* the bytes were good: the disk failed them */
        ztd_log(ZTD_LOG_WARN, "cache: cannot keep a fill of %llu bytes: %s",
                (unsigned long long)it->size, it->ready != it->size ? "short" : strerror(errno));
    ztd_cache_disk_remove_tmp(&c->disk, it->tmp);
    /* A rename that happened before its directory's fsync failed leaves
     * the name in place: it must not outlive the FAILED state. */
    if (ok && it->ready == it->size)
        ztd_cache_disk_remove_item(&c->disk, tree_of(&it->key), it->key.id);
    return false;
}

ztd_cache_state ztd_cache_fill_done(ztd_cache_item *it, bool ok)
{
    ztd_cache *c = it->c;
    if (it->state != ZTD_CACHE_FILLING) /* already ended */
        return it->state;
    /* Still indexed and FILLING while the disk work runs: nobody else can
     * start a fill of this key and race our rename or unlink. */
    bool good = publish(c, it, ok);
    pthread_mutex_lock(&c->mu);
    if (good) {
        c->st.filling--, c->st.items++;
        it->state = ZTD_CACHE_COMPLETE;
        c->st.filled_bytes += it->size;
    } else {
        index_remove(c, it);
        it->state = ZTD_CACHE_FAILED;
        c->st.fill_failures++;
    }
    pthread_cond_broadcast(&it->cond);
    pthread_mutex_unlock(&c->mu);
    return good ? ZTD_CACHE_COMPLETE : ZTD_CACHE_FAILED;
}

ztd_cache_state ztd_cache_check_done(ztd_cache_item *it, bool ok)
{
    ztd_cache *c = it->c;
    ztd_cache_state st = ZTD_CACHE_COMPLETE;
    pthread_mutex_lock(&c->mu);
    if (ok) {
        it->state = ZTD_CACHE_COMPLETE;
        it->ready = it->size;
        c->st.filling--, c->st.items++;
    } else {
        /* Not the bytes its name says: they go, and the key is fetched again
         * into a fill file (nobody read a byte: none was ready). */
        c->st.check_failures++;
        ztd_cache_disk_remove_item(&c->disk, tree_of(&it->key), it->key.id);
        int fd = ztd_cache_disk_create_tmp(&c->disk, ++c->serial, it->tmp);
        if (fd >= 0) {
            close(it->fd);
            it->fd = fd;
            zt_writeback_init(&it->wb, fd);
            c->st.misses++;
            st = ZTD_CACHE_FILL;
        } else {
            index_remove(c, it);
            it->state = ZTD_CACHE_FAILED;
            c->st.fill_failures++;
            st = ZTD_CACHE_FAILED;
        }
    }
    pthread_cond_broadcast(&it->cond);
    pthread_mutex_unlock(&c->mu);
    return st;
}

/* ---- waiting ---- */

ztd_cache_state ztd_cache_wait(ztd_cache_item *it, uint64_t want, int timeout_ms, uint64_t *ready)
{
    struct timespec until = ztd_deadline(CLOCK_MONOTONIC, timeout_ms);
    ztd_cache *c = it->c;
    pthread_mutex_lock(&c->mu);
    while (timeout_ms > 0 && it->state == ZTD_CACHE_FILLING && it->ready < want) {
        it->waiters++;
        int rc = pthread_cond_timedwait(&it->cond, &c->mu, &until);
        it->waiters--;
        if (rc == ETIMEDOUT)
            break;
    }
    ztd_cache_state st = it->state;
    uint64_t r = st == ZTD_CACHE_COMPLETE ? it->size : it->ready;
    pthread_mutex_unlock(&c->mu);
    if (ready)
        *ready = r;
    return st;
}

ztd_cache_state ztd_cache_item_state(const ztd_cache_item *it, uint64_t *ready)
{
    return ztd_cache_wait((ztd_cache_item *)it, 0, 0, ready);
}

void ztd_cache_get_stats(ztd_cache *c, ztd_cache_stats *out)
{
    pthread_mutex_lock(&c->mu);
    *out = c->st;
    pthread_mutex_unlock(&c->mu);
}

/* ---- keys ---- */

static void hash_part(EVP_MD_CTX *md, const char *s)
{
    uint64_t n = s ? strlen(s) : 0;
    unsigned char len[8];
    for (int i = 0; i < 8; i++)
        len[i] = (unsigned char)(n >> (56 - 8 * i));
    EVP_DigestUpdate(md, len, sizeof(len));
    if (n)
        EVP_DigestUpdate(md, s, (size_t)n);
}

void ztd_cache_part_key(ztd_cache_key *out, const char *url, const char *validator,
                        const char *object, const char *component)
{
    out->kind = ZTD_CACHE_PART;
    memset(out->id, 0, sizeof(out->id));
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    unsigned n = 0;
    if (md && EVP_DigestInit_ex(md, EVP_sha256(), NULL) == 1) {
        hash_part(md, url);
        hash_part(md, validator);
        hash_part(md, object);
        hash_part(md, component);
        EVP_DigestFinal_ex(md, out->id, &n);
    }
    EVP_MD_CTX_free(md);
}
