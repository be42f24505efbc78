/*
 * Internal declarations of libztensor-remote, in three layers that call
 * downwards only: pure parsers of what comes from the network
 * (http_parse.c), the transport that runs range requests over libcurl's
 * multi interface (transport.c), and the file and read calls on top
 * (remote_file.c, remote_read.c). Internal names are ztr__*; nothing here is
 * exported. docs/PULL.md describes the design.
 */
#ifndef ZT_REMOTE_INTERNAL_H
#define ZT_REMOTE_INTERNAL_H

#include "ztensor/ztensor_experimental.h" /* zt_error_vset */
#include "ztensor/ztensor_remote.h"

#include <curl/curl.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* ---- errors (remote_error.c): the core's message shape, plus the URL */
zt_status ztr__fail(zt_error *err, zt_status code, const char *url, const char *obj,
                    const char *comp, int has_off, uint64_t off, const char *fmt, ...)
    __attribute__((format(printf, 8, 9)));
/* Adds " [URL]" to a message that a core call wrote into err. */
void ztr__add_url(zt_error *err, const char *url);

/* ---- pure parsers (http_parse.c): bytes from a stranger, no allocation */

/* Content-Range of a 206 ("bytes 0-99/1000", total may be "*") or a 416
 * ("bytes * /1000", without the space). 0 on success, -1 when malformed. */
typedef struct ztr_content_range {
    bool unsatisfied; /* "bytes * /total": first and last are meaningless */
    bool total_known; /* total was a number, not "*" */
    uint64_t first, last, total;
} ztr_content_range;
int ztr__parse_content_range(const char *s, size_t n, ztr_content_range *out);

/* Retry-After: delta-seconds or an HTTP-date, as seconds from now (>= 0; a
 * date in the past is 0). 0 on success, -1 when malformed. */
int ztr__parse_retry_after(const char *s, size_t n, time_t now, double *seconds);

/* An entity-tag: 1 strong ("x"), 2 weak (W/"x"), 0 malformed. */
int ztr__etag_kind(const char *s, size_t n);

/* "HTTP/1.1 206 Partial Content" -> 206. 0 on success, -1 otherwise. */
int ztr__parse_status_line(const char *s, size_t n, int *code);

/* A header line "Name: value\r\n" whose name is `name` (any case): *val and
 * *vlen get the value without surrounding blanks. */
bool ztr__header_is(const char *line, size_t n, const char *name, const char **val, size_t *vlen);

/* The URL whose bytes are read, from the URL a caller gave: http:// or
 * https:// only; a ztensord file URL (…/v1/files/NAME.zt, .safetensors or
 * .alt, NAME may hold slashes) gets "/raw" appended unless flags has
 * ZT_REMOTE_PLAIN_URL. *safetensors is set when the path names a
 * .safetensors file. 0 on success; -1 with *why set otherwise. */
int ztr__data_url(const char *url, unsigned flags, char *out, size_t cap, bool *safetensors,
                  const char **why);

/* A one-line summary of an error body for a message: "code: message" from
 * ztensord's {"error":{"code":…,"message":…}}, the <title> of an HTML
 * page (a plain server's error page; its text without tags when it has no
 * title), otherwise the printable start of the body. Always NUL-terminated. */
void ztr__error_summary(const char *body, size_t n, char *out, size_t cap);

/* ---- transport (transport.c) */

/* The validator pinned at open. */
typedef struct ztr_pin {
    char etag[256]; /* the ETag as sent, "" if none */
    bool strong;    /* etag is strong: usable in If-Match */
    char lm[64];    /* Last-Modified as sent, "" if none */
    uint64_t size;
} ztr_pin;

struct zt_remote {
    zt_remote_options opt;
    char *token, *ca_file; /* copies; opt's pointers point here */
    /* An S3 session (opt.s3_region set): copies, opt's pointers point here;
     * sigv4 is libcurl's "aws:amz:REGION:s3". */
    char *s3_region, *s3_endpoint, *s3_key, *s3_secret, *s3_token, *sigv4;
    CURLM *multi;
    CURL **idle; /* easy handles kept for reuse */
    size_t nidle;
    uint64_t rng; /* jitter */
    /* A server answered (any HTTP status) in this session: from then on a
     * refused connection or an unresolved name is a server restarting and is
     * tried again; before, it is a wrong address and fails at once. */
    bool answered;
    /* Body bytes accepted from every transfer of the session (atomic:
     * zt_remote_bytes_received may read it from another thread). */
    uint64_t received;
};

