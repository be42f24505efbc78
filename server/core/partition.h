/*
 * The binary search every sorted table in the server uses: the first index
 * of a range whose item no longer satisfies a test that holds for a prefix of
 * the range (items below a key, names that begin with a prefix). Lookups of
 * one key are "the partition point, then compare that item". Inline, so a
 * caller's test can be inlined into its search.
 */
#ifndef ZTD_PARTITION_H
#define ZTD_PARTITION_H

#include <stdbool.h>
#include <stddef.h>

/* True while item i of the table behind ctx is still in the first part. */
typedef bool (*ztd_partition_fn)(const void *ctx, size_t i);

/* The first index in [lo, hi) for which below(ctx, i) is false, or hi. below
 * must be true for a prefix of the range and false for the rest. */
static inline size_t ztd_partition_point(size_t lo, size_t hi, ztd_partition_fn below,
                                         const void *ctx)
{
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (below(ctx, mid))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

#endif
