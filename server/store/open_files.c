/*
 * The open-file budget (see open_files.h). Pinned slots leave the LRU list, so
 * eviction takes the list's tail in O(1) and never meets a file in use; a
 * reopen (open, fstat, mmap) runs under the mutex: a few microseconds for a
 * file whose inode is cached, and only for a file used after being evicted.
 */
#include "store/open_files.h"
#include "core/log.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct ztd_fdcache {
    pthread_mutex_t mu;
    char *root;
    uint64_t max_manifest;
    size_t max, open;
    ztd_fdslot *head, *tail;
    uint64_t reopens, evictions, reopen_failures;
};

ztd_fdcache *ztd_fdcache_new(const char *root, size_t max, uint64_t max_manifest)
{
    ztd_fdcache *fc = calloc(1, sizeof(*fc));
    if (!fc || !(fc->root = strdup(root))) {
        free(fc);
        return NULL;
    }
    pthread_mutex_init(&fc->mu, NULL);
    fc->max = max ? max : 1;
    fc->max_manifest = max_manifest;
    return fc;
}

void ztd_fdcache_free(ztd_fdcache *fc)
{
    if (!fc)
        return;
    pthread_mutex_destroy(&fc->mu);
    free(fc->root);
    free(fc);
}

static void unlink_slot(ztd_fdcache *fc, ztd_fdslot *s)
{
    if (s->prev)
        s->prev->next = s->next;
    else
        fc->head = s->next;
    if (s->next)
        s->next->prev = s->prev;
    else
        fc->tail = s->prev;
    s->prev = s->next = NULL;
}

static void push_head(ztd_fdcache *fc, ztd_fdslot *s)
{
    s->prev = NULL;
    s->next = fc->head;
    if (fc->head)
        fc->head->prev = s;
    else
        fc->tail = s;
    fc->head = s;
}

/* Let go of s's fd (and a tensor file's mapping). */
static void slot_detach(ztd_fdslot *s)
{
    if (!s->plain) {
        zt_file_detach(s->file, NULL); /* cannot fail: add() took only files that can */
        return;
    }
    close(s->plain_fd);
    s->plain_fd = -1;
}

/* Detach up to n least recently used files (fewer if fewer are unpinned);
 * how many were. */
static size_t shed_locked(ztd_fdcache *fc, size_t n)
{
    size_t done = 0;
    for (; done < n && fc->tail; done++) {
        ztd_fdslot *s = fc->tail;
        unlink_slot(fc, s);
        slot_detach(s);
        s->open = false;
        fc->open--;
        fc->evictions++;
    }
    return done;
}

/* Detach least recently used files until within the budget (or none is left
 * unpinned). */
static void evict(ztd_fdcache *fc)
{
    if (fc->open > fc->max)
        shed_locked(fc, fc->open - fc->max);
}

void ztd_fdcache_set_max(ztd_fdcache *fc, size_t max)
{
    pthread_mutex_lock(&fc->mu);
    fc->max = max ? max : 1;
    evict(fc);
    pthread_mutex_unlock(&fc->mu);
}

void ztd_fdcache_add(ztd_fdcache *fc, ztd_fdslot *s)
{
    /* Only files whose fd and mapping are all they hold open can be detached:
     * not v2 roots with shards (nor files opened from memory). */
    if (s->plain ? s->plain_fd < 0 : (zt_file_fd(s->file) < 0 || zt_file_shard_count(s->file)))
        return;
    pthread_mutex_lock(&fc->mu);
    s->cache = fc;
    s->open = true;
    fc->open++;
    push_head(fc, s);
    evict(fc);
    pthread_mutex_unlock(&fc->mu);
}

size_t ztd_fdcache_shed(ztd_fdcache *fc, size_t n)
{
    pthread_mutex_lock(&fc->mu);
    size_t done = shed_locked(fc, n);
    pthread_mutex_unlock(&fc->mu);
    return done;
}

static bool out_of_fds(int e)
{
    return e == EMFILE || e == ENFILE || e == ENOMEM;
}

/* Open s's file again; under the mutex. */
static bool reopen(ztd_fdcache *fc, ztd_fdslot *s)
{
    char path[PATH_MAX];
    struct stat sb;
    zt_error err = {0};
    zt_open_options opt = {.size = sizeof(opt), .max_manifest_size = fc->max_manifest};
    int fd = -1;
    bool long_path =
        (size_t)snprintf(path, sizeof(path), "%s/%s", fc->root, s->name) >= sizeof(path);
    if (!long_path && (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0 && out_of_fds(errno) &&
        shed_locked(fc, 8)) /* others' turn to wait closed */
        fd = open(path, O_RDONLY | O_CLOEXEC);
    if (long_path || fd < 0 || fstat(fd, &sb) != 0) {
        snprintf(err.message, sizeof(err.message), "%s", strerror(errno));
    } else if (sb.st_dev != s->dev || sb.st_ino != s->ino || (uint64_t)sb.st_size != s->size ||
               (int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec != s->mtime_ns) {
        snprintf(err.message, sizeof(err.message), "the file was replaced or written");
        __atomic_store_n(s->stale, true, __ATOMIC_RELAXED);
    } else if (s->plain) {
        s->plain_fd = fd;
        s->open = true;
        fc->open++;
        fc->reopens++;
        return true;
    } else if (zt_file_attach_fd(s->file, fd, &opt, &err) == ZT_OK ||
               (shed_locked(fc, 8) && zt_file_attach_fd(s->file, fd, &opt, &err) == ZT_OK)) {
        s->open = true;
        fc->open++;
        fc->reopens++;
        return true;
    }
    if (fd >= 0)
        close(fd);
    fc->reopen_failures++;
    ztd_log(ZTD_LOG_WARN, "catalog: cannot open %s again: %s", s->name, err.message);
    return false;
}

bool ztd_fdcache_pin(ztd_fdslot *s)
{
    ztd_fdcache *fc = s->cache;
    if (!fc)
        return s->plain ? s->plain_fd >= 0 : s->file != NULL;
    pthread_mutex_lock(&fc->mu);
    bool ok = true;
    if (s->pins++ == 0) {
        if (s->open)
            unlink_slot(fc, s);
        else if ((ok = reopen(fc, s)))
            evict(fc);
    } else {
        ok = s->open;
    }
    pthread_mutex_unlock(&fc->mu);
    return ok;
}

void ztd_fdcache_unpin(ztd_fdslot *s)
{
    ztd_fdcache *fc = s->cache;
    if (!fc)
        return;
    pthread_mutex_lock(&fc->mu);
    if (--s->pins == 0 && s->open) {
        push_head(fc, s);
        evict(fc);
    }
    pthread_mutex_unlock(&fc->mu);
}

void ztd_fdcache_forget(ztd_fdslot *s)
{
    ztd_fdcache *fc = s->cache;
    if (!fc)
        return;
    pthread_mutex_lock(&fc->mu);
    if (s->open) {
        if (!s->pins)
            unlink_slot(fc, s);
        fc->open--;
        s->open = false;
    }
    s->cache = NULL;
    pthread_mutex_unlock(&fc->mu);
}

void ztd_fdcache_get_stats(ztd_fdcache *fc, ztd_fdcache_stats *out)
{
    pthread_mutex_lock(&fc->mu);
    *out = (ztd_fdcache_stats){fc->open, fc->max, fc->reopens, fc->evictions, fc->reopen_failures};
    pthread_mutex_unlock(&fc->mu);
}
