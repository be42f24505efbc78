/*
 * zt pull: remote files to a local directory, byte-identical to the origin,
 * every digest checked as the bytes arrive, resumable (libztensor-remote's
 * zt_remote_pull does the work; this file is the command line: URLs and
 * prefixes, the job list, worker threads, progress and the summary).
 */
#include "tool.h"

#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <ztensor/ztensor_remote_experimental.h>

static const char k_help[] =
    "NAME\n"
    "    zt pull - download remote files, verified, resumable\n"
    "\n"
    "SYNOPSIS\n"
    "    zt pull URL... [-o DIR] [--connections N] [--chunk-size BYTES]\n"
    "            [--jobs N] [--token TOKEN] [--quiet] [--json]\n"
    "            [--format safetensors]\n"
    "            [--include GLOB]... [--exclude GLOB]...\n"
    "            [--tensors GLOB]... [--exclude-tensors GLOB]...\n"
    "            [--max-files N] [--max-listing-bytes BYTES]\n"
    "            [--timeout SECONDS] [--min-rate BYTES] [--stall-timeout SECONDS]\n"
    "            [--offline] [--progress]\n"
    "    zt pull s3://BUCKET/PREFIX... [-o DIR] [--s3-endpoint URL] [--s3-region R]\n"
    "            [--s3-credentials FILE] [--s3-max-keys N] [the options above]\n"
    "\n"
    "DESCRIPTION\n"
    "    URL is one file (a ztensord file URL, or a .zt/.safetensors URL on any\n"
    "    server that answers Range requests) or a ztensord prefix ending in '/'\n"
    "    (http://host:7070/v1/files/llama/: every tensor file under llama/,\n"
    "    listed at the start with its ETag, and its plain files such as\n"
    "    config.json and tokenizer.json). Files are written under DIR (default .) with\n"
    "    their names relative to the prefix, byte-identical to the origin's:\n"
    "    a plain file from its /raw, checked against the sha256 its listed\n"
    "    ETag names (else the server's Repr-Digest; one not hashed yet at the\n"
    "    server is written unchecked, and a line says so);\n"
    "    each through NAME.ztpart, renamed only once every component digest and\n"
    "    the manifest are checked. NAME.ztpull beside it records what is\n"
    "    verified (and the prefix on disk of a large component): after\n"
    "    Ctrl-C, kill, a dropped network or a full disk, the same command\n"
    "    continues where it stopped (or starts that file over if it changed at\n"
    "    the origin). A file changed at the origin during the pull is fetched\n"
    "    again at its new version, and the pull says so. A file pulled complete\n"
    "    earlier is skipped: same validator, size and mtime (the extended\n"
    "    attribute user.ztensor.pull), or, after a touch at the origin or from\n"
    "    another replica, the same content as the origin's digests say (every\n"
    "    component's digest in the manifest, user.ztensor.content; a plain\n"
    "    file's sha256); a finished --tensors selection too. A zTensor v2\n"
    "    root whose manifest names shards is pulled with them (NAME-SHARD.zt\n"
    "    beside it),\n"
    "    as one version: every file verified (each shard by the root's\n"
    "    whole-file digest) before any is renamed into place. Bytes landed\n"
    "    ahead of the hashing are bounded (32 MiB in all, in the page cache,\n"
    "    not in the process): memory is about the files' models. Nothing\n"
    "    below DIR is followed if a symbolic link (DIR itself may be one): a\n"
    "    link where the pull would write is an error naming it.\n"
    "\n"
    "    s3://BUCKET/PREFIX pulls from an S3 object store (AWS, MinIO, Ceph\n"
    "    RGW...): every object under PREFIX/ (PREFIX itself when it is one\n"
    "    object), listed by ListObjectsV2. .zt objects are pulled as above\n"
    "    (signed range requests, every component digest checked); every other\n"
    "    object (config.json, tokenizer.json, .safetensors) is checked against\n"
    "    the store's x-amz-checksum-sha256 or its 32-hex (MD5) ETag, and written\n"
    "    as it comes when it has neither. A key with an empty, '.' or '..'\n"
    "    segment, a leading '/', a backslash or a segment over 248 bytes is\n"
    "    refused. Requests are signed (AWS SigV4) with AWS_ACCESS_KEY_ID,\n"
    "    AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN, or the file of\n"
    "    --s3-credentials; without keys they go unsigned (a public bucket).\n"
    "    s3:// and http(s):// URLs go in separate commands.\n"
    "\n"
    "OPTIONS\n"
    "    -o DIR             output directory (created if missing). With one\n"
    "                       file URL, -o OUT ending as the URL's name does\n"
    "                       (-o name.zt for .../file.zt) and not an existing\n"
    "                       directory names the file itself\n"
    "    --connections N    connections in all (default 8)\n"
    "    --chunk-size B     bytes per range request of large components\n"
    "                       (default 16M, cut to 32M / connections; K, M,\n"
    "                       G suffixes)\n"
    "    --jobs N           files pulled at once (default 4)\n"
    "    --include GLOB     pull only files whose name (below the prefix, or\n"
    "                       the URL's file name) matches (repeatable; fnmatch,\n"
    "                       '*' crosses '/', as hf download's --include)\n"
    "    --exclude GLOB     skip files whose name matches (repeatable).\n"
    "                       A selection that leaves no file is an error\n"
    "                       (exit status 2) naming its patterns.\n"
    "    --tensors GLOB     keep only objects whose name matches (repeatable)\n"
    "    --exclude-tensors GLOB\n"
    "                       drop objects whose name matches (repeatable)\n"
    "                       With either, each file is written anew with only\n"
    "                       those objects and the file's attributes, in its\n"
    "                       own format (.zt 1.x as 1.2, v2 as v2, .safetensors\n"
    "                       as safetensors; ALT is refused) (each\n"
    "                       component's digest checked; resumable: checked\n"
    "                       components are kept in NAME.ztsel/ until the end).\n"
    "                       One that keeps no object of a file is an error\n"
    "                       (exit status 2) naming its patterns; nothing is\n"
    "                       written.\n"
    "    --token T          bearer token (default: $ZT_TOKEN, else its alias\n"
    "                       $ZT_REMOTE_TOKEN)\n"
    "    --max-files N      a prefix's listing holds at most N files (default\n"
    "                       100000; $ZT_PULL_MAX_FILES)\n"
    "    --max-listing-bytes B\n"
    "                       and at most B bytes of names (default 64M;\n"
    "                       $ZT_PULL_MAX_LISTING_BYTES). A listing over either,\n"
    "                       or one that repeats a cursor or a name or lists a\n"
    "                       name outside the prefix, fails before any file is\n"
    "                       pulled.\n"
    "    --timeout S        the whole pull (listing, every file, retries and\n"
    "                       waits) ends within S seconds, or fails with exit\n"
    "                       status 3 and what is verified kept (default 0:\n"
    "                       none; $ZT_TIMEOUT). Set it in init containers.\n"
    "    --min-rate B       bytes per second each request must receive over\n"
    "                       a --stall-timeout window, or it is dropped and\n"
    "                       retried, and such retries count (default 1K; 0\n"
    "                       off; $ZT_PULL_MIN_RATE): a server that drips a\n"
    "                       byte every 5 s fails the pull in about 4\n"
    "                       minutes, never hours\n"
    "    --stall-timeout S  that window, and the longest silence of a\n"
    "                       request (default 30, 1 to 3600;\n"
    "                       $ZT_PULL_STALL_TIMEOUT)\n"
    "    --s3-endpoint URL  the store's base URL, addressed path-style\n"
    "                       (URL/BUCKET/KEY; default $AWS_ENDPOINT_URL, else\n"
    "                       AWS: https://BUCKET.s3.REGION.amazonaws.com)\n"
    "    --s3-region R      the region signed for (default $AWS_REGION, else\n"
    "                       $AWS_DEFAULT_REGION, else us-east-1)\n"
    "    --s3-credentials FILE\n"
    "                       keys from FILE instead of the environment: lines\n"
    "                       aws_access_key_id = ..., aws_secret_access_key =\n"
    "                       ..., optionally aws_session_token = ... ('#'\n"
    "                       comments, an optional [default] line); mode 0600\n"
    "                       or 0400, or it is refused (exit status 2)\n"
    "    --s3-max-keys N    keys per listing page (1 to 1000, default 1000)\n"
    "    --format safetensors\n"
    "                       write each tensor file STEM.zt (or .alt) as\n"
    "                       STEM.safetensors, its safetensors view (what\n"
    "                       `zt convert STEM.zt -o STEM.safetensors` writes,\n"
    "                       ztensord's /v1/files/STEM.zt/safetensors), and\n"
    "                       a model's model.safetensors.index.json (two or\n"
    "                       more tensor files in a directory, or a sharded\n"
    "                       v2 root; as ztensord serves it): the stored file\n"
    "                       is pulled and verified as above into\n"
    "                       .ztview-HASH/ beside it, then laid out (zstd\n"
    "                       decoded) and removed. Plain files and\n"
    "                       .safetensors files come as they are; a view the\n"
    "                       listing names is not fetched. A file holding an\n"
    "                       object safetensors cannot express fails, named\n"
    "                       (exit status 1), and no index is written for\n"
    "                       its directory; the other files are pulled\n"
    "    --offline          no request at all (also $ZT_OFFLINE=1, as\n"
    "                       HF_HUB_OFFLINE): check on disk the files of the\n"
    "                       last complete pull of the same URLs and selection\n"
    "                       (recorded in DIR/.ztpull-record/; .zt files by their\n"
    "                       component digests, others by their sha256): exit\n"
    "                       status 0 when all are there and verified, else 1\n"
    "                       naming each file missing or corrupt. Without it,\n"
    "                       an origin that cannot be reached (network errors\n"
    "                       only) with every such file verified on disk is\n"
    "                       exit status 0 and a warning\n"
    "    --quiet            no progress display\n"
    "    --progress         the progress display even when stderr is no\n"
    "                       terminal (then a line each time). On a terminal\n"
    "                       it is on unless --quiet or --json. It is redrawn\n"
    "                       twice a second whatever the bytes do: bytes done /\n"
    "                       total (each file's size from its first answer),\n"
    "                       those resumed (left on disk by an earlier pull)\n"
    "                       and skipped (files complete already) apart, the\n"
    "                       rate of the bytes received in this run only, the\n"
    "                       ETA and the files done. The last line says how\n"
    "                       much was resumed, fetched and skipped\n"
    "    --json             JSON Lines on stdout, each flushed: one event per\n"
    "                       file as it ends ({\"event\":\"file\",\"file\",\"url\",\n"
    "                       \"outcome\": pulled, skipped, failed, interrupted or\n"
    "                       not_started, byte counts, and for a failure\n"
    "                       \"error\":{\"code\",\"message\",\"url\"}), a\n"
    "                       listing's failure ({\"event\":\"listing\",...}),\n"
    "                       then a summary ({\"event\":\"summary\",\n"
    "                       \"interrupted\":..., ...}), after SIGINT or SIGTERM\n"
    "                       too (not after a second signal, which exits at\n"
    "                       once). Errors still go to stderr as text\n"
    "\n"
    "EXIT STATUS\n"
    "    0 every file pulled; 1 a digest still failed after retries, an\n"
    "    invalid file, or a listing over its caps; 2 usage error; 3 network,\n"
    "    HTTP or I/O error, --timeout passed, a server too slow, or a file\n"
    "    that kept changing; 4 no space left on the device; 130 interrupted\n"
    "    by SIGINT or SIGTERM (what is verified is kept; a second signal exits\n"
    "    at once).\n";

