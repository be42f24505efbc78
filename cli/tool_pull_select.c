/*
 * zt pull --include/--exclude: a new .zt holding only the objects whose names
 * match (one rank's shard of a tensor-parallel model), with the file's
 * attributes. Each chosen component is read remotely with its digest checked
 * (fetched again on a mismatch, a bounded number of times), then written by
 * libztensor's writer with the same dtype, type, encoding and digest kind;
 * the writer publishes through a temporary file, fsync and rename. Not
 * resumable: a component is held in memory while it is written.
 */
#include "tool.h"

#include <fnmatch.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define SELECT_RETRIES 3

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

static zt_status copy_component(zt_remote_file *rf, zt_writer *w, const zt_component *c, size_t *id,
                                unsigned *retries, zt_error *err)
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
    zt_status st;
    for (unsigned t = 0;; t++) {
        st = zt_remote_read_component(rf, c, ZT_REMOTE_DECODED, buf, (size_t)n, &got, err);
        if (st != ZT_E_DIGEST_MISMATCH || t >= SELECT_RETRIES)
            break;
        ++*retries;
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

static zt_status copy_object(zt_remote_file *rf, zt_writer *w, const zt_object *o,
                             tool_select_stats *s, zt_error *err)
{
    size_t n = zt_object_component_count(o);
    const char **roles = calloc(n ? n : 1, sizeof(*roles));
    size_t *ids = calloc(n ? n : 1, sizeof(*ids));
    zt_status st = roles && ids ? ZT_OK : ZT_E_NOMEM;
    bool unchecked = false;
    for (size_t k = 0; k < n && !st; k++) {
        const zt_component *c = zt_object_component_at(o, k);
        roles[k] = zt_component_role(c);
        st = copy_component(rf, w, c, &ids[k], &s->retries, err);
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
                           tool_select_stats *s, zt_error *err)
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
    for (size_t i = 0; !st && i < zt_file_object_count(f); i++) {
        const zt_object *o = zt_file_object_at(f, i);
        if (!tool_pull_selected(zt_object_name(o), g))
            continue;
        s->objects++;
        st = copy_object(rf, w, o, s, err);
    }
    if (!st)
        st = zt_writer_finish(w, err);
    zt_writer_free(w);
    zt_remote_close(rf);
    return st;
}
