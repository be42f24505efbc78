/*
 * The catalog: scan the root for served files, open and validate each once,
 * cache its manifest JSON and validators, index components by sha256, and
 * publish the result as an immutable snapshot (see catalog.h).
 *
 * Scanning rules: names starting with '.' are skipped (hidden files and the
 * upload staging directory), and paths the exclude patterns match; every
 * other regular file is an entry, a tensor file or a plain one (catalog.h);
 * directories are entered but never through a
 * symlink; a symlinked file is served only if its real path is inside the
 * root. Unchanged files (same device, inode, size, mtime, ctime, mode) keep
 * their entry, and with it what was learnt about their digests; a file that
 * failed to open for a reason that may pass (see is_transient) is tried again
 * by every scan.
 *
 * A scan walks the directories first (readdir; an lstat only where the
 * directory does not give the type), listing the candidate files, then
 * stats, opens and validates them on SCAN_THREADS threads: from a cold page
 * cache each file costs a few synchronous reads (its inode, its footer and
 * manifest), which overlap there. The snapshot is made from all of them
 * once they are done, as before.
 */
#include "store/catalog.h"
#include "core/grow.h"
#include "store/decoders.h"
#include "core/log.h"
#include "core/clock.h"
#include "core/hex.h"
#include "core/partition.h"
#include "core/json_line.h"
#include "core/dates.h"
#include "store/names.h"
#include "core/utf8.h"
#include "core/parallel.h"
#include "store/catalog_v2.h"
#include "store/st_views.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <jansson.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_DIR_DEPTH 32
#define SCAN_WARNINGS 20 /* "not served" lines per scan; the rest are counted */
/* Files opened at once by a scan: reads in flight, not cores. (Once taken
 * back to 1: a served file's fd named another file; libztensor closed fd 0
 * for each v2 file refused for its shard table, with one thread as well.) */
#define SCAN_THREADS 16

struct ztd_catalog {
    char *root;
    char *root_real;
    uint64_t max_manifest;
    pthread_mutex_t mu;
    pthread_cond_t changed;  /* with mu: a new snapshot, or ztd_catalog_wake() */
    pthread_mutex_t scan_mu; /* one rescan at a time (main loop, uploads) */
    ztd_snapshot *current;
    uint64_t generation;
    ztd_catalog_stats stats;
    ztd_fdcache *fdc; /* the open-file budget of every entry */
    /* Per scan, under scan_mu: */
    const char *verified_rel; /* ztd_catalog_update()'s file, when the server verified it */
    const struct stat *verified_sb;
    size_t warned, unwarned; /* "not served" lines logged and held back (atomic) */
    size_t carried;          /* valid entries reused from the previous snapshot (atomic) */
    size_t dirs_retry;       /* directories that could not be read for want of fds or memory */
    char **exclude;          /* glob patterns of relative paths not served */
    size_t nexclude;
    ztd_catalog_virtuals_fn *virtuals; /* adds views and indexes (store/view_names.h), or NULL */
};

/* Plain files hashed by the verifier, in this process: the cached listing
 * is made again when it grew (it then shows their sha256). */
static unsigned long g_plain_hashes;

/* ---- entries */

