/*
 * The open-file budget, like nginx's open_file_cache: at most max catalog
 * files keep their fd and mapping; the others are detached (zt_file_detach:
 * the parsed manifest stays, the fd goes) and opened again on first use. A
 * pinned file (a response, the verifier) is never detached; unpinned open
 * files are detached least recently used first when the budget is exceeded.
 * With more files pinned at once than the budget allows, the count goes over
 * it until they are unpinned: a file in use is never closed under a reader.
 *
 * The slot lives in the catalog entry; the cache only links slots, so it
 * knows nothing of entries. One mutex guards every slot's fields. A plain
 * file's slot (no model) holds its fd alone: detaching closes it, a reopen
 * checks the identity as for a tensor file and keeps the new fd.
 */
#ifndef ZTD_OPEN_FILES_H
#define ZTD_OPEN_FILES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <ztensor/ztensor.h>

typedef struct ztd_fdcache ztd_fdcache;

typedef struct ztd_fdslot {
    ztd_fdcache *cache; /* NULL: not managed (an invalid file, or one that cannot detach) */
    zt_file *file;      /* a tensor file's model (plain false) */
    bool plain;         /* a plain file (store/catalog.h): no model, only plain_fd */
    int plain_fd;       /* a plain file's fd; -1 while detached */
    const char *name;   /* the entry's, relative to the root */
    dev_t dev;          /* the identity the file must still have when reopened */
    ino_t ino;
    uint64_t size;
    int64_t mtime_ns;
    bool *stale;                    /* the entry's mark, set when the identity changed */
    struct ztd_fdslot *prev, *next; /* LRU list: open and not pinned, most recent first */
    int pins;
    bool open;
} ztd_fdslot;

/* max: most files open at once (at least 1). root: where names are. NULL if out of memory. */
ztd_fdcache *ztd_fdcache_new(const char *root, size_t max, uint64_t max_manifest);
void ztd_fdcache_free(ztd_fdcache *fc);
void ztd_fdcache_set_max(ztd_fdcache *fc, size_t max);

/* Take charge of s, whose file was just opened (fields set by the caller):
 * it may be detached at once to keep within the budget. A file that cannot
 * be detached (shards) stays open and unmanaged (s->cache stays NULL). */
void ztd_fdcache_add(ztd_fdcache *fc, ztd_fdslot *s);
/* The file stays attached until the matching unpin: opened again (and its
 * identity checked) if it was detached. False when it cannot be (no fd, the
 * file replaced or gone: then *stale is set): its data calls then fail. */
bool ztd_fdcache_pin(ztd_fdslot *s);
void ztd_fdcache_unpin(ztd_fdslot *s);
/* Out of fds (EMFILE) or address space: close up to n least recently used
 * unpinned files, so that an open can be tried again. The number closed. */
size_t ztd_fdcache_shed(ztd_fdcache *fc, size_t n);
/* Before the slot's memory goes (its entry is freed). */
void ztd_fdcache_forget(ztd_fdslot *s);

typedef struct ztd_fdcache_stats {
    size_t open, max;
    uint64_t reopens, evictions, reopen_failures;
} ztd_fdcache_stats;
void ztd_fdcache_get_stats(ztd_fdcache *fc, ztd_fdcache_stats *out);

#endif