typedef struct ztr_xfer ztr_xfer;
/* Body bytes of a transfer, in order, at file offset `at`. 0: go on; 1: stop
 * here, successfully; -1: failure, described in *err. */
typedef int (*ztr_body_fn)(void *ud, uint64_t at, const uint8_t *p, size_t n, zt_error *err);

/* What the last attempt of a transfer was answered (transport.c). */
typedef struct ztr_resp {
    int status;
    bool has_range, range_bad;
    ztr_content_range cr;
    char etag[256], lm[64];
    bool has_retry_after;
    double retry_after;
    int64_t content_length; /* -1 when absent */
    bool coded;             /* a Content-Encoding other than identity */
    char body[512];         /* the start of an error body */
    size_t body_len, discarded;
} ztr_resp;

/* One range request, retried and resumed until it is complete. */
struct ztr_xfer {
    /* set by the caller */
    uint64_t start, len; /* bytes [start, start + len) of the file */
    bool suffix;         /* open: the last `len` bytes, the size being unknown */
    bool accept_full;    /* open: a 200 with the whole file (at most len bytes) is fine */
    ztr_body_fn on_body;
    void *ud;
    const char *obj, *comp; /* for messages */
    /* results */
    uint64_t got;   /* body bytes delivered */
    uint64_t total; /* the file size the server gave */
    bool full;      /* the server sent the whole file with 200 */
    char etag[256], lm[64];
    /* the engine's */
    int state; /* XFER_* in transport.c */
    unsigned fails;
    double not_before;
    uint64_t got_at_start; /* got when this attempt started */
    double last_byte;      /* when this attempt last received something */
    double window_at;      /* min_rate: when the current window began */
    uint64_t window_got;   /* min_rate: got then */
    bool slow;             /* dropped for receiving less than min_rate */
    CURL *easy;
    struct curl_slist *hdrs;
    ztr_resp resp;
    bool checked;
    int verdict;
    zt_status why;    /* the verdict's code */
    char reason[256]; /* the verdict's words */
    char errbuf[CURL_ERROR_SIZE];
    struct ztr_batch *batch;
};

typedef struct ztr_batch {
    zt_remote *r;
    const char *url;
    const ztr_pin *pin; /* NULL while opening */
    ztr_xfer *x;
    size_t n;
    unsigned conns;
    double deadline; /* ztr__now() seconds; 0: none */
    /* Names the object and component of a failing request for its message
     * (may be NULL: x->obj and x->comp are used). */
    void (*where)(void *ud, const ztr_xfer *x, uint64_t at, const char **obj, const char **comp);
    void *where_ud;
    /* Flow control (may be NULL): a new request (not a retry) starts only
     * when gate says so; inflight is the bytes the running requests have yet
     * to deliver. A closed gate must open once nothing runs and the hashing
     * lanes are idle, or the batch would wait forever. */
    bool (*gate)(void *ud, const ztr_xfer *x, uint64_t inflight);
    void *gate_ud;
    bool gated; /* the gate held a request back in this round */
    bool failed;
    double now; /* ztr__now() at the top of the engine's loop */
    zt_error *err;
    zt_error scratch;
} ztr_batch;

/* ---- the session (session.c) */
/* An easy handle for a request (reset), and back to the idle ones after. */
CURL *ztr__easy_get(zt_remote *r);
void ztr__easy_put(zt_remote *r, CURL *e);
/* The options every transfer of the session takes: its error buffer (errbuf,
 * CURL_ERROR_SIZE bytes), no signals, http and https only, the connect
 * timeout, the CA file and --insecure. */
void ztr__easy_base(const zt_remote *r, CURL *e, char *errbuf);
/* Uniform in [0, 1), for the jitter of retries. */
double ztr__rand01(zt_remote *r);

/* Runs every transfer to completion over at most b->conns connections, or
 * stops at the first failure (returned, and described in *b->err). */
