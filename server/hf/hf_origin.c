/* A repository of the upstream (see hf_origin.h). */
#include "hf/hf_origin.h"
#include "core/clock.h"
#include "core/hex.h"
#include "hf/hf_digests.h"
#include "hf/hf_path.h"
#include "store/validators.h"
#include "upstream/origin_listing.h"

#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define INFO_MAX (256u << 20) /* bytes of the origin's model info accepted */

/* The origin's model info of the repositories asked for lately, kept for
 * upstream_ttl: a snapshot download asks it once per file. */
#define SLOTS 64
typedef struct slot {
    char repo[ZTD_HF_REPO_MAX + 1];
    uint64_t at_ms;
    json_t *doc;
} slot;
static slot slots[SLOTS];
static pthread_mutex_t slots_mu = PTHREAD_MUTEX_INITIALIZER;

/* A new reference to repo's info fetched less than ttl_ms ago, or NULL. */
static json_t *cached(const char *repo, uint64_t ttl_ms)
{
    json_t *doc = NULL;
    uint64_t now = ztd_now_ms();
    pthread_mutex_lock(&slots_mu);
    for (int i = 0; i < SLOTS; i++)
        if (slots[i].doc && !strcmp(slots[i].repo, repo) && now - slots[i].at_ms < ttl_ms)
            doc = json_incref(slots[i].doc);
    pthread_mutex_unlock(&slots_mu);
    return doc;
}

/* Keep doc as repo's info (NULL: forget it); in its slot, else the oldest. */
static void keep(const char *repo, json_t *doc)
{
    pthread_mutex_lock(&slots_mu);
    int k = 0;
    for (int i = 0; i < SLOTS; i++) {
        if (!strcmp(slots[i].repo, repo)) {
            k = i;
            break;
        }
        if (slots[i].at_ms < slots[k].at_ms)
            k = i;
    }
    json_decref(slots[k].doc);
    snprintf(slots[k].repo, sizeof(slots[k].repo), "%s", repo);
    slots[k].doc = json_incref(doc);
    slots[k].at_ms = doc ? ztd_now_ms() : 0;
    pthread_mutex_unlock(&slots_mu);
}

static int64_t parse_date(const char *s)
{
    struct tm tm = {0};
    if (!s || sscanf(s, "%d-%d-%dT%d:%d:%d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
                     &tm.tm_min, &tm.tm_sec) != 6)
        return 0;
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    return (int64_t)timegm(&tm);
}

static int cmp_file(const void *a, const void *b)
{
    const ztd_hf_file *x = a, *y = b;
    size_t m = x->rel_len < y->rel_len ? x->rel_len : y->rel_len;
    int c = memcmp(x->rel, y->rel, m);
    return c ? c : (x->rel_len > y->rel_len) - (x->rel_len < y->rel_len);
}

/* The files of the info document into r; -1 when it is not one. */
static int take_files(json_t *doc, ztd_hf_repo *r)
{
    json_t *sib = json_object_get(doc, "siblings");
    size_t n = json_array_size(sib), total = 0;
    for (size_t i = 0; i < n; i++) {
        json_t *s = json_array_get(sib, i);
        total += json_string_length(json_object_get(s, "rfilename")) + 1 +
                 json_string_length(json_object_get(s, "rawEtag")) + 1;
    }
    if (!json_is_array(sib) || !(r->files = calloc(n ? n : 1, sizeof(*r->files))) ||
        !(r->names = malloc(total ? total : 1)))
        return -1;
    char *p = r->names;
    int64_t mtime = parse_date(json_string_value(json_object_get(doc, "lastModified")));
    for (size_t i = 0; i < n; i++) {
        json_t *s = json_array_get(sib, i);
        json_t *name = json_object_get(s, "rfilename"), *size = json_object_get(s, "size");
        const char *oid = json_string_value(json_object_get(s, "blobId"));
        ztd_hf_file *f = &r->files[r->n++];
        if (!json_is_string(name) || !json_is_integer(size) || json_integer_value(size) < 0 ||
            !oid || strlen(oid) != 64 || ztd_hex_decode(oid, 32, f->digest) != 0)
            return -1;
        f->rel_len = json_string_length(name);
        memcpy(p, json_string_value(name), f->rel_len + 1);
        f->rel = p;
        p += f->rel_len + 1;
        json_t *raw = json_object_get(s, "rawEtag");
        if (!json_is_string(raw))
            return -1;
        memcpy(p, json_string_value(raw), json_string_length(raw) + 1);
        f->raw_etag = p;
        p += json_string_length(raw) + 1;
        f->size = (uint64_t)json_integer_value(size);
        f->mtime = mtime;
        f->known = true;
        f->sha256 = json_object_get(s, "lfs") != NULL;
    }
    qsort(r->files, r->n, sizeof(*r->files), cmp_file);
    r->mtime_max = mtime;
    return 0;
}

/* The origin's info at main: its document, or 1 (no such repository), or -1. */
static int fetch_info(ztd_upstream *u, const char *repo, json_t **doc, ztd_err *err, char *msg,
                      size_t cap)
{
    ztd_upstream_tell_kind(u);
    if (!ztd_upstream_is_ztensord(u))
        return 1; /* a plain upstream has no /hf */
    char path[512];
    snprintf(path, sizeof(path), "/hf/api/models/%s/revision/main", repo);
    int status;
    if ((*err = ztd_upstream_get_json(u, path, INFO_MAX, doc, &status, msg, cap)))
        return -1;
    if (status == 404) {
        json_decref(*doc);
        *doc = NULL;
        return 1;
    }
    if (status != 200 || !json_is_object(*doc)) {
        snprintf(msg, cap, "upstream: HTTP %d for %s's model info", status, repo);
        *err = ZTD_ERR_UPSTREAM_FAILED;
        json_decref(*doc);
        *doc = NULL;
        return -1;
    }
    return 0;
}