#define ZT_EXIT_NOSPACE 4
#define ZT_EXIT_INTERRUPTED 130 /* 128 + SIGINT, as shells report it */

/* Set by SIGINT or SIGTERM: every pull stops at its next chunk of bytes,
 * finishes making durable what it has, and the command exits 130. */
static volatile sig_atomic_t g_stop;

static void on_signal(int sig)
{
    (void)sig;
    if (g_stop) /* a second one: the user will not wait (a stalled request) */
        _exit(ZT_EXIT_INTERRUPTED);
    g_stop = 1;
}
/* Bytes landed ahead of the hashing, in all: the data's share of memory. */
#define PULL_WINDOW (32u << 20)

/* What a pull gives back: made when the job starts, so that a listing's
 * jobs waiting to start cost their names only (a zt_error is 1.2 KB). */
typedef struct job_out {
    zt_remote_pull_stats stats;
    zt_error err;
} job_out;
static const job_out k_nomem = {.err = {.code = ZT_E_NOMEM, .message = "out of memory"}};

typedef struct job {
    char *url, *dest, *etag; /* etag: from the listing, or NULL */
    char *rel;               /* dest below DIR: walked by fds (tool_pull_dir.c) */
    int plain;               /* no tensor file (an S3 object that is no .zt, a ztensord's
                                config.json): zt_remote_pull_object */
    int has_sha256;          /* the listing's ETag "sha256:<hex>" said what its bytes hash to */
    uint8_t sha256[32];
    int view, view_sharded; /* --format safetensors: written as its view (tool_pull_view.c) */
    job_out *o;             /* NULL until the job starts; &k_nomem when none could be had */
    zt_status st;
    uint64_t done;    /* bytes on disk, for the progress display */
    uint64_t listed;  /* its size in the listing (0: not listed) */
    uint64_t total;   /* its size, from the first answer (the first progress call) */
    uint64_t resumed; /* bytes an earlier pull left verified (the first progress call) */
    int started;      /* the first progress call came */
    int finished;
    zt_remote *sess; /* while it runs: its worker's session, received bytes then */
    uint64_t base;
} job;

typedef struct run {
    job *jobs;
    size_t n, cap, next, finished;
    size_t phase2; /* jobs from here on wait until those before are finished */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int top;         /* DIR, opened once */
    const char *dir; /* its name, for messages */
    zt_remote_options ropt;
    unsigned conns_each;
    size_t window_each; /* PULL_WINDOW shared by the files pulled at once */
    tool_globs globs;
    int progress;
    double t0, last_draw;
    uint64_t total;
    /* The display, once a second at least (tick): bytes received by the
     * workers' sessions (live ones in sess, ended ones in gone). */
    zt_remote **sess;
    size_t nsess;
    uint64_t gone;
    int tty, tick_stop;
    pthread_cond_t tick;
    int timed_out; /* a failure was the deadline's (--timeout) */
    int st_view;   /* --format safetensors */
    int net_down;  /* the listing failed for the network (ZT_E_NETWORK) */
    int json;      /* --json: an event per file (tool_pull_json.c) */
} run;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int add_job(run *R, const char *url, const char *rel, const char *etag)
{
    if (R->n == R->cap) {
        size_t cap = R->cap ? 2 * R->cap : 16;
        job *j = realloc(R->jobs, cap * sizeof(*j));
        if (!j)
            return -1;
        R->jobs = j;
        R->cap = cap;
    }
    job *j = &R->jobs[R->n];
    memset(j, 0, sizeof(*j));
    j->url = strdup(url);
    j->rel = strdup(rel);
    j->dest = tool_path_join(R->dir, rel);
    j->etag = etag ? strdup(etag) : NULL;
    if (!j->url || !j->rel || !j->dest || (etag && !j->etag)) {
        free(j->url), free(j->rel), free(j->dest), free(j->etag);
        return -1;
    }
    R->n++;
    return 0;
}

