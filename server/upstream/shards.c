/*
 * A zTensor v2 root's shards at the upstream (see internal.h). The
 * origin serves a root's parts from its shard files, found beside it by
 * Appendix B's names ("dir/model.zt"'s shard "n" is "dir/model-n.zt"), and
 * says in the manifest JSON which it found. The cache opens them with the
 * root, pins each one's validator and checks its size against the root's
 * table (§7.3 steps 1-2, as the origin does), so that a part is fetched from
 * the version of its shard opened with the root, and the manifest JSON says
 * what the origin's says. A shard replaced upstream fails its fills
 * (ZT_E_CHANGED) and makes a new entry at the next open. After upstream_ttl,
 * each shard is revalidated by a HEAD (ztd_up_revalidate_shards), as the root
 * is: the root is opened again only when one of them changed.
 */
#include "core/json_line.h"
#include "upstream/internal.h"

#include <jansson.h>
#include <ztensor/ztensor_remote_experimental.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *ztd_up_validator(const zt_remote_file *rf)
{
    const char *etag = zt_remote_file_etag(rf);
    return etag[0] ? etag : zt_remote_file_last_modified(rf);
}

/* "dir/model-n.zt" for root "dir/model.zt" and shard "n" (malloc). */
static char *shard_file_name(const char *root, const char *shard)
{
    size_t n = strlen(root), stem = n > 3 && !strcmp(root + n - 3, ".zt") ? n - 3 : n;
    size_t cap = stem + strlen(shard) + 5;
    char *s = malloc(cap);
    if (s)
        snprintf(s, cap, "%.*s-%s.zt", (int)stem, root, shard);
    return s;
}

/* Opens shard i of e's root into sh: ZT_OK, or the reason in ze. */
static zt_status open_one(ztd_upstream *u, const ztd_entry *e, size_t i, const char *name,
                          ztd_up_shard *sh, zt_error *ze)
{
    const zt_file *f = e->file;
    char url[NAME_URL_MAX];
    if (!ztd_up_file_url(u, name, url, sizeof(url))) {
        snprintf(ze->message, sizeof(ze->message), "the URL of shard file \"%.200s\" is too long",
                 name);
        return ZT_E_ARG;
    }
    zt_remote *session = ztd_up_open_session(u, ze);
    zt_status st = session ? zt_remote_open_in(session, url, &sh->rf, ze) : ze->code;
    COUNT(u, opens, 1);
    if (st == ZT_E_NOT_FOUND) /* the origin's words for a shard it does not have */
        snprintf(ze->message, sizeof(ze->message), "v2 §7.1: shard \"%.200s\" not found at %.400s",
                 zt_file_shard_name(f, i), url);
    if (st)
        return st;
    if (zt_remote_file_size(sh->rf) != zt_file_shard_size(f, i)) {
        snprintf(ze->message, sizeof(ze->message),
                 "v2 §7.3: shard \"%s\" is %llu bytes at the upstream, the root's table says %llu",
                 zt_file_shard_name(f, i), (unsigned long long)zt_remote_file_size(sh->rf),
                 (unsigned long long)zt_file_shard_size(f, i));
        return ZT_E_SHARD;
    }
    if (!ztd_up_validator(sh->rf)[0]) {
        snprintf(ze->message, sizeof(ze->message),
                 "shard file \"%s\" comes with no ETag and no Last-Modified: no version of it "
                 "can be pinned",
                 name);
        return ZT_E_HTTP;
    }
    return ZT_OK;
}

/* The manifest JSON with each shard's "file" and "status" as the cache found
 * them (the remote model cannot locate shards: its JSON says so). */
static char *json_with_shards(const ztd_entry *e, const ztd_up_shard *sh, char **names)
{
    json_t *j = json_loads(e->manifest_json, JSON_DECODE_ANY, NULL);
    json_t *m = json_object_get(j, "shards");
    for (size_t i = 0; m && i < e->up->nshards; i++) {
        json_t *s = json_object_get(m, zt_file_shard_name(e->file, i));
        const char *base = strrchr(names[i], '/');
        json_object_set_new(s, "file", json_string(base ? base + 1 : names[i])); /* looked at */
        json_object_set_new(s, "status", json_string(sh[i].status));
    }
    char *out = m ? ztd_json_line(j, NULL) : NULL; /* ends with a newline, as every JSON body */
    json_decref(j);
    return out;
}

