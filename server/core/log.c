/*
 * log.c: the error log and the access log (see log.h for the line formats).
 *
 * Each line is built in a bounded stack buffer and sent with one write(), so
 * lines from concurrent threads never interleave in an O_APPEND file. Field
 * lengths are capped before escaping, which is what makes the *_LINE_MAX
 * bounds hold and lets the writers use fixed buffers.
 *
 * A sink's descriptor number never changes while threads run: reopening
 * dup3()s the new file over it. That is why no lock is needed and why
 * ztd_log_reopen() is safe in a signal handler (open, dup3 and close only).
 */
#include "core/log.h"
#include "core/dates.h"
#include "core/decimal.h"
#include "core/hex.h"
#include "core/wbuf.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Per-field caps, in input bytes, for the access log. With the worst
 * escaping (6 bytes per byte in JSON) they keep a line under
 * ZTD_ACCESS_LINE_MAX; test_log checks it with hostile input. */
#define CAP_CLIENT 64
#define CAP_METHOD 32
#define CAP_PATH 2048
#define CAP_PROTOCOL 16
#define CAP_REQUEST_ID 128

typedef struct sink {
    atomic_int fd; /* -1 = off */
    bool is_file;  /* opened by us from `path`, hence reopenable */
    char path[PATH_MAX];
} sink;

static sink err_sink = {.fd = 2};
static sink acc_sink = {.fd = -1};
static atomic_int err_level = ZTD_LOG_INFO;
static atomic_int acc_json = 0;

const char *ztd_log_level_name(ztd_log_level level)
{
    switch (level) {
    case ZTD_LOG_ERROR:
        return "error";
    case ZTD_LOG_WARN:
        return "warn";
    case ZTD_LOG_INFO:
        return "info";
    case ZTD_LOG_DEBUG:
        return "debug";
    }
    return "?";
}

/* ------------------------------------------------------------ builder */

/* Appends into a fixed buffer, counting what did not fit (snprintf style). */
typedef struct sb {
    char *buf;
    size_t cap;
    size_t len;
} sb;

static void sb_putc(sb *b, char c)
{
    if (b->len + 1 < b->cap)
        b->buf[b->len] = c;
    b->len++;
}

static void sb_puts(sb *b, const char *s)
{
    while (*s)
        sb_putc(b, *s++);
}

static void sb_uint(sb *b, uint64_t v, int min_digits)
{
    char d[24];
    size_t n = ztd_decimal(d, v, (size_t)min_digits);
    for (size_t i = 0; i < n; i++)
        sb_putc(b, d[i]);
}

static size_t sb_finish(sb *b)
{
    if (b->cap)
        b->buf[b->len < b->cap ? b->len : b->cap - 1] = '\0';
    return b->len;
}

enum esc { ESC_TEXT, ESC_TEXT_NOSPACE, ESC_JSON };

/* Escapes at most `cap` bytes of s; a longer s is cut and marked "...". */
static void sb_escaped(sb *b, const char *s, size_t cap, enum esc mode)
{
    size_t i;
    for (i = 0; s[i] && i < cap; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') {
            sb_putc(b, '\\');
            sb_putc(b, (char)c);
        } else if (c == '\n') {
            sb_puts(b, "\\n");
        } else if (c == '\r') {
            sb_puts(b, "\\r");
        } else if (c == '\t') {
            sb_puts(b, "\\t");
        } else if (c < 0x20 || c >= 0x7f || (c == ' ' && mode == ESC_TEXT_NOSPACE)) {
            sb_puts(b, mode == ESC_JSON ? "\\u00" : "\\x");
            sb_putc(b, ztd_hex_digit(c >> 4));
            sb_putc(b, ztd_hex_digit(c));
        } else {
            sb_putc(b, (char)c);
        }
    }
    if (s[i])
        sb_puts(b, "...");
}

/* ---------------------------------------------------------------- time */

typedef struct civil {
    int64_t year;
    unsigned month, day, hour, min, sec, msec;
} civil;

/* UTC calendar fields without gmtime_r() and its time-zone lock (dates.h). */
static civil civil_from_timespec(const struct timespec *ts)
{
    int64_t secs = (int64_t)ts->tv_sec;
    int64_t days = secs >= 0 ? secs / 86400 : -((-secs + 86399) / 86400);
    int64_t sod = secs - days * 86400;
    civil c;
    c.hour = (unsigned)(sod / 3600);
    c.min = (unsigned)(sod / 60 % 60);
    c.sec = (unsigned)(sod % 60);
    c.msec = (unsigned)((ts->tv_nsec >= 0 ? ts->tv_nsec : 0) / 1000000 % 1000);
    ztd_civil_from_days(days, &c.year, &c.month, &c.day);
    return c;
}

/* The year, with its sign when before year 0 (ISO 8601's expanded form). */
static void sb_year(sb *b, int64_t year)
{
    if (year < 0) {
        sb_putc(b, '-');
        year = -year;
    }
    sb_uint(b, (uint64_t)year, 4);
}