typedef struct list_ctx {
    run *R;
    const char *base; /* …/v1/files/ */
    const char *prefix;
    /* as the server matches names: %XX decoded */ /* bytes of the prefix's directory part */
    size_t skipped;
    int bad;
} list_ctx;

/* Does name end as a tensor file's (.zt, .safetensors, .alt)? A server lists
 * every file of a directory; this pull fetches and verifies tensor files. */
static bool tensor_name(const char *name)
{
    static const char *const exts[] = {".zt", ".safetensors", ".alt"};
    size_t n = strlen(name);
    for (size_t i = 0; i < sizeof(exts) / sizeof(exts[0]); i++) {
        size_t e = strlen(exts[i]);
        if (n >= e && !strcmp(name + n - e, exts[i]))
            return true;
    }
    return false;
}

/* A ztensord's ETag of hashed bytes, "sha256:<64 hex>" with its quotes, into out. */
static int etag_sha256(const char *etag, uint8_t out[32])
{
    if (!etag || strlen(etag) != 73 || strncmp(etag, "\"sha256:", 8) || etag[72] != '"')
        return 0;
    for (int i = 0; i < 32; i++) {
        unsigned v;
        if (!isxdigit((unsigned char)etag[8 + 2 * i]) ||
            !isxdigit((unsigned char)etag[9 + 2 * i]) || sscanf(etag + 8 + 2 * i, "%2x", &v) != 1)
            return 0;
        out[i] = (uint8_t)v;
    }
    return 1;
}

/* The last job added is a plain file of a ztensord: its bytes at URL/raw,
 * checked against the sha256 its listed ETag names (when hashed). */
static int make_plain(run *R, const char *etag)
{
    job *j = &R->jobs[R->n - 1];
    size_t n = strlen(j->url);
    char *raw = malloc(n + 5);
    if (!raw)
        return -1;
    memcpy(raw, j->url, n);
    memcpy(raw + n, "/raw", 5);
    free(j->url);
    j->url = raw;
    j->plain = 1;
    j->has_sha256 = etag_sha256(etag, j->sha256);
    return 0;
}

static int on_entry(void *ud, const char *name, uint64_t size, const char *etag, int ok)
{
    list_ctx *L = ud;
    if (!ok) {
        fprintf(stderr, "zt pull: %s: skipped: the server does not serve it (invalid)\n", name);
        L->skipped++;
        return 0;
    }
    const char *rel = tool_pull_rel(name, L->prefix);
    if (!rel) { /* outside the prefix, or a name that would leave DIR */
        fprintf(stderr, "zt pull: refusing the listed name \"%s\" (prefix \"%s\")\n", name,
                L->prefix);
        L->bad = 1;
        return 1;
    }
    char *esc = malloc(strlen(name) * 3 + 1), *p = esc;
    for (const unsigned char *s = (const unsigned char *)name; esc && *s; s++) {
        if ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
            strchr("-._~/", *s))
            *p++ = (char)*s;
        else
            p += sprintf(p, "%%%02X", *s);
    }
    if (esc)
        *p = 0;
    char *url = esc ? tool_path_join(L->base, esc) : NULL;
    int rc = url ? add_job(L->R, url, rel, etag) : -1;
    if (!rc && !tensor_name(name)) /* config.json, tokenizer.json, README... */
        rc = make_plain(L->R, etag);
    L->R->total += size;
    L->R->jobs[L->R->n - 1].listed = size;
    free(esc);
    free(url);
    if (rc)
        L->bad = 1;
    return rc ? 1 : 0;
}

static int by_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* "<head>.zt" (head: the first k bytes of name) against s, as strcmp would. */
static int cmp_root(const char *name, size_t k, const char *s)
{
    int c = strncmp(name, s, k);
    if (c)
        return c;
    size_t n = strnlen(s, k);
    return n < k ? 1 : strcmp(".zt", s + k);
}

/* Is dest a shard of another job's dest? Its roots by the positional
 * convention end where a '-' of its last segment begins: each is looked up
 * in the sorted names (at most 8 of them: a label with more dashes is not a
 * shard's here), so a listing of N names costs N log N, not N^2. */
static int is_shard(const char *dest, const char **sorted, size_t n)
{
    size_t len = strlen(dest);
    if (len < 4 || strcmp(dest + len - 3, ".zt"))
        return 0;
    const char *leaf = strrchr(dest, '/'), *end = dest + len - 3;
    int tries = 0;
    for (const char *p = leaf ? leaf + 1 : dest; p + 1 < end && tries < 8; p++) {
        if (*p != '-')
            continue;
        tries++;
        size_t lo = 0, hi = n, k = (size_t)(p - dest);
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            int c = cmp_root(dest, k, sorted[mid]);
            if (!c)
                return tool_pull_shard_of(dest, sorted[mid]);
            if (c < 0)
                hi = mid;
            else
                lo = mid + 1;
        }
    }
    return 0;
}

/* A prefix may list a v2 root and its shards, which the root's pull pulls
 * too: those names go last, after every other file is finished, when they
 * are found complete (skipped) rather than written twice at once. */
static void shards_last(run *R)
{
    const char **sorted = malloc((R->n ? R->n : 1) * sizeof(*sorted));
    job *order = malloc((R->n ? R->n : 1) * sizeof(*order));
    R->phase2 = R->n;
    if (!sorted || !order) { /* all at once: a shard may be written twice, still verified */
        free(sorted);
        free(order);
        return;
    }
    for (size_t i = 0; i < R->n; i++)
        sorted[i] = R->jobs[i].dest;
    qsort(sorted, R->n, sizeof(*sorted), by_str);
    size_t k = 0, m = 0;
    unsigned char *shard = calloc(R->n ? R->n : 1, 1);
    for (size_t i = 0; shard && i < R->n; i++)
        shard[i] = (unsigned char)is_shard(R->jobs[i].dest, sorted, R->n);
    for (size_t i = 0; shard && i < R->n; i++) /* stable: keeps the listing's order */
        if (!shard[i])
            order[k++] = R->jobs[i];
    m = k;
    for (size_t i = 0; shard && i < R->n; i++)
        if (shard[i])
            order[m++] = R->jobs[i];
    if (shard && R->n) {
        memcpy(R->jobs, order, R->n * sizeof(*order));
        R->phase2 = k;
    }
    free(shard);
    free(sorted);
    free(order);
}

/* --format safetensors: the jobs as tool_pull_view.c sees them; NULL when out of memory. */
static tool_view_job *view_jobs(const run *R)
{
    tool_view_job *v = calloc(R->n ? R->n : 1, sizeof(*v));
    for (size_t i = 0; v && i < R->n; i++)
        v[i] = (tool_view_job){.rel = R->jobs[i].rel,
                               .dest = R->jobs[i].dest,
                               .plain = R->jobs[i].plain,
                               .shard = i >= R->phase2,
                               .view = R->jobs[i].view,
                               .ok = R->jobs[i].o && !R->jobs[i].st,
                               .sharded = R->jobs[i].view_sharded};
    return v;
}

/* --format safetensors: which jobs are views (tool_pull_view.c); shards
 * (after phase2) and a .zt whose view name a real file has are dropped. */
