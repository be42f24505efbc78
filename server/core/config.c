/*
 * config.c: the one table of ztensord's options, and everything derived from
 * it (after redis' static_configs[]): parsing of flags, environment and JSON
 * file, validation, --help, docs/CONFIG.md and the sample config file.
 *
 * Adding an option is adding a field to ztd_config and a row to options[];
 * FIELD() refuses to compile when the row's type and the field's type differ.
 * Defaults are written as strings in the syntax of a flag value and go
 * through the same parser as user input, so a default can never be invalid
 * (test_config checks) and the docs show what a user would type.
 *
 * Loading is pure apart from reading the one config file: argv and envp come
 * in as arguments, errors go out in a caller buffer, nothing is printed.
 */
#include "core/config.h"
#include "core/buckets.h"

#include <arpa/inet.h>
#include <jansson.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>

#define KIB 1024ull
#define MIB (1024ull * KIB)
#define GIB (1024ull * MIB)
#define TIB (1024ull * GIB)
#define MSEC 1ull
#define SEC (1000ull * MSEC)
#define MINUTE (60ull * SEC)
#define HOUR (60ull * MINUTE)

#define ENV_PREFIX "ZTENSORD_"
#define ENV_PREFIX_LEN (sizeof ENV_PREFIX - 1)
#define NAME_MAX_LEN 64 /* more than any option name; longer input gets no "did you mean" */
#define QUOTED_MAX 272  /* quoted(): 64 bytes, each up to \xHH, quotes, "..." and slack */

typedef enum opt_type { T_STRING, T_BOOL, T_UINT, T_SIZE, T_DURATION, T_ENUM } opt_type;

#define F_REQUIRED 1u /* no default; loading fails unless some source sets it */
#define F_NOFILE 2u   /* not a key of the config file (only "config" itself) */
#define F_LIST                                                                                     \
    4u /* T_STRING, a comma-separated list: a flag given again adds to it, the                     \
          config file may give a JSON array of strings */

typedef int (*check_fn)(const char *v, char *why, size_t whylen);

typedef struct option {
    const char *name; /* snake_case; flag and environment names derive from it */
    opt_type type;
    size_t offset; /* of the field in ztd_config, via FIELD() */
    unsigned flags;
    const char *def;           /* default in flag syntax; NULL = none */
    const char *example;       /* sample-file value when def is NULL */
    const char *metavar;       /* value placeholder in --help */
    uint64_t min, max;         /* T_UINT, T_SIZE (bytes), T_DURATION (ms) */
    const char *const *values; /* T_ENUM, NULL-terminated; index = stored value */
    check_fn check;            /* T_STRING */
    const char *allowed;       /* T_STRING: what check accepts, for messages */
    const char *help;
    const char *flag1; /* F_LIST: the flag naming one item (without "--"), or NULL */
} option;

/* offsetof() that only compiles when the field has type T. */
#define FIELD(f, T) _Generic(((ztd_config *)0)->f, T : offsetof(ztd_config, f))
/* Enum fields are stored through an int. */
#define ENUM_FIELD(f)                                                                              \
    (offsetof(ztd_config, f) +                                                                     \
     0 * sizeof(char[sizeof(((ztd_config *)0)->f) == sizeof(int) ? 1 : -1]))

/* One row maker per option type (after redis' createBoolConfig() and kin), so
 * that a row names only what differs between options. Numbers, sizes and
 * durations share their metavar; min and max are in bytes or ms. */
#define OPT_BOOL(nm, fld, dflt, hlp)                                                               \
    {                                                                                              \
        .name = nm, .type = T_BOOL, .offset = FIELD(fld, bool), .def = dflt, .help = hlp           \
    }
#define OPT_NUMBER(nm, t, off, dflt, mv, lo, hi, hlp)                                              \
    {                                                                                              \
        .name = nm, .type = t, .offset = off, .def = dflt, .metavar = mv, .min = lo, .max = hi,    \
        .help = hlp                                                                                \
    }
#define OPT_UINT(nm, fld, dflt, lo, hi, hlp)                                                       \
    OPT_NUMBER(nm, T_UINT, FIELD(fld, unsigned), dflt, "N", lo, hi, hlp)
#define OPT_SIZE(nm, fld, dflt, lo, hi, hlp)                                                       \
    OPT_NUMBER(nm, T_SIZE, FIELD(fld, uint64_t), dflt, "SIZE", lo, hi, hlp)
#define OPT_DURATION(nm, fld, dflt, lo, hi, hlp)                                                   \
    OPT_NUMBER(nm, T_DURATION, FIELD(fld, uint64_t), dflt, "DURATION", lo, hi, hlp)
#define OPT_ENUM(nm, fld, dflt, mv, vals, hlp)                                                     \
    {                                                                                              \
        .name = nm, .type = T_ENUM, .offset = ENUM_FIELD(fld), .def = dflt, .metavar = mv,         \
        .values = vals, .help = hlp                                                                \
    }
/* what: the values check accepts, in words, for error messages. */
#define OPT_STRING(nm, fld, flg, dflt, mv, chk, what, hlp)                                         \
    {                                                                                              \
        .name = nm, .type = T_STRING, .offset = FIELD(fld, char *), .flags = flg, .def = dflt,     \
        .metavar = mv, .check = chk, .allowed = what, .help = hlp                                  \
    }
/* No default: the sample config file shows ex instead. */
#define OPT_REQUIRED_STRING(nm, fld, ex, mv, chk, what, hlp)                                       \
    {                                                                                              \
        .name = nm, .type = T_STRING, .offset = FIELD(fld, char *), .flags = F_REQUIRED,           \
        .example = ex, .metavar = mv, .check = chk, .allowed = what, .help = hlp                   \
    }

static int check_nonempty(const char *v, char *why, size_t whylen);
static int check_listen(const char *v, char *why, size_t whylen);
static int check_mode(const char *v, char *why, size_t whylen);
static int check_header_value(const char *v, char *why, size_t whylen);
static int check_upstream(const char *v, char *why, size_t whylen);
static int check_exclude(const char *v, char *why, size_t whylen);
static int check_s3_buckets(const char *v, char *why, size_t whylen);

static const char *const access_formats[] = {"text", "json", NULL};
static const char *const log_levels[] = {"error", "warn", "info", "debug", NULL};
static const char *const request_id_modes[] = {"echo", "always", NULL};
static const char *const upstream_kinds[] = {"auto", "ztensord", "plain", NULL};

