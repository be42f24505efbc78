/*
 * test_cache.c: the upstream cache's store (server/upstream/items.c and
 * items_disk.c) on real directories: fills and lookups, single flight across
 * threads, failed fills, LRU eviction within the bound, recovery at open
 * (including after a kill -9 mid-fill; items found at open are checked again
 * before their first use), a full disk (a 1 MiB tmpfs), symlinks
 * planted in the cache directory, and the check of file names as keys.
 */
#include "tmpfiles.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <time.h>

#include "core/clock.h"
#include "upstream/items.h"
#include "upstream/items_disk.h"

typedef struct fixture {
    char dir[512];
    ztd_cache *c;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));
    snprintf(f->dir, sizeof(f->dir), "%s", tmp_dir("cache"));
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    ztd_cache_close(f->c);
    umount2(f->dir, MNT_DETACH); /* disk_full's tmpfs, if an assertion left it */
    rm_tree(f->dir);
    free(f);
    return 0;
}

static ztd_cache *open_cache(const char *dir, uint64_t max)
{
    char err[256] = "";
    ztd_cache *c = ztd_cache_open(dir, max, err, sizeof(err));
    if (!c)
        fail_msg("ztd_cache_open(%s): %s", dir, err);
    return c;
}

static ztd_cache_key blob_key(unsigned char seed)
{
    ztd_cache_key k = {.kind = ZTD_CACHE_BLOB};
    for (int i = 0; i < 32; i++)
        k.id[i] = (unsigned char)(seed + 7 * i);
    return k;
}

/* The item's file, relative to the cache directory. */
static const char *item_path(const char *dir, const ztd_cache_key *k)
{
    static char p[1024];
    char name[65];
    ztd_cache_id_name(k->id, name);
    snprintf(p, sizeof(p), "%s/%s/%.2s/%s", dir,
             k->kind == ZTD_CACHE_BLOB ? "blobs/sha256" : "parts", name, name);
    return p;
}

static bool exists(const char *path)
{
    struct stat sb;
    return lstat(path, &sb) == 0;
}

static unsigned entries(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    unsigned n = 0;
    struct dirent *de;
    while ((de = readdir(d)))
        n += strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
    closedir(d);
    return n;
}

static void pattern(unsigned char *buf, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        buf[i] = (unsigned char)(seed * 31 + i * 7 + (i >> 8));
}

/* Fill key with n pattern bytes and release it: COMPLETE. */
static void fill(ztd_cache *c, const ztd_cache_key *k, size_t n, unsigned seed)
{
    unsigned char *buf = malloc(n ? n : 1);
    pattern(buf, n, seed);
    ztd_cache_item *it;
    int e;
    assert_int_equal(ztd_cache_acquire(c, k, n, &it, &e), ZTD_CACHE_FILL);
    assert_int_equal(ztd_cache_write(it, buf, n), 0);
    assert_int_equal(ztd_cache_fill_done(it, true), ZTD_CACHE_COMPLETE);
    ztd_cache_item_release(it);
    free(buf);
}

/* The item's bytes equal the pattern. */
static void check_bytes(ztd_cache_item *it, unsigned seed)
{
    size_t n = ztd_cache_item_size(it);
    unsigned char *want = malloc(n + 1), *got = malloc(n + 1);
    pattern(want, n, seed);
    assert_int_equal(pread(ztd_cache_item_fd(it), got, n + 1, 0), (ssize_t)n);
    assert_memory_equal(got, want, n);
    free(want), free(got);
}

static void fill_then_lookup(void **state)
{
    fixture *f = *state;
    f->c = open_cache(f->dir, 1 << 20);
    ztd_cache_key k = blob_key(1);
    ztd_cache_item *it, *other;
    int e = -1;
    unsigned char buf[5000];
    pattern(buf, sizeof(buf), 1);
    assert_int_equal(ztd_cache_acquire(f->c, &k, sizeof(buf), &it, &e), ZTD_CACHE_FILL);
    assert_int_equal(e, 0);
    assert_int_equal(ztd_cache_write(it, buf, 1000), 0);
    uint64_t ready = 0;
    assert_int_equal(ztd_cache_item_state(it, &ready), ZTD_CACHE_FILLING);
    assert_int_equal(ready, 1000);
    assert_null(ztd_cache_lookup(f->c, &k)); /* not complete yet */
    /* One key, another size: refused while the fill holds it. */
    assert_int_equal(ztd_cache_acquire(f->c, &k, 10, &other, &e), ZTD_CACHE_FAILED);
    assert_null(other);
    assert_false(exists(item_path(f->dir, &k))); /* in tmp/ until done */
    assert_int_equal(entries(join(f->dir, "tmp")), 1);
    assert_int_equal(ztd_cache_write(it, buf + 1000, sizeof(buf) - 1000), 0);
    assert_int_equal(ztd_cache_write(it, buf, 1), -1); /* past its size */
    assert_int_equal(errno, EFBIG);
    assert_int_equal(ztd_cache_fill_done(it, true), ZTD_CACHE_COMPLETE);
    assert_true(exists(item_path(f->dir, &k)));
    assert_int_equal(entries(join(f->dir, "tmp")), 0);
    check_bytes(it, 1); /* the fd from the fill still reads after the rename */
    ztd_cache_item_release(it);

    it = ztd_cache_lookup(f->c, &k);
    assert_non_null(it);
    assert_int_equal(ztd_cache_item_size(it), sizeof(buf));
    check_bytes(it, 1);
    assert_int_equal(ztd_cache_acquire(f->c, &k, sizeof(buf), &other, &e), ZTD_CACHE_COMPLETE);
    assert_ptr_equal(other, it);
    ztd_cache_item_release(other);
    ztd_cache_item_release(it);

    ztd_cache_stats st;
    ztd_cache_get_stats(f->c, &st);
    assert_int_equal(st.bytes, sizeof(buf));
    assert_int_equal(st.items, 1);
    assert_int_equal(st.filling, 0);
    assert_int_equal(st.misses, 1);
    assert_int_equal(st.hits, 2);
    assert_int_equal(st.filled_bytes, sizeof(buf));
    assert_int_equal(st.evictions, 0);
}