static int view_plan(run *R)
{
    tool_view_job *v = view_jobs(R);
    if (!v)
        return ZT_EXIT_SYSTEM;
    int rc = tool_pull_view_plan(v, R->n);
    size_t k = 0;
    for (size_t i = 0; i < R->n; i++) {
        job *j = &R->jobs[i];
        if (v[i].dest != j->dest)
            free(j->dest), j->dest = v[i].dest;
        j->view = v[i].view;
        if (!v[i].drop)
            R->jobs[k++] = *j;
        else
            free(j->url), free(j->rel), free(j->dest), free(j->etag);
    }
    R->n = R->phase2 = k;
    free(v);
    return rc;
}

/* --format safetensors: the models' index files, once every file is pulled. */
static int view_indexes(run *R)
{
    tool_view_job *v = view_jobs(R);
    if (!v)
        return ZT_EXIT_SYSTEM;
    int rc = tool_pull_view_indexes(R->top, R->dir, v, R->n);
    free(v);
    return rc;
}

/* An S3 listing's keys: below PREFIX/ (or PREFIX when it ends in '/' or is
 * empty), or PREFIX itself (one object); a key that merely starts with
 * PREFIX ("llama2/" for "llama") is not asked for. */
typedef struct s3_ctx {
    run *R;
    zt_remote *session;
    const char *bucket, *prefix, *as;
    int dir; /* the prefix names a directory: it is "" or ends in '/' */
    int bad;
} s3_ctx;

static int is_zt(const char *name)
{
    size_t n = strlen(name);
    return n > 3 && !strcmp(name + n - 3, ".zt");
}

static int on_s3_key(void *ud, const char *key, uint64_t size, const char *etag,
                     const char *last_modified)
{
    s3_ctx *C = ud;
    (void)last_modified;
    size_t n = strlen(C->prefix);
    const char *rel;
    if (C->dir)
        rel = key + n;
    else if (!strcmp(key, C->prefix))
        rel = C->as ? C->as : tool_pull_leaf(key);
    else if (key[n] == '/')
        rel = key + n + 1;
    else
        return 0;
    if (!tool_pull_safe_rel(rel)) { /* a key that would leave DIR */
        fprintf(stderr, "zt pull: refusing the listed key \"%s\" (prefix \"%s\")\n", key,
                C->prefix);
        C->bad = 1;
        return 1;
    }
    char *url = NULL;
    zt_error err;
    if (zt_remote_s3_object_url(C->session, C->bucket, key, &url, &err) ||
        add_job(C->R, url, rel, etag)) {
        free(url);
        C->bad = 1;
        return 1;
    }
    free(url);
    C->R->jobs[C->R->n - 1].plain = !is_zt(key);
    C->R->total += size;
    C->R->jobs[C->R->n - 1].listed = size;
    return 0;
}

/* The jobs of s3://BUCKET/PREFIX. */
static int plan_s3(run *R, zt_remote *session, const char *url, const char *as)
{
    char bucket[64];
    const char *prefix;
    zt_error err;
    if (zt_remote_s3_split(url, bucket, &prefix, &err))
        return tool_report("pull", url, &err), ZT_EXIT_USAGE;
    size_t n = strlen(prefix);
    s3_ctx C = {R, session, bucket, prefix, as, !n || prefix[n - 1] == '/', 0};
    size_t before = R->n;
    zt_status st = zt_remote_s3_list(session, url, on_s3_key, &C, &err);
    if (st == ZT_E_LIMIT)
        fprintf(stderr, "zt pull: a larger listing needs --max-files or --max-listing-bytes "
                        "(ZT_PULL_MAX_FILES, ZT_PULL_MAX_LISTING_BYTES)\n");
    if (st) {
        R->timed_out |= tool_pull_limits_hit(&err);
        R->net_down |= st == ZT_E_NETWORK;
        if (R->json)
            tool_pull_json_listing(url, &err);
        return tool_report("pull", url, &err);
    }
    if (C.bad)
        return ZT_EXIT_SYSTEM;
    if (R->n == before) {
        fprintf(stderr, "zt pull: %s: no object under this prefix\n", url);
        return ZT_EXIT_INVALID;
    }
    return ZT_EXIT_OK;
}

/* The jobs of one URL argument: one file, or a prefix's listing. */
static int plan_url(run *R, zt_remote *session, const char *url, const char *as)
{
    if (!strncmp(url, "s3://", 5))
        return plan_s3(R, session, url, as);
    size_t n = strlen(url);
    if (n && url[n - 1] == '/') {
        const char *files = strstr(url, "/v1/files/");
        if (!files) {
            fprintf(stderr, "zt pull: %s: a prefix URL is http://HOST/v1/files/PREFIX/\n", url);
            return ZT_EXIT_USAGE;
        }
        char *base = strndup(url, (size_t)(files - url) + 10);
        char *prefix = tool_url_unescape(files + 10);
        list_ctx L = {R, base, prefix, 0, 0};
        zt_error err = {.code = ZT_E_NOMEM, .message = "out of memory"};
        zt_status st =
            base && prefix ? zt_remote_list(session, url, on_entry, &L, &err) : ZT_E_NOMEM;
        free(base);
        free(prefix);
        if (st == ZT_E_LIMIT)
            fprintf(stderr, "zt pull: a larger listing needs --max-files or --max-listing-bytes "
                            "(ZT_PULL_MAX_FILES, ZT_PULL_MAX_LISTING_BYTES)\n");
        if (st) {
            R->timed_out |= tool_pull_limits_hit(&err);
            R->net_down |= st == ZT_E_NETWORK;
            if (R->json)
                tool_pull_json_listing(url, &err);
            return tool_report("pull", url, &err);
        }
        return L.bad ? ZT_EXIT_SYSTEM : ZT_EXIT_OK;
    }
    const char *slash = strrchr(url, '/');
    const char *name = slash ? slash + 1 : url;
    if (!tool_pull_safe_rel(name) || strchr(name, '?')) {
        fprintf(stderr, "zt pull: %s: no file name in the URL\n", url);
        return ZT_EXIT_USAGE;
    }
    if (add_job(R, url, as ? as : name, NULL))
        return ZT_EXIT_SYSTEM;
    /* a ztensord's plain file (…/v1/files/config.json): its bytes at /raw */
    if (strstr(url, "/v1/files/") && !tensor_name(name) && make_plain(R, NULL))
        return ZT_EXIT_SYSTEM;
    return ZT_EXIT_OK;
}

/* -o OUT names the file itself, not a directory, when the one URL is a file
 * whose name ends as OUT does (".zt", ".safetensors"...) and OUT is no
 * directory: then *dir becomes OUT's directory (a new string) and the
 * returned pointer OUT's last segment; NULL otherwise. */
static const char *out_as_file(const char **urls, size_t nurls, const char **dir, char **owned)
{
    const char *url = urls[0], *out = *dir;
    size_t n = strlen(url), m = strlen(out);
    if (nurls != 1 || !n || url[n - 1] == '/' || !m || out[m - 1] == '/')
        return NULL;
    const char *slash = strrchr(url, '/'), *uext = strrchr(slash ? slash : url, '.');
    const char *oslash = strrchr(out, '/'), *leaf = oslash ? oslash + 1 : out;
    const char *oext = strrchr(leaf, '.');
    struct stat sb;
    if (!uext || !oext || oext == leaf || strcmp(uext, oext) || strchr(uext, '?') ||
        (stat(out, &sb) == 0 && S_ISDIR(sb.st_mode)) || !tool_pull_safe_rel(leaf))
        return NULL;
    *owned = oslash ? strndup(out, (size_t)(oslash - out) + (oslash == out)) : strdup(".");
    if (!*owned)
        return NULL;
    *dir = *owned;
    return leaf;
}

