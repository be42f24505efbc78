/*
 * ztensord: start-up, signals and shutdown. The main thread owns the
 * control loop (signalfd + inotify); libmicrohttpd's thread pool serves.
 */
#include "core/clock.h"
#include "store/catalog.h"
#include "core/config.h"
#include "core/config_modes.h"
#include "http/conns.h"
#include "http/http.h"
#include "http/auth.h"
#include "handlers/handlers.h"
#include "hf/hf.h"
#include "core/log.h"
#include "core/notify.h"
#include "store/publish.h"
#include "store/sessions.h"
#include "store/staging.h"
#include "store/view_names.h"
#include "store/bg_verifier.h"
#include "core/watch.h"
#include "core/workq.h"
#include <ztensor/ztensor_remote_experimental.h>
#include "upstream/prefetch.h"
#include "upstream/store_index.h"
#include "upstream/store_views.h"
#include "upstream/upstream.h"
#include "s3/s3_front.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

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
        ztd_config_modes_markdown(stdout);
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

/* An option that does nothing in this mode (core/config_modes.h): harmless, said once. */
static void warn_unused(void *ud, const char *msg)
{
    (void)ud;
    ztd_log(ZTD_LOG_WARN, "%s", msg);
}

#define FD_SLACK 64         /* stdio, logs, signalfd, inotify, listen socket, MHD's threads */
#define RETRY_FIRST_MS 1000 /* files that failed to open for a reason that may pass... */
#define RETRY_MAX_MS 60000  /* ...are retried after 1 s, 2 s, 4 s ... up to every minute */
#define VERIFIER_STOP_MS 2000

/* A verifier still hashing at exit is left to end with the process, with the
 * catalog it reads: kept here, so that a leak checker sees them in use, not lost
 * (LeakSanitizer failed a busy ASan run's daemon for it). */
static ztd_verifier *volatile g_verifier_left;
#define PUBLISH_THREADS 2

/* max_open_files, but at most half of RLIMIT_NOFILE: the other half is for
 * connections, their dup()ed fds and uploads (a root of more files than the
 * limit then serves them all, in turns, instead of failing with EMFILE). */
static size_t open_files_budget(const ztd_config *cfg)
{
    struct rlimit rl;
    size_t n = cfg->max_open_files;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur / 2 < n)
        n = rl.rlim_cur / 2 ? (size_t)(rl.rlim_cur / 2) : 1;
    return n;
}

/* Each open file (at most max_open_files) holds an fd; each connection a socket and, while
 * a file span is sent, a dup of the file's fd; each upload its staging file.
 * Warn once when that adds up to more than RLIMIT_NOFILE (again after it fits). */
static void check_fd_budget(const ztd_server *srv, bool *warned)
{
    struct rlimit rl;
    ztd_catalog_stats cs;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
        return;
    ztd_catalog_get_stats(srv->catalog, &cs);
    const ztd_config *cfg = srv->cfg;
    unsigned long long files = cs.files_valid + cs.files_invalid;
    if (files > open_files_budget(cfg)) /* the rest wait closed (store/open_files.h) */
        files = open_files_budget(cfg);
    unsigned long long need = files + 2ull * cfg->connection_limit + cfg->max_uploads + FD_SLACK;
    bool over = need > (unsigned long long)rl.rlim_cur;
    if (over && !*warned)
        ztd_log(ZTD_LOG_WARN,
                "RLIMIT_NOFILE is %llu (hard limit %llu), but %llu open files + 2 x %u "
                "connections + %u uploads + %d may need %llu file descriptors: past the limit, "
                "files are not served (EMFILE) and connections are refused. Raise the limit "
                "(LimitNOFILE=, ulimit -n) or lower max_open_files or connection_limit",
                (unsigned long long)rl.rlim_cur, (unsigned long long)rl.rlim_max, files,
                cfg->connection_limit, cfg->max_uploads, FD_SLACK, need);
    *warned = over;
}

static void rescan(ztd_server *srv, ztd_watch *w)
{
    ztd_catalog_rescan(srv->catalog);
    if (w)
        ztd_watch_refresh(w);
}

/* An event named one file: its entry alone is made again (O(1) files; a
 * rescan stats the whole root). */
static void update_one(void *srv, const char *rel)
{
    ztd_catalog_update(((ztd_server *)srv)->catalog, rel, NULL);
}

/* Rescan while files or directories wait for a retry (see ztd_entry.retry),
 * backing off. */
