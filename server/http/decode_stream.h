/*
 * A component decoded on the fly (a DECODE segment, see seg.h): libztensor's
 * pull decoder, pread-based, so a file truncated in place gives a short
 * response, never SIGBUS. A decoding response takes one of
 * max_decode_streams slots (store/decoders.h). A component that does not decode
 * is marked so on its entry and refused up front afterwards.
 */
#ifndef ZTD_DECODE_STREAM_H
#define ZTD_DECODE_STREAM_H

#include <microhttpd.h>

#include "core/errors.h"
#include "http/request.h"
#include "store/segment.h"
#include "store/catalog.h"

/* Why a span could not be turned into a response, beyond "out of memory". */
typedef struct ztd_body_fail {
    ztd_err err; /* ZTD_ERR_NONE: nothing recorded */
    char msg[900];
} ztd_body_fail;

typedef struct ztd_dstream ztd_dstream;

/* A decoder for decoded bytes [start, start + len) of segment g of entry e:
 * the frames checked first when the span reaches the component's end (once
 * per component), the decoder skipped to start. NULL on failure, with err
 * set; a data error marks the component bad. */
ztd_dstream *ztd_dstream_open(ztd_entry *e, const ztd_body_seg *g, uint64_t start, uint64_t len,
                              zt_error *err);
/* Up to cap decoded bytes (all of them unless the span ends first). */
zt_status ztd_dstream_read(ztd_dstream *s, char *buf, size_t cap, size_t *got, zt_error *err);
void ztd_dstream_free(ztd_dstream *s);

/* Is the component known not to decode? Then f says why (the caller's 4xx/5xx). */
bool ztd_dstream_refused(ztd_entry *e, const ztd_body_seg *g, ztd_body_fail *f);
/* The error for a decoder that failed to open (err from ztd_dstream_open). */
void ztd_dstream_failed(ztd_entry *e, const ztd_body_seg *g, const zt_error *err, ztd_body_fail *f);
/* Takes a decoder slot, or says why not in f. */
bool ztd_dstream_slot(unsigned max_decode_streams, ztd_body_fail *f);

/* The response for decoded bytes [start, start + len) of segment g: the head
 * decoded before it is queued, so that a component that fails at its start
 * gets a clear error instead of a 200 cut short; a later failure ends the
 * connection (sock) at once. NULL with f set, or NULL out of memory. */
struct MHD_Response *ztd_decode_response(const ztd_req *r, ztd_entry *e, const ztd_body_seg *g,
                                         uint64_t start, uint64_t len, int sock,
                                         unsigned max_decode_streams, ztd_body_fail *f);

/* Ends a response that cannot be finished: its connection, at once (RFC 9112
 * §9.6), so the client knows it is incomplete. */
ssize_t ztd_body_cut(int sock);

#endif
