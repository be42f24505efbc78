/* zt get: the decoded bytes of one component, to stdout or a file. */
#include "tool.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char k_help[] =
    "NAME\n"
    "    zt get - write the decoded bytes of one component\n"
    "\n"
    "SYNOPSIS\n"
    "    zt get FILE|URL OBJECT [COMPONENT] [-o OUT] [--token TOKEN]\n"
    "\n"
    "DESCRIPTION\n"
    "    Writes the bytes of COMPONENT (default \"data\") of OBJECT, decoded\n"
    "    (zstd is decompressed), little-endian as stored. OBJECT is the exact\n"
    "    object name or, without COMPONENT, a tensor name of the original file\n"
    "    (NAME.scale of an Ollama quantized blob: docs/FOREIGN-FORMATS.md).\n"
    "    Without -o the bytes go to standard output.\n"
    "    A URL (http:// or https://) is read remotely, as for zt info: the\n"
    "    footer and manifest, then the component's bytes, whose digest is\n"
    "    checked; the component is held in memory before it is written.\n"
    "\n"
    "OPTIONS\n"
    "    -o OUT    write to OUT (through a temporary file and a rename);\n"
    "              -o - is standard output\n"
    "    --token T bearer token for a URL (default: $ZT_TOKEN, else its alias\n"
    "              $ZT_REMOTE_TOKEN)\n"
    "\n"
    "EXIT STATUS\n"
    "    0 written; 1 invalid file, unknown object or component, or bad data;\n"
    "    2 usage error; 3 system error.\n";

static int fd_sink(void *ud, const void *p, size_t n)
{
    return tool_write_all(*(int *)ud, p, n);
}

/* A remote component: read whole (its digest checked), then written. */
static zt_status remote_emit(zt_remote_file *rf, const zt_component *c, int fd, zt_error *err)
{
    uint64_t n = zt_component_decoded_length(c);
    if (n > SIZE_MAX - 1) {
        err->code = ZT_E_LIMIT;
        snprintf(err->message, sizeof(err->message), "the component is too large for memory");
        return ZT_E_LIMIT;
    }
    uint8_t *buf = malloc(n ? (size_t)n : 1);
    if (!buf) {
        err->code = ZT_E_NOMEM;
        snprintf(err->message, sizeof(err->message), "out of memory for %llu bytes",
                 (unsigned long long)n);
        return ZT_E_NOMEM;
    }
    size_t got = 0;
    zt_status st = zt_remote_read_component(rf, c, ZT_REMOTE_DECODED, buf, (size_t)n, &got, err);
    if (!st && tool_write_all(fd, buf, got)) {
        err->code = st = ZT_E_IO;
        snprintf(err->message, sizeof(err->message), "output failed: %s", strerror(errno));
    }
    free(buf);
    return st;
}

static int write_out(const zt_file *f, zt_remote_file *rf, const zt_component *c, const char *out,
                     const char *file)
{
    zt_error err;
    char tmp[4096];
    int fd = STDOUT_FILENO;
    if (out) {
        snprintf(tmp, sizeof(tmp), "%s.tmp.XXXXXX", out);
        fd = mkstemp(tmp);
        if (fd < 0) {
            fprintf(stderr, "zt get: %s: %s\n", out, strerror(errno));
            return ZT_EXIT_SYSTEM;
        }
        fchmod(fd, 0644);
    }
    zt_status st =
        rf ? remote_emit(rf, c, fd, &err) : zt_component_stream(f, c, fd_sink, &fd, &err);
    int rc = st ? tool_report("get", file, &err) : ZT_EXIT_OK;
    if (out) {
        if (!rc && (fsync(fd) != 0 || rename(tmp, out) != 0)) {
            fprintf(stderr, "zt get: %s: %s\n", out, strerror(errno));
            rc = ZT_EXIT_SYSTEM;
        }
        close(fd);
        if (rc)
            unlink(tmp);
    }
    return rc;
}

int cmd_get(int argc, char **argv)
{
    const char *pos[3] = {0}, *out = NULL, *token = NULL;
    int npos = 0;
    for (int i = 1; i < argc; i++) {
        if (tool_is_help(argv[i])) {
            fputs(k_help, stdout);
            return ZT_EXIT_OK;
        } else if ((!strcmp(argv[i], "-o") || !strcmp(argv[i], "--token")) && i + 1 < argc) {
            *(argv[i][1] == 'o' ? &out : &token) = argv[i + 1];
            i++;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "zt get: %s %s (see zt get --help)\n",
                    strcmp(argv[i], "-o") && strcmp(argv[i], "--token") ? "unknown option"
                                                                        : "a value is needed after",
                    argv[i]);
            return ZT_EXIT_USAGE;
        } else if (npos < 3) {
            pos[npos++] = argv[i];
        } else {
            fprintf(stderr, "zt get: unexpected argument \"%s\"\n", argv[i]);
            return ZT_EXIT_USAGE;
        }
    }
    if (out && !strcmp(out, "-"))
        out = NULL;
    if (npos < 2) {
        fputs(k_help, stderr);
        return ZT_EXIT_USAGE;
    }
    const char *file = pos[0], *objname = pos[1], *role = npos > 2 ? pos[2] : "data";
    zt_file *lf = NULL;
    zt_remote_file *rf = NULL;
    zt_error err;
    if (tool_is_url(file) ? tool_remote_open(file, token, &rf, &err)
                          : zt_open(file, NULL, &lf, &err))
        return tool_report("get", file, &err);
    const zt_file *f = rf ? zt_remote_file_zt(rf) : lf;
    int rc;
    const zt_object *o = zt_file_find_object(f, objname, strlen(objname));
    const zt_component *c = o ? zt_object_find_component(o, role) : NULL;
    /* An original tensor name of a foreign file, such as NAME.scale. */
    if (!o && npos == 2)
        zt_file_find_tensor(f, objname, strlen(objname), &o, &c);
    if (!o) {
        fprintf(stderr, "zt get: %s: no object \"%s\"\n", file, objname);
        rc = ZT_EXIT_INVALID;
    } else if (!c) {
        fprintf(stderr, "zt get: %s: object \"%s\" has no component \"%s\"\n", file, objname, role);
        rc = ZT_EXIT_INVALID;
    } else {
        rc = write_out(f, rf, c, out, file);
    }
    zt_close(lf);
    zt_remote_close(rf);
    return rc;
}