zt_status ztr__run(ztr_batch *b);
/* Monotonic seconds. */
double ztr__now(void);
/* The deadline of a call that starts now (0: none): total_timeout from now,
 * or the session's deadline when that comes first. */
double ztr__deadline(const zt_remote *r);
/* Which of the two a call's deadline is, for a message ("the total timeout
 * (30 s)", "the session's deadline ..."). */
const char *ztr__deadline_name(const zt_remote *r, double deadline, char *buf, size_t cap);

/* ---- hashing threads (hash_lanes.c): segments pushed to lane k are hashed
 * in order on that lane's thread. new() returns NULL when no thread can be
 * had (hash on the caller's thread then); push() false when out of memory.
 * wait() returns once every pushed segment is hashed; free() waits too. */
typedef struct ztr_lanes ztr_lanes;
ztr_lanes *ztr__lanes_new(unsigned n);
bool ztr__lanes_push(ztr_lanes *L, unsigned k, zt_hasher *h, const uint8_t *p, size_t n, bool drop);
/* Segments pushed with drop lie in `base`, a shared mapping of fd: the lanes
 * read them with pread instead of through the mapping (a pull written with
 * pwrite then never maps its window's pages). Before any push. */
void ztr__lanes_read_from(ztr_lanes *L, int fd, const uint8_t *base);
/* Bytes hashed by the lanes so far (any thread; a pull's flow control). */
uint64_t ztr__lanes_hashed(ztr_lanes *L);
/* drop: p is in a shared file mapping (a pull): its whole pages are released
 * (madvise MADV_DONTNEED) once hashed, so memory stays near the bytes in
 * flight instead of the component's size. */
void ztr__drop_pages(const uint8_t *p, size_t n);
/* Ranges to drop, gathered while they are neighbours (a pull's many small
 * components): add() releases the gathered range once it is not a
 * neighbour of the new one or has grown to a MiB; flush() releases it. */
typedef struct ztr_drop {
    uintptr_t lo, hi;
} ztr_drop;
void ztr__drop_add(ztr_drop *d, const uint8_t *p, size_t n);
void ztr__drop_flush(ztr_drop *d);
void ztr__lanes_wait(ztr_lanes *L);
void ztr__lanes_free(ztr_lanes *L);

/* ---- files (remote_file.c) */
struct zt_remote_file {
    zt_remote *r;
    bool own_session;
    char *url; /* the data URL */
    ztr_pin pin;
    zt_file *zf; /* NULL for a file opened as bytes (open_bytes.c) */
    /* What the server said the bytes hash to at open (Repr-Digest), when
     * has_sha256: a file opened as bytes only. */
    bool has_sha256;
    uint8_t sha256[32];
    /* A server that ignores Range sent the whole (small) file at open: reads
     * are served from these bytes, the version opened. */
    uint8_t *whole;
    /* The bytes fetched at open that the model was built from: [0, head_len)
     * (in `whole` when set, head is then NULL) and [tail_at, tail_at +
     * tail_len) (tail may be NULL). A pull checks its copy against them. */
    uint8_t *head, *tail;
    size_t head_len, tail_len;
    uint64_t tail_at;
};
/* Frees head and tail (not whole, which reads are served from): a pull that
 * has taken their digest needs them no longer, and they hold the whole
 * manifest. zt_remote_file_ends then gives NULL for them. */
void ztr__file_forget_ends(zt_remote_file *rf);

/* ---- reads (remote_read.c) for pulls: zt_remote_read_many's requests plus
 * plain byte spans of the file (no digest) into base + (offset - base_off),
 * planned together, so the bytes between small components share their
 * requests. */