static void part_keys(void **state)
{
    fixture *f = *state;
    ztd_cache_key a, b, c2, d;
    ztd_cache_part_key(&a, "http://u/m.zt", "\"v1\"", "w", "data");
    ztd_cache_part_key(&b, "http://u/m.zt", "\"v1\"", "w", "data");
    ztd_cache_part_key(&c2, "http://u/m.zt", "\"v2\"", "w", "data");
    /* Length prefixes: moving a boundary between parts changes the key. */
    ztd_cache_part_key(&d, "http://u/m.zt", "\"v1\"", "wd", "ata");
    assert_int_equal(a.kind, ZTD_CACHE_PART);
    assert_memory_equal(a.id, b.id, 32);
    assert_memory_not_equal(a.id, c2.id, 32);
    assert_memory_not_equal(a.id, d.id, 32);

    f->c = open_cache(f->dir, 1 << 20);
    fill(f->c, &a, 300, 2);
    assert_true(exists(item_path(f->dir, &a)));
    assert_null(ztd_cache_lookup(f->c, &c2));
    ztd_cache_key as_blob = a;
    as_blob.kind = ZTD_CACHE_BLOB; /* same id, other tree: another item */
    assert_null(ztd_cache_lookup(f->c, &as_blob));
    ztd_cache_item *it = ztd_cache_lookup(f->c, &a);
    assert_non_null(it);
    check_bytes(it, 2);
    ztd_cache_item_release(it);
    /* Zero bytes is an item too. */
    fill(f->c, &c2, 0, 0);
    it = ztd_cache_lookup(f->c, &c2);
    assert_non_null(it);
    assert_int_equal(ztd_cache_item_size(it), 0);
    ztd_cache_item_release(it);
}

/* ---- single flight ---- */

#define FLIGHT_THREADS 4
#define FLIGHT_SIZE (256u << 10)

typedef struct flight {
    ztd_cache *c;
    ztd_cache_key key;
    pthread_barrier_t start;
    atomic_int fills, joined, saw_partial;
    atomic_int failed; /* a check in a thread went wrong (cmocka asserts only in main) */
} flight;

static void flight_fill(flight *fl, ztd_cache_item *it)
{
    static unsigned char buf[FLIGHT_SIZE];
    pattern(buf, sizeof(buf), 3);
    size_t half = FLIGHT_SIZE / 2;
    if (ztd_cache_write(it, buf, half) != 0)
        atomic_store(&fl->failed, 1);
    /* The rest only once every waiter has seen the first half alone. */
    uint64_t until = ztd_now_ms() + 10000;
    while (atomic_load(&fl->saw_partial) < FLIGHT_THREADS - 1 && ztd_now_ms() < until)
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    for (size_t at = half; at < FLIGHT_SIZE; at += 4096)
        if (ztd_cache_write(it, buf + at, 4096) != 0)
            atomic_store(&fl->failed, 2);
    if (ztd_cache_fill_done(it, true) != ZTD_CACHE_COMPLETE)
        atomic_store(&fl->failed, 3);
}

/* A waiter reads the bytes as they land, checking each against the pattern. */
static void flight_read(flight *fl, ztd_cache_item *it)
{
    unsigned char want[FLIGHT_SIZE], got[FLIGHT_SIZE];
    pattern(want, sizeof(want), 3);
    uint64_t have = 0, ready = 0;
    bool partial = false;
    ztd_cache_state st = ZTD_CACHE_FILLING;
    for (int i = 0; i < 10000 && st == ZTD_CACHE_FILLING; i++) {
        st = ztd_cache_wait(it, have + 1, 30000, &ready);
        if (ready > have) {
            ssize_t n = pread(ztd_cache_item_fd(it), got + have, ready - have, (off_t)have);
            if (n != (ssize_t)(ready - have) || memcmp(got + have, want + have, (size_t)n))
                atomic_store(&fl->failed, 4);
            have = ready;
        }
        if (st == ZTD_CACHE_FILLING && ready > 0 && ready < FLIGHT_SIZE && !partial) {
            partial = true;
            atomic_fetch_add(&fl->saw_partial, 1);
        }
    }
    if (st != ZTD_CACHE_COMPLETE || have != FLIGHT_SIZE || !partial)
        atomic_store(&fl->failed, 5);
}

