/* Content digests of repository files (see hf_digests.h). */
#include "hf/hf_digests.h"
#include "core/hex.h"
#include "store/catalog_v2.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { ROW_HASHING, ROW_DONE };

typedef struct row {
    struct row *next;
    uint64_t h;
    int state;
    dev_t dev;
    ino_t ino;
    uint64_t size;
    int64_t mtime_ns, ctime_ns;
    uint8_t digest[32];
    char name[]; /* NUL-terminated */
} row;

#define NBUCKETS 4096u

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static row *buckets[NBUCKETS];
static uint64_t nrows, nhashed;

static uint64_t key_hash(const ztd_entry *e)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a over the name, then the version */
    for (size_t i = 0; i < e->name_len; i++)
        h = (h ^ (unsigned char)e->name[i]) * 1099511628211ull;
    uint64_t v[4] = {(uint64_t)e->ino, e->size, (uint64_t)e->mtime_ns, (uint64_t)e->ctime_ns};
    for (int i = 0; i < 4; i++)
        h = (h ^ v[i]) * 1099511628211ull;
    return h;
}

static bool same(const row *w, uint64_t h, const ztd_entry *e)
{
    return w->h == h && w->dev == e->dev && w->ino == e->ino && w->size == e->size &&
           w->mtime_ns == e->mtime_ns && w->ctime_ns == e->ctime_ns &&
           strcmp(w->name, e->name) == 0;
}

static row *find(uint64_t h, const ztd_entry *e) /* under mu */
{
    for (row *w = buckets[h % NBUCKETS]; w; w = w->next)
        if (same(w, h, e))
            return w;
    return NULL;
}

static void clear_done(void) /* under mu: rows being hashed stay */
{
    for (unsigned b = 0; b < NBUCKETS; b++) {
        row **pp = &buckets[b];
        while (*pp) {
            row *w = *pp;
            if (w->state == ROW_DONE) {
                *pp = w->next;
                free(w);
                nrows--;
            } else
                pp = &w->next;
        }
    }
}

/* The zTensor identity of a v2 file, from its /raw ETag "\"zt2.<64 hex>\"". */
static bool v2_identity(const ztd_entry *e, uint8_t out[32])
{
    const char *t = e->v2 ? e->v2->raw_etag : "";
    return strncmp(t, "\"zt2.", 5) == 0 && strlen(t) == 5 + 64 + 1 &&
           ztd_hex_decode(t + 5, 32, out) == 0;
}

/* A safetensors view's digest: made from its file's (the view is a function
 * of the file's content), so every replica agrees; not the sha256 of the
 * view's bytes, which are never hashed. */
void ztd_hf_view_digest(const uint8_t src[32], uint8_t out[32])
{
    static const char tag[] = "ztensord safetensors view\n";
    uint8_t buf[sizeof(tag) - 1 + 32];
    memcpy(buf, tag, sizeof(tag) - 1);
    memcpy(buf + sizeof(tag) - 1, src, 32);
    zt_hasher *hs = zt_hasher_new(ZT_DIGEST_SHA256);
    memset(out, 0, 32);
    if (hs) {
        zt_hasher_update(hs, buf, sizeof(buf));
        zt_hasher_final(hs, out);
        zt_hasher_free(hs);
    }
}

void ztd_hf_store_digest(const char *etag, uint64_t size, uint8_t out[32])
{
    static const char tag[] = "ztensord s3 object\n";
    char num[24];
    int n = snprintf(num, sizeof(num), "%llu", (unsigned long long)size);
    zt_hasher *hs = zt_hasher_new(ZT_DIGEST_SHA256);
    memset(out, 0, 32);
    if (hs) {
        zt_hasher_update(hs, tag, sizeof(tag) - 1);
        zt_hasher_update(hs, etag, strlen(etag) + 1); /* with its NUL: a separator */
        zt_hasher_update(hs, num, (size_t)n);
        zt_hasher_final(hs, out);
        zt_hasher_free(hs);
    }
}

/* A model index's sha256: of its bytes, which are in memory. */
static bool index_sha256(const ztd_entry *e, uint8_t out[32])
{
    zt_hasher *hs = zt_hasher_new(ZT_DIGEST_SHA256);
    if (!hs)
        return false;
    zt_hasher_update(hs, e->st_index->json, e->st_index->len);
    zt_hasher_final(hs, out);
    zt_hasher_free(hs);
    return true;
}

