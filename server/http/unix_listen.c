/*
 * Binding `--listen unix:PATH` (see unix_listen.h). The mode is set with
 * chmod() between bind() and listen(): until listen() every connect() is
 * refused, so no client gets in while the file still has the umask's mode,
 * and umask() itself is process-wide, which the threads already running
 * (work queue, logs) must not see change.
 */
#include "http/unix_listen.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "core/log.h"

static void fill_addr(struct sockaddr_un *sa, const char *path)
{
    memset(sa, 0, sizeof(*sa));
    sa->sun_family = AF_UNIX;
    strncpy(sa->sun_path, path, sizeof(sa->sun_path) - 1); /* length checked by config */
}

/* 1: a server answers at path; 0: nobody does (stale); -1: cannot tell. */
static int answers(const char *path)
{
    struct sockaddr_un sa;
    fill_addr(&sa, path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return -1;
    int rc = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
    int e = errno;
    close(fd);
    if (rc == 0 || e == EAGAIN) /* EAGAIN: alive, its backlog full */
        return 1;
    return e == ECONNREFUSED || e == ENOENT ? 0 : -1;
}

/* Makes room at path: 0 when it is free now, -1 having logged why not. */
static int clear_stale(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0) {
        if (errno == ENOENT)
            return 0;
        ztd_log(ZTD_LOG_ERROR, "listen unix:%s: %s", path, strerror(errno));
        return -1;
    }
    if (!S_ISSOCK(st.st_mode)) {
        ztd_log(ZTD_LOG_ERROR, "listen unix:%s: exists and is not a socket; not replacing it",
                path);
        return -1;
    }
    int a = answers(path);
    if (a != 0) {
        ztd_log(ZTD_LOG_ERROR, "listen unix:%s: %s", path,
                a > 0 ? "another server answers on this socket"
                      : "a socket is there and it cannot be told whether its server is gone");
        return -1;
    }
    if (unlink(path) != 0 && errno != ENOENT) {
        ztd_log(ZTD_LOG_ERROR, "listen unix:%s: cannot remove the stale socket: %s", path,
                strerror(errno));
        return -1;
    }
    ztd_log(ZTD_LOG_WARN, "listen unix:%s: removed a stale socket nobody answered on", path);
    return 0;
}

int ztd_unix_listen(const char *path, unsigned mode, ztd_unix_id *id)
{
    *id = (ztd_unix_id){0};
    if (clear_stale(path) != 0)
        return -1;
    struct sockaddr_un sa;
    fill_addr(&sa, path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        ztd_log(ZTD_LOG_ERROR, "listen unix:%s: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    const char *step = "bind";
    if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0)
        goto fail;
    id->made = true;
    step = "stat";
    if (lstat(path, &st) != 0)
        goto fail;
    id->dev = (unsigned long long)st.st_dev;
    id->ino = (unsigned long long)st.st_ino;
    step = "chmod";
    if (chmod(path, mode) != 0)
        goto fail;
    step = "listen";
    if (listen(fd, 1024) != 0)
        goto fail;
    return fd;
fail:
    ztd_log(ZTD_LOG_ERROR, "listen unix:%s: %s: %s", path, step, strerror(errno));
    close(fd);
    ztd_unix_unlink(path, id);
    return -1;
}

void ztd_unix_unlink(const char *path, ztd_unix_id *id)
{
    struct stat st;
    if (id->made && lstat(path, &st) == 0 && S_ISSOCK(st.st_mode) &&
        (unsigned long long)st.st_dev == id->dev && (unsigned long long)st.st_ino == id->ino)
        unlink(path);
    *id = (ztd_unix_id){0};
}