static void retry_tick(ztd_server *srv, ztd_watch *w, uint64_t *at, uint64_t *gap)
{
    ztd_catalog_stats cs;
    ztd_catalog_get_stats(srv->catalog, &cs);
    uint64_t t = ztd_now_ms();
    if (!cs.files_retry && !cs.dirs_retry) {
        *at = 0;
        *gap = RETRY_FIRST_MS;
    } else if (!*at) {
        *at = t + *gap;
    } else if (t >= *at) {
        ztd_log(ZTD_LOG_DEBUG, "retrying %zu files and %zu directories that could not be opened",
                cs.files_retry, cs.dirs_retry);
        rescan(srv, w);
        *gap = *gap * 2 < RETRY_MAX_MS ? *gap * 2 : RETRY_MAX_MS;
        *at = 0;
    }
}

/* The control loop: SIGHUP and inotify rescan, SIGTERM/SIGINT stop; its
 * tick (at most 1 s) expires sessions and enforces connection deadlines. */
static void run(ztd_server *srv, int sfd, ztd_watch *w)
{
    uint64_t due = 0, first = 0, wd_ms = ztd_notify_watchdog_ms(), wd_next = 0;
    uint64_t retry_at = 0, retry_gap = RETRY_FIRST_MS;
    bool fd_warned = false;
    check_fd_budget(srv, &fd_warned);
    for (;;) {
        struct pollfd p[2] = {{sfd, POLLIN, 0}, {w ? ztd_watch_fd(w) : -1, POLLIN, 0}};
        int timeout = 1000; /* upload sessions expire on this tick */
        if (wd_ms) {
            uint64_t t = ztd_now_ms();
            if (t >= wd_next) {
                ztd_notify_watchdog();
                wd_next = t + wd_ms;
            }
            if (wd_next - t < (uint64_t)timeout)
                timeout = (int)(wd_next - t);
        }
        if (due) {
            uint64_t t = ztd_now_ms();
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
                    rescan(srv, w);
                    ztd_notify_ready();
                } else {
                    ztd_log(ZTD_LOG_INFO, "%s: shutting down", strsignal((int)si.ssi_signo));
                    return;
                }
            }
        }
        int changes = n > 0 && w && (p[1].revents & POLLIN) ? ztd_watch_drain(w) : 0;
        if (changes > 0) {
            /* Wait for a quiet period, but never more than 10 of them in a row. */
            uint64_t t = ztd_now_ms();
            if (!due)
                first = t;
            due = t + srv->cfg->rescan_debounce_ms;
            if (due > first + 10 * srv->cfg->rescan_debounce_ms)
                due = first + 10 * srv->cfg->rescan_debounce_ms;
        }
        ztd_sessions_sweep(srv->sessions, srv->cfg->session_idle_timeout_ms);
        /* Deadlines, and responses whose file was just written in place. */
        ztd_conns_sweep(srv->conns, changes > 0 && (changes & ZTD_WATCH_WRITTEN));
        if (due && ztd_now_ms() >= due) {
            due = 0;
            if (ztd_watch_take(w, update_one, srv))
                rescan(srv, w);
        }
        retry_tick(srv, w, &retry_at, &retry_gap);
        check_fd_budget(srv, &fd_warned);
    }
}

/* Tokens, the staging area (emptied of what a crash left) and the session table.
 * An instance that cannot accept writes never touches the staging directory,
 * so a read-only replica (another user, a read-only mount) starts anyway. */
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
    ztd_staging_status st = ZTD_STAGING_UNAVAILABLE;
    bool s3_keys = cfg->s3_keys && cfg->s3_keys[0];
    if (!srv->tokens && !cfg->allow_anonymous_writes && !s3_keys)
        ztd_log(ZTD_LOG_INFO,
                "uploads disabled: no tokens_file, no s3_keys and no allow_anonymous_writes");
    else if ((st = ztd_staging_open(cfg->root, cfg->session_idle_timeout_ms, &srv->staging, err,
                                    sizeof(err))) == ZTD_STAGING_UNSAFE) {
        ztd_log(ZTD_LOG_ERROR, "%s", err);
        return -1;
    } else if (st != ZTD_STAGING_OK)
        ztd_log(ZTD_LOG_WARN, "uploads disabled: %s", err);
    return 0;
}

/* --prefetch: one start-up job of its comma-separated names. */
static int start_prefetch(ztd_server *srv)
{
    char *list = strdup(srv->cfg->prefetch), *save = NULL;
    const char *names[256];
    size_t n = 0;
    if (!list)
        return -1;
    for (char *t = strtok_r(list, ",", &save); t && n < 256; t = strtok_r(NULL, ",", &save))
        if (*t)
            names[n++] = t;
    uint64_t id;
    int rc = n ? ztd_prefetch_submit(srv->prefetch, names, n, true, &id) : 0;
    if (n && !rc)
        ztd_log(ZTD_LOG_INFO, "prefetch: start-up job %llu of %zu names; /readyz waits for it",
                (unsigned long long)id, n);
    free(list);
    return rc;
}

