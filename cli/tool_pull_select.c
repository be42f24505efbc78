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

#define SELECT_RETRIES 3

/* DEST.ztsel: the components verified so far, for a resume. */
typedef struct kept {
    char dir[4096];
    bool ok; /* usable: the directory exists and holds this version */
} kept;

static void kept_path(const kept *k, const char *name, char *out, size_t cap)
{
    snprintf(out, cap, "%s/%s", k->dir, name);
}

/* Empties k->dir (its files only: nothing else is put there). */
static void kept_clear(const kept *k)
{
    DIR *d = opendir(k->dir);
    struct dirent *e;
    char path[4400];
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        kept_path(k, e->d_name, path, sizeof(path));
        unlink(path);
    }
    if (d)
        closedir(d);
}

/* Writes n bytes to DIR/name through DIR/name.tmp, fsynced, renamed. */
static int kept_write(const kept *k, const char *name, const void *p, size_t n)
{
    char tmp[4420], path[4400];
    kept_path(k, name, path, sizeof(path));
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    const uint8_t *b = p;
    size_t done = 0;
    while (done < n) {
        ssize_t w = write(fd, b + done, n - done);
        if (w <= 0)
            break;
        done += (size_t)w;
    }
    int ok = done == n && fsync(fd) == 0;
    close(fd);
    if (!ok || rename(tmp, path) != 0) {
        unlink(tmp);
        return -1;
    }
    return 0;
}

/* Opens DEST.ztsel for the version pinned by rf: kept components stay when
 * the pin matches, otherwise the directory is emptied and pinned anew. A
 * directory that cannot be had only means no resume. */
static void kept_open(kept *k, const char *dest, zt_remote_file *rf)
{
    char pin[600];
    int n = snprintf(pin, sizeof(pin), "%s\n%s\n%llu\n", zt_remote_file_etag(rf),
                     zt_remote_file_last_modified(rf),
                     (unsigned long long)zt_file_size(zt_remote_file_zt(rf)));
    k->ok = false;
    if (snprintf(k->dir, sizeof(k->dir), "%s.ztsel", dest) >= (int)sizeof(k->dir) ||
        (mkdir(k->dir, 0755) != 0 && errno != EEXIST) || n <= 0 || (size_t)n >= sizeof(pin) ||
        !(zt_remote_file_etag(rf)[0] || zt_remote_file_last_modified(rf)[0]))
        return;
    char path[4400], old[600];
    kept_path(k, "pin", path, sizeof(path));
    FILE *f = fopen(path, "rb");
    size_t m = f ? fread(old, 1, sizeof(old), f) : 0;
    if (f)
        fclose(f);
    if (m == (size_t)n && !memcmp(old, pin, m)) {
        k->ok = true;
        return;
    }
    kept_clear(k);
    k->ok = kept_write(k, "pin", pin, (size_t)n) == 0;
}

/* Component `index` from DEST.ztsel into buf (n bytes): 0, or -1 when it is
 * not kept. */
static int kept_read(const kept *k, size_t index, void *buf, uint64_t n)
{
    char name[32], path[4400];
    snprintf(name, sizeof(name), "%zu", index);
    kept_path(k, name, path, sizeof(path));
    int fd = k->ok ? open(path, O_RDONLY | O_CLOEXEC) : -1;
    struct stat sb;
    int rc = -1;
    if (fd >= 0 && fstat(fd, &sb) == 0 && (uint64_t)sb.st_size == n) {
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

static void kept_remove(const kept *k)
{
    kept_clear(k);
    rmdir(k->dir);
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

zt_status tool_pull_select(zt_remote *r, const char *url, const char *dest, const tool_globs *g,
                           const volatile sig_atomic_t *cancel, tool_select_stats *s, zt_error *err)
{
    memset(s, 0, sizeof(*s));
    err->message[0] = 0;
    zt_remote_file *rf;
    zt_status st = zt_remote_open_in(r, url, &rf, err);
    if (st)
        return st;
    const zt_file *f = zt_remote_file_zt(rf);
    zt_writer *w = NULL;
    zt_writer_options wo;
    zt_writer_options_init(&wo);
    st = zt_writer_open(dest, &wo, &w, err);
    char *fa = st ? NULL : attributes(zt_file_manifest_json(f, ZT_JSON_COMPACT, err));
    if (!st && fa)
        st = zt_writer_set_attributes(w, fa, err);
    free(fa);
    kept k;
    kept_open(&k, dest, rf);
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
        st = copy_object(rf, w, o, first, &k, s, err);
    }
    if (!st)
        st = zt_writer_finish(w, err);
    zt_writer_free(w);
    zt_remote_close(rf);
    if (!st)
        kept_remove(&k);
    return st;
}
