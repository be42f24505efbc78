/*
 * The process's own resource use, for the standard Prometheus process_*
 * metrics: CPU time, memory, file descriptors and start time, read from
 * /proc/self (Linux), the way the official client libraries read them.
 *
 * The parsers are pure, so unit tests reach them with made-up /proc text.
 */
#ifndef ZTD_PROCSTAT_H
#define ZTD_PROCSTAT_H

#include <stdint.h>

typedef struct ztd_procstat {
    double cpu_seconds;   /* user + system */
    double start_time;    /* seconds since the Unix epoch */
    uint64_t rss_bytes;   /* resident set size */
    uint64_t vsize_bytes; /* virtual memory size */
    int64_t open_fds;     /* -1: unknown */
    int64_t max_fds;      /* soft RLIMIT_NOFILE; -1: unknown or unlimited */
} ztd_procstat;

/* The text of /proc/self/stat into cpu_seconds, start_time (needs the boot
 * time, in seconds since the epoch), rss_bytes and vsize_bytes; the other
 * fields are left alone. The command name may hold spaces and parentheses.
 * 0, or -1 when the text is not a stat line. */
int ztd_procstat_parse_stat(const char *text, long ticks_per_second, long page_size,
                            uint64_t boot_time, ztd_procstat *out);

/* The "btime" line of /proc/stat: boot time in seconds since the epoch. 0 or -1. */
int ztd_procstat_parse_btime(const char *text, uint64_t *boot_time);

/* All fields for this process, now. 0, or -1 when /proc cannot be read
 * (*out is then unspecified). Allocates nothing; a few system calls. */
int ztd_procstat_read(ztd_procstat *out);

#endif
