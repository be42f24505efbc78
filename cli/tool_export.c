/* zt convert IN.zt -o OUT.safetensors: IN's safetensors view (libztensor's
 * zt_st_view, the layout ztensord serves too) written to a file: the header,
 * then each tensor's decoded bytes in the view's order. What the view refuses
 * (an object safetensors cannot express) is reported with its name. */
#include "tool.h"

#include <ztensor/ztensor_experimental.h>

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct xport {
    const char *in, *out;
    zt_file *f;
    zt_st_view *v;
} xport;

/* ---- output: temporary file, then fsync, rename, fsync of the directory */
static int open_tmp(const char *path, char *tmp, size_t cap)
{
    char *d = strdup(path), *b = strdup(path);
    if (!d || !b) {
        free(d);
        free(b);
        return -1;
    }
    snprintf(tmp, cap, "%s/.%s.tmp.XXXXXX", dirname(d), basename(b));
    free(d);
    free(b);
    int fd = mkostemp(tmp, O_CLOEXEC);
    if (fd >= 0)
        fchmod(fd, 0644);
    return fd;
}

static int publish(int fd, const char *tmp, const char *path)
{
    if (fsync(fd) != 0 || rename(tmp, path) != 0)
        return -1;
    char *d = strdup(path);
    int dfd = d ? open(dirname(d), O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
    free(d);
    int rc = dfd >= 0 && fsync(dfd) == 0 ? 0 : -1;
    if (dfd >= 0)
        close(dfd);
    return rc;
}

static zt_status to_fd(void *ud, const void *p, size_t n, zt_error *err)
{
    if (tool_write_all(*(int *)ud, p, n) == 0)
        return ZT_OK;
    err->code = errno == ENOSPC ? ZT_E_NOSPACE : ZT_E_IO;
    snprintf(err->message, sizeof(err->message), "write: %s", strerror(errno));
    return err->code;
}

static int write_all(xport *x, int fd)
{
    size_t hlen;
    const void *hdr = zt_st_view_header(x->v, &hlen);
    if (tool_write_all(fd, hdr, hlen)) {
        fprintf(stderr, "zt convert: %s: write: %s\n", x->out, strerror(errno));
        return ZT_EXIT_SYSTEM;
    }
    tool_progress prog;
    tool_progress_init(&prog, zt_st_view_size(x->v) - hlen);
    zt_error err;
    zt_status st = ZT_OK;
    for (size_t i = 0; i < zt_st_view_count(x->v) && !st; i++) {
        zt_st_tensor t;
        zt_st_view_tensor(x->v, i, &t);
        st = tool_copy_component(x->f, t.component, to_fd, &fd, &prog, &err);
    }
    tool_progress_end(&prog);
    return st ? tool_report("convert", x->out, &err) : ZT_EXIT_OK;
}

static int emit(xport *x)
{
    char tmp[4096];
    int fd = open_tmp(x->out, tmp, sizeof(tmp)), rc;
    if (fd < 0) {
        fprintf(stderr, "zt convert: %s: %s\n", x->out, strerror(errno));
        return ZT_EXIT_SYSTEM;
    }
    rc = write_all(x, fd);
    if (!rc && publish(fd, tmp, x->out) != 0) {
        fprintf(stderr, "zt convert: %s: %s\n", x->out, strerror(errno));
        rc = ZT_EXIT_SYSTEM;
    }
    close(fd);
    if (rc)
        unlink(tmp);
    return rc;
}

int tool_export_safetensors(const char *in, const char *out)
{
    xport x = {.in = in, .out = out};
    zt_error err;
    if (zt_open(in, NULL, &x.f, &err))
        return tool_report("convert", in, &err);
    x.v = zt_st_view_new(x.f, &err);
    int rc = x.v ? ZT_EXIT_OK : tool_report("convert", in, &err);
    for (size_t i = 0; x.v && i < zt_st_view_note_count(x.v); i++)
        fprintf(stderr, "zt convert: warning: %s\n", zt_st_view_note(x.v, i));
    if (!rc)
        rc = emit(&x);
    zt_st_view_free(x.v);
    zt_close(x.f);
    return rc;
}
