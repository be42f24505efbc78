/*
 * The upstream layer's series for /metrics: its cache, its fills and its
 * prefetch jobs, named here and handed to core/metrics.c as samples (which
 * knows no layer above core/).
 */
#ifndef ZTD_UPSTREAM_STATS_H
#define ZTD_UPSTREAM_STATS_H

#include <stddef.h>

#include "core/metrics.h"
#include "upstream/prefetch.h"
#include "upstream/upstream.h"

/* Room that ztd_upstream_samples always has enough of. */
#define ZTD_UPSTREAM_SAMPLES 48

/* The samples of u (may be NULL: none) and p (may be NULL: none) into out, in
 * the order /metrics shows them; returns how many. */
size_t ztd_upstream_samples(ztd_upstream *u, ztd_prefetch *p,
                            ztd_metric_sample out[ZTD_UPSTREAM_SAMPLES]);

#endif
