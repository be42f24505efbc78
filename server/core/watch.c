/*
 * inotify watches for catalog rescans (see watch.h). Events are only a hint:
 * the rescan itself decides what changed, so lost or merged events are
 * harmless as long as one arrives.
 */
#include "core/watch.h"
#include "core/log.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#define MASK                                                                                       \
    (IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_CREATE | IN_MODIFY |            \
     IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF)

struct ztd_watch {
    int fd;
    char *root;
};

static void add_tree(ztd_watch *w, const char *dir, int depth)
{
    if (inotify_add_watch(w->fd, dir, MASK | IN_ONLYDIR) < 0) {
        if (errno == ENOSPC)
            ztd_log(ZTD_LOG_WARN, "watch: inotify watch limit reached at %s", dir);
        return;
    }
    if (depth >= 32)
        return;
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.')
            continue;
        char p[PATH_MAX];
        struct stat sb;
        if ((size_t)snprintf(p, sizeof(p), "%s/%s", dir, de->d_name) >= sizeof(p))
            continue;
        if (lstat(p, &sb) == 0 && S_ISDIR(sb.st_mode))
            add_tree(w, p, depth + 1);
    }
    closedir(d);
}

ztd_watch *ztd_watch_new(const char *root)
{
    ztd_watch *w = calloc(1, sizeof(*w));
    if (!w)
        return NULL;
    w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    w->root = strdup(root);
    if (w->fd < 0 || !w->root) {
        ztd_log(ZTD_LOG_WARN, "watch: inotify unavailable: %s", strerror(errno));
        ztd_watch_free(w);
        return NULL;
    }
    add_tree(w, root, 0);
    return w;
}

void ztd_watch_free(ztd_watch *w)
{
    if (!w)
        return;
    if (w->fd >= 0)
        close(w->fd);
    free(w->root);
    free(w);
}

int ztd_watch_fd(const ztd_watch *w)
{
    return w->fd;
}

int ztd_watch_drain(ztd_watch *w)
{
    char buf[16384] __attribute__((aligned(__alignof__(struct inotify_event))));
    int relevant = 0;
    for (;;) {
        ssize_t n = read(w->fd, buf, sizeof(buf));
        if (n < 0)
            return (errno == EAGAIN || errno == EINTR) ? relevant : -1;
        for (char *p = buf; p < buf + n;) {
            const struct inotify_event *ev = (const struct inotify_event *)p;
            /* Changes to hidden names (temporary and staging files) do not matter
             * until they are renamed into a visible name. A directory watch
             * reports writes to the files in it, with their name. */
            bool visible = !(ev->len && ev->name[0] == '.');
            bool lost = ev->mask & IN_Q_OVERFLOW;
            if (visible || lost)
                relevant |= ZTD_WATCH_RESCAN;
            if ((visible && (ev->mask & (IN_MODIFY | IN_CLOSE_WRITE | IN_ATTRIB))) || lost)
                relevant |= ZTD_WATCH_WRITTEN;
            p += sizeof(*ev) + ev->len;
        }
    }
}

void ztd_watch_refresh(ztd_watch *w)
{
    add_tree(w, w->root, 0);
}