static void *flight_thread(void *arg)
{
    flight *fl = arg;
    ztd_cache_item *it;
    int e;
    pthread_barrier_wait(&fl->start);
    ztd_cache_state st = ztd_cache_acquire(fl->c, &fl->key, FLIGHT_SIZE, &it, &e);
    if (st == ZTD_CACHE_FILL) {
        atomic_fetch_add(&fl->fills, 1);
        flight_fill(fl, it);
    } else if (st == ZTD_CACHE_FILLING) {
        atomic_fetch_add(&fl->joined, 1);
        flight_read(fl, it);
    } else {
        atomic_store(&fl->failed, 6);
    }
    ztd_cache_item_release(it);
    return NULL;
}

static void single_flight(void **state)
{
    fixture *f = *state;
    f->c = open_cache(f->dir, 1 << 20);
    flight fl = {.c = f->c, .key = blob_key(3)};
    pthread_barrier_init(&fl.start, NULL, FLIGHT_THREADS);
    pthread_t t[FLIGHT_THREADS];
    uint64_t t0 = ztd_now_ms();
    for (int i = 0; i < FLIGHT_THREADS; i++)
        assert_int_equal(pthread_create(&t[i], NULL, flight_thread, &fl), 0);
    for (int i = 0; i < FLIGHT_THREADS; i++)
        pthread_join(t[i], NULL);
    pthread_barrier_destroy(&fl.start);
    /* Waiters are woken by the bytes, not by their timeouts (30 s). */
    assert_true(ztd_now_ms() - t0 < 10000);
    assert_int_equal(atomic_load(&fl.failed), 0);
    assert_int_equal(atomic_load(&fl.fills), 1);
    assert_int_equal(atomic_load(&fl.joined), FLIGHT_THREADS - 1);
    assert_int_equal(atomic_load(&fl.saw_partial), FLIGHT_THREADS - 1);
    ztd_cache_stats st;
    ztd_cache_get_stats(f->c, &st);
    assert_int_equal(st.misses, 1);
    assert_int_equal(st.waits, FLIGHT_THREADS - 1);
    assert_int_equal(st.items, 1);
    assert_int_equal(st.filled_bytes, FLIGHT_SIZE);
}

/* ---- churn: many threads, few keys, a small bound ---- */

#define CHURN_THREADS 4
#define CHURN_ROUNDS 300
#define CHURN_KEYS 12
#define CHURN_MAX 6000

typedef struct churn {
    ztd_cache *c;
    atomic_int failed;
    atomic_int full, filled, read;
} churn;

static size_t churn_size(unsigned k)
{
    return 500 + 100 * k; /* one size per key */
}

/* Every byte read matches; a fill fails now and then on purpose. */
static void churn_one(churn *ch, unsigned k, unsigned round)
{
    ztd_cache_key key = blob_key((unsigned char)(100 + k));
    size_t n = churn_size(k);
    unsigned char want[2000], got[2000];
    pattern(want, n, 100 + k);
    ztd_cache_item *it;
    int e;
    ztd_cache_state st = ztd_cache_acquire(ch->c, &key, n, &it, &e);
    if (st == ZTD_CACHE_FULL) {
        atomic_fetch_add(&ch->full, 1);
        return;
    }
    if (st == ZTD_CACHE_FILL) {
        bool ok = round % 7 != 3;
        if (ztd_cache_write(it, want, n / 2) != 0 || ztd_cache_write(it, want + n / 2, n - n / 2))
            atomic_store(&ch->failed, 1);
        st = ztd_cache_fill_done(it, ok);
        if (st != (ok ? ZTD_CACHE_COMPLETE : ZTD_CACHE_FAILED))
            atomic_store(&ch->failed, 2);
        atomic_fetch_add(&ch->filled, 1);
    } else if (st == ZTD_CACHE_FILLING) {
        uint64_t ready;
        st = ztd_cache_wait(it, n + 1, 10000, &ready);
    }
    if (st == ZTD_CACHE_COMPLETE) {
        if (pread(ztd_cache_item_fd(it), got, n, 0) != (ssize_t)n || memcmp(got, want, n))
            atomic_store(&ch->failed, 3);
        atomic_fetch_add(&ch->read, 1);
    } else if (st != ZTD_CACHE_FAILED) {
        atomic_store(&ch->failed, 4);
    }
    ztd_cache_item_release(it);
}

static void *churn_thread(void *arg)
{
    churn *ch = arg;
    unsigned seed = (unsigned)(uintptr_t)&seed;
    for (unsigned r = 0; r < CHURN_ROUNDS && !atomic_load(&ch->failed); r++) {
        churn_one(ch, (unsigned)rand_r(&seed) % CHURN_KEYS, r);
        ztd_cache_stats st;
        ztd_cache_get_stats(ch->c, &st);
        if (st.bytes > st.max_bytes)
            atomic_store(&ch->failed, 5);
    }
    return NULL;
}

