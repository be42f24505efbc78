/*
 * ztensord's configuration: one table in config.c declares every option
 * (name, type, bounds, default, help), and everything else is derived from
 * it: command-line flags, ZTENSORD_* environment variables, keys of the JSON
 * config file, --help, docs/CONFIG.md and config/ztensord.json.
 *
 * Precedence, highest first: flag, environment, file, default. Anything
 * unknown or invalid in any source stops start-up with a message naming the
 * option, the source and what is allowed.
 */
#ifndef ZTD_CONFIG_H
#define ZTD_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/log.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Exit statuses, documented in --help. */
#define ZTD_EXIT_OK 0      /* clean shutdown, --help, --version */
#define ZTD_EXIT_FAILURE 1 /* could not start or failed while running */
#define ZTD_EXIT_CONFIG 2  /* invalid command line, environment or config file */

/* What the command line asked for instead of serving. The caller prints and
 * exits ZTD_EXIT_OK; ztd_config_load() validates nothing else in that case. */
typedef enum ztd_action {
    ZTD_ACTION_RUN = 0,
    ZTD_ACTION_HELP,                 /* --help, -h: ztd_config_help() */
    ZTD_ACTION_VERSION,              /* --version, -V */
    ZTD_ACTION_DUMP_CONFIG_MARKDOWN, /* --dump-config-markdown (hidden): ztd_config_markdown() */
    ZTD_ACTION_DUMP_CONFIG_JSON      /* --dump-config-json (hidden): ztd_config_dump_json() */
} ztd_action;

typedef enum ztd_upstream_kind {
    ZTD_UPSTREAM_AUTO = 0,
    ZTD_UPSTREAM_ZTENSORD,
    ZTD_UPSTREAM_PLAIN
} ztd_upstream_kind;

/* request_id_header: which responses carry X-Request-Id (see docs/API.md). */
typedef enum ztd_request_id_mode {
    ZTD_REQUEST_ID_ECHO = 0, /* the client's valid id; error responses always */
    ZTD_REQUEST_ID_ALWAYS    /* every response, generated when the client sent none */
} ztd_request_id_mode;

/* Strings are owned by the struct (released by ztd_config_free) and never
 * NULL once loaded, except config_path (NULL = no file) and root (NULL only
 * when action != ZTD_ACTION_RUN). Durations are in milliseconds. */
