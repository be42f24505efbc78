/* A repository in one catalog snapshot (see hf_repo.h). */
#include "hf/hf_repo.h"
#include "core/hex.h"
#include "core/partition.h"
#include "hf/hf_digests.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Is byte string a (al bytes) below b (bl bytes) in name order? */
static bool name_below(const char *a, size_t al, const char *b, size_t bl)
{
    int c = memcmp(a, b, al < bl ? al : bl);
    return c < 0 || (c == 0 && al < bl);
}

/* A path to look for in a repository's files (sorted by name). */
typedef struct {
    const ztd_hf_file *files;
    const char *s;
    size_t len;
} name_key;

int ztd_hf_repo_open(ztd_catalog *c, const char *repo, ztd_hf_repo *out)
{
    memset(out, 0, sizeof(*out));
    size_t rl = strlen(repo);
    char prefix[256];
    if (rl + 2 > sizeof(prefix))
        return 1;
    memcpy(prefix, repo, rl);
    prefix[rl] = '/';
    size_t pl = rl + 1;
    if (!(out->snap = ztd_catalog_acquire(c)))
        return -1;
    const ztd_snapshot *s = out->snap;
    size_t lo = ztd_snapshot_lower_bound(s, prefix, pl), hi = lo;
    while (hi < s->n && s->entries[hi]->name_len > pl &&
           memcmp(s->entries[hi]->name, prefix, pl) == 0)
        hi++;
    if (hi > lo && !(out->files = calloc(hi - lo, sizeof(*out->files)))) {
        ztd_hf_repo_close(out);
        return -1;
    }
    for (size_t i = lo; i < hi; i++) {
        ztd_entry *e = s->entries[i];
        if (e->error || ztd_entry_view_refused(e)) /* invalid files are not served */
            continue;
        ztd_hf_file *f = &out->files[out->n++];
        f->e = e;
        f->rel = e->name + pl;
        f->rel_len = e->name_len - pl;
        f->size = e->size;
        f->mtime = e->mtime_ns / 1000000000;
        f->known = ztd_hf_digest_known(e, f->digest, &f->sha256);
        out->missing += !f->known;
        if (f->mtime > out->mtime_max)
            out->mtime_max = f->mtime;
    }
    if (out->n == 0) {
        ztd_hf_repo_close(out);
        return 1;
    }
    ztd_hf_repo_seal(out);
    return 0;
}

void ztd_hf_repo_close(ztd_hf_repo *r)
{
    free(r->files);
    free(r->names);
    if (r->snap)
        ztd_snapshot_release(r->snap);
    memset(r, 0, sizeof(*r));
}

int ztd_hf_repo_hash(ztd_hf_repo *r, const char *root, char *msg, size_t cap)
{
    for (size_t i = 0; i < r->n; i++)
        if (!r->files[i].known && r->files[i].e &&
            ztd_hf_digest_compute(root, r->files[i].e, msg, cap) != 0)
            return -1;
    return 0;
}

bool ztd_hf_repo_seal(ztd_hf_repo *r)
{
    r->missing = 0;
    for (size_t i = 0; i < r->n; i++) {
        ztd_hf_file *f = &r->files[i];
        if (!f->known && f->e)
            f->known = ztd_hf_digest_known(f->e, f->digest, &f->sha256);
        r->missing += !f->known;
    }
    if (r->missing)
        return false;
    static const char tag[] = "ztensord-hf-commit-1\n";
    zt_hasher *h = zt_hasher_new(ZT_DIGEST_SHA256);
    if (!h)
        return false;
    zt_hasher_update(h, tag, sizeof(tag) - 1);
    for (size_t i = 0; i < r->n; i++) {
        const ztd_hf_file *f = &r->files[i];
        char hex[65], num[32];
        ztd_hex_encode(f->digest, 32, hex);
        int nn = snprintf(num, sizeof(num), "%llu\n", (unsigned long long)f->size);
        zt_hasher_update(h, f->rel, f->rel_len + 1); /* with its NUL */
        zt_hasher_update(h, hex, 65);
        zt_hasher_update(h, num, (size_t)nn);
    }
    uint8_t d[32];
    zt_hasher_final(h, d);
    zt_hasher_free(h);
    ztd_hex_encode(d, 20, r->commit);
    return true;
}

static bool file_below(const void *ctx, size_t i)
{
    const name_key *k = ctx;
    const ztd_hf_file *f = &k->files[i];
    return name_below(f->rel, f->rel_len, k->s, k->len);
}

const ztd_hf_file *ztd_hf_repo_find(const ztd_hf_repo *r, const char *path, size_t len)
{
    name_key k = {r->files, path, len};
    size_t i = ztd_partition_point(0, r->n, file_below, &k);
    if (i == r->n)
        return NULL;
    const ztd_hf_file *f = &r->files[i];
    return f->rel_len == len && memcmp(f->rel, path, len) == 0 ? f : NULL;
}

/* Is file i below "path/" (k->s, k->len bytes, then '/')? */
static bool file_below_dir(const void *ctx, size_t i)
{
    const name_key *k = ctx;
    const ztd_hf_file *f = &k->files[i];
    size_t m = f->rel_len < k->len ? f->rel_len : k->len;
    int c = memcmp(f->rel, k->s, m);
    if (c == 0 && f->rel_len > k->len) /* byte len of the key is '/' */
        c = (unsigned char)f->rel[k->len] - '/';
    return c < 0 || (c == 0 && f->rel_len <= k->len);
}

bool ztd_hf_repo_is_dir(const ztd_hf_repo *r, const char *path, size_t len)
{
    /* The files under "path/" are contiguous in name order: the first one at
     * or after that key starts with it, or there is none. */
    name_key k = {r->files, path, len};
    size_t lo = ztd_partition_point(0, r->n, file_below_dir, &k);
    if (lo == r->n)
        return false;
    const ztd_hf_file *f = &r->files[lo];
    return f->rel_len > len && f->rel[len] == '/' && memcmp(f->rel, path, len) == 0;
}
