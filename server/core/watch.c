/*
 * inotify watches for catalog rescans (see watch.h). Events are only a hint:
 * the rescan (or the update of the one file an event names) decides what
 * changed, so lost or merged events are harmless as long as one arrives; a
 * lost event (queue overflow) asks for a whole rescan.
 */
#include "core/watch.h"
#include "core/grow.h"
#include "core/log.h"
#include "core/utf8.h"

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

/* The directory each watch descriptor is on, relative to the root ("" for it). */
typedef struct watched {
    int wd;
    char *rel;
} watched;

struct ztd_watch {
    int fd;
    char *root;
    watched *dirs;
    size_t ndirs, capdirs;
    /* Since the last take: the files named, or a rescan needed. */
    char *names[ZTD_WATCH_MAX_NAMES];
    size_t nnames;
    bool rescan;
};

static watched *find_wd(ztd_watch *w, int wd)
{
    for (size_t i = 0; i < w->ndirs; i++)
        if (w->dirs[i].wd == wd)
            return &w->dirs[i];
    return NULL;
}

/* Remember where wd is; a failure (no memory) makes its events ask for rescans. */
static void remember(ztd_watch *w, int wd, const char *rel)
{
    watched *d = find_wd(w, wd);
    if (d) { /* the same directory again, or a new one reusing a dropped wd */
        char *r = strdup(rel);
        if (r) {
            free(d->rel);
            d->rel = r;
        }
        return;
    }
    if (ZTD_GROW_ITEMS(w->dirs, w->capdirs, w->ndirs + 1, 16) != 0)
        return;
    if ((w->dirs[w->ndirs].rel = strdup(rel)))
        w->dirs[w->ndirs++].wd = wd;
}

static void forget(ztd_watch *w, int wd)
{
    watched *d = find_wd(w, wd);
    if (!d)
        return;
    free(d->rel);
    *d = w->dirs[--w->ndirs];
}

static void add_tree(ztd_watch *w, const char *dir, int depth)
{
    int wd = inotify_add_watch(w->fd, dir, MASK | IN_ONLYDIR);
    if (wd < 0) {
        if (errno == ENOSPC)
            ztd_log(ZTD_LOG_WARN, "watch: inotify watch limit reached at %s", dir);
        return;
    }
    size_t n = strlen(w->root);
    remember(w, wd, dir[n] == '/' ? dir + n + 1 : "");
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
        if (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN)
            continue; /* no lstat per file: on a cold disk each is a synchronous read */
        if ((size_t)snprintf(p, sizeof(p), "%s/%s", dir, de->d_name) >= sizeof(p))
            continue;
        if (de->d_type == DT_DIR || (lstat(p, &sb) == 0 && S_ISDIR(sb.st_mode)))
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
    for (size_t i = 0; i < w->ndirs; i++)
        free(w->dirs[i].rel);
    for (size_t i = 0; i < w->nnames; i++)
        free(w->names[i]);
    free(w->dirs);
    free(w->root);
    free(w);
}

int ztd_watch_fd(const ztd_watch *w)
{
    return w->fd;
}

/* The file an event names, for the next take; or a rescan, when the event is
 * about a directory (created, moved, gone), was lost, or names no file. */
static void note(ztd_watch *w, const struct inotify_event *ev)
{
    if (ev->mask & IN_IGNORED) /* the directory's watch is gone (so is it) */
        forget(w, ev->wd);
    watched *d = find_wd(w, ev->wd);
    char rel[PATH_MAX];
    if (w->rescan || !d || !ev->len ||
        (ev->mask & (IN_ISDIR | IN_Q_OVERFLOW | IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF)) ||
        !ztd_utf8_valid(ev->name, strlen(ev->name)) ||
        (size_t)snprintf(rel, sizeof(rel), "%s%s%s", d->rel, d->rel[0] ? "/" : "", ev->name) >=
            sizeof(rel)) {
        w->rescan = true;
        return;
    }
    for (size_t i = 0; i < w->nnames; i++)
        if (!strcmp(w->names[i], rel))
            return;
    if (w->nnames == ZTD_WATCH_MAX_NAMES || !(w->names[w->nnames] = strdup(rel)))
        w->rescan = true;
    else
        w->nnames++;
}

int ztd_watch_take(ztd_watch *w, void (*fn)(void *ud, const char *rel), void *ud)
{
    int rc = w->rescan;
    for (size_t i = 0; i < w->nnames; i++) {
        if (!rc)
            fn(ud, w->names[i]);
        free(w->names[i]);
    }
    w->nnames = 0;
    w->rescan = false;
    return rc;
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
            if (visible || lost)
                note(w, ev);
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
