/*
 * Opening a file: map it, find the manifest, decode it with limits, build
 * the model and validate every rule before the caller sees anything, and
 * dispatch to the reader of the file's format (v2, safetensors, the foreign
 * formats). What those readers call back into (reading at an offset, where a
 * component's bytes are, the accessors) lives below them, in file_io.c and
 * accessors.c. Also zt_component_verify().
 */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static zt_status parse_zt(zt_file *f, const zt_open_options *opt, zt_error *err)
{
    uint8_t head[8] = {0}, tail[16] = {0};
    size_t hl = f->size < 8 ? (size_t)f->size : 8, tl = f->size < 16 ? (size_t)f->size : 16;
    zt_status st = zt__read_at(f, 0, hl, head, err);
    if (!st)
        st = zt__read_at(f, f->size - tl, tl, tail, err);
    zt__layout lay;
    if (!st)
        st = zt__footer_locate(head, tail, f->size, opt->max_manifest_size, &lay, err);
    if (st)
        return st;
    f->model.kind = lay.kind;
    f->manifest_offset = lay.manifest_offset;
    f->manifest_length = lay.manifest_length;
    const uint8_t *mbytes = NULL;
    uint8_t *copy = NULL;
    if ((mbytes = zt__window_span(f, lay.manifest_offset, (size_t)lay.manifest_length))) {
        /* opened from its manifest: the caller's bytes outlive the parse */
    } else if (f->mapped || f->no_data) {
        if (!(copy = zt__malloc((size_t)lay.manifest_length)))
            return ZT_FAIL(err, ZT_E_NOMEM, "out of memory reading a %llu-byte manifest",
                           (unsigned long long)lay.manifest_length);
        if ((st = zt__read_at(f, lay.manifest_offset, (size_t)lay.manifest_length, copy, err))) {
            zt__free(copy);
            return st;
        }
        mbytes = copy;
    } else {
        mbytes = f->data + lay.manifest_offset;
    }
    st = zt__fast_path_disabled
             ? ZT_E_UNSUPPORTED
             : zt__model_fast(&f->model, mbytes, (size_t)lay.manifest_length, lay.manifest_offset);
    if (st == ZT_E_UNSUPPORTED) {
        /* Not the usual shape, or not valid: the general path decides and words it. */
        zt__arena_free(&f->model.arena);
        memset(&f->model, 0, sizeof(f->model));
        zt__arena_init(&f->model.arena);
        f->model.kind = lay.kind;
        zt__cbor_limits lim = {ZT_MAX_DEPTH, lay.manifest_offset, false};
        zt_value *root;
        st =
            zt__cbor_decode(mbytes, (size_t)lay.manifest_length, &lim, &f->model.arena, &root, err);
        if (!st)
            st = zt__model_from_cbor(&f->model, root, err);
    }
    zt__free(copy);
    if (st)
        return st;
    zt__validate_opts vo = {.data_end = lay.manifest_offset,
                            .data_start = 8,
                            .max_uncompressed = f->max_uncompressed,
                            .require_alignment = true};
    return zt__validate_model(&f->model, &vo, err);
}

/* The kind is chosen by the first bytes (docs/FOREIGN-FORMATS.md). A
 * safetensors header is capped by the caller's max_manifest_size when given,
 * else by the limit of Hugging Face's own reader (100 MB). */
static zt_status parse(zt_file *f, const zt_open_options *opt, uint64_t user_max, zt_error *err)
{
    uint8_t head[9] = {0};
    size_t hl = f->size < 9 ? (size_t)f->size : 9;
    zt_status st = zt__read_at(f, 0, hl, head, err);
    if (st)
        return st;
    if (hl >= 8 && !memcmp(head, zt__v2_magic, 8))
        return zt__open_v2(f, opt->max_manifest_size, err);
    switch (zt__detect_kind(head, hl)) {
    case ZT_KIND_SAFETENSORS:
        return zt__open_safetensors(f, user_max ? user_max : ZT__ST_DEFAULT_MAX_HEADER, err);
    case ZT_KIND_ALT:
        return zt__open_alt(f, err);
    default:
        return parse_zt(f, opt, err);
    }
}

void zt_open_options_init(zt_open_options *o)
{
    memset(o, 0, sizeof(*o));
    o->size = sizeof(*o);
}

/* The caller's options as this library's struct: fields its struct lacks keep
 * their defaults. */
static zt_open_options effective(const zt_open_options *opt)
{
    zt_open_options eff;
    zt_open_options_init(&eff);
    if (opt)
        memcpy(&eff, opt, ZT__OPTS_SIZE(opt, eff));
    return eff;
}

