/*
 * Where an entry's bytes are: a small table of functions on each entry, in
 * the way of curl's Curl_protocol. A local file answers with file spans at
 * once; a file of the upstream answers with cache items, or says to wait
 * (for the first byte of a fill, for a whole item, for room in the cache,
 * for the bytes between components). A front asks the source and never
 * whether an entry is local or from upstream:
 *
 *     plan the answer (http/body.h) -> q.reads, q.lo, q.hi, q.whole
 *     err = e->src->component(&q, e, c, decoded, &seg, msg, cap);
 *     ZTD_SRC_WAIT: run e->src->wait(&q, ...) off the workers, then ask again
 *     else send seg, or answer err
 *     ztd_source_req_end(&q) when the request ends
 *
 * What the source takes for an answer (cache items) is held in q until
 * ztd_source_req_end, so a response never loses its bytes while it sends.
 */
#ifndef ZTD_SOURCE_H
#define ZTD_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <ztensor/ztensor.h>

#include "core/errors.h"
#include "store/segment.h"

struct ztd_entry;

/* Not an error: the source asks the front to wait (see above). */
#define ZTD_SRC_WAIT ((ztd_err)ZTD_ERR_COUNT)

/* One request's dealings with a source. The front fills in what its plan
 * reads before each call; the source keeps its own state in priv. */
typedef struct ztd_source_req {
    bool reads;       /* the answer reads bytes (not HEAD, 304, 412, 416) */
    uint64_t lo, hi;  /* the span of the representation it reads */
    bool whole;       /* it needs every byte before the first goes out (several ranges) */
    bool waited;      /* a wait ran: the source does not ask for the same one again */
    bool named;       /* the answer names the bytes by a digest (verified() said so): the
                       * source gives no byte it has not checked against it */
    ztd_body_seg one; /* room for a single segment the source answers with */
    void *priv;
    void (*priv_free)(void *priv);
} ztd_source_req;

typedef struct ztd_source_ops {
    const char *kind; /* "local", "upstream": for logs */
    /* Can c's bytes be given? ZTD_ERR_NONE, or why not (a v2 shard missing or
     * outside the root, an encoding nobody here decodes), with a message
     * naming the object, component and file. */
    ztd_err (*servable)(const struct ztd_entry *e, const zt_object *o, const zt_component *c,
                        char *msg, size_t cap);
    /* May c's digest name its bytes (ETag, Repr-Digest, immutable)? The server
     * checked it against them, or (upstream) will before the answer's first byte
     * goes out (q->named). c NULL: the whole of a plain file, by its sha256. */
    bool (*verified)(struct ztd_entry *e, const zt_component *c);
    /* Are c's bytes here and checked now, not only before a component
     * answer's first byte? What a body that does not wait for each check (the
     * safetensors view) may name by the digests. */
    bool (*checked)(struct ztd_entry *e, const zt_component *c);
    /* Bytes not verified may still be arriving (a fill): the validator of an
     * answer whose digest does not name its bytes is then weak (W/), so that no
     * client resumes a cut answer with If-Range or takes it for checked bytes. */
    bool weak_unverified;
    /* "\"<32 hex>\"": the validator of a span of the file's bytes that no
     * checked digest names (from the file's identity). */
    void (*span_etag)(const struct ztd_entry *e, uint64_t off, uint64_t len, char out[40]);
    /* The segment of c: its stored bytes, or (decoded) its decoded bytes.
     * ZTD_ERR_NONE with *seg; ZTD_SRC_WAIT: call wait off the workers, then
     * this again; else the error to answer, with msg. */
    ztd_err (*component)(ztd_source_req *q, struct ztd_entry *e, const zt_component *c,
                         bool decoded, ztd_body_seg *seg, char *msg, size_t cap);
    /* The whole file's segments (/raw), owned by q; the same contract. */
    ztd_err (*raw)(ztd_source_req *q, struct ztd_entry *e, const ztd_body_seg **segs, size_t *n,
                   char *msg, size_t cap);
    /* Blocks until what the last call asked to wait for is there, or fails
     * (bounded by upstream_timeout): ZTD_ERR_NONE, or the error to answer. */
    ztd_err (*wait)(ztd_source_req *q, struct ztd_entry *e, char *msg, size_t cap);
} ztd_source_ops;

/* Releases what the source holds for the request. Accepts an unused q. */
void ztd_source_req_end(ztd_source_req *q);

/* servable()'s refusals, worded once: a part not in a shard here (in_shard
 * false; `where` says why), or in an encoding nobody here decodes. */
ztd_err ztd_part_refusal(const struct ztd_entry *e, const zt_object *o, const zt_component *c,
                         bool in_shard, const char *where, char *msg, size_t cap);

/* A local file's source (store/source_local.c). */
extern const ztd_source_ops ztd_source_local;
/* The entry's source: its own, or the local one. */
const ztd_source_ops *ztd_entry_source(const struct ztd_entry *e);

#endif