ztd_err ztd_up_open_shards(ztd_upstream *u, ztd_entry *e, char *msg, size_t cap)
{
    struct ztd_upstream_entry *up = e->up;
    size_t n = zt_file_shard_count(e->file);
    if (!n)
        return ZTD_ERR_NONE;
    char **names = calloc(n, sizeof(*names));
    if (!names || !(up->shards = calloc(n, sizeof(*up->shards)))) {
        free(names);
        snprintf(msg, cap, "out of memory");
        return ZTD_ERR_INTERNAL;
    }
    up->nshards = n;
    ztd_err err = ZTD_ERR_NONE;
    for (size_t i = 0; i < n && !err; i++) {
        zt_error ze = {0};
        zt_status st = (names[i] = shard_file_name(e->name, zt_file_shard_name(e->file, i)))
                           ? open_one(u, e, i, names[i], &up->shards[i], &ze)
                           : ZT_E_NOMEM;
        char why[sizeof(ze.message) + 40]; /* ZT_E_SHARD, as the origin says it */
        snprintf(why, sizeof(why), "%s: %s", zt_status_name(ZT_E_SHARD), ze.message);
        if (st) {
            zt_remote_close(up->shards[i].rf);
            up->shards[i].rf = NULL;
            COUNT(u, open_failures, 1);
        }
        if (!(up->shards[i].status = strdup(st ? why : "ok")) || st == ZT_E_NOMEM)
            err = ZTD_ERR_INTERNAL;
    }
    if (!err && !(up->json = json_with_shards(e, up->shards, names)))
        err = ZTD_ERR_INTERNAL;
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    if (err) {
        snprintf(msg, cap, "out of memory");
        return err;
    }
    free(e->manifest_json);      /* ztd_manifest_json_line()'s */
    e->manifest_json = up->json; /* released by ztd_up_shards_free, before the entry's */
    e->manifest_json_len = strlen(up->json);
    return ZTD_ERR_NONE;
}

void ztd_up_shards_free(struct ztd_upstream_entry *up)
{
    for (size_t i = 0; i < up->nshards; i++) {
        zt_remote_close(up->shards[i].rf);
        free(up->shards[i].status);
    }
    free(up->shards);
    if (up->json && up->e && up->e->manifest_json == up->json)
        up->e->manifest_json = NULL; /* up's to release, not the entry's */
    free(up->json);
}

zt_status ztd_up_revalidate_shards(ztd_upstream *u, const ztd_entry *e, zt_error *ze)
{
    for (size_t i = 0; i < e->up->nshards; i++) {
        const zt_remote_file *rf = e->up->shards[i].rf;
        if (!rf) { /* its parts are 503 until the root is opened again */
            ze->code = ZT_E_CHANGED;
            snprintf(ze->message, sizeof(ze->message),
                     "shard \"%s\" was not opened with the root: the root is opened again",
                     zt_file_shard_name(e->file, i));
            return ZT_E_CHANGED;
        }
        zt_remote *session = ztd_up_open_session(u, ze);
        if (!session)
            return ze->code;
        COUNT(u, revalidations, 1);
        zt_status st = zt_remote_revalidate(session, rf, ze);
        if (st)
            return st;
        COUNT(u, revalidations_unchanged, 1);
    }
    return ZT_OK;
}

bool ztd_up_same_shards(const ztd_entry *a, const ztd_entry *b)
{
    if (a->up->nshards != b->up->nshards)
        return false;
    for (size_t i = 0; i < a->up->nshards; i++) {
        const zt_remote_file *x = a->up->shards[i].rf, *y = b->up->shards[i].rf;
        if (!x != !y || (x && (zt_remote_file_size(x) != zt_remote_file_size(y) ||
                               strcmp(ztd_up_validator(x), ztd_up_validator(y)))))
            return false;
    }
    return true;
}

zt_remote_file *ztd_up_file_of(const ztd_entry *e, const zt_component *c)
{
    int s = zt_component_shard(c);
    if (s < 0)
        return e->up->rf;
    return (size_t)s < e->up->nshards ? e->up->shards[s].rf : NULL;
}

bool ztd_upstream_part_servable(const ztd_entry *e, const zt_component *c)
{
    return ztd_up_file_of(e, c) != NULL;
}