zt_status zt__open_finish(zt_file *f, const zt_open_options *in, zt_file **out, zt_error *err)
{
    zt_open_options given = effective(in);
    const zt_open_options *opt = &given;
    f->max_uncompressed =
        opt->max_uncompressed ? opt->max_uncompressed : ZT_DEFAULT_MAX_UNCOMPRESSED;
    zt_open_options eff = *opt;
    if (!eff.max_manifest_size)
        eff.max_manifest_size = ZT_DEFAULT_MAX_MANIFEST;
    zt_status st = parse(f, &eff, opt->max_manifest_size, err);
    if (st) {
        zt_close(f);
        return st;
    }
    *out = f;
    return ZT_OK;
}

zt_status zt_open_memory(const void *data, size_t len, const zt_open_options *opt, zt_file **out,
                         zt_error *err)
{
    if (!out || (!data && len))
        return ZT_FAIL(err, ZT_E_ARG, "NULL argument");
    zt_file *f = zt__calloc(1, sizeof(*f));
    if (!f)
        return ZT_FAIL(err, ZT_E_NOMEM, "out of memory");
    zt__arena_init(&f->model.arena);
    /* (NULL, 0) is allowed; never do arithmetic on a null pointer. */
    f->data = data ? data : (const uint8_t *)"";
    f->size = len;
    f->fd = -1;
    return zt__open_finish(f, opt, out, err);
}

static zt_status map_fd(zt_file *f, const zt_open_options *opt, zt_error *err)
{
    struct stat sb;
    if (fstat(f->fd, &sb) != 0)
        return ZT_FAIL(err, ZT_E_IO, "fstat: %s", strerror(errno));
    if (!S_ISREG(sb.st_mode))
        return ZT_FAIL(err, ZT_E_IO, "not a regular file");
    f->size = (uint64_t)sb.st_size;
    if (f->size == 0) {
        f->data = (const uint8_t *)"";
        return ZT_OK;
    }
    if (effective(opt).flags & ZT_OPEN_NO_MMAP) {
        uint8_t *buf = zt__malloc((size_t)f->size);
        if (!buf)
            return ZT_FAIL(err, ZT_E_NOMEM, "out of memory reading %llu bytes",
                           (unsigned long long)f->size);
        uint64_t got = 0;
        while (got < f->size) {
            ssize_t r = pread(f->fd, buf + got, (size_t)(f->size - got), (off_t)got);
            if (r <= 0) {
                zt__free(buf);
                return zt__fail(err, r == 0 ? ZT_E_TRUNCATED : ZT_E_IO, NULL, NULL, 1, got,
                                "read: %s", r == 0 ? "file shrank" : strerror(errno));
            }
            got += (uint64_t)r;
        }
        f->data = buf;
        f->owned_buf = true;
        return ZT_OK;
    }
    void *p = mmap(NULL, (size_t)f->size, PROT_READ, MAP_SHARED, f->fd, 0);
    if (p == MAP_FAILED)
        return ZT_FAIL(err, ZT_E_IO, "mmap: %s", strerror(errno));
    f->data = p;
    f->mapped = true;
    return ZT_OK;
}

static zt_status open_owned_fd(int fd, const char *path, const zt_open_options *opt, zt_file **out,
                               zt_error *err)
{
    zt_file *f = zt__calloc(1, sizeof(*f));
    if (!f || (path && !(f->path = zt__strndup(path, strlen(path))))) {
        close(fd);
        zt__free(f);
        return ZT_FAIL(err, ZT_E_NOMEM, "out of memory");
    }
    zt__arena_init(&f->model.arena);
    f->fd = fd;
    zt_status st = map_fd(f, opt, err);
    if (st) {
        zt_close(f);
        return st;
    }
    return zt__open_finish(f, opt, out, err);
}

zt_status zt_open(const char *path, const zt_open_options *opt, zt_file **out, zt_error *err)
{
    if (!path || !out)
        return ZT_FAIL(err, ZT_E_ARG, "NULL argument");
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return ZT_FAIL(err, errno == ENOENT ? ZT_E_NOT_FOUND : ZT_E_IO, "%s: %s", path,
                       strerror(errno));
    return open_owned_fd(fd, path, opt, out, err);
}

zt_status zt_open_fd(int fd, const zt_open_options *opt, zt_file **out, zt_error *err)
{
    if (fd < 0 || !out)
        return ZT_FAIL(err, ZT_E_ARG, "bad fd");
    int d = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (d < 0)
        return ZT_FAIL(err, ZT_E_IO, "dup: %s", strerror(errno));
    return open_owned_fd(d, NULL, opt, out, err);
}

void zt_close(zt_file *f)
{
    if (!f)
        return;
    if (f->mapped)
        munmap((void *)f->data, (size_t)f->size);
    if (f->owned_buf)
        zt__free((void *)f->data);
    if (f->fd >= 0)
        close(f->fd);
    zt__v2_close(f);
    zt__free(f->path);
    zt__arena_free(&f->model.arena);
    zt__free(f);
}

/* ---- detach and attach (for servers holding many files) */