static void concurrent_churn(void **state)
{
    fixture *f = *state;
    f->c = open_cache(f->dir, CHURN_MAX);
    churn ch = {.c = f->c};
    pthread_t t[CHURN_THREADS];
    for (int i = 0; i < CHURN_THREADS; i++)
        assert_int_equal(pthread_create(&t[i], NULL, churn_thread, &ch), 0);
    for (int i = 0; i < CHURN_THREADS; i++)
        pthread_join(t[i], NULL);
    assert_int_equal(atomic_load(&ch.failed), 0);
    assert_true(atomic_load(&ch.read) > 0);
    ztd_cache_stats st;
    ztd_cache_get_stats(f->c, &st);
    assert_int_equal(st.filling, 0);
    print_message("churn: %d filled, %d read, %d full, %llu waits, %llu evictions\n",
                  atomic_load(&ch.filled), atomic_load(&ch.read), atomic_load(&ch.full),
                  (unsigned long long)st.waits, (unsigned long long)st.evictions);
    assert_true(st.evictions > 0);
    assert_int_equal(entries(join(f->dir, "tmp")), 0);
    /* What the index counted is what is on disk. */
    ztd_cache_close(f->c);
    f->c = open_cache(f->dir, CHURN_MAX);
    ztd_cache_stats again;
    ztd_cache_get_stats(f->c, &again);
    assert_int_equal(again.items, st.items);
    assert_int_equal(again.bytes, st.bytes);
    assert_int_equal(again.evictions, 0);
}

/* ---- failed fills ---- */

typedef struct waiter {
    ztd_cache *c;
    ztd_cache_key key;
    ztd_cache_state acquired, ended;
    uint64_t ready;
    uint64_t waited_ms;
} waiter;

static void *wait_thread(void *arg)
{
    waiter *w = arg;
    ztd_cache_item *it;
    int e;
    w->acquired = ztd_cache_acquire(w->c, &w->key, 4096, &it, &e);
    if (it) {
        uint64_t t0 = ztd_now_ms();
        w->ended = ztd_cache_wait(it, 4096, 30000, &w->ready);
        w->waited_ms = ztd_now_ms() - t0;
        ztd_cache_item_release(it);
    }
    return NULL;
}

static void failed_fill(void **state)
{
    fixture *f = *state;
    f->c = open_cache(f->dir, 1 << 20);
    ztd_cache_key k = blob_key(4);
    ztd_cache_item *it;
    int e;
    unsigned char buf[4096];
    pattern(buf, sizeof(buf), 4);
    assert_int_equal(ztd_cache_acquire(f->c, &k, sizeof(buf), &it, &e), ZTD_CACHE_FILL);
    assert_int_equal(ztd_cache_write(it, buf, 100), 0);
    waiter w = {.c = f->c, .key = k};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, wait_thread, &w), 0);
    /* Let the waiter join before the fill fails (bounded). */
    for (int i = 0; i < 2000; i++) {
        ztd_cache_stats st;
        ztd_cache_get_stats(f->c, &st);
        if (st.waits == 1)
            break;
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    assert_int_equal(ztd_cache_fill_done(it, false), ZTD_CACHE_FAILED);
    pthread_join(t, NULL);
    assert_int_equal(w.acquired, ZTD_CACHE_FILLING);
    assert_int_equal(w.ended, ZTD_CACHE_FAILED);
    assert_true(w.waited_ms < 10000); /* woken by the failure, not by its timeout */
    assert_int_equal(ztd_cache_item_state(it, NULL), ZTD_CACHE_FAILED);
    ztd_cache_item_release(it);
    assert_int_equal(entries(join(f->dir, "tmp")), 0);
    assert_false(exists(item_path(f->dir, &k)));
    ztd_cache_stats st;
    ztd_cache_get_stats(f->c, &st);
    assert_int_equal(st.fill_failures, 1);
    assert_int_equal(st.bytes, 0);
    assert_int_equal(st.filling, 0);

    /* The next acquire fetches again; a short fill with ok is still a failure. */
    assert_int_equal(ztd_cache_acquire(f->c, &k, sizeof(buf), &it, &e), ZTD_CACHE_FILL);
    assert_int_equal(ztd_cache_write(it, buf, 10), 0);
    assert_int_equal(ztd_cache_fill_done(it, true), ZTD_CACHE_FAILED);
    ztd_cache_item_release(it);
    assert_false(exists(item_path(f->dir, &k)));
    /* A filler that lets go without ending the fill fails it too. */
    assert_int_equal(ztd_cache_acquire(f->c, &k, sizeof(buf), &it, &e), ZTD_CACHE_FILL);
    ztd_cache_item_release(it);
    assert_int_equal(entries(join(f->dir, "tmp")), 0);
    fill(f->c, &k, sizeof(buf), 4);
    ztd_cache_get_stats(f->c, &st);
    assert_int_equal(st.fill_failures, 3);
    assert_int_equal(st.items, 1);
}

/* ---- eviction ---- */

