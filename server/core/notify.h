/*
 * systemd integration: the notify protocol (READY, RELOADING, STOPPING,
 * WATCHDOG) and socket activation (LISTEN_FDS). Through libsystemd when the
 * build has it (ZT_HAVE_SYSTEMD); without it these are no-ops, except that
 * socket activation still reads LISTEN_PID/LISTEN_FDS, which is plain.
 */
#ifndef ZTD_NOTIFY_H
#define ZTD_NOTIFY_H

#include <stdint.h>

void ztd_notify_ready(void);
void ztd_notify_reloading(void);
void ztd_notify_stopping(void);
/* Watchdog interval in ms (half of WATCHDOG_USEC), or 0 when not asked for. */
uint64_t ztd_notify_watchdog_ms(void);
void ztd_notify_watchdog(void);
/* A listening socket passed by the service manager, or -1. */
int ztd_listen_fd_from_env(void);

#endif
