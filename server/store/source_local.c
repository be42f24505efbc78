/*
 * A local file's source (see source.h): its bytes are in the file the
 * catalog holds open, so every answer is a file span, or the component
 * decoded from it, at once; nothing is ever waited for.
 */
#include "store/catalog.h"
#include "store/catalog_v2.h"
#include "store/source.h"

#include <stdio.h>

void ztd_source_req_end(ztd_source_req *q)
{
    if (q->priv_free)
        q->priv_free(q->priv);
    q->priv = NULL;
    q->priv_free = NULL;
}

ztd_err ztd_part_refusal(const ztd_entry *e, const zt_object *o, const zt_component *c,
                         bool in_shard, const char *where, char *msg, size_t cap)
{
    if (!in_shard) {
        snprintf(msg, cap,
                 "component \"%s\" of object \"%s\" is in shard %d of \"%s\", which is "
                 "%s",
                 zt_component_role(c), zt_object_name(o), zt_component_shard(c), e->name, where);
        return ZTD_ERR_SHARD_UNAVAILABLE;
    }
    if (zt_component_encoding(c) == ZT_ENC_OTHER) {
        snprintf(msg, cap,
                 "component \"%s\" of object \"%s\" is stored in encoding \"%s\", which this "
                 "server cannot decode; its stored bytes are %llu bytes at offset %llu of the "
                 "file",
                 zt_component_role(c), zt_object_name(o), zt_component_encoding_name(c),
                 (unsigned long long)zt_component_length(c),
                 (unsigned long long)zt_component_offset(c));
        return ZTD_ERR_ENCODING_UNSUPPORTED;
    }
    return ZTD_ERR_NONE;
}

/* v2: a part in a shard that is missing or outside the root has no bytes. */
static ztd_err local_servable(const ztd_entry *e, const zt_object *o, const zt_component *c,
                              char *msg, size_t cap)
{
    return ztd_part_refusal(e, o, c, ztd_v2_part_servable(e->v2, c),
                            "missing, wrong or outside the root", msg, cap);
}

/* Hashed by the verifier, and the file not written in place since (one fstat). */
static bool local_verified(ztd_entry *e, const zt_component *c)
{
    if (!c) /* a plain file: its sha256 is the verifier's own (ztd_entry_plain_sha256) */
        return true;
    return ztd_digest_state_of(&e->digests, c) == ZTD_DIGEST_VERIFIED && ztd_entry_unchanged(e);
}

static void local_span_etag(const ztd_entry *e, uint64_t off, uint64_t len, char out[40])
{
    ztd_identity_etag(e, off, len, out);
}

static ztd_err local_component(ztd_source_req *q, ztd_entry *e, const zt_component *c, bool decoded,
                               ztd_body_seg *seg, char *msg, size_t cap)
{
    (void)q;
    (void)msg;
    (void)cap;
    *seg = decoded ? ztd_seg_decode(e->file, c)
                   : ztd_seg_file(zt_component_fd(e->file, c), zt_component_offset(c),
                                  zt_component_length(c));
    return ZTD_ERR_NONE;
}

static ztd_err local_raw(ztd_source_req *q, ztd_entry *e, const ztd_body_seg **segs, size_t *n,
                         char *msg, size_t cap)
{
    (void)msg;
    (void)cap;
    q->one = ztd_seg_file(ztd_entry_fd(e), 0, e->size);
    *segs = &q->one;
    *n = 1;
    return ZTD_ERR_NONE;
}

static ztd_err local_wait(ztd_source_req *q, ztd_entry *e, char *msg, size_t cap)
{
    (void)q;
    (void)e;
    snprintf(msg, cap, "a local file has nothing to wait for");
    return ZTD_ERR_INTERNAL;
}

const ztd_source_ops *ztd_entry_source(const ztd_entry *e)
{
    return e->src ? e->src : &ztd_source_local;
}

const ztd_source_ops ztd_source_local = {
    .kind = "local",
    .servable = local_servable,
    .verified = local_verified,
    .checked = local_verified,
    .span_etag = local_span_etag,
    .component = local_component,
    .raw = local_raw,
    .wait = local_wait,
};
