/* zt convert IN.zt -o OUT.safetensors: IN's safetensors view (libztensor's
 * zt_st_view, the layout ztensord serves too) written to a file by
 * tool_st_out.c: the header, then each tensor's decoded bytes in the view's
 * order. What the view refuses (an object safetensors cannot express) is
 * reported with its name. */
#include "tool.h"

#include <ztensor/ztensor_experimental.h>

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* out's directory, opened; -1 with errno. */
static int open_dir_of(const char *out)
{
    char *d = strdup(out);
    int fd = d ? open(dirname(d), O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
    free(d);
    return fd;
}

int tool_export_safetensors(const char *in, const char *out)
{
    zt_file *f;
    zt_error err;
    if (zt_open(in, NULL, &f, &err))
        return tool_report("convert", in, &err);
    zt_st_view *v = zt_st_view_new(f, &err);
    int rc = v ? ZT_EXIT_OK : tool_report("convert", in, &err);
    for (size_t i = 0; v && i < zt_st_view_note_count(v); i++)
        fprintf(stderr, "zt convert: warning: %s\n", zt_st_view_note(v, i));
    int dfd = rc ? -1 : open_dir_of(out);
    if (!rc && dfd < 0) {
        fprintf(stderr, "zt convert: %s: %s\n", out, strerror(errno));
        rc = ZT_EXIT_SYSTEM;
    }
    if (!rc) {
        char *b = strdup(out);
        size_t hlen;
        zt_st_view_header(v, &hlen);
        tool_progress prog;
        tool_progress_init(&prog, zt_st_view_size(v) - hlen);
        zt_status st = b ? tool_st_write_view(f, v, dfd, basename(b), &prog, &err) : ZT_E_NOMEM;
        tool_progress_end(&prog);
        if (st == ZT_E_NOMEM && !b)
            fprintf(stderr, "zt convert: out of memory\n"), rc = ZT_EXIT_SYSTEM;
        else if (st)
            rc = tool_report("convert", out, &err);
        free(b);
    }
    if (dfd >= 0)
        close(dfd);
    zt_st_view_free(v);
    zt_close(f);
    return rc;
}
