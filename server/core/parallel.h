/*
 * A parallel for: fn(ud, i) for every i in [0, n), spread over a few threads
 * started for the call and the calling thread, which returns once every i is
 * done. For blocking work done in bulk, such as the catalog's scan, where
 * many synchronous reads from a cold disk overlap. The order in which the i
 * run is not defined; fn must be safe to run on several threads at once.
 */
#ifndef ZTD_PARALLEL_H
#define ZTD_PARALLEL_H

#include <stddef.h>

/* threads: the most threads working, the caller's included (at least 1).
 * Threads that cannot be started leave their share to the others. */
void ztd_parallel_for(size_t n, unsigned threads, void (*fn)(void *ud, size_t i), void *ud);

#endif
