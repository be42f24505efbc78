/* The upload policy (see uploads.h). */
#include "store/uploads.h"

#include <sys/statvfs.h>

void ztd_uploads_init(ztd_uploads *u, const char *root, uint64_t max_size, uint64_t disk_reserve,
                      unsigned max_uploads)
{
    *u = (ztd_uploads){root, max_size, disk_reserve, max_uploads, 0};
}

bool ztd_uploads_take(ztd_uploads *u)
{
    int n = __atomic_add_fetch(&u->active, 1, __ATOMIC_ACQ_REL);
    if ((unsigned)n > u->max_uploads) {
        __atomic_sub_fetch(&u->active, 1, __ATOMIC_ACQ_REL);
        return false;
    }
    return true;
}

void ztd_uploads_give(ztd_uploads *u)
{
    __atomic_sub_fetch(&u->active, 1, __ATOMIC_ACQ_REL);
}

bool ztd_uploads_size_ok(const ztd_uploads *u, uint64_t already, uint64_t more)
{
    return more <= u->max_size && already <= u->max_size - more;
}

bool ztd_uploads_room(uint64_t avail, uint64_t need, uint64_t reserve)
{
    return avail >= need && avail - need >= reserve;
}

int ztd_disk_free(const char *root, uint64_t *bytes)
{
    struct statvfs sv;
    if (statvfs(root, &sv) != 0)
        return -1;
    *bytes = (uint64_t)sv.f_bavail * sv.f_frsize;
    return 0;
}

bool ztd_uploads_disk_ok(const ztd_uploads *u, uint64_t need)
{
    uint64_t avail;
    return ztd_disk_free(u->root, &avail) != 0 || ztd_uploads_room(avail, need, u->disk_reserve);
}

bool ztd_uploads_disk_meter(const ztd_uploads *u, ztd_disk_meter *m, uint64_t received)
{
    if (!m->next)
        m->next = ZTD_DISK_CHECK_EVERY;
    if (received < m->next)
        return true;
    m->next = received + ZTD_DISK_CHECK_EVERY;
    return ztd_uploads_disk_ok(u, 0);
}
