/*
 * Prometheus metrics (see metrics.h). Every series is a fixed slot in static
 * arrays, so recording is a few relaxed atomic adds and needs no allocation
 * and no lock on the request path. The per-request series are sharded: each
 * thread adds to its own shard (cache line bouncing between the cores cost
 * more than the adds), and a scrape sums the shards.
 */
#include "core/metrics.h"
#include "core/procstat.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ztensor/ztensor.h>

#define NSTATUS 600
#define NROUTE ZTD_METRICS_ROUTES
/* Past 10 s for multi-GB transfers, which take minutes. Each bucket is a
 * counter per route per shard: 5 more cost 40 bytes per route per shard. */
static const double k_buckets[] = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
                                   1,      2.5,   5,      10,    30,   60,    120,  300, 600};
#define NBUCKET (sizeof(k_buckets) / sizeof(k_buckets[0]))

#define NSHARD 8

typedef struct shard {
    _Alignas(64) uint64_t requests[NROUTE][NSTATUS];
    uint64_t bytes[NROUTE];
    uint64_t hist[NROUTE][NBUCKET + 1]; /* last: +Inf */
    uint64_t dur_us[NROUTE];
    int64_t inflight; /* one shard's share may be negative; the sum is not */
} shard;

static shard g_shards[NSHARD];
static unsigned g_next_shard;
static __thread shard *t_shard;
static uint64_t g_upload_bytes;
static uint64_t g_uploads[ZTD_UPLOAD_OUTCOMES];

static uint64_t g_cuts[ZTD_CUT_REASONS];
static uint64_t g_errors[ZTD_ERR_COUNT];

static const char *const k_outcomes[] = {"published", "rejected", "failed", "aborted"};
static const char *const k_cuts[] = {"header_timeout", "slow_body", "evicted", "file_changed",
                                     "client_gone"};

#define ADD(p, v) __atomic_add_fetch((p), (v), __ATOMIC_RELAXED)
#define LOAD(p) __atomic_load_n((p), __ATOMIC_RELAXED)

static shard *my_shard(void)
{
    if (!t_shard)
        t_shard = &g_shards[ADD(&g_next_shard, 1) % NSHARD];
    return t_shard;
}

/* The sum over the shards of the series at FIELD0, its slot in shard 0. */
static uint64_t sum_u64(const uint64_t *field0)
{
    size_t off = (size_t)((const char *)field0 - (const char *)&g_shards[0]);
    uint64_t sum = 0;
    for (int k = 0; k < NSHARD; k++)
        sum += LOAD((const uint64_t *)((const char *)&g_shards[k] + off));
    return sum;
}

#define SUM(field) sum_u64(&g_shards[0].field)

void ztd_metrics_request(unsigned route, int status, uint64_t bytes, uint64_t us)
{
    if (route >= NROUTE)
        route = 0;
    if (status < 0 || status >= NSTATUS)
        status = 0;
    shard *sh = my_shard();
    ADD(&sh->requests[route][status], 1);
    ADD(&sh->bytes[route], bytes);
    ADD(&sh->dur_us[route], us);
    size_t b = 0;
    while (b < NBUCKET && (double)us / 1e6 > k_buckets[b])
        b++;
    ADD(&sh->hist[route][b], 1);
}

void ztd_metrics_inflight(int delta)
{
    ADD(&my_shard()->inflight, delta);
}

void ztd_metrics_upload_bytes(uint64_t n)
{
    ADD(&g_upload_bytes, n);
}

void ztd_metrics_upload_outcome(ztd_upload_outcome o)
{
    if (o < ZTD_UPLOAD_OUTCOMES)
        ADD(&g_uploads[o], 1);
}

void ztd_metrics_conn_cut(ztd_conn_cut why)
{
    if (why < ZTD_CUT_REASONS)
        ADD(&g_cuts[why], 1);
}

void ztd_metrics_error(ztd_err e)
{
    if ((unsigned)e < ZTD_ERR_COUNT)
        ADD(&g_errors[e], 1);
}

typedef struct out {
    char *p;
    size_t len, cap;
    int oom;
} out;

__attribute__((format(printf, 2, 3))) static void put(out *o, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(o->p ? o->p + o->len : NULL, o->p ? o->cap - o->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0 || o->oom)
            return;
        if (o->p && (size_t)n < o->cap - o->len) {
            o->len += (size_t)n;
            return;
        }
        size_t cap = o->cap ? o->cap * 2 : 16384;
        while (cap - o->len <= (size_t)n)
            cap *= 2;
        char *np = realloc(o->p, cap);
        if (!np) {
            o->oom = 1;
            return;
        }
        o->p = np;
        o->cap = cap;
    }
}