bool ztd_hf_digest_known(const ztd_entry *e, uint8_t out[32], bool *is_sha256)
{
    if (e->st_index) {
        *is_sha256 = true;
        return index_sha256(e, out);
    }
    if (e->view_of) {
        uint8_t src[32];
        bool src_sha;
        if (!ztd_hf_digest_known(e->view_of, src, &src_sha))
            return false;
        ztd_hf_view_digest(src, out);
        *is_sha256 = false;
        return true;
    }
    if (v2_identity(e, out)) {
        *is_sha256 = false;
        return true;
    }
    *is_sha256 = true;
    const uint8_t *sha = ztd_entry_file_sha256(e); /* the background verifier's */
    if (sha) {
        memcpy(out, sha, 32);
        return true;
    }
    uint64_t h = key_hash(e);
    pthread_mutex_lock(&mu);
    row *w = find(h, e);
    bool ok = w && w->state == ROW_DONE;
    if (ok)
        memcpy(out, w->digest, 32);
    pthread_mutex_unlock(&mu);
    return ok;
}

/* sha256 of ROOT/name if it is still the entry's version. */
static int hash_file(const char *root, const ztd_entry *e, uint8_t out[32], char *msg, size_t cap)
{
    char path[8192];
    if ((size_t)snprintf(path, sizeof(path), "%s/%s", root, e->name) >= sizeof(path)) {
        snprintf(msg, cap, "\"%s\": path too long", e->name);
        return -1;
    }
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) != 0 || sb.st_dev != e->dev || sb.st_ino != e->ino ||
        (uint64_t)sb.st_size != e->size) {
        snprintf(msg, cap, "\"%s\" changed or went away since it was listed; retry", e->name);
        if (fd >= 0)
            close(fd);
        return -1;
    }
    zt_hasher *hs = zt_hasher_new(ZT_DIGEST_SHA256);
    size_t bufsz = 1u << 20;
    char *buf = malloc(bufsz);
    uint64_t done = 0;
    int rc = hs && buf ? 0 : -1;
    while (rc == 0 && done < e->size) {
        ssize_t n = pread(fd, buf, bufsz, (off_t)done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            snprintf(msg, cap, "\"%s\": read failed at byte %llu: %s", e->name,
                     (unsigned long long)done, n < 0 ? strerror(errno) : "file shrank");
            rc = -1;
            break;
        }
        zt_hasher_update(hs, buf, (size_t)n);
        done += (uint64_t)n;
    }
    if (rc == 0)
        zt_hasher_final(hs, out);
    else if (!hs || !buf)
        snprintf(msg, cap, "out of memory");
    zt_hasher_free(hs);
    free(buf);
    close(fd);
    return rc;
}

int ztd_hf_digest_compute(const char *root, const ztd_entry *e, char *msg, size_t cap)
{
    uint8_t d[32];
    if (e->st_index)
        return 0;
    if (e->view_of)
        return ztd_hf_digest_compute(root, e->view_of, msg, cap);
    if (v2_identity(e, d))
        return 0;
    if (e->up) {
        snprintf(msg, cap, "\"%s\": no digest known for a file of the upstream", e->name);
        return -1;
    }
    if (ztd_entry_file_sha256(e))
        return 0;
    uint64_t h = key_hash(e);
    pthread_mutex_lock(&mu);
    row *w;
    while ((w = find(h, e)) && w->state == ROW_HASHING)
        pthread_cond_wait(&cv, &mu); /* the one hashing always ends it */
    if (w) {
        pthread_mutex_unlock(&mu);
        return 0;
    }
    if (nrows >= ZTD_HF_DIGESTS_MAX)
        clear_done();
    if (!(w = calloc(1, sizeof(*w) + e->name_len + 1))) {
        pthread_mutex_unlock(&mu);
        snprintf(msg, cap, "out of memory");
        return -1;
    }
    *w = (row){.h = h,
               .state = ROW_HASHING,
               .dev = e->dev,
               .ino = e->ino,
               .size = e->size,
               .mtime_ns = e->mtime_ns,
               .ctime_ns = e->ctime_ns};
    memcpy(w->name, e->name, e->name_len + 1);
    w->next = buckets[h % NBUCKETS];
    buckets[h % NBUCKETS] = w;
    nrows++;
    pthread_mutex_unlock(&mu);

    int rc = hash_file(root, e, d, msg, cap);

    pthread_mutex_lock(&mu);
    if (rc == 0) {
        memcpy(w->digest, d, 32);
        w->state = ROW_DONE;
        nhashed++;
    } else { /* unlink it: the next request tries again */
        row **pp = &buckets[h % NBUCKETS];
        while (*pp != w)
            pp = &(*pp)->next;
        *pp = w->next;
        free(w);
        nrows--;
    }
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
    return rc;
}

void ztd_hf_digest_stats(uint64_t *rows, uint64_t *hashed)
{
    pthread_mutex_lock(&mu);
    *rows = nrows;
    *hashed = nhashed;
    pthread_mutex_unlock(&mu);
}
