/*
 * Staging directories, staging files and atomic publication (see staging.h).
 * Parent directories of a published name are created inside the root only:
 * each is opened with O_NOFOLLOW, so a symlink planted in the tree cannot
 * redirect a write.
 */
#include "store/staging.h"
#include "core/clock.h"
#include "core/log.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <ztensor/ztensor_experimental.h>

#define INSTANCE_PREFIX "run-"
#define STARTUP_LOCK_WAIT_MS 10000

struct ztd_staging {
    int top;    /* ROOT/.ztensord-staging; its flock is the lock between instances */
    int own;    /* this instance's directory, flocked for the instance's lifetime */
    bool locks; /* flock works on this filesystem */
    char own_name[ZTD_STAGING_NAME_MAX];
};

static ztd_staging_status fail(ztd_staging_status st, char *err, size_t errlen, const char *fmt,
                               ...) __attribute__((format(printf, 4, 5)));
static ztd_staging_status fail(ztd_staging_status st, char *err, size_t errlen, const char *fmt,
                               ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return st;
}

/* flock(LOCK_EX), waiting at most wait_ms: a stuck instance must not hang us. */
static int flock_wait(int fd, unsigned wait_ms)
{
    uint64_t until = ztd_now_ms() + wait_ms;
    struct timespec pause = {0, 1000000};
    for (;;) {
        if (flock(fd, LOCK_EX | LOCK_NB) == 0)
            return 0;
        if (errno != EWOULDBLOCK && errno != EINTR)
            return -1;
        if (ztd_now_ms() >= until) {
            errno = EWOULDBLOCK;
            return -1;
        }
        nanosleep(&pause, NULL);
        if (pause.tv_nsec < 16000000)
            pause.tv_nsec *= 2;
    }
}

/* Open ROOT/.ztensord-staging, creating it, and check that it is ours alone. */
static ztd_staging_status open_top(ztd_staging *st, const char *root, const char *path, char *err,
                                   size_t errlen)
{
    int rfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (rfd < 0)
        return fail(ZTD_STAGING_UNAVAILABLE, err, errlen, "cannot open %s: %s", root,
                    strerror(errno));
    if (mkdirat(rfd, ZTD_STAGING_DIR, 0700) != 0 && errno != EEXIST) {
        int e = errno;
        close(rfd);
        return fail(ZTD_STAGING_UNAVAILABLE, err, errlen, "cannot create %s: %s", path,
                    strerror(e));
    }
    const char *why = NULL;
    char buf[128];
    struct stat sb;
    st->top = openat(rfd, ZTD_STAGING_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (st->top < 0) {
        int e = errno;
        bool have = fstatat(rfd, ZTD_STAGING_DIR, &sb, AT_SYMLINK_NOFOLLOW) == 0;
        why = have && S_ISLNK(sb.st_mode)    ? "is a symbolic link"
              : have && !S_ISDIR(sb.st_mode) ? "is not a directory"
                                             : strerror(e);
    } else if (fstat(st->top, &sb) != 0) {
        why = strerror(errno);
    } else if (sb.st_uid != geteuid()) {
        snprintf(buf, sizeof(buf), "is owned by uid %u", (unsigned)sb.st_uid);
        why = buf;
    } else if (sb.st_mode & (S_IWGRP | S_IWOTH)) {
        snprintf(buf, sizeof(buf), "is writable by group or others (mode %04o)",
                 (unsigned)(sb.st_mode & 07777));
        why = buf;
    }
    close(rfd);
    if (!why)
        return ZTD_STAGING_OK;
    return fail(ZTD_STAGING_UNSAFE, err, errlen,
                "staging directory %s %s; it must be a real directory owned by uid %u (this "
                "process's user) and not writable by group or others: refusing to start",
                path, why, (unsigned)geteuid());
}

/* Remove every non-directory entry of the directory dfd; returns how many went. */
static unsigned empty_dir(int dfd)
{
    int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return 0;
    }
    unsigned n = 0;
    struct dirent *de;
    while ((de = readdir(d)))
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") &&
            unlinkat(dfd, de->d_name, 0) == 0)
            n++;
    closedir(d);
    return n;
}

/* An instance's directory: emptied and removed if its lock is free (its
 * owner died). Returns 1 if it is alive (or its lock cannot be taken). */
static int remove_if_dead(int top, const char *name, unsigned *files)
{
    int fd = openat(top, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return 0;
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        close(fd);
        return 1;
    }
    *files += empty_dir(fd);
    unlinkat(top, name, AT_REMOVEDIR);
    close(fd); /* releases the lock */
    return 0;
}

static bool older_than(const struct stat *sb, uint64_t ms)
{
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    int64_t age = ((int64_t)now.tv_sec - (int64_t)sb->st_mtim.tv_sec) * 1000 +
                  ((int64_t)now.tv_nsec - (int64_t)sb->st_mtim.tv_nsec) / 1000000;
    return age >= 0 && (uint64_t)age > ms;
}

