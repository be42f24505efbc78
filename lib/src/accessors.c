/*
 * The read-only accessors of files, objects and components: fields of the
 * model an open file holds, and nothing else (no I/O), so that every layer of
 * the library may use them.
 */
#include "internal.h"

#include <string.h>

zt_file_kind zt_file_get_kind(const zt_file *f)
{
    return f->model.kind;
}
const char *zt_file_version(const zt_file *f)
{
    return f->model.version ? f->model.version : "";
}
const char *zt_file_warning(const zt_file *f)
{
    return f->model.warning[0] ? f->model.warning : NULL;
}
uint64_t zt_file_size(const zt_file *f)
{
    return f->size;
}
const uint8_t *zt_file_bytes(const zt_file *f)
{
    return f->data;
}
int zt_file_fd(const zt_file *f)
{
    return f->fd;
}
uint64_t zt_file_manifest_offset(const zt_file *f)
{
    return f->manifest_offset;
}
uint64_t zt_file_manifest_length(const zt_file *f)
{
    return f->manifest_length;
}
const zt_value *zt_file_attributes(const zt_file *f)
{
    return f->model.attributes;
}
size_t zt_file_object_count(const zt_file *f)
{
    return f->model.nobj;
}

const zt_object *zt_file_object_at(const zt_file *f, size_t i)
{
    return i < f->model.nobj ? &f->model.objs[i] : NULL;
}

const zt_object *zt_file_find_object(const zt_file *f, const char *name, size_t len)
{
    return zt__model_find(&f->model, name, len);
}

/* ---- object accessors */
const char *zt_object_name(const zt_object *o)
{
    return o->name;
}
size_t zt_object_name_len(const zt_object *o)
{
    return o->name_len;
}
const char *zt_object_format(const zt_object *o)
{
    return o->format;
}
size_t zt_object_ndim(const zt_object *o)
{
    return o->ndim;
}
const uint64_t *zt_object_shape(const zt_object *o)
{
    return o->shape;
}
int zt_object_has_shape(const zt_object *o)
{
    return o->has_shape;
}
const zt_value *zt_object_attributes(const zt_object *o)
{
    return o->attributes;
}
size_t zt_object_component_count(const zt_object *o)
{
    return o->ncomp;
}
const char *zt_object_source_name(const zt_object *o)
{
    return o->source_name ? o->source_name : "";
}

const zt_component *zt_object_component_at(const zt_object *o, size_t i)
{
    return i < o->ncomp ? &o->comps[i] : NULL;
}

const zt_component *zt_object_find_component(const zt_object *o, const char *role)
{
    for (size_t i = 0; i < o->ncomp; i++)
        if (!strcmp(o->comps[i].role, role))
            return &o->comps[i];
    return NULL;
}

/* ---- component accessors */
const char *zt_component_role(const zt_component *c)
{
    return c->role;
}
zt_dtype zt_component_dtype(const zt_component *c)
{
    return c->dtype;
}
const char *zt_component_type(const zt_component *c)
{
    return c->type;
}
uint64_t zt_component_offset(const zt_component *c)
{
    return c->offset;
}
uint64_t zt_component_length(const zt_component *c)
{
    return c->length;
}
zt_encoding zt_component_encoding(const zt_component *c)
{
    return c->encoding;
}
zt_digest_kind zt_component_digest_kind(const zt_component *c)
{
    return c->digest_kind;
}
const char *zt_component_digest(const zt_component *c)
{
    return c->digest;
}

uint64_t zt_component_decoded_length(const zt_component *c)
{
    return c->encoding != ZT_ENC_RAW ? c->uncompressed_length : c->length;
}

const uint8_t *zt_component_digest_bytes(const zt_component *c, size_t *len)
{
    size_t n = c->digest_kind == ZT_DIGEST_SHA256   ? 32
               : c->digest_kind == ZT_DIGEST_CRC32C ? 4
               : c->digest_kind == ZT_DIGEST_XXH3   ? 8
                                                    : 0;
    if (len)
        *len = n;
    return n ? c->digest_bin : NULL;
}