/* --include/--exclude: keeps the jobs whose name below the prefix fg
 * selects. A selection that leaves no file is a usage error naming it. */
static int select_files(run *R, const tool_globs *fg)
{
    if (!fg->ninclude && !fg->nexclude)
        return ZT_EXIT_OK;
    size_t k = 0, listed = R->n;
    for (size_t i = 0; i < R->n; i++) {
        job *j = &R->jobs[i];
        if (tool_pull_selected(j->rel, fg)) {
            R->jobs[k++] = *j;
            continue;
        }
        free(j->url), free(j->rel), free(j->dest), free(j->etag);
    }
    R->n = k;
    if (k)
        return ZT_EXIT_OK;
    fprintf(stderr, "zt pull: the file selection matches none of the %zu files:", listed);
    for (size_t i = 0; i < fg->ninclude; i++)
        fprintf(stderr, " --include '%s'", fg->include[i]);
    for (size_t i = 0; i < fg->nexclude; i++)
        fprintf(stderr, " --exclude '%s'", fg->exclude[i]);
    fprintf(stderr, "%s\n", fg->ninclude ? " (--tensors selects objects inside a file)" : "");
    return ZT_EXIT_USAGE;
}

static void mib(char *out, size_t cap, uint64_t n)
{
    snprintf(out, cap, "%.1f MiB", (double)n / 1048576);
}

/* One line on stderr (R->mu held): bytes done of the total, those resumed
 * and skipped apart, the rate of the bytes received in this run only. */
static void draw(run *R, int last)
{
    uint64_t total = 0, resumed = 0, skipped = 0, done = 0, got = R->gone;
    for (size_t i = 0; i < R->nsess; i++)
        got += zt_remote_bytes_received(R->sess[i]);
    for (size_t i = 0; i < R->n; i++) {
        const job *j = &R->jobs[i];
        uint64_t tj = j->total > j->listed ? j->total : j->listed, d = j->done;
        if (j->finished && j->st == ZT_OK && j->o->stats.skipped)
            skipped += d;
        else if (!j->finished && j->sess) /* bytes in flight: its session's since it began */
            d = j->resumed + (zt_remote_bytes_received(j->sess) - j->base);
        total += tj;
        resumed += j->resumed;
        done += tj && d > tj ? tj : d;
    }
    if (!total && !R->finished && !last)
        return; /* nothing known yet: the first answer gives the total */
    if (done > total)
        total = done;
    double t = now_s() - R->t0, rate = t > 0 ? (double)got / t : 0;
    char a[32], b[32], c[32], d[32], eta[32] = "-";
    mib(a, sizeof(a), done), mib(b, sizeof(b), total), mib(c, sizeof(c), resumed);
    mib(d, sizeof(d), skipped);
    if (rate > 0 && total > done)
        snprintf(eta, sizeof(eta), "%.0f s", (double)(total - done) / rate);
    fprintf(stderr, "%s%s / %s (resumed %s, skipped %s)  %.1f MiB/s  ETA %s  files %zu/%zu%s",
            R->tty ? "\r" : "", a, b, c, d, rate / 1048576, eta, R->finished, R->n,
            R->tty && !last ? " " : "\n");
}

/* The display's clock: a line every half second, whatever the bytes do (a
 * stalled or dripping server included), until tick_stop. */
static void *ticker(void *ud)
{
    run *R = ud;
    pthread_mutex_lock(&R->mu);
    while (!R->tick_stop) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += 500000000;
        if (until.tv_nsec >= 1000000000)
            until.tv_sec++, until.tv_nsec -= 1000000000;
        pthread_cond_timedwait(&R->tick, &R->mu, &until);
        if (!R->tick_stop) {
            R->last_draw = now_s();
            draw(R, 0);
        }
    }
    pthread_mutex_unlock(&R->mu);
    return NULL;
}

typedef struct prog_ctx {
    run *R;
    job *j;
} prog_ctx;

static void on_progress(void *ud, uint64_t done, uint64_t total)
{
    prog_ctx *pc = ud;
    (void)total;
    pthread_mutex_lock(&pc->R->mu);
    if (!pc->j->started) { /* the first: the total, and what was on disk */
        pc->j->started = 1;
        pc->j->resumed = done;
        pc->j->total = total;
    }
    pc->j->done = done;
    double t = now_s();
    if (pc->R->progress && t - pc->R->last_draw >= 0.2) {
        pc->R->last_draw = t;
        draw(pc->R, 0);
    }
    pthread_mutex_unlock(&pc->R->mu);
}

/* One job: its directory made and opened below DIR (as the listing names
 * it; never through a link), then the pull, its files named in there. */
static void pull_job(run *R, zt_remote *session, job *j)
{
    int dfd = tool_pull_subdir(R->top, R->dir, j->rel, &j->o->err);
    if (dfd < 0) {
        j->st = j->o->err.code;
        return;
    }
    const char *leaf = tool_pull_leaf(j->rel);
    if (j->plain) {
        zt_remote_pull_options po;
        zt_remote_pull_options_init(&po);
        po.expect_etag = j->etag;
        po.expect_sha256 = j->has_sha256 ? j->sha256 : NULL;
        po.cancel = &g_stop;
        prog_ctx pc = {R, j};
        po.progress = on_progress;
        po.progress_ud = &pc;
        po.dir_fd = dfd;
        j->st = zt_remote_pull_object(session, j->url, leaf, &po, &j->o->stats, &j->o->err);
    } else if (R->globs.ninclude || R->globs.nexclude) {
        tool_select_stats ss;
        j->st = tool_pull_select(session, j->url, dfd, leaf, &R->globs, &g_stop, &ss, &j->o->err);
        j->o->stats.size = ss.bytes;
        j->o->stats.fetched = ss.bytes - ss.resumed;
        j->o->stats.resumed = ss.resumed;
        j->o->stats.verified = ss.verified;
        j->o->stats.unverified = ss.unverified;
        j->o->stats.objects_unverified = ss.objects_unverified;
        j->o->stats.digest_retries = ss.retries;
        j->o->stats.skipped = ss.skipped;
    } else {
        zt_remote_pull_options po;
        zt_remote_pull_options_init(&po);
        po.expect_etag = j->etag;
        po.window_bytes = R->window_each;
        po.cancel = &g_stop;
        prog_ctx pc = {R, j};
        po.progress = on_progress;
        po.progress_ud = &pc;
        po.dir_fd = dfd;
        j->st = j->view ? tool_pull_view(session, j->url, dfd, j->dest, leaf, &po, &j->o->stats,
                                         &j->view_sharded, &j->o->err)
                        : zt_remote_pull(session, j->url, leaf, &po, &j->o->stats, &j->o->err);
    }
    close(dfd);
}

