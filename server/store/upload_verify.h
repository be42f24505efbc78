/*
 * Verifying a staged upload before it is published: every component's digest
 * checked and every zstd component decoded in full, on one thread per core
 * (at most 8), while the calling thread fsyncs the staged file.
 */
#ifndef ZTD_UPLOAD_VERIFY_H
#define ZTD_UPLOAD_VERIFY_H

#include <ztensor/ztensor.h>

/* ZT_OK, or the first failure in *err (which object, component and offset).
 * sync_fd >= 0 is fsynced meanwhile; its errno (0 on success) in *sync_errno.
 * known (may be NULL): digests the uploader already has (zt_verify_options). */
zt_status ztd_verify_components(const zt_file *f, int sync_fd, int *sync_errno,
                                int (*known)(void *, uint64_t, uint64_t, uint8_t[32]),
                                void *known_ud, zt_error *err);

#endif