typedef struct ztr_span {
    uint64_t start, len;
} ztr_span;
/* What a pull adds to a read (all may be 0/NULL). */
typedef struct ztr_pull_io {
    /* window > 0 (a pull into a file mapping): the requests' pages are
     * released as soon as they are hashed (or at once, without a digest),
     * and at most about `window` bytes are landed but not yet hashed, or in
     * flight: requests that would run further ahead of the hashing wait, and
     * chunks are cut to window / connections. Memory then stays near the
     * window, not the file. */
    uint64_t window;
    /* Nonzero (a signal handler sets it): the read stops with ZT_E_IO. */
    const volatile sig_atomic_t *cancel;
    /* Resume inside a component: from[k] bytes of reqs[k] are in its buffer
     * already (on disk, not verified): they are hashed from there (a local
     * read), and only the rest is fetched. NULL: none. Honoured for
     * components split in chunks only (larger than a chunk); set to 0 where
     * it is not (the component is fetched whole). */
    uint64_t *from;
    /* Called on the reading thread each time the landed prefix of reqs[k]
     * (bytes in order from its start) has grown by prefix_step or more, for
     * components split in chunks; nonzero stops the read with *err set. */
    int (*on_prefix)(void *ud, size_t k, uint64_t bytes, zt_error *err);
    void *ud;
    uint64_t prefix_step;
    /* Non-NULL: the buffers lie in this shared mapping of fd, and landing
     * bytes are written with pwrite at their offset in it instead of copied
     * through it. The page cache holds them either way, but pages written
     * through the mapping count in the process's RSS until released, the
     * whole window of them (32 MiB); written with pwrite, only those the
     * hashing reads are mapped, a lane's batch at a time. */
    const uint8_t *file_map;
    int fd;
} ztr_pull_io;
zt_status ztr__read_spans(zt_remote_file *rf, zt_remote_request *reqs, size_t n,
                          const ztr_span *spans, size_t nspans, uint8_t *base, uint64_t base_off,
                          unsigned connections, const ztr_pull_io *io, zt_error *err);

/* ---- pulls (pull.c, pull_shards.c): one file, and a v2 model's files */
/* A file pulled as shard `index` of a v2 root (§7): checked by its table. */
typedef struct ztr_shard_of {
    const zt_file *root;
    size_t index;
} ztr_shard_of;
/* Pulls rf (which stays the caller's) to path, adding to *stats; *skipped
 * when path was this version already. Every file is named in dfd, the
 * directory of path (ztr__pull_dir_open), by path's last segment; path
 * itself names it in messages. With hold, path.ztpart is left complete,
 * verified and durable, for ztr__pull_place. */
zt_status ztr__pull_file(zt_remote_file *rf, int dfd, const char *path, const ztr_shard_of *shard,
                         bool hold, const zt_remote_pull_options *opt, zt_remote_pull_stats *stats,
                         bool *skipped, zt_error *err);
/* pull_skip.c: the key of what a file's bytes are, as the origin's digests
 * say (0: none, the file has a component without digest); the mark of a
 * file published with it; whether the file leaf in dfd is marked with key
 * and unwritten since. */
int ztr__content_key(const zt_file *f, const ztr_shard_of *shard, const uint8_t ends[32],
                     uint64_t size, char *out, size_t cap);
void ztr__content_mark(int fd, const char *key);
bool ztr__content_done(int dfd, const char *leaf, const char *key, uint64_t size);
/* path.ztpart renamed to path in dfd, the directory synced, path.ztpull removed. */
zt_status ztr__pull_place(int dfd, const char *path, zt_error *err);
/* One round of zt_remote_pull: the file, and the shards a v2 root names. */
zt_status ztr__pull_set(zt_remote *r, const char *url, int dfd, const char *path,
                        const zt_remote_pull_options *opt, zt_remote_pull_stats *stats,
                        zt_error *err);

/* ---- pulls (pull_dir.c): the directory written in, never through a link */
/* path's last segment. */
const char *ztr__leaf(const char *path);
/* The directory path's file goes in, opened once: with dir_fd >= 0, path is
 * below it and each of its directories is opened with O_NOFOLLOW (none is
 * created); with -1, path's directory is opened as given. An fd, or -1 with
 * *err set. */
int ztr__pull_dir_open(int dir_fd, const char *path, const char *url, zt_error *err);
/* Why opening name in dfd failed with errno e, for a message: a symbolic
 * link (not followed), not a directory (want_dir) or not a regular file
 * when that is so, else strerror(e). */
const char *ztr__why(int dfd, const char *name, bool want_dir, int e);
/* An existing regular file name in dfd, opened with flags and O_NOFOLLOW (a
 * FIFO is not waited on); -1 with *e (ELOOP: a link; EINVAL: not a regular
 * file). */