static const option options[] = {
    OPT_STRING("config", config_path, F_NOFILE, NULL, "FILE", check_nonempty, "a file path",
               "Read options from this JSON file: one object whose keys are the option names "
               "below. Flags and environment variables override it; an unknown key is an error."),
    OPT_REQUIRED_STRING(
        "root", root, "/srv/models", "DIR", check_nonempty, "a directory path",
        "Directory whose zTensor files are served. Required, unless upstream is set: "
        "then an empty directory `root` inside cache_dir is made and served, and only "
        "upstream files are."),
    OPT_STRING("exclude", exclude, 0, "", "GLOBS", check_exclude,
               "comma-separated glob patterns, none empty",
               "Files under the root not to serve: comma-separated glob patterns (fnmatch(3), "
               "where `*` also matches `/`) matched against each file's path relative to the "
               "root and against the paths of its directories, e.g. `*.bin,cache,*/tmp/*`, or "
               "`*.ztpart,*.ztpull` for the partial files of a `zt pull` into the root. "
               "Such files are neither listed nor served, as hidden names (starting with `.`) "
               "and the staging directories never are. Empty: every other regular file is "
               "served, tensor files and plain files alike."),
    OPT_STRING("listen", listen, 0, "127.0.0.1:7070", "HOST:PORT", check_listen,
               "HOST:PORT or [IPv6]:PORT with a port from 0 to 65535, or unix:/ABSOLUTE/PATH",
               "Address to listen on: HOST:PORT with a host name or IPv4 address, or [IPv6]:PORT. "
               "`0.0.0.0` or `[::]` listen on every interface; port 0 picks a free port. "
               "`unix:/run/ztensord/ztensord.sock` listens on a Unix socket instead (for clients "
               "on the same host: `curl --unix-socket`): its directory must exist; a socket left "
               "there by a server that died is replaced, any other file is refused; the socket is "
               "removed at exit."),
    OPT_STRING("listen_mode", listen_mode, 0, "0660", "MODE", check_mode,
               "an octal mode from 0 to 0777",
               "Permissions of the Unix socket that `listen = unix:PATH` makes, in octal: "
               "connecting needs write permission on it, so 0660 lets its owner and group connect. "
               "Ignored for a TCP address."),
    OPT_UINT("threads", threads, "0", 0, 256,
             "Worker threads that serve connections; 0 means one per CPU core."),
    OPT_SIZE("max_manifest_size", max_manifest_size, "64M", KIB, GIB,
             "Largest manifest read from a file; a file whose manifest is larger is refused."),
    OPT_SIZE("shared_response_memory", shared_response_memory, "64M", 0, 64 * GIB,
             "Memory for answers built once and shared by every request: the 200 answer to a "
             "verified component of at most 64 KiB (raw, with a sha256 digest), built by its "
             "second request (one asked for once costs nothing) and kept with its file version "
             "while it is served. Past this, each request builds its own answer as before; 0 "
             "turns them off. Manifests' shared answers use their JSON, not this."),
    OPT_UINT("max_open_files", max_open_files, "4096", 1, 1048576,
             "Most served files with an open fd and mapping, like nginx's open_file_cache: the "
             "least recently used others keep their manifest and are reopened when asked for. "
             "A file being sent is never closed (more than N in use at once go over N)."),
    OPT_UINT("max_ranges", max_ranges, "64", 1, 64,
             "Most byte ranges in one request: the parts of one multipart/byteranges response."),
    OPT_UINT("max_decode_streams", max_decode_streams, "32", 1, 65536,
             "Most zstd components decoded at once for clients that do not accept zstd; more "
             "are answered 503 with Retry-After. Each decoding stream holds its frame's window "
             "(2 MiB for files written at the default level, at most 8 MiB) plus about 800 KiB "
             "of buffers until its response is sent."),
    OPT_UINT("connection_limit", connection_limit, "1024", 1, 1048576,
             "Most client connections open at once. Near it, connections waiting for a "
             "request (idle keep-alive, or nothing sent yet) are closed, oldest first, to make "
             "room, then those reading and dropping the body of a refused request (see "
             "lingering_max); and a reserve of a sixteenth of it (1 to 64) is kept: once busy "
             "connections (not counting those) fill the rest, requests other than /healthz, "
             "/readyz and /metrics are answered 503 overloaded."),
    OPT_DURATION("connection_timeout", connection_timeout_ms, "60s", SEC, 24 * HOUR,
                 "Close a connection that has been idle this long."),
    OPT_DURATION("header_timeout", header_timeout_ms, "30s", 0, HOUR,
                 "A request's headers must be complete this long after the connection was "
                 "accepted, or after the previous request on it ended; else the connection is "
                 "closed. Unlike connection_timeout, sending a byte now and then does not extend "
                 "it (slowloris). It also bounds how long a keep-alive connection may stay idle. "
                 "0 disables it."),
    OPT_SIZE("min_body_rate", min_body_rate, "4K", 0, GIB,
             "Bytes per second a request body must arrive at, measured over 10 s windows "
             "from the end of its headers; a slower upload is cut. 0 disables it."),
    OPT_SIZE("send_lowat", send_lowat, "128K", 0, 64 * MIB,
             "Most bytes of a response left unsent in a client's TCP socket (TCP_NOTSENT_LOWAT): "
             "a write stops there and the socket is written again once the kernel has sent most "
             "of them, so that the rest is sent by this server's thread rather than by the "
             "kernel's handling of the client's acknowledgements (on the client's core when it "
             "runs on the same machine). It does not bound the bytes in flight on the network. "
             "0 leaves the kernel's default (no limit). See docs/PERFORMANCE.md."),
    OPT_UINT("max_connections_per_address", max_connections_per_address, "0", 0, 1048576,
             "Most connections open at once from one client IP address; more are closed "
             "as they are accepted, before a request is read. 0 means no limit: the "
             "default, because behind a proxy every client shares the proxy's address. Set "
             "it when clients connect directly."),
    OPT_SIZE("lingering_max", lingering_max, "64M", 0, 1024 * TIB,
             "A request refused while its body is still to come (401, 403, 412, 413, 507, ... "
             "before the body, or a limit hit during it) is answered once the body has been "
             "read and dropped, so that a client that sends its body without waiting for "
             "`100 Continue` can read the answer. Past this many body bytes (or a declared "
             "Content-Length above it) the server answers at once, or closes the connection "
             "if the body has already begun, and such a client sees a reset instead. 0: never "
             "read a refused body."),
    OPT_DURATION("lingering_timeout", lingering_timeout_ms, "30s", 0, HOUR,
                 "How long the server goes on reading a refused request's body (see "
                 "lingering_max) before it closes the connection."),
    OPT_DURATION("shutdown_grace", shutdown_grace_ms, "10s", 0, HOUR,
                 "After SIGTERM or SIGINT, how long requests in flight may take to finish before "
                 "the server exits anyway."),
    OPT_STRING("access_log", access_log, 0, "-", "PATH", check_nonempty, "-, off or a file path",
               "Where the access log goes: `-` for standard error, `off` for nowhere, or a file "
               "(appended to, and reopened on SIGHUP)."),
    OPT_ENUM("access_log_format", access_log_format, "text", "FORMAT", access_formats,
             "Access log lines: text (the common log format plus the duration in seconds and "
             "the request id) or json (one JSON object per line)."),
    OPT_ENUM("request_id_header", request_id_header, "echo", "MODE", request_id_modes,
             "When a response carries X-Request-Id: echo (the client's own id, when it sent a "
             "valid one; error responses always carry one, generated when the client sent "
             "none) or always (every response, generated when the client sent none). The "
             "access log has an id for every request either way. With echo, a manifest's 200 "
             "answer is one response built once per file version and shared by all requests."),
    OPT_ENUM("log_level", log_level, "info", "LEVEL", log_levels,
             "Least severe error-log messages that are written."),
    OPT_STRING("error_log", error_log, 0, "-", "PATH", check_nonempty, "- or a file path",
               "Where the error log goes: `-` for standard error, or a file (appended to, and "
               "reopened on SIGHUP)."),
    OPT_BOOL("watch", watch, "true",
             "Watch root with inotify and rescan when files appear, change or disappear."),
    OPT_DURATION("rescan_debounce", rescan_debounce_ms, "200ms", 0, MINUTE,
                 "After a change under root, wait this long for further changes before "
                 "rescanning, so that a burst of changes costs one rescan."),
    OPT_STRING("cache_control", cache_control, 0, "public, max-age=0, s-maxage=1, proxy-revalidate",
               "VALUE", check_header_value, "printable ASCII",
               "Cache-Control header of responses whose URL names a file by path, and whose "
               "content can therefore change. The default lets browsers revalidate every use and "
               "shared caches (nginx proxy_cache, Varnish) store a response for 1 s and then "
               "revalidate it by ETag (see docs/NGINX-CACHE.md; nginx does not store no-cache "
               "responses). Empty sends no Cache-Control header."),
    OPT_BOOL("verify_digests", verify_digests, "true",
             "Hash every sha256-digested component in the background (one thread, lowest CPU "
             "and I/O priority) after each scan, once per file version. Only a verified "
             "component is named by its digest: `ETag: \"sha256:...\"`, Repr-Digest, and an "
             "immutable blob URL; until then it is served with the validators of a digest-less "
             "component, and a component whose bytes do not match never is. Off saves the "
             "reading and hashing of the whole tree, but then only files the server verified "
             "itself (whole-file uploads) are ever named by their digests."),
    OPT_BOOL("serve_corrupt", serve_corrupt, "false",
             "Serve the bytes of a component that the digest verifier found not to match its "
             "manifest digest, as they are on disk (200, identity ETag, no Repr-Digest), for "
             "forensics. Off, such a component answers 500 digest_mismatch naming the object, "
             "the component and the byte offset, while the listing shows the file as corrupt "
             "and the manifest marks the component either way. Its blob URL answers 500 "
             "digest_mismatch whatever this says."),
    OPT_STRING("tokens_file", tokens_file, 0, "", "PATH", NULL, "a file path, or empty for none",
               "Bearer tokens, one `<scope> <token>` per line (scope `read` or `write`; `#` "
               "starts a comment). Without it, writes are refused unless allow_anonymous_writes "
               "is set. Tokens are never logged."),
    OPT_BOOL("require_read_token", require_read_token, "false",
             "Require a `read` (or `write`) token for reads too; /healthz, /readyz and "
             "/metrics stay open."),
    OPT_BOOL("allow_anonymous_writes", allow_anonymous_writes, "false",
             "Accept uploads and deletes without a token when no tokens_file is set. For "
             "tests and trusted single-user setups only."),
    OPT_SIZE("max_upload_size", max_upload_size, "1T", KIB, 1024 * TIB,
             "Largest file one upload (a whole-file PUT or a session) may write; more is "
             "answered 413."),
    OPT_UINT("max_uploads", max_uploads, "16", 1, 4096,
             "Most whole-file uploads and open upload sessions at once; more are answered 503 "
             "with Retry-After. Each one streaming holds up to 4 MiB of buffers (1 MiB for "
             "its bytes, 3 more while their SHA-256 runs on another thread)."),
    OPT_SIZE("disk_reserve", disk_reserve, "1G", 0, 1024 * TIB,
             "Free space to leave on the root's filesystem: an upload that would go below it "
             "is refused, before and while it is written, with 507."),
    OPT_UINT("max_session_components", max_session_components, "100000", 1, 10000000,
             "Most components one upload session may hold; more are answered 413."),
    OPT_DURATION("session_idle_timeout", session_idle_timeout_ms, "1h", SEC, 7 * 24 * HOUR,
                 "An upload session with no request for this long is aborted and its staging file "
                 "removed."),
    OPT_STRING("tls_cert", tls_cert, 0, "", "PATH", NULL,
               "a PEM file path, or empty for plain HTTP",
               "Serve HTTPS with this PEM certificate (chain); needs tls_key. Responses are then "
               "copied through the TLS library instead of sent with sendfile."),
    OPT_STRING("tls_key", tls_key, 0, "", "PATH", NULL, "a PEM file path, or empty for plain HTTP",
               "The PEM private key of tls_cert."),
    OPT_STRING("upstream", upstream, 0, "", "URL", check_upstream,
               "an http:// or https:// base URL, an s3://BUCKET/PREFIX, or empty for none",
               "Serve, besides root, the files of this upstream, fetched on first use into "
               "cache_dir (a pull-through cache; OPERATIONS.md). Either another ztensord "
               "(`http://host:7070`, in any mode, so that tiers chain) or the base URL of .zt "
               "and .safetensors files on a server that answers Range requests (nginx, an "
               "S3-compatible store), where /v1/files/NAME is BASE/NAME: see upstream_kind. "
               "`s3://BUCKET/PREFIX` reads an S3 store's objects PREFIX/NAME, every request "
               "signed (SigV4) with AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and "
               "AWS_SESSION_TOKEN from the environment (unsigned without them), at "
               "AWS_ENDPOINT_URL (path-style; AWS itself when unset) in AWS_REGION (else "
               "AWS_DEFAULT_REGION, else us-east-1); upstream_kind must then be auto or plain. "
               "A file under root wins over an upstream one of the same name. Plain files "
               "(config.json, tokenizers: every name without a tensor extension) are fetched "
               "whole into the cache too, checked against the sha256 the upstream gives "
               "(Repr-Digest, or a ztensord's listing); one it has not hashed yet is cached "
               "by its URL and validator, with no digest claimed."),
    OPT_ENUM("upstream_kind", upstream_kind, "auto", "KIND", upstream_kinds,
             "What upstream is: `ztensord`, `plain` (files by URL), or `auto`: a ztensord "
             "when BASE/v1/files?limit=1 answers a JSON listing at start-up, else plain (an "
             "upstream that does not answer then is asked again at the first open). Start-up "
             "logs what the upstream is, and warns when it cannot be reached or is not of the "
             "kind set here; neither stops start-up."),
    OPT_STRING("cache_dir", cache_dir, 0, "", "DIR", NULL, "a directory path",
               "Where upstream bytes are cached (created, mode 0700); required with upstream. "
               "It survives restarts: its index is rebuilt at start-up and partial fills are "
               "removed."),
    OPT_SIZE("cache_size", cache_size, "10G", MIB, 1024 * TIB,
             "Most bytes kept in cache_dir; the least recently used components are evicted "
             "to make room, never one a response is still sending."),
    OPT_STRING("upstream_token_file", upstream_token_file, 0, "", "PATH", NULL,
               "a file path, or empty for none",
               "A file holding the bearer token sent to upstream (its first line), for an "
               "upstream that requires a read token."),
    OPT_DURATION("upstream_ttl", upstream_ttl_ms, "10s", 0, 24 * HOUR,
                 "How long an upstream file's manifest and the upstream listing are used before "
                 "they are revalidated. A file's revalidation is a HEAD with its pinned validator "
                 "(If-None-Match) for the file and each of its v2 shards: no body byte when "
                 "nothing changed (304); the manifest is read again only when a validator "
                 "changed. A file replaced upstream is seen after at most this long; a response "
                 "already started finishes with the version it started with."),
    OPT_DURATION("upstream_stale", upstream_stale_ms, "5m", 0, 24 * HOUR,
                 "How long past upstream_ttl an upstream file keeps being served while it is "
                 "revalidated or while the upstream fails. The request that finds it expired "
                 "revalidates it (at most upstream_timeout); others wait for that up to 1 s, then "
                 "get the version opened before (stale-while-revalidate); a revalidation that "
                 "cannot reach the upstream keeps it served, asked again after each "
                 "upstream_ttl (stale-if-error). Past this window, the revalidation's error."),
    OPT_DURATION("upstream_negative_ttl", upstream_negative_ttl_ms, "5s", 0, HOUR,
                 "How long a name the upstream answered 404 for is answered 404 without asking "
                 "the upstream again (one entry of the bounded table of upstream files each, "
                 "like an open file). A file added upstream is seen once this has passed. 0: "
                 "every request for a missing name asks the upstream."),
    OPT_SIZE("upstream_entries_memory", upstream_entries_memory, "128M", MIB, 1024 * GIB,
             "Memory for the upstream files kept open: their parsed manifests (estimated at 5 "
             "times the manifest's JSON each) and the remembered 404s. Beyond it, the least "
             "recently used ones no request holds are dropped, and opened again when asked for; "
             "a file that cannot fit because the others are in use gets 503 overloaded with "
             "Retry-After. One file larger than this is served alone. With the other bounds "
             "(shared_response_memory) the default keeps a sidecar under 256 MiB of RSS "
             "however many large-manifest files it is asked for."),
    OPT_SIZE("upstream_verify_first", upstream_verify_first, "64M", 0, 1024 * GIB,
             "An upstream component (or plain file) of at most this many bytes that is not in "
             "the cache yet is fetched whole and checked against its digest before an answer "
             "sends its first byte: the answer names it by its digest (ETag, Repr-Digest, "
             "immutable for a blob URL), and bytes that fail the check never leave (502). A "
             "larger one is streamed while it fills, with a weak ETag and no digest claim (no "
             "Repr-Digest, no immutable), its last byte held until the check, the connection "
             "cut if the check fails. 0: every fill streams."),
    OPT_DURATION("upstream_connect_timeout", upstream_connect_timeout_ms, "5s", 100 * MSEC,
                 10 * MINUTE, "Time allowed for one TCP (and TLS) connect to upstream."),
    OPT_DURATION("upstream_timeout", upstream_timeout_ms, "30s", SEC, HOUR,
                 "Time allowed for an upstream request to make progress: opening a file "
                 "(retries included), or a fill receiving no byte for this long (it is then "
                 "resumed, up to the retries, before it fails with 504)."),
    OPT_SIZE("upstream_min_rate", upstream_min_rate, "16K", 0, GIB,
             "Bytes per second an upstream request must average over each upstream_timeout: "
             "one that drips slower is dropped and resumed like a stalled one, and such "
             "retries count, so that a slow-drip upstream cannot hold a fill open. 0: off."),
    OPT_UINT("upstream_retries", upstream_retries, "4", 0, 100,
             "Consecutive failures (connection errors, 408, 429, 5xx) of one upstream request "
             "retried with exponential backoff before the request fails."),
    OPT_UINT("upstream_fills", upstream_fills, "4", 1, 256,
             "Upstream fetches run at once (threads of the fill queue; each gathers what it "
             "receives into 2 MiB writes); more wait in line."),
    OPT_STRING("prefetch", prefetch, 0, "", "NAMES", NULL,
               "comma-separated file names and prefixes, or empty for none",
               "With upstream: fetch these into the cache at start-up (a name ending in .zt, "
               ".safetensors or .alt is a file; anything else a prefix, expanded with the "
               "upstream's listing: a ztensord's, or an S3 store's objects). /readyz answers 503 "
               "until it is done, so it can gate an "
               "inference pod's readiness; progress in GET /v1/prefetch and /metrics."),
    {.name = "s3_buckets",
     .type = T_STRING,
     .offset = FIELD(s3_buckets, char *),
     .flags = F_LIST,
     .def = "models",
     .metavar = "NAME[=SUBDIR],...",
     .check = check_s3_buckets,
     .allowed = "a comma-separated list of NAME or NAME=SUBDIR (S3 bucket names, not v1, hf, "
                "metrics, healthz or readyz)",
     .flag1 = "s3-bucket",
     .help = "The S3 front's buckets (docs/S3.md): NAME serves the whole root, NAME=SUBDIR the "
             "directory SUBDIR under it. --s3-bucket NAME[=SUBDIR] names one and may be "
             "repeated; the config file takes a string or an array of strings. Requests use "
             "path style: http://HOST:PORT/NAME/KEY."},
    OPT_STRING("s3_keys", s3_keys, 0, "", "FILE", NULL, "a file path, or empty for none",
               "S3 access keys, one `<scope> <access-key-id> <secret>` per line (scope `read` "
               "or `write`; `#` starts a comment; mode 0600 like tokens_file). With it, the S3 "
               "front verifies AWS Signature Version 4 (header and presigned URLs) and the "
               "key's scope decides; without it, AWS signatures are not checked and S3 "
               "requests follow the bearer-token rules (docs/S3.md). Secrets are never logged."),
};

