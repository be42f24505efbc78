/*
 * Shared declarations of the zt tool's subcommands. Exit codes:
 *   0 success; 1 the file is invalid or a check failed; 2 usage error;
 *   3 system error (I/O, out of memory).
 */
#ifndef ZT_TOOL_H
#define ZT_TOOL_H

#include <stdio.h>
#include <ztensor/ztensor.h>
#include <ztensor/ztensor_remote.h>

enum { ZT_EXIT_OK = 0, ZT_EXIT_INVALID = 1, ZT_EXIT_USAGE = 2, ZT_EXIT_SYSTEM = 3 };

int cmd_info(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_get(int argc, char **argv);
int cmd_pack(int argc, char **argv);
int cmd_convert(int argc, char **argv);
int cmd_pull(int argc, char **argv);

/* Prints "zt CMD: FILE: message" and returns the exit code for the status. */
int tool_report(const char *cmd, const char *file, const zt_error *err);
/* Exit code for a library status. */
int tool_exit_for(zt_status st);
/* 1 if arg is -h or --help. */
int tool_is_help(const char *arg);
/* Write all bytes; 0 on success. */
int tool_write_all(int fd, const void *p, size_t n);
/* --digest: sha256, crc32c, xxh3 or none into *out; 0, or -1 (*out unchanged). */
int tool_parse_digest(const char *s, zt_digest_kind *out);
/* A size: a positive integer with an optional K, M or G suffix (binary, either
 * case), at most 1 TiB; 0, or -1 (*out unchanged). */
int tool_parse_size(const char *s, size_t *out);

/* ---- remote files (tool_remote.c) */
/* 1 for an http:// or https:// URL. */
int tool_is_url(const char *s);
/* The bearer token of the environment: ZT_TOKEN, else its alias
 * ZT_REMOTE_TOKEN; NULL when neither is set. */
const char *tool_token(void);
/* zt_remote_open with token (NULL or "": tool_token()) and options from the
 * environment (ZT_REMOTE_CA_FILE, ZT_REMOTE_TIMEOUT). */
zt_status tool_remote_open(const char *url, const char *token, zt_remote_file **rf, zt_error *err);

/* ---- zt pull's local names (tool_pull_names.c) */
/* 1 when a name from a listing (a ztensord's or an S3 store's) is safe under
 * DIR: not empty, not absolute, no empty, "." or ".." segment, no trailing
 * '/', no backslash, no segment over TOOL_PULL_SEGMENT_MAX bytes (room for
 * the ".ztpart" and ".ztpull" beside it within NAME_MAX). A NUL never gets
 * here: the listings' parsers refuse it. */
#define TOOL_PULL_SEGMENT_MAX 248
int tool_pull_safe_rel(const char *rel);
/* 1 when name is "<dir>/<stem>-<label>.zt" for root "<dir>/<stem>.zt": by v2's
 * positional convention (Appendix B), a shard that pulling root pulls too. */
int tool_pull_shard_of(const char *name, const char *root);
/* %XX decoded (as a server reads a URL's path); malloc'd, NULL when out of
 * memory. */
char *tool_url_unescape(const char *s);
/* A listed name below prefix (decoded): the part after it, or NULL when the
 * name does not start with prefix or the rest is not tool_pull_safe_rel. */
const char *tool_pull_rel(const char *name, const char *prefix);
/* "a/b", with one '/' between (none after an empty a); malloc'd, NULL when out
 * of memory. */
char *tool_path_join(const char *a, const char *b);

/* ---- zt pull's output directory (tool_pull_dir.c) */
/* DIR, created with its parents if missing, opened once (a link the user
 * gave is followed); -1 after a message on stderr. */
int tool_pull_top(const char *dir);
/* rel's last segment. */
const char *tool_pull_leaf(const char *rel);
/* The directory rel's file goes in, below top (DIR, named dir in messages):
 * each segment made if missing and opened without following a symbolic
 * link. An fd, or -1 with *err naming the segment (ZT_E_IO). */
int tool_pull_subdir(int top, const char *dir, const char *rel, zt_error *err);

/* ---- zt pull's limits (tool_pull_limits.c) */
/* Bytes per second every request of a pull keeps up over a window
 * (--stall-timeout, 30 s), or it is dropped and retried, and such retries
 * count: a server that sends a byte every 5 s fails a pull in about 4
 * minutes (7 windows of 30 s, and the backoff between them). */
#define TOOL_PULL_MIN_RATE 1024.0
typedef struct tool_pull_limits {
    uint64_t max_files, max_listing_bytes; /* a prefix's listing, at most */
    double timeout;                        /* seconds for the whole pull; 0: none */
    double min_rate;                       /* bytes per second over a window; 0: off */
    double window;                         /* seconds: zt_remote_options.stall_timeout */
    double deadline;                       /* on zt_remote_clock(), from _start; 0: none */
} tool_pull_limits;
/* The defaults, then the environment (ZT_PULL_MAX_FILES,
 * ZT_PULL_MAX_LISTING_BYTES, ZT_TIMEOUT, ZT_PULL_MIN_RATE,
 * ZT_PULL_STALL_TIMEOUT; a bad value there is said and ignored). */
void tool_pull_limits_init(tool_pull_limits *l);
/* The pull starts now: the deadline is set from --timeout. */
void tool_pull_limits_start(tool_pull_limits *l);
/* 1 once the deadline has passed. */
int tool_pull_limits_passed(const tool_pull_limits *l);
/* 1 when e is a call ended by the deadline (passed, or before the next
 * retry could run). */
int tool_pull_limits_hit(const zt_error *e);
/* Flag a with value v (NULL when none): 1 taken; 0 not one of these flags;
 * -1 a bad value (said on stderr). */
int tool_pull_limits_arg(tool_pull_limits *l, const char *a, const char *v);
/* Into the options of every session of the pull. */
void tool_pull_limits_apply(const tool_pull_limits *l, zt_remote_options *o);

/* ---- zt pull --tensors/--exclude-tensors (tool_pull_select.c); --include and
 * --exclude (file names) use the same globs and tool_pull_selected */
typedef struct tool_globs {
    const char **include, **exclude;
    size_t ninclude, nexclude;
} tool_globs;
typedef struct tool_select_stats {
    size_t objects, verified, unverified, objects_unverified;
    uint64_t bytes, resumed; /* resumed: read from DEST.ztsel, kept by an earlier run */
    unsigned retries;
    int skipped; /* the same selection was finished before (tool_pull_skip.c) */
} tool_select_stats;
/* 1 when an object named `name` is chosen: it matches an --include (or there
 * is none) and no --exclude (fnmatch). */
int tool_pull_selected(const char *name, const tool_globs *g);
/* The chosen objects of the remote file at url, with the file's attributes,
 * as a new .zt named `name` in the directory dfd (written to a new
 * temporary file there, published by renameat; nothing there is followed if
 * a symbolic link). Resumable through name.ztsel/; stops with ZT_E_IO
 * between objects once *cancel is set. ZT_E_ARG, naming the patterns and
 * writing nothing, when g keeps no object of the file. */
zt_status tool_pull_select(zt_remote *r, const char *url, int dfd, const char *name,
                           const tool_globs *g, const volatile sig_atomic_t *cancel,
                           tool_select_stats *s, zt_error *err);
/* zt pull --json, JSON Lines on stdout (tool_pull_json.c): a string
 * escaped; an error object; one file's event (s, err may be NULL); a
 * listing's failure. Each line is flushed. */
void tool_json_str(const char *s);
void tool_json_error(const zt_error *err, const char *fallback_url);
void tool_pull_json_file(const char *file, const char *url, const char *outcome,
                         const zt_remote_pull_stats *s, const zt_error *err);
void tool_pull_json_listing(const char *url, const zt_error *err);
/* tool_pull_keep.c: the .zt zt_name in dfd written as safetensors to out_fd
 * (fsynced), for a --tensors selection of a .safetensors source. */
zt_status tool_pull_zt_to_safetensors(int dfd, const char *zt_name, int out_fd, zt_error *err);
/* tool_pull_skip.c: the key of a selection of f (the objects selected(name, g)
 * keeps) written as format ("zt",
 * "safetensors") into out (0: none, a chosen component has no digest); the
 * mark of a file published with it; 1 when name in dfd is marked so and
 * unwritten since. */
int tool_sel_key(const zt_file *f, int (*selected)(const char *object, const tool_globs *g),
                 const tool_globs *g, const char *format, char *out, size_t cap);
void tool_sel_mark(int fd, const char *key);
int tool_sel_done(int dfd, const char *name, const char *key);

/* ---- zt pull's record of complete pulls, for --offline (tool_pull_record.c) */
typedef struct tool_pull_entry {
    const char *rel;       /* below DIR */
    int zt;                /* a .zt: checked by its own digests */
    const uint8_t *sha256; /* else the origin's sha256 of it, or NULL: hashed on disk */
} tool_pull_entry;
/* KEY (32 hex) of a command: its URLs and selection, as n strings. */
void tool_pull_record_key(const char *const *args, size_t n, char out[33]);
/* DIR/.ztpull-record/KEY listing the n files (complete on disk): 0, or -1. */
int tool_pull_record_write(int top, const char *key, const tool_pull_entry *e, size_t n);
/* Checks every file DIR/.ztpull-record/KEY lists, saying on stderr what is missing
 * or corrupt: -1 no such record, else 0 with *nfiles and *nbad set. */
int tool_pull_record_check(int top, const char *dir, const char *key, size_t *nfiles, size_t *nbad);

/* ---- zt pack's arguments (tool_pack_spec.c) */
typedef struct tool_pack_spec {
    char *name;       /* points into the argument */
    zt_dtype dtype;   /* storage dtype */
    const char *type; /* logical type, or NULL */
    size_t ndim;
    uint64_t shape[ZT_MAX_NDIM];
    const char *path; /* RAWFILE, "-" for standard input */
} tool_pack_spec;
/* NAME=DTYPE:SHAPE:RAWFILE into *sp, pointing into arg, which it modifies; v2
 * (--format v2) admits v2's bool, f8_e8m0 and f4_e2m1. 0, or -1 (a bad dtype
 * or shape also says so on stderr). */
int tool_pack_parse_spec(char *arg, int v2, tool_pack_spec *sp);

/* ---- zt convert (tool_convert.c, tool_export.c, tool_progress.c) */
typedef struct tool_progress {
    uint64_t total, done, last_ns;
    int on, shown;
} tool_progress;
/* A bar on stderr when stderr is a terminal; silent otherwise. */
void tool_progress_init(tool_progress *p, uint64_t total);
void tool_progress_add(tool_progress *p, uint64_t n);
void tool_progress_end(tool_progress *p);
/* The bar's text, "[####    ]  50% 1.0 / 2.0 MiB" (40 cells, whole percents
 * rounded down; done > total shows more than 100%). */
#define TOOL_PROGRESS_LINE 128
void tool_progress_format(char *buf, size_t cap, uint64_t done, uint64_t total);
typedef zt_status (*tool_chunk_fn)(void *ud, const void *data, size_t len, zt_error *err);
/* Streams the decoded bytes of c to fn in chunks of a few MiB. */
zt_status tool_copy_component(const zt_file *f, const zt_component *c, tool_chunk_fn fn, void *ud,
                              tool_progress *p, zt_error *err);
/* zt convert IN.zt -o OUT.safetensors */
int tool_export_safetensors(const char *in, const char *out);
/* zt convert DIR -o OUTDIR (tool_convert_dir.c) */
int tool_convert_dir(const char *in, const char *out);

/* ---- safetensors files into a directory (tool_st_out.c): zt convert and zt
 * pull --format safetensors. Each is written to a temporary name in dfd,
 * fsynced, renamed to leaf, dfd fsynced; on failure leaf is untouched. */
#define TOOL_ST_INDEX "model.safetensors.index.json"
/* A new temporary file ".zt-st-XXXXXXXX.tmp" in dfd (its name into tmp), or
 * -1 with errno. */
/* Set err (code, the formatted message) and return code. */
zt_status tool_st_fail(zt_error *err, zt_status code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int tool_st_tmp(int dfd, char *tmp, size_t cap);
/* fsync fd, rename tmp to leaf in dfd, fsync dfd; tmp removed on failure. */
zt_status tool_st_publish(int dfd, int fd, const char *tmp, const char *leaf, zt_error *err);
/* f's view v (zt_st_view_new(f)) as dfd/leaf: the header, then each
 * tensor's decoded bytes. p (may be NULL) counts the tensor bytes. */
struct zt_st_view;
zt_status tool_st_write_view(const zt_file *f, const struct zt_st_view *v, int dfd,
                             const char *leaf, tool_progress *p, zt_error *err);
/* n bytes as dfd/leaf. */
zt_status tool_st_write_bytes(int dfd, const char *leaf, const void *p, size_t n, zt_error *err);
/* dfd/model.safetensors.index.json for the n safetensors files
 * dir/leaves[i] (dir: dfd's path), as ztensord serves it: zt_st_index_json
 * of their views, which are the files themselves. */
zt_status tool_st_write_index(int dfd, const char *dir, const char *const *leaves, size_t n,
                              zt_error *err);
/* ---- zt pull --format safetensors (tool_pull_view.c) */
/* The job of a listed file, as the view planning sees it. */
typedef struct tool_view_job {
    const char *rel; /* its name below DIR */
    char *dest;      /* DIR/rel; a view's is replaced by DIR/STEM.safetensors (malloc'd) */
    int plain;       /* a plain file (config.json...): pulled as it is */
    int shard;       /* a v2 shard that its root's pull brings */
    int view;        /* out: pulled as its view */
    int drop;        /* out: not pulled (a shard; a .zt whose view name is a real file) */
    int ok, sharded; /* after the pull: it succeeded; the view is a sharded v2 root's */
} tool_view_job;
/* Which jobs become views (STEM.zt, STEM.alt), which are dropped (said on
 * stderr when a real file wins the view's name). 0, or an exit code. */
int tool_pull_view_plan(tool_view_job *v, size_t n);
/* url (a tensor file whose leaf name is leaf, in the directory dfd) as its
 * view, at vdest (DIR/.../STEM.safetensors, for messages and paths): pulled
 * and verified by zt_remote_pull(po) into a staging directory beside it,
 * then laid out by tool_st_write_view. *sharded: a v2 root with shards. On
 * failure vdest is untouched; the staging directory stays for the next run
 * unless the view cannot be made (an object safetensors cannot express,
 * named in err). */
zt_status tool_pull_view(zt_remote *r, const char *url, int dfd, const char *vdest,
                         const char *leaf, const zt_remote_pull_options *po,
                         zt_remote_pull_stats *s, int *sharded, zt_error *err);
/* model.safetensors.index.json in each directory of the pull whose tensor
 * files form one model (two or more, or a sharded v2 root), all pulled, and
 * no real index listed. top: DIR (named dir). 0, or an exit code. */
int tool_pull_view_indexes(int top, const char *dir, tool_view_job *v, size_t n);
/* "d/STEM.safetensors" for "d/STEM.zt" or "d/STEM.alt" (malloc'd), the name
 * ztensord lists the view under; NULL for any other name (or no memory). */
char *tool_st_view_name(const char *rel);

#endif
