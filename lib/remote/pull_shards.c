/*
 * Pulling a zTensor v2 model whose root names shards (v2 §7) as one version.
 * A shard name is a label; it is resolved here by Appendix B's positional
 * convention, as the local reader does (lib/src/v2/v2_shards.c): shard "n" of
 * root ".../model.zt" is ".../model-n.zt", beside the root, both in the URL
 * and on disk. Every file is opened (its validator pinned, its size checked
 * against the root's table) before any data byte is fetched; then each is
 * pulled and verified (the root's parts by their digests; a shard by the
 * table's whole-file digest and the digests of the root's parts in it) and
 * held complete but unpublished; only when all are verified are they put in
 * place, the shards first and the root last. A file that changes during the
 * pull ends this round with ZT_E_CHANGED: zt_remote_pull starts over, with
 * every file opened again, so a new version is pulled whole or the pull
 * fails; the files of two versions are never published together.
 */
#include "remote_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* "<dir>/<stem>-<name>.zt" for "<dir>/<stem>.zt" (or any other last segment),
 * keeping what follows the path in a URL ("?query"). */
static char *beside(const char *root, const char *name, bool url)
{
    size_t end = url ? strcspn(root, "?#") : strlen(root);
    size_t dir = end;
    while (dir > 0 && root[dir - 1] != '/')
        dir--;
    size_t stem = end - dir;
    if (stem > 3 && !memcmp(root + end - 3, ".zt", 3))
        stem -= 3;
    size_t n = dir + stem + 1 + strlen(name) + 3 + strlen(root + end) + 1;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%.*s-%s.zt%s", (int)(dir + stem), root, name, root + end);
    return p;
}

typedef struct shard_file {
    char *url, *path;
    zt_remote_file *rf;
    bool skipped;
} shard_file;

/* Opens shard i: its validator is pinned now, its size is the table's. */
static zt_status open_shard(zt_remote *r, const zt_remote_file *root, const char *url,
                            const char *path, size_t i, shard_file *s, zt_error *err)
{
    const zt_file *f = zt_remote_file_zt(root);
    const char *name = zt_file_shard_name(f, i);
    s->url = beside(url, name, true);
    s->path = beside(path, name, false);
    if (!s->url || !s->path)
        return ztr__fail(err, ZT_E_NOMEM, url, NULL, NULL, 0, 0, "out of memory");
    zt_status st = zt_remote_open_in(r, s->url, &s->rf, err);
    if (st)
        return st;
    if (s->rf->pin.size != zt_file_shard_size(f, i))
        return ztr__fail(err, ZT_E_SHARD, s->rf->url, NULL, NULL, 0, 0,
                         "v2 §7.3: shard \"%s\" is %llu bytes, the root's table says %llu", name,
                         (unsigned long long)s->rf->pin.size,
                         (unsigned long long)zt_file_shard_size(f, i));
    return ZT_OK;
}

static zt_status pull_model(zt_remote *r, zt_remote_file *root, const char *url, int dfd,
                            const char *path, const zt_remote_pull_options *opt,
                            zt_remote_pull_stats *stats, shard_file *sh, size_t n, zt_error *err)
{
    zt_status st = ZT_OK;
    for (size_t i = 0; !st && i < n; i++)
        st = open_shard(r, root, url, path, i, &sh[i], err);
    bool root_skipped = false;
    if (!st)
        st = ztr__pull_file(root, dfd, path, NULL, true, opt, stats, &root_skipped, err);
    zt_remote_pull_options sopt = *opt;
    sopt.expect_etag = NULL; /* the root's */
    for (size_t i = 0; !st && i < n; i++) {
        ztr_shard_of of = {zt_remote_file_zt(root), i};
        st =
            ztr__pull_file(sh[i].rf, dfd, sh[i].path, &of, true, &sopt, stats, &sh[i].skipped, err);
    }
    /* Every file verified: in place, the root last. */
    for (size_t i = 0; !st && i < n; i++)
        if (!sh[i].skipped)
            st = ztr__pull_place(dfd, sh[i].path, err);
    if (!st && !root_skipped)
        st = ztr__pull_place(dfd, path, err);
    stats->skipped = !st && root_skipped;
    for (size_t i = 0; i < n; i++)
        stats->skipped &= sh[i].skipped;
    return st;
}

zt_status ztr__pull_set(zt_remote *r, const char *url, int dfd, const char *path,
                        const zt_remote_pull_options *opt, zt_remote_pull_stats *stats,
                        zt_error *err)
{
    /* What a round counts anew (fetched, resumed and retries add up). */
    stats->size = 0;
    stats->verified = stats->unverified = stats->objects_unverified = 0;
    stats->skipped = 0;
    zt_remote_file *root;
    zt_status st = zt_remote_open_in(r, url, &root, err);
    if (st)
        return st;
    size_t n = zt_file_shard_count(zt_remote_file_zt(root));
    bool skipped = false;
    if (!n) {
        st = ztr__pull_file(root, dfd, path, NULL, false, opt, stats, &skipped, err);
        stats->skipped = !st && skipped;
        zt_remote_close(root);
        return st;
    }
    shard_file *sh = calloc(n, sizeof(*sh));
    st = sh ? pull_model(r, root, url, dfd, path, opt, stats, sh, n, err)
            : ztr__fail(err, ZT_E_NOMEM, url, NULL, NULL, 0, 0, "out of memory");
    for (size_t i = 0; sh && i < n; i++) {
        zt_remote_close(sh[i].rf);
        free(sh[i].url);
        free(sh[i].path);
    }
    free(sh);
    zt_remote_close(root);
    return st;
}

/* The public entry: a whole model (a file, or a v2 root and its shards) at one
 * version, started over when the origin changes it. Here, above pull.c, so
 * that calls go one way: this file uses pull.c, never the reverse. */
zt_status zt_remote_pull(zt_remote *r, const char *url, const char *path,
                         const zt_remote_pull_options *opt, zt_remote_pull_stats *stats,
                         zt_error *err)
{
    zt_remote_pull_options defaults;
    zt_remote_pull_stats local;
    zt_error e2;
    if (!err)
        err = &e2;
    if (!opt) {
        zt_remote_pull_options_init(&defaults);
        opt = &defaults;
    }
    if (!stats)
        stats = &local;
    memset(stats, 0, sizeof(*stats));
    if (!r || !url || !path)
        return ztr__fail(err, ZT_E_ARG, url, NULL, NULL, 0, 0, "NULL argument");
    if (opt->size < sizeof(*opt))
        return ztr__fail(err, ZT_E_ARG, url, NULL, NULL, 0, 0,
                         "zt_remote_pull_options not set by zt_remote_pull_options_init");
    int dfd = ztr__pull_dir_open(opt->dir_fd, path, url, err);
    if (dfd < 0)
        return err->code;
    zt_status st;
    for (unsigned round = 0;; round++) {
        st = ztr__pull_set(r, url, dfd, path, opt, stats, err);
        if (st != ZT_E_CHANGED || round >= opt->restarts)
            break;
        stats->changed = 1;
        stats->restarts++;
    }
    close(dfd);
    return st;
}
