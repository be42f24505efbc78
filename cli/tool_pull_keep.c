/*
 * zt pull --tensors keeps the source's format: a selection of a
 * .safetensors file is a .safetensors file. tool_pull_select.c writes the
 * chosen objects as a .zt in a temporary file (its resumable path); this
 * turns that file into safetensors (libztensor's safetensors view, as zt
 * convert IN.zt -o OUT.safetensors writes it: the header, then each
 * tensor's bytes) in another temporary file, fsynced, for the caller to
 * publish. A v2 source is written as v2 by the writer itself.
 */
#include "tool.h"

#include <ztensor/ztensor_experimental.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The stored bytes [off, off + len) of fd to out (a raw component's bytes
 * are its tensor's), through buf. */
static zt_status copy_range(int fd, uint64_t off, uint64_t len, int out, uint8_t *buf, size_t cap,
                            zt_error *err)
{
    while (len) {
        size_t k = len < cap ? (size_t)len : cap;
        ssize_t n = pread(fd, buf, k, (off_t)off);
        if (n <= 0 || tool_write_all(out, buf, (size_t)n)) {
            err->code = n > 0 && errno == ENOSPC ? ZT_E_NOSPACE : ZT_E_IO;
            snprintf(err->message, sizeof(err->message), "copy: %s",
                     n == 0 ? "the file was cut" : strerror(errno));
            return err->code;
        }
        off += (uint64_t)n;
        len -= (uint64_t)n;
    }
    return ZT_OK;
}

static zt_status write_view(int fd, const zt_file *f, int out, zt_error *err)
{
    zt_st_view *v = zt_st_view_new(f, err);
    if (!v)
        return err->code ? err->code : ZT_E_UNSUPPORTED;
    size_t hlen = 0, cap = 4u << 20;
    const void *hdr = zt_st_view_header(v, &hlen);
    uint8_t *buf = malloc(cap);
    zt_status st = buf ? ZT_OK : ZT_E_NOMEM;
    if (!buf)
        snprintf(err->message, sizeof(err->message), "out of memory");
    if (!st && tool_write_all(out, hdr, hlen)) {
        st = err->code = errno == ENOSPC ? ZT_E_NOSPACE : ZT_E_IO;
        snprintf(err->message, sizeof(err->message), "write: %s", strerror(errno));
    }
    for (size_t i = 0; !st && i < zt_st_view_count(v); i++) {
        zt_st_tensor t;
        zt_st_view_tensor(v, i, &t);
        if (zt_component_encoding(t.component) != ZT_ENC_RAW) { /* never from safetensors */
            st = err->code = ZT_E_UNSUPPORTED;
            snprintf(err->message, sizeof(err->message), "an encoded component");
            break;
        }
        st = copy_range(fd, zt_component_offset(t.component), zt_component_length(t.component), out,
                        buf, cap, err);
    }
    free(buf);
    zt_st_view_free(v);
    return st;
}

zt_status tool_pull_zt_to_safetensors(int dfd, const char *zt_name, int out_fd, zt_error *err)
{
    int fd = openat(dfd, zt_name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        err->code = ZT_E_IO;
        snprintf(err->message, sizeof(err->message), "cannot open %s: %s", zt_name,
                 strerror(errno));
        return ZT_E_IO;
    }
    zt_file *f = NULL;
    zt_status st = zt_open_fd(fd, NULL, &f, err);
    if (!st)
        st = write_view(fd, f, out_fd, err);
    if (!st && fsync(out_fd) != 0) {
        st = err->code = errno == ENOSPC ? ZT_E_NOSPACE : ZT_E_IO;
        snprintf(err->message, sizeof(err->message), "fsync: %s", strerror(errno));
    }
    zt_close(f);
    close(fd);
    return st;
}
