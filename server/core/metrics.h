/*
 * Prometheus metrics: counters updated lock-free from the request threads,
 * rendered in the text exposition format (version 0.0.4) for GET /metrics.
 */
#ifndef ZTD_METRICS_H
#define ZTD_METRICS_H

#include "core/errors.h"
#include <stddef.h>
#include <stdint.h>

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

/* Requests are counted by route number (a front's route id), below ZTD_METRICS_ROUTES; the
 * caller of ztd_metrics_render names them. Out-of-range numbers count as route 0. */
#define ZTD_METRICS_ROUTES 32
void ztd_metrics_request(unsigned route, int status, uint64_t bytes, uint64_t duration_us);
void ztd_metrics_inflight(int delta);
void ztd_metrics_upload_bytes(uint64_t n);
void ztd_metrics_upload_outcome(ztd_upload_outcome o);
void ztd_metrics_conn_cut(ztd_conn_cut why);
/* An error answer (core/errors.h), counted by its code and status. */
void ztd_metrics_error(ztd_err e);

/* A sample named by the layer that owns it: metrics.c includes no header above core/. A
 * sample with help opens its family (HELP and TYPE lines); one without continues the
 * family opened before it, under another label value. */
typedef struct ztd_metric_sample {
    const char *name;
    const char *type;                /* "counter" or "gauge" (read with help) */
    const char *help;                /* NULL: continues the family above */
    const char *label, *label_value; /* label NULL: no label */
    uint64_t value;
} ztd_metric_sample;

typedef struct ztd_metrics_gauges {
    const char *const *route_names; /* route number -> "manifest", ...: routes of them */
    unsigned routes;                /* at most ZTD_METRICS_ROUTES */
    size_t files_valid, files_invalid, sessions;
    size_t conns_waiting, conns_busy, conns_draining;
    uint64_t reloads;
    const ztd_metric_sample *digests; /* sha256 components by verification state */
    size_t ndigests;
    size_t open_files, max_open_files;   /* the open-file budget (store/open_files.h) */
    uint64_t shared_bytes, shared_limit; /* shared answers' copies (shared_response_memory) */
    uint64_t file_reopens, file_closes;
    /* --upstream only (upstream/stats.h), else none */
    const ztd_metric_sample *upstream;
    size_t nupstream;
} ztd_metrics_gauges;

/* The exposition text; malloc'ed, *len set. NULL on out of memory. */
char *ztd_metrics_render(const ztd_metrics_gauges *g, size_t *len);

#endif
