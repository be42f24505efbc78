/* A repository of an S3 store, from its listing (see hf_store_repo.h). */
#include "hf/hf_store_repo.h"
#include "core/dates.h"
#include "core/partition.h"
#include "hf/hf_digests.h"
#include "hf/hf_path.h"
#include "store/names.h"
#include "store/validators.h"
#include "upstream/origin_listing.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ETAG_ROOM 40 /* ztd_upstream_file_etag_of's "\"<32 hex>\"" and its NUL */

static const char *str(const json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

typedef struct {
    const json_t *files;
    const char *prefix;
} prefix_key;

static bool below_prefix(const void *ctx, size_t i)
{
    const prefix_key *k = ctx;
    const char *n = str(json_array_get(k->files, i), "name");
    return !n || strcmp(n, k->prefix) < 0;
}

/* Is listing object o a file of the repository whose names start with
 * prefix (pl bytes): listed without error, a path valid below it, a size and
 * an ETag. */
static bool servable(const json_t *o, size_t pl)
{
    const char *name = str(o, "name"), *status = str(o, "status");
    json_t *size = json_object_get(o, "size");
    return name && status && !strcmp(status, "ok") && json_is_integer(size) &&
           json_integer_value(size) >= 0 && str(o, "etag") &&
           !ztd_file_path_problem(name + pl, strlen(name + pl));
}

/* The digest of .zt object `name` (listed with ETag etag, size bytes): its
 * identity when it has one, from the upstream's entry of that very version
 * (the one the listing's views were made from, or opened now), else the
 * ETag's. 0; 1 when it is not a tensor file (left out, as a local invalid
 * file is); -1 with err and msg. */
static int zt_digest(ztd_upstream *u, const char *name, const char *etag, uint64_t size,
                     uint8_t out[32], ztd_err *err, char *msg, size_t cap)
{
    ztd_entry *e = ztd_upstream_peek(u, name);
    if (!e && (*err = ztd_upstream_get(u, name, &e, msg, cap)) != ZTD_ERR_NONE) {
        if (*err == ZTD_ERR_FILE_INVALID)
            return 1;
        if (*err == ZTD_ERR_FILE_NOT_FOUND) { /* deleted since it was listed */
            snprintf(msg, cap, "upstream: \"%s\" went away since the store was listed; retry",
                     name);
            *err = ZTD_ERR_FILE_CHANGED;
        }
        return -1;
    }
    char fe[ETAG_ROOM];
    ztd_upstream_file_etag_of(etag, fe);
    bool defined = false;
    if (e->size != size || strcmp(e->file_etag, fe) != 0) {
        snprintf(msg, cap, "upstream: \"%s\" is not the version the store's listing names; retry",
                 name);
        *err = ZTD_ERR_FILE_CHANGED;
    } else {
        *err = ztd_upstream_identity(u, e, out, &defined, msg, cap);
    }
    ztd_entry_release(e);
    if (*err)
        return -1;
    if (!defined)
        ztd_hf_store_digest(etag, size, out);
    return 0;
}

/* The model index this sidecar made for a store directory (upstream/
 * store_index.h) as file f: as a local one, its digest the sha256 of its JSON
 * (given as lfs), its version the ETag its /raw lists. 0; 1 to leave it out
 * (no digest); -1 with err and msg (gone since the listing). */
static int index_file(ztd_upstream *u, const char *name, ztd_hf_file *f, char *raw_out,
                      ztd_err *err, char *msg, size_t cap)
{
    ztd_entry *e = ztd_upstream_peek(u, name);
    if (!e) {
        snprintf(msg, cap, "upstream: \"%s\" went away since the store was listed; retry", name);
        *err = ZTD_ERR_FILE_CHANGED;
        return -1;
    }
    bool sha = false, ok = ztd_hf_digest_known(e, f->digest, &sha);
    char raw[96];
    ztd_raw_etag_listed(e, raw);
    ok = ok && strlen(raw) < ETAG_ROOM;
    if (ok)
        memcpy(raw_out, raw, strlen(raw) + 1);
    f->sha256 = sha;
    ztd_entry_release(e);
    return ok ? 0 : 1;
}

static bool ends_with(const char *s, const char *ext)
{
    size_t n = strlen(s), k = strlen(ext);
    return n > k && !strcmp(s + n - k, ext);
}

/* Listing object o as file f of the repository (names below prefix, pl
 * bytes), its strings written at *p. A view's digest is set later (views).
 * 0; 1 to leave it out; -1 with err and msg. */
static int take(ztd_upstream *u, const json_t *o, size_t pl, ztd_hf_file *f, char **p, ztd_err *err,
                char *msg, size_t cap)
{
    const char *name = str(o, "name"), *etag = str(o, "etag");
    f->rel = *p;
    f->rel_len = strlen(name + pl);
    memcpy(*p, name + pl, f->rel_len + 1);
    *p += f->rel_len + 1;
    char *raw = *p; /* ETAG_ROOM bytes: its /raw ETag, written below */
    ztd_upstream_file_etag_of(etag, raw);
    f->raw_etag = raw;
    *p += ETAG_ROOM;
    f->size = (uint64_t)json_integer_value(json_object_get(o, "size"));
    int64_t t = 0;
    if (str(o, "last_modified") && ztd_http_date_parse(str(o, "last_modified"), &t) != 0)
        t = 0;
    f->mtime = t;
    f->sha256 = false; /* no digest here is the sha256 of the bytes: no lfs block */
    if (str(o, "view_of"))
        return 0;
    f->known = true;
    if (str(o, "format") && !strcmp(str(o, "format"), "safetensors-index"))
        return index_file(u, name, f, raw, err, msg, cap);
    if (ends_with(name, ".zt"))
        return zt_digest(u, name, etag, f->size, f->digest, err, msg, cap);
    ztd_hf_store_digest(etag, f->size, f->digest);
    return 0;
}

/* The views' digests, from their files' (a view whose file is not a file of
 * the repository is left out); then the files left out taken away. */
static void views(ztd_hf_repo *r, json_t *const *objs, const char *prefix, size_t pl)
{
    for (size_t i = 0; i < r->n; i++) {
        const char *of = str(objs[i], "view_of");
        ztd_hf_file *f = &r->files[i];
        const ztd_hf_file *src = NULL;
        if (of && !strncmp(of, prefix, pl))
            src = ztd_hf_repo_find(r, of + pl, strlen(of + pl));
        if (src && src->known) {
            ztd_hf_view_digest(src->digest, f->digest);
            f->known = true;
        }
    }
    size_t k = 0;
    for (size_t i = 0; i < r->n; i++)
        if (r->files[i].known)
            r->files[k++] = r->files[i];
    r->n = k;
}

/* The repository's files from the listing objects objs[0..n), under prefix. */
static int build(ztd_upstream *u, json_t *const *objs, size_t n, const char *prefix,
                 ztd_hf_repo *out, ztd_err *err, char *msg, size_t cap)
{
    size_t pl = strlen(prefix), total = 0;
    for (size_t i = 0; i < n; i++)
        total += strlen(str(objs[i], "name")) + 1 + ETAG_ROOM;
    if (!(out->files = calloc(n ? n : 1, sizeof(*out->files))) ||
        !(out->names = malloc(total ? total : 1))) {
        snprintf(msg, cap, "out of memory");
        *err = ZTD_ERR_INTERNAL;
        return -1;
    }
    char *p = out->names;
    for (size_t i = 0; i < n; i++) {
        ztd_hf_file *f = &out->files[out->n++];
        int rc = take(u, objs[i], pl, f, &p, err, msg, cap);
        if (rc < 0)
            return -1;
        if (rc > 0)
            f->known = false; /* left out, with its view (views) */
        if (f->mtime > out->mtime_max)
            out->mtime_max = f->mtime;
    }
    views(out, objs, prefix, pl);
    return out->n ? 0 : 1;
}

int ztd_hf_store_open(ztd_upstream *u, const char *repo, ztd_hf_repo *out, ztd_err *err, char *msg,
                      size_t cap)
{
    memset(out, 0, sizeof(*out));
    ztd_uplist *l = ztd_upstream_store_listing(u);
    char prefix[ZTD_HF_REPO_MAX + 2];
    if (!l || (size_t)snprintf(prefix, sizeof(prefix), "%s/", repo) >= sizeof(prefix))
        return 1;
    json_t *files = NULL;
    if ((*err = ztd_uplist_get(l, &files, msg, cap)) != ZTD_ERR_NONE)
        return -1;
    size_t pl = strlen(prefix), all = json_array_size(files);
    prefix_key k = {files, prefix};
    size_t lo = ztd_partition_point(0, all, below_prefix, &k), n = 0;
    json_t **objs = malloc((all - lo + 1) * sizeof(*objs));
    for (size_t i = lo; objs && i < all; i++) {
        json_t *o = json_array_get(files, i);
        const char *name = str(o, "name");
        if (!name || strncmp(name, prefix, pl) != 0)
            break;
        if (servable(o, pl))
            objs[n++] = o;
    }
    int rc = objs ? build(u, objs, n, prefix, out, err, msg, cap) : -1;
    if (!objs) {
        snprintf(msg, cap, "out of memory");
        *err = ZTD_ERR_INTERNAL;
    }
    if (rc == 0 && !ztd_hf_repo_seal(out)) {
        snprintf(msg, cap, "%s: its commit could not be made (out of memory)", repo);
        *err = ZTD_ERR_INTERNAL;
        rc = -1;
    }
    free(objs);
    json_decref(files);
    if (rc)
        ztd_hf_repo_close(out);
    return rc;
}