int ztr__open_regular(int dfd, const char *name, int flags, int *e);
/* A new file name in dfd (a regular file there is removed first; a link or
 * anything else is left and refused), O_CREAT | O_EXCL | O_NOFOLLOW; -1 with
 * *e. */
int ztr__create_new(int dfd, const char *name, int flags, int *e);

/* ---- pulls (pull_state.c): the state file beside a partial file */
typedef struct ztr_pull_state {
    uint64_t size;
    char etag[256], lm[64]; /* "" when none */
    size_t ndone;           /* components recorded verified */
} ztr_pull_state;
/* Parses a state file; done (ncomp bytes) gets 1 for each component recorded
 * verified, prefix (ncomp counts; may be NULL) the largest prefix recorded
 * on disk of each ("p" records; their sizes are checked by the caller). 0,
 * or -1 when the file is not a state of a file of ncomp components (start
 * over). A last line without '\n' is ignored. */
int ztr__pull_state_parse(const char *buf, size_t len, ztr_pull_state *st, uint8_t *done,
                          uint64_t *prefix, size_t ncomp);
/* The state file's first lines into out; their length, or -1 when cap is short. */
int ztr__pull_state_header(char *out, size_t cap, const ztr_pull_state *st, size_t ncomp);

/* ---- pulls (pull_sync.c): a thread that makes each batch durable (msync of
 * [lo, hi) of map, fdatasync of fd) and then appends its records (text,
 * owned by the syncer once handed) to the state file sfd, fdatasynced, while
 * the pull fetches the next batch. push() first waits for the batch before.
 * push() and wait() return 0, the errno of the data file, or minus the errno
 * of the state file, for the batch before (push) or the last one (wait).
 * free() finishes the batch in hand. Without a thread, push() does the work. */
typedef struct ztr_syncer ztr_syncer;
ztr_syncer *ztr__syncer_new(int fd, int sfd, uint8_t *map);
int ztr__syncer_push(ztr_syncer *s, uint64_t lo, uint64_t hi, char *text, size_t len);
int ztr__syncer_wait(ztr_syncer *s);
/* A batch is in hand (push() would wait for it). */
bool ztr__syncer_busy(ztr_syncer *s);
void ztr__syncer_free(ztr_syncer *s);

/* ---- listings (listing.c): one page of GET /v1/files?prefix=… . Calls fn
 * for each entry; cursor (cap bytes) gets next_cursor, or "" on the last
 * page. 0; 1 when fn stopped; -1 when the body is not a listing. */
typedef int (*ztr_list_fn)(void *ud, const char *name, uint64_t size, const char *etag, int ok);
int ztr__parse_listing(const char *body, size_t n, ztr_list_fn fn, void *ud, char *cursor,
                       size_t cap);

/* One GET of url into pg (a page of a listing, at most 16 MiB), retried on
 * network errors, 429 and 5xx with the session's backoff, ending by deadline
 * (0: none); the final status in *code (the body is the error's then). */
typedef struct ztr_page {
    char *p;
    size_t n;
    bool over;
} ztr_page;
zt_status ztr__get_page(zt_remote *r, const char *url, double deadline, ztr_page *pg, long *code,
                        zt_error *err);

/* ---- listings (listing_walk.c): what a walk of pages holds against a
 * server that lies: the cursors seen (sha256), the last name, the prefix,
 * the caps. */
typedef struct ztr_walk {
    char *prefix; /* decoded: as the server matches it */
    size_t prefix_len;
    char *last; /* the last name listed, or NULL */
    size_t last_cap;
    uint8_t (*seen)[32]; /* open addressing, at most half full */
    size_t nseen, cap;
    uint64_t entries, bytes, max_entries, max_bytes;
} ztr_walk;
/* prefix as in the URL (%XX decoded here). 0, or -1 out of memory. */
int ztr__walk_init(ztr_walk *w, const char *prefix, uint64_t max_entries, uint64_t max_bytes);
void ztr__walk_free(ztr_walk *w);
/* A next_cursor: 0 new; 1 given by an earlier page (a loop, why says so);
 * -1 out of memory. */
int ztr__walk_cursor(ztr_walk *w, const char *cursor, char *why, size_t cap);
/* A listed name: 0 fine; -1 outside the prefix, not after the name before
 * (listed twice, or out of order); -2 over a cap; -3 out of memory. why
 * says which. */
