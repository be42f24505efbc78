/*
 * process_* metrics from /proc (see procstat.h). Field numbers are those of
 * proc(5). The start time is boot time plus the process's start in clock
 * ticks since boot, as Prometheus' client_golang computes it, so it agrees
 * with other exporters on the same machine.
 */
#include "core/procstat.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/* /proc/self/stat fields (1-based) after "pid (comm)". */
enum { F_STATE = 3, F_UTIME = 14, F_STIME = 15, F_STARTTIME = 22, F_VSIZE = 23, F_RSS = 24 };

int ztd_procstat_parse_stat(const char *text, long ticks_per_second, long page_size,
                            uint64_t boot_time, ztd_procstat *out)
{
    /* comm is the only field that may hold spaces or ')': skip to its last ')' */
    const char *p = strrchr(text, ')');
    if (!p || ticks_per_second <= 0 || page_size <= 0)
        return -1;
    p++;
    unsigned long long v[F_RSS + 1] = {0};
    for (int f = F_STATE; f <= F_RSS; f++) {
        while (*p == ' ')
            p++;
        if (!*p)
            return -1;
        if (f == F_STATE) {
            p++; /* a single letter */
            continue;
        }
        char *end;
        errno = 0;
        v[f] = strtoull(p, &end, 10);
        if (end == p || errno || (*end != ' ' && *end != '\n' && *end))
            return -1;
        p = end;
    }
    out->cpu_seconds = (double)(v[F_UTIME] + v[F_STIME]) / (double)ticks_per_second;
    out->start_time = (double)boot_time + (double)v[F_STARTTIME] / (double)ticks_per_second;
    out->vsize_bytes = v[F_VSIZE];
    out->rss_bytes = v[F_RSS] * (uint64_t)page_size;
    return 0;
}

int ztd_procstat_parse_btime(const char *text, uint64_t *boot_time)
{
    const char *p = text;
    while (p && strncmp(p, "btime ", 6) != 0) {
        p = strchr(p, '\n');
        p = p ? p + 1 : NULL;
    }
    if (!p)
        return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(p + 6, &end, 10);
    if (end == p + 6 || errno || (*end != '\n' && *end))
        return -1;
    *boot_time = v;
    return 0;
}

/* Up to cap - 1 bytes of a /proc file, NUL-terminated. */
static int slurp(const char *path, char *buf, size_t cap)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t n = 0;
    while (n + 1 < cap) {
        ssize_t r = read(fd, buf + n, cap - 1 - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        n += (size_t)r;
    }
    close(fd);
    buf[n] = 0;
    return n ? 0 : -1;
}

/* btime sits near the end of /proc/stat, after a line per CPU: read it in
 * pieces rather than sizing a buffer for the largest machine. It never
 * changes, so it is read once. */
static int boot_time(uint64_t *out)
{
    static uint64_t cached; /* 0: not read yet (no machine booted at the epoch) */
    uint64_t bt = __atomic_load_n(&cached, __ATOMIC_RELAXED);
    if (bt) {
        *out = bt;
        return 0;
    }
    int fd = open("/proc/stat", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    char buf[4096];
    size_t keep = 0;
    int rc = -1;
    for (int i = 0; i < 4096 && rc != 0; i++) { /* at most 16 MiB of /proc/stat */
        ssize_t r = read(fd, buf + keep, sizeof(buf) - 1 - keep);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        size_t n = keep + (size_t)r;
        buf[n] = 0;
        char *nl = strrchr(buf, '\n');
        if (!nl) { /* a line longer than the buffer: not the one we want */
            keep = 0;
            continue;
        }
        char cut = nl[1];
        nl[1] = 0; /* whole lines only: a cut "btime 17" must not parse */
        rc = ztd_procstat_parse_btime(buf, &bt);
        nl[1] = cut;
        keep = n - (size_t)(nl + 1 - buf); /* the cut last line, read on next time */
        memmove(buf, buf + n - keep, keep);
    }
    close(fd);
    if (rc == 0) {
        __atomic_store_n(&cached, bt, __ATOMIC_RELAXED);
        *out = bt;
    }
    return rc;
}

static int64_t count_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return -1;
    int64_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n > 0 ? n - 1 : 0; /* not the descriptor opendir() used to list them */
}

int ztd_procstat_read(ztd_procstat *out)
{
    char stat[1024];
    uint64_t bt;
    if (slurp("/proc/self/stat", stat, sizeof(stat)) != 0 || boot_time(&bt) != 0 ||
        ztd_procstat_parse_stat(stat, sysconf(_SC_CLK_TCK), sysconf(_SC_PAGESIZE), bt, out) != 0)
        return -1;
    out->open_fds = count_fds();
    struct rlimit rl;
    out->max_fds = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY
                       ? (int64_t)rl.rlim_cur
                       : -1;
    return 0;
}
