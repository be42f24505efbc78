/*
 * Skipping a file by its content, not its identity. A pull that publishes a
 * file marks it (extended attribute user.ztensor.content) with a key of
 * what its bytes are, as the origin's digests say, and the file's mtime:
 *
 *     KEY\nMTIME        KEY: "zt:<sha256 of header, manifest and footer>:<size>"
 *                       or "shard:<the root's whole-file digest>:<size>"
 *
 * Header, manifest and footer name every component's digest, so when every
 * component carries one they say what every byte is (spans between
 * components are checked at the pull). A later pull whose origin has the
 * same key (a `touch` there: a new Last-Modified and ETag; another replica
 * with other inodes) skips the file without fetching a byte of it, as long
 * as the local file was not written since (its mtime). A file with a
 * component without digest has no key: it is fetched again.
 */
#include "remote_internal.h"
#include <ztensor/ztensor_remote_experimental.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#define CONTENT_XATTR "user.ztensor.content"

int ztr__content_key(const zt_file *f, const ztr_shard_of *shard, const uint8_t ends[32],
                     uint64_t size, char *out, size_t cap)
{
    if (shard) {
        const char *d = zt_file_shard_digest(shard->root, shard->index);
        int n = d && *d ? snprintf(out, cap, "shard:%s:%llu", d, (unsigned long long)size) : -1;
        return n > 0 && (size_t)n < cap ? n : 0;
    }
    for (size_t i = 0; i < zt_file_object_count(f); i++) {
        const zt_object *o = zt_file_object_at(f, i);
        for (size_t j = 0; j < zt_object_component_count(o); j++)
            if (zt_component_digest_kind(zt_object_component_at(o, j)) == ZT_DIGEST_NONE)
                return 0; /* its bytes are not named by the manifest */
    }
    if (zt_file_object_count(f) == 0)
        return 0; /* a shard opened alone: its bytes are named elsewhere */
    char hex[65];
    for (int i = 0; i < 32; i++)
        snprintf(hex + 2 * i, 3, "%02x", ends[i]);
    int n = snprintf(out, cap, "zt:%s:%llu", hex, (unsigned long long)size);
    return n > 0 && (size_t)n < cap ? n : 0;
}

static int mark_of(const char *key, const struct stat *sb, char *out, size_t cap)
{
    int n = snprintf(out, cap, "%s\n%lld.%09ld", key, (long long)sb->st_mtim.tv_sec,
                     sb->st_mtim.tv_nsec);
    return n > 0 && (size_t)n < cap ? n : -1;
}

void ztr__content_mark(int fd, const char *key)
{
    struct stat sb;
    char mark[512];
    int n = key && *key && fstat(fd, &sb) == 0 ? mark_of(key, &sb, mark, sizeof(mark)) : -1;
    if (n > 0) /* best effort: without it, a later pull compares identities only */
        (void)fsetxattr(fd, CONTENT_XATTR, mark, (size_t)n, 0);
}

bool ztr__content_done(int dfd, const char *leaf, const char *key, uint64_t size)
{
    if (!key || !*key)
        return false;
    int e, fd = ztr__open_regular(dfd, leaf, O_RDONLY, &e);
    if (fd < 0)
        return false;
    struct stat sb;
    char want[512], got[512];
    int n = fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) &&
                    (size == UINT64_MAX || (uint64_t)sb.st_size == size)
                ? mark_of(key, &sb, want, sizeof(want))
                : -1;
    ssize_t g = n > 0 ? fgetxattr(fd, CONTENT_XATTR, got, sizeof(got)) : -1;
    close(fd);
    return n > 0 && g == n && !memcmp(got, want, (size_t)n);
}

void zt_remote_content_mark(int fd, const char *key)
{
    ztr__content_mark(fd, key);
}

bool zt_remote_content_done(int dirfd, const char *leaf, const char *key, uint64_t size)
{
    return ztr__content_done(dirfd, leaf, key, size);
}
