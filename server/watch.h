/*
 * inotify on the root and every directory below it (not through symlinks,
 * not into hidden directories): tells the main loop when to rescan.
 */
#ifndef ZTD_WATCH_H
#define ZTD_WATCH_H

typedef struct ztd_watch ztd_watch;

ztd_watch *ztd_watch_new(const char *root);
void ztd_watch_free(ztd_watch *w);
int ztd_watch_fd(const ztd_watch *w);
/* Read pending events; 1 if any may change the catalog, 0 if not, -1 on error. */
int ztd_watch_drain(ztd_watch *w);
/* Add watches for directories created since the last call. */
void ztd_watch_refresh(ztd_watch *w);

#endif