int ztr__walk_entry(ztr_walk *w, const char *name, char *why, size_t cap);

/* ---- one HEAD (head.c): what a server says of a file, for files that are
 * not tensor files (pull_object.c, open_bytes.c). */
typedef struct ztr_head {
    long status;
    int64_t size; /* Content-Length; -1 when absent */
    char etag[256], lm[64];
    char sha256[64];         /* x-amz-checksum-sha256 (base64), "" when none */
    uint8_t repr_sha256[32]; /* Repr-Digest's sha-256, when has_repr_sha256 */
    bool has_repr_sha256;
} ztr_head;
/* HEAD url (asking for x-amz-checksum-sha256 and Repr-Digest), retried on
 * connection failures, 429 and 5xx with the session's backoff: ZT_OK for a
 * 200 with a Content-Length; ZT_E_NOT_FOUND for 404; ZT_E_HTTP, ZT_E_NETWORK. */
zt_status ztr__head(zt_remote *r, const char *url, double deadline, ztr_head *h, zt_error *err);
/* A Repr-Digest value's sha-256 (RFC 9530: sha-256=:BASE64:) into out, *found set. */
void ztr__repr_digest_sha256(const char *v, size_t vl, uint8_t out[32], bool *found);

/* ---- S3 (s3_auth.c): a request's credentials, whatever the origin. The
 * bearer token, or an S3 session's x-amz-content-sha256 (of the empty body:
 * every request here is a GET or HEAD) and x-amz-security-token, appended to
 * *h: 0, or -1 out of memory (*h freed, NULL); then the SigV4 options of e. */
int ztr__auth_headers(const zt_remote *r, struct curl_slist **h);
void ztr__auth_setopt(const zt_remote *r, CURL *e);
/* "%XX" of every byte but A-Z a-z 0-9 - . _ ~ (and '/' when keep_slash), as
 * SigV4's canonical request wants it; false when cap is short. */
bool ztr__s3_escape(const char *s, bool keep_slash, char *out, size_t cap);

/* ---- S3 (s3_url.c): the URL of a ListObjectsV2 page (token "" for the
 * first), canonical for SigV4; malloc'd, NULL when out of memory. */
char *ztr__s3_list_url(const zt_remote *r, const char *bucket, const char *prefix,
                       const char *token);

/* ---- S3 (s3_listing.c): pure parsers of S3's XML, by expat */
#define ZTR_S3_KEY_MAX 1024   /* bytes of a key: S3's own limit */
#define ZTR_S3_TOKEN_MAX 4096 /* bytes of a continuation token */
typedef struct ztr_s3_object {
    char key[ZTR_S3_KEY_MAX + 1];
    uint64_t size;
    char etag[130];
    char last_modified[64];
} ztr_s3_object;
typedef struct ztr_s3_page {
    unsigned max_keys; /* set by the caller: more keys in the page is an error */
    unsigned keys;     /* out: keys in the page */
    bool truncated;    /* out: IsTruncated */
    char next_token[ZTR_S3_TOKEN_MAX + 1]; /* out: NextContinuationToken, or "" */
    char scratch[ZTR_S3_TOKEN_MAX + 1];    /* the parser's */
} ztr_s3_page;
/* Non-zero stops the parse (it then returns 1). */
typedef int (*ztr_s3_key_fn)(void *ud, const ztr_s3_object *o);
/* One ListObjectsV2 page: fn for each <Contents> in order. 0; 1 when fn
 * stopped; -1 with why (naming the byte offset) when the document is not a
 * listing, holds a DOCTYPE or entity declaration, a text over its cap (a key
 * over 1024 bytes), more than max_keys keys, or is truncated without a
 * token. */
int ztr__s3_parse_listing(const char *buf, size_t n, ztr_s3_page *page, ztr_s3_key_fn fn, void *ud,
                          char *why, size_t cap);
/* <Error><Code>C</Code><Message>M</Message></Error>: 0 with code and msg
 * (cut to their caps, printable), -1 when the body is not one. */
int ztr__s3_parse_error(const char *buf, size_t n, char *code, size_t code_cap, char *msg,
                        size_t msg_cap);

#endif
