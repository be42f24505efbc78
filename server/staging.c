/*
 * Staging files and atomic publication (see staging.h). Parent directories
 * of a published name are created inside the root only: each is opened with
 * O_NOFOLLOW, so a symlink planted in the tree cannot redirect a write.
 */
#include "staging.h"
#include "log.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

int ztd_staging_init(const char *root, char *err, size_t errlen)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof(dir), "%s/%s", root, ZTD_STAGING_DIR);
    if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
        snprintf(err, errlen, "cannot create %s: %s", dir, strerror(errno));
        return -1;
    }
    DIR *d = opendir(dir);
    if (!d) {
        snprintf(err, errlen, "cannot open %s: %s", dir, strerror(errno));
        return -1;
    }
    struct dirent *de;
    unsigned removed = 0;
    while ((de = readdir(d)))
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") &&
            unlinkat(dirfd(d), de->d_name, 0) == 0)
            removed++;
    closedir(d);
    if (removed)
        ztd_log(ZTD_LOG_WARN, "staging: removed %u files left by an earlier run", removed);
    return 0;
}

int ztd_staging_create(const char *root, const char *kind, char *path, size_t cap)
{
    if ((size_t)snprintf(path, cap, "%s/%s/%s-XXXXXX", root, ZTD_STAGING_DIR, kind) >= cap)
        return -1;
    int fd = mkostemp(path, O_CLOEXEC);
    if (fd >= 0)
        fchmod(fd, 0644);
    return fd;
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

int ztd_publish(const char *root, const char *staged, const char *rel, bool no_replace,
                bool *replaced, char *err, size_t errlen)
{
    const char *base;
    int dfd = open_parent(root, rel, &base, true);
    if (dfd < 0) {
        snprintf(err, errlen, "cannot create the directory of %s: %s", rel, strerror(errno));
        return -1;
    }
    *replaced = false;
    int rc = renameat2(AT_FDCWD, staged, dfd, base, RENAME_NOREPLACE);
    if (rc != 0 && errno == EINVAL) /* filesystem without RENAME_NOREPLACE */
        rc = no_replace && faccessat(dfd, base, F_OK, AT_SYMLINK_NOFOLLOW) == 0
                 ? (errno = EEXIST, -1)
                 : renameat(AT_FDCWD, staged, dfd, base);
    if (rc != 0 && errno == EEXIST && !no_replace) {
        rc = renameat(AT_FDCWD, staged, dfd, base);
        *replaced = rc == 0;
    }
    int saved = errno;
    if (rc == 0 && fsync(dfd) != 0) {
        saved = errno;
        rc = -1;
    }
    close(dfd);
    if (rc != 0) {
        snprintf(err, errlen, "cannot publish %s: %s", rel, strerror(saved));
        errno = saved;
    }
    return rc;
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

int ztd_disk_free(const char *root, uint64_t *bytes)
{
    struct statvfs sv;
    if (statvfs(root, &sv) != 0)
        return -1;
    *bytes = (uint64_t)sv.f_bavail * sv.f_frsize;
    return 0;
}