static void render_requests(out *o, const char *const *names, unsigned routes)
{
    put(o, "# HELP ztensord_requests_total HTTP requests answered, by route and status.\n"
           "# TYPE ztensord_requests_total counter\n");
    for (unsigned r = 0; r < routes; r++)
        for (int s = 0; s < NSTATUS; s++) {
            uint64_t v = SUM(requests[r][s]);
            if (v)
                put(o, "ztensord_requests_total{route=\"%s\",code=\"%d\"} %llu\n", names[r], s,
                    (unsigned long long)v);
        }
    put(o, "# HELP ztensord_response_bytes_total Body bytes of responses, by route.\n"
           "# TYPE ztensord_response_bytes_total counter\n");
    for (unsigned r = 0; r < routes; r++)
        put(o, "ztensord_response_bytes_total{route=\"%s\"} %llu\n", names[r],
            (unsigned long long)SUM(bytes[r]));
}

/* By code, so that refusals by design (not_ready, overloaded...), which the error
 * log keeps at debug level, stay visible. Only codes answered at least once. */
static void render_errors(out *o)
{
    put(o, "# HELP ztensord_errors_total Error answers, by error code and status.\n"
           "# TYPE ztensord_errors_total counter\n");
    for (int e = 1; e < ZTD_ERR_COUNT; e++) {
        uint64_t v = LOAD(&g_errors[e]);
        if (v)
            put(o, "ztensord_errors_total{error=\"%s\",code=\"%u\"} %llu\n",
                ztd_err_code((ztd_err)e), ztd_err_status((ztd_err)e), (unsigned long long)v);
    }
}

static void render_histogram(out *o, const char *const *names, unsigned routes)
{
    put(o, "# HELP ztensord_request_duration_seconds Time from a request's arrival to its "
           "completion, by route.\n# TYPE ztensord_request_duration_seconds histogram\n");
    for (unsigned r = 0; r < routes; r++) {
        const char *name = names[r];
        uint64_t cum = 0;
        for (size_t b = 0; b <= NBUCKET; b++) {
            cum += SUM(hist[r][b]);
            if (b < NBUCKET)
                put(o, "ztensord_request_duration_seconds_bucket{route=\"%s\",le=\"%g\"} %llu\n",
                    name, k_buckets[b], (unsigned long long)cum);
            else
                put(o, "ztensord_request_duration_seconds_bucket{route=\"%s\",le=\"+Inf\"} %llu\n",
                    name, (unsigned long long)cum);
        }
        put(o, "ztensord_request_duration_seconds_sum{route=\"%s\"} %.6f\n", name,
            (double)SUM(dur_us[r]) / 1e6);
        put(o, "ztensord_request_duration_seconds_count{route=\"%s\"} %llu\n", name,
            (unsigned long long)cum);
    }
}

/* The standard process_* families, named and described as the official
 * client libraries do, so existing dashboards work unchanged. */
static void render_process(out *o)
{
    ztd_procstat p;
    if (ztd_procstat_read(&p) != 0)
        return; /* no /proc: leave the families out rather than report zeros */
    put(o,
        "# HELP process_cpu_seconds_total Total user and system CPU time spent in seconds.\n"
        "# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total %.2f\n",
        p.cpu_seconds);
    put(o,
        "# HELP process_resident_memory_bytes Resident memory size in bytes.\n"
        "# TYPE process_resident_memory_bytes gauge\nprocess_resident_memory_bytes %llu\n",
        (unsigned long long)p.rss_bytes);
    put(o,
        "# HELP process_virtual_memory_bytes Virtual memory size in bytes.\n"
        "# TYPE process_virtual_memory_bytes gauge\nprocess_virtual_memory_bytes %llu\n",
        (unsigned long long)p.vsize_bytes);
    put(o,
        "# HELP process_start_time_seconds Start time of the process since unix epoch in "
        "seconds.\n# TYPE process_start_time_seconds gauge\nprocess_start_time_seconds %.2f\n",
        p.start_time);
    if (p.open_fds >= 0)
        put(o,
            "# HELP process_open_fds Number of open file descriptors.\n"
            "# TYPE process_open_fds gauge\nprocess_open_fds %lld\n",
            (long long)p.open_fds);
    if (p.max_fds >= 0)
        put(o,
            "# HELP process_max_fds Maximum number of open file descriptors.\n"
            "# TYPE process_max_fds gauge\nprocess_max_fds %lld\n",
            (long long)p.max_fds);
}

/* A counter family with one label: HELP and TYPE, then a sample per value. */
static void put_counters(out *o, const char *name, const char *help, const char *label,
                         const char *const *values, uint64_t *counts, int n)
{
    put(o, "# HELP %s %s\n# TYPE %s counter\n", name, help, name);
    for (int i = 0; i < n; i++)
        put(o, "%s{%s=\"%s\"} %llu\n", name, label, values[i],
            (unsigned long long)LOAD(&counts[i]));
}