static int64_t ns_of(struct timespec t)
{
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* A snapshot's reference: keeps the entry, not its fd (see catalog.h). */
static void entry_hold(ztd_entry *e)
{
    __atomic_add_fetch(&e->refs, 1, __ATOMIC_RELAXED);
}

static void (*g_answer_free)(void *answer);

void ztd_catalog_answer_free(void (*destroy)(void *answer))
{
    g_answer_free = destroy;
}

static void answer_free(void *answer)
{
    if (answer && g_answer_free)
        g_answer_free(answer);
}

static void entry_drop(ztd_entry *e);

/* What a virtual entry holds: the entry it views, or an index's members. */
static void virtual_free(ztd_entry *e)
{
    entry_drop(e->view_of);
    if (!e->st_index)
        return;
    for (size_t i = 0; i < e->st_index->nmembers; i++)
        entry_drop(e->st_index->members[i]);
    free(e->st_index->members);
    zt_free(e->st_index->json);
    free(e->st_index);
}

static void entry_drop(ztd_entry *e)
{
    if (!e || __atomic_sub_fetch(&e->refs, 1, __ATOMIC_ACQ_REL) != 0)
        return;
    virtual_free(e);
    ztd_fdcache_forget(&e->fds);
    if (e->fds.plain && e->fds.plain_fd >= 0)
        close(e->fds.plain_fd);
    for (size_t i = 0; e->component_resp && i < 2 * e->digests.n; i++)
        answer_free(e->component_resp[i]);
    free(e->component_resp);
    ztd_digest_checks_free(&e->digests);
    ztd_decode_marks_free(e->decode_marks);
    ztd_v2_entry_free(e->v2);
    ztd_st_view_free(e->st_view); /* it borrows e->file */
    if (e->up)
        e->up_free(e->up); /* its file is the remote file's model */
    else
        zt_close(e->file);
    free(e->name);
    free(e->error);
    /* The shared manifest answers send manifest_json and the coded copies
     * without a copy of their own: destroyed first. No connection is sending
     * them now: each request pinned the entry until libmicrohttpd reported it
     * complete, which it does only once the response is sent or given up. */
    for (size_t i = 0; i < sizeof(e->manifest_resp) / sizeof(e->manifest_resp[0]); i++)
        answer_free(e->manifest_resp[i]);
    free(e->manifest_json);
    ztd_coded_set_free(&e->manifest_coded);
    free(e);
}

void **ztd_entry_component_slot(ztd_entry *e, const zt_component *c, bool blob, bool make,
                                uint8_t **asked)
{
    const ztd_digest_check *k = ztd_digest_find(&e->digests, c);
    if (!k)
        return NULL;
    size_t n = 2 * e->digests.n; /* answers, then as many "asked before" flags */
    void **v = __atomic_load_n(&e->component_resp, __ATOMIC_ACQUIRE);
    if (!v && !make)
        return NULL;
    if (!v) {
        void **none = NULL;
        if (!(v = calloc(n, sizeof(*v) + 1)))
            return NULL;
        if (!__atomic_compare_exchange_n(&e->component_resp, &none, v, false, __ATOMIC_ACQ_REL,
                                         __ATOMIC_ACQUIRE)) {
            free(v); /* another request made it first */
            v = none;
        }
    }
    size_t i = 2 * (size_t)(k - e->digests.v) + (blob ? 1 : 0);
    if (!make && !__atomic_load_n(&v[i], __ATOMIC_ACQUIRE))
        return NULL; /* none built, and no room to build one */
    *asked = (uint8_t *)(v + n) + i;
    return &v[i];
}

/* Made by the first request for it, not by the scan: the JSON of every
 * manifest was two thirds of a scan's instructions, for files mostly never
 * asked for. One lock for all entries: making one is rare and short (a second
 * for 100,000 objects); readers that see the pointer set need no lock. */
static pthread_mutex_t manifest_json_mu = PTHREAD_MUTEX_INITIALIZER;

char *ztd_manifest_json_line(const zt_file *f, size_t *len, zt_error *err)
{
    char *m = zt_file_manifest_json(f, ZT_JSON_COMPACT, err);
    size_t n = m ? strlen(m) : 0;
    char *j = m ? malloc(n + 2) : NULL;
    if (j) {
        memcpy(j, m, n);
        memcpy(j + n, "\n", 2);
        *len = n + 1;
    } else if (m) {
        snprintf(err->message, sizeof(err->message), "out of memory");
    }
    zt_free(m);
    return j;
}

const char *ztd_entry_manifest_json(ztd_entry *e, size_t *len)
{
    char *j = __atomic_load_n(&e->manifest_json, __ATOMIC_ACQUIRE);
    if (!j && e->file) {
        pthread_mutex_lock(&manifest_json_mu);
        if (!(j = e->manifest_json)) {
            zt_error err;
            size_t n = 0;
            if ((j = ztd_manifest_json_line(e->file, &n, &err))) {
                e->manifest_json_len = n;
                __atomic_store_n(&e->manifest_json, j, __ATOMIC_RELEASE);
            } else {
                ztd_log(ZTD_LOG_ERROR, "catalog: %s: manifest JSON: %s", e->name, err.message);
            }
        }
        pthread_mutex_unlock(&manifest_json_mu);
    }
    *len = j ? e->manifest_json_len : 0;
    return j;
}

void ztd_entry_retain(ztd_entry *e)
{
    entry_hold(e);
    ztd_fdcache_pin(&e->fds);
    if (e->view_of) /* a view's bytes are its file's */
        ztd_entry_retain(e->view_of);
}

void ztd_entry_release(ztd_entry *e)
{
    if (!e)
        return;
    if (e->view_of)
        ztd_entry_release(e->view_of);
    ztd_fdcache_unpin(&e->fds);
    entry_drop(e);
}

int ztd_entry_fd(const ztd_entry *e)
{
    if (e->kind == ZTD_ENTRY_PLAIN)
        return e->error ? -1 : __atomic_load_n(&e->fds.plain_fd, __ATOMIC_RELAXED);
    return e->file ? zt_file_fd(e->file) : -1;
}

const uint8_t *ztd_entry_plain_sha256_known(const ztd_entry *e)
{
    return e->kind == ZTD_ENTRY_PLAIN &&
                   __atomic_load_n(&e->plain_state, __ATOMIC_ACQUIRE) == ZTD_PLAIN_HASHED
               ? e->plain_sha256
               : NULL;
}

const uint8_t *ztd_entry_plain_sha256(const ztd_entry *e)
{
    const uint8_t *sha = ztd_entry_plain_sha256_known(e);
    return sha && !ztd_entry_stale(e) && ztd_entry_unchanged(e) ? sha : NULL;
}

bool ztd_entry_wants_file_hash(const ztd_entry *e)
{
    if (__atomic_load_n(&e->plain_state, __ATOMIC_ACQUIRE) || ztd_entry_virtual(e) || e->up)
        return false;
    return e->kind == ZTD_ENTRY_PLAIN ? e->error == NULL : e->file != NULL && e->v2 == NULL;
}

const uint8_t *ztd_entry_file_sha256(const ztd_entry *e)
{
    return __atomic_load_n(&e->plain_state, __ATOMIC_ACQUIRE) == ZTD_PLAIN_HASHED &&
                   !ztd_entry_stale(e)
               ? e->plain_sha256
               : NULL;
}

void ztd_entry_plain_hashed(ztd_entry *e, const uint8_t *sha)
{
    if (__atomic_load_n(&e->plain_state, __ATOMIC_ACQUIRE))
        return;
    if (sha)
        memcpy(e->plain_sha256, sha, 32);
    __atomic_store_n(&e->plain_state, sha ? ZTD_PLAIN_HASHED : ZTD_PLAIN_UNREADABLE,
                     __ATOMIC_RELEASE);
    if (sha && e->kind == ZTD_ENTRY_PLAIN)
        __atomic_add_fetch(&g_plain_hashes, 1, __ATOMIC_RELAXED);
}

void ztd_entry_ref(ztd_entry *e)
{
    entry_hold(e);
}

void ztd_entry_unref(ztd_entry *e)
{
    entry_drop(e);
}

void ztd_catalog_set_virtuals(ztd_catalog *c, ztd_catalog_virtuals_fn *fn)
{
    c->virtuals = fn;
}

bool ztd_entry_changed(ztd_entry *e)
{
    if (ztd_entry_stale(e))
        return true;
    struct stat sb;
    int fd = ztd_entry_fd(e);
    if (fd < 0 || fstat(fd, &sb) != 0)
        return false;
    int64_t mt = (int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec;
    if ((uint64_t)sb.st_size == e->size && mt == e->mtime_ns)
        return false;
    __atomic_store_n(&e->stale, true, __ATOMIC_RELAXED);
    return true;
}

bool ztd_entry_stale(const ztd_entry *e)
{
    return __atomic_load_n(&e->stale, __ATOMIC_RELAXED);
}

void ztd_identity_etag(const ztd_entry *e, uint64_t off, uint64_t len, char out[40])
{
    uint64_t parts[6] = {
        (uint64_t)e->dev, (uint64_t)e->ino, (uint64_t)e->mtime_ns, e->size, off, len};
    uint8_t h[32];
    zt_hasher *hs = zt_hasher_new(ZT_DIGEST_SHA256);
    if (!hs) {
        snprintf(out, 40, "\"%016llx%016llx\"", (unsigned long long)e->ino,
                 (unsigned long long)e->mtime_ns);
        return;
    }
    zt_hasher_update(hs, parts, sizeof(parts));
    zt_hasher_final(hs, h);
    zt_hasher_free(hs);
    out[0] = '"';
    ztd_hex_encode(h, 16, out + 1);
    out[33] = '"';
    out[34] = 0;
}

bool ztd_entry_unchanged(const ztd_entry *e)
{
    if (e->up) /* an upstream version never changes: a new one is a new entry */
        return true;
    struct stat sb;
    int fd = ztd_entry_fd(e);
    return fd >= 0 && fstat(fd, &sb) == 0 && (uint64_t)sb.st_size == e->size &&
           ns_of(sb.st_mtim) == e->mtime_ns && ns_of(sb.st_ctim) == e->ctime_ns;
}

void ztd_stat_etag(const struct stat *sb, char out[40])
{
    ztd_entry e = {.dev = sb->st_dev,
                   .ino = sb->st_ino,
                   .size = (uint64_t)sb->st_size,
                   .mtime_ns = (int64_t)sb->st_mtim.tv_sec * 1000000000 + sb->st_mtim.tv_nsec};
    ztd_identity_etag(&e, 0, e.size, out);
}

bool ztd_catalog_is_served_name(const char *name)
{
    return name[0] != '.' && ztd_file_ext_served(name, strlen(name));
}

/* Failures that say nothing about the file: open() or mmap() out of fds or
 * memory, no permission (yet), the file gone between stat and open (all
 * ZT_E_IO or ZT_E_NOT_FOUND from zt_open), or no memory while parsing. A
 * read error is retried too: trying again costs one open per scan. */
static bool is_transient(zt_status st)
{
    return st == ZT_E_IO || st == ZT_E_NOMEM || st == ZT_E_NOT_FOUND;
}

/* "X is not served" at warn, but not again for each retry of the same
 * failure, and not for thousands of files at once (EMFILE). */
static void log_not_served(ztd_catalog *c, const ztd_entry *e, const ztd_entry *prev)
{
    bool again = prev && prev->retry && prev->error_code == e->error_code;
    if (again || __atomic_fetch_add(&c->warned, 1, __ATOMIC_RELAXED) >= SCAN_WARNINGS) {
        if (!again)
            __atomic_add_fetch(&c->unwarned, 1, __ATOMIC_RELAXED);
        ztd_log(ZTD_LOG_DEBUG, "catalog: %s is not served: %s", e->name, e->error);
        return;
    }
    ztd_log(ZTD_LOG_WARN, "catalog: %s is not served%s: %s", e->name,
            e->retry ? " (retried by each scan)" : "", e->error);
}

/* e's slot in the open-file budget, from its name and stat (what decides
 * whether the file on disk is still the one opened); the caller adds what it
 * holds open. */
static void slot_init(ztd_entry *e)
{
    e->fds = (ztd_fdslot){.name = e->name,
                          .dev = e->dev,
                          .ino = e->ino,
                          .size = e->size,
                          .mtime_ns = e->mtime_ns,
                          .stale = &e->stale};
}

/* A plain file's entry (e has its name and stat): its fd, in the open-file
 * budget. One that cannot be opened now is kept with the reason, and tried
 * again by each scan. */
static ztd_entry *plain_open(ztd_catalog *c, ztd_entry *e, const char *abs, const ztd_entry *prev)
{
    e->kind = ZTD_ENTRY_PLAIN;
    slot_init(e);
    e->fds.plain = true;
    e->fds.plain_fd = -1;
    int fd = open(abs, O_RDONLY | O_CLOEXEC);
    if (fd < 0 && (errno == EMFILE || errno == ENFILE) && ztd_fdcache_shed(c->fdc, 8))
        fd = open(abs, O_RDONLY | O_CLOEXEC);
    struct stat sb;
    const char *why = NULL;
    if (fd < 0)
        why = strerror(errno);
    else if (fstat(fd, &sb) != 0 || sb.st_dev != e->dev || sb.st_ino != e->ino ||
             (uint64_t)sb.st_size != e->size || ns_of(sb.st_mtim) != e->mtime_ns)
        why = "the file changed while it was opened";
    if (why) {
        if (fd >= 0)
            close(fd);
        e->error = strdup(why);
        e->error_code = zt_status_name(ZT_E_IO);
        e->retry = true;
        log_not_served(c, e, prev);
        return e;
    }
    e->fds.plain_fd = fd;
    ztd_fdcache_add(c->fdc, &e->fds);
    return e;
}

static ztd_entry *entry_open(ztd_catalog *c, const char *rel, const char *abs,
                             const struct stat *sb, const ztd_entry *prev)
{
    ztd_entry *e = calloc(1, sizeof(*e));
    if (!e || !(e->name = strdup(rel))) {
        free(e);
        return NULL;
    }
    e->refs = 1;
    e->name_len = strlen(rel);
    e->size = (uint64_t)sb->st_size;
    e->dev = sb->st_dev;
    e->ino = sb->st_ino;
    e->mtime_ns = ns_of(sb->st_mtim);
    e->ctime_ns = ns_of(sb->st_ctim);
    e->mode = sb->st_mode;
    ztd_identity_etag(e, 0, e->size, e->file_etag);
    ztd_http_date_format(e->mtime_ns / 1000000000, e->last_modified);
    const char *base = strrchr(rel, '/');
    if (!ztd_catalog_is_served_name(base ? base + 1 : rel))
        return plain_open(c, e, abs, prev);
    zt_open_options opt = {.max_manifest_size = c->max_manifest};
    zt_error err;
    zt_status st = zt_open(abs, &opt, &e->file, &err);
    if (st == ZT_E_IO && (errno == EMFILE || errno == ENFILE || errno == ENOMEM) &&
        ztd_fdcache_shed(c->fdc, 8)) /* out of fds: the least recently used files wait closed */
        st = zt_open(abs, &opt, &e->file, &err);
    if (!st && ztd_digest_checks_init(&e->digests, e->file) != 0) {
        st = ZT_E_NOMEM;
        snprintf(err.message, sizeof(err.message), "out of memory indexing its digests");
    }
    if (st) {
        zt_close(e->file);
        e->file = NULL;
        e->error = strdup(err.message);
        e->error_code = zt_status_name(st);
        e->retry = is_transient(st);
        log_not_served(c, e, prev);
        return e;
    }
    e->v2 = ztd_v2_entry_new(e->file, rel, c->root_real);
    if (zt_file_warning(e->file))
        ztd_log(ZTD_LOG_WARN, "catalog: %s: %s", rel, zt_file_warning(e->file));
    slot_init(e);
    e->fds.file = e->file;
    ztd_fdcache_add(c->fdc, &e->fds);
    return e;
}

/* ---- scanning */

int ztd_entry_vec_push(ztd_entry_vec *v, ztd_entry *e)
{
    if (ZTD_GROW_ITEMS(v->v, v->cap, v->n + 1, 64) != 0)
        return -1;
    v->v[v->n++] = e;
    return 0;
}

static bool inside_root(const ztd_catalog *c, const char *abs)
{
    char real[PATH_MAX];
    if (!realpath(abs, real))
        return false;
    size_t n = strlen(c->root_real);
    return !strncmp(real, c->root_real, n) && (real[n] == '/' || real[n] == 0);
}

/* Is prev, opened for the same name, still this file's version? */
static bool reusable(const ztd_entry *prev, const struct stat *sb)
{
    return prev && !prev->retry && prev->dev == sb->st_dev && prev->ino == sb->st_ino &&
           prev->size == (uint64_t)sb->st_size && prev->mtime_ns == ns_of(sb->st_mtim) &&
           prev->ctime_ns == ns_of(sb->st_ctim) && prev->mode == sb->st_mode &&
           !ztd_entry_stale(prev) && ztd_v2_entry_current(prev->v2, prev->file);
}

/* Is the file the same inode, unwritten, as an upload verified? (Not ctime:
 * the rename that published it changed that.) */
static bool same_inode(const struct stat *v, const struct stat *sb)
{
    return v->st_dev == sb->st_dev && v->st_ino == sb->st_ino && v->st_size == sb->st_size &&
           ns_of(v->st_mtim) == ns_of(sb->st_mtim);
}

/* The entry for the file at rel, held, or NULL when it is not one to serve
 * or report. Runs on several threads at once (scan_files). */
static ztd_entry *consider_file(ztd_catalog *c, const ztd_snapshot *old, const char *rel,
                                const char *abs, bool is_link)
{
    struct stat sb;
    if (stat(abs, &sb) != 0 || !S_ISREG(sb.st_mode))
        return NULL;
    if (is_link && !inside_root(c, abs)) {
        ztd_log(ZTD_LOG_WARN, "catalog: %s is a symlink leading outside the root: skipped", rel);
        return NULL;
    }
    ztd_entry *prev = old ? ztd_snapshot_find(old, rel, strlen(rel)) : NULL;
    ztd_entry *e;
    if (reusable(prev, &sb)) {
        entry_hold(prev);
        e = prev;
        if (ztd_entry_ok(e))
            __atomic_add_fetch(&c->carried, 1, __ATOMIC_RELAXED);
    } else if (!(e = entry_open(c, rel, abs, &sb, prev))) {
        ztd_log(ZTD_LOG_ERROR, "catalog: out of memory opening %s", rel);
        return NULL;
    }
    if (c->verified_rel && !strcmp(rel, c->verified_rel) && same_inode(c->verified_sb, &sb))
        ztd_digest_settle_all_verified(&e->digests);
    return e;
}

static void push_or_drop(ztd_entry_vec *out, ztd_entry *e)
{
    if (e && ztd_entry_vec_push(out, e) != 0)
        entry_drop(e);
}

/* The walk's list of files to consider: names relative to the root. */
typedef struct scan_file {
    char *rel;
    bool is_link;
    ztd_entry *e; /* consider_file's answer */
} scan_file;

typedef struct file_vec {
    scan_file *v;
    size_t n, cap;
} file_vec;

static int files_push(file_vec *v, const char *rel, bool is_link)
{
    if (ZTD_GROW_ITEMS(v->v, v->cap, v->n + 1, 64) != 0)
        return -1;
    if (!(v->v[v->n].rel = strdup(rel)))
        return -1;
    v->v[v->n].is_link = is_link;
    v->v[v->n].e = NULL;
    v->n++;
    return 0;
}

typedef struct scan_job {
    ztd_catalog *c;
    const ztd_snapshot *old;
    scan_file *files;
} scan_job;

static void scan_one(void *ud, size_t i)
{
    scan_job *j = ud;
    scan_file *f = &j->files[i];
    char abs[PATH_MAX];
    if ((size_t)snprintf(abs, sizeof(abs), "%s/%s", j->c->root, f->rel) < sizeof(abs))
        f->e = consider_file(j->c, j->old, f->rel, abs, f->is_link);
}

/* Every listed file considered, on up to SCAN_THREADS threads; their entries
 * appended to out in the walk's order. Frees files. */
static void scan_files(ztd_catalog *c, const ztd_snapshot *old, file_vec *files, ztd_entry_vec *out)
{
    scan_job j = {c, old, files->v};
    ztd_parallel_for(files->n, SCAN_THREADS, scan_one, &j);
    for (size_t i = 0; i < files->n; i++) {
        push_or_drop(out, files->v[i].e);
        free(files->v[i].rel);
    }
    free(files->v);
    *files = (file_vec){0};
}

/* The previous entries under REL ("" for all), kept when REL cannot be read
 * now: out of fds, a rescan must not drop files that are open and served. */
static void carry_dir(ztd_catalog *c, const ztd_snapshot *old, const char *rel, ztd_entry_vec *out)
{
    size_t n = strlen(rel);
    for (size_t i = 0; old && i < old->n; i++) {
        ztd_entry *e = old->entries[i];
        if (ztd_entry_virtual(e) || (n && (strncmp(e->name, rel, n) || e->name[n] != '/')))
            continue; /* views and indexes are made again from the files */
        entry_hold(e);
        if (ztd_entry_vec_push(out, e) != 0) {
            entry_drop(e);
            return;
        }
        if (ztd_entry_ok(e))
            __atomic_add_fetch(&c->carried, 1, __ATOMIC_RELAXED);
    }
}

/* Does a pattern match path (the whole of it)? */
static bool excluded_path(const ztd_catalog *c, const char *path)
{
    for (size_t i = 0; i < c->nexclude; i++)
        if (fnmatch(c->exclude[i], path, 0) == 0)
            return true;
    return false;
}

bool ztd_catalog_excluded(const ztd_catalog *c, const char *rel)
{
    char p[PATH_MAX];
    size_t n = strlen(rel);
    if (!c->nexclude)
        return false;
    if (n >= sizeof(p))
        return true;
    memcpy(p, rel, n + 1);
    for (size_t i = 0; i <= n; i++) {
        if (p[i] != '/' && p[i] != 0)
            continue;
        char was = p[i];
        p[i] = 0;
        bool x = excluded_path(c, p);
        p[i] = was;
        if (x)
            return true;
    }
    return false;
}

int ztd_catalog_set_exclude(ztd_catalog *c, const char *const *patterns, size_t n)
{
    char **v = n ? calloc(n, sizeof(*v)) : NULL;
    if (n && !v)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (!(v[i] = strdup(patterns[i]))) {
            while (i--)
                free(v[i]);
            free(v);
            return -1;
        }
    for (size_t i = 0; i < c->nexclude; i++)
        free(c->exclude[i]);
    free(c->exclude);
    c->exclude = v;
    c->nexclude = n;
    return 0;
}

/* The walk: files under rel listed in files (to be opened by scan_files), and
 * the previous entries of a directory that cannot be read now carried to out. */
static void scan_dir(ztd_catalog *c, const ztd_snapshot *old, const char *rel, int depth,
                     file_vec *files, ztd_entry_vec *out)
{
    char abs[PATH_MAX];
    snprintf(abs, sizeof(abs), "%s%s%s", c->root, rel[0] ? "/" : "", rel);
    DIR *d = opendir(abs);
    if (!d) {
        int e = errno;
        bool transient = e == EMFILE || e == ENFILE || e == ENOMEM;
        ztd_log(ZTD_LOG_WARN, "catalog: cannot read directory %s: %s%s", abs, strerror(e),
                transient ? " (its files are kept as they were, and it is retried)" : "");
        if (transient) {
            c->dirs_retry++;
            carry_dir(c, old, rel, out);
        }
        return;
    }
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.')
            continue;
        char crel[PATH_MAX], cabs[PATH_MAX];
        if ((size_t)snprintf(crel, sizeof(crel), "%s%s%s", rel, rel[0] ? "/" : "", de->d_name) >=
                sizeof(crel) ||
            (size_t)snprintf(cabs, sizeof(cabs), "%s/%s", c->root, crel) >= sizeof(cabs))
            continue;
        /* The type from the directory when it gives one: an lstat here
         * would be one synchronous read per file on a cold disk. */
        struct stat lsb;
        if (de->d_type != DT_UNKNOWN)
            lsb.st_mode = DTTOIF(de->d_type);
        else if (lstat(cabs, &lsb) != 0)
            continue;
        if (!ztd_utf8_valid(de->d_name, strlen(de->d_name))) {
            ztd_log(ZTD_LOG_WARN, "catalog: skipping a name in %s that is not UTF-8", abs);
            continue;
        }
        if (excluded_path(c, crel))
            continue;
        if (S_ISDIR(lsb.st_mode)) {
            if (depth < MAX_DIR_DEPTH)
                scan_dir(c, old, crel, depth + 1, files, out);
        } else if (files_push(files, crel, S_ISLNK(lsb.st_mode)) != 0) {
            ztd_log(ZTD_LOG_ERROR, "catalog: out of memory listing %s", crel);
        }
    }
    closedir(d);
}

static int cmp_entry(const void *a, const void *b)
{
    const ztd_entry *x = *(ztd_entry *const *)a, *y = *(ztd_entry *const *)b;
    return strcmp(x->name, y->name);
}

/* ---- snapshots */

static uint64_t blob_key(const uint8_t *sha)
{
    uint64_t k;
    memcpy(&k, sha, 8);
    return k;
}

/* Index e's sha256 components in s's table (which has room: see index_blobs). */
static void blobs_add(ztd_snapshot *s, ztd_entry *e)
{
    size_t mask = s->blob_cap - 1;
    for (size_t j = 0; e->file && j < zt_file_object_count(e->file); j++) {
        const zt_object *o = zt_file_object_at(e->file, j);
        for (size_t k = 0; k < zt_object_component_count(o); k++) {
            const zt_component *comp = zt_object_component_at(o, k);
            if (zt_component_digest_kind(comp) != ZT_DIGEST_SHA256 ||
                !ztd_v2_part_servable(e->v2, comp))
                continue;
            const uint8_t *sha = zt_component_digest_bytes(comp, NULL);
            size_t h = (size_t)blob_key(sha) & mask, claims = 0;
            for (; s->blobs[h].entry; h = (h + 1) & mask)
                claims += !memcmp(s->blobs[h].sha256, sha, 32);
            if (claims >= ZTD_BLOB_CLAIMS)
                continue;
            memcpy(s->blobs[h].sha256, sha, 32);
            s->blobs[h].entry = e;
            s->blobs[h].object = o;
            s->blobs[h].component = comp;
            s->blobs[h].check = ztd_digest_find(&e->digests, comp);
            s->nblobs++;
        }
    }
}

static size_t sha_components(const ztd_entry *e)
{
    size_t n = 0;
    for (size_t j = 0; e && e->file && j < zt_file_object_count(e->file); j++)
        n += zt_object_component_count(zt_file_object_at(e->file, j));
    return n;
}

static int index_blobs(ztd_snapshot *s)
{
    size_t count = 0;
    for (size_t i = 0; i < s->n; i++)
        count += sha_components(s->entries[i]);
    size_t cap = 16;
    while (cap < count * 2)
        cap *= 2;
    if (!(s->blobs = calloc(cap, sizeof(*s->blobs))))
        return -1;
    s->blob_cap = cap;
    s->nblobs = 0;
    for (size_t i = 0; i < s->n; i++)
        blobs_add(s, s->entries[i]);
    return 0;
}

/* Empty slot i of the table, moving back the entries after it that probing
 * would no longer find (deletion in linear probing, without tombstones). */
static void blob_delete_at(ztd_snapshot *s, size_t i)
{
    size_t mask = s->blob_cap - 1;
    for (size_t j = (i + 1) & mask; s->blobs[j].entry; j = (j + 1) & mask) {
        size_t home = (size_t)blob_key(s->blobs[j].sha256) & mask;
        bool stays = i <= j ? (i < home && home <= j) : (i < home || home <= j);
        if (stays)
            continue;
        s->blobs[i] = s->blobs[j];
        i = j;
    }
    memset(&s->blobs[i], 0, sizeof(s->blobs[i]));
    s->nblobs--;
}

static void blobs_remove(ztd_snapshot *s, const ztd_entry *e)
{
    size_t mask = s->blob_cap - 1;
    for (size_t j = 0; e->file && j < zt_file_object_count(e->file); j++) {
        const zt_object *o = zt_file_object_at(e->file, j);
        for (size_t k = 0; k < zt_object_component_count(o); k++) {
            const zt_component *comp = zt_object_component_at(o, k);
            if (zt_component_digest_kind(comp) != ZT_DIGEST_SHA256)
                continue;
            const uint8_t *sha = zt_component_digest_bytes(comp, NULL);
            for (size_t h = (size_t)blob_key(sha) & mask; s->blobs[h].entry; h = (h + 1) & mask)
                if (s->blobs[h].component == comp) {
                    blob_delete_at(s, h);
                    break;
                }
        }
    }
}

/* s's table from old's, with gone's components out and added's in: a copy
 * of the table instead of a walk over every file's model. Rebuilt whole when
 * it would be more than half full. */
static int reindex_blobs(ztd_snapshot *s, const ztd_snapshot *old, const ztd_entry *gone,
                         ztd_entry *added)
{
    if (!old->blob_cap || (old->nblobs + sha_components(added)) * 2 > old->blob_cap)
        return index_blobs(s);
    if (!(s->blobs = malloc(old->blob_cap * sizeof(*s->blobs))))
        return -1;
    memcpy(s->blobs, old->blobs, old->blob_cap * sizeof(*s->blobs));
    s->blob_cap = old->blob_cap;
    s->nblobs = old->nblobs;
    if (gone)
        blobs_remove(s, gone);
    if (added)
        blobs_add(s, added);
    return 0;
}

/* Lower is better: which of several components claiming a digest answers. */
static int claim_rank(const ztd_blob *b)
{
    switch (b->check ? ztd_digest_check_state(b->check) : ZTD_DIGEST_PENDING) {
    case ZTD_DIGEST_VERIFIED:
        return 0;
    case ZTD_DIGEST_MISMATCH:
        return 2;
    default:
        return 1;
    }
}

const ztd_blob *ztd_snapshot_find_blob(const ztd_snapshot *s, const uint8_t sha256[32])
{
    if (!s->blob_cap)
        return NULL;
    const ztd_blob *best = NULL;
    size_t h = (size_t)blob_key(sha256) & (s->blob_cap - 1);
    for (; s->blobs[h].entry; h = (h + 1) & (s->blob_cap - 1)) {
        const ztd_blob *b = &s->blobs[h];
        if (memcmp(b->sha256, sha256, 32) || (best && claim_rank(best) <= claim_rank(b)))
            continue;
        best = b;
        if (!claim_rank(b))
            break;
    }
    return best;
}

/* A view's or an index's object in the listing. A view's etag is the one
 * its file's identity gives (st_views.h): the digests' replaces it in
 * answers once they are verified. */
bool ztd_entry_view_refused(const ztd_entry *e)
{
    const ztd_st_view *v = e->view_of ? __atomic_load_n(&e->view_of->st_view, __ATOMIC_ACQUIRE)
                                      : NULL;
    return v && v->err;
}

static json_t *virtual_json(const ztd_entry *e)
{
    json_t *j = json_pack("{s:s, s:I}", "name", e->name, "size", (json_int_t)e->size);
    if (!j || e->st_index) {
        if (j)
            json_object_update_new(j, json_pack("{s:s, s:s, s:s, s:s}", "etag", e->file_etag,
                                                "format", "safetensors-index", "status", "ok",
                                                "last_modified", e->last_modified));
        return j;
    }
    const ztd_st_view *v = __atomic_load_n(&e->view_of->st_view, __ATOMIC_ACQUIRE);
    if (v && !v->err)
        json_object_set_new(j, "etag", json_string(v->own ? e->view_of->file_etag : v->file_etag));
    json_object_set_new(j, "format", json_string("safetensors-view"));
    json_object_set_new(j, "view_of", json_string(e->view_of->name));
    if (v && v->err) {
        json_object_set_new(j, "status", json_string("error"));
        json_object_set_new(
            j, "error", json_pack("{s:s, s:s}", "code", ztd_err_code(v->err), "message", v->msg));
    } else {
        json_object_set_new(j, "status", json_string("ok"));
    }
    json_object_set_new(j, "last_modified", json_string(e->last_modified));
    return j;
}

json_t *ztd_entry_json(const ztd_entry *e)
{
    if (ztd_entry_virtual(e))
        return virtual_json(e);
    json_t *j = json_pack("{s:s, s:I, s:s}", "name", e->name, "size", (json_int_t)e->size, "etag",
                          e->file_etag);
    if (!j)
        return NULL;
    if (e->kind == ZTD_ENTRY_PLAIN && !e->error) {
        json_object_set_new(j, "format", json_string("file"));
        json_object_set_new(j, "status", json_string("ok"));
        json_object_set_new(j, "last_modified", json_string(e->last_modified));
        const uint8_t *sha = ztd_entry_plain_sha256_known(e);
        if (sha) {
            char hex[65], tag[80];
            ztd_hex_encode(sha, 32, hex);
            hex[64] = 0;
            snprintf(tag, sizeof(tag), "\"sha256:%s\"", hex);
            json_object_set_new(j, "sha256", json_string(hex));
            json_object_set_new(j, "etag", json_string(tag));
        }
    } else if (e->file) {
        json_object_set_new(j, "format", json_string(zt_file_kind_name(zt_file_get_kind(e->file))));
        json_object_set_new(j, "version", json_string(zt_file_version(e->file)));
        json_object_set_new(j, "objects", json_integer((json_int_t)zt_file_object_count(e->file)));
        /* Components the verifier found not to match their digests: never
         * served by name (unless serve_corrupt) nor by blob URL. */
        size_t bad = __atomic_load_n(&e->digests.count[ZTD_DIGEST_MISMATCH], __ATOMIC_RELAXED);
        json_object_set_new(j, "status", json_string(bad ? "corrupt" : "ok"));
        if (bad)
            json_object_set_new(j, "corrupt_components", json_integer((json_int_t)bad));
        json_object_set_new(j, "last_modified", json_string(e->last_modified));
        ztd_v2_entry_json(e->v2, e->name, j);
    } else {
        json_object_set_new(j, "status", json_string("error"));
        json_object_set_new(
            j, "error",
            json_pack("{s:s, s:s}", "code", e->error_code, "message", e->error ? e->error : ""));
    }
    return j;
}

static int build_list_json(ztd_snapshot *s)
{
    json_t *arr = json_array();
    for (size_t i = 0; arr && i < s->n; i++)
        if (json_array_append_new(arr, ztd_entry_json(s->entries[i]))) {
            json_decref(arr);
            return -1;
        }
    json_t *root = json_pack("{s:o, s:I}", "files", arr, "count", (json_int_t)s->n);
    if (!root)
        return -1;
    s->list_json = ztd_json_line(root, &s->list_json_len);
    json_decref(root);
    if (!s->list_json)
        return -1;
    return 0;
}

void ztd_snapshot_release(ztd_snapshot *s)
{
    if (!s || __atomic_sub_fetch(&s->refs, 1, __ATOMIC_ACQ_REL) != 0)
        return;
    for (size_t i = 0; i < s->n; i++)
        entry_drop(s->entries[i]);
    free(s->entries);
    free(s->blobs);
    free(s->list_json);
    pthread_mutex_destroy(&s->list_mu);
    free(s);
}

char *ztd_snapshot_list_json(ztd_snapshot *s, size_t *len)
{
    pthread_mutex_lock(&s->list_mu);
    /* Read before building: a verdict that lands meanwhile rebuilds it next time. */
    unsigned long seen = ztd_digest_mismatches_seen();
    unsigned long hashes = __atomic_load_n(&g_plain_hashes, __ATOMIC_RELAXED);
    if (s->list_json && (s->list_mismatches != seen || s->list_hashes != hashes)) {
        free(s->list_json); /* a file's status became corrupt, or a plain file's sha256 known */
        s->list_json = NULL;
    }
    if (!s->list_json && build_list_json(s) != 0)
        ztd_log(ZTD_LOG_ERROR, "catalog: out of memory building the listing");
    s->list_mismatches = seen;
    s->list_hashes = hashes;
    char *copy = s->list_json ? malloc(s->list_json_len + 1) : NULL;
    if (copy) {
        memcpy(copy, s->list_json, s->list_json_len + 1);
        *len = s->list_json_len;
    }
    pthread_mutex_unlock(&s->list_mu);
    return copy;
}

/* A name (len bytes) to look for in a snapshot's sorted entries. */
typedef struct {
    const ztd_snapshot *s;
    const char *name;
    size_t len;
} name_key;

static bool entry_below(const void *ctx, size_t i)
{
    const name_key *k = ctx;
    const ztd_entry *e = k->s->entries[i];
    int c = memcmp(e->name, k->name, e->name_len < k->len ? e->name_len : k->len);
    return c < 0 || (c == 0 && e->name_len < k->len);
}

size_t ztd_snapshot_lower_bound(const ztd_snapshot *s, const char *name, size_t len)
{
    name_key k = {s, name, len};
    return ztd_partition_point(0, s->n, entry_below, &k);
}

ztd_entry *ztd_snapshot_find(const ztd_snapshot *s, const char *name, size_t len)
{
    size_t i = ztd_snapshot_lower_bound(s, name, len);
    if (i == s->n)
        return NULL;
    ztd_entry *e = s->entries[i];
    return e->name_len == len && memcmp(e->name, name, len) == 0 ? e : NULL;
}

ztd_snapshot *ztd_catalog_acquire(ztd_catalog *c)
{
    pthread_mutex_lock(&c->mu);
    ztd_snapshot *s = c->current;
    if (s)
        __atomic_add_fetch(&s->refs, 1, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&c->mu);
    return s;
}

/* ---- the catalog */

ztd_catalog *ztd_catalog_new(const char *root, uint64_t max_manifest_size)
{
    ztd_catalog *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    c->root = strdup(root);
    c->root_real = realpath(root, NULL);
    c->max_manifest = max_manifest_size;
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->changed, NULL);
    pthread_mutex_init(&c->scan_mu, NULL);
    if (c->root)
        c->fdc = ztd_fdcache_new(c->root, ZTD_CATALOG_MAX_OPEN, max_manifest_size);
    if (!c->root || !c->root_real || !c->fdc) {
        ztd_catalog_free(c);
        return NULL;
    }
    size_t n = strlen(c->root);
    while (n > 1 && c->root[n - 1] == '/')
        c->root[--n] = 0;
    return c;
}

