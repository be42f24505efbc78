/* Operations routes: /healthz, /readyz, /metrics (see handlers.h). */
#include "handlers/handlers.h"
#include "core/config.h"
#include "core/metrics.h"
#include "http/body.h"
#include "http/conns.h"
#include "http/response.h"
#include "store/catalog.h"
#include "store/sessions.h"
#include "store/digests.h"
#include "upstream/prefetch.h"
#include "upstream/stats.h"

#include <stdlib.h>

enum MHD_Result ztd_ops_healthz(ztd_server *s, struct MHD_Connection *c, ztd_req *r)
{
    (void)s;
    return ztd_json(c, r, 200, "{\"status\":\"ok\"}\n", 16, 0);
}

enum MHD_Result ztd_ops_readyz(ztd_server *s, struct MHD_Connection *c, ztd_req *r)
{
    if (__atomic_load_n(&s->draining, __ATOMIC_ACQUIRE))
        return ztd_fail(c, r, ZTD_ERR_DRAINING);
    if (!ztd_catalog_ready(s->catalog))
        return ztd_fail(c, r, ZTD_ERR_NOT_READY);
    char why[400];
    if (s->prefetch && ztd_prefetch_startup_failed(s->prefetch, why, sizeof(why)))
        return ztd_error(c, r, ZTD_ERR_NOT_READY,
                         "the start-up prefetch failed (see GET /v1/prefetch): %s", why);
    if (s->prefetch && !ztd_prefetch_startup_done(s->prefetch)) {
        ztd_prefetch_totals t;
        ztd_prefetch_get_totals(s->prefetch, &t);
        return ztd_error(c, r, ZTD_ERR_NOT_READY,
                         "the start-up prefetch is running: %llu of %llu files, %llu of %llu "
                         "bytes so far",
                         (unsigned long long)t.files_done, (unsigned long long)t.files_total,
                         (unsigned long long)t.bytes_done, (unsigned long long)t.bytes_total);
    }
    return ztd_json(c, r, 200, "{\"status\":\"ready\"}\n", 19, 0);
}

/* The names metrics.c counts by number: routes, digest states. */
static void name_series(ztd_server *s, ztd_metrics_gauges *g, const char **routes,
                        ztd_metric_sample *digests)
{
    _Static_assert(ZTD_ROUTE_COUNT <= ZTD_METRICS_ROUTES, "metrics count fewer routes");
    for (int r = 0; r < ZTD_ROUTE_COUNT; r++)
        routes[r] = ztd_route_name((ztd_route_id)r);
    g->route_names = routes;
    g->routes = ZTD_ROUTE_COUNT;
    size_t counts[ZTD_DIGEST_STATES];
    ztd_catalog_digest_counts(s->catalog, counts);
    for (int i = 0; i < ZTD_DIGEST_STATES; i++)
        digests[i] = (ztd_metric_sample){
            "ztensord_digest_components",
            "gauge",
            i ? NULL : "sha256-digested components of the catalog's files, by verification state.",
            "state",
            ztd_digest_state_name((ztd_digest_state)i),
            counts[i]};
    static const char *const hash_states[3] = {"pending", "hashed", "unreadable"};
    size_t hashed[3];
    ztd_catalog_file_hash_counts(s->catalog, hashed);
    for (int i = 0; i < 3; i++)
        digests[ZTD_DIGEST_STATES + i] = (ztd_metric_sample){
            "ztensord_files_hashed",
            "gauge",
            i ? NULL
              : "Local files hashed whole by the background verifier (plain files; tensor "
                "files without a v2 identity, for the Hugging Face front), by state.",
            "state",
            hash_states[i],
            hashed[i]};
    g->digests = digests;
    g->ndigests = ZTD_DIGEST_STATES + 3;
}

enum MHD_Result ztd_ops_metrics(ztd_server *s, struct MHD_Connection *c, ztd_req *r)
{
    ztd_catalog_stats cs;
    ztd_catalog_get_stats(s->catalog, &cs);
    ztd_metrics_gauges g = {.files_valid = cs.files_valid,
                            .files_invalid = cs.files_invalid,
                            .sessions = ztd_sessions_count(s->sessions),
                            .reloads = cs.reloads};
    const char *routes[ZTD_ROUTE_COUNT];
    ztd_metric_sample digests[ZTD_DIGEST_STATES + 3], up[ZTD_UPSTREAM_SAMPLES];
    name_series(s, &g, routes, digests);
    ztd_fdcache_stats fs;
    ztd_catalog_fd_stats(s->catalog, &fs);
    g.open_files = fs.open;
    g.max_open_files = fs.max;
    g.file_reopens = fs.reopens;
    g.file_closes = fs.evictions;
    g.shared_bytes = ztd_body_shared_bytes();
    g.shared_limit = s->cfg->shared_response_memory;
    ztd_conns_counts(s->conns, &g.conns_waiting, &g.conns_busy, &g.conns_draining);
    g.nupstream = ztd_upstream_samples(s->upstream, s->prefetch, up);
    g.upstream = up;
    size_t len;
    char *text = ztd_metrics_render(&g, &len);
    if (!text)
        return ztd_fail(c, r, ZTD_ERR_INTERNAL);
    struct MHD_Response *resp =
        ztd_response_owned(text, len, "text/plain; version=0.0.4; charset=utf-8");
    if (resp)
        MHD_add_response_header(resp, "Cache-Control", "no-store");
    return ztd_queue(c, r, 200, resp, len);
}
