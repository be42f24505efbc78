/*
 * libztensor-remote: read zTensor (and safetensors) files over HTTP(S) without
 * downloading them, from ztensord or from any server that answers Range
 * requests (nginx, an S3-compatible store, a CDN).
 *
 * A separate library (ztensor-remote.pc): a program that reads only local
 * files links libztensor alone and never libcurl. The model of a remote file
 * is libztensor's own zt_file, built by zt_open_manifest() from the bytes at
 * the file's two ends; objects and components are read with libztensor's
 * accessors, and their bytes with the calls below.
 *
 * Versions are never mixed: opening pins the file's validator (its strong
 * ETag, or Last-Modified and size when the server sends no strong ETag).
 * Every later request carries If-Match (or If-Unmodified-Since) and If-Range
 * with it, and every response is checked against it; a file replaced at the
 * origin is ZT_E_CHANGED, never a mix of two versions. Reopen to read the new
 * one.
 *
 * Ownership, stated once:
 *  - zt_remote (a session: libcurl's multi handle, its connections and
 *    options) is created by zt_remote_new() and released by zt_remote_free().
 *  - zt_remote_file is created by zt_remote_open*() and released by
 *    zt_remote_close(). A file opened in a session borrows it: free the
 *    session after its files. zt_remote_open() makes a session of its own,
 *    which zt_remote_close() frees.
 *  - Strings in zt_remote_options are copied: the caller keeps its own.
 *  - const pointers returned by accessors (the zt_file, the URL, the
 *    validator) are owned by the zt_remote_file and live until
 *    zt_remote_close().
 *  - Buffers passed to the read calls stay the caller's. After a failed read
 *    their contents are unspecified.
 * Every function that can fail returns a zt_status and fills a zt_error
 * (may be NULL) whose message names the URL, and where known the object,
 * the component and the byte offset in the file.
 *
 * Thread safety: a session, and the files opened in it, are used by one
 * thread at a time. Use one session per thread for parallel callers; inside
 * one call, zt_remote_read_many() already reads over many connections.
 */
#ifndef ZTENSOR_REMOTE_H
#define ZTENSOR_REMOTE_H

#include "ztensor.h"

#include <signal.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(ZT_BUILDING_REMOTE)
#define ZT_REMOTE_API __attribute__((visibility("default")))
#else
#define ZT_REMOTE_API
#endif

/* ---------------------------------------------------------------- options */

/* Defaults of zt_remote_options (zt_remote_options_init). */
#define ZT_REMOTE_DEFAULT_CONNECT_TIMEOUT 10.0 /* seconds */
#define ZT_REMOTE_DEFAULT_STALL_TIMEOUT 30.0   /* seconds without a byte */
#define ZT_REMOTE_DEFAULT_RETRIES 6
#define ZT_REMOTE_DEFAULT_BACKOFF 0.25     /* seconds, doubled per retry */
#define ZT_REMOTE_DEFAULT_MAX_BACKOFF 30.0 /* seconds; also the longest Retry-After honoured */
#define ZT_REMOTE_DEFAULT_CONNECTIONS 4
#define ZT_REMOTE_DEFAULT_CHUNK (8u << 20)        /* bytes per range request of a large read */
#define ZT_REMOTE_DEFAULT_OPEN_WINDOW (64u << 10) /* bytes asked for at each end on open */
#define ZT_REMOTE_DEFAULT_LIST_MAX_ENTRIES 100000u
#define ZT_REMOTE_DEFAULT_LIST_MAX_BYTES (64u << 20)

/* Use the URL as given, even when it looks like a ztensord file URL
 * (…/v1/files/NAME, whose bytes zt_remote_open otherwise reads at …/raw). */
#define ZT_REMOTE_PLAIN_URL 1u