#define N_OPTIONS (sizeof options / sizeof options[0])
#define OPT_CONFIG (&options[0])

/* ------------------------------------------------------------- helpers */

static void *field_ptr(ztd_config *c, const option *o)
{
    return (char *)c + o->offset;
}

/* An option name with '_' replaced by `sep` and letters upper-cased if `upper`. */
static void derive_name(char *buf, size_t cap, const char *name, char sep, bool upper)
{
    size_t i;
    for (i = 0; name[i] && i + 1 < cap; i++) {
        char ch = name[i] == '_' ? sep : name[i];
        buf[i] = upper && ch >= 'a' && ch <= 'z' ? (char)(ch - 'a' + 'A') : ch;
    }
    buf[i] = '\0';
}

static void flag_name(char *buf, size_t cap, const option *o)
{
    char n[NAME_MAX_LEN + 1];
    derive_name(n, sizeof n, o->name, '-', false);
    snprintf(buf, cap, "--%s", n);
}

static void env_name(char *buf, size_t cap, const option *o)
{
    char n[NAME_MAX_LEN + 1];
    derive_name(n, sizeof n, o->name, '_', true);
    snprintf(buf, cap, ENV_PREFIX "%s", n);
}

/* A value quoted for an error message: at most 64 bytes, non-printables as
 * \xHH. buf holds QUOTED_MAX bytes. */
static const char *quoted(char buf[QUOTED_MAX], const char *v)
{
    const size_t cap = QUOTED_MAX;
    size_t n = 0, i;
    buf[n++] = '"';
    for (i = 0; v[i] && i < 64 && n + 6 < cap; i++) {
        unsigned char ch = (unsigned char)v[i];
        if (ch < 0x20 || ch >= 0x7f || ch == '"' || ch == '\\')
            n += (size_t)snprintf(buf + n, cap - n, "\\x%02x", ch);
        else
            buf[n++] = (char)ch;
    }
    if (v[i] && n + 5 < cap) {
        memcpy(buf + n, "...", 3);
        n += 3;
    }
    buf[n++] = '"';
    buf[n] = '\0';
    return buf;
}

static void fmt_size(char *buf, size_t cap, uint64_t v)
{
    static const struct {
        uint64_t unit;
        char suffix;
    } units[] = {{TIB, 'T'}, {GIB, 'G'}, {MIB, 'M'}, {KIB, 'K'}};
    for (size_t i = 0; v && i < sizeof units / sizeof units[0]; i++) {
        if (v % units[i].unit == 0) {
            snprintf(buf, cap, "%llu%c", (unsigned long long)(v / units[i].unit), units[i].suffix);
            return;
        }
    }
    snprintf(buf, cap, "%llu", (unsigned long long)v);
}