static void *worker(void *ud)
{
    run *R = ud;
    zt_remote_options o = R->ropt;
    o.connections = R->conns_each;
    zt_remote *session = NULL;
    zt_error err;
    zt_status st0 = zt_remote_new(&o, &session, &err);
    pthread_mutex_lock(&R->mu);
    if (!st0 && R->sess) /* sess has room for every worker */
        R->sess[R->nsess++] = session;
    pthread_mutex_unlock(&R->mu);
    for (;;) {
        pthread_mutex_lock(&R->mu);
        while (R->next < R->n && R->next >= R->phase2 && R->finished < R->phase2 && !g_stop) {
            struct timespec until; /* bounded: g_stop is set by a signal, not signalled */
            clock_gettime(CLOCK_REALTIME, &until);
            until.tv_nsec += 100000000;
            if (until.tv_nsec >= 1000000000)
                until.tv_sec++, until.tv_nsec -= 1000000000;
            pthread_cond_timedwait(&R->cv, &R->mu, &until);
        }
        job *j = R->next < R->n && !g_stop ? &R->jobs[R->next++] : NULL;
        if (j && !st0) {
            j->sess = session;
            j->base = zt_remote_bytes_received(session);
        }
        pthread_mutex_unlock(&R->mu);
        if (!j)
            break;
        job_out *out = calloc(1, sizeof(*out));
        j->o = out ? out : (job_out *)&k_nomem;
        if (!out) {
            j->st = ZT_E_NOMEM;
        } else if (st0) {
            j->st = st0;
            out->err = err;
        } else {
            pull_job(R, session, j);
        }
        pthread_mutex_lock(&R->mu);
        R->finished++;
        j->finished = 1;
        if (R->json) /* under mu: one line at a time */
            tool_pull_json_file(j->dest, j->url,
                                !j->st   ? (j->o->stats.skipped ? "skipped" : "pulled")
                                : g_stop ? "interrupted"
                                         : "failed",
                                &j->o->stats, j->st ? &j->o->err : NULL);
        j->sess = NULL;
        if (!j->st)
            j->done = j->o->stats.size;
        pthread_cond_broadcast(&R->cv);
        pthread_mutex_unlock(&R->mu);
    }
    pthread_mutex_lock(&R->mu);
    if (!st0 && R->sess) { /* its bytes stay counted; the last slot fills its place */
        R->gone += zt_remote_bytes_received(session);
        for (size_t i = 0; i < R->nsess; i++)
            if (R->sess[i] == session)
                R->sess[i] = R->sess[--R->nsess];
    }
    pthread_mutex_unlock(&R->mu);
    zt_remote_free(session);
    return NULL;
}

/* The summary (stderr, or JSON on stdout) and the exit status. */
static int summarize(run *R, int json, int quiet, double seconds)
{
    uint64_t bytes = 0, fetched = 0, resumed = 0, skipped_bytes = 0;
    size_t ok = 0, ver = 0, unver = 0, objs_unver = 0, skipped = 0;
    size_t left = 0; /* files not pulled: failed, or never started */
    for (size_t i = 0; g_stop && i < R->n; i++)
        left += R->jobs[i].st != ZT_OK || i >= R->next;
    if (left) { /* a signal that came after the last file is no interruption */
        for (size_t i = R->next; json && i < R->n; i++)
            tool_pull_json_file(R->jobs[i].dest, R->jobs[i].url, "not_started", NULL, NULL);
        if (json) {
            printf("{\"event\":\"summary\",\"interrupted\":true,\"files\":%zu,"
                   "\"not_finished\":%zu}\n",
                   R->n - left, left);
            fflush(stdout);
        }
        fprintf(stderr,
                "zt pull: interrupted: %zu of %zu files not finished; what is verified is kept "
                "(NAME.ztpart, NAME.ztpull): run the same command to continue\n",
                left, R->n);
        return ZT_EXIT_INTERRUPTED;
    }
    unsigned retries = 0, restarts = 0;
    int rc = ZT_EXIT_OK;
    for (size_t i = 0; i < R->n; i++) {
        job *j = &R->jobs[i];
        if (!j->o) /* every job starts unless interrupted (above) */
            j->o = (job_out *)&k_nomem;
        retries += j->o->stats.digest_retries;
        restarts += j->o->stats.restarts;
        fetched += j->o->stats.fetched;
        if (j->o->stats.changed)
            fprintf(stderr,
                    "zt pull: %s changed at the origin during the pull: fetched its new "
                    "version %s\n",
                    j->dest, j->o->stats.etag);
        if (j->st) {
            R->timed_out |= tool_pull_limits_hit(&j->o->err);
            int e =
                j->st == ZT_E_NOSPACE ? ZT_EXIT_NOSPACE : tool_report("pull", j->dest, &j->o->err);
            if (j->st == ZT_E_NOSPACE)
                tool_report("pull", j->dest, &j->o->err);
            if (rc == ZT_EXIT_OK || e == ZT_EXIT_NOSPACE)
                rc = e;
            continue;
        }
        ok++;
        if (j->plain && j->o->stats.unverified && !j->o->stats.skipped && !quiet)
            fprintf(stderr,
                    "zt pull: %s: written unchecked: the server gave no sha256 for it (not "
                    "hashed yet)\n",
                    j->dest);
        bytes += j->o->stats.size;
        resumed += j->o->stats.resumed;
        skipped += j->o->stats.skipped != 0;
        skipped_bytes += j->o->stats.skipped ? j->o->stats.size : 0;
        ver += j->o->stats.verified;
        unver += j->o->stats.unverified;
        objs_unver += j->o->stats.objects_unverified;
    }
    if (json) {
        printf("{\"event\":\"summary\",\"interrupted\":false,\"files\":%zu,\"failed\":%zu,"
               "\"skipped\":%zu,\"bytes\":%llu,\"fetched\":%llu,"
               "\"resumed\":%llu,"
               "\"seconds\":%.3f,\"retries\":%u,\"restarts\":%u,\"components_verified\":%zu,"
               "\"components_unverified\":%zu,\"objects_unverified\":%zu,\"changed\":[",
               ok, R->n - ok, skipped, (unsigned long long)bytes, (unsigned long long)fetched,
               (unsigned long long)resumed, seconds, retries, restarts, ver, unver, objs_unver);
        for (size_t i = 0, k = 0; i < R->n; i++)
            if (R->jobs[i].o && R->jobs[i].o->stats.changed) {
                if (k++)
                    putchar(',');
                tool_json_str(R->jobs[i].dest);
            }
        printf("]}\n");
    } else if (!quiet) {
        fprintf(stderr,
                "zt pull: %zu of %zu files (%zu already complete), %.1f MiB: %.1f MiB resumed, "
                "%.1f MiB fetched, %.1f MiB skipped, in %.2f s; %zu components verified, %zu "
                "without a digest (%zu objects not checked); %u retries\n",
                ok, R->n, skipped, (double)bytes / 1048576, (double)resumed / 1048576,
                (double)fetched / 1048576, (double)skipped_bytes / 1048576, seconds, ver, unver,
                objs_unver, retries);
    }
    return rc;
}

/* --offline, ZT_OFFLINE=1 (as HF_HUB_OFFLINE): 1 to pull nothing. */
static int offline_env(void)
{
    const char *v = getenv("ZT_OFFLINE");
    return v && (!strcmp(v, "1") || !strcasecmp(v, "true") || !strcasecmp(v, "yes") ||
                 !strcasecmp(v, "on"));
}

/* The files of the last complete pull of this command (DIR/.ztpull-record/KEY),
 * checked on disk. Exit status 0 when all are complete and verified, else 1.
 * quiet: 1 no line when all is well, 2 none when there is no record either. */
