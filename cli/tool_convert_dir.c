/*
 * zt convert DIR -o OUTDIR: a model directory as one an engine loads. Each
 * tensor file STEM.zt or STEM.alt of DIR becomes OUTDIR/STEM.safetensors,
 * its safetensors view (the bytes ztensord serves as /v1/files/STEM.zt/
 * safetensors); v2 data shards go into their root's view; every other
 * regular file (config.json, tokenizer.json, .safetensors files) is copied
 * as it is. When the tensor files form one model (two or more, or a v2 root
 * with shards), OUTDIR/model.safetensors.index.json is written with the
 * server's index code, unless DIR has a real one (copied). The rules are
 * ztensord's (server/store/view_names.h): a real STEM.safetensors wins over
 * the view of STEM.zt. Subdirectories and dotfiles are left out. Every file
 * is written atomically (tool_st_out.c).
 */
#include "tool.h"

#include <ztensor/ztensor_experimental.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct cdir {
    const char *in, *out;
    int ofd;
    struct dirent **ents;
    int n;
    const char **members; /* .safetensors names in OUTDIR that hold the model */
    char **owned;
    size_t nmembers;
    int sharded, real_index, failed;
} cdir;

static int has_name(const cdir *c, const char *name)
{
    for (int i = 0; i < c->n; i++)
        if (!strcmp(c->ents[i]->d_name, name))
            return 1;
    return 0;
}

static int not_dot(const struct dirent *e)
{
    return e->d_name[0] != '.';
}

/* IN/name copied to OUTDIR/name. */
static int copy_plain(cdir *c, const char *name, const char *path)
{
    zt_error err = {0};
    int in = open(path, O_RDONLY | O_CLOEXEC);
    char tmp[64];
    int out = in >= 0 ? tool_st_tmp(c->ofd, tmp, sizeof(tmp)) : -1;
    static const size_t cap = 1u << 20;
    char *buf = out >= 0 ? malloc(cap) : NULL;
    int ok = buf != NULL;
    ssize_t r = 0;
    while (ok && (r = read(in, buf, cap)) > 0)
        ok = tool_write_all(out, buf, (size_t)r) == 0;
    ok = ok && r == 0;
    if (!ok) {
        fprintf(stderr, "zt convert: %s: %s\n", in < 0 || r < 0 ? path : c->out,
                buf ? strerror(errno) : "out of memory");
        if (out >= 0)
            unlinkat(c->ofd, tmp, 0);
    } else if (tool_st_publish(c->ofd, out, tmp, name, &err)) {
        ok = 0;
        tool_report("convert", c->out, &err);
    }
    free(buf);
    if (out >= 0)
        close(out);
    if (in >= 0)
        close(in);
    return ok ? ZT_EXIT_OK : ZT_EXIT_SYSTEM;
}

static int add_member(cdir *c, char *owned, const char *name)
{
    c->owned[c->nmembers] = owned;
    c->members[c->nmembers++] = owned ? owned : name;
    return ZT_EXIT_OK;
}

/* IN/name (STEM.zt or STEM.alt) as OUTDIR/vname. */
static int convert_one(cdir *c, const char *path, char *vname)
{
    zt_error err;
    zt_file *f;
    if (zt_open(path, NULL, &f, &err)) {
        free(vname);
        return tool_report("convert", path, &err);
    }
    if (zt_file_is_data_shard(f)) { /* its bytes are in its root's view */
        zt_close(f);
        free(vname);
        return ZT_EXIT_OK;
    }
    zt_st_view *v = zt_st_view_new(f, &err);
    int rc = v ? ZT_EXIT_OK : tool_report("convert", path, &err);
    for (size_t i = 0; v && i < zt_st_view_note_count(v); i++)
        fprintf(stderr, "zt convert: warning: %s\n", zt_st_view_note(v, i));
    if (!rc && tool_st_write_view(f, v, c->ofd, vname, NULL, &err))
        rc = tool_report("convert", c->out, &err);
    if (!rc) {
        c->sharded |= zt_file_shard_count(f) > 0;
        add_member(c, vname, NULL);
        vname = NULL;
    }
    free(vname);
    zt_st_view_free(v);
    zt_close(f);
    return rc;
}

