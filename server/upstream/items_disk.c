/*
 * The upstream cache's files (see items_disk.h). The cache directory may be
 * shared with things we do not trust (an emptyDir, a volume another container
 * writes): every path below it is reached from a held directory fd, one
 * component at a time with O_NOFOLLOW, and only regular files are taken.
 */
#include "upstream/items_disk.h"
#include "core/hex.h"
#include "core/log.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <ztensor/ztensor_experimental.h>

#define DIR_FLAGS (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)

void ztd_cache_id_name(const uint8_t id[32], char out[65])
{
    ztd_hex_encode(id, 32, out);
}

static bool is_lower_hex(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return false;
    return s[n] == '\0';
}

bool ztd_cache_name_id(const char *sub, const char *name, uint8_t id[32])
{
    if (!is_lower_hex(sub, 2) || !is_lower_hex(name, 64) || memcmp(sub, name, 2) != 0)
        return false;
    return ztd_hex_decode(name, 32, id) == 0;
}

/* parent/name as a directory of ours, created if missing; never a symlink. */
static int sub_dir(int parent, const char *name, const char *dir, const char *rel, char *err,
                   size_t err_cap)
{
    if (mkdirat(parent, name, 0700) != 0 && errno != EEXIST) {
        int e = errno;
        snprintf(err, err_cap, "cannot create %s/%s: %s", dir, rel, strerror(e));
        errno = e;
        return -1;
    }
    int fd = openat(parent, name, DIR_FLAGS);
    if (fd >= 0)
        return fd;
    int e = errno;
    struct stat sb;
    bool have = fstatat(parent, name, &sb, AT_SYMLINK_NOFOLLOW) == 0;
    const char *why = have && S_ISLNK(sb.st_mode)    ? "is a symbolic link"
                      : have && !S_ISDIR(sb.st_mode) ? "is not a directory"
                                                     : strerror(e);
    snprintf(err, err_cap, "cache directory %s/%s %s: refusing to use it", dir, rel, why);
    errno = e;
    return -1;
}

int ztd_cache_disk_open(ztd_cache_disk *d, const char *dir, char *err, size_t err_cap)
{
    char dummy[8];
    if (!err)
        err = dummy, err_cap = sizeof(dummy);
    d->root = d->blobs = d->parts = d->tmp = -1;
    if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
        int e = errno;
        snprintf(err, err_cap, "cannot create the cache directory %s: %s", dir, strerror(e));
        errno = e;
        return -1;
    }
    d->root = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (d->root < 0) {
        int e = errno;
        snprintf(err, err_cap, "cannot open the cache directory %s: %s", dir, strerror(e));
        errno = e;
        return -1;
    }
    /* Two processes on one cache would empty each other's tmp/ and evict
     * each other's files behind their indexes. */
    if (flock(d->root, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK) {
        snprintf(err, err_cap, "cache directory %s is in use by another process", dir);
        ztd_cache_disk_close(d);
        errno = EBUSY;
        return -1;
    }
    int blobs = sub_dir(d->root, "blobs", dir, "blobs", err, err_cap);
    if (blobs >= 0) {
        d->blobs = sub_dir(blobs, "sha256", dir, "blobs/sha256", err, err_cap);
        int e = errno;
        close(blobs);
        errno = e;
    }
    if (d->blobs >= 0)
        d->parts = sub_dir(d->root, "parts", dir, "parts", err, err_cap);
    if (d->parts >= 0)
        d->tmp = sub_dir(d->root, "tmp", dir, "tmp", err, err_cap);
    if (d->tmp < 0) {
        int e = errno;
        ztd_cache_disk_close(d);
        errno = e;
        return -1;
    }
    return 0;
}

void ztd_cache_disk_close(ztd_cache_disk *d)
{
    int *fds[] = {&d->tmp, &d->parts, &d->blobs, &d->root};
    for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
        if (*fds[i] >= 0)
            close(*fds[i]);
        *fds[i] = -1;
    }
}

/* A directory's entries, opened from a dup of its fd (readdir owns its fd). */
static DIR *list(int dfd)
{
    int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;
    if (!dir && fd >= 0)
        close(fd);
    return dir;
}

static bool dot(const char *n)
{
    return !strcmp(n, ".") || !strcmp(n, "..");
}

/* Remove an entry that is not ours to keep: a file or symlink goes; a
 * directory goes only when empty (we never follow into strangers' trees). */
static void remove_stray(int dfd, const char *name, const struct stat *sb, unsigned *n)
{
    if (unlinkat(dfd, name, S_ISDIR(sb->st_mode) ? AT_REMOVEDIR : 0) == 0)
        (*n)++;
}