void ztd_catalog_free(ztd_catalog *c)
{
    if (!c)
        return;
    ztd_snapshot_release(c->current);
    ztd_fdcache_free(c->fdc);
    ztd_catalog_set_exclude(c, NULL, 0);
    pthread_mutex_destroy(&c->mu);
    pthread_cond_destroy(&c->changed);
    pthread_mutex_destroy(&c->scan_mu);
    free(c->root);
    free(c->root_real);
    free(c);
}

void ztd_catalog_set_max_open(ztd_catalog *c, size_t max)
{
    ztd_fdcache_set_max(c->fdc, max);
}

void ztd_catalog_fd_stats(ztd_catalog *c, ztd_fdcache_stats *out)
{
    ztd_fdcache_get_stats(c->fdc, out);
}

const char *ztd_catalog_root(const ztd_catalog *c)
{
    return c->root;
}

static int rescan_locked(ztd_catalog *c);

int ztd_catalog_rescan(ztd_catalog *c)
{
    pthread_mutex_lock(&c->scan_mu);
    c->warned = c->unwarned = 0;
    ztd_catalog_stats before, after;
    ztd_catalog_get_stats(c, &before);
    int rc = rescan_locked(c);
    /* The files this scan dropped were closed only once it ended: the files
     * that failed for want of fds may fit now (a removal, then one rescan). */
    ztd_catalog_get_stats(c, &after);
    if (rc == 0 && c->carried < before.files_valid && (after.files_retry || after.dirs_retry))
        rc = rescan_locked(c);
    pthread_mutex_unlock(&c->scan_mu);
    return rc;
}