/* 01:02:03 */
static void sb_hms(sb *b, const civil *c)
{
    sb_uint(b, c->hour, 2);
    sb_putc(b, ':');
    sb_uint(b, c->min, 2);
    sb_putc(b, ':');
    sb_uint(b, c->sec, 2);
}

/* 2026-11-22T01:02:03.123Z */
static void sb_iso8601(sb *b, const struct timespec *ts)
{
    civil c = civil_from_timespec(ts);
    sb_year(b, c.year);
    sb_putc(b, '-');
    sb_uint(b, c.month, 2);
    sb_putc(b, '-');
    sb_uint(b, c.day, 2);
    sb_putc(b, 'T');
    sb_hms(b, &c);
    sb_putc(b, '.');
    sb_uint(b, c.msec, 3);
    sb_putc(b, 'Z');
}

/* 22/Nov/2026:01:02:03 +0000 */
static void sb_clf_time(sb *b, const struct timespec *ts)
{
    static const char months[12][4] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                       "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    civil c = civil_from_timespec(ts);
    sb_uint(b, c.day, 2);
    sb_putc(b, '/');
    sb_puts(b, months[c.month - 1]);
    sb_putc(b, '/');
    sb_year(b, c.year);
    sb_putc(b, ':');
    sb_hms(b, &c);
    sb_puts(b, " +0000");
}

/* ------------------------------------------------------------- writing */

static void write_line(int fd, const char *p, size_t n)
{
    (void)ztd_write_all(fd, p, n); /* failed: nowhere left to report it */
}

static int open_log_file(const char *path)
{
    return open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOCTTY, 0640);
}

/* Points `s` at stderr, nowhere (off) or a newly opened file. */
static int sink_open(sink *s, const char *path, bool allow_off, const char *what, char *err,
                     size_t errlen)
{
    int fd;
    bool is_file = false;
    if (strcmp(path, "-") == 0) {
        fd = 2;
    } else if (allow_off && strcmp(path, "off") == 0) {
        fd = -1;
    } else {
        if (strlen(path) >= sizeof s->path) {
            snprintf(err, errlen, "%s %s: path too long", what, path);
            return -1;
        }
        fd = open_log_file(path);
        if (fd < 0) {
            snprintf(err, errlen, "%s %s: cannot open: %s", what, path, strerror(errno));
            return -1;
        }
        is_file = true;
    }
    int old = atomic_exchange(&s->fd, fd);
    if (s->is_file && old >= 0 && old != fd)
        close(old);
    s->is_file = is_file;
    if (is_file)
        strcpy(s->path, path); /* length checked above */
    else
        s->path[0] = '\0';
    return 0;
}

static int sink_reopen(sink *s)
{
    if (!s->is_file)
        return 0;
    int fd = open_log_file(s->path);
    if (fd < 0)
        return -errno;
    int rc = 0;
    if (dup3(fd, atomic_load(&s->fd), O_CLOEXEC) < 0)
        rc = -errno;
    close(fd);
    return rc;
}

int ztd_log_reopen(void)
{
    int saved = errno;
    int a = sink_reopen(&err_sink);
    int b = sink_reopen(&acc_sink);
    errno = saved;
    return a ? a : b;
}

void ztd_log_close(void)
{
    char ignored[8];
    sink_open(&err_sink, "-", false, "", ignored, sizeof ignored);
    sink_open(&acc_sink, "off", true, "", ignored, sizeof ignored);
}

/* ----------------------------------------------------------- error log */

int ztd_log_open(const char *path, ztd_log_level level, char *err, size_t errlen)
{
    if (sink_open(&err_sink, path, false, "error log", err, errlen) < 0)
        return -1;
    ztd_log_set_level(level);
    return 0;
}

void ztd_log_set_level(ztd_log_level level)
{
    atomic_store(&err_level, (int)level);
}

bool ztd_log_enabled(ztd_log_level level)
{
    return (int)level <= atomic_load_explicit(&err_level, memory_order_relaxed);
}

size_t ztd_log_format_line(char *buf, size_t cap, const struct timespec *ts, ztd_log_level level,
                           const char *msg)
{
    sb b = {buf, cap, 0};
    sb_iso8601(&b, ts);
    sb_puts(&b, " level=");
    sb_puts(&b, ztd_log_level_name(level));
    sb_puts(&b, " msg=\"");
    sb_escaped(&b, msg ? msg : "", ZTD_LOG_MSG_MAX, ESC_TEXT);
    sb_puts(&b, "\"\n");
    return sb_finish(&b);
}

void ztd_log(ztd_log_level level, const char *fmt, ...)
{
    if (!ztd_log_enabled(level))
        return;
    int saved = errno;
    char msg[ZTD_LOG_MSG_MAX + 2]; /* one byte more than kept, so a cut shows as "..." */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);

    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    char line[ZTD_LOG_LINE_MAX];
    size_t n = ztd_log_format_line(line, sizeof line, &ts, level, msg);
    int fd = atomic_load_explicit(&err_sink.fd, memory_order_relaxed);
    if (fd >= 0 && n < sizeof line)
        write_line(fd, line, n);
    errno = saved;
}

