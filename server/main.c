/*
 * ztensord: start-up, signals and shutdown. The main thread owns the
 * control loop (signalfd + inotify); libmicrohttpd's thread pool serves.
 */
#include "catalog.h"
#include "config.h"
#include "conns.h"
#include "http.h"
#include "auth.h"
#include "log.h"
#include "notify.h"
#include "session.h"
#include "staging.h"
#include "watch.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static uint64_t now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

static int handle_action(ztd_config *cfg, const char *prog)
{
    switch (cfg->action) {
    case ZTD_ACTION_HELP:
        ztd_config_help(stdout, prog);
        return 1;
    case ZTD_ACTION_VERSION:
        printf("ztensord %s (zTensor format %s)\n", ZT_VERSION_STRING, ZT_FORMAT_VERSION);
        return 1;
    case ZTD_ACTION_DUMP_CONFIG_MARKDOWN:
        ztd_config_markdown(stdout);
        return 1;
    case ZTD_ACTION_DUMP_CONFIG_JSON:
        ztd_config_dump_json(stdout);
        return 1;
    default:
        return 0;
    }
}

static int open_logs(const ztd_config *cfg)
{
    char err[512];
    if (ztd_log_open(cfg->error_log, cfg->log_level, err, sizeof(err)) != 0) {
        fprintf(stderr, "ztensord: %s\n", err);
        return -1;
    }
    if (strcmp(cfg->access_log, "off") != 0 &&
        ztd_access_log_open(cfg->access_log, cfg->access_log_format, err, sizeof(err)) != 0) {
        fprintf(stderr, "ztensord: %s\n", err);
        return -1;
    }
    return 0;
}

/* The control loop: SIGHUP and inotify rescan, SIGTERM/SIGINT stop; its
 * tick (at most 1 s) expires sessions and enforces connection deadlines. */
static void run(ztd_server *srv, int sfd, ztd_watch *w)
{
    uint64_t due = 0, first = 0, wd_ms = ztd_notify_watchdog_ms(), wd_next = 0;
    for (;;) {
        struct pollfd p[2] = {{sfd, POLLIN, 0}, {w ? ztd_watch_fd(w) : -1, POLLIN, 0}};
        int timeout = 1000; /* upload sessions expire on this tick */
        if (wd_ms) {
            uint64_t t = now_ms();
            if (t >= wd_next) {
                ztd_notify_watchdog();
                wd_next = t + wd_ms;
            }
            if (wd_next - t < (uint64_t)timeout)
                timeout = (int)(wd_next - t);
        }
        if (due) {
            uint64_t t = now_ms();
            int until = due > t ? (int)(due - t < 1000 ? due - t : 1000) : 0;
            if (until < timeout)
                timeout = until; /* never later than a watchdog ping */
        }
        int n = poll(p, 2, timeout);
        if (n < 0 && errno != EINTR)
            break;
        if (n > 0 && (p[0].revents & POLLIN)) {
            struct signalfd_siginfo si;
            if (read(sfd, &si, sizeof(si)) == sizeof(si)) {
                if (si.ssi_signo == SIGHUP) {
                    ztd_log(ZTD_LOG_INFO, "SIGHUP: reopening logs and rescanning");
                    ztd_notify_reloading();
                    ztd_log_reopen();
                    ztd_catalog_rescan(srv->catalog);
                    ztd_notify_ready();
                    if (w)
                        ztd_watch_refresh(w);
                } else {
                    ztd_log(ZTD_LOG_INFO, "%s: shutting down", strsignal((int)si.ssi_signo));
                    return;
                }
            }
        }
        int changes = n > 0 && w && (p[1].revents & POLLIN) ? ztd_watch_drain(w) : 0;
        if (changes > 0) {
            /* Wait for a quiet period, but never more than 10 of them in a row. */
            uint64_t t = now_ms();
            if (!due)
                first = t;
            due = t + srv->cfg->rescan_debounce_ms;
            if (due > first + 10 * srv->cfg->rescan_debounce_ms)
                due = first + 10 * srv->cfg->rescan_debounce_ms;
        }
        ztd_sessions_sweep(srv, srv->cfg->session_idle_timeout_ms);
        /* Deadlines, and responses whose file was just written in place. */
        ztd_conns_sweep(srv->conns, changes > 0 && (changes & ZTD_WATCH_WRITTEN));
        if (due && now_ms() >= due) {
            due = 0;
            ztd_catalog_rescan(srv->catalog);
            if (w)
                ztd_watch_refresh(w);
        }
    }
}

