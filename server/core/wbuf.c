/*
 * Writing a file through a memory buffer (see wbuf.h).
 */
#include "core/wbuf.h"

#include <errno.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

bool ztd_wbuf_fill(uint8_t *buf, size_t *blen, size_t cap, const uint8_t **data, size_t *n)
{
    size_t k = cap - *blen < *n ? cap - *blen : *n;
    memcpy(buf + *blen, *data, k);
    *blen += k;
    *data += k;
    *n -= k;
    return *blen == cap;
}

/* off < 0: write at the file's offset. */
static int put_all(int fd, const uint8_t *p, size_t n, int64_t off)
{
    size_t done = 0;
    while (done < n) {
        ssize_t k = off < 0 ? write(fd, p + done, n - done)
                            : pwrite(fd, p + done, n - done, (off_t)(off + (int64_t)done));
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            return -1;
        if (k == 0) { /* cannot happen for files with n > 0; never loop on it */
            errno = EIO;
            return -1;
        }
        done += (size_t)k;
    }
    return 0;
}

int ztd_write_all(int fd, const void *p, size_t n)
{
    return put_all(fd, p, n, -1);
}

int ztd_pwrite_all(int fd, const void *p, size_t n, uint64_t off)
{
    return put_all(fd, p, n, (int64_t)off);
}
