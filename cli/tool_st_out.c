/*
 * safetensors files written into a directory fd, for `zt convert` (one file,
 * a directory) and `zt pull --format safetensors`: a file's safetensors view
 * (libztensor's zt_st_view, the layout ztensord serves) and a model's
 * model.safetensors.index.json (zt_st_index_json, the server's index code).
 * Every file is written to a temporary name in the directory, fsynced,
 * renamed into place and the directory fsynced: a name holds the old file
 * or the complete new one, never part of one. Thread-safe: each call has its
 * own buffer (zt pull writes views from several threads).
 */
#include "tool.h"

#include <ztensor/ztensor_experimental.h>

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define COPY_CHUNK (4u << 20)

zt_status tool_st_fail(zt_error *err, zt_status code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    zt_error_vset(err, code, NULL, NULL, 0, 0, fmt, ap);
    va_end(ap);
    return code;
}

static zt_status fail_errno(zt_error *err, const char *what, const char *name)
{
    int e = errno;
    return tool_st_fail(err, e == ENOSPC ? ZT_E_NOSPACE : ZT_E_IO, "%s %s: %s", what, name,
                        strerror(e));
}

int tool_st_tmp(int dfd, char *tmp, size_t cap)
{
    static const char k_abc[] = "abcdefghijklmnopqrstuvwxyz0123456789";
    unsigned seed = (unsigned)getpid() ^ (unsigned)(uintptr_t)tmp;
    for (int tries = 0; tries < 100; tries++) {
        char rnd[9];
        for (int i = 0; i < 8; i++) {
            seed = seed * 1103515245u + 12345u + (unsigned)tries;
            rnd[i] = k_abc[(seed >> 16) % (sizeof(k_abc) - 1)];
        }
        rnd[8] = 0;
        snprintf(tmp, cap, ".zt-st-%s.tmp", rnd);
        int fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd >= 0 || errno != EEXIST)
            return fd;
    }
    errno = EEXIST;
    return -1;
}

zt_status tool_st_publish(int dfd, int fd, const char *tmp, const char *leaf, zt_error *err)
{
    zt_status st = ZT_OK;
    if (fsync(fd) != 0 || renameat(dfd, tmp, dfd, leaf) != 0)
        st = fail_errno(err, "publishing", leaf);
    else if (fsync(dfd) != 0)
        return fail_errno(err, "fsync of the directory of", leaf);
    if (st)
        unlinkat(dfd, tmp, 0);
    return st;
}

/* The decoded bytes of c to fd, through buf. */
static zt_status copy_component(const zt_file *f, const zt_component *c, int fd, uint8_t *buf,
                                tool_progress *p, zt_error *err)
{
    zt_decoder *d = NULL;
    zt_status st = zt_decoder_new(f, c, &d, err);
    uint64_t total = 0;
    while (!st) {
        size_t n = 0;
        if ((st = zt_decoder_read(d, buf, COPY_CHUNK, &n, err)) || n == 0)
            break;
        total += n;
        if (tool_write_all(fd, buf, n) != 0)
            st = fail_errno(err, "write of", "the view");
        else if (p)
            tool_progress_add(p, n);
    }
    zt_decoder_free(d);
    if (!st && total != zt_component_decoded_length(c))
        st = tool_st_fail(err, ZT_E_TRUNCATED, "component \"%s\" gave %llu of its %llu bytes",
                          zt_component_role(c), (unsigned long long)total,
                          (unsigned long long)zt_component_decoded_length(c));
    return st;
}

static zt_status write_view(const zt_file *f, const zt_st_view *v, int fd, tool_progress *p,
                            zt_error *err)
{
    size_t hlen;
    const void *hdr = zt_st_view_header(v, &hlen);
    if (tool_write_all(fd, hdr, hlen) != 0)
        return fail_errno(err, "write of", "the view's header");
    uint8_t *buf = malloc(COPY_CHUNK);
    if (!buf)
        return tool_st_fail(err, ZT_E_NOMEM, "out of memory");
    zt_status st = ZT_OK;
    for (size_t i = 0; i < zt_st_view_count(v) && !st; i++) {
        zt_st_tensor t;
        zt_st_view_tensor(v, i, &t);
        st = copy_component(f, t.component, fd, buf, p, err);
    }
    free(buf);
    return st;
}

zt_status tool_st_write_view(const zt_file *f, const zt_st_view *v, int dfd, const char *leaf,
                             tool_progress *p, zt_error *err)
{
    char tmp[64];
    int fd = tool_st_tmp(dfd, tmp, sizeof(tmp));
    if (fd < 0)
        return fail_errno(err, "creating a temporary file for", leaf);
    zt_status st = write_view(f, v, fd, p, err);
    if (!st)
        st = tool_st_publish(dfd, fd, tmp, leaf, err);
    else
        unlinkat(dfd, tmp, 0);
    close(fd);
    return st;
}

zt_status tool_st_write_bytes(int dfd, const char *leaf, const void *p, size_t n, zt_error *err)
{
    char tmp[64];
    int fd = tool_st_tmp(dfd, tmp, sizeof(tmp));
    if (fd < 0)
        return fail_errno(err, "creating a temporary file for", leaf);
    zt_status st = ZT_OK;
    if (tool_write_all(fd, p, n) != 0) {
        st = fail_errno(err, "write of", leaf);
        unlinkat(dfd, tmp, 0);
    } else {
        st = tool_st_publish(dfd, fd, tmp, leaf, err);
    }
    close(fd);
    return st;
}

/* The views of the n files dir/leaves[i], opened in files[i]. */
static zt_status open_views(const char *dir, const char *const *leaves, size_t n, zt_file **files,
                            zt_st_view **views, zt_error *err)
{
    for (size_t i = 0; i < n; i++) {
        char *path = tool_path_join(dir, leaves[i]);
        if (!path)
            return tool_st_fail(err, ZT_E_NOMEM, "out of memory");
        zt_status st = zt_open(path, NULL, &files[i], err);
        free(path);
        if (st)
            return st;
        if (!(views[i] = zt_st_view_new(files[i], err)))
            return err->code;
    }
    return ZT_OK;
}

zt_status tool_st_write_index(int dfd, const char *dir, const char *const *leaves, size_t n,
                              zt_error *err)
{
    zt_file **files = calloc(n ? n : 1, sizeof(*files));
    zt_st_view **views = calloc(n ? n : 1, sizeof(*views));
    zt_status st = files && views ? open_views(dir, leaves, n, files, views, err)
                                  : tool_st_fail(err, ZT_E_NOMEM, "out of memory");
    char *json = NULL;
    if (!st && !(json = zt_st_index_json(leaves, (const zt_st_view *const *)views, n, err)))
        st = err->code ? err->code : ZT_E_NOMEM;
    if (!st)
        st = tool_st_write_bytes(dfd, TOOL_ST_INDEX, json, strlen(json), err);
    zt_free(json);
    for (size_t i = 0; i < n && views && files; i++) {
        zt_st_view_free(views[i]);
        zt_close(files[i]);
    }
    free(files);
    free(views);
    return st;
}

char *tool_st_view_name(const char *rel)
{
    size_t n = strlen(rel), k = 0;
    if (n > 3 && !strcmp(rel + n - 3, ".zt"))
        k = 3;
    else if (n > 4 && !strcmp(rel + n - 4, ".alt"))
        k = 4;
    if (!k || rel[n - k - 1] == '/')
        return NULL;
    char *s = malloc(n - k + sizeof(".safetensors"));
    if (s)
        snprintf(s, n - k + sizeof(".safetensors"), "%.*s.safetensors", (int)(n - k), rel);
    return s;
}
