/*
 * zt pull's output directory, walked by directory fds. DIR (-o) is the
 * user's: created with its parents if missing and opened once, following a
 * link the user gave. Below it, every directory a listed name needs is made
 * with mkdirat and opened with O_NOFOLLOW, one segment at a time, so that a
 * link planted in DIR (DIR/sub -> /elsewhere) is an error naming it rather
 * than a way out; the pull then names its files in the last directory only
 * (zt_remote_pull_options.dir_fd).
 */
#include "tool.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DIR_FLAGS (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)

/* mkdir -p of the user's path: errors show up when it is opened. */
static void mkdirs(char *path)
{
    for (char *p = strchr(path + 1, '/'); p; p = strchr(p + 1, '/')) {
        *p = 0;
        mkdir(path, 0755);
        *p = '/';
    }
    mkdir(path, 0755);
}

int tool_pull_top(const char *dir)
{
    char *copy = strdup(dir);
    if (copy)
        mkdirs(copy);
    free(copy);
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        fprintf(stderr, "zt pull: %s: %s\n", dir, strerror(errno));
    return fd;
}

const char *tool_pull_leaf(const char *rel)
{
    const char *s = strrchr(rel, '/');
    return s ? s + 1 : rel;
}

/* Why segment `name` in fd is no directory we may enter. */
static const char *why(int fd, const char *name, int e)
{
    struct stat sb;
    if (fstatat(fd, name, &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(sb.st_mode))
        return "it is a symbolic link (not followed: nothing is written outside the output "
               "directory)";
    return strerror(e);
}

int tool_pull_subdir(int top, const char *dir, const char *rel, zt_error *err)
{
    size_t end = (size_t)(tool_pull_leaf(rel) - rel);
    char *segs = strndup(rel, end);
    int fd = segs ? openat(top, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
    int e = segs ? errno : ENOMEM;
    memset(err, 0, sizeof(*err));
    err->code = ZT_E_IO;
    if (fd < 0)
        snprintf(err->message, sizeof(err->message), "%s: %s", dir, strerror(e));
    for (char *s = segs, *next; fd >= 0 && *s; s = next) {
        next = strchr(s, '/');
        *next++ = 0; /* segs holds whole segments, each ending in '/' */
        if (mkdirat(fd, s, 0755) != 0 && errno != EEXIST)
            e = errno;
        int sub = openat(fd, s, DIR_FLAGS);
        e = sub < 0 ? errno : e;
        if (sub < 0)
            snprintf(err->message, sizeof(err->message), "%s/%.*s: %s", dir,
                     (int)(s - segs + strlen(s)), rel, why(fd, s, e));
        close(fd);
        fd = sub;
    }
    free(segs);
    if (fd >= 0)
        memset(err, 0, sizeof(*err));
    return fd;
}
