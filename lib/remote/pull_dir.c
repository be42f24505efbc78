/*
 * The directory a pull writes in, and the files it makes there, named by a
 * directory fd and never through a symbolic link. A pull often runs as root
 * in an init container on a shared volume, where anyone who can write the
 * directory could plant NAME.ztpull -> /etc/something: every file of a pull
 * (NAME, NAME.ztpart, NAME.ztpull) is opened with openat and O_NOFOLLOW in
 * the one directory opened here, new ones with O_EXCL, and published with
 * renameat in it. The directory itself is the caller's: a path as given
 * (links in it followed, as the user typed it), or a directory fd and a path
 * below it whose every segment is opened with O_NOFOLLOW (zt pull's -o DIR).
 */
#include "remote_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DIR_FLAGS (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)

const char *ztr__leaf(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

const char *ztr__why(int dfd, const char *name, bool want_dir, int e)
{
    struct stat sb;
    if (e != ENOENT && fstatat(dfd, name, &sb, AT_SYMLINK_NOFOLLOW) == 0) {
        if (S_ISLNK(sb.st_mode))
            return "it is a symbolic link (not followed)";
        if (want_dir && !S_ISDIR(sb.st_mode))
            return "not a directory";
        if (!want_dir && !S_ISREG(sb.st_mode))
            return "not a regular file";
    }
    return strerror(e);
}

/* path's directories below dir_fd, each opened with O_NOFOLLOW. */
static int open_below(int dir_fd, const char *path, const char *url, zt_error *err)
{
    size_t end = (size_t)(ztr__leaf(path) - path);
    char *segs = strndup(path, end);
    if (!segs)
        return ztr__fail(err, ZT_E_NOMEM, url, NULL, NULL, 0, 0, "out of memory"), -1;
    int fd = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        ztr__fail(err, ZT_E_IO, url, NULL, NULL, 0, 0, "cannot open the directory given: %s",
                  strerror(errno));
    for (char *s = segs, *next; fd >= 0 && *s; s = next) {
        next = strchr(s, '/');
        *next++ = 0; /* every segment ends with '/': segs stops before the leaf */
        int sub = -1, e = EINVAL;
        if (*s && strcmp(s, ".") && strcmp(s, ".."))
            e = (sub = openat(fd, s, DIR_FLAGS)) < 0 ? errno : 0;
        if (sub < 0)
            ztr__fail(err, e == EINVAL ? ZT_E_ARG : ZT_E_IO, url, NULL, NULL, 0, 0,
                      "cannot open the directory %.*s: %s", (int)(s - segs + strlen(s)), path,
                      e == EINVAL ? "an empty, \".\" or \"..\" segment" : ztr__why(fd, s, true, e));
        close(fd);
        fd = sub;
    }
    free(segs);
    return fd;
}

int ztr__pull_dir_open(int dir_fd, const char *path, const char *url, zt_error *err)
{
    if (!*ztr__leaf(path) || (dir_fd >= 0 && path[0] == '/'))
        return ztr__fail(err, ZT_E_ARG, url, NULL, NULL, 0, 0, "%s: not a file name%s", path,
                         dir_fd >= 0 ? " relative to the directory given" : ""),
               -1;
    if (dir_fd >= 0)
        return open_below(dir_fd, path, url, err);
    size_t end = (size_t)(ztr__leaf(path) - path);
    char *dir = end ? strndup(path, end) : strdup(".");
    if (!dir)
        return ztr__fail(err, ZT_E_NOMEM, url, NULL, NULL, 0, 0, "out of memory"), -1;
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        ztr__fail(err, ZT_E_IO, url, NULL, NULL, 0, 0, "cannot open the directory %s: %s", dir,
                  strerror(errno));
    free(dir);
    return fd;
}

int ztr__open_regular(int dfd, const char *name, int flags, int *e)
{
    int fd = openat(dfd, name, flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
    struct stat sb;
    *e = fd < 0 ? errno : 0;
    if (fd >= 0 && (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode))) {
        *e = EINVAL; /* ztr__why says "not a regular file" */
        close(fd);
        return -1;
    }
    if (fd >= 0) /* O_NONBLOCK was for opening a FIFO planted there; not for the file */
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    return fd;
}

int ztr__create_new(int dfd, const char *name, int flags, int *e)
{
    struct stat sb;
    if (fstatat(dfd, name, &sb, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(sb.st_mode)) {
        *e = S_ISLNK(sb.st_mode) ? ELOOP : EEXIST; /* never replaced: said, for a person to see */
        return -1;
    }
    if (unlinkat(dfd, name, 0) != 0 && errno != ENOENT) {
        *e = errno;
        return -1;
    }
    int fd = openat(dfd, name, flags | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    *e = fd < 0 ? errno : 0;
    return fd;
}