static void eviction(void **state)
{
    fixture *f = *state;
    f->c = open_cache(f->dir, 300);
    ztd_cache_key a = blob_key(10), b = blob_key(11), c = blob_key(12), d = blob_key(13),
                  e5 = blob_key(14);
    fill(f->c, &a, 100, 10);
    fill(f->c, &b, 100, 11);
    fill(f->c, &c, 100, 12);
    ztd_cache_item_release(ztd_cache_lookup(f->c, &a)); /* a is now the most recent */
    fill(f->c, &d, 100, 13);                            /* evicts b, the least recent */
    assert_false(exists(item_path(f->dir, &b)));
    assert_null(ztd_cache_lookup(f->c, &b));
    assert_true(exists(item_path(f->dir, &a)));
    ztd_cache_stats st;
    ztd_cache_get_stats(f->c, &st);
    assert_int_equal(st.evictions, 1);
    assert_int_equal(st.evicted_bytes, 100);
    assert_int_equal(st.bytes, 300);

    /* Held items are never evicted: with all three held there is no room. */
    ztd_cache_item *ha = ztd_cache_lookup(f->c, &a), *hc = ztd_cache_lookup(f->c, &c),
                   *hd = ztd_cache_lookup(f->c, &d), *it;
    int err;
    assert_int_equal(ztd_cache_acquire(f->c, &e5, 1, &it, &err), ZTD_CACHE_FULL);
    assert_null(it);
    assert_int_equal(ztd_cache_acquire(f->c, &e5, 301, &it, &err), ZTD_CACHE_FULL);
    /* Release c alone: it is the only candidate, whatever its age. */
    ztd_cache_item_release(hc);
    assert_int_equal(ztd_cache_acquire(f->c, &e5, 50, &it, &err), ZTD_CACHE_FILL);
    assert_false(exists(item_path(f->dir, &c)));
    check_bytes(ha, 10);
    check_bytes(hd, 13);
    /* A filling item counts: 250 bytes held, 50 more do not fit. */
    ztd_cache_key g = blob_key(15);
    ztd_cache_item *it2;
    assert_int_equal(ztd_cache_acquire(f->c, &g, 51, &it2, &err), ZTD_CACHE_FULL);
    assert_int_equal(ztd_cache_acquire(f->c, &g, 50, &it2, &err), ZTD_CACHE_FILL);
    assert_int_equal(ztd_cache_fill_done(it2, false), ZTD_CACHE_FAILED);
    ztd_cache_item_release(it2);
    ztd_cache_get_stats(f->c, &st);
    assert_int_equal(st.evictions, 2);
    assert_int_equal(st.bytes, 250);
    assert_int_equal(st.filling, 1);
    assert_int_equal(st.items, 2);
    assert_true(st.bytes <= st.max_bytes);
    ztd_cache_fill_done(it, false);
    ztd_cache_item_release(it);
    ztd_cache_item_release(ha);
    ztd_cache_item_release(hd);
    /* What can never fit evicts nothing. */
    assert_int_equal(ztd_cache_acquire(f->c, &g, 301, &it2, &err), ZTD_CACHE_FULL);
    ztd_cache_get_stats(f->c, &st);
    assert_int_equal(st.evictions, 2);
    assert_int_equal(st.items, 2);
}

/* ---- recovery ---- */

static void set_mtime(const char *path, time_t t)
{
    struct timespec ts[2] = {{t, 0}, {t, 0}};
    assert_int_equal(utimensat(AT_FDCWD, path, ts, AT_SYMLINK_NOFOLLOW), 0);
}