/* ---------------------------------------------------------- access log */

static void sb_field_text(sb *b, const char *s, size_t cap, enum esc mode)
{
    if (s && *s)
        sb_escaped(b, s, cap, mode);
    else
        sb_putc(b, '-');
}

static void sb_field_json(sb *b, const char *key, const char *s, size_t cap)
{
    sb_puts(b, ",\"");
    sb_puts(b, key);
    sb_puts(b, "\":\"");
    sb_escaped(b, s ? s : "", cap, ESC_JSON);
    sb_putc(b, '"');
}

/* `us` as a decimal with `decimals` digits after the point, no floats. */
static void sb_fixed(sb *b, uint64_t us, uint64_t per_unit, int decimals)
{
    sb_uint(b, us / per_unit, 1);
    sb_putc(b, '.');
    sb_uint(b, us % per_unit, decimals);
}

static void sb_status(sb *b, int status)
{
    unsigned u = (unsigned)status;
    if (status < 0) {
        sb_putc(b, '-');
        u = 0u - u;
    }
    sb_uint(b, u, 1);
}

/* Status, body bytes and duration (in units of 1/scale s, with `decimals`
 * digits), each after its prefix: the same numbers in both formats. */
static void sb_numbers(sb *b, const ztd_access_entry *e, const char *const pre[3], uint64_t scale,
                       int decimals)
{
    sb_puts(b, pre[0]);
    sb_status(b, e->status);
    sb_puts(b, pre[1]);
    sb_uint(b, e->bytes, 1);
    sb_puts(b, pre[2]);
    sb_fixed(b, e->duration_us, scale, decimals);
}

size_t ztd_access_log_format(char *buf, size_t cap, const ztd_access_entry *e, int json)
{
    sb b = {buf, cap, 0};
    bool has_id = e->request_id && e->request_id[0];
    if (json) {
        sb_puts(&b, "{\"time\":\"");
        sb_iso8601(&b, &e->time);
        sb_putc(&b, '"');
        sb_field_json(&b, "client", e->client, CAP_CLIENT);
        sb_field_json(&b, "method", e->method, CAP_METHOD);
        sb_field_json(&b, "path", e->path, CAP_PATH);
        sb_field_json(&b, "protocol", e->protocol, CAP_PROTOCOL);
        static const char *const json_pre[3] = {",\"status\":", ",\"bytes\":",
                                                 ",\"duration_ms\":"};
        sb_numbers(&b, e, json_pre, 1000, 3);
        if (has_id)
            sb_field_json(&b, "request_id", e->request_id, CAP_REQUEST_ID);
        sb_puts(&b, "}\n");
    } else {
        sb_field_text(&b, e->client, CAP_CLIENT, ESC_TEXT_NOSPACE);
        sb_puts(&b, " - - [");
        sb_clf_time(&b, &e->time);
        sb_puts(&b, "] \"");
        sb_field_text(&b, e->method, CAP_METHOD, ESC_TEXT_NOSPACE);
        sb_putc(&b, ' ');
        sb_field_text(&b, e->path, CAP_PATH, ESC_TEXT_NOSPACE);
        if (e->protocol && *e->protocol) {
            sb_putc(&b, ' ');
            sb_escaped(&b, e->protocol, CAP_PROTOCOL, ESC_TEXT_NOSPACE);
        }
        static const char *const text_pre[3] = {"\" ", " ", " "};
        sb_numbers(&b, e, text_pre, 1000000, 6);
        if (has_id) {
            sb_puts(&b, " rid=");
            sb_escaped(&b, e->request_id, CAP_REQUEST_ID, ESC_TEXT_NOSPACE);
        }
        sb_putc(&b, '\n');
    }
    return sb_finish(&b);
}

int ztd_access_log_open(const char *path, ztd_access_format format, char *err, size_t errlen)
{
    if (sink_open(&acc_sink, path, true, "access log", err, errlen) < 0)
        return -1;
    atomic_store(&acc_json, format == ZTD_ACCESS_JSON);
    return 0;
}

bool ztd_access_log_enabled(void)
{
    return atomic_load_explicit(&acc_sink.fd, memory_order_relaxed) >= 0;
}

void ztd_access_log_write(const ztd_access_entry *e)
{
    int fd = atomic_load_explicit(&acc_sink.fd, memory_order_relaxed);
    if (fd < 0)
        return;
    int saved = errno;
    char line[ZTD_ACCESS_LINE_MAX];
    size_t n = ztd_access_log_format(line, sizeof line, e,
                                     atomic_load_explicit(&acc_json, memory_order_relaxed));
    if (n < sizeof line)
        write_line(fd, line, n);
    errno = saved;
}
