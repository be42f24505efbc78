/*
 * The catalog's view of zTensor v2 files (see catalog_v2.h). The library
 * opens a root's shards beside it by Appendix B's convention; the server must
 * still refuse to serve a shard that is a symlink leading out of the root,
 * the rule every served file obeys.
 */
#include "store/catalog_v2.h"
#include "core/log.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static bool inside(const char *path, const char *root_real)
{
    char real[PATH_MAX];
    size_t n = strlen(root_real);
    return realpath(path, real) && !strncmp(real, root_real, n) && (real[n] == '/' || real[n] == 0);
}

/* "dir/" of the root's catalog name + the shard file's base name. */
static char *catalog_name(const char *rel, const char *path)
{
    const char *base = strrchr(path, '/'), *slash = strrchr(rel, '/');
    base = base ? base + 1 : path;
    int dir = slash ? (int)(slash - rel) + 1 : 0;
    size_t n = (size_t)dir + strlen(base) + 1;
    char *s = malloc(n);
    if (s)
        snprintf(s, n, "%.*s%s", dir, rel, base);
    return s;
}

static void stat_shard(ztd_v2_shard *s, const char *path)
{
    struct stat sb;
    if (stat(path, &sb) != 0)
        return;
    s->present = true;
    s->dev = sb.st_dev;
    s->ino = sb.st_ino;
    s->size = (uint64_t)sb.st_size;
    s->mtime_ns = (int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec;
}

/* A v2 file's entry with room for its shards (none located yet), or NULL. */
static ztd_v2_entry *entry_alloc(const zt_file *f)
{
    if (zt_file_get_kind(f) != ZT_KIND_ZT_2)
        return NULL;
    ztd_v2_entry *v = calloc(1, sizeof(*v));
    size_t n = zt_file_shard_count(f);
    if (!v || (n && !(v->shards = calloc(n, sizeof(*v->shards))))) {
        free(v);
        return NULL;
    }
    v->nshards = n;
    return v;
}

ztd_v2_entry *ztd_v2_entry_new(const zt_file *f, const char *rel, const char *root_real)
{
    ztd_v2_entry *v = entry_alloc(f);
    if (!v)
        return NULL;
    size_t n = v->nshards;
    char id[80];
    if (zt_file_identity(f, id, NULL) == ZT_OK)
        snprintf(v->raw_etag, sizeof(v->raw_etag), "\"zt2.%s\"", id + 7);
    if (zt_file_content_digest(f, ZT_DIGEST_SHA256, v->content_digest, NULL) != ZT_OK)
        v->content_digest[0] = 0;
    for (size_t i = 0; i < n; i++) {
        const char *path = zt_file_shard_path(f, i);
        if (!path)
            continue;
        stat_shard(&v->shards[i], path);
        v->shards[i].file = catalog_name(rel, path);
        zt_error err;
        if (zt_file_shard_status(f, i, &err) != ZT_OK)
            ztd_log(ZTD_LOG_WARN, "catalog: %s: its parts in shard \"%s\" are not served: %s", rel,
                    zt_file_shard_name(f, i), err.message);
        else if (!inside(path, root_real))
            ztd_log(ZTD_LOG_WARN,
                    "catalog: %s: shard \"%s\" leads outside the root: its parts "
                    "are not served",
                    rel, zt_file_shard_name(f, i));
        else
            v->shards[i].servable = true;
    }
    return v;
}

ztd_v2_entry *ztd_v2_entry_upstream(const zt_file *f, const char *validator)
{
    ztd_v2_entry *v = entry_alloc(f); /* its shards are the upstream's: none located here */
    if (!v)
        return NULL;
    size_t len = strlen(validator);
    bool hex = len == 70 && !strncmp(validator, "\"zt2.", 5) && validator[69] == '"';
    for (size_t i = 5; hex && i < 69; i++)
        hex = strchr("0123456789abcdef", validator[i]) != NULL;
    if (hex)
        memcpy(v->raw_etag, validator, len + 1);
    if (zt_file_content_digest(f, ZT_DIGEST_SHA256, v->content_digest, NULL) != ZT_OK)
        v->content_digest[0] = 0;
    return v;
}

const char *ztd_v2_json_id(const ztd_v2_entry *v)
{
    return v && v->raw_etag[0] && !v->nshards ? v->raw_etag + 5 : NULL; /* "\"zt2.<64 hex>" */
}

void ztd_v2_entry_free(ztd_v2_entry *v)
{
    for (size_t i = 0; v && i < v->nshards; i++)
        free(v->shards[i].file);
    if (v)
        free(v->shards);
    free(v);
}

bool ztd_v2_entry_current(const ztd_v2_entry *v, const zt_file *f)
{
    for (size_t i = 0; v && i < v->nshards; i++) {
        const char *path = zt_file_shard_path(f, i);
        ztd_v2_shard now = {0};
        if (path)
            stat_shard(&now, path);
        const ztd_v2_shard *was = &v->shards[i];
        if (now.present != was->present ||
            (now.present && (now.dev != was->dev || now.ino != was->ino || now.size != was->size ||
                             now.mtime_ns != was->mtime_ns)))
            return false;
    }
    return true;
}

bool ztd_v2_part_servable(const ztd_v2_entry *v, const zt_component *c)
{
    int s = zt_component_shard(c);
    return s < 0 || (v && (size_t)s < v->nshards && v->shards[s].servable);
}

void ztd_v2_entry_json(const ztd_v2_entry *v, const char *name, json_t *j)
{
    if (!v)
        return;
    if (v->content_digest[0])
        json_object_set_new(j, "content_digest", json_string(v->content_digest));
    if (!v->nshards)
        return;
    json_t *files = json_array();
    json_array_append_new(files, json_string(name));
    for (size_t i = 0; i < v->nshards; i++)
        json_array_append_new(files, v->shards[i].file && v->shards[i].servable
                                         ? json_string(v->shards[i].file)
                                         : json_null());
    json_object_set_new(j, "files", files);
}