typedef struct zt_remote_options {
    size_t size;              /* sizeof(zt_remote_options): set by zt_remote_options_init(); lets
                                 later versions add fields */
    const char *bearer_token; /* Authorization: Bearer …; NULL for none. Copied. */
    const char *ca_file;      /* PEM bundle to trust instead of the system's; NULL = system */
    int insecure;             /* 1: do not verify the TLS peer (tests only) */
    double connect_timeout;   /* seconds per TCP+TLS connect */
    double total_timeout;     /* seconds for one call (open or a read), retries and waits
                                 included; 0 = no limit */
    double stall_timeout;     /* a request that receives no byte for this long (seconds,
                                 1 to 3600) is dropped and resumed from its last byte on
                                 a new connection */
    unsigned max_retries;     /* consecutive failures of one request before the call fails;
                                 a retry that brought bytes starts the count again */
    double backoff;           /* first wait before a retry; doubled each time, with jitter */
    double max_backoff;       /* cap of one wait; a longer Retry-After fails at once */
    unsigned connections;     /* zt_remote_read_many's default, and zt_remote_read_component's */
    size_t chunk_size;        /* large reads are split into range requests of this size
                                 (at least 64 KiB) */
    size_t open_window;       /* bytes fetched from each end on open (at least 64) */
    unsigned flags;           /* ZT_REMOTE_* */
    zt_open_options open;     /* limits applied to the manifest, as for zt_open() */
    double min_rate;          /* bytes per second; 0 = off (the default). A request that
                                 receives fewer than min_rate * stall_timeout bytes in a
                                 stall_timeout is dropped like a stalled one, and such a
                                 retry does not start the failure count again (a server
                                 that drips bytes cannot hold a call forever) */
    /* zt_remote_list: at most this many files (default 100,000) and bytes of
     * names (default 64 MiB) in one listing; more is ZT_E_LIMIT. */
    uint64_t list_max_entries;
    uint64_t list_max_bytes;
    /* A time on zt_remote_clock() (seconds) by which every call of the
     * session ends: a call still running then fails with ZT_E_NETWORK ("the
     * session's deadline ... passed"), and a call begun later fails at once.
     * Unlike total_timeout (per call) it bounds a whole job of many calls
     * (zt pull --timeout). 0 = none (the default). */
    double deadline;
    /* S3 (docs/PULL.md, "S3 origins"). s3_region non-NULL makes the session an
     * S3 session: URLs are used as given (ZT_REMOTE_PLAIN_URL), no bearer
     * token is sent, and with s3_access_key_id and s3_secret_access_key set
     * every request is signed with AWS Signature Version 4 for s3_region and
     * service s3 (libcurl's CURLOPT_AWS_SIGV4), with x-amz-content-sha256 and,
     * when s3_session_token is set, x-amz-security-token. Without keys the
     * requests go unsigned (a public bucket). s3_endpoint: the store's base
     * URL (http://HOST:PORT), addressed path-style (ENDPOINT/BUCKET/KEY);
     * NULL: AWS, https://BUCKET.s3.REGION.amazonaws.com/KEY. s3_max_keys:
     * keys per ListObjectsV2 page (1 to 1000; 0: 1000); a page holding more
     * is an error. All copied. zt_remote_s3_configure fills them from the
     * environment. */
    const char *s3_region;
    const char *s3_endpoint;
    const char *s3_access_key_id, *s3_secret_access_key, *s3_session_token;
    unsigned s3_max_keys;
} zt_remote_options;

/* The clock of zt_remote_options.deadline: monotonic seconds. */
ZT_REMOTE_API double zt_remote_clock(void);

/* Fills *o with the defaults above; set fields after calling it. */
ZT_REMOTE_API void zt_remote_options_init(zt_remote_options *o);

/* ---------------------------------------------------------------- session */

typedef struct zt_remote zt_remote;
/* opt may be NULL (defaults). ZT_E_ARG for an option out of range or a token
 * with characters a header cannot carry. */
ZT_REMOTE_API zt_status zt_remote_new(const zt_remote_options *opt, zt_remote **out, zt_error *err);
ZT_REMOTE_API void zt_remote_free(zt_remote *r);

/* ------------------------------------------------------------------ files */

typedef struct zt_remote_file zt_remote_file;

/* Open the file at url (http:// or https://): a ztensord file URL
 * (http://host:7070/v1/files/NAME), or a plain URL of a .zt or .safetensors
 * file on a server that answers Range requests. Reads the footer and the
 * manifest (one round trip of two requests, and one more when the manifest
 * is larger than open_window), validates them with libztensor's parser and
 * pins the validator. Errors: ZT_E_NOT_FOUND (404), ZT_E_HTTP (another
 * status, or a server that ignores Range for a file larger than
 * open_window), ZT_E_NETWORK, ZT_E_CHANGED (the file changed between the
 * requests), and every error of zt_open(). */
ZT_REMOTE_API zt_status zt_remote_open(const char *url, const zt_remote_options *opt,
                                       zt_remote_file **out, zt_error *err);