/* Samples named by their owners (see metrics.h). */
static void put_samples(out *o, const ztd_metric_sample *t, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (t[i].help)
            put(o, "# HELP %s %s\n# TYPE %s %s\n", t[i].name, t[i].help, t[i].name, t[i].type);
        if (t[i].label)
            put(o, "%s{%s=\"%s\"} %llu\n", t[i].name, t[i].label, t[i].label_value,
                (unsigned long long)t[i].value);
        else
            put(o, "%s %llu\n", t[i].name, (unsigned long long)t[i].value);
    }
}

char *ztd_metrics_render(const ztd_metrics_gauges *g, size_t *len)
{
    out o = {0};
    unsigned routes = g->routes < NROUTE ? g->routes : NROUTE;
    render_requests(&o, g->route_names, routes);
    render_errors(&o);
    render_histogram(&o, g->route_names, routes);
    put(&o,
        "# HELP ztensord_requests_in_flight Requests received and not yet completed.\n"
        "# TYPE ztensord_requests_in_flight gauge\nztensord_requests_in_flight %lld\n",
        (long long)(int64_t)sum_u64((const uint64_t *)&g_shards[0].inflight));
    put(&o,
        "# HELP ztensord_upload_bytes_total Request body bytes received by uploads.\n"
        "# TYPE ztensord_upload_bytes_total counter\nztensord_upload_bytes_total %llu\n",
        (unsigned long long)LOAD(&g_upload_bytes));
    put_counters(&o, "ztensord_uploads_total",
                 "Uploads (whole files and component requests) by outcome.", "outcome", k_outcomes,
                 g_uploads, ZTD_UPLOAD_OUTCOMES);
    put(&o,
        "# HELP ztensord_upload_sessions Open component upload sessions.\n"
        "# TYPE ztensord_upload_sessions gauge\nztensord_upload_sessions %zu\n",
        g->sessions);
    put(&o,
        "# HELP ztensord_connections Open client connections: waiting for a request, "
        "busy with one, or draining the body of a refused one.\n"
        "# TYPE ztensord_connections gauge\n"
        "ztensord_connections{state=\"waiting\"} %zu\nztensord_connections{state=\"busy\"} %zu\n"
        "ztensord_connections{state=\"draining\"} %zu\n",
        g->conns_waiting, g->conns_busy, g->conns_draining);
    put_counters(&o, "ztensord_connections_closed_total",
                 "Connections the server closed itself, by reason.", "reason", k_cuts, g_cuts,
                 ZTD_CUT_REASONS);
    put(&o,
        "# HELP ztensord_catalog_files Files in the catalog, by state.\n"
        "# TYPE ztensord_catalog_files gauge\n"
        "ztensord_catalog_files{state=\"valid\"} %zu\n"
        "ztensord_catalog_files{state=\"invalid\"} %zu\n",
        g->files_valid, g->files_invalid);
    put_samples(&o, g->digests, g->ndigests);
    put(&o,
        "# HELP ztensord_open_files Catalog files holding an open descriptor and mapping "
        "now, and the most allowed (max_open_files).\n# TYPE ztensord_open_files gauge\n"
        "ztensord_open_files{state=\"open\"} %zu\nztensord_open_files{state=\"limit\"} %zu\n",
        g->open_files, g->max_open_files);
    put(&o,
        "# HELP ztensord_shared_response_bytes Bytes of small components copied into answers "
        "shared by every request, and the most allowed (shared_response_memory).\n"
        "# TYPE ztensord_shared_response_bytes gauge\n"
        "ztensord_shared_response_bytes{state=\"used\"} %llu\n"
        "ztensord_shared_response_bytes{state=\"limit\"} %llu\n",
        (unsigned long long)g->shared_bytes, (unsigned long long)g->shared_limit);
    put(&o,
        "# HELP ztensord_file_reopens_total Catalog files opened again on use after being "
        "closed to stay within max_open_files.\n# TYPE ztensord_file_reopens_total counter\n"
        "ztensord_file_reopens_total %llu\n",
        (unsigned long long)g->file_reopens);
    put(&o,
        "# HELP ztensord_file_closes_total Catalog files closed (least recently used) to stay "
        "within max_open_files.\n# TYPE ztensord_file_closes_total counter\n"
        "ztensord_file_closes_total %llu\n",
        (unsigned long long)g->file_closes);
    put(&o,
        "# HELP ztensord_catalog_reloads_total Completed catalog scans.\n"
        "# TYPE ztensord_catalog_reloads_total counter\nztensord_catalog_reloads_total %llu\n",
        (unsigned long long)g->reloads);
    put(&o,
        "# HELP ztensord_build_info Build information.\n# TYPE ztensord_build_info gauge\n"
        "ztensord_build_info{version=\"%s\",format_version=\"%s\"} 1\n",
        ZT_VERSION_STRING, ZT_FORMAT_VERSION);
    put_samples(&o, g->upstream, g->nupstream);
    render_process(&o);
    if (o.oom) {
        free(o.p);
        return NULL;
    }
    *len = o.len;
    return o.p;
}
