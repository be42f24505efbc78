/* The Hugging Face front's JSON documents (see hf_json.h). */
#include "hf/hf_json.h"
#include "core/hex.h"
#include "store/validators.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

void ztd_hf_iso_date(int64_t t, char out[32])
{
    time_t tt = (time_t)t;
    struct tm tm;
    gmtime_r(&tt, &tm);
    strftime(out, 32, "%Y-%m-%dT%H:%M:%S.000Z", &tm);
}

/* A git-lfs pointer's size: "version https://git-lfs.github.com/spec/v1\n"
 * (43) + "oid sha256:<64>\n" (76) + "size <n>\n". */
static json_int_t pointer_size(uint64_t size)
{
    char num[32];
    return 43 + 76 + 6 + snprintf(num, sizeof(num), "%llu", (unsigned long long)size);
}

static json_t *last_commit(const ztd_hf_repo *r, const ztd_hf_file *f)
{
    char date[32];
    ztd_hf_iso_date(f ? f->mtime : r->mtime_max, date);
    return json_pack("{s:s, s:s, s:s}", "id", r->commit, "title", "ztensord", "date", date);
}

static json_t *file_item(const ztd_hf_repo *r, const ztd_hf_file *f, bool expand)
{
    char hex[65];
    ztd_hex_encode(f->digest, 32, hex);
    json_t *o = json_pack("{s:s, s:s, s:I, s:s%}", "type", "file", "oid", hex, "size",
                          (json_int_t)f->size, "path", f->rel, f->rel_len);
    if (o && f->sha256)
        json_object_set_new(o, "lfs",
                            json_pack("{s:s, s:I, s:I}", "oid", hex, "size", (json_int_t)f->size,
                                      "pointerSize", pointer_size(f->size)));
    if (o && expand) {
        json_object_set_new(o, "lastCommit", last_commit(r, f));
        json_object_set_new(o, "securityFileStatus", json_pack("{s:s}", "status", "unscanned"));
    }
    return o;
}

static json_t *dir_item(const ztd_hf_repo *r, const char *path, size_t len, bool expand)
{
    /* A tree id of this commit and path: not git's, but stable with them. */
    zt_hasher *h = zt_hasher_new(ZT_DIGEST_SHA256);
    uint8_t d[32] = {0};
    char hex[41];
    if (h) {
        zt_hasher_update(h, r->commit, 41);
        zt_hasher_update(h, path, len);
        zt_hasher_final(h, d);
        zt_hasher_free(h);
    }
    ztd_hex_encode(d, 20, hex);
    json_t *o = json_pack("{s:s, s:s, s:i, s:s%}", "type", "directory", "oid", hex, "size", 0,
                          "path", path, len);
    if (o && expand)
        json_object_set_new(o, "lastCommit", last_commit(r, NULL));
    return o;
}

static char *dump(json_t *doc, size_t *len)
{
    char *s = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
    json_decref(doc);
    *len = s ? strlen(s) : 0;
    return s;
}

char *ztd_hf_info_json(const ztd_hf_repo *r, const char *repo, size_t *len)
{
    char date[32];
    ztd_hf_iso_date(r->mtime_max, date);
    const char *slash = strchr(repo, '/');
    json_t *sib = json_array();
    json_t *doc = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:b, s:b, s:b, s:i, s:i, s:[], s:o}",
                            "_id", r->commit, "id", repo, "modelId", repo, "sha", r->commit,
                            "lastModified", date, "createdAt", date, "private", 0, "gated", 0,
                            "disabled", 0, "downloads", 0, "likes", 0, "tags", "siblings", sib);
    if (doc && slash)
        json_object_set_new(doc, "author", json_stringn(repo, (size_t)(slash - repo)));
    for (size_t i = 0; doc && i < r->n; i++) {
        const ztd_hf_file *f = &r->files[i];
        char hex[65];
        ztd_hex_encode(f->digest, 32, hex);
        /* rawEtag (ztensord's own): the file's /v1 raw ETag, which a sidecar's
         * upstream entry is pinned to (hf_origin.h) */
        char raw[96] = "";
        if (f->e)
            ztd_raw_etag(f->e, raw);
        json_t *s = json_pack("{s:s%, s:I, s:s, s:s}", "rfilename", f->rel, f->rel_len, "size",
                              (json_int_t)f->size, "blobId", hex, "rawEtag",
                              f->e          ? raw
                              : f->raw_etag ? f->raw_etag
                                            : "");
        if (s && f->sha256)
            json_object_set_new(s, "lfs",
                                json_pack("{s:s, s:I, s:I}", "sha256", hex, "size",
                                          (json_int_t)f->size, "pointerSize",
                                          pointer_size(f->size)));
        if (!s || json_array_append_new(sib, s) != 0) {
            json_decref(doc);
            doc = NULL;
        }
    }
    return dump(doc, len);
}

