/*
 * Durable files (see ztensor_experimental.h): write-back as a file grows,
 * and the rename that publishes it. One copy for the writer and for
 * ztensord's uploads, which used to keep their own.
 */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

void zt_writeback_init(zt_writeback *wb, int fd)
{
    wb->fd = fd;
    wb->started = 0;
}

void zt_writeback_note(zt_writeback *wb, uint64_t written)
{
    if (written < wb->started) /* truncated back: start again from there */
        wb->started = written;
#ifdef SYNC_FILE_RANGE_WRITE
    if (written - wb->started >= ZT_WRITEBACK_EVERY) {
        sync_file_range(wb->fd, (off_t)wb->started, (off_t)(written - wb->started),
                        SYNC_FILE_RANGE_WRITE);
        wb->started = written;
    }
#endif
}

static zt_status io_error(zt_error *err, const char *what, const char *name)
{
    int e = errno;
    zt_status st = e == ENOSPC || e == EDQUOT ? ZT_E_NOSPACE : ZT_E_IO;
    st = ZT_FAIL(err, st, "%s %s: %s", what, name, strerror(e));
    errno = e;
    return st;
}

/* The rename itself: no-replace when asked, and whether a file was there. */
static int rename_onto(int src_dir, const char *src, int dst_dir, const char *dst, bool no_replace,
                       int *replaced)
{
    int rc = renameat2(src_dir, src, dst_dir, dst, RENAME_NOREPLACE);
    if (rc != 0 && errno == EINVAL) { /* a file system without RENAME_NOREPLACE */
        bool there = faccessat(dst_dir, dst, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
        if (there && no_replace) {
            errno = EEXIST;
            return -1;
        }
        rc = renameat(src_dir, src, dst_dir, dst);
        *replaced = rc == 0 && there;
        return rc;
    }
    if (rc != 0 && errno == EEXIST && !no_replace) {
        rc = renameat(src_dir, src, dst_dir, dst);
        *replaced = rc == 0;
    }
    return rc;
}

zt_status zt_publish_rename(int src_dir, const char *src, int dst_dir, const char *dst,
                            unsigned flags, int *replaced, zt_error *err)
{
    int dummy;
    if (!replaced)
        replaced = &dummy;
    *replaced = 0;
    if (rename_onto(src_dir, src, dst_dir, dst, flags & ZT_PUBLISH_NOREPLACE, replaced) != 0)
        return io_error(err, "cannot publish", dst);
    if (!(flags & ZT_PUBLISH_NOSYNC) && fsync(dst_dir) != 0)
        return io_error(err, "fsync of the directory of", dst);
    return ZT_OK;
}
