/*
 * The upload policy: what whole-file PUTs and upload sessions share about
 * limits. Upload slots (max_uploads, counted together), the size limit
 * (max_upload_size, for one PUT body or one session's file) and the disk
 * reserve (disk_reserve: free space that uploads leave alone), checked before
 * a body from its declared length and every MiB while it streams. The checks
 * are pure functions of their numbers (tests/server/test_uploads.c); only
 * ztd_uploads_disk_ok and the meter read the disk.
 */
#ifndef ZTD_UPLOADS_H
#define ZTD_UPLOADS_H

#include <stdbool.h>
#include <stdint.h>

typedef struct ztd_uploads {
    const char *root;      /* whose file system the reserve is kept on */
    uint64_t max_size;     /* max_upload_size */
    uint64_t disk_reserve; /* bytes */
    unsigned max_uploads;  /* slots */
    int active;            /* atomic: slots taken */
} ztd_uploads;

void ztd_uploads_init(ztd_uploads *u, const char *root, uint64_t max_size, uint64_t disk_reserve,
                      unsigned max_uploads);

/* A slot for a PUT or a session; false when max_uploads are taken. */
bool ztd_uploads_take(ztd_uploads *u);
void ztd_uploads_give(ztd_uploads *u);

/* Do `already` stored bytes and `more` to come fit max_upload_size? */
bool ztd_uploads_size_ok(const ztd_uploads *u, uint64_t already, uint64_t more);
/* Does a file system with `avail` bytes free hold `need` more and `reserve`? */
bool ztd_uploads_room(uint64_t avail, uint64_t need, uint64_t reserve);
/* The same for the root's file system now; true when its free space cannot be
 * read (statvfs failed: no reason to refuse). */
bool ztd_uploads_disk_ok(const ztd_uploads *u, uint64_t need);

/* While a body streams: the reserve is checked once per MiB received. */
#define ZTD_DISK_CHECK_EVERY (1ull << 20)
typedef struct ztd_disk_meter {
    uint64_t next; /* received bytes at which the next check is due */
} ztd_disk_meter;
/* `received` bytes so far: false when a check is due and the reserve is gone. */
bool ztd_uploads_disk_meter(const ztd_uploads *u, ztd_disk_meter *m, uint64_t received);

/* Bytes available to unprivileged users on root's file system: 0, or -1 (statvfs). */
int ztd_disk_free(const char *root, uint64_t *bytes);

#endif