/* Make v (sorted entries, owned) the current snapshot. scan: a full scan, which
 * counts as a reload. 0, or -1 when out of memory (v is released). */
/* What an update changed: old with gone (or nothing) out and added (or
 * nothing) in. Counts and the digest table follow from old's. */
typedef struct delta {
    const ztd_snapshot *old;
    const ztd_entry *gone;
    ztd_entry *added;
} delta;

/* An entry's counts: valid, to retry, v2 state. */
static void count(ztd_snapshot *s, const ztd_entry *e, int sign)
{
    if (!e || ztd_entry_virtual(e))
        return;
    s->nvalid += (size_t)(sign * ztd_entry_ok(e));
    s->nretry += (size_t)(sign * e->retry);
    s->nv2 += (size_t)(sign * (e->v2 != NULL));
}

static int swap_in(ztd_catalog *c, ztd_entry_vec *v, bool scan, const delta *d)
{
    ztd_snapshot *s = calloc(1, sizeof(*s));
    if (!s) {
        for (size_t i = 0; i < v->n; i++)
            entry_drop(v->v[i]);
        free(v->v);
        return -1;
    }
    s->refs = 1;
    s->entries = v->v;
    s->n = v->n;
    pthread_mutex_init(&s->list_mu, NULL);
    if (d) {
        s->nvalid = d->old->nvalid;
        s->nretry = d->old->nretry;
        s->nv2 = d->old->nv2;
        count(s, d->gone, -1);
        count(s, d->added, 1);
    } else {
        for (size_t i = 0; i < v->n; i++)
            count(s, v->v[i], 1);
    }
    for (size_t i = 0; i < v->n; i++)
        s->nvirtual += ztd_entry_virtual(v->v[i]);
    if ((d ? reindex_blobs(s, d->old, d->gone, d->added) : index_blobs(s)) != 0) {
        ztd_snapshot_release(s);
        ztd_log(ZTD_LOG_ERROR, "catalog: out of memory building the snapshot");
        return -1;
    }
    pthread_mutex_lock(&c->mu);
    s->generation = ++c->generation;
    ztd_snapshot *prev = c->current;
    c->current = s;
    c->stats.reloads += scan;
    c->stats.files_valid = s->nvalid;
    c->stats.files_invalid = s->n - s->nvalid - s->nvirtual;
    c->stats.files_retry = s->nretry;
    if (scan)
        c->stats.dirs_retry = c->dirs_retry;
    pthread_cond_broadcast(&c->changed);
    pthread_mutex_unlock(&c->mu);
    ztd_snapshot_release(prev);
    ztd_log(scan ? ZTD_LOG_INFO : ZTD_LOG_DEBUG,
            "catalog: %zu files (%zu valid, %zu invalid, %zu views and indexes), generation %llu",
            s->n - s->nvirtual, s->nvalid, s->n - s->nvalid - s->nvirtual, s->nvirtual,
            (unsigned long long)s->generation);
    return 0;
}

