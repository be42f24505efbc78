/*
 * Byte responses: the one send path. Every body is a list of segments (bytes
 * in memory, a span of a file, a span of a cache item, a component decoded on
 * the fly), planned once against the request's Range and conditional headers
 * and answered with the right status, strong validators and Repr-Digest. The
 * sender picks per span: sendfile for a file span or a complete cache item,
 * memory, the decoder, an iovec over mappings for a small span that crosses
 * segments, or a reader (pread into a bounded buffer; it also waits for a
 * filling item) for a larger one (http/seg_stream.h).
 * multipart/byteranges for several ranges of one file or memory segment.
 */
#ifndef ZTD_BODY_H
#define ZTD_BODY_H

#include "http/range.h"
#include "http/request.h"
#include "store/segment.h"
#include "store/catalog.h"

typedef struct ztd_body {
    /* The representation: segs[0..nsegs) in order, len bytes in all. A body of
     * one segment keeps it in `one` (ztd_body_single); a copy of such a body
     * must point segs at its own `one`. */
    const ztd_body_seg *segs;
    size_t nsegs;
    uint64_t len;
    ztd_body_seg one;
    ztd_entry *entry; /* the pinned entry the bytes belong to */
    const char *content_type;
    const char *content_encoding;    /* "zstd" when sending stored zstd bytes */
    const char *content_disposition; /* or NULL */
    const char *cache_control;
    char etag[96];                  /* with quotes; "" for none */
    int64_t last_modified;          /* unix seconds */
    const char *last_modified_text; /* the same as an HTTP-date, or NULL to format it */
    const uint8_t *sha256;          /* digest of this representation, or NULL */
    bool vary_accept_encoding;
    bool tls; /* no sendfile: copy file spans through a 64 KiB buffer */
    unsigned max_ranges;
    unsigned max_decode_streams; /* DECODE segments: decoders running at once, or 503 */
    /* A single MEM segment, or a single FILE segment of at most
     * ZTD_SHARED_SPAN_MAX bytes: where the 200 answer to a GET or HEAD with no
     * Range and no condition that changes it is kept, once built, for every
     * request that ztd_req_can_share() allows (an atomic slot holding a struct
     * MHD_Response * once built, whose owner destroys it with
     * ztd_body_destroy_shared(); the bytes, headers and validators must be the
     * same for all). FILE bytes are copied into memory counted against
     * ztd_body_set_shared_limit(); past it, each request builds its own answer
     * as without a slot. */
    void **shared;
    /* With shared, for FILE spans (else NULL): set by the first request that
     * could take the shared answer, which is answered alone; the next one
     * builds it. A component read once (a loader going tensor by tensor)
     * costs no copy. */
    uint8_t *shared_asked;
    /* extra headers (tensor metadata) */
    bool (*add_headers)(struct MHD_Response *resp, const void *ctx); /* false: one failed */
    const void *ctx;
} ztd_body;

/* b's representation is the one segment s. */
void ztd_body_single(ztd_body *b, ztd_body_seg s);

#define ZTD_SHARED_SPAN_MAX (64u * 1024)
/* Most bytes of file spans held in shared answers at once (0: none). Set
 * before serving. */
void ztd_body_set_shared_limit(uint64_t bytes);
/* Bytes of file spans held in shared answers now. */
uint64_t ztd_body_shared_bytes(void);
/* Would a span of len bytes fit in the bound now? (A hint: the bound is checked
 * again when the copy is made.) */
bool ztd_body_shared_room(uint64_t len);
/* Destroys a shared answer (a slot's struct MHD_Response *): what the catalog
 * is given to destroy those its entries hold (ztd_catalog_answer_free). */
void ztd_body_destroy_shared(void *answer);

enum MHD_Result ztd_send_body(struct MHD_Connection *c, ztd_req *r, const ztd_body *b);
/* What ztd_send_body will answer to the request's Range and conditionals for
 * b (its etag, last_modified, len and max_ranges are used): lets a caller
 * prepare only the bytes the answer needs. */
void ztd_body_plan(struct MHD_Connection *c, const ztd_body *b, ztd_plan *plan);

#endif