typedef struct ztd_config {
    ztd_action action;
    char *config_path;               /* --config / ZTENSORD_CONFIG */
    char *root;                      /* directory served */
    char *exclude;                   /* comma-separated glob patterns not served; "" = none */
    char *listen;                    /* "HOST:PORT" (ztd_listen_parse) or "unix:PATH" */
    char *listen_mode;               /* octal permissions of a Unix socket (ztd_listen_mode) */
    unsigned threads;                /* 0 = one per CPU core */
    uint64_t max_manifest_size;      /* bytes */
    uint64_t shared_response_memory; /* bytes of small components in shared answers */
    unsigned max_ranges;             /* parts of a multipart/byteranges response */
    unsigned max_decode_streams;     /* zstd components decoded at once for clients */
    unsigned connection_limit;       /* simultaneous connections */
    uint64_t connection_timeout_ms;  /* idle connection timeout */
    uint64_t lingering_max;          /* body bytes read and dropped to deliver a refusal */
    uint64_t lingering_timeout_ms;   /* ... and for how long */
    uint64_t shutdown_grace_ms;      /* draining time after SIGTERM */
    char *access_log;                /* "-" = stderr, "off", or a path */
    ztd_access_format access_log_format;
    ztd_request_id_mode request_id_header;
    ztd_log_level log_level;
    char *error_log; /* "-" = stderr, or a path */
    bool watch;      /* rescan root on inotify events */
    uint64_t rescan_debounce_ms;
    char *cache_control; /* for mutable URLs; "" = send none */
    bool verify_digests; /* hash components in the background before claiming digests */
    bool serve_corrupt;  /* serve components found not to match their digests (forensics) */
    char *tokens_file;   /* "" = none */
    bool require_read_token;
    bool allow_anonymous_writes;
    uint64_t max_upload_size;
    unsigned max_uploads;
    unsigned max_open_files; /* catalog files with an open fd at once (store/open_files.h) */
    uint64_t disk_reserve;
    unsigned max_session_components;
    uint64_t session_idle_timeout_ms;
    char *tls_cert; /* "" = plain HTTP */
    char *tls_key;
    /* Slow and idle clients (conns.h); 0 disables each. */
    uint64_t header_timeout_ms; /* request headers complete within this */
    uint64_t min_body_rate;     /* request body bytes per second */
    uint64_t send_lowat;        /* TCP_NOTSENT_LOWAT of client sockets; 0: the kernel's */
    unsigned max_connections_per_address;
    /* Pull-through cache (upstream/upstream.h); upstream "" = none. */
    char *upstream;
    ztd_upstream_kind upstream_kind;
    char *cache_dir;
    uint64_t cache_size;
    char *upstream_token_file;
    uint64_t upstream_ttl_ms;
    uint64_t upstream_stale_ms;
    uint64_t upstream_negative_ttl_ms;
    uint64_t upstream_entries_memory;
    uint64_t upstream_verify_first;
    uint64_t upstream_connect_timeout_ms;
    uint64_t upstream_timeout_ms;
    unsigned upstream_retries;
    uint64_t upstream_min_rate; /* bytes per second, over upstream_timeout; 0 = off */
    unsigned upstream_fills;
    char *prefetch;   /* comma-separated file names and prefixes; "" = none */
    char *s3_buckets; /* comma-separated NAME[=SUBDIR] (core/buckets.h) */
    char *s3_keys;    /* --s3-keys FILE, "" = none (s3/s3_keys.h) */
} ztd_config;

/* Fills *c with the defaults (root NULL). Returns 0, or -1 when out of
 * memory (then *c holds nothing to free). */
int ztd_config_init_defaults(ztd_config *c);

/* Builds the configuration from argv (argv[0] is skipped), envp (NULL-ended
 * "NAME=value" strings; NULL = none) and the JSON file named by --config or
 * ZTENSORD_CONFIG. Touches no global state; reads no file but that one.
 * Returns 0 with *out filled (release with ztd_config_free), or -1 with a
 * one-line message in err (cut to errlen; 1024 bytes hold any message short
 * of one naming a very long path) and nothing in *out to free. On 0, check
 * out->action first: --help and friends skip all other validation. */
int ztd_config_load(ztd_config *out, int argc, char **argv, char **envp, char *err, size_t errlen);

/* Whether option `name` (its config file key) holds its default value in *c; true
 * for an unknown name. For the checks of options that do nothing (config_modes.h). */
bool ztd_config_is_default(const ztd_config *c, const char *name);

/* Releases the strings and zeroes *c. Accepts NULL and zeroed structs. */
void ztd_config_free(ztd_config *c);

/* The man-page style --help text: NAME, SYNOPSIS, DESCRIPTION, OPTIONS (each
 * with its default and environment variable), SIGNALS, EXIT STATUS, FILES. */
void ztd_config_help(FILE *f, const char *prog);
/* docs/CONFIG.md. */
void ztd_config_markdown(FILE *f);
/* Every file option with its default (root: an example) as a JSON object:
 * config/ztensord.json. */
void ztd_config_dump_json(FILE *f);

/* Splits a listen address: "HOST:PORT" or "[IPv6]:PORT", port 0..65535
 * (0 = any free port). host receives the name or address without brackets.
 * Returns 0, or -1 with the reason in why (host may then be partly written). */
int ztd_listen_parse(const char *listen, char *host, size_t hostcap, unsigned *port, char *why,
                     size_t whylen);
/* The socket path of a "unix:PATH" listen address (inside listen), or NULL
 * for a TCP address. */
const char *ztd_listen_unix_path(const char *listen);
/* A listen_mode value (checked octal) as permission bits. */
unsigned ztd_listen_mode(const char *mode);

#ifdef __cplusplus
}
#endif

#endif