static void fmt_duration(char *buf, size_t cap, uint64_t ms)
{
    if (ms == 0) {
        snprintf(buf, cap, "0");
        return;
    }
    static const struct {
        uint64_t unit;
        const char *suffix;
    } units[] = {{HOUR, "h"}, {MINUTE, "m"}, {SEC, "s"}};
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        if (ms % units[i].unit == 0) {
            snprintf(buf, cap, "%llu%s", (unsigned long long)(ms / units[i].unit), units[i].suffix);
            return;
        }
    }
    snprintf(buf, cap, "%llums", (unsigned long long)ms);
}

/* What an option accepts, for messages and docs: "an integer from 1 to 64". */
static void allowed_text(char *buf, size_t cap, const option *o)
{
    char lo[32], hi[32];
    switch (o->type) {
    case T_STRING:
        snprintf(buf, cap, "%s", o->allowed);
        return;
    case T_BOOL:
        snprintf(buf, cap, "true or false (or yes/no, on/off, 1/0)");
        return;
    case T_UINT:
        snprintf(buf, cap, "an integer from %llu to %llu", (unsigned long long)o->min,
                 (unsigned long long)o->max);
        return;
    case T_SIZE:
        fmt_size(lo, sizeof lo, o->min);
        fmt_size(hi, sizeof hi, o->max);
        snprintf(buf, cap, "a size from %s to %s", lo, hi);
        return;
    case T_DURATION:
        fmt_duration(lo, sizeof lo, o->min);
        fmt_duration(hi, sizeof hi, o->max);
        snprintf(buf, cap, "a duration from %s to %s", lo, hi);
        return;
    case T_ENUM: {
        size_t n = (size_t)snprintf(buf, cap, "one of ");
        for (size_t i = 0; o->values[i] && n < cap; i++)
            n += (size_t)snprintf(buf + n, cap - n, "%s%s", i ? ", " : "", o->values[i]);
        return;
    }
    }
}

static const char *type_name(const option *o)
{
    static const char *const names[] = {"string", "bool", "integer", "size", "duration", "enum"};
    return names[o->type];
}

/* Lowercase, '-' as '_': how names are compared for "did you mean". */
static void normalize(char *buf, size_t cap, const char *s, size_t n)
{
    size_t i;
    for (i = 0; i < n && i + 1 < cap; i++) {
        char ch = s[i] == '-' ? '_' : s[i];
        buf[i] = ch >= 'A' && ch <= 'Z' ? (char)(ch - 'A' + 'a') : ch;
    }
    buf[i] = '\0';
}

static size_t edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b), row[NAME_MAX_LEN + 2];
    if (la > NAME_MAX_LEN || lb > NAME_MAX_LEN)
        return (size_t)-1;
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

static const option *find_key(const char *s);

/* Names other servers use for what an option here does (nginx' listen/port, Go's
 * -addr, "--dir"...), compared after normalize(): "--port" suggests --listen. */
static const struct {
    const char *name, *option;
} aliases[] = {
    {"port", "listen"},
    {"host", "listen"},
    {"bind", "listen"},
    {"address", "listen"},
    {"addr", "listen"},
    {"listen_address", "listen"},
    {"http_port", "listen"},
    {"socket", "listen"},
    {"unix_socket", "listen"},
    {"dir", "root"},
    {"directory", "root"},
    {"models", "root"},
    {"model_dir", "root"},
    {"models_dir", "root"},
    {"data_dir", "root"},
    {"root_dir", "root"},
    {"path", "root"},
    {"cache", "cache_dir"},
    {"cache_path", "cache_dir"},
    {"origin", "upstream"},
    {"upstream_url", "upstream"},
    {"workers", "threads"},
    {"max_connections", "connection_limit"},
    {"log", "error_log"},
    {"log_file", "error_log"},
    {"verbose", "log_level"},
    {"cert", "tls_cert"},
    {"key", "tls_key"},
    {"token", "tokens_file"},
    {"tokens", "tokens_file"},
};

/* The option whose name is within two edits of s[0..n), or an alias of, if any. */
static const option *closest(const char *s, size_t n, bool file_keys)
{
    char want[NAME_MAX_LEN + 1];
    if (n > NAME_MAX_LEN)
        return NULL;
    normalize(want, sizeof want, s, n);
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
        if (strcmp(want, aliases[i].name) == 0)
            return find_key(aliases[i].option);
    const option *best = NULL;
    size_t best_d = 3;
    for (size_t i = 0; i < N_OPTIONS; i++) {
        if (file_keys && (options[i].flags & F_NOFILE))
            continue;
        size_t d = edit_distance(want, options[i].name);
        if (d < best_d) {
            best_d = d;
            best = &options[i];
        }
    }
    return best;
}

/* The option whose flag (sep '-') or environment variable (sep '_', upper
 * case) name, derived from its own, is s[0..n). */
static const option *find_derived(const char *s, size_t n, char sep, bool upper)
{
    char want[NAME_MAX_LEN + 1];
    for (size_t i = 0; i < N_OPTIONS; i++) {
        derive_name(want, sizeof want, options[i].name, sep, upper);
        if (strlen(want) == n && memcmp(want, s, n) == 0)
            return &options[i];
    }
    return NULL;
}

static const option *find_flag(const char *s, size_t n)
{
    for (size_t i = 0; i < N_OPTIONS; i++)
        if (options[i].flag1 && strlen(options[i].flag1) == n &&
            memcmp(options[i].flag1, s, n) == 0)
            return &options[i];
    return find_derived(s, n, '-', false);
}

static const option *find_env(const char *s, size_t n)
{
    return find_derived(s, n, '_', true);
}

static const option *find_key(const char *s)
{
    for (size_t i = 0; i < N_OPTIONS; i++)
        if (strcmp(options[i].name, s) == 0)
            return &options[i];
    return NULL;
}

/* ------------------------------------------------------ value parsers */

/* Each returns 0, or -1 with a short reason in why. */