static void release_bytes(zt_file *f)
{
    if (f->mapped)
        munmap((void *)f->data, (size_t)f->size);
    if (f->owned_buf)
        zt__free((void *)f->data);
    if (f->fd >= 0)
        close(f->fd);
    f->mapped = f->owned_buf = false;
    f->fd = -1;
}

zt_status zt_file_detach(zt_file *f, zt_error *err)
{
    if (!f)
        return ZT_FAIL(err, ZT_E_ARG, "NULL argument");
    if (f->no_data) /* detached already, or opened from its manifest */
        return ZT_OK;
    if (f->fd < 0 || (f->model.v2 && f->model.v2->nshards))
        return ZT_FAIL(err, ZT_E_UNSUPPORTED,
                       f->fd < 0 ? "a file opened from memory cannot be detached"
                                 : "a file with shards cannot be detached");
    release_bytes(f);
    f->data = NULL;
    f->no_data = true;
    return ZT_OK;
}

zt_status zt_file_attach_fd(zt_file *f, int fd, const zt_open_options *opt, zt_error *err)
{
    if (!f || fd < 0)
        return ZT_FAIL(err, ZT_E_ARG, "bad argument");
    if (!f->no_data || f->fd >= 0 || f->win_head || f->win_tail)
        return ZT_FAIL(err, ZT_E_ARG, "the file is not detached");
    uint64_t want = f->size;
    f->fd = fd;
    zt_status st = map_fd(f, opt, err);
    if (!st && f->size != want)
        st = ZT_FAIL(err, ZT_E_IO, "the file is %llu bytes now, %llu when it was opened",
                     (unsigned long long)f->size, (unsigned long long)want);
    if (st) {
        f->fd = -1; /* the caller's again */
        if (f->mapped)
            munmap((void *)f->data, (size_t)f->size);
        if (f->owned_buf)
            zt__free((void *)f->data);
        f->mapped = f->owned_buf = false;
        f->data = NULL;
        f->size = want;
        return st;
    }
    f->no_data = false;
    return ZT_OK;
}

/* ---- file accessors */
zt_status zt_component_verify(const zt_file *f, const zt_object *o, const zt_component *c,
                              int *checked, zt_error *err)
{
    if (checked)
        *checked = 0;
    if (f->no_data)
        return zt__fail(err, ZT_E_UNSUPPORTED, o ? o->name : NULL, c->role, 1, c->offset,
                        "the file was opened from its manifest alone: no bytes to verify");
    if (f->model.kind == ZT_KIND_ZT_2)
        return zt__v2_component_verify(f, o, c, checked, err);
    if (c->digest_kind == ZT_DIGEST_NONE)
        return ZT_OK;
    zt_hasher *h = zt_hasher_new(c->digest_kind);
    if (!h)
        return ZT_FAIL(err, ZT_E_NOMEM, "out of memory");
    /* A mapped file is read with pread into a small buffer: a truncated file
     * gives an error instead of SIGBUS, and verifying a huge file does not
     * count all of it in the process's resident memory. */
    zt_status st = ZT_OK;
    /* No bigger than the component: 100,000 small ones took a 1 MiB buffer each. */
    size_t bufsize = c->length < (1u << 20) ? (size_t)c->length + 1 : (1u << 20);
    uint8_t *buf = f->mapped ? zt__malloc(bufsize) : NULL;
    if (f->mapped && !buf) {
        zt_hasher_free(h);
        return ZT_FAIL(err, ZT_E_NOMEM, "out of memory");
    }
    /* More than one buffer: hash on another thread while the next is read. */
    zt__hash_pipe *pipe = buf && c->length > (1u << 20) ? zt__hash_pipe_new(1u << 20) : NULL;
    if (pipe)
        zt__hash_pipe_start(pipe, h);
    for (uint64_t done = 0; done < c->length && !st;) {
        size_t n = c->length - done > (1u << 20) ? (1u << 20) : (size_t)(c->length - done);
        if (buf && !(st = zt__read_at(f, c->offset + done, n, buf, err))) {
            if (pipe)
                buf = zt__hash_pipe_submit(pipe, buf, n);
            else
                zt_hasher_update(h, buf, n);
        } else if (!buf)
            zt_hasher_update(h, f->data + c->offset + done, n);
        done += n;
    }
    if (pipe) {
        h = zt__hash_pipe_finish(pipe);
        zt__hash_pipe_free(pipe);
    }
    zt__free(buf);
    if (st) {
        zt_hasher_free(h);
        return st;
    }
    uint8_t out[32];
    size_t n = zt_hasher_final(h, out);
    zt_hasher_free(h);
    if (checked)
        *checked = 1;
    if (memcmp(out, c->digest_bin, n) != 0) {
        char got[80];
        zt_digest_format(c->digest_kind, out, got);
        return zt__fail(err, ZT_E_DIGEST_MISMATCH, o ? o->name : NULL, c->role, 1, c->offset,
                        "stored bytes hash to %s, manifest says %s", got, c->digest);
    }
    return ZT_OK;
}