static int check_record(run *R, const char *key, const char *why, int quiet)
{
    size_t n = 0, nbad = 0;
    int found = tool_pull_record_check(R->top, R->dir, key, &n, &nbad) == 0;
    if (R->json && quiet < 2) { /* --offline --json: its summary */
        printf("{\"event\":\"summary\",\"offline\":true,\"recorded\":%s,\"files\":%zu,"
               "\"failed\":%zu}\n",
               found ? "true" : "false", n - nbad, nbad);
        fflush(stdout);
    }
    if (!found) {
        if (quiet > 1) /* a fallback: nothing to fall back on, nothing to say */
            return ZT_EXIT_INVALID;
        fprintf(stderr,
                "zt pull: %s: no complete pull of these URLs (and selection) is recorded in "
                "%s: run it once with the network\n",
                why, R->dir);
        return ZT_EXIT_INVALID;
    }
    if (nbad) {
        fprintf(stderr, "zt pull: %s: %zu of %zu files missing or corrupt in %s (above)\n", why,
                nbad, n, R->dir);
        return ZT_EXIT_INVALID;
    }
    if (!quiet)
        fprintf(stderr, "zt pull: %s: %zu files complete and verified in %s\n", why, n, R->dir);
    return ZT_EXIT_OK;
}

/* Every file complete: what a later --offline checks. */
static void write_record(run *R, const char *key)
{
    tool_pull_entry *e = calloc(R->n ? R->n : 1, sizeof(*e));
    for (size_t i = 0; e && i < R->n; i++) {
        job *j = &R->jobs[i];
        size_t k = strlen(j->rel);
        e[i].rel = j->rel;
        e[i].zt = !j->plain && k > 3 && !strcmp(j->rel + k - 3, ".zt");
        e[i].sha256 = j->has_sha256 && !j->o->stats.changed ? j->sha256 : NULL;
    }
    if (!e || tool_pull_record_write(R->top, key, e, R->n))
        fprintf(stderr,
                "zt pull: warning: cannot record the pull in %s/.ztpull-record (--offline will "
                "not know it)\n",
                R->dir);
    free(e);
}

/* Did the pull fail only because the origin could not be reached? */
static int only_network(const run *R)
{
    if (R->net_down)
        return 1;
    size_t failed = 0;
    for (size_t i = 0; i < R->n; i++) {
        if (!R->jobs[i].o || i >= R->next)
            return 0;
        if (R->jobs[i].st && R->jobs[i].st != ZT_E_NETWORK)
            return 0;
        failed += R->jobs[i].st != ZT_OK;
    }
    return failed > 0;
}

/* The record's KEY: the URLs, -o's file name and the selection. */
static void record_key(const char **urls, size_t nurls, const char *as, const char **inc,
                       size_t ninc, const char **exc, size_t nexc, const char **finc, size_t nfinc,
                       const char **fexc, size_t nfexc, char key[33])
{
    const char **const lists[] = {urls, inc, exc, finc, fexc};
    const size_t counts[] = {nurls, ninc, nexc, nfinc, nfexc};
    size_t n = 2 + nurls + ninc + nexc + nfinc + nfexc + 5, k = 0;
    const char **a = calloc(n, sizeof(*a));
    if (!a) {
        memset(key, '0', 32), key[32] = 0;
        return;
    }
    a[k++] = "as";
    a[k++] = as ? as : "";
    for (size_t l = 0; l < 5; l++) {
        a[k++] = "--"; /* between lists */
        for (size_t i = 0; i < counts[l]; i++)
            a[k++] = lists[l][i];
    }
    tool_pull_record_key(a, k, key);
    free(a);
}

static int usage(const char *msg)
{
    fprintf(stderr, "zt pull: %s (see zt pull --help)\n", msg);
    return ZT_EXIT_USAGE;
}