static int parse_digits(const char **p, uint64_t *v)
{
    const char *s = *p;
    uint64_t acc = 0;
    if (*s < '0' || *s > '9')
        return -1;
    for (; *s >= '0' && *s <= '9'; s++) {
        if (acc > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
            return -2;
        acc = acc * 10 + (uint64_t)(*s - '0');
    }
    *p = s;
    *v = acc;
    return 0;
}

static int parse_uint(const char *s, uint64_t *v, char *why, size_t whylen)
{
    int rc = parse_digits(&s, v);
    if (rc == -2 || (rc == 0 && *s)) {
        snprintf(why, whylen, rc == -2 ? "is too large" : "is not a whole number");
        return -1;
    }
    if (rc < 0) {
        snprintf(why, whylen, "is not a whole number");
        return -1;
    }
    return 0;
}

static bool ieq(const char *a, const char *b)
{
    for (; *a && *b; a++, b++) {
        char x = *a >= 'A' && *a <= 'Z' ? (char)(*a - 'A' + 'a') : *a;
        if (x != *b)
            return false;
    }
    return *a == *b;
}

/* Bytes with an optional K, M, G or T (powers of 1024); KB/KiB spellings too. */
static int parse_size(const char *s, uint64_t *v, char *why, size_t whylen)
{
    static const struct {
        const char *suffix;
        uint64_t unit;
    } units[] = {{"", 1},      {"b", 1},    {"k", KIB},   {"kb", KIB}, {"kib", KIB},
                 {"m", MIB},   {"mb", MIB}, {"mib", MIB}, {"g", GIB},  {"gb", GIB},
                 {"gib", GIB}, {"t", TIB},  {"tb", TIB},  {"tib", TIB}};
    uint64_t n;
    int rc = parse_digits(&s, &n);
    if (rc == -1) {
        snprintf(why, whylen, "is not a size (a number of bytes, or with K, M, G or T)");
        return -1;
    }
    for (size_t i = 0; rc == 0 && i < sizeof units / sizeof units[0]; i++) {
        if (!ieq(s, units[i].suffix))
            continue;
        if (n > UINT64_MAX / units[i].unit)
            break;
        *v = n * units[i].unit;
        return 0;
    }
    bool known = false;
    for (size_t i = 0; rc == 0 && i < sizeof units / sizeof units[0]; i++)
        known = known || ieq(s, units[i].suffix);
    snprintf(why, whylen,
             rc == -2 || known ? "is too large" : "has an unknown unit (use K, M, G or T)");
    return -1;
}

/* One or more NUMBER UNIT pairs ("1h30m", "500ms"), or a bare 0. */
static int parse_duration(const char *s, uint64_t *v, char *why, size_t whylen)
{
    static const struct {
        const char *unit;
        uint64_t ms;
    } units[] = {{"ms", MSEC}, {"s", SEC}, {"m", MINUTE}, {"h", HOUR}};
    uint64_t total = 0;
    if (strcmp(s, "0") == 0) {
        *v = 0;
        return 0;
    }
    if (!*s)
        goto bad;
    while (*s) {
        uint64_t n;
        int rc = parse_digits(&s, &n);
        if (rc == -2)
            goto big;
        if (rc < 0)
            goto bad;
        size_t ulen = 0;
        while (s[ulen] >= 'a' && s[ulen] <= 'z')
            ulen++;
        size_t k;
        for (k = 0; k < sizeof units / sizeof units[0]; k++)
            if (strlen(units[k].unit) == ulen && memcmp(s, units[k].unit, ulen) == 0)
                break;
        if (k == sizeof units / sizeof units[0]) {
            snprintf(why, whylen,
                     ulen ? "has an unknown unit (use ms, s, m or h)"
                          : "needs a unit (ms, s, m or h)");
            return -1;
        }
        if (n > (UINT64_MAX - total) / units[k].ms)
            goto big;
        total += n * units[k].ms;
        s += ulen;
    }
    *v = total;
    return 0;
bad:
    snprintf(why, whylen, "is not a duration (like 500ms, 60s, 5m, 1h30m)");
    return -1;
big:
    snprintf(why, whylen, "is too large");
    return -1;
}

static int parse_bool(const char *s, bool *v, char *why, size_t whylen)
{
    static const char *const yes[] = {"true", "yes", "on", "1"};
    static const char *const no[] = {"false", "no", "off", "0"};
    for (size_t i = 0; i < 4; i++) {
        if (ieq(s, yes[i]) || ieq(s, no[i])) {
            *v = ieq(s, yes[i]);
            return 0;
        }
    }
    snprintf(why, whylen, "is not a boolean");
    return -1;
}

static int check_nonempty(const char *v, char *why, size_t whylen)
{
    if (*v)
        return 0;
    snprintf(why, whylen, "is empty");
    return -1;
}

static int check_listen(const char *v, char *why, size_t whylen)
{
    const char *path = ztd_listen_unix_path(v);
    if (path) {
        /* sun_path holds the path and its NUL; a relative path would depend on
         * the working directory, which systemd and containers choose. */
        if (path[0] != '/') {
            snprintf(why, whylen, "needs an absolute path after unix:");
            return -1;
        }
        if (strlen(path) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
            snprintf(why, whylen, "has a socket path longer than %zu bytes",
                     sizeof(((struct sockaddr_un *)0)->sun_path) - 1);
            return -1;
        }
        if (path[strlen(path) - 1] == '/') {
            snprintf(why, whylen, "names a directory, not a socket file");
            return -1;
        }
        return 0;
    }
    char host[256];
    unsigned port;
    return ztd_listen_parse(v, host, sizeof host, &port, why, whylen);
}

/* Permission bits only: set-id and sticky bits mean nothing on a socket. */
static int check_mode(const char *v, char *why, size_t whylen)
{
    size_t n = strspn(v, "01234567");
    if (n == 0 || v[n] || n > 4 || strtoul(v, NULL, 8) > 0777) {
        snprintf(why, whylen, "is not an octal mode from 0 to 0777");
        return -1;
    }
    return 0;
}

const char *ztd_listen_unix_path(const char *listen)
{
    return strncmp(listen, "unix:", 5) == 0 ? listen + 5 : NULL;
}

unsigned ztd_listen_mode(const char *mode)
{
    return (unsigned)strtoul(mode, NULL, 8);
}

/* It goes into a response header: no CR, LF or other control bytes. */
/* An upstream base URL: http(s)://, no query or fragment (paths are appended). */
static int check_exclude(const char *v, char *why, size_t whylen)
{
    if (!v[0])
        return 0;
    for (const char *p = v;; p++) {
        const char *comma = strchr(p, ',');
        if ((comma ? comma : p + strlen(p)) == p) {
            snprintf(why, whylen, "an empty pattern");
            return -1;
        }
        if (!comma)
            return 0;
        p = comma;
    }
}

static int check_upstream(const char *v, char *why, size_t whylen)
{
    if (!v[0])
        return 0;
    if (strncmp(v, "http://", 7) != 0 && strncmp(v, "https://", 8) != 0 &&
        strncmp(v, "s3://", 5) != 0) {
        snprintf(why, whylen, "does not start with http://, https:// or s3://");
        return -1;
    }
    if (strpbrk(v, "?# \t\r\n")) {
        snprintf(why, whylen, "holds a query, a fragment or a blank");
        return -1;
    }
    return 0;
}

static int check_s3_buckets(const char *v, char *why, size_t whylen)
{
    ztd_buckets b;
    if (ztd_buckets_parse(v, &b, why, whylen) != 0)
        return -1;
    ztd_buckets_free(&b);
    return 0;
}

static int check_header_value(const char *v, char *why, size_t whylen)
{
    for (const char *p = v; *p; p++) {
        if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f) {
            snprintf(why, whylen, "contains a byte that is not printable ASCII");
            return -1;
        }
    }
    return 0;
}

static bool host_char(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           ch == '.' || ch == '-';
}

int ztd_listen_parse(const char *listen, char *host, size_t hostcap, unsigned *port, char *why,
                     size_t whylen)
{
    const char *h, *he, *p;
    bool v6 = listen[0] == '[';
    if (v6) {
        h = listen + 1;
        he = strchr(h, ']');
        if (!he) {
            snprintf(why, whylen, "has no ] after the IPv6 address");
            return -1;
        }
        if (he[1] != ':') {
            snprintf(why, whylen, "needs :PORT after the ]");
            return -1;
        }
        p = he + 2;
    } else {
        h = listen;
        he = strrchr(listen, ':');
        if (!he) {
            snprintf(why, whylen, "needs a port: HOST:PORT");
            return -1;
        }
        if (memchr(listen, ':', (size_t)(he - listen))) {
            snprintf(why, whylen, "needs brackets around an IPv6 address: [::1]:7070");
            return -1;
        }
        p = he + 1;
    }
    size_t hl = (size_t)(he - h);
    if (hl == 0) {
        snprintf(why, whylen, "has no host (0.0.0.0 or [::] listen on every interface)");
        return -1;
    }
    if (hl >= hostcap || hl > 253) {
        snprintf(why, whylen, "has a host name that is too long");
        return -1;
    }
    memcpy(host, h, hl);
    host[hl] = '\0';
    if (v6) {
        unsigned char addr[16];
        if (inet_pton(AF_INET6, host, addr) != 1) {
            snprintf(why, whylen, "has an invalid IPv6 address");
            return -1;
        }
    } else {
        for (size_t i = 0; i < hl; i++) {
            if (!host_char(host[i])) {
                snprintf(why, whylen, "has an invalid host name");
                return -1;
            }
        }
    }
    uint64_t n;
    const char *end = p;
    if (parse_digits(&end, &n) < 0 || *end || end - p > 5 || n > 65535) {
        snprintf(why, whylen, "needs a port from 0 to 65535 after the colon");
        return -1;
    }
    *port = (unsigned)n;
    return 0;
}

/* ----------------------------------------------------- setting values */

/* Parses v for o into c. Returns 0, -1 with the reason in why, or -2 when
 * out of memory. */
static int store_value(ztd_config *c, const option *o, const char *v, char *why, size_t whylen)
{
    void *f = field_ptr(c, o);
    uint64_t n = 0;
    int rc = 0;
    switch (o->type) {
    case T_STRING: {
        if (o->check && o->check(v, why, whylen) < 0)
            return -1;
        char *copy = strdup(v);
        if (!copy)
            return -2;
        free(*(char **)f);
        *(char **)f = copy;
        return 0;
    }
    case T_BOOL:
        return parse_bool(v, (bool *)f, why, whylen);
    case T_ENUM:
        for (int i = 0; o->values[i]; i++) {
            if (strcmp(v, o->values[i]) == 0) {
                *(int *)f = i;
                return 0;
            }
        }
        snprintf(why, whylen, "is not a known value");
        return -1;
    case T_UINT:
        rc = parse_uint(v, &n, why, whylen);
        break;
    case T_SIZE:
        rc = parse_size(v, &n, why, whylen);
        break;
    case T_DURATION:
        rc = parse_duration(v, &n, why, whylen);
        break;
    }
    if (rc < 0)
        return -1;
    if (n < o->min || n > o->max) {
        snprintf(why, whylen, "is out of range");
        return -1;
    }
    if (o->type == T_UINT)
        *(unsigned *)f = (unsigned)n;
    else
        *(uint64_t *)f = n;
    return 0;
}

/* Parses v for o and stores it in c; on failure the message names the
 * option, `src` (where v came from) and what is allowed. */
static int set_value(ztd_config *c, const option *o, const char *v, const char *src, char *err,
                     size_t errlen)
{
    char why[128] = "", q[QUOTED_MAX], allowed[160];
    int rc = store_value(c, o, v, why, sizeof why);
    if (rc == 0)
        return 0;
    if (rc == -2) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    allowed_text(allowed, sizeof allowed, o);
    snprintf(err, errlen, "option %s (%s): %s %s; allowed: %s", o->name, src, quoted(q, v), why,
             allowed);
    return -1;
}

static const char *json_type_name(const json_t *j)
{
    switch (json_typeof(j)) {
    case JSON_OBJECT:
        return "an object";
    case JSON_ARRAY:
        return "an array";
    case JSON_STRING:
        return "a string";
    case JSON_INTEGER:
        return "an integer";
    case JSON_REAL:
        return "a fractional number";
    case JSON_TRUE:
    case JSON_FALSE:
        return "a boolean";
    case JSON_NULL:
        return "null";
    }
    return "?";
}

/* A list option's JSON array of strings, joined with commas. */
static int set_json_list(ztd_config *c, const option *o, json_t *j, const char *src, char *err,
                         size_t errlen)
{
    size_t i, len = 1;
    json_t *v;
    json_array_foreach(j, i, v)
    {
        if (!json_is_string(v)) {
            snprintf(err, errlen, "option %s (%s): item %zu is %s, not a string", o->name, src, i,
                     json_type_name(v));
            return -1;
        }
        len += json_string_length(v) + 1;
    }
    char *joined = calloc(1, len);
    if (!joined) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    json_array_foreach(j, i, v)
    {
        if (i)
            strcat(joined, ",");
        strcat(joined, json_string_value(v));
    }
    int rc = set_value(c, o, joined, src, err, errlen);
    free(joined);
    return rc;
}

/* A value from the config file: checked for its JSON type, then parsed as the
 * same string a flag would carry. */