/* The listing's items in order, each given to emit() with its number; stops
 * when emit() returns false. Directories come before their first file. */
typedef bool emit_fn(void *cls, size_t no, const ztd_hf_file *f, const char *dir, size_t dlen);

static void walk(const ztd_hf_repo *r, const char *dir, size_t dl, bool recursive, emit_fn *emit,
                 void *cls)
{
    size_t no = 0, skip = dl ? dl + 1 : 0; /* "dir/" */
    const char *prev = NULL;               /* the previous file's path under dir */
    size_t prev_len = 0;
    for (size_t i = 0; i < r->n; i++) {
        const ztd_hf_file *f = &r->files[i];
        if (dl && (f->rel_len <= skip || f->rel[dl] != '/' || memcmp(f->rel, dir, dl) != 0))
            continue;
        const char *rest = f->rel + skip;
        size_t rl = f->rel_len - skip;
        for (size_t k = 0; k < rl; k++) { /* each directory above the file */
            if (rest[k] != '/')
                continue;
            bool seen = prev && prev_len > k && prev[k] == '/' && memcmp(prev, rest, k) == 0;
            if (!seen && !emit(cls, no++, NULL, f->rel, skip + k))
                return;
            if (!recursive)
                break;
        }
        if ((recursive || !memchr(rest, '/', rl)) && !emit(cls, no++, f, NULL, 0))
            return;
        prev = rest;
        prev_len = rl;
    }
}

typedef struct page {
    const ztd_hf_repo *r;
    json_t *arr;
    size_t from, limit;
    bool expand, more, failed;
} page;

static bool page_emit(void *cls, size_t no, const ztd_hf_file *f, const char *dir, size_t dlen)
{
    page *p = cls;
    if (no < p->from)
        return true;
    if (no >= p->from + p->limit) {
        p->more = true;
        return false;
    }
    json_t *o = f ? file_item(p->r, f, p->expand) : dir_item(p->r, dir, dlen, p->expand);
    if (!o || json_array_append_new(p->arr, o) != 0)
        p->failed = true;
    return !p->failed;
}

char *ztd_hf_tree_json(const ztd_hf_repo *r, const char *dir, size_t dir_len, bool recursive,
                       bool expand, size_t from, size_t limit, bool *more, size_t *len)
{
    page p = {.r = r, .arr = json_array(), .from = from, .limit = limit, .expand = expand};
    if (p.arr)
        walk(r, dir, dir_len, recursive, page_emit, &p);
    *more = p.more;
    if (p.failed) {
        json_decref(p.arr);
        p.arr = NULL;
    }
    return dump(p.arr, len);
}

char *ztd_hf_paths_json(const ztd_hf_repo *r, char *const *paths, size_t n, bool expand,
                        size_t *len)
{
    json_t *arr = json_array();
    for (size_t i = 0; arr && i < n; i++) {
        size_t pl = strlen(paths[i]);
        const ztd_hf_file *f = ztd_hf_repo_find(r, paths[i], pl);
        json_t *o = NULL;
        if (f)
            o = file_item(r, f, expand);
        else if (pl && ztd_hf_repo_is_dir(r, paths[i], pl))
            o = dir_item(r, paths[i], pl, expand);
        else
            continue;
        if (!o || json_array_append_new(arr, o) != 0) {
            json_decref(arr);
            arr = NULL;
        }
    }
    return dump(arr, len);
}
