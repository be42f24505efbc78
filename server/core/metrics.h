/*
 * Prometheus metrics: counters updated lock-free from the request threads,
 * rendered in the text exposition format (version 0.0.4) for GET /metrics.
 */
#ifndef ZTD_METRICS_H
#define ZTD_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "core/errors.h"
#include "store/digests.h"
#include "http/router.h"

typedef enum ztd_upload_outcome {
    ZTD_UPLOAD_PUBLISHED = 0,
    ZTD_UPLOAD_REJECTED, /* 4xx: bad input, auth, limits, preconditions */
    ZTD_UPLOAD_FAILED,   /* 5xx: disk full, I/O */
    ZTD_UPLOAD_ABORTED,  /* the client went away */
    ZTD_UPLOAD_OUTCOMES
} ztd_upload_outcome;

/* Why the server closed a connection itself (conns.c). */
typedef enum ztd_conn_cut {
    ZTD_CUT_HEADER_TIMEOUT = 0, /* no complete headers within header_timeout */
    ZTD_CUT_SLOW_BODY,          /* body slower than min_body_rate */
    ZTD_CUT_EVICTED,            /* waiting for a request, closed to make room */
    ZTD_CUT_FILE_CHANGED,       /* response aborted: its file changed on disk */
    ZTD_CUT_CLIENT_GONE,        /* the client closed its side mid-body */
    ZTD_CUT_REASONS
} ztd_conn_cut;

void ztd_metrics_request(ztd_route_id route, int status, uint64_t bytes, uint64_t duration_us);
void ztd_metrics_inflight(int delta);
void ztd_metrics_upload_bytes(uint64_t n);
void ztd_metrics_upload_outcome(ztd_upload_outcome o);
void ztd_metrics_conn_cut(ztd_conn_cut why);
/* An error answer (core/errors.h), counted by its code and status. */
void ztd_metrics_error(ztd_err e);

typedef struct ztd_metrics_gauges {
    size_t files_valid, files_invalid, sessions;
    size_t conns_waiting, conns_busy, conns_draining;
    uint64_t reloads;
    size_t digests[ZTD_DIGEST_STATES];   /* sha256 components by ztd_digest_state */
    size_t open_files, max_open_files;   /* the open-file budget (store/open_files.h) */
    uint64_t shared_bytes, shared_limit; /* shared answers' copies (shared_response_memory) */
    uint64_t file_reopens, file_closes;
    /* --upstream only, else NULL (upstream/items.h, upstream/upstream.h) */
    const struct ztd_cache_stats *cache;
    const struct ztd_upstream_stats *upstream;
    const struct ztd_prefetch_totals *prefetch;
} ztd_metrics_gauges;

/* The exposition text; malloc'ed, *len set. NULL on out of memory. */
char *ztd_metrics_render(const ztd_metrics_gauges *g, size_t *len);

#endif
