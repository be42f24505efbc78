/*
 * zt pull --format safetensors: each tensor file STEM.zt (or STEM.alt) is
 * written as STEM.safetensors, its safetensors view, byte-identical to `zt
 * convert STEM.zt -o STEM.safetensors` and to ztensord's
 * /v1/files/STEM.zt/safetensors; a directory whose tensor files form one
 * model also gets model.safetensors.index.json, the server's bytes.
 *
 * Design: the stored file is pulled as zt pull pulls it (zt_remote_pull:
 * every component's digest checked as its bytes land, v2 shards with their
 * root, resumable, each stored byte fetched once) into a staging directory
 * beside the output, .ztview-<hash of STEM.zt>; only when it is complete and
 * verified is the view laid out from it (zstd decoded) by the layout code
 * `zt convert` uses (tool_st_out.c over libztensor's zt_st_view), published
 * atomically, and the staging directory removed. The cost is disk: the
 * stored file and its view exist together until the view is written. A pull
 * that stops leaves the staging directory (what is verified) for the next
 * run, and no STEM.safetensors. The view records the source's validator in
 * the extended attribute user.ztensor.view: a later pull of the same version
 * skips it.
 */
#include "tool.h"

#include <ztensor/ztensor_experimental.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#define VIEW_XATTR "user.ztensor.view"

/* ".ztview-<16 hex of FNV-1a 64 of leaf>": the staging directory's name,
 * the same on every run, within NAME_MAX whatever the leaf's length. */
static void stage_name(const char *leaf, char out[32])
{
    uint64_t h = 1469598103934665603ull;
    for (const unsigned char *s = (const unsigned char *)leaf; *s; s++)
        h = (h ^ *s) * 1099511628211ull;
    snprintf(out, 32, ".ztview-%016llx", (unsigned long long)h);
}

/* "<sharded 0|1> <etag>": what user.ztensor.view holds. */
static void mark_value(char *buf, size_t cap, int sharded, const char *etag)
{
    snprintf(buf, cap, "%d %s", sharded ? 1 : 0, etag);
}

