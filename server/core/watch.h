/*
 * inotify on the root and every directory below it (not through symlinks,
 * not into hidden directories): tells the main loop when to rescan, which
 * files to update when a rescan is not needed, and when a served file was
 * written in place (responses reading it must stop).
 */
#ifndef ZTD_WATCH_H
#define ZTD_WATCH_H

typedef struct ztd_watch ztd_watch;

ztd_watch *ztd_watch_new(const char *root);
void ztd_watch_free(ztd_watch *w);
int ztd_watch_fd(const ztd_watch *w);
#define ZTD_WATCH_RESCAN 1  /* a visible name appeared, changed or went: rescan */
#define ZTD_WATCH_WRITTEN 2 /* a visible file was written, truncated or touched in place */
/* Read pending events: the ZTD_WATCH_* bits they may mean, or -1 on error. */
int ztd_watch_drain(ztd_watch *w);
/* Add watches for directories created since the last call. */
void ztd_watch_refresh(ztd_watch *w);

/* What the events drained since the last take changed: when they name only a
 * few files (at most ZTD_WATCH_MAX_NAMES), each by its path relative to the
 * root, fn is called for each and 0 returned: updating those entries costs
 * O(1) files, where a rescan stats the whole root. 1 when a rescan is needed
 * instead (a directory changed, events were lost, or too many names). Either
 * way the pending names are cleared. */
#define ZTD_WATCH_MAX_NAMES 16
int ztd_watch_take(ztd_watch *w, void (*fn)(void *ud, const char *rel), void *ud);

#endif
