/*
 * inotify on the root and every directory below it (not through symlinks,
 * not into hidden directories): tells the main loop when to rescan, and when
 * a served file was written in place (responses reading it must stop).
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

#endif
