/*
 * Byte responses: one representation (a span of a file, bytes in memory, or a
 * component decoded on the fly) answered with the right status for the
 * request's Range and conditional headers, strong validators, Repr-Digest,
 * sendfile for file spans and multipart/byteranges for several ranges.
 */
#ifndef ZTD_BODY_H
#define ZTD_BODY_H

#include "http/range.h"
#include "http/request.h"
#include "http/body_upstream.h"
#include "store/catalog.h"

typedef enum ztd_body_kind {
    ZTD_BODY_FD,
    ZTD_BODY_MEM,
    ZTD_BODY_DECODE,
    ZTD_BODY_CACHE
} ztd_body_kind;

typedef struct ztd_body {
    ztd_body_kind kind;
    int fd; /* FD: the file; the representation is [off, off + len) */
    uint64_t off, len;
    const char *mem;   /* MEM: len bytes, alive while r->pin is */
    const zt_file *zf; /* DECODE: decode this component; len is its decoded length */
    const zt_component *zc;
    bool stored_at_fd;        /* DECODE: its stored bytes are at off in fd (a complete cache
                                 item), not in zf (opened from its manifest alone) */
    const ztd_body_seg *segs; /* CACHE: the representation is their bytes, len in all */
    size_t nsegs;
    ztd_entry *entry; /* the pinned entry the bytes belong to */
    const char *content_type;
    const char *content_encoding; /* "zstd" when sending stored zstd bytes */
    const char *cache_control;
    char etag[96];                  /* with quotes; "" for none */
    int64_t last_modified;          /* unix seconds */
    const char *last_modified_text; /* the same as an HTTP-date, or NULL to format it */
    const uint8_t *sha256;          /* digest of this representation, or NULL */
    bool vary_accept_encoding;
    bool tls; /* no sendfile: copy file spans through a 64 KiB buffer */
    unsigned max_ranges;
    unsigned max_decode_streams; /* DECODE: decoders running at once, or 503 */
    /* MEM, or FD of at most ZTD_SHARED_SPAN_MAX bytes: where the 200 answer to
     * a GET or HEAD with no Range and no condition that changes it is kept,
     * once built, for every request that ztd_req_can_share() allows (an atomic
     * slot holding a struct MHD_Response * once built, whose owner destroys it
     * with ztd_body_destroy_shared(); the bytes, headers and
     * validators must be the same for all). FD bytes are copied into memory
     * counted against ztd_body_set_shared_limit(); past it, each request
     * builds its own answer as without a slot. */
    void **shared;
    /* With shared, for FD spans (else NULL): set by the first request that
     * could take the shared answer, which is answered alone; the next one
     * builds it. A component read once (a loader going tensor by tensor)
     * costs no copy. */
    uint8_t *shared_asked;
    /* extra headers (tensor metadata) */
    bool (*add_headers)(struct MHD_Response *resp, const void *ctx); /* false: one failed */
    const void *ctx;
} ztd_body;

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