/* The same in an existing session (which must outlive the file). */
ZT_REMOTE_API zt_status zt_remote_open_in(zt_remote *r, const char *url, zt_remote_file **out,
                                          zt_error *err);
ZT_REMOTE_API void zt_remote_close(zt_remote_file *rf);

/* The model: objects and components through libztensor's accessors. Its data
 * calls (zt_component_read, ...) return ZT_E_UNSUPPORTED: use the calls below. */
ZT_REMOTE_API const zt_file *zt_remote_file_zt(const zt_remote_file *rf);
/* The URL the bytes are read from (…/raw for a ztensord file URL). */
ZT_REMOTE_API const char *zt_remote_file_url(const zt_remote_file *rf);
/* The pinned validator: the ETag as sent (with its quotes), or "" when the
 * server sent no strong one; then Last-Modified as sent, or "". */
ZT_REMOTE_API const char *zt_remote_file_etag(const zt_remote_file *rf);
ZT_REMOTE_API const char *zt_remote_file_last_modified(const zt_remote_file *rf);

/* ------------------------------------------------------------------ reads */

/* What a read returns: the decoded bytes (zstd decompressed; what
 * zt_component_read gives) or the bytes as stored in the file. */
#define ZT_REMOTE_DECODED 0u
#define ZT_REMOTE_STORED 1u

/* One whole component of rf's model into buf (cap >= the decoded length, or
 * the stored length with ZT_REMOTE_STORED). *out_len gets the bytes written.
 * The component's digest, when it has one, is checked over the stored bytes:
 * ZT_E_DIGEST_MISMATCH names the object, component and offset. Large
 * components are read as several ranges over the session's connections. */
ZT_REMOTE_API zt_status zt_remote_read_component(zt_remote_file *rf, const zt_component *c,
                                                 unsigned flags, void *buf, size_t cap,
                                                 size_t *out_len, zt_error *err);

/* len bytes at offset of the component's decoded (or stored) bytes into buf.
 * offset + len beyond them is ZT_E_ARG. The digest is checked only when the
 * range is the whole component. A range of decoded zstd bytes is decoded
 * from the component's start, so it costs the stored bytes up to its end. */
ZT_REMOTE_API zt_status zt_remote_read_range(zt_remote_file *rf, const zt_component *c,
                                             unsigned flags, uint64_t offset, void *buf, size_t len,
                                             zt_error *err);

/* One request of zt_remote_read_many. */
typedef struct zt_remote_request {
    const zt_component *component; /* of rf's model */
    unsigned flags;                /* ZT_REMOTE_DECODED or ZT_REMOTE_STORED */
    void *buf;                     /* the caller's; cap bytes */
    size_t cap;
    size_t len;       /* out: bytes written */
    zt_status status; /* out: ZT_OK once this component is complete and checked */
} zt_remote_request;

/* Many whole components at once over `connections` connections (0 = the
 * session's default), each with its digest checked as for
 * zt_remote_read_component: the call to load a model straight into memory.
 * The first failure stops the call and is returned; requests already
 * complete keep status ZT_OK, the others get that failure's code. */
ZT_REMOTE_API zt_status zt_remote_read_many(zt_remote_file *rf, zt_remote_request *reqs, size_t n,
                                            unsigned connections, zt_error *err);

/* ------------------------------------------- spans, for a caching server */

/* Byte spans of the file, as a server that caches them needs (ztensord's
 * --upstream). r: the session the requests run in (NULL: the file's own);
 * it may be another session than the file's, so that several threads read
 * one file, each in a session of its own. The pinned validator, retries and
 * resumption apply as to every read; no digest is checked (the caller hashes
 * what it needs). */

/* Called with the span's bytes in order, as they arrive: pos is the offset
 * of p within the span. Non-zero stops the read (ZT_E_IO). */
typedef int (*zt_remote_stream_fn)(void *ud, uint64_t pos, const uint8_t *p, size_t n);
/* len bytes of the file at offset, streamed to fn. */
ZT_REMOTE_API zt_status zt_remote_read_stream(zt_remote *r, zt_remote_file *rf, uint64_t offset,
                                              uint64_t len, zt_remote_stream_fn fn, void *ud,
                                              zt_error *err);
typedef struct zt_remote_span {
    uint64_t offset, len; /* bytes of the file */
    void *buf;            /* the caller's, len bytes */
} zt_remote_span;
/* Several spans into their buffers, over `connections` connections (0: the
 * session's default). */