int ztd_hf_origin_open(ztd_upstream *u, const char *repo, const char *rev, uint64_t ttl_ms,
                       ztd_hf_repo *out, ztd_err *err, char *msg, size_t cap)
{
    memset(out, 0, sizeof(*out));
    json_t *doc = cached(repo, ttl_ms);
    const char *sha = json_string_value(json_object_get(doc, "sha"));
    if (doc && sha && ztd_hf_is_commit(rev, strlen(rev)) && strcmp(sha, rev) != 0) {
        json_decref(doc); /* a commit the kept info does not name: ask again */
        doc = NULL;
    }
    int rc = 0;
    if (!doc) {
        if ((rc = fetch_info(u, repo, &doc, err, msg, cap)))
            return rc;
        keep(repo, doc);
    }
    sha = json_string_value(json_object_get(doc, "sha"));
    if (take_files(doc, out) != 0 || !sha) {
        snprintf(msg, cap, "upstream: %s's model info is not one this server reads", repo);
        *err = ZTD_ERR_UPSTREAM_FAILED;
        rc = -1;
    } else if (out->n == 0) {
        rc = 1;
    } else if (!ztd_hf_repo_seal(out) || strcmp(out->commit, sha) != 0) {
        snprintf(msg, cap, "upstream: %s's commit %s is not the one its files make (%s)", repo, sha,
                 out->commit);
        *err = ZTD_ERR_UPSTREAM_FAILED;
        rc = -1;
    }
    json_decref(doc);
    if (rc)
        ztd_hf_repo_close(out);
    return rc;
}

/* When the upstream lists name as the safetensors view of a file, that file of
 * r (a new string in *of, its item in *fo); false otherwise. */
static bool view_file(ztd_upstream *u, const ztd_hf_repo *r, const char *repo, const char *name,
                      char **of, const ztd_hf_file **fo)
{
    static const char ext[] = ".safetensors";
    size_t n = strlen(name), k = sizeof(ext) - 1, rl = strlen(repo);
    *of = NULL;
    *fo = NULL;
    if (n <= k || strcmp(name + n - k, ext) != 0)
        return false;
    *of = ztd_uplist_view_of_fetched(ztd_upstream_file_listing(u), name);
    if (!*of)
        return false;
    if (!strncmp(*of, repo, rl) && (*of)[rl] == '/')
        *fo = ztd_hf_repo_find(r, *of + rl + 1, strlen(*of + rl + 1));
    return true;
}

/* File f of repo opened through the upstream into *out and checked to be the
 * version listed: the upstream pinned the origin's /raw validator, which the
 * info names (a TTL-cached older version shows here as a mismatch, answered
 * 503 until revalidated). */
static ztd_err open_listed(ztd_upstream *u, const char *repo, const ztd_hf_file *f, ztd_entry **out,
                           char *msg, size_t cap)
{
    char name[ZTD_HF_NAME_MAX];
    if ((size_t)snprintf(name, sizeof(name), "%s/%s", repo, f->rel) >= sizeof(name)) {
        snprintf(msg, cap, "name too long");
        return ZTD_ERR_BAD_REQUEST;
    }
    ztd_err err = ztd_upstream_get(u, name, out, msg, cap);
    if (err)
        return err;
    char raw[96], pinned[96];
    ztd_raw_etag_listed(*out, raw);
    ztd_raw_etag(*out, pinned);
    /* the validator the info names (as /raw lists it, or, for a store's file
     * whose repository was made from the store's ETag (hf_store_repo.h), the
     * one the entry pinned even when the store also sent a sha256), or (a file
     * whose digest is its sha256, such as a model index) the same sha256 as
     * the bytes this tier checked */
    const uint8_t *sha = ztd_entry_plain_sha256_known(*out);
    bool named = f->raw_etag && f->raw_etag[0];
    bool same = (*out)->size == f->size &&
                ((named && (!strcmp(raw, f->raw_etag) || !strcmp(pinned, f->raw_etag))) ||
                 (f->sha256 && sha && memcmp(sha, f->digest, 32) == 0));
    if (!same) {
        keep(repo, NULL); /* the next request asks the origin again */
        ztd_entry_release(*out);
        *out = NULL;
        snprintf(msg, cap, "upstream: \"%s\" changed while it was opened; retry", name);
        return ZTD_ERR_FILE_CHANGED;
    }
    return ZTD_ERR_NONE;
}

ztd_err ztd_hf_origin_file(ztd_upstream *u, const char *repo, const ztd_hf_repo *r,
                           const ztd_hf_file *f, ztd_entry **out, bool *as_view, char *msg,
                           size_t cap)
{
    char name[ZTD_HF_NAME_MAX], *of;
    const ztd_hf_file *fo;
    *as_view = false;
    if ((size_t)snprintf(name, sizeof(name), "%s/%s", repo, f->rel) >= sizeof(name)) {
        snprintf(msg, cap, "name too long");
        return ZTD_ERR_BAD_REQUEST;
    }
    if (!view_file(u, r, repo, name, &of, &fo))
        return open_listed(u, repo, f, out, msg, cap);
    /* a view at the origin: made here from its file, pinned to the version of
     * that file the info lists (the view is a function of it) */
    if (!fo) {
        snprintf(msg, cap, "upstream: \"%s\" is the view of \"%s\", which %s's info lacks; retry",
                 name, of, repo);
        free(of);
        keep(repo, NULL);
        return ZTD_ERR_FILE_CHANGED;
    }
    free(of);
    *as_view = true;
    return open_listed(u, repo, fo, out, msg, cap);
}