int cmd_pull(int argc, char **argv)
{
    const char *dir = ".", *token = tool_token();
    unsigned conns = 8, jobs = 4;
    size_t chunk = 16u << 20;
    int quiet = 0, json = 0, offline = offline_env(), progress = 0, st_view = 0;
    const char **urls = calloc((size_t)argc, sizeof(*urls));
    const char **inc = calloc((size_t)argc, sizeof(*inc)),
               **exc = calloc((size_t)argc, sizeof(*exc));
    /* file names: at most argc of each too, in the other half of inc/exc */
    const char **finc = calloc((size_t)argc, sizeof(*finc)),
               **fexc = calloc((size_t)argc, sizeof(*fexc));
    size_t nurls = 0, ninc = 0, nexc = 0, nfinc = 0, nfexc = 0, ns3 = 0;
    const char *s3_endpoint = NULL, *s3_region = NULL, *s3_creds = NULL;
    unsigned s3_max_keys = 0;
    tool_pull_limits lim;
    tool_pull_limits_init(&lim);
    if (!urls || !inc || !exc || !finc || !fexc) {
        free(finc);
        free(fexc);
        free(urls);
        free(inc);
        free(exc);
        return ZT_EXIT_SYSTEM;
    }
    for (int i = 1, n_lim; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (tool_is_help(a)) {
            fputs(k_help, stdout);
            free(finc);
            free(fexc);
            free(urls);
            free(inc);
            free(exc);
            return ZT_EXIT_OK;
        } else if (!strcmp(a, "--quiet") || !strcmp(a, "-q")) {
            quiet = 1;
        } else if (!strcmp(a, "--json")) {
            json = 1;
        } else if (!strcmp(a, "--format") && v) {
            if (strcmp(v, "safetensors"))
                return free(finc), free(fexc), free(urls), free(inc), free(exc),
                       usage("--format: safetensors is the one format (the stored files are the "
                             "default)");
            st_view = 1, i++;
        } else if (!strcmp(a, "--offline")) {
            offline = 1;
        } else if (!strcmp(a, "--progress")) {
            progress = 1;
        } else if ((n_lim = tool_pull_limits_arg(&lim, a, v)) != 0) {
            if (n_lim < 0)
                return free(finc), free(fexc), free(urls), free(inc), free(exc),
                       usage("a limit out of range");
            i++;
        } else if ((!strcmp(a, "--include") || !strcmp(a, "--exclude")) && v) {
            if (a[2] == 'i')
                finc[nfinc++] = v;
            else
                fexc[nfexc++] = v;
            i++;
        } else if ((!strcmp(a, "--tensors") || !strcmp(a, "--exclude-tensors")) && v) {
            if (a[2] == 't')
                inc[ninc++] = v;
            else
                exc[nexc++] = v;
            i++;
        } else if ((!strcmp(a, "--s3-endpoint") || !strcmp(a, "--s3-region") ||
                    !strcmp(a, "--s3-credentials") || !strcmp(a, "--s3-max-keys")) &&
                   v) {
            char *end = NULL;
            unsigned long n = strtoul(v, &end, 10);
            if (!strcmp(a, "--s3-endpoint"))
                s3_endpoint = v;
            else if (!strcmp(a, "--s3-region"))
                s3_region = v;
            else if (!strcmp(a, "--s3-credentials"))
                s3_creds = v;
            else if (*end || n < 1 || n > 1000)
                return free(finc), free(fexc), free(urls), free(inc), free(exc),
                       usage("--s3-max-keys: 1 to 1000");
            else
                s3_max_keys = (unsigned)n;
            i++;
        } else if (!strcmp(a, "-o") || !strcmp(a, "--token") || !strcmp(a, "--connections") ||
                   !strcmp(a, "--chunk-size") || !strcmp(a, "--jobs")) {
            i++;
            char *end = NULL;
            unsigned long n = v ? strtoul(v, &end, 10) : 0;
            if (!v) {
                fprintf(stderr, "zt pull: a value is needed after %s (see zt pull --help)\n", a);
                return free(finc), free(fexc), free(urls), free(inc), free(exc), ZT_EXIT_USAGE;
            }
            if (!strcmp(a, "-o"))
                dir = v;
            else if (!strcmp(a, "--token"))
                token = v;
            else if (!strcmp(a, "--chunk-size")) {
                if (tool_parse_size(v, &chunk) || chunk < (64u << 10))
                    return free(finc), free(fexc), free(urls), free(inc), free(exc),
                           usage("--chunk-size: at least 64K");
            } else if (*end || n < 1 || n > 256)
                return free(finc), free(fexc), free(urls), free(inc), free(exc),
                       usage("--connections and --jobs: 1 to 256");
            else if (!strcmp(a, "--jobs"))
                jobs = (unsigned)n;
            else
                conns = (unsigned)n;
        } else if (a[0] == '-' && a[1]) {
            int known = !strcmp(a, "--include") || !strcmp(a, "--exclude") ||
                        !strcmp(a, "--tensors") || !strcmp(a, "--exclude-tensors");
            fprintf(stderr, "zt pull: %s %s (see zt pull --help)\n",
                    known ? "a value is needed after" : "unknown option", a);
            return free(finc), free(fexc), free(urls), free(inc), free(exc), ZT_EXIT_USAGE;
        } else if (!tool_is_url(a) && strncmp(a, "s3://", 5)) {
            return free(finc), free(fexc), free(urls), free(inc), free(exc),
                   usage("URLs only (http://, https:// or s3://)");
        } else {
            ns3 += !strncmp(a, "s3://", 5);
            urls[nurls++] = a;
        }
    }
    if (!nurls)
        return free(finc), free(fexc), free(urls), free(inc), free(exc), usage("no URL");
    if (st_view && (ninc || nexc))
        return free(finc), free(fexc), free(urls), free(inc), free(exc),
               usage("--format safetensors and --tensors/--exclude-tensors go in separate "
                     "commands");
    if (ns3 && ns3 != nurls) /* a session signs every request for the store, or none */
        return free(finc), free(fexc), free(urls), free(inc), free(exc),
               usage("s3:// URLs and http(s):// URLs go in separate commands");
    char *odir = NULL; /* -o OUT naming the file: its directory */
    const char *as = out_as_file(urls, nurls, &dir, &odir);
    int top = tool_pull_top(dir);
    if (top < 0) {
        free(odir);
        free(finc);
        free(fexc);
        free(urls);
        free(inc);
        free(exc);
        return ZT_EXIT_SYSTEM;
    }
    run R = {.progress = progress || (!quiet && !json && isatty(STDERR_FILENO)),
             .tty = isatty(STDERR_FILENO),
             .json = json,
             .globs = {inc, exc, ninc, nexc},
             .top = top,
             .dir = dir,
             .st_view = st_view};
    pthread_mutex_init(&R.mu, NULL);
    pthread_cond_init(&R.cv, NULL);
    pthread_cond_init(&R.tick, NULL);
    zt_remote_options_init(&R.ropt);
    R.ropt.bearer_token = token && *token ? token : NULL;
    R.ropt.chunk_size = chunk;
    tool_pull_limits_start(&lim); /* one deadline for every session of the pull */
    tool_pull_limits_apply(&lim, &R.ropt);
    const char *v = getenv("ZT_REMOTE_CA_FILE");
    if (v && *v)
        R.ropt.ca_file = v;
    R.t0 = now_s();
    zt_remote *session = NULL;
    zt_error err;
    int rc = ZT_EXIT_OK;
    char key[33];
    record_key(urls, nurls, as, inc, ninc, exc, nexc, finc, nfinc, fexc, nfexc, key);
    zt_remote_s3_credentials *creds = ns3 && !offline ? calloc(1, sizeof(*creds)) : NULL;
    if (offline) /* no request at all: what is on disk, checked */
        rc = check_record(&R, key, "--offline", quiet);
    else if (ns3 && !creds)
        rc = ZT_EXIT_SYSTEM;
    else if (ns3 && zt_remote_s3_configure(&R.ropt, s3_endpoint, s3_region, s3_creds, creds, &err))
        rc = tool_report("pull", s3_creds ? s3_creds : urls[0], &err);
    if (ns3)
        R.ropt.s3_max_keys = s3_max_keys;
    if (!offline && rc == ZT_EXIT_OK && zt_remote_new(&R.ropt, &session, &err))
        rc = tool_report("pull", urls[0], &err);
    for (size_t i = 0; !offline && rc == ZT_EXIT_OK && i < nurls; i++)
        rc = plan_url(&R, session, urls[i], as);
    zt_remote_free(session);
    tool_globs fg = {finc, fexc, nfinc, nfexc};
    if (!offline && rc == ZT_EXIT_OK)
        rc = select_files(&R, &fg);
    shards_last(&R);
    if (!offline && rc == ZT_EXIT_OK && R.st_view)
        rc = view_plan(&R);
    if (!offline && rc == ZT_EXIT_OK && R.n) {
        struct sigaction sa = {.sa_handler = on_signal};
        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
        unsigned nw = jobs < R.n ? jobs : (unsigned)R.n;
        R.conns_each = conns / nw ? conns / nw : 1;
        R.window_each = PULL_WINDOW / nw;
        pthread_t th[256], tick;
        unsigned started = 0;
        R.sess = calloc(nw, sizeof(*R.sess)); /* NULL: no bytes shown in flight */
        int ticking = R.progress && pthread_create(&tick, NULL, ticker, &R) == 0;
        for (; started < nw; started++)
            if (pthread_create(&th[started], NULL, worker, &R))
                break;
        if (!started)
            worker(&R);
        for (unsigned i = 0; i < started; i++)
            pthread_join(th[i], NULL);
        pthread_mutex_lock(&R.mu);
        R.tick_stop = 1;
        pthread_cond_broadcast(&R.tick);
        pthread_mutex_unlock(&R.mu);
        if (ticking)
            pthread_join(tick, NULL);
        if (R.progress)
            draw(&R, 1);
        rc = summarize(&R, json, quiet, now_s() - R.t0);
        int ri = R.st_view && rc != ZT_EXIT_INTERRUPTED ? view_indexes(&R) : ZT_EXIT_OK;
        rc = rc ? rc : ri;
        if (rc == ZT_EXIT_OK)
            write_record(&R, key);
    }
    if (!offline && rc != ZT_EXIT_OK && !g_stop && only_network(&R) &&
        check_record(&R, key, "the origin cannot be reached", 2) == ZT_EXIT_OK) {
        fprintf(stderr, "zt pull: warning: the origin cannot be reached (above); every file of "
                        "the last complete pull is on disk and verified: exit status 0\n");
        rc = ZT_EXIT_OK;
    }
    if (rc != ZT_EXIT_OK && (R.timed_out || tool_pull_limits_passed(&lim)))
        fprintf(stderr,
                "zt pull: --timeout (%g s) passed: the pull stopped; what is verified is kept "
                "(NAME.ztpart, NAME.ztpull): run the same command to continue\n",
                lim.timeout);
    for (size_t i = 0; i < R.n; i++) {
        free(R.jobs[i].url);
        free(R.jobs[i].dest);
        free(R.jobs[i].rel);
        free(R.jobs[i].etag);
        if (R.jobs[i].o != &k_nomem)
            free(R.jobs[i].o);
    }
    close(top);
    if (creds)
        memset(creds, 0, sizeof(*creds));
    free(creds);
    free(R.jobs);
    free(urls);
    free(inc);
    free(exc);
    free(finc);
    free(fexc);
    free(odir);
    pthread_mutex_destroy(&R.mu);
    pthread_cond_destroy(&R.cv);
    pthread_cond_destroy(&R.tick);
    free(R.sess);
    return rc;
}