ZT_REMOTE_API zt_status zt_remote_read_spans(zt_remote *r, zt_remote_file *rf,
                                             zt_remote_span *spans, size_t n, unsigned connections,
                                             zt_error *err);
/* The file's size, as pinned at open. */
ZT_REMOTE_API uint64_t zt_remote_file_size(const zt_remote_file *rf);
/* The bytes at the file's two ends fetched at open (the model was built from
 * them): [0, head_len) and [tail_at, tail_at + tail_len); owned by rf. */
ZT_REMOTE_API zt_status zt_remote_file_ends(const zt_remote_file *rf, const uint8_t **head,
                                            size_t *head_len, const uint8_t **tail,
                                            uint64_t *tail_at, size_t *tail_len);

/* ---------------------------------------------------------------- listings */

/* Every file under a ztensord prefix: url is http(s)://HOST/v1/files/PREFIX
 * (PREFIX as in GET /v1/files?prefix=, e.g. "llama/"; empty for all). Walks
 * the listing's pages (1000 files each) and calls fn for each file, in name
 * order: its name relative to the root, size, ETag (with its quotes) and ok
 * (0 for a file the server found invalid and does not serve; 1 for one it
 * lists "corrupt", whose fetch fails on the wrong components). A non-zero
 * return from fn stops the walk (ZT_OK). Strings passed to fn live during
 * the call only. A server that lies is an error before fn sees the entry:
 * a cursor that an earlier page gave (compared by sha256, any length), a
 * name not after the one before (listed twice, or out of byte order), a
 * name that does not start with PREFIX: ZT_E_HTTP; more than
 * list_max_entries files or list_max_bytes bytes of names: ZT_E_LIMIT. */
typedef int (*zt_remote_list_fn)(void *ud, const char *name, uint64_t size, const char *etag,
                                 int ok);
ZT_REMOTE_API zt_status zt_remote_list(zt_remote *r, const char *url, zt_remote_list_fn fn,
                                       void *ud, zt_error *err);

/* ------------------------------------------------------------- S3 origins */

/* Credentials read from a file (zt_remote_s3_credentials_load). */
typedef struct zt_remote_s3_credentials {
    char access_key_id[256];
    char secret_access_key[256];
    char session_token[4096]; /* "" when none */
} zt_remote_s3_credentials;

/* Reads an S3 credentials file: lines "aws_access_key_id = ...",
 * "aws_secret_access_key = ..." and optionally "aws_session_token = ...",
 * blank lines and '#' or ';' comments, as in the [default] section of AWS's
 * shared credentials file (a "[default]" line is allowed; any other section
 * is ZT_E_ARG). The file must be a regular file that group and others can
 * neither read nor write (mode 0600 or 0400): ZT_E_ARG naming its mode
 * otherwise. Over 64 KiB, an unknown key, or a key given twice: ZT_E_ARG
 * naming the line. The secret never appears in a message. */
ZT_REMOTE_API zt_status zt_remote_s3_credentials_load(const char *path,
                                                      zt_remote_s3_credentials *out, zt_error *err);

/* Makes o an S3 session's options: the endpoint is `endpoint`, else
 * $AWS_ENDPOINT_URL (NULL: AWS itself); the region `region`, else
 * $AWS_REGION, else $AWS_DEFAULT_REGION, else us-east-1; the keys those of
 * credentials_file (read into *store, which must outlive the call that
 * copies o: zt_remote_new), else $AWS_ACCESS_KEY_ID, $AWS_SECRET_ACCESS_KEY
 * and $AWS_SESSION_TOKEN, else none (unsigned requests). One key without
 * the other is ZT_E_ARG. o points into the environment and *store. */
ZT_REMOTE_API zt_status zt_remote_s3_configure(zt_remote_options *o, const char *endpoint,
                                               const char *region, const char *credentials_file,
                                               zt_remote_s3_credentials *store, zt_error *err);

/* "s3://BUCKET/PREFIX" split: bucket (64 bytes) and *prefix (points into
 * url; "" for the whole bucket). ZT_E_ARG for another scheme or a bucket
 * name S3 would refuse (3 to 63 of a-z 0-9 . -). */
ZT_REMOTE_API zt_status zt_remote_s3_split(const char *url, char bucket[64], const char **prefix,
                                           zt_error *err);