/* The views and indexes of the entries in v (see ztd_catalog_set_virtuals). */
static void add_virtuals(ztd_catalog *c, ztd_entry_vec *v, const ztd_snapshot *old, const char *dir)
{
    if (c->virtuals && c->virtuals(&v->v, &v->n, &v->cap, old, dir) != 0)
        ztd_log(ZTD_LOG_ERROR, "catalog: out of memory adding the safetensors views%s%s",
                dir ? " of " : "", dir ? (dir[0] ? dir : "the root") : "");
}

static int rescan_locked(ztd_catalog *c)
{
    struct stat sb;
    if (stat(c->root, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        ztd_log(ZTD_LOG_ERROR, "catalog: root %s is not a readable directory", c->root);
        return -1;
    }
    ztd_snapshot *old = ztd_catalog_acquire(c);
    ztd_entry_vec v = {0};
    file_vec files = {0};
    c->carried = c->dirs_retry = 0;
    scan_dir(c, old, "", 0, &files, &v);
    scan_files(c, old, &files, &v);
    if (c->unwarned)
        ztd_log(ZTD_LOG_WARN, "catalog: %zu more files are not served (GET /v1/files lists why)",
                c->unwarned);
    if (v.n) /* an empty root leaves v.v NULL, which qsort must not get */
        qsort(v.v, v.n, sizeof(*v.v), cmp_entry);
    add_virtuals(c, &v, old, NULL);
    ztd_snapshot_release(old);
    return swap_in(c, &v, true, NULL);
}

/* Would a scan consider rel at all? Its directories are at most MAX_DIR_DEPTH
 * deep, and no segment is hidden (the scan skips names starting with '.'). */
static bool scannable(const ztd_catalog *c, const char *rel)
{
    size_t depth = 0;
    for (const char *p = rel; *p; p++)
        depth += *p == '/';
    return depth <= MAX_DIR_DEPTH && rel[0] != '.' && !strstr(rel, "/.") &&
           !ztd_catalog_excluded(c, rel);
}

/* The entry for rel as a scan would make it, appended to v when the file is
 * one a scan serves (or reports). */
static void consider_one(ztd_catalog *c, const ztd_snapshot *old, const char *rel, ztd_entry_vec *v)
{
    char abs[PATH_MAX];
    struct stat lsb;
    if (!scannable(c, rel) ||
        (size_t)snprintf(abs, sizeof(abs), "%s/%s", c->root, rel) >= sizeof(abs) ||
        lstat(abs, &lsb) != 0)
        return;
    push_or_drop(v, consider_file(c, old, rel, abs, S_ISLNK(lsb.st_mode)));
}

/* Is rel's entry in old still the file on disk? Then an update has nothing to
 * do (the inotify event of a file the server itself just published): no new
 * snapshot, whose index costs O(n) memory work. Digests the server verified
 * are settled on the entry as it is. */
static bool still_current(ztd_catalog *c, const ztd_snapshot *old, const char *rel,
                          const struct stat *verified)
{
    char abs[PATH_MAX];
    struct stat lsb, sb;
    ztd_entry *prev = ztd_snapshot_find(old, rel, strlen(rel));
    if (!prev || !scannable(c, rel) ||
        (size_t)snprintf(abs, sizeof(abs), "%s/%s", c->root, rel) >= sizeof(abs) ||
        lstat(abs, &lsb) != 0 || S_ISLNK(lsb.st_mode) || !S_ISREG(lsb.st_mode))
        return false;
    sb = lsb;
    if (!reusable(prev, &sb))
        return false;
    if (verified && same_inode(verified, &sb))
        ztd_digest_settle_all_verified(&prev->digests);
    return true;
}

/* Has a shard of a v2 root changed? Only roots are looked at (most snapshots
 * have none): a shard published after its root must reopen the root. */
static bool v2_stale(const ztd_snapshot *s)
{
    for (size_t i = 0; s->nv2 && i < s->n; i++) {
        const ztd_entry *e = s->entries[i];
        if (e->v2 && !ztd_v2_entry_current(e->v2, e->file))
            return true;
    }
    return false;
}

int ztd_catalog_update(ztd_catalog *c, const char *rel, const struct stat *verified)
{
    pthread_mutex_lock(&c->scan_mu);
    ztd_snapshot *old = ztd_catalog_acquire(c);
    if (!old) { /* no first scan yet: it will find the file */
        pthread_mutex_unlock(&c->scan_mu);
        return 0;
    }
    uint64_t t0 = ztd_now_us();
    if (still_current(c, old, rel, verified)) {
        ztd_snapshot_release(old);
        pthread_mutex_unlock(&c->scan_mu);
        return 0;
    }
    if (v2_stale(old)) { /* rare: the whole scan settles it */
        ztd_snapshot_release(old);
        pthread_mutex_unlock(&c->scan_mu);
        return ztd_catalog_rescan(c);
    }
    size_t at = ztd_snapshot_lower_bound(old, rel, strlen(rel));
    ztd_entry *gone = at < old->n && !strcmp(old->entries[at]->name, rel) ? old->entries[at] : NULL;
    ztd_entry_vec one = {0};
    c->verified_rel = verified ? rel : NULL;
    c->verified_sb = verified;
    c->warned = c->unwarned = c->carried = 0;
    consider_one(c, old, rel, &one);
    c->verified_rel = NULL;
    c->verified_sb = NULL;
    ztd_entry *added = one.n ? one.v[0] : NULL;
    free(one.v);
    /* The others as they are: their pointers copied, each held once more. */
    size_t after = old->n - at - (gone != NULL);
    ztd_entry_vec v = {malloc((old->n + 1) * sizeof(*v.v)), 0, old->n + 1};
    if (!v.v) {
        entry_drop(added);
        ztd_snapshot_release(old);
        pthread_mutex_unlock(&c->scan_mu);
        return -1;
    }
    if (at) /* an empty snapshot's entries are NULL, which memcpy must not get */
        memcpy(v.v, old->entries, at * sizeof(*v.v));
    v.n = at;
    if (added)
        v.v[v.n++] = added;
    if (after)
        memcpy(v.v + v.n, old->entries + at + (gone != NULL), after * sizeof(*v.v));
    v.n += after;
    for (size_t i = 0; i < v.n; i++)
        if (v.v[i] != added)
            entry_hold(v.v[i]);
    char dir[PATH_MAX];
    const char *slash = strrchr(rel, '/');
    snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - rel) : 0, rel);
    add_virtuals(c, &v, old, dir);
    delta d = {old, gone, added};
    int rc = swap_in(c, &v, false, &d);
    ztd_snapshot_release(old);
    pthread_mutex_unlock(&c->scan_mu);
    /* No file but rel's was touched; the time is the new snapshot's O(n)
     * memory work (the pointer copy, a reference per entry, the digest table's copy). */
    ztd_log(ZTD_LOG_DEBUG, "catalog: %s updated in %.1f ms (%zu files)", rel,
            (double)(ztd_now_us() - t0) / 1e3, v.n);
    return rc;
}