static void recovery(void **state)
{
    fixture *f = *state;
    ztd_cache_key a = blob_key(20), b = blob_key(21), p;
    ztd_cache_part_key(&p, "u", "v", "o", "c");
    f->c = open_cache(f->dir, 1 << 20);
    fill(f->c, &a, 1000, 20);
    fill(f->c, &b, 2000, 21);
    fill(f->c, &p, 500, 22);
    ztd_cache_close(f->c);
    f->c = NULL;
    /* p, the oldest, is the last the walk finds (parts/ after blobs/): only
     * an order taken from the files evicts it first below. */
    set_mtime(item_path(f->dir, &p), 1000000000);
    set_mtime(item_path(f->dir, &a), 1000000100);
    set_mtime(item_path(f->dir, &b), 1000000200);

    /* What a crash and strangers leave. */
    char name[65], rel[256];
    ztd_cache_id_name(a.id, name);
    write_text(join(f->dir, "tmp/fill-1-1"), "half a fill");
    snprintf(rel, sizeof(rel), "blobs/sha256/%.2s/not-a-key", name);
    write_text(join(f->dir, rel), "x");
    char upper[65];
    for (int i = 0; i < 64; i++)
        upper[i] = (char)(name[i] >= 'a' ? name[i] - 32 : name[i]);
    upper[64] = 0;
    snprintf(rel, sizeof(rel), "blobs/sha256/%.2s/%s", name, upper);
    write_text(join(f->dir, rel), "uppercase");
    ztd_cache_key other = blob_key(99);
    char oname[65];
    ztd_cache_id_name(other.id, oname);
    snprintf(rel, sizeof(rel), "blobs/sha256/%.2s/%s", name, oname); /* wrong <2 hex> */
    write_text(join(f->dir, rel), "misplaced");
    snprintf(rel, sizeof(rel), "blobs/sha256/%s", name); /* no <2 hex> level */
    write_text(join(f->dir, rel), "flat");
    assert_int_equal(mkdir(join(f->dir, "parts/zz"), 0700), 0);

    f->c = open_cache(f->dir, 1 << 20);
    ztd_cache_stats st;
    ztd_cache_get_stats(f->c, &st);
    assert_int_equal(st.items, 3);
    assert_int_equal(st.bytes, 3500);
    assert_int_equal(entries(join(f->dir, "tmp")), 0);
    snprintf(rel, sizeof(rel), "blobs/sha256/%.2s", name);
    assert_int_equal(entries(join(f->dir, rel)), 1); /* a's file alone */
    assert_int_equal(entries(join(f->dir, "blobs/sha256")), 2);
    assert_false(exists(join(f->dir, "parts/zz")));
    /* Found at open: not served before it is checked again. */
    ztd_cache_item *it = ztd_cache_lookup(f->c, &b);
    assert_null(it);
    int e;
    assert_int_equal(ztd_cache_acquire(f->c, &b, 2000, &it, &e), ZTD_CACHE_CHECK);
    check_bytes(it, 21);
    assert_int_equal(ztd_cache_check_done(it, true), ZTD_CACHE_COMPLETE);
    ztd_cache_item_release(it);
    it = ztd_cache_lookup(f->c, &b);
    assert_non_null(it);
    ztd_cache_item_release(it);
    ztd_cache_close(f->c);
    f->c = NULL;

    /* A smaller limit: the oldest (by mtime) go first. */
    f->c = open_cache(f->dir, 3000);
    ztd_cache_get_stats(f->c, &st);
    assert_int_equal(st.evictions, 1);
    assert_int_equal(st.bytes, 3000);
    assert_false(exists(item_path(f->dir, &p)));
    assert_null(ztd_cache_lookup(f->c, &p));
    assert_true(exists(item_path(f->dir, &a)));
    assert_true(exists(item_path(f->dir, &b)));
}

/* An item found at open is checked before anyone reads it: while its
 * checker runs, others wait on it as on a fill with no byte ready; bytes
 * that fail the check are fetched again into the same item. */
static void checked_at_open(void **state)
{
    fixture *f = *state;
    ztd_cache_key k = blob_key(40);
    f->c = open_cache(f->dir, 1 << 20);
    fill(f->c, &k, 3000, 40);
    ztd_cache_close(f->c);
    f->c = open_cache(f->dir, 1 << 20);
    ztd_cache_item *checker, *reader;
    int e;
    uint64_t ready = 99;
    assert_int_equal(ztd_cache_acquire(f->c, &k, 3000, &checker, &e), ZTD_CACHE_CHECK);
    assert_int_equal(ztd_cache_acquire(f->c, &k, 3000, &reader, &e), ZTD_CACHE_FILLING);
    assert_int_equal(ztd_cache_item_state(reader, &ready), ZTD_CACHE_FILLING);
    assert_int_equal(ready, 0);
    assert_null(ztd_cache_lookup(f->c, &k));
    /* The bytes do not match: fetched again, the checker is the filler. */
    assert_int_equal(ztd_cache_check_done(checker, false), ZTD_CACHE_FILL);
    assert_int_equal(ztd_cache_item_state(reader, &ready), ZTD_CACHE_FILLING);
    assert_int_equal(ready, 0);
    unsigned char buf[3000];
    pattern(buf, sizeof(buf), 41);
    assert_int_equal(ztd_cache_write(checker, buf, sizeof(buf)), 0);
    assert_int_equal(ztd_cache_fill_done(checker, true), ZTD_CACHE_COMPLETE);
    assert_int_equal(ztd_cache_wait(reader, 3001, 1000, &ready), ZTD_CACHE_COMPLETE);
    check_bytes(reader, 41);
    ztd_cache_stats st;
    ztd_cache_get_stats(f->c, &st);
    assert_int_equal(st.checks, 1);
    assert_int_equal(st.check_failures, 1);
    assert_int_equal(st.items, 1);
    assert_int_equal(st.filling, 0);
    assert_int_equal(st.bytes, 3000);
    ztd_cache_item_release(checker);
    ztd_cache_item_release(reader);
    /* Checked once: later acquires find it complete. */
    assert_int_equal(ztd_cache_acquire(f->c, &k, 3000, &reader, &e), ZTD_CACHE_COMPLETE);
    ztd_cache_item_release(reader);
    ztd_cache_close(f->c);
    /* The next open checks the new file again. */
    f->c = open_cache(f->dir, 1 << 20);
    assert_int_equal(ztd_cache_acquire(f->c, &k, 3000, &checker, &e), ZTD_CACHE_CHECK);
    check_bytes(checker, 41);
    assert_int_equal(ztd_cache_check_done(checker, true), ZTD_CACHE_COMPLETE);
    ztd_cache_item_release(checker);
}