/* What instances that died left. Files directly in the staging directory are
 * from the older layout, where a running older ztensord may still be writing
 * them: only those idle for longer than a session can go. */
static void remove_dead(ztd_staging *st, uint64_t stale_ms)
{
    int fd = openat(st->top, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return;
    }
    unsigned files = 0, dead = 0, live = 0, loose = 0;
    struct dirent *de;
    struct stat sb;
    while ((de = readdir(d))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
            fstatat(st->top, de->d_name, &sb, AT_SYMLINK_NOFOLLOW) != 0)
            continue;
        if (S_ISDIR(sb.st_mode) &&
            !strncmp(de->d_name, INSTANCE_PREFIX, sizeof(INSTANCE_PREFIX) - 1)) {
            if (remove_if_dead(st->top, de->d_name, &files))
                live++;
            else
                dead++;
        } else if (!S_ISDIR(sb.st_mode) && older_than(&sb, stale_ms) &&
                   unlinkat(st->top, de->d_name, 0) == 0) {
            loose++;
        }
    }
    closedir(d);
    if (files + loose)
        ztd_log(ZTD_LOG_WARN,
                "staging: removed %u files left by an earlier run (%u stopped instances)",
                files + loose, dead);
    if (live)
        ztd_log(ZTD_LOG_INFO, "staging: other instances running on this root: %u", live);
}