/* One <2 hex> directory: its complete items, and strays removed. */
static void scan_leaf(int top, const char *sub, ztd_cache_tree tree, ztd_cache_found_fn found,
                      void *arg, ztd_cache_scan *removed)
{
    int sfd = openat(top, sub, DIR_FLAGS);
    DIR *dir = sfd >= 0 ? list(sfd) : NULL;
    struct dirent *de;
    struct stat sb;
    uint8_t id[32];
    while (dir && (de = readdir(dir))) {
        if (dot(de->d_name) || fstatat(sfd, de->d_name, &sb, AT_SYMLINK_NOFOLLOW) != 0)
            continue;
        if (S_ISREG(sb.st_mode) && ztd_cache_name_id(sub, de->d_name, id))
            found(arg, tree, id, (uint64_t)sb.st_size,
                  (int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec);
        else
            remove_stray(sfd, de->d_name, &sb, &removed->strays);
    }
    if (dir)
        closedir(dir);
    if (sfd >= 0)
        close(sfd);
}

/* One tree (blobs/sha256 or parts): <2 hex> directories, nothing else. */
static void scan_tree(int top, ztd_cache_tree tree, ztd_cache_found_fn found, void *arg,
                      ztd_cache_scan *removed)
{
    DIR *dir = list(top);
    struct dirent *de;
    struct stat sb;
    while (dir && (de = readdir(dir))) {
        if (dot(de->d_name) || fstatat(top, de->d_name, &sb, AT_SYMLINK_NOFOLLOW) != 0)
            continue;
        if (S_ISDIR(sb.st_mode) && is_lower_hex(de->d_name, 2))
            scan_leaf(top, de->d_name, tree, found, arg, removed);
        else
            remove_stray(top, de->d_name, &sb, &removed->strays);
    }
    if (dir)
        closedir(dir);
}

void ztd_cache_disk_scan(const ztd_cache_disk *d, ztd_cache_found_fn found, void *arg,
                         ztd_cache_scan *removed)
{
    memset(removed, 0, sizeof(*removed));
    DIR *dir = list(d->tmp);
    struct dirent *de;
    struct stat sb;
    while (dir && (de = readdir(dir)))
        if (!dot(de->d_name) && fstatat(d->tmp, de->d_name, &sb, AT_SYMLINK_NOFOLLOW) == 0)
            remove_stray(d->tmp, de->d_name, &sb, &removed->tmp_files);
    if (dir)
        closedir(dir);
    scan_tree(d->blobs, ZTD_CACHE_TREE_BLOBS, found, arg, removed);
    scan_tree(d->parts, ZTD_CACHE_TREE_PARTS, found, arg, removed);
}

static int tree_fd(const ztd_cache_disk *d, ztd_cache_tree tree)
{
    return tree == ZTD_CACHE_TREE_BLOBS ? d->blobs : d->parts;
}

int ztd_cache_disk_open_item(const ztd_cache_disk *d, ztd_cache_tree tree, const uint8_t id[32],
                             uint64_t *size)
{
    char name[65], sub[3];
    ztd_cache_id_name(id, name);
    memcpy(sub, name, 2), sub[2] = '\0';
    int sfd = openat(tree_fd(d, tree), sub, DIR_FLAGS);
    if (sfd < 0)
        return -1;
    /* O_NONBLOCK: a FIFO planted under the name must not block us. */
    int fd = openat(sfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    int e = errno;
    close(sfd);
    struct stat sb;
    if (fd >= 0) {
        if (fstat(fd, &sb) != 0)
            e = errno;
        else if (!S_ISREG(sb.st_mode))
            e = EINVAL;
        else
            *size = (uint64_t)sb.st_size, e = 0;
        if (e != 0)
            close(fd), fd = -1;
    }
    errno = e;
    return fd;
}

int ztd_cache_disk_create_tmp(const ztd_cache_disk *d, uint64_t serial,
                              char name[ZTD_CACHE_TMP_NAME])
{
    snprintf(name, ZTD_CACHE_TMP_NAME, "fill-%ld-%llu", (long)getpid(), (unsigned long long)serial);
    return openat(d->tmp, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
}

int ztd_cache_disk_publish(const ztd_cache_disk *d, const char *tmp_name, ztd_cache_tree tree,
                           const uint8_t id[32])
{
    char name[65], sub[3];
    ztd_cache_id_name(id, name);
    memcpy(sub, name, 2), sub[2] = '\0';
    bool made = mkdirat(tree_fd(d, tree), sub, 0700) == 0;
    if (!made && errno != EEXIST)
        return -1;
    int sfd = openat(tree_fd(d, tree), sub, DIR_FLAGS);
    if (sfd < 0)
        return -1;
    zt_error zerr;
    int rc = zt_publish_rename(d->tmp, tmp_name, sfd, name, 0, NULL, &zerr) == ZT_OK ? 0 : -1;
    int e = errno;
    close(sfd);
    /* A new <2 hex> directory is itself a new name in its parent. */
    if (rc == 0 && made && fsync(tree_fd(d, tree)) != 0)
        rc = -1, e = errno;
    errno = e;
    return rc;
}

void ztd_cache_disk_remove_tmp(const ztd_cache_disk *d, const char *tmp_name)
{
    unlinkat(d->tmp, tmp_name, 0);
}

void ztd_cache_disk_remove_item(const ztd_cache_disk *d, ztd_cache_tree tree, const uint8_t id[32])
{
    char name[65], sub[3];
    ztd_cache_id_name(id, name);
    memcpy(sub, name, 2), sub[2] = '\0';
    int sfd = openat(tree_fd(d, tree), sub, DIR_FLAGS);
    if (sfd < 0)
        return;
    if (unlinkat(sfd, name, 0) != 0 && errno != ENOENT)
        ztd_log(ZTD_LOG_WARN, "cache: cannot remove %s/%s: %s", sub, name, strerror(errno));
    close(sfd);
}