static int set_json(ztd_config *c, const option *o, json_t *j, const char *src, char *err,
                    size_t errlen)
{
    char num[32];
    const char *want = NULL;
    if ((o->flags & F_LIST) && json_is_array(j))
        return set_json_list(c, o, j, src, err, errlen);
    switch (o->type) {
    case T_STRING:
    case T_ENUM:
    case T_DURATION:
        if (json_is_string(j))
            return set_value(c, o, json_string_value(j), src, err, errlen);
        want = "a string";
        break;
    case T_BOOL:
        if (json_is_boolean(j))
            return set_value(c, o, json_is_true(j) ? "true" : "false", src, err, errlen);
        want = "true or false";
        break;
    case T_SIZE:
        if (json_is_string(j))
            return set_value(c, o, json_string_value(j), src, err, errlen);
        __attribute__((fallthrough)); /* a plain integer counts bytes */
    case T_UINT:
        if (json_is_integer(j)) {
            json_int_t v = json_integer_value(j);
            if (v < 0) {
                char allowed[160];
                allowed_text(allowed, sizeof allowed, o);
                snprintf(err, errlen, "option %s (%s): %lld is out of range; allowed: %s", o->name,
                         src, (long long)v, allowed);
                return -1;
            }
            snprintf(num, sizeof num, "%lld", (long long)v);
            return set_value(c, o, num, src, err, errlen);
        }
        want = o->type == T_SIZE ? "an integer or a string" : "an integer";
        break;
    }
    char allowed[160];
    allowed_text(allowed, sizeof allowed, o);
    snprintf(err, errlen, "option %s (%s): expected %s, got %s; allowed: %s", o->name, src, want,
             json_type_name(j), allowed);
    return -1;
}

/* ------------------------------------------------------------- loading */

bool ztd_config_is_default(const ztd_config *c, const char *name)
{
    const option *o = find_key(name);
    if (!o)
        return true;
    ztd_config d;
    char why[128];
    memset(&d, 0, sizeof d);
    if (o->def && store_value(&d, o, o->def, why, sizeof why) != 0)
        return true; /* out of memory: say nothing rather than something wrong */
    const void *a = (const char *)c + o->offset, *b = (const char *)&d + o->offset;
    bool same = true;
    switch (o->type) {
    case T_STRING: {
        const char *x = *(char *const *)a, *y = *(char *const *)b;
        same = x == y || (x && y && strcmp(x, y) == 0);
        free(*(char **)field_ptr(&d, o));
        break;
    }
    case T_BOOL:
        same = *(const bool *)a == *(const bool *)b;
        break;
    case T_ENUM:
        same = *(const int *)a == *(const int *)b;
        break;
    case T_UINT:
        same = *(const unsigned *)a == *(const unsigned *)b;
        break;
    case T_SIZE:
    case T_DURATION:
        same = *(const uint64_t *)a == *(const uint64_t *)b;
        break;
    }
    return same;
}

/* host and port of an http(s):// URL (no brackets around IPv6); false if there is none. */
static bool url_host_port(const char *url, char *host, size_t cap, unsigned *port)
{
    bool tls = strncmp(url, "https://", 8) == 0;
    const char *h = url + (tls ? 8 : 7), *e;
    if (*h == '[') {
        e = strchr(++h, ']');
        if (!e)
            return false;
    } else {
        e = h + strcspn(h, ":/");
    }
    size_t n = (size_t)(e - h);
    if (!n || n >= cap)
        return false;
    memcpy(host, h, n);
    host[n] = 0;
    e += *e == ']';
    *port = *e == ':' ? (unsigned)strtoul(e + 1, NULL, 10) : tls ? 443 : 80;
    return true;
}

static bool is_loopback(const char *host)
{
    return strcmp(host, "localhost") == 0 || strncmp(host, "127.", 4) == 0 ||
           strcmp(host, "::1") == 0;
}

/* An upstream that is this server's own listen address would ask itself for every
 * file it does not hold, each request another request, until connections run out. */
static int check_upstream_not_self(const ztd_config *c, char *err, size_t errlen)
{
    char lh[256], uh[256], why[64];
    unsigned lp, up;
    if (!c->upstream[0] || ztd_listen_unix_path(c->listen) ||
        ztd_listen_parse(c->listen, lh, sizeof lh, &lp, why, sizeof why) != 0 || lp == 0 ||
        !url_host_port(c->upstream, uh, sizeof uh, &up) || up != lp)
        return 0;
    bool any = strcmp(lh, "0.0.0.0") == 0 || strcmp(lh, "::") == 0;
    if (!ieq(uh, lh) && !((any || is_loopback(lh)) && is_loopback(uh)))
        return 0;
    snprintf(err, errlen,
             "option upstream %.300s is this server's own listen address %.300s: it would ask "
             "itself for every file it does not hold",
             c->upstream, c->listen);
    return -1;
}

int ztd_config_init_defaults(ztd_config *c)
{
    char err[256];
    memset(c, 0, sizeof *c);
    for (size_t i = 0; i < N_OPTIONS; i++) {
        if (options[i].def &&
            set_value(c, &options[i], options[i].def, "default", err, sizeof err) < 0) {
            ztd_config_free(c);
            return -1;
        }
    }
    return 0;
}

void ztd_config_free(ztd_config *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < N_OPTIONS; i++)
        if (options[i].type == T_STRING)
            free(*(char **)field_ptr(c, &options[i]));
    memset(c, 0, sizeof *c);
}

static ztd_action find_action(int argc, char **argv)
{
    static const struct {
        const char *arg;
        ztd_action action;
    } actions[] = {{"--help", ZTD_ACTION_HELP},
                   {"-h", ZTD_ACTION_HELP},
                   {"--version", ZTD_ACTION_VERSION},
                   {"-V", ZTD_ACTION_VERSION},
                   {"--dump-config-markdown", ZTD_ACTION_DUMP_CONFIG_MARKDOWN},
                   {"--dump-config-json", ZTD_ACTION_DUMP_CONFIG_JSON}};
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
        for (size_t k = 0; k < sizeof actions / sizeof actions[0]; k++)
            if (strcmp(argv[i], actions[k].arg) == 0)
                return actions[k].action;
    return ZTD_ACTION_RUN;
}

/* One flag from argv, kept until file and environment have been applied. */
typedef struct flag_arg {
    const option *o;
    const char *value;
    const char *flag; /* as typed, up to flag_len: "--no-watch" */
    size_t flag_len;
} flag_arg;

enum name_kind { NAME_FLAG, NAME_ENV, NAME_KEY };

/* "unknown flag --threds; did you mean --threads?". `shown` is the name as
 * given; s[0..n) the part compared with the option names. */
static int unknown_name(enum name_kind kind, const char *shown, const char *s, size_t n,
                        const char *path, char *err, size_t errlen)
{
    const option *o = closest(s, n, kind == NAME_KEY);
    char hint[NAME_MAX_LEN + 32] = "", name[NAME_MAX_LEN + 16], q[QUOTED_MAX];
    if (o) {
        if (kind == NAME_FLAG)
            flag_name(name, sizeof name, o);
        else if (kind == NAME_ENV)
            env_name(name, sizeof name, o);
        else
            snprintf(name, sizeof name, "\"%s\"", o->name);
        snprintf(hint, sizeof hint, "; did you mean %s?", name);
    }
    if (kind == NAME_FLAG)
        snprintf(err, errlen, "unknown flag %s%s (see --help)", quoted(q, shown), hint);
    else if (kind == NAME_ENV)
        snprintf(err, errlen,
                 "unknown environment variable %s%s (every " ENV_PREFIX
                 "* variable must name an option; see --help)",
                 quoted(q, shown), hint);
    else
        snprintf(err, errlen, "unknown key %s in config file %s%s (see --help)", quoted(q, shown),
                 path, hint);
    return -1;
}

static int parse_flags(int argc, char **argv, flag_arg *out, size_t *nout, char *err, size_t errlen)
{
    char q[QUOTED_MAX];
    size_t n = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0) {
            if (i + 1 < argc) {
                snprintf(err, errlen, "unexpected argument %s: ztensord takes only options",
                         quoted(q, argv[i + 1]));
                return -1;
            }
            break;
        }
        if (a[0] != '-' || a[1] != '-' || a[2] == '\0') {
            if (a[0] == '-' && a[1] != '\0')
                return unknown_name(NAME_FLAG, a, a, strlen(a), NULL, err, errlen);
            snprintf(err, errlen,
                     "unexpected argument %s: ztensord takes only options (--name VALUE)",
                     quoted(q, a));
            return -1;
        }
        const char *name = a + 2;
        const char *eq = strchr(name, '=');
        size_t len = eq ? (size_t)(eq - name) : strlen(name);
        flag_arg fa = {find_flag(name, len), NULL, a, len + 2};
        if (!fa.o && len > 3 && memcmp(name, "no-", 3) == 0) {
            const option *neg = find_flag(name + 3, len - 3);
            if (neg && neg->type == T_BOOL) {
                if (eq) {
                    snprintf(err, errlen, "option %s (flag %.*s): takes no value", neg->name,
                             (int)fa.flag_len, a);
                    return -1;
                }
                fa.o = neg;
                fa.value = "false";
            }
        }
        if (!fa.o) {
            char shown[NAME_MAX_LEN + 8];
            snprintf(shown, sizeof shown, "%.*s", (int)(len + 2), a);
            return unknown_name(NAME_FLAG, shown, name, len, NULL, err, errlen);
        }
        if (fa.value) {
            /* --no-NAME, done */
        } else if (eq) {
            fa.value = eq + 1;
        } else if (fa.o->type == T_BOOL) {
            fa.value = "true";
        } else if (i + 1 >= argc || strncmp(argv[i + 1], "--", 2) == 0) {
            char allowed[160], next[160] = "";
            allowed_text(allowed, sizeof allowed, fa.o);
            if (i + 1 < argc)
                snprintf(next, sizeof next,
                         " (next is %s; write %s=VALUE for a value that "
                         "starts with --)",
                         quoted(q, argv[i + 1]), a);
            snprintf(err, errlen, "option %s (flag %s): missing value%s; allowed: %s", fa.o->name,
                     a, next, allowed);
            return -1;
        } else {
            fa.value = argv[++i];
        }
        out[n++] = fa;
    }
    *nout = n;
    return 0;
}

