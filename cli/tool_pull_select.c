/*
 * zt pull --include/--exclude: a new .zt holding only the objects whose names
 * match (one rank's shard of a tensor-parallel model), with the file's
 * attributes. Each chosen component is read remotely with its digest checked
 * (fetched again on a mismatch, a bounded number of times), then written by
 * libztensor's writer with the same dtype, type, encoding and digest kind;
 * the writer publishes through a temporary file, fsync and rename. A
 * component is held in memory while it is written.
 *
 * Resumable: each chosen component, once its digest is checked, is also kept
 * in DEST.ztsel/INDEX (INDEX: its number in manifest order, as in a state
 * file; temporary name, fsync, rename), beside DEST.ztsel/pin, the version it
 * is of. A later pull of the same version reads the components kept there
 * instead of fetching them again; another version empties the directory
 * first. It is removed once DEST is published. The cost: the chosen
 * components' bytes twice on disk until then.
 */
#include "tool.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <ztensor/ztensor_experimental.h>

#define SELECT_RETRIES 3

/* DEST.ztsel: the components verified so far, for a resume. Named by
 * directory fds, never through a symbolic link. */
typedef struct kept {
    int fd;  /* DEST.ztsel, or -1 */
    bool ok; /* usable: the directory holds this version */
} kept;

/* Empties k->fd (its files only: nothing else is put there). */
static void kept_clear(const kept *k)
{
    int fd = k->fd >= 0 ? dup(k->fd) : -1;
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    struct dirent *e;
    if (!d && fd >= 0)
        close(fd);
    if (d) /* the dup shares its offset with k->fd, perhaps at the end since the last time */
        rewinddir(d);
    while (d && (e = readdir(d)))
        if (e->d_name[0] != '.')
            unlinkat(k->fd, e->d_name, 0);
    if (d)
        closedir(d);
}