bool ztd_catalog_ready(ztd_catalog *c)
{
    pthread_mutex_lock(&c->mu);
    bool r = c->current != NULL;
    pthread_mutex_unlock(&c->mu);
    return r;
}

void ztd_catalog_get_stats(ztd_catalog *c, ztd_catalog_stats *out)
{
    pthread_mutex_lock(&c->mu);
    *out = c->stats;
    pthread_mutex_unlock(&c->mu);
}

uint64_t ztd_catalog_generation(ztd_catalog *c)
{
    pthread_mutex_lock(&c->mu);
    uint64_t g = c->generation;
    pthread_mutex_unlock(&c->mu);
    return g;
}

uint64_t ztd_catalog_wait_change(ztd_catalog *c, uint64_t seen, const bool *stop)
{
    pthread_mutex_lock(&c->mu);
    while (c->generation == seen && !__atomic_load_n(stop, __ATOMIC_ACQUIRE))
        pthread_cond_wait(&c->changed, &c->mu);
    uint64_t g = c->generation;
    pthread_mutex_unlock(&c->mu);
    return g;
}

void ztd_catalog_wake(ztd_catalog *c)
{
    pthread_mutex_lock(&c->mu);
    pthread_cond_broadcast(&c->changed);
    pthread_mutex_unlock(&c->mu);
}

void ztd_catalog_file_hash_counts(ztd_catalog *c, size_t out[3])
{
    memset(out, 0, 3 * sizeof(*out));
    ztd_snapshot *s = ztd_catalog_acquire(c);
    for (size_t i = 0; s && i < s->n; i++) {
        const ztd_entry *e = s->entries[i];
        int st = __atomic_load_n(&e->plain_state, __ATOMIC_ACQUIRE);
        if (st == ZTD_PLAIN_PENDING ? ztd_entry_wants_file_hash(e)
                                    : !ztd_entry_virtual(e) && !e->up)
            out[st]++;
    }
    ztd_snapshot_release(s);
}

void ztd_catalog_digest_counts(ztd_catalog *c, size_t out[ZTD_DIGEST_STATES])
{
    memset(out, 0, ZTD_DIGEST_STATES * sizeof(*out));
    ztd_snapshot *s = ztd_catalog_acquire(c);
    for (size_t i = 0; s && i < s->n; i++)
        for (int k = 0; k < ZTD_DIGEST_STATES; k++)
            out[k] += __atomic_load_n(&s->entries[i]->digests.count[k], __ATOMIC_RELAXED);
    ztd_snapshot_release(s);
}
