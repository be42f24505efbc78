/*
 * Prometheus metrics (see metrics.h). Every series is a fixed slot in static
 * arrays, so recording is a few relaxed atomic adds and needs no allocation
 * and no lock on the request path. The per-request series are sharded: each
 * thread adds to its own shard (cache line bouncing between the cores cost
 * more than the adds), and a scrape sums the shards.
 */
#include "core/metrics.h"
#include "core/procstat.h"
#include "upstream/items.h"
#include "upstream/prefetch.h"
#include "upstream/upstream.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ztensor/ztensor.h>

#define NSTATUS 600
#define NROUTE ZTD_ROUTE_COUNT
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

void ztd_metrics_request(ztd_route_id route, int status, uint64_t bytes, uint64_t us)
{
    if ((unsigned)route >= NROUTE)
        route = ZTD_ROUTE_NONE;
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

static void render_requests(out *o)
{
    put(o, "# HELP ztensord_requests_total HTTP requests answered, by route and status.\n"
           "# TYPE ztensord_requests_total counter\n");
    for (int r = 0; r < NROUTE; r++)
        for (int s = 0; s < NSTATUS; s++) {
            uint64_t v = SUM(requests[r][s]);
            if (v)
                put(o, "ztensord_requests_total{route=\"%s\",code=\"%d\"} %llu\n",
                    ztd_route_name((ztd_route_id)r), s, (unsigned long long)v);
        }
    put(o, "# HELP ztensord_response_bytes_total Body bytes of responses, by route.\n"
           "# TYPE ztensord_response_bytes_total counter\n");
    for (int r = 0; r < NROUTE; r++)
        put(o, "ztensord_response_bytes_total{route=\"%s\"} %llu\n",
            ztd_route_name((ztd_route_id)r), (unsigned long long)SUM(bytes[r]));
}

static void render_histogram(out *o)
{
    put(o, "# HELP ztensord_request_duration_seconds Time from a request's arrival to its "
           "completion, by route.\n# TYPE ztensord_request_duration_seconds histogram\n");
    for (int r = 0; r < NROUTE; r++) {
        const char *name = ztd_route_name((ztd_route_id)r);
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

/* One unlabelled sample with its HELP and TYPE. */
static void put_one(out *o, const char *name, const char *type, const char *help, uint64_t v)
{
    put(o, "# HELP %s %s\n# TYPE %s %s\n%s %llu\n", name, help, name, type, name,
        (unsigned long long)v);
}

/* One unlabelled uint64_t sample of a stats struct, by offset. */
typedef struct series {
    const char *name, *type, *help;
    size_t off;
} series;

#define CACHE_S(n, t, f, h)                                                                        \
    {                                                                                              \
        "ztensord_cache_" n, t, h, offsetof(ztd_cache_stats, f)                                    \
    }
#define UP_S(n, t, f, h)                                                                           \
    {                                                                                              \
        "ztensord_upstream_" n, t, h, offsetof(ztd_upstream_stats, f)                              \
    }

/* The pull-through cache (--upstream): its store, then its fills. */
static const series cache_series[] = {
    CACHE_S("hits_total", "counter", hits, "Upstream components found complete in the cache."),
    CACHE_S("misses_total", "counter", misses,
            "Upstream components not in the cache: a fill was started."),
    CACHE_S("waits_total", "counter", waits,
            "Requests that joined a fill already running (single flight)."),
    CACHE_S("evictions_total", "counter", evictions,
            "Cache items evicted to make room (least recently used)."),
    CACHE_S("evicted_bytes_total", "counter", evicted_bytes, "Bytes of the evicted items."),
    CACHE_S("bytes", "gauge", bytes, "Bytes in the cache, complete and filling."),
    CACHE_S("limit_bytes", "gauge", max_bytes, "The cache's size bound (cache_size)."),
    CACHE_S("items", "gauge", items, "Complete items in the cache."),
    CACHE_S("checks_total", "counter", checks,
            "Items found in the cache directory at start-up, hashed again before their first "
            "use."),
    CACHE_S("check_failures_total", "counter", check_failures,
            "Of those, items whose bytes did not match their digest: removed and fetched "
            "again."),
};
static const series upstream_series[] = {
    UP_S("fills_total", "counter", fills,
         "Fetches of a whole component from upstream into the cache."),
    UP_S("fills_in_flight", "gauge", fills_running, "Fetches from upstream running."),
    UP_S("fill_failures_total", "counter", fill_failures,
         "Fetches that failed (upstream, digest, disk): nothing was cached."),
    UP_S("digest_failures_total", "counter", digest_failures,
         "Fetched components whose bytes did not match the manifest's digest."),
    UP_S("bytes_total", "counter", bytes, "Bytes received from upstream."),
    UP_S("errors_total", "counter", errors,
         "Upstream requests that failed (network, HTTP status, timeout)."),
    UP_S("opens_total", "counter", opens,
         "Upstream files opened or revalidated (footer and manifest)."),
    UP_S("files", "gauge", entries, "Upstream files known (opened) here."),
    UP_S("files_bytes", "gauge", entries_bytes,
         "Estimated memory of the upstream files kept open (upstream_entries_memory bounds it)."),
    UP_S("file_evictions_total", "counter", entry_evictions,
         "Upstream files dropped to keep within upstream_entries_memory (or the table's count)."),
};

static void put_series(out *o, const series *t, size_t n, const void *stats)
{
    for (size_t i = 0; i < n; i++)
        put_one(o, t[i].name, t[i].type, t[i].help,
                *(const uint64_t *)((const char *)stats + t[i].off));
}

static void render_upstream(out *o, const ztd_cache_stats *c, const ztd_upstream_stats *u)
{
    put_series(o, cache_series, sizeof(cache_series) / sizeof(cache_series[0]), c);
    put_series(o, upstream_series, sizeof(upstream_series) / sizeof(upstream_series[0]), u);
}

/* Prefetch jobs (--prefetch, POST /v1/prefetch). */
static void render_prefetch(out *o, const ztd_prefetch_totals *t)
{
    put(o,
        "# HELP ztensord_prefetch_jobs Prefetch jobs by state.\n"
        "# TYPE ztensord_prefetch_jobs gauge\n"
        "ztensord_prefetch_jobs{state=\"queued\"} %llu\n"
        "ztensord_prefetch_jobs{state=\"running\"} %llu\n"
        "ztensord_prefetch_jobs{state=\"done\"} %llu\n"
        "ztensord_prefetch_jobs{state=\"failed\"} %llu\n",
        (unsigned long long)t->jobs_queued, (unsigned long long)t->jobs_running,
        (unsigned long long)t->jobs_done, (unsigned long long)t->jobs_failed);
    put(o,
        "# HELP ztensord_prefetch_files Files of prefetch jobs: named (total), fetched, "
        "failed.\n# TYPE ztensord_prefetch_files gauge\n"
        "ztensord_prefetch_files{state=\"total\"} %llu\n"
        "ztensord_prefetch_files{state=\"done\"} %llu\n"
        "ztensord_prefetch_files{state=\"failed\"} %llu\n",
        (unsigned long long)t->files_total, (unsigned long long)t->files_done,
        (unsigned long long)t->files_failed);
    put(o,
        "# HELP ztensord_prefetch_bytes Component bytes of prefetch jobs: of the files opened "
        "(total), and in the cache (done).\n# TYPE ztensord_prefetch_bytes gauge\n"
        "ztensord_prefetch_bytes{state=\"total\"} %llu\n"
        "ztensord_prefetch_bytes{state=\"done\"} %llu\n",
        (unsigned long long)t->bytes_total, (unsigned long long)t->bytes_done);
}

char *ztd_metrics_render(const ztd_metrics_gauges *g, size_t *len)
{
    out o = {0};
    render_requests(&o);
    render_histogram(&o);
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
    put(&o, "# HELP ztensord_digest_components sha256-digested components of the catalog's files, "
            "by verification state.\n# TYPE ztensord_digest_components gauge\n");
    for (int i = 0; i < ZTD_DIGEST_STATES; i++)
        put(&o, "ztensord_digest_components{state=\"%s\"} %zu\n",
            ztd_digest_state_name((ztd_digest_state)i), g->digests[i]);
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
    if (g->cache && g->upstream)
        render_upstream(&o, g->cache, g->upstream);
    if (g->prefetch)
        render_prefetch(&o, g->prefetch);
    render_process(&o);
    if (o.oom) {
        free(o.p);
        return NULL;
    }
    *len = o.len;
    return o.p;
}