/* A fill killed by SIGKILL halfway leaves nothing open takes as complete. */
static void killed_fill(void **state)
{
    fixture *f = *state;
    ztd_cache_key k = blob_key(30);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        ztd_cache *c = ztd_cache_open(f->dir, 1 << 20, NULL, 0);
        ztd_cache_item *it;
        int e;
        unsigned char buf[1000] = {0};
        if (c && ztd_cache_acquire(c, &k, 2000, &it, &e) == ZTD_CACHE_FILL &&
            ztd_cache_write(it, buf, sizeof(buf)) == 0)
            raise(SIGKILL);
        _exit(1);
    }
    int ws;
    assert_int_equal(waitpid(pid, &ws, 0), pid);
    assert_true(WIFSIGNALED(ws) && WTERMSIG(ws) == SIGKILL);
    assert_int_equal(entries(join(f->dir, "tmp")), 1);
    f->c = open_cache(f->dir, 1 << 20);
    assert_int_equal(entries(join(f->dir, "tmp")), 0);
    assert_null(ztd_cache_lookup(f->c, &k));
    /* And one process per cache directory. */
    char err[256] = "";
    assert_null(ztd_cache_open(f->dir, 1 << 20, err, sizeof(err)));
    assert_int_equal(errno, EBUSY);
    assert_non_null(strstr(err, "in use"));
    fill(f->c, &k, 2000, 30);
}

/* ---- a full disk ---- */

static void disk_full(void **state)
{
    fixture *f = *state;
    if (mount("tmpfs", f->dir, "tmpfs", 0, "size=1m") != 0) {
        print_message("disk_full skipped: cannot mount a 1 MiB tmpfs on %s: %s\n", f->dir,
                      strerror(errno));
        skip();
    }
    f->c = open_cache(f->dir, 64u << 20); /* the limit is not what stops it */
    ztd_cache_key k = blob_key(40);
    ztd_cache_item *it;
    int e;
    static unsigned char buf[64 << 10];
    assert_int_equal(ztd_cache_acquire(f->c, &k, 4u << 20, &it, &e), ZTD_CACHE_FILL);
    int rc = 0;
    for (int i = 0; i < 64 && rc == 0; i++)
        rc = ztd_cache_write(it, buf, sizeof(buf));
    assert_int_equal(rc, -1);
    assert_int_equal(errno, ENOSPC);
    uint64_t ready;
    assert_int_equal(ztd_cache_item_state(it, &ready), ZTD_CACHE_FILLING);
    assert_true(ready <= (1u << 20)); /* what the tmpfs holds */
    assert_int_equal(ztd_cache_fill_done(it, false), ZTD_CACHE_FAILED);
    ztd_cache_item_release(it);
    assert_int_equal(entries(join(f->dir, "tmp")), 0);
    assert_false(exists(item_path(f->dir, &k)));
    /* The space came back: a fill that fits completes. */
    fill(f->c, &k, 512u << 10, 40);
    it = ztd_cache_lookup(f->c, &k);
    assert_non_null(it);
    check_bytes(it, 40);
    ztd_cache_item_release(it);
    ztd_cache_close(f->c);
    f->c = NULL;
    assert_int_equal(umount2(f->dir, MNT_DETACH), 0);
}

/* ---- symlinks ---- */

static void symlinks(void **state)
{
    fixture *f = *state;
    char outside[512], rel[256], name[65];
    snprintf(outside, sizeof(outside), "%s", tmp_dir("cache-outside"));
    ztd_cache_key k = blob_key(50);
    ztd_cache_id_name(k.id, name);

    /* blobs/ itself a symlink: refused, nothing written outside. */
    assert_int_equal(mkdir(f->dir, 0700) == 0 || errno == EEXIST, 1);
    assert_int_equal(symlink(outside, join(f->dir, "blobs")), 0);
    char err[256] = "";
    assert_null(ztd_cache_open(f->dir, 1 << 20, err, sizeof(err)));
    assert_non_null(strstr(err, "symbolic link"));
    assert_int_equal(entries(outside), 0);
    assert_int_equal(unlink(join(f->dir, "blobs")), 0);

    /* A blob path and a <2 hex> directory planted as symlinks to files that
     * look like items: removed at open, their targets untouched. */
    f->c = open_cache(f->dir, 1 << 20);
    ztd_cache_close(f->c);
    f->c = NULL;
    write_text(join(outside, name), "outside bytes");
    snprintf(rel, sizeof(rel), "blobs/sha256/%.2s", name);
    assert_int_equal(mkdir(join(f->dir, rel), 0700), 0);
    snprintf(rel, sizeof(rel), "blobs/sha256/%.2s/%s", name, name);
    assert_int_equal(symlink(join(outside, name), join(f->dir, rel)), 0);
    ztd_cache_key p;
    ztd_cache_part_key(&p, "u", "v", "o", "c");
    char pname[65];
    ztd_cache_id_name(p.id, pname);
    write_text(join(outside, pname), "outside part");
    snprintf(rel, sizeof(rel), "parts/%.2s", pname);
    assert_int_equal(symlink(outside, join(f->dir, rel)), 0);
    f->c = open_cache(f->dir, 1 << 20);
    ztd_cache_stats st;
    ztd_cache_get_stats(f->c, &st);
    assert_int_equal(st.items, 0);
    assert_null(ztd_cache_lookup(f->c, &k));
    assert_null(ztd_cache_lookup(f->c, &p));
    assert_false(exists(item_path(f->dir, &k)));
    assert_false(exists(join(f->dir, rel)));
    assert_int_equal(entries(outside), 2);

    /* A complete item's file swapped for a symlink (to a file of its size)
     * while we run: not read; the item is dropped and fetched again. */
    fill(f->c, &k, 13, 50);
    assert_int_equal(unlink(item_path(f->dir, &k)), 0);
    assert_int_equal(symlink(join(outside, name), item_path(f->dir, &k)), 0);
    assert_null(ztd_cache_lookup(f->c, &k));
    ztd_cache_item *it;
    int e;
    assert_int_equal(ztd_cache_acquire(f->c, &k, 13, &it, &e), ZTD_CACHE_FILL);
    ztd_cache_get_stats(f->c, &st);
    assert_int_equal(st.hits, 0);
    ztd_cache_fill_done(it, false);
    ztd_cache_item_release(it);
    assert_int_equal(entries(outside), 2);
    struct stat sb;
    assert_int_equal(stat(join(outside, name), &sb), 0);
    assert_int_equal(sb.st_size, 13); /* "outside bytes", untouched */
    rm_tree(outside);
}

