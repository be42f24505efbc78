/*
 * zt pull's limits against a server that lies or stalls: the caps on a
 * prefix's listing (files, bytes of names), a deadline for the whole pull,
 * and the least rate a request must keep over a window. Each comes from its
 * flag, else from the environment, else its default, and lands in the
 * sessions' zt_remote_options, where libztensor-remote enforces it as it
 * does ZT_REMOTE_TIMEOUT for zt info and zt get (the deadline is the one
 * every call's total_timeout is held to: no second timer here).
 */
#include "tool.h"

#include <stdlib.h>
#include <string.h>

void tool_pull_limits_init(tool_pull_limits *l)
{
    zt_remote_options o;
    zt_remote_options_init(&o);
    memset(l, 0, sizeof(*l));
    l->max_files = o.list_max_entries;
    l->max_listing_bytes = o.list_max_bytes;
    l->min_rate = TOOL_PULL_MIN_RATE;
    l->window = o.stall_timeout;
    const char *v;
    if ((v = getenv("ZT_TIMEOUT")) && *v)
        tool_pull_limits_arg(l, "--timeout", v);
    if ((v = getenv("ZT_PULL_MIN_RATE")) && *v)
        tool_pull_limits_arg(l, "--min-rate", v);
    if ((v = getenv("ZT_PULL_STALL_TIMEOUT")) && *v)
        tool_pull_limits_arg(l, "--stall-timeout", v);
    if ((v = getenv("ZT_PULL_MAX_FILES")) && *v)
        tool_pull_limits_arg(l, "--max-files", v);
    if ((v = getenv("ZT_PULL_MAX_LISTING_BYTES")) && *v)
        tool_pull_limits_arg(l, "--max-listing-bytes", v);
}

/* A count: digits only, 1 to 2^63. */
static int parse_count(const char *v, uint64_t *out)
{
    char *end = NULL;
    unsigned long long n = strtoull(v, &end, 10);
    if (!*v || *v == '-' || *end || n < 1 || n > (1ull << 63))
        return -1;
    *out = n;
    return 0;
}

/* Seconds: a decimal number in [lo, hi]. */
static int parse_seconds(const char *v, double lo, double hi, double *out)
{
    char *end = NULL;
    double d = v ? strtod(v, &end) : 0;
    if (!v || !*v || *end || !(d >= lo && d <= hi))
        return -1;
    *out = d;
    return 0;
}

int tool_pull_limits_arg(tool_pull_limits *l, const char *a, const char *v)
{
    size_t bytes;
    if (!strcmp(a, "--timeout")) {
        if (parse_seconds(v, 0, 1e7, &l->timeout)) {
            fprintf(stderr, "zt pull: --timeout (ZT_TIMEOUT): seconds, 0 (none) to 1e7\n");
            return -1;
        }
        return 1;
    }
    if (!strcmp(a, "--stall-timeout")) {
        if (parse_seconds(v, 1, 3600, &l->window)) {
            fprintf(stderr, "zt pull: --stall-timeout (ZT_PULL_STALL_TIMEOUT): seconds, 1 to "
                            "3600\n");
            return -1;
        }
        return 1;
    }
    if (!strcmp(a, "--min-rate")) {
        if (v && !strcmp(v, "0")) {
            l->min_rate = 0;
            return 1;
        }
        if (!v || tool_parse_size(v, &bytes)) {
            fprintf(stderr, "zt pull: --min-rate (ZT_PULL_MIN_RATE): bytes per second (K, M, G "
                            "suffixes), or 0 (off)\n");
            return -1;
        }
        l->min_rate = (double)bytes;
        return 1;
    }
    if (!strcmp(a, "--max-files")) {
        if (!v || parse_count(v, &l->max_files)) {
            fprintf(stderr, "zt pull: --max-files (ZT_PULL_MAX_FILES): a count of at least 1\n");
            return -1;
        }
        return 1;
    }
    if (!strcmp(a, "--max-listing-bytes")) {
        if (!v || tool_parse_size(v, &bytes)) {
            fprintf(stderr, "zt pull: --max-listing-bytes (ZT_PULL_MAX_LISTING_BYTES): a size "
                            "(K, M, G suffixes)\n");
            return -1;
        }
        l->max_listing_bytes = bytes;
        return 1;
    }
    return 0;
}

void tool_pull_limits_start(tool_pull_limits *l)
{
    l->deadline = l->timeout > 0 ? zt_remote_clock() + l->timeout : 0;
}

void tool_pull_limits_apply(const tool_pull_limits *l, zt_remote_options *o)
{
    o->list_max_entries = l->max_files;
    o->list_max_bytes = l->max_listing_bytes;
    o->deadline = l->deadline;
    o->min_rate = l->min_rate;
    o->stall_timeout = l->window;
}

int tool_pull_limits_hit(const zt_error *e)
{
    /* The library's words for its deadline (ztr__deadline_name): a call can
     * end on it a little before it passes, when the next retry would. */
    return e->code == ZT_E_NETWORK && strstr(e->message, "the session's deadline") != NULL;
}

int tool_pull_limits_passed(const tool_pull_limits *l)
{
    return l->deadline > 0 && zt_remote_clock() >= l->deadline;
}