/* The http(s) URL of an object of r's store (r an S3 session), for
 * zt_remote_pull, zt_remote_pull_object or zt_remote_open_in in r; the key
 * is percent-encoded as SigV4 wants it. *out is malloc'd (the caller frees
 * it). */
ZT_REMOTE_API zt_status zt_remote_s3_object_url(const zt_remote *r, const char *bucket,
                                                const char *key, char **out, zt_error *err);

/* Every object under s3://BUCKET/PREFIX, by ListObjectsV2 pages of
 * s3_max_keys keys (list-type=2, prefix, continuation-token), each page
 * parsed by expat (lib/remote/s3_listing.c) and checked as zt_remote_list
 * checks a ztensord listing: a continuation token given before, a key not
 * after the one before, a key outside the prefix: ZT_E_HTTP; more than
 * list_max_entries keys or list_max_bytes bytes of keys: ZT_E_LIMIT. fn
 * gets each key (the whole key, prefix included), its size, ETag (with its
 * quotes) and LastModified; non-zero stops the walk (ZT_OK). An error answer
 * names S3's code and message (NoSuchBucket, AccessDenied,
 * SignatureDoesNotMatch...): ZT_E_NOT_FOUND for 404, ZT_E_HTTP otherwise. */
typedef int (*zt_remote_s3_list_fn)(void *ud, const char *key, uint64_t size, const char *etag,
                                    const char *last_modified);
ZT_REMOTE_API zt_status zt_remote_s3_list(zt_remote *r, const char *url, zt_remote_s3_list_fn fn,
                                          void *ud, zt_error *err);

/* ------------------------------------------------------------------ pulls */

/* A whole remote file to a local path, byte-identical to the origin's
 * (docs/PULL.md, "zt pull"). The bytes go to PATH.ztpart, preallocated (a
 * full disk fails at once with ZT_E_NOSPACE), at their offsets: the
 * components through the same planner as zt_remote_read_many (chunks over N
 * connections, small neighbours in one request), each digest hashed in order
 * as its chunks land; the bytes between components (header, manifest,
 * padding, footer) in merged requests, checked at the end by opening the
 * result and comparing its manifest with the one pinned at open. Only then
 * fsync, rename to PATH, fsync of the directory.
 *
 * Resumable: PATH.ztpull (a small text file) records the pinned validator and
 * every verified component, durably (after an fdatasync of the data) once
 * per batch. A later pull of the same URL to the same PATH whose validator
 * still matches fetches only the components not recorded, and continues a
 * large component from its recorded prefix (hashed again from the disk);
 * otherwise it starts over. Both files are removed once PATH is published.
 *
 * Complete files are not fetched again: PATH carries an extended attribute
 * (user.ztensor.pull: the validator and PATH's mtime) once published, and a
 * later pull whose validator, size and mtime still match returns at once
 * with stats->skipped set (a filesystem without user xattrs pulls again).
 *
 * Symbolic links (dir_fd below): none is followed in the directory the pull
 * writes in; one where a file of the pull goes is an error naming it. */
#define ZT_REMOTE_PULL_DEFAULT_DIGEST_RETRIES 3
#define ZT_REMOTE_PULL_DEFAULT_RESTARTS 3
#define ZT_REMOTE_PULL_DEFAULT_BATCH (64u << 20)  /* bytes made durable at once */
#define ZT_REMOTE_PULL_DEFAULT_WINDOW (32u << 20) /* bytes landed ahead of the hashing */

