/* The Hugging Face front's JSON documents (see hf_json.h). */
#include "hf/hf_json.h"
#include "core/text_buf.h"
#include "core/hex.h"
#include "store/validators.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
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
        /* huggingface_hub reads all three keys */
        json_object_set_new(
            o, "securityFileStatus",
            json_pack("{s:s, s:n, s:n}", "status", "unscanned", "avScan", "pickleImportScan"));
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

/* s[0..n) as a JSON string (UTF-8 kept; quotes, backslashes and control
 * characters escaped). */
/* The JSON texts written by hand (ztd_text): the model info of a 10,000-file
 * repository is 2 MB, which jansson's objects build several times slower. */

static void jb_str(ztd_text *b, const char *s, size_t n)
{
    ztd_text_put(b, "\"", 1);
    size_t from = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        ztd_text_put(b, s + from, i - from);
        char esc[8];
        snprintf(esc, sizeof(esc), "\\u%04x", c);
        ztd_text_put(b, esc, 6);
        from = i + 1;
    }
    ztd_text_put(b, s + from, n - from);
    ztd_text_put(b, "\"", 1);
}

static void jb_u64(ztd_text *b, uint64_t v)
{
    char num[24];
    ztd_text_put(b, num, (size_t)snprintf(num, sizeof(num), "%llu", (unsigned long long)v));
}

char *ztd_hf_info_json(const ztd_hf_repo *r, const char *repo, size_t *len)
{
    char date[32];
    ztd_hf_iso_date(r->mtime_max, date);
    ztd_text b = {0};
    const char *slash = strchr(repo, '/');
    ztd_text_puts(&b, "{\"_id\":\"");
    ztd_text_puts(&b, r->commit);
    ztd_text_puts(&b, "\",\"id\":");
    jb_str(&b, repo, strlen(repo));
    ztd_text_puts(&b, ",\"modelId\":");
    jb_str(&b, repo, strlen(repo));
    if (slash) {
        ztd_text_puts(&b, ",\"author\":");
        jb_str(&b, repo, (size_t)(slash - repo));
    }
    ztd_text_puts(&b, ",\"sha\":\"");
    ztd_text_puts(&b, r->commit);
    ztd_text_puts(&b, "\",\"lastModified\":\"");
    ztd_text_puts(&b, date);
    ztd_text_puts(&b, "\",\"createdAt\":\"");
    ztd_text_puts(&b, date);
    ztd_text_puts(&b, "\",\"private\":false,\"gated\":false,\"disabled\":false,\"downloads\":0,"
                      "\"likes\":0,\"tags\":[],\"siblings\":[");
    for (size_t i = 0; i < r->n; i++) {
        const ztd_hf_file *f = &r->files[i];
        char hex[65], raw[96] = "";
        ztd_hex_encode(f->digest, 32, hex);
        /* rawEtag (ztensord's own): the file's /v1 raw ETag, which a sidecar's
         * upstream entry is pinned to (hf_origin.h) */
        if (f->e)
            ztd_raw_etag_listed(f->e, raw);
        const char *re = f->e ? raw : f->raw_etag ? f->raw_etag : "";
        ztd_text_puts(&b, i ? ",{\"rfilename\":" : "{\"rfilename\":");
        jb_str(&b, f->rel, f->rel_len);
        ztd_text_puts(&b, ",\"size\":");
        jb_u64(&b, f->size);
        ztd_text_puts(&b, ",\"blobId\":\"");
        ztd_text_puts(&b, hex);
        ztd_text_puts(&b, "\",\"rawEtag\":");
        jb_str(&b, re, strlen(re));
        if (f->sha256) {
            ztd_text_puts(&b, ",\"lfs\":{\"sha256\":\"");
            ztd_text_puts(&b, hex);
            ztd_text_puts(&b, "\",\"size\":");
            jb_u64(&b, f->size);
            ztd_text_puts(&b, ",\"pointerSize\":");
            jb_u64(&b, (uint64_t)pointer_size(f->size));
            ztd_text_puts(&b, "}");
        }
        ztd_text_puts(&b, "}");
    }
    ztd_text_puts(&b, "]}");
    *len = 0;
    return ztd_text_take(&b, len);
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
