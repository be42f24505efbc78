/*
 * Opening a zTensor v2 file (spec §8): the footer, the manifest bounds and
 * size cap, the XXH3-64 of the manifest, its deterministic CBOR, the schema
 * and the whole validation summary, all before the caller sees a byte of
 * tensor data. Then the shards it names are opened (v2_shards.c). Also the
 * public accessors that v2 adds to files and components.
 */
#include "internal.h"

#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* The model as it was before the fast path ran: an empty arena, the footer
 * kept (zt__open_v2 read it before the manifest). */
static zt_status restart(zt__model *m, zt_error *err)
{
    zt__v2_footer ft = m->v2->footer;
    zt__arena_free(&m->arena);
    memset(m, 0, sizeof(*m));
    zt__arena_init(&m->arena);
    m->kind = ZT_KIND_ZT_2;
    m->version = "2";
    if (!(m->v2 = zt__arena_alloc(&m->arena, sizeof(*m->v2))))
        return ZT_FAIL(err, ZT_E_NOMEM, "out of memory");
    memset(m->v2, 0, sizeof(*m->v2));
    m->v2->footer = ft;
    return ZT_OK;
}

zt_status zt__v2_parse_manifest(zt__model *m, const uint8_t *buf, size_t len, uint64_t file_size,
                                uint64_t manifest_offset, uint64_t max_unc, zt_error *err)
{
    m->kind = ZT_KIND_ZT_2;
    m->version = "2";
    if (!m->v2) {
        if (!(m->v2 = zt__arena_alloc(&m->arena, sizeof(*m->v2))))
            return ZT_FAIL(err, ZT_E_NOMEM, "out of memory");
        memset(m->v2, 0, sizeof(*m->v2));
    }
    zt_status st =
        zt__fast_path_disabled ? ZT_E_UNSUPPORTED : zt__v2_model_fast(m, buf, len, manifest_offset);
    if (st == ZT_E_UNSUPPORTED) {
        /* Not the usual shape, or not valid: the general path decides and words it. */
        if ((st = restart(m, err)))
            return st;
        zt__cbor_limits lim = {ZT_V2_MAX_DEPTH, manifest_offset, true};
        zt_value *root;
        st = zt__cbor_decode(buf, len, &lim, &m->arena, &root, err);
        if (!st)
            st = zt__v2_model_from_cbor(m, root, err);
    }
    if (!st)
        st = zt__v2_validate(m, file_size, manifest_offset, len, max_unc, err);
    return st;
}

static zt_status read_manifest(zt_file *f, const zt__v2_footer *ft, zt_error *err)
{
    size_t len = (size_t)ft->manifest_length;
    const uint8_t *bytes = NULL;
    uint8_t *copy = NULL;
    zt_status st = ZT_OK;
    /* pread: a file cut short under us is an error, not SIGBUS; and a file
     * opened from its manifest alone has its bytes in windows (file_io.c). */
    if (f->mapped || f->no_data) {
        if (!(copy = zt__malloc(len)))
            return ZT_FAIL(err, ZT_E_NOMEM, "out of memory reading a %zu-byte manifest", len);
        st = zt__read_at(f, ft->manifest_offset, len, copy, err);
        bytes = copy;
    } else {
        bytes = f->data + ft->manifest_offset;
    }
    uint64_t h = st ? 0 : zt__xxh3(bytes, len);
    if (!st && h != ft->manifest_hash)
        st = ZT_V2_FAIL(err, ZT_E_MANIFEST_HASH, NULL, NULL, 1, ft->manifest_offset, "§2.3",
                        "the manifest hashes to %016llx with XXH3-64; the footer says %016llx",
                        (unsigned long long)h, (unsigned long long)ft->manifest_hash);
    if (!st)
        st = zt__v2_parse_manifest(&f->model, bytes, len, f->size, ft->manifest_offset,
                                   f->max_uncompressed, err);
    zt__free(copy);
    return st;
}

zt_status zt__open_v2(zt_file *f, uint64_t max_manifest, zt_error *err)
{
    zt__model *m = &f->model;
    m->kind = ZT_KIND_ZT_2;
    m->version = "2";
    if (!(m->v2 = zt__arena_alloc(&m->arena, sizeof(*m->v2))))
        return ZT_FAIL(err, ZT_E_NOMEM, "out of memory");
    memset(m->v2, 0, sizeof(*m->v2));
    uint8_t tail[ZT_V2_FOOTER];
    zt__v2_footer *ft = &m->v2->footer;
    zt_status st = f->size < 8 + ZT_V2_FOOTER
                       ? ZT_OK
                       : zt__read_at(f, f->size - ZT_V2_FOOTER, ZT_V2_FOOTER, tail, err);
    if (!st)
        st = zt__v2_footer_parse(tail, f->size, max_manifest, ft, err);
    if (st)
        return st;
    f->manifest_offset = ft->manifest_offset;
    f->manifest_length = ft->manifest_length;
    if (ft->manifest_length == 0) { /* §7.2 data shard: structure only */
        m->v2->data_shard = true;
        return zt__model_build_index(m, err);
    }
    if ((st = read_manifest(f, ft, err)))
        return st;
    return zt__v2_open_shards(f);
}

void zt__v2_close(zt_file *f)
{
    zt__v2_info *vi = f->model.v2;
    for (size_t i = 0; vi && i < vi->nshards; i++) {
        zt__shard *s = &vi->shards[i];
        if (s->data)
            munmap((void *)s->data, (size_t)s->size);
        if (s->fd >= 0)
            close(s->fd);
        zt__free(s->path);
    }
}

/* ---- accessors */

uint64_t zt_file_manifest_hash(const zt_file *f)
{
    return f->model.v2 ? f->model.v2->footer.manifest_hash : 0;
}

int zt_file_is_data_shard(const zt_file *f)
{
    return f->model.v2 && f->model.v2->data_shard;
}

const char *zt_component_encoding_name(const zt_component *c)
{
    if (c->encoding_name)
        return c->encoding_name;
    return c->encoding == ZT_ENC_ZSTD ? "zstd" : "raw";
}

zt_digest_scope zt_component_digest_scope(const zt_component *c)
{
    return c->digest_decoded ? ZT_DIGEST_OF_DECODED : ZT_DIGEST_OF_STORED;
}

int zt_object_interpreted(const zt_object *o)
{
    return !o->uninterpreted;
}

int zt_component_shard(const zt_component *c)
{
    return (int)c->shard - 1;
}

zt_status zt_object_check_data(const zt_file *f, const zt_object *o, zt_error *err)
{
    return f->model.kind == ZT_KIND_ZT_2 ? zt__v2_check_data(f, o, err) : ZT_OK;
}