typedef struct zt_remote_pull_options {
    size_t size;             /* sizeof(zt_remote_pull_options): set by the init call */
    unsigned connections;    /* 0: the session's */
    unsigned digest_retries; /* fetches again of a component whose digest failed */
    unsigned restarts;       /* the file changed at the origin: start over this often */
    const char *expect_etag; /* the ETag recorded at the start (from a listing), or NULL;
                                another one opened sets stats->changed */
    size_t batch_bytes;      /* bytes fetched between two state records (at most; a file
                                smaller than 8 batches is cut in 8, of 1 MiB or more) */
    /* Called from the pulling thread once the file is opened, before any
     * byte is fetched (done: bytes an earlier pull left verified on disk;
     * total: the file's size), then after each batch; may be NULL. */
    void (*progress)(void *ud, uint64_t done, uint64_t total);
    void *progress_ud;
    /* Flow control: at most about this many bytes landed but not yet hashed
     * or still in flight (the process's memory for the data); requests that
     * would run further ahead wait, and chunks are cut to window /
     * connections (256 KiB at least). 0: the default. */
    size_t window_bytes;
    /* Set to nonzero from anywhere (a SIGINT handler) to stop the pull soon:
     * it returns ZT_E_IO ("interrupted"), with everything made durable so
     * far recorded for a later pull. May be NULL. */
    const volatile sig_atomic_t *cancel;
    /* -1 (the default): path is a path as given, and its directory is opened
     * once as given. A directory fd (the caller's, not closed): path is
     * relative to it, and each directory on the way is opened without
     * following a symbolic link (none is created). Either way every file of
     * the pull (PATH, PATH.ztpart, PATH.ztpull) is named in that one
     * directory and never followed if a symbolic link: such a link is
     * ZT_E_IO naming it ("it is a symbolic link (not followed)"), new state
     * and partial files are created with O_EXCL, and PATH is published by a
     * rename inside the directory (a link at PATH is refused before the
     * pull starts; one planted during it is replaced, never written
     * through). */
    int dir_fd;
    /* zt_remote_pull_object only: the sha256 the bytes must hash to (what a
     * ztensord listing says of the file), or NULL. It comes before what the
     * server's headers say (Repr-Digest, x-amz-checksum-sha256, ETag). */
    const uint8_t *expect_sha256;
} zt_remote_pull_options;

typedef struct zt_remote_pull_stats {
    uint64_t size;             /* bytes of the file */
    uint64_t fetched;          /* bytes of components fetched (retries included) */
    uint64_t resumed;          /* bytes of components verified by an earlier pull */
    size_t verified;           /* components whose digest was checked */
    size_t unverified;         /* components without a digest */
    size_t objects_unverified; /* objects with a component without a digest */
    unsigned digest_retries;   /* components fetched again after a mismatch */
    unsigned restarts;         /* starts over because the origin changed the file */
    int changed;               /* the file was not at expect_etag, or changed during the pull */
    char etag[256];            /* the validator of the version written */
    int skipped; /* PATH was already this version, pulled complete earlier: nothing fetched */
} zt_remote_pull_stats;

ZT_REMOTE_API void zt_remote_pull_options_init(zt_remote_pull_options *o);
/* Pull url to path in session r. opt and stats may be NULL. Errors: those of
 * zt_remote_open and the reads; ZT_E_DIGEST_MISMATCH after digest_retries
 * (naming the object and component); ZT_E_CHANGED after `restarts`;
 * ZT_E_NOSPACE; ZT_E_IO. On failure PATH is untouched, and PATH.ztpart with
 * PATH.ztpull stay for a later pull. */
ZT_REMOTE_API zt_status zt_remote_pull(zt_remote *r, const char *url, const char *path,
                                       const zt_remote_pull_options *opt,
                                       zt_remote_pull_stats *stats, zt_error *err);

/* Any file (config.json, tokenizer.json...) of an S3 session's store, or a
 * ztensord plain file (url BASE/v1/files/NAME/raw), to path, byte-identical,
 * with what is said of it checked: opt->expect_sha256 (a listing's), else the
 * HEAD's Repr-Digest sha-256, else (asked for with x-amz-checksum-mode:
 * ENABLED) an x-amz-checksum-sha256 of the whole object (not a multipart
 * upload's "…-N"), else a ztensord ETag "sha256:<hex>" must equal the bytes'
 * sha256; in an S3 session, else an ETag of 32 hex digits (a single-part
 * upload's MD5) their MD5; with none the bytes are written as they come
 * (stats->unverified = 1; verified = 1 when checked). Written to
 * PATH.ztpart, fsynced, renamed to PATH, the directory fsynced: a mismatch
 * is ZT_E_DIGEST_MISMATCH (after digest_retries fetches again) and PATH is
 * untouched. The object's ETag is pinned (If-Match on every request); a
 * file published by an earlier pull at the same ETag, size and mtime
 * (user.ztensor.pull), or one already holding bytes of the sha256 claimed
 * (hashed again here), is skipped. opt->dir_fd, cancel and progress as for
 * zt_remote_pull. */
ZT_REMOTE_API zt_status zt_remote_pull_object(zt_remote *r, const char *url, const char *path,
                                              const zt_remote_pull_options *opt,
                                              zt_remote_pull_stats *stats, zt_error *err);

#ifdef __cplusplus
}
#endif
#endif /* ZTENSOR_REMOTE_H */