static const char *env_lookup(char **envp, const char *name)
{
    size_t n = strlen(name);
    for (char **e = envp; e && *e; e++)
        if (strncmp(*e, name, n) == 0 && (*e)[n] == '=')
            return *e + n + 1;
    return NULL;
}

static int load_file(ztd_config *c, const char *path, const char *path_src, char *err,
                     size_t errlen)
{
    json_error_t je;
    json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
    if (!root) {
        if (je.line > 0)
            snprintf(err, errlen, "config file %s (%s): line %d, column %d: %s", path, path_src,
                     je.line, je.column, je.text);
        else
            snprintf(err, errlen, "config file %s (%s): %s", path, path_src, je.text);
        return -1;
    }
    int rc = 0;
    if (!json_is_object(root)) {
        snprintf(err, errlen, "config file %s: expected a JSON object, got %s", path,
                 json_type_name(root));
        rc = -1;
    }
    char src[PATH_MAX + 8];
    snprintf(src, sizeof src, "file %s", path);
    const char *key;
    json_t *v;
    json_object_foreach(root, key, v)
    {
        if (rc < 0)
            break;
        const option *o = find_key(key);
        if (!o || (o->flags & F_NOFILE)) {
            rc = unknown_name(NAME_KEY, key, key, strlen(key), path, err, errlen);
            break;
        }
        rc = set_json(c, o, v, src, err, errlen);
    }
    json_decref(root);
    return rc;
}

/* The ZTENSORD_* variables: each must name an option. ZTENSORD_CONFIG was
 * used before the file was read and is skipped here. */
static int apply_env(ztd_config *c, char **envp, char *err, size_t errlen)
{
    for (char **e = envp; e && *e; e++) {
        const char *eq = strchr(*e, '=');
        if (strncmp(*e, ENV_PREFIX, ENV_PREFIX_LEN) != 0 || !eq)
            continue;
        const char *name = *e + ENV_PREFIX_LEN;
        size_t len = (size_t)(eq - name);
        const option *o = find_env(name, len);
        if (!o) {
            char shown[NAME_MAX_LEN + 16];
            snprintf(shown, sizeof shown, "%.*s", (int)(eq - *e), *e);
            return unknown_name(NAME_ENV, shown, name, len, NULL, err, errlen);
        }
        if (o == OPT_CONFIG)
            continue;
        char src[NAME_MAX_LEN + 24];
        snprintf(src, sizeof src, "env %.*s", (int)(eq - *e), *e);
        if (set_value(c, o, eq + 1, src, err, errlen) < 0)
            return -1;
    }
    return 0;
}

/* A list option given by a flag again: its items so far, then v's. */
static int append_flag(ztd_config *c, const option *o, const char *v, const char *src, char *err,
                       size_t errlen)
{
    const char *old = *(char **)field_ptr(c, o);
    size_t n = strlen(old) + strlen(v) + 2;
    char *joined = malloc(n);
    if (!joined) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    snprintf(joined, n, "%s,%s", old, v);
    int rc = set_value(c, o, joined, src, err, errlen);
    free(joined);
    return rc;
}

static int apply_flags(ztd_config *c, const flag_arg *fa, size_t n, char *err, size_t errlen)
{
    bool seen[N_OPTIONS] = {false};
    for (size_t i = 0; i < n; i++) {
        char src[NAME_MAX_LEN + 24];
        const option *o = fa[i].o;
        if (o == OPT_CONFIG)
            continue;
        snprintf(src, sizeof src, "flag %.*s", (int)fa[i].flag_len, fa[i].flag);
        bool again = (o->flags & F_LIST) && seen[o - options];
        seen[o - options] = true;
        if ((again ? append_flag(c, o, fa[i].value, src, err, errlen)
                   : set_value(c, o, fa[i].value, src, err, errlen)) < 0)
            return -1;
    }
    return 0;
}

/* --config wins over ZTENSORD_CONFIG; the file goes in below both layers. */
static int apply_config_file(ztd_config *c, const flag_arg *fa, size_t n, char **envp, char *err,
                             size_t errlen)
{
    const char *path = env_lookup(envp, ENV_PREFIX "CONFIG");
    const char *src = "env " ENV_PREFIX "CONFIG";
    for (size_t i = 0; i < n; i++) {
        if (fa[i].o == OPT_CONFIG) {
            path = fa[i].value;
            src = "flag --config";
        }
    }
    if (!path)
        return 0;
    if (set_value(c, OPT_CONFIG, path, src, err, errlen) < 0)
        return -1;
    return load_file(c, c->config_path, src, err, errlen);
}

static int check_required(const ztd_config *c, char *err, size_t errlen)
{
    for (size_t i = 0; i < N_OPTIONS; i++) {
        const option *o = &options[i];
        if (!(o->flags & F_REQUIRED) || *(char *const *)((const char *)c + o->offset))
            continue;
        /* A pure cache needs no root of its own: main.c makes an empty one. */
        if (o->offset == offsetof(ztd_config, root) && c->upstream && c->upstream[0])
            continue;
        char flag[NAME_MAX_LEN + 4], env[NAME_MAX_LEN + 16];
        flag_name(flag, sizeof flag, o);
        env_name(env, sizeof env, o);
        snprintf(err, errlen,
                 "option %s is required: set %s %s, %s, or \"%s\" in the config file "
                 "(see --help)",
                 o->name, flag, o->metavar, env, o->name);
        return -1;
    }
    return 0;
}

