/*
 * Prefetch (--prefetch, POST /v1/prefetch): upstream files fetched into the
 * cache before anyone asks for them, so that an inference pod's first reads
 * are local. A job names files and prefixes (a prefix is expanded with the
 * upstream's listing: a ztensord's, or an S3 store's objects; views and
 * indexes are left out, their files fetched); its files are opened and every component
 * filled through the upstream store, a few at a time, each released once
 * complete (so a prefetch larger than the cache evicts its own first parts
 * rather than failing). Jobs run one at a time on a thread of their own, in
 * the order they were submitted; their progress is kept for GET
 * /v1/prefetch and /metrics.
 */
#ifndef ZTD_PREFETCH_H
#define ZTD_PREFETCH_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ztd_upstream;
typedef struct ztd_prefetch ztd_prefetch;

typedef struct ztd_prefetch_totals {
    uint64_t jobs_queued, jobs_running, jobs_done, jobs_failed;
    uint64_t files_total, files_done, files_failed;
    uint64_t bytes_total, bytes_done; /* stored bytes of the components */
} ztd_prefetch_totals;

/* fill_window: components filling at once per job. NULL when out of memory
 * or threads. */
ztd_prefetch *ztd_prefetch_new(struct ztd_upstream *u, unsigned fill_window);
/* Stops after the job running (which ends at its next file). Accepts NULL. */
void ztd_prefetch_free(ztd_prefetch *p);

/* Queue a job of n names (a served file name, or else a prefix). startup:
 * ztd_prefetch_startup_done() waits for it. The job's id in *id. 0, or -1
 * when out of memory. */
int ztd_prefetch_submit(ztd_prefetch *p, const char *const *names, size_t n, bool startup,
                        uint64_t *id);
/* Have the start-up jobs ended (done or failed)? */
bool ztd_prefetch_startup_done(ztd_prefetch *p);
/* Did a start-up job fail (a file missing, invalid, or not fetched)? Its
 * first error in msg. Failures that can pass (the upstream down or slow) are
 * tried again by start-up jobs for as long as they last. */
bool ztd_prefetch_startup_failed(ztd_prefetch *p, char *msg, size_t cap);
/* One job's progress as JSON (a new reference), or NULL for an unknown id. */
json_t *ztd_prefetch_job_json(ztd_prefetch *p, uint64_t id);
/* Every job kept (the last 64), oldest first: {"jobs": [...]}. */
json_t *ztd_prefetch_json(ztd_prefetch *p);
void ztd_prefetch_get_totals(ztd_prefetch *p, ztd_prefetch_totals *out);

#endif