static int one_entry(cdir *c, const char *name)
{
    char *path = tool_path_join(c->in, name);
    struct stat sb;
    int rc = ZT_EXIT_OK;
    if (!path)
        return ZT_EXIT_SYSTEM;
    if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        if (S_ISDIR(sb.st_mode))
            fprintf(stderr, "zt convert: %s: a directory: left out (no recursion)\n", path);
        free(path);
        return ZT_EXIT_OK;
    }
    char *vname = tool_st_view_name(name);
    size_t n = strlen(name);
    if (vname && has_name(c, vname)) {
        fprintf(stderr,
                "zt convert: %s is a real file: %s is not converted (the real file wins "
                "the name, as in ztensord's listings)\n",
                vname, name);
        free(vname);
    } else if (vname) {
        rc = convert_one(c, path, vname);
    } else {
        rc = copy_plain(c, name, path);
        if (!rc && n > 12 && !strcmp(name + n - 12, ".safetensors"))
            add_member(c, NULL, name);
        c->real_index |= !strcmp(name, TOOL_ST_INDEX);
    }
    free(path);
    return rc;
}

static int write_index(cdir *c)
{
    if (c->real_index || c->nmembers < 1 || (c->nmembers < 2 && !c->sharded))
        return ZT_EXIT_OK;
    if (c->failed) {
        fprintf(stderr, "zt convert: %s/" TOOL_ST_INDEX " not written: a file failed\n", c->out);
        return ZT_EXIT_OK;
    }
    zt_error err;
    if (tool_st_write_index(c->ofd, c->out, c->members, c->nmembers, &err))
        return tool_report("convert", c->out, &err);
    return ZT_EXIT_OK;
}

int tool_convert_dir(const char *in, const char *out)
{
    cdir c = {.in = in, .out = out};
    struct stat si, so;
    mkdir(out, 0755);
    c.ofd = open(out, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (c.ofd < 0) {
        fprintf(stderr, "zt convert: %s: %s\n", out, strerror(errno));
        return ZT_EXIT_SYSTEM;
    }
    if (stat(in, &si) == 0 && fstat(c.ofd, &so) == 0 && si.st_dev == so.st_dev &&
        si.st_ino == so.st_ino) {
        fprintf(stderr, "zt convert: %s: OUTDIR must be another directory than DIR\n", out);
        close(c.ofd);
        return ZT_EXIT_USAGE;
    }
    c.n = scandir(in, &c.ents, not_dot, alphasort);
    if (c.n < 0) {
        fprintf(stderr, "zt convert: %s: %s\n", in, strerror(errno));
        close(c.ofd);
        return ZT_EXIT_SYSTEM;
    }
    c.members = calloc((size_t)c.n + 1, sizeof(*c.members));
    c.owned = calloc((size_t)c.n + 1, sizeof(*c.owned));
    int rc = c.members && c.owned ? ZT_EXIT_OK : ZT_EXIT_SYSTEM;
    for (int i = 0; c.members && c.owned && i < c.n; i++) { /* keep going; the first error wins */
        int r = one_entry(&c, c.ents[i]->d_name);
        c.failed |= r != ZT_EXIT_OK;
        if (r && !rc)
            rc = r;
    }
    int ri = c.members && c.owned ? write_index(&c) : ZT_EXIT_OK;
    if (ri && !rc)
        rc = ri;
    for (size_t i = 0; i < c.nmembers; i++)
        free(c.owned[i]);
    for (int i = 0; i < c.n; i++)
        free(c.ents[i]);
    free(c.ents);
    free(c.members);
    free(c.owned);
    close(c.ofd);
    return rc;
}
