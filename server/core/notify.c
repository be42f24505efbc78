/*
 * systemd notify protocol and socket activation (see notify.h).
 */
#include "core/notify.h"
#include "core/clock.h"
#include "core/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifdef ZT_HAVE_SYSTEMD
#include <systemd/sd-daemon.h>

/* Called from the main thread only. A notify socket that fails keeps failing (the
 * watchdog pings every WatchdogSec/2): warn once, and again only after a success. */
static void notify(const char *state)
{
    static int failing;
    int r = sd_notify(0, state);
    if (r < 0 && !failing)
        ztd_log(ZTD_LOG_WARN, "sd_notify(%.*s): %s (further failures not logged)",
                (int)strcspn(state, "\n"), state, strerror(-r));
    failing = r < 0;
}

uint64_t ztd_notify_watchdog_ms(void)
{
    uint64_t usec = 0;
    return sd_watchdog_enabled(0, &usec) > 0 ? usec / 2000 : 0;
}
#else
static void notify(const char *state)
{
    (void)state;
}

uint64_t ztd_notify_watchdog_ms(void)
{
    return 0;
}
#endif

void ztd_notify_ready(void)
{
    notify("READY=1\nSTATUS=serving");
}

/* MONOTONIC_USEC= goes with RELOADING=1: systemd >= 253 uses it to tell the reload
 * it asked for (Type=notify-reload sends SIGHUP itself) from an older one; without it
 * `systemctl reload` of such a unit can wait for its timeout. Older versions ignore it. */
void ztd_notify_reloading(void)
{
    char msg[96];
    snprintf(msg, sizeof(msg), "RELOADING=1\nMONOTONIC_USEC=%llu\nSTATUS=rescanning",
             (unsigned long long)ztd_now_us());
    notify(msg);
}

void ztd_notify_stopping(void)
{
    notify("STOPPING=1\nSTATUS=stopping");
}

void ztd_notify_watchdog(void)
{
    notify("WATCHDOG=1");
}

int ztd_listen_fd_from_env(void)
{
    const char *pid = getenv("LISTEN_PID"), *fds = getenv("LISTEN_FDS");
    if (!pid || !fds || strtol(pid, NULL, 10) != (long)getpid())
        return -1;
    long n = strtol(fds, NULL, 10);
    unsetenv("LISTEN_PID");
    unsetenv("LISTEN_FDS");
    unsetenv("LISTEN_FDNAMES");
    if (n < 1)
        return -1;
    if (n > 1)
        ztd_log(ZTD_LOG_WARN, "socket activation: %ld sockets passed, using the first", n);
    int fd = 3; /* SD_LISTEN_FDS_START */
    struct stat sb;
    int type = 0, acc = 0;
    socklen_t l = sizeof(type), la = sizeof(acc);
    if (fstat(fd, &sb) != 0 || !S_ISSOCK(sb.st_mode) ||
        getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &l) != 0 || type != SOCK_STREAM ||
        getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &acc, &la) != 0 || !acc) {
        ztd_log(ZTD_LOG_ERROR, "socket activation: fd 3 is not a listening stream socket");
        return -1;
    }
    return fd;
}
