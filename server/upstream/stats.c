/*
 * The upstream layer's series for /metrics (see stats.h): each unlabelled
 * uint64_t field of the cache's and the fills' statistics by offset, and the
 * prefetch jobs' gauges by state.
 */
#include "upstream/stats.h"
#include "upstream/items.h"

#include <stdint.h>

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
         "Upstream files opened (footer and manifest): at first use, and again when a "
         "revalidation found them changed."),
    UP_S("revalidations_total", "counter", revalidations,
         "Upstream files (v2 shards counted apart) revalidated after upstream_ttl by a "
         "conditional HEAD request, which has no body."),
    UP_S("revalidations_unchanged_total", "counter", revalidations_unchanged,
         "Of those, the ones the upstream answered unchanged (304, or the same validator): "
         "kept without reading their manifest again."),
    UP_S("files", "gauge", entries, "Upstream files known (opened) here."),
    UP_S("files_bytes", "gauge", entries_bytes,
         "Estimated memory of the upstream files kept open (upstream_entries_memory bounds it)."),
    UP_S("file_evictions_total", "counter", entry_evictions,
         "Upstream files dropped to keep within upstream_entries_memory (or the table's count)."),
};

static size_t put_series(ztd_metric_sample *out, const series *t, size_t n, const void *stats)
{
    for (size_t i = 0; i < n; i++)
        out[i] = (ztd_metric_sample){
            t[i].name, t[i].type, t[i].help,
            NULL,      NULL,      *(const uint64_t *)((const char *)stats + t[i].off)};
    return n;
}

/* A gauge family with a "state" label: its first sample opens it. */
static size_t put_states(ztd_metric_sample *out, const char *name, const char *help,
                         const char *const *states, const uint64_t *values, size_t n)
{
    for (size_t i = 0; i < n; i++)
        out[i] = (ztd_metric_sample){name, "gauge", i ? NULL : help, "state", states[i], values[i]};
    return n;
}

/* Prefetch jobs (--prefetch, POST /v1/prefetch). */
static size_t prefetch_samples(ztd_prefetch *p, ztd_metric_sample *out)
{
    static const char *const jobs[] = {"queued", "running", "done", "failed"};
    static const char *const files[] = {"total", "done", "failed"};
    static const char *const bytes[] = {"total", "done"};
    ztd_prefetch_totals t;
    ztd_prefetch_get_totals(p, &t);
    const uint64_t jv[] = {t.jobs_queued, t.jobs_running, t.jobs_done, t.jobs_failed};
    const uint64_t fv[] = {t.files_total, t.files_done, t.files_failed};
    const uint64_t bv[] = {t.bytes_total, t.bytes_done};
    size_t n = put_states(out, "ztensord_prefetch_jobs", "Prefetch jobs by state.", jobs, jv, 4);
    n += put_states(out + n, "ztensord_prefetch_files",
                    "Files of prefetch jobs: named (total), fetched, failed.", files, fv, 3);
    n += put_states(out + n, "ztensord_prefetch_bytes",
                    "Component bytes of prefetch jobs: of the files opened (total), and in the "
                    "cache (done).",
                    bytes, bv, 2);
    return n;
}

size_t ztd_upstream_samples(ztd_upstream *u, ztd_prefetch *p,
                            ztd_metric_sample out[ZTD_UPSTREAM_SAMPLES])
{
    size_t n = 0;
    if (u) {
        ztd_cache_stats cst;
        ztd_upstream_stats ust;
        ztd_cache_get_stats(ztd_upstream_cache(u), &cst);
        ztd_upstream_get_stats(u, &ust);
        n +=
            put_series(out + n, cache_series, sizeof(cache_series) / sizeof(cache_series[0]), &cst);
        n += put_series(out + n, upstream_series,
                        sizeof(upstream_series) / sizeof(upstream_series[0]), &ust);
    }
    if (p)
        n += prefetch_samples(p, out + n);
    return n;
}