/* Tokens, the staging area (emptied of what a crash left) and the session table. */
static int setup_writes(ztd_server *srv)
{
    char err[512];
    const ztd_config *cfg = srv->cfg;
    if (cfg->tokens_file && cfg->tokens_file[0]) {
        if (!(srv->tokens = ztd_tokens_load(cfg->tokens_file, err, sizeof(err)))) {
            ztd_log(ZTD_LOG_ERROR, "%s", err);
            return -1;
        }
        ztd_log(ZTD_LOG_INFO, "auth: %zu tokens loaded", ztd_tokens_count(srv->tokens));
    }
    if (cfg->require_read_token && !srv->tokens) {
        ztd_log(ZTD_LOG_ERROR, "require_read_token needs tokens_file: no read could succeed");
        return -1;
    }
    if (ztd_staging_init(cfg->root, err, sizeof(err)) != 0)
        ztd_log(ZTD_LOG_WARN, "uploads disabled: %s", err);
    else
        srv->uploads_enabled = true;
    srv->sessions = ztd_sessions_new();
    return srv->sessions ? 0 : -1;
}

int main(int argc, char **argv)
{
    ztd_config cfg;
    char err[1024];
    if (ztd_config_load(&cfg, argc, argv, environ, err, sizeof(err)) != 0) {
        fprintf(stderr, "ztensord: %s\n", err);
        return ZTD_EXIT_CONFIG;
    }
    if (handle_action(&cfg, argv[0])) {
        ztd_config_free(&cfg);
        return ZTD_EXIT_OK;
    }
    if (open_logs(&cfg) != 0) {
        ztd_config_free(&cfg);
        return ZTD_EXIT_FAILURE;
    }
    signal(SIGPIPE, SIG_IGN);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &set, NULL); /* before any thread exists */
    int sfd = signalfd(-1, &set, SFD_CLOEXEC);

    ztd_server srv = {.cfg = &cfg, .listen_fd = ztd_listen_fd_from_env()};
    pthread_mutex_init(&srv.publish_mu, NULL);
    if (setup_writes(&srv) != 0) {
        ztd_config_free(&cfg);
        return ZTD_EXIT_CONFIG;
    }
    srv.catalog = ztd_catalog_new(cfg.root, cfg.max_manifest_size);
    if (!srv.catalog) {
        ztd_log(ZTD_LOG_ERROR, "root %s: %s", cfg.root, strerror(errno));
        ztd_sessions_free(srv.sessions);
        ztd_tokens_free(srv.tokens);
        ztd_config_free(&cfg);
        return ZTD_EXIT_FAILURE;
    }
    /* Socket-activated: the connection that started us is waiting in the
     * backlog, so scan first and answer it with the catalog in place. */
    bool activated = srv.listen_fd >= 0;
    if (activated && ztd_catalog_rescan(srv.catalog) != 0) {
        ztd_catalog_free(srv.catalog);
        ztd_sessions_free(srv.sessions);
        ztd_tokens_free(srv.tokens);
        ztd_config_free(&cfg);
        return ZTD_EXIT_FAILURE;
    }
    int hs = sfd < 0 ? -1 : ztd_http_start(&srv);
    if (hs != 0) {
        ztd_catalog_free(srv.catalog);
        ztd_sessions_free(srv.sessions);
        ztd_tokens_free(srv.tokens);
        ztd_config_free(&cfg);
        return hs == ZTD_HTTP_CONFIG ? ZTD_EXIT_CONFIG : ZTD_EXIT_FAILURE;
    }
    char host[256] = "", why[64];
    unsigned port;
    ztd_listen_parse(cfg.listen, host, sizeof(host), &port, why, sizeof(why));
    bool v6 = strchr(host, ':') != NULL;
    ztd_log(ZTD_LOG_INFO, "listening on %s://%s%s%s:%u (root %s)", srv.tls_cert ? "https" : "http",
            v6 ? "[" : "", host[0] ? host : "0.0.0.0", v6 ? "]" : "", srv.port, cfg.root);
    ztd_watch *w = cfg.watch ? ztd_watch_new(cfg.root) : NULL;
    int rc = activated || ztd_catalog_rescan(srv.catalog) == 0 ? ZTD_EXIT_OK : ZTD_EXIT_FAILURE;
    if (rc == ZTD_EXIT_OK) {
        ztd_notify_ready();
        run(&srv, sfd, w);
    }
    ztd_notify_stopping();
    ztd_http_stop(&srv);
    ztd_watch_free(w);
    ztd_sessions_free(srv.sessions);
    ztd_tokens_free(srv.tokens);
    ztd_catalog_free(srv.catalog);
    close(sfd);
    ztd_log(ZTD_LOG_INFO, "stopped");
    ztd_log_close();
    ztd_config_free(&cfg);
    return rc;
}