/* --upstream: say at start-up whether the upstream answered and what it is. With
 * upstream_kind auto, ztd_upstream_new() asked BASE/v1/files already and logged what
 * it is when it answered; with a kind set, GET BASE/healthz once here (open on a
 * ztensord even with require_read_token), bounded like that probe by
 * upstream_timeout. An upstream that did not answer is a warning, not a failure: the
 * root is served, and the upstream asked again at the first request for its files. */
static void report_upstream(const ztd_config *cfg, ztd_upstream *up)
{
    const char *base = ztd_upstream_url(up);
    double ct = (double)cfg->upstream_connect_timeout_ms / 1000.0;
    double t = (double)cfg->upstream_timeout_ms / 1000.0;
    char url[4200], etag[256];
    const char *why = "GET /v1/files?limit=1 had no answer";
    int status = 0, timed_out = 0;
    char *body = NULL;
    size_t len;
    if (!strncmp(cfg->upstream, "s3://", 5))
        return; /* an S3 store has no /healthz: "upstream … is an S3 store" was logged */
    if (cfg->upstream_kind == ZTD_UPSTREAM_AUTO) {
        if (ztd_upstream_kind_known(up))
            return; /* "upstream BASE is a ztensord" (or a plain HTTP server) was logged */
    } else {
        snprintf(url, sizeof(url), "%s/healthz", base);
        if (zt_remote_http_get(url, NULL, NULL, ct, t, 4096, &status, &body, &len, etag,
                               &timed_out) != 0)
            return; /* out of memory: nothing to say */
        why = timed_out == 1 ? "GET /healthz timed out" : "GET /healthz: no connection";
    }
    if (!status) {
        ztd_log(ZTD_LOG_WARN,
                "upstream %s cannot be reached at start-up (%s; upstream_connect_timeout %.1fs, "
                "upstream_timeout %.1fs): serving the root, and asking the upstream again at "
                "the first request for a file the root does not hold",
                base, why, ct, t);
        return;
    }
    bool ztensord_like = status == 200 && body && strstr(body, "\"status\"");
    bool want_ztensord = cfg->upstream_kind == ZTD_UPSTREAM_ZTENSORD;
    free(body);
    ztd_log(ztensord_like == want_ztensord ? ZTD_LOG_INFO : ZTD_LOG_WARN,
            "upstream %s is %s (GET /healthz answered %d)%s", base,
            ztensord_like ? "a ztensord" : "a plain HTTP server", status,
            ztensord_like == want_ztensord ? ""
            : want_ztensord ? ", but upstream_kind is ztensord: its files are asked for "
                              "through the /v1 API"
                            : ", but upstream_kind is plain: its files are read by URL, "
                              "BASE/NAME");
}

/* The exclude option's comma-separated patterns, given to the catalog. */
static int set_exclude(ztd_catalog *cat, const char *list)
{
    char *copy = strdup(list);
    const char *v[256];
    size_t n = 0;
    if (!copy)
        return -1;
    for (char *save = NULL, *p = strtok_r(copy, ",", &save); p && n < 256;
         p = strtok_r(NULL, ",", &save))
        v[n++] = p;
    if (n == 256)
        ztd_log(ZTD_LOG_WARN, "exclude: only the first 256 patterns are used");
    int rc = ztd_catalog_set_exclude(cat, v, n);
    free(copy);
    return rc;
}