int ztd_config_load(ztd_config *out, int argc, char **argv, char **envp, char *err, size_t errlen)
{
    ztd_config c;
    flag_arg *fa = NULL;
    size_t nflags = 0;
    if (errlen)
        err[0] = '\0';
    memset(out, 0, sizeof *out);
    if (ztd_config_init_defaults(&c) < 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    c.action = find_action(argc, argv);
    if (c.action != ZTD_ACTION_RUN) {
        *out = c;
        return 0;
    }
    if (argc > 1 && !(fa = calloc((size_t)argc, sizeof *fa))) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    if (parse_flags(argc, argv, fa, &nflags, err, errlen) < 0 ||
        apply_config_file(&c, fa, nflags, envp, err, errlen) < 0 ||
        apply_env(&c, envp, err, errlen) < 0 || apply_flags(&c, fa, nflags, err, errlen) < 0 ||
        check_required(&c, err, errlen) < 0)
        goto fail;
    if (c.prefetch[0] && !c.upstream[0]) {
        snprintf(err, errlen, "option prefetch needs upstream (see --help)");
        goto fail;
    }
    if (check_upstream_not_self(&c, err, errlen) != 0)
        goto fail;
    if (c.upstream[0] && !c.cache_dir[0]) {
        snprintf(err, errlen,
                 "option cache_dir is required with upstream: set --cache-dir DIR, "
                 "ZTENSORD_CACHE_DIR, or \"cache_dir\" in the config file (see --help)");
        goto fail;
    }
    free(fa);
    *out = c;
    return 0;
fail:
    free(fa);
    ztd_config_free(&c);
    return -1;
}

/* ---------------------------------------------------------- --help text */

static const struct {
    const char *name, *text;
} signal_docs[] = {
    {"SIGTERM, SIGINT", "Stop accepting connections, give requests in flight up to "
                        "`shutdown_grace` to finish, then exit."},
    {"SIGHUP", "Reopen the access and error log files (after logrotate moved them) and rescan "
               "`root`."},
};

static const struct {
    int code;
    const char *text;
} exit_docs[] = {
    {ZTD_EXIT_OK, "Clean shutdown, or `--help` or `--version`."},
    {ZTD_EXIT_FAILURE, "The server could not start (for example the address is in use or root "
                       "cannot be read) or failed while running."},
    {ZTD_EXIT_CONFIG, "Invalid command line, environment variable or config file; the message "
                      "on standard error names the option, where it was set and what is "
                      "allowed."},
};

#define SAMPLE_CONFIG "/etc/ztensord/ztensord.json"

static const char *const description[] = {
    "ztensord serves the zTensor files under a directory over HTTP: listings, manifests, "
    "objects and byte ranges of their components.",
    "Every option can be given as a command-line flag, as an environment variable or as a key "
    "of the JSON config file. A flag beats an environment variable, which beats the config "
    "file, which beats the default. An unknown flag, an unknown `" ENV_PREFIX "*` variable, "
    "an unknown key, or an invalid or out-of-range value anywhere stops start-up; the "
    "message suggests the option meant: the nearest name, or the option another server's "
    "name stands for here (`--port`, `--host` or `--bind` is `--listen`, `--dir` is "
    "`--root`).",
    "Flags are `--name VALUE` or `--name=VALUE`; a boolean flag is `--name`, `--no-name` or "
    "`--name=true|false`. Booleans are `true`/`false`, `yes`/`no`, `on`/`off` or `1`/`0`. "
    "Sizes are bytes, or a number with `K`, `M`, `G` or `T` (powers of 1024). Durations are a "
    "number with `ms`, `s`, `m` or `h`, combinable (`1m30s`); `0` needs no unit.",
};

/* Writes text word-wrapped at 79 columns, every line indented by `indent`.
 * The texts are shared with the Markdown, whose `code` marks are dropped here. */
static void wrap(FILE *f, int indent, const char *text)
{
    const int width = 79;
    int col = 0;
    const char *p = text;
    while (*p) {
        while (*p == ' ')
            p++;
        size_t w = strcspn(p, " "), shown = w;
        if (!w)
            break;
        for (size_t i = 0; i < w; i++)
            shown -= p[i] == '`';
        if (col > indent && col + 1 + (int)shown > width) {
            fputc('\n', f);
            col = 0;
        }
        if (col == 0) {
            fprintf(f, "%*s", indent, "");
            col = indent;
        } else {
            fputc(' ', f);
            col++;
        }
        for (size_t i = 0; i < w; i++)
            if (p[i] != '`')
                fputc(p[i], f);
        col += (int)shown;
        p += w;
    }
    fputc('\n', f);
}

/* The default as shown to people: quoted when it has spaces or is empty. */
static void default_text(char *buf, size_t cap, const option *o)
{
    if (!o->def)
        snprintf(buf, cap, "%s", (o->flags & F_REQUIRED) ? "none (required)" : "none");
    else if (!*o->def || strchr(o->def, ' '))
        snprintf(buf, cap, "\"%s\"", o->def);
    else
        snprintf(buf, cap, "%s", o->def);
}

/* "--listen HOST:PORT", "--watch, --no-watch" */
static void synopsis_of(char *buf, size_t cap, const option *o)
{
    char flag[NAME_MAX_LEN + 4];
    flag_name(flag, sizeof flag, o);
    if (o->type == T_BOOL)
        snprintf(buf, cap, "%s, --no-%s", flag, flag + 2);
    else
        snprintf(buf, cap, "%s %s", flag, o->metavar);
}

/* Everything --help and docs/CONFIG.md say about one option. */
typedef struct opt_texts {
    char syn[160], allowed[160], def[160], env[NAME_MAX_LEN + 16], flag[NAME_MAX_LEN + 4];
} opt_texts;

static void texts_of(opt_texts *t, const option *o)
{
    synopsis_of(t->syn, sizeof t->syn, o);
    allowed_text(t->allowed, sizeof t->allowed, o);
    default_text(t->def, sizeof t->def, o);
    env_name(t->env, sizeof t->env, o);
    flag_name(t->flag, sizeof t->flag, o);
}

void ztd_config_help(FILE *f, const char *prog)
{
    char line[512];
    opt_texts t;
    if (!prog || !*prog)
        prog = "ztensord";
    fprintf(f, "NAME\n    %s - serve zTensor files over HTTP\n\n", prog);
    fprintf(f, "SYNOPSIS\n    %s --root DIR [OPTION]...\n    %s --help | --version\n\n", prog,
            prog);
    fprintf(f, "DESCRIPTION\n");
    for (size_t i = 0; i < sizeof description / sizeof description[0]; i++) {
        if (i)
            fputc('\n', f);
        wrap(f, 4, description[i]);
    }
    fprintf(f, "\nOPTIONS\n");
    for (size_t i = 0; i < N_OPTIONS; i++) {
        const option *o = &options[i];
        texts_of(&t, o);
        fprintf(f, "    %s\n", t.syn);
        wrap(f, 8, o->help);
        snprintf(line, sizeof line, "Allowed: %s. Default: %s. Environment: %s.%s", t.allowed,
                 t.def, t.env, (o->flags & F_NOFILE) ? "" : " Config file key:");
        if (!(o->flags & F_NOFILE)) {
            size_t n = strlen(line);
            snprintf(line + n, sizeof line - n, " %s.", o->name);
        }
        wrap(f, 8, line);
        fputc('\n', f);
    }
    fprintf(f, "    -h, --help\n");
    wrap(f, 8, "Print this help and exit.");
    fprintf(f, "\n    -V, --version\n");
    wrap(f, 8, "Print the version and exit.");
    fprintf(f, "\nSIGNALS\n");
    for (size_t i = 0; i < sizeof signal_docs / sizeof signal_docs[0]; i++) {
        fprintf(f, "    %s\n", signal_docs[i].name);
        wrap(f, 8, signal_docs[i].text);
    }
    fprintf(f, "\nEXIT STATUS\n");
    for (size_t i = 0; i < sizeof exit_docs / sizeof exit_docs[0]; i++) {
        fprintf(f, "    %d\n", exit_docs[i].code);
        wrap(f, 8, exit_docs[i].text);
    }
    fprintf(f, "\nFILES\n    " SAMPLE_CONFIG "\n");
    wrap(f, 8,
         "The usual place of the config file. It is read only when named by --config or " ENV_PREFIX
         "CONFIG; nothing is read from a default location.");
}

/* --------------------------------------------------------- CONFIG.md */

/* Markdown table cells must not contain an unescaped |. */
static void md_cell(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '|')
            fputc('\\', f);
        fputc(*s, f);
    }
}

void ztd_config_markdown(FILE *f)
{
    opt_texts t;
    fprintf(f, "# ztensord configuration\n\n"
               "<!-- Generated from the option table in server/core/config.c by "
               "ztd_config_markdown() (ztensord --dump-config-markdown); do not edit. "
               "tests/config/test_config fails when this file differs. -->\n\n");
    for (size_t i = 0; i < sizeof description / sizeof description[0]; i++)
        fprintf(f, "%s\n\n", description[i]);

    fprintf(f, "## Where options are set\n\n"
               "| Source | Form | Example |\n|---|---|---|\n"
               "| flag | `--name-with-dashes VALUE` or `--name-with-dashes=VALUE` | "
               "`--max-ranges 16` |\n"
               "| environment | `" ENV_PREFIX "NAME_IN_CAPITALS=VALUE` | `" ENV_PREFIX
               "MAX_RANGES=16` |\n"
               "| config file | a key of the top-level JSON object | `\"max_ranges\": 16` |\n"
               "\n"
               "The config file is read only when named by `--config FILE` or `" ENV_PREFIX
               "CONFIG`. In it, strings, enums and durations are JSON strings, integers are "
               "JSON integers, booleans are `true` or `false`, and sizes are either an integer "
               "number of bytes or a string such as `\"64M\"`. Flags and environment variables "
               "take the same values as text.\n\n"
               "Errors name the option, where the value came from (`flag --max-ranges`, "
               "`env " ENV_PREFIX "MAX_RANGES`, `file PATH`) and what is allowed, for "
               "example:\n\n"
               "```\noption max_ranges (flag --max-ranges): \"100\" is out of range; allowed: "
               "an integer from 1 to 64\n```\n\n");

    fprintf(f, "## Options\n\n| Option | Type | Default | Environment |\n|---|---|---|---|\n");
    for (size_t i = 0; i < N_OPTIONS; i++) {
        const option *o = &options[i];
        texts_of(&t, o);
        fprintf(f, "| [`%s`](#%s) | %s | ", o->name, o->name, type_name(o));
        md_cell(f, t.def);
        fprintf(f, " | `%s` |\n", t.env);
    }
    fputc('\n', f);
    for (size_t i = 0; i < N_OPTIONS; i++) {
        const option *o = &options[i];
        texts_of(&t, o);
        fprintf(f, "### %s\n\n%s\n\n", o->name, o->help);
        fprintf(f, "- Type: %s; allowed: %s\n", type_name(o), t.allowed);
        fprintf(f, "- Default: %s\n", t.def);
        if (o->type == T_BOOL)
            fprintf(f, "- Flag: `%s`, `--no-%s`, `%s=true|false`\n", t.flag, t.flag + 2, t.flag);
        else
            fprintf(f, "- Flag: `%s %s` or `%s=%s`\n", t.flag, o->metavar, t.flag, o->metavar);
        fprintf(f, "- Environment: `%s`\n", t.env);
        if (o->flags & F_NOFILE)
            fprintf(f, "- Config file: not allowed\n\n");
        else
            fprintf(f, "- Config file: `\"%s\"`\n\n", o->name);
    }

    fprintf(f, "## Example config file\n\n"
               "`config/ztensord.json` sets every option to its default, except `root`, which "
               "has none and is set to the example `/srv/models`. It is the output of "
               "`ztensord --dump-config-json`:\n\n```json\n");
    ztd_config_dump_json(f);
    fprintf(f, "```\n\n## Signals\n\n");
    for (size_t i = 0; i < sizeof signal_docs / sizeof signal_docs[0]; i++)
        fprintf(f, "- **%s**: %s\n", signal_docs[i].name, signal_docs[i].text);
    fprintf(f, "\n## Exit status\n\n");
    for (size_t i = 0; i < sizeof exit_docs / sizeof exit_docs[0]; i++)
        fprintf(f, "- **%d**: %s\n", exit_docs[i].code, exit_docs[i].text);
}

/* ----------------------------------------------------- sample config */

void ztd_config_dump_json(FILE *f)
{
    json_t *root = json_object();
    for (size_t i = 0; root && i < N_OPTIONS; i++) {
        const option *o = &options[i];
        const char *v = o->def ? o->def : o->example;
        json_t *j = NULL;
        bool b = false;
        uint64_t n = 0;
        char why[128];
        if ((o->flags & F_NOFILE) || !v)
            continue;
        switch (o->type) {
        case T_BOOL:
            parse_bool(v, &b, why, sizeof why);
            j = json_boolean(b);
            break;
        case T_UINT:
            parse_uint(v, &n, why, sizeof why);
            j = json_integer((json_int_t)n);
            break;
        case T_STRING:
        case T_SIZE:
        case T_DURATION:
        case T_ENUM:
            j = json_string(v);
            break;
        }
        json_object_set_new(root, o->name, j);
    }
    json_dumpf(root, f, JSON_INDENT(2));
    fputc('\n', f);
    json_decref(root);
}