/* The view dfd/vleaf is already the version etag names: skipped. */
static int already(int dfd, const char *vleaf, const char *etag, zt_remote_pull_stats *s,
                   int *sharded)
{
    if (!etag || !*etag)
        return 0;
    int fd = openat(dfd, vleaf, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    char got[512], want[512];
    ssize_t n = fd >= 0 ? fgetxattr(fd, VIEW_XATTR, got, sizeof(got) - 1) : -1;
    struct stat sb;
    int hit = 0;
    for (int sh = 0; n > 0 && sh < 2 && !hit; sh++) {
        got[n] = 0;
        mark_value(want, sizeof(want), sh, etag);
        hit = !strcmp(got, want) && fstat(fd, &sb) == 0;
        if (hit) {
            *sharded = sh;
            s->skipped = 1;
            s->size = (uint64_t)sb.st_size;
            snprintf(s->etag, sizeof(s->etag), "%s", etag);
        }
    }
    if (fd >= 0)
        close(fd);
    return hit;
}

static void mark(int dfd, const char *vleaf, int sharded, const char *etag)
{
    char v[512];
    int fd = openat(dfd, vleaf, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    mark_value(v, sizeof(v), sharded, etag);
    if (fd >= 0) { /* no user xattrs here: the next pull fetches it again */
        (void)fsetxattr(fd, VIEW_XATTR, v, strlen(v), 0);
        close(fd);
    }
}

/* Everything in the staging directory sfd, then the directory itself. */
static void unstage(int dfd, int sfd, const char *sname)
{
    int fd = dup(sfd);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    struct dirent *e;
    for (int i = 0; d && (e = readdir(d)) && i < 100000; i++)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            unlinkat(sfd, e->d_name, 0);
    if (d)
        closedir(d);
    else if (fd >= 0)
        close(fd);
    unlinkat(dfd, sname, AT_REMOVEDIR);
}

/* The staged, verified file as dfd/vleaf. */
static zt_status lay_out(const char *path, int dfd, const char *vleaf, int *sharded, zt_error *err)
{
    zt_file *f;
    zt_status st = zt_open(path, NULL, &f, err);
    if (st)
        return st;
    zt_st_view *v = zt_st_view_new(f, err);
    st = v ? tool_st_write_view(f, v, dfd, vleaf, NULL, err) : err->code;
    *sharded = zt_file_shard_count(f) > 0;
    zt_st_view_free(v);
    zt_close(f);
    return st;
}

zt_status tool_pull_view(zt_remote *r, const char *url, int dfd, const char *vdest,
                         const char *leaf, const zt_remote_pull_options *po,
                         zt_remote_pull_stats *s, int *sharded, zt_error *err)
{
    char sname[32], *vleaf = tool_st_view_name(leaf);
    const char *slash = strrchr(vdest, '/');
    if (!vleaf)
        return tool_st_fail(err, ZT_E_NOMEM, "out of memory");
    memset(s, 0, sizeof(*s));
    if (already(dfd, vleaf, po->expect_etag, s, sharded)) {
        free(vleaf);
        return ZT_OK;
    }
    stage_name(leaf, sname);
    if (mkdirat(dfd, sname, 0755) != 0 && errno != EEXIST) {
        free(vleaf);
        return tool_st_fail(err, ZT_E_IO, "%s: staging directory %s: %s", vdest, sname,
                            strerror(errno));
    }
    int sfd = openat(dfd, sname, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (sfd < 0) {
        int e = errno;
        free(vleaf);
        return tool_st_fail(err, ZT_E_IO, "%s: staging directory %s: %s", vdest, sname,
                            strerror(e));
    }
    zt_remote_pull_options o = *po;
    o.dir_fd = sfd;
    zt_status st = zt_remote_pull(r, url, leaf, &o, s, err);
    if (!st) { /* verified: laid out from the staged copy, which then goes */
        char *path = malloc(strlen(vdest) + strlen(sname) + strlen(leaf) + 3);
        if (path)
            sprintf(path, "%.*s%s%s/%s", slash ? (int)(slash - vdest) : 0, vdest, slash ? "/" : "",
                    sname, leaf);
        st = path ? lay_out(path, dfd, vleaf, sharded, err)
                  : tool_st_fail(err, ZT_E_NOMEM, "no memory");
        free(path);
        if (!st) /* the listing's name of the version, unless the pull saw another */
            mark(dfd, vleaf, *sharded,
                 po->expect_etag && *po->expect_etag && !s->changed ? po->expect_etag : s->etag);
        if (st != ZT_E_NOMEM && st != ZT_E_NOSPACE && st != ZT_E_IO)
            unstage(dfd, sfd, sname); /* done, or a file safetensors cannot express */
    }
    close(sfd);
    free(vleaf);
    return st;
}

/* ---- the plan and the indexes */

static int by_rel(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int tool_pull_view_plan(tool_view_job *v, size_t n)
{
    const char **names = malloc((n ? n : 1) * sizeof(*names));
    if (!names)
        return ZT_EXIT_SYSTEM;
    for (size_t i = 0; i < n; i++)
        names[i] = v[i].rel;
    qsort(names, n, sizeof(*names), by_rel);
    int rc = ZT_EXIT_OK;
    for (size_t i = 0; i < n && !rc; i++) {
        char *vrel = v[i].plain ? NULL : tool_st_view_name(v[i].rel);
        if (v[i].shard) { /* its bytes come with its root, into the root's view */
            v[i].drop = 1;
        } else if (vrel && bsearch(&vrel, names, n, sizeof(*names), by_rel)) {
            fprintf(stderr,
                    "zt pull: %s is a real file: %s is not pulled as its view (the real file "
                    "wins the name, as in ztensord's listings)\n",
                    vrel, v[i].rel);
            v[i].drop = 1;
        } else if (vrel) {
            char *dest = malloc(strlen(v[i].dest) + 16);
            size_t k = strlen(v[i].dest) - strlen(v[i].rel);
            if (!dest) {
                rc = ZT_EXIT_SYSTEM;
            } else {
                sprintf(dest, "%.*s%s", (int)k, v[i].dest, vrel);
                v[i].dest = dest;
                v[i].view = 1;
            }
        }
        free(vrel);
    }
    free(names);
    return rc;
}

/* The name a member has in the output: its view's, or its own. */
static const char *out_rel(const tool_view_job *j, char **owned)
{
    *owned = j->view ? tool_st_view_name(j->rel) : NULL;
    return j->view ? *owned : j->rel;
}

static int is_safetensors(const char *rel)
{
    size_t n = strlen(rel);
    return n > 12 && !strcmp(rel + n - 12, ".safetensors");
}

/* The index of one directory, whose members are m[0..k). */
static int one_index(int top, const char *dir, tool_view_job *const *m, size_t k)
{
    const char **leaves = calloc(k, sizeof(*leaves));
    char **owned = calloc(k, sizeof(*owned));
    const char *rel0 = m[0]->rel, *dest0 = m[0]->dest;
    const char *base = strrchr(dest0, '/');
    char *dpath = base ? strndup(dest0, (size_t)(base - dest0)) : strdup(".");
    zt_error err;
    int rc = ZT_EXIT_OK, dfd = -1;
    if (!leaves || !owned || !dpath)
        rc = ZT_EXIT_SYSTEM;
    for (size_t i = 0; !rc && i < k; i++) {
        const char *r = out_rel(m[i], &owned[i]);
        if (!r)
            rc = ZT_EXIT_SYSTEM;
        else
            leaves[i] = tool_pull_leaf(r);
    }
    if (!rc && (dfd = tool_pull_subdir(top, dir, rel0, &err)) < 0)
        rc = tool_report("pull", dpath, &err);
    if (!rc && tool_st_write_index(dfd, dpath, leaves, k, &err))
        rc = tool_report("pull", dpath, &err);
    if (dfd >= 0)
        close(dfd);
    for (size_t i = 0; owned && i < k; i++)
        free(owned[i]);
    free(leaves);
    free(owned);
    free(dpath);
    return rc;
}

static size_t dir_len(const char *rel)
{
    return (size_t)(tool_pull_leaf(rel) - rel);
}

static int by_job_rel(const void *a, const void *b)
{
    const tool_view_job *x = *(tool_view_job *const *)a, *y = *(tool_view_job *const *)b;
    return strcmp(x->rel, y->rel);
}

int tool_pull_view_indexes(int top, const char *dir, tool_view_job *v, size_t n)
{
    tool_view_job **s = malloc((n ? n : 1) * sizeof(*s));
    if (!s)
        return ZT_EXIT_SYSTEM;
    for (size_t i = 0; i < n; i++)
        s[i] = &v[i];
    qsort(s, n, sizeof(*s), by_job_rel); /* a directory's files are together */
    int rc = ZT_EXIT_OK;
    for (size_t i = 0, j; i < n; i = j) {
        size_t d = dir_len(s[i]->rel), k = 0;
        int sharded = 0, failed = 0, real = 0;
        for (j = i; j < n && dir_len(s[j]->rel) == d && !strncmp(s[j]->rel, s[i]->rel, d); j++) {
            tool_view_job *x = s[j];
            real |= !strcmp(tool_pull_leaf(x->rel), TOOL_ST_INDEX);
            if (x->drop || x->plain || (!x->view && !is_safetensors(x->rel)))
                continue;
            failed |= !x->ok;
            sharded |= x->sharded;
            s[i + k++] = x; /* members, packed at the group's start (j >= i + k) */
        }
        if (real || !k || (k < 2 && !sharded))
            continue;
        if (failed)
            fprintf(stderr,
                    "zt pull: %.*s" TOOL_ST_INDEX " not written: a file of the model failed\n",
                    (int)d, s[i]->rel);
        else if ((d = (size_t)one_index(top, dir, s + i, k)) != 0 && !rc)
            rc = (int)d;
    }
    free(s);
    return rc;
}