/* The catalog of the root, the session table and the publisher. */
static int setup_store(ztd_server *srv)
{
    const ztd_config *cfg = srv->cfg;
    if (!(srv->catalog = ztd_catalog_new(cfg->root, cfg->max_manifest_size))) {
        ztd_log(ZTD_LOG_ERROR, "root %s: %s", cfg->root, strerror(errno));
        return -1;
    }
    size_t budget = open_files_budget(cfg);
    if (budget < cfg->max_open_files)
        ztd_log(ZTD_LOG_INFO,
                "max_open_files %u is more than half of RLIMIT_NOFILE: at most %zu files are "
                "kept open",
                cfg->max_open_files, budget);
    ztd_catalog_set_max_open(srv->catalog, budget);
    if (set_exclude(srv->catalog, cfg->exclude) != 0) {
        ztd_log(ZTD_LOG_ERROR, "out of memory");
        return -1;
    }
    /* STEM.safetensors beside STEM.zt, and model.safetensors.index.json */
    ztd_catalog_set_virtuals(srv->catalog, ztd_view_names_add);
    srv->sessions = ztd_sessions_new(srv->uploads);
    srv->publisher = ztd_publisher_new(cfg->root, srv->staging, srv->catalog);
    /* Verify, fsync and publish uploads; each verification runs on all cores
     * itself, so two at a time is plenty. Without it they run on the workers. */
    srv->workq = ztd_workq_new(PUBLISH_THREADS, "ztd-publish");
    if (cfg->upstream[0]) {
        char err[1024];
        if (!(srv->upstream = ztd_upstream_new(cfg, &ztd_source_upstream, err, sizeof(err)))) {
            ztd_log(ZTD_LOG_ERROR, "%s", err);
            return -1;
        }
        ztd_log(ZTD_LOG_INFO, "upstream %s, cache %s (%llu bytes at most)", cfg->upstream,
                cfg->cache_dir, (unsigned long long)cfg->cache_size);
        report_upstream(cfg, srv->upstream);
        ztd_store_views_enable(srv->upstream); /* an S3 store's STEM.safetensors */
        ztd_store_index_enable(srv->upstream); /* and its model.safetensors.index.json */
        /* Waits on the upstream end within upstream_timeout each: enough
         * threads that the ones stuck on a silent upstream leave room. */
        unsigned waiters = 4 * cfg->upstream_fills > 16 ? 4 * cfg->upstream_fills : 16;
        if (!(srv->waitq = ztd_workq_new(waiters, "ztd-upwait"))) {
            ztd_log(ZTD_LOG_ERROR, "upstream: out of threads");
            return -1;
        }
        if (!(srv->prefetch = ztd_prefetch_new(srv->upstream, cfg->upstream_fills)) ||
            start_prefetch(srv) != 0) {
            ztd_log(ZTD_LOG_ERROR, "prefetch: out of memory or threads");
            return -1;
        }
    }
    return srv->sessions && srv->publisher ? 0 : -1;
}

/* What the setup made. free_catalog false: the verifier may still read it. */
static void teardown(ztd_server *srv, bool free_catalog)
{
    ztd_workq_free(srv->workq); /* drained by ztd_http_stop already */
    ztd_workq_free(srv->waitq);
    ztd_prefetch_free(srv->prefetch);
    ztd_upstream_free(srv->upstream); /* after the requests that held its entries */
    ztd_publisher_free(srv->publisher);
    ztd_sessions_free(srv->sessions);
    ztd_staging_free(srv->staging); /* after the sessions: their files are in it */
    ztd_tokens_free(srv->tokens);
    if (free_catalog)
        ztd_catalog_free(srv->catalog);
}

static void log_listening(const ztd_server *srv)
{
    const char *scheme = srv->tls_cert ? "https" : "http", *path;
    if ((path = ztd_listen_unix_path(srv->cfg->listen)) && !srv->unix_id)
        ztd_log(ZTD_LOG_INFO, "listening on the socket systemd passed (root %s)", srv->cfg->root);
    else if (path)
        ztd_log(ZTD_LOG_INFO, "listening on %s+unix:%s (mode %s, root %s)", scheme, path,
                srv->cfg->listen_mode, srv->cfg->root);
    else {
        char host[256] = "", why[64];
        unsigned port;
        ztd_listen_parse(srv->cfg->listen, host, sizeof(host), &port, why, sizeof(why));
        bool v6 = strchr(host, ':') != NULL;
        ztd_log(ZTD_LOG_INFO, "listening on %s://%s%s%s:%u (root %s)", scheme, v6 ? "[" : "",
                host[0] ? host : "0.0.0.0", v6 ? "]" : "", srv->port, srv->cfg->root);
    }
}

/* Everything up to a listening daemon: an exit status, ZTD_EXIT_OK when it runs. */
static int start(ztd_server *srv, int sfd)
{
    if (setup_writes(srv) != 0)
        return ZTD_EXIT_CONFIG;
    if (setup_store(srv) != 0)
        return ZTD_EXIT_FAILURE;
    /* Socket-activated: the connection that started us is waiting in the
     * backlog, so scan first and answer it with the catalog in place. */
    if (srv->listen_fd >= 0 && ztd_catalog_rescan(srv->catalog) != 0)
        return ZTD_EXIT_FAILURE;
    int hs = sfd < 0 ? -1 : ztd_http_start(srv);
    if (hs != 0)
        return hs == ZTD_HTTP_CONFIG ? ZTD_EXIT_CONFIG : ZTD_EXIT_FAILURE;
    return ZTD_EXIT_OK;
}