/* Writes n bytes to DIR/name through DIR/name.tmp, fsynced, renamed. */
static int kept_write(const kept *k, const char *name, const void *p, size_t n)
{
    char tmp[64];
    snprintf(tmp, sizeof(tmp), "%s.tmp", name);
    unlinkat(k->fd, tmp, 0);
    int fd = openat(k->fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    int ok = tool_write_all(fd, p, n) == 0 && fsync(fd) == 0;
    close(fd);
    if (!ok || renameat(k->fd, tmp, k->fd, name) != 0) {
        unlinkat(k->fd, tmp, 0);
        return -1;
    }
    return 0;
}

/* Opens DEST.ztsel in dfd for the version pinned by rf: kept components
 * stay when the pin matches, otherwise the directory is emptied and pinned
 * anew. A directory that cannot be had only means no resume; a symbolic
 * link there is an error (in *err). */
static zt_status kept_open(kept *k, int dfd, const char *dest, zt_remote_file *rf, zt_error *err)
{
    char pin[600], dir[300];
    int n = snprintf(pin, sizeof(pin), "%s\n%s\n%llu\n", zt_remote_file_etag(rf),
                     zt_remote_file_last_modified(rf),
                     (unsigned long long)zt_file_size(zt_remote_file_zt(rf)));
    k->ok = false;
    k->fd = -1;
    if (snprintf(dir, sizeof(dir), "%s.ztsel", dest) >= (int)sizeof(dir) || n <= 0 ||
        (size_t)n >= sizeof(pin) ||
        !(zt_remote_file_etag(rf)[0] || zt_remote_file_last_modified(rf)[0]))
        return ZT_OK;
    mkdirat(dfd, dir, 0755);
    k->fd = openat(dfd, dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct stat sb;
    if (k->fd < 0 && fstatat(dfd, dir, &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(sb.st_mode)) {
        err->code = ZT_E_IO;
        snprintf(err->message, sizeof(err->message), "%s: it is a symbolic link (not followed)",
                 dir);
        return ZT_E_IO;
    }
    if (k->fd < 0)
        return ZT_OK;
    char old[600];
    int fd = openat(k->fd, "pin", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    ssize_t m = fd >= 0 ? read(fd, old, sizeof(old)) : -1;
    if (fd >= 0)
        close(fd);
    if (m == n && !memcmp(old, pin, (size_t)m)) {
        k->ok = true;
        return ZT_OK;
    }
    kept_clear(k);
    k->ok = kept_write(k, "pin", pin, (size_t)n) == 0;
    return ZT_OK;
}

/* Component `index` from DEST.ztsel into buf (n bytes): 0, or -1 when it is
 * not kept. */
static int kept_read(const kept *k, size_t index, void *buf, uint64_t n)
{
    char name[32];
    snprintf(name, sizeof(name), "%zu", index);
    int fd = k->ok ? openat(k->fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC) : -1;
    struct stat sb;
    int rc = -1;
    if (fd >= 0 && fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && (uint64_t)sb.st_size == n) {
        uint8_t *b = buf;
        uint64_t done = 0;
        while (done < n) {
            ssize_t r = read(fd, b + done, (size_t)(n - done));
            if (r <= 0)
                break;
            done += (uint64_t)r;
        }
        rc = done == n ? 0 : -1;
    }
    if (fd >= 0)
        close(fd);
    return rc;
}

static void kept_remove(const kept *k, int dfd, const char *dest)
{
    char dir[300];
    kept_clear(k);
    snprintf(dir, sizeof(dir), "%s.ztsel", dest);
    unlinkat(dfd, dir, AT_REMOVEDIR);
}

static void kept_close(kept *k)
{
    if (k->fd >= 0)
        close(k->fd);
    k->fd = -1;
}

int tool_pull_selected(const char *name, const tool_globs *g)
{
    int in = g->ninclude == 0;
    for (size_t i = 0; !in && i < g->ninclude; i++)
        in = fnmatch(g->include[i], name, 0) == 0;
    for (size_t i = 0; in && i < g->nexclude; i++)
        in = fnmatch(g->exclude[i], name, 0) != 0;
    return in;
}

/* A selection that keeps no object of f is an error (ZT_E_ARG) naming its
 * patterns, never an empty file: 1 when some object is kept. */
static int any_selected(const zt_file *f, const tool_globs *g, zt_error *err)
{
    size_t n = zt_file_object_count(f);
    for (size_t i = 0; i < n; i++)
        if (tool_pull_selected(zt_object_name(zt_file_object_at(f, i)), g))
            return 1;
    err->code = ZT_E_ARG;
    int k = snprintf(err->message, sizeof(err->message),
                     "the tensor selection matches none of "
                     "its %zu objects:",
                     n);
    for (size_t i = 0; i < g->ninclude && k > 0 && (size_t)k < sizeof(err->message); i++)
        k += snprintf(err->message + k, sizeof(err->message) - (size_t)k, " --tensors '%s'",
                      g->include[i]);
    for (size_t i = 0; i < g->nexclude && k > 0 && (size_t)k < sizeof(err->message); i++)
        k += snprintf(err->message + k, sizeof(err->message) - (size_t)k, " --exclude-tensors '%s'",
                      g->exclude[i]);
    return 0;
}

/* The "attributes" member of a manifest or object JSON text, or NULL. */
static char *attributes(char *json)
{
    json_t *j = json ? json_loads(json, 0, NULL) : NULL;
    zt_free(json);
    json_t *a = json_object_get(j, "attributes");
    char *r = a && json_object_size(a) ? json_dumps(a, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(j);
    return r;
}

static zt_status copy_component(zt_remote_file *rf, zt_writer *w, const zt_component *c,
                                size_t index, const kept *k, size_t *id, tool_select_stats *s,
                                zt_error *err)
{
    uint64_t n = zt_component_decoded_length(c);
    uint8_t *buf = n < SIZE_MAX ? malloc(n ? (size_t)n : 1) : NULL;
    if (!buf) {
        err->code = ZT_E_NOMEM;
        snprintf(err->message, sizeof(err->message), "out of memory for %llu bytes",
                 (unsigned long long)n);
        return ZT_E_NOMEM;
    }
    size_t got = 0;
    zt_status st = ZT_OK;
    if (kept_read(k, index, buf, n) == 0) {
        got = (size_t)n;
        s->resumed += zt_component_length(c);
    } else {
        for (unsigned t = 0;; t++) {
            st = zt_remote_read_component(rf, c, ZT_REMOTE_DECODED, buf, (size_t)n, &got, err);
            if (st != ZT_E_DIGEST_MISMATCH || t >= SELECT_RETRIES)
                break;
            ++s->retries;
        }
        char name[32];
        snprintf(name, sizeof(name), "%zu", index);
        if (!st && k->ok) /* best effort: without it, a resume fetches it again */
            kept_write(k, name, buf, got);
    }
    zt_component_spec cs = {.dtype = zt_component_dtype(c),
                            .type = zt_component_type(c),
                            .encoding = zt_component_encoding(c),
                            .digest = zt_component_digest_kind(c)};
    if (!st)
        st = zt_writer_begin(w, &cs, err);
    if (!st)
        st = zt_writer_write(w, buf, got, err);
    if (!st)
        st = zt_writer_end(w, id, err);
    free(buf);
    return st;
}

static zt_status copy_object(zt_remote_file *rf, zt_writer *w, const zt_object *o, size_t index0,
                             const kept *kp, tool_select_stats *s, zt_error *err)
{
    size_t n = zt_object_component_count(o);
    const char **roles = calloc(n ? n : 1, sizeof(*roles));
    size_t *ids = calloc(n ? n : 1, sizeof(*ids));
    zt_status st = roles && ids ? ZT_OK : ZT_E_NOMEM;
    bool unchecked = false;
    for (size_t k = 0; k < n && !st; k++) {
        const zt_component *c = zt_object_component_at(o, k);
        roles[k] = zt_component_role(c);
        st = copy_component(rf, w, c, index0 + k, kp, &ids[k], s, err);
        s->bytes += zt_component_length(c);
        if (zt_component_digest_kind(c) == ZT_DIGEST_NONE) {
            s->unverified++;
            unchecked = true;
        } else {
            s->verified++;
        }
    }
    s->objects_unverified += unchecked;
    char *attrs = st ? NULL : attributes(zt_object_json(o, ZT_JSON_COMPACT, err));
    if (!st)
        st = zt_writer_add_object(w, zt_object_name(o), zt_object_format(o), zt_object_ndim(o),
                                  zt_object_shape(o), attrs, n, roles, ids, err);
    free(attrs);
    free(roles);
    free(ids);
    if (st == ZT_E_NOMEM && !err->message[0])
        snprintf(err->message, sizeof(err->message), "out of memory");
    return st;
}

/* A new temporary file beside name in dfd (O_EXCL, never a link): its fd,
 * its name in tmp; -1 with errno. */
static int temp_beside(int dfd, const char *name, char *tmp, size_t cap)
{
    static unsigned seq;
    for (unsigned i = 0; i < 100; i++) {
        unsigned k = __atomic_add_fetch(&seq, 1, __ATOMIC_RELAXED);
        snprintf(tmp, cap, ".%s.tmp.%ld.%u", name, (long)getpid(), k);
        int fd = openat(dfd, tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd >= 0 || errno != EEXIST)
            return fd;
    }
    errno = EEXIST;
    return -1;
}

/* Everything but the publication: the chosen objects into w. */
static zt_status select_into(zt_remote_file *rf, zt_writer *w, const kept *k, const tool_globs *g,
                             const volatile sig_atomic_t *cancel, tool_select_stats *s,
                             zt_error *err)
{
    const zt_file *f = zt_remote_file_zt(rf);
    char *fa = attributes(zt_file_manifest_json(f, ZT_JSON_COMPACT, err));
    zt_status st = fa ? zt_writer_set_attributes(w, fa, err) : ZT_OK;
    free(fa);
    for (size_t i = 0, index0 = 0; !st && i < zt_file_object_count(f); i++) {
        const zt_object *o = zt_file_object_at(f, i);
        size_t first = index0;
        index0 += zt_object_component_count(o);
        if (!tool_pull_selected(zt_object_name(o), g))
            continue;
        if (cancel && *cancel) {
            st = err->code = ZT_E_IO;
            snprintf(err->message, sizeof(err->message), "interrupted");
            break;
        }
        s->objects++;
        st = copy_object(rf, w, o, first, k, s, err);
    }
    return st ? st : zt_writer_finish(w, err);
}

zt_status tool_pull_select(zt_remote *r, const char *url, int dfd, const char *name,
                           const tool_globs *g, const volatile sig_atomic_t *cancel,
                           tool_select_stats *s, zt_error *err)
{
    memset(s, 0, sizeof(*s));
    err->message[0] = 0;
    zt_remote_file *rf;
    zt_status st = zt_remote_open_in(r, url, &rf, err);
    if (st)
        return st;
    if (!any_selected(zt_remote_file_zt(rf), g, err)) {
        zt_remote_close(rf);
        return ZT_E_ARG;
    }
    zt_file_kind kind = zt_file_get_kind(zt_remote_file_zt(rf));
    if (kind == ZT_KIND_ALT) { /* never opened remotely today; said if it ever is */
        err->code = ZT_E_ARG;
        snprintf(err->message, sizeof(err->message),
                 "--tensors on an ALT file: a selection is written as zTensor or safetensors "
                 "only; pull the whole file");
        zt_remote_close(rf);
        return ZT_E_ARG;
    }
    bool st_out = kind == ZT_KIND_SAFETENSORS; /* the format is kept: safetensors */
    char key[80] = "";
    if (!tool_sel_key(zt_remote_file_zt(rf), tool_pull_selected, g, st_out ? "safetensors" : "zt",
                      key, sizeof(key)))
        key[0] = 0;
    if (tool_sel_done(dfd, name, key)) { /* the same selection, finished before */
        s->skipped = 1;
        zt_remote_close(rf);
        return ZT_OK;
    }
    kept k;
    st = kept_open(&k, dfd, name, rf, err);
    char tmp[400];
    int fd = st ? -1 : temp_beside(dfd, name, tmp, sizeof(tmp));
    if (!st && fd < 0) {
        st = err->code = errno == ENOSPC ? ZT_E_NOSPACE : ZT_E_IO;
        snprintf(err->message, sizeof(err->message), "cannot create a temporary file beside %s: %s",
                 name, strerror(errno));
    }
    zt_writer *w = NULL;
    zt_writer_options wo;
    zt_writer_options_init(&wo);
    if (kind == ZT_KIND_ZT_2) /* the format is kept: v2 */
        wo.format = ZT_FORMAT_V2;
    if (!st) {
        (void)fchmod(fd, 0644); /* as zt_writer_open makes it: umask aside */
        st = zt_writer_open_fd(fd, &wo, &w, err);
    }
    if (!st)
        st = select_into(rf, w, &k, g, cancel, s, err);
    zt_writer_free(w);
    char tmp2[400];
    int fd2 = !st && st_out ? temp_beside(dfd, name, tmp2, sizeof(tmp2)) : -1;
    if (!st && st_out && fd2 < 0) {
        st = err->code = errno == ENOSPC ? ZT_E_NOSPACE : ZT_E_IO;
        snprintf(err->message, sizeof(err->message), "cannot create a temporary file beside %s: %s",
                 name, strerror(errno));
    }
    if (!st && st_out) /* the chosen tensors, as safetensors */
        st = tool_pull_zt_to_safetensors(dfd, tmp, fd2, err);
    if (!st)
        tool_sel_mark(st_out ? fd2 : fd, key);
    /* Published within dfd: a link planted at name is replaced, never followed. */
    if (!st)
        st = zt_publish_rename(dfd, st_out ? tmp2 : tmp, dfd, name, 0, NULL, err);
    if (fd2 >= 0) {
        close(fd2);
        if (st)
            unlinkat(dfd, tmp2, 0);
    }
    if (fd >= 0) {
        close(fd);
        if (st || st_out)
            unlinkat(dfd, tmp, 0);
    }
    zt_remote_close(rf);
    if (!st)
        kept_remove(&k, dfd, name);
    kept_close(&k);
    return st;
}
