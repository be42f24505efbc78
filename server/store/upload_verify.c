/*
 * Verifying a staged upload (see upload_verify.h): libztensor's zt_file_verify on
 * one thread per core, stopping at the first problem, while the calling
 * thread fsyncs the staged file, which is mostly waiting on the disk.
 */
#include "store/upload_verify.h"

#include <errno.h>
#include <unistd.h>

typedef struct sync_job {
    int fd;
    int err;
} sync_job;

static void sync_meanwhile(void *ud)
{
    sync_job *s = ud;
    if (s->fd >= 0 && fsync(s->fd) != 0)
        s->err = errno;
}

zt_status ztd_verify_components(const zt_file *f, int sync_fd, int *sync_errno,
                                int (*known)(void *, uint64_t, uint64_t, uint8_t[32]),
                                void *known_ud, zt_error *err)
{
    sync_job sj = {sync_fd, 0};
    zt_verify_options opt;
    zt_verify_options_init(&opt);
    opt.stop_at_first = 1;
    opt.meanwhile = sync_meanwhile;
    opt.ud = &sj;
    opt.known_sha256 = known;
    opt.known_ud = known_ud;
    zt_status st = zt_file_verify(f, &opt, NULL, err);
    *sync_errno = sj.err;
    return st;
}