/* With upstream and no root: serve an empty directory (cache_dir/root), so
 * that the catalog, and everything built on it, stays as it is. */
static int default_root(ztd_config *cfg)
{
    if (cfg->root)
        return 0;
    size_t n = strlen(cfg->cache_dir) + 6;
    char *root = malloc(n);
    if (!root)
        return -1;
    snprintf(root, n, "%s/root", cfg->cache_dir);
    if ((mkdir(cfg->cache_dir, 0700) != 0 && errno != EEXIST) ||
        (mkdir(root, 0700) != 0 && errno != EEXIST)) {
        fprintf(stderr, "ztensord: cannot make the empty root %s: %s\n", root, strerror(errno));
        free(root);
        return -1;
    }
    cfg->root = root;
    return 0;
}

int main(int argc, char **argv)
{
    ztd_config cfg;
    char err[1024];
    if (ztd_config_load(&cfg, argc, argv, environ, err, sizeof(err)) != 0) {
        fprintf(stderr, "ztensord: %s\n", err);
        return ZTD_EXIT_CONFIG;
    }
    const char *prog = argc > 0 && argv[0] ? strrchr(argv[0], '/') : NULL;
    /* --help names the program as typed in a shell, not as the path it was started by */
    if (handle_action(&cfg, prog ? prog + 1 : argc > 0 && argv[0] ? argv[0] : "ztensord")) {
        ztd_config_free(&cfg);
        return ZTD_EXIT_OK;
    }
    if (default_root(&cfg) != 0) {
        ztd_config_free(&cfg);
        return ZTD_EXIT_FAILURE;
    }
    if (open_logs(&cfg) != 0) {
        ztd_config_free(&cfg);
        return ZTD_EXIT_FAILURE;
    }
    ztd_config_unused(&cfg, warn_unused, NULL);
    signal(SIGPIPE, SIG_IGN);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &set, NULL); /* before any thread exists */
    int sfd = signalfd(-1, &set, SFD_CLOEXEC);

    /* Every front's rows in the one table http.c reads (http/routes.h): /v1's,
     * then the rows of the fronts that parse their own paths (router.h). */
    static ztd_route_def routes[ZTD_ROUTE_COUNT];
    memcpy(routes, ztd_v1_routes(), sizeof(routes));
    routes[ZTD_ROUTE_HF] = *ztd_hf_route();
    routes[ZTD_ROUTE_S3] = *ztd_s3_route();
    if (ztd_s3_configure(&cfg, err, sizeof(err)) != 0) {
        fprintf(stderr, "ztensord: %s\n", err);
        ztd_config_free(&cfg);
        return ZTD_EXIT_CONFIG;
    }
    ztd_uploads uploads;
    ztd_uploads_init(&uploads, cfg.root, cfg.max_upload_size, cfg.disk_reserve, cfg.max_uploads);
    ztd_server srv = {
        .cfg = &cfg, .listen_fd = ztd_listen_fd_from_env(), .uploads = &uploads, .routes = routes};
    bool activated = srv.listen_fd >= 0;
    int rc = start(&srv, sfd);
    if (rc != ZTD_EXIT_OK) {
        teardown(&srv, true);
        ztd_config_free(&cfg);
        return rc;
    }
    log_listening(&srv);
    ztd_watch *w = cfg.watch ? ztd_watch_new(cfg.root) : NULL;
    rc = activated || ztd_catalog_rescan(srv.catalog) == 0 ? ZTD_EXIT_OK : ZTD_EXIT_FAILURE;
    ztd_verifier *verifier = NULL;
    if (rc == ZTD_EXIT_OK) {
        if (cfg.verify_digests)
            verifier = ztd_verifier_start(srv.catalog);
        ztd_notify_ready();
        run(&srv, sfd, w);
    }
    ztd_notify_stopping();
    ztd_http_stop(&srv);
    /* A huge component may still be hashing: its thread then ends with the
     * process, and the catalog it reads is not freed under it. */
    bool verifier_stopped = ztd_verifier_stop(verifier, VERIFIER_STOP_MS);
    if (!verifier_stopped)
        g_verifier_left = verifier;
    ztd_watch_free(w);
    teardown(&srv, verifier_stopped);
    close(sfd);
    ztd_log(ZTD_LOG_INFO, "stopped");
    ztd_log_close();
    ztd_s3_unconfigure();
    ztd_config_free(&cfg);
    return rc;
}
