/*
 * ztensord's two logs: the error log (levelled, one logfmt-style line per
 * event) and the access log (one line per request, text or JSON lines).
 *
 * Formatting is pure (ztd_log_format_line, ztd_access_log_format) so tests
 * reach it without a file; the writers on top send each line with one
 * write(). Every string that may come from a client is escaped, so a request
 * path can never end a line or forge a field. The access log takes no header
 * values: an Authorization header or a token cannot reach it.
 *
 * Threads: ztd_log() and ztd_access_log_write() may be called from any thread
 * at any time. ztd_log_open(), ztd_access_log_open() and ztd_log_close() are
 * for start-up and shutdown, before and after the other threads run.
 * ztd_log_reopen() may run at any time, even inside a signal handler.
 */
#ifndef ZTD_LOG_H
#define ZTD_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum ztd_log_level {
    ZTD_LOG_ERROR = 0,
    ZTD_LOG_WARN = 1,
    ZTD_LOG_INFO = 2,
    ZTD_LOG_DEBUG = 3
} ztd_log_level;

typedef enum ztd_access_format { ZTD_ACCESS_TEXT = 0, ZTD_ACCESS_JSON = 1 } ztd_access_format;

/* Longest message ztd_log() keeps; longer ones end in "...". */
#define ZTD_LOG_MSG_MAX 1024
/* No error-log line is longer than this, newline included. */
#define ZTD_LOG_LINE_MAX 4224
/* No access-log line is longer than this, newline included. */
#define ZTD_ACCESS_LINE_MAX 16384

/* "error", "warn", "info", "debug"; "?" for anything else. Static strings. */
const char *ztd_log_level_name(ztd_log_level level);

/* ------------------------------------------------------------ error log */

/* Send the error log to `path` ("-" = stderr; a file is opened O_APPEND and
 * created 0640) and keep lines up to `level`. Before any call the log goes to
 * stderr at level info. Returns 0, or -1 with a message in err (the previous
 * destination stays). The path is copied. */
int ztd_log_open(const char *path, ztd_log_level level, char *err, size_t errlen);
void ztd_log_set_level(ztd_log_level level);
/* Whether ztd_log(level, ...) would write: lets callers skip costly formatting. */
bool ztd_log_enabled(ztd_log_level level);

/* One line: `2026-11-22T01:02:03.123Z level=warn msg="..."`. Preserves errno. */
void ztd_log(ztd_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The pure formatter behind ztd_log(): writes the line for `msg` at time `ts`
 * (UTC, milliseconds), newline included, NUL-terminated when cap > 0.
 * Messages longer than ZTD_LOG_MSG_MAX bytes are cut and end in "...".
 * Returns the length of the whole line like snprintf(): a value >= cap means
 * the buffer was too small and the output is cut. Never more than
 * ZTD_LOG_LINE_MAX - 1. */
size_t ztd_log_format_line(char *buf, size_t cap, const struct timespec *ts, ztd_log_level level,
                           const char *msg);

/* ----------------------------------------------------------- access log */

/* One request. Every pointer is borrowed and may be NULL (written as "-", or
 * left out for request_id). None of it is trusted: all strings are escaped. */
typedef struct ztd_access_entry {
    struct timespec time;   /* when the request arrived, CLOCK_REALTIME */
    const char *client;     /* peer address, "127.0.0.1" or "::1" */
    const char *method;     /* "GET" */
    const char *path;       /* the request target as received, query included */
    const char *protocol;   /* "HTTP/1.1" */
    int status;             /* response status code */
    uint64_t bytes;         /* body bytes sent */
    uint64_t duration_us;   /* arrival to last byte queued, microseconds */
    const char *request_id; /* NULL or "" = none */
} ztd_access_entry;

/* Formats one access-log line, newline included, NUL-terminated when
 * cap > 0; returns its length like snprintf() (>= cap: cut). Lines never
 * exceed ZTD_ACCESS_LINE_MAX - 1: over-long fields are cut and end in "...".
 *
 * text (json == 0), like the common log format plus duration and id:
 *   127.0.0.1 - - [22/Nov/2026:01:02:03 +0000] "GET /v1/files HTTP/1.1" 200 1234 0.000123 rid=ab12
 * time in UTC; duration in seconds with microsecond resolution; `"` and `\`
 * are escaped with a backslash, \n \r \t as such, any other byte outside
 * printable ASCII as \xHH, and so is a space inside a field: fields split
 * on spaces, and a client cannot add one.
 *
 * json (json != 0), one object per line, always valid JSON:
 *   {"time":"2026-11-22T01:02:03.123Z","client":"127.0.0.1","method":"GET",
 *    "path":"/v1/files","protocol":"HTTP/1.1","status":200,"bytes":1234,
 *    "duration_ms":0.123,"request_id":"ab12"}
 * bytes outside printable ASCII are written as \u00HH, so each code point of
 * the decoded string is one byte of the original. */
size_t ztd_access_log_format(char *buf, size_t cap, const ztd_access_entry *e, int json);

/* Send the access log to `path`: "-" = stderr, "off" = nowhere, else a file
 * opened O_APPEND. Off until called. Returns 0, or -1 with a message in err. */
int ztd_access_log_open(const char *path, ztd_access_format format, char *err, size_t errlen);
bool ztd_access_log_enabled(void);
/* Writes one line with one write(); nothing when the access log is off. */
void ztd_access_log_write(const ztd_access_entry *e);

/* ---------------------------------------------------------- both logs */

/* Reopens the log files by path (after logrotate moved them) and swaps each
 * in under the same descriptor number, so concurrent writers never see a
 * closed descriptor. stderr is left alone. Async-signal-safe. Returns 0, or
 * -errno of the first failure; a log that cannot be reopened keeps writing
 * to its old file. */
int ztd_log_reopen(void);
/* Closes the files: the error log goes back to stderr, the access log off. */
void ztd_log_close(void);

#ifdef __cplusplus
}
#endif

#endif