/* This instance's directory, locked. */
static ztd_staging_status make_own(ztd_staging *st, const char *path, char *err, size_t errlen)
{
    int rc = -1;
    for (int i = 0; i < 8 && rc != 0; i++) {
        uint32_t rnd;
        if (getentropy(&rnd, sizeof(rnd)) != 0)
            break;
        snprintf(st->own_name, sizeof(st->own_name), INSTANCE_PREFIX "%ld-%08x", (long)getpid(),
                 (unsigned)rnd);
        rc = mkdirat(st->top, st->own_name, 0700);
        if (rc != 0 && errno != EEXIST)
            break;
    }
    if (rc == 0)
        st->own = openat(st->top, st->own_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (rc != 0 || st->own < 0 || (st->locks && flock(st->own, LOCK_EX | LOCK_NB) != 0)) {
        int e = errno;
        if (rc == 0)
            unlinkat(st->top, st->own_name, AT_REMOVEDIR);
        return fail(ZTD_STAGING_UNAVAILABLE, err, errlen, "cannot create %s/%s: %s", path,
                    st->own_name, strerror(e));
    }
    return ZTD_STAGING_OK;
}

ztd_staging_status ztd_staging_open(const char *root, uint64_t stale_ms, ztd_staging **out,
                                    char *err, size_t errlen)
{
    char path[PATH_MAX];
    *out = NULL;
    snprintf(path, sizeof(path), "%s/%s", root, ZTD_STAGING_DIR);
    ztd_staging *st = calloc(1, sizeof(*st));
    if (!st)
        return fail(ZTD_STAGING_UNAVAILABLE, err, errlen, "out of memory");
    st->top = st->own = -1;
    ztd_staging_status rc = open_top(st, root, path, err, errlen);
    if (rc == ZTD_STAGING_OK) {
        /* Under the lock, so that no other instance starting now takes our new
         * directory (not locked yet) for a dead one. */
        st->locks = flock_wait(st->top, STARTUP_LOCK_WAIT_MS) == 0;
        if (!st->locks && errno == EWOULDBLOCK)
            rc = fail(ZTD_STAGING_UNAVAILABLE, err, errlen,
                      "another instance held the lock on %s for %u ms", path, STARTUP_LOCK_WAIT_MS);
        else if (!st->locks)
            ztd_log(ZTD_LOG_WARN,
                    "staging: %s cannot be locked (%s): instances sharing this root are not "
                    "protected from each other",
                    path, strerror(errno));
    }
    if (rc == ZTD_STAGING_OK) {
        remove_dead(st, stale_ms);
        rc = make_own(st, path, err, errlen);
        if (st->locks)
            flock(st->top, LOCK_UN);
    }
    if (rc != ZTD_STAGING_OK) {
        ztd_staging_free(st);
        return rc;
    }
    *out = st;
    return ZTD_STAGING_OK;
}

void ztd_staging_free(ztd_staging *st)
{
    if (!st)
        return;
    if (st->own >= 0) {
        empty_dir(st->own);
        unlinkat(st->top, st->own_name, AT_REMOVEDIR);
        close(st->own);
    }
    if (st->top >= 0)
        close(st->top);
    free(st);
}

/* Make something new in st's own directory under a fresh random name
 * ("kind-" and 16 hex digits): make(st, name, arg) is >= 0 when it made it,
 * -1 with errno when not (EEXIST: the name was taken, another is tried). */
static int make_named(ztd_staging *st, const char *kind, char name[ZTD_STAGING_NAME_MAX],
                      int (*make)(ztd_staging *st, const char *name, const void *arg),
                      const void *arg)
{
    for (int i = 0; i < 8; i++) {
        unsigned long long rnd;
        if (getentropy(&rnd, sizeof(rnd)) != 0)
            break;
        snprintf(name, ZTD_STAGING_NAME_MAX, "%.16s-%016llx", kind, rnd);
        int r = make(st, name, arg);
        if (r >= 0)
            return r;
        if (errno != EEXIST)
            break;
    }
    int e = errno;
    name[0] = 0;
    errno = e;
    return -1;
}

static int make_file(ztd_staging *st, const char *name, const void *arg)
{
    (void)arg;
    int fd = openat(st->own, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd >= 0)
        fchmod(fd, 0644);
    return fd;
}

static int make_link(ztd_staging *st, const char *name, const void *from)
{
    return linkat(st->own, from, st->own, name, 0) == 0 ? 0 : -1;
}

int ztd_staging_create(ztd_staging *st, const char *kind, char name[ZTD_STAGING_NAME_MAX])
{
    return make_named(st, kind, name, make_file, NULL);
}

int ztd_staging_link(ztd_staging *st, const char *from, const char *kind,
                     char name[ZTD_STAGING_NAME_MAX])
{
    return make_named(st, kind, name, make_link, from);
}

int ztd_staging_open_file(ztd_staging *st, const char *name)
{
    return openat(st->own, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
}

void ztd_staging_remove(ztd_staging *st, const char *name)
{
    if (st && name[0])
        unlinkat(st->own, name, 0);
}

bool ztd_staging_intact(const ztd_staging *st, const char *name, int fd, uint64_t size)
{
    struct stat a, b;
    return fstat(fd, &a) == 0 && fstatat(st->own, name, &b, AT_SYMLINK_NOFOLLOW) == 0 &&
           a.st_dev == b.st_dev && a.st_ino == b.st_ino &&
           (size == ZTD_STAGING_ANY_SIZE || (uint64_t)a.st_size == size);
}

int ztd_staging_lock(ztd_staging *st, unsigned wait_ms)
{
    return st && st->locks ? flock_wait(st->top, wait_ms) : 0;
}

void ztd_staging_unlock(ztd_staging *st)
{
    if (st && st->locks)
        flock(st->top, LOCK_UN);
}

/* Open (creating as needed) the directory holding rel; *base gets the last segment. */
static int open_parent(const char *root, const char *rel, const char **base, bool create)
{
    int dfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    const char *p = rel;
    for (const char *slash; dfd >= 0 && (slash = strchr(p, '/'));) {
        char seg[NAME_MAX + 1];
        size_t n = (size_t)(slash - p);
        if (n == 0 || n > NAME_MAX) {
            close(dfd);
            errno = EINVAL;
            return -1;
        }
        memcpy(seg, p, n);
        seg[n] = 0;
        if (create && mkdirat(dfd, seg, 0755) != 0 && errno != EEXIST) {
            close(dfd);
            return -1;
        }
        int next = openat(dfd, seg, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        close(dfd);
        dfd = next;
        p = slash + 1;
    }
    *base = p;
    return dfd;
}

int ztd_publish(const char *root, ztd_staging *st, const char *name, const char *rel,
                bool no_replace, bool *replaced, char *err, size_t errlen)
{
    const char *base;
    int dfd = open_parent(root, rel, &base, true);
    if (dfd < 0) {
        snprintf(err, errlen, "cannot create the directory of %s: %s", rel, strerror(errno));
        return -1;
    }
    int was = 0;
    zt_error zerr;
    zt_status rc = zt_publish_rename(st->own, name, dfd, base,
                                     no_replace ? ZT_PUBLISH_NOREPLACE : 0, &was, &zerr);
    int saved = errno;
    close(dfd);
    *replaced = was != 0;
    if (rc != ZT_OK) {
        snprintf(err, errlen, "cannot publish %s: %s", rel, strerror(saved));
        errno = saved;
        return -1;
    }
    return 0;
}

int ztd_unpublish(const char *root, const char *rel, char *err, size_t errlen)
{
    const char *base;
    int dfd = open_parent(root, rel, &base, false);
    if (dfd < 0 || unlinkat(dfd, base, 0) != 0) {
        int saved = errno;
        snprintf(err, errlen, "cannot remove %s: %s", rel, strerror(saved));
        if (dfd >= 0)
            close(dfd);
        errno = saved;
        return -1;
    }
    fsync(dfd);
    close(dfd);
    return 0;
}
