/*
 * Secret files, read with their mode checked (see secret_file.h). The mode is
 * checked on the opened descriptor, so a rename between check and read
 * cannot swap the file.
 */
#include "core/secret_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char *refuse(int fd, char *err, size_t errlen, const char *what, const char *path,
                    const char *why)
{
    snprintf(err, errlen, "%s %s: %s", what, path, why);
    if (fd >= 0)
        close(fd);
    return NULL;
}

char *ztd_secret_file_read(const char *path, const char *what, size_t max, size_t *len, char *err,
                           size_t errlen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return refuse(-1, err, errlen, what, path, strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) != 0)
        return refuse(fd, err, errlen, what, path, strerror(errno));
    if (!S_ISREG(sb.st_mode))
        return refuse(fd, err, errlen, what, path, "is not a regular file");
    if (sb.st_mode & 077) {
        char why[160];
        snprintf(why, sizeof(why), "mode %04o lets group or others read or write it; chmod 600 it",
                 (unsigned)(sb.st_mode & 07777));
        return refuse(fd, err, errlen, what, path, why);
    }
    if ((unsigned long long)sb.st_size > max) {
        char why[96];
        snprintf(why, sizeof(why), "larger than %zu bytes", max);
        return refuse(fd, err, errlen, what, path, why);
    }
    char *buf = malloc(max + 1);
    if (!buf)
        return refuse(fd, err, errlen, what, path, "out of memory");
    size_t n = 0;
    for (;;) { /* bounded: every pass reads at least one byte or ends */
        ssize_t r = read(fd, buf + n, max + 1 - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            ztd_secret_file_free(buf, n);
            return refuse(fd, err, errlen, what, path, strerror(errno));
        }
        if (r == 0)
            break;
        n += (size_t)r;
        if (n > max) {
            ztd_secret_file_free(buf, n);
            char why[96];
            snprintf(why, sizeof(why), "larger than %zu bytes", max);
            return refuse(fd, err, errlen, what, path, why);
        }
    }
    close(fd);
    buf[n] = '\0';
    *len = n;
    return buf;
}

void ztd_secret_wipe(void *p, size_t len)
{
    volatile char *v = p; /* volatile: the stores are not optimized away */
    for (size_t i = 0; i < len; i++)
        v[i] = 0;
}

void ztd_secret_file_free(char *buf, size_t len)
{
    if (!buf)
        return;
    ztd_secret_wipe(buf, len);
    free(buf);
}