/* Files that changed under the index: another size at acquire, or a file
 * removed by someone else. Both are fetched again, never served. */
static void stale_files(void **state)
{
    fixture *f = *state;
    f->c = open_cache(f->dir, 1 << 20);
    ztd_cache_key k = blob_key(70);
    fill(f->c, &k, 100, 70);
    fill(f->c, &k, 200, 71); /* the unheld 100-byte item goes: FILL */
    ztd_cache_item *it = ztd_cache_lookup(f->c, &k);
    assert_non_null(it);
    assert_int_equal(ztd_cache_item_size(it), 200);
    check_bytes(it, 71);
    ztd_cache_item *other;
    int e;
    assert_int_equal(ztd_cache_acquire(f->c, &k, 100, &other, &e), ZTD_CACHE_FAILED); /* held */
    ztd_cache_item_release(it);
    ztd_cache_stats st;
    ztd_cache_get_stats(f->c, &st);
    assert_int_equal(st.items, 1);
    assert_int_equal(st.bytes, 200);

    assert_int_equal(unlink(item_path(f->dir, &k)), 0);
    assert_null(ztd_cache_lookup(f->c, &k));
    ztd_cache_get_stats(f->c, &st);
    assert_int_equal(st.items, 0);
    assert_int_equal(st.bytes, 0);
    fill(f->c, &k, 200, 72);
    /* A file truncated behind our back: its size no longer matches. */
    assert_int_equal(truncate(item_path(f->dir, &k), 10), 0);
    assert_int_equal(ztd_cache_acquire(f->c, &k, 200, &it, &e), ZTD_CACHE_FILL);
    ztd_cache_fill_done(it, false);
    ztd_cache_item_release(it);
}

/* ---- names ---- */

static void names(void **state)
{
    (void)state;
    ztd_cache_key k = blob_key(60);
    uint8_t got[32];
    char name[65], bad[80];
    ztd_cache_id_name(k.id, name);
    char sub[3] = {name[0], name[1], 0};
    assert_true(ztd_cache_name_id(sub, name, got));
    assert_memory_equal(got, k.id, 32);
    assert_false(ztd_cache_name_id("00", name, got)); /* wrong <2 hex> */
    snprintf(bad, sizeof(bad), "%s", name);
    bad[63] = 0; /* 63 digits */
    assert_false(ztd_cache_name_id(sub, bad, got));
    snprintf(bad, sizeof(bad), "%s0", name); /* 65 */
    assert_false(ztd_cache_name_id(sub, bad, got));
    snprintf(bad, sizeof(bad), "%s", name);
    bad[10] = 'A'; /* uppercase: another name for the same key */
    assert_false(ztd_cache_name_id(sub, bad, got));
    bad[10] = 'g';
    assert_false(ztd_cache_name_id(sub, bad, got));
    assert_false(ztd_cache_name_id("..", "..", got));
    assert_false(ztd_cache_name_id(sub, "", got));
    assert_false(ztd_cache_name_id("A0", name, got));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(fill_then_lookup, setup, teardown),
        cmocka_unit_test_setup_teardown(part_keys, setup, teardown),
        cmocka_unit_test_setup_teardown(single_flight, setup, teardown),
        cmocka_unit_test_setup_teardown(failed_fill, setup, teardown),
        cmocka_unit_test_setup_teardown(concurrent_churn, setup, teardown),
        cmocka_unit_test_setup_teardown(eviction, setup, teardown),
        cmocka_unit_test_setup_teardown(recovery, setup, teardown),
        cmocka_unit_test_setup_teardown(checked_at_open, setup, teardown),
        cmocka_unit_test_setup_teardown(killed_fill, setup, teardown),
        cmocka_unit_test_setup_teardown(disk_full, setup, teardown),
        cmocka_unit_test_setup_teardown(symlinks, setup, teardown),
        cmocka_unit_test_setup_teardown(stale_files, setup, teardown),
        cmocka_unit_test(names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
